/* Following Steward's containers by the engine's event stream
 * (container_watch.h). One thread: list, then follow; when the stream
 * ends, list again. Entries are kept in the order they were first seen
 * (the initial list put oldest first), so a reader walks them from the
 * end for "newest first", the order the engine's list gives. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include "driver_internal.h"
#include "steward/driver/container_watch.h"

#define EVENT_LINE_MAX (64u * 1024) /* one event's JSON; a longer one: listed again */

struct sw_container_watch {
	struct sw_driver *d;
	pthread_t thread;
	volatile bool stop;         /* atomic: read by the stream when stop_fd wakes it */
	int stop_fd;                /* eventfd, readable once stop is set */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Under mu: */
	bool in_step;
	char why[256];              /* why not in step */
	struct sw_container_state *set;
	size_t n, cap;
	uint64_t lists, events;
	/* The thread's own: the event line being read. */
	struct sw_buf line;
};

static bool stopping(const struct sw_container_watch *w)
{
	return __atomic_load_n(&w->stop, __ATOMIC_RELAXED);
}

/* Under mu. */
static ssize_t find(const struct sw_container_watch *w, const char *id)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcmp(w->set[i].id, id) == 0)
			return (ssize_t)i;
	return -1;
}

/* Under mu: the entry of id forgotten (order kept). */
static void forget(struct sw_container_watch *w, const char *id)
{
	ssize_t i = find(w, id);
	if (i < 0)
		return;
	memmove(&w->set[i], &w->set[i + 1], (w->n - (size_t)i - 1) * sizeof(*w->set));
	w->n--;
}

/* Under mu: st kept, replacing its entry or appended as the newest. */
static void keep(struct sw_container_watch *w, const struct sw_container_state *st)
{
	ssize_t i = find(w, st->id);
	if (i >= 0) {
		w->set[i] = *st;
		return;
	}
	if (w->n == w->cap) {
		if (w->cap >= SW_CONTAINER_WATCH_MAX)
			return;
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct sw_container_state *a = realloc(w->set, cap * sizeof(*a));
		if (!a)
			return;
		w->set = a;
		w->cap = cap;
	}
	w->set[w->n++] = *st;
}

static void out_of_step(struct sw_container_watch *w, const char *why)
{
	pthread_mutex_lock(&w->mu);
	w->in_step = false;
	snprintf(w->why, sizeof(w->why), "%s", why);
	pthread_mutex_unlock(&w->mu);
}

/* The container of an event, inspected again: kept with what the engine
 * says now, or forgotten when it is gone. An engine that does not answer:
 * out of step, -errno (the stream is left and the engine listed again). */
static int refresh(struct sw_container_watch *w, const char *id, bool destroyed)
{
	struct sw_container_state st;
	char err[256];
	int rc = destroyed ? -ENOENT : sw_driver_container_state(w->d, id, &st, err, sizeof(err));
	pthread_mutex_lock(&w->mu);
	w->events++;
	if (rc == -ENOENT || (rc == 0 && !st.application_id[0]))
		forget(w, id);
	else if (rc == 0)
		keep(w, &st);
	pthread_mutex_unlock(&w->mu);
	if (rc < 0 && rc != -ENOENT) { /* the engine did not answer: list again */
		out_of_step(w, err);
		return rc;
	}
	return 0;
}

/* The engine's list of Steward's containers, each inspected, replaces the
 * set. The list has room for SW_CONTAINER_WATCH_MAX but only its first
 * entries are written (malloc, not calloc: 2.4 MB that the allocator
 * zeroes when it reuses freed pages would all be made resident), and the
 * set is sized to what was listed (keep() grows it): at 4096 entries it
 * was 1.3 MB, kept for the process's life. */
static int relist(struct sw_container_watch *w, char *err, size_t errlen)
{
	struct sw_container_info *list = malloc(SW_CONTAINER_WATCH_MAX * sizeof(*list));
	struct sw_container_state *states = NULL;
	size_t n = 0, got = 0, cap;
	int rc = -ENOMEM;
	if (!list) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if ((rc = sw_driver_containers_list(w->d, NULL, list, SW_CONTAINER_WATCH_MAX, &got, err, errlen)) < 0)
		goto out;
	cap = SW_MAX(got, (size_t)16);
	if (!(states = malloc(cap * sizeof(*states)))) {
		rc = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* The list is newest first; the set is oldest first. */
	for (size_t k = got; k-- > 0 && !stopping(w);) {
		int r = sw_driver_container_state(w->d, list[k].id, &states[n], err, errlen);
		if (r == -ENOENT) /* removed since the list */
			continue;
		if (r < 0) {
			rc = r;
			goto out;
		}
		if (states[n].application_id[0])
			n++;
	}
	pthread_mutex_lock(&w->mu);
	free(w->set);
	w->set = states;
	w->n = n;
	w->cap = cap;
	w->lists++;
	w->in_step = true;
	w->why[0] = '\0';
	pthread_mutex_unlock(&w->mu);
	states = NULL;
	rc = 0;
out:
	free(list);
	free(states);
	return rc;
}

/* One event line: {"Type":"container","Action":"start","Actor":{"ID":...}}. */
static int event(struct sw_container_watch *w, const char *p, size_t len)
{
	int rc = 0;
	json_t *ev = json_loadb(p, len, 0, NULL);
	if (!ev) { /* an event missed: list again */
		out_of_step(w, "the engine sent an event that is not JSON");
		return -EIO;
	}
	const char *type = json_string_value(json_object_get(ev, "Type"));
	const char *action = json_string_value(json_object_get(ev, "Action"));
	const char *id = json_string_value(json_object_get(json_object_get(ev, "Actor"), "ID"));
	if (type && action && id && strcmp(type, "container") == 0 && sw_driver_token_ok(id, "", SW_DRIVER_ID_MAX - 1))
		rc = refresh(w, id, strcmp(action, "destroy") == 0);
	json_decref(ev);
	return rc;
}

static int on_data(void *arg, const char *p, size_t n)
{
	struct sw_container_watch *w = arg;
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;
		if (w->line.len + take > EVENT_LINE_MAX) { /* an event missed: list again */
			out_of_step(w, "the engine sent an event too long to read");
			return -EFBIG;
		}
		if (sw_buf_append(&w->line, p, take) < 0) {
			out_of_step(w, "out of memory");
			return -ENOMEM;
		}
		if (nl) {
			int rc = w->line.len ? event(w, (const char *)w->line.data, w->line.len) : 0;
			if (rc < 0)
				return rc; /* out of step already, saying why */
			w->line.len = 0;
			take++;
		}
		p += take;
		n -= take;
	}
	return 0;
}

/* Follows the engine's events from since (unix seconds) until the stream
 * ends, an event's inspect fails, or the watch stops. */
static void follow(struct sw_container_watch *w, int64_t since)
{
	static const char filters[] =
		"{\"type\":[\"container\"],\"label\":[\"steward.application\"],\"event\":[\"create\",\"start\","
		"\"restart\",\"die\",\"destroy\",\"pause\",\"unpause\",\"health_status\",\"oom\",\"rename\"]}";
	struct sw_buf url = { 0 };
	char head[128];
	snprintf(head, sizeof(head), SW_DRIVER_ENGINE_BASE "/events?since=%lld&filters=", (long long)since);
	char err[256] = "";
	if (sw_buf_append(&url, head, strlen(head)) < 0 || sw_driver_url_encode(&url, filters) < 0 ||
	    sw_buf_append(&url, "", 1) < 0) {
		sw_buf_release(&url);
		out_of_step(w, "out of memory");
		return;
	}
	w->line.len = 0;
	struct sw_driver_http h = { .method = "GET", .url = (const char *)url.data,
				    .unix_socket = w->d->docker_socket, .on_data = on_data, .data_arg = w,
				    .cancel = &w->stop, .cancel_fd = w->stop_fd };
	int rc = sw_driver_http_run(&h, "the Docker engine", err, sizeof(err));
	pthread_mutex_lock(&w->mu);
	bool was_in_step = w->in_step; /* else an inspect failed and said why */
	pthread_mutex_unlock(&w->mu);
	if (rc == 0 && h.status != 200)
		sw_driver_answer_error(&h, "the engine's events cannot be followed", err, sizeof(err));
	else if (rc == 0)
		snprintf(err, sizeof(err), "the engine's event stream ended");
	if (was_in_step)
		out_of_step(w, err);
	sw_buf_release(&h.response);
	sw_buf_release(&url);
}

/* Waits up to ms unless the watch stops. */
static void pause_ms(struct sw_container_watch *w, unsigned ms)
{
	struct timespec ts = sw_deadline_after_ms(CLOCK_REALTIME, ms);
	pthread_mutex_lock(&w->mu);
	while (!stopping(w) && pthread_cond_timedwait(&w->cv, &w->mu, &ts) == 0)
		;
	pthread_mutex_unlock(&w->mu);
}

static void *watch_main(void *arg)
{
	struct sw_container_watch *w = arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!stopping(w)) {
		/* A second back: events of the second the list is made in come
		 * again (inspecting again is harmless), none is missed. */
		int64_t since = (int64_t)time(NULL) - 1;
		char err[256] = "";
		if (relist(w, err, sizeof(err)) < 0) {
			out_of_step(w, err);
			pause_ms(w, SW_CONTAINER_WATCH_RETRY_MS);
			continue;
		}
		follow(w, since);
		if (!stopping(w))
			pause_ms(w, SW_CONTAINER_WATCH_RETRY_MS / 5);
	}
	return NULL;
}

struct sw_container_watch *sw_container_watch_new(struct sw_driver *d)
{
	if (!d || d->remote) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	struct sw_container_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->d = d;
	snprintf(w->why, sizeof(w->why), "the engine's containers are not listed yet");
	w->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->stop_fd < 0) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	int rc = pthread_create(&w->thread, NULL, watch_main, w);
	if (rc != 0) {
		close(w->stop_fd);
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		errno = rc;
		return NULL;
	}
	return w;
}

void sw_container_watch_free(struct sw_container_watch *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	uint64_t one = 1; /* wakes the stream's wait */
	ssize_t wr = write(w->stop_fd, &one, sizeof(one));
	(void)wr; /* an eventfd's counter at 1 takes the write */
	pthread_join(w->thread, NULL);
	close(w->stop_fd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	sw_buf_release(&w->line);
	free(w->set);
	free(w);
}

int sw_container_watch_list(struct sw_container_watch *w, const char *application_id,
			    struct sw_container_state *out, size_t cap, size_t *ret_n, char *err, size_t errlen)
{
	*ret_n = 0;
	pthread_mutex_lock(&w->mu);
	if (!w->in_step) {
		snprintf(err, errlen, "%s", w->why);
		pthread_mutex_unlock(&w->mu);
		return -EAGAIN;
	}
	for (size_t i = w->n; i-- > 0 && *ret_n < cap;)
		if (!application_id || strcmp(w->set[i].application_id, application_id) == 0)
			out[(*ret_n)++] = w->set[i];
	pthread_mutex_unlock(&w->mu);
	return 0;
}

void sw_container_watch_stats(struct sw_container_watch *w, struct sw_container_watch_stats *ret)
{
	pthread_mutex_lock(&w->mu);
	ret->lists = w->lists;
	ret->events = w->events;
	ret->in_step = w->in_step;
	pthread_mutex_unlock(&w->mu);
}
