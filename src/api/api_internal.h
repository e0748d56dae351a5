/* Shared between the files of src/api only. */
#ifndef STEWARD_API_INTERNAL_H
#define STEWARD_API_INTERNAL_H

#include <jansson.h>
#include <libpq-fe.h>
#include "steward/db/db.h"
#include "steward/http/http.h"
#include "steward/base/limits.h"
#include "steward/base/validate.h"
#include "steward/http/query.h"

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
extern const struct sw_api_route_group sw_api_members_group;
extern const struct sw_api_route_group sw_api_invitations_group;
extern const struct sw_api_route_group sw_api_audit_logs_group;
extern const struct sw_api_route_group sw_api_projects_group;
extern const struct sw_api_route_group sw_api_applications_group;
extern const struct sw_api_route_group sw_api_domains_group;
extern const struct sw_api_route_group sw_api_variables_group;
extern const struct sw_api_route_group sw_api_git_sources_group;
extern const struct sw_api_route_group sw_api_git_credentials_group;
extern const struct sw_api_route_group sw_api_servers_group;
extern const struct sw_api_route_group sw_api_agent_connect_group;
extern const struct sw_api_route_group sw_api_server_commands_group;
extern const struct sw_api_route_group sw_api_jobs_group;
extern const struct sw_api_route_group sw_api_services_group;
extern const struct sw_api_route_group sw_api_alerts_group;
extern const struct sw_api_route_group sw_api_channels_group;
extern const struct sw_api_route_group sw_api_plans_group;
extern const struct sw_api_route_group sw_api_deployments_group;
extern const struct sw_api_route_group sw_api_deployment_logs_group;
extern const struct sw_api_route_group sw_api_webhooks_group;
extern const struct sw_api_route_group sw_api_runtime_group;
extern const struct sw_api_route_group sw_api_container_logs_group;
extern const struct sw_api_route_group sw_api_metrics_group;
/* The i-th group's schemas ("{}" when none); NULL past the last group. */
const char *sw_api_schema_group(size_t i);

/* git_credentials.c: the git hosts a source or credential names (NULL-
 * terminated), and their schema. */
extern const char *const sw_api_git_providers[];
#define SW_API_GIT_PROVIDER_T                                                                    \
	"{\"type\":\"string\",\"enum\":[\"GITHUB\",\"GITLAB\",\"BITBUCKET\",\"GENERIC\"]}"

/* sessions.c */
struct sw_api_secret; /* below, with the secrets */
/* Writes "user" and "organization" members from an account row
 * (enum sw_db_account_col order). */
void sw_api_write_account(struct sw_json *j, const PGresult *res, int row);
/* Answers status with {user, organization, <key>: {pairs...}} from account
 * values (enum sw_db_account_col order); pairs alternate name and value. */
void sw_api_answer_account(struct sw_http_request *req, int status, const char *const *account,
			   const char *key, const char *const *pairs, size_t npairs);
/* Writes "user" and "organization" members from account values (enum
 * sw_db_account_col order), e.g. sw_auth_account_values() of
 * req->principal.account. */
void sw_api_write_account_values(struct sw_json *j, const char *const *account);
/* Creates a session for user_id (in organization_id, or the user's oldest
 * membership when NULL), sets its cookie, and answers status with
 * {user, organization, session}. */
void sw_api_issue_session(struct sw_http_request *req, const char *user_id,
			  const char *organization_id, const char *method, int status);

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
extern const struct sw_ratelimit sw_api_limit_webhook_address;
bool sw_api_rate_limit(struct sw_http_request *req, const struct sw_ratelimit *rl, struct sw_str key);
bool sw_api_rate_limit_sign_in(struct sw_http_request *req, const char *account);

/* common.c */
/* Answers a database failure: 503 when unreachable or slow, 500 otherwise. */
void sw_api_db_error(struct sw_http_request *req, const struct sw_db_error *err);
/* sw_db_query, answering the request itself when the query cannot be queued. */
bool sw_api_query(struct sw_http_request *req, const struct sw_db_stmt *stmt,
		  const char *const *params, int n, sw_db_cb cb, void *arg);
/* sw_api_query() of an audited statement (one with an audit shape): the
 * audit record action/target_type/target_id (NULL: the row's id) with
 * metadata (a JSON object or NULL), by the request's principal from its
 * address, is written in the same statement as the action, so both happen
 * or neither does. */
bool sw_api_query_audited(struct sw_http_request *req, const struct sw_db_stmt *stmt,
			  const char *const *params, int n, const char *action,
			  const char *target_type, const char *target_id, const char *metadata_json,
			  sw_db_cb cb, void *arg);
/* The same with the whole record given (another organization's, another
 * actor). */
bool sw_api_query_audit_row(struct sw_http_request *req, const struct sw_db_stmt *stmt,
			    const char *const *params, int n, const struct sw_db_audit_row *a,
			    sw_db_cb cb, void *arg);
/* The answers every feature gives alike: 404 NOT_FOUND (generic message),
 * 500 INTERNAL_ERROR, 503 SERVICE_UNAVAILABLE (the worker pool is full). */
void sw_api_not_found(struct sw_http_request *req);
void sw_api_internal_error(struct sw_http_request *req);
void sw_api_busy(struct sw_http_request *req);
/* Runs job on the worker pool (run there, done back on req's loop); when
 * the pool is full answers 503 (sw_api_busy) and returns false: the caller
 * still owns the job then and frees it. */
struct sw_worker_job;
bool sw_api_submit(struct sw_http_request *req, struct sw_worker_job *job,
		   void (*run)(struct sw_worker_job *), void (*done)(struct sw_worker_job *));
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

/* Audit records are written in the same statement as the action they
 * record (sw_api_query_audited()). A record that goes with no write (a
 * refused sign-in, say) is written first, and then(req, arg) runs once it
 * is stored; if it cannot be stored the request is answered with the
 * database error and nothing follows (ip NULL: the request's address).
 * Never a secret in metadata. false when answered at once. */
bool sw_api_audit_first(struct sw_http_request *req, const struct sw_db_audit_row *a,
			void (*then)(struct sw_http_request *req, void *arg), void *arg);

/* ---- writing rows ---- */

/* A column's value, or NULL for SQL NULL (sw_json_cstr() writes null). */
const char *sw_api_nullable(const PGresult *res, int row, int col);

enum sw_api_column_kind {
	SW_API_COL_TEXT,     /* a string */
	SW_API_COL_NULLABLE, /* a string, or null for SQL NULL */
	SW_API_COL_BOOL,     /* PostgreSQL's "t" / "f" */
	SW_API_COL_JSON,     /* jsonb text written by PostgreSQL, never a client's text */
	SW_API_COL_TIME,     /* microseconds since 1970 (SW_SQL_TS_US), written as RFC 3339
				with milliseconds; null for SQL NULL */
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

/* Sentences the documentation of every resource route shares. */
#define SW_API_DOC_SCOPED " Objects of another organization are not found (404)."
#define SW_API_DOC_PAGE                                                                        \
	" A page: ?limit (1-200, default 50), ?cursor (pagination.nextCursor of the previous "   \
	"page), ?order=desc|asc by createdAt (newest first by default)."

/* ---- resources (resource.c): one create, read, list, update and delete
 * for every organization-owned resource, so that every route keeps the
 * same conventions ----
 *
 * Conventions (also in the OpenAPI document):
 * - Every statement names the caller's organization ($1); another
 *   organization's object is never found (404).
 * - Collections: GET lists a page (?limit, ?cursor, ?order=desc|asc by
 *   createdAt, newest first by default, plus the resource's filters); POST
 *   creates (201 with the object). Items: GET, PATCH (partial body: only
 *   the members given change; 200 with the object), DELETE (204; 404 when
 *   it is not there, so a repeat answers 404 with nothing changed).
 * - A path with two parameters (/projects/:id/environments/:environmentId)
 *   names the parent first; the parent of a collection is its one
 *   parameter. Both must be UUIDs (else 404).
 * - Statement parameters, in this order (text; NULL for SQL NULL):
 *     create: $1 organization, $2 parent (NULL: none), $3 acting user,
 *             $4.. the fields in the order of the resource's table
 *     get:    $1 organization, $2 id, $3 parent
 *     update: $1 organization, $2 id, $3 parent, $4 the mask ('1' for each
 *             field given, '0' otherwise, in field order), $5.. the fields
 *             (NULL when not given)
 *     remove: $1 organization, $2 id, $3 parent
 *     list:   $1 organization, $2 parent, $3 limit + 1, $4 cursor
 *             microseconds, $5 cursor id, $6 'asc' or 'desc', $7.. the
 *             filters in order (NULL when absent)
 *     parent: $1 organization, $2 parent -> a row when the parent exists
 *   create, get, update and remove return the object's columns (remove:
 *   any row); SQL raising SW422/SW409/SW404 (migration 0007) is answered
 *   as it says, 23505 (a unique key) as 409 <type>_EXISTS... see
 *   sw_api_resource.conflict.
 * - Audit: "<type>.created", "<type>.updated", "<type>.deleted" with the
 *   object's id and, when the shape has a "name" column, {"name": ...}. */

enum sw_api_field_kind {
	SW_API_FIELD_STRING, /* check() decides (NULL: 1..max code points of display text) */
	SW_API_FIELD_TEXT,   /* free text: 0..max code points, no control characters */
	SW_API_FIELD_INT,    /* a whole number in min..max */
	SW_API_FIELD_BOOL,   /* true or false, as "t" / "f" */
	SW_API_FIELD_ENUM,   /* one of values */
	SW_API_FIELD_ID,     /* a UUID; the statement checks it is the organization's */
	SW_API_FIELD_CUSTOM, /* parse() decides and writes the parameter */
};
#define SW_API_FIELD_REQUIRED 0x1u    /* a create without it is a field error */
#define SW_API_FIELD_NULLABLE 0x2u    /* null is accepted: SQL NULL */
#define SW_API_FIELD_CREATE_ONLY 0x4u /* PATCH refuses it: "cannot be changed" */
#define SW_API_FIELD_NO_UPDATE_NULL 0x8u /* reserved */

struct sw_api_field {
	const char *key;           /* the JSON member (or query parameter of a filter) */
	enum sw_api_field_kind kind;
	unsigned flags;
	bool (*check)(struct sw_str s, const char **ret_msg); /* STRING */
	long long min, max;        /* INT: the range; STRING (no check) and TEXT: code points */
	const char *const *values; /* ENUM: NULL-terminated */
	const char *def;           /* create: the parameter when absent (NULL: SQL NULL) */
	/* CUSTOM: v is the member (never NULL; json null only when NULLABLE
	 * allowed it through as NULL already). Sets *ret (text in the arena,
	 * or NULL) or returns false with a field-error message. */
	bool (*parse)(struct sw_http_request *req, json_t *v, const char **ret, const char **ret_msg);
};

/* An error raised by a statement, answered as given. */
struct sw_api_sqlerr {
	const char *sqlstate;
	int status;
	const char *code;
	const char *message;
	const char *field; /* 422 only: the field the message is about */
};

struct sw_api_resource {
	const char *type;             /* "project": audit actions and messages */
	const struct sw_api_field *fields;
	size_t nfields;
	const struct sw_api_object *shape; /* a row as JSON */
	const struct sw_db_stmt *create, *get, *update, *remove, *list, *parent;
	const struct sw_api_field *filters; /* list query parameters (ID, ENUM, STRING, BOOL) */
	size_t nfilters;
	int cursor_us_col, cursor_id_col;   /* of the list's rows */
	const struct sw_api_sqlerr *errors; /* the resource's own SQLSTATEs, or NULL */
	size_t nerrors;
	/* 23505 from create or update: 409 with this code and message. */
	const char *conflict_code, *conflict_message;
};

/* The handlers, for a route entry whose handler looks its resource up:
 * each feature writes a one-line handler calling these with its resource. */
void sw_api_resource_create(struct sw_http_request *req, const struct sw_api_resource *r);
void sw_api_resource_get(struct sw_http_request *req, const struct sw_api_resource *r);
void sw_api_resource_update(struct sw_http_request *req, const struct sw_api_resource *r);
void sw_api_resource_remove(struct sw_http_request *req, const struct sw_api_resource *r);
void sw_api_resource_list(struct sw_http_request *req, const struct sw_api_resource *r);

/* The pieces, for handlers that do more than the generic ones. */
/* The parent and id of the request's path (see the conventions), checked
 * to be UUIDs: false when answered 404. parent or id may be NULL when the
 * caller does not want it; a missing one is set "" . */
bool sw_api_path_ids(struct sw_http_request *req, char parent[37], char id[37]);
/* Reads body against fields for a create (creating: required members and
 * defaults) or an update (mask written, CREATE_ONLY refused): params[i]
 * becomes field i's parameter; mask (nfields + 1 bytes) gets '0'/'1' for
 * each field (may be NULL on create). Field errors into fe. Unknown members
 * are refused. Returns true when fe got no error. */
bool sw_api_fields_read(struct sw_http_request *req, json_t *body, const struct sw_api_field *fields,
			size_t n, bool creating, const char **params, char *mask,
			struct sw_field_errors *fe);
/* Checks one member v (not NULL) against f: its parameter into *ret, or
 * false with a message. */
bool sw_api_field_value(struct sw_http_request *req, const struct sw_api_field *f, json_t *v,
			const char **ret, const char **ret_msg);
/* Answers a failed resource statement: r's own errors, SW422/SW409/SW404,
 * 23505 as r's conflict, else sw_api_db_error(). r may be NULL. */
void sw_api_resource_error(struct sw_http_request *req, const struct sw_api_resource *r,
			   const struct sw_db_error *err);
/* sw_api_query_audited() of r's statement stmt (an audited one) with the
 * record "<type>.<verb>" of the row's id (and name, per the statement's
 * audit shape). */
bool sw_api_resource_query_audited(struct sw_http_request *req, const struct sw_api_resource *r,
				   const char *verb, const struct sw_db_stmt *stmt,
				   const char *const *params, int n, sw_db_cb cb, void *arg);
/* Answers a statement's job row (SW_SQL_JOB_COLUMNS, arg: the request):
 * the Job object {id, queue, kind, status, targetType, targetId,
 * createdAt, attempts, startedAt, finishedAt, errorMessage}; 200 to a GET,
 * else 202 with "Location: /jobs/<id>". No row: 404. */
/* Adds "Location: /jobs/<job_id>" to a 202 answer that queued a job: 0, or
 * -1 with the request answered 500. */
int sw_api_job_location(struct sw_http_request *req, const char *job_id);
/* Row 0 of a statement whose columns start as a runtime target's (enum
 * sw_db_runtime_target_col): its server's id into server_id; true when
 * that server is remote (reached through its agent). */
bool sw_api_runtime_target_read(const PGresult *res, char server_id[static 37]);

void sw_api_job_answered(void *arg, const PGresult *res, const struct sw_db_error *err);
/* Queues a job (steward_job_enqueue) for the target in path parameter :id
 * of type target_type (whose existence in the organization the statement
 * checks) and answers 202 with the job (sw_api_job_answered). kind is
 * "<target_type>.<verb>". */
void sw_api_job_enqueue(struct sw_http_request *req, const struct sw_db_stmt *stmt,
			const char *queue, const char *kind);

/* runtime.c: the local server's driver, made once (NULL when it cannot
 * be: logged). */
struct sw_driver;
struct sw_driver *sw_api_local_driver(void);
/* runtime.c: the database a remote server's commands go through (a
 * worker's blocking connection opens it: sw_api_runtime_set_conninfo). */
const char *sw_api_runtime_conninfo(void);

/* Metrics (metrics.c, metrics_loop.c). */
#define SW_METRICS_INTERVAL_MS 15000 /* the spec's sampling interval */
#define SW_METRICS_CACHE_MS 60000    /* the in-memory samples' time to live */
#define SW_METRICS_CACHE_SLOTS 256   /* at most this many samples kept (all servers') */
struct sw_metrics_sample;
/* One sample of the local host, with the containers of the applications
 * in apps (a JSON array of ids); blocking: a worker or the metrics loop.
 * 0, -EIO (no sampler: the reason was logged) or -errno. */
int sw_api_metrics_sample_local(json_t *apps, struct sw_metrics_sample *out);
/* metrics_alerts.c: the alerts of one sample, evaluated by the writer of
 * the metric history, its statements run by exec (NULL on failure);
 * minute_ms is the loop's minute (60000 but under METRICS_MINUTE_MS, a
 * test setting), the unit of rules' durationSeconds: 60 of them last one. */
typedef PGresult *(*sw_api_metrics_exec)(const struct sw_db_stmt *stmt, const char *const *params,
					 ExecStatusType want);
/* A server's sample of this tick: a rule is evaluated on its target
 * server's (none: the rule waits, its pending period restarted). */
struct sw_api_metrics_target {
	const char *server_id;
	const struct sw_metrics_sample *sample;
};
void sw_api_metrics_alerts_evaluate(sw_api_metrics_exec exec, const struct sw_api_metrics_target *targets,
				    size_t ntargets, int64_t now_ms, unsigned minute_ms);
/* Forgets the rules' pending periods (the loop has stopped). */
void sw_api_metrics_alerts_forget(void);
/* metrics.c: an agent's sample (text: metrics.sample's answer) cut to the
 * containers of the applications in apps (a JSON array of ids), its counts
 * made again, serverId set and platform null; NULL when it cannot be read. */
json_t *sw_api_metrics_remote_cut(const char *text, json_t *apps, const char *server_id);
/* metrics_loop.c: a live reader of the remote server server_id starts
 * (on) or leaves: a replica that does not write the metric history samples
 * a remote server for its own readers only while it has some. */
void sw_api_metrics_live_watch(const char *server_id, bool on);
/* Why the local sampler could not be made (metrics_local.c), for a log line. */
const char *sw_api_metrics_local_why(void);
/* The cached SSE frames of server_id's samples (the last
 * SW_METRICS_CACHE_MS) whose event id is above after_seq, oldest first,
 * at most max, each with a reference for the caller; how many. Their
 * offset is their event id. */
/* Streams server_id's samples to req as SSE (metrics_live.c); answers req. */
void sw_api_metrics_live_start(struct sw_http_request *req, const char *server_id, bool remote);
struct sw_hub_chunk;
size_t sw_api_metrics_cache_frames(const char *server_id, uint64_t after_seq, struct sw_hub_chunk **out,
				   size_t max);

#endif
