/* Shared by the files of the deployment pipeline's runners (pipeline.c,
 * build_job.c, strategy.c, health_gate.c, lifecycle.c, services.c): one job's state, SQL on the runner's
 * own connection, the application's variables, runtime names, and the
 * putting back of the serving version.
 *
 * Everything here blocks and runs on a runner thread (jobs.h). */
#ifndef STEWARD_DEPLOY_PIPELINE_INTERNAL_H
#define STEWARD_DEPLOY_PIPELINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <libpq-fe.h>
#include "steward/deploy/deploy.h"
#include "steward/driver/driver.h"
#include "steward/jobs/jobs.h"
#include "steward/db/statements_runtime.h"

/* Caps of what one runner holds. */
#define SW_PL_MAX_CONTAINERS 64   /* of one application listed at once */
#define SW_PL_MAX_IMAGES 128      /* of one application listed at once */
#define SW_PL_MAX_VARIABLES 512   /* the API allows fewer */
#define SW_PL_LOCK_WAIT_MS 120000 /* for the application's runtime lock */
#define SW_PL_STOP_TIMEOUT_S 10   /* a container's graceful stop */
#define SW_PL_NAME_MAX 128        /* container names */
#define SW_PL_PROGRESS_MS 1000    /* between writes of the log's size and tail */

/* One job's state. Zeroed by sw_pl_init(), released by sw_pl_release(). */
struct sw_pl {
	struct sw_job *job;
	const struct sw_deploy_settings *s;
	struct sw_driver *driver;     /* made on first use (sw_pl_driver()) */
	struct sw_deploy_log *log;    /* the deployment's log, or NULL */
	PGresult *row;                /* rt_deployment or rt_application */
	int app;                      /* the row's first application column */
	char **env;                   /* "KEY=value" of the variables, NULL-terminated */
	size_t nenv;
	const char **secrets;         /* their values (into env): the scrub list */
	size_t nsecrets;
	bool stop_on_full;            /* the build: a full log stops the job */
	bool log_full;                /* ... and it did */
	bool locked;                  /* holds the application's runtime lock */
	char phase[16];               /* the deployment's phase as last written */
	char locked_app[37];
	uint64_t progress_ms;         /* when logByteCount and logTail were last written */
	uint64_t log_stored;          /* the log's bytes in deployment_log_chunks (migration 0027) */
};

void sw_pl_init(struct sw_pl *p, struct sw_job *job, const struct sw_deploy_settings *s);
/* Releases the lock (if held), wipes the variables, closes the log (as
 * not final: NULL), frees the row and the driver. */
void sw_pl_release(struct sw_pl *p);

/* Runs st with params (NULL entries: SQL NULL) on the job's connection.
 * The result (tuples or command done; PQclear it), or NULL with a sentence
 * in err; sqlstate (6 bytes, may be NULL) gets the SQLSTATE of a refusal
 * ("" when the connection failed). */
PGresult *sw_pl_exec(struct sw_pl *p, const struct sw_db_stmt *st, const char *const *params,
		     char *err, size_t errlen);
/* A column of the row (NULL for SQL NULL). */
const char *sw_pl_col(const struct sw_pl *p, int col);
/* An application column of the row. */
const char *sw_pl_app(const struct sw_pl *p, enum sw_db_rt_app_col col);
/* The driver of the application's server: the local driver for the local
 * server, else its remote driver (steward/driver/remote.h), which fails
 * -EHOSTUNREACH with SW_DRIVER_NOT_CONNECTED when the server's agent is not
 * connected (after waiting s->agent_reconnect_wait_ms for an agent that is
 * reconnecting: sw_driver_remote_new). */
int sw_pl_driver(struct sw_pl *p, char *err, size_t errlen);
/* The same for server_id whose is_local column reads is_local ("t"/"f";
 * NULL, unknown: never the local driver). */
int sw_pl_driver_for(struct sw_pl *p, const char *server_id, const char *is_local, char *err,
		     size_t errlen);
/* The same for the server server_id (a job's payload names it when the
 * row it acts on is gone): -EINVAL without one, -ENOENT when it was
 * deleted, each with a sentence. */
int sw_pl_driver_server(struct sw_pl *p, const char *server_id, char *err, size_t errlen);

/* Reads and unseals the application's variables into p->env and
 * p->secrets. 0, or -errno with a sentence (never a value). */
int sw_pl_variables_load(struct sw_pl *p, const char *app_id, char *err, size_t errlen);
/* Replaces every secret value in s (NUL-terminated, in place) by "***". */
void sw_pl_scrub(const struct sw_pl *p, char *s, size_t cap);

/* A line into the deployment's log (scrubbed there), or the process log
 * when the job has none. */
void sw_pl_log(struct sw_pl *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A driver log sink writing into p's log (arg: p). During the build
 * (stop_on_full), the log reaching DEPLOY_LOG_MAX_BYTES sets log_full and
 * the job's stop flag: a runaway build is stopped, and fails saying so. */
void sw_pl_log_sink(void *arg, const char *line, size_t len);

/* Writes the log's byte count and tail to the deployment's record, at
 * most once per SW_PL_PROGRESS_MS unless force: the record stays current
 * while the deployment runs. Failures are ignored (the end writes them). */
void sw_pl_log_progress(struct sw_pl *p, bool force);
/* Stores the bytes the log's file gained since the last store in
 * deployment_log_chunks, so any replica reads the whole log: called
 * wherever logByteCount is written. A failure is logged, not fatal (the
 * file on this replica stays whole). */
void sw_pl_log_store(struct sw_pl *p);

/* Failure injection (STEWARD_ENV=test, settings' fault_pause_file): when
 * the file lists point (names separated by white space), logs that it
 * pauses and waits until the file no longer lists it or the job must
 * stop. Does nothing otherwise. */
void sw_pl_fault_pause(struct sw_pl *p, const char *point);

/* Takes the application's runtime lock (a session advisory lock on the
 * job's connection), waiting up to SW_PL_LOCK_WAIT_MS while polling the
 * job's stop flag. 0, -ECANCELED (stop asked), -ETIMEDOUT, -EIO. */
int sw_pl_lock(struct sw_pl *p, const char *app_id, char *err, size_t errlen);
void sw_pl_unlock(struct sw_pl *p);

/* Whether the job was asked to stop (cancel or shutdown). */
bool sw_pl_stopping(const struct sw_pl *p);
/* Sleeps ms in short steps; false when the job was asked to stop. */
bool sw_pl_sleep(const struct sw_pl *p, unsigned ms);

/* Removes a directory tree without following links; gone is fine. */
void sw_pl_rmtree(const char *path);

/* ---- runtime names (issue 5 framework) ---- */
/* "sw-<first 12 hex of the application id>-<number>[-<colour>]". */
void sw_pl_container_name(char out[SW_PL_NAME_MAX], const char *app_id, long number,
			  const char *colour);
/* The deployment number in a container name of the application (a leading
 * '/' ignored), or -1 when the name is not one of its. */
long sw_pl_container_number(const char *name, const char *app_id);
/* Opens sealed (NULL: missing) bound to aad (a sw_seal_aad_*() string)
 * into out as a NUL-terminated string of at most cap - 1 bytes; on failure
 * out is wiped and the -errno returned. */
int sw_pl_unseal_text(const char *sealed, const char *aad, char *out, size_t cap);
/* The user name sent with a git credential's token over https (provider
 * and username as stored; username NULL: the provider's convention). */
const char *sw_pl_git_username(const char *provider, const char *username);
/* "sw-<application id>-<volume name>". */
void sw_pl_volume_name(char *out, size_t cap, const char *app_id, const char *volume);
/* "steward/<application id>:<number>". */
void sw_pl_image_tag(char out[SW_DRIVER_TAG_MAX], const char *app_id, long number);

/* Lists the application's containers (at most SW_PL_MAX_CONTAINERS) into
 * out. 0 or -errno with a sentence. */
int sw_pl_containers(struct sw_pl *p, const char *app_id, struct sw_container_info *out,
		     size_t *ret_n, char *err, size_t errlen);

/* Puts the serving version of app_id back after deployment number `failed`
 * (0: none) did not finish: removes that deployment's containers (and its
 * image image_tag when not NULL and no retained deployment shares it),
 * starts the serving deployment's containers when the application is
 * RUNNING (app_status), and routes its verified hostnames to the serving
 * port. The caller holds the runtime lock. Every step is idempotent and
 * logged; 0, or -errno with a sentence of the first failure. */
int sw_pl_restore(struct sw_pl *p, const char *app_id, const char *app_status, long failed,
		  const char *image_tag, char *err, size_t errlen);

/* The recovery of deployment `number` of app_id whose worker died in
 * FINISHING (recorded SUCCEEDED by the reaper, 0019): unless a newer
 * deployment serves already, removes every other deployment's containers,
 * applies image retention (image: its tag), then makes sure it runs (when
 * the application is RUNNING) and is routed. The caller holds the runtime
 * lock. Every step is logged; 0, or -errno with a sentence. */
int sw_pl_finish_cleanup(struct sw_pl *p, const char *app_id, const char *app_status, long number,
			 const char *image, unsigned retention, char *err, size_t errlen);

/* Removes the images of app_id other than those of its newest `keep`
 * SUCCEEDED deployments and current (the tag just deployed). Failures are
 * logged, never fatal. */
void sw_pl_retention(struct sw_pl *p, const char *app_id, unsigned keep, const char *current);

/* Removes the named volume (its data), logged when it went. 0 (gone
 * already too), -EBUSY (a container mounts it), or -errno; err holds the
 * driver's sentence. */
int sw_pl_volume_drop(struct sw_pl *p, const char *name, char *err, size_t errlen);
/* Removes app_id's volumes labelled steward.application=<app_id> whose
 * names are not among keep's named volumes (rt_volumes rows; NULL: keep
 * none), each removal logged. One still mounted (-EBUSY) is left, and
 * that is logged. 0, or -errno with a sentence of the first failure. */
int sw_pl_volumes_prune(struct sw_pl *p, const char *app_id, PGresult *keep, char *err, size_t errlen);

/* ---- health_gate.c ---- */
/* The health gate: GET http://127.0.0.1:<port><path> every second until it
 * answers expected, at most retries tries of timeout_s each; between tries
 * the container container (name) is checked to be running. 0; -ECANCELED
 * when the job was asked to stop; -ETIMEDOUT (or -ECHILD: the container
 * exited) with a sentence. */
int sw_pl_health_gate(struct sw_pl *p, unsigned port, const char *path, int expected,
		      unsigned timeout_s, unsigned retries, const char *app_id,
		      const char *container, char *err, size_t errlen);

/* ---- a deployment's steps (pipeline.c) ---- */
/* Reads the deployment job->target_id into p->row (rt_deployment;
 * p->app set). 1, 0 when it is gone (its application deleted), or -errno
 * with a sentence. */
int sw_pl_load_deployment(struct sw_pl *p, char *err, size_t errlen);
/* Moves the deployment (claimed by the job runners, 0013) from one of
 * `allowed` ("{QUEUED,BUILDING}") to status with phase, as this worker's.
 * 1: it is ours to run. 0: nothing to run: it is no longer in one of those
 * states, or its cancel was asked for (then ended CANCELLED here). -errno
 * with a sentence when the database failed. */
int sw_pl_begin(struct sw_pl *p, const char *status, const char *phase, const char *allowed,
		char *err, size_t errlen);
/* The time now as RFC 3339 with milliseconds (UTC). */
void sw_pl_now_rfc3339(char out[25]);
/* Writes phase to the deployment (and a timestamped "==> PHASE" line to
 * its log). 0; -ECANCELED when a cancel was asked for or the job must
 * stop; -ESTALE when the deployment is no longer in flight (the reaper
 * ended it, or its application was deleted); -EIO. */
int sw_pl_phase(struct sw_pl *p, const char *phase, char *err, size_t errlen);
/* Runs st, a statement on the deployment in flight returning one row
 * (cancel_requested) or none: 0, -ECANCELED, -ESTALE, -EIO as
 * sw_pl_phase(). */
int sw_pl_step(struct sw_pl *p, const struct sw_db_stmt *st, const char *const *params, char *err,
	       size_t errlen);
/* Opens the deployment's log (appending) with the variables as the scrub
 * list. 0 or -errno with a sentence. */
int sw_pl_log_open(struct sw_pl *p, char *err, size_t errlen);

/* ---- the handlers ---- */
int sw_pl_build(struct sw_job *job, void *ctx, char *err, size_t errlen);    /* build_job.c */
int sw_pl_deploy(struct sw_job *job, void *ctx, char *err, size_t errlen);   /* strategy.c */
/* lifecycle.c */
int sw_pl_recover(struct sw_job *job, void *ctx, char *err, size_t errlen);
/* application.start, .stop, .restart (the verb read from the kind) */
int sw_pl_app_lifecycle(struct sw_job *job, void *ctx, char *err, size_t errlen);
int sw_pl_app_delete(struct sw_job *job, void *ctx, char *err, size_t errlen);
int sw_pl_volume_delete(struct sw_job *job, void *ctx, char *err, size_t errlen);
/* services.c: service.start, .stop, .restart; .delete, .backup, .restore,
 * .backup_due */
int sw_pl_service_lifecycle(struct sw_job *job, void *ctx, char *err, size_t errlen);
int sw_pl_service_delete(struct sw_job *job, void *ctx, char *err, size_t errlen);
int sw_pl_service_backup(struct sw_job *job, void *ctx, char *err, size_t errlen);
int sw_pl_service_restore(struct sw_job *job, void *ctx, char *err, size_t errlen);
int sw_pl_service_backup_due(struct sw_job *job, void *ctx, char *err, size_t errlen);

/* Shared by the build and the deploy: ends the deployment (status
 * SUCCEEDED, FAILED or CANCELLED; message: the errorMessage, scrubbed
 * here, or NULL) with its log's byte count and tail, and closes the log
 * with that final status. 0 or -errno (the database failed). */
int sw_pl_end(struct sw_pl *p, const char *status, const char *message);
/* After a step failed with r (and err): CANCELLED when the deployment's
 * cancel was asked for (0); when the worker is stopping (a graceful stop,
 * or its lock lost) the deployment is left in flight for the job runners
 * to hand back to the queue (0013/0019, steward_job_abandon 'stopped'),
 * said in its log, and 1 is returned: the caller keeps what a new attempt
 * needs (the uploaded archive); else FAILED with err (0). -errno when the
 * database failed. */
int sw_pl_fail(struct sw_pl *p, int r, const char *err);

#endif
