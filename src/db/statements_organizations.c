/* Statements of organizations, members, invitations, users and the audit
 * log (migrations 0001, 0002 and 0006). Changes of membership go through
 * the functions of 0006_organizations.sql, which lock the organization and
 * announce on "steward_auth" in their own transaction. Identifiers are
 * checked to be UUIDs, and numbers to be numbers, before they reach these
 * statements. Cursors are (timestamp in microseconds since the epoch, id):
 * keyset pagination, stable while rows are added. */
#include "steward/db/statements_organizations.h"
#include "db/sql.h"

/* A microseconds-since-the-epoch parameter as a timestamptz (exact). */
#define TS_US(p) "('epoch'::timestamptz + " p "::bigint * interval '1 microsecond')"
#define US_OF(col) "(extract(epoch FROM " col ") * 1000000)::bigint"

/* The columns of an organization: id, name, created_at, updated_at. */
#define ORG_COLUMNS "id, name, steward_rfc3339(created_at), steward_rfc3339(updated_at)"

/* (organization_id) -> ORG_COLUMNS. */
const struct sw_db_stmt sw_db_stmt_organization_get = {
	.name = "organization_get",
	.sql = "SELECT " ORG_COLUMNS " FROM organizations WHERE id = $1::uuid",
	.nparams = 1,
	.reads_only = true,
};

/* (organization_id, name) -> ORG_COLUMNS, then the name before (the
 * self-join reads the row as it was before this statement); announces
 * org:<id> so that every process drops the cached accounts naming it. */
const struct sw_db_stmt sw_db_stmt_organization_rename = {
	.name = "organization_rename",
	.sql = "UPDATE organizations o SET name = $2, updated_at = now() FROM organizations p"
	       " WHERE o.id = $1::uuid AND p.id = o.id"
	       " RETURNING o.id, o.name, steward_rfc3339(o.created_at), steward_rfc3339(o.updated_at), p.name,"
	       " pg_notify('steward_auth', 'org:' || o.id)", /* cached accounts name it */
	.nparams = 2,
	.audited = &(struct sw_db_audited){
		.id_col = 0, .name_col = -1, .ncols = 5,
		.metadata_sql = "jsonb_build_object('from', c4, 'to', c1)" } /* old name c4 */,
};

/* (organization_id, after_us or NULL, after_user_id or NULL, limit,
 * order 'asc'|'desc') -> enum sw_db_member_col: members by the time they
 * joined (desc: the latest first), after the cursor. */
const struct sw_db_stmt sw_db_stmt_members_page = {
	.name = "members_page",
	.sql = "SELECT u.id, u.email, u.name, m.role, steward_rfc3339(m.created_at),"
	       " steward_rfc3339(u.created_at), " US_OF("m.created_at")
	       " FROM memberships m JOIN users u ON u.id = m.user_id"
	       " WHERE m.organization_id = $1::uuid"
	       " AND ($2::bigint IS NULL OR CASE WHEN $5 = 'asc'"
	       "  THEN (m.created_at, m.user_id) > (" TS_US("$2") ", $3::uuid)"
	       "  ELSE (m.created_at, m.user_id) < (" TS_US("$2") ", $3::uuid) END)"
	       " ORDER BY CASE WHEN $5 = 'asc' THEN m.created_at END,"
	       " CASE WHEN $5 = 'asc' THEN m.user_id END, m.created_at DESC, m.user_id DESC"
	       " LIMIT $4::int",
	.nparams = 5,
	.reads_only = true,
};

/* (organization_id, user_id, role) -> previous_role, user_id, email, name,
 * role, joined_at; no row: not a member. Raises SW601. */
const struct sw_db_stmt sw_db_stmt_member_set_role = {
	.name = "member_set_role",
	.sql = "SELECT * FROM steward_member_set_role($1::uuid, $2::uuid, $3)",
	.nparams = 3,
	.audited = &(struct sw_db_audited){
		.id_col = 1, .name_col = -1, .ncols = 5, .when_sql = "c0 <> c4",
		.metadata_sql = "jsonb_build_object('from', c0, 'to', c4)" } /* role before, user, role */,
};

/* (organization_id, user_id) -> role, sessions_revoked, tokens_revoked; no
 * row: not a member. Raises SW601. */
const struct sw_db_stmt sw_db_stmt_member_remove = {
	.name = "member_remove",
	.sql = "SELECT * FROM steward_member_remove($1::uuid, $2::uuid)",
	.nparams = 2,
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = 3,
		.metadata_sql = "jsonb_build_object('role', c0, 'sessionsRevoked', c1::bigint,"
				" 'tokensRevoked', c2::bigint)" },
};

/* (organization_id, user_id, session_id or NULL) -> role of the user in
 * the organization, whether the session is a live one of that user in that
 * organization; no row: not a member. */
const struct sw_db_stmt sw_db_stmt_member_session_check = {
	.name = "member_session_check",
	.sql = "SELECT m.role, EXISTS (SELECT 1 FROM sessions s WHERE s.id = $3::uuid"
	       "  AND s.user_id = m.user_id AND s.organization_id = m.organization_id"
	       "  AND s.revoked_at IS NULL AND s.expires_at > now())"
	       " FROM memberships m WHERE m.organization_id = $1::uuid AND m.user_id = $2::uuid",
	.nparams = 3,
};

/* (user_id, organization_id) -> the columns of sw_db_stmt_sessions_list:
 * the user's live sessions in the organization, most recent first. */
const struct sw_db_stmt sw_db_stmt_member_sessions_list = {
	.name = "member_sessions_list",
	.sql = "SELECT id, method, ip, user_agent, " SW_SQL_TS_US("created_at") ","
	       " " SW_SQL_TS_US("last_seen_at") ", " SW_SQL_TS_US("expires_at")
	       " FROM sessions WHERE user_id = $1::uuid AND organization_id = $2::uuid"
	       " AND revoked_at IS NULL AND expires_at > now()"
	       " ORDER BY last_seen_at DESC, id LIMIT 200",
	.nparams = 2,
	.reads_only = true,
};

/* The columns of an invitation: id, email, role, invited_by (or NULL),
 * created_at, expires_at. */
#define INVITATION_COLUMNS \
	"id, email, role, invited_by, steward_rfc3339(created_at), steward_rfc3339(expires_at)"

/* (organization_id) -> INVITATION_COLUMNS: open invitations, newest first
 * (at most SW_INVITATIONS_OPEN_MAX exist). */
const struct sw_db_stmt sw_db_stmt_invitations_list = {
	.name = "invitations_list",
	.sql = "SELECT " INVITATION_COLUMNS " FROM invitations"
	       " WHERE organization_id = $1::uuid AND accepted_at IS NULL AND cancelled_at IS NULL"
	       " AND expires_at > now() ORDER BY created_at DESC, id",
	.nparams = 1,
	.reads_only = true,
};

/* (organization_id, email (lower-case), role, token_hash_hex, invited_by)
 * -> INVITATION_COLUMNS. Raises SW602, SW603, SW607. */
const struct sw_db_stmt sw_db_stmt_invitation_create = {
	.name = "invitation_create",
	.sql = "SELECT * FROM steward_invite($1::uuid, $2, $3, decode($4, 'hex'), $5::uuid)",
	.nparams = 5,
	.audited = &(struct sw_db_audited){
		.id_col = 0, .name_col = -1, .ncols = 3,
		.metadata_sql = "jsonb_build_object('email', c1, 'role', c2)" },
};

/* (invitation_id, organization_id) -> accepted, cancelled by this call,
 * cancelled before, email; no row: no such invitation in the organization.
 * An open invitation (expired or not) is cancelled. */
const struct sw_db_stmt sw_db_stmt_invitation_cancel = {
	.name = "invitation_cancel",
	.sql = "WITH i AS (SELECT id, email, accepted_at IS NOT NULL AS accepted,"
	       "  cancelled_at IS NOT NULL AS cancelled FROM invitations"
	       "  WHERE id = $1::uuid AND organization_id = $2::uuid),"
	       " c AS (UPDATE invitations SET cancelled_at = now()"
	       "  WHERE id IN (SELECT id FROM i) AND accepted_at IS NULL AND cancelled_at IS NULL"
	       "  RETURNING id)"
	       " SELECT i.accepted, EXISTS (SELECT 1 FROM c), i.cancelled, i.email FROM i",
	.nparams = 2,
	.audited = &(struct sw_db_audited){
		.id_col = -1, .name_col = -1, .ncols = 4, .when_sql = "c1" /* cancelled by this call */,
		.metadata_sql = "jsonb_build_object('email', c3)" },
};

/* (token_hash_hex) -> id, email, organization_id of an open, unexpired
 * invitation, and whether its address has an account; no row otherwise.
 * A cheap check before any password work. */
const struct sw_db_stmt sw_db_stmt_invitation_open = {
	.name = "invitation_open",
	.sql = "SELECT i.id, i.email, i.organization_id,"
	       " EXISTS (SELECT 1 FROM users u WHERE lower(u.email) = i.email)"
	       " FROM invitations i"
	       " WHERE i.token_hash = decode($1, 'hex') AND i.accepted_at IS NULL"
	       " AND i.cancelled_at IS NULL AND i.expires_at > now()",
	.nparams = 1,
};

/* (token_hash_hex, name, password_hash) -> user_id, organization_id,
 * invitation_id, role. Raises SW604, SW605. */
const struct sw_db_stmt sw_db_stmt_invitation_accept = {
	.name = "invitation_accept",
	.sql = "SELECT * FROM steward_accept_invitation(decode($1, 'hex'), $2, $3)",
	.nparams = 3,
	.audited = &(struct sw_db_audited){
		.id_col = 2, .name_col = -1, .ncols = 4, .organization_sql = "c1::uuid",
		.actor_sql = "c0::uuid", .metadata_sql = "jsonb_build_object('role', c3)" },
};

/* (action or action prefix, actor_user_id, organization_id, since_us,
 * until_us, cursor_us, cursor_id, limit, order 'asc'|'desc'), each filter
 * NULL when absent -> enum sw_db_audit_col: newest first for desc. since is inclusive, until exclusive;
 * an action matches itself and every action below it ("auth.session"
 * matches "auth.session.revoked"). */
const struct sw_db_stmt sw_db_stmt_audit_page = {
	.name = "audit_page",
	.sql = "SELECT id, organization_id, actor_user_id, action, target_type, target_id, ip,"
	       " metadata::text, steward_rfc3339(created_at), " US_OF("created_at")
	       " FROM audit_logs"
	       " WHERE ($1::text IS NULL OR action = $1 OR left(action, length($1) + 1) = $1 || '.')"
	       " AND ($2::uuid IS NULL OR actor_user_id = $2::uuid)"
	       " AND ($3::uuid IS NULL OR organization_id = $3::uuid)"
	       " AND ($4::bigint IS NULL OR created_at >= " TS_US("$4") ")"
	       " AND ($5::bigint IS NULL OR created_at < " TS_US("$5") ")"
	       " AND ($6::bigint IS NULL OR CASE WHEN $9 = 'asc'"
	       "  THEN (created_at, id) > (" TS_US("$6") ", $7::bigint)"
	       "  ELSE (created_at, id) < (" TS_US("$6") ", $7::bigint) END)"
	       " ORDER BY CASE WHEN $9 = 'asc' THEN created_at END, CASE WHEN $9 = 'asc' THEN id END,"
	       " created_at DESC, id DESC LIMIT $8::int",
	.nparams = 9,
	.reads_only = true,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_organization_get,
	&sw_db_stmt_organization_rename,
	&sw_db_stmt_members_page,
	&sw_db_stmt_member_set_role,
	&sw_db_stmt_member_remove,
	&sw_db_stmt_member_session_check,
	&sw_db_stmt_member_sessions_list,
	&sw_db_stmt_invitations_list,
	&sw_db_stmt_invitation_create,
	&sw_db_stmt_invitation_cancel,
	&sw_db_stmt_invitation_open,
	&sw_db_stmt_invitation_accept,
	&sw_db_stmt_audit_page,
};

const struct sw_db_stmt_group sw_db_organizations_statements = { list, SW_ARRAY_SIZE(list) };
