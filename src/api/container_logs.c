/* GET /applications/:id/logs: the lines of an application's container(s),
 * read through the engine's logs API (driver.h, "a container's logs"), and
 * with follow=true a Server-Sent Events stream of them as they are written.
 *
 * Decisions (also in the OpenAPI document):
 * - Which containers: the application's running ones (newest first, at
 *   most SW_CONTAINER_LOGS_CONTAINERS_MAX: a blue-green switch runs two);
 *   with none running, the newest one whatever its state (the logs of a
 *   container that crashed are the ones most wanted). None at all: 409
 *   NO_CONTAINER.
 * - Secrets: every line passes the build log's scrubber
 *   (steward/base/scrub.h: the application's variable values of
 *   SW_VARIABLE_SCRUB_MIN_LEN bytes or more become "***"), then becomes
 *   valid UTF-8, before it is put into any answer. Values are unsealed on
 *   the worker, and wiped once the scrubbers hold their copies.
 * - Without follow, the answer is one JSON document: each container's last
 *   `tail` lines (from `since` when given), merged by the engine's
 *   timestamps, at most SW_CONTAINER_LOGS_ANSWER_MAX bytes of lines
 *   (truncated: true past it). The driver's calls are blocking: they run
 *   on the worker pool (503 when it is full).
 * - With follow, the mechanism of the deployments' live log: a thread per
 *   container runs the engine's follow call (it blocks until the container
 *   stops) and publishes each line, pre-framed as one SSE event, on a hub
 *   topic of its own (a random UUID: it never meets a deployment's or a
 *   server's); the stream is that topic's reader. Threads are bounded per
 *   process (SW_CONTAINER_LOGS_FOLLOWERS_MAX, 503 past it). A reader more
 *   than SW_HUB_MAX_LAG_BYTES behind is cut. A client that leaves cancels
 *   its threads (the engine call notices within about a second).
 * - There is no resuming: a stream sends no event ids, and reconnecting
 *   starts again from `tail`/`since` (a client resumes with since=<the last
 *   line's time>).
 * - A remote server: its agent's container.logs through the remote
 *   driver (the command's output carries the raw lines back; they are
 *   scrubbed and cleaned here, as a local read's). Its agent not
 *   connected: 409 SERVER_NOT_CONNECTED. With follow, each follower
 *   thread opens its own database connection and awaits a container.logs
 *   with follow (protocol 2): the agent follows on a thread of its own
 *   (at most SW_AGENT_FOLLOWS_MAX per server: past it the container's
 *   `end` event says the agent is busy), its lines cross replicas as
 *   output chunks, and the reader's leaving cancels the wait, which sends
 *   the agent a cancel through whichever replica holds it. A follow lasts
 *   at most SW_AGENT_FOLLOW_MAX_MS (the command's expiry). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "steward/base/sha.h"
#include "steward/api/api.h"
#include "steward/base/json.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/scrub.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/base/timeparse.h"
#include "steward/deploy/deploy.h"
#include "steward/driver/driver.h"
#include "steward/driver/remote.h"
#include "steward/http/query.h"
#include "steward/io/io.h"
#include "api/api_internal.h"
#include "steward/db/statements_runtime.h"

#define LIST_CAP 64 /* containers of the application read from the engine */

static const int errors[] = { 404, 409, 422, 502, 503, 0 };

/* ---- the followers' threads: counted, so a stop waits for them ---- */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned running;
} threads = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 };

/* One container followed: shared by its thread and the stream's reader,
 * freed by the last of the two. */
struct follower {
	unsigned refs; /* atomic */
	bool cancel;   /* atomic: the reader left */
	char topic_id[37];
	struct sw_hub_topic *topic;
	char container[SW_DRIVER_ID_MAX];
	bool remote;
	char server_id[37]; /* remote: its server */
	unsigned tail;
	int64_t since_us;
	struct sw_scrubber *scrubber;
	uint64_t offset; /* bytes published: the hub's measure of a reader's lag */
	struct sw_buf frame;
};

static void follower_unref(struct follower *f)
{
	if (!f || __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	sw_scrubber_free(f->scrubber);
	sw_buf_release(&f->frame);
	free(f);
}

/* ---- a line as JSON ---- */

/* {"containerId", "stream", "time", "text"} of l, scrubbed and cleaned,
 * appended to b. 0 or -ENOMEM. */
static int line_json(struct sw_buf *b, const struct sw_scrubber *scrubber, const char *container,
		     const struct sw_container_log_line *l)
{
	size_t sn = 0;
	char *s = sw_scrubber_apply(scrubber, l->text, l->len, &sn);
	char *clean = s ? malloc(3 * sn + 1) : NULL;
	int rc = -ENOMEM;
	if (clean) {
		size_t cn = sw_utf8_clean(s, sn, clean);
		char time[SW_RFC3339_MS_LEN + 1] = "";
		if (l->time_us)
			sw_rfc3339_format_ms(l->time_us, time);
		struct sw_json j;
		sw_json_init(&j, b);
		sw_json_object_begin(&j);
		sw_json_key(&j, "containerId");
		sw_json_cstr(&j, container);
		sw_json_key(&j, "stream");
		sw_json_cstr(&j, l->stream == 2 ? "stderr" : "stdout");
		sw_json_key(&j, "time");
		sw_json_cstr(&j, time[0] ? time : NULL);
		sw_json_key(&j, "text");
		sw_json_string(&j, sw_str_from(clean, cn));
		sw_json_object_end(&j);
		rc = sw_json_finish(&j);
		sw_wipe(clean, cn);
	}
	if (s)
		sw_wipe(s, sn); /* it had the text around the secrets */
	free(s);
	free(clean);
	return rc;
}

/* ---- following (a thread per container) ---- */

/* The engine's since is whole seconds: the lines of that second written
 * before since are not asked for. */
static bool before_since(const struct sw_container_log_line *l, int64_t since_us)
{
	return since_us > 0 && l->time_us && l->time_us < since_us;
}

static int follow_line(void *arg, const struct sw_container_log_line *l)
{
	struct follower *f = arg;
	if (before_since(l, f->since_us))
		return 0;
	f->frame.len = 0;
	if (sw_buf_append_lit(&f->frame, "event: log\ndata: ") < 0 ||
	    line_json(&f->frame, f->scrubber, f->container, l) < 0 ||
	    sw_buf_append_lit(&f->frame, "\n\n") < 0)
		return -ENOMEM;
	f->offset += f->frame.len;
	struct sw_hub_chunk *c = sw_hub_chunk_new(SW_HUB_LOG, f->offset, f->frame.len);
	if (!c)
		return -ENOMEM;
	memcpy(c->data, f->frame.data, f->frame.len);
	sw_hub_publish(f->topic, c);
	return 0;
}

/* The "end" event: the container's log ended (it stopped), or why it
 * could not be read further. */
static struct sw_hub_chunk *end_chunk(const struct follower *f, const char *error)
{
	struct sw_buf b = { 0 };
	struct sw_json j;
	sw_buf_append_lit(&b, "event: end\ndata: ");
	sw_json_init(&j, &b);
	sw_json_object_begin(&j);
	sw_json_key(&j, "containerId");
	sw_json_cstr(&j, f->container);
	sw_json_key(&j, "error");
	sw_json_cstr(&j, error);
	sw_json_object_end(&j);
	struct sw_hub_chunk *c = NULL;
	if (sw_json_finish(&j) == 0 && sw_buf_append_lit(&b, "\n\n") == 0 &&
	    (c = sw_hub_chunk_new(SW_HUB_STATUS, f->offset, b.len)))
		memcpy(c->data, b.data, b.len);
	sw_buf_release(&b);
	return c;
}

static void *follow_main(void *arg)
{
	struct follower *f = arg;
	char err[256] = "";
	struct sw_container_logs_query q = { .container = f->container, .tail = f->tail,
					     .since_us = f->since_us, .follow = true,
					     .cancel = &f->cancel };
	struct sw_driver *d = NULL;
	PGconn *conn = NULL;
	int rc = -EIO;
	if (!f->remote) {
		d = sw_api_local_driver();
		if (!d)
			snprintf(err, sizeof(err), "the local server's driver is not configured");
	} else if (PQstatus(conn = PQconnectdb(sw_api_runtime_conninfo())) != CONNECTION_OK) {
		snprintf(err, sizeof(err), "the database cannot be reached");
	} else {
		/* The agent's container.logs with follow, over this thread's
		 * own connection; the reader's leaving cancels it there. */
		rc = sw_driver_remote_new(conn, f->server_id, NULL, 0, &d, err, sizeof(err));
	}
	if (d && (!f->remote || rc == 0))
		rc = sw_driver_container_logs(d, &q, follow_line, f, err, sizeof(err));
	if (f->remote) {
		sw_driver_free(d);
		PQfinish(conn);
	}
	/* The engine's sentences hold no variable values (an id, a status). */
	sw_hub_writer_close(f->topic, end_chunk(f, rc && rc != -ECANCELED ? err : NULL));
	follower_unref(f);
	pthread_mutex_lock(&threads.mu);
	threads.running--;
	pthread_cond_broadcast(&threads.cv);
	pthread_mutex_unlock(&threads.mu);
	return NULL;
}

void sw_api_container_logs_stop(unsigned timeout_ms)
{
	struct timespec until = sw_deadline_after_ms(CLOCK_REALTIME, timeout_ms);
	pthread_mutex_lock(&threads.mu);
	while (threads.running)
		if (pthread_cond_timedwait(&threads.cv, &threads.mu, &until) == ETIMEDOUT)
			break;
	if (threads.running)
		sw_log_warn("container logs: %u follower threads still running at the stop", threads.running);
	pthread_mutex_unlock(&threads.mu);
}

/* ---- the stream's reader (its loop's thread) ---- */

struct reader {
	struct sw_http_stream *s;
	size_t n;
	size_t ended;
	struct sw_hub_reader *hub[SW_CONTAINER_LOGS_CONTAINERS_MAX];
	struct follower *f[SW_CONTAINER_LOGS_CONTAINERS_MAX];
	bool done[SW_CONTAINER_LOGS_CONTAINERS_MAX];
};

static void reader_free(struct reader *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->f[i])
			__atomic_store_n(&r->f[i]->cancel, true, __ATOMIC_RELAXED);
		sw_hub_detach(r->hub[i]);
		follower_unref(r->f[i]);
	}
	free(r);
}

static void on_closed(void *arg, int reason)
{
	(void)reason;
	reader_free(arg);
}

static const struct sw_http_stream_ops stream_ops = {
	.closed = on_closed,
	.heartbeat_ms = SW_SSE_HEARTBEAT_MS,
	.heartbeat = ": ping\n\n",
};

static void on_chunk(void *arg)
{
	struct reader *r = arg;
	for (size_t i = 0; i < r->n; i++) {
		struct sw_hub_chunk *c;
		while (!r->done[i] && (c = sw_hub_next(r->hub[i]))) {
			if (c->kind != SW_HUB_LOG && c->kind != SW_HUB_STATUS) {
				sw_hub_chunk_unref(c);
				continue;
			}
			if (c->kind == SW_HUB_STATUS) {
				r->done[i] = true;
				r->ended++;
			}
			/* A failure means closed() is coming. */
			if (sw_http_stream_write(r->s, c->data, c->len, &c->ref) < 0)
				return;
		}
		if (!r->done[i] && sw_hub_lag(r->hub[i]) > SW_HUB_MAX_LAG_BYTES) {
			sw_http_stream_abort(r->s); /* closed() never runs after it */
			reader_free(r);
			return;
		}
	}
	if (r->ended == r->n) {
		sw_http_stream_end(r->s);
		reader_free(r);
	}
}

/* ---- the request ---- */

struct op {
	struct sw_worker_job job;
	struct sw_http_request *req;
	char app_id[37];
	json_t *variables; /* [[key, sealed], ...] */
	unsigned tail;
	int64_t since_us;
	bool follow;
	bool remote;
	char server_id[37];
	/* results */
	int rc;
	bool not_connected;
	char err[256];
	bool no_container;
	struct sw_container_info *chosen;
	size_t nchosen;
	struct sw_scrubber *scrubber[SW_CONTAINER_LOGS_CONTAINERS_MAX];
	struct sw_buf lines; /* without follow: the answer's lines, JSON objects */
	struct entry {
		int64_t time_us;
		size_t at, len; /* in lines */
		size_t order;
	} *entries;
	size_t nentries, entries_cap;
	bool truncated;
	size_t current; /* the container being read */
};

static void op_free(struct op *o)
{
	json_decref(o->variables);
	free(o->chosen);
	for (size_t i = 0; i < SW_CONTAINER_LOGS_CONTAINERS_MAX; i++)
		sw_scrubber_free(o->scrubber[i]);
	if (o->lines.data)
		sw_wipe(o->lines.data, o->lines.len);
	sw_buf_release(&o->lines);
	free(o->entries);
	free(o);
}

/* The scrubber of the application's values, one per chosen container. */
static int scrubbers_make(struct op *o)
{
	size_t n = json_array_size(o->variables), nv = 0;
	char **values = calloc(n ? n : 1, sizeof(*values));
	int rc = values ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *kv = json_array_get(o->variables, i);
		const char *key = json_string_value(json_array_get(kv, 0));
		const char *sealed = json_string_value(json_array_get(kv, 1));
		if (!key || !sealed)
			continue;
		size_t cap = strlen(sealed) + 1, vlen = 0;
		char aad[SW_SEAL_AAD_MAX];
		sw_seal_aad_variable(aad, o->app_id, key);
		char *v = malloc(cap);
		if (!v) {
			rc = -ENOMEM;
			break;
		}
		if (sw_unseal(sealed, aad, v, cap, &vlen) < 0) {
			/* A value that does not open cannot reach a container
			 * either (its deployment failed on it). */
			sw_wipe(v, cap);
			free(v);
			continue;
		}
		v[vlen] = '\0';
		values[nv++] = v;
	}
	for (size_t i = 0; i < o->nchosen && rc == 0; i++)
		if (!(o->scrubber[i] = sw_scrubber_new((const char *const *)values, nv)))
			rc = -ENOMEM;
	for (size_t i = 0; i < nv; i++) {
		sw_wipe(values[i], strlen(values[i]));
		free(values[i]);
	}
	free(values);
	if (rc)
		snprintf(o->err, sizeof(o->err), "out of memory");
	return rc;
}

static int collect_line(void *arg, const struct sw_container_log_line *l)
{
	struct op *o = arg;
	if (o->truncated || before_since(l, o->since_us))
		return 0;
	size_t at = o->lines.len;
	int rc = line_json(&o->lines, o->scrubber[o->current], o->chosen[o->current].id, l);
	if (rc < 0)
		return rc;
	if (o->lines.len > SW_CONTAINER_LOGS_ANSWER_MAX) {
		o->lines.len = at;
		o->truncated = true;
		return 0;
	}
	if (o->nentries == o->entries_cap) {
		size_t cap = o->entries_cap ? o->entries_cap * 2 : 256;
		struct entry *e = realloc(o->entries, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		o->entries = e;
		o->entries_cap = cap;
	}
	o->entries[o->nentries] = (struct entry){ l->time_us, at, o->lines.len - at, o->nentries };
	o->nentries++;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->time_us != y->time_us)
		return x->time_us < y->time_us ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void op_read(struct op *o, struct sw_driver *d)
{
	struct sw_container_info *list = calloc(LIST_CAP, sizeof(*list));
	size_t n = 0;
	if (!list) {
		o->rc = -ENOMEM;
		return;
	}
	o->rc = sw_driver_containers_list(d, o->app_id, list, LIST_CAP, &n, o->err, sizeof(o->err));
	if (o->rc) {
		free(list);
		return;
	}
	/* Running ones (the list is newest first), else the newest. */
	for (size_t i = 0; i < n && o->nchosen < SW_CONTAINER_LOGS_CONTAINERS_MAX; i++)
		if (strcmp(list[i].state, "running") == 0)
			list[o->nchosen++] = list[i];
	if (!o->nchosen && n)
		o->nchosen = 1;
	o->chosen = list;
	if (!o->nchosen) {
		o->no_container = true;
		return;
	}
	if ((o->rc = scrubbers_make(o)) != 0 || o->follow)
		return;
	for (o->current = 0; o->current < o->nchosen; o->current++) {
		struct sw_container_logs_query q = { .container = o->chosen[o->current].id, .tail = o->tail,
						     .since_us = o->since_us };
		o->rc = sw_driver_container_logs(d, &q, collect_line, o, o->err, sizeof(o->err));
		if (o->rc == -ENOENT)
			o->rc = 0; /* removed since the list: nothing to show of it */
		if (o->rc)
			return;
	}
	if (o->nentries > 1)
		qsort(o->entries, o->nentries, sizeof(*o->entries), by_time);
}

static void op_run(struct sw_worker_job *job)
{
	struct op *o = SW_CONTAINER_OF(job, struct op, job);
	if (!o->remote) {
		struct sw_driver *d = sw_api_local_driver();
		if (d)
			op_read(o, d);
		else {
			o->rc = -EIO;
			snprintf(o->err, sizeof(o->err), "the local server's driver is not configured");
		}
		return;
	}
	PGconn *conn = PQconnectdb(sw_api_runtime_conninfo());
	struct sw_driver *d = NULL;
	if (PQstatus(conn) != CONNECTION_OK) {
		o->rc = -EIO;
		snprintf(o->err, sizeof(o->err), "the database cannot be reached");
	} else if ((o->rc = sw_driver_remote_new(conn, o->server_id, NULL, 0, &d, o->err, sizeof(o->err))) != 0) {
		o->not_connected = o->rc == -EHOSTUNREACH;
	} else {
		op_read(o, d);
		o->not_connected = o->rc == -EHOSTUNREACH;
	}
	sw_driver_free(d);
	PQfinish(conn);
}

static void write_containers(struct sw_json *j, const struct op *o)
{
	sw_json_array_begin(j);
	for (size_t i = 0; i < o->nchosen; i++) {
		sw_json_object_begin(j);
		sw_json_key(j, "id");
		sw_json_cstr(j, o->chosen[i].id);
		sw_json_key(j, "name");
		sw_json_cstr(j, o->chosen[i].name);
		sw_json_key(j, "state");
		sw_json_cstr(j, o->chosen[i].state);
		sw_json_object_end(j);
	}
	sw_json_array_end(j);
}

static void answer(struct op *o)
{
	struct sw_http_request *req = o->req;
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "applicationId");
	sw_json_cstr(&j, o->app_id);
	sw_json_key(&j, "containers");
	write_containers(&j, o);
	sw_json_key(&j, "lines");
	sw_json_array_begin(&j);
	for (size_t i = 0; i < o->nentries; i++)
		sw_json_raw(&j, sw_str_from(o->lines.data + o->entries[i].at, o->entries[i].len));
	sw_json_array_end(&j);
	sw_json_key(&j, "truncated");
	sw_json_bool(&j, o->truncated);
	sw_json_object_end(&j);
	sw_http_json_end(req, 200, &buf, &j);
}

/* Starts a follower of each chosen container behind one stream. */
static void follow_start(struct op *o)
{
	struct sw_http_request *req = o->req;
	struct reader *r = calloc(1, sizeof(*r));
	if (!r) {
		sw_api_internal_error(req);
		return;
	}
	pthread_mutex_lock(&threads.mu);
	bool room = threads.running + o->nchosen <= SW_CONTAINER_LOGS_FOLLOWERS_MAX;
	if (room)
		threads.running += (unsigned)o->nchosen; /* reserved; given back below if unused */
	pthread_mutex_unlock(&threads.mu);
	if (!room) {
		free(r);
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE",
			      "Too many container logs are followed in this process; try again later.");
		return;
	}
	size_t started = 0;
	int rc = 0;
	for (size_t i = 0; i < o->nchosen && rc == 0; i++) {
		struct follower *f = calloc(1, sizeof(*f));
		if (!f || sw_random_uuid(f->topic_id) < 0) {
			free(f);
			rc = -ENOMEM;
			break;
		}
		f->refs = 1; /* the reader's */
		snprintf(f->container, sizeof(f->container), "%s", o->chosen[i].id);
		f->tail = o->tail;
		f->since_us = o->since_us;
		f->remote = o->remote;
		memcpy(f->server_id, o->server_id, sizeof(f->server_id));
		f->scrubber = o->scrubber[i];
		o->scrubber[i] = NULL;
		r->f[i] = f;
		r->n = i + 1;
		bool writing;
		uint64_t offset;
		/* The reader first, so nothing the thread publishes is missed. */
		if ((rc = sw_hub_attach(f->topic_id, req->loop, on_chunk, r, &r->hub[i], &writing,
					&offset)) < 0)
			break;
		if (!(f->topic = sw_hub_writer_open(f->topic_id, 0))) {
			rc = -errno;
			break;
		}
		pthread_t t;
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED); /* the thread's */
		int e = pthread_create(&t, &attr, follow_main, f);
		pthread_attr_destroy(&attr);
		if (e) {
			__atomic_sub_fetch(&f->refs, 1, __ATOMIC_RELAXED);
			sw_hub_writer_close(f->topic, NULL);
			f->topic = NULL;
			rc = -e;
			break;
		}
		started++;
	}
	pthread_mutex_lock(&threads.mu);
	threads.running -= (unsigned)(o->nchosen - started);
	pthread_cond_broadcast(&threads.cv);
	pthread_mutex_unlock(&threads.mu);
	if (rc < 0) {
		reader_free(r); /* cancels the threads started */
		if (rc == -EBUSY)
			sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "Too many live readers.");
		else
			sw_api_internal_error(req);
		return;
	}
	r->s = sw_http_stream_begin(req, 200, "text/event-stream; charset=utf-8", &stream_ops, r);
	if (!r->s) {
		reader_free(r); /* HEAD, or the client is gone */
		return;
	}
	on_chunk(r); /* what was published meanwhile */
}

static void op_done(struct sw_worker_job *job)
{
	struct op *o = SW_CONTAINER_OF(job, struct op, job);
	struct sw_http_request *req = o->req;
	if (o->not_connected) {
		sw_http_error(req, 409, "SERVER_NOT_CONNECTED", SW_DRIVER_NOT_CONNECTED);
	} else if (o->no_container) {
		sw_http_error(req, 409, "NO_CONTAINER",
			      "The application has no container on its server: deploy it first.");
	} else if (o->rc == -ENOMEM) {
		sw_api_internal_error(req);
	} else if (o->rc) {
		char msg[320];
		snprintf(msg, sizeof(msg), "The server's runtime did not answer: %s.", o->err);
		sw_http_error(req, 502, "RUNTIME_UNAVAILABLE", msg);
	} else if (o->follow) {
		follow_start(o);
	} else {
		answer(o);
	}
	op_free(o);
}

static void app_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	struct sw_http_request *req = o->req;
	if (!sw_api_found(req, res, err)) {
		op_free(o);
		return;
	}
	/* Its columns start as the runtime target's do. */
	o->remote = sw_api_runtime_target_read(res, o->server_id);
	o->variables = json_loads(PQgetvalue(res, 0, SW_DB_RUNTIME_LOGS_VARIABLES), 0, NULL);
	if (!json_is_array(o->variables)) {
		op_free(o);
		sw_api_internal_error(req);
		return;
	}
	if (!sw_api_submit(req, &o->job, op_run, op_done))
		op_free(o);
}

static void logs_get(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	static const char *const names[] = { "tail", "since", "follow", NULL };
	enum { TAIL, SINCE, FOLLOW };
	const char *v[3] = { NULL, NULL, NULL };
	struct sw_field_errors fe = { 0 };
	uint64_t tail = SW_CONTAINER_LOGS_TAIL_DEFAULT;
	int64_t since_us = 0;
	bool follow = false;
	if (sw_query_read(&req->arena, req->query, names, v, &fe)) {
		int64_t t;
		if (v[TAIL] && (!sw_parse_i64_canonical(sw_str_cstr(v[TAIL]), &t) || t < 0 ||
				t > SW_CONTAINER_LOGS_TAIL_MAX))
			sw_field_error(&fe, "tail", "must be a whole number from 0 to 5000");
		else if (v[TAIL])
			tail = (uint64_t)t;
		if (v[SINCE] && sw_rfc3339_parse_us(sw_str_cstr(v[SINCE]), &since_us) < 0)
			sw_field_error(&fe, "since", "must be an RFC 3339 date-time such as 2026-11-21T16:22:35.123Z");
		else if (v[SINCE] && since_us <= 0)
			sw_field_error(&fe, "since", "must be after 1970-01-01T00:00:00Z");
		if (v[FOLLOW] && strcmp(v[FOLLOW], "true") != 0 && strcmp(v[FOLLOW], "false") != 0)
			sw_field_error(&fe, "follow", "must be true or false");
		else
			follow = v[FOLLOW] && strcmp(v[FOLLOW], "true") == 0;
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct op *o = calloc(1, sizeof(*o));
	if (!o) {
		sw_api_internal_error(req);
		return;
	}
	o->req = req;
	memcpy(o->app_id, id, sizeof(o->app_id));
	o->tail = (unsigned)tail;
	o->since_us = since_us;
	o->follow = follow;
	const char *params[2] = { req->principal.organization_id, o->app_id };
	if (!sw_api_query(req, &sw_db_stmt_runtime_logs, params, 2, app_loaded, o))
		op_free(o);
}

/* ---- route and schema ---- */

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/applications/:id/logs", SW_ACCESS_SESSION, logs_get, 0, 0,
	  { "An application's container logs, or a live stream of them",
	    "The output (stdout and stderr) of the application's running containers, read now from the "
	    "container engine of its server: at most 4 running containers (a BLUE_GREEN switch runs "
	    "two), or, with none running, the newest container whatever its state; none at all is "
	    "409 NO_CONTAINER. tail: the last lines of each container (0 to 5000, default 100); "
	    "since: only lines written from that RFC 3339 date-time on. Every value of the application's variables of 4 bytes or more appears as *** "
	    "(as in build logs), and text is valid UTF-8 (an invalid byte is U+FFFD).\n\n"
	    "Without follow (or follow=false): ContainerLogs, the lines of every container merged by "
	    "the engine's timestamps, at most 4 MiB of lines (truncated: true past it).\n\n"
	    "With follow=true: a text/event-stream instead, the mechanism of GET "
	    "/deployments/:id/live. Events: `log`, data a ContainerLogLine, for each line as the "
	    "container writes it (first the tail/since lines); `end`, data {\"containerId\", "
	    "\"error\": null or why the log could not be read further}, when a container's log ends "
	    "(it stopped); the stream ends once every container's has. `: ping` comments every 15 s "
	    "while nothing else is sent. Events carry no id: a client that reconnects starts again "
	    "(pass since=<the last line's time> to go on). A reader more than 4 MiB behind loses the "
	    "stream; at most 256 containers are followed per process (503 past it).\n\n"
	    "A remote server: read through its agent (the same lines, tail, since, cap and scrubbing); "
	    "its agent not connected: 409 SERVER_NOT_CONNECTED; follow=true on a remote server streams "
	    "the same events through its agent (at most 4 containers followed per server at once: past "
	    "it a container's `end` event says the agent is busy; a stream lasts at most 6 hours, then "
	    "ends). A container engine that does not answer: 502 RUNTIME_UNAVAILABLE. "
	    "The worker pool full: 503." SW_API_DOC_SCOPED,
	    "Runtime", NULL, "ContainerLogs", 200, errors, "tail since follow" } },
};

static const char schemas[] = "{"
	"\"ContainerLogLine\":{\"type\":\"object\",\"required\":[\"containerId\",\"stream\",\"time\",\"text\"],"
	"\"properties\":{\"containerId\":{\"type\":\"string\",\"description\":\"The engine's id.\"},"
	"\"stream\":{\"type\":\"string\",\"enum\":[\"stdout\",\"stderr\"]},"
	"\"time\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\",\"description\":\"When the "
	"engine received the line (milliseconds).\"},"
	"\"text\":{\"type\":\"string\",\"description\":\"The line without its end, variable values as ***.\"}}},"
	"\"ContainerLogs\":{\"type\":\"object\",\"required\":[\"applicationId\",\"containers\",\"lines\",\"truncated\"],"
	"\"properties\":{\"applicationId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"containers\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"state\"],"
	"\"properties\":{\"id\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"}}}},"
	"\"lines\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ContainerLogLine\"}},"
	"\"truncated\":{\"type\":\"boolean\"}}}"
	"}";

const struct sw_api_route_group sw_api_container_logs_group = { routes, SW_ARRAY_SIZE(routes), schemas };
