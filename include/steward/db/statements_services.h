/* Statements of managed services and their backups (statements_services.c;
 * tables in migration 0010). Parameters follow the resource conventions of
 * src/api/internal.h. */
#ifndef STEWARD_DB_STATEMENTS_SERVICES_H
#define STEWARD_DB_STATEMENTS_SERVICES_H

#include "steward/db/statements.h"

/* Columns of a service row (never the credentials). */
enum sw_db_service_col {
	SW_DB_SERVICE_ID,
	SW_DB_SERVICE_NAME,
	SW_DB_SERVICE_DESCRIPTION,
	SW_DB_SERVICE_KIND,
	SW_DB_SERVICE_VERSION,
	SW_DB_SERVICE_STATUS,
	SW_DB_SERVICE_PROJECT_ID,
	SW_DB_SERVICE_ENVIRONMENT_ID,
	SW_DB_SERVICE_SERVER_ID,
	SW_DB_SERVICE_CREATED_AT,
	SW_DB_SERVICE_UPDATED_AT,
	SW_DB_SERVICE_US,
};

/* create: $1 organization, $2 (unused), $3 user, $4 name, $5 description,
 * $6 kind, $7 version (NULL: the kind's default), $8 environment, $9
 * server (NULL: the local server), $10 the new id, $11 the sealed
 * credentials. SW422 on environmentId, serverId, version. */
extern const struct sw_db_stmt sw_db_stmt_service_create;
extern const struct sw_db_stmt sw_db_stmt_service_get;
/* Fields (mask order): name, description, kind, version, environmentId,
 * serverId ($5..$10; name, kind and serverId never change). */
extern const struct sw_db_stmt sw_db_stmt_service_update;
/* Deletes, cancels the service's queued jobs and queues a "service.delete"
 * lifecycle job whose payload names what the runner removes (name, kind,
 * serverId); returns id, name. */
extern const struct sw_db_stmt sw_db_stmt_service_remove;
/* Filters: $7 kind, $8 serverId, $9 projectId, $10 environmentId, $11
 * status, $12 name. */
extern const struct sw_db_stmt sw_db_stmt_services_list;
/* (organization, service) -> a row when the service is the organization's. */
extern const struct sw_db_stmt sw_db_stmt_service_exists;
/* Job statement of sw_api_job_enqueue() for a service. */
extern const struct sw_db_stmt sw_db_stmt_service_job;

/* $1 organization, $2 service, $3 user, $4 client address -> id, name,
 * kind, credentials_sealed; writes the audit record
 * "service.connection.viewed" in the same statement. */
enum sw_db_service_connection_col {
	SW_DB_SERVICE_CONNECTION_ID,
	SW_DB_SERVICE_CONNECTION_NAME,
	SW_DB_SERVICE_CONNECTION_KIND,
	SW_DB_SERVICE_CONNECTION_SEALED,
};
extern const struct sw_db_stmt sw_db_stmt_service_connection;

/* Columns of a backup row. */
enum sw_db_service_backup_col {
	SW_DB_SERVICE_BACKUP_ID,
	SW_DB_SERVICE_BACKUP_SERVICE_ID,
	SW_DB_SERVICE_BACKUP_STATUS,
	SW_DB_SERVICE_BACKUP_SIZE,        /* NULL until it succeeded */
	SW_DB_SERVICE_BACKUP_ERROR,
	SW_DB_SERVICE_BACKUP_JOB_ID,
	SW_DB_SERVICE_BACKUP_STARTED_AT,
	SW_DB_SERVICE_BACKUP_FINISHED_AT,
	SW_DB_SERVICE_BACKUP_CREATED_AT,
	SW_DB_SERVICE_BACKUP_US,
};
/* Parent: the service. Filter: $7 status. */
extern const struct sw_db_stmt sw_db_stmt_service_backups_list;
/* $1 organization, $2 service, $3 user -> the backup (new or still
 * queued); no row: not the organization's. */
extern const struct sw_db_stmt sw_db_stmt_service_backup_request;

/* Columns of a backup schedule. */
enum sw_db_service_schedule_col {
	SW_DB_SERVICE_SCHEDULE_ENABLED,
	SW_DB_SERVICE_SCHEDULE_FREQUENCY,
	SW_DB_SERVICE_SCHEDULE_HOUR,      /* NULL for HOURLY */
	SW_DB_SERVICE_SCHEDULE_WEEKDAY,   /* NULL unless WEEKLY */
	SW_DB_SERVICE_SCHEDULE_RETENTION,
	SW_DB_SERVICE_SCHEDULE_NEXT_RUN,  /* NULL when disabled */
	SW_DB_SERVICE_SCHEDULE_UPDATED_AT,
};
/* $1 organization, $2 service -> the schedule. */
extern const struct sw_db_stmt sw_db_stmt_service_schedule_get;
/* $1 organization, $2 service, $3 enabled, $4 frequency, $5 hour, $6
 * weekday, $7 retention count -> the schedule. */
extern const struct sw_db_stmt sw_db_stmt_service_schedule_set;

#endif
