/* The 15-second metrics loop: samples the control plane's own host (and
 * the containers of every organization's applications on it), and the
 * remote servers whose agents are ONLINE through those agents, every
 * interval, keeps the samples in memory for SW_METRICS_CACHE_MS, folds
 * them into minute rows and writes those to PostgreSQL once a minute is
 * over; hour rows are rolled up from minute rows when an hour is over.
 *
 * Decisions:
 * - One thread of its own (sampling is blocking file reads and the
 *   engine's answers; writing is a blocking libpq connection of its own,
 *   like the job runners'), never an io loop or the worker pool.
 * - One writer among replicas: the loop's connection holds a session
 *   advisory lock (sw_db_stmt_metrics_writer_lock) and only its holder
 *   writes; another replica takes it over within a minute of the holder's
 *   connection going. Minute rows are inserted ON CONFLICT DO NOTHING
 *   besides, so a restart within a minute, or a lock handed over
 *   mid-minute, never counts a minute twice: the first row stays.
 * - Every local server row (one per organization) gets the host's
 *   series; a container goes to the series of its application's server.
 * - Remote servers: the writer (the lock's holder, so one writer per
 *   server across replicas, as for the local host) asks each ONLINE
 *   remote server's agent whose hello listed metrics.sample (another
 *   would answer NOT_AVAILABLE) for metrics.sample every tick, through the
 *   remote driver on the loop's own connection (the agent's session may be
 *   held by another replica: the command crosses through PostgreSQL). The
 *   answer is cut to the organization's containers
 *   (sw_api_metrics_remote_cut, as GET /servers/:id/sample does), becomes
 *   the server's live frame as it is, and is read back into a sample
 *   (sw_metrics_sample_read) to be folded and alerted on exactly as the
 *   local host's. Its minute is this process's tick time, not the agent's
 *   clock. Every server is asked at once, then every answer awaited
 *   (sw_driver_remote_metrics_samples): a tick costs about one round trip
 *   however many agents there are, and agents that do not answer hold it
 *   up to REMOTE_SAMPLE_MS together (the interval, at least 1 s; their
 *   commands expire), not each in turn. Another
 *   replica samples only the remote servers its own live readers watch
 *   (sw_api_metrics_live_watch), for their frames: nothing folded. An agent's sample carries
 *   each container's cumulative CPU time (cpuTimeMicroseconds), folded into
 *   cpu_usec as the local host's is.
 * - Alerts: METRIC_THRESHOLD rules are evaluated by the writer, each on
 *   its target server's sample of the tick (local or remote).
 * - Gauges are folded into sum, count, min and max; counters (network
 *   bytes, container CPU time, OOM kills, restarts) into the delta from
 *   the previous sample of the same series, attributed to the minute of
 *   the later sample. A counter that goes down (a new cgroup, an interface
 *   gone) starts again: its delta is its new value. The first sample of a
 *   series has no delta.
 * - At start-up and every hour: partitions made two days ahead, retention
 *   applied (whole partitions dropped), the last two hours rolled up again
 *   (idempotent), so an hour a dead writer left is completed; the agents'
 *   ended commands are purged (steward_agent_commands_purge).
 * - METRICS_SAMPLE_LOG (STEWARD_ENV=test only): each sample's host figures
 *   as a JSON line appended to that file, so a test can check minute rows
 *   against the samples they came from.
 * - METRICS_MINUTE_MS (STEWARD_ENV=test only, a divisor of 60000): a
 *   shorter "minute", so that a test sees minute rows (and rules' pending
 *   periods, counted in the same minutes) in seconds. Rows are still
 *   folded and written the same way, at multiples of it; hours stay real
 *   hours (a shortened minute never straddles one), rolled up from the
 *   minute rows inside them. */
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
#include "steward/db/statements_servers.h"
#include "steward/deploy/deploy.h"
#include "steward/driver/container_state.h"
#include "steward/driver/driver.h"
#include "steward/driver/remote.h"
#include "steward/db/statements_channels.h"
#include "steward/base/seal.h"
#include "steward/net/mail.h"
#include "steward/notify/notify.h"
#include "steward/metrics/metrics.h"
#include "api/api_internal.h"

#define HOUR_MS 3600000
/* How long the loop waits for a remote server's sample: the interval, at
 * least 1 s (a test's short interval), so that an agent that does not
 * answer delays a tick by at most that. */
#define REMOTE_SAMPLE_MS(interval) ((interval) > 1000 ? (interval) : 1000)
/* Series not seen for this long are forgotten (their last minute was
 * written when it ended). */
#define SERIES_IDLE_MS (3 * 60000)

/* One series' figures within the current minute. */
struct acc {
	char server_id[37];
	char application_id[37]; /* "" for a host */
	char container_id[65];   /* "" for a host */
	int64_t bucket_ms;       /* the minute being folded; 0: none yet */
	int64_t seen_ms;
	unsigned samples;
	double cpu_sum, cpu_min, cpu_max;
	bool have_cpu;
	double mem_sum;
	uint64_t mem_min, mem_max, mem_limit;
	bool have_mem, mem_unlimited;
	double load_sum, load_max;
	uint64_t swap_max, swap_total, disk_max, disk_total;
	bool host;
	/* counter deltas over the minute, and the previous cumulative values */
	uint64_t d_rx, d_tx, d_cpu_usec, d_oom, d_restarts;
	bool have_net;
	bool have_prev, have_prev_net;
	uint64_t p_rx, p_tx, p_cpu_usec, p_oom, p_restarts;
};

/* A sample's figures for one series. */
struct point {
	double cpu;
	bool have_cpu;
	uint64_t mem, mem_limit;
	bool have_mem, mem_unlimited;
	double load1;
	uint64_t swap_used, swap_total, disk_used, disk_total;
	uint64_t rx, tx;
	bool have_net;
	uint64_t cpu_usec, oom, restarts;
};

/* The 60-second cache: each sample of each local server as the SSE frame
 * its live readers get (a hub chunk, shared by reference). */
struct cached {
	int64_t taken_at_ms;
	uint64_t seq;
	char server_id[37];
	struct sw_hub_chunk *frame;
};

/* A remote server's live readers in this process. */
struct watched {
	char server_id[37];
	unsigned readers;
};

/* A local server's live topic in the hub (its id names it). */
struct topic {
	char server_id[37];
	struct sw_hub_topic *t;
};

static struct {
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	bool stop;
	char *conninfo;
	unsigned interval_ms;
	unsigned minute_ms; /* 60000; shorter under METRICS_MINUTE_MS (a test setting) */
	unsigned minute_days, hour_days;
	char *sample_log; /* test setting */
	PGconn *conn;
	bool writer;
	struct acc *accs;
	size_t naccs, cap;
	struct cached cache[SW_METRICS_CACHE_SLOTS];
	size_t ncache;
	uint64_t seq;
	struct topic *topics;
	size_t ntopics;
	int64_t last_hourly_ms;
	/* Remote servers with live readers in this process (L.mu). */
	struct watched *watched;
	size_t nwatched;
} L = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* A remote server's sample (the agent's JSON text) cut to the containers
 * of apps (an array of application ids), with its counts made again and
 * serverId set: for GET /servers/:id/sample and for the loop. Here, below
 * metrics.c and metrics_live.c, so that the three call one way. */
static bool in_apps(json_t *apps, const char *id)
{
	size_t i;
	json_t *v;
	json_array_foreach(apps, i, v)
		if (id && strcmp(json_string_value(v), id) == 0)
			return true;
	return false;
}

json_t *sw_api_metrics_remote_cut(const char *text, json_t *apps, const char *server_id)
{
	json_t *s = json_loads(text, 0, NULL);
	json_t *c = json_object_get(s, "containers");
	json_t *items = json_object_get(c, "items");
	if (!json_is_object(s) || !json_is_array(items)) {
		json_decref(s);
		return NULL;
	}
	json_t *mine = json_array();
	json_int_t running = 0, stopped = 0, unhealthy = 0;
	size_t i;
	json_t *v;
	json_array_foreach(items, i, v) {
		if (!in_apps(apps, json_string_value(json_object_get(v, "applicationId"))))
			continue;
		const char *state = json_string_value(json_object_get(v, "state"));
		const char *health = json_string_value(json_object_get(v, "health"));
		state = state ? state : "";
		if (strcmp(state, "running") == 0 || strcmp(state, "restarting") == 0)
			running++;
		else if (strcmp(state, "paused") != 0)
			stopped++;
		if (health && strcmp(health, "unhealthy") == 0)
			unhealthy++;
		json_array_append(mine, v);
	}
	json_object_set_new(c, "items", mine);
	json_object_set_new(c, "running", json_integer(running));
	json_object_set_new(c, "stopped", json_integer(stopped));
	json_object_set_new(c, "unhealthy", json_integer(unhealthy));
	json_object_set_new(s, "serverId", json_string(server_id));
	json_object_set_new(s, "platform", json_null()); /* the control plane's: on its own host's */
	return s;
}

static int64_t wall_ms(void)
{
	return (int64_t)sw_wall_ms();
}

static uint64_t delta(uint64_t prev, uint64_t cur)
{
	return cur >= prev ? cur - prev : cur;
}

/* ---- the database ---- */

static void db_close(void)
{
	if (L.conn)
		PQfinish(L.conn);
	L.conn = NULL;
	L.writer = false;
}

static PGresult *exec(const struct sw_db_stmt *stmt, const char *const *params, ExecStatusType want)
{
	if (!L.conn) {
		const char *const keys[] = { "dbname", "application_name", "connect_timeout", NULL };
		/* A short connect timeout: a stop waits for a tick in progress. */
		const char *const values[] = { L.conninfo, "stewardd-metrics", "3", NULL };
		L.conn = PQconnectdbParams(keys, values, 1);
		if (!L.conn || PQstatus(L.conn) != CONNECTION_OK) {
			sw_log_warn("metrics: cannot connect to the database: %s",
				    L.conn ? PQerrorMessage(L.conn) : "out of memory");
			db_close();
			return NULL;
		}
	}
	PGresult *res = PQexecParams(L.conn, stmt->sql, stmt->nparams, NULL, params, NULL, NULL, 0);
	if (res && PQresultStatus(res) == want)
		return res;
	sw_log_warn("metrics: %s: %s", stmt->name, res ? PQresultErrorMessage(res) : PQerrorMessage(L.conn));
	PQclear(res);
	if (PQstatus(L.conn) != CONNECTION_OK)
		db_close(); /* the lock went with it */
	return NULL;
}

/* Whether this process is the writer now (takes the lock when free). */
static bool writer(void)
{
	if (L.writer && L.conn && PQstatus(L.conn) == CONNECTION_OK)
		return true;
	PGresult *res = exec(&sw_db_stmt_metrics_writer_lock, NULL, PGRES_TUPLES_OK);
	if (!res)
		return false;
	bool got = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (got && !L.writer)
		sw_log_info("metrics: this process writes the metric history");
	L.writer = got;
	return got;
}

static void hourly(int64_t now_ms)
{
	if (L.last_hourly_ms && now_ms - L.last_hourly_ms < HOUR_MS)
		return;
	if (!writer())
		return;
	L.last_hourly_ms = now_ms;
	const char *p2[2] = { "1", "2" };
	PQclear(exec(&sw_db_stmt_metrics_partitions, p2, PGRES_TUPLES_OK));
	char md[16], hd[16];
	snprintf(md, sizeof(md), "%u", L.minute_days);
	snprintf(hd, sizeof(hd), "%u", L.hour_days);
	const char *pr[2] = { md, hd };
	PGresult *res = exec(&sw_db_stmt_metrics_retention, pr, PGRES_TUPLES_OK);
	for (int i = 0; res && i < PQntuples(res); i++)
		sw_log_info("metrics: retention dropped partition %s", PQgetvalue(res, i, 0));
	PQclear(res);
	/* The agents' ended commands go too (0026: an hour for the control
	 * plane's own, such as this loop's samples; 7 days for a user's). */
	res = exec(&sw_db_stmt_agent_commands_purge, NULL, PGRES_TUPLES_OK);
	if (res && PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") != 0)
		sw_log_info("agents: %s ended commands removed", PQgetvalue(res, 0, 0));
	PQclear(res);
	for (int h = 1; h <= 2; h++) {
		char at[24];
		snprintf(at, sizeof(at), "%" PRId64, now_ms - (int64_t)h * HOUR_MS);
		const char *p1[1] = { at };
		PQclear(exec(&sw_db_stmt_metrics_rollup_hour, p1, PGRES_TUPLES_OK));
	}
}

/* ---- folding ---- */

static void acc_reset_minute(struct acc *a, int64_t bucket_ms)
{
	a->bucket_ms = bucket_ms;
	a->samples = 0;
	a->have_cpu = a->have_mem = a->have_net = false;
	a->cpu_sum = a->mem_sum = a->load_sum = a->load_max = 0;
	a->mem_min = a->mem_max = a->mem_limit = 0;
	a->swap_max = a->swap_total = a->disk_max = a->disk_total = 0;
	a->d_rx = a->d_tx = a->d_cpu_usec = a->d_oom = a->d_restarts = 0;
}

static void u64_member(struct sw_json *j, const char *key, uint64_t v)
{
	sw_json_key(j, key);
	sw_json_int(j, v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static void num_member(struct sw_json *j, const char *key, double v)
{
	sw_json_key(j, key);
	sw_json_double(j, v);
}

static void null_member(struct sw_json *j, const char *key)
{
	sw_json_key(j, key);
	sw_json_null(j);
}

/* The minute row of a as a JSON object (metric_minutes' columns). */
static void acc_write(const struct acc *a, struct sw_json *j)
{
	sw_json_object_begin(j);
	sw_json_key(j, "serverId");
	sw_json_cstr(j, a->server_id);
	sw_json_key(j, "applicationId");
	sw_json_cstr(j, a->host ? NULL : a->application_id);
	sw_json_key(j, "containerId");
	sw_json_cstr(j, a->host ? NULL : a->container_id);
	sw_json_key(j, "bucketMs");
	sw_json_int(j, a->bucket_ms);
	sw_json_key(j, "samples");
	sw_json_int(j, a->samples);
	if (a->have_cpu) {
		num_member(j, "cpu_pct_sum", a->cpu_sum);
		num_member(j, "cpu_pct_min", a->cpu_min);
		num_member(j, "cpu_pct_max", a->cpu_max);
	}
	if (a->have_mem) {
		num_member(j, "mem_sum", a->mem_sum);
		u64_member(j, "mem_min", a->mem_min);
		u64_member(j, "mem_max", a->mem_max);
		if (a->mem_unlimited)
			null_member(j, "mem_limit");
		else
			u64_member(j, "mem_limit", a->mem_limit);
	}
	if (a->host) {
		num_member(j, "load1_sum", a->load_sum);
		num_member(j, "load1_max", a->load_max);
		u64_member(j, "swap_used_max", a->swap_max);
		u64_member(j, "swap_total", a->swap_total);
		u64_member(j, "disk_used_max", a->disk_max);
		u64_member(j, "disk_total", a->disk_total);
	} else {
		u64_member(j, "cpu_usec", a->d_cpu_usec);
		u64_member(j, "oom_kills", a->d_oom);
		u64_member(j, "restarts", a->d_restarts);
	}
	if (a->have_net) {
		u64_member(j, "net_rx_bytes", a->d_rx);
		u64_member(j, "net_tx_bytes", a->d_tx);
	}
	sw_json_object_end(j);
}

/* Writes the rows in buf (a JSON array); false when it could not. */
static bool rows_write(struct sw_buf *buf, size_t nrows)
{
	if (!writer())
		return true; /* another replica writes */
	if (sw_buf_append(buf, "", 1) < 0) /* the NUL libpq wants */
		return false;
	const char *p[1] = { (const char *)buf->data };
	uint64_t t0 = sw_now_ms();
	PGresult *res = exec(&sw_db_stmt_metrics_minutes_write, p, PGRES_TUPLES_OK);
	if (!res)
		return false;
	sw_log_debug("metrics: %zu minute rows given, %s written in %" PRIu64 " ms", nrows,
		     PQgetvalue(res, 0, 0), sw_now_ms() - t0);
	PQclear(res);
	return true;
}

/* Writes every series' minute that ended before bucket_ms, then forgets
 * series idle for SERIES_IDLE_MS. */
static void flush_before(int64_t bucket_ms, int64_t now_ms)
{
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_json_init(&j, &buf);
	sw_json_array_begin(&j);
	size_t n = 0;
	int64_t hour_done = 0;
	for (size_t i = 0; i < L.naccs; i++) {
		struct acc *a = &L.accs[i];
		if (!a->bucket_ms || a->bucket_ms >= bucket_ms)
			continue;
		if (a->samples) {
			acc_write(a, &j);
			n++;
			if (a->bucket_ms / HOUR_MS != bucket_ms / HOUR_MS)
				hour_done = a->bucket_ms;
		}
		acc_reset_minute(a, 0);
	}
	sw_json_array_end(&j);
	if (n && sw_json_finish(&j) == 0 && !rows_write(&buf, n))
		sw_log_warn("metrics: %zu minute rows were not written", n);
	sw_buf_release(&buf);
	if (hour_done && L.writer) {
		char at[24];
		snprintf(at, sizeof(at), "%" PRId64, hour_done);
		const char *p1[1] = { at };
		PQclear(exec(&sw_db_stmt_metrics_rollup_hour, p1, PGRES_TUPLES_OK));
	}
	size_t k = 0;
	for (size_t i = 0; i < L.naccs; i++)
		if (now_ms - L.accs[i].seen_ms < SERIES_IDLE_MS)
			L.accs[k++] = L.accs[i];
	L.naccs = k;
}

static struct acc *acc_find(const char *server, const char *app, const char *container)
{
	for (size_t i = 0; i < L.naccs; i++) {
		struct acc *a = &L.accs[i];
		if (strcmp(a->server_id, server) == 0 && strcmp(a->application_id, app) == 0 &&
		    strcmp(a->container_id, container) == 0)
			return a;
	}
	if (L.naccs == L.cap) {
		size_t cap = L.cap ? L.cap * 2 : 16;
		struct acc *p = realloc(L.accs, cap * sizeof(*p));
		if (!p)
			return NULL;
		L.accs = p;
		L.cap = cap;
	}
	struct acc *a = &L.accs[L.naccs++];
	memset(a, 0, sizeof(*a));
	snprintf(a->server_id, sizeof(a->server_id), "%s", server);
	snprintf(a->application_id, sizeof(a->application_id), "%s", app);
	snprintf(a->container_id, sizeof(a->container_id), "%s", container);
	a->host = !app[0];
	return a;
}

static void fold(struct acc *a, int64_t bucket_ms, int64_t now_ms, const struct point *p)
{
	if (a->bucket_ms != bucket_ms)
		acc_reset_minute(a, bucket_ms);
	a->seen_ms = now_ms;
	a->samples++;
	if (p->have_cpu) {
		a->cpu_sum += p->cpu;
		a->cpu_min = a->have_cpu && a->cpu_min < p->cpu ? a->cpu_min : p->cpu;
		a->cpu_max = a->have_cpu && a->cpu_max > p->cpu ? a->cpu_max : p->cpu;
		a->have_cpu = true;
	}
	if (p->have_mem) {
		a->mem_sum += (double)p->mem;
		a->mem_min = a->have_mem ? SW_MIN(a->mem_min, p->mem) : p->mem;
		a->mem_max = a->have_mem ? SW_MAX(a->mem_max, p->mem) : p->mem;
		a->mem_limit = p->mem_limit;
		a->mem_unlimited = p->mem_unlimited;
		a->have_mem = true;
	}
	a->load_sum += p->load1;
	a->load_max = a->samples > 1 && a->load_max > p->load1 ? a->load_max : p->load1;
	a->swap_max = SW_MAX(a->swap_max, p->swap_used);
	a->swap_total = p->swap_total;
	a->disk_max = SW_MAX(a->disk_max, p->disk_used);
	a->disk_total = p->disk_total;
	if (p->have_net) {
		if (a->have_prev_net) {
			a->d_rx += delta(a->p_rx, p->rx);
			a->d_tx += delta(a->p_tx, p->tx);
		}
		a->have_net = true;
		a->have_prev_net = true;
		a->p_rx = p->rx;
		a->p_tx = p->tx;
	}
	if (a->have_prev) {
		a->d_cpu_usec += delta(a->p_cpu_usec, p->cpu_usec);
		a->d_oom += delta(a->p_oom, p->oom);
		a->d_restarts += delta(a->p_restarts, p->restarts);
	}
	a->have_prev = true;
	a->p_cpu_usec = p->cpu_usec;
	a->p_oom = p->oom;
	a->p_restarts = p->restarts;
}

static void host_point(const struct sw_metrics_sample *s, struct point *p)
{
	memset(p, 0, sizeof(*p));
	p->cpu = s->cpu_pct;
	p->have_cpu = true;
	p->mem = s->memory.used;
	p->mem_limit = s->memory.total;
	p->have_mem = true;
	p->load1 = s->load[0];
	p->swap_used = s->memory.swap_used;
	p->swap_total = s->memory.swap_total;
	for (size_t i = 0; i < s->nfs; i++) {
		p->disk_used += s->fs[i].used;
		p->disk_total += s->fs[i].total;
	}
	for (size_t i = 0; i < s->niface; i++) {
		if (strcmp(s->iface[i].name, "lo") == 0)
			continue;
		p->rx += s->iface[i].rx_bytes;
		p->tx += s->iface[i].tx_bytes;
	}
	p->have_net = true;
}

static void container_point(const struct sw_metrics_container *c, struct point *p)
{
	memset(p, 0, sizeof(*p));
	p->cpu = c->cpu_pct;
	p->have_cpu = c->have_cpu;
	p->mem = c->memory_bytes;
	p->mem_limit = c->memory_limit;
	p->mem_unlimited = c->memory_limit == UINT64_MAX;
	p->have_mem = c->have_memory;
	p->rx = c->net_rx_bytes;
	p->tx = c->net_tx_bytes;
	p->have_net = c->have_net;
	p->cpu_usec = c->cpu_usage_us;
	p->oom = c->have_oom ? c->oom_kills : 0;
	p->restarts = c->ref.restart_count > 0 ? (uint64_t)c->ref.restart_count : 0;
}

static void sample_log(const struct sw_metrics_sample *s, const struct point *p)
{
	if (!L.sample_log)
		return;
	FILE *f = fopen(L.sample_log, "ae");
	if (!f)
		return;
	fprintf(f,
		"{\"takenAtMs\":%" PRId64 ",\"cpu\":%.17g,\"mem\":%" PRIu64 ",\"memTotal\":%" PRIu64
		",\"load1\":%.17g,\"swapUsed\":%" PRIu64 ",\"swapTotal\":%" PRIu64 ",\"diskUsed\":%" PRIu64
		",\"diskTotal\":%" PRIu64 ",\"rx\":%" PRIu64 ",\"tx\":%" PRIu64 ",\"containers\":%zu}\n",
		s->taken_at_ms, p->cpu, p->mem, p->mem_limit, p->load1, p->swap_used, p->swap_total,
		p->disk_used, p->disk_total, p->rx, p->tx, s->ncontainer);
	fclose(f);
}

/* The SSE frame of a sample's JSON text. */
static struct sw_hub_chunk *frame_of_text(const char *text, size_t len, uint64_t seq)
{
	struct sw_buf buf = { 0 };
	struct sw_hub_chunk *c = NULL;
	if (sw_buf_appendf(&buf, "id: %" PRIu64 "\nevent: sample\ndata: ", seq) == 0 &&
	    sw_buf_append(&buf, text, len) == 0 && sw_buf_append_lit(&buf, "\n\n") == 0) {
		c = sw_hub_chunk_new(SW_HUB_LOG, seq, buf.len);
		if (c)
			memcpy(c->data, buf.data, buf.len);
	}
	sw_buf_release(&buf);
	return c;
}

/* The SSE frame of s as server_id's sample: its containers only. */
static struct sw_hub_chunk *frame_new(const struct sw_metrics_sample *s, const char *server_id, json_t *app_server,
				      uint64_t seq)
{
	struct sw_metrics_sample mine = *s;
	mine.container = calloc(s->ncontainer ? s->ncontainer : 1, sizeof(*mine.container));
	if (!mine.container)
		return NULL;
	mine.ncontainer = 0;
	for (size_t i = 0; i < s->ncontainer; i++) {
		const char *owner = json_string_value(json_object_get(app_server, s->container[i].ref.application_id));
		if (owner && strcmp(owner, server_id) == 0)
			mine.container[mine.ncontainer++] = s->container[i];
	}
	sw_metrics_sample_count(&mine);
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_json_init(&j, &buf);
	sw_metrics_sample_write(&mine, server_id, &j);
	free(mine.container);
	struct sw_hub_chunk *c = NULL;
	if (sw_json_finish(&j) == 0)
		c = frame_of_text((const char *)buf.data, buf.len, seq);
	sw_buf_release(&buf);
	return c;
}

static struct sw_hub_topic *topic_of(const char *server_id)
{
	for (size_t i = 0; i < L.ntopics; i++)
		if (strcmp(L.topics[i].server_id, server_id) == 0)
			return L.topics[i].t;
	struct topic *p = realloc(L.topics, (L.ntopics + 1) * sizeof(*p));
	if (!p)
		return NULL;
	L.topics = p;
	struct sw_hub_topic *t = sw_hub_writer_open(server_id, 0);
	if (!t)
		return NULL;
	snprintf(p[L.ntopics].server_id, sizeof(p[L.ntopics].server_id), "%s", server_id);
	p[L.ntopics++].t = t;
	return t;
}

/* Drops cached frames older than SW_METRICS_CACHE_MS, or the oldest when
 * room is needed for n more (a test's short interval). L.mu held. */
static void cache_trim(int64_t now, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < L.ncache; i++) {
		bool keep = now - L.cache[i].taken_at_ms <= SW_METRICS_CACHE_MS &&
			    L.ncache - i + n <= SW_METRICS_CACHE_SLOTS;
		if (keep)
			L.cache[k++] = L.cache[i];
		else
			sw_hub_chunk_unref(L.cache[i].frame);
	}
	L.ncache = k;
}

/* Caches frame c (takes it) as server's sample of the tick seq and
 * publishes it to the server's live readers. */
static void frame_put(const char *server, struct sw_hub_chunk *c, int64_t taken_at_ms, uint64_t seq)
{
	pthread_mutex_lock(&L.mu);
	cache_trim(taken_at_ms, 1);
	sw_hub_chunk_ref(c); /* the cache's */
	L.cache[L.ncache].taken_at_ms = taken_at_ms;
	L.cache[L.ncache].seq = seq;
	snprintf(L.cache[L.ncache].server_id, sizeof(L.cache[L.ncache].server_id), "%s", server);
	L.cache[L.ncache++].frame = c;
	pthread_mutex_unlock(&L.mu);
	struct sw_hub_topic *t = topic_of(server);
	if (t)
		sw_hub_publish(t, c); /* takes ours */
	else
		sw_hub_chunk_unref(c);
}

/* The tick's event id: the sample's time in ms (unique per tick, and
 * still meaningful to a reader resuming on another process). */
static uint64_t tick_seq(int64_t taken_at_ms)
{
	L.seq = L.seq + 1 > (uint64_t)taken_at_ms ? L.seq + 1 : (uint64_t)taken_at_ms;
	return L.seq;
}

/* Caches and publishes the sample of every local server. */
static void frames_publish(const struct sw_metrics_sample *s, const PGresult *servers, json_t *app_server,
			   uint64_t seq)
{
	for (int i = 0; servers && i < PQntuples(servers); i++) {
		const char *server = PQgetvalue(servers, i, 0);
		struct sw_hub_chunk *c = frame_new(s, server, app_server, seq);
		if (c)
			frame_put(server, c, s->taken_at_ms, seq);
	}
}

/* A remote server's sample of this tick, taken through its agent. */
struct remote {
	char server_id[37];
	struct sw_metrics_sample s;
};

/* Folds a remote server's sample: its host, and its containers (all the
 * organization's: the sample was cut to them). */
static void remote_fold(const char *id, const struct sw_metrics_sample *s, int64_t bucket, int64_t now)
{
	struct point p;
	host_point(s, &p);
	struct acc *a = acc_find(id, "", "");
	if (a)
		fold(a, bucket, now, &p);
	for (size_t k = 0; k < s->ncontainer; k++) {
		const struct sw_metrics_container *ct = &s->container[k];
		if (!ct->ref.id[0] || !(a = acc_find(id, ct->ref.application_id, ct->ref.id)))
			continue;
		container_point(ct, &p);
		fold(a, bucket, now, &p);
	}
}

static bool watched(const char *server_id)
{
	bool yes = false;
	pthread_mutex_lock(&L.mu);
	for (size_t i = 0; i < L.nwatched && !yes; i++)
		yes = strcmp(L.watched[i].server_id, server_id) == 0;
	pthread_mutex_unlock(&L.mu);
	return yes;
}

void sw_api_metrics_live_watch(const char *server_id, bool on)
{
	pthread_mutex_lock(&L.mu);
	size_t i = 0;
	while (i < L.nwatched && strcmp(L.watched[i].server_id, server_id) != 0)
		i++;
	if (on && i == L.nwatched) {
		struct watched *p = realloc(L.watched, (L.nwatched + 1) * sizeof(*p));
		if (p) {
			L.watched = p;
			snprintf(p[i].server_id, sizeof(p[i].server_id), "%s", server_id);
			p[i].readers = 0;
			L.nwatched++;
		}
	}
	if (i < L.nwatched) {
		L.watched[i].readers += on ? 1 : 0;
		L.watched[i].readers -= !on && L.watched[i].readers ? 1 : 0;
		if (!L.watched[i].readers)
			L.watched[i] = L.watched[--L.nwatched];
	}
	pthread_mutex_unlock(&L.mu);
}

/* Samples the remote servers whose agents are ONLINE and publishes each
 * one's frame; the writer (one writer per server across replicas) samples
 * them all and folds each one's host and organization's containers,
 * another replica only those its own live readers watch, for them. The
 * agents answer metrics.sample through the remote driver on the loop's connection,
 * wherever their sessions are held. Returns the samples (*n of them). */
static struct remote *remotes_sample(bool writing, int64_t now, int64_t bucket, uint64_t seq, size_t *n)
{
	*n = 0;
	PGresult *servers = exec(&sw_db_stmt_metrics_remote_servers, NULL, PGRES_TUPLES_OK);
	int rows = servers ? PQntuples(servers) : 0;
	struct remote *out = calloc(rows ? (size_t)rows : 1, sizeof(*out));
	struct sw_driver_remote_sample *ask = calloc(rows ? (size_t)rows : 1, sizeof(*ask));
	int *row_of = calloc(rows ? (size_t)rows : 1, sizeof(*row_of));
	size_t asked = 0;
	for (int i = 0; out && ask && row_of && i < rows; i++) {
		const char *id = PQgetvalue(servers, i, 0);
		if (!writing && !watched(id))
			continue;
		ask[asked].server_id = id;
		row_of[asked++] = i;
	}
	/* All of them at once: one round trip per tick, not one per agent. */
	if (asked && L.conn)
		sw_driver_remote_metrics_samples(L.conn, ask, asked, REMOTE_SAMPLE_MS(L.interval_ms));
	for (size_t k = 0; L.conn && k < asked; k++) {
		const char *id = ask[k].server_id;
		json_t *apps = json_loads(PQgetvalue(servers, row_of[k], 1), 0, NULL);
		json_t *cut = NULL;
		if (ask[k].rc == 0 && !(cut = sw_api_metrics_remote_cut(ask[k].json, apps, id)))
			snprintf(ask[k].err, sizeof(ask[k].err), "the agent's sample cannot be read");
		struct remote *r = &out[*n];
		if (cut && sw_metrics_sample_read(cut, &r->s) == 0) {
			snprintf(r->server_id, sizeof(r->server_id), "%s", id);
			r->s.taken_at_ms = now; /* this tick's, whatever the agent's clock says */
			char *frame = json_dumps(cut, JSON_COMPACT);
			struct sw_hub_chunk *c = frame ? frame_of_text(frame, strlen(frame), seq) : NULL;
			if (c)
				frame_put(id, c, now, seq);
			free(frame);
			(*n)++;
			if (writing)
				remote_fold(id, &r->s, bucket, now);
		} else {
			sw_metrics_sample_release(&r->s);
			sw_log_debug("metrics: remote server %s not sampled this tick: %s", id,
				     ask[k].err[0] ? ask[k].err : "no sample");
		}
		json_decref(cut);
		json_decref(apps);
	}
	for (size_t k = 0; k < asked; k++)
		free(ask[k].json);
	free(ask);
	free(row_of);
	PQclear(servers);
	return out;
}

/* One tick: the local servers, one sample, folded; then (the writer) the
 * remote servers through their agents; then the alerts on all of them. */
static void tick(void)
{
	PGresult *servers = exec(&sw_db_stmt_metrics_local_servers, NULL, PGRES_TUPLES_OK);
	json_t *apps = json_array();
	json_t *app_server = json_object();
	for (int i = 0; servers && apps && app_server && i < PQntuples(servers); i++) {
		json_t *list = json_loads(PQgetvalue(servers, i, 1), 0, NULL);
		size_t k;
		json_t *v;
		json_array_foreach(list, k, v) {
			json_array_append(apps, v);
			json_object_set_new(app_server, json_string_value(v), json_string(PQgetvalue(servers, i, 0)));
		}
		json_decref(list);
	}
	struct sw_metrics_sample s;
	memset(&s, 0, sizeof(s));
	int rc = apps ? sw_api_metrics_sample_local(apps, &s) : -ENOMEM;
	if (rc < 0)
		sw_log_debug("metrics: no sample of the local host this tick (%s)", strerror(-rc));
	int64_t now = rc == 0 && s.taken_at_ms ? s.taken_at_ms : wall_ms();
	int64_t bucket = now - now % L.minute_ms;
	uint64_t seq = tick_seq(now);
	if (rc == 0)
		frames_publish(&s, servers, app_server, seq);
	flush_before(bucket, now);
	if (rc == 0) {
		struct point p;
		host_point(&s, &p);
		sample_log(&s, &p);
		for (int i = 0; servers && i < PQntuples(servers); i++) {
			struct acc *a = acc_find(PQgetvalue(servers, i, 0), "", "");
			if (a)
				fold(a, bucket, now, &p);
		}
		for (size_t i = 0; i < s.ncontainer; i++) {
			const struct sw_metrics_container *c = &s.container[i];
			const char *server = json_string_value(json_object_get(app_server, c->ref.application_id));
			if (!server || !c->ref.id[0])
				continue;
			struct acc *a = acc_find(server, c->ref.application_id, c->ref.id);
			if (!a)
				continue;
			container_point(c, &p);
			fold(a, bucket, now, &p);
		}
	}
	size_t nremote = 0;
	struct remote *remotes = remotes_sample(writer(), now, bucket, seq, &nremote);
	if (L.writer) {
		int nlocal = rc == 0 && servers ? PQntuples(servers) : 0;
		struct sw_api_metrics_target *targets =
			calloc((size_t)nlocal + nremote + 1, sizeof(*targets));
		size_t nt = 0;
		for (int i = 0; targets && i < nlocal; i++)
			targets[nt++] = (struct sw_api_metrics_target){ PQgetvalue(servers, i, 0), &s };
		for (size_t i = 0; targets && i < nremote; i++)
			targets[nt++] = (struct sw_api_metrics_target){ remotes[i].server_id, &remotes[i].s };
		if (targets)
			sw_api_metrics_alerts_evaluate(exec, targets, nt, now, L.minute_ms);
		free(targets);
	}
	for (size_t i = 0; i < nremote; i++)
		sw_metrics_sample_release(&remotes[i].s);
	free(remotes);
	sw_metrics_sample_release(&s);
	PQclear(servers);
	json_decref(apps);
	json_decref(app_server);
}

static void *loop_main(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		int64_t now = wall_ms();
		hourly(now);
		tick();
		/* Ticks fall on multiples of the interval, so that every
		 * replica's samples land on the same instants. */
		int64_t next = now - now % L.interval_ms + L.interval_ms;
		pthread_mutex_lock(&L.mu);
		while (!L.stop) {
			int64_t left = next - wall_ms();
			if (left <= 0)
				break;
			struct timespec ts = sw_deadline_after_ms(CLOCK_REALTIME, (uint64_t)left);
			pthread_cond_timedwait(&L.cond, &L.mu, &ts);
		}
		bool stop = L.stop;
		pthread_mutex_unlock(&L.mu);
		if (stop)
			break;
	}
	db_close();
	return arg;
}

int sw_api_metrics_loop_start(const char *conninfo, const struct sw_config *config)
{
	L.conninfo = strdup(conninfo);
	L.interval_ms = config->metrics_interval_ms ? config->metrics_interval_ms : SW_METRICS_INTERVAL_MS;
	L.minute_ms = config->metrics_minute_ms ? config->metrics_minute_ms : 60000;
	L.minute_days = config->metrics_minute_retention_days;
	L.hour_days = config->metrics_retention_days;
	const char *log = getenv("METRICS_SAMPLE_LOG");
	if (config->env == SW_ENV_TEST && log && *log)
		L.sample_log = strdup(log);
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_cond_init(&L.cond, &attr); /* CLOCK_REALTIME: ticks are wall-clock instants */
	pthread_condattr_destroy(&attr);
	if (!L.conninfo)
		return -ENOMEM;
	L.stop = false;
	int r = pthread_create(&L.thread, NULL, loop_main, NULL);
	if (r)
		return -r;
	L.started = true;
	if (L.interval_ms != SW_METRICS_INTERVAL_MS)
		sw_log_warn("metrics: sampling every %u ms (METRICS_SAMPLE_INTERVAL_MS, a test setting)", L.interval_ms);
	if (L.minute_ms != 60000)
		sw_log_warn("metrics: a minute lasts %u ms (METRICS_MINUTE_MS, a test setting)", L.minute_ms);
	return 0;
}

void sw_api_metrics_loop_stop(void)
{
	if (!L.started)
		return;
	pthread_mutex_lock(&L.mu);
	L.stop = true;
	pthread_cond_broadcast(&L.cond);
	pthread_mutex_unlock(&L.mu);
	pthread_join(L.thread, NULL);
	L.started = false;
	for (size_t i = 0; i < L.ncache; i++)
		sw_hub_chunk_unref(L.cache[i].frame);
	L.ncache = 0;
	for (size_t i = 0; i < L.ntopics; i++)
		sw_hub_writer_close(L.topics[i].t, NULL);
	free(L.topics);
	L.topics = NULL;
	L.ntopics = 0;
	free(L.accs);
	L.accs = NULL;
	pthread_mutex_lock(&L.mu);
	free(L.watched);
	L.watched = NULL;
	L.nwatched = 0;
	pthread_mutex_unlock(&L.mu);
	sw_api_metrics_alerts_forget();
	L.naccs = L.cap = 0;
	free(L.conninfo);
	free(L.sample_log);
	L.conninfo = L.sample_log = NULL;
	pthread_cond_destroy(&L.cond);
}

size_t sw_api_metrics_cache_frames(const char *server_id, uint64_t after_seq, struct sw_hub_chunk **out,
				   size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&L.mu);
	for (size_t i = 0; i < L.ncache && n < max; i++) {
		if (L.cache[i].seq > after_seq && strcmp(L.cache[i].server_id, server_id) == 0) {
			sw_hub_chunk_ref(L.cache[i].frame);
			out[n++] = L.cache[i].frame;
		}
	}
	pthread_mutex_unlock(&L.mu);
	return n;
}
