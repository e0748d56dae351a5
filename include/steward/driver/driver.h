/* The driver: everything Steward does to a server, as a closed set of
 * typed, blocking calls run on a runner thread (never on an io loop).
 *
 * The local driver (src/driver/local.c) does them in-process through the
 * Docker Engine API on its unix socket (DOCKER_HOST, default
 * unix:///var/run/docker.sock) and Caddy's admin API (CADDY_ADMIN_URL,
 * default http://127.0.0.1:2019). The agent issue adds a remote driver with
 * the same operations over the agent channel, so every argument is plain
 * data (no callbacks into Steward's state beyond the log sink) and every
 * call is idempotent where it can be (creating what exists, removing what
 * is gone: 0).
 *
 * Errors: 0 or -errno; on failure err (errlen bytes) holds one sentence for
 * a deployment's errorMessage, never a secret (no environment values).
 * A peer that does not answer: -ECONNREFUSED (or -ETIMEDOUT, -EIO) and
 * "the Docker engine at <socket> cannot be reached: ..." / "Caddy's admin
 * API cannot be reached: ...". Bad arguments (names, tags, ids, paths
 * outside the strict formats) are -EINVAL before any call.
 *
 * A driver is immutable once made: its calls may run on several runner
 * threads at once. */
#ifndef STEWARD_DRIVER_H
#define STEWARD_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Receives output lines (no trailing newline) as they come; the deploy
 * log writer scrubs them. */
typedef void (*sw_driver_log_fn)(void *arg, const char *line, size_t len);

struct sw_driver;

/* ---- images ---- */
/* The build: POST /build of the engine's classic builder with the context
 * streamed as a tar (nothing staged on disk; symbolic links archived as
 * links, never followed; ".git" left out at every depth, and sockets,
 * FIFOs and devices; owners written as 0:0). <context>/.dockerignore is
 * honoured as the Docker CLI honours it (the Dockerfile and .dockerignore
 * itself are always sent); one that is malformed, larger than 64 KiB or
 * not a regular file refuses the build before any call (-EINVAL, -EFBIG:
 * ".dockerignore line N: ..." names the line).
 * Output lines reach log as they come (without colour sequences); the
 * engine's step containers are removed (rm, forcerm). Failures: the
 * build's own error, "the image build failed: <the engine's sentence>"
 * (-EIO); a refusal before it starts, "the image build was refused: ..."
 * (e.g. "Cannot locate specified Dockerfile: x"); -EFBIG "the build
 * context is larger than N bytes"; -ECANCELED "the build was cancelled"
 * (within about a second of *cancel: the engine then stops the step and
 * removes its container). Builds use the engine's default network; a
 * FROM image that is not local is pulled by the engine. */
struct sw_image_build {
	const char *context_dir;  /* a directory: sent to the engine as a tar stream */
	/* Or, with context_dir NULL, the tar stream itself (the agent's staged
	 * context): fills up to cap bytes, returns the count, 0 at its end,
	 * -errno to stop the build. */
	ssize_t (*context_read)(void *arg, char *out, size_t cap);
	void *context_arg;
	const char *dockerfile;   /* path of the Dockerfile relative to context_dir */
	const char *tag;          /* "steward/<application id>:<deployment number>" */
	const char *const *labels; /* "key=value" pairs, NULL-terminated */
	const volatile bool *cancel; /* polled: true stops the build (-ECANCELED) */
	uint64_t context_max_bytes;   /* the tar stream's cap (-EFBIG past it); 0: none */
};
int sw_driver_image_build(struct sw_driver *d, const struct sw_image_build *b,
			  sw_driver_log_fn log, void *log_arg, char *err, size_t errlen);
/* Removes the tag (force=0: an image with other tags keeps them). A tag
 * that is gone: 0. In use by a container: -EBUSY. */
int sw_driver_image_remove(struct sw_driver *d, const char *tag, char *err, size_t errlen);
/* Image tags carrying label "steward.application=<application_id>",
 * newest first, into tags (each SW_DRIVER_TAG_MAX bytes), at most cap.
 * Newest is by the number after the tag's last ':' (the deployment
 * number: a later deployment can reuse an older image from the build
 * cache, with its old creation time), then by creation time. */
#define SW_DRIVER_TAG_MAX 160
int sw_driver_images_list(struct sw_driver *d, const char *application_id,
			  char (*tags)[SW_DRIVER_TAG_MAX], size_t cap, size_t *ret_n,
			  char *err, size_t errlen);
bool sw_driver_image_exists(struct sw_driver *d, const char *tag);

/* ---- containers ---- */
struct sw_container_spec {
	const char *name;          /* unique on the server */
	const char *image;
	const char *const *env;    /* "KEY=value", NULL-terminated (values are secrets: never logged) */
	const char *const *labels; /* "key=value": compose-compatible + steward.* */
	const char *const *cmd;    /* exec form or NULL (the image's) */
	const char *const *mounts; /* "volume-name:/container/path" or "/host/path:/container/path" */
	uint64_t memory_bytes;     /* 0: no limit */
	uint64_t nano_cpus;        /* 0: no limit (1e9 = one CPU) */
	unsigned port;             /* the port the application listens on (host networking);
				    * given as PORT=<port> unless env has PORT; 0: none */
	bool restart_unless_stopped; /* else restart policy "no" */
};
/* Create: HostConfig NetworkMode "host" and Init (the engine's
 * docker-init as PID 1: signals reach the program); with a port, "$PORT"
 * and "${PORT}" in each argument of cmd, or else of the image's own
 * command, are replaced by it (sw_driver_expand_port: no shell); a named volume mount is a
 * "volume" Mount (create it first with sw_driver_volume_create(), so it
 * carries Steward's labels; the engine would make an unlabelled one on
 * first use); a host path is a Bind (the
 * directory is created when missing, as `docker run -v` does); Memory,
 * NanoCpus; json-file logs capped at 3 x 10 MB. The id (64 hex) into id.
 * A container of that name exists already: -EEXIST, its id in id (it is
 * not replaced, its spec may differ: remove it first for a fresh one).
 * No such image: -ENOENT. */
#define SW_DRIVER_ID_MAX 65
int sw_driver_container_create(struct sw_driver *d, const struct sw_container_spec *s,
			       char id[SW_DRIVER_ID_MAX], char *err, size_t errlen);
/* Start: running already is 0; no such container -ENOENT. */
int sw_driver_container_start(struct sw_driver *d, const char *id_or_name, char *err, size_t errlen);
/* Stop: SIGTERM, then SIGKILL after timeout_s. Stopped already or gone: 0. */
int sw_driver_container_stop(struct sw_driver *d, const char *id_or_name, unsigned timeout_s,
			     char *err, size_t errlen);
/* Remove (force: a running one is killed; named volumes are kept:
 * sw_driver_volume_remove() removes them). Gone: 0. */
int sw_driver_container_remove(struct sw_driver *d, const char *id_or_name, char *err, size_t errlen);

struct sw_container_info {
	char id[SW_DRIVER_ID_MAX];
	char name[128];
	char image[SW_DRIVER_TAG_MAX];
	char state[24];   /* created, running, exited, ... */
	char status[64];  /* the engine's human text, e.g. "Up 3 minutes" */
	char project[128]; /* com.docker.compose.project */
	char colour[8];   /* steward.colour: "blue", "green" or "" */
	int64_t created;  /* unix seconds */
};
/* Containers with label steward.application=<application_id> (every
 * container of the engine, Steward's or not, when NULL), running or not,
 * newest first, at most cap (the rest are left out); *ret_n is set. */
int sw_driver_containers_list(struct sw_driver *d, const char *application_id,
			      struct sw_container_info *out, size_t cap, size_t *ret_n,
			      char *err, size_t errlen);

/* ---- a container's logs (container_logs.c) ----
 * GET /containers/{id}/logs of the engine (stdout and stderr, with
 * timestamps), its multiplexed frames taken apart, each stream cut into
 * lines (at "\n"; a "\r\n" ends a line as "\n" does; a line longer than
 * SW_DRIVER_CONTAINER_LOG_LINE_MAX is cut into pieces). Lines reach fn in
 * the engine's order, raw bytes (the caller scrubs and cleans them); a
 * line still open when the log ends is given too. Containers made with a
 * TTY (never Steward's) are not read. */
#define SW_DRIVER_CONTAINER_LOG_LINE_MAX (16u * 1024)
struct sw_container_logs_query {
	const char *container;  /* the engine's id or a name */
	unsigned tail;          /* the last tail lines of the log, then what follows */
	int64_t since_us;       /* only lines from then on (the engine reads whole seconds); 0: all */
	bool follow;            /* wait for new lines until the container stops or *cancel */
	const volatile bool *cancel; /* polled about every second: -ECANCELED */
};
struct sw_container_log_line {
	int stream;             /* 1 stdout, 2 stderr */
	int64_t time_us;        /* the engine's timestamp of the line */
	const char *text;       /* len bytes, no line end, any bytes */
	size_t len;
};
/* 0, or -errno to stop the read (that error is returned). */
typedef int (*sw_driver_container_log_fn)(void *arg, const struct sw_container_log_line *l);
/* 0 once the log ended (follow: the container stopped); no such container
 * -ENOENT; -ECANCELED; fn's error. A remote server: its agent's
 * container.logs, the lines back as the command's output; follow there is
 * -EOPNOTSUPP. Without follow the call is bounded by the engine's timeout
 * (remote: the command's). */
int sw_driver_container_logs(struct sw_driver *d, const struct sw_container_logs_query *q,
			     sw_driver_container_log_fn fn, void *arg, char *err, size_t errlen);

/* ---- named volumes ----
 * Only Steward's own: "sw-<application id>-<volume name>" (an
 * application's volume; the name as sw_valid_resource_name() accepts it)
 * and "sw-svc-<service id>-data" (a service's data), ids as lower-case
 * UUIDs. Any other name is -EINVAL before a call. */
#define SW_DRIVER_VOLUME_MAX 128
struct sw_volume_spec {
	const char *name;
	const char *application_id; /* label steward.application=<id>, or NULL */
	const char *service_id;     /* label steward.service=<id>, or NULL (one of the two) */
};
/* POST /volumes/create (driver "local") with labels steward.managed=true
 * and steward.application or steward.service: made before a container
 * mounts it. A volume of that name exists already: 0, used as it is (the
 * engine keeps its labels: one an older Steward let the engine make on
 * first use stays unlabelled, so only its name finds it). */
int sw_driver_volume_create(struct sw_driver *d, const struct sw_volume_spec *v, char *err, size_t errlen);
/* The names of the volumes labelled steward.application=<application_id>,
 * sorted, at most cap (the rest are left out); *ret_n is set. */
int sw_driver_volumes_list(struct sw_driver *d, const char *application_id,
			   char (*names)[SW_DRIVER_VOLUME_MAX], size_t cap, size_t *ret_n,
			   char *err, size_t errlen);
/* DELETE /volumes/{name}: the volume and its data. Gone: 0. Mounted by a
 * container (running or stopped): -EBUSY, "the volume <name> is in use by
 * a container". */
int sw_driver_volume_remove(struct sw_driver *d, const char *name, char *err, size_t errlen);

/* ---- ingress ----
 * Caddy's server "steward" (apps.http.servers.steward) holds one route per
 * application, "@id": "steward-app-<application id>", matching its
 * hostnames and reverse-proxying to one upstream. The driver creates the
 * server when it is absent, listening on CADDY_HTTP_LISTEN (default
 * ":80"; comma-separated addresses; an existing server keeps its own). */
struct sw_ingress_route {
	const char *application_id; /* the route's @id is "steward-app-<application_id>" */
	const char *const *hostnames; /* at least one (-EINVAL otherwise) */
	const char *upstream;       /* "127.0.0.1:<port>" */
};
/* Creates or replaces the application's route in one request (atomic for
 * Caddy: a blue-green switch is this call with the new upstream; when it
 * returns 0 Caddy serves the new route). */
int sw_driver_route_set(struct sw_driver *d, const struct sw_ingress_route *r, char *err, size_t errlen);
/* Removes the route; no route: 0. */
int sw_driver_route_remove(struct sw_driver *d, const char *application_id, char *err, size_t errlen);
/* The ingress state as JSON text (malloc'd, caller frees) for GET /proxy:
 *   {"server": {"name": "steward", "listen": ["<address>", ...],
 *               "automaticHttps": bool} | null (no such server yet),
 *    "routes": [{"id": "steward-app-<uuid>" | null, "applicationId": "<uuid>" | null,
 *                "hosts": ["<hostname>", ...], "upstreams": ["127.0.0.1:<port>", ...]}],
 *    "certificates": [{"subjects": ["<name>", ...] (empty: every other name),
 *                      "issuers": ["acme" | "zerossl" | "internal" | ...], "onDemand": bool}],
 *    "internalCa": {"id", "name", "rootCommonName", "intermediateCommonName"} | null}
 * Caddy's admin API does not list the certificates it holds, so
 * "certificates" is what Caddy is configured to obtain them with (its TLS
 * automation policies; [] when none: Caddy's defaults then apply where
 * automatic HTTPS is on), not issuance status. automaticHttps follows
 * Caddy's rule: on unless disabled or the server listens only on Caddy's
 * HTTP port. internalCa is read only when a policy uses the internal issuer
 * (reading it makes Caddy create its CA). */
int sw_driver_proxy_state(struct sw_driver *d, char **ret_json, char *err, size_t errlen);

/* ---- managed services' data (service_data.c) ----
 * A service's dump and restore, run inside its container with its own
 * tools and fixed argument vectors (no shell): PostgreSQL pg_dump
 * --format=custom / pg_restore --clean --if-exists --single-transaction;
 * MySQL mysqldump --single-transaction / mysql -e "source <file>"; Redis
 * BGSAVE, waited for, then its RDB file / redis-check-rdb on the file,
 * then the file swapped in while Redis is stopped and Redis started
 * again. The password goes in the exec's environment (PGPASSWORD,
 * MYSQL_PWD, REDISCLI_AUTH), never on a command line, never in err.
 * Paths are on the server the driver drives (the agent's for a remote
 * one): absolute, [A-Za-z0-9/._-] only. */
struct sw_service_target {
	const char *container;  /* its name or id */
	const char *kind;       /* "POSTGRESQL", "MYSQL" or "REDIS" */
	unsigned port;          /* where it listens on 127.0.0.1 */
	const char *database, *username, *password;
	const char *data_dir;   /* its data inside the container (Redis: where dump.rdb is) */
};
struct sw_service_dump {
	uint64_t size;
	char sha256[65];        /* hex */
};
/* Dumps the service into path: written as "<path>.partial", fsynced,
 * renamed to path and the directory fsynced, so path never names a part
 * of a dump; its size and SHA-256 into *ret. On failure nothing is left at
 * either name, and err says what failed ("pg_dump failed (exit 1): <its
 * last line of stderr>"; "the service's container ... is not running",
 * -EAGAIN; -ECANCELED within about a second of *cancel). */
int sw_driver_service_dump(struct sw_driver *d, const struct sw_service_target *t, const char *path,
			   const volatile bool *cancel, struct sw_service_dump *ret, char *err,
			   size_t errlen);
/* Restores the dump at path into the running service, after checking it
 * against sha256 (the hex recorded when it was taken): a missing file
 * (-ENOENT) or one that does not match (-EBADMSG) is refused with a
 * sentence ending "nothing was restored", before anything reaches the
 * service. The restore tool's failure: -EIO with its sentence (PostgreSQL's
 * single transaction leaves the data as it was; Redis's file is checked
 * by redis-check-rdb before Redis is stopped). */
int sw_driver_service_restore(struct sw_driver *d, const struct sw_service_target *t, const char *path,
			      const char *sha256, const volatile bool *cancel, char *err, size_t errlen);

/* Writes len bytes of data as the file dir/name (mode, owner 0:0) into the
 * container, created or not yet started included (PUT /containers/{id}/archive;
 * a volume mounted at dir receives it): how a secret reaches a program
 * without its command line or environment. name: [A-Za-z0-9._-], not
 * starting with '.'; dir absolute. The directory must exist. */
int sw_driver_container_put_file(struct sw_driver *d, const char *container, const char *dir,
				 const char *name, const void *data, size_t len, unsigned mode, char *err,
				 size_t errlen);

/* ---- an HTTP probe (probe.c): the health gate's request ----
 * One GET of path on host:port of the server the driver drives, made on
 * that server: directly on the local host, by the agent (container.probe)
 * on a remote one, so the answer is the server's own loopback's. Bounded
 * by timeout_s for connecting, sending and reading the status line. */
struct sw_http_probe {
	const char *host;   /* "127.0.0.1" or "::1"; NULL: 127.0.0.1 */
	unsigned port;      /* SW_AGENT_PROBE_PORT_MIN..65535 */
	const char *path;   /* as healthCheckPath is checked (sw_valid_http_path) */
	unsigned timeout_s; /* 1..SW_AGENT_PROBE_TIMEOUT_MAX_S */
};
/* 0 with the answer's status in *ret_status (and the time it took, ms, in
 * *ret_ms when not NULL); -ECONNREFUSED (nothing listens), -ETIMEDOUT (no
 * status line within the timeout), -ECONNRESET (closed without one),
 * -EPROTO (the answer was not HTTP), -EINVAL (a request outside
 * sw_agent_probe_valid()'s bounds), other -errno; on a remote server also
 * what a command can fail with (-EHOSTUNREACH: the agent is gone,
 * -EOPNOTSUPP: its version does not carry container.probe). A sentence in
 * err on failure. d NULL: probed from this host. */
int sw_driver_http_probe(struct sw_driver *d, const struct sw_http_probe *q, int *ret_status,
			 uint64_t *ret_ms, char *err, size_t errlen);

/* ---- host ---- */
/* A free TCP port on 127.0.0.1 of the server the driver drives, found
 * there by bind() to port 0 (then released: another process may take it
 * before the container does, which the health gate then sees). Directly on
 * the local host; by the agent's port.free on a remote one, whose executor
 * calls this same code on its own local driver, so the port is free on the
 * machine that runs the container. d NULL: this host. 0, or -errno with a
 * sentence (a remote server: what a command can fail with, -EOPNOTSUPP
 * when its agent's version does not carry port.free). */
int sw_driver_free_port(struct sw_driver *d, unsigned *ret_port, char *err, size_t errlen);
/* MemAvailable of the server, bytes, from <HOST_PROC_PATH or /proc>/meminfo.
 * -ENODATA when the kernel does not report it. */
int sw_driver_memory_available(struct sw_driver *d, uint64_t *ret_bytes);

/* The driver of the control plane's own host (the local server). NULL with
 * errno (EINVAL: DOCKER_HOST is not unix:///path). DOCKER_HOST,
 * CADDY_ADMIN_URL, CADDY_HTTP_LISTEN and HOST_PROC_PATH are read here
 * (src/driver/local.c lists their defaults). */
struct sw_driver *sw_driver_local_new(void);
void sw_driver_free(struct sw_driver *d);

#endif
