/* Organizations, members, invitations, users and the audit log.
 *
 * Everything here is scoped to the caller's organization (the one of the
 * session or token): /organizations/:id with another organization's id is
 * 404, exactly as an id that does not exist, and GET /users lists only the
 * caller's organization. Only the audit log, an operator's route, spans the
 * installation.
 *
 * Decisions (also in the OpenAPI document):
 * - An organization never loses its last OWNER: demoting or removing the
 *   last one is 409 LAST_OWNER. Changes of one organization's memberships
 *   are serialised in the database (the functions of 0006_organizations.sql
 *   lock the organization's row).
 * - A role change takes effect on the member's next request; removing a
 *   member also revokes the member's sessions and API tokens of this
 *   organization. Both notify "user:<id>" and forget it here at once.
 * - Invitations: POST answers the invitation token once (there is no mail
 *   for invitations; the OWNER hands the token on). 7 days, single use,
 *   bound to the invited address (the account is created with it), stored
 *   as a SHA-256. At most 100 open per organization; one open per address.
 *   POST /invitations/accept creates the account and its membership and
 *   signs it in; an address that already has an account is 409
 *   EMAIL_REGISTERED (accepting into a second organization is not offered
 *   yet). An unknown, used, cancelled or expired token is 422 on "token".
 * - Cancelling an invitation that is already cancelled is 204 again; one
 *   that was accepted is 409 INVITATION_ACCEPTED.
 * - GET /users/:id/sessions: one's own (every organization, as GET
 *   /auth/sessions), or, for an OWNER or ADMIN, another member's sessions in
 *   this organization; a member lacking the role gets 403, an id outside the
 *   organization 404.
 * - Pagination (the convention of every paginated list): ?limit= (1..200,
 *   default 50) and ?cursor= (opaque, from the previous page); the body is
 *   {"data": [...], "pagination": {"nextCursor": "..." | null}}. Unknown or
 *   repeated query parameters are 422. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <time.h>
#include <openssl/crypto.h>
#include "steward/auth.h"
#include "steward/limits.h"
#include "steward/secret.h"
#include "steward/validate.h"
#include "api/internal.h"
#include "db/statements_organizations.h"

#define PAGE_DEFAULT 50
#define PAGE_MAX 200
#define INVITATION_TOKEN_BYTES 32
#define AUDIT_ACTION_MAX 100

static void not_found(struct sw_http_request *req)
{
	sw_http_error(req, 404, "NOT_FOUND", "The requested resource does not exist.");
}

/* Answers a failed query, or 404 when res has not exactly one row; true
 * when there is the row to use. */
static bool found(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err)
{
	if (err->code)
		sw_api_db_error(req, err);
	else if (PQntuples(res) != 1)
		not_found(req);
	return !err->code && PQntuples(res) == 1;
}

/* A handler's state in the request's arena, zeroed, its first member the
 * request; NULL when out of memory (answered). */
static void *state_new(struct sw_http_request *req, size_t size)
{
	struct sw_http_request **s = sw_arena_alloc(&req->arena, size);
	if (!s) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return NULL;
	}
	memset(s, 0, size);
	*s = req;
	return s;
}

static const char *nullable(const PGresult *res, int row, int col)
{
	return PQgetisnull(res, row, col) ? NULL : PQgetvalue(res, row, col);
}

/* The :id of /organizations/:id must be the caller's organization; any
 * other (existing or not) answers 404. */
static bool own_organization(struct sw_http_request *req)
{
	struct sw_str id = req->params.value[0];
	if (!sw_is_uuid(id) || !sw_str_case_eq(id, sw_str_cstr(req->principal.organization_id))) {
		not_found(req);
		return false;
	}
	return true;
}

/* Copies a path parameter that must be a UUID into out; 404 otherwise. */
static bool uuid_param(struct sw_http_request *req, unsigned i, char out[37])
{
	struct sw_str v = req->params.value[i];
	if (!sw_is_uuid(v)) {
		not_found(req);
		return false;
	}
	snprintf(out, 37, "%.*s", (int)v.len, v.ptr);
	return true;
}

/* Writes an audit record of the caller's organization with metadata built
 * by jansson (meta is stolen; never a secret in it). */
static void audit(struct sw_http_request *req, const char *action, const char *target_type,
		  const char *target_id, json_t *meta)
{
	char *m = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
	json_decref(meta);
	sw_api_audit(req, req->principal.organization_id, req->principal.user_id, action, target_type,
		     target_id, m);
	free(m);
}

static bool valid_role(struct sw_str s)
{
	return sw_str_eq(s, SW_STR("OWNER")) || sw_str_eq(s, SW_STR("ADMIN")) ||
	       sw_str_eq(s, SW_STR("MEMBER"));
}

/* Reads a required "role" member into out. */
static void role_field(json_t *body, char out[8], struct sw_field_errors *fe)
{
	struct sw_str role;
	if (sw_api_string_field(body, "role", &role, fe, true)) {
		if (valid_role(role))
			snprintf(out, 8, "%.*s", (int)role.len, role.ptr);
		else
			sw_field_error(fe, "role", "must be OWNER, ADMIN or MEMBER");
	}
}

/* ---- query strings and pages ---- */

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s ('+' is a space) into the arena; NULL when it does not
 * decode or holds a control character. */
static char *query_decode(struct sw_arena *a, struct sw_str s)
{
	char *out = sw_arena_alloc(a, s.len + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < s.len; i++) {
		int c = (unsigned char)s.ptr[i];
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			if (i + 2 >= s.len)
				return NULL;
			int h = hex_value(s.ptr[i + 1]), l = hex_value(s.ptr[i + 2]);
			if (h < 0 || l < 0)
				return NULL;
			c = h * 16 + l;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f)
			return NULL;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return out;
}

/* Reads req->query: values[i] is the decoded value of names[i] or NULL when
 * absent. An unknown or repeated parameter, or a value that does not
 * decode, is a field error under the parameter's name; false then. */
static bool read_query(struct sw_http_request *req, const char *const *names, const char **values,
		       struct sw_field_errors *fe)
{
	for (size_t i = 0; names[i]; i++)
		values[i] = NULL;
	if (!req->query.len)
		return true;
	const char *p = req->query.ptr, *end = p + req->query.len;
	while (p < end) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		const char *stop = amp ? amp : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		struct sw_str key = sw_str_from(p, (size_t)((eq ? eq : stop) - p));
		struct sw_str raw = eq ? sw_str_from(eq + 1, (size_t)(stop - eq - 1)) : SW_STR_NULL;
		p = amp ? amp + 1 : end;
		if (!key.len && !raw.len)
			continue;
		size_t i = 0;
		while (names[i] && !sw_str_eq(sw_str_cstr(names[i]), key))
			i++;
		if (!names[i]) {
			char *k = sw_arena_strndup(&req->arena, key.ptr, SW_MIN(key.len, 64));
			sw_field_error(fe, k ? k : "query", "is not a known parameter");
		} else if (values[i]) {
			sw_field_error(fe, names[i], "must be given once");
		} else if (!(values[i] = query_decode(&req->arena, raw))) {
			sw_field_error(fe, names[i], "is not validly encoded");
			values[i] = "";
		}
	}
	return fe->count == 0;
}

static bool all_digits(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* A page request: limit rows after the cursor (both as SQL text). */
struct page {
	int limit;
	char limit_plus_one[12]; /* one more row says whether a next page exists */
	const char *after_us;   /* NULL: the first page */
	const char *after_id;
};

/* Reads ?limit= and ?cursor=. A cursor is "<microseconds>_<id>", the id a
 * UUID or (uuid_ids false) a number. */
static void read_page(struct sw_arena *a, const char *limit, const char *cursor, bool uuid_ids,
		      struct page *pg, struct sw_field_errors *fe)
{
	memset(pg, 0, sizeof(*pg));
	pg->limit = PAGE_DEFAULT;
	if (limit) {
		if (!all_digits(limit, 1, 3) || atoi(limit) < 1 || atoi(limit) > PAGE_MAX)
			sw_field_error(fe, "limit", "must be a whole number from 1 to 200");
		else
			pg->limit = atoi(limit);
	}
	snprintf(pg->limit_plus_one, sizeof(pg->limit_plus_one), "%d", pg->limit + 1);
	if (!cursor)
		return;
	const char *sep = strchr(cursor, '_');
	char *us = sep ? sw_arena_strndup(a, cursor, (size_t)(sep - cursor)) : NULL;
	const char *id = sep ? sep + 1 : "";
	bool id_ok = uuid_ids ? sw_is_uuid(sw_str_cstr(id)) : all_digits(id, 1, 19);
	if (!us || !all_digits(us, 1, 18) || !id_ok) {
		sw_field_error(fe, "cursor", "is not a cursor from a previous page");
		return;
	}
	pg->after_us = us;
	pg->after_id = id;
}

typedef void (*row_writer)(struct sw_json *j, const PGresult *res, int row);

/* Answers 200 with the rows of res as the data array, each written by w;
 * or the query's failure. With a page, the rows past pg->limit only say
 * that another page exists, and the body has its pagination, the cursor
 * made of the last row's columns us_col and id_col. */
static void answer_rows(struct sw_http_request *req, const PGresult *res, const struct sw_db_error *err,
			row_writer w, const struct page *pg, int us_col, int id_col)
{
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	int n = pg ? SW_MIN(PQntuples(res), pg->limit) : PQntuples(res);
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_array_begin(&j);
	for (int i = 0; i < n; i++)
		w(&j, res, i);
	sw_json_array_end(&j);
	if (pg) {
		sw_json_key(&j, "pagination");
		sw_json_object_begin(&j);
		sw_json_key(&j, "nextCursor");
		char next[96];
		snprintf(next, sizeof(next), "%s_%s", n ? PQgetvalue(res, n - 1, us_col) : "",
			 n ? PQgetvalue(res, n - 1, id_col) : "");
		sw_json_cstr(&j, PQntuples(res) > pg->limit ? next : NULL);
		sw_json_object_end(&j);
	}
	sw_http_json_end(req, 200, &buf, &j);
}

/* ---- RFC 3339 ---- */

static bool two_or_four_digits(const char *s, int n, int *ret)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

/* "2026-11-21T16:22:35.123Z" or with an offset ("+01:00"), a fraction of
 * up to 9 digits (kept to the microsecond), years 1970 to 9999; microseconds
 * since the epoch. */
static bool parse_rfc3339_us(const char *s, long long *ret)
{
	int Y, M, D, h, mi, sec;
	if (!two_or_four_digits(s, 4, &Y) || s[4] != '-' || !two_or_four_digits(s + 5, 2, &M) ||
	    s[7] != '-' || !two_or_four_digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') ||
	    !two_or_four_digits(s + 11, 2, &h) || s[13] != ':' || !two_or_four_digits(s + 14, 2, &mi) ||
	    s[16] != ':' || !two_or_four_digits(s + 17, 2, &sec))
		return false;
	const char *p = s + 19;
	long long frac = 0;
	if (*p == '.') {
		int n = 0;
		long long scale = 100000;
		for (p++; *p >= '0' && *p <= '9'; p++, n++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
		if (n < 1 || n > 9)
			return false;
	}
	int offset_s = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (!two_or_four_digits(p + 1, 2, &oh) || p[3] != ':' || !two_or_four_digits(p + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return false;
		offset_s = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return false;
	}
	if (*p || Y < 1970 || M < 1 || M > 12 || D < 1 || D > days_in_month(Y, M) || h > 23 ||
	    mi > 59 || sec > 59)
		return false;
	struct tm tm = { .tm_year = Y - 1900, .tm_mon = M - 1, .tm_mday = D, .tm_hour = h,
			 .tm_min = mi, .tm_sec = sec };
	*ret = ((long long)timegm(&tm) - offset_s) * 1000000LL + frac;
	return true;
}

/* ---- organizations ---- */

static void write_organization(struct sw_json *j, const PGresult *res)
{
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, PQgetvalue(res, 0, 0));
	sw_json_key(j, "name");
	sw_json_cstr(j, PQgetvalue(res, 0, 1));
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, PQgetvalue(res, 0, 2));
	sw_json_key(j, "updatedAt");
	sw_json_cstr(j, PQgetvalue(res, 0, 3));
	sw_json_object_end(j);
}

static void organization_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!found(req, res, err))
		return;
	if (req->method == SW_HTTP_PATCH)
		audit(req, "organization.renamed", "organization", PQgetvalue(res, 0, 0),
		      json_pack("{s:s, s:s}", "from", PQgetvalue(res, 0, 4), "to", PQgetvalue(res, 0, 1)));
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	write_organization(&j, res);
	sw_http_json_end(req, 200, &buf, &j);
}

static void organization_get(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_organization_get, params, 1, organization_done, req);
}

static void organization_rename(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "name", NULL };
	sw_api_known_fields(body, known, &fe);
	struct sw_str name;
	const char *msg;
	if (sw_api_string_field(body, "name", &name, &fe, true) &&
	    !sw_valid_display_name(name, SW_NAME_MAX_LEN, &name, &msg))
		sw_field_error(&fe, "name", msg);
	char *copy = fe.count ? NULL : sw_arena_strndup(&req->arena, name.ptr, name.len);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!copy) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[2] = { req->principal.organization_id, copy };
	sw_api_query(req, &sw_db_stmt_organization_rename, params, 2, organization_done, req);
}

/* ---- members and users ---- */

/* A member from columns base.. in enum sw_db_member_col order: as a member
 * ({userId, ..., joinedAt}) or as a user of GET /users ({id, ...,
 * createdAt}, which needs SW_DB_MEMBER_USER_CREATED_AT). */
static void write_member_as(struct sw_json *j, const PGresult *res, int row, int base, bool as_user)
{
	sw_json_object_begin(j);
	sw_json_key(j, as_user ? "id" : "userId");
	sw_json_cstr(j, PQgetvalue(res, row, base + SW_DB_MEMBER_USER_ID));
	sw_json_key(j, "email");
	sw_json_cstr(j, PQgetvalue(res, row, base + SW_DB_MEMBER_EMAIL));
	sw_json_key(j, "name");
	sw_json_cstr(j, PQgetvalue(res, row, base + SW_DB_MEMBER_NAME));
	sw_json_key(j, "role");
	sw_json_cstr(j, PQgetvalue(res, row, base + SW_DB_MEMBER_ROLE));
	sw_json_key(j, as_user ? "createdAt" : "joinedAt");
	sw_json_cstr(j, PQgetvalue(res, row, base + (as_user ? SW_DB_MEMBER_USER_CREATED_AT :
							    SW_DB_MEMBER_JOINED_AT)));
	sw_json_object_end(j);
}

static void write_member(struct sw_json *j, const PGresult *res, int row)
{
	write_member_as(j, res, row, 0, false);
}

static void write_user(struct sw_json *j, const PGresult *res, int row)
{
	write_member_as(j, res, row, 0, true);
}

struct members {
	struct sw_http_request *req;
	struct page page;
	bool as_users;
};

static void members_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct members *m = arg;
	answer_rows(m->req, res, err, m->as_users ? write_user : write_member, &m->page,
		    SW_DB_MEMBER_CURSOR_US, SW_DB_MEMBER_USER_ID);
}

static void members_page(struct sw_http_request *req, bool as_users)
{
	static const char *const names[] = { "limit", "cursor", NULL };
	const char *values[2];
	struct sw_field_errors fe = { 0 };
	struct members *m = state_new(req, sizeof(*m));
	if (!m)
		return;
	m->as_users = as_users;
	if (read_query(req, names, values, &fe))
		read_page(&req->arena, values[0], values[1], true, &m->page, &fe);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[4] = { req->principal.organization_id, m->page.after_us, m->page.after_id,
				  m->page.limit_plus_one };
	sw_api_query(req, &sw_db_stmt_members_page, params, 4, members_done, m);
}

static void members_list(struct sw_http_request *req)
{
	if (own_organization(req))
		members_page(req, false);
}

static void users_list(struct sw_http_request *req)
{
	members_page(req, true);
}

/* A membership change answered: false when it failed (409 LAST_OWNER for
 * the last-owner rule) or found no member (404). */
static bool membership_changed(struct sw_http_request *req, const PGresult *res,
			       const struct sw_db_error *err)
{
	if (err->code == -EIO && strcmp(err->sqlstate, SW_DB_SQLSTATE_LAST_OWNER) == 0) {
		sw_http_error(req, 409, "LAST_OWNER",
			      "The organization must keep at least one OWNER; make another member OWNER first.");
		return false;
	}
	return found(req, res, err);
}

static void role_changed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!membership_changed(req, res, err))
		return;
	const char *before = PQgetvalue(res, 0, 0), *after = PQgetvalue(res, 0, 1 + SW_DB_MEMBER_ROLE);
	if (strcmp(before, after) != 0) {
		const char *user = PQgetvalue(res, 0, 1 + SW_DB_MEMBER_USER_ID);
		sw_auth_cache_forget_user(user);
		audit(req, "membership.role_changed", "user", user,
		      json_pack("{s:s, s:s}", "from", before, "to", after));
	}
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	write_member_as(&j, res, 0, 1, false);
	sw_http_json_end(req, 200, &buf, &j);
}

static void member_set_role(struct sw_http_request *req)
{
	char user[37];
	if (!own_organization(req) || !uuid_param(req, 1, user))
		return;
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "role", NULL };
	sw_api_known_fields(body, known, &fe);
	char role[8] = "";
	role_field(body, role, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[3] = { req->principal.organization_id, user, role };
	sw_api_query(req, &sw_db_stmt_member_set_role, params, 3, role_changed, req);
}

/* The state of a request about one object named in its path. */
struct target {
	struct sw_http_request *req;
	char id[37];
};

static void member_removed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct target *t = arg;
	struct sw_http_request *req = t->req;
	if (!membership_changed(req, res, err))
		return;
	sw_auth_cache_forget_user(t->id);
	audit(req, "membership.removed", "user", t->id,
	      json_pack("{s:s, s:I, s:I}", "role", PQgetvalue(res, 0, 0), "sessionsRevoked",
			(json_int_t)strtoll(PQgetvalue(res, 0, 1), NULL, 10), "tokensRevoked",
			(json_int_t)strtoll(PQgetvalue(res, 0, 2), NULL, 10)));
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

/* The target of /organizations/:id/<things>/:thingId: the caller's own
 * organization and a UUID, else answered (404). */
static struct target *org_target(struct sw_http_request *req)
{
	struct target *t = state_new(req, sizeof(*t));
	return t && own_organization(req) && uuid_param(req, 1, t->id) ? t : NULL;
}

static void member_remove(struct sw_http_request *req)
{
	struct target *t = org_target(req);
	if (!t)
		return;
	const char *params[2] = { req->principal.organization_id, t->id };
	sw_api_query(req, &sw_db_stmt_member_remove, params, 2, member_removed, t);
}

/* ---- a member's sessions ---- */

struct member_sessions {
	struct sw_http_request *req;
	char user_id[37];
	char session_id[37]; /* "" when listing, or when not a UUID */
	bool revoke;
};

static void member_sessions_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code)
		sw_api_db_error(req, err);
	else
		sw_api_write_sessions(req, res, NULL);
}

static void member_checked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct member_sessions *ms = arg;
	struct sw_http_request *req = ms->req;
	if (!found(req, res, err))
		return;
	if (!sw_access_allows(SW_ACCESS_OWNER_ADMIN, &req->principal)) {
		sw_http_error(req, 403, "FORBIDDEN",
			      "Only an OWNER or ADMIN may see or revoke another member's sessions.");
		return;
	}
	if (!ms->revoke) {
		const char *params[2] = { ms->user_id, req->principal.organization_id };
		sw_api_query(req, &sw_db_stmt_member_sessions_list, params, 2, member_sessions_listed, req);
	} else if (PQgetvalue(res, 0, 1)[0] != 't') {
		not_found(req);
	} else {
		sw_api_revoke_session_of(req, ms->user_id, sw_str_cstr(ms->session_id));
	}
}

/* GET /users/:id/sessions and DELETE /users/:id/sessions/:sessionId. */
static void user_sessions(struct sw_http_request *req, bool revoke)
{
	struct member_sessions *ms = state_new(req, sizeof(*ms));
	if (!ms || !uuid_param(req, 0, ms->user_id))
		return;
	ms->revoke = revoke;
	if (strcasecmp(ms->user_id, req->principal.user_id) == 0) {
		if (revoke)
			sw_api_revoke_session_of(req, req->principal.user_id, req->params.value[1]);
		else
			sw_api_sessions_list(req);
		return;
	}
	if (revoke && sw_is_uuid(req->params.value[1]))
		snprintf(ms->session_id, sizeof(ms->session_id), "%.*s", (int)req->params.value[1].len,
			 req->params.value[1].ptr);
	const char *params[3] = { req->principal.organization_id, ms->user_id,
				  ms->session_id[0] ? ms->session_id : NULL };
	sw_api_query(req, &sw_db_stmt_member_session_check, params, 3, member_checked, ms);
}

static void user_sessions_list(struct sw_http_request *req)
{
	user_sessions(req, false);
}

static void user_sessions_revoke(struct sw_http_request *req)
{
	user_sessions(req, true);
}

/* ---- invitations ---- */

/* An invitation (INVITATION_COLUMNS); token only right after creation. */
static void write_invitation_with(struct sw_json *j, const PGresult *res, int row, const char *token)
{
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, PQgetvalue(res, row, 0));
	sw_json_key(j, "email");
	sw_json_cstr(j, PQgetvalue(res, row, 1));
	sw_json_key(j, "role");
	sw_json_cstr(j, PQgetvalue(res, row, 2));
	sw_json_key(j, "invitedBy");
	sw_json_cstr(j, nullable(res, row, 3));
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, PQgetvalue(res, row, 4));
	sw_json_key(j, "expiresAt");
	sw_json_cstr(j, PQgetvalue(res, row, 5));
	if (token) {
		sw_json_key(j, "token");
		sw_json_cstr(j, token);
	}
	sw_json_object_end(j);
}

static void write_invitation(struct sw_json *j, const PGresult *res, int row)
{
	write_invitation_with(j, res, row, NULL);
}

static void invitations_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	answer_rows(arg, res, err, write_invitation, NULL, 0, 0);
}

static void invitations_list(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_invitations_list, params, 1, invitations_listed, req);
}

struct invite {
	struct sw_http_request *req;
	char token[SW_BASE64URL_LEN(INVITATION_TOKEN_BYTES) + 1];
};

static void invited(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct invite *in = arg;
	struct sw_http_request *req = in->req;
	if (err->code || PQntuples(res) != 1) {
		OPENSSL_cleanse(in->token, sizeof(in->token));
		const char *state = err->code == -EIO ? err->sqlstate : "";
		if (strcmp(state, SW_DB_SQLSTATE_ALREADY_MEMBER) == 0)
			sw_http_error(req, 409, "ALREADY_MEMBER", "That address belongs to a member already.");
		else if (strcmp(state, SW_DB_SQLSTATE_INVITATION_PENDING) == 0)
			sw_http_error(req, 409, "INVITATION_PENDING",
				      "That address has an open invitation; cancel it to invite again.");
		else if (strcmp(state, SW_DB_SQLSTATE_TOO_MANY_INVITATIONS) == 0)
			sw_http_error(req, 409, "TOO_MANY_INVITATIONS",
				      "The organization has 100 open invitations; cancel some first.");
		else if (err->code)
			sw_api_db_error(req, err);
		else
			sw_http_error(req, 500, "INTERNAL_ERROR", "The invitation was not created.");
		return;
	}
	audit(req, "invitation.created", "invitation", PQgetvalue(res, 0, 0),
	      json_pack("{s:s, s:s}", "email", PQgetvalue(res, 0, 1), "role", PQgetvalue(res, 0, 2)));
	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	write_invitation_with(&j, res, 0, in->token);
	OPENSSL_cleanse(in->token, sizeof(in->token));
	sw_http_json_end(req, 201, &buf, &j);
}

static void invitation_create(struct sw_http_request *req)
{
	if (!own_organization(req))
		return;
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "email", "role", NULL };
	sw_api_known_fields(body, known, &fe);
	struct sw_str email_in;
	char email[SW_EMAIL_MAX_LEN + 1];
	const char *msg;
	if (sw_api_string_field(body, "email", &email_in, &fe, true) &&
	    !sw_valid_email(email_in, email, sizeof(email), &msg))
		sw_field_error(&fe, "email", msg);
	char role[8] = "";
	role_field(body, role, &fe);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct invite *in = state_new(req, sizeof(*in));
	if (!in)
		return;
	if (sw_random_token(in->token, sizeof(in->token), INVITATION_TOKEN_BYTES) < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "The invitation could not be created.");
		return;
	}
	char hex[65];
	sw_sha256_hex(in->token, strlen(in->token), hex);
	const char *params[5] = { req->principal.organization_id, email, role, hex,
				  req->principal.user_id };
	if (!sw_api_query(req, &sw_db_stmt_invitation_create, params, 5, invited, in))
		OPENSSL_cleanse(in->token, sizeof(in->token));
}

static void invitation_cancelled(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct target *t = arg;
	struct sw_http_request *req = t->req;
	if (!found(req, res, err))
		return;
	bool now = PQgetvalue(res, 0, 1)[0] == 't';
	bool before = PQgetvalue(res, 0, 2)[0] == 't';
	if (!now && !before) {
		/* Accepted (column 0), possibly while this request waited for it. */
		sw_http_error(req, 409, "INVITATION_ACCEPTED", "The invitation has been accepted already.");
		return;
	}
	if (now)
		audit(req, "invitation.cancelled", "invitation", t->id,
		      json_pack("{s:s}", "email", PQgetvalue(res, 0, 3)));
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void invitation_cancel(struct sw_http_request *req)
{
	struct target *t = org_target(req);
	if (!t)
		return;
	const char *params[2] = { t->id, req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_invitation_cancel, params, 2, invitation_cancelled, t);
}

/* ---- POST /invitations/accept ---- */

struct accept {
	struct sw_http_request *req;
	char hex[65];
	char *name;
	char *password;
	size_t password_len;
};

static void accept_wipe(struct accept *a)
{
	if (a->password) {
		OPENSSL_cleanse(a->password, a->password_len);
		a->password = NULL;
	}
}

static void invitation_closed(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	sw_field_error(&fe, "token", "is not an open invitation (unknown, used, cancelled or expired)");
	sw_http_validation_error(req, &fe);
}

static void email_registered(struct sw_http_request *req)
{
	sw_http_error(req, 409, "EMAIL_REGISTERED",
		      "The invited address has an account already; sign in with it instead.");
}

static void accepted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct accept *a = arg;
	struct sw_http_request *req = a->req;
	const char *state = err->code == -EIO ? err->sqlstate : "";
	if (strcmp(state, SW_DB_SQLSTATE_INVITATION_CLOSED) == 0) {
		invitation_closed(req);
		return;
	}
	if (strcmp(state, SW_DB_SQLSTATE_EMAIL_REGISTERED) == 0) {
		email_registered(req);
		return;
	}
	if (!found(req, res, err))
		return;
	const char *user = PQgetvalue(res, 0, 0), *org = PQgetvalue(res, 0, 1);
	char *meta = NULL;
	json_t *m = json_pack("{s:s}", "role", PQgetvalue(res, 0, 3));
	if (m)
		meta = json_dumps(m, JSON_COMPACT);
	json_decref(m);
	sw_api_audit(req, org, user, "invitation.accepted", "invitation", PQgetvalue(res, 0, 2), meta);
	free(meta);
	sw_api_issue_session(req, user, org, "INVITATION", 201);
}

static void accept_hashed(void *arg, int herr, const char *encoded)
{
	struct accept *a = arg;
	struct sw_http_request *req = a->req;
	if (herr < 0) {
		sw_http_error(req, 500, "INTERNAL_ERROR", "The server failed to complete the request.");
		return;
	}
	const char *params[3] = { a->hex, a->name, encoded };
	sw_api_query(req, &sw_db_stmt_invitation_accept, params, 3, accepted, a);
}

static void accept_checked(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct accept *a = arg;
	struct sw_http_request *req = a->req;
	if (err->code || PQntuples(res) != 1 || PQgetvalue(res, 0, 3)[0] == 't') {
		accept_wipe(a);
		if (err->code)
			sw_api_db_error(req, err);
		else if (PQntuples(res) != 1)
			invitation_closed(req);
		else
			email_registered(req);
		return;
	}
	int r = sw_password_hash_async(req->loop, sw_str_from(a->password, a->password_len),
				       accept_hashed, a);
	accept_wipe(a);
	if (r < 0)
		sw_http_error(req, 503, "SERVICE_UNAVAILABLE", "The server is busy; try again shortly.");
}

static void invitation_accept(struct sw_http_request *req)
{
	json_t *body = sw_http_json_body(req);
	/* The raw body holds the password: parsed, it is no longer needed. */
	OPENSSL_cleanse((void *)req->body.ptr, req->body.len);
	if (!body)
		return;
	struct accept *a = state_new(req, sizeof(*a));
	if (!a) {
		json_decref(body);
		return;
	}
	struct sw_field_errors fe = { 0 };
	static const char *const known[] = { "token", "name", "password", NULL };
	sw_api_known_fields(body, known, &fe);
	struct sw_str token, name, password;
	const char *msg;
	if (sw_api_string_field(body, "token", &token, &fe, true)) {
		if (sw_session_token_well_formed(token))
			sw_sha256_hex(token.ptr, token.len, a->hex);
		else
			sw_field_error(&fe, "token", "is not an invitation token");
	}
	if (sw_api_string_field(body, "name", &name, &fe, true) &&
	    !sw_valid_display_name(name, SW_NAME_MAX_LEN, &name, &msg))
		sw_field_error(&fe, "name", msg);
	bool has_password = sw_api_string_field(body, "password", &password, &fe, true);
	if (has_password && !sw_password_acceptable(password, &msg))
		sw_field_error(&fe, "password", msg);
	if (!fe.count) {
		a->name = sw_arena_strndup(&req->arena, name.ptr, name.len);
		a->password = sw_arena_strndup(&req->arena, password.ptr, password.len);
		a->password_len = password.len;
	}
	/* jansson's copy of the body holds the password too. */
	if (has_password)
		OPENSSL_cleanse((void *)password.ptr, password.len);
	json_decref(body);
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	if (!a->name || !a->password) {
		accept_wipe(a);
		sw_http_error(req, 500, "INTERNAL_ERROR", "Out of memory.");
		return;
	}
	const char *params[1] = { a->hex };
	if (!sw_api_query(req, &sw_db_stmt_invitation_open, params, 1, accept_checked, a))
		accept_wipe(a);
}

/* ---- GET /audit-logs ---- */

struct audit_page {
	struct sw_http_request *req;
	struct page page;
};

static void write_audit_record(struct sw_json *j, const PGresult *res, int row)
{
	sw_json_object_begin(j);
	sw_json_key(j, "id");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_AUDIT_ID));
	sw_json_key(j, "organizationId");
	sw_json_cstr(j, nullable(res, row, SW_DB_AUDIT_ORGANIZATION_ID));
	sw_json_key(j, "actorUserId");
	sw_json_cstr(j, nullable(res, row, SW_DB_AUDIT_ACTOR_USER_ID));
	sw_json_key(j, "action");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_AUDIT_ACTION));
	sw_json_key(j, "targetType");
	sw_json_cstr(j, nullable(res, row, SW_DB_AUDIT_TARGET_TYPE));
	sw_json_key(j, "targetId");
	sw_json_cstr(j, nullable(res, row, SW_DB_AUDIT_TARGET_ID));
	sw_json_key(j, "ip");
	sw_json_cstr(j, nullable(res, row, SW_DB_AUDIT_IP));
	sw_json_key(j, "metadata");
	/* jsonb's text form: JSON written by PostgreSQL, not by a client. */
	sw_json_raw(j, sw_str_cstr(PQgetvalue(res, row, SW_DB_AUDIT_METADATA)));
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, PQgetvalue(res, row, SW_DB_AUDIT_CREATED_AT));
	sw_json_object_end(j);
}

static void audit_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct audit_page *ap = arg;
	answer_rows(ap->req, res, err, write_audit_record, &ap->page, SW_DB_AUDIT_CURSOR_US,
		    SW_DB_AUDIT_ID);
}

static bool valid_action(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > AUDIT_ACTION_MAX || s[0] == '.' || s[n - 1] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		bool word = (s[i] >= 'a' && s[i] <= 'z') || s[i] == '_';
		if (!word && !(s[i] == '.' && s[i + 1] != '.'))
			return false;
	}
	return true;
}

/* A since/until filter as microseconds (SQL text in the arena), or a field
 * error. */
static const char *time_filter(struct sw_http_request *req, const char *field, const char *v,
			       long long *ret_us, struct sw_field_errors *fe)
{
	if (!v)
		return NULL;
	if (!parse_rfc3339_us(v, ret_us)) {
		sw_field_error(fe, field, "must be an RFC 3339 date-time such as 2026-11-21T16:22:35.123Z");
		return NULL;
	}
	char *s = sw_arena_alloc(&req->arena, 24);
	if (!s) {
		sw_field_error(fe, field, "could not be read (out of memory)");
		return NULL;
	}
	snprintf(s, 24, "%lld", *ret_us);
	return s;
}

static void audit_logs(struct sw_http_request *req)
{
	static const char *const names[] = { "action", "actorUserId", "organizationId", "since",
					     "until", "limit", "cursor", NULL };
	enum { ACTION, ACTOR, ORG, SINCE, UNTIL, LIMIT, CURSOR };
	const char *v[7];
	struct sw_field_errors fe = { 0 };
	struct audit_page *ap = state_new(req, sizeof(*ap));
	if (!ap)
		return;
	const char *since = NULL, *until = NULL;
	if (read_query(req, names, v, &fe)) {
		if (v[ACTION] && !valid_action(v[ACTION]))
			sw_field_error(&fe, "action", "must be an action such as auth.session.revoked, or its start such as auth.session");
		if (v[ACTOR] && !sw_is_uuid(sw_str_cstr(v[ACTOR])))
			sw_field_error(&fe, "actorUserId", "must be a UUID");
		if (v[ORG] && !sw_is_uuid(sw_str_cstr(v[ORG])))
			sw_field_error(&fe, "organizationId", "must be a UUID");
		long long since_us = 0, until_us = 0;
		since = time_filter(req, "since", v[SINCE], &since_us, &fe);
		until = time_filter(req, "until", v[UNTIL], &until_us, &fe);
		if (since && until && until_us <= since_us)
			sw_field_error(&fe, "until", "must be later than since");
		read_page(&req->arena, v[LIMIT], v[CURSOR], false, &ap->page, &fe);
	}
	if (fe.count) {
		sw_http_validation_error(req, &fe);
		return;
	}
	const char *params[8] = { v[ACTION], v[ACTOR], v[ORG], since, until, ap->page.after_us,
				  ap->page.after_id, ap->page.limit_plus_one };
	sw_api_query(req, &sw_db_stmt_audit_page, params, 8, audit_listed, ap);
}

/* ---- routes and schemas ---- */

static const int err_org_read[] = { 404, 503, 0 };
static const int err_org_write[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_page[] = { 404, 422, 503, 0 };
static const int err_member_write[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_member_delete[] = { 404, 409, 503, 0 };
static const int err_accept[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_user_sessions[] = { 403, 404, 503, 0 };
static const int err_users[] = { 422, 503, 0 };

#define PAGINATION_DOC                                                                          \
	" Paginated: `?limit=` (1 to 200, default 50) and `?cursor=` (opaque: the "                \
	"`pagination.nextCursor` of the previous page); the body is `{\"data\": [...], "         \
	"\"pagination\": {\"nextCursor\": string or null}}`. Unknown or repeated query parameters " \
	"are 422."
#define SCOPED_DOC " An organization id other than the caller's is 404, as for one that does not exist."

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/organizations/:id", SW_ACCESS_SESSION, organization_get, 0, 0,
	  { "The caller's organization", "Any member." SCOPED_DOC,
	    "Organizations", NULL, "Organization", 200, err_org_read } },
	{ SW_HTTP_PATCH, "/organizations/:id", SW_ACCESS_OWNER, organization_rename, 4096, 0,
	  { "Rename the organization", "OWNER only. Audited as organization.renamed." SCOPED_DOC,
	    "Organizations", "OrganizationRenameRequest", "Organization", 200, err_org_write } },
	{ SW_HTTP_GET, "/organizations/:id/members", SW_ACCESS_SESSION, members_list, 0, 0,
	  { "Members of the organization", "Any member; in the order they joined." PAGINATION_DOC SCOPED_DOC,
	    "Organizations", NULL, "MemberList", 200, err_page } },
	{ SW_HTTP_PATCH, "/organizations/:id/members/:userId", SW_ACCESS_OWNER, member_set_role, 4096, 0,
	  { "Change a member's role",
	    "OWNER only. Demoting the last OWNER is 409 LAST_OWNER. Effective on the member's next "
	    "request, in every process. Audited as membership.role_changed." SCOPED_DOC,
	    "Organizations", "MemberRoleRequest", "Member", 200, err_member_write } },
	{ SW_HTTP_DELETE, "/organizations/:id/members/:userId", SW_ACCESS_OWNER, member_remove, 0, 0,
	  { "Remove a member",
	    "OWNER only; an OWNER may remove themselves while another OWNER remains. Removing the last "
	    "OWNER is 409 LAST_OWNER. The member's sessions and API tokens of this organization are "
	    "revoked at once (the account itself stays). Audited as membership.removed." SCOPED_DOC,
	    "Organizations", NULL, NULL, 204, err_member_delete } },
	{ SW_HTTP_GET, "/organizations/:id/invitations", SW_ACCESS_SESSION, invitations_list, 0, 0,
	  { "Open invitations of the organization",
	    "Any member; open (neither accepted, cancelled nor expired) invitations, newest first; "
	    "at most 100 exist. Never the invitation tokens." SCOPED_DOC,
	    "Organizations", NULL, "InvitationList", 200, err_org_read } },
	{ SW_HTTP_POST, "/organizations/:id/invitations", SW_ACCESS_OWNER, invitation_create, 4096, 0,
	  { "Invite an address",
	    "OWNER only. Answers the invitation `token` once: there is no mail for invitations, the "
	    "OWNER hands the token on, and the invitee accepts with POST /invitations/accept. Valid 7 "
	    "days, single use, bound to the address; only its SHA-256 is stored. 409 ALREADY_MEMBER, "
	    "409 INVITATION_PENDING (one open invitation per address; cancel it to invite again), 409 "
	    "TOO_MANY_INVITATIONS (100 open). Audited as invitation.created." SCOPED_DOC,
	    "Organizations", "InvitationCreateRequest", "InvitationCreated", 201, err_member_write } },
	{ SW_HTTP_DELETE, "/organizations/:id/invitations/:invitationId", SW_ACCESS_OWNER,
	  invitation_cancel, 0, 0,
	  { "Cancel an invitation",
	    "OWNER only. The token stops working at once. Cancelling a cancelled invitation is 204 "
	    "again; an accepted one is 409 INVITATION_ACCEPTED. Audited as invitation.cancelled." SCOPED_DOC,
	    "Organizations", NULL, NULL, 204, err_member_delete } },
	{ SW_HTTP_POST, "/invitations/accept", SW_ACCESS_PUBLIC, invitation_accept, 4096, 0,
	  { "Accept an invitation: create the account and sign it in",
	    "The only unauthenticated route that creates a user. The account gets the invited address, "
	    "the given name and password, and the invited role; the answer sets the session cookie "
	    "(method INVITATION). An unknown, used, cancelled or expired token is 422 on `token`; an "
	    "address that already has an account is 409 EMAIL_REGISTERED. Of concurrent accepts of "
	    "one invitation exactly one succeeds. Audited as invitation.accepted.",
	    "Organizations", "InvitationAcceptRequest", "SessionResult", 201, err_accept } },
	{ SW_HTTP_GET, "/users", SW_ACCESS_SESSION, users_list, 0, 0,
	  { "Users of the caller's organization",
	    "Only the caller's organization, for an operator too; in the order they joined, with their "
	    "role." PAGINATION_DOC,
	    "Users", NULL, "OrganizationUserList", 200, err_users } },
	{ SW_HTTP_GET, "/users/:id/sessions", SW_ACCESS_SESSION, user_sessions_list, 0, 0,
	  { "A user's live sessions",
	    "One's own (every organization, as GET /auth/sessions), or another member's sessions in "
	    "this organization for an OWNER or ADMIN (403 FORBIDDEN for another role). A user who is "
	    "not a member of the caller's organization is 404.",
	    "Users", NULL, "SessionList", 200, err_user_sessions } },
	{ SW_HTTP_DELETE, "/users/:id/sessions/:sessionId", SW_ACCESS_SESSION, user_sessions_revoke,
	  0, 0,
	  { "Revoke a user's session",
	    "Same rules as the list: one's own, or another member's session in this organization for "
	    "an OWNER or ADMIN. Effective on the next request, in every process. 404 for a session that "
	    "is not that user's live session here. Audited as auth.session.revoked.",
	    "Users", NULL, NULL, 204, err_user_sessions } },
	{ SW_HTTP_GET, "/audit-logs", SW_ACCESS_OPERATOR, audit_logs, 0, 0,
	  { "The audit log of the installation",
	    "Operators only (403 for everyone else). Newest first. Filters: `action` (an action, or "
	    "its leading words: `auth.session` matches `auth.session.revoked`), `actorUserId`, "
	    "`organizationId`, `since` (inclusive) and `until` (exclusive) as RFC 3339 date-times. "
	    "Records say who (actorUserId), what (action, target, metadata), when, and from which "
	    "address (ip); never a secret." PAGINATION_DOC,
	    "Audit", NULL, "AuditLogList", 200, err_users } },
};

#define UUID_T "{\"type\":\"string\",\"format\":\"uuid\"}"
#define TS_T "{\"type\":\"string\",\"format\":\"date-time\"}"
#define ROLE_T "{\"enum\":[\"OWNER\",\"ADMIN\",\"MEMBER\"]}"
#define NAME_T "{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}"
#define INVITATION_PROPERTIES                                                                  \
	"\"id\":" UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},\"role\":" ROLE_T "," \
	"\"invitedBy\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"                     \
	"\"createdAt\":" TS_T ",\"expiresAt\":" TS_T
#define INVITATION_REQUIRED "\"id\",\"email\",\"role\",\"invitedBy\",\"createdAt\",\"expiresAt\""

static const char schemas[] = "{"
	"\"Organization\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"createdAt\",\"updatedAt\"],"
	"\"properties\":{\"id\":" UUID_T ",\"name\":{\"type\":\"string\"},\"createdAt\":" TS_T ","
	"\"updatedAt\":" TS_T "}},"
	"\"OrganizationRenameRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\"],\"properties\":{\"name\":" NAME_T "}},"
	"\"Member\":{\"type\":\"object\",\"required\":[\"userId\",\"email\",\"name\",\"role\",\"joinedAt\"],"
	"\"properties\":{\"userId\":" UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"role\":" ROLE_T ",\"joinedAt\":" TS_T "}},"
	"\"MemberList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Member\"}},"
	"\"MemberRoleRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"role\"],\"properties\":{\"role\":" ROLE_T "}},"
	"\"Invitation\":{\"type\":\"object\",\"required\":[" INVITATION_REQUIRED "],\"properties\":{"
	INVITATION_PROPERTIES "}},"
	"\"InvitationList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Invitation\"}},"
	"\"InvitationCreated\":{\"type\":\"object\",\"required\":[" INVITATION_REQUIRED ",\"token\"],"
	"\"properties\":{" INVITATION_PROPERTIES ",\"token\":{\"type\":\"string\","
	"\"pattern\":\"^[A-Za-z0-9_-]{43}$\",\"description\":\"The invitation token; shown only in this "
	"response.\"}}},"
	"\"InvitationCreateRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"email\",\"role\"],\"properties\":{\"email\":{\"type\":\"string\","
	"\"format\":\"email\",\"maxLength\":254},\"role\":" ROLE_T "}},"
	"\"InvitationAcceptRequest\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"token\",\"name\",\"password\"],\"properties\":{"
	"\"token\":{\"type\":\"string\",\"writeOnly\":true},\"name\":" NAME_T ","
	"\"password\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":256,\"writeOnly\":true}}},"
	"\"OrganizationUserList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"email\",\"name\",\"role\",\"createdAt\"],\"properties\":{"
	"\"id\":" UUID_T ",\"email\":{\"type\":\"string\",\"format\":\"email\"},"
	"\"name\":{\"type\":\"string\"},\"role\":" ROLE_T ",\"createdAt\":" TS_T "}}},"
	"\"AuditLogList\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
	"\"required\":[\"id\",\"organizationId\",\"actorUserId\",\"action\",\"targetType\",\"targetId\","
	"\"ip\",\"metadata\",\"createdAt\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"pattern\":\"^[0-9]+$\"},"
	"\"organizationId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"actorUserId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"action\":{\"type\":\"string\",\"examples\":[\"api_token.revoked\"]},"
	"\"targetType\":{\"type\":[\"string\",\"null\"]},\"targetId\":{\"type\":[\"string\",\"null\"]},"
	"\"ip\":{\"type\":[\"string\",\"null\"]},\"metadata\":{\"type\":\"object\"},"
	"\"createdAt\":" TS_T "}}}"
	"}";

const struct sw_api_route_group sw_api_organizations_group = { routes, SW_ARRAY_SIZE(routes),
							      schemas };
