/* Audited statements: the action and its audit record in one statement.
 *
 * An audit record written after the answer, on another connection, is
 * lost by a crash or a full queue, and a reader may look for it before it
 * exists. So a statement that acts on someone's behalf has a twin that
 * does both, as a data-modifying CTE:
 *
 *   WITH <the statement's own CTEs,>
 *        sw_audited_x(c0, c1, ...) AS (<the statement>),
 *        sw_audited_a AS (INSERT INTO audit_logs (...)
 *              SELECT $n+1, ..., coalesce($n+5, sw_audited_x.c<id>::text), ...
 *              FROM sw_audited_x LIMIT 1)
 *   SELECT * FROM sw_audited_x
 *
 * One statement is one transaction: the record exists if and only if the
 * action returned a row, and an audit insert that fails undoes the action.
 * PostgreSQL refuses a data-modifying CTE below the top level, so a
 * statement that begins with WITH has its CTEs hoisted beside x rather
 * than nested inside it. Columns are renamed c0..ck positionally (a CTE
 * may name fewer columns than it has), so the statement's own column
 * names, repeated or unnamed, do not matter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/db/db.h"
#include "db/db_internal.h"

/* Where the final statement of sql begins, when sql opens with a WITH list
 * (its CTEs are sql[5..ret) then): the first top-level byte after a CTE's
 * closing parenthesis that is not a comma. 0 when sql has no WITH list or
 * cannot be read (unbalanced parentheses or quotes). */
static size_t final_statement(const char *sql)
{
	if (strncmp(sql, "WITH ", 5) != 0)
		return 0;
	int depth = 0;
	bool closed = false; /* a CTE's body just closed at depth 0 */
	for (size_t i = 5; sql[i]; i++) {
		char c = sql[i];
		if (c == '\'' || c == '"') {
			const char *q = strchr(sql + i + 1, c);
			if (!q)
				return 0;
			i = (size_t)(q - sql);
			continue;
		}
		if (c == '(') {
			depth++;
		} else if (c == ')') {
			if (--depth < 0)
				return 0;
			closed = depth == 0;
			continue;
		} else if (closed && c == ',') {
			closed = false;
		} else if (closed && strncmp(sql + i, "AS", 2) == 0 &&
			   (sql[i + 2] == ' ' || sql[i + 2] == '(')) {
			closed = false; /* that was the CTE's column list */
		} else if (closed && c != ' ' && c != '\n' && c != '\t') {
			return i;
		}
	}
	return 0;
}

/* ", <expr>" in buf for a coalesce() when expr is set, else "". */
static const char *or_expr(const char *expr, char *buf, size_t len)
{
	if (!expr)
		return "";
	snprintf(buf, len, ", %s", expr);
	return buf;
}

int sw_db_audited_build(const struct sw_db_stmt *s)
{
	struct sw_db_audited *au = s->audited;
	if (au->twin.sql)
		return 0; /* built once, kept for the process's life */
	int n = s->nparams;
	int k = au->id_col > au->name_col ? au->id_col : au->name_col;
	if (au->ncols > k + 1)
		k = au->ncols - 1;
	char cols[512] = "";
	for (int i = 0, off = 0; i <= k && off < (int)sizeof(cols) - 8; i++)
		off += snprintf(cols + off, sizeof(cols) - (size_t)off, "%sc%d", i ? ", " : "", i);
	char id[32] = "NULL", name[64] = "", ab[256], tb[256], yb[256], cb[256];
	if (au->id_col >= 0)
		snprintf(id, sizeof(id), "c%d::text", au->id_col);
	if (au->name_col >= 0)
		snprintf(name, sizeof(name), " || jsonb_build_object('name', c%d)", au->name_col);
	size_t cut = final_statement(s->sql);
	size_t len = strlen(s->sql) + strlen(cols) + 1024 + (au->metadata_sql ? strlen(au->metadata_sql) : 0) +
		     (au->when_sql ? strlen(au->when_sql) : 0);
	char *sql = malloc(len), *tname = malloc(strlen(s->name) + 8);
	if (!sql || !tname) {
		free(sql);
		free(tname);
		return -ENOMEM;
	}
	int w = snprintf(sql, len,
			 "WITH %.*s%ssw_audited_x%s%s%s AS (%s),"
			 " sw_audited_a AS (INSERT INTO audit_logs (organization_id, actor_user_id, action,"
			 " target_type, target_id, ip, metadata)"
			 " SELECT coalesce($%d::uuid%s), coalesce($%d::uuid%s), coalesce($%d%s), coalesce($%d%s),"
			 " coalesce($%d, %s), $%d, coalesce($%d::jsonb, '{}'::jsonb)%s%s%s%s"
			 " FROM %s%s%s LIMIT 1)"
			 " SELECT * FROM sw_audited_x",
			 cut ? (int)(cut - 5) : 0, s->sql + 5, cut ? ", " : "", k >= 0 ? "(" : "", cols,
			 k >= 0 ? ")" : "", s->sql + cut, n + 1, or_expr(au->organization_sql, tb, sizeof(tb)),
			 n + 2, or_expr(au->actor_sql, cb, sizeof(cb)), n + 3,
			 or_expr(au->action_sql, ab, sizeof(ab)), n + 4,
			 or_expr(au->target_type_sql, yb, sizeof(yb)), n + 5, id, n + 6, n + 7, name, au->metadata_sql ? " || (" : "",
			 au->metadata_sql ? au->metadata_sql : "", au->metadata_sql ? ")" : "",
			 au->always ? "(SELECT 1) sw_audited_one LEFT JOIN (SELECT * FROM sw_audited_x"
				      " LIMIT 1) sw_audited_x ON true"
				    : "sw_audited_x",
			 au->when_sql ? " WHERE " : "", au->when_sql ? au->when_sql : "");
	if (w < 0 || (size_t)w >= len) {
		free(sql);
		free(tname);
		return -EOVERFLOW;
	}
	sprintf(tname, "%s+audit", s->name);
	au->twin = (struct sw_db_stmt){ tname, sql, n + SW_DB_AUDIT_PARAMS, NULL };
	return 0;
}
