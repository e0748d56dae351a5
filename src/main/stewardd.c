/* stewardd: the control plane. A thin main: configuration, the database
 * (embedded or DATABASE_URL) and its migrations, the route table, then one
 * server thread per core (each composed in thread.c); the main thread only
 * waits for signals. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "steward/agent/session.h"
#include "steward/api/api.h"
#include "steward/auth/auth.h"
#include "steward/base/config.h"
#include "steward/db/db.h"
#include "steward/deploy/deploy.h"
#include "steward/http/http.h"
#include "steward/io/io.h"
#include "steward/jobs/jobs.h"
#include "steward/base/log.h"
#include "steward/net/mail.h"
#include "steward/base/seal.h"
#include "steward/io/signals.h"
#include "steward/api/ui.h"
#include "main/thread.h"

#ifdef SW_JEMALLOC
#include <jemalloc/jemalloc.h>
/* jemalloc's settings, read at the first allocation (MALLOC_CONF in the
 * environment still overrides them). A thread cache holds up to a few
 * hundred freed objects of each size class per thread: worth it on the
 * loop threads, where every request allocates and frees, and dead weight
 * on the others (job runners, workers, the main thread), which wait on
 * PostgreSQL, Argon2 or a signal and would each keep their own cache
 * resident at idle. So the cache is off by default and each loop thread
 * turns its own on. One arena, not jemalloc's four per core: an arena's
 * metadata (its bins, their locks and extent heaps) is resident whether or
 * not the arena is used, and eight of them held 1.1 MB of an idle
 * stewardd's 3.7 MB of anonymous memory. The threads other than the loops
 * allocate seldom and share it; the first loop thread too (its cache takes
 * the load off the arena), and each further loop thread makes an arena of
 * its own (thread_arena_own), so loops never contend with each other. */
const char *malloc_conf = "tcache:false,narenas:1";

static void thread_cache_on(void)
{
	bool on = true;
	mallctl("thread.tcache.enabled", NULL, NULL, &on, sizeof(on));
}

static void thread_arena_own(void)
{
	unsigned arena;
	size_t len = sizeof(arena);
	if (mallctl("arenas.create", &arena, &len, NULL, 0) == 0)
		mallctl("thread.arena", NULL, NULL, &arena, sizeof(arena));
}

/* What a loop thread's start-up freed (building its server, pool and
 * routes) waits in its cache for reuse that an idle server never makes:
 * about 0.45 MB. Handed back to the arena once the thread is ready, so
 * that the purge below returns it too. */
static void thread_cache_flush(void)
{
	mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
}

/* jemalloc hands freed pages back to the kernel as allocation goes on (its
 * decay is driven by allocations), so a server that idles after start-up
 * kept resident what start-up had freed: about 12 MB, most of it from
 * loading the eBPF programs (libbpf reads the kernel's BTF) on the metrics
 * thread. Once that thread is done, every arena is purged once. */
static void release_startup_memory(void)
{
	char name[32];
	snprintf(name, sizeof(name), "arena.%u.purge", (unsigned)MALLCTL_ARENAS_ALL);
	mallctl(name, NULL, NULL, NULL, 0);
}
#else
static void thread_cache_on(void)
{
}

static void thread_arena_own(void)
{
}

static void thread_cache_flush(void)
{
}

static void release_startup_memory(void)
{
}
#endif

/* libpq links libldap, which links GnuTLS, whose constructor initialises
 * it at start (its RNG, its crypto backend, the system's priority file):
 * 0.7 MB of resident pages in a process that never uses GnuTLS (libpq
 * and libcurl use OpenSSL; libldap calls gnutls_global_init() itself
 * before any TLS of its own). GnuTLS skips that implicit initialisation
 * when GNUTLS_NO_IMPLICIT_INIT=1 is in the environment, or when the
 * program defines this function, a weak symbol of libgnutls that the
 * program's definition takes the place of. A GnuTLS that no longer asks
 * only costs the memory again. */
int _gnutls_global_init_skip(void);
int _gnutls_global_init_skip(void)
{
	return 1;
}

struct thread_arg {
	const struct sw_main_threads *shared;
	unsigned index;
	int result;
	pthread_t thread;
};

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static unsigned ready_count, exited_count;

/* Runs on the loop thread that is ready. */
static void on_ready(unsigned index)
{
	(void)index;
	thread_cache_flush();
	pthread_mutex_lock(&ready_lock);
	ready_count++;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
}

static void *server_thread(void *p)
{
	struct thread_arg *a = p;
	if (a->index > 0)
		thread_arena_own();
	thread_cache_on();
	a->result = sw_main_thread_run(a->shared, a->index);
	pthread_mutex_lock(&ready_lock);
	exited_count++;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
	return NULL;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int split_origins(struct sw_server_shared *shared, char *list)
{
	if (!list)
		return 0;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		size_t n = strlen(tok);
		while (n && tok[n - 1] == ' ')
			tok[--n] = '\0';
		if (n == 0)
			continue;
		if (shared->cors_count == SW_ARRAY_SIZE(shared->cors))
			return -E2BIG;
		shared->cors[shared->cors_count++] = sw_str_from(tok, n);
	}
	return 0;
}

/* Every loop's pool listens for auth revocations and for agent sessions
 * to cut (rotation, deletion), on any replica. */
static void pool_created(struct sw_db_pool *pool)
{
	sw_auth_listen(pool);
	int r = sw_agent_sessions_listen(pool);
	if (r < 0)
		sw_log_error("cannot listen for agent sessions to close: %s", strerror(-r));
}

/* STEWARD_AGENT_HEARTBEAT_MS: a test setting (the interval agents are
 * told, so that OFFLINE comes in seconds), honoured only with
 * STEWARD_ENV=test; elsewhere it stops start-up rather than be ignored. */
static int agent_configure(const struct sw_config *config)
{
	const char *v = getenv("STEWARD_AGENT_HEARTBEAT_MS");
	if (!v || !*v)
		return 0;
	char *end;
	unsigned long ms = strtoul(v, &end, 10);
	if (config->env != SW_ENV_TEST || *end || ms < 100 || ms > 600000) {
		sw_log_error("configuration: STEWARD_AGENT_HEARTBEAT_MS is a test setting (100 to "
			     "600000), honoured only with STEWARD_ENV=test");
		return -1;
	}
	sw_agent_sessions_configure((unsigned)ms);
	return 0;
}

int main(void)
{
	char err[1024];
	struct sw_config config;
	int code = 1;
	if (sw_config_load(&config, err, sizeof(err)) < 0) {
		sw_log_error("configuration: %s", err);
		return 2;
	}
	sw_mail_log_configuration();
	if (sw_io_probe(err, sizeof(err)) < 0) {
		sw_log_error("%s", err);
		return 1;
	}
	raise_fd_limit();

	struct sw_server_shared shared = { .config = &config, .guard = sw_guard, .admit = sw_auth_admit };
	if (agent_configure(&config) < 0)
		return 2;
	struct sw_main_threads threads_shared = { .server = &shared, .pool_created = pool_created,
						  .ready = on_ready };
	if (split_origins(&shared, config.cors_origins) < 0) {
		sw_log_error("configuration: CORS_ALLOWED_ORIGINS lists more than %zu origins",
			     SW_ARRAY_SIZE(shared.cors));
		return 2;
	}
	/* Before the database: a missing or refused key stops start-up
	 * without a cluster to stop. It creates the data directory if need be. */
	if (sw_seal_init(&config, err, sizeof(err)) < 0) {
		sw_log_error("master key: %s", err);
		sw_config_release(&config);
		return 1;
	}
	char conninfo[1024];
	bool embedded = !config.database_url;
	if (embedded) {
		if (sw_db_embedded_start(config.data_dir, conninfo, sizeof(conninfo), err, sizeof(err)) < 0) {
			sw_log_error("embedded PostgreSQL: %s", err);
			goto out_seal;
		}
		sw_log_info("embedded PostgreSQL running data_dir=%s", config.data_dir);
	} else {
		snprintf(conninfo, sizeof(conninfo), "%s", config.database_url);
	}
	threads_shared.conninfo = conninfo;
	sw_api_runtime_set_conninfo(conninfo);
	if (sw_db_migrate(conninfo, err, sizeof(err)) < 0) {
		sw_log_error("migrations: %s", err);
		goto out_db;
	}

	/* The API's routes, then the dashboard's when it was built. */
	bool ui_found = false;
	if (sw_ui_load(&config, &ui_found, err, sizeof(err)) < 0) {
		sw_log_error("configuration: %s", err);
		goto out_db;
	}
	size_t napi, nui = 0;
	const struct sw_route *api_routes = sw_api_routes(&napi);
	const struct sw_route *ui_routes = ui_found ? sw_ui_routes(&nui) : NULL;
	struct sw_route *routes = calloc(napi + nui, sizeof(*routes));
	struct sw_router *router = NULL;
	if (routes) {
		memcpy(routes, api_routes, napi * sizeof(*routes));
		if (nui)
			memcpy(routes + napi, ui_routes, nui * sizeof(*routes));
		router = sw_router_new(routes, napi + nui, &config);
	}
	if (!router) {
		sw_log_error("route table is invalid: %s", strerror(errno));
		goto out_routes;
	}
	shared.router = router;
	sw_api_metrics_start(); /* logs the HOST_* warning and the eBPF status once */
	/* The document exists only where GET /docs does (not in production),
	 * so a production server never pays for building it. */
	if (config.env != SW_ENV_PRODUCTION && sw_api_docs_build(router, err, sizeof(err)) < 0) {
		sw_log_error("%s", err);
		goto out_router;
	}

	/* From here every thread inherits the blocked signals. */
	if (sw_signals_block() < 0 || sw_workers_start(config.workers) < 0) {
		sw_log_error("cannot start worker threads");
		goto out_docs;
	}
	/* The job runners: before serving, so that deployments a dead
	 * process left in flight are FAILED before anyone reads them. */
	struct sw_deploy_settings deploy = {
		.data_dir = config.data_dir,
		.log_max_bytes = config.deploy_log_max_bytes,
		.blue_green_min_free_mb = config.blue_green_min_free_mb,
		.base_image = config.deploy_base_image,
		.allow_file_urls = config.env != SW_ENV_PRODUCTION,
		.git_ca_file = config.git_ca_file,
		.agent_reconnect_wait_ms = config.agent_reconnect_wait_ms,
		.fault_pause_file = config.env == SW_ENV_TEST ? getenv("STEWARD_FAULT_PAUSE_FILE") : NULL,
	};
	if (config.runners) {
		size_t nkinds = 0;
		const struct sw_job_kind *kinds = sw_deploy_job_kinds(&deploy, &nkinds);
		if (sw_jobs_start(conninfo, kinds, nkinds, err, sizeof(err)) < 0) {
			sw_log_error("job runners: %s", err);
			sw_workers_stop();
			goto out_docs;
		}
	}
	/* The metrics loop: a failure to start it is logged, not fatal. */
	int mr = sw_api_metrics_loop_start(conninfo, &config);
	if (mr < 0)
		sw_log_error("metrics loop: %s", strerror(-mr));
	struct thread_arg *threads = calloc(config.threads, sizeof(*threads));
	unsigned started = 0;
	for (unsigned i = 0; threads && i < config.threads; i++) {
		threads[i] = (struct thread_arg){ .shared = &threads_shared, .index = i };
		if (pthread_create(&threads[i].thread, NULL, server_thread, &threads[i]) != 0)
			break;
		started++;
	}
	pthread_mutex_lock(&ready_lock);
	while (ready_count + exited_count < started)
		pthread_cond_wait(&ready_cond, &ready_lock);
	bool all_ready = ready_count == config.threads && exited_count == 0;
	pthread_mutex_unlock(&ready_lock);

	if (all_ready) {
		sw_log_info("listening address=%s threads=%u env=%s database=%s signup=%s "
			    "max_connections=%u header_timeout_ms=%u body_timeout_ms=%u idle_timeout_ms=%u",
			    config.listen_str, config.threads, sw_env_name(config.env),
			    embedded ? "embedded" : "external", config.signup_enabled ? "on" : "off",
			    config.max_connections, config.header_timeout_ms, config.body_timeout_ms,
			    config.idle_timeout_ms);
		/* Signals wait, blocked, meanwhile; stopping waits for that
		 * thread anyway. */
		if (sw_api_metrics_wait_made(30000))
			release_startup_memory();
		int sig = sw_signals_wait();
		sw_log_info("received %s; shutting down (deadline %u ms)",
			    sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal",
			    config.shutdown_timeout_ms);
		code = 0;
	} else {
		sw_log_error("start-up failed; stopping");
	}
	for (unsigned i = 0; i < started; i++)
		sw_main_thread_request_shutdown(i);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(threads[i].thread, NULL);
		if (threads[i].result < 0 && code == 0)
			code = 1;
	}
	free(threads);
	/* Handlers still running at the deadline are left to the next
	 * start's reaper. */
	sw_jobs_stop(config.shutdown_timeout_ms);
	sw_workers_stop();
	sw_api_container_logs_stop(config.shutdown_timeout_ms);
	if (code == 0)
		sw_log_info("stopped");
out_docs:
	sw_api_metrics_loop_stop();
	sw_api_metrics_stop();
	sw_api_docs_free();
out_router:
	sw_router_free(router);
out_routes:
	free(routes);
	sw_ui_release();
out_db:
	if (embedded)
		sw_db_embedded_stop();
out_seal:
	sw_seal_release();
	sw_config_release(&config);
	return code;
}
