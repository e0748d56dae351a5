/* Members of the caller's organization, its users (GET /users), and a
 * member's sessions.
 *
 * Decisions (also in the OpenAPI document):
 * - An organization never loses its last OWNER: demoting or removing the
 *   last one is 409 LAST_OWNER. Changes of one organization's memberships
 *   are serialised in the database (the functions of 0006_organizations.sql
 *   lock the organization's row).
 * - A role change takes effect on the member's next request; removing a
 *   member also revokes the member's sessions and API tokens of this
 *   organization. Both notify "user:<id>" and forget it here at once.
 * - GET /users/:id/sessions: one's own (every organization, as GET
 *   /auth/sessions), or, for an OWNER or ADMIN, another member's sessions in
 *   this organization; a member lacking the role gets 403, an id outside the
 *   organization 404. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "steward/auth/auth.h"
#include "api/organization_scope.h"
#include "steward/db/statements_organizations.h"

/* A member ({userId, ..., joinedAt}), and the same row as a user of GET
 * /users ({id, ..., createdAt}), in enum sw_db_member_col order. */
static const struct sw_api_column member_columns[] = {
	{ "userId", SW_DB_MEMBER_USER_ID, SW_API_COL_TEXT },
	{ "email", SW_DB_MEMBER_EMAIL, SW_API_COL_TEXT },
	{ "name", SW_DB_MEMBER_NAME, SW_API_COL_TEXT },
	{ "role", SW_DB_MEMBER_ROLE, SW_API_COL_TEXT },
	{ "joinedAt", SW_DB_MEMBER_JOINED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_column user_columns[] = {
	{ "id", SW_DB_MEMBER_USER_ID, SW_API_COL_TEXT },
	{ "email", SW_DB_MEMBER_EMAIL, SW_API_COL_TEXT },
	{ "name", SW_DB_MEMBER_NAME, SW_API_COL_TEXT },
	{ "role", SW_DB_MEMBER_ROLE, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_MEMBER_USER_CREATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object member_object = { member_columns, SW_ARRAY_SIZE(member_columns), 0 };
static const struct sw_api_object user_object = { user_columns, SW_ARRAY_SIZE(user_columns), 0 };
/* member_set_role's row: the role before, then a member. */
static const struct sw_api_object changed_member_object = {
	member_columns, SW_ARRAY_SIZE(member_columns), 1
};

struct members {
	struct sw_http_request *req;
	struct sw_query_page page;
	const struct sw_api_object *shape;
};

static void members_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct members *m = arg;
	sw_api_answer_page(m->req, res, err, sw_api_write_object, m->shape, &m->page,
			   SW_DB_MEMBER_CURSOR_US, SW_DB_MEMBER_USER_ID);
}

static bool uuid_id(struct sw_str id)
{
	return sw_is_uuid(id);
}

static void members_page(struct sw_http_request *req, const struct sw_api_object *shape)
{
	static const char *const names[] = { "limit", "cursor", "order", NULL };
	const char *values[3];
	struct sw_field_errors fe = { 0 };
	struct members *m = sw_api_state_new(req, sizeof(*m));
	if (!m)
		return;
	m->shape = shape;
	const char *order = NULL;
	if (sw_query_read(&req->arena, req->query, names, values, &fe)) {
		sw_query_page_read(&req->arena, values[0], values[1], uuid_id, &m->page, &fe);
		order = sw_query_order_read(values[2], &fe);
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[5] = { req->principal.organization_id, m->page.after_us, m->page.after_id,
				  m->page.limit_plus_one, order };
	sw_api_query(req, &sw_db_stmt_members_page, params, 5, members_done, m);
}

static void members_list(struct sw_http_request *req)
{
	if (sw_api_own_organization(req))
		members_page(req, &member_object);
}

static void users_list(struct sw_http_request *req)
{
	members_page(req, &user_object);
}

/* A membership change answered: false when it failed (409 LAST_OWNER for
 * the last-owner rule) or found no member (404). */
static bool membership_changed(struct sw_http_request *req, const PGresult *res,
			       const struct sw_db_error *err)
{
	if (err->code == -EIO && strcmp(err->sqlstate, SW_DB_SQLSTATE_LAST_OWNER) == 0) {
		sw_http_error(req, 409, "LAST_OWNER",
			      "The organization must keep at least one OWNER; make another member OWNER first.");
		return false;
	}
	return sw_api_found(req, res, err);
}

static void role_changed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!membership_changed(req, res, err))
		return;
	const char *before = PQgetvalue(res, 0, 0), *after = PQgetvalue(res, 0, 1 + SW_DB_MEMBER_ROLE);
	if (strcmp(before, after) != 0) {
		const char *user = PQgetvalue(res, 0, 1 + SW_DB_MEMBER_USER_ID);
		sw_auth_cache_forget_user(user);
	}
	sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &changed_member_object);
}

static void member_set_role(struct sw_http_request *req)
{
	char user[37];
	if (!sw_api_own_organization(req) || !sw_api_uuid_param(req, req->params.value[1], user))
		return;
	static const char *const known[] = { "role", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	char role[8] = "";
	sw_api_role_field(body, role, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[3] = { req->principal.organization_id, user, role };
	sw_api_query_audited(req, &sw_db_stmt_member_set_role, params, 3, "membership.role_changed",
			     "user", NULL, NULL, role_changed, req);
}

static void member_removed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_api_org_target *t = arg;
	struct sw_http_request *req = t->req;
	if (!membership_changed(req, res, err))
		return;
	sw_auth_cache_forget_user(t->id);
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void member_remove(struct sw_http_request *req)
{
	struct sw_api_org_target *t = sw_api_org_target(req);
	if (!t)
		return;
	const char *params[2] = { req->principal.organization_id, t->id };
	sw_api_query_audited(req, &sw_db_stmt_member_remove, params, 2, "membership.removed", "user",
			     t->id, NULL, member_removed, t);
}

/* ---- a member's sessions ---- */

struct member_sessions {
	struct sw_http_request *req;
	char user_id[37];
	char session_id[37]; /* "" when listing, or when not a UUID */
	bool revoke;
};

static void member_sessions_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	sw_api_answer_sessions(arg, res, err, NULL);
}

static void member_checked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct member_sessions *ms = arg;
	struct sw_http_request *req = ms->req;
	if (!sw_api_found(req, res, err))
		return;
	if (!sw_access_allows(SW_ACCESS_OWNER_ADMIN, &req->principal)) {
		sw_http_error(req, 403, "FORBIDDEN",
			      "Only an OWNER or ADMIN may see or revoke another member's sessions.");
		return;
	}
	if (!ms->revoke) {
		const char *params[2] = { ms->user_id, req->principal.organization_id };
		sw_api_query(req, &sw_db_stmt_member_sessions_list, params, 2, member_sessions_listed, req);
	} else if (PQgetvalue(res, 0, 1)[0] != 't') {
		sw_api_not_found(req);
	} else {
		sw_api_revoke_session_of(req, ms->user_id, sw_str_cstr(ms->session_id));
	}
}

/* GET /users/:id/sessions and DELETE /users/:id/sessions/:sessionId. */
static void user_sessions(struct sw_http_request *req, bool revoke)
{
	struct member_sessions *ms = sw_api_state_new(req, sizeof(*ms));
	if (!ms || !sw_api_uuid_param(req, req->params.value[0], ms->user_id))
		return;
	ms->revoke = revoke;
	if (strcasecmp(ms->user_id, req->principal.user_id) == 0) {
		if (revoke)
			sw_api_revoke_session_of(req, req->principal.user_id, req->params.value[1]);
		else
			sw_api_sessions_list(req);
		return;
	}
	if (revoke && sw_is_uuid(req->params.value[1]))
		snprintf(ms->session_id, sizeof(ms->session_id), "%.*s", (int)req->params.value[1].len,
			 req->params.value[1].ptr);
	const char *params[3] = { req->principal.organization_id, ms->user_id,
				  ms->session_id[0] ? ms->session_id : NULL };
	sw_api_query(req, &sw_db_stmt_member_session_check, params, 3, member_checked, ms);
}

static void user_sessions_list(struct sw_http_request *req)
{
	user_sessions(req, false);
}

static void user_sessions_revoke(struct sw_http_request *req)
{
	user_sessions(req, true);
}

/* ---- routes and schemas ---- */

static const int err_page[] = { 404, 422, 503, 0 };
static const int err_member_write[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_member_delete[] = { 404, 409, 503, 0 };
static const int err_user_sessions[] = { 403, 404, 503, 0 };
static const int err_users[] = { 422, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/organizations/:id/members", SW_ACCESS_SESSION, members_list, 0, 0,
	  { "Members of the organization", "Any member; by the time they joined." SW_API_ORG_PAGINATION_DOC SW_API_ORG_SCOPED_DOC,
	    "Organizations", NULL, "MemberList", 200, err_page, "limit cursor order" } },
	{ SW_HTTP_PATCH, "/organizations/:id/members/:userId", SW_ACCESS_OWNER, member_set_role, 4096, 0,
	  { "Change a member's role",
	    "OWNER only. Demoting the last OWNER is 409 LAST_OWNER. Effective on the member's next "
	    "request, in every process. Audited as membership.role_changed." SW_API_ORG_SCOPED_DOC,
	    "Organizations", "MemberRoleRequest", "Member", 200, err_member_write } },
	{ SW_HTTP_DELETE, "/organizations/:id/members/:userId", SW_ACCESS_OWNER, member_remove, 0, 0,
	  { "Remove a member",
	    "OWNER only; an OWNER may remove themselves while another OWNER remains. Removing the last "
	    "OWNER is 409 LAST_OWNER. The member's sessions and API tokens of this organization are "
	    "revoked at once (the account itself stays). Audited as membership.removed." SW_API_ORG_SCOPED_DOC,
	    "Organizations", NULL, NULL, 204, err_member_delete } },
	{ SW_HTTP_GET, "/users", SW_ACCESS_SESSION, users_list, 0, 0,
	  { "Users of the caller's organization",
	    "Only the caller's organization, for an operator too; by the time they joined, with their "
	    "role." SW_API_ORG_PAGINATION_DOC,
	    "Users", NULL, "OrganizationUserList", 200, err_users, "limit cursor order" } },
	{ SW_HTTP_GET, "/users/:id/sessions", SW_ACCESS_SESSION, user_sessions_list, 0, 0,
	  { "A user's live sessions",
	    "One's own (every organization, as GET /auth/sessions), or another member's sessions in "
	    "this organization for an OWNER or ADMIN (403 FORBIDDEN for another role). A user who is "
	    "not a member of the caller's organization is 404.",
	    "Users", NULL, "SessionList", 200, err_user_sessions } },
	{ SW_HTTP_DELETE, "/users/:id/sessions/:sessionId", SW_ACCESS_SESSION, user_sessions_revoke,
	  0, 0,
	  { "Revoke a user's session",
	    "Same rules as the list: one's own, or another member's session in this organization for "
	    "an OWNER or ADMIN. Effective on the next request, in every process. 404 for a session that "
	    "is not that user's live session here. Audited as auth.session.revoked.",
	    "Users", NULL, NULL, 204, err_user_sessions } },
};

static const char schemas[] = "{"
	"\"Member\":{\"type\":\"object\",\"required\":[\"userId\",\"email\",\"name\",\"role\",\"joinedAt\"],"
	"\"properties\":{\"userId\":" SW_API_ORG_UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"role\":" SW_API_ORG_ROLE_T ",\"joinedAt\":" SW_API_ORG_TS_T "}},"
	"\"MemberList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Member\"}},"
	"\"MemberRoleRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"role\"],\"properties\":{\"role\":" SW_API_ORG_ROLE_T "}},"
	"\"OrganizationUserList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"email\",\"name\",\"role\",\"createdAt\"],\"properties\":{"
	"\"id\":" SW_API_ORG_UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"role\":" SW_API_ORG_ROLE_T ",\"createdAt\":" SW_API_ORG_TS_T "}}}"
	"}";

const struct sw_api_route_group sw_api_members_group = { routes, SW_ARRAY_SIZE(routes), schemas };
