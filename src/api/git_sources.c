/* Git sources of applications, with their deploy key and webhook secret.
 * The git credentials a source may name are in git_credentials.c.
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
 *   .../webhook-secret replaces the secret and answers it, once. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/base/log.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/base/sshkey.h"
#include "steward/base/validate.h"
#include "api/app_config.h"
#include "steward/db/statements_git.h"

#define WEBHOOK_SECRET_BYTES 32
#define WEBHOOK_SECRET_LEN SW_BASE64URL_LEN(WEBHOOK_SECRET_BYTES)

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
	{ "provider", SW_API_FIELD_ENUM, 0, .values = sw_api_git_providers },
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

/* Runs a source statement, with the record "git_source.<verb>" about the
 * application in the same statement when verb is set (NULL verb on an
 * audited statement: its own action, e.g. created or updated by PUT). */
static bool source_query(struct source *s, const struct sw_db_stmt *stmt, const char *const *params,
			 int n, const char *verb, sw_db_cb cb)
{
	if (!stmt->audited)
		return sw_api_query(s->req, stmt, params, n, cb, s);
	char action[48];
	if (verb)
		snprintf(action, sizeof(action), "git_source.%s", verb);
	return sw_api_query_audited(s->req, stmt, params, n, verb ? action : NULL, "application",
				    s->app, NULL, cb, s);
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
		sw_http_respond(s->req, 204, NULL, SW_STR_NULL);
	} else {
		bool created = PQnfields(res) > SW_DB_GIT_SOURCE_CREATED &&
			       PQgetvalue(res, 0, SW_DB_GIT_SOURCE_CREATED)[0] == 't';
		if (!created)
			s->secret[0] = '\0'; /* a replacing PUT keeps the secret it has */
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
	source_query(s, &sw_db_stmt_git_source_get, params, 3, NULL, source_done);
}

/* A new deploy key pair for app: the public half and fingerprint into
 * pub and fp, the private half sealed into the arena (*ret_sealed) and
 * wiped. false when answered (500). */
static bool deploy_key_new(struct sw_http_request *req, const char *app, char pub[SW_SSH_PUBLIC_KEY_MAX],
			   char fp[64], const char **ret_sealed)
{
	char priv[SW_SSH_PRIVATE_KEY_MAX], comment[48];
	snprintf(comment, sizeof(comment), "steward-%s", app);
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_deploy_key(aad, app);
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
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_webhook_secret(aad, s->app);
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
	if (!source_query(s, &sw_db_stmt_git_source_put, params, 13, NULL, source_done))
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
	source_query(s, &sw_db_stmt_git_source_update, params, 9, s->verb, source_done);
}

static void git_source_delete(struct sw_http_request *req)
{
	struct source *s = source_new(req, "deleted", 204);
	if (!s)
		return;
	const char *params[3] = { req->principal.organization_id, s->app, NULL };
	source_query(s, &sw_db_stmt_git_source_remove, params, 3, s->verb, source_done);
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
	source_query(s, &sw_db_stmt_git_source_deploy_key, params, 5, "deploy_key_rotated",
		     deploy_key_rotated);
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
	if (!source_query(s, &sw_db_stmt_git_source_webhook_secret, params, 3, "webhook_secret_rotated",
			  webhook_secret_rotated))
		OPENSSL_cleanse(s->secret, sizeof(s->secret));
}

/* ---- routes and schemas ---- */

static const int err_read[] = { 404, 503, 0 };
static const int err_put[] = { 400, 404, 413, 415, 422, 503, 0 };
static const int err_delete[] = { 404, 503, 0 };
static const int err_rotate[] = { 404, 503, 0 };

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
	"\"branch\":" BRANCH ",\"provider\":" SW_API_GIT_PROVIDER_T ","                                      \
	"\"deployKey\":{\"$ref\":\"#/components/schemas/GitDeployKey\"},"                        \
	"\"webhookUrl\":{\"type\":\"string\",\"format\":\"uri\"},"                              \
	"\"hasWebhookSecret\":{\"type\":\"boolean\"},\"webhookSecretCreatedAt\":" TS ","        \
	"\"credentialId\":" ID_OR_NULL ",\"sshHostKey\":" HOST_KEY ","                         \
	"\"sshHostKeyPinnedAt\":" TS_OR_NULL ",\"createdAt\":" TS ",\"updatedAt\":" TS
#define SOURCE_REQUIRED                                                                       \
	"\"id\",\"applicationId\",\"repositoryUrl\",\"branch\",\"provider\",\"deployKey\","     \
	"\"webhookUrl\",\"hasWebhookSecret\",\"webhookSecretCreatedAt\",\"credentialId\",\"sshHostKey\"," \
	"\"sshHostKeyPinnedAt\",\"createdAt\",\"updatedAt\""

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
	"\"branch\":" BRANCH ",\"provider\":" SW_API_GIT_PROVIDER_T ",\"credentialId\":" ID_OR_NULL ","
	"\"sshHostKey\":" HOST_KEY "}},"
	"\"GitSourcePatch\":{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{"
	"\"repositoryUrl\":" URL_SCHEMA ",\"branch\":" BRANCH ",\"provider\":" SW_API_GIT_PROVIDER_T ","
	"\"credentialId\":" ID_OR_NULL ",\"sshHostKey\":" HOST_KEY "}},"
	"\"GitWebhookSecret\":{\"type\":\"object\",\"required\":[\"webhookSecret\",\"createdAt\"],"
	"\"properties\":{\"webhookSecret\":{\"type\":\"string\",\"pattern\":\"^[A-Za-z0-9_-]{43}$\","
	"\"description\":\"Shown once.\"},\"createdAt\":" TS "}}"
	"}";

const struct sw_api_route_group sw_api_git_sources_group = { routes, SW_ARRAY_SIZE(routes), schemas };
