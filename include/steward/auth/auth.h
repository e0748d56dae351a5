/* Identity: password hashing and the global guard. */
#ifndef STEWARD_AUTH_H
#define STEWARD_AUTH_H

#include "steward/base/base.h"
#include "steward/db/statements.h"
#include "steward/http/http.h"

struct sw_loop;
struct sw_db_pool;

/* Argon2id parameters (OWASP minimum: m=19 MiB, t=2, p=1). */
#define SW_ARGON2_T_COST 2
#define SW_ARGON2_M_COST_KIB 19456
#define SW_ARGON2_PARALLELISM 1
#define SW_ARGON2_SALT_LEN 16
#define SW_ARGON2_HASH_LEN 32
#define SW_PASSWORD_HASH_MAX 160 /* encoded "$argon2id$v=19$m=...": fits */

/* Checks the password rules; on failure returns false and *ret_msg says
 * which rule, as a field-error message. */
bool sw_password_acceptable(struct sw_str password, const char **ret_msg);

/* Hashes on the worker pool; done(arg, 0, encoded) runs on loop's thread
 * (or done(arg, -errno, NULL)). The password is copied and the copy wiped
 * after hashing; the caller wipes its own. 0 or -EBUSY/-ENOMEM (done is
 * then not called). */
int sw_password_hash_async(struct sw_loop *loop, struct sw_str password,
			   void (*done)(void *arg, int err, const char *encoded), void *arg);
/* Verifies on the worker pool; done(arg, ok) on loop's thread. encoded
 * NULL (no such user) verifies against a dummy hash at the same cost and
 * reports false. 0 or -EBUSY/-ENOMEM (done is then not called). */
int sw_password_verify_async(struct sw_loop *loop, const char *encoded, struct sw_str password,
			     void (*done)(void *arg, bool ok), void *arg);
/* Blocking forms, for workers and tests. */
int sw_password_hash(struct sw_str password, char out[SW_PASSWORD_HASH_MAX]);
bool sw_password_verify(const char *encoded, struct sw_str password);

/* The session cookie's name. */
#define SW_SESSION_COOKIE "steward_session"
/* Session lifetime in seconds: sliding, renewed by use (statements_auth.c). */
#define SW_SESSION_LIFETIME_S (14 * 24 * 3600)
/* How long a resolved principal may be reused from the cache. Revokes
 * invalidate it at once (notifications); this bounds anything missed. */
#define SW_AUTH_CACHE_TTL_MS 60000

/* The guard: sw_server_shared.guard. Admits public routes. Otherwise
 * resolves "Authorization: Bearer st_..." or the session cookie (the
 * bearer wins when both are present) to a principal, from the cache or the
 * database, refuses a cookie-authenticated unsafe request whose Origin (or
 * Referer) is neither the server's own nor in AUTH_TRUSTED_ORIGINS, checks
 * the route's access level, then runs the handler. Answers 401
 * UNAUTHENTICATED without valid credentials, 403 CSRF_REJECTED and 403
 * FORBIDDEN. */
void sw_guard(struct sw_http_request *req);

/* The admit hook (sw_server_shared.admit): the global rate limit per
 * client address, STEWARD_RATE_LIMIT_PER_MINUTE requests a minute (a burst
 * of that many, then one every 60/N s), before anything else a request
 * costs; routes that check a secret (sign-in, webhooks) keep their own
 * tighter limits. false when it has answered 429 RATE_LIMITED with
 * Retry-After. */
bool sw_auth_admit(struct sw_http_request *req);

struct sw_ratelimit;
/* Takes a token of rl for key (sw_ratelimit_take()); when refused,
 * answers 429 RATE_LIMITED with Retry-After (whole seconds) and message,
 * and returns false. */
bool sw_auth_rate_limit(struct sw_http_request *req, const struct sw_ratelimit *rl,
			struct sw_str key, const char *message);

/* The principal cache (process-wide). sw_auth_cache_forget() takes a
 * "steward_auth" notification payload: "session:<id>", "token:<id>" or
 * "user:<id>" (every credential of that user) or "org:<id>" (every
 * credential in that organization: its cached account names it). */
void sw_auth_cache_forget(const char *payload);
void sw_auth_cache_clear(void);
/* Makes pool listen on "steward_auth" and forget what each notification
 * names (everything, when notifications may have been missed). */
void sw_auth_listen(struct sw_db_pool *pool);

/* The principal's account in the column order of the account statements
 * (enum sw_db_account_col), for code that writes accounts from rows. */
void sw_auth_account_values(const struct sw_principal_account *a,
			    const char *ret[SW_DB_ACCOUNT_COLUMNS]);
void sw_auth_cache_forget_session(const char *session_id);
void sw_auth_cache_forget_token(const char *token_id);
void sw_auth_cache_forget_user(const char *user_id);
void sw_auth_cache_forget_organization(const char *organization_id);

/* Whether session cookies carry Secure (PUBLIC_BASE_URL is https). */
bool sw_auth_cookie_secure(const struct sw_config *cfg);

/* The role check alone: may this principal use a route of this level? */
bool sw_access_allows(enum sw_access access, const struct sw_principal *p);

#endif
