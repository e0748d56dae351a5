/* Passwords: Argon2id on the worker pool, never on a loop thread (one hash
 * costs tens of milliseconds and 19 MiB). */
#include <argon2.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "steward/auth/auth.h"
#include "steward/io/io.h"
#include "steward/base/limits.h"

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

struct verify_job {
	struct sw_worker_job job;
	void (*done)(void *arg, bool ok);
	void *arg;
	char *password;
	size_t len;
	char encoded[SW_PASSWORD_HASH_MAX];
	bool ok;
};

/* A well-formed hash of a random password: verifying against it costs what
 * a real verification costs, so an unknown e-mail address answers as slowly
 * as a wrong password. */
static char dummy_hash[SW_PASSWORD_HASH_MAX];
static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;

static void dummy_init(void)
{
	unsigned char pw[32];
	RAND_bytes(pw, sizeof(pw));
	if (sw_password_hash(sw_str_from((const char *)pw, sizeof(pw)), dummy_hash) < 0)
		dummy_hash[0] = '\0';
}

static void verify_run(struct sw_worker_job *job)
{
	struct verify_job *v = SW_CONTAINER_OF(job, struct verify_job, job);
	if (!v->encoded[0]) {
		pthread_once(&dummy_once, dummy_init);
		(void)sw_password_verify(dummy_hash, sw_str_from(v->password, v->len));
		v->ok = false;
	} else {
		v->ok = sw_password_verify(v->encoded, sw_str_from(v->password, v->len));
	}
	OPENSSL_cleanse(v->password, v->len);
}

static void verify_done(struct sw_worker_job *job)
{
	struct verify_job *v = SW_CONTAINER_OF(job, struct verify_job, job);
	v->done(v->arg, v->ok);
	free(v->password);
	free(v);
}

int sw_password_verify_async(struct sw_loop *loop, const char *encoded, struct sw_str pw,
			     void (*done)(void *arg, bool ok), void *arg)
{
	struct verify_job *v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->password = malloc(pw.len ? pw.len : 1);
	if (!v->password) {
		free(v);
		return -ENOMEM;
	}
	memcpy(v->password, pw.ptr, pw.len);
	v->len = pw.len;
	if (encoded)
		snprintf(v->encoded, sizeof(v->encoded), "%s", encoded);
	v->done = done;
	v->arg = arg;
	v->job.run = verify_run;
	v->job.done = verify_done;
	int r = sw_worker_submit(loop, &v->job);
	if (r < 0) {
		OPENSSL_cleanse(v->password, v->len);
		free(v->password);
		free(v);
	}
	return r;
}
