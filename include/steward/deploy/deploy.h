/* Deployments (src/deploy): the pipeline a deployment job runs, the build
 * log writer, and the hub that streams log chunks to live readers.
 *
 * The log of a deployment is the file <data_dir>/logs/<deployment id>.log,
 * capped at DEPLOY_LOG_MAX_BYTES (default 16 MiB; past it one line says it
 * was cut and nothing more is written). The database keeps only
 * log_byte_count and the last SW_DEPLOY_LOG_TAIL bytes (log_tail). */
#ifndef STEWARD_DEPLOY_H
#define STEWARD_DEPLOY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "steward/base/ref.h"
#include "steward/base/base.h"
#include "steward/base/limits.h"
#include "steward/jobs/jobs.h"

struct sw_loop;

#define SW_DEPLOY_LOG_TAIL 4096
#define SW_DEPLOY_LOG_DEFAULT_MAX (16u * 1024 * 1024)

/* ---- the log writer (log.c) ----
 * One writer per deployment, used by one runner thread; sw_deploy_log_bytes()
 * and sw_deploy_log_tail() may be called from any thread. Every line passes
 * here: each secret value (the application's variable values) is replaced
 * by "***" before the line goes anywhere; then it is appended to the file
 * (with "\n", one write(2) per line), kept in the tail, and published on
 * the hub.
 *
 * Scrubbing: every byte inside any occurrence of any value is hidden, and
 * each run of hidden bytes becomes one "***" (the same as replacing the
 * longest value first, and safe when values overlap: "abcd" with values
 * "abc" and "bcd" is "***", never "***d"). A value holding line breaks is
 * also scrubbed line by line (a build may print a key one line at a time).
 * A value is never split across two calls: each call is whole lines, and
 * scrubbing runs on all of it before it is split (at "\n", and past
 * SW_DEPLOY_LOG_MAX_LINE bytes). A value (or a line of one) shorter than
 * SW_VARIABLE_SCRUB_MIN_LEN bytes is not scrubbed (limits.h says why).
 *
 * Text: lines are stored as UTF-8; a NUL or an invalid sequence becomes
 * U+FFFD, and "\r\n" ends a line as "\n" does (a lone "\r" is kept).
 *
 * The cap: the file never exceeds max_bytes. A line that would pass it
 * (with room kept for the notice) is dropped and the line
 * "[log cut: DEPLOY_LOG_MAX_BYTES reached]" is written instead; nothing
 * more is written after it.
 *
 * The order with the database: write every line, then the deployment's
 * row (status, log_byte_count, log_tail), then close the writer; a reader
 * that sees a final status in the row then reads the whole log from the
 * file. */
struct sw_deploy_log;
/* Opens (creates or appends to) the log of deployment_id (a UUID, else
 * EINVAL) under dir (the data directory: dir/logs/<id>.log, the directory
 * made 0700 when missing). An existing log is continued: its size, tail
 * and cut state are read back. secrets: values to scrub (copied; those
 * shorter than SW_VARIABLE_SCRUB_MIN_LEN ignored). NULL with errno (EBUSY: a writer of this process has it
 * open already). */
struct sw_deploy_log *sw_deploy_log_open(const char *dir, const char *deployment_id,
					 uint64_t max_bytes, const char *const *secrets,
					 size_t nsecrets);
/* Writes one line (len bytes; "\n" inside it separates lines; a longer
 * line is split). 0, or -EFBIG once the cap was reached (the line is
 * dropped; the first time the cut notice is written instead), or -errno of
 * the file (-ENOSPC). */
int sw_deploy_log_line(struct sw_deploy_log *l, const char *line, size_t len);
/* printf-style sw_deploy_log_line(). */
int sw_deploy_log_printf(struct sw_deploy_log *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
uint64_t sw_deploy_log_bytes(const struct sw_deploy_log *l);
/* Up to n bytes of the log's file from off into buf (pread: the writer's
 * own file, whole lines up to sw_deploy_log_bytes()). The bytes read, or
 * -errno. */
ssize_t sw_deploy_log_read(const struct sw_deploy_log *l, uint64_t off, char *buf, size_t n);
/* The last SW_DEPLOY_LOG_TAIL bytes (or fewer), starting at a line when it
 * can, into out (SW_DEPLOY_LOG_TAIL + 1 bytes, NUL-terminated). */
void sw_deploy_log_tail(const struct sw_deploy_log *l, char *out);
/* Closes the file and frees. final_status NULL: the deployment goes on
 * (another job opens the log again; live readers wait for it); else the
 * deployment ended with that status (SUCCEEDED, FAILED, CANCELLED) and live
 * readers get the status event (errorMessage null) and their stream ends:
 * sw_deploy_log_end(l, final_status, NULL). NULL l is a no-op. */
void sw_deploy_log_close(struct sw_deploy_log *l, const char *final_status);
/* Ends the deployment's log: live readers get the status event
 * {"status": status, "errorMessage": error_message (scrubbed) or null} and
 * their streams end; then closes and frees as sw_deploy_log_close(). */
void sw_deploy_log_end(struct sw_deploy_log *l, const char *status, const char *error_message);
/* The path of a deployment's log file into out (cap bytes). 0 or -ENAMETOOLONG. */
int sw_deploy_log_path(const char *dir, const char *deployment_id, char *out, size_t cap);

/* ---- the hub (hub.c) ----
 * Live log chunks per deployment, published by the writer's thread and read
 * by SSE streams on the io loops. A chunk is allocated once, pre-framed as
 * the SSE bytes every reader sends, refcounted, and written by reference
 * (writev) by each reader: never copied per reader.
 *
 * Per deployment the hub keeps a topic: its writer (if one is open in
 * this process), its byte count, and the chain of chunks in publication
 * order (each chunk holds a reference to the next). A reader is a cursor
 * in the chain: it pulls the chunks after its cursor when its stream has
 * room, so a reader costs the same few bytes however far behind it is, and
 * the chain is freed as the slowest cursor passes. Publishing appends to
 * the chain and posts one wake-up to each io loop with readers, unless one
 * is already pending (sw_loop_post): the writer's cost does not grow with
 * the number of readers.
 *
 * Bounded: SW_SSE_MAX_READERS per deployment per process; a reader more
 * than SW_HUB_MAX_LAG_BYTES of log behind the writer is cut by its stream
 * (it resumes from the file), which bounds the chain.
 *
 * The hub is per process: a reader in a process that does not run the
 * writer learns nothing here and polls the file (live_log.c). */
enum sw_hub_chunk_kind {
	SW_HUB_LOG,    /* data: an SSE "log" event of whole lines */
	SW_HUB_STATUS, /* data: the SSE "status" event; the deployment ended */
	SW_HUB_OPENED, /* a writer opened the log (no data) */
	SW_HUB_CLOSED, /* the writer closed, the deployment goes on (no data) */
	SW_HUB_START,  /* the first link of a topic's chain: never pulled */
};
struct sw_hub_chunk {
	uint64_t offset;          /* the log's byte count after this chunk: a
				   * LOG event's id, an OPENED writer's start */
	size_t len;
	enum sw_hub_chunk_kind kind;
	unsigned refs;            /* atomic */
	struct sw_hub_chunk *next; /* atomic: the next chunk (a reference), NULL yet */
	struct sw_ref ref;   /* for sw_http_stream_write(): drops one reference */
	char data[];
};
/* A chunk with room for len bytes of data, one reference held by the
 * caller. NULL when out of memory. */
struct sw_hub_chunk *sw_hub_chunk_new(enum sw_hub_chunk_kind kind, uint64_t offset, size_t len);
void sw_hub_chunk_ref(struct sw_hub_chunk *c);
/* Drops a reference; the last one frees it (and drops its reference to
 * the next chunk, and so on). NULL is a no-op. */
void sw_hub_chunk_unref(struct sw_hub_chunk *c);

/* SSE framing of log lines. data[0..len) is whole lines, each ending in
 * "\n"; end is the log's byte count after them. Writes into out (when not
 * NULL) "id: <end>\nevent: log\n", then "data: <line>\n" for each line (a
 * "\r" inside a line starts a new data line, as SSE requires), then "\n",
 * and returns the length (call with NULL first to size out). */
size_t sw_hub_frame_log(char *out, uint64_t end, const char *data, size_t len);
/* The SSE "status" event {"status", "errorMessage"} into a new STATUS chunk. */
struct sw_hub_chunk *sw_hub_status_chunk(const char *status, const char *error_message);

/* Readers (on an io loop). fn(arg) runs on the reader's loop after chunks
 * were published since it last ran: pull them with sw_hub_next(). */
struct sw_hub_reader;
typedef void (*sw_hub_fn)(void *arg);
/* Attaches a reader of deployment_id (a UUID) on loop, the calling
 * thread's, its cursor at the end of the chain. *ret_writing tells whether
 * a writer of this process has the log open; then *ret_offset is its byte
 * count, and every LOG chunk pulled later ends past it (what is before it
 * is in the file). 0; -EBUSY past SW_SSE_MAX_READERS readers of one
 * deployment in this process; -ENOMEM. */
int sw_hub_attach(const char *deployment_id, struct sw_loop *loop, sw_hub_fn fn, void *arg,
		  struct sw_hub_reader **ret, bool *ret_writing, uint64_t *ret_offset);
/* The chunk after r's cursor, with a reference for the caller, the cursor
 * moved onto it; NULL when r has pulled everything. r's loop thread. */
struct sw_hub_chunk *sw_hub_next(struct sw_hub_reader *r);
/* Bytes of log published past r's cursor. */
uint64_t sw_hub_lag(const struct sw_hub_reader *r);
/* Detaches r (its loop's thread): fn never runs for it again. */
void sw_hub_detach(struct sw_hub_reader *r);

/* Writers (log.c; any thread). */
struct sw_hub_topic;
/* The topic of deployment_id with a writer at byte count offset; readers
 * get an OPENED chunk. NULL with errno (EBUSY: a writer has it already). */
struct sw_hub_topic *sw_hub_writer_open(const char *deployment_id, uint64_t offset);
/* The log grew to end without a chunk: 0 when no reader needs one;
 * -EAGAIN when some reader does (nothing changed): frame the lines and
 * sw_hub_publish() them. This keeps a writer nobody reads from framing. */
int sw_hub_advance(struct sw_hub_topic *t, uint64_t end);
/* Publishes a LOG chunk (takes the caller's reference): the topic's byte
 * count becomes c->offset. */
void sw_hub_publish(struct sw_hub_topic *t, struct sw_hub_chunk *c);
/* The writer is done: final (a STATUS chunk, taken) ends the readers'
 * streams; NULL sends CLOSED (the deployment goes on). */
void sw_hub_writer_close(struct sw_hub_topic *t, struct sw_hub_chunk *final);

/* Counters since the process started, for tests and the benchmark. */
struct sw_hub_counters {
	uint64_t chunks_allocated;
	uint64_t chunks_freed;
	uint64_t posts;  /* wake-ups posted to loops */
	uint64_t pulled; /* chunks pulled by readers (one per reader per chunk) */
};
void sw_hub_counters(struct sw_hub_counters *out);

/* ---- the pipeline (pipeline.c, build_job.c, strategy.c, health_gate.c, lifecycle.c) ----
 * The job handlers of deployments: "deployment.build" (source, plan, image;
 * then queues "deployment.deploy"), "deployment.deploy" (containers,
 * health gate, ingress, retention), "runtime.recover" (queued by migration
 * 0015 whenever a deployment in flight ends FAILED or CANCELLED: puts the
 * serving version back; and by 0019 for one whose worker died in
 * FINISHING, recorded SUCCEEDED: finishes its clean-up), and the lifecycle
 * kinds: application.start, .stop,
 * .restart, .delete, volume.delete, service.start, .stop, .restart,
 * .delete, .backup. ctx is a struct sw_deploy_settings. */
struct sw_deploy_settings {
	const char *data_dir;           /* logs/, sources/, uploads/ beneath */
	uint64_t log_max_bytes;         /* DEPLOY_LOG_MAX_BYTES */
	uint64_t blue_green_min_free_mb; /* DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB */
	const char *base_image;         /* DEPLOY_BASE_IMAGE: FROM of generated Dockerfiles */
	bool allow_file_urls;           /* STEWARD_ENV is not production */
	const char *git_ca_file;        /* GIT_CA_FILE, or NULL: the system's CA bundle */
	/* STEWARD_AGENT_RECONNECT_WAIT_MS: how long a job waits for a remote
	 * server's agent that is reconnecting (sw_driver_remote_new). */
	unsigned agent_reconnect_wait_ms;
	/* Failure injection, STEWARD_ENV=test only (NULL otherwise): the
	 * file STEWARD_FAULT_PAUSE_FILE names. While it lists a pause point
	 * (a phase, DONE, or RECOVER; names separated by white space), a
	 * handler reaching that point waits there until the file no longer
	 * lists it or the job must stop, so that a test can kill the process
	 * (or let another job run) exactly there. */
	const char *fault_pause_file;
};
/* The handlers, for sw_jobs_start(): a static array, each ctx set to s
 * (which must outlive the runners). Call once, at start-up. *ret_n is set. */
const struct sw_job_kind *sw_deploy_job_kinds(const struct sw_deploy_settings *s, size_t *ret_n);

#endif
