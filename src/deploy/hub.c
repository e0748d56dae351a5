/* The hub: live log chunks of deployments, from the writer's thread to SSE
 * readers on the io loops.
 *
 * Why it looks like this:
 * - One chunk per written line, allocated once and pre-framed as the SSE
 *   bytes every reader sends; each reader writes it by reference (writev)
 *   and drops its reference when the write completes. A thousand readers
 *   cost a thousand references, not a thousand copies.
 * - A topic's chunks form a chain in publication order (each holds a
 *   reference to the next), and a reader is a cursor in it: a reader pulls
 *   what follows its cursor when its stream has room. However far behind a
 *   reader is, it holds one reference; the chain behind the slowest cursor
 *   is freed as it moves (the last reference of a chunk drops the next).
 *   No reader has a queue that a burst of lines could grow.
 * - The writer must not pay per reader: publishing appends to the chain
 *   and posts a wake-up to each io loop that has readers of the topic
 *   (one inbox per loop), only when none is pending; the wake-up, on the
 *   loop's thread, tells each reader of that loop to pull.
 * - One mutex guards topics and inboxes. A reader list is only ever changed
 *   by its own loop's thread (attach, detach, wake-up), so the wake-up walks
 *   it without the lock; a reader detaching during a wake-up is only
 *   marked, and unlinked when the wake-up ends. A cursor is only touched by
 *   its reader's thread; a chunk's next pointer is written once, with
 *   release order, before the topic drops its own reference.
 * - Bounded: SW_SSE_MAX_READERS per deployment; the chain by the readers'
 *   lag (SW_HUB_MAX_LAG_BYTES, enforced by the stream code that reads it).
 * - A topic lives while it has a writer or readers; readers may attach
 *   before a writer opens (a queued deployment) and pull OPENED then. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/deploy/deploy.h"
#include "steward/io/io.h"
#include "steward/base/json.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"

#define BUCKETS 256

struct inbox;

struct sw_hub_reader {
	struct inbox *inbox;
	sw_hub_fn fn;
	void *arg;
	struct sw_hub_chunk *cursor; /* the last chunk pulled (a reference) */
	uint64_t base;               /* the topic's byte count at the attach */
	struct sw_hub_reader *next, *prev;
	bool detached;
};

struct inbox {
	struct sw_hub_topic *topic;
	struct sw_loop *loop;
	struct inbox *next;            /* in the topic */
	struct sw_hub_reader *readers; /* changed only on the loop's thread */
	unsigned nreaders;             /* not detached */
	bool posted;   /* a wake-up is posted and has not started */
	bool waking;   /* the loop is telling its readers */
};

struct sw_hub_topic {
	char id[37];
	struct sw_hub_topic *next; /* hash chain */
	bool writer;
	uint64_t offset;           /* atomic: the log's byte count */
	unsigned nreaders;
	struct sw_hub_chunk *tail; /* the chain's last chunk (a reference) */
	struct inbox *inboxes;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sw_hub_topic *buckets[BUCKETS];
static struct sw_hub_counters counters; /* atomic */

static void count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

void sw_hub_counters(struct sw_hub_counters *out)
{
	out->chunks_allocated = __atomic_load_n(&counters.chunks_allocated, __ATOMIC_RELAXED);
	out->chunks_freed = __atomic_load_n(&counters.chunks_freed, __ATOMIC_RELAXED);
	out->posts = __atomic_load_n(&counters.posts, __ATOMIC_RELAXED);
	out->pulled = __atomic_load_n(&counters.pulled, __ATOMIC_RELAXED);
}

/* ---- chunks ---- */

static void chunk_release(struct sw_ref *ref)
{
	sw_hub_chunk_unref(SW_CONTAINER_OF(ref, struct sw_hub_chunk, ref));
}

struct sw_hub_chunk *sw_hub_chunk_new(enum sw_hub_chunk_kind kind, uint64_t offset, size_t len)
{
	struct sw_hub_chunk *c = malloc(sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	c->offset = offset;
	c->len = len;
	c->kind = kind;
	c->refs = 1;
	c->next = NULL;
	c->ref.release = chunk_release;
	c->data[len] = '\0';
	count(&counters.chunks_allocated);
	return c;
}

void sw_hub_chunk_ref(struct sw_hub_chunk *c)
{
	__atomic_fetch_add(&c->refs, 1, __ATOMIC_RELAXED);
}

void sw_hub_chunk_unref(struct sw_hub_chunk *c)
{
	/* A loop, not recursion: a chain behind a slow reader may be long. */
	while (c && __atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		struct sw_hub_chunk *next = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE);
		count(&counters.chunks_freed);
		free(c);
		c = next;
	}
}

/* ---- framing ---- */

static size_t put(char *out, size_t o, const char *p, size_t n)
{
	if (out)
		memcpy(out + o, p, n);
	return o + n;
}

size_t sw_hub_frame_log(char *out, uint64_t end, const char *data, size_t len)
{
	char head[48];
	int hn = snprintf(head, sizeof(head), "id: %llu\nevent: log\n", (unsigned long long)end);
	size_t o = put(out, 0, head, (size_t)hn);
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - data) : len;
		o = put(out, o, "data: ", 6);
		/* A CR is a line end to an SSE parser: give it its own data line. */
		for (size_t j = i; j < e; j++) {
			if (data[j] == '\r')
				o = put(out, o, "\ndata: ", 7);
			else if (out)
				out[o++] = data[j];
			else
				o++;
		}
		o = put(out, o, "\n", 1);
		i = e + 1;
	}
	return put(out, o, "\n", 1);
}

struct sw_hub_chunk *sw_hub_status_chunk(const char *status, const char *error_message)
{
	struct sw_buf b = { 0 };
	struct sw_json j;
	sw_json_init(&j, &b);
	sw_json_object_begin(&j);
	sw_json_key(&j, "status");
	sw_json_cstr(&j, status);
	sw_json_key(&j, "errorMessage");
	sw_json_cstr(&j, error_message);
	sw_json_object_end(&j);
	struct sw_hub_chunk *c = NULL;
	if (sw_json_finish(&j) == 0) {
		static const char head[] = "event: status\ndata: ";
		size_t n = sizeof(head) - 1 + b.len + 2;
		c = sw_hub_chunk_new(SW_HUB_STATUS, 0, n);
		if (c) {
			memcpy(c->data, head, sizeof(head) - 1);
			memcpy(c->data + sizeof(head) - 1, b.data, b.len);
			memcpy(c->data + sizeof(head) - 1 + b.len, "\n\n", 2);
		}
	}
	sw_buf_release(&b);
	return c;
}

/* ---- topics (lock held) ---- */

static unsigned bucket_of(const char *id)
{
	unsigned h = 2166136261u;
	for (const char *p = id; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h % BUCKETS;
}

static struct sw_hub_topic *topic_find(const char *id)
{
	for (struct sw_hub_topic *t = buckets[bucket_of(id)]; t; t = t->next)
		if (strcmp(t->id, id) == 0)
			return t;
	return NULL;
}

static struct sw_hub_topic *topic_get(const char *id)
{
	struct sw_hub_topic *t = topic_find(id);
	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tail = sw_hub_chunk_new(SW_HUB_START, 0, 0);
	if (!t->tail) {
		free(t);
		return NULL;
	}
	snprintf(t->id, sizeof(t->id), "%s", id);
	unsigned b = bucket_of(id);
	t->next = buckets[b];
	buckets[b] = t;
	return t;
}

static void topic_maybe_free(struct sw_hub_topic *t)
{
	if (t->writer || t->inboxes)
		return;
	struct sw_hub_topic **pp = &buckets[bucket_of(t->id)];
	while (*pp != t)
		pp = &(*pp)->next;
	*pp = t->next;
	sw_hub_chunk_unref(t->tail);
	free(t);
}

static void inbox_maybe_free(struct inbox *in)
{
	if (in->nreaders || in->readers || in->posted || in->waking)
		return;
	struct sw_hub_topic *t = in->topic;
	struct inbox **pp = &t->inboxes;
	while (*pp != in)
		pp = &(*pp)->next;
	*pp = in->next;
	free(in);
	topic_maybe_free(t);
}

static void wake(void *arg);

static void reader_unlink(struct inbox *in, struct sw_hub_reader *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		in->readers = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r);
}

/* Appends c to t's chain (the caller's reference becomes the topic's) and
 * wakes every loop with readers. */
static void append_locked(struct sw_hub_topic *t, struct sw_hub_chunk *c)
{
	struct sw_hub_chunk *old = t->tail;
	sw_hub_chunk_ref(c); /* old's link to it */
	__atomic_store_n(&old->next, c, __ATOMIC_RELEASE);
	t->tail = c;
	sw_hub_chunk_unref(old); /* the topic's, now c's */
	for (struct inbox *in = t->inboxes; in; in = in->next) {
		if (!in->nreaders || in->posted)
			continue;
		if (sw_loop_post(in->loop, wake, in) == 0) {
			in->posted = true;
			count(&counters.posts);
		}
		/* Out of memory: the next chunk wakes them. */
	}
}

/* Runs on the inbox's loop: each reader there pulls what is new. */
static void wake(void *arg)
{
	struct inbox *in = arg;
	pthread_mutex_lock(&lock);
	in->posted = false;
	in->waking = true;
	pthread_mutex_unlock(&lock);
	/* Readers attached meanwhile are at the head: they pull by themselves. */
	for (struct sw_hub_reader *r = in->readers; r; r = r->next)
		if (!r->detached)
			r->fn(r->arg);
	pthread_mutex_lock(&lock);
	in->waking = false;
	for (struct sw_hub_reader *r = in->readers, *next; r; r = next) {
		next = r->next;
		if (r->detached)
			reader_unlink(in, r);
	}
	inbox_maybe_free(in);
	pthread_mutex_unlock(&lock);
}

/* ---- readers ---- */

int sw_hub_attach(const char *deployment_id, struct sw_loop *loop, sw_hub_fn fn, void *arg,
		  struct sw_hub_reader **ret, bool *ret_writing, uint64_t *ret_offset)
{
	struct sw_hub_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&lock);
	int err = 0;
	struct inbox *in = NULL;
	struct sw_hub_topic *t = topic_get(deployment_id);
	if (!t) {
		err = -ENOMEM;
		goto out;
	}
	if (t->nreaders >= SW_SSE_MAX_READERS) {
		err = -EBUSY;
		goto out;
	}
	for (in = t->inboxes; in && in->loop != loop; in = in->next)
		;
	if (!in) {
		in = calloc(1, sizeof(*in));
		if (!in) {
			err = -ENOMEM;
			goto out;
		}
		in->topic = t;
		in->loop = loop;
		in->next = t->inboxes;
		t->inboxes = in;
	}
	r->inbox = in;
	r->fn = fn;
	r->arg = arg;
	r->cursor = t->tail;
	sw_hub_chunk_ref(r->cursor);
	r->base = __atomic_load_n(&t->offset, __ATOMIC_RELAXED);
	r->next = in->readers;
	if (in->readers)
		in->readers->prev = r;
	in->readers = r;
	in->nreaders++;
	t->nreaders++;
	*ret = r;
	*ret_writing = t->writer;
	*ret_offset = __atomic_load_n(&t->offset, __ATOMIC_RELAXED);
out:
	if (err) {
		free(r);
		if (t)
			topic_maybe_free(t);
	}
	pthread_mutex_unlock(&lock);
	return err;
}

struct sw_hub_chunk *sw_hub_next(struct sw_hub_reader *r)
{
	struct sw_hub_chunk *c = __atomic_load_n(&r->cursor->next, __ATOMIC_ACQUIRE);
	if (!c)
		return NULL;
	sw_hub_chunk_ref(c); /* the cursor's */
	sw_hub_chunk_ref(c); /* the caller's */
	sw_hub_chunk_unref(r->cursor);
	r->cursor = c;
	count(&counters.pulled);
	return c;
}

uint64_t sw_hub_lag(const struct sw_hub_reader *r)
{
	uint64_t end = __atomic_load_n(&r->inbox->topic->offset, __ATOMIC_RELAXED);
	uint64_t at = SW_MAX(r->base, r->cursor->offset);
	return end > at ? end - at : 0;
}

void sw_hub_detach(struct sw_hub_reader *r)
{
	if (!r)
		return;
	sw_hub_chunk_unref(r->cursor);
	r->cursor = NULL;
	pthread_mutex_lock(&lock);
	struct inbox *in = r->inbox;
	if (!r->detached) {
		r->detached = true;
		in->nreaders--;
		in->topic->nreaders--;
	}
	if (!in->waking) {
		reader_unlink(in, r);
		inbox_maybe_free(in);
	}
	pthread_mutex_unlock(&lock);
}

/* ---- writers ---- */

struct sw_hub_topic *sw_hub_writer_open(const char *deployment_id, uint64_t offset)
{
	struct sw_hub_chunk *opened = sw_hub_chunk_new(SW_HUB_OPENED, offset, 0);
	if (!opened) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&lock);
	struct sw_hub_topic *t = topic_get(deployment_id);
	if (!t || t->writer) {
		errno = t ? EBUSY : ENOMEM;
		t = NULL;
	} else {
		t->writer = true;
		__atomic_store_n(&t->offset, offset, __ATOMIC_RELAXED);
		append_locked(t, opened);
		opened = NULL;
	}
	pthread_mutex_unlock(&lock);
	sw_hub_chunk_unref(opened);
	return t;
}

int sw_hub_advance(struct sw_hub_topic *t, uint64_t end)
{
	int r = 0;
	pthread_mutex_lock(&lock);
	if (t->nreaders)
		r = -EAGAIN;
	else
		__atomic_store_n(&t->offset, end, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
	return r;
}

void sw_hub_publish(struct sw_hub_topic *t, struct sw_hub_chunk *c)
{
	pthread_mutex_lock(&lock);
	__atomic_store_n(&t->offset, c->offset, __ATOMIC_RELAXED);
	append_locked(t, c);
	pthread_mutex_unlock(&lock);
}

void sw_hub_writer_close(struct sw_hub_topic *t, struct sw_hub_chunk *final)
{
	pthread_mutex_lock(&lock);
	struct sw_hub_chunk *c = final ? final : sw_hub_chunk_new(SW_HUB_CLOSED, 0, 0);
	if (c) {
		c->offset = __atomic_load_n(&t->offset, __ATOMIC_RELAXED);
		append_locked(t, c);
	} else {
		/* Out of memory: readers here will learn the end from the database. */
		sw_log_error("hub: out of memory closing the live log of %s", t->id);
	}
	t->writer = false;
	topic_maybe_free(t);
	pthread_mutex_unlock(&lock);
}
