/* POST /webhooks/:provider: a repository's push becomes a deployment.
 *
 * The route is public: the signature is the authentication. One request:
 *  1. the provider (github, gitlab, bitbucket, generic; else 404), the
 *     per-address rate limit (60 a minute, 429 with Retry-After), then the
 *     headers, parsed strictly (steward/deploy/webhook.h): a missing or malformed
 *     credential is 401 INVALID_SIGNATURE, another header 400
 *     INVALID_WEBHOOK; a generic or GitLab-signed timestamp more than 300 s
 *     from the server's clock is 401 before any lookup;
 *  2. the body (JSON, at most 1 MiB) is read for the repository it names;
 *  3. the git sources of that provider whose repository is that one
 *     (steward_git_repository_key(), across organizations, at most 20) are
 *     the candidates; their secrets are unsealed ("webhook-secret:<app>");
 *  4. on the worker pool (an HMAC over up to 1 MiB per candidate is too
 *     long for the loop), every candidate is verified, without stopping at
 *     the first match; with no candidate a stand-in secret is verified
 *     instead, so an unknown repository costs what a known one does. No
 *     match: 401 INVALID_SIGNATURE, the same answer whether the repository
 *     is known or not;
 *  5. the first candidate that verified decides (sw_webhook_decide()) and
 *     one statement records the delivery id and, for a push to its branch,
 *     creates the GIT_PUSH deployment of the pushed commit in the same
 *     transaction (steward_webhook_delivery(), migration 0014).
 * Answers: 202 {"data": {"deploymentId", "applicationId", "number",
 * "status", "requestedRef", "redelivered": false}} for a deployment; 202
 * {"data": {"ignored": CODE, "reason", "applicationId", "redelivered":
 * false}} for an event that deploys nothing; a delivery id seen before for
 * the application answers 200 with the earlier outcome ("redelivered":
 * true) and does nothing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include "steward/io/io.h"
#include "steward/base/log.h"
#include "steward/auth/ratelimit.h"
#include "steward/base/seal.h"
#include "steward/base/secret.h"
#include "steward/deploy/webhook.h"
#include "api/api_internal.h"
#include "steward/db/statements_webhooks.h"

#define INVALID_SIGNATURE_MESSAGE                                                             \
	"The signature does not verify with the webhook secret of any application whose git " \
	"source is this repository."

/* A request's state, in its arena. */
struct hook {
	struct sw_http_request *req;
	enum sw_webhook_provider provider;
	struct sw_webhook_headers h;
	struct sw_webhook_event ev; /* strings copied into the arena */
	char app[37], org[37];      /* the application that verified */
	const char *branch;
};

static void refuse_signature(struct sw_http_request *req, const char *why)
{
	sw_http_error(req, 401, "INVALID_SIGNATURE", why);
}

static int64_t wall_seconds(void)
{
	return (int64_t)(sw_wall_ms() / 1000);
}

/* Copies the event's strings out of the payload into the arena, so the
 * payload can go at once. false when out of memory. */
static bool keep_event(struct sw_http_request *req, struct sw_webhook_event *ev)
{
	for (unsigned i = 0; i < ev->nurls; i++)
		if (!(ev->urls[i] = sw_arena_strndup(&req->arena, ev->urls[i], strlen(ev->urls[i]))))
			return false;
	for (unsigned i = 0; i < ev->nchanges; i++) {
		struct sw_webhook_change *c = &ev->changes[i];
		if (!(c->name = sw_arena_strndup(&req->arena, c->name, c->name_len)) ||
		    (c->after && !(c->after = sw_arena_strndup(&req->arena, c->after, strlen(c->after)))))
			return false;
	}
	return true;
}

/* ---- 5: the delivery recorded, the answer ---- */

static void delivery_done(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct hook *k = arg;
	struct sw_http_request *req = k->req;
	if (err->code) {
		sw_api_resource_error(req, NULL, err);
		return;
	}
	if (!sw_api_one_row(req, res, err, 500, "INTERNAL_ERROR", "The delivery could not be recorded."))
		return;
	bool redelivered = PQgetvalue(res, 0, SW_DB_WEBHOOK_DELIVERY_REDELIVERED)[0] == 't';
	const char *outcome = PQgetvalue(res, 0, SW_DB_WEBHOOK_DELIVERY_OUTCOME);
	const char *deployment = sw_api_nullable(res, 0, SW_DB_WEBHOOK_DELIVERY_DEPLOYMENT);
	bool deployed = strcmp(outcome, sw_webhook_outcome_code(SW_WEBHOOK_DEPLOY)) == 0;

	struct sw_buf buf = { 0 };
	struct sw_json j;
	sw_http_json_begin(req, &buf, &j);
	sw_json_object_begin(&j);
	if (deployed) {
		sw_json_key(&j, "deploymentId");
		sw_json_cstr(&j, deployment);
	} else {
		sw_json_key(&j, "ignored");
		sw_json_cstr(&j, outcome);
		sw_json_key(&j, "reason");
		sw_json_cstr(&j, sw_webhook_outcome_reason(outcome));
	}
	sw_json_key(&j, "applicationId");
	sw_json_cstr(&j, k->app);
	if (deployed) {
		sw_json_key(&j, "number");
		if (PQgetisnull(res, 0, SW_DB_WEBHOOK_DELIVERY_NUMBER))
			sw_json_null(&j);
		else
			sw_json_int(&j, atoll(PQgetvalue(res, 0, SW_DB_WEBHOOK_DELIVERY_NUMBER)));
		sw_json_key(&j, "status");
		sw_json_cstr(&j, sw_api_nullable(res, 0, SW_DB_WEBHOOK_DELIVERY_STATUS));
		sw_json_key(&j, "requestedRef");
		sw_json_cstr(&j, sw_api_nullable(res, 0, SW_DB_WEBHOOK_DELIVERY_REF));
	}
	sw_json_key(&j, "redelivered");
	sw_json_bool(&j, redelivered);
	sw_json_object_end(&j);

	if (deployed && !redelivered && deployment) {
		const char *provider = sw_webhook_provider_name(k->provider);
		sw_log_info("webhook deployment queued provider=%s application=%s deployment=%s", provider,
			    k->app, deployment);
	}
	sw_http_json_end(req, redelivered ? 200 : 202, &buf, &j);
}

static void decide_and_record(struct hook *k)
{
	struct sw_http_request *req = k->req;
	const char *ref = NULL;
	size_t ref_len = 0;
	enum sw_webhook_outcome o = sw_webhook_decide(&k->ev, sw_str_cstr(k->branch), &ref, &ref_len);
	const char *ref_param = NULL;
	if (o == SW_WEBHOOK_DEPLOY && !(ref_param = sw_arena_strndup(&req->arena, ref, ref_len))) {
		sw_api_internal_error(req);
		return;
	}
	const char *delivery = sw_arena_strndup(&req->arena, k->h.delivery.ptr, k->h.delivery.len);
	if (!delivery) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[6] = { sw_webhook_provider_name(k->provider), delivery, k->org, k->app,
				  ref_param, sw_webhook_outcome_code(o) };
	/* A deployment it creates is recorded with it, by nobody (a push). */
	char meta[96];
	snprintf(meta, sizeof(meta), "{\"trigger\": \"GIT_PUSH\", \"provider\": \"%s\"}",
		 sw_webhook_provider_name(k->provider));
	const struct sw_db_audit_row a = { k->org, NULL, "deployment.created", "deployment", NULL,
					   sw_http_peer_address(req), meta };
	sw_api_query_audit_row(req, &sw_db_stmt_webhook_delivery, params, 6, &a, delivery_done, k);
}

/* ---- 4: verification on the worker pool ---- */

struct candidate {
	char secret[SW_WEBHOOK_TOKEN_MAX_LEN + 1];
	size_t len;
	bool stand_in; /* no candidate: verified for the time it takes, never a match */
	char app[37], org[37];
	char branch[SW_GIT_BRANCH_MAX_LEN + 1];
};

/* Malloc'd, not in the arena: the worker touches it. The worker reads the
 * request's headers and body (arena memory nobody writes while the request
 * waits for this job) and nothing else of the request. */
struct verify {
	struct sw_worker_job job;
	struct hook *k; /* the loop's: done() only */
	struct sw_webhook_headers h;
	struct sw_str body;
	int64_t now;
	unsigned n;
	int match; /* the first candidate that verified, or -1 */
	struct candidate cand[SW_WEBHOOK_MAX_CANDIDATES];
};

static void verify_free(struct verify *v)
{
	OPENSSL_cleanse(v->cand, sizeof(v->cand));
	free(v);
}

static void verify_run(struct sw_worker_job *job)
{
	struct verify *v = SW_CONTAINER_OF(job, struct verify, job);
	v->match = -1;
	for (unsigned i = 0; i < v->n; i++) {
		bool ok = sw_webhook_verify(&v->h, sw_str_from(v->cand[i].secret, v->cand[i].len), v->body,
					    v->now);
		if (ok && v->match < 0 && !v->cand[i].stand_in)
			v->match = (int)i;
	}
}

static void verify_done(struct sw_worker_job *job)
{
	struct verify *v = SW_CONTAINER_OF(job, struct verify, job);
	struct hook *k = v->k;
	if (v->match < 0) {
		verify_free(v);
		refuse_signature(k->req, INVALID_SIGNATURE_MESSAGE);
		return;
	}
	const struct candidate *c = &v->cand[v->match];
	memcpy(k->app, c->app, sizeof(k->app));
	memcpy(k->org, c->org, sizeof(k->org));
	k->branch = sw_arena_strndup(&k->req->arena, c->branch, strlen(c->branch));
	verify_free(v);
	if (!k->branch) {
		sw_api_internal_error(k->req);
		return;
	}
	decide_and_record(k);
}

/* Unseals row's secret into c; false (logged, never the value) when it
 * does not open or does not fit. */
static bool candidate_open(const PGresult *res, int row, struct candidate *c)
{
	const char *app = PQgetvalue(res, row, SW_DB_WEBHOOK_CANDIDATE_APPLICATION_ID);
	const char *branch = PQgetvalue(res, row, SW_DB_WEBHOOK_CANDIDATE_BRANCH);
	char aad[SW_SEAL_AAD_MAX];
	sw_seal_aad_webhook_secret(aad, app);
	int r = sw_unseal(PQgetvalue(res, row, SW_DB_WEBHOOK_CANDIDATE_SECRET_SEALED), aad, c->secret,
			  sizeof(c->secret) - 1, &c->len);
	if (r < 0 || strlen(app) != 36 || strlen(branch) >= sizeof(c->branch)) {
		OPENSSL_cleanse(c->secret, sizeof(c->secret));
		sw_log_error("the webhook secret of application %.36s cannot be opened (%d)", app, r);
		return false;
	}
	memcpy(c->app, app, 37);
	memcpy(c->org, PQgetvalue(res, row, SW_DB_WEBHOOK_CANDIDATE_ORGANIZATION_ID), 36);
	c->org[36] = '\0';
	memcpy(c->branch, branch, strlen(branch) + 1);
	return true;
}

static void candidates_found(void *arg, const PGresult *res, const struct sw_db_error *err)
{
	struct hook *k = arg;
	struct sw_http_request *req = k->req;
	if (err->code) {
		sw_api_db_error(req, err);
		return;
	}
	struct verify *v = calloc(1, sizeof(*v));
	if (!v) {
		sw_api_internal_error(req);
		return;
	}
	v->k = k;
	v->h = k->h;
	v->body = req->body;
	v->now = wall_seconds();
	int rows = PQntuples(res);
	for (int i = 0; i < rows && v->n < SW_WEBHOOK_MAX_CANDIDATES; i++)
		if (candidate_open(res, i, &v->cand[v->n]))
			v->n++;
	if (v->n == 0) {
		/* A stand-in of the secrets' own form, never a match. */
		struct candidate *c = &v->cand[0];
		c->stand_in = true;
		if (sw_random_token(c->secret, sizeof(c->secret), 32) < 0)
			memset(c->secret, 'x', 43);
		c->len = strlen(c->secret);
		v->n = 1;
	}
	if (!sw_api_submit(req, &v->job, verify_run, verify_done))
		verify_free(v);
}

/* ---- 1-3 ---- */

static void webhook_receive(struct sw_http_request *req)
{
	enum sw_webhook_provider provider;
	if (!sw_webhook_provider_parse(req->params.value[0], &provider)) {
		sw_api_not_found(req);
		return;
	}
	if (!sw_api_rate_limit(req, &sw_api_limit_webhook_address, sw_str_cstr(sw_http_peer_address(req))))
		return;
	struct hook *k = sw_api_state_new(req, sizeof(*k));
	if (!k)
		return;
	k->provider = provider;
	const char *why = NULL;
	int r = sw_webhook_headers_parse(provider, req->headers, req->header_count, &k->h, &why);
	if (r == -EACCES) {
		refuse_signature(req, why);
		return;
	}
	if (r < 0) {
		sw_http_error(req, 400, "INVALID_WEBHOOK", why);
		return;
	}
	if (k->h.has_timestamp && !sw_webhook_fresh(k->h.timestamp, wall_seconds())) {
		refuse_signature(req, "The signature's timestamp is more than 300 seconds away from the "
				      "server's clock (a replay, or a clock to set right).");
		return;
	}

	json_t *body = sw_http_json_body(req);
	if (!body)
		return;
	const char *field = NULL, *msg = NULL;
	r = sw_webhook_event_read(provider, k->h.event, body, &k->ev, &field, &msg);
	if (r < 0) {
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, field ? field : "body", msg);
		json_decref(body);
		sw_http_validation_error(req, &fe);
		return;
	}
	bool kept = keep_event(req, &k->ev);
	json_decref(body);
	if (!kept) {
		sw_api_internal_error(req);
		return;
	}
	const char *params[1 + SW_WEBHOOK_MAX_URLS] = { sw_webhook_source_provider(provider) };
	for (unsigned i = 0; i < k->ev.nurls; i++)
		params[1 + i] = k->ev.urls[i];
	sw_api_query(req, &sw_db_stmt_webhook_candidates, params, 1 + SW_WEBHOOK_MAX_URLS,
		     candidates_found, k);
}

/* ---- route and schemas ---- */

static const int err_webhook[] = { 400, 401, 404, 413, 415, 422, 429, 500, 503, 0 };

static const struct sw_route routes[] = {
	{ SW_HTTP_POST, "/webhooks/:provider", SW_ACCESS_PUBLIC, webhook_receive, SW_WEBHOOK_MAX_BODY, 0,
	  { "Receive a repository webhook",
	    "Public: the signature is the authentication. provider: github, gitlab, bitbucket or "
	    "generic (anything else: 404). Point the repository's push webhook at the git source's "
	    "webhookUrl with content type application/json and the git source's webhookSecret. "
	    "Signatures: github X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, raw body)> "
	    "(with X-GitHub-Event, X-GitHub-Delivery); bitbucket X-Hub-Signature: sha256=<hex "
	    "HMAC-SHA256(secret, raw body)> (with X-Event-Key, X-Request-UUID); gitlab "
	    "X-Gitlab-Token: <secret>, compared in constant time, and/or GitLab's signing token "
	    "(Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature: v1,<base64 "
	    "HMAC-SHA256(key, \"<webhook-id>.<webhook-timestamp>.<raw body>\")>, where the signing "
	    "token to give GitLab is whsec_ followed by the secret rewritten in standard base64: - "
	    "to +, _ to /, and = appended); every credential sent must verify (with X-Gitlab-Event "
	    "and Idempotency-Key or X-Gitlab-Event-UUID); generic Steward-Signature: v1=<lower-case "
	    "hex HMAC-SHA256(secret, \"<Steward-Timestamp>.<raw body>\")>, Steward-Timestamp: "
	    "<unix seconds>, Steward-Delivery: <1 to 128 of A-Z a-z 0-9 . _ : { } ->, the scheme of "
	    "Steward's own notifications, with the generic payload {\"repository\": \"<git URL>\", "
	    "\"ref\": \"refs/heads/<branch>\", \"after\": \"<commit sha>\" (optional: without it the "
	    "branch's head at clone time is deployed)}; the hosted providers send their own push "
	    "payloads. Timestamps (generic, GitLab's signed form) more than 300 s from the server's "
	    "clock are refused (401). The application is found by the repository the payload names "
	    "(GitHub repository.clone_url/ssh_url/html_url, GitLab project.git_http_url/git_ssh_url/"
	    "web_url, Bitbucket repository.links.html.href or full_name), matched against git "
	    "sources of that provider without regard to scheme, user, port, .git or case; at most "
	    "20 are tried. A signature that verifies with no candidate's secret, or a missing or "
	    "malformed one, is 401 INVALID_SIGNATURE, the same whether the repository is known or "
	    "not; a missing or malformed event or delivery header is 400 INVALID_WEBHOOK. A push to "
	    "the application's branch creates a deployment with trigger GIT_PUSH of exactly the "
	    "commit pushed (requestedRef: its sha) and answers 202 with deploymentId; any other "
	    "event (ping, tags, other branches, branch deletion, other event types) answers 202 "
	    "with ignored (PING, NOT_A_PUSH, TAG, OTHER_BRANCH, BRANCH_DELETED, NO_COMMIT) and "
	    "deploys nothing. Delivery ids are remembered per application for 30 days: a "
	    "redelivery answers 200 with the earlier outcome (redelivered: true) and never deploys "
	    "twice. Limits: 60 requests a minute per client address (429 with Retry-After), bodies "
	    "up to 1 MiB (413).",
	    "Webhooks", "WebhookGenericPayload", "WebhookOutcome", 202, err_webhook, NULL, 200 } },
};

#define UUID_SCHEMA "{\"type\":\"string\",\"format\":\"uuid\"}"
static const char schemas[] = "{"
	"\"WebhookGenericPayload\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"repository\",\"ref\"],"
	"\"description\":\"The payload of the generic provider. github, gitlab and bitbucket send "
	"their own push payloads instead.\",\"properties\":{"
	"\"repository\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":2048,"
	"\"description\":\"The repository's git URL, as the git source names it (any form).\"},"
	"\"ref\":{\"type\":\"string\",\"minLength\":6,\"maxLength\":255,\"pattern\":\"^refs/\"},"
	"\"after\":{\"type\":[\"string\",\"null\"],\"pattern\":\"^([0-9a-f]{40}|[0-9a-f]{64})$\","
	"\"description\":\"The commit pushed; all zeros: the branch was deleted.\"}}},"
	"\"WebhookDeployment\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"deploymentId\",\"applicationId\",\"number\",\"status\",\"requestedRef\","
	"\"redelivered\"],\"properties\":{"
	"\"deploymentId\":{\"type\":[\"string\",\"null\"],\"format\":\"uuid\","
	"\"description\":\"null when the deployment was deleted since (a redelivery).\"},"
	"\"applicationId\":" UUID_SCHEMA ","
	"\"number\":{\"type\":[\"integer\",\"null\"],\"minimum\":1},"
	"\"status\":{\"type\":[\"string\",\"null\"],\"enum\":[\"QUEUED\",\"BUILDING\",\"DEPLOYING\","
	"\"SUCCEEDED\",\"FAILED\",\"CANCELLED\",null]},"
	"\"requestedRef\":{\"type\":[\"string\",\"null\"]},"
	"\"redelivered\":{\"type\":\"boolean\"}}},"
	"\"WebhookIgnored\":{\"type\":\"object\",\"additionalProperties\":false,"
	"\"required\":[\"ignored\",\"reason\",\"applicationId\",\"redelivered\"],\"properties\":{"
	"\"ignored\":{\"type\":\"string\",\"enum\":[\"PING\",\"NOT_A_PUSH\",\"TAG\",\"OTHER_BRANCH\","
	"\"BRANCH_DELETED\",\"NO_COMMIT\"]},"
	"\"reason\":{\"type\":\"string\"},"
	"\"applicationId\":" UUID_SCHEMA ","
	"\"redelivered\":{\"type\":\"boolean\"}}},"
	"\"WebhookOutcome\":{\"oneOf\":[{\"$ref\":\"#/components/schemas/WebhookDeployment\"},"
	"{\"$ref\":\"#/components/schemas/WebhookIgnored\"}]}"
	"}";

const struct sw_api_route_group sw_api_webhooks_group = { routes, SW_ARRAY_SIZE(routes), schemas };
