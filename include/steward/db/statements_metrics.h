/* Statements of metric history (statements_metrics.c, migration 0022):
 * the writer's, on the metrics loop's own blocking connection
 * (src/api/metrics_loop.c), and the history routes' (src/api/metrics.c).
 * Registered all the same, so that every pooled connection prepares them
 * at start-up. Parameters are always bound, in the order each comment
 * gives. */
#ifndef STEWARD_DB_STATEMENTS_METRICS_H
#define STEWARD_DB_STATEMENTS_METRICS_H

#include "steward/db/statements.h"

/* () -> id, application ids as a JSON array: every local server (one per
 * organization) with its applications. */
extern const struct sw_db_stmt sw_db_stmt_metrics_local_servers;
/* () -> "t" when this connection now holds the writer's advisory lock. */
extern const struct sw_db_stmt sw_db_stmt_metrics_writer_lock;
/* ($1 JSON array of minute rows) -> the number inserted. Each row:
 * serverId, applicationId and containerId (null for a host), bucketMs and
 * the columns of metric_minutes by name. Rows of a server or application
 * deleted meanwhile are left out; a (series, bucket) already written is
 * left as it was. */
extern const struct sw_db_stmt sw_db_stmt_metrics_minutes_write;
/* ($1 any time of the hour) -> rows written: steward_metrics_rollup_hour. */
extern const struct sw_db_stmt sw_db_stmt_metrics_rollup_hour;
/* ($1 days back, $2 days ahead) -> partitions made. */
extern const struct sw_db_stmt sw_db_stmt_metrics_partitions;
/* ($1 minute days, $2 hour days) -> names of the partitions dropped. */
extern const struct sw_db_stmt sw_db_stmt_metrics_retention;

/* ($1 organization, $2 server, $3 resolution MINUTE|HOUR, $4 since us,
 * $5 until us) -> zero rows (not the organization's server) or one: the
 * answer's JSON text. */
extern const struct sw_db_stmt sw_db_stmt_metrics_server_history;
/* ($1 organization, $2 application, $3 resolution, $4 since us, $5 until
 * us) -> zero rows or one: the answer's JSON text. */
extern const struct sw_db_stmt sw_db_stmt_metrics_application_history;

#endif
