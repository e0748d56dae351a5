/* The per-thread composition root: the one place that knows a server
 * thread is a loop, a database pool and an HTTP server, so that http never
 * knows db. The pool reaches request handlers through the loop's data
 * (sw_db_pool_attach, sw_db_pool_of(req->loop)); the server is told when to
 * accept (once the pool is ready) and tells back when it has drained (then
 * the pool closes, then the loop stops). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/log.h"
#include "steward/db/db.h"
#include "steward/io/io.h"
#include "main/thread.h"

#define MAX_THREADS 64
/* A thread accepts connections and reports ready once its pool has a
 * connection, so that /health right after start-up means what it says on
 * every thread; a database that is down does not keep the server from
 * starting (it accepts and reports ready after this bound, then answers
 * 503 DATABASE_UNAVAILABLE where a query is needed). */
#define READY_WAIT_MS 3000

struct thread {
	const struct sw_main_threads *shared;
	unsigned index;
	struct sw_loop *loop;
	struct sw_db_pool *pool;
	struct sw_server *server;
	struct sw_timer ready_timer;
	uint64_t ready_deadline;
	bool stopping;
};

/* Running threads, for sw_main_thread_request_shutdown() from the main
 * thread. The lock keeps a post from overlapping the loop's free. */
static struct thread *running[MAX_THREADS];
static pthread_mutex_t running_lock = PTHREAD_MUTEX_INITIALIZER;

static void ready_report(struct thread *t)
{
	sw_timer_stop(t->loop, &t->ready_timer);
	if (t->shared->ready)
		t->shared->ready(t->index);
}

static void ready_check(struct sw_timer *timer)
{
	struct thread *t = SW_CONTAINER_OF(timer, struct thread, ready_timer);
	const char *reason;
	if (t->pool && !sw_db_pool_healthy(t->pool, &reason) &&
	    sw_loop_now_ms(t->loop) < t->ready_deadline) {
		sw_timer_start(t->loop, &t->ready_timer, 5, ready_check);
		return;
	}
	/* Only now does this thread take connections: the kernel holds the
	 * ones its listener gets meanwhile in the backlog, so no request is
	 * answered 503 by a thread whose pool is still connecting while
	 * another thread's /health already says ok. */
	sw_server_accept(t->server);
	ready_report(t);
}

static void pool_closed(void *arg)
{
	struct thread *t = arg;
	t->pool = NULL;
	sw_loop_set_data(t->loop, NULL);
	sw_loop_stop(t->loop);
}

static void drained(void *arg)
{
	struct thread *t = arg;
	if (t->pool)
		sw_db_pool_close(t->pool, pool_closed, t);
	else
		sw_loop_stop(t->loop);
}

static void begin_shutdown(void *arg)
{
	struct thread *t = arg;
	if (t->stopping)
		return;
	t->stopping = true;
	if (sw_timer_armed(&t->ready_timer))
		ready_report(t); /* so main is not left waiting */
	sw_server_shutdown(t->server, drained, t);
}

void sw_main_thread_request_shutdown(unsigned index)
{
	if (index >= MAX_THREADS)
		return;
	pthread_mutex_lock(&running_lock);
	struct thread *t = running[index];
	if (t)
		sw_loop_post(t->loop, begin_shutdown, t);
	pthread_mutex_unlock(&running_lock);
}

int sw_main_thread_run(const struct sw_main_threads *shared, unsigned index)
{
	if (index >= MAX_THREADS)
		return -EINVAL;
	struct thread t = { .shared = shared, .index = index };
	int r = 0;
	t.loop = sw_loop_new(index, 1024, 512, 4096);
	if (!t.loop)
		return -errno;
	t.server = sw_server_new(t.loop, shared->server);
	if (!t.server) {
		r = -errno;
		sw_log_error("cannot listen on %s: %s", shared->server->config->listen_str, strerror(-r));
		goto out_loop;
	}
	const struct sw_config *config = shared->server->config;
	t.pool = sw_db_pool_new(t.loop, shared->conninfo, config->db_pool_size,
				config->db_query_timeout_ms);
	if (!t.pool) {
		r = -ENOMEM;
		goto out_server;
	}
	sw_db_pool_attach(t.pool);
	if (shared->pool_created)
		shared->pool_created(t.pool);
	pthread_mutex_lock(&running_lock);
	running[index] = &t;
	pthread_mutex_unlock(&running_lock);
	t.ready_deadline = sw_loop_now_ms(t.loop) + READY_WAIT_MS;
	sw_timer_start(t.loop, &t.ready_timer, 0, ready_check);
	r = sw_loop_run(t.loop);
	pthread_mutex_lock(&running_lock);
	running[index] = NULL;
	pthread_mutex_unlock(&running_lock);
out_server:
	sw_server_free(t.server);
out_loop:
	sw_loop_free(t.loop);
	return r;
}
