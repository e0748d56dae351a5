/* The jobs of managed services (target: the service).
 *
 *   service.start, .stop, .restart  one container "sw-svc-<first 12 hex of
 *        the service id>", made anew at each start or restart (the data
 *        stays in its volume), from the kind's image at the service's version
 *        (postgres:<v>, mysql:<v>, redis:<v>), host networking, listening
 *        on 127.0.0.1 only, on the port the database gave the service on
 *        its server (services.port, migration 0020), told through the
 *        exec-form command (postgres -p, mysqld --port: no shell); its
 *        credentials (bound by sw_seal_aad_service()) as the image's environment
 *        (POSTGRES_*, MYSQL_*); Redis gets port, bind, dir and requirepass
 *        in /data/steward-redis.conf (0600), written into the container
 *        before it starts, so its password is on no command line; its data
 *        in the named volume
 *        sw-svc-<service id>-data (created with the label steward.service
 *        before the container, removed by service.delete after it).
 *        Nothing is ever pulled: a server without the image fails the
 *        start with "The image ... is not present on the server and cannot
 *        be pulled".
 *   service.delete   removes the container, the data volume and the
 *        service's backup files.
 *   service.backup   (payload {backupId}) dumps the running service into
 *        <data_dir>/backups/<service id>/<backup id>.<pgdump|sql|rdb>
 *        through the driver (written under a temporary name, fsynced,
 *        renamed), then marks the backup SUCCEEDED with its size and
 *        SHA-256, then applies the retention count (the oldest rows, then
 *        their files). Any failure: FAILED with the sentence.
 *   service.restore  (payload {backupId}) checks the file against its
 *        SHA-256 and restores it into the running service.
 *   service.backup_due  (payload {dueAt}) the schedule's due time came:
 *        the database makes that due time's one backup and arms the next.
 *
 * Jobs of one service that touch its container or its data hold the
 * service's runtime lock (the advisory lock applications use, keyed by the
 * service's id), so a backup, a restore and a restart never interleave. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/deploy/service_credentials.h"
#include "steward/db/statements_services.h"
#include "deploy/pipeline_internal.h"

#define SERVICE_ALL_CONTAINERS 1024 /* listed when looking a service's up */
#define SERVICE_CREDENTIALS_MAX 1024
/* Redis's settings file, in its data directory (the official image's
 * entrypoint gives what is there to the user redis; 0600). */
#define REDIS_CONF_NAME "steward-redis.conf"
#define REDIS_CONF "/data/" REDIS_CONF_NAME

struct service_kind {
	const char *kind, *image, *data_dir, *dump_ext;
};
static const struct service_kind service_kinds[] = {
	{ "POSTGRESQL", "postgres", "/var/lib/postgresql/data", "pgdump" },
	{ "MYSQL", "mysql", "/var/lib/mysql", "sql" },
	{ "REDIS", "redis", "/data", "rdb" },
};

static const struct service_kind *service_kind(const char *kind)
{
	for (size_t i = 0; kind && i < SW_ARRAY_SIZE(service_kinds); i++)
		if (strcmp(service_kinds[i].kind, kind) == 0)
			return &service_kinds[i];
	return NULL;
}

static void service_container_name(char out[SW_PL_NAME_MAX], const char *id)
{
	snprintf(out, SW_PL_NAME_MAX, "sw-svc-%.8s%.4s", id, id + 9);
}

static const char *bare(const char *name)
{
	return name[0] == '/' ? name + 1 : name;
}

/* The container of the service named name: its id and state, or id "" when
 * there is none. */
static int service_container(struct sw_pl *p, const char *name, char id[SW_DRIVER_ID_MAX],
			     char state[24], char *err, size_t errlen)
{
	id[0] = state[0] = '\0';
	struct sw_container_info *c = calloc(SERVICE_ALL_CONTAINERS, sizeof(*c));
	size_t n = 0;
	if (!c) {
		snprintf(err, errlen, "Out of memory.");
		return -ENOMEM;
	}
	int r = sw_driver_containers_list(p->driver, NULL, c, SERVICE_ALL_CONTAINERS, &n, err, errlen);
	for (size_t i = 0; r == 0 && i < n; i++)
		if (strcmp(bare(c[i].name), name) == 0) {
			snprintf(id, SW_DRIVER_ID_MAX, "%s", c[i].id);
			snprintf(state, 24, "%s", c[i].state);
		}
	free(c);
	return r;
}

/* The credentials of the service of p's row, opened into *c (the caller
 * wipes them: sw_service_credentials_wipe()). 0, or -errno with a
 * sentence. */
static int credentials_open(struct sw_pl *p, struct sw_service_credentials *c, char *err,
			    size_t errlen)
{
	char plain[SERVICE_CREDENTIALS_MAX], aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_service(aad, sw_pl_col(p, SW_DB_SVC_RT_ID));
	int r = sw_pl_unseal_text(sw_pl_col(p, SW_DB_SVC_RT_CREDENTIALS_SEALED), aad, plain,
				  sizeof(plain));
	if (r < 0) {
		*c = (struct sw_service_credentials){ 0 };
		snprintf(err, errlen, "The service's credentials could not be opened.");
		return r;
	}
	r = sw_service_credentials_parse(plain, strlen(plain), c);
	OPENSSL_cleanse(plain, sizeof(plain));
	if (r < 0)
		snprintf(err, errlen, "The service's credentials are not in the expected form.");
	return r;
}

/* Creates the service's container from the row of p (svc_rt_service). */
static int service_create(struct sw_pl *p, const char *name, char id[SW_DRIVER_ID_MAX], char *err,
			  size_t errlen)
{
	const char *sid = sw_pl_col(p, SW_DB_SVC_RT_ID);
	const struct service_kind *k = service_kind(sw_pl_col(p, SW_DB_SVC_RT_KIND));
	unsigned port = (unsigned)atoi(sw_pl_col(p, SW_DB_SVC_RT_PORT));
	if (!k) {
		snprintf(err, errlen, "The service's kind is not one Steward runs.");
		return -EINVAL;
	}
	char image[SW_DRIVER_TAG_MAX];
	snprintf(image, sizeof(image), "%s:%s", k->image, sw_pl_col(p, SW_DB_SVC_RT_VERSION));
	if (!sw_driver_image_exists(p->driver, image)) {
		snprintf(err, errlen, "The image %s is not present on the server and cannot be pulled "
			 "(Steward never pulls images): load it on the server first.", image);
		return -ENOENT;
	}
	/* Its data volume, labelled, before anything secret is unsealed. */
	char data[128];
	snprintf(data, sizeof(data), "sw-svc-%s-data", sid);
	struct sw_volume_spec volume = { .name = data, .service_id = sid };
	int r = sw_driver_volume_create(p->driver, &volume, err, errlen);
	if (r)
		return r;
	struct sw_service_credentials cred;
	if ((r = credentials_open(p, &cred, err, errlen)) != 0)
		return r;
	/* Views into strings of the parsed JSON: each ends with a NUL. */
	const char *user = cred.username.ptr, *password = cred.password.ptr, *db = cred.database.ptr;
	char e1[256], e2[256], e3[256], e4[256], sport[16], vol[128];
	const char *env[6] = { NULL };
	const char *cmd[12] = { NULL };
	snprintf(sport, sizeof(sport), "%u", port);
	if (strcmp(k->kind, "POSTGRESQL") == 0) {
		snprintf(e1, sizeof(e1), "POSTGRES_USER=%s", user);
		snprintf(e2, sizeof(e2), "POSTGRES_PASSWORD=%s", password);
		snprintf(e3, sizeof(e3), "POSTGRES_DB=%s", db);
		snprintf(e4, sizeof(e4), "PGPORT=%u", port);
		env[0] = e1, env[1] = e2, env[2] = e3, env[3] = e4;
		cmd[0] = "postgres", cmd[1] = "-p", cmd[2] = sport, cmd[3] = "-c";
		cmd[4] = "listen_addresses=127.0.0.1";
	} else if (strcmp(k->kind, "MYSQL") == 0) {
		snprintf(e1, sizeof(e1), "MYSQL_USER=%s", user);
		snprintf(e2, sizeof(e2), "MYSQL_PASSWORD=%s", password);
		snprintf(e3, sizeof(e3), "MYSQL_DATABASE=%s", db);
		snprintf(e4, sizeof(e4), "MYSQL_ROOT_PASSWORD=%s", password);
		env[0] = e1, env[1] = e2, env[2] = e3, env[3] = e4;
		/* The X protocol's own port (33060) would clash between two; "loose": a
		 * server without the X plugin (MariaDB) starts all the same. */
		cmd[0] = "mysqld", cmd[1] = "--port", cmd[2] = sport, cmd[3] = "--bind-address=127.0.0.1";
		cmd[4] = "--loose-mysqlx=OFF";
	} else {
		/* Its settings, the password among them, in a file written into
		 * the container before it starts: never on its command line. */
		cmd[0] = "redis-server", cmd[1] = REDIS_CONF;
	}
	snprintf(vol, sizeof(vol), "sw-svc-%s-data:%s", sid, k->data_dir);
	const char *mounts[2] = { vol, NULL };
	char l_project[128], l_service[64], l_id[64];
	snprintf(l_project, sizeof(l_project), "com.docker.compose.project=%s", sw_pl_col(p, SW_DB_SVC_RT_NAME));
	snprintf(l_service, sizeof(l_service), "com.docker.compose.service=%s", k->image);
	snprintf(l_id, sizeof(l_id), "steward.service=%s", sid);
	const char *labels[] = { l_project, l_service, l_id, "steward.managed=true", NULL };
	struct sw_container_spec spec = {
		.name = name,
		.image = image,
		.env = env,
		.labels = labels,
		.cmd = cmd,
		.mounts = mounts,
		.port = port,
		.restart_unless_stopped = true,
	};
	r = sw_driver_container_create(p->driver, &spec, id, err, errlen);
	if (r == 0 && strcmp(k->kind, "REDIS") == 0) {
		char conf[512];
		int n = snprintf(conf, sizeof(conf), "port %u\nbind 127.0.0.1\ndir %s\nrequirepass %s\n",
				 port, k->data_dir, password);
		r = n > 0 && (size_t)n < sizeof(conf)
			    ? sw_driver_container_put_file(p->driver, id, k->data_dir, REDIS_CONF_NAME, conf,
							   (size_t)n, 0600, err, errlen)
			    : -E2BIG;
		OPENSSL_cleanse(conf, sizeof(conf));
		if (r) {
			char e[256];
			sw_driver_container_remove(p->driver, id, e, sizeof(e));
		}
	}
	OPENSSL_cleanse(e2, sizeof(e2));
	OPENSSL_cleanse(e4, sizeof(e4));
	sw_service_credentials_wipe(&cred);
	if (r == 0)
		sw_pl_log(p, "created the container %s from %s, listening on 127.0.0.1:%u", name, image, port);
	return r;
}

enum verb { VERB_START, VERB_STOP, VERB_RESTART };

static enum verb service_verb(const char *kind)
{
	return strcmp(kind, "service.stop") == 0      ? VERB_STOP
	       : strcmp(kind, "service.restart") == 0 ? VERB_RESTART
						      : VERB_START;
}

/* Loads the service job->target_id into p->row: 1, 0 when it is gone. */
static int load_service(struct sw_pl *p, char *err, size_t errlen)
{
	const char *params[1] = { p->job->target_id };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_svc_rt_service, params, err, errlen);
	if (!res)
		return -EIO;
	PQclear(p->row);
	p->row = res;
	return PQntuples(res) == 1 ? 1 : 0;
}

int sw_pl_service_lifecycle(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	enum verb verb = service_verb(job->kind);
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	char name[SW_PL_NAME_MAX], id[SW_DRIVER_ID_MAX], state[24];
	int r = load_service(&p, err, errlen);
	if (r <= 0)
		goto out; /* deleted meanwhile */
	if ((r = sw_pl_driver_for(&p, sw_pl_col(&p, SW_DB_SVC_RT_SERVER_ID),
				   sw_pl_col(&p, SW_DB_SVC_RT_SERVER_IS_LOCAL), err, errlen)) != 0 ||
	    (r = sw_pl_lock(&p, job->target_id, err, errlen)) != 0)
		goto out;
	service_container_name(name, job->target_id);
	if ((r = service_container(&p, name, id, state, err, errlen)) != 0)
		goto out;
	if (verb != VERB_START && id[0] && strcmp(state, "running") == 0) {
		if ((r = sw_driver_container_stop(p.driver, id, SW_PL_STOP_TIMEOUT_S, err, errlen)) != 0)
			goto out;
		sw_pl_log(&p, "stopped the container %s", name);
	}
	/* A container that is (re)started is made anew from the service's row
	 * (its data stays in the volume): the version, the port and the
	 * credentials it runs with are always the recorded ones, also for a
	 * container an older Steward made on the kind's fixed port. */
	if (verb != VERB_STOP && (verb == VERB_RESTART || strcmp(state, "running") != 0)) {
		if (id[0]) {
			if ((r = sw_driver_container_remove(p.driver, id, err, errlen)) != 0)
				goto out;
			id[0] = '\0';
		}
		if ((r = service_create(&p, name, id, err, errlen)) != 0 ||
		    (r = sw_driver_container_start(p.driver, id, err, errlen)) != 0)
			goto out;
		sw_pl_log(&p, "started the container %s", name);
	}
	const char *params[2] = { job->target_id, verb == VERB_STOP ? "STOPPED" : "RUNNING" };
	PGresult *res = sw_pl_exec(&p, &sw_db_stmt_rt_service_status, params, err, errlen);
	r = res ? 0 : -EIO;
	PQclear(res);
out:
	sw_pl_release(&p);
	return r < 0 ? r : 0;
}

/* <data_dir>/backups/<service id> */
static void backups_dir(const struct sw_pl *p, const char *service_id, char *out, size_t cap)
{
	snprintf(out, cap, "%s/backups/%s", p->s->data_dir, service_id);
}

int sw_pl_service_delete(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	char name[SW_PL_NAME_MAX], id[SW_DRIVER_ID_MAX], state[24];
	service_container_name(name, job->target_id);
	json_t *payload = json_loads(job->payload ? job->payload : "{}", 0, NULL);
	int r = sw_pl_driver_server(&p, json_string_value(json_object_get(payload, "serverId")), err,
				    errlen);
	json_decref(payload);
	if (r == 0)
		r = service_container(&p, name, id, state, err, errlen);
	if (r == 0 && id[0]) {
		r = sw_driver_container_remove(p.driver, id, err, errlen);
		if (r == 0)
			sw_pl_log(&p, "removed the container %s", name);
	}
	if (r == 0) {
		char vol[128];
		snprintf(vol, sizeof(vol), "sw-svc-%s-data", job->target_id);
		r = sw_pl_volume_drop(&p, vol, err, errlen);
	}
	if (r == 0) {
		char dir[PATH_MAX];
		backups_dir(&p, job->target_id, dir, sizeof(dir));
		sw_pl_rmtree(dir);
	}
	sw_pl_release(&p);
	return r;
}

/* ---- backups and restores ---- */

/* The driver, the lock and the running container of the service of p's
 * row, and its target (credentials opened into *cred: the caller wipes
 * them, also on failure). */
static int service_target(struct sw_pl *p, const char *what, char container[SW_DRIVER_ID_MAX],
			  struct sw_service_target *t, struct sw_service_credentials *cred,
			  char *err, size_t errlen)
{
	const char *sid = sw_pl_col(p, SW_DB_SVC_RT_ID);
	const struct service_kind *k = service_kind(sw_pl_col(p, SW_DB_SVC_RT_KIND));
	char name[SW_PL_NAME_MAX], state[24];
	*cred = (struct sw_service_credentials){ 0 };
	int r;
	if (!k) {
		snprintf(err, errlen, "The service's kind is not one Steward runs.");
		return -EINVAL;
	}
	if ((r = sw_pl_driver_for(p, sw_pl_col(p, SW_DB_SVC_RT_SERVER_ID),
				   sw_pl_col(p, SW_DB_SVC_RT_SERVER_IS_LOCAL), err, errlen)) != 0 ||
	    (r = sw_pl_lock(p, sid, err, errlen)) != 0)
		return r;
	service_container_name(name, sid);
	if ((r = service_container(p, name, container, state, err, errlen)) != 0)
		return r;
	if (!container[0] || strcmp(state, "running") != 0) {
		snprintf(err, errlen, "The service is not running: start it before %s.", what);
		return -EAGAIN;
	}
	if ((r = credentials_open(p, cred, err, errlen)) != 0)
		return r;
	*t = (struct sw_service_target){
		.container = container,
		.kind = k->kind,
		.port = (unsigned)atoi(sw_pl_col(p, SW_DB_SVC_RT_PORT)),
		.database = cred->database.ptr,
		.username = cred->username.ptr,
		.password = cred->password.ptr,
		.data_dir = k->data_dir,
	};
	return 0;
}

/* mkdir -p of the service's backup directory (0700: dumps hold the data). */
static int make_dirs(const char *dir, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", dir);
	for (char *s = path + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			int e = errno;
			snprintf(err, errlen, "The backup directory %s cannot be made: %s.", path, strerror(e));
			return -e;
		}
		if (!c)
			return 0;
		*s = c;
	}
}

/* Sentence case and a full stop for a driver's sentence after prefix. */
static void sentence(char *err, size_t errlen, const char *prefix)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", err);
	size_t n = strlen(tmp);
	while (n && (tmp[n - 1] == '.' || tmp[n - 1] == ' '))
		tmp[--n] = '\0';
	snprintf(err, errlen, "%s%s.", prefix, tmp);
}

static int take_backup(struct sw_pl *p, const char *backup, char *err, size_t errlen)
{
	struct sw_service_target t;
	struct sw_service_credentials cred = { 0 };
	char container[SW_DRIVER_ID_MAX], dir[PATH_MAX], path[PATH_MAX];
	const char *sid = sw_pl_col(p, SW_DB_SVC_RT_ID);
	int r = service_target(p, "taking a backup", container, &t, &cred, err, errlen);
	if (r)
		goto out;
	backups_dir(p, sid, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s.%s", dir, backup,
		 service_kind(sw_pl_col(p, SW_DB_SVC_RT_KIND))->dump_ext);
	if ((r = make_dirs(dir, err, errlen)) != 0)
		goto out;
	struct sw_service_dump dump;
	r = sw_driver_service_dump(p->driver, &t, path, p->job->stop, &dump, err, errlen);
	if (r) {
		sentence(err, errlen, "The backup failed: ");
		goto out;
	}
	char size[24];
	snprintf(size, sizeof(size), "%llu", (unsigned long long)dump.size);
	const char *params[4] = { backup, path, size, dump.sha256 };
	PGresult *res = sw_pl_exec(p, &sw_db_stmt_svc_rt_backup_succeed, params, err, errlen);
	if (!res) {
		unlink(path);
		r = -EIO;
		goto out;
	}
	if (PQntuples(res) == 0) {
		unlink(path); /* the backup (or its service) was deleted meanwhile */
		sw_pl_log(p, "backup %s was deleted while it was taken: its file is removed", backup);
	} else {
		sw_pl_log(p, "backup %s of service %s: %s bytes, SHA-256 %s", backup, sid, size, dump.sha256);
	}
	PQclear(res);
	const char *rp[1] = { sid };
	char e[256];
	res = sw_pl_exec(p, &sw_db_stmt_svc_rt_backups_retain, rp, e, sizeof(e));
	for (int i = 0; res && i < PQntuples(res); i++)
		if (!PQgetisnull(res, i, 0) && unlink(PQgetvalue(res, i, 0)) < 0 && errno != ENOENT)
			sw_pl_log(p, "the old backup file %s was not removed: %s", PQgetvalue(res, i, 0),
				  strerror(errno));
	if (!res)
		sw_pl_log(p, "the backups' retention was not applied: %s", e);
	PQclear(res);
out:
	sw_service_credentials_wipe(&cred);
	return r;
}

static const char *payload_backup(json_t *payload)
{
	const char *id = json_string_value(json_object_get(payload, "backupId"));
	return id && strlen(id) == 36 ? id : NULL;
}

int sw_pl_service_backup(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	json_t *payload = json_loads(job->payload ? job->payload : "{}", 0, NULL);
	const char *backup = payload_backup(payload);
	int r = 0;
	if (!backup) {
		snprintf(err, errlen, "The job names no backup.");
		r = -EINVAL;
		goto out;
	}
	const char *params[1] = { backup };
	p.row = sw_pl_exec(&p, &sw_db_stmt_svc_rt_backup_begin, params, err, errlen);
	if (!p.row) {
		r = -EIO;
		goto out;
	}
	if (PQntuples(p.row) != 1)
		goto out; /* deleted, or finished already */
	r = take_backup(&p, backup, err, errlen);
	/* Stopped by a shutdown: left RUNNING for the queue, which runs the job
	 * again (or fails it, and the backup with it: migration 0020). */
	if (r && !(r == -ECANCELED && sw_pl_stopping(&p))) {
		const char *fp[2] = { backup, err };
		char e[256];
		PQclear(sw_pl_exec(&p, &sw_db_stmt_rt_backup_fail, fp, e, sizeof(e)));
	}
out:
	json_decref(payload);
	sw_pl_release(&p);
	return r;
}

int sw_pl_service_restore(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	json_t *payload = json_loads(job->payload ? job->payload : "{}", 0, NULL);
	const char *backup = payload_backup(payload);
	struct sw_service_credentials cred = { 0 };
	struct sw_service_target t;
	char container[SW_DRIVER_ID_MAX];
	int r = -EINVAL;
	if (!backup) {
		snprintf(err, errlen, "The job names no backup.");
		goto out;
	}
	const char *params[2] = { backup, job->target_id };
	p.row = sw_pl_exec(&p, &sw_db_stmt_svc_rt_restore_load, params, err, errlen);
	if (!p.row) {
		r = -EIO;
		goto out;
	}
	if (PQntuples(p.row) != 1) {
		r = -ENOENT;
		snprintf(err, errlen, "The backup no longer exists (or did not succeed): nothing was "
			 "restored.");
		goto out;
	}
	if ((r = service_target(&p, "restoring a backup", container, &t, &cred, err, errlen)) != 0)
		goto out;
	sw_pl_log(&p, "restoring backup %s into service %s", backup, job->target_id);
	r = sw_driver_service_restore(p.driver, &t, sw_pl_col(&p, SW_DB_SVC_RT_FILE_PATH),
				      sw_pl_col(&p, SW_DB_SVC_RT_SHA256), job->stop, err, errlen);
	if (r)
		sentence(err, errlen, "The restore failed: ");
	else
		sw_pl_log(&p, "restored backup %s into service %s", backup, job->target_id);
out:
	sw_service_credentials_wipe(&cred);
	json_decref(payload);
	sw_pl_release(&p);
	return r;
}

int sw_pl_service_backup_due(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	struct sw_pl p;
	sw_pl_init(&p, job, ctx);
	json_t *payload = json_loads(job->payload ? job->payload : "{}", 0, NULL);
	const char *due = json_string_value(json_object_get(payload, "dueAt"));
	int r = 0;
	if (!due) {
		snprintf(err, errlen, "The job names no due time.");
		r = -EINVAL;
		goto out;
	}
	const char *params[2] = { job->target_id, due };
	PGresult *res = sw_pl_exec(&p, &sw_db_stmt_svc_rt_backup_due, params, err, errlen);
	if (!res)
		r = -EIO;
	else if (PQntuples(res) == 1)
		sw_pl_log(&p, "scheduled backup %s of service %s queued for %s", PQgetvalue(res, 0, 0),
			  job->target_id, due);
	PQclear(res);
out:
	json_decref(payload);
	sw_pl_release(&p);
	return r;
}
