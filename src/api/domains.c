/* Domains: the hostnames an application is served under, and the proof
 * that whoever added one controls it.
 *
 * Decisions (also in the OpenAPI document):
 * - A hostname is given in any case and stored lower-case; it must be a
 *   hostname of two labels or more (sw_valid_hostname(): no wildcard, no IP
 *   address, IDNs in their xn-- form). A verified hostname routes to
 *   exactly one application of the whole installation. An unverified claim
 *   holds nothing (no one can squat another organization's name by adding it
 *   first): several applications may claim one hostname; the first to prove
 *   control holds it, and afterwards adding or verifying it elsewhere is 409
 *   DOMAIN_EXISTS. One application cannot hold a hostname twice (409).
 * - At most SW_DOMAINS_MAX domains per application (409
 *   DOMAIN_LIMIT_REACHED).
 * - Each domain gets a verification token (64 hex digits) when it is added,
 *   and starts PENDING. POST /domains/:domainId/verify looks for either
 *   proof (steward/net/domain_check.h): the TXT record
 *   _steward-challenge.<hostname> holding the token, or
 *   http://<hostname>/.well-known/steward-challenge/<token> answering 200
 *   with the token. The first found makes the domain VERIFIED for good
 *   (verifiedAt, verificationMethod); none found is 409 DOMAIN_NOT_VERIFIED
 *   whose message says what each check saw, also kept in lastCheckError
 *   with lastCheckedAt. Verifying a VERIFIED domain answers it as it is.
 * - The object carries `instructions`: the exact record and URL to create.
 * - Checks run on the worker pool (never on the loop), bounded in time
 *   and size, at most 30 per organization per minute, and in production
 *   never over HTTP to a loopback, private or link-local address.
 * - BLUE_GREEN deployments will require a VERIFIED hostname. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/net/domain_check.h"
#include "steward/base/log.h"
#include "steward/base/validate.h"
#include "api/app_config.h"
#include "steward/db/statements_domains.h"

static const int err_list[] = { 404, 422, 503, 0 };
static const int err_create[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_get[] = { 404, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_verify[] = { 404, 409, 429, 500, 503, 0 };

/* A hostname in any case: lower-cased, then checked. */
static bool hostname_parse(struct sw_http_request *req, json_t *v, const char **ret,
			   const char **ret_msg)
{
	if (!json_is_string(v)) {
		*ret_msg = "must be a string";
		return false;
	}
	size_t n = json_string_length(v);
	if (n > SW_HOSTNAME_MAX_LEN) {
		*ret_msg = "must be at most 253 characters";
		return false;
	}
	char *s = sw_arena_strndup(&req->arena, json_string_value(v), n);
	if (!s) {
		*ret_msg = "could not be read";
		return false;
	}
	for (char *c = s; c < s + n; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	if (!sw_valid_hostname(sw_str_from(s, n), ret_msg))
		return false;
	*ret = s;
	return true;
}

static const char *const statuses[] = { "PENDING", "VERIFIED", NULL };

static const struct sw_api_field domain_fields[] = {
	{ "hostname", SW_API_FIELD_CUSTOM, SW_API_FIELD_REQUIRED, .parse = hostname_parse },
};
static const struct sw_api_field domain_filters[] = {
	{ "status", SW_API_FIELD_ENUM, 0, .values = statuses },
	{ "hostname", SW_API_FIELD_CUSTOM, 0, .parse = hostname_parse },
};
static const struct sw_api_column domain_columns[] = {
	{ "id", SW_DB_DOMAIN_ID, SW_API_COL_TEXT },
	{ "applicationId", SW_DB_DOMAIN_APPLICATION_ID, SW_API_COL_TEXT },
	{ "hostname", SW_DB_DOMAIN_HOSTNAME, SW_API_COL_TEXT },
	{ "status", SW_DB_DOMAIN_STATUS, SW_API_COL_TEXT },
	{ "verificationToken", SW_DB_DOMAIN_TOKEN, SW_API_COL_TEXT },
	{ "verificationMethod", SW_DB_DOMAIN_METHOD, SW_API_COL_NULLABLE },
	{ "verifiedAt", SW_DB_DOMAIN_VERIFIED_AT, SW_API_COL_NULLABLE },
	{ "lastCheckedAt", SW_DB_DOMAIN_LAST_CHECKED_AT, SW_API_COL_NULLABLE },
	{ "lastCheckError", SW_DB_DOMAIN_LAST_CHECK_ERROR, SW_API_COL_NULLABLE },
	{ "instructions", SW_DB_DOMAIN_INSTRUCTIONS, SW_API_COL_JSON },
	{ "createdAt", SW_DB_DOMAIN_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_DOMAIN_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object domain_object = { domain_columns, SW_ARRAY_SIZE(domain_columns), 0 };
static const struct sw_api_resource domain = {
	.type = "domain",
	.fields = domain_fields,
	.nfields = SW_ARRAY_SIZE(domain_fields),
	.shape = &domain_object,
	.create = &sw_db_stmt_domain_create,
	.get = &sw_db_stmt_domain_get,
	.remove = &sw_db_stmt_domain_remove,
	.list = &sw_db_stmt_domains_list,
	.parent = &sw_db_stmt_domain_application,
	.filters = domain_filters,
	.nfilters = SW_ARRAY_SIZE(domain_filters),
	.cursor_us_col = SW_DB_DOMAIN_US,
	.cursor_id_col = SW_DB_DOMAIN_ID,
	.conflict_code = "DOMAIN_EXISTS",
	.conflict_message = "That hostname is already this application's, or verified for another "
			    "application of this installation.",
};

static void domains_list(struct sw_http_request *req) { sw_api_resource_list(req, &domain); }
static void domains_create(struct sw_http_request *req) { sw_api_resource_create(req, &domain); }
static void domain_get(struct sw_http_request *req) { sw_api_resource_get(req, &domain); }
static void domain_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &domain); }

/* ---- POST /domains/:domainId/verify ---- */

/* DOMAIN_VERIFY_* once per process: an invalid value is logged once and
 * makes every verification answer 500 until it is fixed. */
static struct {
	pthread_once_t once;
	int err;
	struct sw_domain_check_settings s;
} settings = { .once = PTHREAD_ONCE_INIT };

static void settings_load(void)
{
	char msg[160];
	settings.err = sw_domain_check_settings_load(&settings.s, msg, sizeof(msg));
	if (settings.err)
		sw_log_error("%s: domains cannot be verified", msg);
}

struct check {
	struct sw_api_outbound out;
	struct sw_http_request *req;
	struct sw_domain_check_settings settings;
	char id[37];
	char hostname[SW_HOSTNAME_MAX_LEN + 1];
	char token[65];
	enum sw_domain_proof proof;
	char reason[SW_DOMAIN_CHECK_REASON_MAX];
};

static void check_run(struct sw_api_outbound *o)
{
	struct check *c = SW_CONTAINER_OF(o, struct check, out);
	c->proof = sw_domain_check(&c->settings, c->hostname, c->token, c->reason);
}

static void recorded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (err->code) {
		sw_api_resource_error(req, &domain, err);
		return;
	}
	if (!sw_api_found(req, res, err))
		return; /* deleted while it was checked */
	if (strcmp(PQgetvalue(res, 0, SW_DB_DOMAIN_STATUS), "VERIFIED") != 0) {
		const char *why = PQgetvalue(res, 0, SW_DB_DOMAIN_LAST_CHECK_ERROR);
		sw_http_error(req, 409, "DOMAIN_NOT_VERIFIED",
			      *why ? why : "Neither the TXT record nor the HTTP token was found.");
		return;
	}
	sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &domain_object);
}

static void check_done(struct sw_api_outbound *o)
{
	struct check *c = SW_CONTAINER_OF(o, struct check, out);
	struct sw_http_request *req = c->req;
	const char *params[4] = { req->principal.organization_id, c->id,
				  c->proof == SW_DOMAIN_PROOF_DNS ? "DNS" :
				  c->proof == SW_DOMAIN_PROOF_HTTP ? "HTTP" : NULL,
				  c->proof == SW_DOMAIN_PROOF_NONE ? c->reason : NULL };
	sw_api_query_audited(req, &sw_db_stmt_domain_check_record, params, 4, "domain.verified",
			     "domain", NULL, NULL, recorded, req);
	free(c);
}

static void verify_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct sw_http_request *req = arg;
	if (!sw_api_found(req, res, err))
		return;
	if (strcmp(PQgetvalue(res, 0, SW_DB_DOMAIN_STATUS), "VERIFIED") == 0) {
		sw_api_answer_row(req, 200, res, 0, sw_api_write_object, &domain_object);
		return;
	}
	pthread_once(&settings.once, settings_load);
	struct check *c = settings.err ? NULL : calloc(1, sizeof(*c));
	if (!c) {
		sw_api_internal_error(req);
		return;
	}
	c->req = req;
	c->settings = settings.s;
	c->settings.allow_private = !sw_api_production(req);
	snprintf(c->id, sizeof(c->id), "%s", PQgetvalue(res, 0, SW_DB_DOMAIN_ID));
	snprintf(c->hostname, sizeof(c->hostname), "%s", PQgetvalue(res, 0, SW_DB_DOMAIN_HOSTNAME));
	snprintf(c->token, sizeof(c->token), "%s", PQgetvalue(res, 0, SW_DB_DOMAIN_TOKEN));
	c->out.run = check_run;
	c->out.done = check_done;
	if (!sw_api_outbound_start(req, &c->out))
		free(c);
}

static void domain_verify(struct sw_http_request *req)
{
	char *id = sw_arena_alloc(&req->arena, 37);
	if (!id) {
		sw_api_internal_error(req);
		return;
	}
	if (!sw_api_uuid_param(req, req->params.value[0], id))
		return;
	const char *params[2] = { req->principal.organization_id, id };
	sw_api_query(req, &sw_db_stmt_domain_by_id, params, 2, verify_loaded, req);
}

/* ---- routes and schemas ---- */

#define RESOURCE_DOC SW_API_DOC_SCOPED
#define B SW_HTTP_DEFAULT_MAX_BODY

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/applications/:id/domains", SW_ACCESS_SESSION, domains_list, 0, 0,
	  { "List an application's domains",
	    "Filters: ?status=PENDING|VERIFIED, ?hostname= (exact, any case)." SW_API_DOC_PAGE
	    RESOURCE_DOC,
	    "Domains", NULL, "DomainList", 200, err_list, "limit cursor order status hostname" } },
	{ SW_HTTP_POST, "/applications/:id/domains", SW_ACCESS_SESSION, domains_create, B, 0,
	  { "Add a domain to an application",
	    "The hostname is stored lower-case; it must have two labels or more, with no wildcard and "
	    "no IP address (IDNs in their xn-- form). A verified hostname routes to one application of "
	    "the whole installation: 409 DOMAIN_EXISTS when it is verified for another application, "
	    "or this application already has it; an unverified claim by someone else blocks nothing "
	    "(no squatting), and the first to verify holds the name. At most 50 "
	    "domains per application (409 DOMAIN_LIMIT_REACHED). The domain starts PENDING with a "
	    "verificationToken; `instructions` names the TXT record and the URL that prove control "
	    "of the hostname (see POST /domains/{domainId}/verify)." RESOURCE_DOC,
	    "Domains", "DomainCreate", "Domain", 201, err_create } },
	{ SW_HTTP_GET, "/applications/:id/domains/:domainId", SW_ACCESS_SESSION, domain_get, 0, 0,
	  { "Get a domain", "With its verification state and instructions." RESOURCE_DOC, "Domains",
	    NULL, "Domain", 200, err_get } },
	{ SW_HTTP_DELETE, "/applications/:id/domains/:domainId", SW_ACCESS_SESSION, domain_remove, 0, 0,
	  { "Remove a domain", "The hostname is free again for any application. A repeat answers 404."
	    RESOURCE_DOC, "Domains", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/domains/:domainId/verify", SW_ACCESS_SESSION, domain_verify, 0, 0,
	  { "Verify control of a domain's hostname",
	    "Proof is either (1) a DNS TXT record named `_steward-challenge.<hostname>` whose value is "
	    "the verificationToken, or (2) `GET http://<hostname>/.well-known/steward-challenge/"
	    "<verificationToken>` answering 200 with the token as its body (white space around it "
	    "ignored; redirects are not followed; at most 8 KiB read). DNS is asked first (one try, "
	    "2 s per query); HTTP goes to at most 4 of the hostname's A and AAAA addresses, 5 s in "
	    "all, and in production never to a loopback, private, link-local or otherwise non-public "
	    "address. Found: 200 with the domain VERIFIED (verifiedAt, verificationMethod DNS or "
	    "HTTP), for good. Not found: 409 DOMAIN_NOT_VERIFIED whose message says what each check "
	    "saw; the domain keeps it as lastCheckError with lastCheckedAt. 409 DOMAIN_EXISTS when "
	    "another application verified the hostname first. A VERIFIED domain is "
	    "answered as it is, unchecked. At most 30 checks (and repository listings) per "
	    "organization per minute (429); 503 while the server's outbound checks are all busy. "
	    "BLUE_GREEN deployments require a VERIFIED hostname. Settings: DOMAIN_VERIFY_NAMESERVER "
	    "(a.b.c.d[:port], the one DNS server asked; default the system resolver), "
	    "DOMAIN_VERIFY_HTTP_PORT (default 80)." RESOURCE_DOC,
	    "Domains", NULL, "Domain", 200, err_verify } },
};

#define TS "{\"type\":\"string\",\"format\":\"date-time\"}"
#define TS_OR_NULL "{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}"
#define HOSTNAME_SCHEMA                                                                             \
	"{\"type\":\"string\",\"minLength\":3,\"maxLength\":253,\"pattern\":\"^[A-Za-z0-9.-]+$\","     \
	"\"description\":\"LDH labels separated by dots, two or more; stored lower-case.\"}"

static const char schemas[] = "{"
	"\"Domain\":{\"type\":\"object\",\"required\":[\"id\",\"applicationId\",\"hostname\",\"status\","
	"\"verificationToken\",\"verificationMethod\",\"verifiedAt\",\"lastCheckedAt\",\"lastCheckError\","
	"\"instructions\",\"createdAt\",\"updatedAt\"],\"properties\":{"
	"\"id\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"applicationId\":{\"type\":\"string\",\"format\":\"uuid\"},"
	"\"hostname\":" HOSTNAME_SCHEMA ","
	"\"status\":{\"type\":\"string\",\"enum\":[\"PENDING\",\"VERIFIED\"]},"
	"\"verificationToken\":{\"type\":\"string\",\"pattern\":\"^[0-9a-f]{64}$\","
	"\"description\":\"Published by the owner of the hostname (not a secret).\"},"
	"\"verificationMethod\":{\"type\":[\"string\",\"null\"],\"enum\":[\"DNS\",\"HTTP\",null]},"
	"\"verifiedAt\":" TS_OR_NULL ",\"lastCheckedAt\":" TS_OR_NULL ","
	"\"lastCheckError\":{\"type\":[\"string\",\"null\"],\"description\":\"Why the last check "
	"found no proof; null after a success or before any check.\"},"
	"\"instructions\":{\"type\":\"object\",\"required\":[\"dns\",\"http\"],\"properties\":{"
	"\"dns\":{\"type\":\"object\",\"required\":[\"type\",\"name\",\"value\"],\"properties\":{"
	"\"type\":{\"const\":\"TXT\"},\"name\":{\"type\":\"string\"},\"value\":{\"type\":\"string\"}}},"
	"\"http\":{\"type\":\"object\",\"required\":[\"url\",\"body\"],\"properties\":{"
	"\"url\":{\"type\":\"string\",\"format\":\"uri\"},\"body\":{\"type\":\"string\"}}}}},"
	"\"createdAt\":" TS ",\"updatedAt\":" TS "}},"
	"\"DomainList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/Domain\"}},"
	"\"DomainCreate\":{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"hostname\"],"
	"\"properties\":{\"hostname\":" HOSTNAME_SCHEMA "}}"
	"}";

const struct sw_api_route_group sw_api_domains_group = { routes, SW_ARRAY_SIZE(routes), schemas };
