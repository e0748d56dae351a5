/* Applications, their lifecycle routes and their volumes.
 *
 * Decisions (also in the OpenAPI document):
 * - An application lives in an environment (environmentId, required); its
 *   project is the environment's (projectId is answered, never sent). A
 *   PATCH of environmentId moves it, the project following. It runs on a
 *   server of its organization, the organization's local server when
 *   serverId is not given; serverId cannot change (moving running
 *   containers between servers is a delete and a new application).
 *   environmentId or serverId not of the organization: 422 on the field.
 * - The name is a resource name, unique in the organization: 409
 *   APPLICATION_EXISTS. Creating checks the plan's applications quota
 *   first: 409 QUOTA_EXCEEDED.
 * - Build: sourceKind GIT (default) or UPLOAD, changeable; dockerfilePath
 *   (relative, null: detect), buildContext (relative, "."); startCommand,
 *   the command of an image built without a Dockerfile, in exec form only
 *   (an array of 1..SW_COMMAND_MAX_ARGS arguments, never a shell line).
 * - Run: port 3000; health check GET healthCheckPath "/" expecting
 *   healthCheckExpectedStatus 200 within healthCheckTimeoutSeconds 5, tried
 *   healthCheckRetries 12 times; deployStrategy RECREATE or BLUE_GREEN (a
 *   request: the runner falls back to RECREATE as the spec says);
 *   imageRetentionCount 3 (each retained version is a full image on the
 *   server's disk, kept for rollbacks); cpuLimitMillicores and
 *   memoryLimitMb, null for no limit.
 * - status is read-only: CREATED until the runners (deployments issue)
 *   record RUNNING, STOPPED or FAILED.
 * - DELETE removes the row at once, with its sub-resources (volumes,
 *   domains, variables, git source), cancels its queued lifecycle jobs and
 *   queues "application.delete" for the runner, whose payload carries the
 *   server, the name and the runtime volumes to remove: 204.
 * - start, stop, restart: 202 with the lifecycle job queued; asking again
 *   while one of that kind is queued answers the same job.
 * - Volumes: a name (resource name, unique in the application: 409
 *   VOLUME_EXISTS; it names the runtime's volume, so it cannot change), a
 *   mountPath inside the container (unique in the application: 409
 *   VOLUME_MOUNT_PATH_EXISTS), at most SW_VOLUMES_MAX (409
 *   VOLUME_LIMIT_REACHED). hostPath makes it a bind mount of a host
 *   directory: only an operator may set or change it (403 FORBIDDEN).
 *   Deleting a named volume queues "volume.delete" (its data goes). */
#include <stdio.h>
#include <stdlib.h>
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_applications.h"

/* Defaults and ranges of the settings (the ranges are also the CHECKs of
 * migration 0007); defaults as the text of a statement parameter. */
#define PORT_DEFAULT "3000"
#define HEALTH_STATUS_DEFAULT "200"
#define HEALTH_TIMEOUT_DEFAULT "5"
#define HEALTH_RETRIES_DEFAULT "12"
#define IMAGE_RETENTION_DEFAULT "3"
#define HEALTH_STATUS_MIN 100
#define HEALTH_STATUS_MAX 599
#define HEALTH_TIMEOUT_MAX_SECONDS 300
#define HEALTH_RETRIES_MAX 100
#define IMAGE_RETENTION_MAX 50 /* each one a full image on the server's disk */
#define CPU_MILLICORES_MIN 10
#define CPU_MILLICORES_MAX 256000
#define MEMORY_MB_MIN 16
#define MEMORY_MB_MAX 1048576

#define STR_(x) #x
#define STR(x) STR_(x)

#define ITEM_DOC " Another organization's objects are not found (404)."
#define PAGE_DOC SW_API_DOC_PAGE ITEM_DOC

static const int err_list[] = { 404, 422, 503, 0 };
static const int err_create[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_update[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 409, 503, 0 };
static const int err_job[] = { 404, 503, 0 };
static const int err_volume_write[] = { 400, 403, 404, 409, 413, 415, 422, 503, 0 };

/* ---- applications ---- */

/* startCommand: an array of 1..SW_COMMAND_MAX_ARGS arguments, each
 * sw_valid_command_arg(); the parameter is its JSON text (jansson's, from
 * the checked values). */
static bool start_command(struct sw_http_request *req, json_t *v, const char **ret,
			  const char **ret_msg)
{
	if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > SW_COMMAND_MAX_ARGS) {
		*ret_msg = "must be an array of 1 to " STR(SW_COMMAND_MAX_ARGS) " strings (exec form)";
		return false;
	}
	size_t i;
	json_t *arg;
	json_array_foreach(v, i, arg) {
		const char *why = NULL;
		struct sw_str s = sw_str_from(json_string_value(arg), json_string_length(arg));
		if (!json_is_string(arg))
			why = "must be a string";
		else if (memchr(s.ptr, '\0', s.len))
			why = "must not contain NUL characters";
		else if (!sw_valid_command_arg(s, &why) && !why)
			why = "is not valid";
		if (why) {
			char msg[160];
			int m = snprintf(msg, sizeof(msg), "argument %zu %s", i + 1, why);
			size_t len = m < 0 ? 0 : SW_MIN((size_t)m, sizeof(msg) - 1);
			*ret_msg = sw_arena_strndup(&req->arena, msg, len);
			if (!*ret_msg)
				*ret_msg = "has an argument that is not valid";
			return false;
		}
	}
	char *text = json_dumps(v, JSON_COMPACT);
	*ret = text ? sw_arena_strndup(&req->arena, text, strlen(text)) : NULL;
	free(text);
	if (!*ret) {
		*ret_msg = "could not be read";
		return false;
	}
	return true;
}

static const char *const source_kinds[] = { "GIT", "UPLOAD", NULL };
static const char *const strategies[] = { "RECREATE", "BLUE_GREEN", NULL };
static const char *const statuses[] = { "CREATED", "RUNNING", "STOPPED", "FAILED", NULL };

/* In the order of the statements' parameters (statements_applications.h). */
static const struct sw_api_field application_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
	{ "description", SW_API_FIELD_TEXT, 0, NULL, 0, SW_DESCRIPTION_MAX_LEN, NULL, "" },
	{ "environmentId", SW_API_FIELD_ID, SW_API_FIELD_REQUIRED },
	{ "serverId", SW_API_FIELD_ID, SW_API_FIELD_CREATE_ONLY },
	{ "sourceKind", SW_API_FIELD_ENUM, 0, NULL, 0, 0, source_kinds, "GIT" },
	{ "dockerfilePath", SW_API_FIELD_STRING, SW_API_FIELD_NULLABLE, sw_valid_relative_path },
	{ "buildContext", SW_API_FIELD_STRING, 0, sw_valid_relative_path, 0, 0, NULL, "." },
	{ "startCommand", SW_API_FIELD_CUSTOM, SW_API_FIELD_NULLABLE, .parse = start_command },
	{ "port", SW_API_FIELD_INT, 0, NULL, 1, 65535, NULL, PORT_DEFAULT },
	{ "healthCheckPath", SW_API_FIELD_STRING, 0, sw_valid_http_path, 0, 0, NULL, "/" },
	{ "healthCheckExpectedStatus", SW_API_FIELD_INT, 0, NULL, HEALTH_STATUS_MIN, HEALTH_STATUS_MAX,
	  NULL, HEALTH_STATUS_DEFAULT },
	{ "healthCheckTimeoutSeconds", SW_API_FIELD_INT, 0, NULL, 1, HEALTH_TIMEOUT_MAX_SECONDS, NULL,
	  HEALTH_TIMEOUT_DEFAULT },
	{ "healthCheckRetries", SW_API_FIELD_INT, 0, NULL, 1, HEALTH_RETRIES_MAX, NULL, HEALTH_RETRIES_DEFAULT },
	{ "deployStrategy", SW_API_FIELD_ENUM, 0, NULL, 0, 0, strategies, "RECREATE" },
	{ "imageRetentionCount", SW_API_FIELD_INT, 0, NULL, 1, IMAGE_RETENTION_MAX, NULL, IMAGE_RETENTION_DEFAULT },
	{ "cpuLimitMillicores", SW_API_FIELD_INT, SW_API_FIELD_NULLABLE, NULL, CPU_MILLICORES_MIN,
	  CPU_MILLICORES_MAX },
	{ "memoryLimitMb", SW_API_FIELD_INT, SW_API_FIELD_NULLABLE, NULL, MEMORY_MB_MIN, MEMORY_MB_MAX },
};
static const struct sw_api_field application_filters[] = {
	{ "projectId", SW_API_FIELD_ID },
	{ "environmentId", SW_API_FIELD_ID },
	{ "serverId", SW_API_FIELD_ID },
	{ "status", SW_API_FIELD_ENUM, 0, NULL, 0, 0, statuses },
	{ "name", SW_API_FIELD_STRING, 0, sw_valid_resource_name },
};
static const struct sw_api_column application_columns[] = {
	{ "id", SW_DB_APPLICATION_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_APPLICATION_NAME, SW_API_COL_TEXT },
	{ "description", SW_DB_APPLICATION_DESCRIPTION, SW_API_COL_TEXT },
	{ "projectId", SW_DB_APPLICATION_PROJECT_ID, SW_API_COL_TEXT },
	{ "environmentId", SW_DB_APPLICATION_ENVIRONMENT_ID, SW_API_COL_TEXT },
	{ "serverId", SW_DB_APPLICATION_SERVER_ID, SW_API_COL_TEXT },
	{ "sourceKind", SW_DB_APPLICATION_SOURCE_KIND, SW_API_COL_TEXT },
	{ "dockerfilePath", SW_DB_APPLICATION_DOCKERFILE_PATH, SW_API_COL_NULLABLE },
	{ "buildContext", SW_DB_APPLICATION_BUILD_CONTEXT, SW_API_COL_TEXT },
	{ "startCommand", SW_DB_APPLICATION_START_COMMAND, SW_API_COL_JSON },
	{ "port", SW_DB_APPLICATION_PORT, SW_API_COL_JSON },
	{ "healthCheckPath", SW_DB_APPLICATION_HEALTH_PATH, SW_API_COL_TEXT },
	{ "healthCheckExpectedStatus", SW_DB_APPLICATION_HEALTH_STATUS, SW_API_COL_JSON },
	{ "healthCheckTimeoutSeconds", SW_DB_APPLICATION_HEALTH_TIMEOUT, SW_API_COL_JSON },
	{ "healthCheckRetries", SW_DB_APPLICATION_HEALTH_RETRIES, SW_API_COL_JSON },
	{ "deployStrategy", SW_DB_APPLICATION_DEPLOY_STRATEGY, SW_API_COL_TEXT },
	{ "imageRetentionCount", SW_DB_APPLICATION_IMAGE_RETENTION, SW_API_COL_JSON },
	{ "cpuLimitMillicores", SW_DB_APPLICATION_CPU_LIMIT, SW_API_COL_JSON },
	{ "memoryLimitMb", SW_DB_APPLICATION_MEMORY_LIMIT, SW_API_COL_JSON },
	{ "status", SW_DB_APPLICATION_STATUS, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_APPLICATION_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_APPLICATION_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object application_object = { application_columns,
							 SW_ARRAY_SIZE(application_columns), 0 };
static const struct sw_api_sqlerr application_errors[] = {
	/* A record of another feature that refers to the application without
	 * ON DELETE CASCADE. */
	{ "23503", 409, "APPLICATION_IN_USE",
	  "Records that depend on the application must be removed before it can be deleted." },
};
static const struct sw_api_resource application = {
	.type = "application",
	.fields = application_fields,
	.nfields = SW_ARRAY_SIZE(application_fields),
	.shape = &application_object,
	.create = &sw_db_stmt_application_create,
	.get = &sw_db_stmt_application_get,
	.update = &sw_db_stmt_application_update,
	.remove = &sw_db_stmt_application_remove,
	.list = &sw_db_stmt_applications_list,
	.filters = application_filters,
	.nfilters = SW_ARRAY_SIZE(application_filters),
	.cursor_us_col = SW_DB_APPLICATION_US,
	.cursor_id_col = SW_DB_APPLICATION_ID,
	.errors = application_errors,
	.nerrors = SW_ARRAY_SIZE(application_errors),
	.conflict_code = "APPLICATION_EXISTS",
	.conflict_message = "The organization already has an application of that name.",
};

/* ---- deleting with a job for the runner ---- */

/* r->remove takes a fourth parameter, the acting user (the job's creator),
 * and returns the object's id and name first. */
struct removal {
	struct sw_http_request *req;
	const struct sw_api_resource *r;
	char parent[37];
	char id[37];
};

static void removed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct removal *rm = arg;
	if (err->code) {
		sw_api_resource_error(rm->req, rm->r, err);
		return;
	}
	if (!sw_api_found(rm->req, res, err))
		return;
	sw_http_respond(rm->req, 204, NULL, SW_STR_NULL);
}

static void remove_queuing(struct sw_http_request *req, const struct sw_api_resource *r)
{
	struct removal *rm = sw_api_state_new(req, sizeof(*rm));
	if (!rm || !sw_api_path_ids(req, rm->parent, rm->id))
		return;
	rm->r = r;
	const char *params[4] = { req->principal.organization_id, rm->id,
				  rm->parent[0] ? rm->parent : NULL, req->principal.user_id };
	sw_api_resource_query_audited(req, r, "deleted", r->remove, params, 4, removed, rm);
}

static void applications_list(struct sw_http_request *req) { sw_api_resource_list(req, &application); }
static void applications_create(struct sw_http_request *req) { sw_api_resource_create(req, &application); }
static void application_get(struct sw_http_request *req) { sw_api_resource_get(req, &application); }
static void application_update(struct sw_http_request *req) { sw_api_resource_update(req, &application); }
static void application_remove(struct sw_http_request *req) { remove_queuing(req, &application); }

static void application_start(struct sw_http_request *req)
{
	sw_api_job_enqueue(req, &sw_db_stmt_application_job, "lifecycle", "application.start");
}
static void application_stop(struct sw_http_request *req)
{
	sw_api_job_enqueue(req, &sw_db_stmt_application_job, "lifecycle", "application.stop");
}
static void application_restart(struct sw_http_request *req)
{
	sw_api_job_enqueue(req, &sw_db_stmt_application_job, "lifecycle", "application.restart");
}

/* ---- volumes ---- */

static const struct sw_api_field volume_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED | SW_API_FIELD_CREATE_ONLY,
	  sw_valid_resource_name },
	{ "mountPath", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_container_path },
	{ "hostPath", SW_API_FIELD_STRING, SW_API_FIELD_NULLABLE, sw_valid_host_path },
};
static const struct sw_api_field volume_filters[] = {
	{ "name", SW_API_FIELD_STRING, 0, sw_valid_resource_name },
};
static const struct sw_api_column volume_columns[] = {
	{ "id", SW_DB_VOLUME_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_VOLUME_NAME, SW_API_COL_TEXT },
	{ "applicationId", SW_DB_VOLUME_APPLICATION_ID, SW_API_COL_TEXT },
	{ "mountPath", SW_DB_VOLUME_MOUNT_PATH, SW_API_COL_TEXT },
	{ "hostPath", SW_DB_VOLUME_HOST_PATH, SW_API_COL_NULLABLE },
	{ "createdAt", SW_DB_VOLUME_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_VOLUME_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object volume_object = { volume_columns, SW_ARRAY_SIZE(volume_columns), 0 };
static const struct sw_api_resource volume = {
	.type = "volume",
	.fields = volume_fields,
	.nfields = SW_ARRAY_SIZE(volume_fields),
	.shape = &volume_object,
	.create = &sw_db_stmt_volume_create,
	.get = &sw_db_stmt_volume_get,
	.update = &sw_db_stmt_volume_update,
	.remove = &sw_db_stmt_volume_remove,
	.list = &sw_db_stmt_volumes_list,
	.parent = &sw_db_stmt_application_exists,
	.filters = volume_filters,
	.nfilters = SW_ARRAY_SIZE(volume_filters),
	.cursor_us_col = SW_DB_VOLUME_US,
	.cursor_id_col = SW_DB_VOLUME_ID,
	.conflict_code = "VOLUME_EXISTS",
	.conflict_message = "The application already has a volume of that name or at that mount path.",
};

/* A bind mount of a host directory is the operator's to grant: true (and
 * answered 403) when a caller who is not an operator names hostPath; on a
 * create, null (no host path) is anyone's. Reads the body once more only
 * for those callers; a body that is not JSON is answered here as the
 * generic handler would. */
static bool host_path_refused(struct sw_http_request *req, bool creating)
{
	if (req->principal.is_operator)
		return false;
	json_t *body = sw_http_json_body(req);
	if (!body)
		return true;
	json_t *v = json_object_get(body, "hostPath");
	bool refused = v && !(creating && json_is_null(v));
	json_decref(body);
	if (refused)
		sw_http_error(req, 403, "FORBIDDEN", "Host paths require the operator role.");
	return refused;
}

static void volumes_list(struct sw_http_request *req) { sw_api_resource_list(req, &volume); }
static void volume_get(struct sw_http_request *req) { sw_api_resource_get(req, &volume); }
static void volume_remove(struct sw_http_request *req) { remove_queuing(req, &volume); }

static void volumes_create(struct sw_http_request *req)
{
	if (!host_path_refused(req, true))
		sw_api_resource_create(req, &volume);
}

static void volume_update(struct sw_http_request *req)
{
	if (!host_path_refused(req, false))
		sw_api_resource_update(req, &volume);
}

/* ---- routes ---- */

#define B SW_HTTP_DEFAULT_MAX_BODY
#define T "Applications"
#define JOB_DOC                                                                                \
	" Queues a job in the lifecycle queue for the runner and answers 202 with it; asking "    \
	"again while that job is still queued answers the same job." ITEM_DOC
static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/applications", SW_ACCESS_SESSION, applications_list, 0, 0,
	  { "List applications", "Filters (exact): ?projectId, ?environmentId, ?serverId, ?status "
	    "(CREATED, RUNNING, STOPPED, FAILED), ?name." PAGE_DOC, T, NULL, "ApplicationList", 200,
	    err_list, "limit cursor order projectId environmentId serverId status name" } },
	{ SW_HTTP_POST, "/applications", SW_ACCESS_SESSION, applications_create, B, 0,
	  { "Create an application",
	    "In environmentId (its project is the environment's), on serverId (default: the "
	    "organization's local server); either not of the organization: 422 on that field. "
	    "Defaults: sourceKind GIT, dockerfilePath null (detect), buildContext \".\", startCommand "
	    "null, port 3000, healthCheckPath \"/\", healthCheckExpectedStatus 200, "
	    "healthCheckTimeoutSeconds 5, healthCheckRetries 12, deployStrategy RECREATE, "
	    "imageRetentionCount 3 (each retained version is a full image on the server's disk), no "
	    "CPU or memory limit. 409 QUOTA_EXCEEDED when the plan's applications quota is reached "
	    "(checked first), 409 APPLICATION_EXISTS when the name is taken in the organization.",
	    T, "ApplicationCreate", "Application", 201, err_create } },
	{ SW_HTTP_GET, "/applications/:id", SW_ACCESS_SESSION, application_get, 0, 0,
	  { "Get an application", "status is read-only: CREATED until the runners record RUNNING, "
	    "STOPPED or FAILED." ITEM_DOC, T, NULL, "Application", 200, err_get } },
	{ SW_HTTP_PATCH, "/applications/:id", SW_ACCESS_SESSION, application_update, B, 0,
	  { "Update an application",
	    "Partial: only the members given change; null clears a nullable member. A new "
	    "environmentId moves the application (projectId follows). serverId cannot change: 422. "
	    "409 APPLICATION_EXISTS when the new name is taken." ITEM_DOC,
	    T, "ApplicationUpdate", "Application", 200, err_update } },
	{ SW_HTTP_DELETE, "/applications/:id", SW_ACCESS_SESSION, application_remove, 0, 0,
	  { "Delete an application",
	    "Removes it at once with its volumes, domains, variables and git source, cancels its "
	    "queued start, stop and restart jobs, and queues an application.delete job with which "
	    "the runner removes its containers, images and named volumes (host paths are never "
	    "removed). A repeat answers 404." ITEM_DOC, T, NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/applications/:id/start", SW_ACCESS_SESSION, application_start, 0, 0,
	  { "Start an application", "Job kind application.start." JOB_DOC, T, NULL, "Job", 202, err_job } },
	{ SW_HTTP_POST, "/applications/:id/stop", SW_ACCESS_SESSION, application_stop, 0, 0,
	  { "Stop an application", "Job kind application.stop." JOB_DOC, T, NULL, "Job", 202, err_job } },
	{ SW_HTTP_POST, "/applications/:id/restart", SW_ACCESS_SESSION, application_restart, 0, 0,
	  { "Restart an application", "Job kind application.restart." JOB_DOC, T, NULL, "Job", 202,
	    err_job } },
	{ SW_HTTP_GET, "/applications/:id/volumes", SW_ACCESS_SESSION, volumes_list, 0, 0,
	  { "List an application's volumes", "Filter (exact): ?name." PAGE_DOC, T, NULL, "VolumeList",
	    200, err_list, "limit cursor order name" } },
	{ SW_HTTP_POST, "/applications/:id/volumes", SW_ACCESS_SESSION, volumes_create, B, 0,
	  { "Create a volume",
	    "A named volume mounted at mountPath (an absolute path in the container, not under /proc, "
	    "/sys or /dev), or with hostPath a bind mount of that host directory: 403 FORBIDDEN "
	    "unless the caller is an operator. 409 VOLUME_EXISTS (name), VOLUME_MOUNT_PATH_EXISTS "
	    "(mountPath), VOLUME_LIMIT_REACHED (" STR(SW_VOLUMES_MAX) " per application)." ITEM_DOC,
	    T, "VolumeCreate", "Volume", 201, err_volume_write } },
	{ SW_HTTP_GET, "/applications/:id/volumes/:volumeId", SW_ACCESS_SESSION, volume_get, 0, 0,
	  { "Get a volume", ITEM_DOC, T, NULL, "Volume", 200, err_get } },
	{ SW_HTTP_PATCH, "/applications/:id/volumes/:volumeId", SW_ACCESS_SESSION, volume_update, B, 0,
	  { "Update a volume",
	    "Partial: mountPath, and hostPath (operators only: 403 FORBIDDEN for anyone else, null "
	    "included). The name cannot change (it names the runtime's volume): 422. Takes effect at "
	    "the next deployment." ITEM_DOC, T, "VolumeUpdate", "Volume", 200, err_volume_write } },
	{ SW_HTTP_DELETE, "/applications/:id/volumes/:volumeId", SW_ACCESS_SESSION, volume_remove, 0, 0,
	  { "Delete a volume",
	    "Removes the record; for a named volume a volume.delete job has the runner remove the "
	    "runtime's volume and its data once no container uses it. A host path is never "
	    "removed. A repeat answers 404." ITEM_DOC, T, NULL, NULL, 204, err_delete } },
};

/* ---- schemas ---- */

#define S_ID "{\"type\":\"string\",\"format\":\"uuid\"}"
#define S_TIME "{\"type\":\"string\",\"format\":\"date-time\"}"
#define S_NAME "{\"$ref\":\"#/components/schemas/ResourceName\"}"
#define S_INT(min, max, def)                                                            \
	"{\"type\":\"integer\",\"minimum\":" STR(min) ",\"maximum\":" STR(max)           \
	",\"default\":" def "}"
#define S_INT_NULL(min, max)                                                            \
	"{\"type\":[\"integer\",\"null\"],\"minimum\":" STR(min) ",\"maximum\":" STR(max) \
	",\"description\":\"null: no limit\"}"
#define S_RELATIVE                                                                      \
	"\"minLength\":1,\"maxLength\":" STR(SW_PATH_MAX_LEN) ","                         \
	"\"pattern\":\"^[A-Za-z0-9._/-]+$\",\"description\":\"Relative to the source "     \
	"root: no leading '/', no '..' or empty component, no trailing '/'.\""
#define S_ABSOLUTE(what)                                                                \
	"\"minLength\":2,\"maxLength\":" STR(SW_PATH_MAX_LEN) ","                         \
	"\"pattern\":\"^(/[A-Za-z0-9._-]+)+$\",\"description\":\"" what "\""

/* The members an application's create and update share (all but serverId). */
#define APPLICATION_SETTINGS                                                            \
	"\"name\":" S_NAME ","                                                          \
	"\"description\":{\"type\":\"string\",\"maxLength\":" STR(SW_DESCRIPTION_MAX_LEN) \
	",\"default\":\"\"},"                                                           \
	"\"environmentId\":" S_ID ","                                                   \
	"\"sourceKind\":{\"type\":\"string\",\"enum\":[\"GIT\",\"UPLOAD\"],"             \
	"\"default\":\"GIT\"},"                                                         \
	"\"dockerfilePath\":{\"type\":[\"string\",\"null\"]," S_RELATIVE ","            \
	"\"default\":null},"                                                            \
	"\"buildContext\":{\"type\":\"string\"," S_RELATIVE ",\"default\":\".\"},"      \
	"\"startCommand\":{\"type\":[\"array\",\"null\"],\"minItems\":1,"               \
	"\"maxItems\":" STR(SW_COMMAND_MAX_ARGS) ",\"items\":{\"type\":\"string\","      \
	"\"minLength\":1,\"maxLength\":" STR(SW_COMMAND_ARG_MAX_LEN) "},"                 \
	"\"default\":null,\"description\":\"The command of an image built without a "   \
	"Dockerfile, in exec form: the program and its arguments (each 1 to "           \
	STR(SW_COMMAND_ARG_MAX_LEN) " bytes of UTF-8 without control characters), "     \
	"never run by a shell. $PORT and ${PORT} in an argument are replaced by the "   \
	"port the container must listen on (also in the CMD of an application's own "   \
	"Dockerfile, exec form).\"},"                                                    \
	"\"port\":" S_INT(1, 65535, PORT_DEFAULT) ","                                   \
	"\"healthCheckPath\":{\"type\":\"string\",\"pattern\":\"^/\","                  \
	"\"maxLength\":" STR(SW_HTTP_PATH_MAX_LEN) ",\"default\":\"/\"},"                 \
	"\"healthCheckExpectedStatus\":"                                                \
	S_INT(HEALTH_STATUS_MIN, HEALTH_STATUS_MAX, HEALTH_STATUS_DEFAULT) ","          \
	"\"healthCheckTimeoutSeconds\":"                                                \
	S_INT(1, HEALTH_TIMEOUT_MAX_SECONDS, HEALTH_TIMEOUT_DEFAULT) ","                \
	"\"healthCheckRetries\":" S_INT(1, HEALTH_RETRIES_MAX, HEALTH_RETRIES_DEFAULT) "," \
	"\"deployStrategy\":{\"type\":\"string\",\"enum\":[\"RECREATE\",\"BLUE_GREEN\"]," \
	"\"default\":\"RECREATE\",\"description\":\"BLUE_GREEN is a request: the runner " \
	"falls back to RECREATE for a rollback, without a verified hostname, or short of " \
	"memory.\"},"                                                                   \
	"\"imageRetentionCount\":{\"type\":\"integer\",\"minimum\":1,"                  \
	"\"maximum\":" STR(IMAGE_RETENTION_MAX) ",\"default\":" IMAGE_RETENTION_DEFAULT "," \
	"\"description\":\"Versions kept for rollbacks; each is a full image on the "   \
	"server's disk.\"},"                                                            \
	"\"cpuLimitMillicores\":" S_INT_NULL(CPU_MILLICORES_MIN, CPU_MILLICORES_MAX) "," \
	"\"memoryLimitMb\":" S_INT_NULL(MEMORY_MB_MIN, MEMORY_MB_MAX)

#define VOLUME_MOUNT                                                                    \
	"\"mountPath\":{\"type\":\"string\","                                           \
	S_ABSOLUTE("In the container; not under /proc, /sys or /dev.") "}"
#define VOLUME_HOST                                                                     \
	"\"hostPath\":{\"type\":[\"string\",\"null\"]," S_ABSOLUTE("A host directory to " \
	"bind mount (operators only); not /, nor /etc, /proc, /sys, /dev, /boot, /root or " \
	"the Docker socket, nor anything below or above them. null: a named volume.") "}"

static const char schemas[] = "{"
	"\"Application\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"description\","
	"\"projectId\",\"environmentId\",\"serverId\",\"sourceKind\",\"dockerfilePath\","
	"\"buildContext\",\"startCommand\",\"port\",\"healthCheckPath\",\"healthCheckExpectedStatus\","
	"\"healthCheckTimeoutSeconds\",\"healthCheckRetries\",\"deployStrategy\","
	"\"imageRetentionCount\",\"cpuLimitMillicores\",\"memoryLimitMb\",\"status\",\"createdAt\","
	"\"updatedAt\"],\"properties\":{\"id\":" S_ID ",\"projectId\":" S_ID ",\"serverId\":" S_ID ","
	APPLICATION_SETTINGS ","
	"\"status\":{\"type\":\"string\",\"enum\":[\"CREATED\",\"RUNNING\",\"STOPPED\",\"FAILED\"]},"
	"\"createdAt\":" S_TIME ",\"updatedAt\":" S_TIME "}},"
	"\"ApplicationList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Application\"}},"
	"\"ApplicationCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"environmentId\"],\"properties\":{" APPLICATION_SETTINGS ","
	"\"serverId\":{\"type\":\"string\",\"format\":\"uuid\",\"description\":\"Default: the "
	"organization's local server. Cannot be changed later.\"}}},"
	"\"ApplicationUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"properties\":{" APPLICATION_SETTINGS "}},"
	"\"Volume\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"applicationId\",\"mountPath\","
	"\"hostPath\",\"createdAt\",\"updatedAt\"],\"properties\":{\"id\":" S_ID ",\"name\":" S_NAME ","
	"\"applicationId\":" S_ID "," VOLUME_MOUNT "," VOLUME_HOST ","
	"\"createdAt\":" S_TIME ",\"updatedAt\":" S_TIME "}},"
	"\"VolumeList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Volume\"}},"
	"\"VolumeCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"mountPath\"],\"properties\":{\"name\":" S_NAME ","
	VOLUME_MOUNT "," VOLUME_HOST "}},"
	"\"VolumeUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"properties\":{" VOLUME_MOUNT "," VOLUME_HOST "}}"
	"}";

const struct sw_api_route_group sw_api_applications_group = { routes, SW_ARRAY_SIZE(routes), schemas };
