/* The live log stream of a deployment (live_log.c), for the route GET
 * /deployments/:id/live and for the tests and the benchmark that drive it
 * with a writer of their own (no test-only route exists in the server). */
#ifndef STEWARD_DEPLOY_LIVE_LOG_H
#define STEWARD_DEPLOY_LIVE_LOG_H

#include <libpq-fe.h>
#include "steward/http/http.h"

/* Answers a status poll: status NULL when the deployment is gone;
 * error_message NULL when it has none. */
typedef void (*sw_deploy_live_status_cb)(void *arg, const char *status, const char *error_message);

/* What the stream needs to know of the deployment. */
struct sw_deploy_live_source {
	const char *deployment_id; /* a UUID */
	const char *data_dir;      /* its log is data_dir/logs/<id>.log */
	const char *status;        /* its status now */
	const char *error_message; /* NULL: none */
	uint64_t log_bytes;        /* its logByteCount now: without the file here (another
				    * replica's runner writes it), the stored copy is read up
				    * to there (deployment_log_chunks); polls move it on */
	/* How a stream that polls (no writer of the log in this process) asks
	 * for the status: calls done(arg, ...) once, on the loop, now or later.
	 * NULL: the database, as the caller's organization. */
	void (*poll)(const char *deployment_id, sw_deploy_live_status_cb done, void *arg);
};

/* The bytes of a deployment_log_read row (the stored copy of a log):
 * *ret (free with PQfreemem; NULL with *n 0 when none) and *n. -ENOMEM. */
int sw_deploy_log_stored_bytes(const PGresult *res, unsigned char **ret, size_t *n);

/* Streams the deployment's log to req as Server-Sent Events (see the
 * route's description in src/api/deployment_logs.c): what is in the file from the
 * request's Last-Event-ID on, then live chunks from the hub (or, without a
 * writer in this process, the file polled every SW_DEPLOY_LOG_POLL_MS; no
 * file here: the copy stored in the database, up to the row's
 * logByteCount),
 * then the "status" event, and the stream ends. Answers req itself (503
 * SERVICE_UNAVAILABLE past SW_SSE_MAX_READERS readers of one deployment). */
void sw_deploy_live_start(struct sw_http_request *req, const struct sw_deploy_live_source *src);

#endif
