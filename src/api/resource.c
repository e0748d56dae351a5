/* The generic resource handlers: create, read, list, update, delete of an
 * organization-owned object described by a struct sw_api_resource (the
 * conventions are in internal.h). Every resource of the API that is a
 * plain record goes through here, so pagination, filters, partial
 * updates, field errors, 404 across organizations and audit records are
 * the same everywhere; a resource with more to do (a secret returned once,
 * a job queued) uses the pieces and its own statement.
 *
 * Why errors come from SQL: whether environmentId names an environment of
 * the caller's organization, whether a quota is reached, whether a project
 * still holds applications, is known for certain only inside the statement
 * that writes. The statement raises SW422 'field|sentence', SW409
 * 'CODE|sentence' or SW404 with a message written in the migration (never
 * a client's value), and it is answered here as it says. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/auth/auth.h"
#include "steward/base/log.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"

#define RESOURCE_MAX_FIELDS 40
#define RESOURCE_MAX_FILTERS 8

/* ---- reading fields ---- */

static bool enum_value(const struct sw_api_field *f, const char *s)
{
	for (const char *const *v = f->values; v && *v; v++)
		if (strcmp(*v, s) == 0)
			return true;
	return false;
}

/* "must be one of A, B or C" in the arena. */
static const char *enum_message(struct sw_http_request *req, const struct sw_api_field *f)
{
	struct sw_buf b = { 0 };
	const char *ret = "is not one of the allowed values";
	if (sw_buf_append_lit(&b, "must be one of ") < 0)
		goto out;
	for (const char *const *v = f->values; v && *v; v++) {
		const char *sep = v == f->values ? "" : v[1] ? ", " : " or ";
		if (sw_buf_appendf(&b, "%s%s", sep, *v) < 0)
			goto out;
	}
	char *s = sw_arena_strndup(&req->arena, (const char *)b.data, b.len);
	if (s)
		ret = s;
out:
	sw_buf_release(&b);
	return ret;
}

/* Free text of at most max code points, without control characters. */
static bool text_ok(struct sw_str s, long long min, long long max, const char **ret_msg)
{
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c < 0x20 || c == 0x7f) {
			*ret_msg = "must not contain control characters";
			return false;
		}
	}
	size_t n = sw_utf8_length(s);
	if ((long long)n < min || (long long)n > max) {
		*ret_msg = min > 0 ? "has a length outside the allowed range" : "is too long";
		return false;
	}
	return true;
}

bool sw_api_field_value(struct sw_http_request *req, const struct sw_api_field *f, json_t *v,
			const char **ret, const char **ret_msg)
{
	char num[24];
	struct sw_str s;
	switch (f->kind) {
	case SW_API_FIELD_STRING:
	case SW_API_FIELD_TEXT:
	case SW_API_FIELD_ENUM:
	case SW_API_FIELD_ID:
		if (!json_is_string(v)) {
			*ret_msg = "must be a string";
			return false;
		}
		s = sw_str_from(json_string_value(v), json_string_length(v));
		if (memchr(s.ptr, '\0', s.len)) {
			*ret_msg = "must not contain NUL characters";
			return false;
		}
		if (f->kind == SW_API_FIELD_STRING && f->check && !f->check(s, ret_msg))
			return false;
		if (f->kind == SW_API_FIELD_STRING && !f->check &&
		    !text_ok(s, 1, f->max ? f->max : SW_NAME_MAX_LEN, ret_msg))
			return false;
		if (f->kind == SW_API_FIELD_TEXT && !text_ok(s, f->min, f->max, ret_msg))
			return false;
		if (f->kind == SW_API_FIELD_ENUM && !enum_value(f, s.ptr)) {
			*ret_msg = enum_message(req, f);
			return false;
		}
		if (f->kind == SW_API_FIELD_ID && !sw_is_uuid(s)) {
			*ret_msg = "must be an id (a UUID)";
			return false;
		}
		*ret = sw_arena_strndup(&req->arena, s.ptr, s.len);
		break;
	case SW_API_FIELD_INT:
		if (!json_is_integer(v) || json_integer_value(v) < f->min || json_integer_value(v) > f->max) {
			char msg[80];
			int m = snprintf(msg, sizeof(msg), "must be a whole number from %lld to %lld",
					 f->min, f->max);
			*ret_msg = sw_arena_strndup(&req->arena, msg, (size_t)m);
			if (!*ret_msg)
				*ret_msg = "must be a whole number in the allowed range";
			return false;
		}
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		*ret = sw_arena_strndup(&req->arena, num, strlen(num));
		break;
	case SW_API_FIELD_BOOL:
		if (!json_is_boolean(v)) {
			*ret_msg = "must be true or false";
			return false;
		}
		*ret = json_is_true(v) ? "t" : "f";
		return true;
	case SW_API_FIELD_CUSTOM:
		return f->parse(req, v, ret, ret_msg);
	}
	if (!*ret) {
		*ret_msg = "could not be read";
		return false;
	}
	return true;
}

bool sw_api_fields_read(struct sw_http_request *req, json_t *body, const struct sw_api_field *fields,
			size_t n, bool creating, const char **params, char *mask,
			struct sw_field_errors *fe)
{
	unsigned before = fe->count;
	const char *key;
	json_t *value;
	json_object_foreach(body, key, value) {
		bool found = false;
		for (size_t i = 0; i < n && !found; i++)
			found = strcmp(fields[i].key, key) == 0;
		if (!found)
			sw_field_error(fe, key, "is not a known field");
	}
	for (size_t i = 0; i < n; i++) {
		const struct sw_api_field *f = &fields[i];
		json_t *v = json_object_get(body, f->key);
		const char *msg = NULL;
		params[i] = creating ? f->def : NULL;
		if (mask)
			mask[i] = v ? '1' : '0';
		if (!v) {
			if (creating && (f->flags & SW_API_FIELD_REQUIRED))
				sw_field_error(fe, f->key, "is required");
			continue;
		}
		if (!creating && (f->flags & SW_API_FIELD_CREATE_ONLY)) {
			sw_field_error(fe, f->key, "cannot be changed");
			continue;
		}
		if (json_is_null(v)) {
			if (f->flags & SW_API_FIELD_NULLABLE)
				params[i] = NULL;
			else
				sw_field_error(fe, f->key, "must not be null");
			continue;
		}
		if (!sw_api_field_value(req, f, v, &params[i], &msg))
			sw_field_error(fe, f->key, msg ? msg : "is not valid");
	}
	if (mask)
		mask[n] = '\0';
	return fe->count == before;
}

/* ---- path ---- */

bool sw_api_path_ids(struct sw_http_request *req, char parent[37], char id[37])
{
	unsigned n = req->params.count;
	if (parent)
		parent[0] = '\0';
	if (id)
		id[0] = '\0';
	/* An item of a nested collection: parent, then id; an item: id; a
	 * nested collection: parent. */
	if (id && n >= 1 && !sw_api_uuid_param(req, req->params.value[n - 1], id))
		return false;
	if (parent && n >= (id ? 2u : 1u) && !sw_api_uuid_param(req, req->params.value[0], parent))
		return false;
	return true;
}

/* ---- errors ---- */

/* "A|B" in message: writes A into first (cap bytes) and returns B. NULL
 * when there is no '|'. */
static const char *split_message(const char *message, char *first, size_t cap)
{
	const char *bar = message ? strchr(message, '|') : NULL;
	if (!bar || (size_t)(bar - message) >= cap)
		return NULL;
	memcpy(first, message, (size_t)(bar - message));
	first[bar - message] = '\0';
	return bar + 1;
}

void sw_api_resource_error(struct sw_http_request *req, const struct sw_api_resource *r,
			   const struct sw_db_error *err)
{
	if (err->code != -EIO) {
		sw_api_db_error(req, err);
		return;
	}
	for (size_t i = 0; r && i < r->nerrors; i++) {
		const struct sw_api_sqlerr *e = &r->errors[i];
		if (strcmp(e->sqlstate, err->sqlstate) != 0)
			continue;
		if (e->status == 422) {
			struct sw_field_errors fe = { 0 };
			sw_field_error(&fe, e->field, e->message);
			sw_http_validation_error(req, &fe);
		} else {
			sw_http_error(req, e->status, e->code, e->message);
		}
		return;
	}
	char first[64];
	const char *rest = split_message(err->message, first, sizeof(first));
	if (strcmp(err->sqlstate, "SW404") == 0) {
		sw_api_not_found(req);
	} else if (strcmp(err->sqlstate, "SW422") == 0 && rest) {
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, first, rest);
		sw_http_validation_error(req, &fe);
	} else if (strcmp(err->sqlstate, "SW409") == 0 && rest) {
		sw_http_error(req, 409, first, rest);
	} else if (strcmp(err->sqlstate, "23505") == 0 && r && r->conflict_code) {
		sw_http_error(req, 409, r->conflict_code, r->conflict_message);
	} else if (strcmp(err->sqlstate, "23505") == 0) {
		sw_http_error(req, 409, "ALREADY_EXISTS", "An object with that name already exists.");
	} else {
		sw_api_db_error(req, err);
	}
}

/* ---- audit ---- */

bool sw_api_resource_query_audited(struct sw_http_request *req, const struct sw_api_resource *r,
				   const char *verb, const struct sw_db_stmt *stmt,
				   const char *const *params, int n, sw_db_cb cb, void *arg)
{
	char action[64];
	snprintf(action, sizeof(action), "%s.%s", r->type, verb);
	return sw_api_query_audited(req, stmt, params, n, action, r->type, NULL, NULL, cb, arg);
}

/* ---- handlers ---- */

struct op {
	struct sw_http_request *req;
	const struct sw_api_resource *r;
	const char *verb; /* audit verb; NULL: none */
	int status;
	struct sw_query_page page;
	char parent[37];
	char id[37];
};

static struct op *op_new(struct sw_http_request *req, const struct sw_api_resource *r,
			 const char *verb, int status)
{
	struct op *o = sw_api_state_new(req, sizeof(*o));
	if (o) {
		o->r = r;
		o->verb = verb;
		o->status = status;
	}
	return o;
}

static void row_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	if (err->code) {
		sw_api_resource_error(o->req, o->r, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sw_api_not_found(o->req);
		return;
	}
	if (o->status == 204)
		sw_http_respond(o->req, 204, NULL, SW_STR_NULL);
	else
		sw_api_answer_row(o->req, o->status, res, 0, sw_api_write_object, o->r->shape);
}

/* The body of a create (nfields parameters from params[3]) or an update
 * (from params[4], with the mask): the operation's state, or NULL when the
 * request has been answered. */
static struct op *read_fields(struct sw_http_request *req, const struct sw_api_resource *r,
			      bool creating, const char **params, char *mask)
{
	struct sw_field_errors fe = { 0 };
	if (SW_NEVER(r->nfields > RESOURCE_MAX_FIELDS)) {
		sw_api_internal_error(req);
		return NULL;
	}
	json_t *body = sw_http_json_body(req);
	if (!body)
		return NULL;
	struct op *o = op_new(req, r, creating ? "created" : "updated", creating ? 201 : 200);
	if (!o || !sw_api_path_ids(req, o->parent, creating ? NULL : o->id)) {
		json_decref(body);
		return NULL;
	}
	bool ok = sw_api_fields_read(req, body, r->fields, r->nfields, creating,
				     params + (creating ? 3 : 4), mask, &fe);
	json_decref(body);
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return NULL;
	}
	params[0] = req->principal.organization_id;
	return o;
}

/* The operation's statement, with its audit record in the same statement
 * when the operation has an audit verb ("<type>.<verb>", the row's id and
 * {"name": ...} when the shape has one). */
static void op_query(struct op *o, const struct sw_db_stmt *stmt, const char *const *params, int n)
{
	if (o->verb)
		sw_api_resource_query_audited(o->req, o->r, o->verb, stmt, params, n, row_done, o);
	else
		sw_api_query(o->req, stmt, params, n, row_done, o);
}

void sw_api_resource_create(struct sw_http_request *req, const struct sw_api_resource *r)
{
	const char *params[3 + RESOURCE_MAX_FIELDS];
	struct op *o = read_fields(req, r, true, params, NULL);
	if (!o)
		return;
	params[1] = o->parent[0] ? o->parent : NULL;
	params[2] = req->principal.user_id;
	op_query(o, r->create, params, 3 + (int)r->nfields);
}

void sw_api_resource_get(struct sw_http_request *req, const struct sw_api_resource *r)
{
	struct op *o = op_new(req, r, NULL, 200);
	if (!o || !sw_api_path_ids(req, o->parent, o->id))
		return;
	const char *params[3] = { req->principal.organization_id, o->id, o->parent[0] ? o->parent : NULL };
	sw_api_query(req, r->get, params, 3, row_done, o);
}

void sw_api_resource_update(struct sw_http_request *req, const struct sw_api_resource *r)
{
	const char *params[4 + RESOURCE_MAX_FIELDS];
	char mask[RESOURCE_MAX_FIELDS + 1];
	struct op *o = read_fields(req, r, false, params, mask);
	if (!o)
		return;
	params[1] = o->id;
	params[2] = o->parent[0] ? o->parent : NULL;
	params[3] = mask;
	op_query(o, r->update, params, 4 + (int)r->nfields);
}

void sw_api_resource_remove(struct sw_http_request *req, const struct sw_api_resource *r)
{
	struct op *o = op_new(req, r, "deleted", 204);
	if (!o || !sw_api_path_ids(req, o->parent, o->id))
		return;
	const char *params[3] = { req->principal.organization_id, o->id, o->parent[0] ? o->parent : NULL };
	op_query(o, r->remove, params, 3);
}

/* A list's answer. An empty page of a nested collection asks whether the
 * parent exists: an empty list of a parent that is not there is 404. */
static void parent_checked(void *arg, const PGresult *res, const struct sw_db_error *err);

static void listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	if (!err->code && PQntuples(res) == 0 && o->parent[0] && o->r->parent) {
		const char *params[2] = { o->req->principal.organization_id, o->parent };
		sw_api_query(o->req, o->r->parent, params, 2, parent_checked, o);
		return;
	}
	if (err->code) {
		sw_api_resource_error(o->req, o->r, err);
		return;
	}
	sw_api_answer_page(o->req, res, err, sw_api_write_object, o->r->shape, &o->page,
			   o->r->cursor_us_col, o->r->cursor_id_col);
}

static void parent_checked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	if (!sw_api_found(o->req, res, err))
		return;
	/* The parent exists and the page was empty. */
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(o->req, &buf, &j);
	sw_json_array_begin(&j);
	sw_json_array_end(&j);
	sw_json_key(&j, "pagination");
	sw_json_object_begin(&j);
	sw_json_key(&j, "nextCursor");
	sw_json_cstr(&j, NULL);
	sw_json_object_end(&j);
	sw_http_json_end(o->req, 200, &buf, &j);
}

static bool uuid_id(struct sw_str id)
{
	return sw_is_uuid(id);
}

void sw_api_resource_list(struct sw_http_request *req, const struct sw_api_resource *r)
{
	const char *names[4 + RESOURCE_MAX_FILTERS] = { "limit", "cursor", "order" };
	const char *values[3 + RESOURCE_MAX_FILTERS];
	const char *params[6 + RESOURCE_MAX_FILTERS];
	struct sw_field_errors fe = { 0 };
	if (SW_NEVER(r->nfilters > RESOURCE_MAX_FILTERS)) {
		sw_api_internal_error(req);
		return;
	}
	struct op *o = op_new(req, r, NULL, 200);
	if (!o || !sw_api_path_ids(req, o->parent, NULL))
		return;
	for (size_t i = 0; i < r->nfilters; i++)
		names[3 + i] = r->filters[i].key;
	names[3 + r->nfilters] = NULL;
	if (sw_query_read(&req->arena, req->query, names, values, &fe))
		sw_query_page_read(&req->arena, values[0], values[1], uuid_id, &o->page, &fe);
	const char *order = sw_query_order_read(values[2], &fe);
	for (size_t i = 0; i < r->nfilters; i++) {
		const struct sw_api_field *f = &r->filters[i];
		const char *v = values[3 + i], *msg = NULL;
		params[6 + i] = NULL;
		if (!v || !*v)
			continue;
		/* A query value is text: booleans and numbers are read from it. */
		json_t *jv = f->kind == SW_API_FIELD_BOOL
				     ? (strcmp(v, "true") == 0 ? json_true()
					: strcmp(v, "false") == 0 ? json_false() : json_string(v))
				     : json_string(v);
		if (!jv || !sw_api_field_value(req, f, jv, &params[6 + i], &msg))
			sw_field_error(&fe, f->key, msg ? msg : "is not valid");
		json_decref(jv);
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	params[0] = req->principal.organization_id;
	params[1] = o->parent[0] ? o->parent : NULL;
	params[2] = o->page.limit_plus_one;
	params[3] = o->page.after_us;
	params[4] = o->page.after_id;
	params[5] = order;
	sw_api_query(req, r->list, params, 6 + (int)r->nfilters, listed, o);
}

/* ---- jobs ---- */

static const struct sw_api_column job_columns[] = {
	{ "id", 0, SW_API_COL_TEXT },
	{ "queue", 1, SW_API_COL_TEXT },
	{ "kind", 2, SW_API_COL_TEXT },
	{ "status", 3, SW_API_COL_TEXT },
	{ "targetType", 4, SW_API_COL_TEXT },
	{ "targetId", 5, SW_API_COL_TEXT },
	{ "createdAt", 6, SW_API_COL_TEXT },
	{ "attempts", 7, SW_API_COL_JSON },
	{ "startedAt", 8, SW_API_COL_NULLABLE },
	{ "finishedAt", 9, SW_API_COL_NULLABLE },
	{ "errorMessage", 10, SW_API_COL_NULLABLE },
};
static const struct sw_api_object job_object = { job_columns, SW_ARRAY_SIZE(job_columns), 0 };

int sw_api_job_location(struct sw_http_request *req, const char *job_id)
{
	/* Where the client polls the job (GET /jobs/:id). */
	char location[sizeof("/jobs/") + 36];
	snprintf(location, sizeof(location), "/jobs/%s", job_id);
	if (sw_http_add_header(req, "Location", sw_str_cstr(location)) < 0) {
		sw_api_internal_error(req);
		return -1;
	}
	return 0;
}

void sw_api_job_answered(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code) {
		sw_api_resource_error(req, NULL, err);
		return;
	}
	if (!sw_api_found(req, res, err))
		return;
	int status = req->method == SW_HTTP_GET ? 200 : 202;
	if (status == 202 && sw_api_job_location(req, PQgetvalue(res, 0, 0)) < 0)
		return;
	sw_api_answer_row(req, status, res, 0, sw_api_write_object, &job_object);
}

void sw_api_job_enqueue(struct sw_http_request *req, const struct sw_db_stmt *stmt,
			const char *queue, const char *kind)
{
	struct op *o = op_new(req, NULL, NULL, 202);
	if (!o || !sw_api_path_ids(req, NULL, o->id))
		return;
	const char *params[5] = { req->principal.organization_id, o->id, queue, kind,
				  req->principal.user_id };
	/* Recorded as the job's kind about its target (the statement's audit
	 * shape: SW_SQL_JOB_AUDITED). */
	sw_api_query_audited(req, stmt, params, 5, NULL, NULL, NULL, NULL, sw_api_job_answered, req);
}
