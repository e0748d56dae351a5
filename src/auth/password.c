/* Passwords: Argon2id on the worker pool, never on a loop thread (one hash
 * costs tens of milliseconds and 19 MiB). */
#include <argon2.h>
#include <errno.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "steward/auth.h"
#include "steward/io.h"
#include "steward/limits.h"

bool sw_password_acceptable(struct sw_str pw, const char **ret_msg)
{
	/* Length in characters (UTF-8 code points), as a user counts them. */
	size_t chars = 0;
	for (size_t i = 0; i < pw.len; i++)
		if (((unsigned char)pw.ptr[i] & 0xC0) != 0x80)
			chars++;
	for (size_t i = 0; i < pw.len; i++) {
		if ((unsigned char)pw.ptr[i] < 0x20 || pw.ptr[i] == 0x7f) {
			*ret_msg = "must not contain control characters";
			return false;
		}
	}
	if (chars < SW_PASSWORD_MIN_LEN) {
		*ret_msg = "must be at least 10 characters";
		return false;
	}
	if (chars > SW_PASSWORD_MAX_LEN) {
		*ret_msg = "must be at most 256 characters";
		return false;
	}
	return true;
}

int sw_password_hash(struct sw_str pw, char out[SW_PASSWORD_HASH_MAX])
{
	unsigned char salt[SW_ARGON2_SALT_LEN];
	if (RAND_bytes(salt, sizeof(salt)) != 1)
		return -EIO;
	int r = argon2id_hash_encoded(SW_ARGON2_T_COST, SW_ARGON2_M_COST_KIB, SW_ARGON2_PARALLELISM,
				      pw.ptr, pw.len, salt, sizeof(salt), SW_ARGON2_HASH_LEN, out,
				      SW_PASSWORD_HASH_MAX);
	return r == ARGON2_OK ? 0 : (r == ARGON2_MEMORY_ALLOCATION_ERROR ? -ENOMEM : -EINVAL);
}

bool sw_password_verify(const char *encoded, struct sw_str pw)
{
	/* argon2id_verify recomputes and compares in constant time. */
	return argon2id_verify(encoded, pw.ptr, pw.len) == ARGON2_OK;
}

struct hash_job {
	struct sw_worker_job job;
	void (*done)(void *arg, int err, const char *encoded);
	void *arg;
	char *password;
	size_t len;
	int err;
	char encoded[SW_PASSWORD_HASH_MAX];
};

static void hash_run(struct sw_worker_job *job)
{
	struct hash_job *h = SW_CONTAINER_OF(job, struct hash_job, job);
	h->err = sw_password_hash(sw_str_from(h->password, h->len), h->encoded);
	OPENSSL_cleanse(h->password, h->len);
}

static void hash_done(struct sw_worker_job *job)
{
	struct hash_job *h = SW_CONTAINER_OF(job, struct hash_job, job);
	h->done(h->arg, h->err, h->err ? NULL : h->encoded);
	OPENSSL_cleanse(h->encoded, sizeof(h->encoded));
	free(h->password);
	free(h);
}

int sw_password_hash_async(struct sw_loop *loop, struct sw_str pw,
			   void (*done)(void *arg, int err, const char *encoded), void *arg)
{
	struct hash_job *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->password = malloc(pw.len ? pw.len : 1);
	if (!h->password) {
		free(h);
		return -ENOMEM;
	}
	memcpy(h->password, pw.ptr, pw.len);
	h->len = pw.len;
	h->done = done;
	h->arg = arg;
	h->job.run = hash_run;
	h->job.done = hash_done;
	int r = sw_worker_submit(loop, &h->job);
	if (r < 0) {
		OPENSSL_cleanse(h->password, h->len);
		free(h->password);
		free(h);
	}
	return r;
}
