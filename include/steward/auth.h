/* Identity: password hashing and the global guard. */
#ifndef STEWARD_AUTH_H
#define STEWARD_AUTH_H

#include "steward/base.h"
#include "steward/http.h"

struct sw_loop;

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
/* Blocking forms, for workers and tests. */
int sw_password_hash(struct sw_str password, char out[SW_PASSWORD_HASH_MAX]);
bool sw_password_verify(const char *encoded, struct sw_str password);

/* The guard: sw_server_shared.guard. Resolves the request's credentials
 * (session cookie or "Authorization: Bearer st_...") to a principal and
 * checks the route's access level. Answers 401 UNAUTHENTICATED without
 * valid credentials and 403 FORBIDDEN for a principal lacking the role. */
bool sw_guard_admit(struct sw_http_request *req);
/* The role check alone: may this principal use a route of this level? */
bool sw_access_allows(enum sw_access access, const struct sw_principal *p);

#endif
