/* Invitations to the caller's organization, and their acceptance.
 *
 * Decisions (also in the OpenAPI document):
 * - POST answers the invitation token once (there is no mail for
 *   invitations; the OWNER hands the token on). 7 days, single use, bound
 *   to the invited address (the account is created with it), stored as a
 *   SHA-256. At most 100 open per organization; one open per address.
 *   POST /invitations/accept creates the account and its membership and
 *   signs it in; an address that already has an account is 409
 *   EMAIL_REGISTERED (accepting into a second organization is not offered
 *   yet). An unknown, used, cancelled or expired token is 422 on "token".
 *   Inviting and accepting both check the plan's members quota (409
 *   QUOTA_EXCEEDED, migration 0011); open invitations are not counted.
 * - Cancelling an invitation that is already cancelled is 204 again; one
 *   that was accepted is 409 INVITATION_ACCEPTED. */
#include <errno.h>
#include <openssl/crypto.h>
#include "steward/base/secret.h"
#include "api/organization_scope.h"
#include "steward/db/statements_organizations.h"

#define INVITATION_TOKEN_BYTES 32

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
	if (!sw_api_own_organization(req))
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
		sw_api_answer_row(req, 201, res, 0, write_invitation, in->token);
	}
	/* The request's arena stays writable until this completion returns. */
	OPENSSL_cleanse(in->token, sizeof(in->token));
}

static void invitation_create(struct sw_http_request *req)
{
	if (!sw_api_own_organization(req))
		return;
	static const char *const known[] = { "email", "role", NULL };
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_api_body(req, known, false, &fe);
	if (!body)
		return;
	char email[SW_EMAIL_MAX_LEN + 1];
	sw_api_email_field(body, "email", email, &fe);
	char role[8] = "";
	sw_api_role_field(body, role, &fe);
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
	if (!sw_api_query_audited(req, &sw_db_stmt_invitation_create, params, 5, "invitation.created",
				  "invitation", NULL, NULL, invited, in))
		OPENSSL_cleanse(in->token, sizeof(in->token));
}

static void invitation_cancelled(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_api_org_target *t = arg;
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
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void invitation_cancel(struct sw_http_request *req)
{
	struct sw_api_org_target *t = sw_api_org_target(req);
	if (!t)
		return;
	const char *params[2] = { t->id, req->principal.organization_id };
	sw_api_query_audited(req, &sw_db_stmt_invitation_cancel, params, 2, "invitation.cancelled",
			     "invitation", t->id, NULL, invitation_cancelled, t);
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
	/* By the new member, in the organization joined: the statement's. */
	const struct sw_db_audit_row ar = { NULL, NULL, "invitation.accepted", "invitation", NULL,
					    NULL, NULL };
	sw_api_query_audit_row(req, &sw_db_stmt_invitation_accept, params, 3, &ar, accepted, a);
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

/* ---- routes and schemas ---- */

static const int err_org_read[] = { 404, 503, 0 };
static const int err_member_write[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_member_delete[] = { 404, 409, 503, 0 };
static const int err_accept[] = { 400, 409, 413, 415, 422, 503, 0 };

#define INVITATION_PROPERTIES                                                                  \
	"\"id\":" SW_API_ORG_UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},\"role\":" SW_API_ORG_ROLE_T "," \
	"\"invitedBy\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"                     \
	"\"createdAt\":" SW_API_ORG_TS_T ",\"expiresAt\":" SW_API_ORG_TS_T
#define INVITATION_REQUIRED "\"id\",\"email\",\"role\",\"invitedBy\",\"createdAt\",\"expiresAt\""

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/organizations/:id/invitations", SW_ACCESS_SESSION, invitations_list, 0, 0,
	  { "Open invitations of the organization",
	    "Any member; open (neither accepted, cancelled nor expired) invitations, newest first; "
	    "at most 100 exist. Never the invitation tokens." SW_API_ORG_SCOPED_DOC,
	    "Organizations", NULL, "InvitationList", 200, err_org_read } },
	{ SW_HTTP_POST, "/organizations/:id/invitations", SW_ACCESS_OWNER, invitation_create, 4096, 0,
	  { "Invite an address",
	    "OWNER only. Answers the invitation `token` once: there is no mail for invitations, the "
	    "OWNER hands the token on, and the invitee accepts with POST /invitations/accept. Valid 7 "
	    "days, single use, bound to the address; only its SHA-256 is stored. 409 ALREADY_MEMBER, "
	    "409 INVITATION_PENDING (one open invitation per address; cancel it to invite again), 409 "
	    "TOO_MANY_INVITATIONS (100 open), 409 QUOTA_EXCEEDED when the members of the plan "
	    "(GET /subscription) are all taken. Audited as invitation.created." SW_API_ORG_SCOPED_DOC,
	    "Organizations", "InvitationCreateRequest", "InvitationCreated", 201, err_member_write } },
	{ SW_HTTP_DELETE, "/organizations/:id/invitations/:invitationId", SW_ACCESS_OWNER,
	  invitation_cancel, 0, 0,
	  { "Cancel an invitation",
	    "OWNER only. The token stops working at once. Cancelling a cancelled invitation is 204 "
	    "again; an accepted one is 409 INVITATION_ACCEPTED. Audited as invitation.cancelled." SW_API_ORG_SCOPED_DOC,
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
};

static const char schemas[] = "{"
	"\"Invitation\":{\"type\":\"object\",\"required\":[" INVITATION_REQUIRED "],\"properties\":{"
	INVITATION_PROPERTIES "}},"
	"\"InvitationList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Invitation\"}},"
	"\"InvitationCreated\":{\"type\":\"object\",\"required\":[" INVITATION_REQUIRED ",\"token\"],"
	"\"properties\":{" INVITATION_PROPERTIES ",\"token\":{\"type\":\"string\","
	"\"pattern\":\"^[A-Za-z0-9_-]{43}$\",\"description\":\"The invitation token; shown only in this "
	"response.\"}}},"
	"\"InvitationCreateRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"email\",\"role\"],\"properties\":{\"email\":{\"type\":\"string\","
	"\"format\":\"email\",\"maxLength\":254},\"role\":" SW_API_ORG_ROLE_T "}},"
	"\"InvitationAcceptRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"token\",\"name\",\"password\"],\"properties\":{"
	"\"token\":{\"type\":\"string\",\"writeOnly\":true},\"name\":" SW_API_ORG_NAME_T ","
	"\"password\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true}}}"
	"}";

const struct sw_api_route_group sw_api_invitations_group = { routes, SW_ARRAY_SIZE(routes), schemas };
