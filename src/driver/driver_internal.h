/* Inside the local driver (src/driver): the state of a driver, one HTTP
 * exchange over libcurl (the Docker engine on its unix socket, Caddy's
 * admin API on loopback TCP), the build context as a tar stream with its
 * .dockerignore matcher and the reader of the engine's build progress. Only src/driver and its tests
 * include this. */
#ifndef STEWARD_DRIVER_INTERNAL_H
#define STEWARD_DRIVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "steward/base/buf.h"
#include "steward/driver/driver.h"

/* Bounds of what the engine and Caddy may send us (they are local and
 * trusted, but a bug or a huge host must not exhaust the runner). */
#define SW_DRIVER_RESPONSE_MAX (16u * 1024 * 1024) /* a JSON answer: lists, Caddy's config */
#define SW_DRIVER_ERROR_BODY_MAX (64u * 1024)     /* the body of a non-2xx answer */
#define SW_DRIVER_PROGRESS_MSG_MAX (1024u * 1024) /* one JSON message of the build stream */
#define SW_DRIVER_LOG_LINE_MAX (16u * 1024)       /* a longer build output line is split */
#define SW_DRIVER_CONNECT_TIMEOUT_MS 5000
#define SW_DRIVER_ENGINE_TIMEOUT_MS 120000  /* one engine call (a build: none, the cancel flag rules) */
#define SW_DRIVER_CADDY_TIMEOUT_MS 30000    /* one admin call: a config load included */
#define SW_DRIVER_LIST_MAX 4096             /* containers or images read from one answer */

/* The engine's API version: Debian 12's docker.io (20.10) speaks 1.41;
 * every later engine still accepts it. */
#define SW_DRIVER_ENGINE_BASE "http://docker/v1.41"

struct sw_driver {
	char docker_socket[108]; /* sun_path */
	char caddy_admin[256];   /* base URL, no trailing '/' */
	char caddy_listen[256];  /* CADDY_HTTP_LISTEN: comma-separated addresses */
	char proc_path[256];     /* HOST_PROC_PATH */
	struct sw_driver_remote *remote; /* a remote driver's state (remote.c), else NULL */
	const struct sw_rd_ops *rops;    /* with remote: its calls */
};

/* ---- the remote driver (remote.c) ----
 * Each public call of a driver with d->remote goes to d->rops instead.
 * Through a table set by sw_driver_remote_new(), not by name: a binary
 * that never makes a remote driver (steward-agent) links neither remote.c
 * nor libpq, which with its Kerberos, LDAP and GnuTLS would be a third of
 * the agent's idle memory (bench/agent_fleet.mjs). */
struct sw_driver_remote;
/* The agent's image.build from its staged context (agent_build.c). */
struct sw_agent_msg;
struct sw_agent_stream;
struct json_t;
int sw_driver_agent_build(struct sw_driver *d, const struct sw_agent_msg *cmd, struct sw_agent_stream *st,
			  struct json_t **res, char *err, size_t errlen);
/* The agent's service.dump (its output: the dump as base64 lines; its
 * result: dumpBytes, dumpSha256) and service.restore (from the staged,
 * checked input), running the local driver's own dump and restore
 * (service_data.c). */
int sw_driver_agent_service_dump(struct sw_driver *d, const struct sw_agent_msg *cmd,
				 struct sw_agent_stream *st, struct json_t **res, char *err, size_t errlen);
int sw_driver_agent_service_restore(struct sw_driver *d, const struct sw_agent_msg *cmd,
				    struct sw_agent_stream *st, char *err, size_t errlen);
/* Where a dump's bytes go, in order: 0 or -errno (the dump stops). */
typedef int (*sw_driver_sink_fn)(void *arg, const char *p, size_t n);
struct sw_container_state;
struct sw_rd_ops {
	void (*free)(struct sw_driver_remote *r);
	int (*image_build)(struct sw_driver *d, const struct sw_image_build *b, sw_driver_log_fn log,
			   void *log_arg, char *err, size_t errlen);
	int (*image_remove)(struct sw_driver *d, const char *tag, char *err, size_t errlen);
	int (*images_list)(struct sw_driver *d, const char *application_id,
			   char (*tags)[SW_DRIVER_TAG_MAX], size_t cap, size_t *ret_n, char *err,
			   size_t errlen);
	bool (*image_exists)(struct sw_driver *d, const char *tag);
	int (*container_create)(struct sw_driver *d, const struct sw_container_spec *s,
				char id[SW_DRIVER_ID_MAX], char *err, size_t errlen);
	/* kind: "container.start", "container.stop" (timeout_s), "container.remove". */
	int (*container_action)(struct sw_driver *d, const char *kind, const char *name,
				unsigned timeout_s, char *err, size_t errlen);
	int (*containers_list)(struct sw_driver *d, const char *application_id,
			       struct sw_container_info *out, size_t cap, size_t *ret_n, char *err,
			       size_t errlen);
	int (*volume_create)(struct sw_driver *d, const struct sw_volume_spec *v, char *err,
			     size_t errlen);
	int (*volumes_list)(struct sw_driver *d, const char *application_id,
			    char (*names)[SW_DRIVER_VOLUME_MAX], size_t cap, size_t *ret_n, char *err,
			    size_t errlen);
	int (*volume_remove)(struct sw_driver *d, const char *name, char *err, size_t errlen);
	int (*route_set)(struct sw_driver *d, const struct sw_ingress_route *r, char *err,
			 size_t errlen);
	int (*route_remove)(struct sw_driver *d, const char *application_id, char *err, size_t errlen);
	int (*proxy_state)(struct sw_driver *d, char **ret_json, char *err, size_t errlen);
	/* The agent's metrics.sample: the sample's JSON text. */
	int (*metrics_sample)(struct sw_driver *d, char **ret_json, char *err, size_t errlen);
	int (*container_put_file)(struct sw_driver *d, const char *container, const char *dir,
				  const char *name, const void *data, size_t len, unsigned mode,
				  char *err, size_t errlen);
	int (*container_state)(struct sw_driver *d, const char *id, struct sw_container_state *ret,
			       char *err, size_t errlen);
	/* MemAvailable of the remote host, from its agent's host.facts. */
	int (*memory_available)(struct sw_driver *d, uint64_t *ret_bytes);
	/* The agent's port.free: a free port on the server's loopback. */
	int (*free_port)(struct sw_driver *d, unsigned *ret_port, char *err, size_t errlen);
	/* The agent's container.probe (q already checked). */
	int (*http_probe)(struct sw_driver *d, const struct sw_http_probe *q, int *ret_status,
			  uint64_t *ret_ms, char *err, size_t errlen);
	/* The agent's service.dump: the dump's bytes into sink, checked
	 * against the size and SHA-256 the agent reports. */
	int (*service_dump)(struct sw_driver *d, const struct sw_service_target *t, sw_driver_sink_fn sink,
			    void *sink_arg, const volatile bool *cancel, char *err, size_t errlen);
	/* The agent's service.restore: the checked dump (fd, size bytes, read
	 * with pread from 0) sent as input chunks. */
	int (*service_restore)(struct sw_driver *d, const struct sw_service_target *t, int fd, uint64_t size,
			       const char *sha256, const volatile bool *cancel, char *err, size_t errlen);
	/* The agent's container.logs; with follow until *q->cancel (-ECANCELED). */
	int (*container_logs)(struct sw_driver *d, const struct sw_container_logs_query *q,
			      sw_driver_container_log_fn fn, void *arg, char *err, size_t errlen);
};

/* -EOPNOTSUPP: "<what> on a remote server is not available yet." (local.c) */
int sw_rd_unavailable(const char *what, char *err, size_t errlen);

static inline int sw_rd_image_build(struct sw_driver *d, const struct sw_image_build *b,
				    sw_driver_log_fn log, void *log_arg, char *err, size_t errlen)
{
	return d->rops->image_build(d, b, log, log_arg, err, errlen);
}
static inline int sw_rd_container_state(struct sw_driver *d, const char *id,
					struct sw_container_state *ret, char *err, size_t errlen)
{
	return d->rops->container_state(d, id, ret, err, errlen);
}
static inline int sw_rd_memory_available(struct sw_driver *d, uint64_t *ret_bytes)
{
	return d->rops->memory_available(d, ret_bytes);
}
static inline int sw_rd_image_remove(struct sw_driver *d, const char *tag, char *err, size_t errlen)
{
	return d->rops->image_remove(d, tag, err, errlen);
}
static inline int sw_rd_images_list(struct sw_driver *d, const char *application_id,
				    char (*tags)[SW_DRIVER_TAG_MAX], size_t cap, size_t *ret_n, char *err,
				    size_t errlen)
{
	return d->rops->images_list(d, application_id, tags, cap, ret_n, err, errlen);
}
static inline bool sw_rd_image_exists(struct sw_driver *d, const char *tag)
{
	return d->rops->image_exists(d, tag);
}
static inline int sw_rd_container_create(struct sw_driver *d, const struct sw_container_spec *s,
					 char id[SW_DRIVER_ID_MAX], char *err, size_t errlen)
{
	return d->rops->container_create(d, s, id, err, errlen);
}
static inline int sw_rd_container_action(struct sw_driver *d, const char *kind, const char *name,
					 unsigned timeout_s, char *err, size_t errlen)
{
	return d->rops->container_action(d, kind, name, timeout_s, err, errlen);
}
static inline int sw_rd_containers_list(struct sw_driver *d, const char *application_id,
					struct sw_container_info *out, size_t cap, size_t *ret_n,
					char *err, size_t errlen)
{
	return d->rops->containers_list(d, application_id, out, cap, ret_n, err, errlen);
}
static inline int sw_rd_volume_create(struct sw_driver *d, const struct sw_volume_spec *v, char *err,
				      size_t errlen)
{
	return d->rops->volume_create(d, v, err, errlen);
}
static inline int sw_rd_volumes_list(struct sw_driver *d, const char *application_id,
				     char (*names)[SW_DRIVER_VOLUME_MAX], size_t cap, size_t *ret_n,
				     char *err, size_t errlen)
{
	return d->rops->volumes_list(d, application_id, names, cap, ret_n, err, errlen);
}
static inline int sw_rd_volume_remove(struct sw_driver *d, const char *name, char *err, size_t errlen)
{
	return d->rops->volume_remove(d, name, err, errlen);
}
static inline int sw_rd_route_set(struct sw_driver *d, const struct sw_ingress_route *r, char *err,
				  size_t errlen)
{
	return d->rops->route_set(d, r, err, errlen);
}
static inline int sw_rd_route_remove(struct sw_driver *d, const char *application_id, char *err,
				     size_t errlen)
{
	return d->rops->route_remove(d, application_id, err, errlen);
}
static inline int sw_rd_proxy_state(struct sw_driver *d, char **ret_json, char *err, size_t errlen)
{
	return d->rops->proxy_state(d, ret_json, err, errlen);
}
static inline int sw_rd_service_dump(struct sw_driver *d, const struct sw_service_target *t,
				     sw_driver_sink_fn sink, void *sink_arg, const volatile bool *cancel,
				     char *err, size_t errlen)
{
	return d->rops->service_dump(d, t, sink, sink_arg, cancel, err, errlen);
}
static inline int sw_rd_service_restore(struct sw_driver *d, const struct sw_service_target *t, int fd,
					uint64_t size, const char *sha256, const volatile bool *cancel,
					char *err, size_t errlen)
{
	return d->rops->service_restore(d, t, fd, size, sha256, cancel, err, errlen);
}
static inline int sw_rd_container_put_file(struct sw_driver *d, const char *container, const char *dir,
					   const char *name, const void *data, size_t len, unsigned mode,
					   char *err, size_t errlen)
{
	return d->rops->container_put_file(d, container, dir, name, data, len, mode, err, errlen);
}

/* ---- one HTTP exchange (http.c) ----
 * Blocking; safe on any thread (one curl handle per call). */
struct sw_driver_http {
	const char *method;        /* GET, POST, PUT, PATCH, DELETE */
	const char *url;
	const char *unix_socket;   /* the path, or NULL for TCP */
	const char *content_type;  /* of the body, or NULL */
	const char *body;          /* a whole body, or NULL */
	size_t body_len;
	/* A streamed body (sent chunked) instead: fills up to cap bytes and
	 * returns the count, 0 at its end, or -errno to abort the exchange
	 * (that error is returned). */
	ssize_t (*read)(void *arg, char *out, size_t cap);
	void *read_arg;
	/* A streamed 2xx answer instead of collecting it: 0 or -errno to abort
	 * (that error is returned). Non-2xx answers are always collected. */
	int (*on_data)(void *arg, const char *p, size_t n);
	void *data_arg;
	const volatile bool *cancel; /* polled about every second and on data */
	/* When > 0: a descriptor that becomes readable when *cancel is set
	 * (an eventfd). The exchange then sleeps until data, that descriptor
	 * or one of curl's own timers, never polling *cancel once a second:
	 * a long-lived stream (the engine's events) costs nothing at rest. */
	int cancel_fd;
	long timeout_ms;           /* 0: none */
	size_t response_max;       /* collected bytes; past it -EFBIG (0: SW_DRIVER_RESPONSE_MAX) */
	/* Filled in: */
	long status;
	struct sw_buf response;    /* the collected answer (NUL-terminated); release it */
};
/* Runs the exchange. 0 when an answer came (whatever its status); else
 * -ECANCELED, -EFBIG, the callbacks' error, -ECONNREFUSED (nothing
 * listens), -ECONNRESET (the connection was closed or reset before a
 * status line came), -ETIMEDOUT, -EIO, with a sentence naming `peer` in
 * err. */
int sw_driver_http_run(struct sw_driver_http *h, const char *peer, char *err, size_t errlen);

/* True when s is 1..max bytes of ASCII letters, digits and the bytes of
 * extra: the check every name, id and address passes before it reaches a
 * path or a document. */
bool sw_driver_token_ok(const char *s, const char *extra, size_t max);
/* An application id as it appears in labels and route ids. */
static inline bool sw_driver_app_id_ok(const char *s)
{
	return sw_driver_token_ok(s, "-", 64);
}

/* Appends s percent-encoded (everything but RFC 3986 unreserved bytes). */
int sw_driver_url_encode(struct sw_buf *b, const char *s);
/* One sentence from a non-2xx answer: "<what>: <the peer's message>", the
 * message taken from {"message": ...} (engine) or {"error": ...} (Caddy),
 * cut to fit; "<what> (HTTP <status>)" without one. */
void sw_driver_answer_error(const struct sw_driver_http *h, const char *what, char *err, size_t errlen);
/* -errno for an HTTP status: 404 -ENOENT, 409 -EEXIST, 400 -EINVAL, 401/403
 * -EACCES, 413 -EFBIG, other -EIO. */
int sw_driver_status_errno(long status);
/* arg with every "${PORT}" and every "$PORT" not followed by a letter,
 * digit or '_' replaced by port, into out (cap bytes): 1 when something
 * was replaced, 0 when not (out holds arg), -E2BIG when out is too small.
 * Steward's own substitution in a container's exec-form command: no
 * shell expands anything. */
int sw_driver_expand_port(const char *arg, unsigned port, char *out, size_t cap);

/* ---- a program's output over the engine's exec API (service_data.c) ----
 * POST /exec/{id}/start without a TTY answers the program's stdout and
 * stderr multiplexed in frames: [stream (0 stdin, 1 stdout, 2 stderr), 0,
 * 0, 0, length (4 bytes, big-endian)], then length bytes. The reader takes
 * the answer in pieces of any size: stdout's bytes reach out as they come;
 * the last SW_DRIVER_EXEC_TAIL_MAX - 1 bytes of stderr are kept, for a
 * failure's sentence, or reach err_out when it is set (a container's
 * logs, container_logs.c, use the same framing); any other stream is
 * dropped. Zero it to start. */
#define SW_DRIVER_EXEC_TAIL_MAX 600
struct sw_driver_exec_stream {
	int (*out)(void *arg, const char *p, size_t n); /* 0, or -errno: the read stops */
	void *out_arg;
	int (*err_out)(void *arg, const char *p, size_t n); /* stderr instead of the tail */
	void *err_out_arg;
	unsigned char head[8];
	size_t head_len;
	uint32_t left;   /* bytes of the current frame still to come */
	int stream;      /* of the current frame */
	char tail[SW_DRIVER_EXEC_TAIL_MAX];
	size_t tail_len;
};
/* Takes the next n bytes: 0, or out's error. */
int sw_driver_exec_stream_feed(struct sw_driver_exec_stream *s, const char *p, size_t n);
/* The last line of the stderr kept (line ends dropped; NUL-terminated, in
 * s->tail). */
const char *sw_driver_exec_stream_error(struct sw_driver_exec_stream *s);

/* ---- a container's logs as lines (container_logs.c) ----
 * The engine's answer to GET /containers/{id}/logs?timestamps=1 (frames as
 * the exec stream's) in pieces of any size; each stream's lines reach fn
 * whole (driver.h, "a container's logs"). end gives each stream's open
 * line, if any. NULL when out of memory. */
struct sw_driver_log_lines;
struct sw_driver_log_lines *sw_driver_log_lines_new(sw_driver_container_log_fn fn, void *arg);
/* 0, or fn's error (the read stops). */
int sw_driver_log_lines_feed(struct sw_driver_log_lines *r, const char *p, size_t n);
int sw_driver_log_lines_end(struct sw_driver_log_lines *r);
void sw_driver_log_lines_free(struct sw_driver_log_lines *r);

/* ---- .dockerignore (dockerignore.c) ----
 * The patterns of a build context's .dockerignore and the decision for
 * each path, as the Docker CLI makes it when it sends a context (moby's
 * ignorefile.ReadAll, patternmatcher.New and MatchesUsingParentResults,
 * archive.TarWithOptions): dockerignore.c's header says what is read and
 * where it deliberately differs. */
#define SW_DOCKERIGNORE_MAX_BYTES (64u * 1024)
struct sw_dockerignore;
/* Parses the file's text (len bytes, any bytes). NULL with errno and a
 * sentence in err: EFBIG (longer than SW_DOCKERIGNORE_MAX_BYTES), EINVAL
 * (a malformed pattern: the sentence names its line), ENOMEM. No patterns
 * at all is a matcher that excludes nothing. */
struct sw_dockerignore *sw_dockerignore_parse(const char *text, size_t len, char *err, size_t errlen);
/* Appends the exception "!<path>" (path cleaned as a pattern is), as the
 * Docker CLI does for the Dockerfile in use and for .dockerignore: path is
 * then never excluded and its excluded parents are walked into. 0,
 * -EINVAL (empty, or not a valid pattern: say "a[b"), -ENOMEM. */
int sw_dockerignore_keep(struct sw_dockerignore *m, const char *path);
/* Whether path (relative to the context, '/'-separated, no "." or ".."
 * component, no empty one) is excluded: 1, 0, or -ENOMEM. The answer
 * depends on the path alone (a path no line matches inherits its parent
 * directory's decision); the matcher keeps its ancestors' results for the
 * next call, so a walk costs one evaluation per entry. Not thread-safe. */
int sw_dockerignore_excluded(struct sw_dockerignore *m, const char *path);
/* Whether an excluded directory must still be walked because an exception
 * could re-include something under it: Docker's test, an exception whose
 * text starts with "<dir>/" (so "!dir/keep" reaches into dir, while a
 * wildcard exception such as "!?ir/keep" does not). Entries under it are then
 * decided one by one; the directory's own entry is not sent. */
bool sw_dockerignore_walk_into(const struct sw_dockerignore *m, const char *dir);
size_t sw_dockerignore_count(const struct sw_dockerignore *m); /* patterns, kept ones included */
void sw_dockerignore_free(struct sw_dockerignore *m);

/* ---- the build context as a tar stream (context_tar.c) ----
 * Walks a directory (symbolic links are archived as links, never
 * followed) and produces an uncompressed tar of it on demand, so nothing
 * is staged on disk or held whole in memory. ".git" (a directory or a
 * submodule's file) is left out at every depth, and so are sockets,
 * FIFOs and devices. Owners are written as 0:0 without names.
 * <dir>/.dockerignore, when present, leaves out what it matches
 * (dockerignore.c); the Dockerfile (its path relative to dir, or NULL)
 * and .dockerignore itself are always sent. A .dockerignore that is not
 * a regular file (a symbolic link is never followed), is larger than
 * SW_DOCKERIGNORE_MAX_BYTES or holds a malformed pattern fails the open. */
struct sw_driver_tar;
/* NULL with errno and a sentence in err: dir cannot be read (ENOTDIR,
 * EIO), or its .dockerignore is refused (EINVAL, EFBIG). */
struct sw_driver_tar *sw_driver_tar_open(const char *dir, const char *dockerfile, uint64_t max_bytes,
					 char *err, size_t errlen);
/* The next bytes of the stream, up to cap: the count, 0 at the end, or
 * -EFBIG past max_bytes, -EIO (a file vanished or cannot be read); the
 * sentence is then in sw_driver_tar_error(). */
ssize_t sw_driver_tar_read(struct sw_driver_tar *t, char *out, size_t cap);
const char *sw_driver_tar_error(const struct sw_driver_tar *t);
uint64_t sw_driver_tar_bytes(const struct sw_driver_tar *t);
void sw_driver_tar_free(struct sw_driver_tar *t);

/* ---- the build progress stream (progress.c) ----
 * The engine answers POST /build with JSON messages, one a line:
 * {"stream": "text"} (output, in pieces that need not end at a line),
 * {"status": ..., "id": ..., "progressDetail": ...} (pulls),
 * {"aux": {"ID": ...}}, and {"error": ..., "errorDetail": {"message": ...}}
 * which ends a failed build. Output lines reach log without their
 * newline, without terminal colour sequences, at most
 * SW_DRIVER_LOG_LINE_MAX bytes each (longer ones split). */
struct sw_driver_progress {
	sw_driver_log_fn log;
	void *log_arg;
	struct sw_buf message;  /* a message not yet ended by '\n' */
	struct sw_buf line;     /* output not yet ended by '\n' */
	bool skipping;          /* dropping an over-long message up to its '\n' */
	bool failed;            /* an error message came */
	char error[512];        /* its sentence */
	char image_id[80];      /* aux.ID, "sha256:..." */
};
void sw_driver_progress_init(struct sw_driver_progress *p, sw_driver_log_fn log, void *log_arg);
/* Takes the next n bytes of the answer. 0 or -ENOMEM. */
int sw_driver_progress_feed(struct sw_driver_progress *p, const char *data, size_t n);
/* The end of the answer: a last message without '\n' is read and a last
 * unterminated output line is logged. */
void sw_driver_progress_finish(struct sw_driver_progress *p);
void sw_driver_progress_release(struct sw_driver_progress *p);

#endif
