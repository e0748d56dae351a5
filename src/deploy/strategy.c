/* The deploy ("deployment.deploy"): the built (or, for a rollback, the
 * earlier) image becomes the serving version, by RECREATE or BLUE_GREEN;
 * and the putting back of the serving version when a deploy does not
 * finish (sw_pl_restore(), also the "runtime.recover" job's work).
 *
 * RECREATE (the default; always for a rollback): the application's
 * containers are stopped (not removed), the new container is created and
 * started listening on the application's port, and the health gate waits
 * for it. Passed: the verified hostnames are routed to it (no verified
 * hostname: no route, said in the log), then FINISHING removes the old
 * containers.
 * Failed: the new container (and its image, unless a rollback's) is
 * removed and the old containers are started again: RECREATE has downtime
 * on success (the seconds between stop and healthy) and on failure (until
 * the old version answers again), as the spec says.
 *
 * BLUE_GREEN, when its conditions hold (else RECREATE, said in the log with
 * the reason): not a rollback; a verified hostname (Caddy must route
 * somewhere); no volume (two colours must not share one); and free memory
 * (MemAvailable) at least DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB beyond what
 * the running version may use, taken as the application's memory limit
 * (no limit: nothing beyond the threshold; reading the engine's live
 * figure is left to the metrics issue). The new colour (the other of the
 * running one; blue first) starts on a free loopback port beside the old,
 * the health gate waits for it, Caddy's route is switched to it in one
 * request (atomic), and the old colour is stopped and removed. Failed at
 * any step: the new colour is removed and the old keeps serving untouched.
 *
 * Every container: host networking, PORT=<port> plus the variables in its
 * environment, compose-compatible labels and steward.* labels (issue 5
 * framework), the application's CPU and memory limits, its volumes
 * (named sw-<application id>-<volume> or the operator's host path), and
 * restart unless-stopped. A named volume is created with the labels
 * steward.managed and steward.application before the container mounts
 * it, so the application's volumes can be found by label: after a
 * deployment succeeds (where image retention runs), the labelled volumes
 * no longer in its list are removed (a volume deleted while the running
 * version mounted it goes then), each removal in the log.
 *
 * FINISHING is the point of no return: it begins once the new version is
 * healthy and routed, a cancel or a stop asked then comes too late, and a
 * worker that dies in it leaves a deployment the reaper records SUCCEEDED
 * (migration 0019), whose recovery finishes the clean-up
 * (sw_pl_finish_cleanup()). Before FINISHING a dead worker's deployment is
 * FAILED and its recovery puts the earlier version back (sw_pl_restore()):
 * either way what serves after a crash is a version that passed its health
 * gate, never nothing.
 *
 * The runtime lock (an advisory lock per application, pipeline.c) is held
 * from the first change to the application's containers to the end, so a
 * lifecycle job or a recovery never interleaves with a deploy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/log.h"
#include "deploy/pipeline_internal.h"

#define SW_PL_MAX_VOLUMES 64 /* of one application mounted or listed at once */
#define SW_PL_MAX_HOSTNAMES 64
#define SW_PL_ROUTE_HOSTS_MAX (SW_PL_MAX_HOSTNAMES + 1)

/* What a deploy runs with, copied out of the rows (the row of a struct
 * sw_pl is replaced when it is read again). */
struct target {
	char app_id[37];
	char app_name[64];
	char app_status[16];
	char deployment_id[37];
	long number;
	bool rollback;
	long rollback_number;
	char image[SW_DRIVER_TAG_MAX];
	unsigned app_port;
	char health_path[256];
	int health_status;
	unsigned health_timeout, health_retries, retention;
	bool want_blue_green;
	uint64_t memory_bytes, nano_cpus;
	/* the verified hostnames and the volumes */
	PGresult *hosts, *volumes;
	const char *hostnames[SW_PL_ROUTE_HOSTS_MAX];
	size_t nhosts;
};

static void target_release(struct target *t)
{
	PQclear(t->hosts);
	PQclear(t->volumes);
}

static int target_read(struct sw_pl *p, struct target *t, char *err, size_t errlen)
{
#define APP(c) sw_pl_app(p, SW_DB_RT_APP_##c)
#define DEP(c) sw_pl_col(p, SW_DB_RT_DEPLOYMENT_##c)
	snprintf(t->app_id, sizeof(t->app_id), "%s", APP(ID));
	snprintf(t->app_name, sizeof(t->app_name), "%s", APP(NAME));
	snprintf(t->app_status, sizeof(t->app_status), "%s", APP(STATUS));
	snprintf(t->deployment_id, sizeof(t->deployment_id), "%s", DEP(ID));
	t->number = atol(DEP(NUMBER));
	t->rollback = strcmp(DEP(TRIGGER), "ROLLBACK") == 0;
	t->rollback_number = DEP(ROLLBACK_NUMBER) ? atol(DEP(ROLLBACK_NUMBER)) : 0;
	snprintf(t->image, sizeof(t->image), "%s", DEP(IMAGE_TAG) ? DEP(IMAGE_TAG) : "");
	t->app_port = (unsigned)atoi(APP(PORT));
	snprintf(t->health_path, sizeof(t->health_path), "%s", APP(HEALTH_PATH));
	t->health_status = atoi(APP(HEALTH_STATUS));
	t->health_timeout = (unsigned)atoi(APP(HEALTH_TIMEOUT));
	t->health_retries = (unsigned)atoi(APP(HEALTH_RETRIES));
	t->retention = (unsigned)atoi(APP(RETENTION));
	t->want_blue_green = strcmp(APP(STRATEGY), "BLUE_GREEN") == 0;
	t->memory_bytes = APP(MEMORY_MB) ? (uint64_t)atoll(APP(MEMORY_MB)) << 20 : 0;
	t->nano_cpus = APP(CPU_MILLICORES) ? (uint64_t)atoll(APP(CPU_MILLICORES)) * 1000000u : 0;
#undef APP
#undef DEP
	const char *params[1] = { t->app_id };
	t->hosts = sw_pl_exec(p, &sw_db_stmt_rt_hostnames, params, err, errlen);
	t->volumes = t->hosts ? sw_pl_exec(p, &sw_db_stmt_rt_volumes, params, err, errlen) : NULL;
	if (!t->hosts || !t->volumes)
		return -EIO;
	int n = PQntuples(t->hosts);
	for (int i = 0; i < n && i < SW_PL_MAX_HOSTNAMES; i++)
		t->hostnames[t->nhosts++] = PQgetvalue(t->hosts, i, 0);
	t->hostnames[t->nhosts] = NULL;
	return 0;
}

/* ---- containers ---- */

/* Creates and starts the container of the deployment (colour NULL for
 * RECREATE) listening on port; its id into id. */
static int container_run(struct sw_pl *p, const struct target *t, const char *colour, unsigned port,
			 char id[SW_DRIVER_ID_MAX], char *err, size_t errlen)
{
	char name[SW_PL_NAME_MAX], port_env[32];
	sw_pl_container_name(name, t->app_id, t->number, colour);
	snprintf(port_env, sizeof(port_env), "PORT=%u", port);

	/* env: the variables (but PORT, which is Steward's to give), then PORT */
	const char **env = calloc(p->nenv + 2, sizeof(*env));
	int nv = PQntuples(t->volumes);
	if (nv > SW_PL_MAX_VOLUMES)
		nv = SW_PL_MAX_VOLUMES;
	char(*mounts)[600] = calloc((size_t)nv + 1, sizeof(*mounts));
	const char **mount_list = calloc((size_t)nv + 1, sizeof(*mount_list));
	int r = 0;
	if (!env || !mounts || !mount_list) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory.");
		goto out;
	}
	size_t ne = 0;
	for (size_t i = 0; i < p->nenv; i++) {
		if (strncmp(p->env[i], "PORT=", 5) == 0) {
			sw_pl_log(p, "The variable PORT is replaced by the port Steward gives (%u).", port);
			continue;
		}
		env[ne++] = p->env[i];
	}
	env[ne++] = port_env;
	for (int i = 0; i < nv; i++) {
		const char *vname = PQgetvalue(t->volumes, i, 0), *mount = PQgetvalue(t->volumes, i, 1);
		if (!PQgetisnull(t->volumes, i, 2)) {
			snprintf(mounts[i], sizeof(mounts[i]), "%s:%s", PQgetvalue(t->volumes, i, 2), mount);
		} else {
			char vol[200];
			sw_pl_volume_name(vol, sizeof(vol), t->app_id, vname);
			struct sw_volume_spec v = { .name = vol, .application_id = t->app_id };
			if ((r = sw_driver_volume_create(p->driver, &v, err, errlen)) != 0)
				goto out;
			snprintf(mounts[i], sizeof(mounts[i]), "%s:%s", vol, mount);
		}
		mount_list[i] = mounts[i];
		sw_pl_log(p, "Volume %s mounted at %s.", vname, mount);
	}
	char l_project[128], l_service[96], l_app[64], l_dep[64], l_colour[32];
	snprintf(l_project, sizeof(l_project), "com.docker.compose.project=%s%s%s", t->app_name,
		 colour ? "-" : "", colour ? colour : "");
	snprintf(l_service, sizeof(l_service), "com.docker.compose.service=%s", t->app_name);
	snprintf(l_app, sizeof(l_app), "steward.application=%s", t->app_id);
	snprintf(l_dep, sizeof(l_dep), "steward.deployment=%s", t->deployment_id);
	snprintf(l_colour, sizeof(l_colour), "steward.colour=%s", colour ? colour : "");
	const char *labels[] = { l_project, l_service, l_app, l_dep, "steward.managed=true",
				 colour ? l_colour : NULL, NULL };
	struct sw_container_spec spec = {
		.name = name,
		.image = t->image,
		.env = env,
		.labels = labels,
		.cmd = NULL,
		.mounts = mount_list,
		.memory_bytes = t->memory_bytes,
		.nano_cpus = t->nano_cpus,
		.port = port,
		.restart_unless_stopped = true,
	};
	sw_pl_log(p, "Creating the container %s from %s (port %u).", name, t->image, port);
	r = sw_driver_container_create(p->driver, &spec, id, err, errlen);
	if (r)
		goto out;
	r = sw_driver_container_start(p->driver, id, err, errlen);
	if (r == 0)
		sw_pl_log(p, "Started the container %s.", name);
out:
	free(env);
	free(mounts);
	free(mount_list);
	return r;
}

/* Removes a container, stopped gracefully first (graceful: an old version
 * finishing its requests) or not (a new version that did not make it);
 * failures are logged. */
static void container_drop(struct sw_pl *p, const char *id, const char *name, bool graceful)
{
	char err[256];
	if (graceful && sw_driver_container_stop(p->driver, id, SW_PL_STOP_TIMEOUT_S, err, sizeof(err)) != 0)
		sw_pl_log(p, "Stopping %s failed: %s", name, err);
	if (sw_driver_container_remove(p->driver, id, err, sizeof(err)) != 0)
		sw_pl_log(p, "Removing %s failed: %s", name, err);
	else
		sw_pl_log(p, "Removed the container %s.", name);
}

static const char *bare(const char *name)
{
	return name[0] == '/' ? name + 1 : name;
}

/* ---- routing ---- */

static int route_to(struct sw_pl *p, const char *app_id, const char *const *hosts, size_t nhosts,
		    unsigned port, char *err, size_t errlen)
{
	char upstream[32];
	snprintf(upstream, sizeof(upstream), "127.0.0.1:%u", port);
	struct sw_ingress_route route = { app_id, hosts, upstream };
	int r = sw_driver_route_set(p->driver, &route, err, errlen);
	if (r == 0) {
		char list[512] = "";
		size_t o = 0;
		for (size_t i = 0; i < nhosts && o < sizeof(list); i++)
			o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "", hosts[i]);
		sw_pl_log(p, "Caddy routes %s to %s.", list, upstream);
	}
	return r;
}

/* ---- putting the serving version back ---- */

int sw_pl_restore(struct sw_pl *p, const char *app_id, const char *app_status, long failed,
		  const char *image_tag, char *err, size_t errlen)
{
	int first = sw_pl_driver(p, err, errlen);
	if (first)
		return first;
	char e[256];
	struct sw_container_info *c = calloc(SW_PL_MAX_CONTAINERS, sizeof(*c));
	size_t n = 0;
	PGresult *serving = NULL, *hosts = NULL, *kept = NULL;
	if (!c) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	int r = sw_driver_containers_list(p->driver, app_id, c, SW_PL_MAX_CONTAINERS, &n, e, sizeof(e));
	if (r) {
		snprintf(err, errlen, "%s", e);
		first = r;
		n = 0;
	}
	for (size_t i = 0; failed > 0 && i < n; i++)
		if (sw_pl_container_number(c[i].name, app_id) == failed)
			container_drop(p, c[i].id, bare(c[i].name), false);
	if (image_tag && *image_tag) {
		const char *params[2] = { app_id, "50" };
		kept = sw_pl_exec(p, &sw_db_stmt_rt_retained, params, e, sizeof(e));
		bool keep = !kept;
		/* A build of the application queued or under way may build on
		 * this image's layers (the engine's cache): it is left to the
		 * retention of the next deployment that succeeds. The build
		 * passes the runtime lock, which the caller holds, before it
		 * starts (build_job.c), so this look cannot miss one. */
		char failed_id[37] = "";
		if (p->row && p->app == SW_DB_RT_DEPLOYMENT_APP)
			snprintf(failed_id, sizeof(failed_id), "%s", sw_pl_col(p, SW_DB_RT_DEPLOYMENT_ID));
		const char *bp[2] = { app_id, failed_id[0] ? failed_id : "00000000-0000-0000-0000-000000000000" };
		PGresult *busy = sw_pl_exec(p, &sw_db_stmt_rt_app_busy, bp, e, sizeof(e));
		if (!busy || strcmp(PQgetvalue(busy, 0, 0), "t") == 0) {
			if (!keep && sw_driver_image_exists(p->driver, image_tag))
				sw_pl_log(p, "The image %s is kept for now: another deployment of the application "
					  "is queued or under way (image retention removes it later).", image_tag);
			keep = true;
		}
		PQclear(busy);
		for (int i = 0; kept && i < PQntuples(kept); i++)
			keep = keep || strcmp(PQgetvalue(kept, i, 0), image_tag) == 0;
		if (!keep && sw_driver_image_exists(p->driver, image_tag)) {
			if (sw_driver_image_remove(p->driver, image_tag, e, sizeof(e)) == 0)
				sw_pl_log(p, "Removed the image %s of the deployment that did not finish.", image_tag);
			else
				sw_pl_log(p, "Removing the image %s failed: %s", image_tag, e);
		}
	}
	const char *params[2] = { app_id, NULL };
	serving = sw_pl_exec(p, &sw_db_stmt_rt_serving, params, e, sizeof(e));
	if (!serving || PQntuples(serving) != 1) {
		if (serving)
			sw_pl_log(p, "No earlier version to put back.");
		goto out;
	}
	long number = atol(PQgetvalue(serving, 0, SW_DB_RT_SERVING_NUMBER));
	bool running_app = app_status && strcmp(app_status, "RUNNING") == 0;
	for (size_t i = 0; running_app && i < n; i++) {
		if (sw_pl_container_number(c[i].name, app_id) != number || strcmp(c[i].state, "running") == 0)
			continue;
		r = sw_driver_container_start(p->driver, c[i].id, e, sizeof(e));
		if (r == 0) {
			sw_pl_log(p, "Started the serving version's container %s again (deployment #%ld).",
				  bare(c[i].name), number);
		} else {
			sw_pl_log(p, "Starting %s again failed: %s", bare(c[i].name), e);
			if (!first) {
				first = r;
				snprintf(err, errlen, "%s", e);
			}
		}
	}
	if (PQgetisnull(serving, 0, SW_DB_RT_SERVING_PORT))
		goto out;
	hosts = sw_pl_exec(p, &sw_db_stmt_rt_hostnames, params, e, sizeof(e));
	if (hosts && PQntuples(hosts) > 0) {
		const char *list[SW_PL_ROUTE_HOSTS_MAX];
		size_t nh = 0;
		for (int i = 0; i < PQntuples(hosts) && nh < SW_PL_MAX_HOSTNAMES; i++)
			list[nh++] = PQgetvalue(hosts, i, 0);
		list[nh] = NULL;
		r = route_to(p, app_id, list, nh, (unsigned)atoi(PQgetvalue(serving, 0, SW_DB_RT_SERVING_PORT)),
			     e, sizeof(e));
		if (r && !first) {
			first = r;
			snprintf(err, errlen, "%s", e);
		}
	}
out:
	PQclear(kept);
	PQclear(serving);
	PQclear(hosts);
	free(c);
	return first;
}

void sw_pl_retention(struct sw_pl *p, const char *app_id, unsigned keep, const char *current)
{
	char e[256], n[16];
	snprintf(n, sizeof(n), "%u", keep);
	const char *params[2] = { app_id, n };
	PGresult *kept = sw_pl_exec(p, &sw_db_stmt_rt_retained, params, e, sizeof(e));
	char(*tags)[SW_DRIVER_TAG_MAX] = calloc(SW_PL_MAX_IMAGES, sizeof(*tags));
	size_t ntags = 0;
	if (!kept || !tags ||
	    sw_driver_images_list(p->driver, app_id, tags, SW_PL_MAX_IMAGES, &ntags, e, sizeof(e)) != 0) {
		sw_pl_log(p, "Image retention skipped: the images could not be listed.");
		goto out;
	}
	for (size_t i = 0; i < ntags; i++) {
		/* current, then the newest succeeded others, keep in all */
		bool keep_it = strcmp(tags[i], current) == 0;
		unsigned counted = 1;
		for (int k = 0; !keep_it && k < PQntuples(kept) && counted < keep; k++) {
			const char *t = PQgetvalue(kept, k, 0);
			if (strcmp(t, current) == 0)
				continue;
			counted++;
			keep_it = strcmp(t, tags[i]) == 0;
		}
		if (keep_it)
			continue;
		if (sw_driver_image_remove(p->driver, tags[i], e, sizeof(e)) == 0)
			sw_pl_log(p, "Removed the image %s (beyond imageRetentionCount %u).", tags[i], keep);
		else
			sw_pl_log(p, "Removing the image %s failed: %s", tags[i], e);
	}
out:
	PQclear(kept);
	free(tags);
}

/* ---- named volumes ---- */

int sw_pl_volume_drop(struct sw_pl *p, const char *name, char *err, size_t errlen)
{
	int r = sw_driver_volume_remove(p->driver, name, err, errlen);
	if (r == 0)
		sw_pl_log(p, "Removed the volume %s.", name);
	return r;
}

/* Whether the volume name is one of the application's named volumes in
 * keep (rt_volumes rows). */
static bool kept_volume(PGresult *keep, const char *app_id, const char *name)
{
	char vol[200];
	for (int i = 0; keep && i < PQntuples(keep); i++) {
		if (!PQgetisnull(keep, i, 2))
			continue; /* a host path */
		sw_pl_volume_name(vol, sizeof(vol), app_id, PQgetvalue(keep, i, 0));
		if (strcmp(vol, name) == 0)
			return true;
	}
	return false;
}

int sw_pl_volumes_prune(struct sw_pl *p, const char *app_id, PGresult *keep, char *err, size_t errlen)
{
	char(*names)[SW_DRIVER_VOLUME_MAX] = calloc(SW_PL_MAX_VOLUMES, sizeof(*names));
	size_t n = 0;
	if (!names) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	int first = sw_driver_volumes_list(p->driver, app_id, names, SW_PL_MAX_VOLUMES, &n, err, errlen);
	for (size_t i = 0; first == 0 && i < n; i++) {
		char e[256];
		if (kept_volume(keep, app_id, names[i]))
			continue;
		int r = sw_pl_volume_drop(p, names[i], e, sizeof(e));
		if (r == -EBUSY) {
			sw_pl_log(p, "The volume %s is still mounted by a container: it is left for now.", names[i]);
		} else if (r) {
			sw_pl_log(p, "Removing the volume %s failed: %s", names[i], e);
			first = r;
			snprintf(err, errlen, "%s", e);
		}
	}
	free(names);
	return first;
}

/* ---- the end of a deploy ---- */

/* FINISHING's work: the containers of every other deployment go (the old
 * version, stopped gracefully), then image retention and the volumes no
 * longer listed (volumes NULL: left for the next deployment). Each step
 * is idempotent and logged; failures are logged, never fatal: the new
 * version serves already. */
static void finish_cleanup(struct sw_pl *p, const char *app_id, long number, const char *image,
			   unsigned retention, PGresult *volumes, const struct sw_container_info *c,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sw_pl_container_number(c[i].name, app_id) != number)
			container_drop(p, c[i].id, bare(c[i].name), true);
	sw_pl_retention(p, app_id, retention, image);
	char ve[256];
	if (volumes && sw_pl_volumes_prune(p, app_id, volumes, ve, sizeof(ve)) != 0)
		sw_pl_log(p, "Volume clean-up was not complete: %s", ve);
}

int sw_pl_finish_cleanup(struct sw_pl *p, const char *app_id, const char *app_status, long number,
			 const char *image, unsigned retention, char *err, size_t errlen)
{
	char e[256];
	const char *params[2] = { app_id, NULL };
	PGresult *serving = sw_pl_exec(p, &sw_db_stmt_rt_serving, params, e, sizeof(e));
	if (!serving) {
		snprintf(err, errlen, "%s", e);
		return -EIO;
	}
	long now = PQntuples(serving) == 1 ? atol(PQgetvalue(serving, 0, SW_DB_RT_SERVING_NUMBER)) : 0;
	PQclear(serving);
	if (now != number) {
		sw_pl_log(p, "Recovery: deployment #%ld serves now, not this one: nothing of this "
			  "deployment's clean-up is left to do.", now);
		return 0;
	}
	struct sw_container_info *c = calloc(SW_PL_MAX_CONTAINERS, sizeof(*c));
	size_t n = 0;
	if (!c) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	int r = sw_pl_containers(p, app_id, c, &n, err, errlen);
	if (r == 0) {
		finish_cleanup(p, app_id, number, image, retention, NULL, c, n);
		/* It serves: started (if the application runs) and routed. */
		r = sw_pl_restore(p, app_id, app_status, 0, NULL, err, errlen);
	}
	free(c);
	return r;
}

/* ---- the deploy ---- */

/* Why BLUE_GREEN cannot run (a sentence for the log), or NULL. */
static const char *blue_green_refusal(struct sw_pl *p, const struct target *t, char *buf, size_t cap)
{
	if (t->rollback)
		return "the deployment is a rollback";
	if (t->nhosts == 0)
		return "the application has no verified hostname";
	if (PQntuples(t->volumes) > 0)
		return "the application has a volume (two colours must not share one)";
	uint64_t avail = 0;
	int r = sw_driver_memory_available(p->driver, &avail);
	if (r) {
		snprintf(buf, cap, "the server's free memory could not be read (%s)", strerror(-r));
		return buf;
	}
	uint64_t need = (p->s->blue_green_min_free_mb << 20) + t->memory_bytes;
	if (avail < need) {
		snprintf(buf, cap,
			 "free memory (%llu MB) is below DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB (%llu MB) "
			 "beyond what the running version may use (%llu MB)",
			 (unsigned long long)(avail >> 20), (unsigned long long)p->s->blue_green_min_free_mb,
			 (unsigned long long)(t->memory_bytes >> 20));
		return buf;
	}
	return NULL;
}

/* The colour of the running version's containers ("" when none has one). */
static const char *running_colour(const struct sw_container_info *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].state, "running") == 0 && c[i].colour[0])
			return c[i].colour;
	return "";
}

static int started(struct sw_pl *p, const char *strategy, const char *colour, unsigned port,
		   char *err, size_t errlen)
{
	char ps[16];
	snprintf(ps, sizeof(ps), "%u", port);
	const char *params[4] = { p->job->target_id, strategy, colour, ps };
	return sw_pl_step(p, &sw_db_stmt_rt_started, params, err, errlen);
}

int sw_pl_deploy(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	struct target t;
	memset(&t, 0, sizeof(t));
	struct sw_container_info *old = NULL;
	size_t nold = 0;
	char newid[SW_DRIVER_ID_MAX] = "", why_buf[256];
	bool touched = false;
	int r = sw_pl_load_deployment(&p, err, errlen);
	if (r <= 0)
		goto out;
	r = sw_pl_begin(&p, "DEPLOYING", "STARTING", "{QUEUED,DEPLOYING}", err, errlen);
	if (r <= 0)
		goto out;
	if ((r = sw_pl_load_deployment(&p, err, errlen)) <= 0)
		goto out;
	if ((r = target_read(&p, &t, err, errlen)) != 0 ||
	    (r = sw_pl_variables_load(&p, t.app_id, err, errlen)) != 0 ||
	    (r = sw_pl_log_open(&p, err, errlen)) != 0 || (r = sw_pl_phase(&p, "STARTING", err, errlen)) != 0)
		goto failed;
	if (t.rollback)
		sw_pl_log(&p, "Rollback to deployment #%ld: its image %s is applied again, without a build.",
			  t.rollback_number, t.image);
	if ((r = sw_pl_driver(&p, err, errlen)) != 0)
		goto failed;
	if (!t.image[0]) {
		r = -ENOENT;
		snprintf(err, errlen, "The deployment has no image to apply.");
		goto failed;
	}
	if (!sw_driver_image_exists(p.driver, t.image)) {
		r = -ENOENT;
		snprintf(err, errlen, "The image %s is no longer on the server (removed by image retention "
			 "or by hand): deploy from the source again.", t.image);
		goto failed;
	}
	if ((r = sw_pl_lock(&p, t.app_id, err, errlen)) != 0)
		goto failed;
	old = calloc(SW_PL_MAX_CONTAINERS, sizeof(*old));
	if (!old) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory.");
		goto failed;
	}
	if ((r = sw_pl_containers(&p, t.app_id, old, &nold, err, errlen)) != 0)
		goto failed;

	bool blue_green = false;
	if (t.want_blue_green) {
		const char *no = blue_green_refusal(&p, &t, why_buf, sizeof(why_buf));
		if (no)
			sw_pl_log(&p, "BLUE_GREEN falls back to RECREATE: %s.", no);
		blue_green = !no;
	}
	const char *colour = NULL;
	unsigned port = t.app_port;
	if (blue_green) {
		colour = strcmp(running_colour(old, nold), "blue") == 0 ? "green" : "blue";
		char e[256];
		if ((r = sw_driver_free_port(p.driver, &port, e, sizeof(e))) != 0) {
			snprintf(err, errlen, "No free port was found on the server for the new colour (%s).", e);
			goto failed;
		}
		sw_pl_log(&p, "BLUE_GREEN: the %s colour starts on port %u beside the running version (found "
			  "free on the server).", colour, port);
	} else {
		sw_pl_log(&p, "RECREATE: the running version stops, then the new one starts on port %u.", port);
	}
	if ((r = started(&p, blue_green ? "BLUE_GREEN" : "RECREATE", colour, port, err, errlen)) != 0)
		goto failed;
	touched = true;
	if (!blue_green) {
		for (size_t i = 0; i < nold; i++) {
			if (strcmp(old[i].state, "running") != 0)
				continue;
			char e[256];
			if (sw_driver_container_stop(p.driver, old[i].id, SW_PL_STOP_TIMEOUT_S, e, sizeof(e)) == 0)
				sw_pl_log(&p, "Stopped the container %s.", bare(old[i].name));
			else
				sw_pl_log(&p, "Stopping %s failed: %s", bare(old[i].name), e);
		}
	}
	if ((r = container_run(&p, &t, colour, port, newid, err, errlen)) != 0)
		goto failed;
	if ((r = sw_pl_phase(&p, "HEALTH_GATE", err, errlen)) != 0)
		goto failed;
	char name[SW_PL_NAME_MAX];
	sw_pl_container_name(name, t.app_id, t.number, colour);
	r = sw_pl_health_gate(&p, port, t.health_path, t.health_status, t.health_timeout, t.health_retries,
			      t.app_id, name, err, errlen);
	if (r)
		goto failed;
	if ((r = sw_pl_phase(&p, "SWITCHING", err, errlen)) != 0)
		goto failed;
	if (t.nhosts) {
		if ((r = route_to(&p, t.app_id, t.hostnames, t.nhosts, port, err, errlen)) != 0)
			goto failed;
	} else {
		char e[256];
		sw_pl_log(&p, "No verified hostname: no route is set (the application answers on "
			  "127.0.0.1:%u only).", port);
		if (sw_driver_route_remove(p.driver, t.app_id, e, sizeof(e)) != 0)
			sw_pl_log(&p, "Removing the application's earlier route failed: %s", e);
	}
	/* The point of no return: from here on the deployment succeeds, even
	 * if this process dies (the reaper then records it SUCCEEDED and a
	 * recovery finishes the clean-up: sw_pl_finish_cleanup()). */
	if ((r = sw_pl_phase(&p, "FINISHING", err, errlen)) != 0)
		goto failed;
	finish_cleanup(&p, t.app_id, t.number, t.image, t.retention, t.volumes, old, nold);
	sw_pl_fault_pause(&p, "DONE");
	r = sw_pl_end(&p, "SUCCEEDED", NULL);
	goto out;
failed:
	if (touched && p.driver) {
		char e[256];
		sw_pl_log(&p, "Putting the running version back.");
		if (sw_pl_restore(&p, t.app_id, t.app_status, t.number, t.rollback ? NULL : t.image, e,
				  sizeof(e)) != 0)
			sw_pl_log(&p, "Putting the running version back was not complete: %s", e);
	} else if (!t.rollback && t.image[0] && p.driver && r != -ESTALE) {
		char e[256];
		if (sw_driver_image_exists(p.driver, t.image) &&
		    sw_driver_image_remove(p.driver, t.image, e, sizeof(e)) == 0)
			sw_pl_log(&p, "Removed the image %s.", t.image);
	}
	sw_pl_fail(&p, r, err);
	sw_pl_scrub(&p, err, errlen);
out:
	free(old);
	target_release(&t);
	sw_pl_release(&p);
	return r < 0 ? r : 0;
}
