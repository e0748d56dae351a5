/* The build ("deployment.build"): the source (an uploaded archive, or a
 * clone of the git source), the plan (plan.c), the image; then the deploy
 * step is queued in the same statement that records the image.
 *
 * Decisions:
 * - Steward never pulls images. The build's base images (every FROM of the
 *   Dockerfile but earlier stages, scratch and references with a build
 *   argument) must be on the server already: a missing one fails the
 *   build before it starts, naming it (an operator loads it with docker
 *   load or pulls it on the host). Services' images alike (lifecycle.c).
 * - The log is capped (DEPLOY_LOG_MAX_BYTES): a build whose output reaches
 *   the cap is stopped (the log says it was cut) and FAILED saying so, so
 *   a runaway build cannot run on unwatched.
 * - Builds do not receive the application's variables (they are runtime
 *   configuration, and a build argument would be kept in the image's
 *   history); the containers do. Whatever the build prints is scrubbed of
 *   the values all the same.
 * - The build passes the application's runtime lock before the engine
 *   builds (takes and releases it): a recovery, which removes a failed
 *   deployment's image under that lock, never removes one this build
 *   builds on.
 *
 * Failure: the source directory and the uploaded archive are removed (the
 * archive is kept when the deployment is handed back to the queue), the
 * new image too, and the deployment ends as pipeline.c's sw_pl_fail()
 * says. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include "steward/base/limits.h"
#include "steward/base/seal.h"
#include "steward/deploy/source.h"
#include "steward/base/sshkey.h"
#include "deploy/pipeline_internal.h"

/* The whole clone, and the build context streamed to the engine. */
#define SW_PL_GIT_TIMEOUT_S 600
#define SW_PL_CONTEXT_MAX_BYTES (2ull << 30)
/* Uploaded archives, unpacked. */
#define SW_PL_ARCHIVE_MAX_BYTES (2ull << 30)
#define SW_PL_ARCHIVE_MAX_ENTRIES 200000
#define SW_PL_ARCHIVE_MAX_DEPTH 64
/* Build stages of one Dockerfile remembered by name. */
#define SW_PL_MAX_STAGES 32
/* The start command of a generated Dockerfile (exec form). */
#define SW_PL_START_COMMAND_MAX 64

/* The start command (a JSON array of strings) as a NULL-terminated argv
 * into argv (SW_PL_START_COMMAND_MAX + 1); the strings live in *ret_json
 * (json_decref() it). NULL when there is none. */
static const char *const *start_command(const char *text, json_t **ret_json, const char **argv)
{
	*ret_json = NULL;
	if (!text)
		return NULL;
	json_t *a = json_loads(text, 0, NULL);
	if (!json_is_array(a) || json_array_size(a) == 0 || json_array_size(a) > SW_PL_START_COMMAND_MAX) {
		json_decref(a);
		return NULL;
	}
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_string(v)) {
			json_decref(a);
			return NULL;
		}
		argv[i] = json_string_value(v);
	}
	argv[json_array_size(a)] = NULL;
	*ret_json = a;
	return argv;
}

/* The user name sent with a git credential's token over https: its own,
 * else its provider's convention (GitHub's x-access-token, GitLab's oauth2,
 * Bitbucket always has one, "git" for a generic host). */
const char *sw_pl_git_username(const char *provider, const char *username)
{
	if (username)
		return username;
	if (provider && strcmp(provider, "GITHUB") == 0)
		return "x-access-token";
	if (provider && strcmp(provider, "GITLAB") == 0)
		return "oauth2";
	return "git";
}

int sw_pl_unseal_text(const char *sealed, const char *aad, char *out, size_t cap)
{
	size_t len = 0;
	int r = sealed ? sw_unseal(sealed, aad, out, cap - 1, &len) : -ENOENT;
	if (r < 0)
		OPENSSL_cleanse(out, cap);
	else
		out[len] = '\0';
	return r;
}

/* Fetches the source into src: the archive, or the git source. */
static int fetch_source(struct sw_pl *p, const char *src, char *err, size_t errlen)
{
	const char *archive = sw_pl_col(p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH);
	if (archive) {
		struct sw_archive_limits lim = { SW_PL_ARCHIVE_MAX_BYTES, SW_PL_ARCHIVE_MAX_ENTRIES,
						 SW_PL_ARCHIVE_MAX_DEPTH };
		sw_pl_log(p, "Unpacking the uploaded archive.");
		int r = sw_archive_unpack(archive, src, &lim, err, errlen);
		if (r == 0)
			sw_pl_log(p, "The archive was unpacked.");
		return r;
	}
	const char *url = sw_pl_app(p, SW_DB_RT_APP_GIT_URL);
	if (!url) {
		snprintf(err, errlen, "The application has no git source: set one, or upload an archive.");
		return -ENOENT;
	}
	const char *app_id = sw_pl_app(p, SW_DB_RT_APP_ID);
	const char *cred_id = sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_ID);
	char key[SW_SSH_PRIVATE_KEY_MAX + 1], token[SW_GIT_TOKEN_MAX_LEN + 1] = "";
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_deploy_key(aad, app_id);
	int r = sw_pl_unseal_text(sw_pl_app(p, SW_DB_RT_APP_GIT_PRIVATE_KEY_SEALED), aad, key, sizeof(key));
	if (r < 0) {
		snprintf(err, errlen, "The application's deploy key could not be opened: generate a new "
			 "one (POST /applications/{id}/git-source/deploy-key).");
		return r;
	}
	if (cred_id)
		sw_seal_aad_git_credential(aad, cred_id);
	if (cred_id && (r = sw_pl_unseal_text(sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_TOKEN_SEALED),
					      aad, token, sizeof(token))) < 0) {
		OPENSSL_cleanse(key, sizeof(key));
		snprintf(err, errlen, "The git source's credential could not be opened: give it its "
			 "token again (PATCH /git-credentials/{id}).");
		return r;
	}
	const char *ref = sw_pl_col(p, SW_DB_RT_DEPLOYMENT_REQUESTED_REF);
	const char *branch = sw_pl_app(p, SW_DB_RT_APP_GIT_BRANCH);
	struct sw_git_fetch f = {
		.url = url,
		.ref = ref,
		.branch = branch,
		.private_key = key,
		.public_key = sw_pl_app(p, SW_DB_RT_APP_GIT_PUBLIC_KEY),
		.ssh_host_key = sw_pl_app(p, SW_DB_RT_APP_GIT_SSH_HOST_KEY),
		.https_username = cred_id ? sw_pl_git_username(sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_PROVIDER),
							       sw_pl_app(p, SW_DB_RT_APP_GIT_CREDENTIAL_USERNAME))
					  : NULL,
		.https_token = cred_id ? token : NULL,
		.ca_file = p->s->git_ca_file,
		.allow_file = p->s->allow_file_urls,
		.cancel = p->job->stop,
		.timeout_s = SW_PL_GIT_TIMEOUT_S,
	};
	struct sw_commit_info ci;
	memset(&ci, 0, sizeof(ci));
	sw_pl_log(p, "Cloning the repository (%s %s).", ref ? "ref" : "branch", ref ? ref : branch);
	r = sw_git_fetch(&f, src, &ci, sw_pl_log_sink, p, err, errlen);
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(token, sizeof(token));
	if (r)
		return r;
	PGresult *res;
	if (ci.host_key[0] && !f.ssh_host_key) {
		const char *hk[3] = { app_id, url, ci.host_key };
		if (!(res = sw_pl_exec(p, &sw_db_stmt_rt_host_key_learned, hk, err, errlen)))
			return -EIO;
		PQclear(res);
	}
	if (cred_id) {
		const char *cu[1] = { cred_id };
		if (!(res = sw_pl_exec(p, &sw_db_stmt_rt_credential_used, cu, err, errlen)))
			return -EIO;
		PQclear(res);
	}
	const char *nl = strchr(ci.message, '\n');
	sw_pl_log(p, "Commit %s (%s) by %s: %.*s", ci.sha, ci.ref, ci.author,
		  (int)(nl ? (size_t)(nl - ci.message) : strlen(ci.message)), ci.message);
	const char *params[5] = { p->job->target_id, ci.ref, ci.sha, ci.message, ci.author };
	res = sw_pl_exec(p, &sw_db_stmt_rt_commit, params, err, errlen);
	if (!res)
		return -EIO;
	PQclear(res);
	return 0;
}

/* Checks that every image the Dockerfile builds FROM is on the server
 * (Steward never pulls: see the file's comment). Stages named by an
 * earlier FROM ... AS, "scratch", and references with a build argument
 * ($) are left to the engine. */
static int base_images_present(struct sw_pl *p, const char *context_dir, const char *dockerfile,
			       char *err, size_t errlen)
{
	char path[PATH_MAX], line[1024], stages[SW_PL_MAX_STAGES][128];
	size_t nstages = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", context_dir, dockerfile) >= sizeof(path))
		return 0; /* the driver refuses it with its own words */
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int r = 0;
	while (r == 0 && fgets(line, sizeof(line), f)) {
		char *save = NULL, *word = strtok_r(line, " \t\r\n", &save);
		if (!word || strcasecmp(word, "FROM") != 0)
			continue;
		char *image = strtok_r(NULL, " \t\r\n", &save);
		while (image && strncmp(image, "--", 2) == 0)
			image = strtok_r(NULL, " \t\r\n", &save);
		if (!image)
			continue;
		bool stage = strcasecmp(image, "scratch") == 0 || strchr(image, '$') != NULL;
		for (size_t i = 0; !stage && i < nstages; i++)
			stage = strcasecmp(stages[i], image) == 0;
		if (!stage) {
			if (!sw_driver_image_exists(p->driver, image)) {
				snprintf(err, errlen, "The base image %s is not present on the server and is "
					 "never pulled: load it on the server, or build FROM one that is.", image);
				r = -ENOENT;
			} else {
				sw_pl_log(p, "Base image %s is present.", image);
			}
		}
		char *as = strtok_r(NULL, " \t\r\n", &save);
		char *name = as && strcasecmp(as, "AS") == 0 ? strtok_r(NULL, " \t\r\n", &save) : NULL;
		if (name && nstages < SW_PL_MAX_STAGES)
			snprintf(stages[nstages++], sizeof(stages[0]), "%s", name);
	}
	fclose(f);
	return r;
}

/* Detects the plan and builds the image tag. */
static int build_image(struct sw_pl *p, const char *src, const char *tag, char *err, size_t errlen)
{
	const char *app_id = sw_pl_app(p, SW_DB_RT_APP_ID);
	const char *context = sw_pl_app(p, SW_DB_RT_APP_BUILD_CONTEXT);
	json_t *cmd_json;
	const char *argv[SW_PL_START_COMMAND_MAX + 1];
	struct sw_app_build ab = {
		.dockerfile_path = sw_pl_app(p, SW_DB_RT_APP_DOCKERFILE_PATH),
		.build_context = context ? context : ".",
		.start_command = start_command(sw_pl_app(p, SW_DB_RT_APP_START_COMMAND), &cmd_json, argv),
		.port = (unsigned)atoi(sw_pl_app(p, SW_DB_RT_APP_PORT)),
		.base_image = p->s->base_image,
	};
	struct sw_build_plan plan;
	memset(&plan, 0, sizeof(plan));
	int r = sw_build_plan_detect(src, &ab, &plan, err, errlen);
	json_decref(cmd_json);
	if (r)
		return r;
	if (plan.generated)
		sw_pl_log(p, "No Dockerfile: building as a %s application (generated %s).", plan.stack,
			  plan.dockerfile);
	else
		sw_pl_log(p, "Building with %s.", plan.dockerfile);
	char context_dir[PATH_MAX];
	if (!context || strcmp(context, ".") == 0)
		snprintf(context_dir, sizeof(context_dir), "%s", src);
	else if ((size_t)snprintf(context_dir, sizeof(context_dir), "%s/%s", src, context) >=
		 sizeof(context_dir)) {
		snprintf(err, errlen, "The build context's path is too long.");
		return -ENAMETOOLONG;
	}
	char l_app[64], l_dep[64];
	snprintf(l_app, sizeof(l_app), "steward.application=%s", app_id);
	snprintf(l_dep, sizeof(l_dep), "steward.deployment=%s", p->job->target_id);
	const char *labels[] = { l_app, l_dep, "steward.managed=true", NULL };
	struct sw_image_build b = {
		.context_dir = context_dir,
		.dockerfile = plan.dockerfile,
		.tag = tag,
		.labels = labels,
		.cancel = p->job->stop,
		.context_max_bytes = SW_PL_CONTEXT_MAX_BYTES,
	};
	r = sw_pl_driver(p, err, errlen);
	if (r || (r = base_images_present(p, context_dir, plan.dockerfile, err, errlen)) != 0)
		return r;
	sw_pl_log(p, "Building the image %s.", tag);
	return sw_driver_image_build(p->driver, &b, sw_pl_log_sink, p, err, errlen);
}

int sw_pl_build(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	char src[PATH_MAX] = "", tag[SW_DRIVER_TAG_MAX] = "", archive_buf[PATH_MAX] = "";
	const char *archive = NULL;
	bool image_built = false;
	int r = sw_pl_load_deployment(&p, err, errlen);
	if (r <= 0)
		goto out; /* gone (its application deleted): nothing to do */
	bool upload = sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH) != NULL;
	r = sw_pl_begin(&p, "BUILDING", upload ? "UNPACKING" : "CLONING", "{QUEUED,BUILDING}", err,
			errlen);
	if (r <= 0)
		goto out;
	/* The row again: the begin may have come after a wait. */
	r = sw_pl_load_deployment(&p, err, errlen);
	if (r <= 0)
		goto out;
	if (sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH)) {
		snprintf(archive_buf, sizeof(archive_buf), "%s", sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_ARCHIVE_PATH));
		archive = archive_buf;
	}
	const char *app_id = sw_pl_app(&p, SW_DB_RT_APP_ID);
	long number = atol(sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_NUMBER));
	sw_pl_image_tag(tag, app_id, number);
	if ((r = sw_pl_variables_load(&p, app_id, err, errlen)) != 0 ||
	    (r = sw_pl_log_open(&p, err, errlen)) != 0)
		goto failed;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p.stop_on_full = true;
	sw_pl_log(&p, "Deployment #%ld of %s (%s).", number, sw_pl_app(&p, SW_DB_RT_APP_NAME),
		  sw_pl_col(&p, SW_DB_RT_DEPLOYMENT_TRIGGER));
	r = sw_pl_phase(&p, archive ? "UNPACKING" : "CLONING", err, errlen);
	if (r)
		goto failed;
	if ((r = sw_pl_driver(&p, err, errlen)) != 0)
		goto failed;
	char sources[PATH_MAX];
	snprintf(sources, sizeof(sources), "%s/sources", p.s->data_dir);
	if (mkdir(sources, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		snprintf(err, errlen, "The sources directory could not be made (%s).", strerror(errno));
		goto failed;
	}
	if ((size_t)snprintf(src, sizeof(src), "%s/%s", sources, job->target_id) >= sizeof(src)) {
		r = -ENAMETOOLONG;
		snprintf(err, errlen, "The data directory's path is too long.");
		goto failed;
	}
	sw_pl_rmtree(src); /* a crashed attempt's */
	if ((r = fetch_source(&p, src, err, errlen)) != 0)
		goto failed;
	if ((r = sw_pl_phase(&p, "BUILDING", err, errlen)) != 0)
		goto failed;
	/* A barrier, not a hold: the runtime lock taken and released before
	 * the engine builds. A recovery removes a failed deployment's image
	 * under that lock, after checking that no other deployment of the
	 * application is queued or in flight (sw_pl_restore()); this one is
	 * BUILDING already, so a recovery either saw it and kept the image,
	 * or held the lock first and is done before the build starts, and the
	 * build never loses the image (or the layers) it builds on. Holding
	 * the lock for the whole build would make lifecycle jobs wait minutes. */
	if ((r = sw_pl_lock(&p, app_id, err, errlen)) != 0)
		goto failed;
	sw_pl_unlock(&p);
	r = build_image(&p, src, tag, err, errlen);
	if (r)
		goto failed;
	image_built = true;
	sw_pl_rmtree(src);
	if (archive)
		unlink(archive);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	char when[25];
	sw_pl_now_rfc3339(when);
	sw_pl_log(&p, "Image %s built at %s (%.1f s since the build job started); the deploy is "
		  "queued.", tag, when,
		  (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	char bytes[24], *tail = malloc(SW_DEPLOY_LOG_TAIL + 1);
	if (!tail) {
		r = -ENOMEM;
		snprintf(err, errlen, "Out of memory.");
		goto failed;
	}
	sw_pl_log_store(&p);
	sw_deploy_log_tail(p.log, tail);
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)sw_deploy_log_bytes(p.log));
	const char *params[4] = { job->target_id, tag, bytes, tail };
	PGresult *res = sw_pl_exec(&p, &sw_db_stmt_rt_built, params, err, errlen);
	free(tail);
	if (!res) {
		r = -EIO;
		goto failed;
	}
	int n = PQntuples(res);
	PQclear(res);
	if (n != 1) {
		/* Cancelled, or ended by the reaper, while it built. */
		snprintf(err, errlen, "The deployment was stopped.");
		r = -ECANCELED;
		goto failed;
	}
	r = 0;
	goto out;
failed:
	if (p.log_full) {
		r = -EFBIG;
		snprintf(err, errlen, "The build's log reached DEPLOY_LOG_MAX_BYTES (%llu bytes): the build "
			 "was stopped.", (unsigned long long)p.s->log_max_bytes);
	}
	sw_pl_rmtree(src);
	if (image_built && p.driver) {
		char e[256];
		sw_driver_image_remove(p.driver, tag, e, sizeof(e));
	}
	/* Handed back to the queue (1): the next attempt unpacks the archive
	 * again. */
	if (sw_pl_fail(&p, r, err) != 1 && archive)
		unlink(archive);
	sw_pl_scrub(&p, err, errlen);
out:
	sw_pl_release(&p);
	return r < 0 ? r : 0;
}
