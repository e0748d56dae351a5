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
/* The remote servers whose agents are ONLINE, as metrics_local_servers. */
extern const struct sw_db_stmt sw_db_stmt_metrics_remote_servers;
/* () -> the control plane's figures as JSON text: databaseBytes,
 * connections, activeConnections (of this database), queues [{queue,
 * depth (QUEUED), running, failed, failedLast24h}] for build, deploy and
 * lifecycle. */
extern const struct sw_db_stmt sw_db_stmt_metrics_platform;
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

/* () -> the enabled METRIC_THRESHOLD rules of local servers and of
 * applications on them. */
enum sw_db_metrics_rule_col {
	SW_DB_MRULE_ID,
	SW_DB_MRULE_ORGANIZATION_ID,
	SW_DB_MRULE_NAME,
	SW_DB_MRULE_SEVERITY,
	SW_DB_MRULE_METRIC,
	SW_DB_MRULE_OPERATOR,           /* ABOVE or BELOW */
	SW_DB_MRULE_THRESHOLD,
	SW_DB_MRULE_DURATION_SECONDS,
	SW_DB_MRULE_SERVER_ID,          /* NULL: an application's rule */
	SW_DB_MRULE_APPLICATION_ID,     /* NULL: a server's rule */
	SW_DB_MRULE_CHANNEL_IDS,        /* a JSON array */
	SW_DB_MRULE_OPEN_ALERT_ID,      /* NULL: none open */
	SW_DB_MRULE_TARGET_SERVER_ID,   /* the server whose sample it is evaluated on */
};
extern const struct sw_db_stmt sw_db_stmt_metrics_alert_rules;
/* ($1 organization, $2 rule, $3 severity, $4 title, $5 message, $6 server,
 * $7 application) -> id: the alert opened, or the one already open. */
extern const struct sw_db_stmt sw_db_stmt_metrics_alert_open;
/* ($1 alert) -> id when it was OPEN and is RESOLVED now; else no row. */
extern const struct sw_db_stmt sw_db_stmt_metrics_alert_resolve;

/* Alert events of the state-based kinds, opened or resolved in one
 * statement each (no parameters); every row: enum sw_db_metrics_event_col. */
enum sw_db_metrics_event_col {
	SW_DB_MEVENT_ORGANIZATION_ID,
	SW_DB_MEVENT_RULE_ID,
	SW_DB_MEVENT_RULE_NAME,
	SW_DB_MEVENT_SEVERITY,
	SW_DB_MEVENT_CHANNEL_IDS,   /* a JSON array */
	SW_DB_MEVENT_ALERT_ID,
	SW_DB_MEVENT_SERVER_ID,     /* NULL: none */
	SW_DB_MEVENT_APPLICATION_ID, /* NULL: none */
	SW_DB_MEVENT_MESSAGE,
};
extern const struct sw_db_stmt sw_db_stmt_metrics_unreachable_open;
extern const struct sw_db_stmt sw_db_stmt_metrics_unreachable_resolve;
extern const struct sw_db_stmt sw_db_stmt_metrics_failed_open;
extern const struct sw_db_stmt sw_db_stmt_metrics_failed_resolve;

#endif
