/* Migrations, the identity schema's SQL and the embedded cluster, against
 * a real PostgreSQL: one scratch cluster (sw_db_embedded_start in a mkdtemp
 * directory) for the file, a fresh database per test. Exits 77 when the
 * PostgreSQL server binaries are not installed. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "steward/db/db.h"
#include "db/migrations.h"
#include "steward/db/statements.h"
#include "db_scratch.h"
#include "test_help.h"

/* Starts the scratch cluster once; exits 77 without PostgreSQL. */
static void cluster(void)
{
	scratch_cluster_start("sw-migrate");
}

/* A fresh (unmigrated) database in the scratch cluster; its conninfo into out. */
static void fresh_database(const char *name, char *out, size_t outlen)
{
	cluster();
	scratch_fresh_database(name, false, out, outlen);
}

/* The single value of a one-row query, as a long; -1 on error. */
static long scalar(const char *ci, const char *sql)
{
	PGconn *pg = PQconnectdb(ci);
	PGresult *res = PQexec(pg, sql);
	long v = -1;
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		v = atol(PQgetvalue(res, 0, 0));
	else
		fprintf(stderr, "  query %s: %s", sql, PQerrorMessage(pg));
	PQclear(res);
	PQfinish(pg);
	return v;
}

/* Runs sql; true when it succeeded. */
static bool exec(const char *ci, const char *sql)
{
	PGconn *pg = PQconnectdb(ci);
	PGresult *res = PQexec(pg, sql);
	bool ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
	PQclear(res);
	PQfinish(pg);
	return ok;
}

TEST(migrate_applies_each_migration_once_and_a_rerun_applies_nothing)
{
	char ci[600], err[512];
	fresh_database("m_once", ci, sizeof(ci));
	REQUIRE(sw_db_migration_count >= 1);
	CHECK_INT_EQ(sw_db_migrate(ci, err, sizeof(err)), 0);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM schema_migrations"), (long)sw_db_migration_count);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM users"), 0);
	long first = scalar(ci, "SELECT extract(epoch FROM max(applied_at)) * 1000000 FROM schema_migrations");

	CHECK_INT_EQ(sw_db_migrate(ci, err, sizeof(err)), 0);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM schema_migrations"), (long)sw_db_migration_count);
	CHECK_INT_EQ(scalar(ci, "SELECT extract(epoch FROM max(applied_at)) * 1000000 FROM schema_migrations"),
		     first);
}

struct migrate_thread {
	const char *ci;
	int r;
	char err[512];
};

static void *migrate_thread(void *arg)
{
	struct migrate_thread *t = arg;
	t->r = sw_db_migrate(t->ci, t->err, sizeof(t->err));
	return NULL;
}

TEST(concurrent_migrations_from_two_threads_apply_once)
{
	char ci[600];
	fresh_database("m_concurrent", ci, sizeof(ci));
	struct migrate_thread t[2] = { { .ci = ci }, { .ci = ci } };
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		REQUIRE(pthread_create(&th[i], NULL, migrate_thread, &t[i]) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_INT_EQ(t[0].r, 0);
	CHECK_INT_EQ(t[1].r, 0);
	if (t[0].r || t[1].r)
		fprintf(stderr, "  errors: %s / %s\n", t[0].err, t[1].err);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM schema_migrations"), (long)sw_db_migration_count);
}

TEST(a_database_migrated_by_a_newer_binary_is_refused)
{
	char ci[600], err[512];
	fresh_database("m_newer", ci, sizeof(ci));
	REQUIRE(sw_db_migrate(ci, err, sizeof(err)) == 0);
	REQUIRE(exec(ci, "INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future')"));
	CHECK_INT_EQ(sw_db_migrate(ci, err, sizeof(err)), -EPROTO);
	CHECK(strstr(err, "9999") != NULL);
	CHECK(strstr(err, "newer stewardd") != NULL);
}

TEST(an_unreachable_database_is_a_clear_error)
{
	char err[512];
	cluster();
	char ci[700];
	REQUIRE(scratch_unreachable_conninfo(ci, sizeof(ci)));
	CHECK_INT_EQ(sw_db_migrate(ci, err, sizeof(err)), -ECONNREFUSED);
	CHECK(strncmp(err, "cannot connect to the database: ", 32) == 0);
	CHECK(strchr(err, '\n') == NULL);
}

/* Runs a registry statement with blocking libpq; returns the result. */
static PGresult *run_stmt(PGconn *pg, const struct sw_db_stmt *stmt, const char *const *params)
{
	return PQexecParams(pg, stmt->sql, stmt->nparams, NULL, params, NULL, NULL, 0);
}

static const char *sqlstate(const PGresult *res)
{
	const char *s = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	return s ? s : "";
}

static bool is_rfc3339_ms(const char *s)
{
	/* 2026-11-21T16:22:35.123Z */
	if (strlen(s) != 24)
		return false;
	for (int i = 0; i < 24; i++) {
		char c = s[i];
		bool ok;
		switch (i) {
		case 4: case 7: ok = c == '-'; break;
		case 10: ok = c == 'T'; break;
		case 13: case 16: ok = c == ':'; break;
		case 19: ok = c == '.'; break;
		case 23: ok = c == 'Z'; break;
		default: ok = c >= '0' && c <= '9';
		}
		if (!ok)
			return false;
	}
	return true;
}

TEST(setup_creates_the_operator_their_organization_and_owner_membership_once)
{
	char ci[600], err[512];
	fresh_database("m_setup", ci, sizeof(ci));
	REQUIRE(sw_db_migrate(ci, err, sizeof(err)) == 0);
	PGconn *pg = PQconnectdb(ci);
	REQUIRE(PQstatus(pg) == CONNECTION_OK);

	const char *signup_early[] = { "early@example.com", "Early", "$argon2id$x", NULL };
	PGresult *res = run_stmt(pg, &sw_db_stmt_signup, signup_early);
	CHECK_STR_EQ(sqlstate(res), SW_DB_SQLSTATE_SETUP_REQUIRED);
	PQclear(res);

	const char *setup[] = { "Ada@Example.COM", "Ada", "$argon2id$hash", "Analytical" };
	res = run_stmt(pg, &sw_db_stmt_setup, setup);
	REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1);
	CHECK_INT_EQ(PQgetlength(res, 0, SW_DB_ACCOUNT_USER_ID), 36);
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_EMAIL), "ada@example.com");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_NAME), "Ada");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_IS_OPERATOR), "t");
	CHECK(is_rfc3339_ms(PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_CREATED_AT)));
	CHECK_INT_EQ(PQgetlength(res, 0, SW_DB_ACCOUNT_ORG_ID), 36);
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_ORG_NAME), "Analytical");
	CHECK(is_rfc3339_ms(PQgetvalue(res, 0, SW_DB_ACCOUNT_ORG_CREATED_AT)));
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_ROLE), "OWNER");
	PQclear(res);

	const char *again[] = { "bob@example.com", "Bob", "$argon2id$hash", "Other" };
	res = run_stmt(pg, &sw_db_stmt_setup, again);
	CHECK_STR_EQ(sqlstate(res), SW_DB_SQLSTATE_SETUP_COMPLETE);
	PQclear(res);
	PQfinish(pg);

	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM users"), 1);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM organizations"), 1);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM memberships WHERE role = 'OWNER'"), 1);
}

TEST(signup_after_setup_creates_a_plain_user_and_refuses_a_taken_email_in_any_case)
{
	char ci[600], err[512];
	fresh_database("m_signup", ci, sizeof(ci));
	REQUIRE(sw_db_migrate(ci, err, sizeof(err)) == 0);
	PGconn *pg = PQconnectdb(ci);
	REQUIRE(PQstatus(pg) == CONNECTION_OK);
	const char *setup[] = { "op@example.com", "Op", "h", "Org" };
	PGresult *res = run_stmt(pg, &sw_db_stmt_setup, setup);
	REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK);
	PQclear(res);

	const char *signup[] = { "Grace@Example.com", "Grace", "h2", NULL };
	res = run_stmt(pg, &sw_db_stmt_signup, signup);
	REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1);
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_EMAIL), "grace@example.com");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_USER_IS_OPERATOR), "f");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_ORG_NAME), "Grace");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_ACCOUNT_ROLE), "OWNER");
	PQclear(res);

	const char *dup[] = { "GRACE@example.COM", "Other Grace", "h3", "X" };
	res = run_stmt(pg, &sw_db_stmt_signup, dup);
	CHECK_STR_EQ(sqlstate(res), SW_DB_SQLSTATE_EMAIL_TAKEN);
	PQclear(res);

	const char *by_email[] = { "gRaCe@example.com" };
	res = run_stmt(pg, &sw_db_stmt_user_by_email, by_email);
	REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1);
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_USER_NAME), "Grace");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_USER_PASSWORD_HASH), "h2");
	CHECK_STR_EQ(PQgetvalue(res, 0, SW_DB_USER_IS_OPERATOR), "f");
	CHECK(is_rfc3339_ms(PQgetvalue(res, 0, SW_DB_USER_CREATED_AT)));
	PQclear(res);

	res = run_stmt(pg, &sw_db_stmt_user_count, NULL);
	REQUIRE(PQresultStatus(res) == PGRES_TUPLES_OK);
	CHECK_STR_EQ(PQgetvalue(res, 0, 0), "2");
	PQclear(res);
	PQfinish(pg);
}

TEST(membership_roles_are_limited_to_owner_admin_member)
{
	char ci[600], err[512];
	fresh_database("m_roles", ci, sizeof(ci));
	REQUIRE(sw_db_migrate(ci, err, sizeof(err)) == 0);
	REQUIRE(exec(ci, "SELECT * FROM steward_setup('a@b.co', 'A', 'h', 'O')"));
	CHECK(!exec(ci, "UPDATE memberships SET role = 'GOD'"));
	CHECK(exec(ci, "UPDATE memberships SET role = 'ADMIN'"));
}

TEST(the_embedded_cluster_restarts_on_its_data_directory)
{
	char ci[600], err[1024], again[512];
	fresh_database("m_restart", ci, sizeof(ci));
	REQUIRE(sw_db_migrate(ci, err, sizeof(err)) == 0);
	REQUIRE(exec(ci, "SELECT * FROM steward_setup('a@b.co', 'A', 'h', 'O')"));
	sw_db_embedded_stop();
	CHECK(PQping(ci) != PQPING_OK);

	int r = sw_db_embedded_start(scratch_db.data_dir, again, sizeof(again), err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "  restart: %s\n", err);
	REQUIRE(r == 0);
	CHECK_STR_EQ(again, scratch_db.conninfo);
	CHECK_INT_EQ(sw_db_migrate(ci, err, sizeof(err)), 0);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM users"), 1);
	CHECK_INT_EQ(scalar(ci, "SELECT count(*) FROM schema_migrations"), (long)sw_db_migration_count);
}

TEST(embedded_start_refuses_a_data_directory_too_long_for_a_socket)
{
	char dir[300], ci[512], err[1024];
	memset(dir, 'x', sizeof(dir) - 1);
	dir[0] = '/';
	dir[sizeof(dir) - 1] = '\0';
	CHECK_INT_EQ(sw_db_embedded_start(dir, ci, sizeof(ci), err, sizeof(err)), -ENAMETOOLONG);
	CHECK(strstr(err, "too long") != NULL);
}

TEST(embedded_start_without_binaries_says_what_to_install)
{
	char ci[512], err[1024];
	cluster(); /* the running cluster must not matter: binaries are checked first */
	setenv("PG_BINDIR", "/nonexistent-pg-bindir", 1);
	int r = sw_db_embedded_start("/tmp/sw-unused", ci, sizeof(ci), err, sizeof(err));
	unsetenv("PG_BINDIR");
	CHECK_INT_EQ(r, -ENOENT);
	CHECK(strstr(err, "apt-get install postgresql") != NULL);
	CHECK(strstr(err, "DATABASE_URL") != NULL);
}

TEST(after_stewardd_is_killed_its_server_stops_and_the_next_start_succeeds)
{
	cluster();
	sw_db_embedded_stop(); /* one embedded server per process */
	scratch_db.started = false;
	char dir[128], ci[512], err[1024];
	snprintf(dir, sizeof(dir), "%s/crash", scratch_db.dir);

	int ready[2];
	REQUIRE(pipe(ready) == 0);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0) {
		/* A stand-in for stewardd: start the server, then wait to be killed. */
		close(ready[0]);
		int r = sw_db_embedded_start(dir, ci, sizeof(ci), err, sizeof(err));
		if (r < 0)
			fprintf(stderr, "  child start: %s\n", err);
		char c = r == 0 ? 'y' : 'n';
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c = 0;
	CHECK(read(ready[0], &c, 1) == 1 && c == 'y');
	close(ready[0]);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	int r = sw_db_embedded_start(dir, ci, sizeof(ci), err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "  restart after kill: %s\n", err);
	CHECK_INT_EQ(r, 0);
	CHECK_INT_EQ(scalar(ci, "SELECT 7"), 7);
	sw_db_embedded_stop();
}

TEST_MAIN()
