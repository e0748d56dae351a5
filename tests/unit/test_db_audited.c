/* Audited statements (src/db/audited.c) against a real PostgreSQL with the
 * migrations applied: the twin writes the audit record in the same
 * statement as the action, only when the action returns a row, and an
 * audit record that cannot be written undoes the action. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/db/db.h"
#include "steward/db/statements.h"
#include "db/db_internal.h"
#include "db_scratch.h"
#include "test_help.h"

static char ci[600];
static PGconn *pg;

static void setup(void)
{
	if (pg)
		return;
	scratch_cluster_start("sw-audited");
	scratch_fresh_database("audited", true, ci, sizeof(ci));
	pg = PQconnectdb(ci);
	if (PQstatus(pg) != CONNECTION_OK) {
		fprintf(stderr, "connect: %s", PQerrorMessage(pg));
		exit(1);
	}
	PGresult *r = PQexec(pg, "CREATE TABLE things (id uuid PRIMARY KEY DEFAULT gen_random_uuid(),"
				 " name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "create: %s", PQerrorMessage(pg));
		exit(1);
	}
	PQclear(r);
}

/* Runs stmt's twin with the statement's params and the audit row; the
 * result (the caller clears it). */
static PGresult *run(const struct sw_db_stmt *stmt, const char *const *params,
		     const struct sw_db_audit_row *a)
{
	const char *all[16];
	int n = stmt->nparams;
	memcpy(all, params, sizeof(*params) * (size_t)n);
	const char *audit[SW_DB_AUDIT_PARAMS] = { a->organization_id, a->actor_user_id, a->action,
						  a->target_type, a->target_id, a->ip,
						  a->metadata_json };
	memcpy(all + n, audit, sizeof(audit));
	const struct sw_db_stmt *t = &stmt->audited->twin;
	return PQexecParams(pg, t->sql, t->nparams, NULL, all, NULL, NULL, 0);
}

static long count(const char *sql)
{
	PGresult *r = PQexec(pg, sql);
	long v = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
	PQclear(r);
	return v;
}

/* The newest audit record's action, target id and metadata, "|"-joined. */
static void newest(char *out, size_t len)
{
	PGresult *r = PQexec(pg, "SELECT action || '|' || coalesce(target_id, '') || '|' || metadata::text"
				 " FROM audit_logs ORDER BY created_at DESC, id DESC LIMIT 1");
	snprintf(out, len, "%s", PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
	PQclear(r);
}

static const struct sw_db_stmt thing_create = {
	"test_thing_create",
	"INSERT INTO things (name) VALUES ($1) RETURNING created_at, name, id, 'x', 'x'",
	1,
	SW_DB_AUDITED(2, 1),
};

TEST(an_action_and_its_record_are_written_together)
{
	setup();
	REQUIRE(sw_db_audited_build(&thing_create) == 0);
	long before = count("SELECT count(*) FROM audit_logs");
	const char *p[] = { "alpha" };
	struct sw_db_audit_row a = { NULL, NULL, "thing.created", "thing", NULL, "203.0.113.9",
				     "{\"by\": \"test\"}" };
	PGresult *r = run(&thing_create, p, &a);
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
	REQUIRE(PQntuples(r) == 1);
	/* The statement's own result, columns in its own order. */
	CHECK(PQnfields(r) == 5);
	CHECK_STR_EQ(PQgetvalue(r, 0, 1), "alpha");
	char id[37];
	snprintf(id, sizeof(id), "%s", PQgetvalue(r, 0, 2));
	PQclear(r);
	CHECK(count("SELECT count(*) FROM audit_logs") == before + 1);
	char want[200], got[200];
	snprintf(want, sizeof(want), "thing.created|%s|{\"by\": \"test\", \"name\": \"alpha\"}", id);
	newest(got, sizeof(got));
	CHECK_STR_EQ(got, want);
}

static const struct sw_db_stmt thing_rename = {
	"test_thing_rename",
	"WITH t(k) AS (SELECT id FROM things WHERE name = $1),"
	" u AS (UPDATE things SET name = $2 FROM t WHERE id = t.k RETURNING id, name)"
	" SELECT u.id, u.name, '(not a cte)' FROM u",
	2,
	SW_DB_AUDITED(0, -1),
};

TEST(a_statement_with_its_own_data_modifying_ctes_is_audited_too)
{
	setup();
	REQUIRE(sw_db_audited_build(&thing_rename) == 0);
	PGresult *ins = PQexec(pg, "INSERT INTO things (name) VALUES ('before')");
	PQclear(ins);
	const char *p[] = { "before", "after" };
	struct sw_db_audit_row a = { NULL, NULL, "thing.renamed", "thing", NULL, NULL, NULL };
	PGresult *r = run(&thing_rename, p, &a);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		fprintf(stderr, "  %s\n  %s", thing_rename.audited->twin.sql, PQresultErrorMessage(r));
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
	REQUIRE(PQntuples(r) == 1);
	CHECK_STR_EQ(PQgetvalue(r, 0, 1), "after");
	CHECK_STR_EQ(PQgetvalue(r, 0, 2), "(not a cte)");
	char want[200], got[200];
	snprintf(want, sizeof(want), "thing.renamed|%s|{}", PQgetvalue(r, 0, 0));
	PQclear(r);
	newest(got, sizeof(got));
	CHECK_STR_EQ(got, want);
	CHECK(count("SELECT count(*) FROM things WHERE name = 'after'") == 1);
}

TEST(an_action_that_finds_nothing_writes_no_record)
{
	setup();
	REQUIRE(sw_db_audited_build(&thing_rename) == 0);
	long before = count("SELECT count(*) FROM audit_logs");
	const char *p[] = { "nobody has this name", "x" };
	struct sw_db_audit_row a = { NULL, NULL, "thing.renamed", "thing", NULL, NULL, NULL };
	PGresult *r = run(&thing_rename, p, &a);
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
	CHECK(PQntuples(r) == 0);
	PQclear(r);
	CHECK(count("SELECT count(*) FROM audit_logs") == before);
}

TEST(a_record_that_cannot_be_written_undoes_the_action)
{
	setup();
	REQUIRE(sw_db_audited_build(&thing_create) == 0);
	long things = count("SELECT count(*) FROM things");
	long records = count("SELECT count(*) FROM audit_logs");
	const char *p[] = { "never kept" };
	/* An organization id that names no organization: the record's
	 * foreign key refuses it, so the insert of the thing goes too. */
	struct sw_db_audit_row a = { "00000000-0000-4000-8000-000000000000", NULL, "thing.created",
				     "thing", NULL, NULL, NULL };
	PGresult *r = run(&thing_create, p, &a);
	CHECK(PQresultStatus(r) == PGRES_FATAL_ERROR);
	PQclear(r);
	CHECK(count("SELECT count(*) FROM things") == things);
	CHECK(count("SELECT count(*) FROM audit_logs") == records);
	CHECK(count("SELECT count(*) FROM things WHERE name = 'never kept'") == 0);
}

static const struct sw_db_stmt thing_touch = {
	"test_thing_touch",
	"UPDATE things SET name = name WHERE name = $1 RETURNING id, name, $2::boolean",
	2,
	&(struct sw_db_audited){ .id_col = 0, .name_col = -1, .ncols = 3,
				 .action_sql = "CASE WHEN c2 THEN 'thing.touched' ELSE 'thing.looked_at' END",
				 .metadata_sql = "jsonb_build_object('changed', c2)",
				 .when_sql = "c1 <> 'quiet'" },
};

TEST(the_record_may_take_its_action_metadata_and_condition_from_the_row)
{
	setup();
	REQUIRE(sw_db_audited_build(&thing_touch) == 0);
	PQclear(PQexec(pg, "INSERT INTO things (name) VALUES ('loud'), ('quiet')"));
	struct sw_db_audit_row a = { NULL, NULL, NULL, "thing", NULL, NULL, NULL };
	const char *p1[] = { "loud", "true" };
	PGresult *r = run(&thing_touch, p1, &a);
	REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
	char want[200], got[200];
	snprintf(want, sizeof(want), "thing.touched|%s|{\"changed\": true}", PQgetvalue(r, 0, 0));
	PQclear(r);
	newest(got, sizeof(got));
	CHECK_STR_EQ(got, want);
	/* The condition fails for 'quiet': the action happens, no record. */
	long before = count("SELECT count(*) FROM audit_logs");
	const char *p2[] = { "quiet", "false" };
	r = run(&thing_touch, p2, &a);
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1);
	PQclear(r);
	CHECK(count("SELECT count(*) FROM audit_logs") == before);
}

static const struct sw_db_stmt thing_purge = {
	"test_thing_purge",
	"WITH d AS (DELETE FROM things WHERE name = $1 RETURNING id) SELECT id FROM things WHERE false",
	1,
	&(struct sw_db_audited){ .id_col = -1, .name_col = -1, .always = true },
};

TEST(an_always_recorded_statement_is_recorded_without_a_row)
{
	setup();
	REQUIRE(sw_db_audited_build(&thing_purge) == 0);
	long before = count("SELECT count(*) FROM audit_logs");
	const char *p[] = { "loud" };
	struct sw_db_audit_row a = { NULL, NULL, "thing.purged", "thing", "all-loud", NULL, NULL };
	PGresult *r = run(&thing_purge, p, &a);
	CHECK(PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 0);
	PQclear(r);
	CHECK(count("SELECT count(*) FROM audit_logs") == before + 1);
	char got[200];
	newest(got, sizeof(got));
	CHECK_STR_EQ(got, "thing.purged|all-loud|{}");
}

TEST(every_registered_audited_statement_has_a_twin_that_postgresql_prepares)
{
	setup();
	size_t n;
	const struct sw_db_stmt *const *all = sw_db_statements(&n);
	int twins = 0;
	for (size_t i = 0; i < n; i++) {
		if (!all[i]->audited)
			continue;
		const struct sw_db_stmt *t = &all[i]->audited->twin;
		REQUIRE(i + 1 < n && all[i + 1] == t);
		PGresult *r = PQprepare(pg, t->name, t->sql, t->nparams, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK)
			fprintf(stderr, "  %s: %s", t->name, PQresultErrorMessage(r));
		CHECK(PQresultStatus(r) == PGRES_COMMAND_OK);
		PQclear(r);
		twins++;
	}
	printf("  %d audited statements\n", twins);
}

TEST(a_statement_without_an_audit_shape_is_refused)
{
	static const struct sw_db_stmt plain = { "test_plain", "SELECT 1", 0, NULL };
	struct sw_db_audit_row a = { NULL, NULL, "x", "x", NULL, NULL, NULL };
	CHECK(sw_db_query_audited(NULL, &plain, NULL, 0, &a, NULL, NULL) == -EINVAL);
}

TEST_MAIN()
