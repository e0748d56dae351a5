/* What every handler shares: database calls that answer the request on
 * failure, the common answers, rows written as JSON (one, a list, a page),
 * sessions issued with their cookie, the account body, audit records,
 * reading JSON fields with field errors, passwords held and wiped, and
 * re-authentication with the password. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/auth/auth.h"
#include "steward/db/db.h"
#include "steward/http/http_auth.h"
#include "steward/base/log.h"
#include "steward/base/secret.h"
#include "steward/base/timeparse.h"
#include "steward/base/validate.h"
#include "steward/io/io.h"
#include "api/api_internal.h"
#include "steward/db/statements.h"

void sw_api_db_error(struct sw_http_request *req, const struct sw_db_error *err)
{
	if (err->code == -EIO) {
		/* The SQLSTATE only: a server message may quote a bound value. */
		sw_log_error("database error sqlstate=%s rid=%.*s path=%.*s", err->sqlstate,
			     (int)req->request_id_len, req->request_id, (int)req->path.len, req->path.ptr);
		sw_api_internal_error(req);
		return;
	}
	sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The database is unavailable; try again shortly.");
}

bool sw_api_query(struct sw_http_request *req, const struct sw_db_stmt *stmt,
		  const char *const *params, int n, sw_db_cb cb, void *arg)
{
	int r = sw_db_query(sw_db_pool_of(req->loop), stmt, params, n, cb, arg);
	if (r < 0) {
		struct sw_db_error e = { .code = r };
		sw_api_db_error(req, &e);
		return false;
	}
	return true;
}

bool sw_api_query_audited(struct sw_http_request *req, const struct sw_db_stmt *stmt,
			  const char *const *params, int n, const char *action,
			  const char *target_type, const char *target_id, const char *metadata_json,
			  sw_db_cb cb, void *arg)
{
	struct sw_db_audit_row a = { req->principal.organization_id, req->principal.user_id,
				     action, target_type, target_id, sw_http_peer_address(req),
				     metadata_json };
	return sw_api_query_audit_row(req, stmt, params, n, &a, cb, arg);
}

bool sw_api_query_audit_row(struct sw_http_request *req, const struct sw_db_stmt *stmt,
			    const char *const *params, int n, const struct sw_db_audit_row *a,
			    sw_db_cb cb, void *arg)
{
	int r = sw_db_query_audited(sw_db_pool_of(req->loop), stmt, params, n, a, cb, arg);
	if (r < 0) {
		if (r == -EINVAL)
			sw_log_error("audited query %s has no audit shape: not run", stmt->name);
		struct sw_db_error e = { .code = r };
		sw_api_db_error(req, &e);
		return false;
	}
	return true;
}

/* ---- common answers ---- */

void sw_api_not_found(struct sw_http_request *req)
{
	sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
}

void sw_api_internal_error(struct sw_http_request *req)
{
	sw_http_error(req, 500, "INTERNAL_ERROR", "The server failed to complete the request.");
}

void sw_api_busy(struct sw_http_request *req)
{
	sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server is busy; try again shortly.");
}

bool sw_api_submit(struct sw_http_request *req, struct sw_worker_job *job,
		   void (*run)(struct sw_worker_job *), void (*done)(struct sw_worker_job *))
{
	job->run = run;
	job->done = done;
	if (sw_worker_submit(req->loop, job) == 0)
		return true;
	sw_api_busy(req);
	return false;
}

void *sw_api_state_new(struct sw_http_request *req, size_t size)
{
	struct sw_http_request **s = sw_arena_alloc(&req->arena, size);
	if (!s) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return NULL;
	}
	memset(s, 0, size);
	*s = req;
	return s;
}

bool sw_api_one_row(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
		    int status, const char *code, const char *message)
{
	if (err->code) {
		sw_api_db_error(req, err);
		return false;
	}
	if (PQntuples(res) != 1) {
		sw_http_error(req, status, code, message);
		return false;
	}
	return true;
}

bool sw_api_found(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err)
{
	return sw_api_one_row(req, res, err, 404, "NOT_FOUND", "The requested resource does not exist.");
}

bool sw_api_uuid_param(struct sw_http_request *req, struct sw_str value, char out[37])
{
	if (!sw_is_uuid(value)) {
		sw_api_not_found(req);
		return false;
	}
	snprintf(out, 37, "%.*s", (int)value.len, value.ptr);
	return true;
}

/* ---- audit ---- */

struct audit_first {
	struct sw_http_request *req;
	void (*then)(struct sw_http_request *req, void *arg);
	void *arg;
};

static void audit_written(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct audit_first *f = arg;
	(void)res;
	if (err->code) {
		sw_log_error("audit record not written (code %d, sqlstate %s): nothing done",
			     err->code, err->sqlstate);
		sw_api_db_error(f->req, err);
		return;
	}
	f->then(f->req, f->arg);
}

bool sw_api_audit_first(struct sw_http_request *req, const struct sw_db_audit_row *a,
			void (*then)(struct sw_http_request *req, void *arg), void *arg)
{
	struct audit_first *f = sw_api_state_new(req, sizeof(*f));
	if (!f)
		return false;
	f->then = then;
	f->arg = arg;
	const char *params[SW_DB_AUDIT_PARAMS] = {
		a->organization_id && *a->organization_id ? a->organization_id : NULL,
		a->actor_user_id && *a->actor_user_id ? a->actor_user_id : NULL,
		a->action, a->target_type, a->target_id,
		a->ip ? a->ip : sw_http_peer_address(req), a->metadata_json,
	};
	return sw_api_query(req, &sw_db_stmt_audit_insert, params, SW_DB_AUDIT_PARAMS, audit_written, f);
}

/* ---- writing rows ---- */

const char *sw_api_nullable(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

/* A SW_API_COL_TIME value, the decimal microseconds since 1970 the
 * statement wrote, as the API's RFC 3339 string with milliseconds; "" when
 * out of range (negative, or past year 9999). The digits are read here, not
 * by strtoll, and the text needs no escaping: on a list this runs for every
 * timestamp of every row. What is not a digit ends the number (strtoll's
 * reading of PostgreSQL's int8 output). */
static void write_time(struct sw_json *j, const char *v)
{
	bool negative = *v == '-';
	const char *p = v + negative;
	int64_t us = 0;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		if (digits == 18) { /* past any year 9999 instant: out of range */
			us = -1;
			break;
		}
		us = us * 10 + (*p - '0');
	}
	char text[SW_RFC3339_MS_LEN + 3];
	text[0] = '"';
	if ((negative && us != 0) || us < 0 || sw_rfc3339_format_ms(us, text + 1) < 0) {
		sw_json_raw(j, SW_STR("\"\""));
		return;
	}
	text[SW_RFC3339_MS_LEN + 1] = '"';
	sw_json_raw(j, sw_str_from(text, SW_RFC3339_MS_LEN + 2));
}

void sw_api_write_values(struct sw_json *j, const char *const *values,
			 const struct sw_api_column *cols, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *v = values[cols[i].col];
		sw_json_key(j, cols[i].key);
		switch (cols[i].kind) {
		case SW_API_COL_TEXT:
			sw_json_cstr(j, v ? v : "");
			break;
		case SW_API_COL_NULLABLE:
			sw_json_cstr(j, v);
			break;
		case SW_API_COL_BOOL:
			sw_json_bool(j, v && v[0] == 't');
			break;
		case SW_API_COL_JSON:
			if (v)
				sw_json_raw(j, sw_str_cstr(v));
			else
				sw_json_null(j);
			break;
		case SW_API_COL_TIME:
			if (v)
				write_time(j, v);
			else
				sw_json_null(j);
			break;
		}
	}
}

void sw_api_write_columns(struct sw_json *j, const PGresult *res, int row, int first_col,
			  const struct sw_api_column *cols, size_t n)
{
	/* The values the columns name, NULL for SQL NULL. */
	const char *values[64] = { 0 };
	for (size_t i = 0; i < n; i++) {
		int col = first_col + cols[i].col;
		if (cols[i].col >= 0 && cols[i].col < 64 && col < PQnfields(res))
			values[cols[i].col] = PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
	}
	sw_api_write_values(j, values, cols, n);
}

void sw_api_write_object(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const struct sw_api_object *o = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, o->first_col, o->cols, o->n);
	sw_json_object_end(j);
}

void sw_api_answer_row(struct sw_http_request *req, int status, const PGresult *res, int row,
		       sw_api_row_writer w, const void *ctx)
{
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	w(&j, res, row, ctx);
	sw_http_json_end(req, status, &buf, &j);
}

/* The data array of rows, and with a page its pagination member. */
static void answer_list(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
			sw_api_row_writer w, const void *ctx, const struct sw_query_page *page,
			int us_col, int id_col)
{
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	int rows = PQntuples(res);
	int n = page ? SW_MIN(rows, page->limit) : rows;
	char next[SW_QUERY_CURSOR_MAX] = "";
	if (page && rows > n && n > 0 &&
	    SW_NEVER(sw_query_cursor_format(PQgetvalue(res, n - 1, us_col), PQgetvalue(res, n - 1, id_col),
					    next, sizeof(next)) < 0)) {
		sw_api_internal_error(req);
		return;
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_array_begin(&j);
	for (int i = 0; i < n; i++) {
		size_t before = buf.len;
		w(&j, res, i, ctx);
		/* Room for the other rows, guessed from the first: one growth
		 * instead of a doubling every few rows. */
		if (i == 0 && n > 1 && buf.len > before &&
		    (size_t)(n - 1) <= SIZE_MAX / 2 / (buf.len - before + 16))
			(void)sw_buf_reserve(&buf, (size_t)(n - 1) * (buf.len - before + 16) + 64);
	}
	sw_json_array_end(&j);
	if (page) {
		sw_json_key(&j, "pagination");
		sw_json_object_begin(&j);
		sw_json_key(&j, "nextCursor");
		sw_json_cstr(&j, next[0] ? next : NULL);
		sw_json_object_end(&j);
	}
	sw_http_json_end(req, 200, &buf, &j);
}

void sw_api_answer_rows(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
			sw_api_row_writer w, const void *ctx)
{
	answer_list(req, res, err, w, ctx, NULL, 0, 0);
}

void sw_api_answer_page(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
			sw_api_row_writer w, const void *ctx, const struct sw_query_page *page,
			int us_col, int id_col)
{
	answer_list(req, res, err, w, ctx, page, us_col, id_col);
}

/* ---- reading JSON bodies ---- */

json_t *sw_api_body(struct sw_http_request *req, const char *const *known, bool wipe_raw,
		    struct sw_field_errors *fe)
{
	json_t *body = sw_http_json_body(req);
	if (wipe_raw)
		OPENSSL_cleanse((void *)req->body.ptr, req->body.len);
	if (body)
		sw_api_known_fields(body, known, fe);
	return body;
}

void *sw_api_state_with_body(struct sw_http_request *req, size_t state_size,
			     const char *const *known, bool wipe_raw, struct sw_field_errors *fe,
			     json_t **ret_body)
{
	json_t *body = sw_api_body(req, known, wipe_raw, fe);
	if (!body)
		return NULL;
	void *state = sw_api_state_new(req, state_size);
	if (!state) {
		json_decref(body);
		sw_buf_release(&fe->buf); /* unknown fields noted, never to be answered */
		*fe = (struct sw_field_errors){ 0 };
		return NULL;
	}
	*ret_body = body;
	return state;
}

bool sw_api_known_fields(json_t *body, const char *const *known, struct sw_field_errors *fe)
{
	const char *key;
	json_t *value;
	bool ok = true;
	json_object_foreach(body, key, value) {
		bool found = false;
		for (const char *const *k = known; *k && !found; k++)
			found = strcmp(*k, key) == 0;
		if (!found) {
			sw_field_error(fe, key, "is not a known field");
			ok = false;
		}
	}
	return ok;
}

bool sw_api_string_field(json_t *body, const char *key, struct sw_str *ret,
			 struct sw_field_errors *fe, bool required)
{
	json_t *v = json_object_get(body, key);
	if (!v) {
		if (required)
			sw_field_error(fe, key, "is required");
		return false;
	}
	if (!json_is_string(v)) {
		sw_field_error(fe, key, "must be a string");
		return false;
	}
	*ret = sw_str_from(json_string_value(v), json_string_length(v));
	if (memchr(ret->ptr, '\0', ret->len)) {
		sw_field_error(fe, key, "must not contain NUL characters");
		return false;
	}
	return true;
}

bool sw_api_email_field(json_t *body, const char *key, char out[SW_EMAIL_MAX_LEN + 1],
			struct sw_field_errors *fe)
{
	struct sw_str v;
	const char *msg;
	if (!sw_api_string_field(body, key, &v, fe, true))
		return false;
	if (!sw_valid_email(v, out, SW_EMAIL_MAX_LEN + 1, &msg)) {
		sw_field_error(fe, key, msg);
		return false;
	}
	return true;
}

bool sw_api_name_field(json_t *body, const char *key, bool required, struct sw_str *ret,
		       struct sw_field_errors *fe)
{
	const char *msg;
	if (!sw_api_string_field(body, key, ret, fe, required))
		return false;
	if (!sw_valid_display_name(*ret, SW_NAME_MAX_LEN, ret, &msg)) {
		sw_field_error(fe, key, msg);
		return false;
	}
	return true;
}

bool sw_api_password_field(json_t *body, const char *key, struct sw_str *ret,
			   struct sw_field_errors *fe)
{
	const char *msg;
	json_t *v = json_object_get(body, key);
	if (json_is_string(v)) /* the view to wipe, whatever the checks say */
		*ret = sw_str_from(json_string_value(v), json_string_length(v));
	struct sw_str checked;
	if (!sw_api_string_field(body, key, &checked, fe, true))
		return false;
	if (!sw_password_acceptable(checked, &msg)) {
		sw_field_error(fe, key, msg);
		return false;
	}
	return true;
}

bool sw_api_token_hash_field(json_t *body, const char *key, char hex[65], const char *bad_form,
			     struct sw_field_errors *fe)
{
	struct sw_str v;
	if (!sw_api_string_field(body, key, &v, fe, true))
		return false;
	bool ok = sw_session_token_well_formed(v);
	if (ok)
		sw_sha256_hex(v.ptr, v.len, hex);
	else if (bad_form)
		sw_field_error(fe, key, bad_form);
	sw_api_wipe_view(v);
	return ok;
}

/* ---- secrets ---- */

void sw_api_wipe_view(struct sw_str v)
{
	if (v.ptr)
		OPENSSL_cleanse((void *)v.ptr, v.len);
}

bool sw_api_secret_keep(struct sw_http_request *req, struct sw_str v, struct sw_api_secret *ret)
{
	ret->ptr = sw_arena_strndup(&req->arena, v.ptr, v.len);
	ret->len = ret->ptr ? v.len : 0;
	sw_api_wipe_view(v);
	return ret->ptr != NULL;
}

void sw_api_secret_wipe(struct sw_api_secret *s)
{
	if (s->ptr)
		OPENSSL_cleanse(s->ptr, s->len);
	s->ptr = NULL;
	s->len = 0;
}

bool sw_api_secret_hash(struct sw_http_request *req, struct sw_api_secret *s,
			void (*done)(void *arg, int err, const char *encoded), void *arg)
{
	int r = sw_password_hash_async(req->loop, sw_api_secret_str(s), done, arg);
	sw_api_secret_wipe(s);
	if (r < 0)
		sw_api_busy(req);
	return r == 0;
}
