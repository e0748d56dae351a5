/* WebAuthn relying-party verification (Level 3 §7.1 and §7.2).
 *
 * Why these pieces, in this order:
 *  - clientDataJSON is parsed by jansson with duplicate keys refused (two
 *    "origin" members must not let one check see one value and another
 *    check the other) and compared field by field; the challenge in
 *    constant time.
 *  - CBOR (attestationObject, the COSE key, extensions) first goes through
 *    cbor_item_size(), our own walker: well-formed, definite lengths only,
 *    bounded depth, every declared length inside the input. Only then does
 *    libcbor build items, so a 5-byte "array of 2^32 items" can never make
 *    it allocate gigabytes, and the COSE key's extent inside the
 *    authenticator data (which has no length prefix) is known exactly.
 *  - Every map lookup refuses duplicate keys, every item is type-checked
 *    before use, and lengths come from the bytes, never from claims.
 *  - Signatures are checked with OpenSSL 3 (EVP): ES256 (DER, which OpenSSL
 *    re-encodes and compares, so malleable encodings fail), Ed25519, RS256
 *    PKCS#1 v1.5. x5c certificates are parsed and checked against §8.2.1
 *    but not chained to a root: see the header.
 * Nothing here logs or touches global state; the OpenSSL error queue is
 * cleared on the way out of every failed verification. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <cbor.h>
#include <jansson.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include "steward/base/json.h"
#include "steward/auth/webauthn.h"

#define AUTH_DATA_MIN 37 /* rpIdHash 32, flags 1, signCount 4 */

/* COSE key parameters (RFC 9052/9053, RFC 8230). */
#define COSE_KTY 1
#define COSE_ALG 3
#define COSE_CRV (-1) /* EC2/OKP; RSA n */
#define COSE_X (-2)   /* EC2/OKP; RSA e */
#define COSE_Y (-3)
#define COSE_KTY_OKP 1
#define COSE_KTY_EC2 2
#define COSE_KTY_RSA 3
#define COSE_CRV_P256 1
#define COSE_CRV_ED25519 6

#define RSA_MIN_BITS 2048
#define RSA_MAX_BITS 4096

static int fail(char *err, size_t errlen, int rc, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	ERR_clear_error();
	return rc;
}

/* ---- CBOR ---- */

/* Reads the argument of the head at p[0..len): *ret_arg and the head size,
 * or 0 when truncated, reserved (28..30) or indefinite (31). */
static size_t cbor_head(const uint8_t *p, size_t len, uint64_t *ret_arg)
{
	if (len == 0)
		return 0;
	unsigned ai = p[0] & 31;
	if (ai < 24) {
		*ret_arg = ai;
		return 1;
	}
	if (ai > 27)
		return 0;
	size_t w = (size_t)1 << (ai - 24);
	if (len < 1 + w)
		return 0;
	uint64_t v = 0;
	for (size_t i = 0; i < w; i++)
		v = v << 8 | p[1 + i];
	*ret_arg = v;
	return 1 + w;
}

/* The size of the one CBOR item at p[0..len), or 0 when it is not
 * well-formed, uses an indefinite length, nests deeper than
 * SW_WEBAUTHN_MAX_CBOR_DEPTH or claims more than the input holds. */
static size_t cbor_item_size(const uint8_t *p, size_t len, unsigned depth)
{
	if (depth > SW_WEBAUTHN_MAX_CBOR_DEPTH)
		return 0;
	uint64_t arg;
	size_t pos = cbor_head(p, len, &arg);
	if (pos == 0)
		return 0;
	unsigned major = p[0] >> 5;
	switch (major) {
	case 0: /* unsigned, negative */
	case 1:
		return pos;
	case 2: /* byte, text string */
	case 3:
		return arg <= len - pos ? pos + (size_t)arg : 0;
	case 4: /* array, map: each element takes a byte at least */
	case 5: {
		if (arg > len - pos)
			return 0;
		uint64_t items = major == 5 ? arg * 2 : arg;
		for (uint64_t i = 0; i < items; i++) {
			size_t n = cbor_item_size(p + pos, len - pos, depth + 1);
			if (n == 0)
				return 0;
			pos += n;
		}
		return pos;
	}
	case 6: { /* tag */
		size_t n = cbor_item_size(p + pos, len - pos, depth + 1);
		return n ? pos + n : 0;
	}
	default: /* 7: simple values and floats; 1-byte simple values < 32 are invalid */
		if ((p[0] & 31) == 24 && arg < 32)
			return 0;
		return pos;
	}
}

/* Decodes exactly p[0..len) as one item that must be a definite map.
 * Returns a new reference or NULL. */
static cbor_item_t *cbor_load_map(const uint8_t *p, size_t len)
{
	if (cbor_item_size(p, len, 0) != len)
		return NULL;
	struct cbor_load_result res;
	cbor_item_t *item = cbor_load(p, len, &res);
	if (!item)
		return NULL;
	if (res.error.code != CBOR_ERR_NONE || res.read != len || !cbor_isa_map(item) ||
	    !cbor_map_is_definite(item)) {
		cbor_decref(&item);
		return NULL;
	}
	return item;
}

static bool cbor_int_value(const cbor_item_t *it, int64_t *ret)
{
	if (!cbor_is_int(it))
		return false;
	uint64_t v = cbor_get_int(it);
	if (v > INT64_MAX)
		return false;
	*ret = cbor_isa_uint(it) ? (int64_t)v : -1 - (int64_t)v;
	return true;
}

static bool cbor_text_is(const cbor_item_t *it, const char *s)
{
	size_t n = strlen(s);
	return cbor_isa_string(it) && cbor_string_is_definite(it) && cbor_string_length(it) == n &&
	       (n == 0 || memcmp(cbor_string_handle(it), s, n) == 0);
}

/* The value under a key (an integer key when text is NULL). 1 found, 0
 * absent, -1 when the key appears twice. */
static int cbor_map_find(const cbor_item_t *map, const char *text, int64_t key,
			 cbor_item_t **ret)
{
	struct cbor_pair *pairs = cbor_map_handle(map);
	size_t n = cbor_map_size(map);
	int found = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t k;
		bool match = text ? cbor_text_is(pairs[i].key, text)
				  : cbor_int_value(pairs[i].key, &k) && k == key;
		if (!match)
			continue;
		if (found)
			return -1;
		found = 1;
		*ret = pairs[i].value;
	}
	return found;
}

/* A definite byte string's bytes, or NULL (also for a wrong type). */
static const uint8_t *cbor_bytes(const cbor_item_t *it, size_t *ret_len)
{
	if (!it || !cbor_isa_bytestring(it) || !cbor_bytestring_is_definite(it))
		return NULL;
	*ret_len = cbor_bytestring_length(it);
	static const uint8_t empty[1];
	return *ret_len ? cbor_bytestring_handle(it) : empty;
}

/* ---- clientDataJSON ---- */

static bool json_str_is(const json_t *v, const char *s, size_t n)
{
	return json_is_string(v) && json_string_length(v) == n &&
	       memcmp(json_string_value(v), s, n) == 0;
}

int sw_webauthn_check_client_data(const struct sw_webauthn_rp *rp, const char *type,
				  const uint8_t *client_data, size_t client_data_len,
				  const uint8_t *challenge, size_t challenge_len, char *err,
				  size_t errlen)
{
	if (!rp || !type || (!client_data && client_data_len))
		return fail(err, errlen, -EINVAL, "invalid arguments");
	if (client_data_len == 0)
		return fail(err, errlen, -EBADMSG, "clientDataJSON is empty");
	if (client_data_len > SW_WEBAUTHN_MAX_CLIENT_DATA)
		return fail(err, errlen, -E2BIG, "clientDataJSON is too large");
	char jerr[160];
	json_t *c = sw_json_parse_object(sw_str_from((const char *)client_data, client_data_len),
					 jerr, sizeof(jerr));
	if (!c)
		return fail(err, errlen, -EBADMSG, "clientDataJSON is not a valid JSON object");

	int rc = -EPERM;
	const char *msg = NULL;
	json_t *t = json_object_get(c, "type");
	json_t *ch = json_object_get(c, "challenge");
	json_t *origin = json_object_get(c, "origin");
	json_t *cross = json_object_get(c, "crossOrigin");
	if (!json_is_string(t) || !json_is_string(ch) || !json_is_string(origin) ||
	    (cross && !json_is_boolean(cross))) {
		rc = -EBADMSG;
		msg = "clientDataJSON lacks type, challenge or origin";
		goto out;
	}
	if (!json_str_is(t, type, strlen(type))) {
		msg = "wrong client data type";
		goto out;
	}
	uint8_t got[SW_WEBAUTHN_MAX_CHALLENGE];
	size_t got_len = 0;
	struct sw_str b64 = sw_str_from(json_string_value(ch), json_string_length(ch));
	if (sw_base64url_decode(b64, got, sizeof(got), &got_len) != 0 ||
	    !sw_ct_equal(got, got_len, challenge, challenge_len) || challenge_len == 0) {
		msg = "challenge mismatch";
		goto out;
	}
	bool allowed = false;
	for (size_t i = 0; i < rp->origin_count && !allowed; i++)
		allowed = rp->origins[i] &&
			  json_str_is(origin, rp->origins[i], strlen(rp->origins[i]));
	if (!allowed) {
		msg = "origin not allowed";
		goto out;
	}
	/* Steward never runs in another site's iframe: a cross-origin
	 * ceremony is someone else's page using our credentials. */
	if (json_is_true(cross)) {
		msg = "cross-origin ceremony not allowed";
		goto out;
	}
	if (json_object_get(c, "topOrigin")) {
		msg = "topOrigin not allowed";
		goto out;
	}
	json_decref(c);
	return 0;
out:
	json_decref(c);
	return fail(err, errlen, rc, msg);
}

/* ---- authenticator data ---- */

struct auth_data {
	const uint8_t *rp_id_hash;
	uint8_t flags;
	uint32_t sign_count;
	const uint8_t *aaguid; /* attested credential data, when AT */
	const uint8_t *cred_id;
	size_t cred_id_len;
	const uint8_t *cose;
	size_t cose_len;
};

/* Splits p[0..len) into its parts (§6.1). registration: attested
 * credential data must be present, else it must be absent. Extensions
 * (ED) must be one CBOR map and nothing may follow. */
static int parse_auth_data(const uint8_t *p, size_t len, bool registration, struct auth_data *ad,
			   char *err, size_t errlen)
{
	if (len > SW_WEBAUTHN_MAX_AUTH_DATA)
		return fail(err, errlen, -E2BIG, "authenticator data is too large");
	if (len < AUTH_DATA_MIN)
		return fail(err, errlen, -EBADMSG, "authenticator data is truncated");
	memset(ad, 0, sizeof(*ad));
	ad->rp_id_hash = p;
	ad->flags = p[32];
	ad->sign_count = (uint32_t)p[33] << 24 | (uint32_t)p[34] << 16 | (uint32_t)p[35] << 8 | p[36];
	size_t pos = AUTH_DATA_MIN;
	if (!registration && (ad->flags & SW_WEBAUTHN_FLAG_AT))
		return fail(err, errlen, -EBADMSG, "unexpected attested credential data");
	if (registration) {
		if (!(ad->flags & SW_WEBAUTHN_FLAG_AT))
			return fail(err, errlen, -EBADMSG, "attested credential data missing");
		if (len - pos < 18)
			return fail(err, errlen, -EBADMSG, "attested credential data is truncated");
		ad->aaguid = p + pos;
		ad->cred_id_len = (size_t)p[pos + 16] << 8 | p[pos + 17];
		pos += 18;
		if (ad->cred_id_len > SW_WEBAUTHN_MAX_CREDENTIAL_ID)
			return fail(err, errlen, -EBADMSG, "credential id is longer than 1023 bytes");
		if (ad->cred_id_len == 0 || ad->cred_id_len > len - pos)
			return fail(err, errlen, -EBADMSG, "credential id is truncated");
		ad->cred_id = p + pos;
		pos += ad->cred_id_len;
		ad->cose = p + pos;
		ad->cose_len = cbor_item_size(p + pos, len - pos, 0);
		if (ad->cose_len == 0 || (p[pos] >> 5) != 5)
			return fail(err, errlen, -EBADMSG, "credential public key is not a CBOR map");
		pos += ad->cose_len;
	}
	if (ad->flags & SW_WEBAUTHN_FLAG_ED) {
		size_t n = pos < len ? cbor_item_size(p + pos, len - pos, 0) : 0;
		if (n == 0 || (p[pos] >> 5) != 5)
			return fail(err, errlen, -EBADMSG, "extensions are not a CBOR map");
		pos += n;
	}
	if (pos != len)
		return fail(err, errlen, -EBADMSG, "leftover bytes in authenticator data");
	return 0;
}

/* Parses the authenticator data (see parse_auth_data) and checks what
 * both ceremonies require of it: rpIdHash, UP, UV when required, BS only
 * with BE. */
static int read_auth_data(const struct sw_webauthn_rp *rp, const uint8_t *p, size_t len,
			  bool registration, struct auth_data *ad, char *err, size_t errlen)
{
	int rc = parse_auth_data(p, len, registration, ad, err, errlen);
	if (rc < 0)
		return rc;
	uint8_t want[32];
	if (!rp->rp_id ||
	    EVP_Digest(rp->rp_id, strlen(rp->rp_id), want, NULL, EVP_sha256(), NULL) != 1)
		return fail(err, errlen, -EINVAL, "cannot hash the rp id");
	if (!sw_ct_equal(ad->rp_id_hash, 32, want, 32))
		return fail(err, errlen, -EPERM, "rpIdHash mismatch");
	if (!(ad->flags & SW_WEBAUTHN_FLAG_UP))
		return fail(err, errlen, -EPERM, "user not present");
	if (rp->require_user_verification && !(ad->flags & SW_WEBAUTHN_FLAG_UV))
		return fail(err, errlen, -EPERM, "user verification required");
	if ((ad->flags & SW_WEBAUTHN_FLAG_BS) && !(ad->flags & SW_WEBAUTHN_FLAG_BE))
		return fail(err, errlen, -EPERM, "backup state set without backup eligibility");
	return 0;
}

/* ---- COSE keys and signatures ---- */

static EVP_PKEY *pkey_from_params(const char *type, OSSL_PARAM_BLD *bld)
{
	EVP_PKEY *key = NULL;
	OSSL_PARAM *params = OSSL_PARAM_BLD_to_param(bld);
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, type, NULL);
	if (!params || !ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
		key = NULL;
	OSSL_PARAM_free(params);
	EVP_PKEY_CTX_free(ctx);
	return key;
}

static EVP_PKEY *ec_p256_key(const uint8_t *x, const uint8_t *y)
{
	uint8_t pt[65];
	pt[0] = 0x04;
	memcpy(pt + 1, x, 32);
	memcpy(pt + 33, y, 32);
	EVP_PKEY *key = NULL;
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	if (bld && OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt, sizeof(pt)))
		key = pkey_from_params("EC", bld); /* refuses a point off the curve */
	OSSL_PARAM_BLD_free(bld);
	return key;
}

static EVP_PKEY *rsa_key(const uint8_t *n, size_t n_len, const uint8_t *e, size_t e_len)
{
	/* Minimal big-endian encodings; 2048..4096-bit modulus; odd e > 1 of
	 * at most 64 bits. */
	if (n_len == 0 || n[0] == 0 || e_len == 0 || e_len > 8 || e[0] == 0 || !(e[e_len - 1] & 1) ||
	    (e_len == 1 && e[0] == 1))
		return NULL;
	size_t bits = n_len * 8;
	for (uint8_t top = n[0]; !(top & 0x80); top <<= 1)
		bits--;
	if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS)
		return NULL;
	EVP_PKEY *key = NULL;
	BIGNUM *bn_n = BN_bin2bn(n, (int)n_len, NULL), *bn_e = BN_bin2bn(e, (int)e_len, NULL);
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	if (bn_n && bn_e && bld && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn_n) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn_e))
		key = pkey_from_params("RSA", bld);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn_n);
	BN_free(bn_e);
	return key;
}

/* Parses a COSE_Key (exactly p[0..len)) into an OpenSSL key. */
static int cose_key_load(const uint8_t *p, size_t len, EVP_PKEY **ret_key, int *ret_alg,
			 char *err, size_t errlen)
{
	if (len > SW_WEBAUTHN_MAX_PUBLIC_KEY)
		return fail(err, errlen, -E2BIG, "credential public key is too large");
	cbor_item_t *map = cbor_load_map(p, len);
	if (!map)
		return fail(err, errlen, -EBADMSG, "credential public key is not a CBOR map");
	int rc = -EBADMSG;
	const char *msg = "credential public key is malformed";
	cbor_item_t *kty_it = NULL, *alg_it = NULL, *crv_it = NULL, *x_it = NULL, *y_it = NULL;
	int64_t kty, alg, crv = 0;
	if (cbor_map_find(map, NULL, COSE_KTY, &kty_it) != 1 ||
	    cbor_map_find(map, NULL, COSE_ALG, &alg_it) != 1 || !cbor_int_value(kty_it, &kty) ||
	    !cbor_int_value(alg_it, &alg) || cbor_map_find(map, NULL, COSE_CRV, &crv_it) < 0 ||
	    cbor_map_find(map, NULL, COSE_X, &x_it) < 0 ||
	    cbor_map_find(map, NULL, COSE_Y, &y_it) < 0)
		goto out;
	if (alg != SW_COSE_ES256 && alg != SW_COSE_EDDSA && alg != SW_COSE_RS256) {
		rc = -ENOTSUP;
		msg = "unsupported credential algorithm";
		goto out;
	}
	if ((alg == SW_COSE_ES256 && kty != COSE_KTY_EC2) ||
	    (alg == SW_COSE_EDDSA && kty != COSE_KTY_OKP) ||
	    (alg == SW_COSE_RS256 && kty != COSE_KTY_RSA)) {
		msg = "credential key type does not match its algorithm";
		goto out;
	}
	size_t x_len = 0, y_len = 0;
	const uint8_t *x = cbor_bytes(x_it, &x_len), *y = cbor_bytes(y_it, &y_len);
	EVP_PKEY *key = NULL;
	if (alg != SW_COSE_RS256 && (!crv_it || !cbor_int_value(crv_it, &crv)))
		goto out;
	if (alg == SW_COSE_ES256) {
		if (crv != COSE_CRV_P256 || !x || x_len != 32 || !y || y_len != 32)
			goto out;
		key = ec_p256_key(x, y);
	} else if (alg == SW_COSE_EDDSA) {
		if (crv != COSE_CRV_ED25519 || !x || x_len != 32 || y_it)
			goto out;
		key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, 32);
	} else {
		/* RSA: -1 is n and -2 is e (RFC 8230). */
		size_t n_len = 0;
		const uint8_t *n = cbor_bytes(crv_it, &n_len);
		if (!n || !x)
			goto out;
		key = rsa_key(n, n_len, x, x_len);
	}
	if (!key) {
		msg = "credential public key is not a valid key";
		goto out;
	}
	cbor_decref(&map);
	*ret_key = key;
	*ret_alg = (int)alg;
	return 0;
out:
	cbor_decref(&map);
	return fail(err, errlen, rc, msg);
}

int sw_webauthn_check_public_key(const uint8_t *cose, size_t len, int *ret_alg, char *err,
				 size_t errlen)
{
	EVP_PKEY *key = NULL;
	int alg = 0;
	if (!cose)
		return fail(err, errlen, -EINVAL, "invalid arguments");
	int rc = cose_key_load(cose, len, &key, &alg, err, errlen);
	if (rc < 0)
		return rc;
	EVP_PKEY_free(key);
	*ret_alg = alg;
	return 0;
}

/* Does key, used with alg, sign data || client_data_hash with sig? */
static bool signature_valid(EVP_PKEY *key, int alg, const uint8_t *sig, size_t sig_len,
			    const uint8_t *data, size_t len, const uint8_t client_data_hash[32])
{
	if ((alg == SW_COSE_ES256 && (sig_len < 8 || sig_len > 72)) ||
	    (alg == SW_COSE_EDDSA && sig_len != 64) ||
	    (alg == SW_COSE_RS256 && sig_len != (size_t)EVP_PKEY_get_size(key)))
		return false;
	uint8_t *msg = malloc(len + 32);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	bool ok = false;
	if (msg && ctx) {
		memcpy(msg, data, len);
		memcpy(msg + len, client_data_hash, 32);
		const char *md = alg == SW_COSE_EDDSA ? NULL : "SHA256";
		ok = EVP_DigestVerifyInit_ex(ctx, NULL, md, NULL, NULL, key, NULL) == 1 &&
		     EVP_DigestVerify(ctx, sig, sig_len, msg, len + 32) == 1;
	}
	EVP_MD_CTX_free(ctx);
	free(msg);
	ERR_clear_error();
	return ok;
}

/* Does an attestation certificate's key suit alg? */
static bool key_matches_alg(EVP_PKEY *key, int alg)
{
	char group[32];
	switch (alg) {
	case SW_COSE_ES256:
		return EVP_PKEY_is_a(key, "EC") &&
		       EVP_PKEY_get_group_name(key, group, sizeof(group), NULL) == 1 &&
		       strcmp(group, "prime256v1") == 0;
	case SW_COSE_EDDSA:
		return EVP_PKEY_is_a(key, "ED25519");
	case SW_COSE_RS256:
		return EVP_PKEY_is_a(key, "RSA") && EVP_PKEY_get_bits(key) >= RSA_MIN_BITS &&
		       EVP_PKEY_get_bits(key) <= RSA_MAX_BITS;
	default:
		return false;
	}
}

/* ---- attestation statements ---- */

static bool name_has(X509_NAME *name, int nid, const char *want)
{
	int i = X509_NAME_get_index_by_NID(name, nid, -1);
	if (i < 0)
		return false;
	if (!want)
		return true;
	ASN1_STRING *s = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
	size_t n = strlen(want);
	return s && (size_t)ASN1_STRING_length(s) == n && memcmp(ASN1_STRING_get0_data(s), want, n) == 0;
}

/* §8.2.1 requirements on a packed attestation certificate. */
static int check_attestation_cert(X509 *cert, const uint8_t aaguid[16], char *err, size_t errlen)
{
	if (X509_get_version(cert) != X509_VERSION_3)
		return fail(err, errlen, -EPERM, "attestation certificate is not version 3");
	X509_NAME *subj = X509_get_subject_name(cert);
	if (!subj || !name_has(subj, NID_countryName, NULL) ||
	    !name_has(subj, NID_organizationName, NULL) || !name_has(subj, NID_commonName, NULL) ||
	    !name_has(subj, NID_organizationalUnitName, "Authenticator Attestation"))
		return fail(err, errlen, -EPERM, "attestation certificate subject is not as required");
	uint32_t xf = X509_get_extension_flags(cert);
	if (xf & EXFLAG_INVALID)
		return fail(err, errlen, -EBADMSG, "attestation certificate extensions are malformed");
	if (xf & EXFLAG_CA)
		return fail(err, errlen, -EPERM, "attestation certificate is a CA");
	ASN1_OBJECT *oid = OBJ_txt2obj("1.3.6.1.4.1.45724.1.1.4", 1);
	if (!oid)
		return fail(err, errlen, -ENOMEM, "out of memory");
	int idx = X509_get_ext_by_OBJ(cert, oid, -1);
	int again = idx >= 0 ? X509_get_ext_by_OBJ(cert, oid, idx) : -1;
	ASN1_OBJECT_free(oid);
	if (idx < 0)
		return 0;
	X509_EXTENSION *ext = X509_get_ext(cert, idx);
	if (again >= 0 || X509_EXTENSION_get_critical(ext))
		return fail(err, errlen, -EPERM, "attestation certificate AAGUID extension is invalid");
	/* extnValue holds a DER OCTET STRING of 16 bytes. */
	ASN1_OCTET_STRING *v = X509_EXTENSION_get_data(ext);
	const uint8_t *d = ASN1_STRING_get0_data(v);
	if (ASN1_STRING_length(v) != 18 || d[0] != 0x04 || d[1] != 16)
		return fail(err, errlen, -EPERM, "attestation certificate AAGUID extension is invalid");
	if (memcmp(d + 2, aaguid, 16) != 0)
		return fail(err, errlen, -EPERM, "attestation certificate AAGUID mismatch");
	return 0;
}

static X509 *cert_from(const cbor_item_t *it)
{
	size_t len;
	const uint8_t *p = cbor_bytes(it, &len);
	if (!p || len == 0 || len > LONG_MAX)
		return NULL;
	const uint8_t *q = p;
	X509 *cert = d2i_X509(NULL, &q, (long)len);
	if (cert && q != p + len) {
		X509_free(cert);
		cert = NULL;
	}
	return cert;
}

/* fmt "packed" (§8.2): self attestation with the credential key, or x5c. */
static int verify_packed(const cbor_item_t *stmt, const struct auth_data *ad,
			 const uint8_t *auth_data, size_t auth_data_len, EVP_PKEY *cred_key,
			 int cred_alg, const uint8_t hash[32],
			 enum sw_webauthn_attestation_type *ret_type, char *err, size_t errlen)
{
	cbor_item_t *alg_it = NULL, *sig_it = NULL, *x5c = NULL;
	int64_t alg;
	size_t sig_len;
	const uint8_t *sig;
	if (cbor_map_find(stmt, "alg", 0, &alg_it) != 1 || !cbor_int_value(alg_it, &alg) ||
	    cbor_map_find(stmt, "sig", 0, &sig_it) != 1 || !(sig = cbor_bytes(sig_it, &sig_len)) ||
	    cbor_map_find(stmt, "x5c", 0, &x5c) < 0)
		return fail(err, errlen, -EBADMSG, "packed attestation statement is malformed");
	if (alg != SW_COSE_ES256 && alg != SW_COSE_EDDSA && alg != SW_COSE_RS256)
		return fail(err, errlen, -ENOTSUP, "unsupported attestation algorithm");
	if (!x5c) {
		if (alg != cred_alg)
			return fail(err, errlen, -EPERM, "attestation algorithm does not match the credential");
		if (!signature_valid(cred_key, cred_alg, sig, sig_len, auth_data, auth_data_len, hash))
			return fail(err, errlen, -EPERM, "attestation signature invalid");
		*ret_type = SW_WEBAUTHN_ATTESTATION_SELF;
		return 0;
	}
	if (!cbor_isa_array(x5c) || !cbor_array_is_definite(x5c) || cbor_array_size(x5c) == 0 ||
	    cbor_array_size(x5c) > SW_WEBAUTHN_MAX_X5C)
		return fail(err, errlen, -EBADMSG, "x5c is not an array of 1 to 4 certificates");
	cbor_item_t **certs = cbor_array_handle(x5c);
	/* The rest of the chain is parsed, not trusted: we have no anchors. */
	for (size_t i = 1; i < cbor_array_size(x5c); i++) {
		X509 *c = cert_from(certs[i]);
		if (!c)
			return fail(err, errlen, -EBADMSG, "x5c holds an invalid certificate");
		X509_free(c);
	}
	X509 *leaf = cert_from(certs[0]);
	if (!leaf)
		return fail(err, errlen, -EBADMSG, "x5c holds an invalid certificate");
	int rc = check_attestation_cert(leaf, ad->aaguid, err, errlen);
	if (rc < 0)
		goto out;
	EVP_PKEY *att_key = X509_get0_pubkey(leaf);
	if (!att_key || !key_matches_alg(att_key, (int)alg)) {
		rc = fail(err, errlen, -EPERM, "attestation algorithm does not match the certificate");
		goto out;
	}
	if (!signature_valid(att_key, (int)alg, sig, sig_len, auth_data, auth_data_len, hash)) {
		rc = fail(err, errlen, -EPERM, "attestation signature invalid");
		goto out;
	}
	*ret_type = SW_WEBAUTHN_ATTESTATION_X5C;
	rc = 0;
out:
	X509_free(leaf);
	return rc;
}

/* ---- the ceremonies ---- */

int sw_webauthn_verify_registration(const struct sw_webauthn_rp *rp, const uint8_t *client_data,
				    size_t client_data_len, const uint8_t *attestation_object,
				    size_t attestation_len, const uint8_t *challenge,
				    size_t challenge_len, struct sw_webauthn_credential *ret,
				    char *err, size_t errlen)
{
	if (!rp || !ret || (!attestation_object && attestation_len) || (!challenge && challenge_len))
		return fail(err, errlen, -EINVAL, "invalid arguments");
	int rc = sw_webauthn_check_client_data(rp, "webauthn.create", client_data, client_data_len,
					       challenge, challenge_len, err, errlen);
	if (rc < 0)
		return rc;
	uint8_t hash[32];
	if (EVP_Digest(client_data, client_data_len, hash, NULL, EVP_sha256(), NULL) != 1)
		return fail(err, errlen, -ENOMEM, "cannot hash clientDataJSON");

	if (attestation_len > SW_WEBAUTHN_MAX_ATTESTATION)
		return fail(err, errlen, -E2BIG, "attestation object is too large");
	size_t size = attestation_len ? cbor_item_size(attestation_object, attestation_len, 0) : 0;
	if (size == 0)
		return fail(err, errlen, -EBADMSG, "attestation object is not valid CBOR");
	if (size != attestation_len)
		return fail(err, errlen, -EBADMSG, "trailing bytes after attestation object");
	cbor_item_t *att = cbor_load_map(attestation_object, attestation_len);
	if (!att)
		return fail(err, errlen, -EBADMSG, "attestation object is not a CBOR map");

	EVP_PKEY *key = NULL;
	cbor_item_t *fmt = NULL, *stmt = NULL, *ad_it = NULL;
	size_t ad_len = 0;
	const uint8_t *ad_bytes;
	if (cbor_map_find(att, "fmt", 0, &fmt) != 1 || cbor_map_find(att, "attStmt", 0, &stmt) != 1 ||
	    cbor_map_find(att, "authData", 0, &ad_it) != 1 || !cbor_isa_string(fmt) ||
	    !cbor_string_is_definite(fmt) || !cbor_isa_map(stmt) || !cbor_map_is_definite(stmt) ||
	    !(ad_bytes = cbor_bytes(ad_it, &ad_len))) {
		rc = fail(err, errlen, -EBADMSG,
			  "attestation object must hold fmt, attStmt and authData once each");
		goto out;
	}
	struct auth_data ad;
	rc = read_auth_data(rp, ad_bytes, ad_len, true, &ad, err, errlen);
	if (rc < 0)
		goto out;
	int alg;
	rc = cose_key_load(ad.cose, ad.cose_len, &key, &alg, err, errlen);
	if (rc < 0)
		goto out;

	struct sw_webauthn_credential cred = { 0 };
	if (cbor_text_is(fmt, "none")) {
		if (cbor_map_size(stmt) != 0) {
			rc = fail(err, errlen, -EBADMSG, "attStmt must be empty for fmt none");
			goto out;
		}
		cred.attestation = SW_WEBAUTHN_ATTESTATION_NONE;
	} else if (cbor_text_is(fmt, "packed")) {
		rc = verify_packed(stmt, &ad, ad_bytes, ad_len, key, alg, hash, &cred.attestation,
				   err, errlen);
		if (rc < 0)
			goto out;
	} else {
		rc = fail(err, errlen, -ENOTSUP, "unsupported attestation format");
		goto out;
	}
	snprintf(cred.fmt, sizeof(cred.fmt), "%.*s", (int)cbor_string_length(fmt),
		 (const char *)cbor_string_handle(fmt));
	memcpy(cred.id, ad.cred_id, ad.cred_id_len);
	cred.id_len = ad.cred_id_len;
	memcpy(cred.public_key_cose, ad.cose, ad.cose_len);
	cred.public_key_len = ad.cose_len;
	cred.alg = alg;
	cred.sign_count = ad.sign_count;
	cred.user_verified = ad.flags & SW_WEBAUTHN_FLAG_UV;
	cred.backup_eligible = ad.flags & SW_WEBAUTHN_FLAG_BE;
	cred.backed_up = ad.flags & SW_WEBAUTHN_FLAG_BS;
	memcpy(cred.aaguid, ad.aaguid, 16);
	*ret = cred;
	rc = 0;
out:
	EVP_PKEY_free(key);
	cbor_decref(&att);
	return rc;
}

int sw_webauthn_verify_assertion(const struct sw_webauthn_rp *rp, const uint8_t *client_data,
				 size_t client_data_len, const uint8_t *auth_data,
				 size_t auth_data_len, const uint8_t *sig, size_t sig_len,
				 const uint8_t *challenge, size_t challenge_len,
				 const uint8_t *public_key_cose, size_t public_key_len,
				 struct sw_webauthn_assertion *ret, char *err, size_t errlen)
{
	if (!rp || !ret || (!auth_data && auth_data_len) || (!sig && sig_len) ||
	    (!challenge && challenge_len) || (!public_key_cose && public_key_len))
		return fail(err, errlen, -EINVAL, "invalid arguments");
	int rc = sw_webauthn_check_client_data(rp, "webauthn.get", client_data, client_data_len,
					       challenge, challenge_len, err, errlen);
	if (rc < 0)
		return rc;
	struct auth_data ad;
	rc = read_auth_data(rp, auth_data, auth_data_len, false, &ad, err, errlen);
	if (rc < 0)
		return rc;
	if (sig_len > SW_WEBAUTHN_MAX_SIGNATURE)
		return fail(err, errlen, -E2BIG, "signature is too large");
	EVP_PKEY *key = NULL;
	int alg;
	rc = cose_key_load(public_key_cose, public_key_len, &key, &alg, err, errlen);
	if (rc < 0)
		return rc;
	uint8_t hash[32];
	if (EVP_Digest(client_data, client_data_len, hash, NULL, EVP_sha256(), NULL) != 1) {
		EVP_PKEY_free(key);
		return fail(err, errlen, -ENOMEM, "cannot hash clientDataJSON");
	}
	bool ok = signature_valid(key, alg, sig, sig_len, auth_data, auth_data_len, hash);
	EVP_PKEY_free(key);
	if (!ok)
		return fail(err, errlen, -EPERM, "signature invalid");
	*ret = (struct sw_webauthn_assertion){
		.sign_count = ad.sign_count,
		.user_verified = ad.flags & SW_WEBAUTHN_FLAG_UV,
		.backup_eligible = ad.flags & SW_WEBAUTHN_FLAG_BE,
		.backed_up = ad.flags & SW_WEBAUTHN_FLAG_BS,
	};
	return 0;
}
