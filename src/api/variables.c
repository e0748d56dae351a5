/* Environment variables of an application: set one, set and unset many at
 * once, unset one; read back as keys and value lengths only.
 *
 * Decisions (also in the OpenAPI document):
 * - Routes as a Heroku or Render user expects them: the collection
 *   GET /applications/:id/variables (every variable, by key: at most
 *   SW_ENV_MAX_VARIABLES, so one answer and no pages), PATCH on it for a
 *   bulk change ({"set": {KEY: value}, "unset": [KEY]}, one transaction),
 *   and per key GET, PUT (set: 201 when new, 200 when replaced) and DELETE
 *   (204; a repeat 404).
 * - No response ever carries a value: a variable is {key, valueLength
 *   (bytes of UTF-8), masked, createdAt, updatedAt}; masked is false for a
 *   value too short for logs to hide (SW_VARIABLE_SCRUB_MIN_LEN). The spec's disclosure rule 1;
 *   values leave the database only for a deployment (next issue).
 * - Keys: [A-Za-z_][A-Za-z0-9_]*, at most 128 bytes, case kept (FOO and foo
 *   are two variables). Values: valid UTF-8 without NUL, at most 32 KiB.
 *   At most SW_ENV_MAX_VARIABLES per application (409
 *   VARIABLE_LIMIT_REACHED). Bodies up to SW_RESOURCE_BODY_MAX.
 * - A value is sealed (AES-256-GCM, seal.h) bound to
 *   "variable:<application id>:<KEY>" before any SQL sees it; its
 *   plaintext is wiped from the request body and the parsed JSON once
 *   sealed. Audit records name keys, never values. */
#include <stdio.h>
#include <stdlib.h>
#include "steward/base/validate.h"
#include "steward/base/seal.h"
#include "api/app_config.h"
#include "steward/db/statements_variables.h"

static const struct sw_api_column variable_columns[] = {
	{ "key", SW_DB_VARIABLE_KEY, SW_API_COL_TEXT },
	{ "valueLength", SW_DB_VARIABLE_VALUE_LENGTH, SW_API_COL_JSON },
	{ "createdAt", SW_DB_VARIABLE_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_VARIABLE_UPDATED_AT, SW_API_COL_TEXT },
};

/* A variable: its columns, and whether deployments' logs mask its value
 * (SW_VARIABLE_SCRUB_MIN_LEN bytes or more). */
static void variable_write(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	(void)ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, variable_columns, SW_ARRAY_SIZE(variable_columns));
	sw_json_key(j, "masked");
	sw_json_bool(j, strtoll(PQgetvalue(res, row, SW_DB_VARIABLE_VALUE_LENGTH), NULL, 10) >=
				SW_VARIABLE_SCRUB_MIN_LEN);
	sw_json_object_end(j);
}

/* The application of the path (its first parameter), a UUID; false when
 * answered 404. */
static bool application_param(struct sw_http_request *req, char app[37])
{
	return sw_api_uuid_param(req, req->params.value[0], app);
}

/* The key of the path (its second parameter) as a NUL-terminated copy in
 * the arena, or NULL when it is not a valid key (*ret_msg says why). */
static const char *key_param(struct sw_http_request *req, const char **ret_msg)
{
	struct sw_str k = req->params.value[1];
	if (!sw_valid_env_key(k, ret_msg))
		return NULL;
	return sw_arena_strndup(&req->arena, k.ptr, k.len);
}

/* Answers 200 with every variable of a variables_list or variables_apply
 * result (rows of NULLs skipped), or the failure. */
static void answer_list(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err)
{
	if (err->code) {
		sw_api_resource_error(req, NULL, err);
		return;
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_array_begin(&j);
	for (int i = 0; i < PQntuples(res); i++)
		if (!PQgetisnull(res, i, SW_DB_VARIABLE_KEY))
			variable_write(&j, res, i, NULL);
	sw_json_array_end(&j);
	sw_http_json_end(req, 200, &buf, &j);
}

/* ---- GET /applications/:id/variables ---- */

static void listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!err->code && PQntuples(res) == 0) {
		sw_api_not_found(req);
		return;
	}
	answer_list(req, res, err);
}

static void variables_list(struct sw_http_request *req)
{
	char app[37];
	if (!application_param(req, app))
		return;
	const char *params[2] = { req->principal.organization_id, app };
	sw_api_query(req, &sw_db_stmt_variables_list, params, 2, listed, req);
}

/* ---- GET /applications/:id/variables/:key ---- */

struct one {
	struct sw_http_request *req;
	char app[37];
	const char *key;
};

/* The state of a route on one key, path checked: NULL when answered
 * (404 for an application id that is no UUID or a key that is no key). */
static struct one *one_new(struct sw_http_request *req)
{
	const char *msg;
	struct one *o = sw_api_state_new(req, sizeof(*o));
	if (!o || !application_param(req, o->app))
		return NULL;
	o->key = key_param(req, &msg);
	if (!o->key) {
		sw_api_not_found(req);
		return NULL;
	}
	return o;
}

/* Runs stmt (organization, application, key) on the path's key; cb gets
 * the struct one. */
static void one_query(struct sw_http_request *req, const struct sw_db_stmt *stmt,
		      const char *action, sw_db_cb cb)
{
	struct one *o = one_new(req);
	if (!o)
		return;
	const char *params[3] = { req->principal.organization_id, o->app, o->key };
	if (action) /* the record is the statement's: {"key": ...} of the application */
		sw_api_query_audited(req, stmt, params, 3, action, "application", o->app, NULL, cb, o);
	else
		sw_api_query(req, stmt, params, 3, cb, o);
}

static void got(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct one *o = arg;
	if (sw_api_found(o->req, res, err))
		sw_api_answer_row(o->req, 200, res, 0, variable_write, NULL);
}

static void variable_get(struct sw_http_request *req)
{
	one_query(req, &sw_db_stmt_variable_get, NULL, got);
}

/* ---- writing: PUT and PATCH ---- */

/* Seals value (a string member of the body) for key of app and appends
 * {"key", "sealed", "length"} to set; wipes the value where it lies. false
 * when answered (500). */
static bool seal_into(struct sw_http_request *req, const char *app, const char *key, json_t *value,
		      json_t *set)
{
	struct sw_str v = sw_str_from(json_string_value(value), json_string_length(value));
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_variable(aad, app, key);
	const char *sealed = sw_api_seal(req, v.ptr, v.len, aad);
	sw_api_wipe_view(v);
	if (!sealed)
		return false;
	if (json_array_append_new(set, json_pack("{s:s, s:s, s:I}", "key", key, "sealed", sealed,
						 "length", (json_int_t)v.len)) < 0) {
		sw_api_internal_error(req);
		return false;
	}
	return true;
}

/* Checks a value member; a field error under field when it is not one. */
static bool value_ok(json_t *v, const char *field, struct sw_field_errors *fe)
{
	const char *msg = NULL;
	if (!json_is_string(v))
		msg = "must be a string";
	else if (!sw_valid_env_value(sw_str_from(json_string_value(v), json_string_length(v)), &msg))
		msg = msg ? msg : "is not a valid value";
	if (msg)
		sw_field_error(fe, field, msg);
	return !msg;
}

struct write {
	struct sw_http_request *req;
	char app[37];
	const char *key;     /* PUT: the key set */
	json_t *audit;       /* PATCH: {"set": [keys], "unset": [keys]} */
};

/* Runs variables_apply with set and unset (owned, released here), and the
 * audit record action with metadata audit (borrowed) in the same
 * statement. false when answered instead (cb never runs). */
static bool apply(struct sw_http_request *req, const char *app, json_t *set, json_t *unset,
		  const char *action, json_t *audit, sw_db_cb cb, void *arg)
{
	char *m = json_dumps(audit, JSON_COMPACT);
	char *s = set ? json_dumps(set, JSON_COMPACT) : NULL;
	char *u = unset ? json_dumps(unset, JSON_COMPACT) : NULL;
	bool queued = false;
	json_decref(set);
	json_decref(unset);
	if (!s || !u || !m) {
		sw_api_internal_error(req);
	} else {
		const char *params[4] = { req->principal.organization_id, app, s, u };
		queued = sw_api_query_audited(req, &sw_db_stmt_variables_apply, params, 4, action,
					      "application", app, m, cb, arg);
	}
	free(s);
	free(u);
	free(m);
	return queued;
}

static void put_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct write *w = arg;
	struct sw_http_request *req = w->req;
	if (err->code) {
		sw_api_resource_error(req, NULL, err);
		return;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		if (strcmp(PQgetvalue(res, i, SW_DB_VARIABLE_KEY), w->key) != 0)
			continue;
		bool created = PQgetvalue(res, i, SW_DB_VARIABLE_CREATED)[0] == 't';
		sw_api_answer_row(req, created ? 201 : 200, res, i, variable_write, NULL);
		return;
	}
	sw_api_internal_error(req);
}

static void variable_put(struct sw_http_request *req)
{
	static const char *const known[] = { "value", NULL };
	struct sw_field_errors fe = { 0 };
	const char *msg = "is required";
	json_t *body = sw_api_body(req, known, true, &fe);
	if (!body)
		return;
	json_t *v = json_object_get(body, "value");
	struct write *w = sw_api_state_new(req, sizeof(*w));
	if (!w || !application_param(req, w->app))
		goto out;
	w->key = key_param(req, &msg);
	if (!w->key)
		sw_field_error(&fe, "key", msg);
	if (!v)
		sw_field_error(&fe, "value", "is required");
	else
		value_ok(v, "value", &fe);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		goto out;
	}
	json_t *set = json_array();
	if (!set) {
		sw_api_internal_error(req);
		goto out;
	}
	if (!seal_into(req, w->app, w->key, v, set)) {
		json_decref(set);
		goto out;
	}
	json_t *audit = json_pack("{s:s}", "key", w->key);
	apply(req, w->app, set, json_array(), "variable.set", audit, put_done, w);
	json_decref(audit);
out:
	if (json_is_string(v))
		sw_api_wipe_view(sw_str_from(json_string_value(v), json_string_length(v)));
	json_decref(body);
	sw_buf_release(&fe.buf);
}

static void patch_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct write *w = arg;
	struct sw_http_request *req = w->req;
	json_decref(w->audit);
	w->audit = NULL;
	answer_list(req, res, err);
}

/* Reads "set" into sealed entries and "unset" into keys; field errors
 * into fe. false when answered (500). */
static bool read_bulk(struct sw_http_request *req, const char *app, json_t *body, json_t *set,
		      json_t *unset, json_t *audit, struct sw_field_errors *fe)
{
	json_t *s = json_object_get(body, "set"), *u = json_object_get(body, "unset");
	json_t *set_keys = json_object_get(audit, "set"), *unset_keys = json_object_get(audit, "unset");
	const char *msg, *key;
	json_t *v;
	size_t i;
	if (!s && !u)
		sw_field_error(fe, "set", "set or unset (or both) must be given");
	if (s && !json_is_object(s))
		sw_field_error(fe, "set", "must be an object of KEY: value");
	if (u && !json_is_array(u))
		sw_field_error(fe, "unset", "must be an array of keys");
	if (u && json_is_array(u))
		json_array_foreach(u, i, v) {
			if (!json_is_string(v) ||
			    !sw_valid_env_key(sw_str_from(json_string_value(v), json_string_length(v)), &msg)) {
				sw_field_error(fe, "unset", "must hold only valid keys (letters, digits and "
							    "underscores, not starting with a digit, at "
							    "most 128 bytes)");
				break;
			}
			if (s && json_is_object(s) && json_object_get(s, json_string_value(v))) {
				sw_field_error(fe, "unset", "names a key that set also sets");
				break;
			}
			json_array_append(unset, v);
			json_array_append(unset_keys, v);
		}
	bool bad_key = false;
	if (s && json_is_object(s))
		json_object_foreach(s, key, v) {
			if (!sw_valid_env_key(sw_str_cstr(key), &msg)) {
				bad_key = true;
				continue;
			}
			/* The field error keeps a pointer to its name: in the arena. */
			size_t n = sizeof("set.") + strlen(key);
			char *field = sw_arena_alloc(&req->arena, n);
			if (!field) {
				sw_api_internal_error(req);
				return false;
			}
			snprintf(field, n, "set.%s", key);
			value_ok(v, field, fe);
		}
	if (bad_key)
		sw_field_error(fe, "set", "has a key that is not a valid key (letters, digits and "
					  "underscores, not starting with a digit, at most 128 bytes)");
	if (fe->count || !s || !json_is_object(s))
		return true;
	json_object_foreach(s, key, v) {
		if (!seal_into(req, app, key, v, set))
			return false;
		json_array_append_new(set_keys, json_string(key));
	}
	return true;
}

/* Wipes every string value of the "set" member where it lies. */
static void wipe_set(json_t *body)
{
	json_t *s = json_object_get(body, "set"), *v;
	const char *key;
	if (json_is_object(s))
		json_object_foreach(s, key, v)
			if (json_is_string(v))
				sw_api_wipe_view(sw_str_from(json_string_value(v), json_string_length(v)));
}

static void variables_patch(struct sw_http_request *req)
{
	static const char *const known[] = { "set", "unset", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, true, &fe);
	if (!body)
		return;
	json_t *set = json_array(), *unset = json_array();
	struct write *w = sw_api_state_new(req, sizeof(*w));
	if (!w || !application_param(req, w->app))
		goto out;
	w->audit = json_pack("{s:[], s:[]}", "set", "unset");
	if (!set || !unset || !w->audit) {
		sw_api_internal_error(req);
		goto out;
	}
	if (!read_bulk(req, w->app, body, set, unset, w->audit, &fe))
		goto out;
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		goto out;
	}
	if (apply(req, w->app, set, unset, "variables.updated", w->audit, patch_done, w))
		w = NULL; /* patch_done releases the audit */
	set = unset = NULL;
out:
	if (w) {
		json_decref(w->audit);
		w->audit = NULL;
	}
	wipe_set(body);
	json_decref(set);
	json_decref(unset);
	json_decref(body);
	sw_buf_release(&fe.buf);
}

/* ---- DELETE /applications/:id/variables/:key ---- */

static void removed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct one *o = arg;
	if (!sw_api_found(o->req, res, err))
		return;
	sw_http_respond(o->req, 204, NULL, SW_STR_NULL);
}

static void variable_remove(struct sw_http_request *req)
{
	one_query(req, &sw_db_stmt_variable_remove, "variable.unset", removed);
}

/* ---- routes and schemas ---- */

static const int err_list[] = { 404, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_put[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };

#define NO_VALUES " Values are never returned: only keys, valueLength (bytes) and masked " \
	"(false for a value shorter than 4 bytes, which deployment logs do not hide)."
#define NOT_FOUND_DOC " An application of another organization is not found (404)."
#define BODY SW_RESOURCE_BODY_MAX

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/applications/:id/variables", SW_ACCESS_SESSION, variables_list, 0, 0,
	  { "List an application's environment variables",
	    "Every variable, sorted by key (byte order); at most 500, so the list is one answer "
	    "without pages." NO_VALUES NOT_FOUND_DOC,
	    "Variables", NULL, "VariableList", 200, err_list } },
	{ SW_HTTP_PATCH, "/applications/:id/variables", SW_ACCESS_SESSION, variables_patch, BODY, 0,
	  { "Set and unset many variables at once",
	    "`set` maps keys to new values (created or replaced), `unset` lists keys to remove (a "
	    "key that is not set is no error); at least one of the two; a key may not be in both. "
	    "All in one transaction: every change is made or none. Answers every variable "
	    "afterwards, as GET does. Keys: letters, digits and underscores, not starting with a "
	    "digit, at most 128 bytes, case kept. Values: UTF-8 strings without NUL, at most "
	    "32 KiB. At most 500 variables per application (409 VARIABLE_LIMIT_REACHED). Body up "
	    "to 256 KiB. Values are sealed with AES-256-GCM before they are stored." NO_VALUES
	    NOT_FOUND_DOC,
	    "Variables", "VariablesPatch", "VariableList", 200, err_put } },
	{ SW_HTTP_GET, "/applications/:id/variables/:key", SW_ACCESS_SESSION, variable_get, 0, 0,
	  { "Get one variable's key and value length", "404 when the key is not set." NO_VALUES
	    NOT_FOUND_DOC, "Variables", NULL, "Variable", 200, err_get } },
	{ SW_HTTP_PUT, "/applications/:id/variables/:key", SW_ACCESS_SESSION, variable_put, BODY, 0,
	  { "Set one variable",
	    "201 when the key was not set; 200 (same body) when its value was replaced. The key (in "
	    "the path) and value follow the rules of PATCH /applications/{id}/variables; an invalid key is "
	    "422 on `key`. At most 500 variables per application (409 VARIABLE_LIMIT_REACHED)."
	    NO_VALUES NOT_FOUND_DOC,
	    "Variables", "VariableSet", "Variable", 201, err_put, NULL, 200 } },
	{ SW_HTTP_DELETE, "/applications/:id/variables/:key", SW_ACCESS_SESSION, variable_remove, 0, 0,
	  { "Unset one variable", "204; a repeat (or a key never set) answers 404." NOT_FOUND_DOC,
	    "Variables", NULL, NULL, 204, err_delete } },
};

#define KEY_PATTERN "^[A-Za-z_][A-Za-z0-9_]{0,127}$"
#define VALUE_SCHEMA "{\"type\":\"string\",\"maxLength\":32768,\"writeOnly\":true," \
	"\"description\":\"UTF-8 without NUL, at most 32 KiB (bytes).\"}"

static const char schemas[] = "{"
	"\"Variable\":{\"type\":\"object\",\"required\":[\"key\",\"valueLength\",\"masked\",\"createdAt\",\"updatedAt\"],"
	"\"properties\":{\"key\":{\"type\":\"string\",\"pattern\":\"" KEY_PATTERN "\"},"
	"\"valueLength\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":32768,"
	"\"description\":\"Bytes of the value (UTF-8); the value itself is never returned.\"},"
	"\"masked\":{\"type\":\"boolean\",\"description\":\"Whether deployment logs and error "
	"messages replace this value with ***: false for a value shorter than 4 bytes "
	"(SW_VARIABLE_SCRUB_MIN_LEN), whose every occurrence would otherwise be hidden; keep "
	"secrets longer.\"},"
	"\"createdAt\":{\"type\":\"string\",\"format\":\"date-time\"},"
	"\"updatedAt\":{\"type\":\"string\",\"format\":\"date-time\"}}},"
	"\"VariableList\":{\"type\":\"array\",\"maxItems\":500,"
	"\"items\":{\"$ref\":\"#/components/schemas/Variable\"}},"
	"\"VariableSet\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"value\"],"
	"\"properties\":{\"value\":" VALUE_SCHEMA "}},"
	"\"VariablesPatch\":{\"type\":\"object\",\"additionalProperties\":false,\"minProperties\":1,"
	"\"properties\":{\"set\":{\"type\":\"object\",\"propertyNames\":{\"pattern\":\"" KEY_PATTERN "\"},"
	"\"additionalProperties\":" VALUE_SCHEMA "},"
	"\"unset\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"" KEY_PATTERN "\"}}}}"
	"}";

const struct sw_api_route_group sw_api_variables_group = { routes, SW_ARRAY_SIZE(routes), schemas };
