/* The ring loop: one io_uring per thread. Only src/io/ touches liburing.
 *
 * An in-flight operation is a struct sw_io_op embedded in its owner; the
 * ring's user_data points at it and its cb runs on completion. Multishot
 * operations (accept, recv) call cb once per completion while
 * (cqe_flags & SW_IO_MORE) is set; the last completion clears it. An owner
 * is freed only after the last completion of every op it embeds (cancel,
 * then wait for the final callback), as libuv does for handles.
 *
 * Submissions are queued and flushed when the loop next waits, so a batch
 * of completions produces one io_uring_enter. Functions return 0 or
 * -errno; -EBUSY means the submission queue is full even after a flush. */
#ifndef STEWARD_IO_H
#define STEWARD_IO_H

#include <sys/uio.h>
#include "steward/base/base.h"

#define SW_IO_MORE (1U << 1)   /* IORING_CQE_F_MORE */
#define SW_IO_BUFFER (1U << 0) /* IORING_CQE_F_BUFFER: a provided buffer is attached */

struct sw_loop;
struct sw_io_op;
typedef void (*sw_io_cb)(struct sw_io_op *op, int res, uint32_t cqe_flags);

struct sw_io_op {
	sw_io_cb cb;
};

/* Checks once at start-up that the kernel's io_uring has what we use
 * (multishot accept and recv, provided buffer rings, ext-arg waits, the
 * opcodes). On failure writes a message naming what is missing. */
int sw_io_probe(char *err, size_t errlen);

/* Creates the calling thread's loop (and makes it current). entries is the
 * submission queue size; nbufs provided receive buffers of bufsize bytes
 * are registered as buffer group 0. NULL on failure, errno set. */
struct sw_loop *sw_loop_new(unsigned index, unsigned entries, unsigned nbufs, unsigned bufsize);
void sw_loop_free(struct sw_loop *loop);
/* The current thread's loop, or NULL. */
struct sw_loop *sw_loop_current(void);
unsigned sw_loop_index(const struct sw_loop *loop);
/* Opaque per-loop pointer for the layers above: the thread's database pool
 * (sw_db_pool_attach), set by the thread's composition root. */
void sw_loop_set_data(struct sw_loop *loop, void *data);
void *sw_loop_data(const struct sw_loop *loop);

/* Runs until sw_loop_stop(). 0, or -errno on a fatal ring error. */
int sw_loop_run(struct sw_loop *loop);
/* Asks the loop to return from sw_loop_run() after the current batch. Loop thread only. */
void sw_loop_stop(struct sw_loop *loop);
/* The loop's cached monotonic time in ms, refreshed once per batch. */
uint64_t sw_loop_now_ms(const struct sw_loop *loop);

/* Operations. Buffers and iovecs must stay valid until completion. */
int sw_io_accept_multishot(struct sw_loop *loop, struct sw_io_op *op, int fd);
/* Multishot receive into the loop's provided buffers; see sw_loop_buffer(). */
int sw_io_recv_multishot(struct sw_loop *loop, struct sw_io_op *op, int fd);
int sw_io_writev(struct sw_loop *loop, struct sw_io_op *op, int fd,
		 const struct iovec *iov, unsigned iovcnt);
int sw_io_read(struct sw_loop *loop, struct sw_io_op *op, int fd, void *buf, size_t len);
/* Reads up to len bytes at file offset off (pread(2)); res is the count
 * (0 at the end of the file) or -errno. */
int sw_io_pread(struct sw_loop *loop, struct sw_io_op *op, int fd, void *buf, size_t len,
		uint64_t off);
/* Moves up to len bytes from fd_in to fd_out without copying through user
 * space (splice(2)); one of them must be a pipe. off_in, off_out: a file
 * offset, or -1 for a pipe or a socket. res: the bytes moved, 0 at the end
 * of the input, or -errno; -EAGAIN when a non-blocking socket is full (the
 * ring does not wait for it: poll it for POLLOUT and splice again). Only
 * where sw_loop_can_splice(). */
int sw_io_splice(struct sw_loop *loop, struct sw_io_op *op, int fd_in, int64_t off_in,
		 int fd_out, int64_t off_out, unsigned len);
/* Whether the kernel runs IORING_OP_SPLICE (Linux 5.7; probed once per loop). */
bool sw_loop_can_splice(const struct sw_loop *loop);
/* One-shot poll; res is the ready mask or -errno. */
int sw_io_poll(struct sw_loop *loop, struct sw_io_op *op, int fd, unsigned poll_mask);
/* Asks the kernel to cancel every op whose user_data is target; each
 * completes (usually with -ECANCELED). The cancel itself reports nothing. */
int sw_io_cancel(struct sw_loop *loop, struct sw_io_op *target);
/* Closes fd through the ring; no completion is reported. */
int sw_io_close(struct sw_loop *loop, int fd);

/* The provided buffer attached to a completion with SW_IO_BUFFER. */
char *sw_loop_buffer(struct sw_loop *loop, uint32_t cqe_flags);
/* Gives that buffer back to the kernel; call once it has been consumed. */
void sw_loop_buffer_recycle(struct sw_loop *loop, uint32_t cqe_flags);

/* Timers: a min-heap per loop; the loop's wait carries the nearest
 * deadline (no timer: it sleeps until I/O). Loop thread only. */
struct sw_timer;
typedef void (*sw_timer_cb)(struct sw_timer *t);
struct sw_timer {
	uint64_t deadline_ms; /* monotonic */
	unsigned heap_index;  /* 0: not armed */
	sw_timer_cb cb;
};
/* (Re)arms t to fire after delay_ms. 0 or -ENOMEM. */
int sw_timer_start(struct sw_loop *loop, struct sw_timer *t, uint64_t delay_ms, sw_timer_cb cb);
void sw_timer_stop(struct sw_loop *loop, struct sw_timer *t);
static inline bool sw_timer_armed(const struct sw_timer *t)
{
	return t->heap_index != 0;
}

/* Work run once at the end of the loop's turn: after the turn's
 * completions, posted functions and timers, before the loop submits and
 * waits again. For a caller that batches what one turn produced (the
 * database pool closes each connection's batch of reads with one sync and
 * one write to the server). A hook queued by a hook runs in the same turn.
 * Loop thread only; sw_turn_cancel before freeing a queued hook. */
struct sw_turn;
typedef void (*sw_turn_cb)(struct sw_turn *t);
struct sw_turn {
	struct sw_turn *next;
	sw_turn_cb cb;
	bool queued;
};
/* Queues t for this turn's end (nothing if it is queued already). */
void sw_turn_at_end(struct sw_loop *loop, struct sw_turn *t, sw_turn_cb cb);
void sw_turn_cancel(struct sw_loop *loop, struct sw_turn *t);

/* Runs fn(arg) on the loop's thread at its next batch. Safe from any
 * thread. 0 or -ENOMEM. */
int sw_loop_post(struct sw_loop *loop, void (*fn)(void *arg), void *arg);

/* Worker pool for blocking work (argon2, libgit2, ...): run() on a worker
 * thread, then done() on the submitting loop's thread. */
struct sw_worker_job {
	void (*run)(struct sw_worker_job *job);
	void (*done)(struct sw_worker_job *job);
	struct sw_loop *loop;
	struct sw_worker_job *next;
};
int sw_workers_start(unsigned nthreads);
/* Finishes queued jobs, then joins the threads. */
void sw_workers_stop(void);
/* 0, or -EBUSY beyond SW_WORKER_MAX_QUEUE queued jobs. */
int sw_worker_submit(struct sw_loop *loop, struct sw_worker_job *job);

#endif
