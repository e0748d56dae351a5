/* Projects and their environments.
 *
 * A project groups applications; an environment (production, staging,
 * ...) is where in the project an application runs. A project is created
 * with one environment, "production". Names are resource names (DNS
 * labels), unique within the organization (projects) or the project
 * (environments): 409 PROJECT_EXISTS / ENVIRONMENT_EXISTS.
 *
 * A project or environment that still holds applications is not deleted:
 * 409 PROJECT_NOT_EMPTY / ENVIRONMENT_NOT_EMPTY. Everything else is the
 * resource conventions of resource.c. */
#include "steward/base/validate.h"
#include "api/api_internal.h"
#include "steward/db/statements_projects.h"

#define RESOURCE_DOC SW_API_DOC_SCOPED
#define LIST_DOC SW_API_DOC_PAGE RESOURCE_DOC

static const int err_list[] = { 404, 422, 503, 0 };
static const int err_create[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_update[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 409, 503, 0 };

/* ---- projects ---- */

static const struct sw_api_field project_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
	{ "description", SW_API_FIELD_TEXT, 0, NULL, 0, SW_DESCRIPTION_MAX_LEN },
};
static const struct sw_api_field project_filters[] = {
	{ "name", SW_API_FIELD_STRING, 0, sw_valid_resource_name },
};
static const struct sw_api_column project_columns[] = {
	{ "id", SW_DB_PROJECT_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_PROJECT_NAME, SW_API_COL_TEXT },
	{ "description", SW_DB_PROJECT_DESCRIPTION, SW_API_COL_TEXT },
	{ "environments", SW_DB_PROJECT_ENVIRONMENTS, SW_API_COL_JSON },
	{ "applicationCount", SW_DB_PROJECT_APPLICATIONS, SW_API_COL_JSON },
	{ "createdAt", SW_DB_PROJECT_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_PROJECT_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object project_object = { project_columns, SW_ARRAY_SIZE(project_columns), 0 };
static const struct sw_api_sqlerr project_errors[] = {
	{ "23503", 409, "PROJECT_NOT_EMPTY",
	  "The project still holds applications or services; delete them or move them to another "
	  "project first." },
};
static const struct sw_api_resource project = {
	.type = "project",
	.fields = project_fields,
	.nfields = SW_ARRAY_SIZE(project_fields),
	.shape = &project_object,
	.create = &sw_db_stmt_project_create,
	.get = &sw_db_stmt_project_get,
	.update = &sw_db_stmt_project_update,
	.remove = &sw_db_stmt_project_remove,
	.list = &sw_db_stmt_projects_list,
	.filters = project_filters,
	.nfilters = SW_ARRAY_SIZE(project_filters),
	.cursor_us_col = SW_DB_PROJECT_US,
	.cursor_id_col = SW_DB_PROJECT_ID,
	.errors = project_errors,
	.nerrors = SW_ARRAY_SIZE(project_errors),
	.conflict_code = "PROJECT_EXISTS",
	.conflict_message = "The organization already has a project of that name.",
};

static void projects_list(struct sw_http_request *req) { sw_api_resource_list(req, &project); }
static void projects_create(struct sw_http_request *req) { sw_api_resource_create(req, &project); }
static void project_get(struct sw_http_request *req) { sw_api_resource_get(req, &project); }
static void project_update(struct sw_http_request *req) { sw_api_resource_update(req, &project); }
static void project_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &project); }

/* ---- environments ---- */

static const struct sw_api_field environment_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
};
static const struct sw_api_column environment_columns[] = {
	{ "id", SW_DB_ENVIRONMENT_ID, SW_API_COL_TEXT },
	{ "projectId", SW_DB_ENVIRONMENT_PROJECT_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_ENVIRONMENT_NAME, SW_API_COL_TEXT },
	{ "applicationCount", SW_DB_ENVIRONMENT_APPLICATIONS, SW_API_COL_JSON },
	{ "createdAt", SW_DB_ENVIRONMENT_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_ENVIRONMENT_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object environment_object = { environment_columns,
							 SW_ARRAY_SIZE(environment_columns), 0 };
static const struct sw_api_sqlerr environment_errors[] = {
	{ "23503", 409, "ENVIRONMENT_NOT_EMPTY",
	  "The environment still holds applications or services; delete them or move them first." },
};
static const struct sw_api_resource environment = {
	.type = "environment",
	.fields = environment_fields,
	.nfields = SW_ARRAY_SIZE(environment_fields),
	.shape = &environment_object,
	.create = &sw_db_stmt_environment_create,
	.get = &sw_db_stmt_environment_get,
	.update = &sw_db_stmt_environment_update,
	.remove = &sw_db_stmt_environment_remove,
	.list = &sw_db_stmt_environments_list,
	.parent = &sw_db_stmt_project_exists,
	.filters = project_filters,
	.nfilters = SW_ARRAY_SIZE(project_filters),
	.cursor_us_col = SW_DB_ENVIRONMENT_US,
	.cursor_id_col = SW_DB_ENVIRONMENT_ID,
	.errors = environment_errors,
	.nerrors = SW_ARRAY_SIZE(environment_errors),
	.conflict_code = "ENVIRONMENT_EXISTS",
	.conflict_message = "The project already has an environment of that name.",
};

static void environments_list(struct sw_http_request *req) { sw_api_resource_list(req, &environment); }
static void environments_create(struct sw_http_request *req) { sw_api_resource_create(req, &environment); }
static void environment_get(struct sw_http_request *req) { sw_api_resource_get(req, &environment); }
static void environment_update(struct sw_http_request *req) { sw_api_resource_update(req, &environment); }
static void environment_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &environment); }

#define B SW_HTTP_DEFAULT_MAX_BODY
static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/projects", SW_ACCESS_SESSION, projects_list, 0, 0,
	  { "List projects", "Filter: ?name= (exact)." LIST_DOC, "Projects", NULL, "ProjectList",
	    200, err_list, "limit cursor order name" } },
	{ SW_HTTP_POST, "/projects", SW_ACCESS_SESSION, projects_create, B, 0,
	  { "Create a project", "Made with one environment, production. 409 PROJECT_EXISTS when the "
	    "name is taken in the organization.", "Projects", "ProjectCreate", "Project", 201, err_create } },
	{ SW_HTTP_GET, "/projects/:id", SW_ACCESS_SESSION, project_get, 0, 0,
	  { "Get a project", "With its environments and the number of its applications." RESOURCE_DOC,
	    "Projects", NULL, "Project", 200, err_get } },
	{ SW_HTTP_PATCH, "/projects/:id", SW_ACCESS_SESSION, project_update, B, 0,
	  { "Update a project", "Partial: only the members given change." RESOURCE_DOC, "Projects",
	    "ProjectUpdate", "Project", 200, err_update } },
	{ SW_HTTP_DELETE, "/projects/:id", SW_ACCESS_SESSION, project_remove, 0, 0,
	  { "Delete a project", "With its environments. 409 PROJECT_NOT_EMPTY while it holds "
	    "applications or services. A repeat answers 404." RESOURCE_DOC, "Projects", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_GET, "/projects/:id/environments", SW_ACCESS_SESSION, environments_list, 0, 0,
	  { "List a project's environments", "Filter: ?name= (exact)." LIST_DOC, "Projects", NULL,
	    "EnvironmentList", 200, err_list, "limit cursor order name" } },
	{ SW_HTTP_POST, "/projects/:id/environments", SW_ACCESS_SESSION, environments_create, B, 0,
	  { "Create an environment", "409 ENVIRONMENT_EXISTS when the project has one of that name."
	    RESOURCE_DOC, "Projects", "EnvironmentCreate", "Environment", 201, err_create } },
	{ SW_HTTP_GET, "/projects/:id/environments/:environmentId", SW_ACCESS_SESSION, environment_get, 0, 0,
	  { "Get an environment", RESOURCE_DOC, "Projects", NULL, "Environment", 200, err_get } },
	{ SW_HTTP_PATCH, "/projects/:id/environments/:environmentId", SW_ACCESS_SESSION,
	  environment_update, B, 0,
	  { "Rename an environment", "Partial: only the members given change." RESOURCE_DOC, "Projects",
	    "EnvironmentCreate", "Environment", 200, err_update } },
	{ SW_HTTP_DELETE, "/projects/:id/environments/:environmentId", SW_ACCESS_SESSION,
	  environment_remove, 0, 0,
	  { "Delete an environment", "409 ENVIRONMENT_NOT_EMPTY while it holds applications or services. A repeat "
	    "answers 404." RESOURCE_DOC, "Projects", NULL, NULL, 204, err_delete } },
};

#define NAME_SCHEMA                                                                            \
	"{\"type\":\"string\",\"pattern\":\"^[a-z](?:[a-z0-9]|-(?!-))*[a-z0-9]?$\",\"minLength\":1,"   \
	"\"maxLength\":63,\"description\":\"A DNS label: lower-case letters, digits and single "      \
	"hyphens, starting with a letter, not ending with a hyphen.\"}"
#define TIME_SCHEMA "{\"type\":\"string\",\"format\":\"date-time\"}"
#define ID_SCHEMA "{\"type\":\"string\",\"format\":\"uuid\"}"

static const char schemas[] = "{"
	"\"ResourceName\":" NAME_SCHEMA ","
	"\"Project\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"description\",\"environments\","
	"\"applicationCount\",\"createdAt\",\"updatedAt\"],\"properties\":{"
	"\"id\":" ID_SCHEMA ",\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":{\"type\":\"string\",\"maxLength\":500},"
	"\"environments\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
	"\"id\":" ID_SCHEMA ",\"name\":{\"type\":\"string\"}}}},"
	"\"applicationCount\":{\"type\":\"integer\"},"
	"\"createdAt\":" TIME_SCHEMA ",\"updatedAt\":" TIME_SCHEMA "}},"
	"\"ProjectList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Project\"}},"
	"\"ProjectCreate\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"name\"],"
	"\"properties\":{\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":{\"type\":\"string\",\"maxLength\":500}}},"
	"\"ProjectUpdate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"properties\":{\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"description\":{\"type\":\"string\",\"maxLength\":500}}},"
	"\"Environment\":{\"type\":\"object\",\"required\":[\"id\",\"projectId\",\"name\","
	"\"applicationCount\",\"createdAt\",\"updatedAt\"],\"properties\":{"
	"\"id\":" ID_SCHEMA ",\"projectId\":" ID_SCHEMA ",\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"applicationCount\":{\"type\":\"integer\"},"
	"\"createdAt\":" TIME_SCHEMA ",\"updatedAt\":" TIME_SCHEMA "}},"
	"\"EnvironmentList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Environment\"}},"
	"\"EnvironmentCreate\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"name\"],"
	"\"properties\":{\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"}}}"
	"}";

const struct sw_api_route_group sw_api_projects_group = { routes, SW_ARRAY_SIZE(routes), schemas };
