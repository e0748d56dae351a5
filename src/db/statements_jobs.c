/* SQL of the jobs routes (statements_jobs.h): a client reads the job a 202
 * answered with, scoped to its organization like every resource. */
#include "steward/db/statements_jobs.h"
#include "db/sql.h"

const struct sw_db_stmt sw_db_stmt_job_get = {
	.name = "job_get",
	.sql = "SELECT " SW_SQL_JOB_COLUMNS
	       " FROM jobs j WHERE j.organization_id = $1::uuid AND j.id = $2::uuid",
	.nparams = 2,
	.reads_only = true,
};

static const struct sw_db_stmt *const list[] = { &sw_db_stmt_job_get };
const struct sw_db_stmt_group sw_db_jobs_statements = { list, SW_ARRAY_SIZE(list) };
