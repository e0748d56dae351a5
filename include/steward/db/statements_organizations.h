/* Statements of organizations, members, invitations, users and the audit
 * log (statements_organizations.c; columns documented there), and the
 * SQLSTATEs of migration 0006_organizations.sql. */
#ifndef STEWARD_DB_STATEMENTS_ORGANIZATIONS_H
#define STEWARD_DB_STATEMENTS_ORGANIZATIONS_H

#include "steward/db/statements.h"

/* The change would leave the organization without an OWNER (-> 409 LAST_OWNER). */
#define SW_DB_SQLSTATE_LAST_OWNER "SW601"
/* The invited address belongs to a member already (-> 409 ALREADY_MEMBER). */
#define SW_DB_SQLSTATE_ALREADY_MEMBER "SW602"
/* The address has an open invitation (-> 409 INVITATION_PENDING). */
#define SW_DB_SQLSTATE_INVITATION_PENDING "SW603"
/* The invitation is unknown, used, cancelled or expired. */
#define SW_DB_SQLSTATE_INVITATION_CLOSED "SW604"
/* The invited address has an account already (-> 409 EMAIL_REGISTERED). */
#define SW_DB_SQLSTATE_EMAIL_REGISTERED "SW605"
/* SW_INVITATIONS_OPEN_MAX open invitations exist (-> 409 TOO_MANY_INVITATIONS). */
#define SW_DB_SQLSTATE_TOO_MANY_INVITATIONS "SW607"
#define SW_INVITATIONS_OPEN_MAX 100 /* also in steward_invite() */

extern const struct sw_db_stmt sw_db_stmt_organization_get;
extern const struct sw_db_stmt sw_db_stmt_organization_rename;
extern const struct sw_db_stmt sw_db_stmt_members_page;
extern const struct sw_db_stmt sw_db_stmt_member_set_role;
extern const struct sw_db_stmt sw_db_stmt_member_remove;
extern const struct sw_db_stmt sw_db_stmt_member_session_check;
extern const struct sw_db_stmt sw_db_stmt_member_sessions_list;
extern const struct sw_db_stmt sw_db_stmt_invitations_list;
extern const struct sw_db_stmt sw_db_stmt_invitation_create;
extern const struct sw_db_stmt sw_db_stmt_invitation_cancel;
extern const struct sw_db_stmt sw_db_stmt_invitation_open;
extern const struct sw_db_stmt sw_db_stmt_invitation_accept;
extern const struct sw_db_stmt sw_db_stmt_audit_page;

/* Columns of sw_db_stmt_members_page. */
enum sw_db_member_col {
	SW_DB_MEMBER_USER_ID,
	SW_DB_MEMBER_EMAIL,
	SW_DB_MEMBER_NAME,
	SW_DB_MEMBER_ROLE,
	SW_DB_MEMBER_JOINED_AT,       /* RFC 3339 */
	SW_DB_MEMBER_USER_CREATED_AT, /* RFC 3339 */
	SW_DB_MEMBER_CURSOR_US,       /* joined_at in microseconds since the epoch */
};

/* Columns of sw_db_stmt_audit_page. */
enum sw_db_audit_col {
	SW_DB_AUDIT_ID,
	SW_DB_AUDIT_ORGANIZATION_ID,  /* NULL when none */
	SW_DB_AUDIT_ACTOR_USER_ID,    /* NULL when none */
	SW_DB_AUDIT_ACTION,
	SW_DB_AUDIT_TARGET_TYPE,
	SW_DB_AUDIT_TARGET_ID,
	SW_DB_AUDIT_IP,
	SW_DB_AUDIT_METADATA,         /* JSON text from PostgreSQL */
	SW_DB_AUDIT_CREATED_AT,       /* RFC 3339 */
	SW_DB_AUDIT_CURSOR_US,
};

#endif
