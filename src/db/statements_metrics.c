/* SQL of metric history (statements_metrics.h; tables and functions in
 * migration 0022). */
#include "steward/db/statements_metrics.h"
#include "steward/db/statements_servers.h"

const struct sw_db_stmt sw_db_stmt_metrics_local_servers = {
	.name = "metrics_local_servers",
	.sql = "SELECT s.id, (SELECT coalesce(json_agg(a.id ORDER BY a.id), '[]'::json) FROM applications a"
	       " WHERE a.server_id = s.id AND a.organization_id = s.organization_id)::text"
	       " FROM servers s WHERE s.is_local ORDER BY s.id",
	.nparams = 0,
};

/* Session-level: held for the life of the writer's connection, so one
 * replica writes at a time and another takes over when it goes. */
const struct sw_db_stmt sw_db_stmt_metrics_remote_servers = {
	.name = "metrics_remote_servers",
	.sql = "SELECT s.id, (SELECT coalesce(json_agg(a.id ORDER BY a.id), '[]'::json) FROM applications a"
	       " WHERE a.server_id = s.id AND a.organization_id = s.organization_id)::text"
	       " FROM servers s WHERE NOT s.is_local AND " SW_DB_SERVER_STATUS_SQL " = 'ONLINE'"
	       " AND s.agent_capabilities ? 'metrics.sample' ORDER BY s.id",
	.nparams = 0,
};

const struct sw_db_stmt sw_db_stmt_metrics_writer_lock = {
	.name = "metrics_writer_lock",
	.sql = "SELECT pg_try_advisory_lock(hashtextextended('steward.metrics.writer', 0))",
	.nparams = 0,
};

#define MINUTE_COLUMNS                                                                             \
	"samples, cpu_pct_sum, cpu_pct_min, cpu_pct_max, mem_sum, mem_min, mem_max, mem_limit,"   \
	" load1_sum, load1_max, swap_used_max, swap_total, disk_used_max, disk_total,"             \
	" net_rx_bytes, net_tx_bytes, cpu_usec, oom_kills, restarts"

const struct sw_db_stmt sw_db_stmt_metrics_minutes_write = {
	.name = "metrics_minutes_write",
	.sql = "WITH w AS (INSERT INTO metric_minutes (series_id, bucket, " MINUTE_COLUMNS ")"
	       " SELECT steward_metric_series(r.\"serverId\", r.\"applicationId\", r.\"containerId\"),"
	       " to_timestamp(r.\"bucketMs\" / 1000.0), " MINUTE_COLUMNS
	       " FROM jsonb_to_recordset($1::jsonb) AS r(\"serverId\" uuid, \"applicationId\" uuid,"
	       " \"containerId\" text, \"bucketMs\" bigint, samples integer, cpu_pct_sum float8,"
	       " cpu_pct_min float8, cpu_pct_max float8, mem_sum float8, mem_min bigint, mem_max bigint,"
	       " mem_limit bigint, load1_sum float8, load1_max float8, swap_used_max bigint,"
	       " swap_total bigint, disk_used_max bigint, disk_total bigint, net_rx_bytes bigint,"
	       " net_tx_bytes bigint, cpu_usec bigint, oom_kills integer, restarts integer)"
	       " WHERE EXISTS (SELECT 1 FROM servers s WHERE s.id = r.\"serverId\")"
	       " AND (r.\"applicationId\" IS NULL OR EXISTS (SELECT 1 FROM applications a"
	       "      WHERE a.id = r.\"applicationId\" AND a.server_id = r.\"serverId\"))"
	       " ON CONFLICT (series_id, bucket) DO NOTHING RETURNING 1)"
	       " SELECT count(*) FROM w",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_metrics_rollup_hour = {
	.name = "metrics_rollup_hour",
	.sql = "SELECT steward_metrics_rollup_hour(to_timestamp($1::bigint / 1000.0))",
	.nparams = 1,
};

const struct sw_db_stmt sw_db_stmt_metrics_partitions = {
	.name = "metrics_partitions",
	.sql = "SELECT steward_metrics_partitions((now() AT TIME ZONE 'UTC')::date - $1::integer,"
	       " (now() AT TIME ZONE 'UTC')::date + $2::integer)",
	.nparams = 2,
};

const struct sw_db_stmt sw_db_stmt_metrics_retention = {
	.name = "metrics_retention",
	.sql = "SELECT steward_metrics_retention($1::integer, $2::integer)",
	.nparams = 2,
};

#define TS(x) "to_char((" x ") AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"

/* The rows of the series in s (a CTE: id) at resolution $3 from $4 to $5
 * (microseconds): hour rows where rolled up, else the hour aggregated
 * from its minute rows (the current hour, or one a writer has not rolled
 * up yet), the same sums, counts, minima, maxima and deltas. */
#define ROWS_CTE                                                                                   \
	" h AS (SELECT m.* FROM metric_hours m JOIN s ON s.id = m.series_id"                         \
	"  WHERE $3::text = 'HOUR' AND m.bucket >= to_timestamp($4::bigint / 1e6)"                  \
	"  AND m.bucket < to_timestamp($5::bigint / 1e6)),"                                          \
	" hm AS (SELECT m.series_id, date_trunc('hour', m.bucket, 'UTC') AS bucket, sum(samples)::integer AS samples," \
	"  sum(cpu_pct_sum) AS cpu_pct_sum, min(cpu_pct_min) AS cpu_pct_min, max(cpu_pct_max) AS cpu_pct_max," \
	"  sum(mem_sum) AS mem_sum, min(mem_min) AS mem_min, max(mem_max) AS mem_max,"              \
	"  max(mem_limit) AS mem_limit, sum(load1_sum) AS load1_sum, max(load1_max) AS load1_max,"   \
	"  max(swap_used_max) AS swap_used_max, max(swap_total) AS swap_total,"                      \
	"  max(disk_used_max) AS disk_used_max, max(disk_total) AS disk_total,"                      \
	"  sum(net_rx_bytes)::bigint AS net_rx_bytes, sum(net_tx_bytes)::bigint AS net_tx_bytes,"    \
	"  sum(cpu_usec)::bigint AS cpu_usec, sum(oom_kills)::integer AS oom_kills,"                 \
	"  sum(restarts)::integer AS restarts"                                                       \
	"  FROM metric_minutes m JOIN s ON s.id = m.series_id"                                       \
	"  WHERE $3::text = 'HOUR' AND m.bucket >= to_timestamp($4::bigint / 1e6)"                  \
	"  AND m.bucket < to_timestamp($5::bigint / 1e6) GROUP BY 1, 2),"                            \
	" r AS (SELECT m.* FROM metric_minutes m JOIN s ON s.id = m.series_id"                       \
	"  WHERE $3::text = 'MINUTE' AND m.bucket >= to_timestamp($4::bigint / 1e6)"                \
	"  AND m.bucket < to_timestamp($5::bigint / 1e6)"                                            \
	"  UNION ALL SELECT * FROM h"                                                                \
	"  UNION ALL SELECT hm.series_id, hm.bucket, hm.samples, hm.cpu_pct_sum, hm.cpu_pct_min,"    \
	"  hm.cpu_pct_max, hm.mem_sum, hm.mem_min, hm.mem_max, hm.mem_limit, hm.load1_sum,"         \
	"  hm.load1_max, hm.swap_used_max, hm.swap_total, hm.disk_used_max, hm.disk_total,"         \
	"  hm.net_rx_bytes, hm.net_tx_bytes, hm.cpu_usec, hm.oom_kills, hm.restarts FROM hm"        \
	"  WHERE NOT EXISTS (SELECT 1 FROM h WHERE h.series_id = hm.series_id AND h.bucket = hm.bucket))"

#define RANGE_MEMBERS                                                                              \
	"'resolution', $3::text, 'since', " TS("to_timestamp($4::bigint / 1e6)") ","                   \
	" 'until', " TS("to_timestamp($5::bigint / 1e6)")

#define PCT3(prefix) "json_build_object('avg', round((" prefix "_sum / r.samples)::numeric, 2),"   \
	" 'min', round(" prefix "_min::numeric, 2), 'max', round(" prefix "_max::numeric, 2))"

const struct sw_db_stmt sw_db_stmt_metrics_server_history = {
	.name = "metrics_server_history",
	.sql = "WITH srv AS (SELECT id FROM servers WHERE id = $2::uuid AND organization_id = $1::uuid),"
	       " s AS (SELECT ms.id FROM metric_series ms JOIN srv ON srv.id = ms.server_id"
	       "  WHERE ms.application_id IS NULL),"
	       ROWS_CTE
	       " SELECT json_build_object('serverId', srv.id, " RANGE_MEMBERS ","
	       " 'points', coalesce((SELECT json_agg(json_build_object("
	       "  'bucket', " TS("r.bucket") ", 'samples', r.samples,"
	       "  'cpuPercent', " PCT3("r.cpu_pct") ","
	       "  'memoryUsedBytes', json_build_object('avg', round(r.mem_sum / r.samples), 'min', r.mem_min,"
	       "   'max', r.mem_max),"
	       "  'memoryTotalBytes', r.mem_limit,"
	       "  'load1', json_build_object('avg', round((r.load1_sum / r.samples)::numeric, 2),"
	       "   'max', round(r.load1_max::numeric, 2)),"
	       "  'swapUsedBytesMax', r.swap_used_max, 'swapTotalBytes', r.swap_total,"
	       "  'diskUsedBytesMax', r.disk_used_max, 'diskTotalBytes', r.disk_total,"
	       "  'networkRxBytes', r.net_rx_bytes, 'networkTxBytes', r.net_tx_bytes)"
	       "  ORDER BY r.bucket) FROM r), '[]'::json))::text FROM srv",
	.nparams = 5,
	.reads_only = true,
};

const struct sw_db_stmt sw_db_stmt_metrics_application_history = {
	.name = "metrics_application_history",
	.sql = "WITH app AS (SELECT id FROM applications WHERE id = $2::uuid AND organization_id = $1::uuid),"
	       " s AS (SELECT ms.id, ms.container_id FROM metric_series ms JOIN app ON app.id = ms.application_id),"
	       ROWS_CTE
	       " SELECT json_build_object('applicationId', app.id, " RANGE_MEMBERS ","
	       " 'points', coalesce((SELECT json_agg(json_build_object("
	       "  'bucket', " TS("r.bucket") ", 'containerId', s.container_id, 'samples', r.samples,"
	       "  'cpuPercent', " PCT3("r.cpu_pct") ","
	       "  'cpuSeconds', round((r.cpu_usec / 1e6)::numeric, 3),"
	       "  'memoryBytes', json_build_object('avg', round(r.mem_sum / r.samples), 'min', r.mem_min,"
	       "   'max', r.mem_max),"
	       "  'memoryLimitBytes', r.mem_limit,"
	       "  'networkRxBytes', r.net_rx_bytes, 'networkTxBytes', r.net_tx_bytes,"
	       "  'oomKills', r.oom_kills, 'restarts', r.restarts)"
	       "  ORDER BY r.bucket, s.container_id) FROM r JOIN s ON s.id = r.series_id), '[]'::json))::text"
	       " FROM app",
	.nparams = 5,
	.reads_only = true,
};

/* Enabled METRIC_THRESHOLD rules watching a local server or an
 * application on one; columns: enum sw_db_metrics_rule_col. */
const struct sw_db_stmt sw_db_stmt_metrics_alert_rules = {
	.name = "metrics_alert_rules",
	.sql = "SELECT r.id, r.organization_id, r.name, r.severity, r.metric, r.operator, r.threshold,"
	       " r.duration_seconds, r.server_id, r.application_id, array_to_json(r.channel_ids)::text,"
	       " (SELECT a.id FROM alerts a WHERE a.rule_id = r.id AND a.status = 'OPEN' LIMIT 1), s.id"
	       " FROM alert_rules r"
	       " LEFT JOIN applications ap ON ap.id = r.application_id"
	       " JOIN servers s ON s.id = coalesce(r.server_id, ap.server_id)"
	       " WHERE r.enabled AND r.kind = 'METRIC_THRESHOLD' ORDER BY r.id",
	.nparams = 0,
};

const struct sw_db_stmt sw_db_stmt_metrics_alert_open = {
	.name = "metrics_alert_open",
	.sql = "SELECT a.id FROM steward_alert_open($1::uuid, $2::uuid, $3::text, $4::text, $5::text,"
	       " $6::uuid, $7::uuid) a",
	.nparams = 7,
};

const struct sw_db_stmt sw_db_stmt_metrics_alert_resolve = {
	.name = "metrics_alert_resolve",
	.sql = "UPDATE alerts SET status = 'RESOLVED', resolved_at = now(), updated_at = now()"
	       " WHERE id = $1::uuid AND status = 'OPEN' RETURNING id",
	.nparams = 1,
};

/* Columns of an alert event (enum sw_db_metrics_event_col). */
#define EVENT_COLUMNS(rule, alert, server, app, message)                                          \
	" " rule ".organization_id, " rule ".id, " rule ".name, " rule ".severity,"                  \
	" array_to_json(" rule ".channel_ids)::text, " alert ", " server ", " app ", " message

/* SERVER_UNREACHABLE: a server OFFLINE (as reads see it) and not heard
 * for the rule's durationSeconds, measured from its last heartbeat. The
 * local server is the control plane's own host: never unreachable to the
 * process that evaluates, so neither opened nor resolved here. */
const struct sw_db_stmt sw_db_stmt_metrics_unreachable_open = {
	.name = "metrics_unreachable_open",
	.sql = "WITH due AS (SELECT r.*, s.id AS server, 'Server ' || s.name || ' has not been heard since '"
	       "  || coalesce(to_char(s.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC', 'it was added')"
	       "  AS message FROM alert_rules r JOIN servers s ON s.organization_id = r.organization_id"
	       "  AND s.id = coalesce(r.server_id, s.id) AND NOT s.is_local"
	       "  WHERE r.enabled AND r.kind = 'SERVER_UNREACHABLE' AND " SW_DB_SERVER_STATUS_SQL " = 'OFFLINE'"
	       "  AND coalesce(s.last_seen_at, s.created_at) < now() - make_interval(secs => r.duration_seconds)"
	       "  AND NOT EXISTS (SELECT 1 FROM alerts a WHERE a.rule_id = r.id AND a.server_id = s.id"
	       "   AND a.status = 'OPEN'))"
	       " SELECT" EVENT_COLUMNS("d", "(steward_alert_open(d.organization_id, d.id, d.severity, d.name,"
	       "  d.message, d.server, NULL)).id", "d.server", "NULL::uuid", "d.message") " FROM due d",
	.nparams = 0,
};

/* SERVER_UNREACHABLE alerts whose server is ONLINE again: resolved. */
const struct sw_db_stmt sw_db_stmt_metrics_unreachable_resolve = {
	.name = "metrics_unreachable_resolve",
	.sql = "WITH done AS (UPDATE alerts a SET status = 'RESOLVED', resolved_at = now(), updated_at = now()"
	       " FROM alert_rules r, servers s WHERE a.rule_id = r.id AND r.kind = 'SERVER_UNREACHABLE'"
	       " AND a.status = 'OPEN' AND s.id = a.server_id AND NOT s.is_local"
	       " AND " SW_DB_SERVER_STATUS_SQL " = 'ONLINE'"
	       " RETURNING a.id, a.rule_id, a.server_id, s.name AS server_name)"
	       " SELECT" EVENT_COLUMNS("r", "d.id", "d.server_id", "NULL::uuid",
	       "'Server ' || d.server_name || ' is connected again'")
	       " FROM done d JOIN alert_rules r ON r.id = d.rule_id",
	.nparams = 0,
};

/* DEPLOYMENT_FAILED: a deployment of the rule's application (or of any)
 * that failed after the rule was made and after the last alert of the
 * rule and application opened or was resolved; none open. */
const struct sw_db_stmt sw_db_stmt_metrics_failed_open = {
	.name = "metrics_failed_open",
	.sql = "WITH due AS (SELECT DISTINCT ON (r.id, ap.id) r.*, ap.id AS app,"
	       "  'Deployment #' || d.number || ' of ' || ap.name || ' failed'"
	       "  || coalesce(': ' || left(d.error_message, 200), '') AS message"
	       "  FROM alert_rules r JOIN applications ap ON ap.organization_id = r.organization_id"
	       "  AND (r.application_id IS NULL OR r.application_id = ap.id)"
	       "  JOIN deployments d ON d.application_id = ap.id AND d.status = 'FAILED'"
	       "  WHERE r.enabled AND r.kind = 'DEPLOYMENT_FAILED'"
	       "  AND coalesce(d.finished_at, d.updated_at) > greatest(r.created_at, (SELECT"
	       "   max(greatest(a.created_at, a.resolved_at)) FROM alerts a WHERE a.rule_id = r.id"
	       "   AND a.application_id = ap.id))"
	       "  AND NOT EXISTS (SELECT 1 FROM alerts a WHERE a.rule_id = r.id AND a.application_id = ap.id"
	       "   AND a.status = 'OPEN')"
	       "  ORDER BY r.id, ap.id, coalesce(d.finished_at, d.updated_at) DESC)"
	       " SELECT" EVENT_COLUMNS("d", "(steward_alert_open(d.organization_id, d.id, d.severity, d.name,"
	       "  d.message, NULL, d.app)).id", "NULL::uuid", "d.app", "d.message") " FROM due d",
	.nparams = 0,
};

/* DEPLOYMENT_FAILED alerts whose application has deployed successfully
 * since: resolved. */
const struct sw_db_stmt sw_db_stmt_metrics_failed_resolve = {
	.name = "metrics_failed_resolve",
	.sql = "WITH done AS (UPDATE alerts a SET status = 'RESOLVED', resolved_at = now(), updated_at = now()"
	       " FROM alert_rules r WHERE a.rule_id = r.id AND r.kind = 'DEPLOYMENT_FAILED' AND a.status = 'OPEN'"
	       " AND EXISTS (SELECT 1 FROM deployments d WHERE d.application_id = a.application_id"
	       "  AND d.status = 'SUCCEEDED' AND coalesce(d.finished_at, d.updated_at) > a.created_at)"
	       " RETURNING a.id, a.rule_id, a.application_id)"
	       " SELECT" EVENT_COLUMNS("r", "d.id", "NULL::uuid", "d.application_id",
	       "'The application deployed successfully since'")
	       " FROM done d JOIN alert_rules r ON r.id = d.rule_id",
	.nparams = 0,
};

const struct sw_db_stmt sw_db_stmt_metrics_platform = {
	.name = "metrics_platform",
	.sql = "SELECT json_build_object("
	       " 'databaseBytes', pg_database_size(current_database()),"
	       " 'connections', (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()),"
	       " 'activeConnections', (SELECT count(*) FROM pg_stat_activity"
	       "   WHERE datname = current_database() AND state = 'active'),"
	       " 'queues', (SELECT json_agg(json_build_object("
	       "   'queue', q,"
	       "   'depth', (SELECT count(*) FROM jobs WHERE queue = q AND status = 'QUEUED'),"
	       "   'running', (SELECT count(*) FROM jobs WHERE queue = q AND status = 'RUNNING'),"
	       "   'failed', (SELECT count(*) FROM jobs WHERE queue = q AND status = 'FAILED'),"
	       "   'failedLast24h', (SELECT count(*) FROM jobs WHERE queue = q AND status = 'FAILED'"
	       "     AND finished_at > now() - interval '24 hours')) ORDER BY q)"
	       "   FROM unnest(ARRAY['build', 'deploy', 'lifecycle']) q))::text",
	.nparams = 0,
};

static const struct sw_db_stmt *const list[] = {
	&sw_db_stmt_metrics_local_servers,   &sw_db_stmt_metrics_remote_servers,
	&sw_db_stmt_metrics_writer_lock,
	&sw_db_stmt_metrics_minutes_write,   &sw_db_stmt_metrics_rollup_hour,
	&sw_db_stmt_metrics_partitions,      &sw_db_stmt_metrics_retention,
	&sw_db_stmt_metrics_server_history,  &sw_db_stmt_metrics_application_history,
	&sw_db_stmt_metrics_alert_rules,     &sw_db_stmt_metrics_alert_open,
	&sw_db_stmt_metrics_alert_resolve,   &sw_db_stmt_metrics_unreachable_open,
	&sw_db_stmt_metrics_unreachable_resolve, &sw_db_stmt_metrics_failed_open,
	&sw_db_stmt_metrics_failed_resolve, &sw_db_stmt_metrics_platform,
};

const struct sw_db_stmt_group sw_db_metrics_statements = { list, SW_ARRAY_SIZE(list) };
