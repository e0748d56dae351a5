/* Shared between the files of src/api only. */
#ifndef STEWARD_API_INTERNAL_H
#define STEWARD_API_INTERNAL_H

#include <libpq-fe.h>
#include "steward/db.h"
#include "steward/http.h"

void sw_api_health(struct sw_http_request *req);
void sw_api_setup_status(struct sw_http_request *req);
void sw_api_setup(struct sw_http_request *req);
void sw_api_signup(struct sw_http_request *req);
void sw_api_docs(struct sw_http_request *req);

void sw_api_sign_in(struct sw_http_request *req);
void sw_api_sign_out(struct sw_http_request *req);
void sw_api_session(struct sw_http_request *req);
void sw_api_sessions_list(struct sw_http_request *req);
void sw_api_sessions_revoke(struct sw_http_request *req);
void sw_api_password_change(struct sw_http_request *req);

/* A feature's routes and the OpenAPI schemas they name (a JSON object of
 * name -> schema, merged into components.schemas; NULL for none). */
struct sw_api_route_group {
	const struct sw_route *routes;
	size_t count;
	const char *schemas;
};
extern const struct sw_api_route_group sw_api_two_factor_group;
extern const struct sw_api_route_group sw_api_passkeys_group;
extern const struct sw_api_route_group sw_api_password_reset_group;
extern const struct sw_api_route_group sw_api_tokens_group;
extern const struct sw_api_route_group sw_api_organizations_group;
/* The i-th group's schemas ("{}" when none); NULL past the last group. */
const char *sw_api_schema_group(size_t i);

/* auth.c */
/* After a good password: issues the session, or (two-factor) a challenge. */
void sw_api_sign_in_continue(struct sw_http_request *req, const char *user_id);
/* two_factor.c: after a good password, a challenge when two-factor is
 * enabled (200 {twoFactorRequired, challenge, expiresAt}, no cookie), else
 * the session. */
void sw_api_two_factor_sign_in(struct sw_http_request *req, const char *user_id);
/* Answers 200 with a session list (sessions_list columns). */
void sw_api_write_sessions(struct sw_http_request *req, const PGresult *res, const char *current_id);
/* Revokes session_id if it belongs to user_id: 204, or 404. */
void sw_api_revoke_session_of(struct sw_http_request *req, const char *user_id, struct sw_str session_id);

/* limits.c: per-address and per-account limits; false when answered 429
 * (with Retry-After). */
struct sw_ratelimit;
extern const struct sw_ratelimit sw_api_limit_sign_in_address;
extern const struct sw_ratelimit sw_api_limit_sign_in_account;
extern const struct sw_ratelimit sw_api_limit_two_factor_address;
extern const struct sw_ratelimit sw_api_limit_two_factor_account;
extern const struct sw_ratelimit sw_api_limit_passkey_address;
bool sw_api_rate_limit(struct sw_http_request *req, const struct sw_ratelimit *rl, struct sw_str key);
bool sw_api_rate_limit_sign_in(struct sw_http_request *req, const char *account);

/* common.c */
/* Answers a database failure: 503 when unreachable or slow, 500 otherwise. */
void sw_api_db_error(struct sw_http_request *req, const struct sw_db_error *err);
/* sw_db_query, answering the request itself when the query cannot be queued. */
bool sw_api_query(struct sw_http_request *req, const struct sw_db_stmt *stmt,
		  const char *const *params, int n, sw_db_cb cb, void *arg);
/* Writes an audit record in the background (never a secret in metadata). */
void sw_api_audit(struct sw_http_request *req, const char *organization_id, const char *actor_user_id,
		  const char *action, const char *target_type, const char *target_id,
		  const char *metadata_json);
/* Writes "user" and "organization" members from an account row
 * (enum sw_db_account_col order). */
void sw_api_write_account(struct sw_json *j, const PGresult *res, int row);
/* Answers status with {user, organization, <key>: {pairs...}} from an
 * account row; pairs alternate name and value (npairs pairs). */
void sw_api_answer_account(struct sw_http_request *req, int status, const PGresult *res,
			   const char *key, const char *const *pairs, size_t npairs);
/* Creates a session for user_id (in organization_id, or the user's oldest
 * membership when NULL), sets its cookie, and answers status with
 * {user, organization, session}. */
void sw_api_issue_session(struct sw_http_request *req, const char *user_id,
			  const char *organization_id, const char *method, int status);
/* Field helpers: refuse unknown members; read a string member. */
bool sw_api_known_fields(json_t *body, const char *const *known, struct sw_field_errors *fe);
bool sw_api_string_field(json_t *body, const char *key, struct sw_str *ret,
			 struct sw_field_errors *fe, bool required);

#endif
