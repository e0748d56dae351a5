/* The local server's sampler: made once on a thread of its own (loading
 * the eBPF programs takes a while), and one sample of the local host with
 * an organization's containers on demand. Used by the sample route
 * (metrics.c) and the 15-second loop (metrics_loop.c): below both, so that
 * they do not call each other. */
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

/* Containers sampled per application, and in one sample. */
#define METRICS_CONTAINERS_PER_APP 64
#define METRICS_CONTAINERS_MAX 1000


static struct {
	pthread_once_t once;
	struct sw_metrics_sampler *sampler;
	struct sw_driver *driver;
	char why[256]; /* when sampler is NULL */
	/* The engine's disk usage, read on its slower schedule. */
	pthread_mutex_t disk_mu;
	bool have_disk;
	struct sw_runtime_disk_usage disk;
	int64_t disk_at_ms;     /* wall clock */
	uint64_t disk_tried_ms; /* monotonic, of the last attempt */
} local = { .once = PTHREAD_ONCE_INIT, .disk_mu = PTHREAD_MUTEX_INITIALIZER };

static void local_make(void)
{
	struct sw_metrics_options o = { .bpf = true };
	const char *ebpf = getenv("METRICS_EBPF");
	if (ebpf && (strcmp(ebpf, "0") == 0 || strcmp(ebpf, "false") == 0 || strcmp(ebpf, "off") == 0))
		o.bpf = false;
	const char *ip = getenv("METRICS_PUBLIC_IP");
	o.public_ip = ip && *ip ? ip : NULL;
	if (sw_metrics_paths_from_env(&o.paths, local.why, sizeof(local.why)) < 0) {
		sw_log_error("metrics: %s", local.why);
		return;
	}
	const char *warning = sw_metrics_paths_warning(&o.paths);
	if (warning)
		sw_log_warn("%s", warning);
	local.sampler = sw_metrics_sampler_new(&o);
	if (!local.sampler) {
		snprintf(local.why, sizeof(local.why), "the sampler could not be made (%s)", strerror(errno));
		sw_log_error("metrics: %s", local.why);
		return;
	}
	const char *bpf = sw_metrics_sampler_bpf_status(local.sampler);
	if (strcmp(bpf, "loaded") == 0)
		sw_log_info("metrics: eBPF collectors loaded (container network bytes, OOM kills)");
	else
		sw_log_warn("metrics: %s; container network is not measured, OOM kills come from cgroup files", bpf);
	local.driver = sw_driver_local_new(); /* NULL: containers.error says so */
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
	sw_metrics_sampler_free(local.sampler);
	sw_driver_free(local.driver);
	local.sampler = NULL;
	local.driver = NULL;
}


const char *sw_api_metrics_local_why(void)
{
	return local.why;
}

/* The organization's containers on the local engine, with what the
 * sampler needs of each; *ret_n set. An engine failure leaves the
 * sentence in err and returns what was read before it. */
static struct sw_metrics_container_ref *containers_read(json_t *apps, size_t *ret_n, char *err, size_t errlen)
{
	*ret_n = 0;
	size_t napps = json_array_size(apps);
	size_t cap = SW_MIN(napps * METRICS_CONTAINERS_PER_APP, (size_t)METRICS_CONTAINERS_MAX);
	struct sw_metrics_container_ref *refs = calloc(cap ? cap : 1, sizeof(*refs));
	struct sw_container_info *list = calloc(METRICS_CONTAINERS_PER_APP, sizeof(*list));
	if (!refs || !list) {
		snprintf(err, errlen, "out of memory");
		free(list);
		return refs;
	}
	if (!local.driver) {
		snprintf(err, errlen, "the local server's driver is not configured");
		free(list);
		return refs;
	}
	size_t n = 0;
	for (size_t i = 0; i < napps && n < cap && !err[0]; i++) {
		size_t got = 0;
		const char *app = json_string_value(json_array_get(apps, i));
		if (sw_driver_containers_list(local.driver, app, list, SW_MIN(cap - n, (size_t)METRICS_CONTAINERS_PER_APP),
					      &got, err, errlen) < 0)
			break;
		for (size_t k = 0; k < got; k++) {
			struct sw_container_state st;
			int rc = sw_driver_container_state(local.driver, list[k].id, &st, err, errlen);
			if (rc == -ENOENT) { /* removed since the list: not there */
				err[0] = '\0';
				continue;
			}
			if (rc < 0)
				break;
			struct sw_metrics_container_ref *r = &refs[n++];
			snprintf(r->id, sizeof(r->id), "%s", st.id);
			snprintf(r->application_id, sizeof(r->application_id), "%s", app);
			snprintf(r->name, sizeof(r->name), "%s", st.name);
			snprintf(r->state, sizeof(r->state), "%s", st.state);
			snprintf(r->health, sizeof(r->health), "%s", st.health);
			r->restart_count = st.restart_count;
			r->pid = st.pid;
		}
	}
	free(list);
	*ret_n = n;
	return refs;
}

/* Copies the engine's disk usage into the sample, reading it again first
 * when the last attempt is older than its interval. One reader at a time:
 * a second sample meanwhile waits and shares the answer. */
static void runtime_disk(struct sw_metrics_sample *out)
{
	pthread_mutex_lock(&local.disk_mu);
	uint64_t now = sw_now_ms();
	if (local.driver && (!local.disk_tried_ms || now - local.disk_tried_ms >= METRICS_RUNTIME_DISK_INTERVAL_MS)) {
		char err[256];
		struct sw_runtime_disk_usage u;
		local.disk_tried_ms = now;
		if (sw_driver_disk_usage(local.driver, &u, err, sizeof(err)) == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			local.disk = u;
			local.disk_at_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
			local.have_disk = true;
		}
	}
	if (local.have_disk) {
		out->have_runtime_disk = true;
		out->runtime_images = local.disk.images;
		out->runtime_containers = local.disk.containers;
		out->runtime_volumes = local.disk.volumes;
		out->runtime_build_cache = local.disk.build_cache;
		out->runtime_disk_at_ms = local.disk_at_ms;
	}
	pthread_mutex_unlock(&local.disk_mu);
}

int sw_api_metrics_sample_local(json_t *apps, struct sw_metrics_sample *out)
{
	pthread_once(&local.once, local_make);
	if (!local.sampler)
		return -EIO;
	char err[256] = "";
	size_t n = 0;
	struct sw_metrics_container_ref *refs = containers_read(apps, &n, err, sizeof(err));
	if (!refs)
		return -ENOMEM;
	int rc = sw_metrics_sample(local.sampler, refs, n, 0, out);
	if (rc == 0)
		runtime_disk(out);
	if (rc == 0 && err[0])
		snprintf(out->containers_error, sizeof(out->containers_error),
			 "the container engine did not answer: %s", err);
	free(refs);
	return rc;
}
