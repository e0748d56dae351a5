/* Statements of projects and environments (statements_projects.c), and
 * the job statement of applications' lifecycle routes. Parameters follow
 * the resource conventions of src/api/api_internal.h. */
#ifndef STEWARD_DB_STATEMENTS_PROJECTS_H
#define STEWARD_DB_STATEMENTS_PROJECTS_H

#include "steward/db/statements.h"

/* Columns of a project row. */
enum sw_db_project_col {
	SW_DB_PROJECT_ID,
	SW_DB_PROJECT_NAME,
	SW_DB_PROJECT_DESCRIPTION,
	SW_DB_PROJECT_ENVIRONMENTS, /* a JSON array of {id, name} */
	SW_DB_PROJECT_APPLICATIONS, /* the number of applications */
	SW_DB_PROJECT_CREATED_AT,
	SW_DB_PROJECT_UPDATED_AT,
	SW_DB_PROJECT_US,           /* the cursor's microseconds */
};
extern const struct sw_db_stmt sw_db_stmt_project_create;
extern const struct sw_db_stmt sw_db_stmt_project_get;
extern const struct sw_db_stmt sw_db_stmt_project_update;
extern const struct sw_db_stmt sw_db_stmt_project_remove;
extern const struct sw_db_stmt sw_db_stmt_projects_list;

/* Columns of an environment row. */
enum sw_db_environment_col {
	SW_DB_ENVIRONMENT_ID,
	SW_DB_ENVIRONMENT_PROJECT_ID,
	SW_DB_ENVIRONMENT_NAME,
	SW_DB_ENVIRONMENT_APPLICATIONS,
	SW_DB_ENVIRONMENT_CREATED_AT,
	SW_DB_ENVIRONMENT_UPDATED_AT,
	SW_DB_ENVIRONMENT_US,
};
extern const struct sw_db_stmt sw_db_stmt_environment_create;
extern const struct sw_db_stmt sw_db_stmt_environment_get;
extern const struct sw_db_stmt sw_db_stmt_environment_update;
extern const struct sw_db_stmt sw_db_stmt_environment_remove;
extern const struct sw_db_stmt sw_db_stmt_environments_list;
extern const struct sw_db_stmt sw_db_stmt_project_exists;

#endif
