/* Alerts raised from metrics, evaluated by the process that writes the
 * metric history (metrics_loop.c) on every tick: METRIC_THRESHOLD rules,
 * each on its target server's sample (the local host's, or a remote
 * server's taken through its agent), with their pending period and hysteresis, SERVER_UNREACHABLE and
 * DEPLOYMENT_FAILED from the database's state, and the notifications of
 * each alert opened or resolved. The loop hands in its statement runner,
 * so this file does not call back into it. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include "steward/api/api.h"
#include "steward/base/buf.h"
#include "steward/base/json.h"
#include "steward/base/log.h"
#include "steward/db/statements_metrics.h"
#include "steward/deploy/deploy.h"
#include "steward/db/statements_channels.h"
#include "steward/base/seal.h"
#include "steward/net/mail.h"
#include "steward/notify/notify.h"
#include "steward/metrics/metrics.h"
#include "api/api_internal.h"


/* The writer's statement runner, as the current evaluation was handed it
 * (one thread evaluates). */
static sw_api_metrics_exec exec;

/* ---- alerts: METRIC_THRESHOLD rules on every sample ----
 *
 * The writer evaluates (one replica: the one holding the lock). A rule's
 * condition must hold for its durationSeconds (pending) before its alert
 * opens; an open alert resolves once the value has been past the
 * threshold by the hysteresis margin (ALERT_HYSTERESIS of the threshold)
 * for durationSeconds too, so a value hovering at the threshold neither
 * flaps nor floods the channels. Pending times live in memory: a new
 * writer starts the pending period again. One open alert per rule and
 * target is the unique index alerts_one_open (0011). Opening and resolving
 * notify the rule's enabled channels through src/notify (signed webhooks,
 * Slack, Discord, with its retries) and mail. */

#define ALERT_HYSTERESIS 0.05

struct rule_state {
	char rule_id[37];
	int64_t breach_since_ms; /* 0: not breaching */
	int64_t clear_since_ms;  /* 0: not clear */
	bool seen;
};

static struct rule_state *rules;
static size_t nrules, rules_cap;

static struct rule_state *rule_state(const char *id)
{
	for (size_t i = 0; i < nrules; i++)
		if (strcmp(rules[i].rule_id, id) == 0)
			return &rules[i];
	if (nrules == rules_cap) {
		size_t cap = rules_cap ? rules_cap * 2 : 8;
		struct rule_state *p = realloc(rules, cap * sizeof(*p));
		if (!p)
			return NULL;
		rules = p;
		rules_cap = cap;
	}
	struct rule_state *r = &rules[nrules++];
	memset(r, 0, sizeof(*r));
	snprintf(r->rule_id, sizeof(r->rule_id), "%s", id);
	return r;
}

/* The rule's metric in sample s: of the host, or of the application's
 * containers (CPU: their sum; memory: the highest share of its limit).
 * false when it is not measured. */
static bool metric_value(const struct sw_metrics_sample *s, const char *metric, const char *application_id,
			 double *ret)
{
	if (application_id) {
		double cpu = 0, mem = -1;
		bool any = false;
		for (size_t i = 0; i < s->ncontainer; i++) {
			const struct sw_metrics_container *c = &s->container[i];
			if (strcmp(c->ref.application_id, application_id) != 0)
				continue;
			if (c->have_cpu) {
				cpu += c->cpu_pct;
				any = true;
			}
			if (c->have_memory && c->memory_limit && c->memory_limit != UINT64_MAX) {
				double share = 100.0 * (double)c->memory_bytes / (double)c->memory_limit;
				mem = share > mem ? share : mem;
			}
		}
		if (strcmp(metric, "CPU_PERCENT") == 0 && any)
			*ret = cpu;
		else if (strcmp(metric, "MEMORY_PERCENT") == 0 && mem >= 0)
			*ret = mem;
		else
			return false;
		return true;
	}
	if (strcmp(metric, "CPU_PERCENT") == 0) {
		*ret = s->cpu_pct;
	} else if (strcmp(metric, "MEMORY_PERCENT") == 0) {
		if (!s->memory.total)
			return false;
		*ret = 100.0 * (double)s->memory.used / (double)s->memory.total;
	} else if (strcmp(metric, "SWAP_PERCENT") == 0) {
		*ret = s->memory.swap_total ? 100.0 * (double)s->memory.swap_used / (double)s->memory.swap_total : 0;
	} else if (strcmp(metric, "DISK_PERCENT") == 0) {
		double worst = 0;
		for (size_t i = 0; i < s->nfs; i++)
			if (s->fs[i].total) {
				double p = 100.0 * (double)s->fs[i].used / (double)s->fs[i].total;
				worst = p > worst ? p : worst;
			}
		*ret = worst;
	} else if (strcmp(metric, "LOAD_AVERAGE_1M") == 0) {
		*ret = s->load[0];
	} else {
		bool rx = strcmp(metric, "NETWORK_RX_BYTES_PER_SECOND") == 0;
		double sum = 0;
		for (size_t i = 0; i < s->niface; i++)
			if (strcmp(s->iface[i].name, "lo") != 0)
				sum += rx ? s->iface[i].rx_bytes_per_s : s->iface[i].tx_bytes_per_s;
		*ret = sum;
	}
	return true;
}

/* What a channel is told about an alert. */
struct alert_event {
	const char *org, *rule_id, *rule_name, *severity, *channel_ids; /* channel_ids: a JSON array */
	const char *alert_id, *server_id, *application_id;              /* NULL: none */
	const char *text;
	bool opened;
	const char *metric; /* METRIC_THRESHOLD: the metric and its value */
	double value;
};

/* Tells the rule's enabled channels that the alert opened or resolved. */
static void alert_notify(const struct alert_event *e)
{
	const char *type = e->opened ? "alert.opened" : "alert.resolved";
	char title[256];
	snprintf(title, sizeof(title), "%s: %s", e->opened ? "Alert" : "Resolved", e->rule_name);
	struct sw_buf data = { 0 };
	struct sw_json j;
	sw_json_init(&j, &data);
	sw_json_object_begin(&j);
	sw_json_key(&j, "alertId");
	sw_json_cstr(&j, e->alert_id);
	sw_json_key(&j, "ruleId");
	sw_json_cstr(&j, e->rule_id);
	sw_json_key(&j, "status");
	sw_json_cstr(&j, e->opened ? "OPEN" : "RESOLVED");
	sw_json_key(&j, "severity");
	sw_json_cstr(&j, e->severity);
	if (e->metric) {
		sw_json_key(&j, "metric");
		sw_json_cstr(&j, e->metric);
		sw_json_key(&j, "value");
		sw_json_double(&j, e->value);
	}
	sw_json_key(&j, "serverId");
	sw_json_cstr(&j, e->server_id);
	sw_json_key(&j, "applicationId");
	sw_json_cstr(&j, e->application_id);
	sw_json_object_end(&j);
	if (sw_json_finish(&j) < 0 || sw_buf_append(&data, "", 1) < 0) {
		sw_buf_release(&data);
		return;
	}
	json_t *ids = json_loads(e->channel_ids, 0, NULL);
	size_t k;
	json_t *v;
	json_array_foreach(ids, k, v) {
		const char *p[2] = { e->org, json_string_value(v) };
		PGresult *c = exec(&sw_db_stmt_channel_delivery, p, PGRES_TUPLES_OK);
		if (!c || PQntuples(c) != 1) {
			PQclear(c);
			continue;
		}
		const char *kind = PQgetvalue(c, 0, SW_DB_DELIVERY_KIND);
		if (strcmp(kind, "EMAIL") == 0) {
			json_t *to = json_loads(PQgetvalue(c, 0, SW_DB_DELIVERY_ADDRESSES), 0, NULL);
			size_t i;
			json_t *a;
			char subject[300];
			snprintf(subject, sizeof(subject), "Steward: %s", title);
			json_array_foreach(to, i, a) {
				if (sw_mail_configured() && json_is_string(a))
					sw_mail_send(json_string_value(a), subject, e->text);
			}
			json_decref(to);
			PQclear(c);
			continue;
		}
		char delivery[37], aad[SW_SEAL_AAD_MAX], secret[128] = "";
		size_t secret_len = 0;
		struct sw_buf body = { 0 };
		const struct sw_notify_event ev = {
			.delivery_id = delivery, .type = type, .wall_ms = sw_wall_ms(),
			.title = title, .text = e->text, .data_json = data.data,
		};
		enum sw_notify_kind nk = strcmp(kind, "SLACK") == 0	? SW_NOTIFY_SLACK
					 : strcmp(kind, "DISCORD") == 0 ? SW_NOTIFY_DISCORD
									: SW_NOTIFY_WEBHOOK;
		sw_seal_aad_channel(aad, PQgetvalue(c, 0, SW_DB_DELIVERY_ID));
		int r = sw_notify_uuid(delivery);
		r = r ?: sw_notify_payload(&body, nk, &ev);
		if (r == 0 && !PQgetisnull(c, 0, SW_DB_DELIVERY_SECRET))
			r = sw_unseal(PQgetvalue(c, 0, SW_DB_DELIVERY_SECRET), aad, secret, sizeof(secret) - 1,
				      &secret_len);
		if (r == 0) {
			const struct sw_notify_request nr = {
				.channel_id = PQgetvalue(c, 0, SW_DB_DELIVERY_ID),
				.delivery_id = delivery,
				.event_type = type,
				.url = PQgetvalue(c, 0, SW_DB_DELIVERY_URL),
				.allow_private = strcmp(PQgetvalue(c, 0, SW_DB_DELIVERY_ALLOW_PRIVATE), "t") == 0,
				.secret = sw_str_from(secret, secret_len),
				.body = sw_str_from(body.data, body.len),
			};
			r = sw_notify_post(&nr);
		}
		if (r < 0)
			sw_log_warn("metrics: alert %s: channel %s not notified (%s)", e->alert_id,
				    PQgetvalue(c, 0, SW_DB_DELIVERY_ID), strerror(-r));
		OPENSSL_cleanse(secret, sizeof(secret));
		sw_buf_release(&body);
		PQclear(c);
	}
	json_decref(ids);
	sw_buf_release(&data);
}

/* A METRIC_THRESHOLD rule's row (sw_db_stmt_metrics_alert_rules) and its
 * alert, as an event. */
static void threshold_notify(const PGresult *rule, int row, const char *alert_id, bool opened, double value)
{
	char text[512];
	snprintf(text, sizeof(text), "%s %s %s (now %.2f, for %s s).", PQgetvalue(rule, row, SW_DB_MRULE_METRIC),
		 PQgetvalue(rule, row, SW_DB_MRULE_OPERATOR), PQgetvalue(rule, row, SW_DB_MRULE_THRESHOLD), value,
		 PQgetvalue(rule, row, SW_DB_MRULE_DURATION_SECONDS));
	const struct alert_event e = {
		.org = PQgetvalue(rule, row, SW_DB_MRULE_ORGANIZATION_ID),
		.rule_id = PQgetvalue(rule, row, SW_DB_MRULE_ID),
		.rule_name = PQgetvalue(rule, row, SW_DB_MRULE_NAME),
		.severity = PQgetvalue(rule, row, SW_DB_MRULE_SEVERITY),
		.channel_ids = PQgetvalue(rule, row, SW_DB_MRULE_CHANNEL_IDS),
		.alert_id = alert_id,
		.server_id = sw_api_nullable(rule, row, SW_DB_MRULE_SERVER_ID),
		.application_id = sw_api_nullable(rule, row, SW_DB_MRULE_APPLICATION_ID),
		.text = text,
		.opened = opened,
		.metric = PQgetvalue(rule, row, SW_DB_MRULE_METRIC),
		.value = value,
	};
	alert_notify(&e);
}

/* SERVER_UNREACHABLE and DEPLOYMENT_FAILED: opened and resolved from the
 * database's state by stmt (no memory needed), each row notified. */
static void state_alerts(const struct sw_db_stmt *stmt, bool opened)
{
	PGresult *res = exec(stmt, NULL, PGRES_TUPLES_OK);
	for (int row = 0; res && row < PQntuples(res); row++) {
		const struct alert_event e = {
			.org = PQgetvalue(res, row, SW_DB_MEVENT_ORGANIZATION_ID),
			.rule_id = PQgetvalue(res, row, SW_DB_MEVENT_RULE_ID),
			.rule_name = PQgetvalue(res, row, SW_DB_MEVENT_RULE_NAME),
			.severity = PQgetvalue(res, row, SW_DB_MEVENT_SEVERITY),
			.channel_ids = PQgetvalue(res, row, SW_DB_MEVENT_CHANNEL_IDS),
			.alert_id = PQgetvalue(res, row, SW_DB_MEVENT_ALERT_ID),
			.server_id = sw_api_nullable(res, row, SW_DB_MEVENT_SERVER_ID),
			.application_id = sw_api_nullable(res, row, SW_DB_MEVENT_APPLICATION_ID),
			.text = PQgetvalue(res, row, SW_DB_MEVENT_MESSAGE),
			.opened = opened,
		};
		sw_log_info("metrics: alert %s %s (rule %s)", e.alert_id, opened ? "opened" : "resolved", e.rule_id);
		alert_notify(&e);
	}
	PQclear(res);
}

void sw_api_metrics_alerts_evaluate(sw_api_metrics_exec run, const struct sw_api_metrics_target *targets,
				    size_t ntargets, int64_t now, unsigned minute_ms)
{
	exec = run;
	state_alerts(&sw_db_stmt_metrics_unreachable_open, true);
	state_alerts(&sw_db_stmt_metrics_unreachable_resolve, false);
	state_alerts(&sw_db_stmt_metrics_failed_open, true);
	state_alerts(&sw_db_stmt_metrics_failed_resolve, false);
	PGresult *res = exec(&sw_db_stmt_metrics_alert_rules, NULL, PGRES_TUPLES_OK);
	if (!res)
		return;
	for (size_t i = 0; i < nrules; i++)
		rules[i].seen = false;
	for (int row = 0; row < PQntuples(res); row++) {
		struct rule_state *st = rule_state(PQgetvalue(res, row, SW_DB_MRULE_ID));
		if (!st)
			continue;
		st->seen = true;
		const char *app = sw_api_nullable(res, row, SW_DB_MRULE_APPLICATION_ID);
		const char *target = PQgetvalue(res, row, SW_DB_MRULE_TARGET_SERVER_ID);
		const struct sw_metrics_sample *s = NULL;
		for (size_t t = 0; t < ntargets && !s; t++)
			if (strcmp(targets[t].server_id, target) == 0)
				s = targets[t].sample;
		double v;
		if (!s || !metric_value(s, PQgetvalue(res, row, SW_DB_MRULE_METRIC), app, &v)) {
			st->breach_since_ms = st->clear_since_ms = 0;
			continue;
		}
		double thr = strtod(PQgetvalue(res, row, SW_DB_MRULE_THRESHOLD), NULL);
		/* durationSeconds in the loop's minutes: seconds but under a test's
		 * shortened minute (METRICS_MINUTE_MS). */
		int64_t hold_ms = (int64_t)atoi(PQgetvalue(res, row, SW_DB_MRULE_DURATION_SECONDS)) * minute_ms / 60;
		bool above = strcmp(PQgetvalue(res, row, SW_DB_MRULE_OPERATOR), "ABOVE") == 0;
		double margin = thr * ALERT_HYSTERESIS;
		bool breach = above ? v > thr : v < thr;
		bool clear = above ? v < thr - margin : v > thr + margin;
		bool open = !PQgetisnull(res, row, SW_DB_MRULE_OPEN_ALERT_ID);
		st->breach_since_ms = breach ? (st->breach_since_ms ? st->breach_since_ms : now) : 0;
		st->clear_since_ms = clear ? (st->clear_since_ms ? st->clear_since_ms : now) : 0;
		if (!open && breach && now - st->breach_since_ms >= hold_ms) {
			char title[200], message[300];
			snprintf(title, sizeof(title), "%.180s", PQgetvalue(res, row, SW_DB_MRULE_NAME));
			snprintf(message, sizeof(message), "%s %s %s: %.2f for %s s",
				 PQgetvalue(res, row, SW_DB_MRULE_METRIC), above ? "above" : "below",
				 PQgetvalue(res, row, SW_DB_MRULE_THRESHOLD), v,
				 PQgetvalue(res, row, SW_DB_MRULE_DURATION_SECONDS));
			const char *p[7] = {
				PQgetvalue(res, row, SW_DB_MRULE_ORGANIZATION_ID), PQgetvalue(res, row, SW_DB_MRULE_ID),
				PQgetvalue(res, row, SW_DB_MRULE_SEVERITY), title, message,
				sw_api_nullable(res, row, SW_DB_MRULE_SERVER_ID),
				app,
			};
			PGresult *a = exec(&sw_db_stmt_metrics_alert_open, p, PGRES_TUPLES_OK);
			if (a && PQntuples(a) == 1) {
				sw_log_info("metrics: alert %s opened (rule %s)", PQgetvalue(a, 0, 0), st->rule_id);
				threshold_notify(res, row, PQgetvalue(a, 0, 0), true, v);
			}
			PQclear(a);
		} else if (open && clear && now - st->clear_since_ms >= hold_ms) {
			const char *p[1] = { PQgetvalue(res, row, SW_DB_MRULE_OPEN_ALERT_ID) };
			PGresult *a = exec(&sw_db_stmt_metrics_alert_resolve, p, PGRES_TUPLES_OK);
			if (a && PQntuples(a) == 1) {
				sw_log_info("metrics: alert %s resolved (rule %s)", p[0], st->rule_id);
				threshold_notify(res, row, p[0], false, v);
			}
			PQclear(a);
		}
	}
	PQclear(res);
	size_t k = 0;
	for (size_t i = 0; i < nrules; i++)
		if (rules[i].seen)
			rules[k++] = rules[i];
	nrules = k;
}

void sw_api_metrics_alerts_forget(void)
{
	free(rules);
	rules = NULL;
	nrules = rules_cap = 0;
}
