/* Statements of managed services and their backups (statements_services.c;
 * tables in migrations 0010 and 0019). Parameters follow the resource conventions of
 * src/api/api_internal.h. */
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
	SW_DB_SERVICE_PORT,               /* on 127.0.0.1 of its server */
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
	SW_DB_SERVICE_CONNECTION_PORT,    /* on 127.0.0.1 of its server */
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
	SW_DB_SERVICE_BACKUP_SHA256,      /* hex, NULL until it succeeded */
	SW_DB_SERVICE_BACKUP_SCHEDULED_FOR, /* the due time; NULL: asked for */
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
 * weekday, $7 retention count -> the schedule; its next due time armed
 * (the "service.backup_due" job moved, or cancelled when off). */
extern const struct sw_db_stmt sw_db_stmt_service_schedule_set;

/* $1 organization, $2 service, $3 backup -> status, file_path, size_bytes,
 * sha256, the service's kind; no row: not the organization's. */
enum sw_db_service_backup_file_col {
	SW_DB_SERVICE_BACKUP_FILE_STATUS,
	SW_DB_SERVICE_BACKUP_FILE_PATH,
	SW_DB_SERVICE_BACKUP_FILE_SIZE,
	SW_DB_SERVICE_BACKUP_FILE_SHA256,
	SW_DB_SERVICE_BACKUP_FILE_KIND,
};
extern const struct sw_db_stmt sw_db_stmt_service_backup_file;
/* $1 organization, $2 service, $3 backup, $4 user, $5 client address -> the
 * "service.restore" job (the columns of sw_db_stmt_service_job), with the
 * audit record "service.backup.restore_requested" in the same
 * transaction. SW409 BACKUP_NOT_RESTORABLE, RESTORE_PENDING; no row: not
 * the organization's service or backup. */
extern const struct sw_db_stmt sw_db_stmt_service_restore_request;

/* ---- the runners' (src/deploy) ---- */
/* Columns of svc_rt_service, svc_rt_backup_begin and svc_rt_restore_load. */
enum sw_db_svc_rt_col {
	SW_DB_SVC_RT_ID,
	SW_DB_SVC_RT_NAME,
	SW_DB_SVC_RT_KIND,
	SW_DB_SVC_RT_VERSION,
	SW_DB_SVC_RT_CREDENTIALS_SEALED, /* bound to "service:<id>" */
	SW_DB_SVC_RT_SERVER_IS_LOCAL,    /* "t" / "f" */
	SW_DB_SVC_RT_PORT,
	SW_DB_SVC_RT_SERVER_ID,
	SW_DB_SVC_RT_FILE_PATH,          /* the backup's (NULL for svc_rt_service) */
	SW_DB_SVC_RT_SHA256,
};
/* ($1 service) -> zero or one row. */
extern const struct sw_db_stmt sw_db_stmt_svc_rt_service;
/* ($1 backup) -> the backup RUNNING (from QUEUED, or RUNNING again after a
 * worker was lost) with its service; no row: gone or finished. */
extern const struct sw_db_stmt sw_db_stmt_svc_rt_backup_begin;
/* ($1 backup, $2 file path, $3 size, $4 sha256 hex) -> its id when it was
 * RUNNING and is now SUCCEEDED; no row: it was not (deleted meanwhile). */
extern const struct sw_db_stmt sw_db_stmt_svc_rt_backup_succeed;
/* ($1 service) -> the files of the backups retention just removed. */
extern const struct sw_db_stmt sw_db_stmt_svc_rt_backups_retain;
/* ($1 backup, $2 service) -> the SUCCEEDED backup of the service with it. */
extern const struct sw_db_stmt sw_db_stmt_svc_rt_restore_load;
/* ($1 service, $2 due time) -> the scheduled backup made for that due
 * time, or no row (already made, or the schedule changed). */
extern const struct sw_db_stmt sw_db_stmt_svc_rt_backup_due;

#endif
