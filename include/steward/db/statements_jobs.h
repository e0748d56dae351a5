/* Statements of the jobs routes (statements_jobs.c; the jobs table is in
 * migration 0007, its runners' functions in 0013). */
#ifndef STEWARD_DB_STATEMENTS_JOBS_H
#define STEWARD_DB_STATEMENTS_JOBS_H

#include "steward/db/statements.h"

/* get: $1 organization, $2 job -> the job (SW_SQL_JOB_COLUMNS); no row when
 * the job is not the organization's. */
extern const struct sw_db_stmt sw_db_stmt_job_get;

#endif
