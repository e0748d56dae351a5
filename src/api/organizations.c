/* The caller's organization, and what its resources share: the scope of
 * /organizations/:id (organization_scope.h). Members and users are in
 * members.c, invitations in invitations.c, the audit log in audit_logs.c.
 *
 * Everything here is scoped to the caller's organization (the one of the
 * session or token): /organizations/:id with another organization's id is
 * 404, exactly as an id that does not exist, and GET /users lists only the
 * caller's organization. Only the audit log, an operator's route, spans the
 * installation.
 *
 * Pagination (the convention of every paginated list of these files):
 * ?limit= (1..200, default 50) and ?cursor= (opaque, from the previous
 * page); the body is {"data": [...], "pagination": {"nextCursor": "..." |
 * null}}. Unknown or repeated query parameters are 422. */
#include <stdio.h>
#include "steward/auth/auth.h"
#include "api/organization_scope.h"
#include "steward/db/statements_organizations.h"

bool sw_api_own_organization(struct sw_http_request *req)
{
	struct sw_str id = req->params.value[0];
	if (!sw_is_uuid(id) || !sw_str_case_eq(id, sw_str_cstr(req->principal.organization_id))) {
		sw_api_not_found(req);
		return false;
	}
	return true;
}


static bool valid_role(struct sw_str s)
{
	return sw_str_eq(s, SW_STR("OWNER")) || sw_str_eq(s, SW_STR("ADMIN")) ||
	       sw_str_eq(s, SW_STR("MEMBER"));
}

void sw_api_role_field(json_t *body, char out[8], struct sw_field_errors *fe)
{
	struct sw_str role;
	if (sw_api_string_field(body, "role", &role, fe, true)) {
		if (valid_role(role))
			snprintf(out, 8, "%.*s", (int)role.len, role.ptr);
		else
			sw_field_error(fe, "role", "must be OWNER, ADMIN or MEMBER");
	}
}

struct sw_api_org_target *sw_api_org_target(struct sw_http_request *req)
{
	struct sw_api_org_target *t = sw_api_state_new(req, sizeof(*t));
	return t && sw_api_own_organization(req) && sw_api_uuid_param(req, req->params.value[1], t->id) ? t : NULL;
}

/* ---- organizations ---- */

static const struct sw_api_column organization_columns[] = {
	{ "id", 0, SW_API_COL_TEXT },
	{ "name", 1, SW_API_COL_TEXT },
	{ "createdAt", 2, SW_API_COL_TEXT },
	{ "updatedAt", 3, SW_API_COL_TEXT },
};
static const struct sw_api_object organization_object = {
	organization_columns, SW_ARRAY_SIZE(organization_columns), 0
};

static void organization_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_found(req, res, err))
		return;
	if (req->method == SW_HTTP_PATCH) {
		sw_auth_cache_forget_organization(PQgetvalue(res, 0, 0)); /* others: org:<id> */
	}
	sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &organization_object);
}

static void organization_get(struct sw_http_request *req)
{
	if (!sw_api_own_organization(req))
		return;
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_organization_get, params, 1, organization_done, req);
}

static void organization_rename(struct sw_http_request *req)
{
	if (!sw_api_own_organization(req))
		return;
	static const char *const known[] = { "name", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	struct sw_str name;
	sw_api_name_field(body, "name", true, &name, &fe);
	char *copy = fe.count ? NULL : sw_arena_strndup(&req->arena, name.ptr, name.len);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!copy) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[2] = { req->principal.organization_id, copy };
	sw_api_query_audited(req, &sw_db_stmt_organization_rename, params, 2, "organization.renamed",
			     "organization", NULL, NULL, organization_done, req);
}

/* ---- routes and schemas ---- */

static const int err_org_read[] = { 404, 503, 0 };
static const int err_org_write[] = { 400, 404, 413, 415, 422, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/organizations/:id", SW_ACCESS_SESSION, organization_get, 0, 0,
	  { "The caller's organization", "Any member." SW_API_ORG_SCOPED_DOC,
	    "Organizations", NULL, "Organization", 200, err_org_read } },
	{ SW_HTTP_PATCH, "/organizations/:id", SW_ACCESS_OWNER, organization_rename, 4096, 0,
	  { "Rename the organization", "OWNER only. Audited as organization.renamed." SW_API_ORG_SCOPED_DOC,
	    "Organizations", "OrganizationRenameRequest", "Organization", 200, err_org_write } },
};

static const char schemas[] = "{"
	"\"Organization\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"createdAt\",\"updatedAt\"],"
	"\"properties\":{\"id\":" SW_API_ORG_UUID_T ",\"name\":{\"type\":\"string\"},\"createdAt\":" SW_API_ORG_TS_T ","
	"\"updatedAt\":" SW_API_ORG_TS_T "}},"
	"\"OrganizationRenameRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\"],\"properties\":{\"name\":" SW_API_ORG_NAME_T "}}"
	"}";

const struct sw_api_route_group sw_api_organizations_group = { routes, SW_ARRAY_SIZE(routes), schemas };
