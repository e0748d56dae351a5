/* Deployments: create (multipart), list, read, cancel, rollback.
 *
 * Decisions (also in the OpenAPI document):
 * - POST /deployments takes multipart/form-data, the API's only non-JSON
 *   body (another media type: 415; a malformed body: 400
 *   INVALID_MULTIPART). Parts: applicationId (required, a UUID), ref
 *   (optional: a branch, a tag or a 40-hex commit sha; sw_valid_git_branch
 *   or 40 hex digits), archive (optional, a file: tar, tar.gz or zip by
 *   its first bytes, 1 byte to SW_DEPLOY_UPLOAD_MAX (100 MiB), 413 beyond).
 *   Any other part: 422 "is not a known field"; a text field sent as a
 *   file, or the other way round, is refused. An empty ref, or an archive
 *   part without a file name and without bytes (a form's blank inputs),
 *   counts as absent.
 * - What the request has decides the kind. With an archive: trigger
 *   UPLOAD (a ref with it: 422). Without: trigger MANUAL, a git deployment
 *   of ref, or of the git source's branch when ref is absent (ref is what
 *   was asked, requestedRef; gitRef and the commit are read from the
 *   clone). A git deployment needs a git source (409 GIT_SOURCE_MISSING);
 *   an application whose sourceKind is UPLOAD needs an archive (422 on
 *   archive).
 * - An application that is not the caller's organization's is 404, like
 *   one that does not exist.
 * - The archive is written to <data_dir>/uploads/<random uuid>.archive
 *   (0600, fsynced with its directory) on the worker pool before the
 *   transaction that creates the deployment, so no deployment ever names a
 *   missing file; when the deployment is not created the file is removed.
 * - The deployment (QUEUED) and its build job are one transaction. While
 *   another deployment of the application is in flight (BUILDING or
 *   DEPLOYING) a new one is QUEUED behind it, never refused: deployments
 *   of one application run one at a time, in order.
 * - Cancel: QUEUED (or between its build and its deploy step, with no job
 *   running) ends CANCELLED at once, 200 (its uploaded archive, if any, is
 *   removed); BUILDING or DEPLOYING with a job
 *   running is marked cancelRequested, 202: the runner stops the build or
 *   deploy at its next step (or at once when it is waiting on output),
 *   removes what it started and ends it CANCELLED; asking again answers 202
 *   again. An ended deployment: 409 DEPLOYMENT_FINISHED.
 * - Rollback of a SUCCEEDED deployment whose image is kept: 201 with a new
 *   deployment, trigger ROLLBACK, rollbackOf set, QUEUED for its deploy
 *   step on the lifecycle queue (no build), behind every deployment of the
 *   application asked for before it. Anything else: 409 NOT_ROLLBACK_TARGET.
 * - durationMs: finishedAt - startedAt in milliseconds; null until it has
 *   both (a deployment cancelled while QUEUED never started). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/auth/auth.h"
#include "steward/io/io.h"
#include "steward/base/log.h"
#include "steward/http/multipart.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_deployments.h"

#define RESOURCE_DOC SW_API_DOC_SCOPED
#define LIST_DOC SW_API_DOC_PAGE RESOURCE_DOC
#define T "Deployments"
#define SHA_LEN 40
#define PART_NAME_SHOWN 64 /* bytes of an unknown part's name in a field error */

static const int err_list[] = { 422, 503, 0 };
static const int err_create[] = { 400, 404, 409, 413, 415, 422, 500, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_cancel[] = { 404, 409, 503, 0 };
static const int err_rollback[] = { 404, 409, 503, 0 };

static const char *const statuses[] = { "QUEUED", "BUILDING", "DEPLOYING", "SUCCEEDED",
					"FAILED", "CANCELLED", NULL };
static const char *const triggers[] = { "MANUAL", "UPLOAD", "ROLLBACK", "GIT_PUSH", NULL };

static const struct sw_api_field deployment_filters[] = {
	{ "applicationId", SW_API_FIELD_ID, 0 },
	{ "status", SW_API_FIELD_ENUM, 0, NULL, 0, 0, statuses },
	{ "trigger", SW_API_FIELD_ENUM, 0, NULL, 0, 0, triggers },
};
static const struct sw_api_column deployment_columns[] = {
	{ "id", SW_DB_DEPLOYMENT_ID, SW_API_COL_TEXT },
	{ "applicationId", SW_DB_DEPLOYMENT_APPLICATION_ID, SW_API_COL_TEXT },
	{ "number", SW_DB_DEPLOYMENT_NUMBER, SW_API_COL_JSON },
	{ "status", SW_DB_DEPLOYMENT_STATUS, SW_API_COL_TEXT },
	{ "phase", SW_DB_DEPLOYMENT_PHASE, SW_API_COL_TEXT },
	{ "trigger", SW_DB_DEPLOYMENT_TRIGGER, SW_API_COL_TEXT },
	{ "requestedRef", SW_DB_DEPLOYMENT_REQUESTED_REF, SW_API_COL_NULLABLE },
	{ "gitRef", SW_DB_DEPLOYMENT_GIT_REF, SW_API_COL_NULLABLE },
	{ "commitSha", SW_DB_DEPLOYMENT_COMMIT_SHA, SW_API_COL_NULLABLE },
	{ "commitMessage", SW_DB_DEPLOYMENT_COMMIT_MESSAGE, SW_API_COL_NULLABLE },
	{ "commitAuthor", SW_DB_DEPLOYMENT_COMMIT_AUTHOR, SW_API_COL_NULLABLE },
	{ "imageTag", SW_DB_DEPLOYMENT_IMAGE_TAG, SW_API_COL_NULLABLE },
	{ "strategy", SW_DB_DEPLOYMENT_STRATEGY, SW_API_COL_NULLABLE },
	{ "logByteCount", SW_DB_DEPLOYMENT_LOG_BYTE_COUNT, SW_API_COL_JSON },
	{ "logTail", SW_DB_DEPLOYMENT_LOG_TAIL, SW_API_COL_TEXT },
	{ "errorMessage", SW_DB_DEPLOYMENT_ERROR_MESSAGE, SW_API_COL_NULLABLE },
	{ "rollbackOf", SW_DB_DEPLOYMENT_ROLLBACK_OF, SW_API_COL_NULLABLE },
	{ "cancelRequested", SW_DB_DEPLOYMENT_CANCEL_REQUESTED, SW_API_COL_BOOL },
	{ "createdBy", SW_DB_DEPLOYMENT_CREATED_BY, SW_API_COL_NULLABLE },
	{ "createdAt", SW_DB_DEPLOYMENT_CREATED_AT, SW_API_COL_TEXT },
	{ "startedAt", SW_DB_DEPLOYMENT_STARTED_AT, SW_API_COL_NULLABLE },
	{ "finishedAt", SW_DB_DEPLOYMENT_FINISHED_AT, SW_API_COL_NULLABLE },
	{ "updatedAt", SW_DB_DEPLOYMENT_UPDATED_AT, SW_API_COL_TEXT },
	{ "durationMs", SW_DB_DEPLOYMENT_DURATION_MS, SW_API_COL_JSON },
};
static const struct sw_api_object deployment_object = { deployment_columns,
							SW_ARRAY_SIZE(deployment_columns), 0 };
static const struct sw_api_resource deployment = {
	.type = "deployment",
	.shape = &deployment_object,
	.get = &sw_db_stmt_deployment_get,
	.list = &sw_db_stmt_deployments_list,
	.filters = deployment_filters,
	.nfilters = SW_ARRAY_SIZE(deployment_filters),
	.cursor_us_col = SW_DB_DEPLOYMENT_US,
	.cursor_id_col = SW_DB_DEPLOYMENT_ID,
};

static void deployments_list(struct sw_http_request *req) { sw_api_resource_list(req, &deployment); }
static void deployment_get(struct sw_http_request *req) { sw_api_resource_get(req, &deployment); }

/* ---- POST /deployments ---- */

struct create {
	struct sw_http_request *req;
	char application_id[37];
	const char *ref;          /* arena, or NULL */
	struct sw_str archive;    /* a view into the body; ptr NULL: none */
	const char *archive_path; /* arena, once written */
};

/* Writing the archive on the worker pool: malloc'd (the worker never
 * touches the arena), the body only read. */
struct upload {
	struct sw_worker_job job;
	struct create *c;
	const char *data;
	size_t len;
	char path[600];
	int err; /* -errno */
	const char *what; /* the failing step, for the log */
};

static bool is_hex_sha(struct sw_str s)
{
	if (s.len != SHA_LEN)
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (sw_hex_value((unsigned char)s.ptr[i]) < 0)
			return false;
	return true;
}

/* An archive by its first bytes: zip (local file header, or the end record
 * of an empty one), gzip (tar.gz), or a POSIX/GNU tar header ("ustar" at
 * offset 257). */
static bool is_archive(struct sw_str s)
{
	const unsigned char *p = (const unsigned char *)s.ptr;
	if (s.len >= 4 && p[0] == 'P' && p[1] == 'K' &&
	    ((p[2] == 3 && p[3] == 4) || (p[2] == 5 && p[3] == 6)))
		return true;
	if (s.len >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8)
		return true;
	return s.len >= 512 && memcmp(p + 257, "ustar", 5) == 0;
}

/* A part's name as a field-error key: printable ASCII, cut short. */
static const char *shown_name(struct sw_http_request *req, struct sw_str name)
{
	size_t n = SW_MIN(name.len, (size_t)PART_NAME_SHOWN);
	char *s = sw_arena_alloc(&req->arena, n + 1);
	if (!s)
		return "?";
	for (size_t i = 0; i < n; i++)
		s[i] = name.ptr[i] > 0x20 && name.ptr[i] < 0x7f ? name.ptr[i] : '?';
	s[n] = '\0';
	return n ? s : "?";
}

/* Reads the form into c. false when the request has been answered. */
static bool read_form(struct sw_http_request *req, struct create *c)
{
	static const char type[] = "multipart/form-data";
	const size_t tlen = sizeof(type) - 1;
	const struct sw_http_header *ct = sw_http_request_header(req, SW_STR("Content-Type"));
	if (!ct || ct->value.len < tlen || strncasecmp(ct->value.ptr, type, tlen) != 0 ||
	    (ct->value.len > tlen && ct->value.ptr[tlen] != ';' && ct->value.ptr[tlen] != ' ')) {
		sw_http_error(req, 415, "UNSUPPORTED_MEDIA_TYPE",
			      "The request body must be multipart/form-data.");
		return false;
	}
	struct sw_str boundary;
	if (sw_multipart_boundary(ct->value, &boundary) < 0) {
		sw_http_error(req, 400, "INVALID_MULTIPART",
			      "The Content-Type has no valid multipart boundary.");
		return false;
	}
	struct sw_multipart_part parts[SW_MULTIPART_MAX_PARTS];
	size_t n = 0;
	const char *why = NULL;
	int r = sw_multipart_parse(req->body, boundary, parts, SW_MULTIPART_MAX_PARTS, &n, &why);
	if (r == -E2BIG) {
		sw_http_error(req, 400, "INVALID_MULTIPART", "The form has too many parts.");
		return false;
	}
	if (r < 0) {
		char msg[200];
		snprintf(msg, sizeof(msg), "The multipart body is malformed: %s.",
			 why ? why : "it cannot be read");
		sw_http_error(req, 400, "INVALID_MULTIPART", msg);
		return false;
	}

	struct sw_multipart_part *app = NULL, *ref = NULL, *archive = NULL;
	struct sw_field_errors fe = { 0 };
	for (size_t i = 0; i < n; i++) {
		struct sw_multipart_part *p = &parts[i];
		if (sw_str_eq(p->name, SW_STR("applicationId")))
			app = p;
		else if (sw_str_eq(p->name, SW_STR("ref")))
			ref = p;
		else if (sw_str_eq(p->name, SW_STR("archive")))
			archive = p;
		else
			sw_field_error(&fe, shown_name(req, p->name), "is not a known field");
	}
	if (!app) {
		sw_field_error(&fe, "applicationId", "is required");
	} else if (app->filename.len) {
		sw_field_error(&fe, "applicationId", "must be a form field, not a file");
	} else if (!sw_is_uuid(app->data)) {
		sw_field_error(&fe, "applicationId", "must be an id (a UUID)");
	} else {
		memcpy(c->application_id, app->data.ptr, 36);
		c->application_id[36] = '\0';
	}
	if (archive && !archive->filename.len && !archive->data.len)
		archive = NULL; /* a blank file input */
	if (ref && ref->data.len == 0 && !ref->filename.len)
		ref = NULL; /* a blank text input */
	if (ref) {
		const char *msg = NULL;
		if (ref->filename.len) {
			sw_field_error(&fe, "ref", "must be a form field, not a file");
		} else if (archive) {
			sw_field_error(&fe, "ref", "cannot be combined with an archive");
		} else if (is_hex_sha(ref->data)) {
			char *sha = sw_arena_strndup(&req->arena, ref->data.ptr, ref->data.len);
			for (size_t i = 0; sha && i < SHA_LEN; i++)
				if (sha[i] >= 'A' && sha[i] <= 'F')
					sha[i] = (char)(sha[i] - 'A' + 'a');
			c->ref = sha;
		} else if (memchr(ref->data.ptr, '\0', ref->data.len) ||
			   !sw_valid_git_branch(ref->data, &msg)) {
			sw_field_error(&fe, "ref",
				       msg ? msg : "must be a branch, a tag or a 40-digit commit sha");
		} else {
			c->ref = sw_arena_strndup(&req->arena, ref->data.ptr, ref->data.len);
		}
	}
	if (archive) {
		if (archive->data.len > SW_DEPLOY_UPLOAD_MAX) {
			sw_buf_release(&fe.buf);
			sw_http_error(req, 413, "PAYLOAD_TOO_LARGE",
				      "The archive is larger than the 100 MiB an upload may be.");
			return false;
		}
		if (archive->data.len == 0)
			sw_field_error(&fe, "archive", "must not be empty");
		else if (!is_archive(archive->data))
			sw_field_error(&fe, "archive", "must be a tar, tar.gz or zip archive");
		else
			c->archive = archive->data;
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return false;
	}
	if ((ref && !c->ref) || !c->application_id[0]) {
		sw_api_internal_error(req); /* out of memory copying the ref */
		return false;
	}
	return true;
}

static void created(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct create *c = arg;
	if (err->code || PQntuples(res) != 1) {
		/* No deployment names the file: it goes. */
		if (c->archive_path && unlink(c->archive_path) < 0 && errno != ENOENT)
			sw_log_warn("uploads: cannot remove %s: %s", c->archive_path, strerror(errno));
		if (err->code)
			sw_api_resource_error(c->req, NULL, err);
		else
			sw_api_not_found(c->req);
		return;
	}
	sw_api_answer_row(c->req, 201, res, 0, sw_api_write_object, &deployment_object);
}

static void create_deployment(struct create *c)
{
	struct sw_http_request *req = c->req;
	const char *params[6] = { req->principal.organization_id, c->application_id,
				  c->archive_path ? "UPLOAD" : "MANUAL", c->ref, c->archive_path,
				  req->principal.user_id };
	sw_api_query_audited(req, &sw_db_stmt_deployment_create, params, 6, "deployment.created",
			     "deployment", NULL, NULL, created, c);
}

/* Worker thread: the archive into its file, durably. */
static void upload_run(struct sw_worker_job *job)
{
	struct upload *u = SW_CONTAINER_OF(job, struct upload, job);
	char dir[600];
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(u->path, '/') - u->path), u->path);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		u->err = -errno;
		u->what = "mkdir";
		return;
	}
	int fd = open(u->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		u->err = -errno;
		u->what = "open";
		return;
	}
	size_t off = 0;
	while (off < u->len) {
		ssize_t w = write(fd, u->data + off, u->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			u->err = w < 0 ? -errno : -EIO;
			u->what = "write";
			goto fail;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0) {
		u->err = -errno;
		u->what = "fsync";
		goto fail;
	}
	close(fd);
	/* The directory entry too, so that a crash cannot lose the name of a
	 * file a committed deployment points at. */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fsync(dfd) < 0) {
		u->err = -errno;
		u->what = "fsync of the directory";
		if (dfd >= 0)
			close(dfd);
		unlink(u->path);
		return;
	}
	close(dfd);
	return;
fail:
	close(fd);
	unlink(u->path);
}

static void upload_done(struct sw_worker_job *job)
{
	struct upload *u = SW_CONTAINER_OF(job, struct upload, job);
	struct create *c = u->c;
	int e = u->err;
	if (e) {
		sw_log_error("uploads: writing an archive failed at %s: %s rid=%.*s", u->what,
			     strerror(-e), (int)c->req->request_id_len, c->req->request_id);
		free(u);
		if (e == -ENOSPC || e == -EDQUOT)
			sw_http_error(c->req, 503, "SERVICE_UNAVAILABLE",
				      "The server has no room to store the archive.");
		else
			sw_api_internal_error(c->req);
		return;
	}
	c->archive_path = sw_arena_strndup(&c->req->arena, u->path, strlen(u->path));
	if (!c->archive_path) {
		unlink(u->path);
		free(u);
		sw_api_internal_error(c->req);
		return;
	}
	free(u);
	create_deployment(c);
}

static void source_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct create *c = arg;
	struct sw_http_request *req = c->req;
	if (!sw_api_found(req, res, err))
		return;
	bool upload_only = strcmp(PQgetvalue(res, 0, SW_DB_DEPLOYMENT_SOURCE_KIND), "UPLOAD") == 0;
	bool has_git = PQgetvalue(res, 0, SW_DB_DEPLOYMENT_SOURCE_HAS_GIT)[0] == 't';
	if (!c->archive.ptr && upload_only) {
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, "archive", "is required: the application deploys uploaded archives");
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!c->archive.ptr && !has_git) {
		sw_http_error(req, 409, "GIT_SOURCE_MISSING",
			      "The application has no git source: set one (PUT "
			      "/applications/:id/git-source) or upload an archive.");
		return;
	}
	if (!c->archive.ptr) {
		create_deployment(c);
		return;
	}
	struct upload *u = calloc(1, sizeof(*u));
	char id[37];
	if (!u || sw_random_uuid(id) < 0) {
		free(u);
		sw_api_internal_error(req);
		return;
	}
	u->c = c;
	u->data = c->archive.ptr;
	u->len = c->archive.len;
	int n = snprintf(u->path, sizeof(u->path), "%s/uploads/%s.archive",
			 sw_http_config(req)->data_dir, id);
	if (n < 0 || (size_t)n >= sizeof(u->path)) {
		free(u);
		sw_api_internal_error(req);
		return;
	}
	if (!sw_api_submit(req, &u->job, upload_run, upload_done))
		free(u);
}

static void deployments_create(struct sw_http_request *req)
{
	struct create *c = sw_api_state_new(req, sizeof(*c));
	if (!c || !read_form(req, c))
		return;
	const char *params[2] = { req->principal.organization_id, c->application_id };
	sw_api_query(req, &sw_db_stmt_deployment_source, params, 2, source_read, c);
}

/* ---- cancel and rollback ---- */

struct op {
	struct sw_http_request *req;
	bool cancel; /* else a rollback */
	char id[37];
};

static void acted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct op *o = arg;
	if (err->code) {
		sw_api_resource_error(o->req, NULL, err);
		return;
	}
	if (!sw_api_found(o->req, res, err))
		return;
	int status = 201;
	if (o->cancel) {
		bool now = PQgetvalue(res, 0, SW_DB_DEPLOYMENT_CANCELLED)[0] == 't';
		status = now ? 200 : 202;
		/* Never to be unpacked: the upload goes. (A runner that was
		 * asked to stop removes what it has itself.) */
		const char *archive = sw_api_nullable(res, 0, SW_DB_DEPLOYMENT_ARCHIVE_PATH);
		if (now && archive && unlink(archive) < 0 && errno != ENOENT)
			sw_log_warn("uploads: cannot remove %s: %s", archive, strerror(errno));
	}
	sw_api_answer_row(o->req, status, res, 0, sw_api_write_object, &deployment_object);
}

static void act(struct sw_http_request *req, bool cancel)
{
	struct op *o = sw_api_state_new(req, sizeof(*o));
	if (!o || !sw_api_path_ids(req, NULL, o->id))
		return;
	o->cancel = cancel;
	const char *params[3] = { req->principal.organization_id, o->id, req->principal.user_id };
	if (cancel) /* the action, cancelled or cancel_requested, is the statement's */
		sw_api_query_audited(req, &sw_db_stmt_deployment_cancel, params, 2, NULL, "deployment",
				     NULL, NULL, acted, o);
	else
		sw_api_query_audited(req, &sw_db_stmt_deployment_rollback, params, 3,
				     "deployment.created", "deployment", NULL, NULL, acted, o);
}

static void deployment_cancel(struct sw_http_request *req) { act(req, true); }
static void deployment_rollback(struct sw_http_request *req) { act(req, false); }

/* ---- routes ---- */

#define CREATE_DOC                                                                             \
	"multipart/form-data, the API's only non-JSON body (another media type: 415; a "          \
	"malformed one: 400 INVALID_MULTIPART). Parts: applicationId (required), ref (optional: " \
	"a branch, a tag or a 40-hex commit sha), archive (optional file: tar, tar.gz or zip, at " \
	"most 100 MiB, else 413). With an archive: trigger UPLOAD (ref with it: 422). Without: "  \
	"trigger MANUAL, a git deployment of ref or else of the git source's branch; it needs a "  \
	"git source (409 GIT_SOURCE_MISSING), and an application whose sourceKind is UPLOAD "      \
	"needs an archive (422). Any other part: 422 \"is not a known field\"; an empty ref or an " \
	"empty file input counts as absent. The archive is stored (fsynced) before the "          \
	"deployment is created; the deployment (QUEUED) and its build job are created in one "    \
	"transaction. While another deployment of the application is in flight the new one waits " \
	"QUEUED behind it (never 409): an application's deployments run one at a time, in order. " \
	"An application of another organization is not found (404)."
#define CANCEL_DOC                                                                             \
	"QUEUED (or between its build and its deploy step): CANCELLED at once, 200. BUILDING or "  \
	"DEPLOYING: cancelRequested is set and 202 answered; the runner stops the build or "       \
	"deploy, removes what it started (the serving version is untouched) and the deployment "  \
	"ends CANCELLED; asking again answers 202. Ended (SUCCEEDED, FAILED, CANCELLED): 409 "     \
	"DEPLOYMENT_FINISHED." RESOURCE_DOC
#define ROLLBACK_DOC                                                                           \
	"Re-applies the image of a SUCCEEDED deployment whose image is still kept "                 \
	"(imageRetentionCount), without a rebuild: a new deployment with trigger ROLLBACK and "    \
	"rollbackOf, queued for its deploy step on the lifecycle queue; the history keeps both. "  \
	"It runs RECREATE (a rollback never runs BLUE_GREEN). Any other deployment: 409 "          \
	"NOT_ROLLBACK_TARGET. Like any other deployment it runs after every deployment of the "   \
	"application asked for before it (number order, whatever their trigger)." RESOURCE_DOC

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/deployments", SW_ACCESS_SESSION, deployments_list, 0, 0,
	  { "List deployments", "Filters: ?applicationId=, ?status=, ?trigger= (exact)." LIST_DOC, T,
	    NULL, "DeploymentList", 200, err_list, "limit cursor order applicationId status trigger" } },
	{ SW_HTTP_POST, "/deployments", SW_ACCESS_SESSION, deployments_create,
	  SW_DEPLOY_UPLOAD_BODY_MAX, 0,
	  { "Deploy an application", CREATE_DOC, T, "DeploymentCreate", "Deployment", 201, err_create,
	    NULL, 0, NULL, "multipart/form-data" } },
	{ SW_HTTP_GET, "/deployments/:id", SW_ACCESS_SESSION, deployment_get, 0, 0,
	  { "Get a deployment", "Every field; durationMs is finishedAt - startedAt in milliseconds, "
	    "null until both are set." RESOURCE_DOC, T, NULL, "Deployment", 200, err_get } },
	{ SW_HTTP_POST, "/deployments/:id/cancel", SW_ACCESS_SESSION, deployment_cancel, 0, 0,
	  { "Cancel a deployment", CANCEL_DOC, T, NULL, "Deployment", 200, err_cancel, NULL, 202 } },
	{ SW_HTTP_POST, "/deployments/:id/rollback", SW_ACCESS_SESSION, deployment_rollback, 0, 0,
	  { "Roll back to a deployment", ROLLBACK_DOC, T, NULL, "Deployment", 201, err_rollback } },
};

#define ID_SCHEMA "{\"type\":\"string\",\"format\":\"uuid\"}"
#define NULL_ID_SCHEMA "{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"}"
#define TIME_SCHEMA "{\"type\":\"string\",\"format\":\"date-time\"}"
#define NULL_TIME_SCHEMA "{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}"
#define NULL_TEXT_SCHEMA "{\"type\":[\"string\",\"null\"]}"

static const char schemas[] = "{"
	"\"Deployment\":{\"type\":\"object\",\"description\":\"A numbered deployment of an "
	"application. status: QUEUED -> BUILDING -> DEPLOYING -> SUCCEEDED, or FAILED "
	"(errorMessage) from any in-flight state, or CANCELLED. phase: where within BUILDING and "
	"DEPLOYING it is (or was when it failed or was cancelled); DONE once it succeeded, and "
	"only then. A deployment still in flight when its worker died becomes FAILED with "
	"errorMessage \\\"the worker restarted while the deployment was <phase>\\\", unless it was "
	"FINISHING: it had passed its health gate and was routed, so it is SUCCEEDED and a "
	"recovery finishes its clean-up (its log says so). One interrupted by a graceful stop of "
	"its worker goes back to QUEUED and runs again. Deployments of one application run one "
	"at a time in number order. logByteCount and logTail are kept current while it runs.\","
	"\"required\":[\"id\",\"applicationId\",\"number\",\"status\",\"phase\",\"trigger\","
	"\"requestedRef\",\"gitRef\",\"commitSha\",\"commitMessage\",\"commitAuthor\",\"imageTag\","
	"\"strategy\",\"logByteCount\",\"logTail\",\"errorMessage\",\"rollbackOf\",\"cancelRequested\","
	"\"createdBy\",\"createdAt\",\"startedAt\",\"finishedAt\",\"updatedAt\",\"durationMs\"],"
	"\"properties\":{"
	"\"id\":" ID_SCHEMA ",\"applicationId\":" ID_SCHEMA ","
	"\"number\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"Sequential per application.\"},"
	"\"status\":{\"type\":\"string\",\"enum\":[\"QUEUED\",\"BUILDING\",\"DEPLOYING\",\"SUCCEEDED\","
	"\"FAILED\",\"CANCELLED\"]},"
	"\"phase\":{\"type\":\"string\",\"enum\":[\"QUEUED\",\"CLONING\",\"UNPACKING\",\"BUILDING\","
	"\"STARTING\",\"HEALTH_GATE\",\"SWITCHING\",\"FINISHING\",\"DONE\"]},"
	"\"trigger\":{\"type\":\"string\",\"enum\":[\"MANUAL\",\"UPLOAD\",\"ROLLBACK\",\"GIT_PUSH\"]},"
	"\"requestedRef\":{\"type\":[\"string\",\"null\"],\"description\":\"The ref asked for; null: "
	"the git source's branch, or an upload or a rollback.\"},"
	"\"gitRef\":{\"type\":[\"string\",\"null\"],\"description\":\"Read from the clone.\"},"
	"\"commitSha\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^[0-9a-f]{40}$\","
	"\"description\":\"Read from the clone.\"},"
	"\"commitMessage\":" NULL_TEXT_SCHEMA ",\"commitAuthor\":" NULL_TEXT_SCHEMA ","
	"\"imageTag\":{\"type\":[\"string\",\"null\"],\"description\":\"The image a rollback "
	"re-applies.\"},"
	"\"strategy\":{\"type\":[\"string\",\"null\"],\"enum\":[\"RECREATE\",\"BLUE_GREEN\",null],"
	"\"description\":\"As run (a BLUE_GREEN request may fall back to RECREATE).\"},"
	"\"logByteCount\":{\"type\":\"integer\",\"minimum\":0},"
	"\"logTail\":{\"type\":\"string\",\"maxLength\":4096,\"description\":\"The last 4 KB of the "
	"build log.\"},"
	"\"errorMessage\":{\"type\":[\"string\",\"null\"],\"description\":\"Why it failed.\"},"
	"\"rollbackOf\":" NULL_ID_SCHEMA ",\"cancelRequested\":{\"type\":\"boolean\"},"
	"\"createdBy\":" NULL_ID_SCHEMA ",\"createdAt\":" TIME_SCHEMA ","
	"\"startedAt\":" NULL_TIME_SCHEMA ",\"finishedAt\":" NULL_TIME_SCHEMA ","
	"\"updatedAt\":" TIME_SCHEMA ","
	"\"durationMs\":{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"description\":\"finishedAt - "
	"startedAt in milliseconds; null until both are set.\"}}},"
	"\"DeploymentList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Deployment\"}},"
	"\"DeploymentCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"description\":\"The parts of the multipart/form-data body.\","
	"\"required\":[\"applicationId\"],\"properties\":{"
	"\"applicationId\":" ID_SCHEMA ","
	"\"ref\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"A branch, a "
	"tag or a 40-hex commit sha; not with archive.\"},"
	"\"archive\":{\"type\":\"string\",\"contentMediaType\":\"application/octet-stream\","
	"\"description\":\"A tar, tar.gz or zip file of at most 100 MiB.\"}}}"
	"}";

const struct sw_api_route_group sw_api_deployments_group = { routes, SW_ARRAY_SIZE(routes), schemas };
