/* Organizations, members, invitations, users and the audit log.
 *
 * Everything here is scoped to the caller's organization (the one of the
 * session or token): /organizations/:id with another organization's id is
 * 404, exactly as an id that does not exist, and GET /users lists only the
 * caller's organization. Only the audit log, an operator's route, spans the
 * installation.
 *
 * Decisions (also in the OpenAPI document):
 * - An organization never loses its last OWNER: demoting or removing the
 *   last one is 409 LAST_OWNER. Changes of one organization's memberships
 *   are serialised in the database (the functions of 0006_organizations.sql
 *   lock the organization's row).
 * - A role change takes effect on the member's next request; removing a
 *   member also revokes the member's sessions and API tokens of this
 *   organization. Both notify "user:<id>" and forget it here at once.
 * - Invitations: POST answers the invitation token once (there is no mail
 *   for invitations; the OWNER hands the token on). 7 days, single use,
 *   bound to the invited address (the account is created with it), stored
 *   as a SHA-256. At most 100 open per organization; one open per address.
 *   POST /invitations/accept creates the account and its membership and
 *   signs it in; an address that already has an account is 409
 *   EMAIL_REGISTERED (accepting into a second organization is not offered
 *   yet). An unknown, used, cancelled or expired token is 422 on "token".
 *   Inviting and accepting both check the plan's members quota (409
 *   QUOTA_EXCEEDED, migration 0011); open invitations are not counted.
 * - Cancelling an invitation that is already cancelled is 204 again; one
 *   that was accepted is 409 INVITATION_ACCEPTED.
 * - GET /users/:id/sessions: one's own (every organization, as GET
 *   /auth/sessions), or, for an OWNER or ADMIN, another member's sessions in
 *   this organization; a member lacking the role gets 403, an id outside the
 *   organization 404.
 * - Pagination (the convention of every paginated list): ?limit= (1..200,
 *   default 50) and ?cursor= (opaque, from the previous page); the body is
 *   {"data": [...], "pagination": {"nextCursor": "..." | null}}. Unknown or
 *   repeated query parameters are 422. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <openssl/crypto.h>
#include "steward/auth/auth.h"
#include "steward/base/limits.h"
#include "steward/base/secret.h"
#include "steward/base/timeparse.h"
#include "api/api_internal.h"
#include "steward/db/statements_organizations.h"

#define INVITATION_TOKEN_BYTES 32
#define AUDIT_ACTION_MAX 100

/* The :id of /organizations/:id must be the caller's organization; any
 * other (existing or not) answers 404. */
static bool own_organization(struct sw_http_request *req)
{
	struct sw_str id = req->params.value[0];
	if (!sw_is_uuid(id) || !sw_str_case_eq(id, sw_str_cstr(req->principal.organization_id))) {
		sw_api_not_found(req);
		return false;
	}
	return true;
}

/* Writes an audit record of the caller's organization with metadata built
 * by jansson (meta is stolen; never a secret in it). */
static void audit(struct sw_http_request *req, const char *action, const char *target_type,
		  const char *target_id, json_t *meta)
{
	sw_api_audit_json(req, req->principal.organization_id, req->principal.user_id, action,
			  target_type, target_id, meta);
}

static bool valid_role(struct sw_str s)
{
	return sw_str_eq(s, SW_STR("OWNER")) || sw_str_eq(s, SW_STR("ADMIN")) ||
	       sw_str_eq(s, SW_STR("MEMBER"));
}

/* Reads a required "role" member into out. */
static void role_field(json_t *body, char out[8], struct sw_field_errors *fe)
{
	struct sw_str role;
	if (sw_api_string_field(body, "role", &role, fe, true)) {
		if (valid_role(role))
			snprintf(out, 8, "%.*s", (int)role.len, role.ptr);
		else
			sw_field_error(fe, "role", "must be OWNER, ADMIN or MEMBER");
	}
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
		audit(req, "organization.renamed", "organization", PQgetvalue(res, 0, 0),
		      json_pack("{s:s, s:s}", "from", PQgetvalue(res, 0, 4), "to", PQgetvalue(res, 0, 1)));
	}
	sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &organization_object);
}

static void organization_get(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_organization_get, params, 1, organization_done, req);
}

static void organization_rename(struct sw_http_request *req)
{
	if (!own_organization(req))
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
	sw_api_query(req, &sw_db_stmt_organization_rename, params, 2, organization_done, req);
}

/* ---- members and users ---- */

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
	if (own_organization(req))
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
		audit(req, "membership.role_changed", "user", user,
		      json_pack("{s:s, s:s}", "from", before, "to", after));
	}
	sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &changed_member_object);
}

static void member_set_role(struct sw_http_request *req)
{
	char user[37];
	if (!own_organization(req) || !sw_api_uuid_param(req, req->params.value[1], user))
		return;
	static const char *const known[] = { "role", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	char role[8] = "";
	role_field(body, role, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[3] = { req->principal.organization_id, user, role };
	sw_api_query(req, &sw_db_stmt_member_set_role, params, 3, role_changed, req);
}

/* The state of a request about one object named in its path. */
struct target {
	struct sw_http_request *req;
	char id[37];
};

static void member_removed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct target *t = arg;
	struct sw_http_request *req = t->req;
	if (!membership_changed(req, res, err))
		return;
	sw_auth_cache_forget_user(t->id);
	audit(req, "membership.removed", "user", t->id,
	      json_pack("{s:s, s:I, s:I}", "role", PQgetvalue(res, 0, 0), "sessionsRevoked",
			(json_int_t)strtoll(PQgetvalue(res, 0, 1), NULL, 10), "tokensRevoked",
			(json_int_t)strtoll(PQgetvalue(res, 0, 2), NULL, 10)));
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

/* The target of /organizations/:id/<things>/:thingId: the caller's own
 * organization and a UUID, else answered (404). */
static struct target *org_target(struct sw_http_request *req)
{
	struct target *t = sw_api_state_new(req, sizeof(*t));
	return t && own_organization(req) && sw_api_uuid_param(req, req->params.value[1], t->id) ? t : NULL;
}

static void member_remove(struct sw_http_request *req)
{
	struct target *t = org_target(req);
	if (!t)
		return;
	const char *params[2] = { req->principal.organization_id, t->id };
	sw_api_query(req, &sw_db_stmt_member_remove, params, 2, member_removed, t);
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

/* ---- invitations ---- */

static const struct sw_api_column invitation_columns[] = {
	{ "id", 0, SW_API_COL_TEXT },
	{ "email", 1, SW_API_COL_TEXT },
	{ "role", 2, SW_API_COL_TEXT },
	{ "invitedBy", 3, SW_API_COL_NULLABLE },
	{ "createdAt", 4, SW_API_COL_TEXT },
	{ "expiresAt", 5, SW_API_COL_TEXT },
};

/* An invitation (INVITATION_COLUMNS); ctx is its token, only right after
 * creation, or NULL. */
static void write_invitation(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const char *token = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, invitation_columns, SW_ARRAY_SIZE(invitation_columns));
	if (token) {
		sw_json_key(j, "token");
		sw_json_cstr(j, token);
	}
	sw_json_object_end(j);
}

static void invitations_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	sw_api_answer_rows(arg, res, err, write_invitation, NULL);
}

static void invitations_list(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_invitations_list, params, 1, invitations_listed, req);
}

struct invite {
	struct sw_http_request *req;
	char token[SW_BASE64URL_LEN(INVITATION_TOKEN_BYTES) + 1];
};

/* The refusals of sw_db_stmt_invitation_create; false when there is none. */
static bool invitation_refused(struct sw_http_request *req, const struct sw_db_error *err)
{
	const char *state = err->code == -EIO ? err->sqlstate : "";
	if (strcmp(state, SW_DB_SQLSTATE_ALREADY_MEMBER) == 0)
		sw_http_error(req, 409, "ALREADY_MEMBER", "That address belongs to a member already.");
	else if (strcmp(state, SW_DB_SQLSTATE_INVITATION_PENDING) == 0)
		sw_http_error(req, 409, "INVITATION_PENDING",
			      "That address has an open invitation; cancel it to invite again.");
	else if (strcmp(state, SW_DB_SQLSTATE_TOO_MANY_INVITATIONS) == 0)
		sw_http_error(req, 409, "TOO_MANY_INVITATIONS",
			      "The organization has 100 open invitations; cancel some first.");
	else if (strcmp(state, "SW409") == 0)
		sw_api_resource_error(req, NULL, err); /* QUOTA_EXCEEDED: the plan's members */
	else
		return false;
	return true;
}

static void invited(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct invite *in = arg;
	struct sw_http_request *req = in->req;
	if (!invitation_refused(req, err) &&
	    sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The invitation was not created.")) {
		audit(req, "invitation.created", "invitation", PQgetvalue(res, 0, 0),
		      json_pack("{s:s, s:s}", "email", PQgetvalue(res, 0, 1), "role", PQgetvalue(res, 0, 2)));
		sw_api_answer_row(req, 201, res, 0, write_invitation, in->token);
	}
	/* The request's arena stays writable until this completion returns. */
	OPENSSL_cleanse(in->token, sizeof(in->token));
}

static void invitation_create(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	static const char *const known[] = { "email", "role", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	char email[SW_EMAIL_MAX_LEN + 1];
	sw_api_email_field(body, "email", email, &fe);
	char role[8] = "";
	role_field(body, role, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct invite *in = sw_api_state_new(req, sizeof(*in));
	if (!in)
		return;
	if (sw_random_token(in->token, sizeof(in->token), INVITATION_TOKEN_BYTES) < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "The invitation could not be created.");
		return;
	}
	char hex[65];
	sw_sha256_hex(in->token, strlen(in->token), hex);
	const char *params[5] = { req->principal.organization_id, email, role, hex,
				  req->principal.user_id };
	if (!sw_api_query(req, &sw_db_stmt_invitation_create, params, 5, invited, in))
		OPENSSL_cleanse(in->token, sizeof(in->token));
}

static void invitation_cancelled(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct target *t = arg;
	struct sw_http_request *req = t->req;
	if (!sw_api_found(req, res, err))
		return;
	bool now = PQgetvalue(res, 0, 1)[0] == 't';
	bool before = PQgetvalue(res, 0, 2)[0] == 't';
	if (!now && !before) {
		/* Accepted (column 0), possibly while this request waited for it. */
		sw_http_error(req, 409, "INVITATION_ACCEPTED", "The invitation has been accepted already.");
		return;
	}
	if (now)
		audit(req, "invitation.cancelled", "invitation", t->id,
		      json_pack("{s:s}", "email", PQgetvalue(res, 0, 3)));
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void invitation_cancel(struct sw_http_request *req)
{
	struct target *t = org_target(req);
	if (!t)
		return;
	const char *params[2] = { t->id, req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_invitation_cancel, params, 2, invitation_cancelled, t);
}

/* ---- POST /invitations/accept ---- */

struct accept {
	struct sw_http_request *req;
	char hex[65];
	char *name;
	struct sw_api_secret password;
};

static void invitation_closed(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	sw_field_error(&fe, "token", "is not an open invitation (unknown, used, cancelled or expired)");
	sw_http_validation_error(req, &fe);
}

static void email_registered(struct sw_http_request *req)
{
	sw_http_error(req, 409, "EMAIL_REGISTERED",
		      "The invited address has an account already; sign in with it instead.");
}

static void accepted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct accept *a = arg;
	struct sw_http_request *req = a->req;
	const char *state = err->code == -EIO ? err->sqlstate : "";
	if (strcmp(state, SW_DB_SQLSTATE_INVITATION_CLOSED) == 0) {
		invitation_closed(req);
		return;
	}
	if (strcmp(state, SW_DB_SQLSTATE_EMAIL_REGISTERED) == 0) {
		email_registered(req);
		return;
	}
	if (strcmp(state, "SW409") == 0) {
		sw_api_resource_error(req, NULL, err); /* QUOTA_EXCEEDED: the plan's members */
		return;
	}
	if (!sw_api_found(req, res, err))
		return;
	const char *user = PQgetvalue(res, 0, 0), *org = PQgetvalue(res, 0, 1);
	sw_api_audit_json(req, org, user, "invitation.accepted", "invitation", PQgetvalue(res, 0, 2),
			  json_pack("{s:s}", "role", PQgetvalue(res, 0, 3)));
	sw_api_issue_session(req, user, org, "INVITATION", 201);
}

static void accept_hashed(void *arg, int herr, const char *encoded)
{
	struct accept *a = arg;
	struct sw_http_request *req = a->req;
	if (herr < 0) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[3] = { a->hex, a->name, encoded };
	sw_api_query(req, &sw_db_stmt_invitation_accept, params, 3, accepted, a);
}

static void accept_checked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct accept *a = arg;
	struct sw_http_request *req = a->req;
	if (err->code || PQntuples(res) != 1 || PQgetvalue(res, 0, 3)[0] == 't') {
		sw_api_secret_wipe(&a->password);
		if (err->code)
			sw_api_db_error(req, err);
		else if (PQntuples(res) != 1)
			invitation_closed(req);
		else
			email_registered(req);
		return;
	}
	sw_api_secret_hash(req, &a->password, accept_hashed, a);
}

static void invitation_accept(struct sw_http_request *req)
{
	static const char *const known[] = { "token", "name", "password", NULL };
	struct sw_field_errors fe = { 0 };
	/* The raw body holds the password: parsed, it is no longer needed. */
	json_t *body;
	struct accept *a = sw_api_state_with_body(req, sizeof(*a), known, true, &fe, &body);
	if (!a)
		return;
	struct sw_str name, password = SW_STR_NULL;
	sw_api_token_hash_field(body, "token", a->hex, "is not an invitation token", &fe);
	sw_api_name_field(body, "name", true, &name, &fe);
	sw_api_password_field(body, "password", &password, &fe);
	bool kept = false;
	if (!fe.count) {
		a->name = sw_arena_strndup(&req->arena, name.ptr, name.len);
		kept = sw_api_secret_keep(req, password, &a->password);
	}
	/* jansson's copy of the body holds the password too. */
	sw_api_wipe_view(password);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!a->name || !kept) {
		sw_api_secret_wipe(&a->password);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[1] = { a->hex };
	if (!sw_api_query(req, &sw_db_stmt_invitation_open, params, 1, accept_checked, a))
		sw_api_secret_wipe(&a->password);
}

/* ---- GET /audit-logs ---- */

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

static const int err_org_read[] = { 404, 503, 0 };
static const int err_org_write[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_page[] = { 404, 422, 503, 0 };
static const int err_member_write[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_member_delete[] = { 404, 409, 503, 0 };
static const int err_accept[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_user_sessions[] = { 403, 404, 503, 0 };
static const int err_users[] = { 422, 503, 0 };

#define PAGINATION_DOC                                                                          \
	" Paginated: `?limit=` (1 to 200, default 50), `?cursor=` (opaque: the "                   \
	"`pagination.nextCursor` of the previous page) and `?order=desc|asc` (latest first by "   \
	"default); the body is `{\"data\": [...], "         \
	"\"pagination\": {\"nextCursor\": string or null}}`. Unknown or repeated query parameters " \
	"are 422."
#define SCOPED_DOC " An organization id other than the caller's is 404, as for one that does not exist."

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/organizations/:id", SW_ACCESS_SESSION, organization_get, 0, 0,
	  { "The caller's organization", "Any member." SCOPED_DOC,
	    "Organizations", NULL, "Organization", 200, err_org_read } },
	{ SW_HTTP_PATCH, "/organizations/:id", SW_ACCESS_OWNER, organization_rename, 4096, 0,
	  { "Rename the organization", "OWNER only. Audited as organization.renamed." SCOPED_DOC,
	    "Organizations", "OrganizationRenameRequest", "Organization", 200, err_org_write } },
	{ SW_HTTP_GET, "/organizations/:id/members", SW_ACCESS_SESSION, members_list, 0, 0,
	  { "Members of the organization", "Any member; by the time they joined." PAGINATION_DOC SCOPED_DOC,
	    "Organizations", NULL, "MemberList", 200, err_page, "limit cursor order" } },
	{ SW_HTTP_PATCH, "/organizations/:id/members/:userId", SW_ACCESS_OWNER, member_set_role, 4096, 0,
	  { "Change a member's role",
	    "OWNER only. Demoting the last OWNER is 409 LAST_OWNER. Effective on the member's next "
	    "request, in every process. Audited as membership.role_changed." SCOPED_DOC,
	    "Organizations", "MemberRoleRequest", "Member", 200, err_member_write } },
	{ SW_HTTP_DELETE, "/organizations/:id/members/:userId", SW_ACCESS_OWNER, member_remove, 0, 0,
	  { "Remove a member",
	    "OWNER only; an OWNER may remove themselves while another OWNER remains. Removing the last "
	    "OWNER is 409 LAST_OWNER. The member's sessions and API tokens of this organization are "
	    "revoked at once (the account itself stays). Audited as membership.removed." SCOPED_DOC,
	    "Organizations", NULL, NULL, 204, err_member_delete } },
	{ SW_HTTP_GET, "/organizations/:id/invitations", SW_ACCESS_SESSION, invitations_list, 0, 0,
	  { "Open invitations of the organization",
	    "Any member; open (neither accepted, cancelled nor expired) invitations, newest first; "
	    "at most 100 exist. Never the invitation tokens." SCOPED_DOC,
	    "Organizations", NULL, "InvitationList", 200, err_org_read } },
	{ SW_HTTP_POST, "/organizations/:id/invitations", SW_ACCESS_OWNER, invitation_create, 4096, 0,
	  { "Invite an address",
	    "OWNER only. Answers the invitation `token` once: there is no mail for invitations, the "
	    "OWNER hands the token on, and the invitee accepts with POST /invitations/accept. Valid 7 "
	    "days, single use, bound to the address; only its SHA-256 is stored. 409 ALREADY_MEMBER, "
	    "409 INVITATION_PENDING (one open invitation per address; cancel it to invite again), 409 "
	    "TOO_MANY_INVITATIONS (100 open), 409 QUOTA_EXCEEDED when the members of the plan "
	    "(GET /subscription) are all taken. Audited as invitation.created." SCOPED_DOC,
	    "Organizations", "InvitationCreateRequest", "InvitationCreated", 201, err_member_write } },
	{ SW_HTTP_DELETE, "/organizations/:id/invitations/:invitationId", SW_ACCESS_OWNER,
	  invitation_cancel, 0, 0,
	  { "Cancel an invitation",
	    "OWNER only. The token stops working at once. Cancelling a cancelled invitation is 204 "
	    "again; an accepted one is 409 INVITATION_ACCEPTED. Audited as invitation.cancelled." SCOPED_DOC,
	    "Organizations", NULL, NULL, 204, err_member_delete } },
	{ SW_HTTP_POST, "/invitations/accept", SW_ACCESS_PUBLIC, invitation_accept, 4096, 0,
	  { "Accept an invitation: create the account and sign it in",
	    "The only unauthenticated route that creates a user. The account gets the invited address, "
	    "the given name and password, and the invited role; the answer sets the session cookie "
	    "(method INVITATION). An unknown, used, cancelled or expired token is 422 on `token`; an "
	    "address that already has an account is 409 EMAIL_REGISTERED; an organization whose "
	    "plan's members are all taken is 409 QUOTA_EXCEEDED (the invitation stays open). Of "
	    "concurrent accepts of one invitation exactly one succeeds. Audited as "
	    "invitation.accepted.",
	    "Organizations", "InvitationAcceptRequest", "SessionResult", 201, err_accept } },
	{ SW_HTTP_GET, "/users", SW_ACCESS_SESSION, users_list, 0, 0,
	  { "Users of the caller's organization",
	    "Only the caller's organization, for an operator too; by the time they joined, with their "
	    "role." PAGINATION_DOC,
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
	{ SW_HTTP_GET, "/audit-logs", SW_ACCESS_OPERATOR, audit_logs, 0, 0,
	  { "The audit log of the installation",
	    "Operators only (403 for everyone else). Newest first (?order=asc: oldest). Filters: `action` (an action, or "
	    "its leading words: `auth.session` matches `auth.session.revoked`), `actorUserId`, "
	    "`organizationId`, `since` (inclusive) and `until` (exclusive) as RFC 3339 date-times. "
	    "Records say who (actorUserId), what (action, target, metadata), when, and from which "
	    "address (ip); never a secret." PAGINATION_DOC,
	    "Audit", NULL, "AuditLogList", 200, err_users,
	    "limit cursor order action actorUserId organizationId since until" } },
};

#define UUID_T "{\"type\":\"string\",\"format\":\"uuid\"}"
#define TS_T "{\"type\":\"string\",\"format\":\"date-time\"}"
#define ROLE_T "{\"enum\":[\"OWNER\",\"ADMIN\",\"MEMBER\"]}"
#define NAME_T "{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}"
#define INVITATION_PROPERTIES                                                                  \
	"\"id\":" UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},\"role\":" ROLE_T "," \
	"\"invitedBy\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"                     \
	"\"createdAt\":" TS_T ",\"expiresAt\":" TS_T
#define INVITATION_REQUIRED "\"id\",\"email\",\"role\",\"invitedBy\",\"createdAt\",\"expiresAt\""

static const char schemas[] = "{"
	"\"Organization\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"createdAt\",\"updatedAt\"],"
	"\"properties\":{\"id\":" UUID_T ",\"name\":{\"type\":\"string\"},\"createdAt\":" TS_T ","
	"\"updatedAt\":" TS_T "}},"
	"\"OrganizationRenameRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\"],\"properties\":{\"name\":" NAME_T "}},"
	"\"Member\":{\"type\":\"object\",\"required\":[\"userId\",\"email\",\"name\",\"role\",\"joinedAt\"],"
	"\"properties\":{\"userId\":" UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"role\":" ROLE_T ",\"joinedAt\":" TS_T "}},"
	"\"MemberList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Member\"}},"
	"\"MemberRoleRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"role\"],\"properties\":{\"role\":" ROLE_T "}},"
	"\"Invitation\":{\"type\":\"object\",\"required\":[" INVITATION_REQUIRED "],\"properties\":{"
	INVITATION_PROPERTIES "}},"
	"\"InvitationList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Invitation\"}},"
	"\"InvitationCreated\":{\"type\":\"object\",\"required\":[" INVITATION_REQUIRED ",\"token\"],"
	"\"properties\":{" INVITATION_PROPERTIES ",\"token\":{\"type\":\"string\","
	"\"pattern\":\"^[A-Za-z0-9_-]{43}$\",\"description\":\"The invitation token; shown only in this "
	"response.\"}}},"
	"\"InvitationCreateRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"email\",\"role\"],\"properties\":{\"email\":{\"type\":\"string\","
	"\"format\":\"email\",\"maxLength\":254},\"role\":" ROLE_T "}},"
	"\"InvitationAcceptRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"token\",\"name\",\"password\"],\"properties\":{"
	"\"token\":{\"type\":\"string\",\"writeOnly\":true},\"name\":" NAME_T ","
	"\"password\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true}}},"
	"\"OrganizationUserList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"email\",\"name\",\"role\",\"createdAt\"],\"properties\":{"
	"\"id\":" UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"role\":" ROLE_T ",\"createdAt\":" TS_T "}}},"
	"\"AuditLogList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"organizationId\",\"actorUserId\",\"action\",\"targetType\",\"targetId\","
	"\"ip\",\"metadata\",\"createdAt\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9]+$\"},"
	"\"organizationId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"actorUserId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"action\":{\"type\":\"string\",\"examples\":[\"api_token.revoked\"]},"
	"\"targetType\":{\"type\":[\"string\",\"null\"]},\"targetId\":{\"type\":[\"string\",\"null\"]},"
	"\"ip\":{\"type\":[\"string\",\"null\"]},\"metadata\":{\"type\":\"object\"},"
	"\"createdAt\":" TS_T "}}}"
	"}";

const struct sw_api_route_group sw_api_organizations_group = { routes, SW_ARRAY_SIZE(routes),
							      schemas };
