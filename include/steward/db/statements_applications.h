/* Statements of applications and their volumes (statements_applications.c;
 * tables and functions in migrations 0007 and 0008). Parameters follow the
 * resource conventions of src/api/api_internal.h, with these additions:
 *   application_remove, volume_remove: $4 the acting user (the job's
 *       creator); they return id, name and the id of the job queued (or
 *       NULL).
 *   application_job: the job statement of sw_api_job_enqueue(). */
#ifndef STEWARD_DB_STATEMENTS_APPLICATIONS_H
#define STEWARD_DB_STATEMENTS_APPLICATIONS_H

#include "steward/db/statements.h"

/* Columns of an application row. */
enum sw_db_application_col {
	SW_DB_APPLICATION_ID,
	SW_DB_APPLICATION_NAME,
	SW_DB_APPLICATION_DESCRIPTION,
	SW_DB_APPLICATION_PROJECT_ID,
	SW_DB_APPLICATION_ENVIRONMENT_ID,
	SW_DB_APPLICATION_SERVER_ID,
	SW_DB_APPLICATION_SOURCE_KIND,
	SW_DB_APPLICATION_DOCKERFILE_PATH,     /* NULL: detect */
	SW_DB_APPLICATION_BUILD_CONTEXT,
	SW_DB_APPLICATION_START_COMMAND,       /* JSON array text, or NULL */
	SW_DB_APPLICATION_PORT,
	SW_DB_APPLICATION_HEALTH_PATH,
	SW_DB_APPLICATION_HEALTH_STATUS,
	SW_DB_APPLICATION_HEALTH_TIMEOUT,
	SW_DB_APPLICATION_HEALTH_RETRIES,
	SW_DB_APPLICATION_DEPLOY_STRATEGY,
	SW_DB_APPLICATION_IMAGE_RETENTION,
	SW_DB_APPLICATION_CPU_LIMIT,           /* NULL: none */
	SW_DB_APPLICATION_MEMORY_LIMIT,        /* NULL: none */
	SW_DB_APPLICATION_STATUS,
	SW_DB_APPLICATION_CREATED_AT,
	SW_DB_APPLICATION_UPDATED_AT,
	SW_DB_APPLICATION_US,                  /* the cursor's microseconds */
};
/* Fields (create $4.., update $5..): name, description, environmentId,
 * serverId, sourceKind, dockerfilePath, buildContext, startCommand (JSON
 * array text), port, healthCheckPath, healthCheckExpectedStatus,
 * healthCheckTimeoutSeconds, healthCheckRetries, deployStrategy,
 * imageRetentionCount, cpuLimitMillicores, memoryLimitMb. */
extern const struct sw_db_stmt sw_db_stmt_application_create;
extern const struct sw_db_stmt sw_db_stmt_application_get;
extern const struct sw_db_stmt sw_db_stmt_application_update;
extern const struct sw_db_stmt sw_db_stmt_application_remove;
/* Filters $7..$11: projectId, environmentId, serverId, status, name. */
extern const struct sw_db_stmt sw_db_stmt_applications_list;
extern const struct sw_db_stmt sw_db_stmt_application_job;

/* Columns of a volume row. */
enum sw_db_volume_col {
	SW_DB_VOLUME_ID,
	SW_DB_VOLUME_NAME,
	SW_DB_VOLUME_APPLICATION_ID,
	SW_DB_VOLUME_MOUNT_PATH,
	SW_DB_VOLUME_HOST_PATH, /* NULL: a named volume */
	SW_DB_VOLUME_CREATED_AT,
	SW_DB_VOLUME_UPDATED_AT,
	SW_DB_VOLUME_US,
};
/* Parent: the application. Fields: name, mountPath, hostPath. */
extern const struct sw_db_stmt sw_db_stmt_volume_create;
extern const struct sw_db_stmt sw_db_stmt_volume_get;
extern const struct sw_db_stmt sw_db_stmt_volume_update;
extern const struct sw_db_stmt sw_db_stmt_volume_remove;
/* Filter $7: name. */
extern const struct sw_db_stmt sw_db_stmt_volumes_list;
extern const struct sw_db_stmt sw_db_stmt_application_exists;

#endif
