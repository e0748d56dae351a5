/* GET /audit-logs: the audit log of the installation, an operator's route
 * (the only one of the organization's files that spans organizations). */
#include <stdio.h>
#include "steward/base/timeparse.h"
#include "api/organization_scope.h"
#include "steward/db/statements_organizations.h"

#define AUDIT_ACTION_MAX 100

struct audit_page {
	struct sw_http_request *req;
	struct sw_query_page page;
};

static const struct sw_api_column audit_columns[] = {
	{ "id", SW_DB_AUDIT_ID, SW_API_COL_TEXT },
	{ "organizationId", SW_DB_AUDIT_ORGANIZATION_ID, SW_API_COL_NULLABLE },
	{ "actorUserId", SW_DB_AUDIT_ACTOR_USER_ID, SW_API_COL_NULLABLE },
	{ "action", SW_DB_AUDIT_ACTION, SW_API_COL_TEXT },
	{ "targetType", SW_DB_AUDIT_TARGET_TYPE, SW_API_COL_NULLABLE },
	{ "targetId", SW_DB_AUDIT_TARGET_ID, SW_API_COL_NULLABLE },
	{ "ip", SW_DB_AUDIT_IP, SW_API_COL_NULLABLE },
	{ "metadata", SW_DB_AUDIT_METADATA, SW_API_COL_JSON },
	{ "createdAt", SW_DB_AUDIT_CREATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object audit_object = { audit_columns, SW_ARRAY_SIZE(audit_columns), 0 };

static void audit_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct audit_page *ap = arg;
	sw_api_answer_page(ap->req, res, err, sw_api_write_object, &audit_object, &ap->page,
			   SW_DB_AUDIT_CURSOR_US, SW_DB_AUDIT_ID);
}

static bool valid_action(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > AUDIT_ACTION_MAX || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		bool word = (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_';
		if (!word && !(s[i] == '.' && s[i + 1] != '.'))
			return false;
	}
	return true;
}

/* A since/until filter as microseconds (SQL text in the arena), or a field
 * error. */
static const char *time_filter(struct sw_http_request *req, const char *field, const char *v,
			       int64_t *ret_us, struct sw_field_errors *fe)
{
	if (!v)
		return NULL;
	if (sw_rfc3339_parse_us(sw_str_cstr(v), ret_us) < 0) {
		sw_field_error(fe, field, "must be an RFC 3339 date-time such as 2026-11-21T16:22:35.123Z");
		return NULL;
	}
	char *s = sw_arena_alloc(&req->arena, 24);
	if (!s) {
		sw_field_error(fe, field, "could not be read (out of memory)");
		return NULL;
	}
	snprintf(s, 24, "%lld", (long long)*ret_us);
	return s;
}

static void audit_logs(struct sw_http_request *req)
{
	static const char *const names[] = { "action", "actorUserId", "organizationId", "since",
					     "until", "limit", "cursor", "order", NULL };
	enum { ACTION, ACTOR, ORG, SINCE, UNTIL, LIMIT, CURSOR, ORDER };
	const char *v[8];
	const char *order = NULL;
	struct sw_field_errors fe = { 0 };
	struct audit_page *ap = sw_api_state_new(req, sizeof(*ap));
	if (!ap)
		return;
	const char *since = NULL, *until = NULL;
	if (sw_query_read(&req->arena, req->query, names, v, &fe)) {
		if (v[ACTION] && !valid_action(v[ACTION]))
			sw_field_error(&fe, "action", "must be an action such as auth.session.revoked, or its start such as auth.session");
		if (v[ACTOR] && !sw_is_uuid(sw_str_cstr(v[ACTOR])))
			sw_field_error(&fe, "actorUserId", "must be a UUID");
		if (v[ORG] && !sw_is_uuid(sw_str_cstr(v[ORG])))
			sw_field_error(&fe, "organizationId", "must be a UUID");
		int64_t since_us = 0, until_us = 0;
		since = time_filter(req, "since", v[SINCE], &since_us, &fe);
		until = time_filter(req, "until", v[UNTIL], &until_us, &fe);
		if (since && until && until_us <= since_us)
			sw_field_error(&fe, "until", "must be later than since");
		sw_query_page_read(&req->arena, v[LIMIT], v[CURSOR], sw_query_is_number, &ap->page, &fe);
		order = sw_query_order_read(v[ORDER], &fe);
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[9] = { v[ACTION], v[ACTOR], v[ORG], since, until, ap->page.after_us,
				  ap->page.after_id, ap->page.limit_plus_one, order };
	sw_api_query(req, &sw_db_stmt_audit_page, params, 9, audit_listed, ap);
}

/* ---- routes and schemas ---- */

static const int err_audit[] = { 422, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/audit-logs", SW_ACCESS_OPERATOR, audit_logs, 0, 0,
	  { "The audit log of the installation",
	    "Operators only (403 for everyone else). Newest first (?order=asc: oldest). Filters: `action` (an action, or "
	    "its leading words: `auth.session` matches `auth.session.revoked`), `actorUserId`, "
	    "`organizationId`, `since` (inclusive) and `until` (exclusive) as RFC 3339 date-times. "
	    "Records say who (actorUserId), what (action, target, metadata), when, and from which "
	    "address (ip); never a secret." SW_API_ORG_PAGINATION_DOC,
	    "Audit", NULL, "AuditLogList", 200, err_audit,
	    "limit cursor order action actorUserId organizationId since until" } },
};

static const char schemas[] = "{"
	"\"AuditLogList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"organizationId\",\"actorUserId\",\"action\",\"targetType\",\"targetId\","
	"\"ip\",\"metadata\",\"createdAt\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9]+$\"},"
	"\"organizationId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"actorUserId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"action\":{\"type\":\"string\",\"examples\":[\"api_token.revoked\"]},"
	"\"targetType\":{\"type\":[\"string\",\"null\"]},\"targetId\":{\"type\":[\"string\",\"null\"]},"
	"\"ip\":{\"type\":[\"string\",\"null\"]},\"metadata\":{\"type\":\"object\"},"
	"\"createdAt\":" SW_API_ORG_TS_T "}}}"
	"}";

const struct sw_api_route_group sw_api_audit_logs_group = { routes, SW_ARRAY_SIZE(routes), schemas };
