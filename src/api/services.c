/* Managed services: PostgreSQL, MySQL and Redis run for the organization on
 * one of its servers, with generated credentials and backups.
 *
 * Credentials are generated at creation: the database and user name the service's name with '-' written '_' (at most 32
 * characters, MySQL's limit for a user name; Redis: user "default",
 * database "0"), and the password 32 random bytes as base64url. The
 * service listens on 127.0.0.1 of its server on a port the database
 * allocates per server at creation (20000-29999, unique on the server,
 * kept for the service's life: migration 0020), where an application on
 * that server reaches it (host networking). They are
 * one JSON object sealed with AES-256-GCM bound to "service:<id>" (the id
 * is chosen here before the insert for that reason) and stored only
 * sealed. GET /services/:id/connection is the only answer that carries them
 * (spec, secret disclosure rule 4), and the statement that reads them
 * writes the audit record "service.connection.viewed" (without them) in
 * the same transaction, so no disclosure goes unrecorded. Any member of
 * the organization may call it (Session access, as the spec's route table
 * has it): whoever can deploy an application that uses the database can
 * read its credentials through that application anyway.
 *
 * Decisions (also in the OpenAPI document):
 * - name (a resource name, unique in the organization: 409
 *   SERVICE_EXISTS), kind and serverId are fixed at creation: the
 *   credentials, the container and its data volume depend on them.
 *   description, version and environmentId can change.
 * - version: one of the kind's (migration 0010, table service_versions):
 *   POSTGRESQL 13, 14, 15, 16, 17 (default 17); MYSQL 8.0, 8.4 (default
 *   8.4); REDIS 6, 7 (default 7). Another is 422 on version.
 * - environmentId is required and must be the organization's (else 422);
 *   the project is the environment's. serverId defaults to the local
 *   server and must be the organization's (else 422).
 * - status CREATED, RUNNING, STOPPED: the runners move it; start, stop and
 *   restart queue lifecycle jobs (202 with the job). DELETE removes the
 *   record, cancels the service's queued jobs and queues a
 *   "service.delete" job naming what the runner removes on the server.
 * - Backups: POST /services/:id/backups asks for one now (a backup row
 *   QUEUED and a lifecycle job "service.backup" in one transaction; while
 *   one is queued, asking again answers it). The schedule is
 *   GET/PUT /services/:id/backups/schedule: enabled, frequency HOURLY
 *   (minute 0 of every hour), DAILY (at hourUtc) or WEEKLY (weekday at
 *   hourUtc), retentionCount 1..100 (default 7): the newest that many
 *   successful backups are kept (older rows and files are removed after
 *   each successful backup). Off by default. A due time gives one backup
 *   however many replicas run (migration 0020).
 * - A backup is a file on the service's server (src/deploy/services.c);
 *   GET .../backups/:backupId/download sends it, POST .../restore queues
 *   its restore with the audit record in the same transaction. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/deploy/service_credentials.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_services.h"

#define RESOURCE_DOC SW_API_DOC_SCOPED
#define PAGE_DOC SW_API_DOC_PAGE RESOURCE_DOC

/* MySQL's longest user name; PostgreSQL allows 63. */
#define SERVICE_USERNAME_MAX 32
/* Where a service listens on its server: an application on that server
 * reaches it there (host networking). */
#define SERVICE_HOST "127.0.0.1"
/* The sealed JSON object: three short members (the password is 43). */
#define SERVICE_CREDENTIALS_MAX 512

static const int err_list[] = { 404, 422, 503, 0 };
static const int err_create[] = { 400, 409, 413, 415, 422, 500, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_update[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_job[] = { 404, 503, 0 };
static const int err_connection[] = { 404, 500, 503, 0 };
static const int err_put[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_download[] = { 404, 409, 410, 500, 503, 0 };
static const int err_restore[] = { 404, 409, 503, 0 };

/* ---- kinds ---- */

struct kind {
	const char *name;   /* the API's */
	const char *scheme; /* of the connection URL */
	const char *ext;    /* of a backup's file */
	bool fixed_user;    /* Redis: user "default", database "0" */
};
static const struct kind kinds[] = {
	{ "POSTGRESQL", "postgresql", "pgdump", false },
	{ "MYSQL", "mysql", "sql", false },
	{ "REDIS", "redis", "rdb", true },
};
static const char *const kind_names[] = { "POSTGRESQL", "MYSQL", "REDIS", NULL };

static const struct kind *kind_of(const char *name)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(kinds); i++)
		if (strcmp(kinds[i].name, name) == 0)
			return &kinds[i];
	return NULL;
}

/* A version's form; whether the kind has it is the database's to say. */
static bool version_format(struct sw_str s, const char **ret_msg)
{
	bool ok = s.len >= 1 && s.len <= 8 && s.ptr[0] >= '0' && s.ptr[0] <= '9' &&
		  s.ptr[s.len - 1] != '.';
	for (size_t i = 0; i < s.len && ok; i++)
		ok = (s.ptr[i] >= '0' && s.ptr[i] <= '9') || s.ptr[i] == '.';
	if (!ok)
		*ret_msg = "must be a version number such as 16 or 8.4";
	return ok;
}

/* A database or user name made from a service name: [a-z][a-z0-9_]{0,31}. */
static bool username_ok(const char *s)
{
	size_t n = strlen(s);
	bool ok = n >= 1 && n <= SERVICE_USERNAME_MAX && s[0] >= 'a' && s[0] <= 'z';
	for (size_t i = 0; i < n && ok; i++)
		ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
	return ok;
}

/* ---- the resource ---- */

static const char *const statuses[] = { "CREATED", "RUNNING", "STOPPED", NULL };

/* Field order is the statements' (statements_services.h). */
enum { F_NAME, F_DESCRIPTION, F_KIND, F_VERSION, F_ENVIRONMENT, F_SERVER };
static const struct sw_api_field service_fields[] = {
	[F_NAME] = { "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED | SW_API_FIELD_CREATE_ONLY,
		     sw_valid_resource_name },
	[F_DESCRIPTION] = { "description", SW_API_FIELD_TEXT, 0, NULL, 0, SW_DESCRIPTION_MAX_LEN },
	[F_KIND] = { "kind", SW_API_FIELD_ENUM, SW_API_FIELD_REQUIRED | SW_API_FIELD_CREATE_ONLY, NULL,
		     0, 0, kind_names },
	[F_VERSION] = { "version", SW_API_FIELD_STRING, 0, version_format },
	[F_ENVIRONMENT] = { "environmentId", SW_API_FIELD_ID, SW_API_FIELD_REQUIRED },
	[F_SERVER] = { "serverId", SW_API_FIELD_ID, SW_API_FIELD_CREATE_ONLY | SW_API_FIELD_NULLABLE },
};
static const struct sw_api_field service_filters[] = {
	{ "kind", SW_API_FIELD_ENUM, 0, NULL, 0, 0, kind_names },
	{ "serverId", SW_API_FIELD_ID },
	{ "projectId", SW_API_FIELD_ID },
	{ "environmentId", SW_API_FIELD_ID },
	{ "status", SW_API_FIELD_ENUM, 0, NULL, 0, 0, statuses },
	{ "name", SW_API_FIELD_STRING, 0, sw_valid_resource_name },
};
static const struct sw_api_column service_columns[] = {
	{ "id", SW_DB_SERVICE_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_SERVICE_NAME, SW_API_COL_TEXT },
	{ "description", SW_DB_SERVICE_DESCRIPTION, SW_API_COL_TEXT },
	{ "kind", SW_DB_SERVICE_KIND, SW_API_COL_TEXT },
	{ "version", SW_DB_SERVICE_VERSION, SW_API_COL_TEXT },
	{ "status", SW_DB_SERVICE_STATUS, SW_API_COL_TEXT },
	{ "projectId", SW_DB_SERVICE_PROJECT_ID, SW_API_COL_TEXT },
	{ "environmentId", SW_DB_SERVICE_ENVIRONMENT_ID, SW_API_COL_TEXT },
	{ "serverId", SW_DB_SERVICE_SERVER_ID, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_SERVICE_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_SERVICE_UPDATED_AT, SW_API_COL_TEXT },
	{ "port", SW_DB_SERVICE_PORT, SW_API_COL_JSON },
};
static const struct sw_api_object service_object = { service_columns, SW_ARRAY_SIZE(service_columns), 0 };
static const struct sw_api_resource service = {
	.type = "service",
	.fields = service_fields,
	.nfields = SW_ARRAY_SIZE(service_fields),
	.shape = &service_object,
	.create = &sw_db_stmt_service_create,
	.get = &sw_db_stmt_service_get,
	.update = &sw_db_stmt_service_update,
	.remove = &sw_db_stmt_service_remove,
	.list = &sw_db_stmt_services_list,
	.filters = service_filters,
	.nfilters = SW_ARRAY_SIZE(service_filters),
	.cursor_us_col = SW_DB_SERVICE_US,
	.cursor_id_col = SW_DB_SERVICE_ID,
	.conflict_code = "SERVICE_EXISTS",
	.conflict_message = "The organization already has a service of that name.",
};

static void services_list(struct sw_http_request *req) { sw_api_resource_list(req, &service); }
static void service_get(struct sw_http_request *req) { sw_api_resource_get(req, &service); }
static void service_update(struct sw_http_request *req) { sw_api_resource_update(req, &service); }
static void service_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &service); }

static void service_start(struct sw_http_request *req)
{
	sw_api_job_enqueue(req, &sw_db_stmt_service_job, "lifecycle", "service.start");
}
static void service_stop(struct sw_http_request *req)
{
	sw_api_job_enqueue(req, &sw_db_stmt_service_job, "lifecycle", "service.stop");
}
static void service_restart(struct sw_http_request *req)
{
	sw_api_job_enqueue(req, &sw_db_stmt_service_job, "lifecycle", "service.restart");
}

/* ---- POST /services ---- */

/* Generates the credentials of a new service (id, name, kind) and seals
 * them into the arena: the sealed text, or NULL (answered 500). */
static const char *credentials_sealed(struct sw_http_request *req, const char *id, const char *name,
				      const struct kind *k)
{
	char user[SERVICE_USERNAME_MAX + 1], password[SW_BASE64URL_LEN(SW_TOKEN_RANDOM_BYTES) + 1];
	char plain[SERVICE_CREDENTIALS_MAX], aad[SW_SEAL_AAD_MAX];
	char *sealed = NULL;
	snprintf(user, sizeof(user), "%s", k->fixed_user ? "default" : name);
	for (char *c = user; *c; c++)
		if (*c == '-')
			*c = '_';
	int n = -1;
	if (!SW_NEVER(!username_ok(user)) &&
	    sw_random_token(password, sizeof(password), SW_TOKEN_RANDOM_BYTES) == 0)
		/* Every value is [A-Za-z0-9_-]: nothing to escape. Host and port
		 * are not secrets: the connection answer takes them from the row. */
		n = snprintf(plain, sizeof(plain),
			     "{\"database\":\"%s\",\"username\":\"%s\",\"password\":\"%s\"}",
			     k->fixed_user ? "0" : user, user, password);
	sw_seal_aad_service(aad, id);
	if (n > 0 && (size_t)n < sizeof(plain)) {
		size_t cap = sw_seal_size((size_t)n);
		sealed = sw_arena_alloc(&req->arena, cap);
		if (sealed && sw_seal(plain, (size_t)n, aad, sealed, cap) < 0)
			sealed = NULL;
	}
	OPENSSL_cleanse(password, sizeof(password));
	OPENSSL_cleanse(plain, sizeof(plain));
	if (!sealed)
		sw_http_error(req, 500, "INTERNAL_ERROR", "The service's credentials could not be made.");
	return sealed;
}

/* A statement's one row answered with status, as written by w (ctx), or
 * the statement's error (r's), or 404. */
struct row_op {
	struct sw_http_request *req;
	const struct sw_api_resource *r;
	int status;
	sw_api_row_writer w;
	const void *ctx;
	const char *action; /* the audit record's, or NULL */
	int job_col;	    /* the column of the job a 202 queued (Location), or -1 */
	char target_id[37];
};

static void row_answered(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct row_op *op = arg;
	struct sw_http_request *req = op->req;
	if (err->code) {
		sw_api_resource_error(req, op->r, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sw_api_not_found(req);
		return;
	}
	if (op->job_col >= 0 && !PQgetisnull(res, 0, op->job_col) &&
	    sw_api_job_location(req, PQgetvalue(res, 0, op->job_col)) < 0)
		return;
	sw_api_answer_row(req, op->status, res, 0, op->w, op->ctx);
}

/* Runs stmt for op: with its audit record (op->action about the service
 * op->target_id; the metadata is the statement's audit shape) when op has
 * an action. */
static void row_op_query(struct row_op *op, const struct sw_db_stmt *stmt, const char *const *params,
			 int n)
{
	if (op->action)
		sw_api_query_audited(op->req, stmt, params, n, op->action, "service", op->target_id,
				     NULL, row_answered, op);
	else
		sw_api_query(op->req, stmt, params, n, row_answered, op);
}

/* A row_op for the service of the request's path (the generated id for a
 * create: target_id is then set by the caller), written as an object of
 * shape. NULL when answered (404, 500). */
static struct row_op *row_op_new(struct sw_http_request *req, const struct sw_api_resource *r,
				 int status, const struct sw_api_object *shape)
{
	struct row_op *op = sw_api_state_new(req, sizeof(*op));
	if (!op || !sw_api_path_ids(req, req->params.count ? op->target_id : NULL, NULL))
		return NULL;
	op->r = r;
	op->status = status;
	op->w = sw_api_write_object;
	op->ctx = shape;
	op->job_col = -1;
	return op;
}

static void services_create(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	const char *params[3 + SW_ARRAY_SIZE(service_fields) + 2];
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	bool ok = sw_api_fields_read(req, body, service_fields, SW_ARRAY_SIZE(service_fields), true,
				     params + 3, NULL, &fe);
	json_decref(body);
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct row_op *op = row_op_new(req, &service, 201, &service_object);
	if (!op)
		return;
	if (sw_random_uuid(op->target_id) < 0) {
		sw_api_internal_error(req);
		return;
	}
	op->action = "service.created";
	const char *id = op->target_id;
	const char *sealed = credentials_sealed(req, id, params[3 + F_NAME],
						kind_of(params[3 + F_KIND]));
	if (!sealed)
		return;
	params[0] = req->principal.organization_id;
	params[1] = NULL;
	params[2] = req->principal.user_id;
	params[3 + SW_ARRAY_SIZE(service_fields)] = id;
	params[4 + SW_ARRAY_SIZE(service_fields)] = sealed;
	row_op_query(op, &sw_db_stmt_service_create, params, (int)SW_ARRAY_SIZE(params));
}

/* ---- GET /services/:id/connection ---- */

struct connection {
	struct sw_http_request *req;
	char id[37];
};

/* Answers 200 with the credentials and their URL, and wipes every copy
 * this function made. */
static void answer_credentials(struct sw_http_request *req, const struct kind *k,
			       const struct sw_service_credentials *c)
{
	struct sw_buf buf = { 0 }, url = { 0 };
	struct sw_json j;
	if (sw_buf_reserve(&buf, 1024) < 0 || sw_buf_reserve(&url, 512) < 0 ||
	    sw_buf_appendf(&url, "%s://%.*s:%.*s@" SERVICE_HOST ":%lld/%.*s", k->scheme,
			   (int)c->username.len, c->username.ptr, (int)c->password.len, c->password.ptr,
			   c->port, (int)c->database.len, c->database.ptr) < 0) {
		sw_api_internal_error(req);
		goto out;
	}
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	sw_json_key(&j, "host");
	sw_json_string(&j, SW_STR(SERVICE_HOST));
	sw_json_key(&j, "port");
	sw_json_int(&j, c->port);
	sw_json_key(&j, "database");
	sw_json_string(&j, c->database);
	sw_json_key(&j, "username");
	sw_json_string(&j, c->username);
	sw_json_key(&j, "password");
	sw_json_string(&j, c->password);
	sw_json_key(&j, "url");
	sw_json_string(&j, sw_str_from(url.data, url.len));
	sw_json_object_end(&j);
	sw_json_object_end(&j);
	/* Reserved room: nothing was copied by growing. */
	if (sw_json_finish(&j) < 0)
		sw_api_internal_error(req);
	else
		sw_http_respond(req, 200, "application/json", sw_str_from(buf.data, buf.len));
out:
	if (buf.data)
		OPENSSL_cleanse(buf.data, buf.cap);
	if (url.data)
		OPENSSL_cleanse(url.data, url.cap);
	sw_buf_release(&buf);
	sw_buf_release(&url);
}

static void connection_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct connection *cn = arg;
	struct sw_http_request *req = cn->req;
	if (!sw_api_found(req, res, err))
		return;
	char plain[SERVICE_CREDENTIALS_MAX], aad[SW_SEAL_AAD_MAX];
	size_t n = 0;
	struct sw_service_credentials c;
	const struct kind *k = kind_of(PQgetvalue(res, 0, SW_DB_SERVICE_CONNECTION_KIND));
	sw_seal_aad_service(aad, PQgetvalue(res, 0, SW_DB_SERVICE_CONNECTION_ID));
	int r = sw_unseal(PQgetvalue(res, 0, SW_DB_SERVICE_CONNECTION_SEALED), aad, plain,
			  sizeof(plain), &n);
	bool parsed = r == 0 && sw_service_credentials_parse(plain, n, &c) == 0;
	OPENSSL_cleanse(plain, sizeof(plain));
	if (parsed) /* where it listens: the service's row, not a secret */
		c.port = atoll(PQgetvalue(res, 0, SW_DB_SERVICE_CONNECTION_PORT));
	if (k && parsed) {
		answer_credentials(req, k, &c);
	} else {
		sw_log_error("service %s: credentials could not be opened (%d)", cn->id, r);
		sw_http_error(req, 500, "INTERNAL_ERROR", "The service's credentials could not be opened.");
	}
	if (parsed)
		sw_service_credentials_wipe(&c);
}

static void service_connection(struct sw_http_request *req)
{
	struct connection *cn = sw_api_state_new(req, sizeof(*cn));
	if (!cn || !sw_api_path_ids(req, NULL, cn->id))
		return;
	const char *params[4] = { req->principal.organization_id, cn->id, req->principal.user_id,
				  sw_http_peer_address(req) };
	sw_api_query(req, &sw_db_stmt_service_connection, params, 4, connection_read, cn);
}

/* ---- backups ---- */

static const char *const backup_statuses[] = { "QUEUED", "RUNNING", "SUCCEEDED", "FAILED", NULL };
static const struct sw_api_field backup_filters[] = {
	{ "status", SW_API_FIELD_ENUM, 0, NULL, 0, 0, backup_statuses },
};
static const struct sw_api_column backup_columns[] = {
	{ "id", SW_DB_SERVICE_BACKUP_ID, SW_API_COL_TEXT },
	{ "serviceId", SW_DB_SERVICE_BACKUP_SERVICE_ID, SW_API_COL_TEXT },
	{ "status", SW_DB_SERVICE_BACKUP_STATUS, SW_API_COL_TEXT },
	{ "sizeBytes", SW_DB_SERVICE_BACKUP_SIZE, SW_API_COL_JSON },
	{ "errorMessage", SW_DB_SERVICE_BACKUP_ERROR, SW_API_COL_NULLABLE },
	{ "jobId", SW_DB_SERVICE_BACKUP_JOB_ID, SW_API_COL_NULLABLE },
	{ "startedAt", SW_DB_SERVICE_BACKUP_STARTED_AT, SW_API_COL_NULLABLE },
	{ "finishedAt", SW_DB_SERVICE_BACKUP_FINISHED_AT, SW_API_COL_NULLABLE },
	{ "createdAt", SW_DB_SERVICE_BACKUP_CREATED_AT, SW_API_COL_TEXT },
	{ "sha256", SW_DB_SERVICE_BACKUP_SHA256, SW_API_COL_NULLABLE },
	{ "scheduledFor", SW_DB_SERVICE_BACKUP_SCHEDULED_FOR, SW_API_COL_NULLABLE },
};
static const struct sw_api_object backup_object = { backup_columns, SW_ARRAY_SIZE(backup_columns), 0 };
static const struct sw_api_resource backup = {
	.type = "service_backup",
	.shape = &backup_object,
	.list = &sw_db_stmt_service_backups_list,
	.parent = &sw_db_stmt_service_exists,
	.filters = backup_filters,
	.nfilters = SW_ARRAY_SIZE(backup_filters),
	.cursor_us_col = SW_DB_SERVICE_BACKUP_US,
	.cursor_id_col = SW_DB_SERVICE_BACKUP_ID,
};

static void backups_list(struct sw_http_request *req) { sw_api_resource_list(req, &backup); }

static void backups_request(struct sw_http_request *req)
{
	struct row_op *op = row_op_new(req, &backup, 202, &backup_object);
	if (!op)
		return;
	op->action = "service.backup.requested";
	op->job_col = SW_DB_SERVICE_BACKUP_JOB_ID;
	const char *params[3] = { req->principal.organization_id, op->target_id,
				  req->principal.user_id };
	row_op_query(op, &sw_db_stmt_service_backup_request, params, 3);
}

/* ---- a backup's file and its restore ---- */

struct backup_req {
	struct sw_http_request *req;
	char service[37], backup[37];
};

static struct backup_req *backup_req_new(struct sw_http_request *req)
{
	struct backup_req *b = sw_api_state_new(req, sizeof(*b));
	if (!b || !sw_api_path_ids(req, b->service, b->backup))
		return NULL;
	b->req = req;
	return b;
}

static void backup_file_found(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct backup_req *b = arg;
	struct sw_http_request *req = b->req;
	if (!sw_api_found(req, res, err))
		return;
	if (strcmp(PQgetvalue(res, 0, SW_DB_SERVICE_BACKUP_FILE_STATUS), "SUCCEEDED") != 0) {
		sw_http_error(req, 409, "BACKUP_NOT_READY", "Only a backup that succeeded has a file.");
		return;
	}
	const char *path = PQgetvalue(res, 0, SW_DB_SERVICE_BACKUP_FILE_PATH);
	const struct kind *k = kind_of(PQgetvalue(res, 0, SW_DB_SERVICE_BACKUP_FILE_KIND));
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (e == ENOENT) {
			sw_http_error(req, 410, "BACKUP_FILE_MISSING", "The backup's file is no longer on "
				      "the service's server.");
			return;
		}
		sw_log_error("backup %s: its file cannot be read: %s", b->backup, strerror(e));
		sw_api_internal_error(req);
		return;
	}
	char disposition[128], etag[80];
	snprintf(disposition, sizeof(disposition), "attachment; filename=\"%s.%s\"", b->backup,
		 k ? k->ext : "dump");
	snprintf(etag, sizeof(etag), "\"%s\"", PQgetvalue(res, 0, SW_DB_SERVICE_BACKUP_FILE_SHA256));
	sw_http_add_header(req, "Content-Disposition", sw_str_cstr(disposition));
	sw_http_add_header(req, "ETag", sw_str_cstr(etag));
	sw_http_respond_file(req, 200, "application/octet-stream", fd, 0, (uint64_t)sb.st_size);
}

static void backup_download(struct sw_http_request *req)
{
	struct backup_req *b = backup_req_new(req);
	if (!b)
		return;
	const char *params[3] = { req->principal.organization_id, b->service, b->backup };
	/* A dump is all of the service's data: its disclosure is recorded with
	 * the read that grants it. */
	char meta[64];
	snprintf(meta, sizeof(meta), "{\"backupId\":\"%s\"}", b->backup); /* a UUID */
	sw_api_query_audited(req, &sw_db_stmt_service_backup_file, params, 3,
			     "service.backup.downloaded", "service", b->service, meta, backup_file_found, b);
}

/* The audit record is written by the statement, with the job. */
static void backup_restore(struct sw_http_request *req)
{
	struct backup_req *b = backup_req_new(req);
	if (!b)
		return;
	const char *params[5] = { req->principal.organization_id, b->service, b->backup,
				  req->principal.user_id, sw_http_peer_address(req) };
	sw_api_query(req, &sw_db_stmt_service_restore_request, params, 5, sw_api_job_answered, req);
}

/* ---- backup schedule ---- */

static const char *const frequencies[] = { "HOURLY", "DAILY", "WEEKLY", NULL };
static const char *const weekdays[] = { "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY",
					"SATURDAY", "SUNDAY", NULL };
enum { S_ENABLED, S_FREQUENCY, S_HOUR, S_WEEKDAY, S_RETENTION };
static const struct sw_api_field schedule_fields[] = {
	[S_ENABLED] = { "enabled", SW_API_FIELD_BOOL, SW_API_FIELD_REQUIRED },
	[S_FREQUENCY] = { "frequency", SW_API_FIELD_ENUM, SW_API_FIELD_REQUIRED, NULL, 0, 0, frequencies },
	[S_HOUR] = { "hourUtc", SW_API_FIELD_INT, SW_API_FIELD_NULLABLE, NULL, 0, 23 },
	[S_WEEKDAY] = { "weekday", SW_API_FIELD_ENUM, SW_API_FIELD_NULLABLE, NULL, 0, 0, weekdays },
	[S_RETENTION] = { "retentionCount", SW_API_FIELD_INT, 0, NULL, 1, 100, NULL, "7" },
};
static const struct sw_api_column schedule_columns[] = {
	{ "enabled", SW_DB_SERVICE_SCHEDULE_ENABLED, SW_API_COL_BOOL },
	{ "frequency", SW_DB_SERVICE_SCHEDULE_FREQUENCY, SW_API_COL_TEXT },
	{ "hourUtc", SW_DB_SERVICE_SCHEDULE_HOUR, SW_API_COL_JSON },
	{ "weekday", SW_DB_SERVICE_SCHEDULE_WEEKDAY, SW_API_COL_NULLABLE },
	{ "retentionCount", SW_DB_SERVICE_SCHEDULE_RETENTION, SW_API_COL_JSON },
	{ "nextRunAt", SW_DB_SERVICE_SCHEDULE_NEXT_RUN, SW_API_COL_NULLABLE },
	{ "updatedAt", SW_DB_SERVICE_SCHEDULE_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object schedule_object = { schedule_columns,
						      SW_ARRAY_SIZE(schedule_columns), 0 };

static void schedule_get(struct sw_http_request *req)
{
	struct row_op *op = row_op_new(req, NULL, 200, &schedule_object);
	if (!op)
		return;
	const char *params[2] = { req->principal.organization_id, op->target_id };
	row_op_query(op, &sw_db_stmt_service_schedule_get, params, 2);
}

/* Which of hourUtc and weekday the frequency takes: an hour for DAILY and
 * WEEKLY, a weekday for WEEKLY only. */
static void schedule_rules(const char **p, struct sw_field_errors *fe)
{
	bool hourly = strcmp(p[S_FREQUENCY], "HOURLY") == 0;
	bool weekly = strcmp(p[S_FREQUENCY], "WEEKLY") == 0;
	if (hourly && p[S_HOUR])
		sw_field_error(fe, "hourUtc", "must be absent or null when frequency is HOURLY");
	if (!hourly && !p[S_HOUR])
		sw_field_error(fe, "hourUtc", "is required when frequency is DAILY or WEEKLY");
	if (!weekly && p[S_WEEKDAY])
		sw_field_error(fe, "weekday", "must be absent or null unless frequency is WEEKLY");
	if (weekly && !p[S_WEEKDAY])
		sw_field_error(fe, "weekday", "is required when frequency is WEEKLY");
}

static void schedule_put(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	const char *params[2 + SW_ARRAY_SIZE(schedule_fields)];
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	struct row_op *op = row_op_new(req, NULL, 200, &schedule_object);
	if (!op) {
		json_decref(body);
		return;
	}
	if (sw_api_fields_read(req, body, schedule_fields, SW_ARRAY_SIZE(schedule_fields), true,
			       params + 2, NULL, &fe))
		schedule_rules(params + 2, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	op->action = "service.backup_schedule.updated";
	params[0] = req->principal.organization_id;
	params[1] = op->target_id;
	row_op_query(op, &sw_db_stmt_service_schedule_set, params, (int)SW_ARRAY_SIZE(params));
}

#define B SW_HTTP_DEFAULT_MAX_BODY
#define LIFECYCLE_DOC(what)                                                                   \
	"Queues a lifecycle job \"service." what "\" for the service's server and answers it "   \
	"(202); asking again while that job is still queued answers the same job." RESOURCE_DOC
static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/services", SW_ACCESS_SESSION, services_list, 0, 0,
	  { "List managed services", "Never carries credentials. Filters: ?kind=POSTGRESQL|MYSQL|"
	    "REDIS, ?serverId=, ?projectId=, ?environmentId=, ?status=CREATED|RUNNING|STOPPED, "
	    "?name= (exact)." PAGE_DOC, "Services", NULL, "ServiceList", 200, err_list,
	    "limit cursor order kind serverId projectId environmentId status name" } },
	{ SW_HTTP_POST, "/services", SW_ACCESS_SESSION, services_create, B, 0,
	  { "Create a managed service", "Allocates the service's port on its server (20000-29999, "
	    "unique there, kept for the service's life; it listens on 127.0.0.1 of the server) and "
	    "generates the credentials (database and user: the name with '-' as '_', at most "
	    "32 characters, Redis: user default and database 0; a password of 32 random bytes) and "
	    "stores them sealed; only GET /services/{id}/connection discloses them. version: "
	    "POSTGRESQL 13, 14, 15, 16 or 17 (default 17), MYSQL 8.0 or 8.4 (default 8.4), REDIS 6 "
	    "or 7 (default 7). environmentId must be the organization's (422); serverId defaults "
	    "to the local server and must be the organization's (422). name, kind and serverId "
	    "cannot change later. 409 SERVICE_EXISTS when the name is taken in the organization.",
	    "Services", "ServiceCreate", "Service", 201, err_create } },
	{ SW_HTTP_GET, "/services/:id", SW_ACCESS_SESSION, service_get, 0, 0,
	  { "Get a managed service", "Never carries credentials (see /connection)." RESOURCE_DOC,
	    "Services", NULL, "Service", 200, err_get } },
	{ SW_HTTP_PATCH, "/services/:id", SW_ACCESS_SESSION, service_update, B, 0,
	  { "Update a managed service", "Partial: description, version (one of the kind's; applied "
	    "by the next start) and environmentId change; name, kind and serverId are refused "
	    "(422 \"cannot be changed\")." RESOURCE_DOC, "Services", "ServiceUpdate", "Service",
	    200, err_update } },
	{ SW_HTTP_DELETE, "/services/:id", SW_ACCESS_SESSION, service_remove, 0, 0,
	  { "Delete a managed service", "Removes the record with its backups' records, cancels the "
	    "service's queued jobs and queues a lifecycle job \"service.delete\" that removes the "
	    "container from its server. A repeat answers 404." RESOURCE_DOC, "Services", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/services/:id/start", SW_ACCESS_SESSION, service_start, 0, 0,
	  { "Start a managed service", LIFECYCLE_DOC("start"), "Services", NULL, "Job", 202, err_job } },
	{ SW_HTTP_POST, "/services/:id/stop", SW_ACCESS_SESSION, service_stop, 0, 0,
	  { "Stop a managed service", LIFECYCLE_DOC("stop"), "Services", NULL, "Job", 202, err_job } },
	{ SW_HTTP_POST, "/services/:id/restart", SW_ACCESS_SESSION, service_restart, 0, 0,
	  { "Restart a managed service", LIFECYCLE_DOC("restart"), "Services", NULL, "Job", 202,
	    err_job } },
	{ SW_HTTP_GET, "/services/:id/connection", SW_ACCESS_SESSION, service_connection, 0, 0,
	  { "Disclose a service's credentials", "The only answer that carries the generated "
	    "credentials, with a connection URL. Any member of the organization may ask (Session); "
	    "every call writes the audit record service.connection.viewed (who, when, from which "
	    "address; never the credentials) in the same transaction that reads them." RESOURCE_DOC,
	    "Services", NULL, "ServiceConnection", 200, err_connection } },
	{ SW_HTTP_GET, "/services/:id/backups", SW_ACCESS_SESSION, backups_list, 0, 0,
	  { "List a service's backups", "Filter: ?status=QUEUED|RUNNING|SUCCEEDED|FAILED." PAGE_DOC,
	    "Services", NULL, "ServiceBackupList", 200, err_list, "limit cursor order status" } },
	{ SW_HTTP_POST, "/services/:id/backups", SW_ACCESS_SESSION, backups_request, 0, 0,
	  { "Request a backup now", "Records a backup (QUEUED) and queues its lifecycle job "
	    "\"service.backup\" (jobId) in one transaction; 202 with the backup and Location: /jobs/{jobId}. While a backup "
	    "of the service is still queued, asking again answers that one. The runner dumps the "
	    "running service with its own tool inside its container (pg_dump --format=custom, "
	    "mysqldump --single-transaction, Redis BGSAVE then its RDB file) into a file on the "
	    "service's server, written under a temporary name, fsynced and renamed before the "
	    "backup becomes SUCCEEDED with sizeBytes and sha256; any failure is FAILED with "
	    "errorMessage (a service that is not running: \"start it before taking a backup\")."
	    RESOURCE_DOC,
	    "Services", NULL, "ServiceBackup", 202, err_job } },
	{ SW_HTTP_GET, "/services/:id/backups/:backupId/download", SW_ACCESS_SESSION, backup_download,
	  0, 0,
	  { .summary = "Download a backup's dump",
	    .description = "The dump file as the service's own tool wrote it (PostgreSQL: pg_dump "
	    "custom format, for pg_restore; MySQL: mysqldump SQL text; Redis: the RDB file), as "
	    "application/octet-stream with Content-Disposition: attachment and ETag: the SHA-256 "
	    "(hex) recorded when it was taken; sent without copying it through the server's memory. "
	    "409 BACKUP_NOT_READY unless the backup SUCCEEDED; 410 BACKUP_FILE_MISSING when the "
	    "file is no longer on the server. Each download writes the audit record "
	    "service.backup.downloaded (a dump is all of the service's data)." RESOURCE_DOC,
	    .tag = "Services", .success_status = 200, .error_statuses = err_download,
	    .media_type = "application/octet-stream" } },
	{ SW_HTTP_POST, "/services/:id/backups/:backupId/restore", SW_ACCESS_SESSION, backup_restore,
	  0, 0,
	  { "Restore a backup", "Queues a lifecycle job \"service.restore\" (202 with the job) and "
	    "writes the audit record service.backup.restore_requested (who, from which address, "
	    "backupId, jobId) in the same transaction. The runner checks the file against its "
	    "recorded SHA-256 first: a missing or damaged file fails the job (\"... nothing was "
	    "restored.\") and the running data is untouched. PostgreSQL: pg_restore --clean "
	    "--if-exists --single-transaction (all or nothing; objects the dump does not hold are "
	    "left as they are); MySQL: the dump (DROP and CREATE of each table it holds) run by the "
	    "mysql client, not as one transaction; Redis: the file checked by redis-check-rdb, then "
	    "swapped in while Redis is stopped and Redis started again (the whole dataset is the "
	    "dump's). The service must be running. 409 "
	    "BACKUP_NOT_RESTORABLE unless the backup SUCCEEDED; 409 RESTORE_PENDING while a "
	    "restore of another backup of the service is queued (asking again for the same one "
	    "answers its job)." RESOURCE_DOC,
	    "Services", NULL, "Job", 202, err_restore } },
	{ SW_HTTP_GET, "/services/:id/backups/schedule", SW_ACCESS_SESSION, schedule_get, 0, 0,
	  { "Get a service's backup schedule", "Off by default (DAILY at 03:00 UTC, 7 kept, when "
	    "enabled). nextRunAt is null when disabled." RESOURCE_DOC, "Services", NULL,
	    "ServiceBackupSchedule", 200, err_get } },
	{ SW_HTTP_PUT, "/services/:id/backups/schedule", SW_ACCESS_SESSION, schedule_put, B, 0,
	  { "Set a service's backup schedule", "Replaces the schedule: enabled and frequency are "
	    "required; HOURLY runs at minute 0 of every hour (no hourUtc, no weekday); DAILY at "
	    "hourUtc:00 UTC (hourUtc 0-23 required); WEEKLY on weekday at hourUtc:00 UTC (both "
	    "required). retentionCount 1-100 (default 7): how many of the newest successful "
	    "backups are kept (older ones, rows and files, are removed after each successful "
	    "backup). Each due time (nextRunAt) gives one backup (scheduledFor), however many "
	    "replicas of Steward run." RESOURCE_DOC, "Services", "ServiceBackupScheduleUpdate",
	    "ServiceBackupSchedule", 200, err_put } },
};

#define ID_SCHEMA "{\"type\":\"string\",\"format\":\"uuid\"}"
#define TIME_SCHEMA "{\"type\":\"string\",\"format\":\"date-time\"}"
#define NULLABLE_TIME_SCHEMA "{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}"
#define KIND_SCHEMA "{\"type\":\"string\",\"enum\":[\"POSTGRESQL\",\"MYSQL\",\"REDIS\"]}"
#define VERSION_SCHEMA                                                                         \
	"{\"type\":\"string\",\"pattern\":\"^[0-9][0-9.]{0,7}$\",\"description\":\"POSTGRESQL: 13, " \
	"14, 15, 16, 17 (default 17); MYSQL: 8.0, 8.4 (default 8.4); REDIS: 6, 7 (default 7).\"}"
#define DESCRIPTION_SCHEMA "{\"type\":\"string\",\"maxLength\":500}"
#define FREQUENCY_SCHEMA "{\"type\":\"string\",\"enum\":[\"HOURLY\",\"DAILY\",\"WEEKLY\"]}"
#define WEEKDAY_SCHEMA                                                                         \
	"{\"type\":[\"string\",\"null\"],\"enum\":[\"MONDAY\",\"TUESDAY\",\"WEDNESDAY\","          \
	"\"THURSDAY\",\"FRIDAY\",\"SATURDAY\",\"SUNDAY\",null]}"
#define HOUR_SCHEMA "{\"type\":[\"integer\",\"null\"],\"minimum\":0,\"maximum\":23}"
#define RETENTION_SCHEMA "{\"type\":\"integer\",\"minimum\":1,\"maximum\":100}"

static const char schemas[] = "{"
	"\"Service\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"description\",\"kind\","
	"\"version\",\"status\",\"projectId\",\"environmentId\",\"serverId\",\"createdAt\","
	"\"updatedAt\",\"port\"],\"properties\":{\"id\":" ID_SCHEMA ","
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":" DESCRIPTION_SCHEMA ",\"kind\":" KIND_SCHEMA ",\"version\":" VERSION_SCHEMA ","
	"\"status\":{\"type\":\"string\",\"enum\":[\"CREATED\",\"RUNNING\",\"STOPPED\"]},"
	"\"projectId\":" ID_SCHEMA ",\"environmentId\":" ID_SCHEMA ",\"serverId\":" ID_SCHEMA ","
	"\"createdAt\":" TIME_SCHEMA ",\"updatedAt\":" TIME_SCHEMA ","
	"\"port\":{\"type\":\"integer\",\"minimum\":20000,\"maximum\":29999,\"description\":"
	"\"Where the service listens on 127.0.0.1 of its server; allocated at creation, unique on "
	"the server, kept for the service's life.\"}}},"
	"\"ServiceList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Service\"}},"
	"\"ServiceCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"kind\",\"environmentId\"],\"properties\":{"
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":" DESCRIPTION_SCHEMA ",\"kind\":" KIND_SCHEMA ",\"version\":" VERSION_SCHEMA ","
	"\"environmentId\":" ID_SCHEMA ",\"serverId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\","
	"\"description\":\"Default: the local server.\"}}},"
	"\"ServiceUpdate\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	"\"description\":" DESCRIPTION_SCHEMA ",\"version\":" VERSION_SCHEMA ","
	"\"environmentId\":" ID_SCHEMA "}},"
	"\"ServiceConnection\":{\"type\":\"object\",\"required\":[\"host\",\"port\",\"database\","
	"\"username\",\"password\",\"url\"],\"properties\":{\"host\":{\"type\":\"string\"},"
	"\"port\":{\"type\":\"integer\"},\"database\":{\"type\":\"string\"},"
	"\"username\":{\"type\":\"string\"},\"password\":{\"type\":\"string\"},"
	"\"url\":{\"type\":\"string\",\"examples\":[\"postgresql://db:secret@127.0.0.1:20000/db\"]}},"
	"\"description\":\"host is 127.0.0.1 and port the service's own on its server: an "
	"application on that server reaches it there.\"},"
	"\"ServiceBackup\":{\"type\":\"object\",\"required\":[\"id\",\"serviceId\",\"status\","
	"\"sizeBytes\",\"errorMessage\",\"jobId\",\"startedAt\",\"finishedAt\",\"createdAt\","
	"\"sha256\",\"scheduledFor\"],"
	"\"properties\":{\"id\":" ID_SCHEMA ",\"serviceId\":" ID_SCHEMA ","
	"\"status\":{\"type\":\"string\",\"enum\":[\"QUEUED\",\"RUNNING\",\"SUCCEEDED\",\"FAILED\"]},"
	"\"sizeBytes\":{\"type\":[\"integer\",\"null\"],\"minimum\":0},"
	"\"errorMessage\":{\"type\":[\"string\",\"null\"]},"
	"\"jobId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"startedAt\":" NULLABLE_TIME_SCHEMA ",\"finishedAt\":" NULLABLE_TIME_SCHEMA ","
	"\"createdAt\":" TIME_SCHEMA ","
	"\"sha256\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^[0-9a-f]{64}$\","
	"\"description\":\"Of the dump file, once SUCCEEDED.\"},"
	"\"scheduledFor\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\","
	"\"description\":\"The schedule's due time that made it; null: asked for.\"}}},"
	"\"ServiceBackupList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/ServiceBackup\"}},"
	"\"ServiceBackupSchedule\":{\"type\":\"object\",\"required\":[\"enabled\",\"frequency\","
	"\"hourUtc\",\"weekday\",\"retentionCount\",\"nextRunAt\",\"updatedAt\"],\"properties\":{"
	"\"enabled\":{\"type\":\"boolean\"},\"frequency\":" FREQUENCY_SCHEMA ","
	"\"hourUtc\":" HOUR_SCHEMA ",\"weekday\":" WEEKDAY_SCHEMA ","
	"\"retentionCount\":" RETENTION_SCHEMA ",\"nextRunAt\":" NULLABLE_TIME_SCHEMA ","
	"\"updatedAt\":" TIME_SCHEMA "}},"
	"\"ServiceBackupScheduleUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"enabled\",\"frequency\"],\"properties\":{"
	"\"enabled\":{\"type\":\"boolean\"},\"frequency\":" FREQUENCY_SCHEMA ","
	"\"hourUtc\":" HOUR_SCHEMA ",\"weekday\":" WEEKDAY_SCHEMA ","
	"\"retentionCount\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":7}}}"
	"}";

const struct sw_api_route_group sw_api_services_group = { routes, SW_ARRAY_SIZE(routes), schemas };
