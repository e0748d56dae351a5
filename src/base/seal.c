/* Secrets at rest: AES-256-GCM under the master key (seal.h).
 *
 * Why GCM with a random 96-bit nonce: each value is sealed once and
 * rewritten whole, so there is no counter to keep across processes and
 * replicas; at 2^32 seals under one key the chance of a repeated nonce is
 * still about 2^-33, far beyond what one installation writes.
 *
 * Why a key id in the text: after a key is lost or replaced, a value
 * sealed under the old key is refused as "another key" (-EKEYREJECTED),
 * which an operator can act on, instead of looking like tampering.
 *
 * Why the key file is linked into place: a crash while writing leaves only
 * a temporary file, never half a key; and link() does not replace a key
 * another process put there first, whose key then wins for both.
 *
 * Why nothing here touches OpenSSL at start: its first use loads its
 * configuration and providers and brings about 1.9 MB of libcrypto into
 * residence. A new key comes from getrandom(2) (the source OpenSSL seeds
 * from), and the key id, a SHA-256, is computed at the first seal or
 * unseal, so a server that seals nothing pays nothing. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "steward/base/seal.h"
#include "steward/base/secret.h"

#define KEY_LEN 32
#define NONCE_LEN 12
#define TAG_LEN 16
#define KEY_ID_LEN 8
#define PREFIX_LEN (3 + KEY_ID_LEN + 1) /* "v1." key-id "." */
#define KEY_FILE "master.key"

static struct {
	uint8_t key[KEY_LEN];
	char id[KEY_ID_LEN + 1];
	bool loaded;
	bool id_ready; /* id computed from key (key_id()) */
	pthread_mutex_t id_lock;
} master = { .id_lock = PTHREAD_MUTEX_INITIALIZER };

void sw_seal_init_key(const uint8_t key[32])
{
	pthread_mutex_lock(&master.id_lock);
	memcpy(master.key, key, KEY_LEN);
	__atomic_store_n(&master.id_ready, false, __ATOMIC_RELEASE);
	master.loaded = true;
	pthread_mutex_unlock(&master.id_lock);
}

/* The loaded key's id: the first KEY_ID_LEN hex digits of
 * SHA-256("steward-key-id" || key), computed on first use. */
static const char *key_id(void)
{
	if (__atomic_load_n(&master.id_ready, __ATOMIC_ACQUIRE))
		return master.id;
	static const char label[] = "steward-key-id";
	uint8_t buf[sizeof(label) - 1 + KEY_LEN];
	char hex[65];
	pthread_mutex_lock(&master.id_lock);
	if (!master.id_ready) {
		memcpy(buf, label, sizeof(label) - 1);
		memcpy(buf + sizeof(label) - 1, master.key, KEY_LEN);
		sw_sha256_hex(buf, sizeof(buf), hex);
		OPENSSL_cleanse(buf, sizeof(buf));
		memcpy(master.id, hex, KEY_ID_LEN);
		master.id[KEY_ID_LEN] = '\0';
		__atomic_store_n(&master.id_ready, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&master.id_lock);
	return master.id;
}

void sw_seal_release(void)
{
	pthread_mutex_lock(&master.id_lock);
	OPENSSL_cleanse(master.key, sizeof(master.key));
	OPENSSL_cleanse(master.id, sizeof(master.id));
	master.loaded = master.id_ready = false;
	pthread_mutex_unlock(&master.id_lock);
}

/* Exactly 64 hex digits into key. */
static int parse_hex_key(const char *s, uint8_t key[KEY_LEN])
{
	size_t n = 0;
	if (strlen(s) != 2 * KEY_LEN || !sw_hex_decode(sw_str_cstr(s), key, KEY_LEN, &n))
		return -EINVAL;
	return 0;
}

/* mkdir -p: path itself with mode, missing parents 0755. path is
 * restored before returning. */
static int make_dir(char *path, mode_t mode)
{
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
	char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return -ENOENT;
	*slash = '\0';
	int r = make_dir(path, 0755);
	*slash = '/';
	if (r < 0)
		return r;
	return mkdir(path, mode) == 0 || errno == EEXIST ? 0 : -errno;
}

/* Reads the key file at path: a regular file of exactly 32 bytes that
 * nobody but its owner may read or write. */
static int read_key_file(const char *path, uint8_t key[KEY_LEN], char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e != ENOENT)
			snprintf(err, errlen, "cannot open the master key %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	int r = 0;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot read the master key %s: %s", path, strerror(-r));
	} else if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "the master key %s is not a regular file", path);
	} else if (st.st_mode & 077) {
		r = -EPERM;
		snprintf(err, errlen,
			 "the master key %s has mode %04o; it must be readable by its owner only "
			 "(chmod 600 %s)",
			 path, (unsigned)(st.st_mode & 07777), path);
	} else if (st.st_size != KEY_LEN) {
		r = -EINVAL;
		snprintf(err, errlen,
			 "the master key %s holds %lld bytes, not %d: it is not a key this "
			 "program wrote; restore the right file or set STEWARD_SECRET_KEY",
			 path, (long long)st.st_size, KEY_LEN);
	} else if (read(fd, key, KEY_LEN) != KEY_LEN) {
		r = -EIO;
		snprintf(err, errlen, "cannot read the master key %s", path);
	}
	close(fd);
	return r;
}

static int write_all_synced(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return fsync(fd) < 0 ? -errno : 0;
}

static void sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Writes 32 new random bytes to a temporary file in dir and links it to
 * path. -EEXIST when another process made path first. */
static int create_key_file(const char *dir, const char *path, char *err, size_t errlen)
{
	uint8_t key[KEY_LEN];
	char tmp[PATH_MAX];
	int r;
	if (snprintf(tmp, sizeof(tmp), "%s/." KEY_FILE ".%ld", dir, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		snprintf(err, errlen, "the data directory path %s is too long", dir);
		return -ENAMETOOLONG;
	}
	if (getrandom(key, KEY_LEN, 0) != KEY_LEN) { /* 32 bytes: never cut short */
		snprintf(err, errlen, "cannot make a master key: the random generator failed");
		return -EIO;
	}
	unlink(tmp); /* left by a crash of an earlier process with our pid */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		goto out_key;
	}
	r = fchmod(fd, 0600) < 0 ? -errno : write_all_synced(fd, key, KEY_LEN);
	close(fd);
	if (r == 0 && link(tmp, path) < 0)
		r = -errno;
	unlink(tmp);
	if (r == 0)
		sync_dir(dir);
out_key:
	OPENSSL_cleanse(key, sizeof(key));
	if (r < 0 && r != -EEXIST)
		snprintf(err, errlen, "cannot create the master key %s: %s", path, strerror(-r));
	return r;
}

static int load_key_file(const char *data_dir, uint8_t key[KEY_LEN], char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + sizeof(KEY_FILE) + 1];
	size_t n = strlen(data_dir);
	while (n > 1 && data_dir[n - 1] == '/')
		n--;
	if (n == 0 || n >= sizeof(dir)) {
		snprintf(err, errlen, "the data directory (STEWARD_DATA_DIR) is empty or too long");
		return -EINVAL;
	}
	memcpy(dir, data_dir, n);
	dir[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, KEY_FILE);
	int r = make_dir(dir, 0700);
	if (r < 0) {
		snprintf(err, errlen, "cannot create the data directory %s: %s", dir, strerror(-r));
		return r;
	}
	r = read_key_file(path, key, err, errlen);
	if (r != -ENOENT)
		return r;
	r = create_key_file(dir, path, err, errlen);
	if (r < 0 && r != -EEXIST)
		return r;
	r = read_key_file(path, key, err, errlen);
	if (r < 0 && r != -ENOENT)
		return r;
	if (r < 0)
		snprintf(err, errlen, "the master key %s vanished while it was created", path);
	return r;
}

int sw_seal_init(const struct sw_config *c, char *err, size_t errlen)
{
	uint8_t key[KEY_LEN];
	const char *hex = getenv("STEWARD_SECRET_KEY");
	int r;
	if (hex && *hex) {
		r = parse_hex_key(hex, key);
		if (r < 0)
			snprintf(err, errlen,
				 "STEWARD_SECRET_KEY must be 64 hex digits (32 bytes), such as "
				 "the output of: openssl rand -hex 32");
	} else {
		r = load_key_file(c->data_dir, key, err, errlen);
	}
	if (r == 0)
		sw_seal_init_key(key);
	OPENSSL_cleanse(key, sizeof(key));
	return r;
}

size_t sw_seal_size(size_t n)
{
	if (n > SIZE_MAX / 2)
		return SIZE_MAX;
	return PREFIX_LEN + SW_BASE64URL_LEN(NONCE_LEN + n + TAG_LEN) + 1;
}

/* AES-256-GCM over in (n bytes) into out under the master key. Encrypting
 * writes tag; decrypting checks it (-EBADMSG when it does not verify). */
static int gcm(bool encrypt, const uint8_t nonce[NONCE_LEN], const char *aad,
	       const uint8_t *in, size_t n, uint8_t *out, uint8_t tag[TAG_LEN])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t last[TAG_LEN];
	int len, r = -EIO, enc = encrypt ? 1 : 0;
	if (!ctx)
		return -ENOMEM;
	if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, master.key, nonce, enc) != 1 ||
	    EVP_CipherUpdate(ctx, NULL, &len, (const uint8_t *)aad, (int)strlen(aad)) != 1 ||
	    (n && EVP_CipherUpdate(ctx, out, &len, in, (int)n) != 1))
		goto out;
	if (!encrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, TAG_LEN, tag) != 1)
		goto out;
	if (EVP_CipherFinal_ex(ctx, last, &len) != 1) {
		r = encrypt ? -EIO : -EBADMSG;
		goto out;
	}
	if (encrypt && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) != 1)
		goto out;
	r = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return r;
}

int sw_seal(const void *plain, size_t n, const char *aad, char *out, size_t cap)
{
	if (!master.loaded || !aad || (n && !plain) || n > INT_MAX - NONCE_LEN - TAG_LEN ||
	    strlen(aad) > INT_MAX)
		return -EINVAL;
	if (cap < sw_seal_size(n))
		return -ENOBUFS;
	size_t raw_len = NONCE_LEN + n + TAG_LEN;
	uint8_t *raw = malloc(raw_len);
	if (!raw)
		return -ENOMEM;
	int r = RAND_bytes(raw, NONCE_LEN) == 1 ? 0 : -EIO;
	if (r == 0)
		r = gcm(true, raw, aad, plain, n, raw + NONCE_LEN, raw + NONCE_LEN + n);
	if (r == 0) {
		memcpy(out, "v1.", 3);
		memcpy(out + 3, key_id(), KEY_ID_LEN);
		out[PREFIX_LEN - 1] = '.';
		if (sw_base64url_encode(raw, raw_len, out + PREFIX_LEN, cap - PREFIX_LEN) < 0)
			r = -ENOBUFS;
	}
	free(raw);
	return r;
}

int sw_seal_mac(const char *label, const void *msg, size_t n, uint8_t out[32])
{
	static const char derive[] = "steward-mac-v1";
	memset(out, 0, 32);
	if (!master.loaded || !label)
		return -EINVAL;
	size_t ln = strlen(label) + 1;
	uint8_t *buf = malloc(ln + n);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, label, ln);
	if (n)
		memcpy(buf + ln, msg, n);
	uint8_t key[32];
	int r = sw_hmac_sha256(master.key, KEY_LEN, derive, sizeof(derive) - 1, key);
	r = r ?: sw_hmac_sha256(key, sizeof(key), buf, ln + n, out);
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(buf, ln + n);
	free(buf);
	return r;
}

static bool key_id_form(const char *s)
{
	for (size_t i = 0; i < KEY_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int sw_unseal(const char *sealed, const char *aad, void *out, size_t cap, size_t *ret_len)
{
	if (!master.loaded || !sealed || !aad || strlen(aad) > INT_MAX)
		return -EINVAL;
	size_t len = strlen(sealed);
	if (len < PREFIX_LEN || memcmp(sealed, "v1.", 3) != 0 || !key_id_form(sealed + 3) ||
	    sealed[PREFIX_LEN - 1] != '.' || len - PREFIX_LEN > (size_t)INT_MAX)
		return -EINVAL;
	struct sw_str body = sw_str_cstr(sealed + PREFIX_LEN);
	size_t raw_cap = body.len / 4 * 3 + 3, raw_len = 0, n = 0;
	uint8_t *raw = malloc(raw_cap);
	if (!raw)
		return -ENOMEM;
	int r = -EINVAL;
	if (sw_base64url_decode(body, raw, raw_cap, &raw_len) < 0 || raw_len < NONCE_LEN + TAG_LEN)
		goto out_raw;
	r = -EKEYREJECTED;
	if (memcmp(sealed + 3, key_id(), KEY_ID_LEN) != 0)
		goto out_raw;
	n = raw_len - NONCE_LEN - TAG_LEN;
	r = -ENOBUFS;
	if (cap < n)
		goto out_raw;
	r = gcm(false, raw, aad, raw + NONCE_LEN, n, out, raw + NONCE_LEN + n);
	if (r < 0) {
		if (n)
			OPENSSL_cleanse(out, n); /* no unverified plaintext is left behind */
		goto out_raw;
	}
	if (cap > n)
		((char *)out)[n] = '\0';
	*ret_len = n;
out_raw:
	free(raw);
	return r;
}

/* ---- associated data ---- */

static void aad(char out[SW_SEAL_AAD_MAX], const char *kind, const char *id, const char *key)
{
	snprintf(out, SW_SEAL_AAD_MAX, "%s:%s%s%s", kind, id, key ? ":" : "", key ? key : "");
}

void sw_seal_aad_variable(char out[SW_SEAL_AAD_MAX], const char *application_id, const char *key)
{
	aad(out, "variable", application_id, key);
}

void sw_seal_aad_deploy_key(char out[SW_SEAL_AAD_MAX], const char *application_id)
{
	aad(out, "deploy-key", application_id, NULL);
}

void sw_seal_aad_webhook_secret(char out[SW_SEAL_AAD_MAX], const char *application_id)
{
	aad(out, "webhook-secret", application_id, NULL);
}

void sw_seal_aad_git_credential(char out[SW_SEAL_AAD_MAX], const char *credential_id)
{
	aad(out, "git-credential", credential_id, NULL);
}

void sw_seal_aad_channel(char out[SW_SEAL_AAD_MAX], const char *channel_id)
{
	aad(out, "channel", channel_id, NULL);
}

void sw_seal_aad_service(char out[SW_SEAL_AAD_MAX], const char *service_id)
{
	aad(out, "service", service_id, NULL);
}

void sw_seal_aad_totp(char out[SW_SEAL_AAD_MAX], const char *user_id)
{
	aad(out, "totp", user_id, NULL);
}

void sw_seal_aad_agent_command(char out[SW_SEAL_AAD_MAX], const char *command_id)
{
	aad(out, "agent-command", command_id, NULL);
}
