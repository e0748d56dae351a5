/* Ed25519 deploy keys in OpenSSH's own formats (sshkey.h).
 *
 * OpenSSL makes the key; the two texts around it are written here, since
 * OpenSSL knows neither: the public half as an authorized_keys line (the
 * RFC 4253 section 6.6 blob, base64), and the private half in the
 * "openssh-key-v1" container of OpenSSH's PROTOCOL.key, unencrypted
 * (cipher and KDF "none": the text is sealed at rest instead, seal.h).
 * Both are checked against the real ssh-keygen in tests/unit/test_sshkey.c.
 *
 * Why two equal random check integers: OpenSSH compares them after
 * decryption to tell a wrong passphrase; unencrypted they only have to be
 * equal, and random ones make no two files alike, as ssh-keygen's are not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include "steward/base/base.h"
#include "steward/base/secret.h"
#include "steward/base/sshkey.h"

#define KEY_TYPE "ssh-ed25519"
#define ED25519_LEN 32
#define COMMENT_MAX 64
#define BLOB_LEN (4 + sizeof(KEY_TYPE) - 1 + 4 + ED25519_LEN) /* 51 */
#define PEM_BEGIN "-----BEGIN OPENSSH PRIVATE KEY-----\n"
#define PEM_END "-----END OPENSSH PRIVATE KEY-----\n"
#define PEM_COLUMNS 70
#define CIPHER_BLOCK 8 /* of cipher "none", for the padding */
/* The binary private key file at its largest (a 64-byte comment). */
#define FILE_MAX 300
/* The base64 part of a public key sw_ssh_fingerprint() reads at most. */
#define FINGERPRINT_B64_MAX 2048

_Static_assert(sizeof(PEM_BEGIN) - 1 + (FILE_MAX + 2) / 3 * 4 + (FILE_MAX + 2) / 3 * 4 / PEM_COLUMNS +
			       1 + sizeof(PEM_END) <= SW_SSH_PRIVATE_KEY_MAX,
	       "the largest private key file fits SW_SSH_PRIVATE_KEY_MAX");
_Static_assert(sizeof(KEY_TYPE) + (BLOB_LEN + 2) / 3 * 4 + 1 + COMMENT_MAX + 1 <=
		       SW_SSH_PUBLIC_KEY_MAX,
	       "the longest public key line fits SW_SSH_PUBLIC_KEY_MAX");

/* SSH wire encoding (RFC 4251 section 5) into a fixed buffer. */
struct wire {
	uint8_t *p;
	size_t len, cap;
};

static void put_bytes(struct wire *w, const void *p, size_t n)
{
	if (n > w->cap - w->len)
		abort(); /* the buffers are sized for the largest comment */
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_u32(struct wire *w, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	put_bytes(w, b, 4);
}

static void put_string(struct wire *w, const void *p, size_t n)
{
	put_u32(w, (uint32_t)n);
	put_bytes(w, p, n);
}

static void put_cstring(struct wire *w, const char *s)
{
	put_string(w, s, strlen(s));
}

static void put_public_blob(struct wire *w, const uint8_t pub[ED25519_LEN])
{
	put_cstring(w, KEY_TYPE);
	put_string(w, pub, ED25519_LEN);
}

static bool comment_ok(const char *c)
{
	size_t n = strlen(c);
	for (size_t i = 0; i < n; i++)
		if (c[i] <= ' ' || c[i] > '~')
			return false;
	return n <= COMMENT_MAX;
}

static int generate_raw(uint8_t pub[ED25519_LEN], uint8_t seed[ED25519_LEN])
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *key = NULL;
	size_t pub_len = ED25519_LEN, seed_len = ED25519_LEN;
	int r = -EIO;
	if (ctx && EVP_PKEY_keygen_init(ctx) == 1 && EVP_PKEY_keygen(ctx, &key) == 1 &&
	    EVP_PKEY_get_raw_public_key(key, pub, &pub_len) == 1 &&
	    EVP_PKEY_get_raw_private_key(key, seed, &seed_len) == 1 && pub_len == ED25519_LEN &&
	    seed_len == ED25519_LEN)
		r = 0;
	EVP_PKEY_free(key);
	EVP_PKEY_CTX_free(ctx);
	return r;
}

static void write_public(const uint8_t key[ED25519_LEN], const char *comment,
			 char out[SW_SSH_PUBLIC_KEY_MAX])
{
	uint8_t blob[BLOB_LEN];
	struct wire w = { blob, 0, sizeof(blob) };
	put_public_blob(&w, key);
	size_t o = sizeof(KEY_TYPE);
	memcpy(out, KEY_TYPE " ", o);
	int n = sw_base64_encode(blob, w.len, out + o, SW_SSH_PUBLIC_KEY_MAX - o);
	if (SW_NEVER(n < 0))
		n = 0;
	o += (size_t)n;
	if (*comment)
		snprintf(out + o, SW_SSH_PUBLIC_KEY_MAX - o, " %s", comment);
}

/* The private section: check integers, the key, the comment, padding. */
static int write_private_section(struct wire *w, const uint8_t pub[ED25519_LEN],
				 const uint8_t seed[ED25519_LEN], const char *comment)
{
	uint8_t check[4];
	if (RAND_bytes(check, sizeof(check)) != 1)
		return -EIO;
	put_bytes(w, check, 4);
	put_bytes(w, check, 4);
	put_public_blob(w, pub);
	/* OpenSSH's private key is the seed followed by the public key. */
	put_u32(w, 2 * ED25519_LEN);
	put_bytes(w, seed, ED25519_LEN);
	put_bytes(w, pub, ED25519_LEN);
	put_cstring(w, comment);
	for (uint8_t pad = 1; w->len % CIPHER_BLOCK; pad++)
		put_bytes(w, &pad, 1);
	return 0;
}

/* base64 of bin between the armour lines, PEM_COLUMNS to a line. */
static void armour(const uint8_t *bin, size_t n, char out[SW_SSH_PRIVATE_KEY_MAX])
{
	char b64[(FILE_MAX + 2) / 3 * 4 + 1];
	int w = sw_base64_encode(bin, n, b64, sizeof(b64));
	size_t len = SW_NEVER(w < 0) ? 0 : (size_t)w;
	size_t o = sizeof(PEM_BEGIN) - 1;
	memcpy(out, PEM_BEGIN, o);
	for (size_t i = 0; i < len; i += PEM_COLUMNS) {
		size_t take = SW_MIN((size_t)PEM_COLUMNS, len - i);
		memcpy(out + o, b64 + i, take);
		o += take;
		out[o++] = '\n';
	}
	memcpy(out + o, PEM_END, sizeof(PEM_END));
	OPENSSL_cleanse(b64, sizeof(b64));
}

static int write_private(const uint8_t pub[ED25519_LEN], const uint8_t seed[ED25519_LEN],
			 const char *comment, char out[SW_SSH_PRIVATE_KEY_MAX])
{
	uint8_t section[FILE_MAX], file[FILE_MAX];
	struct wire s = { section, 0, sizeof(section) }, f = { file, 0, sizeof(file) };
	int r = write_private_section(&s, pub, seed, comment);
	if (r < 0)
		goto out;
	put_bytes(&f, "openssh-key-v1", sizeof("openssh-key-v1")); /* the NUL too */
	put_cstring(&f, "none"); /* cipher */
	put_cstring(&f, "none"); /* KDF */
	put_string(&f, "", 0);   /* KDF options */
	put_u32(&f, 1);          /* keys */
	put_u32(&f, BLOB_LEN);
	put_public_blob(&f, pub);
	put_string(&f, section, s.len);
	armour(file, f.len, out);
out:
	OPENSSL_cleanse(section, sizeof(section));
	OPENSSL_cleanse(file, sizeof(file));
	return r;
}

int sw_ssh_ed25519_generate(const char *comment, char pub[SW_SSH_PUBLIC_KEY_MAX],
			    char priv[SW_SSH_PRIVATE_KEY_MAX])
{
	uint8_t public_key[ED25519_LEN], seed[ED25519_LEN];
	if (!comment || !comment_ok(comment))
		return -EINVAL;
	int r = generate_raw(public_key, seed);
	if (r == 0)
		r = write_private(public_key, seed, comment, priv);
	if (r == 0)
		write_public(public_key, comment, pub);
	OPENSSL_cleanse(seed, sizeof(seed));
	return r;
}

/* Standard base64 with padding, canonical only, not empty, into out. */
static int base64_decode(const char *s, size_t n, uint8_t *out, size_t cap, size_t *ret_len)
{
	if (n == 0 || n > FINGERPRINT_B64_MAX)
		return -EINVAL;
	return sw_base64_decode(sw_str_from(s, n), out, cap, ret_len) == 0 ? 0 : -EINVAL;
}

int sw_ssh_fingerprint(const char *pub, char out[64])
{
	uint8_t blob[FINGERPRINT_B64_MAX / 4 * 3], digest[32];
	size_t blob_len, type_len = pub ? strcspn(pub, " ") : 0;
	if (!pub || type_len == 0 || pub[type_len] != ' ')
		return -EINVAL;
	const char *b64 = pub + type_len + 1;
	size_t b64_len = strcspn(b64, " ");
	for (const char *p = pub; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return -EINVAL;
	/* The blob starts with the key type it was written for. */
	if (base64_decode(b64, b64_len, blob, sizeof(blob), &blob_len) < 0 ||
	    blob_len < 4 + type_len || get_u32(blob) != type_len ||
	    memcmp(blob + 4, pub, type_len) != 0)
		return -EINVAL;
	sw_sha256(blob, blob_len, digest);
	char b64_digest[(sizeof(digest) + 2) / 3 * 4 + 1];
	int n = sw_base64_encode(digest, sizeof(digest), b64_digest, sizeof(b64_digest));
	while (n > 0 && b64_digest[n - 1] == '=')
		n--; /* ssh-keygen prints it unpadded */
	snprintf(out, 64, "SHA256:%.*s", n, b64_digest);
	return 0;
}
