/* A small thread pool for blocking work (argon2 now; libgit2, archives and
 * builds later), in the manner of nginx's thread pool: a FIFO under one
 * mutex, a fixed number of threads, and each finished job handed back to
 * the loop that submitted it, whose thread runs done(). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "steward/io/io.h"
#include "steward/base/limits.h"
#include "io/io_internal.h"

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct sw_worker_job *head, *tail;
	unsigned queued;
	bool stopping;
	pthread_t *threads;
	unsigned nthreads;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *worker_main(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&pool.lock);
		while (!pool.head && !pool.stopping)
			pthread_cond_wait(&pool.cond, &pool.lock);
		struct sw_worker_job *job = pool.head;
		if (!job) {
			pthread_mutex_unlock(&pool.lock);
			return NULL;
		}
		pool.head = job->next;
		if (!pool.head)
			pool.tail = NULL;
		pool.queued--;
		pthread_mutex_unlock(&pool.lock);
		job->run(job);
		job->next = NULL;
		sw_io_loop_job_done(job->loop, job);
	}
}

int sw_workers_start(unsigned nthreads)
{
	pool.threads = calloc(nthreads, sizeof(*pool.threads));
	if (!pool.threads)
		return -ENOMEM;
	pool.stopping = false;
	for (unsigned i = 0; i < nthreads; i++) {
		int r = pthread_create(&pool.threads[i], NULL, worker_main, NULL);
		if (r != 0) {
			sw_workers_stop();
			return -r;
		}
		pool.nthreads++;
	}
	return 0;
}

void sw_workers_stop(void)
{
	pthread_mutex_lock(&pool.lock);
	pool.stopping = true;
	pthread_cond_broadcast(&pool.cond);
	pthread_mutex_unlock(&pool.lock);
	for (unsigned i = 0; i < pool.nthreads; i++)
		pthread_join(pool.threads[i], NULL);
	free(pool.threads);
	pool.threads = NULL;
	pool.nthreads = 0;
}

int sw_worker_submit(struct sw_loop *loop, struct sw_worker_job *job)
{
	job->loop = loop;
	job->next = NULL;
	pthread_mutex_lock(&pool.lock);
	if (pool.queued >= SW_WORKER_MAX_QUEUE || pool.stopping) {
		pthread_mutex_unlock(&pool.lock);
		return -EBUSY;
	}
	if (pool.tail)
		pool.tail->next = job;
	else
		pool.head = job;
	pool.tail = job;
	pool.queued++;
	pthread_cond_signal(&pool.cond);
	pthread_mutex_unlock(&pool.lock);
	return 0;
}
