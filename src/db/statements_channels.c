/* Statements of notification channels (migration 0011). The kind-dependent
 * rules (url or addresses, https for Slack and Discord, private targets)
 * are the table's trigger's; a channel that alert rules still notify is
 * not deleted (SW409 CHANNEL_IN_USE from its delete trigger). */
#include "db/sql.h"
#include "steward/db/statements_channels.h"

#define CHANNEL_COLUMNS                                                                      \
	"c.id, c.name, c.kind, c.url, c.addresses::text, c.enabled, c.allow_private_targets," \
	" c.signing_secret IS NOT NULL,"                                                     \
	" " SW_SQL_TS("c.created_at") ", " SW_SQL_TS("c.updated_at") ", " SW_SQL_US("c.created_at")

const struct sw_db_stmt sw_db_stmt_channel_create = {
	.name = "channel_create",
	.sql = "WITH c AS (INSERT INTO notification_channels (id, organization_id, created_by, name,"
	       "  kind, url, addresses, enabled, allow_private_targets, target_private, signing_secret)"
	       "  VALUES ($2::uuid, $1::uuid, $3::uuid, $4, $5, $6, $7::jsonb, $8::boolean, $9::boolean,"
	       "  $10::boolean, $11) RETURNING *)"
	       " SELECT " CHANNEL_COLUMNS " FROM c",
	.nparams = 11,
	.audited = SW_DB_AUDITED(SW_DB_CHANNEL_ID, SW_DB_CHANNEL_NAME),
};

const struct sw_db_stmt sw_db_stmt_channel_get = {
	.name = "channel_get",
	.sql = "SELECT " CHANNEL_COLUMNS " FROM notification_channels c"
	       " WHERE c.organization_id = $1::uuid AND c.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

/* kind ($6) cannot change: the API refuses it before. */
const struct sw_db_stmt sw_db_stmt_channel_update = {
	.name = "channel_update",
	.sql = "WITH c AS (UPDATE notification_channels SET " SW_SQL_SET("name", 1, "$5") ","
	       " " SW_SQL_SET("url", 3, "$7") ", " SW_SQL_SET("addresses", 4, "$8::jsonb") ","
	       " " SW_SQL_SET("enabled", 5, "$9::boolean") ","
	       " " SW_SQL_SET("allow_private_targets", 6, "$10::boolean") ","
	       " target_private = coalesce($11::boolean, target_private), updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " AND " SW_SQL_UNUSED("$6", "text") " RETURNING *)"
	       " SELECT " CHANNEL_COLUMNS " FROM c",
	.nparams = 11,
	.audited = SW_DB_AUDITED(SW_DB_CHANNEL_ID, SW_DB_CHANNEL_NAME),
};

const struct sw_db_stmt sw_db_stmt_channel_remove = {
	.name = "channel_remove",
	.sql = "DELETE FROM notification_channels WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING id, name",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

const struct sw_db_stmt sw_db_stmt_channels_list = {
	.name = "channels_list",
	.sql = "SELECT " CHANNEL_COLUMNS " FROM notification_channels c"
	       " WHERE c.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR c.kind = $7) AND ($8::boolean IS NULL OR c.enabled = $8)"
	       SW_SQL_PAGE("c"),
	.nparams = 8,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_channel_delivery = {
	.name = "channel_delivery",
	.sql = "SELECT c.id, c.name, c.kind, c.url, c.addresses::text, c.allow_private_targets,"
	       " c.signing_secret FROM notification_channels c"
	       " WHERE c.organization_id = $1::uuid AND c.id = $2::uuid",
	.nparams = 2,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_channel_create, &sw_db_stmt_channel_get,   &sw_db_stmt_channel_update,
	&sw_db_stmt_channel_remove, &sw_db_stmt_channels_list, &sw_db_stmt_channel_delivery,
};
const struct sw_db_stmt_group sw_db_channels_statements = { list, SW_ARRAY_SIZE(list) };
