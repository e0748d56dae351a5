/* Statements of alert rules and alerts (migration 0011). Which fields a
 * rule's kind uses, and that its server, application and channels are the
 * organization's, is checked by the table's trigger (SW422 on the field). */
#include "db/sql.h"
#include "steward/db/statements_alerts.h"

#define RULE_COLUMNS                                                                            \
	"r.id, r.name, r.description, r.kind, r.severity, r.metric, r.operator,"                \
	" to_jsonb(r.threshold)::text, to_jsonb(r.duration_seconds)::text, r.server_id,"        \
	" r.application_id, r.enabled, to_jsonb(r.channel_ids)::text,"                          \
	" " SW_SQL_TS("r.created_at") ", " SW_SQL_TS("r.updated_at") ", " SW_SQL_US("r.created_at")

#define CHANNEL_IDS(p) "ARRAY(SELECT jsonb_array_elements_text(" p "::jsonb)::uuid)"

const struct sw_db_stmt sw_db_stmt_alert_rule_create = {
	.name = "alert_rule_create",
	.sql = "WITH r AS (INSERT INTO alert_rules (organization_id, created_by, name, description,"
	       "  kind, severity, metric, operator, threshold, duration_seconds, server_id,"
	       "  application_id, enabled, channel_ids)"
	       "  SELECT $1::uuid, $3::uuid, $4, coalesce($5, ''), $6, $7, $8, $9,"
	       "  $10::double precision, $11::integer, $12::uuid, $13::uuid, $14::boolean,"
	       "  " CHANNEL_IDS("$15") " WHERE " SW_SQL_UNUSED("$2", "uuid") " RETURNING *)"
	       " SELECT " RULE_COLUMNS " FROM r",
	.nparams = 15,
	.audited = SW_DB_AUDITED(SW_DB_ALERT_RULE_ID, SW_DB_ALERT_RULE_NAME),
};

const struct sw_db_stmt sw_db_stmt_alert_rule_get = {
	.name = "alert_rule_get",
	.sql = "SELECT " RULE_COLUMNS " FROM alert_rules r"
	       " WHERE r.organization_id = $1::uuid AND r.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

/* kind ($7) cannot change: the API refuses it before. */
const struct sw_db_stmt sw_db_stmt_alert_rule_update = {
	.name = "alert_rule_update",
	.sql = "WITH r AS (UPDATE alert_rules SET " SW_SQL_SET("name", 1, "$5") ","
	       " " SW_SQL_SET("description", 2, "coalesce($6, '')") ","
	       " " SW_SQL_SET("severity", 4, "$8") ", " SW_SQL_SET("metric", 5, "$9") ","
	       " " SW_SQL_SET("operator", 6, "$10") ","
	       " " SW_SQL_SET("threshold", 7, "$11::double precision") ","
	       " " SW_SQL_SET("duration_seconds", 8, "$12::integer") ","
	       " " SW_SQL_SET("server_id", 9, "$13::uuid") ","
	       " " SW_SQL_SET("application_id", 10, "$14::uuid") ","
	       " " SW_SQL_SET("enabled", 11, "$15::boolean") ","
	       " " SW_SQL_SET("channel_ids", 12, CHANNEL_IDS("$16")) ", updated_at = now()"
	       " WHERE organization_id = $1::uuid AND id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid")
	       " AND " SW_SQL_UNUSED("$7", "text") " RETURNING *)"
	       " SELECT " RULE_COLUMNS " FROM r",
	.nparams = 16,
	.audited = SW_DB_AUDITED(SW_DB_ALERT_RULE_ID, SW_DB_ALERT_RULE_NAME),
};

const struct sw_db_stmt sw_db_stmt_alert_rule_remove = {
	.name = "alert_rule_remove",
	.sql = "DELETE FROM alert_rules WHERE organization_id = $1::uuid AND id = $2::uuid"
	       " AND " SW_SQL_UNUSED("$3", "uuid") " RETURNING id, name",
	.nparams = 3,
	.audited = SW_DB_AUDITED(0, 1), /* id, name */
};

const struct sw_db_stmt sw_db_stmt_alert_rules_list = {
	.name = "alert_rules_list",
	.sql = "SELECT " RULE_COLUMNS " FROM alert_rules r"
	       " WHERE r.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR r.kind = $7) AND ($8::boolean IS NULL OR r.enabled = $8)"
	       SW_SQL_PAGE("r"),
	.nparams = 8,
	.reads_only = true,
};

#define ALERT_COLUMNS                                                                           \
	"a.id, a.rule_id, (SELECT r.name FROM alert_rules r WHERE r.id = a.rule_id), a.severity," \
	" a.status, a.title, a.message, a.server_id, a.application_id,"                          \
	" " SW_SQL_TS("a.created_at") ", " SW_SQL_TS("a.updated_at") ","                         \
	" " SW_SQL_TS("a.resolved_at") ", a.resolved_by, " SW_SQL_US("a.created_at")

const struct sw_db_stmt sw_db_stmt_alert_get = {
	.name = "alert_get",
	.sql = "SELECT " ALERT_COLUMNS " FROM alerts a"
	       " WHERE a.organization_id = $1::uuid AND a.id = $2::uuid AND " SW_SQL_UNUSED("$3", "uuid"),
	.nparams = 3,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_alerts_list = {
	.name = "alerts_list",
	.sql = "SELECT " ALERT_COLUMNS " FROM alerts a"
	       " WHERE a.organization_id = $1::uuid AND " SW_SQL_UNUSED("$2", "uuid")
	       " AND ($7::text IS NULL OR a.status = $7) AND ($8::text IS NULL OR a.severity = $8)"
	       " AND ($9::uuid IS NULL OR a.rule_id = $9::uuid)" SW_SQL_PAGE("a"),
	.nparams = 9,
	.reads_only = true,
};

/* The function's row, expanded under the alias the columns name. */
const struct sw_db_stmt sw_db_stmt_alert_resolve = {
	.name = "alert_resolve",
	.sql = "SELECT " ALERT_COLUMNS ", x.r_changed"
	       " FROM steward_alert_resolve($1::uuid, $2::uuid, $3::uuid) x,"
	       " LATERAL (SELECT (x.r_alert).*) a",
	.nparams = 3,
	/* Recorded only when this call resolved it (c14: SW_DB_ALERT_CHANGED),
	 * with its severity (c3). */
	.audited = &(struct sw_db_audited){ .id_col = SW_DB_ALERT_ID, .name_col = -1,
					    .ncols = SW_DB_ALERT_CHANGED + 1,
					    .metadata_sql = "jsonb_build_object('severity', c3)",
					    .when_sql = "c14" },
};

const struct sw_db_stmt sw_db_stmt_alerts_summary = {
	.name = "alerts_summary",
	.sql = "SELECT count(*), count(*) FILTER (WHERE severity = 'CRITICAL'),"
	       " count(*) FILTER (WHERE severity = 'WARNING')"
	       " FROM alerts WHERE organization_id = $1::uuid AND status = 'OPEN'",
	.nparams = 1,
	.reads_only = true,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_alert_rule_create, &sw_db_stmt_alert_rule_get,  &sw_db_stmt_alert_rule_update,
	&sw_db_stmt_alert_rule_remove, &sw_db_stmt_alert_rules_list, &sw_db_stmt_alert_get,
	&sw_db_stmt_alerts_list,       &sw_db_stmt_alert_resolve,    &sw_db_stmt_alerts_summary,
};
const struct sw_db_stmt_group sw_db_alerts_statements = { list, SW_ARRAY_SIZE(list) };
