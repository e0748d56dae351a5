/* Inbound webhooks: strict header parsing, constant-time verification, and
 * the reading of payloads into a deployment decision (steward/deploy/webhook.h).
 *
 * Why each piece is as it is:
 * - Headers are parsed before any secret is touched, and the parse depends
 *   only on what the client sent: a refusal here tells nothing about which
 *   applications exist. A header appearing twice is refused, since two
 *   readers (a proxy, us) could pick different copies.
 * - Verification never exits early on the secret's bytes: MACs are compared
 *   with sw_ct_equal() (constant-time), GitLab's token likewise, and an
 *   empty secret is refused before any comparison (sw_ct_equal() calls two
 *   empty strings equal).
 * - The generic scheme is Steward's own outbound signature, so the MAC is
 *   computed by sw_notify_sign(), the same code that signs notifications,
 *   and compared as text: one implementation serves both directions.
 * - Payloads of the hosted providers are read leniently (a member of
 *   another shape is simply absent) because they are the providers' to
 *   change; the generic payload is ours and is refused field by field. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <openssl/crypto.h>
#include "steward/base/buf.h"
#include "steward/notify/notify.h"
#include "steward/base/secret.h"
#include "steward/deploy/webhook.h"

static const char *const provider_names[] = { "github", "gitlab", "bitbucket", "generic" };
static const char *const source_providers[] = { "GITHUB", "GITLAB", "BITBUCKET", "GENERIC" };

bool sw_webhook_provider_parse(struct sw_str s, enum sw_webhook_provider *ret)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(provider_names); i++)
		if (sw_str_eq(s, sw_str_cstr(provider_names[i]))) {
			*ret = (enum sw_webhook_provider)i;
			return true;
		}
	return false;
}

const char *sw_webhook_provider_name(enum sw_webhook_provider p)
{
	return (unsigned)p < SW_ARRAY_SIZE(provider_names) ? provider_names[p] : "";
}

const char *sw_webhook_source_provider(enum sw_webhook_provider p)
{
	return (unsigned)p < SW_ARRAY_SIZE(source_providers) ? source_providers[p] : "";
}

/* ---- headers ---- */

/* The one value of header name among h: 1 found, 0 absent, -1 repeated. */
static int header_one(const struct sw_http_header *h, unsigned n, const char *name,
		      struct sw_str *ret)
{
	int found = 0;
	struct sw_str want = sw_str_cstr(name);
	for (unsigned i = 0; i < n; i++)
		if (sw_str_case_eq(h[i].name, want)) {
			if (found)
				return -1;
			*ret = h[i].value;
			found = 1;
		}
	return found;
}

/* "sha256=" + 64 hex digits (either case) -> 32 bytes. */
static bool parse_sha256_hex(struct sw_str v, uint8_t out[32])
{
	static const char prefix[] = "sha256=";
	const size_t plen = sizeof(prefix) - 1;
	if (v.len != plen + 64 || memcmp(v.ptr, prefix, plen) != 0)
		return false;
	size_t n = 0;
	return sw_hex_decode(sw_str_from(v.ptr + plen, 64), out, 32, &n);
}

/* "v1=" + 64 lower-case hex digits: what sw_notify_sign() writes. */
static bool steward_signature_form(struct sw_str v)
{
	if (v.len != SW_NOTIFY_SIGNATURE_LEN || memcmp(v.ptr, "v1=", 3) != 0)
		return false;
	for (size_t i = 3; i < v.len; i++) {
		unsigned char c = (unsigned char)v.ptr[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

/* Unix seconds: 1..SW_WEBHOOK_TIMESTAMP_MAX_DIGITS decimal digits. */
static bool parse_timestamp(struct sw_str v, int64_t *ret)
{
	uint64_t t;
	if (v.len > SW_WEBHOOK_TIMESTAMP_MAX_DIGITS || !sw_parse_u64(v, &t))
		return false;
	*ret = (int64_t)t;
	return true;
}

static bool delivery_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '{' || c == '}' || c == '-';
}

static bool delivery_form(struct sw_str v)
{
	if (v.len == 0 || v.len > SW_WEBHOOK_DELIVERY_MAX_LEN)
		return false;
	for (size_t i = 0; i < v.len; i++)
		if (!delivery_char((unsigned char)v.ptr[i]))
			return false;
	return true;
}

/* An event name: letters, digits, space, ':', '_', '-' (GitLab's "Push
 * Hook", Bitbucket's "repo:push"). */
static bool event_form(struct sw_str v)
{
	if (v.len == 0 || v.len > SW_WEBHOOK_EVENT_MAX_LEN)
		return false;
	for (size_t i = 0; i < v.len; i++) {
		unsigned char c = (unsigned char)v.ptr[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == ' ' || c == ':' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Visible ASCII, 1..max bytes (tokens and Standard Webhooks ids). */
static bool visible_form(struct sw_str v, size_t max)
{
	if (v.len == 0 || v.len > max)
		return false;
	for (size_t i = 0; i < v.len; i++)
		if ((unsigned char)v.ptr[i] < 0x21 || (unsigned char)v.ptr[i] > 0x7e)
			return false;
	return true;
}

/* Standard base64 of 32 bytes (44 characters, one '=') -> out. */
static bool parse_base64_mac(struct sw_str v, uint8_t out[32])
{
	char url[43];
	size_t n;
	if (v.len != 44 || v.ptr[43] != '=')
		return false;
	for (size_t i = 0; i < 43; i++) {
		char c = v.ptr[i];
		if (c == '-' || c == '_')
			return false; /* not standard base64 */
		url[i] = c == '+' ? '-' : c == '/' ? '_' : c;
	}
	return sw_base64url_decode(sw_str_from(url, sizeof(url)), out, 32, &n) == 0 && n == 32;
}

/* webhook-signature: space-separated "<version>,<base64>"; the v1 entries
 * are kept (others are skipped, as the Standard Webhooks libraries do). */
static bool parse_signatures(struct sw_str v, struct sw_webhook_headers *ret)
{
	size_t i = 0, entries = 0;
	ret->nsignatures = 0;
	while (i < v.len) {
		size_t start = i;
		while (i < v.len && v.ptr[i] != ' ')
			i++;
		struct sw_str e = sw_str_from(v.ptr + start, i - start);
		if (e.len == 0 || ++entries > SW_WEBHOOK_MAX_SIGNATURES)
			return false; /* two spaces in a row, or too many entries */
		const char *comma = memchr(e.ptr, ',', e.len);
		if (!comma || comma == e.ptr || !visible_form(e, 200))
			return false;
		if (sw_str_eq(sw_str_from(e.ptr, (size_t)(comma - e.ptr)), SW_STR("v1"))) {
			struct sw_str b = sw_str_from(comma + 1, e.len - (size_t)(comma + 1 - e.ptr));
			if (!parse_base64_mac(b, ret->signatures[ret->nsignatures]))
				return false;
			ret->nsignatures++;
		}
		if (i < v.len) {
			i++; /* the space */
			if (i == v.len)
				return false; /* a trailing space */
		}
	}
	return ret->nsignatures > 0;
}

#define REFUSE(code, why)        \
	do {                     \
		*ret_why = (why); \
		return (code);   \
	} while (0)

static int parse_hub(const struct sw_http_header *h, unsigned n, struct sw_webhook_headers *ret,
		     const char **ret_why, const char *sig_name, const char *event_name,
		     const char *delivery_name, const char *sig_why, const char *event_why,
		     const char *delivery_why)
{
	struct sw_str v;
	if (header_one(h, n, sig_name, &v) != 1 || !parse_sha256_hex(v, ret->mac))
		REFUSE(-EACCES, sig_why);
	ret->has_mac = true;
	if (header_one(h, n, event_name, &ret->event) != 1 || !event_form(ret->event))
		REFUSE(-EBADMSG, event_why);
	if (header_one(h, n, delivery_name, &ret->delivery) != 1 || !delivery_form(ret->delivery))
		REFUSE(-EBADMSG, delivery_why);
	return 0;
}

static int parse_gitlab(const struct sw_http_header *h, unsigned n, struct sw_webhook_headers *ret,
			const char **ret_why)
{
	struct sw_str v;
	int r = header_one(h, n, "X-Gitlab-Token", &v);
	if (r < 0 || (r == 1 && !visible_form(v, SW_WEBHOOK_TOKEN_MAX_LEN)))
		REFUSE(-EACCES, "X-Gitlab-Token must appear once and hold 1 to 256 visible ASCII characters.");
	if (r == 1) {
		ret->has_token = true;
		ret->token = v;
	}
	r = header_one(h, n, "webhook-signature", &v);
	if (r < 0 || (r == 1 && !parse_signatures(v, ret)))
		REFUSE(-EACCES, "webhook-signature must appear once and hold space-separated v1,<base64 "
				"HMAC-SHA256> entries (at most 8).");
	if (r == 1) {
		struct sw_str ts;
		if (header_one(h, n, "webhook-timestamp", &ts) != 1 || !parse_timestamp(ts, &ret->timestamp))
			REFUSE(-EACCES, "webhook-timestamp must appear once, in unix seconds, with webhook-signature.");
		ret->has_timestamp = true;
		if (header_one(h, n, "webhook-id", &ret->webhook_id) != 1 ||
		    !visible_form(ret->webhook_id, SW_WEBHOOK_DELIVERY_MAX_LEN))
			REFUSE(-EACCES, "webhook-id must appear once, with webhook-signature.");
	}
	if (!ret->has_token && !ret->nsignatures)
		REFUSE(-EACCES, "A GitLab webhook needs X-Gitlab-Token (the webhook secret) or a "
				"webhook-signature made with the signing token.");
	if (header_one(h, n, "X-Gitlab-Event", &ret->event) != 1 || !event_form(ret->event))
		REFUSE(-EBADMSG, "X-Gitlab-Event must appear once and name the event.");
	r = header_one(h, n, "Idempotency-Key", &ret->delivery);
	if (r == 0)
		r = header_one(h, n, "X-Gitlab-Event-UUID", &ret->delivery);
	if (r != 1 || !delivery_form(ret->delivery))
		REFUSE(-EBADMSG, "Idempotency-Key (or X-Gitlab-Event-UUID) must appear once and hold 1 to "
				 "128 of A-Z a-z 0-9 . _ : { } -.");
	return 0;
}

static int parse_generic(const struct sw_http_header *h, unsigned n, struct sw_webhook_headers *ret,
			 const char **ret_why)
{
	struct sw_str v;
	if (header_one(h, n, "Steward-Signature", &v) != 1 || !steward_signature_form(v))
		REFUSE(-EACCES, "Steward-Signature must appear once as v1=<64 lower-case hex digits of "
				"HMAC-SHA256(secret, \"<timestamp>.<body>\")>.");
	ret->signature = v;
	if (header_one(h, n, "Steward-Timestamp", &v) != 1 || !parse_timestamp(v, &ret->timestamp))
		REFUSE(-EACCES, "Steward-Timestamp must appear once, in unix seconds.");
	ret->has_timestamp = true;
	if (header_one(h, n, "Steward-Delivery", &ret->delivery) != 1 || !delivery_form(ret->delivery))
		REFUSE(-EBADMSG, "Steward-Delivery must appear once and hold 1 to 128 of A-Z a-z 0-9 . _ : "
				 "{ } -.");
	ret->event = SW_STR("");
	return 0;
}

int sw_webhook_headers_parse(enum sw_webhook_provider provider, const struct sw_http_header *h,
			     unsigned n, struct sw_webhook_headers *ret, const char **ret_why)
{
	memset(ret, 0, sizeof(*ret));
	ret->provider = provider;
	switch (provider) {
	case SW_WEBHOOK_GITHUB:
		return parse_hub(h, n, ret, ret_why, "X-Hub-Signature-256", "X-GitHub-Event",
				 "X-GitHub-Delivery",
				 "X-Hub-Signature-256 must appear once as sha256=<64 hex digits>.",
				 "X-GitHub-Event must appear once and name the event.",
				 "X-GitHub-Delivery must appear once and hold 1 to 128 of A-Z a-z 0-9 . _ : { } -.");
	case SW_WEBHOOK_BITBUCKET:
		return parse_hub(h, n, ret, ret_why, "X-Hub-Signature", "X-Event-Key", "X-Request-UUID",
				 "X-Hub-Signature must appear once as sha256=<64 hex digits>.",
				 "X-Event-Key must appear once and name the event.",
				 "X-Request-UUID must appear once and hold 1 to 128 of A-Z a-z 0-9 . _ : { } -.");
	case SW_WEBHOOK_GITLAB:
		return parse_gitlab(h, n, ret, ret_why);
	case SW_WEBHOOK_GENERIC:
		return parse_generic(h, n, ret, ret_why);
	}
	REFUSE(-EBADMSG, "Unknown provider.");
}

/* ---- verification ---- */

bool sw_webhook_fresh(int64_t timestamp, int64_t now)
{
	int64_t d = timestamp > now ? timestamp - now : now - timestamp;
	return d <= SW_WEBHOOK_TOLERANCE_S;
}

static bool verify_body_mac(const struct sw_webhook_headers *h, struct sw_str secret, struct sw_str body)
{
	uint8_t mac[32];
	bool ok = sw_hmac_sha256(secret.ptr, secret.len, body.ptr, body.len, mac) == 0 &&
		  sw_ct_equal(mac, sizeof(mac), h->mac, sizeof(h->mac));
	OPENSSL_cleanse(mac, sizeof(mac));
	return ok;
}

static bool verify_generic(const struct sw_webhook_headers *h, struct sw_str secret, struct sw_str body,
			   int64_t now)
{
	char want[SW_NOTIFY_SIGNATURE_LEN + 1];
	bool ok = sw_notify_sign(secret, h->timestamp, body, want) == 0 &&
		  sw_ct_equal(want, SW_NOTIFY_SIGNATURE_LEN, h->signature.ptr, h->signature.len);
	OPENSSL_cleanse(want, sizeof(want));
	return ok && sw_webhook_fresh(h->timestamp, now);
}

/* GitLab's signed form (Standard Webhooks v1): the key is the secret's
 * base64url decoding. */
static bool verify_standard(const struct sw_webhook_headers *h, struct sw_str secret, struct sw_str body,
			    int64_t now)
{
	uint8_t key[SW_WEBHOOK_TOKEN_MAX_LEN], mac[32];
	size_t klen = 0;
	struct sw_buf msg = { 0 };
	bool ok = false;
	if (sw_base64url_decode(secret, key, sizeof(key), &klen) < 0 || klen == 0)
		goto out;
	if (sw_buf_append_str(&msg, h->webhook_id) < 0 ||
	    sw_buf_appendf(&msg, ".%" PRId64 ".", h->timestamp) < 0 || sw_buf_append_str(&msg, body) < 0)
		goto out;
	if (sw_hmac_sha256(key, klen, msg.data, msg.len, mac) < 0)
		goto out;
	/* Every entry is compared: the time does not say which one matched. */
	for (unsigned i = 0; i < h->nsignatures; i++)
		ok |= sw_ct_equal(mac, sizeof(mac), h->signatures[i], sizeof(h->signatures[i]));
	ok = ok && sw_webhook_fresh(h->timestamp, now);
out:
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(mac, sizeof(mac));
	sw_buf_release(&msg);
	return ok;
}

bool sw_webhook_verify(const struct sw_webhook_headers *h, struct sw_str secret, struct sw_str body,
		       int64_t now)
{
	if (secret.len == 0 || secret.len > SW_WEBHOOK_TOKEN_MAX_LEN || !secret.ptr)
		return false;
	switch (h->provider) {
	case SW_WEBHOOK_GITHUB:
	case SW_WEBHOOK_BITBUCKET:
		return h->has_mac && verify_body_mac(h, secret, body);
	case SW_WEBHOOK_GENERIC:
		return h->has_timestamp && steward_signature_form(h->signature) &&
		       verify_generic(h, secret, body, now);
	case SW_WEBHOOK_GITLAB: {
		if (!h->has_token && !h->nsignatures)
			return false;
		bool ok = true;
		if (h->has_token)
			ok &= sw_ct_equal(h->token.ptr, h->token.len, secret.ptr, secret.len);
		if (h->nsignatures)
			ok &= h->has_timestamp && verify_standard(h, secret, body, now);
		return ok;
	}
	}
	return false;
}

/* ---- payloads ---- */

/* A JSON string member of o without NUL bytes, or NULL. */
static const char *member_string(json_t *o, const char *key, size_t *ret_len)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_string(v))
		return NULL;
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (strlen(s) != n)
		return NULL;
	if (ret_len)
		*ret_len = n;
	return s;
}

static void add_url(struct sw_webhook_event *ev, const char *url)
{
	if (url && *url && strlen(url) <= SW_URL_MAX_LEN && ev->nurls < SW_WEBHOOK_MAX_URLS)
		ev->urls[ev->nurls++] = url;
}

/* The URLs of members keys (NULL-terminated) of obj, when it is an object. */
static void add_urls(struct sw_webhook_event *ev, json_t *obj, const char *const *keys)
{
	for (size_t i = 0; json_is_object(obj) && keys[i]; i++)
		add_url(ev, member_string(obj, keys[i], NULL));
}

/* A commit id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits. */
static bool commit_form(const char *s, size_t n)
{
	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool all_zeros(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '0')
			return false;
	return true;
}

/* A ref's text: 1..SW_WEBHOOK_REF_MAX_LEN visible ASCII after "refs/". */
static bool ref_form(const char *s, size_t n)
{
	return n > 5 && n <= SW_WEBHOOK_REF_MAX_LEN && memcmp(s, "refs/", 5) == 0 &&
	       visible_form(sw_str_from(s, n), SW_WEBHOOK_REF_MAX_LEN);
}

/* A change from a full ref ("refs/heads/main") and the commit after it
 * (NULL, or any string: checked here). */
static void add_ref_change(struct sw_webhook_event *ev, const char *ref, size_t ref_len,
			   const char *after, size_t after_len, bool deleted)
{
	if (!ref || !ref_form(ref, ref_len) || ev->nchanges >= SW_WEBHOOK_MAX_CHANGES)
		return;
	struct sw_webhook_change *c = &ev->changes[ev->nchanges++];
	c->kind = SW_WEBHOOK_REF_OTHER;
	c->name = ref;
	c->name_len = ref_len;
	if (ref_len > 11 && memcmp(ref, "refs/heads/", 11) == 0) {
		c->kind = SW_WEBHOOK_REF_BRANCH;
		c->name = ref + 11;
		c->name_len = ref_len - 11;
	} else if (ref_len > 10 && memcmp(ref, "refs/tags/", 10) == 0) {
		c->kind = SW_WEBHOOK_REF_TAG;
		c->name = ref + 10;
		c->name_len = ref_len - 10;
	}
	c->after = NULL;
	c->deleted = deleted;
	if (after && commit_form(after, after_len)) {
		if (all_zeros(after, after_len))
			c->deleted = true;
		else if (!deleted)
			c->after = after;
	}
}

static void read_github(struct sw_str event, json_t *body, struct sw_webhook_event *ev)
{
	static const char *const keys[] = { "clone_url", "ssh_url", "html_url", NULL };
	add_urls(ev, json_object_get(body, "repository"), keys);
	ev->ping = sw_str_eq(event, SW_STR("ping"));
	ev->push = sw_str_eq(event, SW_STR("push"));
	if (!ev->push)
		return;
	size_t rl = 0, al = 0;
	const char *ref = member_string(body, "ref", &rl), *after = member_string(body, "after", &al);
	add_ref_change(ev, ref, rl, after, al, json_is_true(json_object_get(body, "deleted")));
}

static void read_gitlab(struct sw_str event, json_t *body, struct sw_webhook_event *ev)
{
	static const char *const project_keys[] = { "git_http_url", "git_ssh_url", "web_url", NULL };
	static const char *const repository_keys[] = { "git_http_url", "git_ssh_url", "homepage", NULL };
	add_urls(ev, json_object_get(body, "project"), project_keys);
	if (ev->nurls == 0) /* older payloads: the "repository" object only */
		add_urls(ev, json_object_get(body, "repository"), repository_keys);
	/* A tag push is its own event ("Tag Push Hook"); its ref is read so
	 * that it is told apart as a tag. */
	bool tag = sw_str_eq(event, SW_STR("Tag Push Hook"));
	ev->push = sw_str_eq(event, SW_STR("Push Hook")) || tag;
	if (!ev->push)
		return;
	size_t rl = 0, al = 0;
	const char *ref = member_string(body, "ref", &rl), *after = member_string(body, "after", &al);
	add_ref_change(ev, ref, rl, after, al, false);
}

/* One side ("new" or "old") of a Bitbucket change: type and name. */
static bool bitbucket_side(json_t *side, enum sw_webhook_ref_kind *kind, const char **name,
			   size_t *name_len, const char **hash, size_t *hash_len)
{
	if (!json_is_object(side))
		return false;
	const char *type = member_string(side, "type", NULL);
	*name = member_string(side, "name", name_len);
	if (!type || !*name || *name_len == 0 || *name_len > SW_WEBHOOK_REF_MAX_LEN ||
	    !visible_form(sw_str_from(*name, *name_len), SW_WEBHOOK_REF_MAX_LEN))
		return false;
	*kind = strcmp(type, "branch") == 0 ? SW_WEBHOOK_REF_BRANCH :
		strcmp(type, "tag") == 0    ? SW_WEBHOOK_REF_TAG :
					      SW_WEBHOOK_REF_OTHER;
	json_t *target = json_object_get(side, "target");
	*hash = json_is_object(target) ? member_string(target, "hash", hash_len) : NULL;
	return true;
}

static void read_bitbucket(struct sw_str event, json_t *body, struct sw_webhook_event *ev)
{
	json_t *repo = json_object_get(body, "repository");
	if (json_is_object(repo)) {
		json_t *links = json_object_get(repo, "links");
		json_t *html = json_is_object(links) ? json_object_get(links, "html") : NULL;
		if (json_is_object(html))
			add_url(ev, member_string(html, "href", NULL));
		size_t n = 0;
		const char *full = member_string(repo, "full_name", &n);
		if (full && n > 0 && n <= SW_WEBHOOK_FULL_NAME_MAX_LEN &&
		    visible_form(sw_str_from(full, n), SW_WEBHOOK_FULL_NAME_MAX_LEN)) {
			memcpy(ev->full_name_url, "https://bitbucket.org/", 22);
			memcpy(ev->full_name_url + 22, full, n);
			ev->full_name_url[22 + n] = '\0';
			add_url(ev, ev->full_name_url);
		}
	}
	ev->push = sw_str_eq(event, SW_STR("repo:push"));
	json_t *push = ev->push ? json_object_get(body, "push") : NULL;
	json_t *changes = json_is_object(push) ? json_object_get(push, "changes") : NULL;
	size_t i;
	json_t *change;
	json_array_foreach(changes, i, change) {
		if (ev->nchanges >= SW_WEBHOOK_MAX_CHANGES || !json_is_object(change))
			break;
		struct sw_webhook_change c = { 0 };
		const char *hash = NULL;
		size_t hash_len = 0;
		json_t *nw = json_object_get(change, "new");
		if (bitbucket_side(nw, &c.kind, &c.name, &c.name_len, &hash, &hash_len)) {
			if (hash && commit_form(hash, hash_len) && !all_zeros(hash, hash_len))
				c.after = hash;
		} else if (json_is_null(nw) &&
			   bitbucket_side(json_object_get(change, "old"), &c.kind, &c.name, &c.name_len,
					  &hash, &hash_len)) {
			c.deleted = true;
		} else {
			continue;
		}
		ev->changes[ev->nchanges++] = c;
	}
}

#define FIELD_ERROR(f, m)        \
	do {                     \
		*ret_field = (f); \
		*ret_msg = (m);  \
		return -EINVAL;  \
	} while (0)

static int read_generic(json_t *body, struct sw_webhook_event *ev, const char **ret_field,
			const char **ret_msg)
{
	const char *key;
	json_t *v;
	json_object_foreach(body, key, v) {
		if (strcmp(key, "repository") != 0 && strcmp(key, "ref") != 0 && strcmp(key, "after") != 0)
			FIELD_ERROR(key, "is not a known field");
	}
	size_t n = 0, rl = 0, al = 0;
	if (!json_object_get(body, "repository"))
		FIELD_ERROR("repository", "is required");
	const char *repo = member_string(body, "repository", &n);
	if (!repo || n == 0 || n > SW_URL_MAX_LEN)
		FIELD_ERROR("repository", "must be the git URL of the repository (1 to 2048 characters)");
	if (!json_object_get(body, "ref"))
		FIELD_ERROR("ref", "is required");
	const char *ref = member_string(body, "ref", &rl);
	if (!ref || !ref_form(ref, rl))
		FIELD_ERROR("ref", "must be a full ref such as refs/heads/main");
	const char *after = NULL;
	json_t *a = json_object_get(body, "after");
	if (a && !json_is_null(a)) {
		after = member_string(body, "after", &al);
		if (!after || !commit_form(after, al))
			FIELD_ERROR("after", "must be a commit id: 40 (or 64) lower-case hex digits");
	}
	add_url(ev, repo);
	ev->push = true;
	ev->deploy_head = true;
	add_ref_change(ev, ref, rl, after, al, false);
	return 0;
}

int sw_webhook_event_read(enum sw_webhook_provider provider, struct sw_str event, json_t *body,
			  struct sw_webhook_event *ret, const char **ret_field, const char **ret_msg)
{
	memset(ret, 0, sizeof(*ret));
	if (!json_is_object(body))
		FIELD_ERROR(NULL, "must be a JSON object");
	switch (provider) {
	case SW_WEBHOOK_GITHUB:
		read_github(event, body, ret);
		return 0;
	case SW_WEBHOOK_GITLAB:
		read_gitlab(event, body, ret);
		return 0;
	case SW_WEBHOOK_BITBUCKET:
		read_bitbucket(event, body, ret);
		return 0;
	case SW_WEBHOOK_GENERIC:
		return read_generic(body, ret, ret_field, ret_msg);
	}
	FIELD_ERROR(NULL, "unknown provider");
}

/* ---- decisions ---- */

static const struct {
	const char *code, *reason;
} outcomes[] = {
	[SW_WEBHOOK_DEPLOY] = { "DEPLOYED", "A push to the application's branch: its commit is deployed." },
	[SW_WEBHOOK_PING] = { "PING", "A ping: the webhook reaches Steward and its signature verifies." },
	[SW_WEBHOOK_NOT_A_PUSH] = { "NOT_A_PUSH", "Only pushes deploy; this event is acknowledged and ignored." },
	[SW_WEBHOOK_TAG] = { "TAG", "Only tags were pushed; only pushes to the application's branch deploy." },
	[SW_WEBHOOK_OTHER_BRANCH] = { "OTHER_BRANCH", "The push does not change the application's branch." },
	[SW_WEBHOOK_BRANCH_DELETED] = { "BRANCH_DELETED", "The application's branch was deleted; nothing is deployed." },
	[SW_WEBHOOK_NO_COMMIT] = { "NO_COMMIT", "The push names no commit of the application's branch." },
};

const char *sw_webhook_outcome_code(enum sw_webhook_outcome o)
{
	return (unsigned)o < SW_ARRAY_SIZE(outcomes) ? outcomes[o].code : "";
}

const char *sw_webhook_outcome_reason(const char *code)
{
	for (size_t i = 0; code && i < SW_ARRAY_SIZE(outcomes); i++)
		if (strcmp(code, outcomes[i].code) == 0)
			return outcomes[i].reason;
	return "";
}

enum sw_webhook_outcome sw_webhook_decide(const struct sw_webhook_event *ev, struct sw_str branch,
					  const char **ret_ref, size_t *ret_ref_len)
{
	if (ev->ping)
		return SW_WEBHOOK_PING;
	if (!ev->push)
		return SW_WEBHOOK_NOT_A_PUSH;
	bool only_tags = ev->nchanges > 0;
	for (unsigned i = 0; i < ev->nchanges; i++) {
		const struct sw_webhook_change *c = &ev->changes[i];
		if (c->kind != SW_WEBHOOK_REF_TAG)
			only_tags = false;
		if (c->kind != SW_WEBHOOK_REF_BRANCH || !sw_str_eq(sw_str_from(c->name, c->name_len), branch))
			continue;
		if (c->deleted)
			return SW_WEBHOOK_BRANCH_DELETED;
		if (c->after) {
			*ret_ref = c->after;
			*ret_ref_len = strlen(c->after);
			return SW_WEBHOOK_DEPLOY;
		}
		if (ev->deploy_head) {
			*ret_ref = c->name;
			*ret_ref_len = c->name_len;
			return SW_WEBHOOK_DEPLOY;
		}
		return SW_WEBHOOK_NO_COMMIT;
	}
	return only_tags ? SW_WEBHOOK_TAG : SW_WEBHOOK_OTHER_BRANCH;
}
