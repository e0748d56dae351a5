/* The lifecycle jobs of applications (services: services.c), and the recovery of a
 * deployment that did not finish ("runtime.recover", migration 0015): one
 * FAILED or CANCELLED in flight has what it started removed and the
 * earlier version put back; one whose worker died in FINISHING (recorded
 * SUCCEEDED by the reaper, 0019) has its clean-up finished. When its
 * worker died, recovery says in the deployment's log what happened and
 * what it did.
 *
 * Applications (target: the application):
 *   application.start    starts the serving deployment's containers;
 *                        status RUNNING
 *   application.stop     stops all the application's containers; STOPPED
 *   application.restart  stops, then starts, the serving deployment's
 *                        containers; RUNNING
 *   application.delete   (the row is gone; payload {serverId, name,
 *                        volumes}) removes its containers, its images, its
 *                        route, then its named volumes: those the payload
 *                        lists and any other labelled with the
 *                        application (host paths are never touched).
 *                        Failures to remove an image or a volume are
 *                        logged, not fatal.
 *   volume.delete        (payload {applicationId, serverId, name}) removes
 *                        the named volume sw-<application id>-<name>, under
 *                        the application's runtime lock. While the running
 *                        version still mounts it, it is left (logged) and
 *                        goes after the next successful deployment, which
 *                        removes the labelled volumes no longer listed.
 * A start of an application that has no container (never deployed, or
 * its containers removed by hand) fails: "deploy it first".
 *
 * The services' jobs are in services.c.
 *
 * Every job that changes an application's containers holds its runtime
 * lock (pipeline.c), so it never interleaves with a deploy. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "deploy/pipeline_internal.h"

static const char *bare(const char *name)
{
	return name[0] == '/' ? name + 1 : name;
}

/* Loads the application job->target_id: 1, 0 when it is gone, -errno. */
static int load_application(struct sw_pl *p, char *err, size_t errlen)
{
	const char *params[1] = { p->job->target_id };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_application, params, err, errlen);
	if (!res)
		return -EIO;
	PQclear(p->row);
	p->row = res;
	p->app = 0;
	return PQntuples(res) == 1 ? 1 : 0;
}

static int set_status(struct sw_pl *p, const struct sw_db_stmt *st, const char *id, const char *status,
		      char *err, size_t errlen)
{
	const char *params[2] = { id, status };
	PGresult *res = sw_pl_exec(p, st, params, err, errlen);
	if (!res)
		return -EIO;
	PQclear(res);
	return 0;
}

/* The number of the application's serving deployment, or 0. */
static long serving_number(struct sw_pl *p, const char *app_id)
{
	char e[256];
	const char *params[2] = { app_id, NULL };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_rt_serving, params, e, sizeof(e));
	long n = res && PQntuples(res) == 1 ? atol(PQgetvalue(res, 0, SW_DB_RT_SERVING_NUMBER)) : 0;
	PQclear(res);
	return n;
}

enum verb { VERB_START, VERB_STOP, VERB_RESTART };

/* The verb of a lifecycle job's kind ("application.stop": VERB_STOP). */
static enum verb verb_of(const struct sw_job *job)
{
	const char *dot = strrchr(job->kind, '.');
	const char *v = dot ? dot + 1 : "";
	return strcmp(v, "stop") == 0 ? VERB_STOP : strcmp(v, "restart") == 0 ? VERB_RESTART : VERB_START;
}

int sw_pl_app_lifecycle(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	enum verb verb = verb_of(job);
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	struct sw_container_info *c = NULL;
	size_t n = 0, done = 0;
	char app_id[37];
	int r = load_application(&p, err, errlen);
	if (r <= 0)
		goto out; /* deleted meanwhile: nothing to do */
	snprintf(app_id, sizeof(app_id), "%s", sw_pl_app(&p, SW_DB_RT_APP_ID));
	if ((r = sw_pl_driver(&p, err, errlen)) != 0 || (r = sw_pl_lock(&p, app_id, err, errlen)) != 0)
		goto out;
	c = calloc(SW_PL_MAX_CONTAINERS, sizeof(*c));
	if (!c) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory.");
		goto out;
	}
	if ((r = sw_pl_containers(&p, app_id, c, &n, err, errlen)) != 0)
		goto out;
	long serving = serving_number(&p, app_id);
	for (size_t i = 0; i < n; i++) {
		long num = sw_pl_container_number(c[i].name, app_id);
		bool is_serving = num == serving || serving == 0;
		bool running = strcmp(c[i].state, "running") == 0;
		if (verb != VERB_START && running && (verb == VERB_STOP || is_serving)) {
			r = sw_driver_container_stop(p.driver, c[i].id, SW_PL_STOP_TIMEOUT_S, err, errlen);
			if (r)
				goto out;
			sw_pl_log(&p, "stopped the container %s", bare(c[i].name));
		}
		if (verb != VERB_STOP && is_serving) {
			if (verb == VERB_START && running) {
				done++;
				continue;
			}
			r = sw_driver_container_start(p.driver, c[i].id, err, errlen);
			if (r)
				goto out;
			sw_pl_log(&p, "started the container %s", bare(c[i].name));
		}
		done++;
	}
	if (verb != VERB_STOP && done == 0) {
		r = -ENOENT;
		snprintf(err, errlen, "The application has no container on the server: deploy it first.");
		goto out;
	}
	r = set_status(&p, &sw_db_stmt_rt_application_status, app_id,
		       verb == VERB_STOP ? "STOPPED" : "RUNNING", err, errlen);
out:
	free(c);
	sw_pl_release(&p);
	return r;
}

int sw_pl_app_delete(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	const char *app_id = job->target_id;
	json_t *payload = json_loads(job->payload ? job->payload : "{}", 0, NULL);
	struct sw_container_info *c = NULL;
	char(*tags)[SW_DRIVER_TAG_MAX] = NULL;
	size_t n = 0;
	/* On the server the application was on (named by the payload, its row
	 * being gone), through that server's driver only. */
	int r = sw_pl_driver_server(&p, json_string_value(json_object_get(payload, "serverId")), err,
				    errlen);
	if (r || (r = sw_pl_lock(&p, app_id, err, errlen)) != 0)
		goto out;
	c = calloc(SW_PL_MAX_CONTAINERS, sizeof(*c));
	tags = calloc(SW_PL_MAX_IMAGES, sizeof(*tags));
	if (!c || !tags) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory.");
		goto out;
	}
	if ((r = sw_driver_containers_list(p.driver, app_id, c, SW_PL_MAX_CONTAINERS, &n, err, errlen)) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if ((r = sw_driver_container_remove(p.driver, c[i].id, err, errlen)) != 0)
			goto out;
		sw_pl_log(&p, "removed the container %s", bare(c[i].name));
	}
	if ((r = sw_driver_route_remove(p.driver, app_id, err, errlen)) != 0)
		goto out;
	if ((r = sw_driver_images_list(p.driver, app_id, tags, SW_PL_MAX_IMAGES, &n, err, errlen)) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		char e[256];
		if (sw_driver_image_remove(p.driver, tags[i], e, sizeof(e)) == 0)
			sw_pl_log(&p, "removed the image %s", tags[i]);
		else
			sw_pl_log(&p, "the image %s was not removed: %s", tags[i], e);
	}
	/* Its named volumes: those the payload names (a volume made before
	 * volumes were labelled has only its name), then any other carrying
	 * its label. */
	size_t k;
	json_t *v;
	json_array_foreach(json_object_get(payload, "volumes"), k, v) {
		char vol[200], e[256];
		if (!json_string_value(v))
			continue;
		sw_pl_volume_name(vol, sizeof(vol), app_id, json_string_value(v));
		if (sw_pl_volume_drop(&p, vol, e, sizeof(e)) != 0)
			sw_pl_log(&p, "the volume %s was not removed: %s", vol, e);
	}
	char e[256];
	if (sw_pl_volumes_prune(&p, app_id, NULL, e, sizeof(e)) != 0)
		sw_pl_log(&p, "the application's volumes were not all removed: %s", e);
out:
	json_decref(payload);
	free(c);
	free(tags);
	sw_pl_release(&p);
	return r;
}

int sw_pl_volume_delete(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	json_t *payload = json_loads(job->payload ? job->payload : "{}", 0, NULL);
	const char *app = json_string_value(json_object_get(payload, "applicationId"));
	const char *name = json_string_value(json_object_get(payload, "name"));
	char vol[200];
	int r = 0;
	if (!app || !name) {
		r = -EINVAL;
		snprintf(err, errlen, "The job names no volume.");
		goto out;
	}
	sw_pl_volume_name(vol, sizeof(vol), app, name);
	/* Under the runtime lock: a deploy never mounts it while it goes. */
	if ((r = sw_pl_driver_server(&p, json_string_value(json_object_get(payload, "serverId")), err,
				     errlen)) != 0 ||
	    (r = sw_pl_lock(&p, app, err, errlen)) != 0)
		goto out;
	r = sw_pl_volume_drop(&p, vol, err, errlen);
	if (r == -EBUSY) {
		sw_pl_log(&p, "the volume %s is still mounted by the running version: it will be removed "
			  "after the next successful deployment", vol);
		r = 0;
	}
out:
	json_decref(payload);
	sw_pl_release(&p);
	return r;
}

/* ---- the recovery of a deployment that did not finish ---- */

int sw_pl_recover(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	int r = sw_pl_load_deployment(&p, err, errlen);
	if (r <= 0)
		goto out; /* its application was deleted: application.delete cleans up */
	const char *status = sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_STATUS);
	/* SUCCEEDED: recorded so by the reaper, its worker having died in
	 * FINISHING (0019): the new version serves, its clean-up is left. */
	bool finishing = strcmp(status, "SUCCEEDED") == 0;
	if (!finishing && strcmp(status, "FAILED") != 0 && strcmp(status, "CANCELLED") != 0)
		goto out;
	char app_id[37], app_status[16], image[SW_DRIVER_TAG_MAX] = "", why[300] = "";
	snprintf(app_id, sizeof(app_id), "%s", sw_pl_app(&p, SW_DB_RT_APP_ID));
	snprintf(app_status, sizeof(app_status), "%s", sw_pl_app(&p, SW_DB_RT_APP_STATUS));
	long number = atol(sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_NUMBER));
	unsigned retention = (unsigned)atoi(sw_pl_app(&p, SW_DB_RT_APP_RETENTION));
	bool rollback = strcmp(sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_TRIGGER), "ROLLBACK") == 0;
	const char *error = sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ERROR_MESSAGE);
	/* A worker that died: nobody else says in the deployment's log what
	 * happened and what recovery did, so recovery does (a deployment its
	 * runner ended has its log closed, and that runner put things back). */
	bool reaped = finishing || (error && strncmp(error, "the worker ", 11) == 0);
	if (reaped)
		snprintf(why, sizeof(why), "%s", finishing ? "" : error);
	/* The deployment's own image: recorded, or the tag its build gives
	 * (a build cut short may have made it without recording it). */
	if (finishing && sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_IMAGE_TAG))
		snprintf(image, sizeof(image), "%s", sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_IMAGE_TAG));
	else if (!rollback)
		sw_pl_image_tag(image, app_id, number);
	/* What a build cut short by a crash left on disk. */
	char src[PATH_MAX];
	snprintf(src, sizeof(src), "%s/sources/%s", p.s->data_dir, job->target_id);
	sw_pl_rmtree(src);
	if (!finishing && sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH))
		unlink(sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH));
	if ((r = sw_pl_driver(&p, err, errlen)) != 0)
		goto out;
	/* Its lines name containers, images and the engine's answers, never a
	 * variable's value: the log is opened without a scrub list (no
	 * unsealing here). A log that cannot be opened (a full disk) never
	 * stops a recovery: its lines go to the process log instead. */
	char le[256];
	if (reaped && sw_pl_log_open(&p, le, sizeof(le)) != 0)
		sw_log_warn("recovery of deployment %s: %s", job->target_id, le);
	sw_pl_fault_pause(&p, "RECOVER");
	if ((r = sw_pl_lock(&p, app_id, err, errlen)) != 0)
		goto out;
	if (finishing) {
		sw_pl_log(&p, "Recovery: the worker restarted while the deployment was finishing. The new "
			  "version had passed its health gate and Caddy routed to it, so the deployment "
			  "is recorded SUCCEEDED; recovery finishes its clean-up.");
		r = sw_pl_finish_cleanup(&p, app_id, app_status, number, image, retention, err, errlen);
	} else {
		if (reaped)
			sw_pl_log(&p, "Recovery: %s. What the deployment started is removed and the version "
				  "that served before is put back.", why);
		r = sw_pl_restore(&p, app_id, app_status, number, rollback ? NULL : image, err, errlen);
	}
	if (reaped) {
		if (r == 0)
			sw_pl_log(&p, "Recovery done: the application's serving version runs and is routed.");
		else
			sw_pl_log(&p, "Recovery was not complete: %s", err);
		sw_log_info("recovery of deployment %s (#%ld of application %s, %s): %s", job->target_id,
			    number, app_id, finishing ? "finished while finishing" : "failed",
			    r == 0 ? "done" : "not complete");
		sw_pl_log_progress(&p, true);
		sw_deploy_log_end(p.log, status, finishing ? NULL : error);
		p.log = NULL;
	}
out:
	sw_pl_release(&p);
	return r;
}
