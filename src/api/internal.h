/* Shared between the files of src/api only. */
#ifndef STEWARD_API_INTERNAL_H
#define STEWARD_API_INTERNAL_H

#include <libpq-fe.h>
#include "steward/db.h"
#include "steward/http.h"
#include "steward/limits.h"
#include "steward/query.h"

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
/* Answers 200 with a session list (sessions_list columns), current_id
 * marked current (NULL: none); or the query's failure (err). */
void sw_api_answer_sessions(struct sw_http_request *req, const PGresult *res,
			    const struct sw_db_error *err, const char *current_id);
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
/* The answers every feature gives alike: 404 NOT_FOUND (generic message),
 * 500 INTERNAL_ERROR, 503 SERVICE_UNAVAILABLE (the worker pool is full). */
void sw_api_not_found(struct sw_http_request *req);
void sw_api_internal_error(struct sw_http_request *req);
void sw_api_busy(struct sw_http_request *req);
/* A handler's state in the request's arena, zeroed, its first member the
 * request (struct x { struct sw_http_request *req; ... }). NULL when out of
 * memory, answered (500). */
void *sw_api_state_new(struct sw_http_request *req, size_t size);
/* For a callback that needs exactly one row: true when res has it.
 * Otherwise answers: the database failure (err), or status with code and
 * message when res has no row or several. */
bool sw_api_one_row(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
		    int status, const char *code, const char *message);
/* sw_api_one_row() with 404 NOT_FOUND: the object is not there (or is
 * another organization's). */
bool sw_api_found(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err);
/* Copies a path parameter that must be a UUID into out; false (answered
 * 404) when it is not one. */
bool sw_api_uuid_param(struct sw_http_request *req, struct sw_str value, char out[37]);

/* Writes an audit record in the background (never a secret in metadata). */
void sw_api_audit(struct sw_http_request *req, const char *organization_id, const char *actor_user_id,
		  const char *action, const char *target_type, const char *target_id,
		  const char *metadata_json);
/* sw_api_audit() for work that goes on after its request has been
 * answered: the database pool and the client's address (or NULL) given. */
void sw_api_audit_detached(struct sw_db_pool *db, const char *ip, const char *organization_id,
			   const char *actor_user_id, const char *action, const char *target_type,
			   const char *target_id, const char *metadata_json);
/* sw_api_audit() with metadata built by jansson (json_pack(); stolen, may
 * be NULL: no metadata). */
void sw_api_audit_json(struct sw_http_request *req, const char *organization_id,
		       const char *actor_user_id, const char *action, const char *target_type,
		       const char *target_id, json_t *metadata);

/* ---- writing rows ---- */

/* A column's value, or NULL for SQL NULL (sw_json_cstr() writes null). */
const char *sw_api_nullable(const PGresult *res, int row, int col);

enum sw_api_column_kind {
	SW_API_COL_TEXT,     /* a string */
	SW_API_COL_NULLABLE, /* a string, or null for SQL NULL */
	SW_API_COL_BOOL,     /* PostgreSQL's "t" / "f" */
	SW_API_COL_JSON,     /* jsonb text written by PostgreSQL, never a client's text */
};
/* One member of a written row: "key": the value of column col. */
struct sw_api_column {
	const char *key;
	int col;
	enum sw_api_column_kind kind;
};
/* Writes the members of cols (in order) from row of res, the columns
 * counted from first_col, into an object the caller has begun. */
void sw_api_write_columns(struct sw_json *j, const PGresult *res, int row, int first_col,
			  const struct sw_api_column *cols, size_t n);
/* The same from an array of values indexed by the columns' col (NULL: null). */
void sw_api_write_values(struct sw_json *j, const char *const *values,
			 const struct sw_api_column *cols, size_t n);

/* Writes one row of res as a JSON value; ctx is the caller's. */
typedef void (*sw_api_row_writer)(struct sw_json *j, const PGresult *res, int row, const void *ctx);
/* The shape of a row written as an object of columns alone. */
struct sw_api_object {
	const struct sw_api_column *cols;
	size_t n;
	int first_col;
};
/* A row writer (ctx: const struct sw_api_object *): {the columns}. */
void sw_api_write_object(struct sw_json *j, const PGresult *res, int row, const void *ctx);
/* Answers status with one row written by w as the data. */
void sw_api_answer_row(struct sw_http_request *req, int status, const PGresult *res, int row,
		       sw_api_row_writer w, const void *ctx);
/* Answers 200 with every row of res as the data array, each written by w;
 * or the query's failure (err). */
void sw_api_answer_rows(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
			sw_api_row_writer w, const void *ctx);
/* A page of a list (query.h): the first page->limit rows of res as the data
 * array, and the member "pagination": {"nextCursor": the cursor of the last
 * row written (its columns us_col and id_col) when res holds more rows
 * (the query asked for page->limit_plus_one), else null}. Or the query's
 * failure (err). */
void sw_api_answer_page(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
			sw_api_row_writer w, const void *ctx, const struct sw_query_page *page,
			int us_col, int id_col);

/* Writes "user" and "organization" members from an account row
 * (enum sw_db_account_col order). */
void sw_api_write_account(struct sw_json *j, const PGresult *res, int row);
/* Answers status with {user, organization, <key>: {pairs...}} from account
 * values (enum sw_db_account_col order); pairs alternate name and value. */
void sw_api_answer_account(struct sw_http_request *req, int status, const char *const *account,
			   const char *key, const char *const *pairs, size_t npairs);
/* Writes "user" and "organization" members from account values (enum
 * sw_db_account_col order), e.g. req->principal.account. */
void sw_api_write_account_values(struct sw_json *j, const char *const *account);
/* Creates a session for user_id (in organization_id, or the user's oldest
 * membership when NULL), sets its cookie, and answers status with
 * {user, organization, session}. */
void sw_api_issue_session(struct sw_http_request *req, const char *user_id,
			  const char *organization_id, const char *method, int status);

/* ---- reading JSON bodies ---- */

/* Parses the request's JSON body and notes in fe a field error ("is not a
 * known field") for each member not in known (NULL-terminated). wipe_raw:
 * the raw body holds a password or a code and is wiped once parsed,
 * whatever the outcome. NULL when the request has been answered (415,
 * 400); otherwise the caller owns the reference (json_decref()). */
json_t *sw_api_body(struct sw_http_request *req, const char *const *known, bool wipe_raw,
		    struct sw_field_errors *fe);
/* sw_api_body(), then sw_api_state_new(state_size): the state of a
 * handler that reads a body, with *ret_body set. NULL when either failed:
 * the request has been answered and nothing is left to release. */
void *sw_api_state_with_body(struct sw_http_request *req, size_t state_size,
			     const char *const *known, bool wipe_raw, struct sw_field_errors *fe,
			     json_t **ret_body);
/* Field helpers: refuse unknown members; read a string member. */
bool sw_api_known_fields(json_t *body, const char *const *known, struct sw_field_errors *fe);
bool sw_api_string_field(json_t *body, const char *key, struct sw_str *ret,
			 struct sw_field_errors *fe, bool required);
/* A required e-mail address (sw_valid_email()), written lower-case into
 * out. false with a field error under key. */
bool sw_api_email_field(json_t *body, const char *key, char out[SW_EMAIL_MAX_LEN + 1],
			struct sw_field_errors *fe);
/* A display name of 1..SW_NAME_MAX_LEN characters (sw_valid_display_name());
 * *ret is the trimmed view into body. false when absent (a field error
 * only when required) or invalid (a field error). */
bool sw_api_name_field(json_t *body, const char *key, bool required, struct sw_str *ret,
		       struct sw_field_errors *fe);
/* A required new password that keeps the rules (sw_password_acceptable()).
 * *ret is set to the view into body whenever the member is a string, valid
 * or not, so that the caller can wipe it (sw_api_wipe_view()). */
bool sw_api_password_field(json_t *body, const char *key, struct sw_str *ret,
			   struct sw_field_errors *fe);
/* A required member holding a client's copy of a random token of the form
 * of a session id (43 base64url characters: invitation, reset, challenge
 * tokens): writes its SHA-256 hex into hex and wipes the member's text in
 * body. A string of another form leaves hex as it was and notes bad_form
 * (no field error when bad_form is NULL). false unless hex was written. */
bool sw_api_token_hash_field(json_t *body, const char *key, char hex[65], const char *bad_form,
			     struct sw_field_errors *fe);

/* ---- secrets: passwords and codes ---- */

/* A password or code copied out of a parsed body into the request's arena,
 * wiped once used. ptr NULL: none (or wiped). */
struct sw_api_secret {
	char *ptr;
	size_t len;
};
/* Copies v (a string in a parsed body) into the arena as *ret, then wipes
 * v where it lies. false when out of memory (v wiped all the same). */
bool sw_api_secret_keep(struct sw_http_request *req, struct sw_str v, struct sw_api_secret *ret);
/* Wipes the copy and empties *s; again is harmless. */
void sw_api_secret_wipe(struct sw_api_secret *s);
/* Wipes a view of a secret where it lies (a member of a parsed body). */
void sw_api_wipe_view(struct sw_str v);
static inline struct sw_str sw_api_secret_str(const struct sw_api_secret *s)
{
	return sw_str_from(s->ptr, s->len);
}
/* Starts hashing s (a new password) on the worker pool, done running later
 * on the loop (sw_password_hash_async()), and wipes s. false when the pool
 * refused: answered 503, done never runs. */
bool sw_api_secret_hash(struct sw_http_request *req, struct sw_api_secret *s,
			void (*done)(void *arg, int err, const char *encoded), void *arg);

/* Re-authentication of the signed-in caller with their password, before a
 * change to how they sign in (password change, two-factor, passkeys). */
struct sw_api_reauth {
	const char *field;          /* the body member of the password, for the 422 */
	const char *message;        /* its field error when the password is wrong */
	const char *audit_action;   /* recorded when it is wrong */
	const char *audit_metadata; /* that record's metadata (JSON, never a secret) or NULL;
				     * must live until done runs (a literal, or the arena) */
	/* Runs exactly once. ok: the password is right, nothing answered yet,
	 * go on. !ok: the request is refused and answered right after done
	 * returns; only release (wipe) what arg holds, do not answer. */
	void (*done)(void *arg, bool ok);
	void *arg;
};
/* Takes over password (the caller's struct is emptied; wiped once
 * verified), fetches the caller's password hash, verifies on the worker
 * pool (Argon2id), then runs ra->done (ra is copied). Refusals: a wrong
 * password is 422 on ra->field with ra->message (and an audit record
 * ra->audit_action); the account gone is 401 UNAUTHENTICATED; a full worker
 * pool 503; a database failure as sw_api_db_error(). */
void sw_api_reauthenticate(struct sw_http_request *req, struct sw_api_secret *password,
			   const struct sw_api_reauth *ra);

#endif
