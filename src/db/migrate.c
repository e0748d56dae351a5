/* Schema migrations, applied at start-up with blocking libpq (the loops
 * are not running yet).
 *
 * The migrations are the numbered files of src/db/migrations, compiled in
 * (embed_migrations.cmake). Every stewardd replica may start at once
 * against the same database, so the whole run holds a session advisory
 * lock: the second replica waits, then finds everything applied. Each
 * migration runs in its own transaction together with the insert of its
 * schema_migrations row, so a migration is recorded if and only if it
 * took effect, and a restart applies nothing twice.
 *
 * A database that records a version this binary does not know was
 * migrated by a newer stewardd; running older code against it could
 * corrupt data, so we refuse. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <libpq-fe.h>
#include "steward/db/db.h"
#include "db/migrations.h"

/* "stewmigr" as a big-endian 64-bit integer: the advisory lock key. */
#define MIGRATE_LOCK_KEY "8319385975271286642"

/* The first line of a libpq message, without its "ERROR:  " prefix. */
static void first_line(const char *msg, char *out, size_t outlen)
{
	if (!msg)
		msg = "";
	if (strncmp(msg, "ERROR:  ", 8) == 0)
		msg += 8;
	size_t n = strcspn(msg, "\r\n");
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, msg, n);
	out[n] = '\0';
}

static void ignore_notice(void *arg, const PGresult *res)
{
	(void)arg;
	(void)res;
}

/* Runs sql (no parameters) and checks its status. 0 or -EIO with the
 * server's message in err after what. */
static int exec_ok(PGconn *pg, const char *sql, ExecStatusType want, const char *what,
		   char *err, size_t errlen)
{
	PGresult *res = PQexec(pg, sql);
	if (res && PQresultStatus(res) == want) {
		PQclear(res);
		return 0;
	}
	char line[512];
	first_line(res ? PQresultErrorMessage(res) : PQerrorMessage(pg), line, sizeof(line));
	snprintf(err, errlen, "%s: %s", what, line);
	PQclear(res);
	return -EIO;
}

static bool known_version(int version)
{
	for (size_t i = 0; i < sw_db_migration_count; i++)
		if (sw_db_migrations[i].version == version)
			return true;
	return false;
}

/* Reads the applied versions in order: *ret_versions is malloc'ed (the
 * caller frees it), *ret_n its length. */
static int applied_versions(PGconn *pg, int **ret_versions, int *ret_n, char *err, size_t errlen)
{
	PGresult *res = PQexec(pg, "SELECT version FROM schema_migrations ORDER BY version");
	if (!res || PQresultStatus(res) != PGRES_TUPLES_OK) {
		char line[512];
		first_line(res ? PQresultErrorMessage(res) : PQerrorMessage(pg), line, sizeof(line));
		snprintf(err, errlen, "reading schema_migrations: %s", line);
		PQclear(res);
		return -EIO;
	}
	int n = PQntuples(res);
	int *v = calloc((size_t)n + 1, sizeof(*v));
	if (!v) {
		PQclear(res);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		v[i] = atoi(PQgetvalue(res, i, 0));
	PQclear(res);
	*ret_versions = v;
	*ret_n = n;
	return 0;
}

static int apply_one(PGconn *pg, const struct sw_db_migration *m, char *err, size_t errlen)
{
	char what[160];
	snprintf(what, sizeof(what), "migration %s", m->name);
	int r = exec_ok(pg, "BEGIN", PGRES_COMMAND_OK, what, err, errlen);
	if (r < 0)
		return r;
	/* A migration is several statements: the simple query protocol runs
	 * them all inside our transaction and stops at the first error. */
	PGresult *res = PQexec(pg, m->sql);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
		char line[512];
		first_line(res ? PQresultErrorMessage(res) : PQerrorMessage(pg), line, sizeof(line));
		snprintf(err, errlen, "migration %s failed: %s", m->name, line);
		PQclear(res);
		r = -EIO;
		goto rollback;
	}
	PQclear(res);

	char version[16];
	snprintf(version, sizeof(version), "%d", m->version);
	const char *params[2] = { version, m->name };
	res = PQexecParams(pg, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
			   2, NULL, params, NULL, NULL, 0);
	if (!res || PQresultStatus(res) != PGRES_COMMAND_OK) {
		char line[512];
		first_line(res ? PQresultErrorMessage(res) : PQerrorMessage(pg), line, sizeof(line));
		snprintf(err, errlen, "migration %s: recording it failed: %s", m->name, line);
		PQclear(res);
		r = -EIO;
		goto rollback;
	}
	PQclear(res);
	char commit_what[200];
	snprintf(commit_what, sizeof(commit_what), "migration %s failed at commit", m->name);
	return exec_ok(pg, "COMMIT", PGRES_COMMAND_OK, commit_what, err, errlen);

rollback:
	PQclear(PQexec(pg, "ROLLBACK"));
	return r;
}

int sw_db_migrate(const char *conninfo, char *err, size_t errlen)
{
	int r;
	int *applied = NULL;
	int napplied = 0;

	for (size_t i = 1; i < sw_db_migration_count; i++) {
		if (SW_NEVER(sw_db_migrations[i].version <= sw_db_migrations[i - 1].version)) {
			snprintf(err, errlen, "migrations %s and %s have the same or unordered numbers",
				 sw_db_migrations[i - 1].name, sw_db_migrations[i].name);
			return -EINVAL;
		}
	}

	PGconn *pg = PQconnectdb(conninfo);
	if (!pg) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (PQstatus(pg) != CONNECTION_OK) {
		char line[512];
		first_line(PQerrorMessage(pg), line, sizeof(line));
		snprintf(err, errlen, "cannot connect to the database: %s", line);
		r = -ECONNREFUSED;
		goto finish;
	}
	PQsetNoticeReceiver(pg, ignore_notice, NULL);

	/* Migrations may take long (an index on a big table): no timeout from
	 * the server's or role's defaults applies to them. */
	r = exec_ok(pg, "SET statement_timeout = 0", PGRES_COMMAND_OK, "preparing the session",
		    err, errlen);
	if (r < 0)
		goto finish;
	r = exec_ok(pg, "SELECT pg_advisory_lock(" MIGRATE_LOCK_KEY ")", PGRES_TUPLES_OK,
		    "taking the migration lock", err, errlen);
	if (r < 0)
		goto finish;
	r = exec_ok(pg,
		    "CREATE TABLE IF NOT EXISTS schema_migrations ("
		    " version integer PRIMARY KEY,"
		    " name text NOT NULL,"
		    " applied_at timestamptz NOT NULL DEFAULT now())",
		    PGRES_COMMAND_OK, "creating schema_migrations", err, errlen);
	if (r < 0)
		goto unlock;
	r = applied_versions(pg, &applied, &napplied, err, errlen);
	if (r < 0)
		goto unlock;

	for (int i = 0; i < napplied; i++) {
		if (!known_version(applied[i])) {
			snprintf(err, errlen,
				 "the database has migration %d, which this stewardd does not know "
				 "(the database was migrated by a newer stewardd): run that version "
				 "or newer",
				 applied[i]);
			r = -EPROTO;
			goto unlock;
		}
	}

	for (size_t i = 0; i < sw_db_migration_count; i++) {
		const struct sw_db_migration *m = &sw_db_migrations[i];
		bool done = false;
		for (int j = 0; j < napplied && !done; j++)
			done = applied[j] == m->version;
		if (done)
			continue;
		r = apply_one(pg, m, err, errlen);
		if (r < 0)
			goto unlock;
	}
	r = 0;

unlock:
	/* Closing the session would release the lock too; unlocking says so. */
	PQclear(PQexec(pg, "SELECT pg_advisory_unlock(" MIGRATE_LOCK_KEY ")"));
finish:
	free(applied);
	PQfinish(pg);
	return r;
}
