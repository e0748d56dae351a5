/* libFuzzer harness for inbound webhooks (steward/deploy/webhook.h): header
 * parsing, signature verification, and payload reading and decisions.
 *
 * Input: the first byte picks the provider (mod 4: github, gitlab,
 * bitbucket, generic); then header lines "Name: value\n" (at most 24) up to
 * an empty line; the rest is the body. Checks, beyond "no crash, no UB":
 * - a parse answers 0, -EACCES or -EBADMSG, with a reason on refusal, and
 *   every view it returns lies inside the input;
 * - an empty secret never verifies;
 * - verification under a fixed secret agrees with an independent oracle
 *   built on OpenSSL's one-shot HMAC() and plain comparisons (the hex
 *   and base64 decodings, the generic text form, GitLab's token and
 *   Standard Webhooks entries, the 300 s window);
 * - for the same body, headers signed correctly by the harness (for the
 *   input's provider) parse and verify, and fail with one bit of the MAC
 *   flipped or with another secret;
 * - a body that is a JSON object reads into a bounded event, and a
 *   decision to deploy names a commit (40 or 64 lower-case hex digits, not
 *   all zeros) or, for the generic payload only, the branch itself. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "steward/base/json.h"
#include "steward/deploy/webhook.h"
#include "fuzz.h"

#define MAX_HEADERS 24
#define NOW ((int64_t)1700000000)

static const char SECRET[] = "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-8";

static bool inside(struct sw_str v, const char *in, size_t len)
{
	return v.len == 0 || (v.ptr >= in && v.ptr <= in + len && v.len <= (size_t)(in + len - v.ptr));
}

static void hmac(const void *key, size_t klen, const void *msg, size_t mlen, uint8_t out[32])
{
	unsigned int n = 0;
	static const uint8_t empty;
	ASSERT(HMAC(EVP_sha256(), klen ? key : &empty, (int)klen, mlen ? msg : &empty, mlen, out, &n));
	ASSERT(n == 32);
}

/* ---- the oracle: what verification must answer ---- */

static bool oracle_fresh(int64_t ts)
{
	return ts >= NOW - SW_WEBHOOK_TOLERANCE_S && ts <= NOW + SW_WEBHOOK_TOLERANCE_S;
}

static bool oracle(const struct sw_webhook_headers *h, const char *secret, size_t slen, struct sw_str body)
{
	uint8_t mac[32];
	if (slen == 0)
		return false;
	switch (h->provider) {
	case SW_WEBHOOK_GITHUB:
	case SW_WEBHOOK_BITBUCKET:
		hmac(secret, slen, body.ptr, body.len, mac);
		return memcmp(mac, h->mac, 32) == 0;
	case SW_WEBHOOK_GENERIC: {
		char *msg = malloc(32 + body.len);
		ASSERT(msg);
		int n = snprintf(msg, 32, "%" PRId64 ".", h->timestamp);
		memcpy(msg + n, body.ptr, body.len);
		hmac(secret, slen, msg, (size_t)n + body.len, mac);
		free(msg);
		char text[3 + 64 + 1] = "v1=";
		for (int i = 0; i < 32; i++)
			snprintf(text + 3 + 2 * i, 3, "%02x", mac[i]);
		return h->signature.len == 67 && memcmp(h->signature.ptr, text, 67) == 0 && oracle_fresh(h->timestamp);
	}
	case SW_WEBHOOK_GITLAB: {
		bool ok = h->has_token || h->nsignatures;
		if (h->has_token)
			ok = ok && h->token.len == slen && memcmp(h->token.ptr, secret, slen) == 0;
		if (h->nsignatures) {
			/* the key: the secret's base64url decoding (EVP_DecodeBlock on
			 * the standard alphabet, padded, its padding bytes dropped) */
			char b64[SW_WEBHOOK_TOKEN_MAX_LEN + 4];
			uint8_t key[SW_WEBHOOK_TOKEN_MAX_LEN];
			size_t n = 0;
			for (; n < slen; n++)
				b64[n] = secret[n] == '-' ? '+' : secret[n] == '_' ? '/' : secret[n];
			size_t pad = (4 - slen % 4) % 4;
			if (pad == 3)
				return false;
			for (size_t i = 0; i < pad; i++)
				b64[n++] = '=';
			int klen = EVP_DecodeBlock(key, (const unsigned char *)b64, (int)n);
			if (klen < 0)
				return false;
			klen -= (int)pad;
			char *msg = malloc(h->webhook_id.len + 32 + body.len);
			ASSERT(msg);
			memcpy(msg, h->webhook_id.ptr, h->webhook_id.len);
			int m = (int)h->webhook_id.len;
			m += snprintf(msg + m, 32, ".%" PRId64 ".", h->timestamp);
			memcpy(msg + m, body.ptr, body.len);
			hmac(key, (size_t)klen, msg, (size_t)m + body.len, mac);
			free(msg);
			bool any = false;
			for (unsigned i = 0; i < h->nsignatures; i++)
				any |= memcmp(mac, h->signatures[i], 32) == 0;
			ok = ok && any && oracle_fresh(h->timestamp);
		}
		return ok;
	}
	}
	return false;
}

/* ---- headers the harness signs itself ---- */

static const char *const names_github[] = { "X-Hub-Signature-256", "X-GitHub-Event", "X-GitHub-Delivery" };
static const char *const names_bitbucket[] = { "X-Hub-Signature", "X-Event-Key", "X-Request-UUID" };

/* Builds correctly signed headers for body into h (values in store) and
 * returns how many. */
static unsigned sign(enum sw_webhook_provider p, struct sw_str body, struct sw_http_header *h, char store[4][256])
{
	uint8_t mac[32];
	unsigned n = 0;
	switch (p) {
	case SW_WEBHOOK_GITHUB:
	case SW_WEBHOOK_BITBUCKET: {
		const char *const *names = p == SW_WEBHOOK_GITHUB ? names_github : names_bitbucket;
		hmac(SECRET, strlen(SECRET), body.ptr, body.len, mac);
		strcpy(store[0], "sha256=");
		for (int i = 0; i < 32; i++)
			snprintf(store[0] + 7 + 2 * i, 3, "%02x", mac[i]);
		h[n++] = (struct sw_http_header){ sw_str_cstr(names[0]), sw_str_cstr(store[0]) };
		h[n++] = (struct sw_http_header){ sw_str_cstr(names[1]), SW_STR("push") };
		h[n++] = (struct sw_http_header){ sw_str_cstr(names[2]), SW_STR("d-1") };
		return n;
	}
	case SW_WEBHOOK_GITLAB:
		h[n++] = (struct sw_http_header){ SW_STR("X-Gitlab-Token"), sw_str_cstr(SECRET) };
		h[n++] = (struct sw_http_header){ SW_STR("X-Gitlab-Event"), SW_STR("Push Hook") };
		h[n++] = (struct sw_http_header){ SW_STR("X-Gitlab-Event-UUID"), SW_STR("d-1") };
		return n;
	case SW_WEBHOOK_GENERIC: {
		char *msg = malloc(16 + body.len);
		ASSERT(msg);
		memcpy(msg, "1700000000.", 11);
		memcpy(msg + 11, body.ptr, body.len);
		hmac(SECRET, strlen(SECRET), msg, 11 + body.len, mac);
		free(msg);
		strcpy(store[0], "v1=");
		for (int i = 0; i < 32; i++)
			snprintf(store[0] + 3 + 2 * i, 3, "%02x", mac[i]);
		h[n++] = (struct sw_http_header){ SW_STR("Steward-Signature"), sw_str_cstr(store[0]) };
		h[n++] = (struct sw_http_header){ SW_STR("Steward-Timestamp"), SW_STR("1700000000") };
		h[n++] = (struct sw_http_header){ SW_STR("Steward-Delivery"), SW_STR("d-1") };
		return n;
	}
	}
	return 0;
}

static void round_trip(enum sw_webhook_provider p, struct sw_str body)
{
	struct sw_http_header h[4];
	char store[4][256];
	struct sw_webhook_headers w;
	const char *why;
	unsigned n = sign(p, body, h, store);
	ASSERT(sw_webhook_headers_parse(p, h, n, &w, &why) == 0);
	ASSERT(sw_webhook_verify(&w, sw_str_cstr(SECRET), body, NOW));
	ASSERT(!sw_webhook_verify(&w, SW_STR("InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-9"), body, NOW));
	ASSERT(!sw_webhook_verify(&w, SW_STR(""), body, NOW));
	if (p == SW_WEBHOOK_GITHUB || p == SW_WEBHOOK_BITBUCKET) {
		w.mac[body.len % 32] ^= (uint8_t)(1u << (body.len % 8));
		ASSERT(!sw_webhook_verify(&w, sw_str_cstr(SECRET), body, NOW));
	} else if (p == SW_WEBHOOK_GENERIC) {
		ASSERT(!sw_webhook_verify(&w, sw_str_cstr(SECRET), body, NOW + SW_WEBHOOK_TOLERANCE_S + 1));
	}
}

/* ---- payloads ---- */

static bool commit_form(const char *s)
{
	size_t n = strlen(s);
	if (n != 40 && n != 64)
		return false;
	bool nonzero = false;
	for (size_t i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
		nonzero |= s[i] != '0';
	}
	return nonzero;
}

static void payload(enum sw_webhook_provider p, struct sw_str event, struct sw_str body)
{
	char err[160];
	json_t *v = sw_json_parse_object(body, err, sizeof(err));
	if (!v)
		return;
	struct sw_webhook_event ev;
	const char *field = NULL, *msg = NULL;
	int r = sw_webhook_event_read(p, event, v, &ev, &field, &msg);
	if (r < 0) {
		ASSERT(r == -EINVAL && p == SW_WEBHOOK_GENERIC && msg && *msg);
		json_decref(v);
		return;
	}
	ASSERT(ev.nurls <= SW_WEBHOOK_MAX_URLS && ev.nchanges <= SW_WEBHOOK_MAX_CHANGES);
	for (unsigned i = 0; i < ev.nurls; i++)
		ASSERT(ev.urls[i] && *ev.urls[i] && strlen(ev.urls[i]) <= SW_URL_MAX_LEN);
	for (unsigned i = 0; i < ev.nchanges; i++) {
		const struct sw_webhook_change *c = &ev.changes[i];
		ASSERT(c->name && c->name_len > 0 && c->name_len <= SW_WEBHOOK_REF_MAX_LEN);
		ASSERT(!c->after || (commit_form(c->after) && !c->deleted));
	}
	static const char *const branches[] = { "main", "release/v2", "" };
	for (size_t b = 0; b < SW_ARRAY_SIZE(branches); b++) {
		const char *ref = NULL;
		size_t ref_len = 0;
		enum sw_webhook_outcome o = sw_webhook_decide(&ev, sw_str_cstr(branches[b]), &ref, &ref_len);
		ASSERT(*sw_webhook_outcome_code(o));
		ASSERT(*sw_webhook_outcome_reason(sw_webhook_outcome_code(o)));
		if (o != SW_WEBHOOK_DEPLOY)
			continue;
		ASSERT(ev.push && ref && ref_len > 0);
		bool commit = strlen(ref) == ref_len && commit_form(ref);
		bool head = ev.deploy_head && ref_len == strlen(branches[b]) && memcmp(ref, branches[b], ref_len) == 0;
		ASSERT(commit || head);
		ASSERT(!head || p == SW_WEBHOOK_GENERIC);
	}
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 64 * 1024)
		return 0;
	enum sw_webhook_provider p = (enum sw_webhook_provider)(data[0] % 4);
	const char *in = (const char *)data + 1;
	size_t len = size - 1, i = 0;
	struct sw_http_header h[MAX_HEADERS];
	unsigned n = 0;
	/* Header lines up to an empty one; the rest is the body. */
	while (i < len) {
		const char *nl = memchr(in + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - in) : len;
		if (end == i) {
			i++;
			break;
		}
		const char *colon = memchr(in + i, ':', end - i);
		if (colon && n < MAX_HEADERS) {
			size_t v = (size_t)(colon - in) + 1;
			while (v < end && (in[v] == ' ' || in[v] == '\t'))
				v++;
			size_t ve = end;
			while (ve > v && (in[ve - 1] == ' ' || in[ve - 1] == '\t'))
				ve--;
			h[n++] = (struct sw_http_header){ sw_str_from(in + i, (size_t)(colon - in) - i),
							  sw_str_from(in + v, ve - v) };
		}
		i = nl ? end + 1 : len;
	}
	struct sw_str body = sw_str_from(in + i, len - i);

	struct sw_webhook_headers w;
	const char *why = NULL;
	int r = sw_webhook_headers_parse(p, h, n, &w, &why);
	ASSERT(r == 0 || r == -EACCES || r == -EBADMSG);
	if (r < 0) {
		ASSERT(why && *why);
	} else {
		ASSERT(w.provider == p);
		ASSERT(inside(w.delivery, in, len) && w.delivery.len > 0 &&
		       w.delivery.len <= SW_WEBHOOK_DELIVERY_MAX_LEN);
		ASSERT(inside(w.event, in, len) && inside(w.token, in, len) && inside(w.signature, in, len) &&
		       inside(w.webhook_id, in, len));
		ASSERT(w.nsignatures <= SW_WEBHOOK_MAX_SIGNATURES);
		ASSERT(p != SW_WEBHOOK_GENERIC || (w.has_timestamp && w.signature.len == 67));
		ASSERT(p != SW_WEBHOOK_GITLAB || w.has_token || w.nsignatures);
		ASSERT(!sw_webhook_verify(&w, SW_STR(""), body, NOW));
		bool got = sw_webhook_verify(&w, sw_str_cstr(SECRET), body, NOW);
		ASSERT(got == oracle(&w, SECRET, strlen(SECRET), body));
		/* The token itself as the secret: GitLab's token form verifies. */
		if (p == SW_WEBHOOK_GITLAB && w.has_token && !w.nsignatures)
			ASSERT(sw_webhook_verify(&w, w.token, body, NOW));
	}
	round_trip(p, body);
	payload(p, r == 0 ? w.event : SW_STR("push"), body);
	return 0;
}
