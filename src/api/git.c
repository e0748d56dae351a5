/* Git sources of applications (with their deploy key and webhook secret)
 * and the git credentials of an organization (with the repository
 * picker).
 *
 * Decisions (also in the OpenAPI document):
 * - A git source is a singleton of its application: PUT creates it (201)
 *   or replaces its repositoryUrl, branch and provider (200); PATCH changes
 *   the members given; DELETE removes it (204, a repeat 404).
 * - repositoryUrl: https://, ssh:// or scp-like user@host:path
 *   (sw_valid_git_url()); file:///... only when STEWARD_ENV is not
 *   production. branch: git's ref-name rules, default "main". provider:
 *   GITHUB, GITLAB, BITBUCKET or GENERIC; when a PUT leaves it out it is
 *   read from the URL's host (github.com, gitlab.com, bitbucket.org, else
 *   GENERIC).
 * - Creating a source generates an Ed25519 deploy key (the private half
 *   sealed to "deploy-key:<application id>") and a webhook secret (32
 *   random bytes, base64url; sealed to "webhook-secret:<application id>",
 *   since verifying a webhook's HMAC needs it back). The creating PUT's
 *   answer carries webhookSecret, once; no other answer but a rotation's
 *   does. GET shows the deploy key's public half (OpenSSH form) and its
 *   fingerprint, hasWebhookSecret, and webhookUrl (PUBLIC_BASE_URL, else
 *   http://<STEWARD_LISTEN>, + /webhooks/<provider in lower case>). A
 *   replacing PUT keeps key and secret.
 * - credentialId names a git credential of the organization whose token a
 *   fetch of an https repository sends (HTTP Basic) when the host asks;
 *   sshHostKey is the ssh server's key pinned on first use or by a member
 *   (migration 0018 checks both and forgets the pin when the URL changes).
 * - POST .../deploy-key replaces the key pair (the old one stops at once:
 *   nothing keeps it) and answers the new public half; POST
 *   .../webhook-secret replaces the secret and answers it, once.
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
#include <openssl/rand.h>
#include "steward/net/git_host.h"
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/base/sshkey.h"
#include "steward/base/validate.h"
#include "api/app_config.h"
#include "steward/db/statements_git.h"

#define GIT_USERNAME_MAX_LEN 254
#define WEBHOOK_SECRET_BYTES 32
#define WEBHOOK_SECRET_LEN SW_BASE64URL_LEN(WEBHOOK_SECRET_BYTES)

static const char *const providers[] = { "GITHUB", "GITLAB", "BITBUCKET", "GENERIC", NULL };

/* ---- git sources ---- */

static bool repository_url_parse(struct sw_http_request *req, json_t *v, const char **ret,
				 const char **ret_msg)
{
	if (!json_is_string(v)) {
		*ret_msg = "must be a string";
		return false;
	}
	struct sw_str s = sw_str_from(json_string_value(v), json_string_length(v));
	if (!sw_valid_git_url(s, !sw_api_production(req), NULL, ret_msg))
		return false;
	*ret = sw_arena_strndup(&req->arena, s.ptr, s.len);
	return *ret != NULL;
}

/* "<key type> SHA256:<43 base64 characters>", as a fetch logs it and
 * ssh-keygen -l prints it (key types: lower-case letters, digits, '@',
 * '.', '-'). */
static bool ssh_host_key_ok(struct sw_str s, const char **ret_msg)
{
	static const char form[] = "must be a key type and its SHA256 fingerprint, e.g. "
				   "\"ssh-ed25519 SHA256:<43 base64 characters>\"";
	const char *sp = memchr(s.ptr, ' ', s.len);
	size_t type_len = sp ? (size_t)(sp - s.ptr) : 0;
	bool ok = type_len >= 1 && type_len <= 64 && s.len == type_len + 1 + 7 + 43 &&
		  memcmp(sp + 1, "SHA256:", 7) == 0;
	for (size_t i = 0; ok && i < type_len; i++) {
		char c = s.ptr[i];
		ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '@' || c == '.' || c == '-';
	}
	for (size_t i = type_len + 8; ok && i < s.len; i++) {
		char c = s.ptr[i];
		ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
		     c == '/';
	}
	if (!ok)
		*ret_msg = form;
	return ok;
}

enum { SOURCE_URL, SOURCE_BRANCH, SOURCE_PROVIDER, SOURCE_CREDENTIAL, SOURCE_HOST_KEY, SOURCE_NFIELDS };
static const struct sw_api_field source_fields[] = {
	{ "repositoryUrl", SW_API_FIELD_CUSTOM, SW_API_FIELD_REQUIRED, .parse = repository_url_parse },
	{ "branch", SW_API_FIELD_STRING, 0, sw_valid_git_branch, .def = "main" },
	{ "provider", SW_API_FIELD_ENUM, 0, .values = providers },
	{ "credentialId", SW_API_FIELD_ID, SW_API_FIELD_NULLABLE },
	{ "sshHostKey", SW_API_FIELD_STRING, SW_API_FIELD_NULLABLE, ssh_host_key_ok },
};

/* The provider a repository URL's host names: the three hosted services
 * by their public host names, anything else GENERIC. */
static const char *provider_of(const char *url)
{
	static const struct {
		const char *host, *provider;
	} known[] = { { "github.com", "GITHUB" }, { "gitlab.com", "GITLAB" },
		      { "bitbucket.org", "BITBUCKET" } };
	const char *host = strstr(url, "://");
	host = host ? host + 3 : url;
	const char *at = strchr(host, '@'), *slash = strchr(host, '/');
	if (at && (!slash || at < slash))
		host = at + 1;
	size_t n = strcspn(host, ":/");
	for (size_t i = 0; i < SW_ARRAY_SIZE(known); i++)
		if (sw_str_eq(sw_str_from(host, n), sw_str_cstr(known[i].host)))
			return known[i].provider;
	return "GENERIC";
}

static const struct sw_api_column source_columns[] = {
	{ "id", SW_DB_GIT_SOURCE_ID, SW_API_COL_TEXT },
	{ "applicationId", SW_DB_GIT_SOURCE_APPLICATION_ID, SW_API_COL_TEXT },
	{ "repositoryUrl", SW_DB_GIT_SOURCE_REPOSITORY_URL, SW_API_COL_TEXT },
	{ "branch", SW_DB_GIT_SOURCE_BRANCH, SW_API_COL_TEXT },
	{ "provider", SW_DB_GIT_SOURCE_PROVIDER, SW_API_COL_TEXT },
	{ "credentialId", SW_DB_GIT_SOURCE_CREDENTIAL_ID, SW_API_COL_NULLABLE },
	{ "sshHostKey", SW_DB_GIT_SOURCE_SSH_HOST_KEY, SW_API_COL_NULLABLE },
	{ "sshHostKeyPinnedAt", SW_DB_GIT_SOURCE_SSH_HOST_KEY_PINNED_AT, SW_API_COL_NULLABLE },
};
static const struct sw_api_column deploy_key_columns[] = {
	{ "publicKey", SW_DB_GIT_SOURCE_PUBLIC_KEY, SW_API_COL_TEXT },
	{ "fingerprint", SW_DB_GIT_SOURCE_FINGERPRINT, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_GIT_SOURCE_KEY_CREATED_AT, SW_API_COL_TEXT },
};
static const struct sw_api_column source_times[] = {
	{ "webhookSecretCreatedAt", SW_DB_GIT_SOURCE_SECRET_CREATED_AT, SW_API_COL_TEXT },
	{ "createdAt", SW_DB_GIT_SOURCE_CREATED_AT, SW_API_COL_TEXT },
	{ "updatedAt", SW_DB_GIT_SOURCE_UPDATED_AT, SW_API_COL_TEXT },
};

/* A handler's state on one application's git source. */
struct source {
	struct sw_http_request *req;
	char app[37];
	char secret[WEBHOOK_SECRET_LEN + 1]; /* a secret to show once, or "" */
	const char *verb;                    /* the audit verb */
	int status;                          /* the success status */
};

/* Writes the webhook URL of provider: the public base URL without
 * trailing slashes, "/webhooks/", the provider in lower case. */
static void write_webhook_url(struct sw_json *j, const struct sw_config *cfg, const char *provider)
{
	struct sw_buf b = { 0 };
	const char *base = cfg->public_base_url;
	size_t n = base ? strlen(base) : 0;
	while (n && base[n - 1] == '/')
		n--;
	int r = n ? sw_buf_append(&b, base, n) : sw_buf_appendf(&b, "http://%s", cfg->listen_str);
	r = r ?: sw_buf_append_lit(&b, "/webhooks/");
	for (const char *p = provider; *p && !r; p++) {
		char c = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		r = sw_buf_append(&b, &c, 1);
	}
	sw_json_key(j, "webhookUrl");
	if (r)
		sw_json_null(j);
	else
		sw_json_string(j, sw_str_from((const char *)b.data, b.len));
	sw_buf_release(&b);
}

/* A git source row; ctx is its handler's struct source. */
static void write_source(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const struct source *s = ctx;
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, source_columns, SW_ARRAY_SIZE(source_columns));
	sw_json_key(j, "deployKey");
	sw_json_object_begin(j);
	sw_api_write_columns(j, res, row, 0, deploy_key_columns, SW_ARRAY_SIZE(deploy_key_columns));
	sw_json_object_end(j);
	write_webhook_url(j, sw_http_config(s->req), PQgetvalue(res, row, SW_DB_GIT_SOURCE_PROVIDER));
	if (s->secret[0]) {
		sw_json_key(j, "webhookSecret");
		sw_json_cstr(j, s->secret);
	}
	sw_json_key(j, "hasWebhookSecret");
	sw_json_bool(j, true);
	sw_api_write_columns(j, res, row, 0, source_times, SW_ARRAY_SIZE(source_times));
	sw_json_object_end(j);
}

static struct source *source_new(struct sw_http_request *req, const char *verb, int status)
{
	struct source *s = sw_api_state_new(req, sizeof(*s));
	if (!s || !sw_api_uuid_param(req, req->params.value[0], s->app))
		return NULL;
	s->verb = verb;
	s->status = status;
	return s;
}

static void audit_source(struct source *s, const char *verb, json_t *meta)
{
	char action[48];
	snprintf(action, sizeof(action), "git_source.%s", verb);
	sw_api_audit_json(s->req, s->req->principal.organization_id, s->req->principal.user_id, action,
			  "application", s->app, meta);
}

/* A source statement's answer: the source (PUT may say it was created),
 * the audit record, and the secret wiped. */
static void source_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct source *s = arg;
	if (err->code) {
		sw_api_resource_error(s->req, NULL, err);
	} else if (PQntuples(res) != 1) {
		sw_api_not_found(s->req);
	} else if (s->status == 204) {
		audit_source(s, s->verb, NULL);
		sw_http_respond(s->req, 204, NULL, SW_STR_NULL);
	} else {
		bool created = PQnfields(res) > SW_DB_GIT_SOURCE_CREATED &&
			       PQgetvalue(res, 0, SW_DB_GIT_SOURCE_CREATED)[0] == 't';
		if (!created)
			s->secret[0] = '\0'; /* a replacing PUT keeps the secret it has */
		if (s->verb)
			audit_source(s, created ? "created" : s->verb,
				     json_pack("{s:s}", "provider", PQgetvalue(res, 0, SW_DB_GIT_SOURCE_PROVIDER)));
		sw_api_answer_row(s->req, created ? 201 : s->status, res, 0, write_source, s);
	}
	OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

static void git_source_get(struct sw_http_request *req)
{
	struct source *s = source_new(req, NULL, 200);
	if (!s)
		return;
	const char *params[3] = { req->principal.organization_id, s->app, NULL };
	sw_api_query(req, &sw_db_stmt_git_source_get, params, 3, source_done, s);
}

/* A new deploy key pair for app: the public half and fingerprint into
 * pub and fp, the private half sealed into the arena (*ret_sealed) and
 * wiped. false when answered (500). */
static bool deploy_key_new(struct sw_http_request *req, const char *app, char pub[SW_SSH_PUBLIC_KEY_MAX],
			   char fp[64], const char **ret_sealed)
{
	char priv[SW_SSH_PRIVATE_KEY_MAX], comment[48];
	snprintf(comment, sizeof(comment), "steward-%s", app);
	const char *aad = sw_api_aad(req, "deploy-key", app, NULL);
	if (!aad)
		return false;
	if (sw_ssh_ed25519_generate(comment, pub, priv) < 0 || sw_ssh_fingerprint(pub, fp) < 0) {
		OPENSSL_cleanse(priv, sizeof(priv));
		sw_log_error("deploy key generation failed");
		sw_api_internal_error(req);
		return false;
	}
	*ret_sealed = sw_api_seal(req, priv, strlen(priv), aad);
	OPENSSL_cleanse(priv, sizeof(priv));
	return *ret_sealed != NULL;
}

/* A new webhook secret for s->app into s->secret, sealed into the arena.
 * NULL when answered (500). */
static const char *webhook_secret_new(struct source *s)
{
	const char *aad = sw_api_aad(s->req, "webhook-secret", s->app, NULL);
	if (!aad)
		return NULL;
	if (sw_random_token(s->secret, sizeof(s->secret), WEBHOOK_SECRET_BYTES) < 0) {
		sw_api_internal_error(s->req);
		return NULL;
	}
	return sw_api_seal(s->req, s->secret, strlen(s->secret), aad);
}

/* The state of PUT (creating: defaults, required members) or PATCH (mask
 * written) with the body's fields in f; NULL when answered. */
static struct source *source_read(struct sw_http_request *req, bool creating, const char **f,
				  char *mask)
{
	struct sw_field_errors fe = { 0 };
	json_t *body = sw_http_json_body(req);
	if (!body)
		return NULL;
	struct source *s = source_new(req, "updated", 200);
	bool ok = s && sw_api_fields_read(req, body, source_fields, SOURCE_NFIELDS, creating, f, mask, &fe);
	json_decref(body);
	if (s && !ok) {
		sw_http_validation_error(req, &fe);
		return NULL;
	}
	return s;
}

static void git_source_put(struct sw_http_request *req)
{
	const char *f[SOURCE_NFIELDS];
	char mask[SOURCE_NFIELDS + 1];
	struct source *s = source_read(req, true, f, mask);
	if (!s)
		return;
	char pub[SW_SSH_PUBLIC_KEY_MAX], fp[64];
	const char *sealed_key, *sealed_secret;
	if (!deploy_key_new(req, s->app, pub, fp, &sealed_key) || !(sealed_secret = webhook_secret_new(s))) {
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
		return;
	}
	/* sshHostKey left out of a replacing PUT keeps the pin (a changed
	 * repositoryUrl forgets it: migration 0018) */
	const char *params[13] = { req->principal.organization_id, s->app, req->principal.user_id,
				   f[SOURCE_URL], f[SOURCE_BRANCH],
				   f[SOURCE_PROVIDER] ? f[SOURCE_PROVIDER] : provider_of(f[SOURCE_URL]),
				   pub, fp, sealed_key, sealed_secret, f[SOURCE_CREDENTIAL],
				   f[SOURCE_HOST_KEY], mask[SOURCE_HOST_KEY] == '1' ? "t" : "f" };
	if (!sw_api_query(req, &sw_db_stmt_git_source_put, params, 13, source_done, s))
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

static void git_source_patch(struct sw_http_request *req)
{
	const char *f[SOURCE_NFIELDS];
	char mask[SOURCE_NFIELDS + 1];
	struct source *s = source_read(req, false, f, mask);
	if (!s)
		return;
	const char *params[9] = { req->principal.organization_id, s->app, NULL, mask,
				  f[SOURCE_URL], f[SOURCE_BRANCH], f[SOURCE_PROVIDER],
				  f[SOURCE_CREDENTIAL], f[SOURCE_HOST_KEY] };
	sw_api_query(req, &sw_db_stmt_git_source_update, params, 9, source_done, s);
}

static void git_source_delete(struct sw_http_request *req)
{
	struct source *s = source_new(req, "deleted", 204);
	if (!s)
		return;
	const char *params[3] = { req->principal.organization_id, s->app, NULL };
	sw_api_query(req, &sw_db_stmt_git_source_remove, params, 3, source_done, s);
}

/* ---- rotations ---- */

static void deploy_key_rotated(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct source *s = arg;
	static const struct sw_api_column key_columns[] = {
		{ "publicKey", 0, SW_API_COL_TEXT },
		{ "fingerprint", 1, SW_API_COL_TEXT },
		{ "createdAt", 2, SW_API_COL_TEXT },
	};
	static const struct sw_api_object key_object = { key_columns, SW_ARRAY_SIZE(key_columns), 0 };
	if (!sw_api_found(s->req, res, err))
		return;
	audit_source(s, "deploy_key_rotated", json_pack("{s:s}", "fingerprint", PQgetvalue(res, 0, 1)));
	sw_api_answer_row(s->req, 200, res, 0, sw_api_write_object, &key_object);
}

static void deploy_key_rotate(struct sw_http_request *req)
{
	char pub[SW_SSH_PUBLIC_KEY_MAX], fp[64];
	const char *sealed;
	struct source *s = source_new(req, NULL, 200);
	if (!s || !deploy_key_new(req, s->app, pub, fp, &sealed))
		return;
	const char *params[5] = { req->principal.organization_id, s->app, pub, fp, sealed };
	sw_api_query(req, &sw_db_stmt_git_source_deploy_key, params, 5, deploy_key_rotated, s);
}

/* Writes the new secret and when it was made. */
static void write_secret(struct sw_json *j, const PGresult *res, int row, const void *ctx)
{
	const struct source *s = ctx;
	sw_json_object_begin(j);
	sw_json_key(j, "webhookSecret");
	sw_json_cstr(j, s->secret);
	sw_json_key(j, "createdAt");
	sw_json_cstr(j, PQgetvalue(res, row, 0));
	sw_json_object_end(j);
}

static void webhook_secret_rotated(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct source *s = arg;
	if (sw_api_found(s->req, res, err)) {
		audit_source(s, "webhook_secret_rotated", NULL);
		sw_api_answer_row(s->req, 200, res, 0, write_secret, s);
	}
	OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

static void webhook_secret_rotate(struct sw_http_request *req)
{
	struct source *s = source_new(req, NULL, 200);
	const char *sealed = s ? webhook_secret_new(s) : NULL;
	if (!sealed) {
		if (s)
			OPENSSL_cleanse(s->secret, sizeof(s->secret));
		return;
	}
	const char *params[3] = { req->principal.organization_id, s->app, sealed };
	if (!sw_api_query(req, &sw_db_stmt_git_source_webhook_secret, params, 3, webhook_secret_rotated, s))
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

/* ---- git credentials ---- */

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
	  .values = providers },
	{ "apiBaseUrl", SW_API_FIELD_CUSTOM, SW_API_FIELD_NULLABLE, .parse = api_base_url_parse },
	{ "username", SW_API_FIELD_STRING, SW_API_FIELD_NULLABLE, username_ok },
	{ "token", SW_API_FIELD_STRING, SW_API_FIELD_REQUIRED, token_ok },
};
static const struct sw_api_field credential_filters[] = {
	{ "provider", SW_API_FIELD_ENUM, 0, .values = providers },
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

/* A random (version 4) UUID. */
static int uuid_new(char out[37])
{
	uint8_t b[16];
	if (RAND_bytes(b, sizeof(b)) != 1)
		return -EIO;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	size_t o = 0;
	for (size_t i = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		o += (size_t)snprintf(out + o, 3, "%02x", b[i]);
	}
	return 0;
}

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
	bool ok = w && (creating ? uuid_new(w->id) == 0 : sw_api_uuid_param(req, req->params.value[0], w->id));
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
		const char *aad = sw_api_aad(req, "git-credential", w->id, NULL);
		hint = aad ? sw_arena_strndup(&req->arena, f[CRED_TOKEN] + n - 4, 4) : NULL;
		if (aad && !hint)
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
	const char *aad = sw_api_aad(req, "git-credential", l->id, NULL);
	struct pick *p = aad ? calloc(1, sizeof(*p)) : NULL;
	size_t len = 0;
	if (!aad)
		return;
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

/* ---- routes and schemas ---- */

static const int err_read[] = { 404, 503, 0 };
static const int err_put[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_credential_delete[] = { 404, 409, 503, 0 };
static const int err_rotate[] = { 404, 503, 0 };
static const int err_list[] = { 422, 503, 0 };
static const int err_create[] = { 400, 409, 413, 415, 422, 503, 0 };
static const int err_update[] = { 400, 404, 409, 413, 415, 422, 503, 0 };
static const int err_repositories[] = { 404, 409, 422, 429, 500, 502, 503, 0 };

#define NOT_FOUND_DOC SW_API_DOC_SCOPED
#define SOURCE_RULES                                                                           \
	" repositoryUrl: https://host/path, ssh://user@host/path or user@host:path (no "          \
	"credentials in it, no plain http); file:///path only when STEWARD_ENV is not production." \
	" branch: a git branch name (default main). provider: GITHUB, GITLAB, BITBUCKET or "       \
	"GENERIC. credentialId: a git credential of the organization whose token is sent (HTTP "   \
	"Basic) when an https repository asks for credentials: with the credential's username, "   \
	"else x-access-token for GITHUB, oauth2 for GITLAB, git for GENERIC; https URLs only "     \
	"(ssh uses the deploy key); null: none (public repositories). sshHostKey: the ssh "        \
	"server's key as \"<type> SHA256:<fingerprint>\" (ssh-keygen -l's form); a fetch that "   \
	"meets another key fails before any credential is sent. Left null, the first fetch pins "  \
	"the key it meets (trust on first use) and sshHostKeyPinnedAt says when; null forgets the " \
	"pin; changing repositoryUrl forgets it too unless the same request sets it. Left out of "  \
	"a replacing PUT, the pin is kept."
#define B SW_HTTP_DEFAULT_MAX_BODY

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/applications/:id/git-source", SW_ACCESS_SESSION, git_source_get, 0, 0,
	  { "Get an application's git source",
	    "With the deploy key's public half (OpenSSH form) and fingerprint, to add as a read-only "
	    "deploy key on the repository, and the webhookUrl to point the repository's push "
	    "webhook at (PUBLIC_BASE_URL, else http://<STEWARD_LISTEN>, + /webhooks/<provider in "
	    "lower case>). Never the private key or the webhook secret. 404 when the application "
	    "has none." NOT_FOUND_DOC,
	    "Git sources", NULL, "GitSource", 200, err_read } },
	{ SW_HTTP_PUT, "/applications/:id/git-source", SW_ACCESS_SESSION, git_source_put, B, 0,
	  { "Create or replace an application's git source",
	    "Creating (201) generates an Ed25519 deploy key (the private half sealed at rest) and a "
	    "webhook secret (32 random bytes, base64url, sealed at rest); that answer is the only "
	    "one that carries webhookSecret, besides a rotation's. Replacing (200, same body without "
	    "webhookSecret) sets "
	    "repositoryUrl, branch and provider (absent ones take their defaults) and keeps the "
	    "deploy key and the webhook secret." SOURCE_RULES " Left out, provider is read from the "
	    "URL's host (github.com, gitlab.com, bitbucket.org, else GENERIC)." NOT_FOUND_DOC,
	    "Git sources", "GitSourcePut", "GitSourceCreated", 201, err_put, NULL, 200 } },
	{ SW_HTTP_PATCH, "/applications/:id/git-source", SW_ACCESS_SESSION, git_source_patch, B, 0,
	  { "Update an application's git source", "Partial: only the members given change."
	    SOURCE_RULES " 404 when the application has none." NOT_FOUND_DOC,
	    "Git sources", "GitSourcePatch", "GitSource", 200, err_put } },
	{ SW_HTTP_DELETE, "/applications/:id/git-source", SW_ACCESS_SESSION, git_source_delete, 0, 0,
	  { "Remove an application's git source",
	    "With its deploy key and webhook secret. A repeat answers 404." NOT_FOUND_DOC,
	    "Git sources", NULL, NULL, 204, err_delete } },
	{ SW_HTTP_POST, "/applications/:id/git-source/deploy-key", SW_ACCESS_SESSION, deploy_key_rotate,
	  0, 0,
	  { "Rotate the deploy key",
	    "Generates a new Ed25519 key pair and answers its public half; the old pair is gone at "
	    "once (replace the deploy key on the repository). 404 when the application has no git "
	    "source." NOT_FOUND_DOC,
	    "Git sources", NULL, "GitDeployKey", 200, err_rotate } },
	{ SW_HTTP_POST, "/applications/:id/git-source/webhook-secret", SW_ACCESS_SESSION,
	  webhook_secret_rotate, 0, 0,
	  { "Rotate the webhook secret",
	    "Generates a new secret (32 random bytes, base64url) and answers it, once; webhooks "
	    "signed with the old one are refused from now on. 404 when the application has no git "
	    "source." NOT_FOUND_DOC,
	    "Git sources", NULL, "GitWebhookSecret", 200, err_rotate } },
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
#define ID_OR_NULL "{\"type\":[\"string\",\"null\"],\"format\":\"uuid\"}"
#define HOST_KEY                                                                               \
	"{\"type\":[\"string\",\"null\"],\"pattern\":\"^[a-z0-9@.-]{1,64} SHA256:[A-Za-z0-9+/]{43}$\"," \
	"\"examples\":[\"ssh-ed25519 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s\"]}"
#define PROVIDER "{\"type\":\"string\",\"enum\":[\"GITHUB\",\"GITLAB\",\"BITBUCKET\",\"GENERIC\"]}"
#define URL_SCHEMA "{\"type\":\"string\",\"minLength\":1,\"maxLength\":2048}"
#define BRANCH "{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"default\":\"main\"}"
#define DEPLOY_KEY_PROPERTIES                                                                 \
	"\"publicKey\":{\"type\":\"string\",\"pattern\":\"^ssh-ed25519 \","                    \
	"\"description\":\"OpenSSH authorized_keys form.\"},"                                   \
	"\"fingerprint\":{\"type\":\"string\",\"pattern\":\"^SHA256:\"},\"createdAt\":" TS
#define SOURCE_PROPERTIES                                                                     \
	"\"id\":" ID ",\"applicationId\":" ID ",\"repositoryUrl\":" URL_SCHEMA ","              \
	"\"branch\":" BRANCH ",\"provider\":" PROVIDER ","                                      \
	"\"deployKey\":{\"$ref\":\"#/components/schemas/GitDeployKey\"},"                        \
	"\"webhookUrl\":{\"type\":\"string\",\"format\":\"uri\"},"                              \
	"\"hasWebhookSecret\":{\"type\":\"boolean\"},\"webhookSecretCreatedAt\":" TS ","        \
	"\"credentialId\":" ID_OR_NULL ",\"sshHostKey\":" HOST_KEY ","                         \
	"\"sshHostKeyPinnedAt\":" TS_OR_NULL ",\"createdAt\":" TS ",\"updatedAt\":" TS
#define SOURCE_REQUIRED                                                                       \
	"\"id\",\"applicationId\",\"repositoryUrl\",\"branch\",\"provider\",\"deployKey\","     \
	"\"webhookUrl\",\"hasWebhookSecret\",\"webhookSecretCreatedAt\",\"credentialId\",\"sshHostKey\"," \
	"\"sshHostKeyPinnedAt\",\"createdAt\",\"updatedAt\""
#define CREDENTIAL_PROPERTIES                                                                  \
	"\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},\"provider\":" PROVIDER ","  \
	"\"apiBaseUrl\":{\"type\":[\"string\",\"null\"],\"maxLength\":2048},"                   \
	"\"username\":{\"type\":[\"string\",\"null\"],\"maxLength\":254,"                       \
	"\"pattern\":\"^[A-Za-z0-9._@+-]+$\"},"                                                 \
	"\"token\":{\"type\":\"string\",\"minLength\":8,\"maxLength\":1024,\"writeOnly\":true,"  \
	"\"pattern\":\"^[!-~]+$\"}"

static const char schemas[] = "{"
	"\"GitDeployKey\":{\"type\":\"object\",\"required\":[\"publicKey\",\"fingerprint\",\"createdAt\"],"
	"\"properties\":{" DEPLOY_KEY_PROPERTIES "}},"
	"\"GitSource\":{\"type\":\"object\",\"required\":[" SOURCE_REQUIRED "],\"properties\":{"
	SOURCE_PROPERTIES "}},"
	"\"GitSourceCreated\":{\"type\":\"object\",\"required\":[" SOURCE_REQUIRED "],\"properties\":{"
	SOURCE_PROPERTIES ",\"webhookSecret\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9_-]{43}$\","
	"\"description\":\"Only in the answer that created the source (201).\"}}},"
	"\"GitSourcePut\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"repositoryUrl\"],\"properties\":{\"repositoryUrl\":" URL_SCHEMA ","
	"\"branch\":" BRANCH ",\"provider\":" PROVIDER ",\"credentialId\":" ID_OR_NULL ","
	"\"sshHostKey\":" HOST_KEY "}},"
	"\"GitSourcePatch\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	"\"repositoryUrl\":" URL_SCHEMA ",\"branch\":" BRANCH ",\"provider\":" PROVIDER ","
	"\"credentialId\":" ID_OR_NULL ",\"sshHostKey\":" HOST_KEY "}},"
	"\"GitWebhookSecret\":{\"type\":\"object\",\"required\":[\"webhookSecret\",\"createdAt\"],"
	"\"properties\":{\"webhookSecret\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9_-]{43}$\","
	"\"description\":\"Shown once.\"},\"createdAt\":" TS "}},"
	"\"GitCredential\":{\"type\":\"object\",\"required\":[\"id\",\"name\",\"provider\",\"apiBaseUrl\","
	"\"username\",\"tokenHint\",\"lastUsedAt\",\"createdAt\",\"updatedAt\"],\"properties\":{"
	"\"id\":" ID ",\"name\":{\"$ref\":\"#/components/schemas/ResourceName\"},\"provider\":" PROVIDER ","
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

const struct sw_api_route_group sw_api_git_group = { routes, SW_ARRAY_SIZE(routes), schemas };
