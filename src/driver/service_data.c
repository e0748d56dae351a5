/* The data of a managed service: its dump into a file on the server and
 * the restore of such a file (driver.h, "managed services' data").
 *
 * Everything runs inside the service's own container through the Docker
 * Engine API, with fixed argument vectors (no shell anywhere) and the
 * password in the exec's environment (never on a command line):
 *   POST /containers/{id}/exec   {"Cmd", "Env", "AttachStdout", "AttachStderr"}
 *   POST /exec/{id}/start        {"Detach": false, "Tty": false}: the answer
 *        is the program's output, multiplexed (8-byte frame headers: stream
 *        1 stdout, 2 stderr, then a big-endian length), until it exits
 *   GET  /exec/{id}/json         {"ExitCode", "Running"}
 *   PUT  /containers/{id}/archive?path=  a tar of one file, streamed
 * The dump's stdout goes straight to "<path>.partial" with its SHA-256
 * computed on the way; it is fsynced, renamed to path and the directory
 * fsynced, so path only ever names a whole dump. A restore first checks
 * the file against the SHA-256 recorded for it, so a damaged or missing
 * file never reaches the service. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "steward/base/secret.h"
#include "steward/base/sha.h"
#include "steward/base/base.h"
#include "steward/base/log.h"
#include "steward/driver/remote.h"
#include "driver/driver_internal.h"

#define ENGINE "the Docker engine"
#define EXEC_COLLECT_MAX (64u * 1024) /* a small stdout read whole (redis-cli INFO) */
#define REDIS_SAVE_WAIT_MS (30u * 60 * 1000)
#define REDIS_START_WAIT_MS 60000
#define RESTORE_DIR "/tmp"

/* ---- checks ---- */

static bool container_ok(const char *s)
{
	return s && s[0] != '-' && s[0] != '.' && s[0] != '_' && sw_driver_token_ok(s, "._-", 127);
}

/* A path on the server: absolute, no "." or ".." component, plain bytes. */
static bool path_ok(const char *s)
{
	if (!s || s[0] != '/' || strlen(s) > 1000 || strstr(s, "/./") || strstr(s, "/../") ||
	    strstr(s, "//"))
		return false;
	return sw_driver_token_ok(s + 1, "/._-", 1000);
}

static bool target_ok(const struct sw_service_target *t, char *err, size_t errlen)
{
	bool ok = t && container_ok(t->container) && t->kind && t->port > 0 && t->port < 65536 &&
		  t->password && t->username && t->database && path_ok(t->data_dir) &&
		  sw_driver_token_ok(t->username, "_-", 64) && sw_driver_token_ok(t->database, "_-", 64);
	if (ok && strcmp(t->kind, "POSTGRESQL") != 0 && strcmp(t->kind, "MYSQL") != 0 &&
	    strcmp(t->kind, "REDIS") != 0)
		ok = false;
	if (!ok)
		snprintf(err, errlen, "the service's container, kind, port or credentials are not in the "
			 "expected form");
	return ok;
}

/* ---- one exec ---- */

struct exec_out {
	struct sw_driver_exec_stream st;
	/* stdout: to sink, or collected (at most EXEC_COLLECT_MAX) */
	int (*sink)(void *arg, const char *p, size_t n);
	void *sink_arg;
	struct sw_buf collected;
};

static int exec_stdout(void *arg, const char *p, size_t n)
{
	struct exec_out *o = arg;
	if (o->sink)
		return o->sink(o->sink_arg, p, n);
	if (o->collected.len + n > EXEC_COLLECT_MAX)
		return -EFBIG;
	return sw_buf_append(&o->collected, p, n) < 0 ? -ENOMEM : 0;
}

static int exec_data(void *arg, const char *p, size_t n)
{
	struct exec_out *o = arg;
	o->st.out = exec_stdout;
	o->st.out_arg = o;
	return sw_driver_exec_stream_feed(&o->st, p, n);
}

/* ---- the exec stream (driver_internal.h) ---- */

static void tail_add(struct sw_driver_exec_stream *s, const char *p, size_t n)
{
	size_t cap = sizeof(s->tail) - 1;
	if (n >= cap) {
		p += n - cap;
		n = cap;
	}
	if (s->tail_len + n > cap) {
		size_t drop = s->tail_len + n - cap;
		memmove(s->tail, s->tail + drop, s->tail_len - drop);
		s->tail_len -= drop;
	}
	memcpy(s->tail + s->tail_len, p, n);
	s->tail_len += n;
	s->tail[s->tail_len] = '\0';
}

int sw_driver_exec_stream_feed(struct sw_driver_exec_stream *s, const char *p, size_t n)
{
	while (n) {
		if (s->left == 0) {
			size_t k = SW_MIN(n, sizeof(s->head) - s->head_len);
			memcpy(s->head + s->head_len, p, k);
			s->head_len += k;
			p += k;
			n -= k;
			if (s->head_len == sizeof(s->head)) {
				s->stream = s->head[0];
				s->left = (uint32_t)s->head[4] << 24 | (uint32_t)s->head[5] << 16 |
					  (uint32_t)s->head[6] << 8 | s->head[7];
				s->head_len = 0;
			}
			continue;
		}
		size_t k = SW_MIN(n, (size_t)s->left);
		if (s->stream == 1 && s->out) {
			int rc = s->out(s->out_arg, p, k);
			if (rc < 0)
				return rc;
		} else if (s->stream == 2 && s->err_out) {
			int rc = s->err_out(s->err_out_arg, p, k);
			if (rc < 0)
				return rc;
		} else if (s->stream == 2) {
			tail_add(s, p, k);
		}
		p += k;
		n -= k;
		s->left -= (uint32_t)k;
	}
	return 0;
}

const char *sw_driver_exec_stream_error(struct sw_driver_exec_stream *s)
{
	/* The text ends at a NUL a tool may have written (binary output), and
	 * its last line is what is left once line ends are dropped. */
	s->tail[s->tail_len] = '\0';
	s->tail_len = strlen(s->tail);
	while (s->tail_len && (s->tail[s->tail_len - 1] == '\n' || s->tail[s->tail_len - 1] == '\r'))
		s->tail[--s->tail_len] = '\0';
	char *nl = strrchr(s->tail, '\n');
	return nl ? nl + 1 : s->tail;
}

static int engine_url(struct sw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int engine_url(struct sw_buf *b, const char *fmt, ...)
{
	char tmp[1200];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	b->len = 0;
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (sw_buf_append_lit(b, SW_DRIVER_ENGINE_BASE) < 0 || sw_buf_append(b, tmp, (size_t)n + 1) < 0)
		return -ENOMEM;
	b->len--;
	return 0;
}

/* Runs argv (with env, "KEY=value", NULL-terminated or NULL) in the
 * container and waits for it: its exit code into *ret_code, its stdout
 * into o (o->sink, else o->collected), the end of its stderr in o->st.
 * -ENOENT: no such container; -EAGAIN: it is not running. */
static int exec_run(struct sw_driver *d, const char *container, const char *const *argv,
		    const char *const *env, const volatile bool *cancel, struct exec_out *o,
		    int *ret_code, char *err, size_t errlen)
{
	struct sw_buf url = { 0 };
	struct sw_driver_http h = { 0 };
	char *body = NULL, exec_id[80] = "";
	json_t *cmd = json_array(), *envs = json_array(), *doc = NULL;
	int rc = -ENOMEM;
	for (size_t i = 0; cmd && argv[i]; i++)
		json_array_append_new(cmd, json_string(argv[i]));
	for (size_t i = 0; envs && env && env[i]; i++)
		json_array_append_new(envs, json_string(env[i]));
	doc = json_pack("{s:b,s:b,s:b,s:b,s:O,s:O}", "AttachStdin", 0, "AttachStdout", 1,
			"AttachStderr", 1, "Tty", 0, "Cmd", cmd, "Env", envs);
	body = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	doc = NULL;
	if (!body || (rc = engine_url(&url, "/containers/%s/exec", container)) != 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	h = (struct sw_driver_http){ .method = "POST", .url = url.data, .unix_socket = d->docker_socket,
				     .content_type = "application/json", .body = body,
				     .body_len = strlen(body), .timeout_ms = SW_DRIVER_ENGINE_TIMEOUT_MS };
	if ((rc = sw_driver_http_run(&h, ENGINE, err, errlen)) != 0)
		goto out;
	if (h.status != 201) {
		rc = h.status == 409 ? -EAGAIN : sw_driver_status_errno(h.status);
		if (h.status == 409)
			snprintf(err, errlen, "the service's container %s is not running", container);
		else
			sw_driver_answer_error(&h, "running a program in the service's container failed",
					       err, errlen);
		goto out;
	}
	doc = json_loadb(h.response.data, h.response.len, 0, NULL);
	const char *id = json_string_value(json_object_get(doc, "Id"));
	if (!id || !sw_driver_token_ok(id, "", sizeof(exec_id) - 1)) {
		rc = -EIO;
		snprintf(err, errlen, "%s answered an exec without an id", ENGINE);
		goto out;
	}
	snprintf(exec_id, sizeof(exec_id), "%s", id);
	sw_buf_release(&h.response);

	static const char start[] = "{\"Detach\":false,\"Tty\":false}";
	if ((rc = engine_url(&url, "/exec/%s/start", exec_id)) != 0)
		goto out;
	/* No timeout: a dump takes as long as the data needs; cancel rules. */
	h = (struct sw_driver_http){ .method = "POST", .url = url.data, .unix_socket = d->docker_socket,
				     .content_type = "application/json", .body = start,
				     .body_len = sizeof(start) - 1, .on_data = exec_data, .data_arg = o,
				     .cancel = cancel };
	rc = sw_driver_http_run(&h, ENGINE, err, errlen);
	if (rc == -ECANCELED)
		snprintf(err, errlen, "cancelled");
	if (rc != 0)
		goto out;
	if (h.status != 200) {
		rc = sw_driver_status_errno(h.status);
		sw_driver_answer_error(&h, "running a program in the service's container failed", err,
				       errlen);
		goto out;
	}
	sw_buf_release(&h.response);

	if ((rc = engine_url(&url, "/exec/%s/json", exec_id)) != 0)
		goto out;
	h = (struct sw_driver_http){ .method = "GET", .url = url.data, .unix_socket = d->docker_socket,
				     .timeout_ms = SW_DRIVER_ENGINE_TIMEOUT_MS };
	if ((rc = sw_driver_http_run(&h, ENGINE, err, errlen)) != 0)
		goto out;
	json_decref(doc);
	doc = h.status == 200 ? json_loadb(h.response.data, h.response.len, 0, NULL) : NULL;
	json_t *code = json_object_get(doc, "ExitCode");
	if (!json_is_integer(code) || json_is_true(json_object_get(doc, "Running"))) {
		rc = -EIO;
		snprintf(err, errlen, "%s did not say how the program in the service's container ended",
			 ENGINE);
		goto out;
	}
	*ret_code = (int)json_integer_value(code);
	rc = 0;
out:
	json_decref(doc);
	json_decref(cmd);
	json_decref(envs);
	free(body);
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	return rc;
}

/* exec_run() that fails (-EIO, "<what> failed (exit N): <stderr>") unless
 * the program exits 0. */
static int exec_ok(struct sw_driver *d, const char *container, const char *what,
		   const char *const *argv, const char *const *env, const volatile bool *cancel,
		   struct exec_out *o, char *err, size_t errlen)
{
	int code = -1;
	int rc = exec_run(d, container, argv, env, cancel, o, &code, err, errlen);
	if (rc == 0 && code != 0) {
		const char *line = sw_driver_exec_stream_error(&o->st);
		snprintf(err, errlen, "%s failed (exit %d)%s%s", what, code, line[0] ? ": " : "", line);
		rc = -EIO;
	}
	return rc;
}

/* ---- the password in the environment ---- */

struct secret_env {
	char line[300];
	const char *env[2];
};

static void secret_env_set(struct secret_env *s, const struct sw_service_target *t)
{
	const char *key = strcmp(t->kind, "POSTGRESQL") == 0 ? "PGPASSWORD"
			  : strcmp(t->kind, "MYSQL") == 0    ? "MYSQL_PWD"
							      : "REDISCLI_AUTH";
	snprintf(s->line, sizeof(s->line), "%s=%s", key, t->password);
	s->env[0] = s->line;
	s->env[1] = NULL;
}

static void secret_env_wipe(struct secret_env *s)
{
	sw_wipe(s->line, sizeof(s->line));
}

/* ---- Redis ---- */

/* A field of INFO's answer ("name:value" lines) as a number; -1 when absent. */
static long long info_field(const struct sw_buf *b, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = b->data; p && *p;) {
		if (strncmp(p, name, n) == 0 && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
		const char *nl = strchr(p, '\n');
		p = nl ? nl + 1 : NULL;
	}
	return -1;
}

static bool info_has(const struct sw_buf *b, const char *line)
{
	return b->data && strstr(b->data, line);
}

static int redis_cli(struct sw_driver *d, const struct sw_service_target *t, const char *const *env,
		     const char *a1, const char *a2, const volatile bool *cancel, struct sw_buf *ret,
		     char *err, size_t errlen)
{
	char port[16];
	snprintf(port, sizeof(port), "%u", t->port);
	const char *argv[] = { "redis-cli", "-h", "127.0.0.1", "-p", port, a1, a2, NULL };
	struct exec_out o = { 0 };
	int rc = exec_ok(d, t->container, "redis-cli", argv, env, cancel, &o, err, errlen);
	if (rc == 0 && (sw_buf_append(&o.collected, "", 1) < 0))
		rc = -ENOMEM;
	if (rc == 0) {
		o.collected.len--;
		*ret = o.collected;
	} else {
		sw_buf_release(&o.collected);
	}
	return rc;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static bool cancelled(const volatile bool *cancel)
{
	return cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED);
}

/* BGSAVE, then waits until that save has ended well. */
static int redis_bgsave(struct sw_driver *d, const struct sw_service_target *t, const char *const *env,
			const volatile bool *cancel, char *err, size_t errlen)
{
	struct sw_buf info = { 0 }, reply = { 0 };
	int rc = redis_cli(d, t, env, "INFO", "persistence", cancel, &info, err, errlen);
	if (rc)
		return rc;
	long long saves0 = info_field(&info, "rdb_saves");
	long long time0 = info_field(&info, "rdb_last_save_time");
	sw_buf_release(&info);
	if (saves0 < 0 && time0 >= 0)
		sleep_ms(1100); /* no save counter: a new save must show a later second */
	rc = redis_cli(d, t, env, "BGSAVE", NULL, cancel, &reply, err, errlen);
	/* "Background saving started", or one already running: it is waited for too. */
	if (rc == 0 && !strstr(reply.data ? reply.data : "", "saving started") &&
	    !strstr(reply.data ? reply.data : "", "in progress")) {
		snprintf(err, errlen, "Redis refused BGSAVE: %.200s", reply.data ? reply.data : "");
		rc = -EIO;
	}
	sw_buf_release(&reply);
	for (unsigned waited = 0; rc == 0; waited += 200) {
		if (cancelled(cancel)) {
			snprintf(err, errlen, "cancelled");
			return -ECANCELED;
		}
		if (waited > REDIS_SAVE_WAIT_MS) {
			snprintf(err, errlen, "Redis's BGSAVE did not end within %u minutes",
				 REDIS_SAVE_WAIT_MS / 60000);
			return -ETIMEDOUT;
		}
		if ((rc = redis_cli(d, t, env, "INFO", "persistence", cancel, &info, err, errlen)) != 0)
			break;
		bool busy = info_field(&info, "rdb_bgsave_in_progress") != 0;
		bool newer = saves0 >= 0 ? info_field(&info, "rdb_saves") > saves0
					 : info_field(&info, "rdb_last_save_time") > time0;
		bool ok = info_has(&info, "rdb_last_bgsave_status:ok");
		sw_buf_release(&info);
		if (!busy && newer)
			break;
		if (!busy && !ok) {
			snprintf(err, errlen, "Redis's BGSAVE failed (rdb_last_bgsave_status is not ok: see the "
				 "service's log)");
			return -EIO;
		}
		sleep_ms(200);
	}
	return rc;
}

/* Waits until Redis answers PING (after a start, while it loads its data). */
static int redis_wait(struct sw_driver *d, const struct sw_service_target *t, const char *const *env,
		      const volatile bool *cancel, char *err, size_t errlen)
{
	for (unsigned waited = 0;; waited += 250) {
		struct sw_buf reply = { 0 };
		int rc = redis_cli(d, t, env, "PING", NULL, cancel, &reply, err, errlen);
		bool pong = rc == 0 && reply.data && strstr(reply.data, "PONG");
		sw_buf_release(&reply);
		if (pong)
			return 0;
		if (cancelled(cancel) || waited > REDIS_START_WAIT_MS) {
			snprintf(err, errlen, "Redis did not answer within %u seconds of its restart with the "
				 "restored data (see the service's log)", REDIS_START_WAIT_MS / 1000);
			return -ETIMEDOUT;
		}
		sleep_ms(250);
	}
}

/* ---- the dump ---- */

struct dump_file {
	int fd;
	struct sw_sha256_ctx md;
	uint64_t size;
};

static int dump_write(void *arg, const char *p, size_t n)
{
	struct dump_file *f = arg;
	sw_sha256_update(&f->md, p, n);
	f->size += n;
	while (n) {
		ssize_t w = write(f->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static void hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/* fsync of the directory holding path (the rename in it). */
static int fsync_dir_of(const char *path)
{
	char dir[1024];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return -EINVAL;
	slash[slash == dir ? 1 : 0] = '\0';
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync(fd) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

/* Runs the kind's fixed dump tool in the service's container, its stdout
 * to sink: the one dump the local driver and the agent run. */
static int dump_run(struct sw_driver *d, const struct sw_service_target *t, const volatile bool *cancel,
		    int (*sink)(void *arg, const char *p, size_t n), void *sink_arg, char *err,
		    size_t errlen)
{
	char port[16], file[1100];
	snprintf(port, sizeof(port), "%u", t->port);
	struct secret_env se;
	secret_env_set(&se, t);
	struct exec_out o = { .sink = sink, .sink_arg = sink_arg };
	int rc;
	if (strcmp(t->kind, "POSTGRESQL") == 0) {
		const char *argv[] = { "pg_dump", "--format=custom", "--no-password", "-h", "127.0.0.1",
				       "-p", port, "-U", t->username, "-d", t->database, NULL };
		rc = exec_ok(d, t->container, "pg_dump", argv, se.env, cancel, &o, err, errlen);
	} else if (strcmp(t->kind, "MYSQL") == 0) {
		const char *argv[] = { "mysqldump", "--single-transaction", "--routines", "--triggers",
				       "--no-tablespaces", "--protocol=TCP", "-h", "127.0.0.1", "-P", port,
				       "-u", t->username, t->database, NULL };
		rc = exec_ok(d, t->container, "mysqldump", argv, se.env, cancel, &o, err, errlen);
	} else {
		snprintf(file, sizeof(file), "%s/dump.rdb", t->data_dir);
		const char *argv[] = { "cat", file, NULL };
		rc = redis_bgsave(d, t, se.env, cancel, err, errlen);
		if (rc == 0)
			rc = exec_ok(d, t->container, "reading Redis's RDB file", argv, NULL, cancel, &o,
				     err, errlen);
	}
	sw_buf_release(&o.collected);
	secret_env_wipe(&se);
	return rc;
}

int sw_driver_service_dump(struct sw_driver *d, const struct sw_service_target *t, const char *path,
			   const volatile bool *cancel, struct sw_service_dump *ret, char *err,
			   size_t errlen)
{
	if (!target_ok(t, err, errlen))
		return -EINVAL;
	if (!path_ok(path)) {
		snprintf(err, errlen, "the backup's path is not in the expected form");
		return -EINVAL;
	}
	char tmp[1100];
	snprintf(tmp, sizeof(tmp), "%s.partial", path);
	struct dump_file f = { .fd = -1 };
	unsigned char digest[32];
	int rc;
	sw_sha256_init(&f.md);
	f.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f.fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "the backup file %s cannot be written: %s", tmp, strerror(errno));
		goto out;
	}
	/* A remote server's agent runs dump_run() and its output arrives here. */
	rc = d->remote ? sw_rd_service_dump(d, t, dump_write, &f, cancel, err, errlen)
		       : dump_run(d, t, cancel, dump_write, &f, err, errlen);
	if (rc)
		goto out;
	if (f.size == 0) {
		rc = -EIO;
		snprintf(err, errlen, "the dump came out empty");
		goto out;
	}
	if (fsync(f.fd) < 0 || close(f.fd) < 0) {
		rc = -errno;
		f.fd = -1;
		snprintf(err, errlen, "the backup file %s cannot be written: %s", tmp, strerror(-rc));
		goto out;
	}
	f.fd = -1;
	if (rename(tmp, path) < 0 || (rc = fsync_dir_of(path)) < 0) {
		rc = rc < 0 ? rc : -errno;
		snprintf(err, errlen, "the backup file %s cannot be put in place: %s", path, strerror(-rc));
		goto out;
	}
	sw_sha256_final(&f.md, digest);
	hex(digest, 32, ret->sha256);
	ret->size = f.size;
	rc = 0;
out:
	if (f.fd >= 0)
		close(f.fd);
	if (rc)
		unlink(tmp);
	return rc;
}

/* ---- the restore ---- */

/* The file as a one-entry tar stream, read on demand. */
struct tar_stream {
	int fd;              /* the file's bytes: from fd, or from mem when fd < 0 */
	const char *mem;
	unsigned mode;
	uint64_t size, sent; /* of the file's bytes */
	char header[512];
	size_t header_off;
	size_t trailer_left; /* padding to 512 and two zero blocks */
	int error;
};

static void tar_octal(char *field, size_t len, uint64_t v)
{
	/* Base-256 (GNU) where octal does not fit: the size of a file of 8 GiB or more. */
	if (len == 12 && v >= 077777777777ULL) {
		memset(field, 0, len);
		field[0] = (char)0x80;
		for (size_t i = len - 1; i > 0 && v; i--, v >>= 8)
			field[i] = (char)(v & 0xff);
		return;
	}
	snprintf(field, len, "%0*llo", (int)len - 1, (unsigned long long)v);
}

static void tar_header(struct tar_stream *s, const char *name)
{
	memset(s->header, 0, sizeof(s->header));
	snprintf(s->header, 100, "%s", name);
	tar_octal(s->header + 100, 8, s->mode);
	tar_octal(s->header + 108, 8, 0);
	tar_octal(s->header + 116, 8, 0);
	tar_octal(s->header + 124, 12, s->size);
	tar_octal(s->header + 136, 12, (uint64_t)time(NULL));
	memset(s->header + 148, ' ', 8);
	s->header[156] = '0';
	memcpy(s->header + 257, "ustar", 6);
	memcpy(s->header + 263, "00", 2);
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof(s->header); i++)
		sum += (unsigned char)s->header[i];
	snprintf(s->header + 148, 8, "%06o", sum);
	s->header[155] = ' ';
	s->trailer_left = (512 - s->size % 512) % 512 + 1024;
}

static ssize_t tar_read(void *arg, char *out, size_t cap)
{
	struct tar_stream *s = arg;
	if (s->header_off < sizeof(s->header)) {
		size_t k = SW_MIN(cap, sizeof(s->header) - s->header_off);
		memcpy(out, s->header + s->header_off, k);
		s->header_off += k;
		return (ssize_t)k;
	}
	if (s->sent < s->size) {
		size_t want = (size_t)SW_MIN((uint64_t)cap, s->size - s->sent);
		ssize_t r;
		if (s->fd < 0)
			memcpy(out, s->mem + s->sent, want), r = (ssize_t)want;
		else
			do
				r = pread(s->fd, out, want, (off_t)s->sent);
			while (r < 0 && errno == EINTR);
		if (r <= 0) {
			s->error = r < 0 ? -errno : -EIO; /* shorter than it was: it changed */
			return s->error;
		}
		s->sent += (uint64_t)r;
		return r;
	}
	size_t k = SW_MIN(cap, s->trailer_left);
	memset(out, 0, k);
	s->trailer_left -= k;
	return (ssize_t)k;
}

/* PUT the file (fd, size bytes) into the container's directory dir as name. */
static int put_stream(struct sw_driver *d, const char *container, const char *dir, const char *name,
		      struct tar_stream *ts, const volatile bool *cancel, char *err, size_t errlen);

static int put_file(struct sw_driver *d, const char *container, const char *dir, const char *name,
		    int fd, uint64_t size, const volatile bool *cancel, char *err, size_t errlen)
{
	struct tar_stream s = { .fd = fd, .size = size, .mode = 0644 };
	return put_stream(d, container, dir, name, &s, cancel, err, errlen);
}

int sw_driver_container_put_file(struct sw_driver *d, const char *container, const char *dir,
				 const char *name, const void *data, size_t len, unsigned mode, char *err,
				 size_t errlen)
{
	if (d->remote)
		return sw_rd_container_put_file(d, container, dir, name, data, len, mode, err, errlen);
	if (!container_ok(container) || !path_ok(dir) || !sw_driver_token_ok(name, "._-", 99) ||
	    name[0] == '.' || mode > 07777) {
		snprintf(err, errlen, "the container, directory or file name is not in the expected form");
		return -EINVAL;
	}
	struct tar_stream s = { .fd = -1, .mem = data, .size = len, .mode = mode };
	return put_stream(d, container, dir, name, &s, NULL, err, errlen);
}

static int put_stream(struct sw_driver *d, const char *container, const char *dir, const char *name,
		      struct tar_stream *ts, const volatile bool *cancel, char *err, size_t errlen)
{
	struct tar_stream s = *ts;
	tar_header(&s, name);
	struct sw_buf url = { 0 };
	int rc = engine_url(&url, "/containers/%s/archive?path=%s", container, dir);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	struct sw_driver_http h = { .method = "PUT", .url = url.data, .unix_socket = d->docker_socket,
				    .content_type = "application/x-tar", .read = tar_read,
				    .read_arg = &s, .cancel = cancel };
	rc = sw_driver_http_run(&h, ENGINE, err, errlen);
	if (rc == 0 && h.status != 200) {
		rc = sw_driver_status_errno(h.status);
		sw_driver_answer_error(&h, "copying a file into the service's container failed", err,
				       errlen);
	} else if (rc && s.error) {
		snprintf(err, errlen, "the backup file could not be read while it was sent: %s",
			 strerror(-s.error));
	}
	sw_buf_release(&h.response);
	sw_buf_release(&url);
	return rc;
}

/* Checks the file against its recorded SHA-256: 0, -ENOENT, -EBADMSG. */
static int verify(int fd, const char *path, const char *sha256, uint64_t *ret_size, char *err,
		  size_t errlen)
{
	struct sw_sha256_ctx md;
	char buf[65536], got[65];
	unsigned char digest[32];
	uint64_t size = 0;
	int rc = 0;
	sw_sha256_init(&md);
	for (;;) {
		ssize_t r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			snprintf(err, errlen, "the backup file %s cannot be read (%s): nothing was restored",
				 path, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		sw_sha256_update(&md, buf, (size_t)r);
		size += (uint64_t)r;
	}
	if (rc == 0) {
		sw_sha256_final(&md, digest);
		hex(digest, 32, got);
		if (!sha256 || strcmp(got, sha256) != 0) {
			rc = -EBADMSG;
			snprintf(err, errlen, "the backup file %s does not match the SHA-256 recorded when it "
				 "was taken (it is damaged): nothing was restored", path);
		}
	}
	*ret_size = size;
	return rc;
}

/* Restores the checked dump (fd, size bytes, read from offset 0) into the
 * service: copied into its container as RESTORE_DIR/name, then the kind's
 * fixed restore tool. The one restore the local driver and the agent run. */
static int restore_run(struct sw_driver *d, const struct sw_service_target *t, int fd, uint64_t size,
		       const char *name, const volatile bool *cancel, char *err, size_t errlen)
{
	char inside[300], port[16];
	snprintf(inside, sizeof(inside), "%s/%s", RESTORE_DIR, name);
	snprintf(port, sizeof(port), "%u", t->port);
	struct secret_env se;
	secret_env_set(&se, t);
	struct exec_out o = { 0 };
	bool copied = false;
	int rc = put_file(d, t->container, RESTORE_DIR, name, fd, size, cancel, err, errlen);
	copied = rc == 0;
	if (rc)
		goto out;
	if (strcmp(t->kind, "POSTGRESQL") == 0) {
		/* One transaction: a dump that fails half-way changes nothing. */
		const char *argv[] = { "pg_restore", "--clean", "--if-exists", "--no-owner",
				       "--single-transaction", "--exit-on-error", "--no-password", "-h",
				       "127.0.0.1", "-p", port, "-U", t->username, "-d", t->database,
				       inside, NULL };
		rc = exec_ok(d, t->container, "pg_restore", argv, se.env, cancel, &o, err, errlen);
	} else if (strcmp(t->kind, "MYSQL") == 0) {
		char source[320];
		snprintf(source, sizeof(source), "source %s", inside);
		const char *argv[] = { "mysql", "--protocol=TCP", "-h", "127.0.0.1", "-P", port, "-u",
				       t->username, t->database, "-e", source, NULL };
		rc = exec_ok(d, t->container, "mysql", argv, se.env, cancel, &o, err, errlen);
	} else {
		/* Checked before the running data is touched; then swapped while
		 * Redis is stopped (it saves its own data when it stops). */
		const char *check[] = { "redis-check-rdb", inside, NULL };
		rc = exec_ok(d, t->container, "redis-check-rdb (the backup is not a valid RDB file: "
			     "nothing was restored)", check, NULL, cancel, &o, err, errlen);
		if (rc == 0)
			rc = sw_driver_container_stop(d, t->container, 30, err, errlen);
		if (rc == 0) {
			rc = put_file(d, t->container, t->data_dir, "dump.rdb", fd, size, cancel, err, errlen);
			/* Started again whatever happened: a failed copy leaves its own data. */
			char e[256];
			int started = sw_driver_container_start(d, t->container, e, sizeof(e));
			if (rc == 0 && started) {
				rc = started;
				snprintf(err, errlen, "%s", e);
			}
		}
		if (rc == 0)
			rc = redis_wait(d, t, se.env, cancel, err, errlen);
	}
out:
	if (copied) {
		const char *rm[] = { "rm", "-f", inside, NULL };
		struct exec_out o2 = { 0 };
		char e[256];
		int code;
		exec_run(d, t->container, rm, NULL, NULL, &o2, &code, e, sizeof(e));
		sw_buf_release(&o2.collected);
	}
	sw_buf_release(&o.collected);
	secret_env_wipe(&se);
	return rc;
}

int sw_driver_service_restore(struct sw_driver *d, const struct sw_service_target *t, const char *path,
			      const char *sha256, const volatile bool *cancel, char *err, size_t errlen)
{
	if (!target_ok(t, err, errlen))
		return -EINVAL;
	if (!path_ok(path)) {
		snprintf(err, errlen, "the backup's path is not in the expected form");
		return -EINVAL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, e == ENOENT ? "the backup file %s is missing: nothing was restored"
						  : "the backup file %s cannot be opened: nothing was restored",
			 path);
		return -e;
	}
	uint64_t size = 0;
	int rc = verify(fd, path, sha256, &size, err, errlen);
	if (rc) {
		close(fd);
		return rc;
	}
	char name[200];
	snprintf(name, sizeof(name), "sw-restore-%s", strrchr(path, '/') + 1);
	/* A remote server's agent is sent the checked file, checks it again
	 * as it arrives, and runs restore_run(). */
	rc = d->remote ? sw_rd_service_restore(d, t, fd, size, sha256, cancel, err, errlen)
		       : restore_run(d, t, fd, size, name, cancel, err, errlen);
	close(fd);
	return rc;
}

/* ---- on the agent (docs/agent-protocol.md, service.dump and service.restore) ---- */

static int agent_target(const struct sw_agent_msg *cmd, struct sw_service_target *t, char *err,
			size_t errlen)
{
	const char *e = cmd->args.engine ? cmd->args.engine : "";
	*t = (struct sw_service_target){
		.container = cmd->args.name,
		.kind = strcmp(e, "postgres") == 0 ? "POSTGRESQL"
			: strcmp(e, "mysql") == 0  ? "MYSQL"
			: strcmp(e, "redis") == 0  ? "REDIS"
						   : "",
		.port = (unsigned)cmd->args.port,
		.database = cmd->args.database,
		.username = cmd->args.username,
		.password = cmd->args.password,
		.data_dir = cmd->args.data_dir,
	};
	return target_ok(t, err, errlen) ? 0 : -EINVAL;
}

/* The dump's bytes as base64 lines of at most AGENT_DUMP_LINE raw bytes
 * (a multiple of 3, so each line decodes alone), with their size and
 * SHA-256 for the result. */
#define AGENT_DUMP_LINE (24u * 1024)
struct agent_dump {
	struct sw_agent_stream *st;
	struct sw_sha256_ctx md;
	uint64_t size;
	size_t n;
	unsigned char raw[AGENT_DUMP_LINE];
	char line[4 * (AGENT_DUMP_LINE / 3) + 2];
};

static void agent_dump_flush(struct agent_dump *a)
{
	if (!a->n)
		return;
	int len = sw_base64_encode(a->raw, a->n, a->line, sizeof(a->line));
	a->line[len] = '\n';
	a->st->output(a->st, a->line, (size_t)len + 1);
	a->n = 0;
}

static int agent_dump_sink(void *arg, const char *p, size_t n)
{
	struct agent_dump *a = arg;
	sw_sha256_update(&a->md, p, n);
	a->size += n;
	while (n) {
		size_t k = SW_MIN(n, sizeof(a->raw) - a->n);
		memcpy(a->raw + a->n, p, k);
		a->n += k;
		p += k;
		n -= k;
		if (a->n == sizeof(a->raw))
			agent_dump_flush(a);
	}
	return 0;
}

int sw_driver_agent_service_dump(struct sw_driver *d, const struct sw_agent_msg *cmd,
				 struct sw_agent_stream *st, json_t **res, char *err, size_t errlen)
{
	struct sw_service_target t;
	int rc = agent_target(cmd, &t, err, errlen);
	if (rc)
		return rc;
	if (!st) {
		snprintf(err, errlen, "the dump has no output stream");
		return -EINVAL;
	}
	struct agent_dump *a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	sw_sha256_init(&a->md);
	a->st = st;
	/* The control plane's cancel (protocol 2) closes the engine's
	 * connection to the dump tool: the command ends CANCELLED. */
	rc = dump_run(d, &t, &st->cancel, agent_dump_sink, a, err, errlen);
	if (rc == -ECANCELED)
		sw_log_info("agent: service.dump %s stopped by its cancel (%llu bytes sent)", cmd->id,
			    (unsigned long long)a->size);
	if (rc == 0) {
		agent_dump_flush(a);
		unsigned char digest[32];
		char sum[65];
		sw_sha256_final(&a->md, digest);
		hex(digest, 32, sum);
		*res = json_pack("{s:I,s:s}", "dumpBytes", (json_int_t)a->size, "dumpSha256", sum);
	}
	free(a);
	return rc;
}

int sw_driver_agent_service_restore(struct sw_driver *d, const struct sw_agent_msg *cmd,
				    struct sw_agent_stream *st, char *err, size_t errlen)
{
	struct sw_service_target t;
	int rc = agent_target(cmd, &t, err, errlen);
	if (rc)
		return rc;
	/* The agent's loop staged the input and checked its size and SHA-256
	 * against dumpBytes and dumpSha256 before this runs. */
	if (!st || st->input_fd < 0) {
		snprintf(err, errlen, "the restore has no staged dump");
		return -EINVAL;
	}
	char name[200];
	snprintf(name, sizeof(name), "sw-restore-%s", cmd->id);
	if (!sw_driver_token_ok(name, "._-", 199)) {
		snprintf(err, errlen, "the command's id is not in the expected form");
		return -EINVAL;
	}
	rc = restore_run(d, &t, st->input_fd, cmd->args.context_bytes, name, &st->cancel, err, errlen);
	if (rc == -ECANCELED)
		sw_log_info("agent: service.restore %s stopped by its cancel", cmd->id);
	return rc;
}
