/* Plans and the subscription.
 *
 * A plan (migration 0007) has quotas on applications, servers (the control
 * plane's own host not counted) and members; null is no limit. The API
 * enforces them where each is added: POST /applications and POST /servers
 * (steward_quota_check() in their statements), and inviting or accepting
 * an invitation for members (migration 0011); each refusal is 409
 * QUOTA_EXCEEDED.
 *
 * Decisions (also in the OpenAPI document):
 * - GET /plans is the whole catalogue by position, not paged (a handful
 *   of rows, the same for every caller).
 * - GET /subscription is the caller's organization's: the plan in force,
 *   provider "manual", status, who granted it and when (null for the plan
 *   an organization starts on: the installation's first organization
 *   "unlimited", every later one the default plan, "free"), and the usage
 *   of each quota.
 * - PUT /subscription {planId, organizationId?} is an operator's route:
 *   with the manual billing provider a plan change is a grant, and members
 *   must not grant themselves plans. Without organizationId it is the
 *   operator's current organization; with it any organization of the
 *   installation (operators span it, as the audit log does). A plan
 *   smaller than what the organization already uses is refused with 409
 *   PLAN_TOO_SMALL naming each quota exceeded (nothing is removed behind
 *   anyone's back). Granting the plan in force again answers 200 and
 *   records the grant. Audited as subscription.granted with the plan
 *   before and after. */
#include <stdio.h>
#include <stdlib.h>
#include "api/api_internal.h"
#include "steward/db/statements_plans.h"

/* Writes the JSON text of the column *ctx of the row: PostgreSQL wrote it
 * (steward_plan_json(), steward_subscription_of()), never a client. */
static void write_json_column(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	sw_json_raw(j, sw_str_cstr(PQgetvalue(res, row, *(const int *)ctx)));
}

static const int first_column = 0, second_column = 1;

/* ---- GET /plans ---- */

static void plans_listed(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	sw_api_answer_rows(arg, res, err, write_json_column, &first_column);
}

static void plans_list(struct sw_http_request *req)
{
	sw_api_query(req, &sw_db_stmt_plans_list, NULL, 0, plans_listed, req);
}

/* ---- GET /subscription ---- */

static void subscription_read(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (sw_api_found(req, res, err))
		sw_api_answer_row(req, 200, res, 0, write_json_column, &first_column);
}

static void subscription_get(struct sw_http_request *req)
{
	const char *params[1] = { req->principal.organization_id };
	sw_api_query(req, &sw_db_stmt_subscription_get, params, 1, subscription_read, req);
}

/* ---- PUT /subscription ---- */

/* A plan's id (plans.id's CHECK): [a-z][a-z0-9-]{0,31}. */
static bool plan_id_ok(struct sw_str s, const char **ret_msg)
{
	bool ok = s.len >= 1 && s.len <= 32 && s.ptr[0] >= 'a' && s.ptr[0] <= 'z';
	for (size_t i = 1; ok && i < s.len; i++)
		ok = (s.ptr[i] >= 'a' && s.ptr[i] <= 'z') || (s.ptr[i] >= '0' && s.ptr[i] <= '9') ||
		     s.ptr[i] == '-';
	if (!ok)
		*ret_msg = "must be the id of a plan (GET /plans lists them)";
	return ok;
}

enum { GRANT_PLAN, GRANT_ORGANIZATION };
static const struct sw_api_field grant_fields[] = {
	[GRANT_PLAN] = { "planId", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, plan_id_ok },
	[GRANT_ORGANIZATION] = { "organizationId", SW_API_FIELD_ID },
};

struct grant {
	struct sw_http_request *req;
	char organization_id[37];
	char plan_id[33];
};

static void granted(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct grant *g = arg;
	struct sw_http_request *req = g->req;
	if (err->code) {
		sw_api_resource_error(req, NULL, err);
		return;
	}
	if (!sw_api_found(req, res, err))
		return;
	sw_api_answer_row(req, 200, res, 0, write_json_column, &second_column);
}

static void subscription_put(struct sw_http_request *req)
{
	struct sw_field_errors fe = { 0 };
	const char *params[SW_ARRAY_SIZE(grant_fields)];
	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	bool ok = sw_api_fields_read(req, body, grant_fields, SW_ARRAY_SIZE(grant_fields), true,
				     params, NULL, &fe);
	json_decref(body);
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	struct grant *g = sw_api_state_new(req, sizeof(*g));
	if (!g)
		return;
	const char *org = params[GRANT_ORGANIZATION] ? params[GRANT_ORGANIZATION]
						     : req->principal.organization_id;
	snprintf(g->organization_id, sizeof(g->organization_id), "%s", org);
	snprintf(g->plan_id, sizeof(g->plan_id), "%s", params[GRANT_PLAN]);
	const char *q[3] = { g->organization_id, g->plan_id, req->principal.user_id };
	json_t *meta = json_pack("{s:s}", "planId", g->plan_id);
	char *m = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
	json_decref(meta);
	if (!m) {
		sw_api_internal_error(req);
		return;
	}
	/* Recorded in the organization that gets the plan. */
	const struct sw_db_audit_row a = { g->organization_id, req->principal.user_id,
					   "subscription.granted", "organization", g->organization_id,
					   sw_http_peer_address(req), m };
	sw_api_query_audit_row(req, &sw_db_stmt_subscription_grant, q, 3, &a, granted, g);
	free(m);
}

/* ---- routes and schemas ---- */

static const int err_read[] = { 503, 0 };
static const int err_put[] = { 400, 409, 413, 415, 422, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/plans", SW_ACCESS_SESSION, plans_list, 0, 0,
	  { "List the plans", "The whole catalogue, by position (not paged). quotas: the most "
	    "applications, servers (the control plane's own host is not counted) and members an "
	    "organization on the plan may have; null is no limit. isDefault: the plan an "
	    "organization starts on.", "Plans", NULL, "PlanList", 200, err_read } },
	{ SW_HTTP_GET, "/subscription", SW_ACCESS_SESSION, subscription_get, 0, 0,
	  { "The caller's organization's subscription",
	    "The plan in force, provider (\"manual\": plans are granted by an operator), status, "
	    "grantedBy and grantedAt (null for the plan the organization started on: the "
	    "installation's first organization is on \"unlimited\", every later one on the default "
	    "plan), and usage: what the organization has of each quota. Adding past a quota is 409 "
	    "QUOTA_EXCEEDED (POST /applications, POST /servers, inviting and accepting an "
	    "invitation).", "Plans", NULL, "Subscription", 200, err_read } },
	{ SW_HTTP_PUT, "/subscription", SW_ACCESS_OPERATOR, subscription_put, 4096, 0,
	  { "Grant a plan (operator)",
	    "With the manual billing provider a plan change is a grant: only an operator may make "
	    "it, and members cannot grant themselves plans (403 for everyone else, OWNERs "
	    "included). organizationId: the organization granted to (any of the installation; "
	    "default: the operator's current one; 422 when there is none such). A plan smaller than "
	    "what the organization already has is refused with 409 PLAN_TOO_SMALL naming each "
	    "quota exceeded; remove what exceeds it first. Granting the plan in force again answers "
	    "200. Audited as subscription.granted ({planId, previousPlanId}).",
	    "Plans", "SubscriptionGrant", "Subscription", 200, err_put } },
};

#define COUNT_OR_NULL "{\"type\":[\"integer\",\"null\"],\"minimum\":0}"

static const char schemas[] = "{"
	"\"Plan\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"description\",\"quotas\","
	"\"priceCentsMonthly\",\"isDefault\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"pattern\":\"^[a-z][a-z0-9-]{0,31}$\"},"
	"\"name\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"},"
	"\"quotas\":{\"type\":\"object\",\"required\":[\"applications\",\"servers\",\"members\"],"
	"\"properties\":{\"applications\":" COUNT_OR_NULL ",\"servers\":" COUNT_OR_NULL ","
	"\"members\":" COUNT_OR_NULL "},\"description\":\"null: no limit.\"},"
	"\"priceCentsMonthly\":{\"type\":\"integer\",\"minimum\":0},"
	"\"isDefault\":{\"type\":\"boolean\"}}},"
	"\"PlanList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Plan\"}},"
	"\"Subscription\":{\"type\":\"object\",\"required\":[\"organizationId\",\"plan\",\"provider\","
	"\"status\",\"grantedBy\",\"grantedAt\",\"usage\"],\"properties\":{"
	"\"organizationId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"plan\":{\"$ref\":\"#/components/schemas/Plan\"},"
	"\"provider\":{\"type\":\"string\",\"enum\":[\"manual\"]},"
	"\"status\":{\"type\":\"string\",\"enum\":[\"ACTIVE\",\"CANCELLED\"]},"
	"\"grantedBy\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"},"
	"\"grantedAt\":{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"},"
	"\"usage\":{\"type\":\"object\",\"required\":[\"applications\",\"servers\",\"members\"],"
	"\"properties\":{\"applications\":{\"type\":\"integer\"},\"servers\":{\"type\":\"integer\"},"
	"\"members\":{\"type\":\"integer\"}}}}},"
	"\"SubscriptionGrant\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"planId\"],\"properties\":{"
	"\"planId\":{\"type\":\"string\",\"pattern\":\"^[a-z][a-z0-9-]{0,31}$\"},"
	"\"organizationId\":{\"type\":\"string\",\"format\":\"uuid\","
	"\"description\":\"Default: the operator's current organization.\"}}}"
	"}";

const struct sw_api_route_group sw_api_plans_group = { routes, SW_ARRAY_SIZE(routes), schemas };
