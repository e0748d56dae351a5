/* The ring loop.
 *
 * Why it looks like this: one io_uring per thread, created with
 * SINGLE_ISSUER | DEFER_TASKRUN so completions are processed only when the
 * thread asks (no interrupts between batches). Every operation's user_data
 * is the address of a struct sw_io_op embedded in its owner; the loop calls
 * its cb and knows nothing else about it. Submissions accumulate in the SQ
 * and go to the kernel together with the wait for the next batch, so a
 * batch of N completions costs one io_uring_enter.
 *
 * Receives use a provided buffer ring (group 0). liburing 2.3 has no
 * io_uring_setup_buf_ring(), so setup_buf_ring() below maps and registers
 * it by hand. Buffer memory is mapped lazily: pages count towards RSS only
 * once the kernel has written into them.
 *
 * Timers live in a binary min-heap; the nearest deadline becomes the
 * timeout of the wait itself (IORING_FEAT_EXT_ARG), so no timeout SQE is
 * ever armed and an idle loop sleeps in the kernel until I/O arrives.
 *
 * Other threads reach a loop only through sw_loop_post() and finished
 * worker jobs: a mutex-protected list plus an eventfd whose read is always
 * pending on the ring. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <liburing.h>
#include "steward/io/io.h"
#include "steward/base/log.h"
#include "io/io_internal.h"

struct post_item {
	void (*fn)(void *arg);
	void *arg;
	struct post_item *next;
};

struct sw_loop {
	struct io_uring ring;
	unsigned index;
	bool stop;
	bool can_splice; /* IORING_OP_SPLICE is supported */
	uint64_t now_ms;
	void *data;

	/* provided buffers, group 0 */
	struct io_uring_buf_ring *br;
	size_t br_size;
	char *bufs;
	unsigned nbufs;
	unsigned bufsize;

	/* timers: heap[1..count] */
	struct sw_timer **heap;
	unsigned heap_count;
	unsigned heap_cap;

	/* cross-thread */
	int efd;
	uint64_t efd_value;
	struct sw_io_op efd_op;
	pthread_mutex_t post_lock;
	struct post_item *posted;        /* LIFO under lock, reversed on drain */
	struct sw_worker_job *jobs_done; /* likewise */

	/* hooks for the end of this turn, LIFO (their order is not promised) */
	struct sw_turn *turn_end;
#if SW_CHECKS
	pthread_t owner; /* the only thread that may submit (SINGLE_ISSUER) or touch timers */
#endif
};

/* The calling thread is the loop's own: every call but sw_loop_post(). */
#if SW_CHECKS
#define LOOP_OWNED(loop) SW_ASSERT(pthread_equal((loop)->owner, pthread_self()))
#else
#define LOOP_OWNED(loop) ((void)0)
#endif

static __thread struct sw_loop *current_loop;

int sw_io_probe(char *err, size_t errlen)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	if (uname(&u) == 0)
		sscanf(u.release, "%u.%u", &major, &minor);

	struct io_uring ring;
	int r = io_uring_queue_init(8, &ring, 0);
	if (r < 0) {
		snprintf(err, errlen, "io_uring is not available: io_uring_setup failed (%s); "
			 "it may be disabled (sysctl kernel.io_uring_disabled) or blocked by seccomp",
			 strerror(-r));
		return r;
	}
	const char *missing = NULL;
	struct io_uring_probe *p = io_uring_get_probe_ring(&ring);
	static const struct {
		int op;
		const char *name;
	} ops[] = {
		{ IORING_OP_ACCEPT, "IORING_OP_ACCEPT" },   { IORING_OP_RECV, "IORING_OP_RECV" },
		{ IORING_OP_WRITEV, "IORING_OP_WRITEV" },   { IORING_OP_READ, "IORING_OP_READ" },
		{ IORING_OP_POLL_ADD, "IORING_OP_POLL_ADD" }, { IORING_OP_ASYNC_CANCEL, "IORING_OP_ASYNC_CANCEL" },
		{ IORING_OP_CLOSE, "IORING_OP_CLOSE" },
	};
	if (!p) {
		missing = "the opcode probe (IORING_REGISTER_PROBE, Linux 5.6)";
	} else {
		for (size_t i = 0; i < SW_ARRAY_SIZE(ops) && !missing; i++)
			if (!io_uring_opcode_supported(p, ops[i].op))
				missing = ops[i].name;
		io_uring_free_probe(p);
	}
	if (!missing && !(ring.features & IORING_FEAT_EXT_ARG))
		missing = "IORING_FEAT_EXT_ARG (timed waits, Linux 5.11)";
	if (!missing && !(ring.features & IORING_FEAT_FAST_POLL))
		missing = "IORING_FEAT_FAST_POLL (Linux 5.7)";
	if (!missing) {
		/* Provided buffer rings (5.19) and multishot receive (6.0) have
		 * no opcode of their own: try the registration, check the version. */
		void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
		struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)mem, .ring_entries = 1, .bgid = 7 };
		if (mem == MAP_FAILED || io_uring_register_buf_ring(&ring, &reg, 0) < 0)
			missing = "provided buffer rings (IORING_REGISTER_PBUF_RING, Linux 5.19)";
		if (mem != MAP_FAILED)
			munmap(mem, 4096);
	}
	if (!missing && (major < 6))
		missing = "multishot receive (IORING_RECV_MULTISHOT, Linux 6.0)";
	io_uring_queue_exit(&ring);
	if (missing) {
		snprintf(err, errlen, "this kernel's io_uring (Linux %s) lacks %s; Steward needs Linux 6.1 or later",
			 u.release, missing);
		return -ENOTSUP;
	}
	return 0;
}

static int setup_buf_ring(struct sw_loop *loop, unsigned nbufs, unsigned bufsize)
{
	loop->br_size = nbufs * sizeof(struct io_uring_buf);
	loop->br_size = (loop->br_size + 4095) & ~(size_t)4095;
	void *mem = mmap(NULL, loop->br_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	if (mem == MAP_FAILED)
		return -errno;
	struct io_uring_buf_reg reg = { .ring_addr = (unsigned long)mem, .ring_entries = nbufs, .bgid = 0 };
	int r = io_uring_register_buf_ring(&loop->ring, &reg, 0);
	if (r < 0) {
		munmap(mem, loop->br_size);
		return r;
	}
	loop->br = mem;
	io_uring_buf_ring_init(loop->br);
	loop->bufs = mmap(NULL, (size_t)nbufs * bufsize, PROT_READ | PROT_WRITE,
			  MAP_ANONYMOUS | MAP_PRIVATE | MAP_NORESERVE, -1, 0);
	if (loop->bufs == MAP_FAILED) {
		r = -errno;
		io_uring_unregister_buf_ring(&loop->ring, 0);
		munmap(mem, loop->br_size);
		loop->br = NULL;
		loop->bufs = NULL;
		return r;
	}
	loop->nbufs = nbufs;
	loop->bufsize = bufsize;
	int mask = io_uring_buf_ring_mask(nbufs);
	for (unsigned i = 0; i < nbufs; i++)
		io_uring_buf_ring_add(loop->br, loop->bufs + (size_t)i * bufsize, bufsize,
				      (unsigned short)i, mask, (int)i);
	io_uring_buf_ring_advance(loop->br, (int)nbufs);
	return 0;
}

static void efd_arm(struct sw_loop *loop);

static void efd_done(struct sw_io_op *op, int res, uint32_t flags)
{
	struct sw_loop *loop = SW_CONTAINER_OF(op, struct sw_loop, efd_op);
	(void)res;
	(void)flags;
	/* Work is drained once per batch in drain_posted(); re-arm. */
	if (loop->efd >= 0)
		efd_arm(loop);
}

static void efd_arm(struct sw_loop *loop)
{
	loop->efd_op.cb = efd_done;
	sw_io_read(loop, &loop->efd_op, loop->efd, &loop->efd_value, sizeof(loop->efd_value));
}

struct sw_loop *sw_loop_new(unsigned index, unsigned entries, unsigned nbufs, unsigned bufsize)
{
	if (nbufs == 0 || (nbufs & (nbufs - 1)) || nbufs > 32768) {
		errno = EINVAL;
		return NULL;
	}
	struct sw_loop *loop = calloc(1, sizeof(*loop));
	if (!loop)
		return NULL;
	loop->index = index;
	loop->efd = -1;
	struct io_uring_params params = { 0 };
	params.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN |
		       IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	params.flags |= IORING_SETUP_CQSIZE;
	params.cq_entries = entries * 4;
	int r = io_uring_queue_init_params(entries, &loop->ring, &params);
	if (r == -EINVAL) {
		memset(&params, 0, sizeof(params));
		params.flags = IORING_SETUP_CQSIZE;
		params.cq_entries = entries * 4;
		r = io_uring_queue_init_params(entries, &loop->ring, &params);
	}
	if (r < 0)
		goto fail_free;
	r = setup_buf_ring(loop, nbufs, bufsize);
	if (r < 0)
		goto fail_ring;
	struct io_uring_probe *probe = io_uring_get_probe_ring(&loop->ring);
	if (probe) {
		loop->can_splice = io_uring_opcode_supported(probe, IORING_OP_SPLICE);
		io_uring_free_probe(probe);
	}
	loop->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (loop->efd < 0) {
		r = -errno;
		goto fail_bufs;
	}
	pthread_mutex_init(&loop->post_lock, NULL);
	loop->now_ms = sw_now_ms();
	current_loop = loop;
#if SW_CHECKS
	loop->owner = pthread_self();
#endif
	efd_arm(loop);
	return loop;

fail_bufs:
	io_uring_unregister_buf_ring(&loop->ring, 0);
	munmap(loop->bufs, (size_t)loop->nbufs * loop->bufsize);
	munmap(loop->br, loop->br_size);
fail_ring:
	io_uring_queue_exit(&loop->ring);
fail_free:
	free(loop);
	errno = -r;
	return NULL;
}

void sw_loop_free(struct sw_loop *loop)
{
	if (!loop)
		return;
	/* A poster still inside sw_loop_post() finishes before we go on. */
	pthread_mutex_lock(&loop->post_lock);
	int efd = loop->efd;
	loop->efd = -1;
	pthread_mutex_unlock(&loop->post_lock);
	io_uring_queue_exit(&loop->ring); /* cancels and reaps what is left */
	if (efd >= 0)
		close(efd);
	if (loop->br)
		munmap(loop->br, loop->br_size);
	if (loop->bufs)
		munmap(loop->bufs, (size_t)loop->nbufs * loop->bufsize);
	struct post_item *p = loop->posted;
	while (p) {
		struct post_item *n = p->next;
		free(p);
		p = n;
	}
	pthread_mutex_destroy(&loop->post_lock);
	free(loop->heap);
	if (current_loop == loop)
		current_loop = NULL;
	free(loop);
}

struct sw_loop *sw_loop_current(void)
{
	return current_loop;
}

unsigned sw_loop_index(const struct sw_loop *loop)
{
	return loop->index;
}

void sw_loop_set_data(struct sw_loop *loop, void *data)
{
	loop->data = data;
}

void *sw_loop_data(const struct sw_loop *loop)
{
	return loop->data;
}

uint64_t sw_loop_now_ms(const struct sw_loop *loop)
{
	return loop->now_ms;
}

void sw_loop_stop(struct sw_loop *loop)
{
	LOOP_OWNED(loop);
	loop->stop = true;
}

/* An SQE, flushing the queue to the kernel once if it is full. */
static struct io_uring_sqe *get_sqe(struct sw_loop *loop)
{
	LOOP_OWNED(loop);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&loop->ring);
	if (SW_UNLIKELY(!sqe)) {
		io_uring_submit(&loop->ring);
		sqe = io_uring_get_sqe(&loop->ring);
	}
	return sqe;
}

int sw_io_accept_multishot(struct sw_loop *loop, struct sw_io_op *op, int fd)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_multishot_accept(sqe, fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int sw_io_recv_multishot(struct sw_loop *loop, struct sw_io_op *op, int fd)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_recv_multishot(sqe, fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 0;
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int sw_io_writev(struct sw_loop *loop, struct sw_io_op *op, int fd,
		 const struct iovec *iov, unsigned iovcnt)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_writev(sqe, fd, iov, iovcnt, 0);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int sw_io_read(struct sw_loop *loop, struct sw_io_op *op, int fd, void *buf, size_t len)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, fd, buf, (unsigned)len, 0);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int sw_io_pread(struct sw_loop *loop, struct sw_io_op *op, int fd, void *buf, size_t len,
		uint64_t off)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_read(sqe, fd, buf, (unsigned)SW_MIN(len, (size_t)1 << 30), off);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int sw_io_splice(struct sw_loop *loop, struct sw_io_op *op, int fd_in, int64_t off_in,
		 int fd_out, int64_t off_out, unsigned len)
{
	if (!loop->can_splice)
		return -EOPNOTSUPP;
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_splice(sqe, fd_in, off_in, fd_out, off_out, len, 0);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

bool sw_loop_can_splice(const struct sw_loop *loop)
{
	return loop->can_splice;
}

int sw_io_poll(struct sw_loop *loop, struct sw_io_op *op, int fd, unsigned poll_mask)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_add(sqe, fd, poll_mask);
	io_uring_sqe_set_data(sqe, op);
	return 0;
}

int sw_io_cancel(struct sw_loop *loop, struct sw_io_op *target)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_cancel(sqe, target, IORING_ASYNC_CANCEL_ALL);
	io_uring_sqe_set_data(sqe, NULL);
	return 0;
}

int sw_io_close(struct sw_loop *loop, int fd)
{
	struct io_uring_sqe *sqe = get_sqe(loop);
	if (!sqe) {
		close(fd);
		return 0;
	}
	io_uring_prep_close(sqe, fd);
	io_uring_sqe_set_data(sqe, NULL);
	return 0;
}

char *sw_loop_buffer(struct sw_loop *loop, uint32_t cqe_flags)
{
	unsigned bid = cqe_flags >> IORING_CQE_BUFFER_SHIFT;
	SW_ASSERT((cqe_flags & IORING_CQE_F_BUFFER) && bid < loop->nbufs);
	return loop->bufs + (size_t)bid * loop->bufsize;
}

void sw_loop_buffer_recycle(struct sw_loop *loop, uint32_t cqe_flags)
{
	unsigned bid = cqe_flags >> IORING_CQE_BUFFER_SHIFT;
	SW_ASSERT((cqe_flags & IORING_CQE_F_BUFFER) && bid < loop->nbufs);
	io_uring_buf_ring_add(loop->br, loop->bufs + (size_t)bid * loop->bufsize, loop->bufsize,
			      (unsigned short)bid, io_uring_buf_ring_mask(loop->nbufs), 0);
	io_uring_buf_ring_advance(loop->br, 1);
}

/* ---- timers ---- */

static void heap_swap(struct sw_loop *loop, unsigned a, unsigned b)
{
	struct sw_timer *t = loop->heap[a];
	loop->heap[a] = loop->heap[b];
	loop->heap[b] = t;
	loop->heap[a]->heap_index = a;
	loop->heap[b]->heap_index = b;
}

static void heap_up(struct sw_loop *loop, unsigned i)
{
	while (i > 1 && loop->heap[i / 2]->deadline_ms > loop->heap[i]->deadline_ms) {
		heap_swap(loop, i, i / 2);
		i /= 2;
	}
}

static void heap_down(struct sw_loop *loop, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i, r = l + 1, m = i;
		if (l <= loop->heap_count && loop->heap[l]->deadline_ms < loop->heap[m]->deadline_ms)
			m = l;
		if (r <= loop->heap_count && loop->heap[r]->deadline_ms < loop->heap[m]->deadline_ms)
			m = r;
		if (m == i)
			return;
		heap_swap(loop, i, m);
		i = m;
	}
}

int sw_timer_start(struct sw_loop *loop, struct sw_timer *t, uint64_t delay_ms, sw_timer_cb cb)
{
	LOOP_OWNED(loop);
	SW_ASSERT(cb && (!t->heap_index || (t->heap_index <= loop->heap_count &&
					    loop->heap[t->heap_index] == t)));
	t->cb = cb;
	t->deadline_ms = loop->now_ms + delay_ms;
	if (t->heap_index) {
		heap_up(loop, t->heap_index);
		heap_down(loop, t->heap_index);
		return 0;
	}
	if (loop->heap_count + 1 >= loop->heap_cap) {
		unsigned cap = loop->heap_cap ? loop->heap_cap * 2 : 64;
		struct sw_timer **h = realloc(loop->heap, cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		loop->heap = h;
		loop->heap_cap = cap;
	}
	loop->heap[++loop->heap_count] = t;
	t->heap_index = loop->heap_count;
	heap_up(loop, t->heap_index);
	return 0;
}

void sw_timer_stop(struct sw_loop *loop, struct sw_timer *t)
{
	unsigned i = t->heap_index;
	if (!i)
		return;
	/* A timer armed on another loop, or a heap gone wrong. */
	SW_ASSERT(i <= loop->heap_count && loop->heap[i] == t);
	t->heap_index = 0;
	struct sw_timer *last = loop->heap[loop->heap_count--];
	if (i <= loop->heap_count) {
		loop->heap[i] = last;
		last->heap_index = i;
		heap_up(loop, i);
		heap_down(loop, last->heap_index);
	}
}

static void run_timers(struct sw_loop *loop)
{
	while (loop->heap_count && loop->heap[1]->deadline_ms <= loop->now_ms) {
		struct sw_timer *t = loop->heap[1];
		SW_ASSERT(t->heap_index == 1);
		sw_timer_stop(loop, t);
		t->cb(t);
	}
}

/* ---- cross-thread ---- */

/* Wakes the loop. Called with post_lock held: once the loop has drained
 * what was posted (which takes the lock), no poster touches it again, so
 * it may be freed. EAGAIN means the counter is already non-zero. */
static void wake_locked(struct sw_loop *loop)
{
	uint64_t one = 1;
	ssize_t w = write(loop->efd, &one, sizeof(one));
	(void)w;
}

int sw_loop_post(struct sw_loop *loop, void (*fn)(void *arg), void *arg)
{
	struct post_item *it = malloc(sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->fn = fn;
	it->arg = arg;
	pthread_mutex_lock(&loop->post_lock);
	it->next = loop->posted;
	/* Atomic: drain_posted() peeks without the lock. */
	__atomic_store_n(&loop->posted, it, __ATOMIC_RELEASE);
	wake_locked(loop);
	pthread_mutex_unlock(&loop->post_lock);
	return 0;
}

void sw_io_loop_job_done(struct sw_loop *loop, struct sw_worker_job *job)
{
	pthread_mutex_lock(&loop->post_lock);
	job->next = loop->jobs_done;
	__atomic_store_n(&loop->jobs_done, job, __ATOMIC_RELEASE);
	wake_locked(loop);
	pthread_mutex_unlock(&loop->post_lock);
}

static void drain_posted(struct sw_loop *loop)
{
	if (!__atomic_load_n(&loop->posted, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&loop->jobs_done, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&loop->post_lock);
	struct post_item *items = loop->posted;
	struct sw_worker_job *jobs = loop->jobs_done;
	__atomic_store_n(&loop->posted, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&loop->jobs_done, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&loop->post_lock);
	/* Reverse so work runs in the order it was posted. */
	struct post_item *rev = NULL;
	while (items) {
		struct post_item *n = items->next;
		items->next = rev;
		rev = items;
		items = n;
	}
	struct sw_worker_job *jrev = NULL;
	while (jobs) {
		struct sw_worker_job *n = jobs->next;
		jobs->next = jrev;
		jrev = jobs;
		jobs = n;
	}
	while (rev) {
		struct post_item *n = rev->next;
		rev->fn(rev->arg);
		free(rev);
		rev = n;
	}
	while (jrev) {
		struct sw_worker_job *n = jrev->next;
		jrev->done(jrev);
		jrev = n;
	}
}

void sw_turn_at_end(struct sw_loop *loop, struct sw_turn *t, sw_turn_cb cb)
{
	LOOP_OWNED(loop);
	t->cb = cb;
	if (t->queued)
		return;
	t->queued = true;
	t->next = loop->turn_end;
	loop->turn_end = t;
}

void sw_turn_cancel(struct sw_loop *loop, struct sw_turn *t)
{
	LOOP_OWNED(loop);
	if (!t->queued)
		return;
	for (struct sw_turn **p = &loop->turn_end; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	t->queued = false;
	t->next = NULL;
}

static void run_turn_end(struct sw_loop *loop)
{
	while (loop->turn_end) {
		struct sw_turn *t = loop->turn_end;
		loop->turn_end = t->next;
		t->next = NULL;
		t->queued = false;
		t->cb(t);
	}
}

int sw_loop_run(struct sw_loop *loop)
{
	LOOP_OWNED(loop);
	loop->stop = false;
	while (!loop->stop) {
		/* The end of the last turn (or what was queued before the
		 * loop ran): before the wait, which may sleep until I/O. */
		run_turn_end(loop);
		struct __kernel_timespec ts, *tsp = NULL;
		if (loop->heap_count) {
			uint64_t now = sw_now_ms();
			uint64_t d = loop->heap[1]->deadline_ms;
			uint64_t wait = d > now ? d - now : 0;
			ts.tv_sec = (long long)(wait / 1000);
			ts.tv_nsec = (long long)((wait % 1000) * 1000000);
			tsp = &ts;
		}
		struct io_uring_cqe *cqe;
		int r = io_uring_submit_and_wait_timeout(&loop->ring, &cqe, 1, tsp, NULL);
		if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
			sw_log_error("io_uring wait failed on loop %u: %s", loop->index, strerror(-r));
			return r;
		}
		loop->now_ms = sw_now_ms();
		unsigned head, count = 0;
		io_uring_for_each_cqe(&loop->ring, head, cqe) {
			struct sw_io_op *op = io_uring_cqe_get_data(cqe);
			count++;
			if (op) {
				SW_ASSERT(op->cb);
				op->cb(op, cqe->res, cqe->flags);
			}
		}
		io_uring_cq_advance(&loop->ring, count);
		drain_posted(loop);
		run_timers(loop);
		sw_log_flush_thread();
	}
	return 0;
}
