/* Alerts and alert rules.
 *
 * A rule says when an alert opens: METRIC_THRESHOLD (a metric ABOVE or
 * BELOW a threshold for durationSeconds, on one server or one
 * application), SERVER_UNREACHABLE (a server, or any of the
 * organization's, unreachable for durationSeconds) or DEPLOYMENT_FAILED
 * (a deployment of an application, or of any, failed); its severity is
 * the alerts'; channelIds are the notification channels told. The
 * metrics loop (src/api/metrics_loop.c) evaluates the rules of every kind,
 * opens alerts with steward_alert_open() (migration 0011) and resolves
 * them when the condition clears; a member resolves one with POST
 * /alerts/:id/resolve.
 *
 * Paths: the spec gives alerts the one top-level segment /alerts, so rules
 * live under it: /alerts/rules and /alerts/rules/:ruleId. The router takes
 * the first route that matches in table order, so the literal paths
 * (/alerts/summary, /alerts/rules...) come before /alerts/:id below; an
 * alert's id is a UUID, never "rules" or "summary".
 *
 * Decisions (also in the OpenAPI document):
 * - Metrics: CPU_PERCENT, MEMORY_PERCENT, NETWORK_RX_BYTES_PER_SECOND,
 *   NETWORK_TX_BYTES_PER_SECOND (servers and applications), DISK_PERCENT,
 *   SWAP_PERCENT, LOAD_AVERAGE_1M (servers only). Thresholds are numbers
 *   from 0 (percentages: to 100). durationSeconds: 60..86400, default 300
 *   where the kind uses it. A field the rule's kind does not use is a
 *   field error, as is a server, application or channel that is not the
 *   organization's (the table's trigger decides, for creates and partial
 *   updates alike). kind cannot change.
 * - Resolving an alert that is resolved already answers 200 with it
 *   unchanged (resolvedAt and resolvedBy stay those of the first
 *   resolution) and writes no second audit record: the state asked for
 *   holds.
 * - GET /alerts/summary: three counts for the navigation badge: open
 *   (every open alert), openCritical and openWarning (open by severity). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/auth/auth.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_alerts.h"

/* Channels a rule notifies. */
#define RULE_CHANNELS_MAX 10
/* The largest threshold (bytes per second of a fast network fit). */
#define THRESHOLD_MAX 1e15

/* ---- alert rules ---- */

/* A number from 0 to THRESHOLD_MAX (an integer or not). */
static bool threshold_parse(struct sw_http_request *req, json_t *v, const char **ret,
			    const char **ret_msg)
{
	double d = json_is_number(v) ? json_number_value(v) : -1;
	if (!isfinite(d) || d < 0 || d > THRESHOLD_MAX) {
		*ret_msg = "must be a number from 0 to 1000000000000000";
		return false;
	}
	char text[32];
	int n = snprintf(text, sizeof(text), "%.17g", d);
	*ret = sw_arena_strndup(&req->arena, text, (size_t)n);
	return *ret != NULL;
}

/* Up to RULE_CHANNELS_MAX channel ids: the parameter is their JSON array
 * (the statement keeps each once). */
static bool channel_ids_parse(struct sw_http_request *req, json_t *v, const char **ret,
			      const char **ret_msg)
{
	if (!json_is_array(v) || json_array_size(v) > RULE_CHANNELS_MAX) {
		*ret_msg = "must be an array of at most 10 notification channel ids";
		return false;
	}
	size_t i;
	json_t *id;
	json_array_foreach(v, i, id) {
		if (!json_is_string(id) || !sw_is_uuid(sw_str_from(json_string_value(id),
								    json_string_length(id)))) {
			*ret_msg = "must hold notification channel ids (UUIDs)";
			return false;
		}
	}
	/* Strings checked to be UUIDs: jansson writes them back as they are. */
	char *text = json_dumps(v, JSON_COMPACT);
	*ret = text ? sw_arena_strndup(&req->arena, text, strlen(text)) : NULL;
	free(text);
	return *ret != NULL;
}

static const char *const rule_kinds[] = { "METRIC_THRESHOLD", "SERVER_UNREACHABLE",
					  "DEPLOYMENT_FAILED", NULL };
static const char *const severities[] = { "WARNING", "CRITICAL", NULL };
static const char *const metrics[] = { "CPU_PERCENT", "MEMORY_PERCENT", "DISK_PERCENT",
				       "SWAP_PERCENT", "LOAD_AVERAGE_1M",
				       "NETWORK_RX_BYTES_PER_SECOND", "NETWORK_TX_BYTES_PER_SECOND",
				       NULL };
static const char *const operators[] = { "ABOVE", "BELOW", NULL };

#define NULLABLE SW_API_FIELD_NULLABLE
static const struct sw_api_field rule_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
	{ "description", SW_API_FIELD_TEXT, 0, NULL, 0, SW_DESCRIPTION_MAX_LEN },
	{ "kind", SW_API_FIELD_ENUM, SW_API_FIELD_REQUIRED | SW_API_FIELD_CREATE_ONLY,
	  .values = rule_kinds },
	{ "severity", SW_API_FIELD_ENUM, 0, .values = severities, .def = "WARNING" },
	{ "metric", SW_API_FIELD_ENUM, NULLABLE, .values = metrics },
	{ "operator", SW_API_FIELD_ENUM, NULLABLE, .values = operators },
	{ "threshold", SW_API_FIELD_CUSTOM, NULLABLE, .parse = threshold_parse },
	{ "durationSeconds", SW_API_FIELD_INT, NULLABLE, .min = 60, .max = 86400 },
	{ "serverId", SW_API_FIELD_ID, NULLABLE },
	{ "applicationId", SW_API_FIELD_ID, NULLABLE },
	{ "enabled", SW_API_FIELD_BOOL, 0, .def = "t" },
	{ "channelIds", SW_API_FIELD_CUSTOM, 0, .parse = channel_ids_parse, .def = "[]" },
};
static const struct sw_api_field rule_filters[] = {
	{ "kind", SW_API_FIELD_ENUM, 0, .values = rule_kinds },
	{ "enabled", SW_API_FIELD_BOOL },
};
static const struct sw_api_column rule_columns[] = {
	{ "id", SW_DB_ALERT_RULE_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_ALERT_RULE_NAME, SW_API_COL_TEXT },
	{ "description", SW_DB_ALERT_RULE_DESCRIPTION, SW_API_COL_TEXT },
	{ "kind", SW_DB_ALERT_RULE_KIND, SW_API_COL_TEXT },
	{ "severity", SW_DB_ALERT_RULE_SEVERITY, SW_API_COL_TEXT },
	{ "metric", SW_DB_ALERT_RULE_METRIC, SW_API_COL_NULLABLE },
	{ "operator", SW_DB_ALERT_RULE_OPERATOR, SW_API_COL_NULLABLE },
	{ "threshold", SW_DB_ALERT_RULE_THRESHOLD, SW_API_COL_JSON },
	{ "durationSeconds", SW_DB_ALERT_RULE_DURATION, SW_API_COL_JSON },
	{ "serverId", SW_DB_ALERT_RULE_SERVER_ID, SW_API_COL_NULLABLE },
	{ "applicationId", SW_DB_ALERT_RULE_APPLICATION_ID, SW_API_COL_NULLABLE },
	{ "enabled", SW_DB_ALERT_RULE_ENABLED, SW_API_COL_BOOL },
	{ "channelIds", SW_DB_ALERT_RULE_CHANNEL_IDS, SW_API_COL_JSON },
	{ "createdAt", SW_DB_ALERT_RULE_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_ALERT_RULE_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object rule_object = { rule_columns, SW_ARRAY_SIZE(rule_columns), 0 };

static const struct sw_api_resource rule = {
	.type = "alert_rule",
	.fields = rule_fields,
	.nfields = SW_ARRAY_SIZE(rule_fields),
	.shape = &rule_object,
	.create = &sw_db_stmt_alert_rule_create,
	.get = &sw_db_stmt_alert_rule_get,
	.update = &sw_db_stmt_alert_rule_update,
	.remove = &sw_db_stmt_alert_rule_remove,
	.list = &sw_db_stmt_alert_rules_list,
	.filters = rule_filters,
	.nfilters = SW_ARRAY_SIZE(rule_filters),
	.cursor_us_col = SW_DB_ALERT_RULE_US,
	.cursor_id_col = SW_DB_ALERT_RULE_ID,
	.conflict_code = "ALERT_RULE_EXISTS",
	.conflict_message = "The organization already has an alert rule of that name.",
};

static void rules_list(struct sw_http_request *req) { sw_api_resource_list(req, &rule); }
static void rules_create(struct sw_http_request *req) { sw_api_resource_create(req, &rule); }
static void rule_get(struct sw_http_request *req) { sw_api_resource_get(req, &rule); }
static void rule_update(struct sw_http_request *req) { sw_api_resource_update(req, &rule); }
static void rule_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &rule); }

/* ---- alerts ---- */

static const char *const statuses[] = { "OPEN", "RESOLVED", NULL };

static const struct sw_api_field alert_filters[] = {
	{ "status", SW_API_FIELD_ENUM, 0, .values = statuses },
	{ "severity", SW_API_FIELD_ENUM, 0, .values = severities },
	{ "ruleId", SW_API_FIELD_ID },
};
static const struct sw_api_column alert_columns[] = {
	{ "id", SW_DB_ALERT_ID, SW_API_COL_TEXT },
	{ "ruleId", SW_DB_ALERT_RULE_ID_OF, SW_API_COL_NULLABLE },
	{ "ruleName", SW_DB_ALERT_RULE_NAME_OF, SW_API_COL_NULLABLE },
	{ "severity", SW_DB_ALERT_SEVERITY, SW_API_COL_TEXT },
	{ "status", SW_DB_ALERT_STATUS, SW_API_COL_TEXT },
	{ "title", SW_DB_ALERT_TITLE, SW_API_COL_TEXT },
	{ "message", SW_DB_ALERT_MESSAGE, SW_API_COL_TEXT },
	{ "serverId", SW_DB_ALERT_SERVER_ID, SW_API_COL_NULLABLE },
	{ "applicationId", SW_DB_ALERT_APPLICATION_ID, SW_API_COL_NULLABLE },
	{ "createdAt", SW_DB_ALERT_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_ALERT_UPDATED_AT, SW_API_COL_TEXT },
	{ "resolvedAt", SW_DB_ALERT_RESOLVED_AT, SW_API_COL_NULLABLE },
	{ "resolvedBy", SW_DB_ALERT_RESOLVED_BY, SW_API_COL_NULLABLE },
};
static const struct sw_api_object alert_object = { alert_columns, SW_ARRAY_SIZE(alert_columns), 0 };

/* Read-only through the API: alerts are opened by the evaluator. */
static const struct sw_api_resource alert = {
	.type = "alert",
	.shape = &alert_object,
	.get = &sw_db_stmt_alert_get,
	.list = &sw_db_stmt_alerts_list,
	.filters = alert_filters,
	.nfilters = SW_ARRAY_SIZE(alert_filters),
	.cursor_us_col = SW_DB_ALERT_US,
	.cursor_id_col = SW_DB_ALERT_ID,
};

static void alerts_list(struct sw_http_request *req) { sw_api_resource_list(req, &alert); }
static void alert_get(struct sw_http_request *req) { sw_api_resource_get(req, &alert); }

struct resolve {
	struct sw_http_request *req;
	char id[37];
};

static void resolved(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct resolve *r = arg;
	struct sw_http_request *req = r->req;
	if (!sw_api_found(req, res, err))
		return;
	sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &alert_object);
}

static void alert_resolve(struct sw_http_request *req)
{
	struct resolve *r = sw_api_state_new(req, sizeof(*r));
	if (!r || !sw_api_path_ids(req, NULL, r->id))
		return;
	const char *params[3] = { req->principal.organization_id, r->id, req->principal.user_id };
	sw_api_query_audited(req, &sw_db_stmt_alert_resolve, params, 3, "alert.resolved", "alert", NULL,
			     NULL, resolved, r);
}

static const struct sw_api_column summary_columns[] = {
	{ "open", 0, SW_API_COL_JSON },
	{ "openCritical", 1, SW_API_COL_JSON },
	{ "openWarning", 2, SW_API_COL_JSON },
};
static const struct sw_api_object summary_object = { summary_columns,
						     SW_ARRAY_SIZE(summary_columns), 0 };

static void summarised(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (sw_api_found(req, res, err))
		sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &summary_object);
}

static void alerts_summary(struct sw_http_request *req)
{
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_alerts_summary, params, 1, summarised, req);
}

/* ---- routes and schemas ---- */

#define SCOPED " Objects of another organization are not found (404)."
#define LIST_DOC SW_API_DOC_PAGE SCOPED
#define RULE_DOC                                                                               \
	" kind METRIC_THRESHOLD needs metric, operator (ABOVE or BELOW), threshold (0 to 1e15; "  \
	"percentages 0 to 100) and exactly one of serverId or applicationId; metrics: "          \
	"CPU_PERCENT, MEMORY_PERCENT, NETWORK_RX_BYTES_PER_SECOND, NETWORK_TX_BYTES_PER_SECOND "   \
	"(servers and applications), DISK_PERCENT, SWAP_PERCENT, LOAD_AVERAGE_1M (servers only). " \
	"SERVER_UNREACHABLE takes serverId (null: every server of the organization). "            \
	"DEPLOYMENT_FAILED takes applicationId (null: every application) and no durationSeconds. " \
	"durationSeconds: 60 to 86400, default 300. A field the kind does not use is 422 on it; "  \
	"so is a serverId, applicationId or channelIds entry that is not the organization's. "    \
	"severity: WARNING (default) or CRITICAL, the severity of the rule's alerts. channelIds: " \
	"up to 10 notification channels told when an alert opens and when it resolves itself " \
	"(events alert.opened, alert.resolved). Evaluation: METRIC_THRESHOLD rules of the local "   \
	"server and of applications on it are evaluated on every 15-second sample; the alert "     \
	"opens once the condition has held for durationSeconds, and resolves itself once the "     \
	"value has been past the threshold by 5% of it for durationSeconds. For an application, "  \
	"CPU_PERCENT is its containers' sum and MEMORY_PERCENT the highest share of a container's " \
	"limit; its network rates are not measured yet. SERVER_UNREACHABLE opens for a remote "   \
	"server OFFLINE and not heard for durationSeconds (from its last heartbeat) and resolves when it " \
	"is ONLINE again; DEPLOYMENT_FAILED opens when a deployment of the application fails after " \
	"the rule was made and resolves when one succeeds. One open alert per rule and target."

static const int err_list[] = { 422, 503, 0 };
static const int err_create[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_update[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_read[] = { 503, 0 };

#define B SW_HTTP_DEFAULT_MAX_BODY
/* Literal paths before /alerts/:id: the router takes the first match. */
static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/alerts/summary", SW_ACCESS_SESSION, alerts_summary, 0, 0,
	  { "Alert counts for the navigation badge",
	    "Three counts of the organization's open alerts: open (all), openCritical and "
	    "openWarning (by severity).", "Alerts", NULL, "AlertSummary", 200, err_read } },
	{ SW_HTTP_GET, "/alerts/rules", SW_ACCESS_SESSION, rules_list, 0, 0,
	  { "List alert rules", "Filters: ?kind=, ?enabled=true|false." LIST_DOC, "Alerts", NULL,
	    "AlertRuleList", 200, err_list, "limit cursor order kind enabled" } },
	{ SW_HTTP_POST, "/alerts/rules", SW_ACCESS_SESSION, rules_create, B, 0,
	  { "Create an alert rule", "409 ALERT_RULE_EXISTS when the name is taken." RULE_DOC
	    " Audited as alert_rule.created.", "Alerts", "AlertRuleCreate", "AlertRule", 201,
	    err_create } },
	{ SW_HTTP_GET, "/alerts/rules/:ruleId", SW_ACCESS_SESSION, rule_get, 0, 0,
	  { "Get an alert rule", SCOPED, "Alerts", NULL, "AlertRule", 200, err_get } },
	{ SW_HTTP_PATCH, "/alerts/rules/:ruleId", SW_ACCESS_SESSION, rule_update, B, 0,
	  { "Update an alert rule",
	    "Partial: only the members given change; kind cannot. The rule as it would be after "
	    "the change is held to the rules of its kind (to move a METRIC_THRESHOLD rule from a "
	    "server to an application, set serverId to null in the same request)." RULE_DOC SCOPED,
	    "Alerts", "AlertRuleUpdate", "AlertRule", 200, err_update } },
	{ SW_HTTP_DELETE, "/alerts/rules/:ruleId", SW_ACCESS_SESSION, rule_remove, 0, 0,
	  { "Delete an alert rule", "Its alerts stay, with ruleId and ruleName null. A repeat "
	    "answers 404." SCOPED, "Alerts", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_GET, "/alerts", SW_ACCESS_SESSION, alerts_list, 0, 0,
	  { "List alerts", "Filters: ?status=OPEN|RESOLVED, ?severity=WARNING|CRITICAL, ?ruleId=. "
	    "Alerts are opened by the rules' evaluator, not through the API." LIST_DOC, "Alerts",
	    NULL, "AlertList", 200, err_list, "limit cursor order status severity ruleId" } },
	{ SW_HTTP_GET, "/alerts/:id", SW_ACCESS_SESSION, alert_get, 0, 0,
	  { "Get an alert", SCOPED, "Alerts", NULL, "Alert", 200, err_get } },
	{ SW_HTTP_POST, "/alerts/:id/resolve", SW_ACCESS_SESSION, alert_resolve, 0, 0,
	  { "Resolve an alert",
	    "OPEN becomes RESOLVED, with resolvedAt and resolvedBy (the caller). An alert resolved "
	    "already answers 200 unchanged (its first resolution stays) and is not audited again. "
	    "Audited as alert.resolved." SCOPED, "Alerts", NULL, "Alert", 200, err_get } },
};

#define ID "{\"type\":\"string\",\"format\":\"uuid\"}"
#define ID_OR_NULL "{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"}"
#define TS "{\"type\":\"string\",\"format\":\"date-time\"}"
#define SEVERITY "{\"type\":\"string\",\"enum\":[\"WARNING\",\"CRITICAL\"]}"
#define ENUM_OR_NULL(a, b) "{\"type\":[\"string\",\"null\"],\"enum\":[" a "," b ",null]}"
#define METRIC                                                                                 \
	"{\"type\":[\"string\",\"null\"],\"enum\":[\"CPU_PERCENT\",\"MEMORY_PERCENT\","          \
	"\"DISK_PERCENT\",\"SWAP_PERCENT\",\"LOAD_AVERAGE_1M\",\"NETWORK_RX_BYTES_PER_SECOND\","  \
	"\"NETWORK_TX_BYTES_PER_SECOND\",null]}"
#define RULE_KIND                                                                              \
	"{\"type\":\"string\",\"enum\":[\"METRIC_THRESHOLD\",\"SERVER_UNREACHABLE\","            \
	"\"DEPLOYMENT_FAILED\"]}"
#define RULE_WRITABLE                                                                          \
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"                              \
	"\"description\":{\"type\":\"string\",\"maxLength\":500},\"severity\":" SEVERITY ","     \
	"\"metric\":" METRIC ",\"operator\":" ENUM_OR_NULL("\"ABOVE\"", "\"BELOW\"") ","          \
	"\"threshold\":{\"type\":[\"number\",\"null\"],\"minimum\":0,\"maximum\":1e15},"          \
	"\"durationSeconds\":{\"type\":[\"integer\",\"null\"],\"minimum\":60,\"maximum\":86400},"  \
	"\"serverId\":" ID_OR_NULL ",\"applicationId\":" ID_OR_NULL ","                           \
	"\"enabled\":{\"type\":\"boolean\",\"default\":true},"                                    \
	"\"channelIds\":{\"type\":\"array\",\"maxItems\":10,\"items\":" ID "}"
#define RULE_REQUIRED                                                                          \
	"\"id\",\"name\",\"description\",\"kind\",\"severity\",\"metric\",\"operator\","          \
	"\"threshold\",\"durationSeconds\",\"serverId\",\"applicationId\",\"enabled\","            \
	"\"channelIds\",\"createdAt\",\"updatedAt\""
#define ALERT_REQUIRED                                                                         \
	"\"id\",\"ruleId\",\"ruleName\",\"severity\",\"status\",\"title\",\"message\","            \
	"\"serverId\",\"applicationId\",\"createdAt\",\"updatedAt\",\"resolvedAt\",\"resolvedBy\""

static const char schemas[] = "{"
	"\"AlertRule\":{\"type\":\"object\",\"required\":[" RULE_REQUIRED "],\"properties\":{"
	"\"id\":" ID ",\"kind\":" RULE_KIND "," RULE_WRITABLE ","
	"\"createdAt\":" TS ",\"updatedAt\":" TS "}},"
	"\"AlertRuleList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/AlertRule\"}},"
	"\"AlertRuleCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"kind\"],\"properties\":{\"kind\":" RULE_KIND "," RULE_WRITABLE "}},"
	"\"AlertRuleUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"properties\":{" RULE_WRITABLE "}},"
	"\"Alert\":{\"type\":\"object\",\"required\":[" ALERT_REQUIRED "],\"properties\":{"
	"\"id\":" ID ",\"ruleId\":" ID_OR_NULL ",\"ruleName\":{\"type\":[\"string\",\"null\"]},"
	"\"severity\":" SEVERITY ",\"status\":{\"type\":\"string\",\"enum\":[\"OPEN\",\"RESOLVED\"]},"
	"\"title\":{\"type\":\"string\",\"maxLength\":200},"
	"\"message\":{\"type\":\"string\",\"maxLength\":2000},"
	"\"serverId\":" ID_OR_NULL ",\"applicationId\":" ID_OR_NULL ","
	"\"createdAt\":" TS ",\"updatedAt\":" TS ","
	"\"resolvedAt\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"
	"\"resolvedBy\":" ID_OR_NULL "}},"
	"\"AlertList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Alert\"}},"
	"\"AlertSummary\":{\"type\":\"object\",\"required\":[\"open\",\"openCritical\",\"openWarning\"],"
	"\"properties\":{\"open\":{\"type\":\"integer\",\"minimum\":0},"
	"\"openCritical\":{\"type\":\"integer\",\"minimum\":0},"
	"\"openWarning\":{\"type\":\"integer\",\"minimum\":0}}}"
	"}";

const struct sw_api_route_group sw_api_alerts_group = { routes, SW_ARRAY_SIZE(routes), schemas };
