/* The git credentials of an organization, with the repository picker. A
 * git source (git_sources.c) names one for its https fetches.
 *
 * Decisions (also in the OpenAPI document):
 * - A git credential is a token for a git host: its API (the repository
 *   picker) and https fetches of the git sources naming it. The token is sealed
 *   to "git-credential:<id>" and never returned: tokenHint is its last four
 *   characters. apiBaseUrl defaults to the provider's public API
 *   (https://api.github.com, https://gitlab.com/api/v4,
 *   https://api.bitbucket.org/2.0); a self-hosted GitHub Enterprise or
 *   GitLab gives its own, which must be https in production (private
 *   addresses are allowed: self-hosted hosts live on private networks).
 *   GENERIC credentials have no API (apiBaseUrl null) and cannot list
 *   repositories (409 GIT_PROVIDER_UNSUPPORTED). BITBUCKET needs the
 *   username its app password belongs to.
 * - GET /git-credentials/:id/repositories asks the host (git_host.h) on
 *   the worker pool: 200 with the normalised list; 422
 *   GIT_CREDENTIAL_REJECTED when the host answers 401 or 403; 502
 *   GIT_HOST_UNAVAILABLE for anything else (no answer in 10 s, another
 *   status, more than 4 MiB, not the documented shape). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/net/git_host.h"
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/base/validate.h"
#include "api/app_config.h"
#include "steward/db/statements_git.h"

#define GIT_USERNAME_MAX_LEN 254

const char *const sw_api_git_providers[] = { "GITHUB", "GITLAB", "BITBUCKET", "GENERIC", NULL };

static bool token_ok(struct sw_str s, const char **ret_msg)
{
	if (s.len < SW_GIT_TOKEN_MIN_LEN || s.len > SW_GIT_TOKEN_MAX_LEN) {
		*ret_msg = "must be 8 to 1024 characters";
		return false;
	}
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] <= ' ' || s.ptr[i] > '~') {
			*ret_msg = "must be printable ASCII without spaces, as tokens are";
			return false;
		}
	return true;
}

static bool username_ok(struct sw_str s, const char **ret_msg)
{
	bool ok = s.len >= 1 && s.len <= GIT_USERNAME_MAX_LEN;
	for (size_t i = 0; ok && i < s.len; i++) {
		char c = s.ptr[i];
		ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		     strchr("._@+-", c) != NULL;
	}
	if (!ok)
		*ret_msg = "must be 1 to 254 characters of letters, digits and . _ @ + -";
	return ok;
}

/* An API base URL: http(s) (https only in production), no query, stored
 * without trailing slashes. */
static bool api_base_url_parse(struct sw_http_request *req, json_t *v, const char **ret,
			       const char **ret_msg)
{
	if (!json_is_string(v)) {
		*ret_msg = "must be a string";
		return false;
	}
	struct sw_str s = sw_str_from(json_string_value(v), json_string_length(v));
	if (!sw_valid_url(s, sw_api_production(req), NULL, NULL, ret_msg))
		return false;
	if (memchr(s.ptr, '?', s.len)) {
		*ret_msg = "must not have a query";
		return false;
	}
	while (s.len && s.ptr[s.len - 1] == '/')
		s.len--;
	*ret = sw_arena_strndup(&req->arena, s.ptr, s.len);
	return *ret != NULL;
}

enum { CRED_NAME, CRED_PROVIDER, CRED_API, CRED_USERNAME, CRED_TOKEN, CRED_NFIELDS };
static const struct sw_api_field credential_fields[] = {
	{ "name", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, sw_valid_resource_name },
	{ "provider", SW_API_FIELD_ENUM, SW_API_FIELD_REQUIRED | SW_API_FIELD_CREATE_ONLY,
	  .values = sw_api_git_providers },
	{ "apiBaseUrl", SW_API_FIELD_CUSTOM, SW_API_FIELD_NULLABLE, .parse = api_base_url_parse },
	{ "username", SW_API_FIELD_STRING, SW_API_FIELD_NULLABLE, username_ok },
	{ "token", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, token_ok },
};
static const struct sw_api_field credential_filters[] = {
	{ "provider", SW_API_FIELD_ENUM, 0, .values = sw_api_git_providers },
	{ "name", SW_API_FIELD_STRING, 0, sw_valid_resource_name },
};
static const struct sw_api_column credential_columns[] = {
	{ "id", SW_DB_GIT_CREDENTIAL_ID, SW_API_COL_TEXT },
	{ "name", SW_DB_GIT_CREDENTIAL_NAME, SW_API_COL_TEXT },
	{ "provider", SW_DB_GIT_CREDENTIAL_PROVIDER, SW_API_COL_TEXT },
	{ "apiBaseUrl", SW_DB_GIT_CREDENTIAL_API_BASE_URL, SW_API_COL_NULLABLE },
	{ "username", SW_DB_GIT_CREDENTIAL_USERNAME, SW_API_COL_NULLABLE },
	{ "tokenHint", SW_DB_GIT_CREDENTIAL_TOKEN_HINT, SW_API_COL_TEXT },
	{ "lastUsedAt", SW_DB_GIT_CREDENTIAL_LAST_USED_AT, SW_API_COL_NULLABLE },
	{ "createdAt", SW_DB_GIT_CREDENTIAL_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_GIT_CREDENTIAL_UPDATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_object credential_object = { credential_columns,
							SW_ARRAY_SIZE(credential_columns), 0 };
static const struct sw_api_resource credential = {
	.type = "git_credential",
	.fields = credential_fields,
	.nfields = CRED_NFIELDS,
	.shape = &credential_object,
	.create = &sw_db_stmt_git_credential_create,
	.get = &sw_db_stmt_git_credential_get,
	.update = &sw_db_stmt_git_credential_update,
	.remove = &sw_db_stmt_git_credential_remove,
	.list = &sw_db_stmt_git_credentials_list,
	.filters = credential_filters,
	.nfilters = SW_ARRAY_SIZE(credential_filters),
	.cursor_us_col = SW_DB_GIT_CREDENTIAL_US,
	.cursor_id_col = SW_DB_GIT_CREDENTIAL_ID,
	.conflict_code = "GIT_CREDENTIAL_EXISTS",
	.conflict_message = "The organization already has a git credential of that name.",
};

static void credentials_list(struct sw_http_request *req) { sw_api_resource_list(req, &credential); }
static void credential_get(struct sw_http_request *req) { sw_api_resource_get(req, &credential); }
static void credential_remove(struct sw_http_request *req) { sw_api_resource_remove(req, &credential); }

struct credential_write {
	struct sw_http_request *req;
	bool creating;
	char id[37];
};

static void credential_written(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct credential_write *w = arg;
	if (err->code) {
		sw_api_resource_error(w->req, &credential, err);
		return;
	}
	if (PQntuples(res) != 1) {
		sw_api_not_found(w->req);
		return;
	}
	sw_api_answer_row(w->req, w->creating ? 201 : 200, res, 0, sw_api_write_object, &credential_object);
}

/* POST /git-credentials and PATCH /git-credentials/:id: the token is read
 * from a body that is wiped once parsed, sealed, and its copies wiped. */
static void credential_write(struct sw_http_request *req, bool creating)
{
	struct sw_field_errors fe = { 0 };
	const char *f[CRED_NFIELDS], *sealed = NULL, *hint = NULL;
	char mask[CRED_NFIELDS + 1];
	json_t *body = sw_http_json_body(req);
	OPENSSL_cleanse((void *)req->body.ptr, req->body.len);
	if (!body)
		return;
	struct credential_write *w = sw_api_state_new(req, sizeof(*w));
	bool ok = w && (creating ? sw_random_uuid(w->id) == 0 : sw_api_uuid_param(req, req->params.value[0], w->id));
	if (w && creating && !ok)
		sw_api_internal_error(req);
	ok = ok && sw_api_fields_read(req, body, credential_fields, CRED_NFIELDS, creating, f, mask, &fe);
	json_t *token = json_object_get(body, "token");
	if (json_is_string(token))
		sw_api_wipe_view(sw_str_from(json_string_value(token), json_string_length(token)));
	json_decref(body);
	if (!w || (!ok && !fe.count)) {
		sw_buf_release(&fe.buf);
		return; /* answered */
	}
	if (!ok) {
		sw_http_validation_error(req, &fe);
		return;
	}
	w->creating = creating;
	if (f[CRED_TOKEN]) {
		size_t n = strlen(f[CRED_TOKEN]);
		char aad[SW_SEAL_AAD_MAX];
		sw_seal_aad_git_credential(aad, w->id);
		hint = sw_arena_strndup(&req->arena, f[CRED_TOKEN] + n - 4, 4);
		if (!hint)
			sw_api_internal_error(req);
		sealed = hint ? sw_api_seal(req, f[CRED_TOKEN], n, aad) : NULL;
		OPENSSL_cleanse((void *)f[CRED_TOKEN], n);
		if (!sealed)
			return; /* answered */
	}
	if (creating) {
		const char *params[9] = { req->principal.organization_id, w->id, req->principal.user_id,
					  f[CRED_NAME], f[CRED_PROVIDER], f[CRED_API], f[CRED_USERNAME],
					  sealed, hint };
		sw_api_resource_query_audited(req, &credential, "created", &sw_db_stmt_git_credential_create,
					      params, 9, credential_written, w);
	} else {
		const char *params[10] = { req->principal.organization_id, w->id, NULL, mask,
					   f[CRED_NAME], f[CRED_PROVIDER], f[CRED_API],
					   f[CRED_USERNAME], sealed, hint };
		sw_api_resource_query_audited(req, &credential, "updated", &sw_db_stmt_git_credential_update,
					      params, 10, credential_written, w);
	}
}

static void credentials_create(struct sw_http_request *req) { credential_write(req, true); }
static void credential_update(struct sw_http_request *req) { credential_write(req, false); }

/* ---- GET /git-credentials/:id/repositories ---- */

struct pick {
	struct sw_api_outbound out;
	struct sw_http_request *req;
	struct sw_git_host_request q;
	char base[SW_URL_MAX_LEN + 1];
	char username[GIT_USERNAME_MAX_LEN + 1];
	char *token; /* malloc'd, wiped */
	size_t token_cap;
	enum sw_git_host_outcome outcome;
	struct sw_buf list;
	char why[200];
};

static void pick_free(struct pick *p)
{
	if (p->token) {
		OPENSSL_cleanse(p->token, p->token_cap);
		free(p->token);
	}
	sw_buf_release(&p->list);
	free(p);
}

static void pick_run(struct sw_api_outbound *o)
{
	struct pick *p = SW_CONTAINER_OF(o, struct pick, out);
	p->outcome = sw_git_host_repositories(&p->q, &p->list, p->why, sizeof(p->why));
}

static void pick_done(struct sw_api_outbound *o)
{
	struct pick *p = SW_CONTAINER_OF(o, struct pick, out);
	struct sw_http_request *req = p->req;
	if (p->outcome == SW_GIT_HOST_OK) {
		struct sw_buf buf = { 0 };
		struct sw_json j;
		sw_http_json_begin(req, &buf, &j);
		sw_json_raw(&j, sw_str_from((const char *)p->list.data, p->list.len));
		sw_http_json_end(req, 200, &buf, &j);
	} else if (p->outcome == SW_GIT_HOST_REJECTED) {
		sw_http_error(req, 422, "GIT_CREDENTIAL_REJECTED", p->why);
	} else {
		sw_http_error(req, 502, "GIT_HOST_UNAVAILABLE", p->why);
	}
	pick_free(p);
}

/* The state of GET /git-credentials/:id/repositories until the worker
 * takes over. */
struct pick_load {
	struct sw_http_request *req;
	char id[37];
};

static void credential_loaded(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct pick_load *l = arg;
	struct sw_http_request *req = l->req;
	enum sw_git_provider provider;
	if (!sw_api_found(req, res, err))
		return;
	if (!sw_git_provider_parse(PQgetvalue(res, 0, 0), &provider) || provider == SW_GIT_GENERIC ||
	    PQgetisnull(res, 0, 1)) {
		sw_http_error(req, 409, "GIT_PROVIDER_UNSUPPORTED",
			      "A GENERIC credential has no API to list repositories with; give the "
			      "repository URL directly.");
		return;
	}
	const char *sealed = PQgetvalue(res, 0, 3);
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_git_credential(aad, l->id);
	struct pick *p = calloc(1, sizeof(*p));
	size_t len = 0;
	if (!p || !(p->token = malloc(p->token_cap = strlen(sealed)))) {
		free(p);
		sw_api_internal_error(req);
		return;
	}
	/* A sealed text is longer than its plaintext, so the NUL fits. */
	int r = sw_unseal(sealed, aad, p->token, p->token_cap, &len);
	if (r < 0 || len >= p->token_cap) {
		sw_log_error("a git credential's token cannot be unsealed (%d) rid=%.*s", r,
			     (int)req->request_id_len, req->request_id);
		pick_free(p);
		sw_api_internal_error(req);
		return;
	}
	p->token[len] = '\0';
	p->req = req;
	snprintf(p->base, sizeof(p->base), "%s", PQgetvalue(res, 0, 1));
	snprintf(p->username, sizeof(p->username), "%s", PQgetvalue(res, 0, 2));
	p->q = (struct sw_git_host_request){ provider, p->base, p->username, p->token };
	p->out.run = pick_run;
	p->out.done = pick_done;
	if (!sw_api_outbound_start(req, &p->out))
		pick_free(p);
}

static void credential_repositories(struct sw_http_request *req)
{
	struct pick_load *l = sw_api_state_new(req, sizeof(*l));
	if (!l || !sw_api_uuid_param(req, req->params.value[0], l->id))
		return;
	const char *params[2] = { req->principal.organization_id, l->id };
	sw_api_query(req, &sw_db_stmt_git_credential_use, params, 2, credential_loaded, l);
}

static const int err_read[] = { 404, 503, 0 };
static const int err_credential_delete[] = { 404, 409, 503, 0 };
static const int err_list[] = { 422, 503, 0 };
static const int err_create[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_update[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_repositories[] = { 404, 409, 422, 429, 500, 502, 503, 0 };

#define NOT_FOUND_DOC SW_API_DOC_SCOPED
#define B SW_HTTP_DEFAULT_MAX_BODY

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/git-credentials", SW_ACCESS_SESSION, credentials_list, 0, 0,
	  { "List git credentials",
	    "Filters: ?provider=, ?name= (exact)." SW_API_DOC_PAGE " Tokens are never returned, "
	    "only tokenHint.",
	    "Git credentials", NULL, "GitCredentialList", 200, err_list,
	    "limit cursor order provider name" } },
	{ SW_HTTP_POST, "/git-credentials", SW_ACCESS_SESSION, credentials_create, B, 0,
	  { "Store a git credential",
	    "A token for a git host's API (a GitHub or GitLab personal access token, a Bitbucket app "
	    "password with its username), sealed at rest; only its last four characters come back, "
	    "as tokenHint. name: a resource name, unique in the organization (409 "
	    "GIT_CREDENTIAL_EXISTS). apiBaseUrl defaults to the provider's public API "
	    "(https://api.github.com, https://gitlab.com/api/v4, https://api.bitbucket.org/2.0); "
	    "give it for GitHub Enterprise or self-hosted GitLab (https only in production); "
	    "GENERIC credentials have none (null). username is required for BITBUCKET. token: 8 to "
	    "1024 printable ASCII characters without spaces.",
	    "Git credentials", "GitCredentialCreate", "GitCredential", 201, err_create } },
	{ SW_HTTP_GET, "/git-credentials/:id", SW_ACCESS_SESSION, credential_get, 0, 0,
	  { "Get a git credential", "Never the token, only tokenHint." NOT_FOUND_DOC,
	    "Git credentials", NULL, "GitCredential", 200, err_read } },
	{ SW_HTTP_PATCH, "/git-credentials/:id", SW_ACCESS_SESSION, credential_update, B, 0,
	  { "Update a git credential",
	    "Partial: only the members given change; provider cannot be changed. A new token "
	    "replaces the old at once; apiBaseUrl null restores the provider's default."
	    NOT_FOUND_DOC,
	    "Git credentials", "GitCredentialUpdate", "GitCredential", 200, err_update } },
	{ SW_HTTP_DELETE, "/git-credentials/:id", SW_ACCESS_SESSION, credential_remove, 0, 0,
	  { "Delete a git credential",
	    "The token is gone with it. 409 GIT_CREDENTIAL_IN_USE while a git source fetches with it "
	    "(its credentialId). A repeat answers 404." NOT_FOUND_DOC,
	    "Git credentials", NULL, NULL, 204, err_credential_delete } },
	{ SW_HTTP_GET, "/git-credentials/:id/repositories", SW_ACCESS_SESSION, credential_repositories,
	  0, 0,
	  { "List the repositories a git credential can see (the repository picker)",
	    "Asks the host's API at apiBaseUrl with the token: GitHub GET /user/repos "
	    "(Authorization: Bearer), GitLab GET /projects?membership=true (PRIVATE-TOKEN), "
	    "Bitbucket GET /repositories?role=member (basic authentication); the first 100 "
	    "repositories, most recently updated first, normalised. 422 GIT_CREDENTIAL_REJECTED "
	    "when the host answers 401 or 403; 502 GIT_HOST_UNAVAILABLE when it does not answer "
	    "within 10 s, answers another status or more than 4 MiB, or not the documented shape; "
	    "409 GIT_PROVIDER_UNSUPPORTED for a GENERIC credential. Records lastUsedAt. At most 30 "
	    "outbound calls (and domain checks) per organization per minute (429)." NOT_FOUND_DOC,
	    "Git credentials", NULL, "GitRepositoryList", 200, err_repositories } },
};

#define TS "{\"type\":\"string\",\"format\":\"date-time\"}"
#define TS_OR_NULL "{\"type\":[\"string\",\"null\"],\"format\":\"date-time\"}"
#define ID "{\"type\":\"string\",\"format\":\"uuid\"}"
#define CREDENTIAL_PROPERTIES                                                                  \
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},\"provider\":" SW_API_GIT_PROVIDER_T ","  \
	"\"apiBaseUrl\":{\"type\":[\"string\",\"null\"],\"maxLength\":2048},"                   \
	"\"username\":{\"type\":[\"string\",\"null\"],\"maxLength\":254,"                       \
	"\"pattern\":\"^[A-Za-z0-9._@+-]+$\"},"                                                 \
	"\"token\":{\"type\":\"string\",\"minLength\":8,\"maxLength\":1024,\"writeOnly\":true,"  \
	"\"pattern\":\"^[!-~]+$\"}"

static const char schemas[] = "{"
	"\"GitCredential\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"provider\",\"apiBaseUrl\","
	"\"username\",\"tokenHint\",\"lastUsedAt\",\"createdAt\",\"updatedAt\"],\"properties\":{"
	"\"id\":" ID ",\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},\"provider\":" SW_API_GIT_PROVIDER_T ","
	"\"apiBaseUrl\":{\"type\":[\"string\",\"null\"]},\"username\":{\"type\":[\"string\",\"null\"]},"
	"\"tokenHint\":{\"type\":\"string\",\"minLength\":4,\"maxLength\":4,"
	"\"description\":\"The token's last four characters.\"},"
	"\"lastUsedAt\":" TS_OR_NULL ",\"createdAt\":" TS ",\"updatedAt\":" TS "}},"
	"\"GitCredentialList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/GitCredential\"}},"
	"\"GitCredentialCreate\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"name\",\"provider\",\"token\"],\"properties\":{" CREDENTIAL_PROPERTIES "}},"
	"\"GitCredentialUpdate\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},"
	"\"apiBaseUrl\":{\"type\":[\"string\",\"null\"],\"maxLength\":2048},"
	"\"username\":{\"type\":[\"string\",\"null\"],\"maxLength\":254},"
	"\"token\":{\"type\":\"string\",\"minLength\":8,\"maxLength\":1024,\"writeOnly\":true}}},"
	"\"GitRepository\":{\"type\":\"object\",\"required\":[\"fullName\",\"cloneUrlHttps\",\"cloneUrlSsh\","
	"\"defaultBranch\",\"private\"],\"properties\":{\"fullName\":{\"type\":\"string\"},"
	"\"cloneUrlHttps\":{\"type\":[\"string\",\"null\"]},\"cloneUrlSsh\":{\"type\":[\"string\",\"null\"]},"
	"\"defaultBranch\":{\"type\":[\"string\",\"null\"]},\"private\":{\"type\":\"boolean\"}}},"
	"\"GitRepositoryList\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/components/schemas/GitRepository\"}}"
	"}";

const struct sw_api_route_group sw_api_git_credentials_group = { routes, SW_ARRAY_SIZE(routes), schemas };
