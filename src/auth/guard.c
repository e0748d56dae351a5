/* The global guard. Every route passes here before its handler
 * (sw_http_dispatch(), src/http/dispatch.c), so no route has a second path.
 *
 * Credentials: "Authorization: Bearer st_..." (an API token) or the
 * steward_session cookie. Either is looked up by the SHA-256 of its secret,
 * first in a process-wide cache, then in the database. The cache is what
 * makes an authenticated read cost about what /health costs; it stays
 * correct because every revoke is announced on the "steward_auth" channel
 * in its own transaction and every loop's pool listens there (the process
 * that revokes also forgets at once), and because an entry lives at most
 * SW_AUTH_CACHE_TTL_MS regardless.
 *
 * CSRF: a cookie is sent by the browser whoever made the page, so a
 * cookie-authenticated request with an unsafe method must come from our own
 * origin or one the operator trusts. Token requests are exempt: a token is
 * never sent by a browser on its own. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/auth/auth.h"
#include "steward/auth/ratelimit.h"
#include "steward/db/db.h"
#include "steward/http/http_auth.h"
#include "steward/base/log.h"
#include "steward/base/secret.h"
#include "steward/db/statements.h"

bool sw_access_allows(enum sw_access access, const struct sw_principal *p)
{
	if (access == SW_ACCESS_PUBLIC)
		return true;
	if (!p || !p->authenticated)
		return false;
	switch (access) {
	case SW_ACCESS_SESSION:
		return true;
	case SW_ACCESS_OWNER:
		return p->role == SW_ROLE_OWNER;
	case SW_ACCESS_OWNER_ADMIN:
		return p->role == SW_ROLE_OWNER || p->role == SW_ROLE_ADMIN;
	case SW_ACCESS_OPERATOR:
		return p->is_operator;
	case SW_ACCESS_PUBLIC:
		break;
	}
	return false;
}

/* ---- the cache ---- */

#define CACHE_SLOTS 4096 /* power of two */
#define CACHE_PROBES 8

struct cache_entry {
	uint8_t key[32];
	bool used;
	uint64_t valid_until_ms;
	struct sw_principal principal; /* account pointers unused here */
	char *account;                 /* the account fields, NUL-separated */
	size_t account_len;
};

#define ACCOUNT_FIELDS SW_DB_ACCOUNT_COLUMNS

/* Where each column of the account statements (enum sw_db_account_col)
 * goes in the principal's account: the one place that knows both. */
static const size_t account_member[ACCOUNT_FIELDS] = {
	[SW_DB_ACCOUNT_USER_ID] = offsetof(struct sw_principal_account, user_id),
	[SW_DB_ACCOUNT_USER_EMAIL] = offsetof(struct sw_principal_account, user_email),
	[SW_DB_ACCOUNT_USER_NAME] = offsetof(struct sw_principal_account, user_name),
	[SW_DB_ACCOUNT_USER_IS_OPERATOR] = offsetof(struct sw_principal_account, user_is_operator),
	[SW_DB_ACCOUNT_USER_CREATED_AT] = offsetof(struct sw_principal_account, user_created_at),
	[SW_DB_ACCOUNT_ORG_ID] = offsetof(struct sw_principal_account, organization_id),
	[SW_DB_ACCOUNT_ORG_NAME] = offsetof(struct sw_principal_account, organization_name),
	[SW_DB_ACCOUNT_ORG_CREATED_AT] = offsetof(struct sw_principal_account, organization_created_at),
	[SW_DB_ACCOUNT_ROLE] = offsetof(struct sw_principal_account, role),
};
_Static_assert(sizeof(struct sw_principal_account) == ACCOUNT_FIELDS * sizeof(const char *),
	       "one member per account column");

static const char **account_slot(struct sw_principal_account *a, size_t col)
{
	return (const char **)(void *)((char *)a + account_member[col]);
}

void sw_auth_account_values(const struct sw_principal_account *a,
			    const char *ret[SW_DB_ACCOUNT_COLUMNS])
{
	for (size_t i = 0; i < ACCOUNT_FIELDS; i++)
		ret[i] = *account_slot((struct sw_principal_account *)a, i);
}

/* Points p->account into a copy of block (the columns, NUL-separated)
 * made in arena. */
static void attach_account(struct sw_principal *p, struct sw_arena *arena, const char *block, size_t len)
{
	p->account = (struct sw_principal_account){ 0 };
	char *copy = block && arena ? sw_arena_alloc(arena, len) : NULL;
	if (!copy)
		return;
	memcpy(copy, block, len);
	const char *f = copy;
	size_t i = 0;
	for (; i < ACCOUNT_FIELDS && f < copy + len; i++) {
		*account_slot(&p->account, i) = f;
		f += strlen(f) + 1;
	}
	if (i < ACCOUNT_FIELDS)
		p->account = (struct sw_principal_account){ 0 };
}

static void entry_clear(struct cache_entry *e)
{
	free(e->account);
	e->account = NULL;
	e->account_len = 0;
	e->used = false;
}

static struct cache_entry *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* Bumped by every forget and clear. A lookup notes it when it goes to the
 * database and caches its answer only if nothing was forgotten meanwhile:
 * an answer read before a revoke committed must not outlive the revoke. */
static uint64_t cache_generation;

static size_t slot_of(const uint8_t key[32])
{
	size_t h;
	memcpy(&h, key, sizeof(h));
	return h & (CACHE_SLOTS - 1);
}

static bool cache_get(const uint8_t key[32], uint64_t now, struct sw_principal *ret,
		      struct sw_arena *arena)
{
	bool hit = false;
	pthread_mutex_lock(&cache_lock);
	if (cache) {
		size_t s = slot_of(key);
		for (size_t i = 0; i < CACHE_PROBES; i++) {
			struct cache_entry *e = &cache[(s + i) & (CACHE_SLOTS - 1)];
			if (e->used && memcmp(e->key, key, 32) == 0) {
				if (e->valid_until_ms > now) {
					*ret = e->principal;
					attach_account(ret, arena, e->account, e->account_len);
					hit = true;
				} else {
					entry_clear(e);
				}
				break;
			}
		}
	}
	pthread_mutex_unlock(&cache_lock);
	return hit;
}

static void cache_put(const uint8_t key[32], uint64_t valid_until, const struct sw_principal *p,
		      const char *account, size_t account_len, uint64_t generation)
{
	pthread_mutex_lock(&cache_lock);
	if (generation != cache_generation) {
		pthread_mutex_unlock(&cache_lock);
		return;
	}
	if (!cache)
		cache = calloc(CACHE_SLOTS, sizeof(*cache)); /* pages touched as used */
	if (cache) {
		size_t s = slot_of(key);
		struct cache_entry *victim = NULL;
		for (size_t i = 0; i < CACHE_PROBES; i++) {
			struct cache_entry *e = &cache[(s + i) & (CACHE_SLOTS - 1)];
			if (!e->used || memcmp(e->key, key, 32) == 0) {
				victim = e;
				break;
			}
			if (!victim || e->valid_until_ms < victim->valid_until_ms)
				victim = e;
		}
		entry_clear(victim);
		memcpy(victim->key, key, 32);
		victim->used = true;
		victim->valid_until_ms = valid_until;
		victim->principal = *p;
		victim->principal.account = (struct sw_principal_account){ 0 };
		victim->account = account_len ? malloc(account_len) : NULL;
		if (victim->account) {
			memcpy(victim->account, account, account_len);
			victim->account_len = account_len;
		}
	}
	pthread_mutex_unlock(&cache_lock);
}

void sw_auth_cache_forget(const char *payload)
{
	const char *colon = payload ? strchr(payload, ':') : NULL;
	if (!colon || strlen(colon + 1) != 36)
		return;
	size_t kind_len = (size_t)(colon - payload);
	const char *id = colon + 1;
	bool by_user = kind_len == 4 && strncmp(payload, "user", 4) == 0;
	bool by_org = kind_len == 3 && strncmp(payload, "org", 3) == 0;
	pthread_mutex_lock(&cache_lock);
	cache_generation++;
	for (size_t i = 0; cache && i < CACHE_SLOTS; i++) {
		struct cache_entry *e = &cache[i];
		if (!e->used)
			continue;
		const char *have = by_user ? e->principal.user_id :
				   by_org ? e->principal.organization_id : e->principal.credential_id;
		if (strcmp(have, id) == 0)
			entry_clear(e);
	}
	pthread_mutex_unlock(&cache_lock);
}

void sw_auth_cache_clear(void)
{
	pthread_mutex_lock(&cache_lock);
	cache_generation++;
	for (size_t i = 0; cache && i < CACHE_SLOTS; i++)
		entry_clear(&cache[i]);
	pthread_mutex_unlock(&cache_lock);
}

/* ---- CSRF ---- */

static bool is_unsafe(enum sw_http_method m)
{
	return m == SW_HTTP_POST || m == SW_HTTP_PUT || m == SW_HTTP_PATCH || m == SW_HTTP_DELETE ||
	       m == SW_HTTP_METHOD_OTHER;
}

/* scheme://host[:port] of a URL (Referer), or the whole value (Origin). */
static struct sw_str origin_of(struct sw_str url)
{
	const char *p = url.ptr, *end = url.ptr + url.len;
	const char *sep = NULL;
	for (const char *q = p; q + 2 < end; q++)
		if (q[0] == ':' && q[1] == '/' && q[2] == '/') {
			sep = q + 3;
			break;
		}
	if (!sep)
		return SW_STR_NULL;
	const char *slash = memchr(sep, '/', (size_t)(end - sep));
	return sw_str_from(p, (size_t)((slash ? slash : end) - p));
}

static bool list_has(const char *list, struct sw_str origin)
{
	if (!list)
		return false;
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		const char *start = p;
		while (*p && *p != ',')
			p++;
		const char *e = p;
		while (e > start && e[-1] == ' ')
			e--;
		if (e > start && sw_str_eq(sw_str_from(start, (size_t)(e - start)), origin))
			return true;
	}
	return false;
}

static bool same_origin_as_host(const struct sw_http_request *req, struct sw_str origin)
{
	const struct sw_config *cfg = sw_http_config(req);
	if (cfg->public_base_url)
		return sw_str_eq(origin_of(sw_str_cstr(cfg->public_base_url)), origin);
	/* No configured public URL: the origin the client addressed. */
	const struct sw_http_header *host = sw_http_request_header(req, SW_STR("Host"));
	if (!host)
		return false;
	for (int https = 0; https < 2; https++) {
		size_t pre = https ? 8 : 7;
		if (origin.len == pre + host->value.len &&
		    memcmp(origin.ptr, https ? "https://" : "http://", pre) == 0 &&
		    memcmp(origin.ptr + pre, host->value.ptr, host->value.len) == 0)
			return true;
	}
	return false;
}

static bool csrf_ok(const struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("Origin"));
	struct sw_str origin = SW_STR_NULL;
	if (h && !sw_str_eq(h->value, SW_STR("null")))
		origin = h->value;
	else if ((h = sw_http_request_header(req, SW_STR("Referer"))) != NULL)
		origin = origin_of(h->value);
	if (!origin.len)
		return false;
	return same_origin_as_host(req, origin) ||
	       list_has(sw_http_config(req)->auth_trusted_origins, origin);
}

/* ---- resolution ---- */

static void admit(struct sw_http_request *req)
{
	struct sw_principal *p = &req->principal;
	if (p->credential == SW_CRED_SESSION && is_unsafe(req->method) && !csrf_ok(req)) {
		sw_http_error(req, 403, "CSRF_REJECTED",
			      "A signed-in browser request must come from this site's own origin.");
		return;
	}
	if (!sw_access_allows(req->route->access, p)) {
		sw_http_error(req, 403, "FORBIDDEN", "Your role does not allow this action.");
		return;
	}
	sw_http_run_handler(req);
}

static void unauthenticated(struct sw_http_request *req, bool had_cookie)
{
	if (had_cookie) {
		/* A dead session cookie: tell the browser to drop it. */
		struct sw_buf b = { 0 };
		if (sw_set_cookie_header(&b, SW_SESSION_COOKIE, SW_STR_NULL, 0,
					 sw_auth_cookie_secure(sw_http_config(req))) == 0)
			sw_http_add_header(req, "Set-Cookie", sw_str_from(b.data, b.len));
		sw_buf_release(&b);
	}
	sw_http_error(req, 401, "UNAUTHENTICATED",
		      "Sign in or present a valid API token to use this route.");
}

static enum sw_role role_of(const char *s)
{
	if (strcmp(s, "OWNER") == 0)
		return SW_ROLE_OWNER;
	if (strcmp(s, "ADMIN") == 0)
		return SW_ROLE_ADMIN;
	if (strcmp(s, "MEMBER") == 0)
		return SW_ROLE_MEMBER;
	return SW_ROLE_NONE;
}

struct lookup {
	struct sw_http_request *req;
	uint8_t key[32];
	enum sw_credential kind;
	uint64_t generation;
};

static void ignore_result(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	(void)arg;
	(void)res;
	if (err->code)
		sw_log_warn("background auth update failed (code %d, sqlstate %s)", err->code, err->sqlstate);
}

static void lookup_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct lookup *l = arg;
	struct sw_http_request *req = l->req;
	if (err->code) {
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE",
			      "Credentials cannot be checked right now; try again shortly.");
		return;
	}
	if (PQntuples(res) != 1) {
		unauthenticated(req, l->kind == SW_CRED_SESSION);
		return;
	}
	struct sw_principal *p = &req->principal;
	memset(p, 0, sizeof(*p));
	p->authenticated = true;
	p->credential = l->kind;
	snprintf(p->credential_id, sizeof(p->credential_id), "%s", PQgetvalue(res, 0, 0));
	snprintf(p->user_id, sizeof(p->user_id), "%s", PQgetvalue(res, 0, 1));
	snprintf(p->organization_id, sizeof(p->organization_id), "%s", PQgetvalue(res, 0, 2));
	p->role = role_of(PQgetvalue(res, 0, 3));
	p->is_operator = PQgetvalue(res, 0, 4)[0] == 't';
	uint64_t now = sw_wall_ms();
	uint64_t valid = now + SW_AUTH_CACHE_TTL_MS;
	if (!PQgetisnull(res, 0, 5)) {
		uint64_t expires = strtoull(PQgetvalue(res, 0, 5), NULL, 10);
		if (expires < valid)
			valid = expires;
	}
	char block[2048];
	size_t len = 0;
	for (int i = 0; i < ACCOUNT_FIELDS && PQnfields(res) >= SW_DB_RESOLVE_ACCOUNT_COL + ACCOUNT_FIELDS; i++) {
		const char *v = PQgetvalue(res, 0, SW_DB_RESOLVE_ACCOUNT_COL + i);
		size_t n = strlen(v) + 1;
		if (len + n > sizeof(block)) {
			len = 0;
			break;
		}
		memcpy(block + len, v, n);
		len += n;
	}
	cache_put(l->key, valid, p, block, len, l->generation);
	attach_account(p, &req->arena, len ? block : NULL, len);
	if (PQgetvalue(res, 0, 6)[0] == 't') {
		const char *params[1] = { p->credential_id };
		sw_db_query(sw_db_pool_of(req->loop),
			    l->kind == SW_CRED_SESSION ? &sw_db_stmt_session_renew : &sw_db_stmt_token_touch,
			    params, 1, ignore_result, NULL);
	}
	admit(req);
}

bool sw_auth_rate_limit(struct sw_http_request *req, const struct sw_ratelimit *rl,
			struct sw_str key, const char *message)
{
	unsigned retry = 0;
	if (sw_ratelimit_take(rl, key, sw_now_ms(), &retry))
		return true;
	char value[16];
	snprintf(value, sizeof(value), "%u", retry ? retry : 1);
	sw_http_add_header(req, "Retry-After", sw_str_cstr(value));
	sw_http_error(req, 429, "RATE_LIMITED", message);
	return false;
}

bool sw_auth_admit(struct sw_http_request *req)
{
	const struct sw_ratelimit global = { "global_address", sw_http_config(req)->rate_limit_per_minute, 60 };
	return sw_auth_rate_limit(req, &global, sw_str_cstr(sw_http_peer_address(req)),
				  "Too many requests from this address; wait before trying again.");
}

void sw_guard(struct sw_http_request *req)
{
	if (req->route->access == SW_ACCESS_PUBLIC) {
		sw_http_run_handler(req);
		return;
	}
	struct sw_str secret = SW_STR_NULL;
	enum sw_credential kind = SW_CRED_NONE;
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("Authorization"));
	if (h) {
		if (!sw_bearer_token(h->value, &secret) || !sw_api_token_well_formed(secret)) {
			sw_http_error(req, 401, "UNAUTHENTICATED",
				      "The Authorization header must be \"Bearer st_...\" with a valid API token.");
			return;
		}
		kind = SW_CRED_TOKEN;
	} else if ((h = sw_http_request_header(req, SW_STR("Cookie"))) != NULL &&
		   sw_cookie_find(h->value, SW_STR(SW_SESSION_COOKIE), &secret)) {
		if (!sw_session_token_well_formed(secret)) {
			unauthenticated(req, true);
			return;
		}
		kind = SW_CRED_SESSION;
	} else {
		unauthenticated(req, false);
		return;
	}
	struct lookup *l = sw_arena_alloc(&req->arena, sizeof(*l));
	if (!l) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	l->req = req;
	l->kind = kind;
	/* The cache key binds the kind, so a session secret can never be
	 * looked up as a token or the reverse. */
	uint8_t buf[128];
	size_t n = SW_MIN(secret.len, sizeof(buf) - 1);
	buf[0] = (uint8_t)kind;
	memcpy(buf + 1, secret.ptr, n);
	sw_sha256(buf, n + 1, l->key);
	if (cache_get(l->key, sw_wall_ms(), &req->principal, &req->arena)) {
		admit(req);
		return;
	}
	pthread_mutex_lock(&cache_lock);
	l->generation = cache_generation;
	pthread_mutex_unlock(&cache_lock);
	char hex[65];
	sw_sha256_hex(secret.ptr, secret.len, hex);
	const char *params[1] = { hex };
	int r = sw_db_query(sw_db_pool_of(req->loop),
			    kind == SW_CRED_SESSION ? &sw_db_stmt_session_resolve : &sw_db_stmt_token_resolve,
			    params, 1, lookup_done, l);
	if (r < 0)
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE",
			      "Credentials cannot be checked right now; try again shortly.");
}

bool sw_auth_cookie_secure(const struct sw_config *cfg)
{
	return cfg->public_base_url && strncmp(cfg->public_base_url, "https://", 8) == 0;
}

void sw_auth_cache_forget_session(const char *id)
{
	char payload[48];
	snprintf(payload, sizeof(payload), "session:%s", id);
	sw_auth_cache_forget(payload);
}

void sw_auth_cache_forget_token(const char *id)
{
	char payload[48];
	snprintf(payload, sizeof(payload), "token:%s", id);
	sw_auth_cache_forget(payload);
}

void sw_auth_cache_forget_user(const char *id)
{
	char payload[48];
	snprintf(payload, sizeof(payload), "user:%s", id);
	sw_auth_cache_forget(payload);
}

static void on_notify(void *arg, const char *payload)
{
	(void)arg;
	sw_auth_cache_forget(payload);
}

static void on_resync(void *arg)
{
	(void)arg;
	sw_auth_cache_clear();
}

void sw_auth_listen(struct sw_db_pool *pool)
{
	int r = sw_db_pool_listen(pool, "steward_auth", on_notify, on_resync, NULL);
	if (r < 0)
		sw_log_error("cannot listen for revocations: %s", strerror(-r));
}

void sw_auth_cache_forget_organization(const char *id)
{
	char payload[48];
	snprintf(payload, sizeof(payload), "org:%s", id);
	sw_auth_cache_forget(payload);
}
