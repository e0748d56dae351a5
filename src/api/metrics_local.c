/* A host's sampler with its engine (struct sw_api_metrics_host: the
 * sampler, the engine's disk usage on its slower schedule, Steward's
 * containers followed by the engine's events (container_watch.h: a tick
 * asks the engine nothing), and, while that watch is not in step with
 * the engine, its list with the inspect answers kept between ticks), and
 * the local server's, made once
 * on a thread of its own (loading the eBPF programs takes a while): one
 * sample of the local host with an organization's containers on demand.
 * Used by the sample route (metrics.c) and the 15-second loop
 * (metrics_loop.c), below both so that they do not call each other, and
 * by steward-agent for its own host (src/main/agent_metrics.c). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>
#include "steward/api/api.h"
#include "steward/auth/auth.h"
#include "steward/driver/container_state.h"
#include "steward/driver/container_watch.h"
#include "steward/driver/driver.h"
#include "steward/io/io.h"
#include "steward/base/json.h"
#include "steward/base/log.h"
#include "steward/metrics/metrics.h"
#include "api/api_internal.h"
#include "steward/db/statements_runtime.h"
#include "steward/db/statements_metrics.h"
#include "steward/base/timeparse.h"

/* How often the engine's disk usage is read again. */
#define METRICS_RUNTIME_DISK_INTERVAL_MS (5 * 60 * 1000)

/* A container's inspect answer is kept this long while the engine's list
 * shows it unchanged (same state and health, up for a minute or more); a
 * container the list has not shown for METRICS_INSPECT_FORGET_MS is
 * forgotten. */
#define METRICS_INSPECT_REFRESH_MS 60000
#define METRICS_INSPECT_FORGET_MS (5 * 60 * 1000)

/* Containers sampled per application, and in one sample. */
#define METRICS_CONTAINERS_PER_APP 64
#define METRICS_CONTAINERS_MAX 1000


/* A host's sampler and the engine its containers are read from, with the
 * engine's disk usage on its slower schedule. */
struct sw_api_metrics_host {
	struct sw_metrics_sampler *sampler;
	struct sw_driver *driver;
	pthread_mutex_t disk_mu;
	bool have_disk;
	struct sw_runtime_disk_usage disk;
	int64_t disk_at_ms;     /* wall clock */
	uint64_t disk_tried_ms; /* monotonic, of the last attempt */
	/* The engine's inspect answers, so a tick costs one list call, not
	 * one call per container (what the engine is asked is most of a
	 * tick's cost: bench/metrics_vs_stats.mjs). */
	pthread_mutex_t inspect_mu;
	struct inspected {
		struct sw_container_state st;
		uint64_t checked_ms, seen_ms; /* monotonic */
	} *inspected;
	size_t ninspected, inspected_cap;
	/* Steward's containers followed by the engine's events: while it is
	 * in step, a sample asks the engine nothing (list and inspect above
	 * are the fallback while it is not). NULL without a driver. */
	struct sw_container_watch *watch;
};

static struct {
	pthread_once_t once;
	struct sw_api_metrics_host *host;
	char why[256]; /* when host is NULL */
} local = { .once = PTHREAD_ONCE_INIT };

struct sw_api_metrics_host *sw_api_metrics_host_new(char *why, size_t whylen)
{
	struct sw_metrics_options o = { .bpf = true };
	const char *ebpf = getenv("METRICS_EBPF");
	if (ebpf && (strcmp(ebpf, "0") == 0 || strcmp(ebpf, "false") == 0 || strcmp(ebpf, "off") == 0))
		o.bpf = false;
	const char *ip = getenv("METRICS_PUBLIC_IP");
	o.public_ip = ip && *ip ? ip : NULL;
	if (sw_metrics_paths_from_env(&o.paths, why, whylen) < 0) {
		sw_log_error("metrics: %s", why);
		return NULL;
	}
	const char *warning = sw_metrics_paths_warning(&o.paths);
	if (warning)
		sw_log_warn("%s", warning);
	struct sw_api_metrics_host *h = calloc(1, sizeof(*h));
	if (!h || !(h->sampler = sw_metrics_sampler_new(&o))) {
		snprintf(why, whylen, "the sampler could not be made (%s)", strerror(errno));
		sw_log_error("metrics: %s", why);
		free(h);
		return NULL;
	}
	pthread_mutex_init(&h->disk_mu, NULL);
	pthread_mutex_init(&h->inspect_mu, NULL);
	const char *bpf = sw_metrics_sampler_bpf_status(h->sampler);
	if (strcmp(bpf, "loaded") == 0)
		sw_log_info("metrics: eBPF collectors loaded (container network bytes, OOM kills)");
	else
		sw_log_warn("metrics: %s; container network is not measured, OOM kills come from cgroup files", bpf);
	h->driver = sw_driver_local_new(); /* NULL: containers.error says so */
	if (h->driver && !(h->watch = sw_container_watch_new(h->driver)))
		sw_log_warn("metrics: the engine's events cannot be followed (%s): every sample lists the containers",
			    strerror(errno));
	return h;
}

void sw_api_metrics_host_free(struct sw_api_metrics_host *h)
{
	if (!h)
		return;
	sw_container_watch_free(h->watch); /* before the driver it uses */
	sw_metrics_sampler_free(h->sampler);
	sw_driver_free(h->driver);
	pthread_mutex_destroy(&h->disk_mu);
	pthread_mutex_destroy(&h->inspect_mu);
	free(h->inspected);
	free(h);
}

static void local_make(void)
{
	local.host = sw_api_metrics_host_new(local.why, sizeof(local.why));
}

static pthread_t maker;
static bool maker_started;

static void *maker_main(void *arg)
{
	/* Signals are for the main thread's sigwaitinfo(), never this one. */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_once(&local.once, local_make);
	return arg;
}

void sw_api_metrics_start(void)
{
	maker_started = pthread_create(&maker, NULL, maker_main, NULL) == 0;
	if (!maker_started)
		pthread_once(&local.once, local_make);
}

bool sw_api_metrics_wait_made(unsigned timeout_ms)
{
	if (!maker_started)
		return true;
	struct timespec ts;
	ts = sw_deadline_after_ms(CLOCK_REALTIME, timeout_ms);
	if (pthread_timedjoin_np(maker, NULL, &ts) != 0)
		return false;
	maker_started = false;
	return true;
}

void sw_api_metrics_stop(void)
{
	if (maker_started)
		pthread_join(maker, NULL);
	maker_started = false;
	sw_api_metrics_host_free(local.host);
	local.host = NULL;
}


const char *sw_api_metrics_local_why(void)
{
	return local.why;
}

/* The health the engine's list shows in a container's status text ("Up 3
 * minutes (healthy)"), as State.Health.Status says it. */
static const char *listed_health(const char *status)
{
	if (strstr(status, "(healthy)"))
		return "healthy";
	if (strstr(status, "(unhealthy)"))
		return "unhealthy";
	if (strstr(status, "(health: starting)"))
		return "starting";
	return "";
}

/* Whether the list's status text ("Up 12 seconds", "Up Less than a
 * second", the engine's human durations) says the container started less
 * than age_ms ago: it restarted since it was inspected (a new pid, one
 * more restart). Past a minute the text is too coarse to say; the kept
 * answer is refreshed every METRICS_INSPECT_REFRESH_MS anyway. */
static bool restarted_since(const char *status, uint64_t age_ms)
{
	if (strncmp(status, "Up ", 3) != 0)
		return false;
	uint64_t up_s;
	if (strncmp(status + 3, "Less than a second", 18) == 0)
		up_s = 1;
	else if (strstr(status, " second"))
		up_s = strtoull(status + 3, NULL, 10) + 1;
	else
		return false;
	return up_s * 1000 < age_ms;
}

/* c's inspect answer into *ret: the kept one while the list shows c as it
 * was (same state and health, not restarted since: restarted_since) and it
 * is younger than METRICS_INSPECT_REFRESH_MS; else the engine's, kept. */
static int container_state(struct sw_api_metrics_host *h, const struct sw_container_info *c,
			   struct sw_container_state *ret, char *err, size_t errlen)
{
	uint64_t now = sw_now_ms();
	pthread_mutex_lock(&h->inspect_mu);
	for (size_t i = 0; i < h->ninspected; i++)
		if (now - h->inspected[i].seen_ms > METRICS_INSPECT_FORGET_MS)
			h->inspected[i--] = h->inspected[--h->ninspected];
	struct inspected *e = NULL;
	for (size_t i = 0; i < h->ninspected && !e; i++)
		if (strcmp(h->inspected[i].st.id, c->id) == 0)
			e = &h->inspected[i];
	bool reuse = e && !restarted_since(c->status, now - e->checked_ms) &&
		     now - e->checked_ms < METRICS_INSPECT_REFRESH_MS &&
		     strcmp(e->st.state, c->state) == 0 && strcmp(e->st.health, listed_health(c->status)) == 0;
	if (reuse) {
		e->seen_ms = now;
		*ret = e->st;
	}
	pthread_mutex_unlock(&h->inspect_mu);
	if (reuse)
		return 0;
	int rc = sw_driver_container_state(h->driver, c->id, ret, err, errlen);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&h->inspect_mu);
	e = NULL;
	for (size_t i = 0; i < h->ninspected && !e; i++)
		if (strcmp(h->inspected[i].st.id, ret->id) == 0)
			e = &h->inspected[i];
	if (!e && h->ninspected == h->inspected_cap && h->inspected_cap < 4 * METRICS_CONTAINERS_MAX) {
		size_t cap = h->inspected_cap ? 2 * h->inspected_cap : 64;
		struct inspected *a = realloc(h->inspected, cap * sizeof(*a));
		if (a) {
			h->inspected = a;
			h->inspected_cap = cap;
		}
	}
	if (!e && h->ninspected < h->inspected_cap)
		e = &h->inspected[h->ninspected++];
	if (e) /* else the engine is asked again next time */
		*e = (struct inspected){ .st = *ret, .checked_ms = now, .seen_ms = now };
	pthread_mutex_unlock(&h->inspect_mu);
	return 0;
}

static void ref_from_state(struct sw_metrics_container_ref *r, const struct sw_container_state *st, const char *app)
{
	snprintf(r->id, sizeof(r->id), "%s", st->id);
	snprintf(r->application_id, sizeof(r->application_id), "%s", app ? app : st->application_id);
	snprintf(r->name, sizeof(r->name), "%s", st->name);
	snprintf(r->state, sizeof(r->state), "%s", st->state);
	snprintf(r->health, sizeof(r->health), "%s", st->health);
	r->restart_count = st->restart_count;
	r->pid = st->pid;
}

static int containers_watched(struct sw_api_metrics_host *h, json_t *apps, size_t cap,
			      struct sw_metrics_container_ref *refs, size_t *ret_n, char *err, size_t errlen);

/* The containers of the applications in apps (every container labelled
 * steward.application when apps is NULL) on d's engine, at most cap, with
 * what the sampler needs of each; *ret_n set. An engine failure leaves
 * the sentence in err and returns what was read before it. */
static struct sw_metrics_container_ref *containers_read(struct sw_api_metrics_host *h, json_t *apps, size_t cap,
							size_t *ret_n, char *err, size_t errlen)
{
	struct sw_driver *d = h->driver;
	*ret_n = 0;
	size_t napps = apps ? json_array_size(apps) : 1;
	if (apps)
		cap = SW_MIN(napps * METRICS_CONTAINERS_PER_APP, cap);
	size_t per_list = apps ? METRICS_CONTAINERS_PER_APP : cap;
	struct sw_metrics_container_ref *refs = calloc(cap ? cap : 1, sizeof(*refs));
	struct sw_container_info *list = calloc(per_list ? per_list : 1, sizeof(*list));
	if (!refs || !list) {
		snprintf(err, errlen, "out of memory");
		free(list);
		return refs;
	}
	if (!d) {
		snprintf(err, errlen, "the server's driver is not configured");
		free(list);
		return refs;
	}
	if (h->watch && containers_watched(h, apps, cap, refs, ret_n, err, errlen) == 0) {
		free(list);
		return refs;
	}
	err[0] = '\0'; /* not in step with the engine: asked below */
	size_t n = 0;
	for (size_t i = 0; i < napps && n < cap && !err[0]; i++) {
		size_t got = 0;
		const char *app = apps ? json_string_value(json_array_get(apps, i)) : NULL;
		if (sw_driver_containers_list(d, app, list, SW_MIN(cap - n, per_list), &got, err, errlen) < 0)
			break;
		for (size_t k = 0; k < got; k++) {
			struct sw_container_state st;
			int rc = container_state(h, &list[k], &st, err, errlen);
			if (rc == -ENOENT) { /* removed since the list: not there */
				err[0] = '\0';
				continue;
			}
			if (rc < 0)
				break;
			if (!app && !st.application_id[0])
				continue; /* not Steward's */
			ref_from_state(&refs[n++], &st, app);
		}
	}
	free(list);
	*ret_n = n;
	return refs;
}

/* The containers of apps as containers_read() gives them, from h's watch
 * of the engine's events: no engine call. -EAGAIN (why in err) while the
 * watch is not in step with the engine. */
static int containers_watched(struct sw_api_metrics_host *h, json_t *apps, size_t cap,
			      struct sw_metrics_container_ref *refs, size_t *ret_n, char *err, size_t errlen)
{
	size_t napps = apps ? json_array_size(apps) : 1;
	size_t per_list = apps ? METRICS_CONTAINERS_PER_APP : cap;
	struct sw_container_state *states = calloc(per_list ? per_list : 1, sizeof(*states));
	if (!states) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t n = 0;
	int rc = 0;
	for (size_t i = 0; i < napps && n < cap && rc == 0; i++) {
		const char *app = apps ? json_string_value(json_array_get(apps, i)) : NULL;
		size_t got = 0;
		rc = sw_container_watch_list(h->watch, app, states, SW_MIN(cap - n, per_list), &got, err, errlen);
		for (size_t k = 0; k < got && rc == 0; k++)
			ref_from_state(&refs[n++], &states[k], app);
	}
	free(states);
	*ret_n = n;
	return rc;
}

/* Copies the engine's disk usage into the sample, reading it again first
 * when the last attempt is older than its interval. One reader at a time:
 * a second sample meanwhile waits and shares the answer. */
static void runtime_disk(struct sw_api_metrics_host *h, struct sw_metrics_sample *out)
{
	pthread_mutex_lock(&h->disk_mu);
	uint64_t now = sw_now_ms();
	if (h->driver && (!h->disk_tried_ms || now - h->disk_tried_ms >= METRICS_RUNTIME_DISK_INTERVAL_MS)) {
		char err[256];
		struct sw_runtime_disk_usage u;
		h->disk_tried_ms = now;
		if (sw_driver_disk_usage(h->driver, &u, err, sizeof(err)) == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			h->disk = u;
			h->disk_at_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
			h->have_disk = true;
		}
	}
	if (h->have_disk) {
		out->have_runtime_disk = true;
		out->runtime_images = h->disk.images;
		out->runtime_containers = h->disk.containers;
		out->runtime_volumes = h->disk.volumes;
		out->runtime_build_cache = h->disk.build_cache;
		out->runtime_disk_at_ms = h->disk_at_ms;
	}
	pthread_mutex_unlock(&h->disk_mu);
}

/* A sample of h's host with the containers of apps (NULL: every one of
 * Steward's), at most cap of them. */
static int host_sample(struct sw_api_metrics_host *h, json_t *apps, size_t cap, struct sw_metrics_sample *out)
{
	char err[256] = "";
	size_t n = 0;
	struct sw_metrics_container_ref *refs = containers_read(h, apps, cap, &n, err, sizeof(err));
	if (!refs)
		return -ENOMEM;
	int rc = sw_metrics_sample(h->sampler, refs, n, 0, out);
	if (rc == 0)
		runtime_disk(h, out);
	if (rc == 0 && err[0])
		snprintf(out->containers_error, sizeof(out->containers_error),
			 "the container engine did not answer: %s", err);
	free(refs);
	return rc;
}

int sw_api_metrics_sample_local(json_t *apps, struct sw_metrics_sample *out)
{
	pthread_once(&local.once, local_make);
	if (!local.host)
		return -EIO;
	return host_sample(local.host, apps, METRICS_CONTAINERS_MAX, out);
}

int sw_api_metrics_host_sample_json(struct sw_api_metrics_host *h, size_t max_containers, char **ret_json)
{
	*ret_json = NULL;
	struct sw_metrics_sample s;
	int rc = host_sample(h, NULL, max_containers, &s);
	if (rc < 0)
		return rc;
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_json_init(&j, &buf);
	sw_metrics_sample_write(&s, NULL, &j);
	sw_metrics_sample_release(&s);
	if (sw_json_finish(&j) < 0 || sw_buf_append(&buf, "", 1) < 0) {
		sw_buf_release(&buf);
		return -ENOMEM;
	}
	*ret_json = buf.data; /* NUL-terminated: the caller frees it */
	return 0;
}
