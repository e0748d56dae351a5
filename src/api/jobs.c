/* GET /jobs/:id: the job a 202 answered with (application and service
 * start, stop, restart; a backup's restore), read again until it ends.
 * Those 202 answers carry "Location: /jobs/<id>" (sw_api_job_answered).
 * A job of another organization, or an id that is not a UUID, is not
 * found (404), as every :id route answers. */
#include "steward/db/statements_jobs.h"
#include "api/api_internal.h"

static const int err_get[] = { 404, 503, 0 };

static void job_get(struct sw_http_request *req)
{
	char id[37];
	if (!sw_api_path_ids(req, NULL, id))
		return;
	const char *params[2] = { req->principal.organization_id, id };
	sw_api_query(req, &sw_db_stmt_job_get, params, 2, sw_api_job_answered, req);
}

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/jobs/:id", SW_ACCESS_SESSION, job_get, 0, 0,
	  { "Get a job",
	    "The job a 202 answered with (its Location header names this path), to poll until "
	    "it ends. status: QUEUED, RUNNING, then SUCCEEDED, FAILED (errorMessage: the "
	    "runner's sentence) or CANCELLED. attempts counts the runs started; startedAt and "
	    "finishedAt are null until known." SW_API_DOC_SCOPED,
	    "Jobs", NULL, "Job", 200, err_get } },
};

const struct sw_api_route_group sw_api_jobs_group = { routes, SW_ARRAY_SIZE(routes), NULL };
