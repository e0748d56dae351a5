/* The job queue against a real PostgreSQL (one scratch cluster, one fresh
 * migrated database per test): claims (FOR UPDATE SKIP LOCKED) from many
 * connections at once, the one-deployment-in-flight rule per application
 * and its arbiter (the partial unique index), the reaper of dead workers,
 * and the runner threads of src/jobs (NOTIFY wake-ups, cancel, shutdown).
 * Exits 77 when the PostgreSQL server binaries are not installed. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "steward/jobs/jobs.h"
#include "steward/db/statements_deployments.h"
#include "db_scratch.h"
#include "test_help.h"

#define JOBS_MANY 200
#define CLAIMERS 4
#define WAIT_MS 15000 /* for a runner to get somewhere (generous: sanitizer builds) */
/* A target per row of generate_series(...) i: referring to i makes the
 * function beside it run once per row, not once for the whole query. */
#define DISTINCT_TARGET "lpad(to_hex(i), 32, '0')::uuid"

static void database(const char *name, char *out, size_t outlen)
{
	scratch_cluster_start("sw-jobs");
	scratch_fresh_database(name, true, out, outlen);
}

static PGconn *connect_to(const char *ci)
{
	PGconn *c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "connect: %s", PQerrorMessage(c));
		exit(1);
	}
	return c;
}

/* The one value of a one-row query (static buffer), or NULL (printed). */
static const char *one(PGconn *c, const char *sql)
{
	static char v[4][512];
	static int k;
	PGresult *res = PQexec(c, sql);
	const char *ret = NULL;
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1) {
		k = (k + 1) % 4;
		snprintf(v[k], sizeof(v[k]), "%s", PQgetisnull(res, 0, 0) ? "(null)" : PQgetvalue(res, 0, 0));
		ret = v[k];
	} else {
		fprintf(stderr, "  query %s: %s %s", sql, PQresStatus(PQresultStatus(res)),
			PQerrorMessage(c));
	}
	PQclear(res);
	return ret;
}

static bool run(PGconn *c, const char *sql)
{
	PGresult *res = PQexec(c, sql);
	bool ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
	if (!ok)
		fprintf(stderr, "  %s: %s", sql, PQerrorMessage(c));
	PQclear(res);
	return ok;
}

/* A query with %s pieces (ids only, never client text) into one value. */
static const char *onef(PGconn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *onef(PGconn *c, const char *fmt, ...)
{
	char sql[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return one(c, sql);
}

/* An organization with its local server; its id into org. */
static void make_org(PGconn *c, char org[37])
{
	snprintf(org, 37, "%s", one(c, "INSERT INTO organizations (name) VALUES ('Jobs') RETURNING id"));
}

/* An application of org named name; its id into app. */
static void make_app(PGconn *c, const char *org, const char *name, char app[37])
{
	const char *p = onef(c, "INSERT INTO projects (organization_id, name) VALUES ('%s', '%s') "
			     "RETURNING id", org, name);
	char project[37];
	snprintf(project, sizeof(project), "%s", p);
	const char *e = onef(c, "INSERT INTO environments (organization_id, project_id, name) "
			     "VALUES ('%s', '%s', 'production') RETURNING id", org, project);
	char env[37];
	snprintf(env, sizeof(env), "%s", e);
	snprintf(app, 37, "%s", onef(c, "INSERT INTO applications (organization_id, project_id, "
				     "environment_id, server_id, name) SELECT '%s', '%s', '%s', s.id, '%s' "
				     "FROM servers s WHERE s.organization_id = '%s' AND s.is_local "
				     "RETURNING id", org, project, env, name, org));
}

/* A QUEUED MANUAL deployment of app and its build job; its id into dep. */
static void make_deployment(PGconn *c, const char *org, const char *app, char dep[37])
{
	snprintf(dep, 37, "%s", onef(c, "SELECT id FROM steward_deployment_create('%s', '%s', "
				     "'MANUAL', NULL, NULL, NULL, NULL)", org, app));
}

/* Claims from queue for worker; the job's id and target into the out
 * buffers (may be NULL). 1 claimed, 0 none, -1 error. */
static int claim(PGconn *c, const char *queue, const char *worker, char id[37], char target[37])
{
	const char *p[2] = { queue, worker };
	PGresult *res = PQexecParams(c, sw_db_stmt_job_claim.sql, 2, NULL, p, NULL, NULL, 0);
	int r = -1;
	if (PQresultStatus(res) == PGRES_TUPLES_OK) {
		r = PQntuples(res);
		if (r == 1 && id)
			snprintf(id, 37, "%s", PQgetvalue(res, 0, SW_DB_JOB_ID));
		if (r == 1 && target)
			snprintf(target, 37, "%s", PQgetvalue(res, 0, SW_DB_JOB_TARGET_ID));
	} else {
		fprintf(stderr, "  claim: %s", PQerrorMessage(c));
	}
	PQclear(res);
	return r;
}

/* steward_job_finish; the job's status afterwards. */
static const char *finish(PGconn *c, const char *job, bool ok, const char *error)
{
	const char *p[3] = { job, ok ? "t" : "f", error };
	PGresult *res = PQexecParams(c, sw_db_stmt_job_finish.sql, 3, NULL, p, NULL, NULL, 0);
	static char status[32];
	snprintf(status, sizeof(status), "%s",
		 PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 ? PQgetvalue(res, 0, 0)
									      : "(error)");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		fprintf(stderr, "  finish: %s", PQerrorMessage(c));
	PQclear(res);
	return status;
}

static void sleep_ms(unsigned ms);

/* A registered worker whose lock c holds; its id into id. */
static void register_worker(PGconn *c, char id[37])
{
	snprintf(id, 37, "%s", one(c, "SELECT steward_worker_register('test', 1)"));
}

/* Ends the session of c (a worker dying) and waits, asking through
 * observer, until its backend is gone: only then is its lock free. */
static void close_session(PGconn *c, PGconn *observer)
{
	int pid = PQbackendPID(c);
	PQfinish(c);
	for (int i = 0; i < 400; i++) {
		const char *n = onef(observer, "SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid);
		if (n && strcmp(n, "0") == 0)
			return;
		sleep_ms(25);
	}
	fprintf(stderr, "  backend %d did not go away\n", pid);
}

static const char *dep_field(PGconn *c, const char *dep, const char *col)
{
	return onef(c, "SELECT %s FROM deployments WHERE id = '%s'", col, dep);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Polls sql until it yields want, up to WAIT_MS; true when it did. */
static bool eventually(PGconn *c, const char *sql, const char *want)
{
	for (unsigned waited = 0; waited < WAIT_MS; waited += 50) {
		const char *v = one(c, sql);
		if (v && strcmp(v, want) == 0)
			return true;
		sleep_ms(50);
	}
	fprintf(stderr, "  %s never gave %s (last: %s)\n", sql, want, one(c, sql));
	return false;
}

/* ---- claims ---- */

struct claimer {
	const char *ci;
	const char *worker;
	char (*ids)[37];
	size_t *n;
	pthread_mutex_t *lock;
	int errors;
};

static void *claim_all(void *arg)
{
	struct claimer *cl = arg;
	PGconn *c = connect_to(cl->ci);
	for (;;) {
		char id[37];
		int r = claim(c, "lifecycle", cl->worker, id, NULL);
		if (r < 0) {
			cl->errors++;
			break;
		}
		if (r == 0)
			break;
		pthread_mutex_lock(cl->lock);
		if (*cl->n < JOBS_MANY + 10)
			memcpy(cl->ids[(*cl->n)++], id, 37);
		pthread_mutex_unlock(cl->lock);
	}
	PQfinish(c);
	return NULL;
}

static int cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

TEST(each_of_200_jobs_is_claimed_exactly_once_by_4_concurrent_claimers)
{
	char ci[600], org[37];
	database("jobs_claims", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	char w[37];
	register_worker(c, w);
	char sql[512];
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM generate_series(1, %d) i, "
		 "steward_job_enqueue('%s', 'lifecycle', 'test.noop', 'thing', " DISTINCT_TARGET ", NULL, NULL)",
		 JOBS_MANY, org);
	CHECK_STR_EQ(one(c, sql), "200");
	static char ids[JOBS_MANY + 10][37];
	size_t n = 0;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct claimer cl[CLAIMERS];
	pthread_t t[CLAIMERS];
	for (int i = 0; i < CLAIMERS; i++) {
		cl[i] = (struct claimer){ ci, w, ids, &n, &lock, 0 };
		pthread_create(&t[i], NULL, claim_all, &cl[i]);
	}
	for (int i = 0; i < CLAIMERS; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT_EQ(cl[i].errors, 0);
	}
	CHECK_INT_EQ(n, JOBS_MANY);
	qsort(ids, n, 37, cmp_id);
	for (size_t i = 1; i < n; i++)
		CHECK(strcmp(ids[i - 1], ids[i]) != 0);
	CHECK_STR_EQ(onef(c, "SELECT count(*) FROM jobs WHERE status = 'RUNNING' AND attempts = 1 "
			  "AND locked_by = '%s' AND started_at IS NOT NULL", w),
		     "200");
	CHECK_INT_EQ(claim(c, "lifecycle", w, NULL, NULL), 0);
	PQfinish(c);
}

TEST(a_job_is_not_claimed_before_run_after_nor_from_another_queue)
{
	char ci[600], org[37];
	database("jobs_due", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	onef(c, "SELECT id FROM steward_job_enqueue('%s', 'lifecycle', 'test.later', 'thing', "
	     "gen_random_uuid(), NULL, NULL)", org);
	REQUIRE(run(c, "UPDATE jobs SET run_after = now() + interval '1 hour'"));
	CHECK_INT_EQ(claim(c, "lifecycle", "00000000-0000-4000-8000-000000000001", NULL, NULL), 0);
	REQUIRE(run(c, "UPDATE jobs SET run_after = now()"));
	CHECK_INT_EQ(claim(c, "build", "00000000-0000-4000-8000-000000000001", NULL, NULL), 0);
	CHECK_INT_EQ(claim(c, "lifecycle", "00000000-0000-4000-8000-000000000001", NULL, NULL), 1);
	PQfinish(c);
}

/* ---- one deployment in flight per application ---- */

TEST(a_second_deployment_of_an_application_waits_until_the_first_ends)
{
	char ci[600], org[37], app[37], app2[37], d1[37], d2[37], d3[37], job[37], target[37];
	char w[37];
	database("jobs_in_flight", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	register_worker(c, w);
	make_org(c, org);
	make_app(c, org, "web", app);
	make_app(c, org, "api", app2);
	make_deployment(c, org, app, d1);
	make_deployment(c, org, app, d2);
	make_deployment(c, org, app2, d3);

	REQUIRE(claim(c, "build", w, job, target) == 1);
	CHECK_STR_EQ(target, d1);
	CHECK_STR_EQ(dep_field(c, d1, "status"), "BUILDING");
	CHECK_STR_EQ(dep_field(c, d1, "phase"), "CLONING");
	CHECK_STR_EQ(dep_field(c, d1, "worker_id"), w);
	CHECK_STR_EQ(dep_field(c, d1, "started_at IS NOT NULL"), "t");
	/* The same application's second build waits; another's does not. */
	char job3[37];
	REQUIRE(claim(c, "build", w, job3, target) == 1);
	CHECK_STR_EQ(target, d3);
	CHECK_INT_EQ(claim(c, "build", w, NULL, NULL), 0);
	CHECK_STR_EQ(dep_field(c, d2, "status"), "QUEUED");

	/* The build ends: its deploy step is queued, still in flight. */
	CHECK_STR_EQ(finish(c, job, true, NULL), "SUCCEEDED");
	CHECK_STR_EQ(dep_field(c, d1, "status"), "BUILDING");
	CHECK_STR_EQ(onef(c, "SELECT count(*) FROM jobs WHERE target_id = '%s' AND "
			  "kind = 'deployment.deploy' AND status = 'QUEUED'", d1), "1");
	CHECK_INT_EQ(claim(c, "build", w, NULL, NULL), 0);
	REQUIRE(claim(c, "deploy", w, job, target) == 1);
	CHECK_STR_EQ(target, d1);
	CHECK_STR_EQ(dep_field(c, d1, "status"), "DEPLOYING");
	CHECK_STR_EQ(dep_field(c, d1, "phase"), "STARTING");
	CHECK_INT_EQ(claim(c, "build", w, NULL, NULL), 0);

	CHECK_STR_EQ(finish(c, job, true, NULL), "SUCCEEDED");
	CHECK_STR_EQ(dep_field(c, d1, "status"), "SUCCEEDED");
	CHECK_STR_EQ(dep_field(c, d1, "phase"), "DONE");
	CHECK_STR_EQ(dep_field(c, d1, "finished_at >= started_at"), "t");
	/* Now the second one goes. */
	REQUIRE(claim(c, "build", w, job, target) == 1);
	CHECK_STR_EQ(target, d2);
	CHECK_STR_EQ(finish(c, job, false, "the build failed"), "FAILED");
	CHECK_STR_EQ(dep_field(c, d2, "status"), "FAILED");
	CHECK_STR_EQ(dep_field(c, d2, "error_message"), "the build failed");
	CHECK_STR_EQ(onef(c, "SELECT error_message FROM jobs WHERE id = '%s'", job), "the build failed");
	CHECK_STR_EQ(finish(c, job3, false, "no"), "FAILED");
	PQfinish(c);
}

struct blocked_claim {
	const char *ci;
	const char *worker;
	char target[37];
	int r;
};

static void *claim_in_thread(void *arg)
{
	struct blocked_claim *b = arg;
	PGconn *c = connect_to(b->ci);
	b->r = claim(c, "build", b->worker, NULL, b->target);
	PQfinish(c);
	return NULL;
}

TEST(the_unique_index_decides_between_two_claimers_of_one_application)
{
	char ci[600], org[37], app[37], d1[37], d2[37], target[37];
	database("jobs_arbiter", ci, sizeof(ci));
	PGconn *a = connect_to(ci);
	char w[37];
	register_worker(a, w);
	make_org(a, org);
	make_app(a, org, "web", app);
	make_deployment(a, org, app, d1);
	make_deployment(a, org, app, d2);
	/* A claims d1 and has not committed: B cannot see it in flight, takes
	 * d2's job, and its BUILDING waits on the index until A commits; then
	 * the violation makes it give d2 up. */
	REQUIRE(run(a, "BEGIN"));
	REQUIRE(claim(a, "build", w, NULL, target) == 1);
	CHECK_STR_EQ(target, d1);
	struct blocked_claim b = { .ci = ci, .worker = w };
	pthread_t t;
	pthread_create(&t, NULL, claim_in_thread, &b);
	sleep_ms(300);
	REQUIRE(run(a, "COMMIT"));
	pthread_join(t, NULL);
	CHECK_INT_EQ(b.r, 0);
	CHECK_STR_EQ(dep_field(a, d2, "status"), "QUEUED");
	CHECK_STR_EQ(onef(a, "SELECT status FROM jobs WHERE target_id = '%s'", d2), "QUEUED");
	CHECK_STR_EQ(dep_field(a, d1, "status"), "BUILDING");
	PQfinish(a);
}

/* ---- the reaper ---- */

TEST(reap_fails_a_dead_workers_building_deployment_and_leaves_a_live_ones_alone)
{
	char ci[600], org[37], app1[37], app2[37], d1[37], d2[37], d3[37], live[37], dead[37];
	char job1[37], job2[37], target[37];
	database("jobs_reap", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	PGconn *l = connect_to(ci);
	PGconn *d = connect_to(ci);
	make_org(c, org);
	make_app(c, org, "one", app1);
	make_app(c, org, "two", app2);
	make_deployment(c, org, app1, d1);
	make_deployment(c, org, app2, d2);
	register_worker(l, live);
	register_worker(d, dead);
	REQUIRE(claim(c, "build", live, job1, target) == 1);
	CHECK_STR_EQ(target, d1);
	REQUIRE(claim(c, "build", dead, job2, target) == 1);
	CHECK_STR_EQ(target, d2);

	/* The live worker reaping excludes itself; the dead one is alive. */
	CHECK_STR_EQ(onef(l, "SELECT steward_deployments_reap('%s')", live), "0");
	close_session(d, c); /* its lock goes with its session */
	CHECK_STR_EQ(onef(l, "SELECT steward_deployments_reap('%s')", live), "1");

	CHECK_STR_EQ(dep_field(c, d2, "status"), "FAILED");
	CHECK_STR_EQ(dep_field(c, d2, "error_message"),
		     "the worker restarted while the deployment was cloning");
	CHECK_STR_EQ(dep_field(c, d2, "finished_at IS NOT NULL"), "t");
	CHECK_STR_EQ(onef(c, "SELECT status || ' ' || error_message FROM jobs WHERE id = '%s'", job2),
		     "FAILED the worker restarted");
	CHECK_STR_EQ(onef(c, "SELECT count(*) FROM workers WHERE id = '%s'", dead), "0");
	CHECK_STR_EQ(dep_field(c, d1, "status"), "BUILDING");
	CHECK_STR_EQ(onef(c, "SELECT status FROM jobs WHERE id = '%s'", job1), "RUNNING");
	CHECK_STR_EQ(onef(c, "SELECT count(*) FROM workers WHERE id = '%s'", live), "1");
	/* A reaper that is no worker at all (p_self NULL) sees the live one
	 * locked. */
	CHECK_STR_EQ(one(c, "SELECT steward_deployments_reap(NULL)"), "0");
	CHECK_STR_EQ(dep_field(c, d1, "status"), "BUILDING");

	/* The application's lock is released: its next deployment runs. */
	make_deployment(c, org, app2, d3);
	REQUIRE(claim(c, "build", live, NULL, target) == 1);
	CHECK_STR_EQ(target, d3);

	/* The phase is said as words. */
	close_session(l, c);
	REQUIRE(run(c, "UPDATE deployments SET phase = 'HEALTH_GATE' WHERE status = 'BUILDING'"));
	CHECK_STR_EQ(one(c, "SELECT steward_deployments_reap(NULL)"), "2");
	CHECK_STR_EQ(dep_field(c, d1, "error_message"),
		     "the worker restarted while the deployment was health gate");
	CHECK_STR_EQ(one(c, "SELECT count(*) FROM workers"), "0");
	CHECK_STR_EQ(one(c, "SELECT count(*) FROM jobs WHERE status = 'RUNNING'"), "0");
	PQfinish(c);
}

TEST(reap_queues_a_dead_workers_lifecycle_job_again_once)
{
	char ci[600], org[37], w1[37], w2[37], job[37];
	database("jobs_requeue", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	onef(c, "SELECT id FROM steward_job_enqueue('%s', 'lifecycle', 'application.restart', "
	     "'application', gen_random_uuid(), NULL, NULL)", org);
	PGconn *d1 = connect_to(ci);
	register_worker(d1, w1);
	REQUIRE(claim(c, "lifecycle", w1, job, NULL) == 1);
	close_session(d1, c);
	CHECK_STR_EQ(one(c, "SELECT steward_deployments_reap(NULL)"), "0");
	CHECK_STR_EQ(onef(c, "SELECT status || ' ' || attempts || ' ' || (locked_by IS NULL) FROM jobs "
			  "WHERE id = '%s'", job), "QUEUED 1 true");
	PGconn *d2 = connect_to(ci);
	register_worker(d2, w2);
	REQUIRE(claim(c, "lifecycle", w2, job, NULL) == 1);
	close_session(d2, c);
	one(c, "SELECT steward_deployments_reap(NULL)");
	CHECK_STR_EQ(onef(c, "SELECT status || ' ' || error_message FROM jobs WHERE id = '%s'", job),
		     "FAILED the worker restarted");
	PQfinish(c);
}

TEST(cancel_of_a_queued_deployment_ends_it_and_its_job_at_once)
{
	char ci[600], org[37], app[37], d1[37];
	database("jobs_cancel_queued", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	make_app(c, org, "web", app);
	make_deployment(c, org, app, d1);
	CHECK_STR_EQ(onef(c, "SELECT cancelled FROM steward_deployment_cancel('%s', '%s')", org, d1), "t");
	CHECK_STR_EQ(dep_field(c, d1, "status"), "CANCELLED");
	CHECK_STR_EQ(onef(c, "SELECT status FROM jobs WHERE target_id = '%s' AND kind LIKE 'deployment.%%'",
			  d1), "CANCELLED");
	CHECK_INT_EQ(claim(c, "build", "00000000-0000-4000-8000-000000000005", NULL, NULL), 0);
	/* Ended: refused. */
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT * FROM steward_deployment_cancel('%s', '%s')", org, d1);
	PGresult *res = PQexec(c, sql);
	CHECK_STR_EQ(PQresultErrorField(res, PG_DIAG_SQLSTATE), "SW409");
	PQclear(res);
	PQfinish(c);
}

/* ---- the runner threads ---- */

static int counted;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static int count_job(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	(void)job;
	(void)ctx;
	(void)err;
	(void)errlen;
	pthread_mutex_lock(&count_lock);
	counted++;
	pthread_mutex_unlock(&count_lock);
	return 0;
}

/* A build that runs until it is told to stop, looking only at the flag
 * (the worker sets it when a cancel is announced), then says so. */
static int endless_build(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	while (!__atomic_load_n(job->stop, __ATOMIC_RELAXED))
		sleep_ms(20);
	snprintf(err, errlen, "stopped");
	return -ECANCELED;
}

static int quick_build(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	return sw_jobs_cancel_requested(job) ? -ECANCELED : 0;
}

TEST(runners_run_queued_jobs_and_deployments_to_the_end)
{
	char ci[600], org[37], app[37], d1[37], err[256];
	database("jobs_runners", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	make_app(c, org, "web", app);
	const struct sw_job_kind kinds[] = {
		{ "test.count", count_job, NULL },
		{ "deployment.build", quick_build, NULL },
		{ "deployment.deploy", count_job, NULL },
	};
	REQUIRE(sw_jobs_start(ci, kinds, SW_ARRAY_SIZE(kinds), err, sizeof(err)) == 0);
	CHECK(strlen(sw_jobs_worker_id()) == 36);
	CHECK_STR_EQ(onef(c, "SELECT count(*) FROM workers WHERE id = '%s'", sw_jobs_worker_id()), "1");
	onef(c, "SELECT count(*) FROM generate_series(1, 30) i, steward_job_enqueue('%s', "
	     "'lifecycle', 'test.count', 'thing', " DISTINCT_TARGET ", NULL, NULL)", org);
	onef(c, "SELECT id FROM steward_job_enqueue('%s', 'lifecycle', 'test.unknown', 'thing', "
	     "gen_random_uuid(), NULL, NULL)", org);
	make_deployment(c, org, app, d1);
	CHECK(eventually(c, "SELECT count(*) FROM jobs WHERE kind = 'test.count' AND status = 'SUCCEEDED'",
			 "30"));
	CHECK(eventually(c, "SELECT status || ' ' || error_message FROM jobs WHERE kind = 'test.unknown'",
			 "FAILED no runner for test.unknown"));
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT status FROM deployments WHERE id = '%s'", d1);
	CHECK(eventually(c, sql, "SUCCEEDED"));
	sw_jobs_stop(5000);
	pthread_mutex_lock(&count_lock);
	CHECK_INT_EQ(counted, 31); /* 30 and the deploy step */
	pthread_mutex_unlock(&count_lock);
	/* A graceful stop takes the worker's row away. */
	CHECK_STR_EQ(one(c, "SELECT count(*) FROM workers"), "0");
	CHECK_STR_EQ(sw_jobs_worker_id(), "");
	PQfinish(c);
}

static int held_running;
static bool held_release;

/* A job that runs until the test releases it (or the runners stop). */
static int held_job(struct sw_job *job, void *ctx, char *err, size_t errlen)
{
	(void)ctx;
	(void)err;
	(void)errlen;
	__atomic_fetch_add(&held_running, 1, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&held_release, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(job->stop, __ATOMIC_RELAXED))
		sleep_ms(20);
	__atomic_fetch_sub(&held_running, 1, __ATOMIC_RELAXED);
	return 0;
}

TEST(a_queue_grows_to_its_concurrency_on_demand_and_idles_on_one_connection)
{
	char ci[600], org[37], err[256];
	database("jobs_on_demand", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	const struct sw_job_kind kinds[] = { { "test.held", held_job, NULL } };
	REQUIRE(sw_jobs_start(ci, kinds, 1, err, sizeof(err)) == 0);
	/* This test's, the worker's, and one claiming connection per queue. */
	static const char conns[] =
		"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()";
	CHECK(eventually(c, conns, "5"));
	onef(c, "SELECT count(*) FROM generate_series(1, 4) i, steward_job_enqueue('%s', "
	     "'lifecycle', 'test.held', 'thing', " DISTINCT_TARGET ", NULL, NULL)", org);
	/* lifecycle's concurrency is 4: all four run at once. */
	for (unsigned waited = 0; waited < 10000 && __atomic_load_n(&held_running, __ATOMIC_RELAXED) < 4;
	     waited += 20)
		sleep_ms(20);
	CHECK_INT_EQ(__atomic_load_n(&held_running, __ATOMIC_RELAXED), 4);
	CHECK(eventually(c, conns, "8"));
	__atomic_store_n(&held_release, true, __ATOMIC_RELAXED);
	CHECK(eventually(c, "SELECT count(*) FROM jobs WHERE kind = 'test.held' AND status = 'SUCCEEDED'",
			 "4"));
	/* Idle again: the runners that joined in let their connections go. */
	CHECK(eventually(c, conns, "5"));
	sw_jobs_stop(5000);
	PQfinish(c);
}

/* Runners whose build never ends by itself, and a deployment they are
 * building: its id into d1, the organization's into org. The caller
 * stops the runners. false when it never got BUILDING. */
static bool endless_deployment(const char *db, char ci[600], char org[37], char d1[37])
{
	char app[37], err[256], sql[256];
	database(db, ci, 600);
	PGconn *c = connect_to(ci);
	make_org(c, org);
	make_app(c, org, "web", app);
	const struct sw_job_kind kinds[] = { { "deployment.build", endless_build, NULL } };
	bool ok = sw_jobs_start(ci, kinds, 1, err, sizeof(err)) == 0;
	if (ok) {
		make_deployment(c, org, app, d1);
		snprintf(sql, sizeof(sql), "SELECT status FROM deployments WHERE id = '%s'", d1);
		ok = eventually(c, sql, "BUILDING");
	}
	PQfinish(c);
	return ok;
}

TEST(a_cancel_stops_the_running_build_and_ends_it_cancelled)
{
	char ci[600], org[37], d1[37], sql[256];
	bool building = endless_deployment("jobs_cancel_running", ci, org, d1);
	PGconn *c = connect_to(ci);
	CHECK(building);
	CHECK_STR_EQ(dep_field(c, d1, "worker_id"), sw_jobs_worker_id());
	CHECK_STR_EQ(onef(c, "SELECT cancelled FROM steward_deployment_cancel('%s', '%s')", org, d1), "f");
	snprintf(sql, sizeof(sql), "SELECT status FROM deployments WHERE id = '%s'", d1);
	CHECK(eventually(c, sql, "CANCELLED"));
	CHECK_STR_EQ(onef(c, "SELECT status FROM jobs WHERE target_id = '%s' AND kind LIKE 'deployment.%%'",
			  d1), "CANCELLED");
	CHECK_STR_EQ(dep_field(c, d1, "error_message"), "(null)");
	sw_jobs_stop(5000);
	PQfinish(c);
}

TEST(a_graceful_stop_hands_a_running_deployment_back_to_the_queue)
{
	char ci[600], org[37], d1[37], err[256];
	bool building = endless_deployment("jobs_stop", ci, org, d1);
	PGconn *c = connect_to(ci);
	CHECK(building);
	/* Once only. */
	CHECK_INT_EQ(sw_jobs_start(ci, NULL, 0, err, sizeof(err)), -EALREADY);
	sw_jobs_stop(2000);
	CHECK_STR_EQ(dep_field(c, d1, "status || ' ' || phase"), "QUEUED QUEUED");
	CHECK_STR_EQ(dep_field(c, d1, "error_message"), "(null)");
	CHECK_STR_EQ(dep_field(c, d1, "worker_id"), "(null)");
	CHECK_STR_EQ(onef(c, "SELECT status || ' ' || error_message || ' ' || attempts FROM jobs "
			  "WHERE target_id = '%s' AND kind LIKE 'deployment.%%'", d1),
		     "QUEUED the worker stopped; queued again 1");
	CHECK_STR_EQ(onef(c, "SELECT count(*) FROM jobs WHERE target_id = '%s' AND kind = 'runtime.recover'",
			  d1), "0");
	/* The next start (or another replica) runs it from the start. */
	const struct sw_job_kind kinds[] = { { "deployment.build", quick_build, NULL },
					     { "deployment.deploy", count_job, NULL } };
	REQUIRE(sw_jobs_start(ci, kinds, 2, err, sizeof(err)) == 0);
	char sql[256];
	snprintf(sql, sizeof(sql), "SELECT status FROM deployments WHERE id = '%s'", d1);
	CHECK(eventually(c, sql, "SUCCEEDED"));
	sw_jobs_stop(2000);
	PQfinish(c);
}

/* A ROLLBACK of app to the SUCCEEDED deployment succeeded (its image set
 * here); its id into dep. */
static void make_rollback(PGconn *c, const char *org, const char *app, const char *succeeded,
			  char dep[37])
{
	onef(c, "UPDATE deployments SET status = 'SUCCEEDED', phase = 'DONE', image_tag = 'steward/x:1', "
	     "finished_at = now() WHERE id = '%s'", succeeded);
	snprintf(dep, 37, "%s", onef(c, "SELECT id FROM steward_deployment_create('%s', '%s', "
				     "'ROLLBACK', NULL, NULL, '%s', NULL)", org, app, succeeded));
}

TEST(deployments_of_an_application_are_claimed_in_number_order_whatever_their_queue)
{
	char ci[600], org[37], app[37], d1[37], d2[37], d3[37], d4[37], job[37], target[37], w[37];
	database("jobs_order", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	register_worker(c, w);
	make_org(c, org);
	make_app(c, org, "web", app);
	make_deployment(c, org, app, d1);
	make_rollback(c, org, app, d1, d2); /* #2, a rollback to #1 */
	make_deployment(c, org, app, d3);   /* #3, a git deployment */
	make_rollback(c, org, app, d1, d4); /* #4, a rollback asked at once after it */
	CHECK_STR_EQ(onef(c, "SELECT queue FROM jobs WHERE target_id = '%s'", d4), "lifecycle");
	/* #2 first (the rollback, on the lifecycle queue); #3 waits behind it. */
	CHECK_INT_EQ(claim(c, "build", w, NULL, NULL), 0);
	REQUIRE(claim(c, "lifecycle", w, job, target) == 1);
	CHECK_STR_EQ(target, d2);
	CHECK_STR_EQ(dep_field(c, d2, "status"), "DEPLOYING");
	CHECK_INT_EQ(claim(c, "lifecycle", w, NULL, NULL), 0);
	CHECK_STR_EQ(finish(c, job, true, NULL), "SUCCEEDED");
	/* #4's deploy has nothing to build and is ready first: it still waits
	 * for #3, its build and its deploy. */
	CHECK_INT_EQ(claim(c, "lifecycle", w, NULL, NULL), 0);
	REQUIRE(claim(c, "build", w, job, target) == 1);
	CHECK_STR_EQ(target, d3);
	CHECK_INT_EQ(claim(c, "lifecycle", w, NULL, NULL), 0);
	CHECK_STR_EQ(finish(c, job, true, NULL), "SUCCEEDED");
	CHECK_INT_EQ(claim(c, "lifecycle", w, NULL, NULL), 0);
	REQUIRE(claim(c, "deploy", w, job, target) == 1);
	CHECK_STR_EQ(target, d3);
	CHECK_STR_EQ(finish(c, job, true, NULL), "SUCCEEDED");
	REQUIRE(claim(c, "lifecycle", w, job, target) == 1);
	CHECK_STR_EQ(target, d4);
	CHECK_STR_EQ(finish(c, job, true, NULL), "SUCCEEDED");
	CHECK_STR_EQ(one(c, "SELECT string_agg(number || ':' || status, ',' ORDER BY number) FROM deployments"),
		     "1:SUCCEEDED,2:SUCCEEDED,3:SUCCEEDED,4:SUCCEEDED");
	/* An older deployment cancelled while queued holds nothing up. */
	char d5[37], d6[37];
	make_deployment(c, org, app, d5);
	make_deployment(c, org, app, d6);
	onef(c, "SELECT cancelled FROM steward_deployment_cancel('%s', '%s')", org, d5);
	REQUIRE(claim(c, "build", w, job, target) == 1);
	CHECK_STR_EQ(target, d6);
	CHECK_STR_EQ(finish(c, job, false, "no"), "FAILED");
	PQfinish(c);
}

/* A deployment of a new application built by a worker whose session is
 * the returned connection (its id into dead): the build job done, the
 * deploy job queued. c is the test's connection. */
static PGconn *built_by_a_worker(PGconn *c, const char *ci, char org[37], char app[37],
				 char d1[37], char dead[37])
{
	char job[37], target[37];
	PGconn *d = connect_to(ci);
	make_org(c, org);
	make_app(c, org, "web", app);
	make_deployment(c, org, app, d1);
	register_worker(d, dead);
	if (claim(c, "build", dead, job, target) != 1)
		fprintf(stderr, "  the build was not claimed\n");
	finish(c, job, true, NULL);
	return d;
}

TEST(a_dead_workers_deployment_in_finishing_is_settled_succeeded_and_recovered)
{
	char ci[600], org[37], app[37], d1[37], dead[37], job[37], target[37];
	database("jobs_finishing", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	PGconn *d = built_by_a_worker(c, ci, org, app, d1, dead);
	REQUIRE(claim(c, "deploy", dead, job, target) == 1);
	REQUIRE(run(c, "UPDATE deployments SET phase = 'FINISHING'"));
	close_session(d, c);
	CHECK_STR_EQ(one(c, "SELECT steward_deployments_reap(NULL)"), "0");
	CHECK_STR_EQ(dep_field(c, d1, "status || ' ' || phase"), "SUCCEEDED DONE");
	CHECK_STR_EQ(dep_field(c, d1, "error_message"), "(null)");
	CHECK_STR_EQ(onef(c, "SELECT status FROM applications WHERE id = '%s'", app), "RUNNING");
	CHECK_STR_EQ(onef(c, "SELECT queue || ' ' || status FROM jobs WHERE target_id = '%s' "
			  "AND kind = 'runtime.recover'", d1), "lifecycle QUEUED");
	CHECK_STR_EQ(onef(c, "SELECT status FROM jobs WHERE id = '%s'", job), "FAILED");
	PQfinish(c);
}

TEST(a_deployment_between_its_build_and_its_deploy_is_left_to_its_deploy_job)
{
	char ci[600], org[37], app[37], d1[37], dead[37], job[37], target[37], w[37];
	database("jobs_between", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	PGconn *d = built_by_a_worker(c, ci, org, app, d1, dead);
	close_session(d, c);
	CHECK_STR_EQ(one(c, "SELECT steward_deployments_reap(NULL)"), "0");
	CHECK_STR_EQ(dep_field(c, d1, "status"), "BUILDING");
	register_worker(c, w);
	REQUIRE(claim(c, "deploy", w, job, target) == 1);
	CHECK_STR_EQ(target, d1);
	CHECK_STR_EQ(dep_field(c, d1, "status"), "DEPLOYING");
	CHECK_STR_EQ(dep_field(c, d1, "worker_id"), w);
	PQfinish(c);
}

TEST(start_reaps_what_a_dead_process_left_in_flight)
{
	char ci[600], org[37], app[37], d1[37], dead[37], err[256];
	database("jobs_start_reap", ci, sizeof(ci));
	PGconn *c = connect_to(ci);
	make_org(c, org);
	make_app(c, org, "web", app);
	make_deployment(c, org, app, d1);
	PGconn *d = connect_to(ci);
	register_worker(d, dead);
	REQUIRE(claim(c, "build", dead, NULL, NULL) == 1);
	close_session(d, c);
	const struct sw_job_kind kinds[] = { { "test.count", count_job, NULL } };
	REQUIRE(sw_jobs_start(ci, kinds, 1, err, sizeof(err)) == 0);
	/* Before sw_jobs_start returned. */
	CHECK_STR_EQ(dep_field(c, d1, "status"), "FAILED");
	CHECK_STR_EQ(dep_field(c, d1, "error_message"),
		     "the worker restarted while the deployment was cloning");
	sw_jobs_stop(5000);
	PQfinish(c);
}

TEST(start_fails_with_a_reason_when_the_database_is_unreachable)
{
	char ci[600], err[256] = "";
	scratch_cluster_start("sw-jobs");
	REQUIRE(scratch_unreachable_conninfo(ci, sizeof(ci)));
	const struct sw_job_kind kinds[] = { { "test.count", count_job, NULL } };
	CHECK(sw_jobs_start(ci, kinds, 1, err, sizeof(err)) < 0);
	CHECK(strstr(err, "database") != NULL);
	CHECK_STR_EQ(sw_jobs_worker_id(), "");
	sw_jobs_stop(100); /* nothing runs: harmless */
}

TEST_MAIN()
