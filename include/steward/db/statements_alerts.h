/* Statements of alert rules and alerts (statements_alerts.c; tables,
 * triggers and functions in migration 0011). Parameters follow the
 * resource conventions of src/api/api_internal.h, with these additions:
 *   alert_resolve: $1 organization, $2 id, $3 acting user -> the alert
 *       columns and then whether this call resolved it ('t'), or it was
 *       resolved already ('f'); no row: not the organization's.
 *   alerts_summary: $1 organization -> open, open CRITICAL, open WARNING. */
#ifndef STEWARD_DB_STATEMENTS_ALERTS_H
#define STEWARD_DB_STATEMENTS_ALERTS_H

#include "steward/db/statements.h"

/* Columns of an alert rule row. */
enum sw_db_alert_rule_col {
	SW_DB_ALERT_RULE_ID,
	SW_DB_ALERT_RULE_NAME,
	SW_DB_ALERT_RULE_DESCRIPTION,
	SW_DB_ALERT_RULE_KIND,
	SW_DB_ALERT_RULE_SEVERITY,
	SW_DB_ALERT_RULE_METRIC,         /* NULL but for METRIC_THRESHOLD */
	SW_DB_ALERT_RULE_OPERATOR,       /* NULL but for METRIC_THRESHOLD */
	SW_DB_ALERT_RULE_THRESHOLD,      /* a JSON number, or NULL */
	SW_DB_ALERT_RULE_DURATION,       /* a JSON number, or NULL */
	SW_DB_ALERT_RULE_SERVER_ID,      /* NULL: none (or every server) */
	SW_DB_ALERT_RULE_APPLICATION_ID, /* NULL: none (or every application) */
	SW_DB_ALERT_RULE_ENABLED,
	SW_DB_ALERT_RULE_CHANNEL_IDS,    /* a JSON array of ids */
	SW_DB_ALERT_RULE_CREATED_AT,
	SW_DB_ALERT_RULE_UPDATED_AT,
	SW_DB_ALERT_RULE_US,
};
/* Fields (create $4.., update $5..): name, description, kind, severity,
 * metric, operator, threshold, durationSeconds, serverId, applicationId,
 * enabled, channelIds (JSON array text). */
extern const struct sw_db_stmt sw_db_stmt_alert_rule_create;
extern const struct sw_db_stmt sw_db_stmt_alert_rule_get;
extern const struct sw_db_stmt sw_db_stmt_alert_rule_update;
extern const struct sw_db_stmt sw_db_stmt_alert_rule_remove;
/* Filters $7, $8: kind, enabled. */
extern const struct sw_db_stmt sw_db_stmt_alert_rules_list;

/* Columns of an alert row. */
enum sw_db_alert_col {
	SW_DB_ALERT_ID,
	SW_DB_ALERT_RULE_ID_OF,     /* NULL once its rule is deleted */
	SW_DB_ALERT_RULE_NAME_OF,   /* NULL likewise */
	SW_DB_ALERT_SEVERITY,
	SW_DB_ALERT_STATUS,
	SW_DB_ALERT_TITLE,
	SW_DB_ALERT_MESSAGE,
	SW_DB_ALERT_SERVER_ID,
	SW_DB_ALERT_APPLICATION_ID,
	SW_DB_ALERT_CREATED_AT,
	SW_DB_ALERT_UPDATED_AT,
	SW_DB_ALERT_RESOLVED_AT,    /* NULL while OPEN */
	SW_DB_ALERT_RESOLVED_BY,    /* NULL while OPEN, or resolved by the evaluator */
	SW_DB_ALERT_US,
	SW_DB_ALERT_CHANGED,        /* alert_resolve only */
};
extern const struct sw_db_stmt sw_db_stmt_alert_get;
/* Filters $7..$9: status, severity, ruleId. */
extern const struct sw_db_stmt sw_db_stmt_alerts_list;
extern const struct sw_db_stmt sw_db_stmt_alert_resolve;
extern const struct sw_db_stmt sw_db_stmt_alerts_summary;

#endif
