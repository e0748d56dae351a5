/* A scratch PostgreSQL cluster for the unit tests that need a real server
 * (test_db_pool.c, test_db_migrate.c). Why here: both had their own copy of
 * the same start/skip/teardown/create-database code; one copy keeps the skip
 * rule and the clean-up the same for every such test.
 *
 * scratch_cluster_start() starts one cluster per process with
 * sw_db_embedded_start in a mkdtemp directory /tmp/<prefix>-XXXXXX (its data
 * in <dir>/data) and removes that directory at exit, unless SW_TEST_KEEP is
 * set (then it stays, with the server's pg.log). It exits 77 with
 * "skipped: <why>" when the PostgreSQL server binaries are not installed,
 * and 1 on any other failure. State is in scratch_db (one per test file). */
#ifndef STEWARD_TEST_DB_SCRATCH_H
#define STEWARD_TEST_DB_SCRATCH_H

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "steward/db/db.h"

static struct {
	char dir[64];       /* the mkdtemp directory, removed at exit */
	char data_dir[128]; /* <dir>/data, given to sw_db_embedded_start */
	char conninfo[512]; /* the cluster's "steward" database */
	bool started;       /* a test that stops the server may clear it */
} scratch_db;

static int scratch_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void scratch_teardown(void)
{
	sw_db_embedded_stop();
	/* SW_TEST_KEEP=1 keeps the cluster's directory (and its pg.log). */
	if (scratch_db.dir[0] && !getenv("SW_TEST_KEEP"))
		nftw(scratch_db.dir, scratch_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Starts the scratch cluster unless scratch_db.started; exits 77 without
 * PostgreSQL. prefix names the directory, e.g. "sw-pool". */
static void scratch_cluster_start(const char *prefix)
{
	if (scratch_db.started)
		return;
	snprintf(scratch_db.dir, sizeof(scratch_db.dir), "/tmp/%s-XXXXXX", prefix);
	if (!mkdtemp(scratch_db.dir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(scratch_teardown);
	/* As root the server runs as "postgres", which must traverse this. */
	chmod(scratch_db.dir, 0711);
	snprintf(scratch_db.data_dir, sizeof(scratch_db.data_dir), "%s/data", scratch_db.dir);
	char err[1024];
	int r = sw_db_embedded_start(scratch_db.data_dir, scratch_db.conninfo,
				     sizeof(scratch_db.conninfo), err, sizeof(err));
	if (r == -ENOENT && (strstr(err, "not found") || strstr(err, "apt-get install"))) {
		printf("skipped: %s\n", err);
		exit(77);
	}
	if (r < 0) {
		fprintf(stderr, "embedded start failed: %s\n", err);
		exit(1);
	}
	scratch_db.started = true;
}

/* Creates database name in the started cluster, migrated when migrate is
 * true, and writes its conninfo (user steward) into out; exits 1 on failure. */
static inline void scratch_fresh_database(const char *name, bool migrate, char *out, size_t outlen)
{
	PGconn *pg = PQconnectdb(scratch_db.conninfo);
	if (PQstatus(pg) != CONNECTION_OK) {
		fprintf(stderr, "connect: %s", PQerrorMessage(pg));
		exit(1);
	}
	char sql[128];
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
	PGresult *res = PQexec(pg, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "create database: %s", PQerrorMessage(pg));
		exit(1);
	}
	PQclear(res);
	PQfinish(pg);
	snprintf(out, outlen, "%s", scratch_db.conninfo);
	char *d = strstr(out, "dbname=steward");
	if (!d) {
		fprintf(stderr, "unexpected conninfo %s\n", scratch_db.conninfo);
		exit(1);
	}
	snprintf(d, outlen - (size_t)(d - out), "dbname=%s user=steward", name);
	char err[512];
	if (migrate && sw_db_migrate(out, err, sizeof(err)) < 0) {
		fprintf(stderr, "migrate: %s\n", err);
		exit(1);
	}
}

/* The cluster's conninfo with its port turned to 5999, where nothing
 * listens, into out; false when it has no "port=5432" to turn. */
static inline bool scratch_unreachable_conninfo(char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", scratch_db.conninfo);
	char *d = strstr(out, "port=5432");
	if (!d)
		return false;
	memcpy(d, "port=5999", 9);
	return true;
}

#endif
