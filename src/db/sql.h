/* Pieces of SQL text shared by the resource statements (the parameter
 * conventions are in src/api/api_internal.h, "resources"). Macros over string
 * literals only: the SQL stays a constant, parameters stay bound. */
#ifndef STEWARD_DB_SQL_H
#define STEWARD_DB_SQL_H

#define SW_SQL_STR_(x) #x
#define SW_SQL_STR(x) SW_SQL_STR_(x)

/* An update's "col = <new value when the mask's i-th character (1-based)
 * is '1', else the old>"; the mask is $4 (resource update convention). */
#define SW_SQL_SET(col, i, value) \
	col " = CASE WHEN substr($4, " SW_SQL_STR(i) ", 1) = '1' THEN " value " ELSE " col " END"

/* A parameter a statement must take by convention but does not need
 * (PostgreSQL must still learn its type): "AND <this>" is always true. */
#define SW_SQL_UNUSED(p, type) "(" p "::" type " IS NULL OR true)"

/* The page of a list of rows of alias t (columns created_at and id): the
 * cursor ($4 microseconds, $5 id) and order ($6 'asc' or 'desc'), the
 * ordering and the limit ($3). Goes after the WHERE conditions. */
#define SW_SQL_PAGE(t)                                                                         \
	" AND ($4::bigint IS NULL OR CASE WHEN $6 = 'asc'"                                     \
	" THEN (" t ".created_at, " t ".id) > (steward_from_us($4::bigint), $5::uuid)"          \
	" ELSE (" t ".created_at, " t ".id) < (steward_from_us($4::bigint), $5::uuid) END)"     \
	" ORDER BY CASE WHEN $6 = 'asc' THEN " t ".created_at END,"                             \
	" CASE WHEN $6 = 'asc' THEN " t ".id END, " t ".created_at DESC, " t ".id DESC"          \
	" LIMIT $3::int"

/* A timestamp column as the API writes it, and its cursor microseconds. */
#define SW_SQL_TS(col) "steward_rfc3339(" col ")"
#define SW_SQL_US(col) "steward_us(" col ")"

/* A job row (alias j) as the API answers it, in this order: id, queue,
 * kind, status, target_type, target_id, created_at, attempts, started_at,
 * finished_at (NULL while unknown), error_message (the runner's sentence
 * of a FAILED job). src/api/resource.c sw_api_job_object writes it. */
#define SW_SQL_JOB_COLUMNS                                                                     \
	"j.id, j.queue, j.kind, j.status, j.target_type, j.target_id, " SW_SQL_TS("j.created_at") \
	", j.attempts, " SW_SQL_TS("j.started_at") ", " SW_SQL_TS("j.finished_at")               \
	", j.error_message"

/* The audit shape of a statement that queues a job and answers its row
 * (SW_SQL_JOB_COLUMNS): the record
 * is "<kind>" about the job's target, with {"jobId": ...}. */
#define SW_SQL_JOB_AUDITED                                                                     \
	(&(struct sw_db_audited){ .id_col = 5, .name_col = -1, .ncols = 6, .action_sql = "c2",  \
				  .target_type_sql = "c4",                                     \
				  .metadata_sql = "jsonb_build_object('jobId', c0)" })

/* A timestamp column as microseconds since 1970 for the server to write
 * (the API's column kind SW_API_COL_TIME, sw_rfc3339_format_ms): on a hot
 * read, PostgreSQL's to_char() per value costs more than the rest of the
 * row. date_part('epoch') is a double, about ten times cheaper than
 * steward_us()'s numeric; times a million and rounded it is the exact
 * microsecond for every instant before 2106 (half an ulp of each step
 * stays under half a microsecond), checked against steward_us() on a
 * million random instants up to 2100. A cursor keeps SW_SQL_US. */
#define SW_SQL_TS_US(col) "(date_part('epoch', " col ") * 1000000)::int8"

#endif
