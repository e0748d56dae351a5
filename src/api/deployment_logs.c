/* A deployment's build log: GET /deployments/:id/logs (the file, sent
 * without copying it through user space: the log file is the one source
 * of truth; src/deploy/build_log.c writes whole lines, then tells the hub;
 * on a replica without the file, the copy its runner stores in
 * deployment_log_chunks as it writes, read in one query for the range
 * asked and sent from that one buffer)
 * and GET /deployments/:id/live (Server-Sent Events: the log so far, live
 * lines, then the status; the stream is src/deploy/live_log.c, whose first
 * comment says how it joins the file and the hub without a gap or a
 * repeat). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/deploy/deploy.h"
#include "steward/base/log.h"
#include "steward/deploy/live_log.h"
#include "api/api_internal.h"
#include "steward/db/statements_deployments.h"

/* The deployment of path parameter :id, looked up in the caller's
 * organization (the callbacks answer 404 when it is not there). */
struct lookup {
	struct sw_http_request *req;
	char id[37];
};

static void lookup(struct sw_http_request *req, sw_db_cb found)
{
	struct lookup *st = sw_api_state_new(req, sizeof(*st));
	if (!st || !sw_api_uuid_param(req, req->params.value[0], st->id))
		return;
	const char *params[3] = { req->principal.organization_id, st->id, NULL };
	sw_api_query(req, &sw_db_stmt_deployment_get, params, 3, found, st);
}

/* ---- GET /deployments/:id/logs ---- */

/* A position of a Range: 1*DIGIT of any length (RFC 9110 14.1.1: leading
 * zeros allowed, and "recipients MUST anticipate potentially large decimal
 * numerals"), saturating at UINT64_MAX, which no log reaches: a first
 * position past any size is then 416, a last one or a suffix past the end
 * is cut to the end, as for any other number past it. */
static bool range_number(struct sw_str s, uint64_t *ret)
{
	uint64_t v = 0;
	if (!s.len)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		if (s.ptr[i] < '0' || s.ptr[i] > '9')
			return false;
		unsigned d = (unsigned)(s.ptr[i] - '0');
		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	*ret = v;
	return true;
}

/* Reads a single "bytes=" range (RFC 9110 14.1.2). false: no usable Range
 * (absent, several ranges, malformed: the whole log is sent). */
static bool parse_range(struct sw_str v, uint64_t size, uint64_t *ret_off, uint64_t *ret_len,
			bool *ret_unsatisfiable)
{
	*ret_unsatisfiable = false;
	if (v.len < 7 || memcmp(v.ptr, "bytes=", 6) != 0)
		return false;
	struct sw_str r = sw_str_from(v.ptr + 6, v.len - 6);
	const char *dash = memchr(r.ptr, '-', r.len);
	if (!dash || memchr(r.ptr, ',', r.len))
		return false;
	struct sw_str first = sw_str_from(r.ptr, (size_t)(dash - r.ptr));
	struct sw_str last = sw_str_from(dash + 1, r.len - first.len - 1);
	uint64_t a = 0, b = 0;
	if ((first.len && !range_number(first, &a)) || (last.len && !range_number(last, &b)) ||
	    (!first.len && !last.len))
		return false;
	if (!first.len) { /* the last b bytes */
		if (b == 0 || size == 0) {
			*ret_unsatisfiable = true;
			return true;
		}
		*ret_len = SW_MIN(b, size);
		*ret_off = size - *ret_len;
		return true;
	}
	if (last.len && b < a)
		return false; /* invalid: ignored */
	if (a >= size) {
		*ret_unsatisfiable = true;
		return true;
	}
	*ret_off = a;
	*ret_len = (last.len ? SW_MIN(b, size - 1) : size - 1) - a + 1;
	return true;
}

/* ---- the log from PostgreSQL (a replica without its file) ---- */

/* The whole log in one read, when no Range asks for part: past any cap. */
#define LOG_READ_ALL "2147483647"

struct stored {
	struct sw_http_request *req;
	char id[37];
	bool sized;   /* the size is known: the range's bytes are asked for */
	uint64_t off, len;
	int status;
};

static void stored_read(struct stored *st, uint64_t off, const char *len);

/* Range handling shared by the file and the stored copy: false when the
 * answer was sent (416); else *status (200 or 206) with Content-Range set
 * and the bytes to send in *off, *len. */
static bool answer_range(struct sw_http_request *req, uint64_t size, uint64_t *off, uint64_t *len,
			 int *status)
{
	*off = 0;
	*len = size;
	*status = 200;
	const struct sw_http_header *range = sw_http_request_header(req, SW_STR("Range"));
	bool unsatisfiable = false;
	if (!range || sw_http_request_header(req, SW_STR("If-Range")) ||
	    !parse_range(range->value, size, off, len, &unsatisfiable))
		return true;
	char cr[80];
	if (unsatisfiable) {
		snprintf(cr, sizeof(cr), "bytes */%llu", (unsigned long long)size);
		sw_http_add_header(req, "Content-Range", sw_str_cstr(cr));
		sw_http_error(req, 416, "RANGE_NOT_SATISFIABLE", "The range asked for starts past the end of the log.");
		return false;
	}
	*status = 206;
	snprintf(cr, sizeof(cr), "bytes %llu-%llu/%llu", (unsigned long long)*off,
		 (unsigned long long)(*off + *len - 1), (unsigned long long)size);
	sw_http_add_header(req, "Content-Range", sw_str_cstr(cr));
	return true;
}

static void stored_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct stored *st = arg;
	struct sw_http_request *req = st->req;
	if (err->code || PQntuples(res) != 1) {
		if (err->code)
			sw_log_error("deployment log %s cannot be read from the database: %s", st->id, err->message);
		sw_api_internal_error(req);
		return;
	}
	static const char text[] = "text/plain; charset=utf-8";
	uint64_t size = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	if (!st->sized && sw_http_request_header(req, SW_STR("Range"))) {
		/* The size first, for the range; then its bytes. */
		if (!answer_range(req, size, &st->off, &st->len, &st->status))
			return;
		if (st->len == 0) {
			sw_http_respond(req, st->status, text, SW_STR_NULL);
			return;
		}
		st->sized = true;
		char len[24];
		snprintf(len, sizeof(len), "%llu", (unsigned long long)st->len);
		stored_read(st, st->off, len);
		return;
	}
	size_t n = 0;
	unsigned char *body = NULL;
	if (sw_deploy_log_stored_bytes(res, &body, &n) < 0) {
		sw_api_internal_error(req);
		return;
	}
	sw_http_respond(req, st->sized ? st->status : 200, text, sw_str_from((const char *)body, n));
	PQfreemem(body);
}

static void stored_read(struct stored *st, uint64_t off, const char *len)
{
	char from[24];
	snprintf(from, sizeof(from), "%llu", (unsigned long long)off);
	const char *params[3] = { st->id, from, len };
	sw_api_query(st->req, &sw_db_stmt_deployment_log_read, params, 3, stored_done, st);
}

static void logs_found(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct lookup *st = arg;
	struct sw_http_request *req = st->req;
	if (!sw_api_found(req, res, err))
		return;
	char path[4096];
	if (sw_deploy_log_path(sw_http_config(req)->data_dir, st->id, path, sizeof(path)) < 0) {
		sw_api_internal_error(req);
		return;
	}
	static const char text[] = "text/plain; charset=utf-8";
	sw_http_add_header(req, "Accept-Ranges", SW_STR("bytes"));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 && errno == ENOENT) {
		/* Not written on this replica: the copy the runner stores as it
		 * writes (deployment_log_chunks), empty when nothing is written
		 * yet (a queued deployment). */
		struct stored *s = sw_api_state_new(req, sizeof(*s));
		if (!s)
			return;
		s->req = req;
		memcpy(s->id, st->id, sizeof(s->id));
		stored_read(s, 0, sw_http_request_header(req, SW_STR("Range")) ? "0" : LOG_READ_ALL);
		return;
	}
	if (fd < 0 || fstat(fd, &sb) < 0) {
		sw_log_error("deployment log %s cannot be read: %s", st->id, strerror(errno));
		if (fd >= 0)
			close(fd);
		sw_api_internal_error(req);
		return;
	}
	uint64_t off, len;
	int status;
	if (!answer_range(req, (uint64_t)sb.st_size, &off, &len, &status)) {
		close(fd);
		return;
	}
	sw_http_respond_file(req, status, text, fd, off, len);
}

static void logs_get(struct sw_http_request *req)
{
	lookup(req, logs_found);
}

static void live_found(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct lookup *st = arg;
	struct sw_http_request *req = st->req;
	if (!sw_api_found(req, res, err))
		return;
	struct sw_deploy_live_source src = {
		.deployment_id = st->id,
		.data_dir = sw_http_config(req)->data_dir,
		.status = PQgetvalue(res, 0, SW_DB_DEPLOYMENT_STATUS),
		.log_bytes = strtoull(PQgetvalue(res, 0, SW_DB_DEPLOYMENT_LOG_BYTE_COUNT), NULL, 10),
		.error_message = PQgetisnull(res, 0, SW_DB_DEPLOYMENT_ERROR_MESSAGE)
					 ? NULL
					 : PQgetvalue(res, 0, SW_DB_DEPLOYMENT_ERROR_MESSAGE),
	};
	sw_deploy_live_start(req, &src);
}

static void live_get(struct sw_http_request *req)
{
	/* The ids this stream sends are byte offsets in canonical decimal:
	 * anything else (a sign, leading zeros, past int64) was never one. */
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("Last-Event-ID"));
	int64_t id;
	if (h && h->value.len && !sw_parse_i64_canonical(h->value, &id)) {
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, "Last-Event-ID", "must be an id this stream sent: a byte offset "
						     "in decimal, without a sign or leading zeros");
		sw_http_validation_error(req, &fe);
		return;
	}
	lookup(req, live_found);
}

/* ---- routes ---- */

static const int logs_errors[] = { 404, 416, 500, 503, 0 };
static const int live_errors[] = { 404, 422, 500, 503, 0 };
/* Both answer 200 with a body that is not the JSON envelope. */
#define LOG_ROUTE_DOC(errors, media) \
	.tag = "Deployments", .success_status = 200, .error_statuses = (errors), .media_type = (media)

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/deployments/:id/logs", SW_ACCESS_SESSION, logs_get, 0, 0,
	  { .summary = "The build log of a deployment",
	    .description =
		    "The deployment's whole build and deploy log as text/plain; charset=utf-8, read from "
		    "the log file and sent without copying it through the server's memory on the "
		    "replica whose runner wrote it; on another replica (several stewardd on one "
		    "database, each with its own data directory) from the copy the runner stores in "
		    "the database as it writes (about every second and at each phase's end), the same "
		    "bytes. While the deployment runs: what is written so far, whole lines (on "
		    "another replica, up to the last store). The log is capped at "
		    "DEPLOY_LOG_MAX_BYTES (default 16 MiB): a log that reached it ends with the line "
		    "\"[log cut: DEPLOY_LOG_MAX_BYTES reached]\". Every value of the application's "
		    "variables appears as ***. Lines are UTF-8 (an invalid byte from a build is "
		    "U+FFFD), each ending in \\n. A deployment with no log yet answers an empty body. "
		    "`Range: bytes=a-b`, `bytes=a-` or `bytes=-n` (one range) answers 206 with "
		    "Content-Range; a range starting past the end (however large the number) is 416 "
		    "RANGE_NOT_SATISFIABLE (with "
		    "`Content-Range: bytes */size`); several ranges, or any If-Range, are ignored and "
		    "the whole log is sent (200, `Accept-Ranges: bytes`). HEAD gives the headers "
		    "(Content-Length) alone." SW_API_DOC_SCOPED,
	    .also_status = 206,
	    LOG_ROUTE_DOC(logs_errors, "text/plain; charset=utf-8") } },
	{ SW_HTTP_GET, "/deployments/:id/live", SW_ACCESS_SESSION, live_get, 0, 0,
	  { .summary = "The live build log of a deployment (Server-Sent Events)",
	    .description =
		    "A `text/event-stream` (HTTP/1.1 chunked) of the deployment's log. Events:\n\n"
		    "* `log`: one or more whole lines of the log, each line its own `data:` field "
		    "(so the event's data is the lines joined by \\n, without the last \\n; a CR "
		    "inside a line also starts a new data line). `id` is the log's byte count after "
		    "those lines: the offset to resume from.\n"
		    "* `status`: `{\"status\": \"SUCCEEDED\" | \"FAILED\" | \"CANCELLED\", "
		    "\"errorMessage\": string | null}`, sent once the deployment has ended and every "
		    "line before it; the stream then ends (close the EventSource on it, or it "
		    "reconnects and gets the same end again).\n"
		    "* `: ping` comment lines every 15 s while nothing else is sent.\n\n"
		    "The stream first sends the log written so far (from the file), then lines as "
		    "they are written (shared by every reader), then the status event. A deployment "
		    "that has ended gets its whole log and the status event at once. "
		    "`Last-Event-ID: <id>` (EventSource sends it when it reconnects) resumes right "
		    "after that offset (an offset inside a line resumes at the next line); a value "
		    "that is not an id the stream sends (not canonical decimal: a sign, leading "
		    "zeros, past 2^63 - 1) is 422 on `Last-Event-ID`; an empty one starts over. A reader "
		    "served by a stewardd process other than the one running the deployment (several "
		    "replicas on one database) gets the same events, read every second while the "
		    "deployment runs from the file or, without it there, from the copy the runner "
		    "stores in the database. A reader more than 4 MiB of log behind the writer, "
		    "or that reads nothing for 30 s, loses the "
		    "stream (resume with Last-Event-ID); a stopping server ends streams cleanly. At "
		    "most 2000 live readers per deployment in one process: past it 503 "
		    "SERVICE_UNAVAILABLE with Retry-After." SW_API_DOC_SCOPED,
	    LOG_ROUTE_DOC(live_errors, "text/event-stream") } },
};

const struct sw_api_route_group sw_api_deployment_logs_group = { routes, SW_ARRAY_SIZE(routes), NULL };
