/* Inbound repository webhooks (POST /webhooks/:provider): the pure part.
 *
 * Headers are parsed strictly, signatures verified in constant time, and
 * payloads read into what a deployment decision needs. Nothing here does
 * I/O, allocates, or keeps a pointer past the call that returns it: the
 * route (src/api/webhooks.c) finds the candidate applications, opens their
 * secrets and records deliveries; this file decides.
 *
 * What each provider sends, and what is checked (also in the OpenAPI
 * description of the route):
 *
 *   github     X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>
 *              X-GitHub-Event (push, ping, ...), X-GitHub-Delivery
 *   gitlab     X-Gitlab-Token: <secret>, compared in constant time, and/or
 *              GitLab's signing token (Standard Webhooks v1):
 *                webhook-id, webhook-timestamp,
 *                webhook-signature: v1,<base64 HMAC-SHA256(key,
 *                  "<webhook-id>.<webhook-timestamp>.<body>")> (several
 *                  space-separated entries allowed; one must match)
 *              where key is the secret's base64url decoding (32 bytes), so
 *              the signing token to give GitLab is "whsec_" + the secret
 *              in standard base64. Every credential present must verify.
 *              X-Gitlab-Event (Push Hook, Tag Push Hook, ...); delivery id:
 *              Idempotency-Key (the same on retries), else
 *              X-Gitlab-Event-UUID.
 *   bitbucket  X-Hub-Signature: sha256=<hex HMAC-SHA256(secret, body)>
 *              X-Event-Key (repo:push, ...), X-Request-UUID
 *   generic    Steward-Signature: v1=<lower hex HMAC-SHA256(secret,
 *                "<timestamp>.<body>")>, Steward-Timestamp: <unix seconds>,
 *              Steward-Delivery: <id>: the scheme of Steward's own
 *              outbound notifications (notify.h, sw_notify_sign(), which
 *              computes it here too).
 *
 * The secret is the application's webhook secret exactly as the git-source
 * API showed it (43 base64url characters), as bytes. An empty secret never
 * verifies. Timestamps (generic, GitLab's signed form) more than
 * SW_WEBHOOK_TOLERANCE_S away from now are refused (replays). Hex digits
 * of X-Hub-Signature(-256) may be of either case; Steward-Signature is
 * lower case, as Steward writes it. A header read here that appears twice
 * is refused. */
#ifndef STEWARD_WEBHOOK_H
#define STEWARD_WEBHOOK_H

#include <jansson.h>
#include "steward/base/base.h"
#include "steward/http/http_parser.h"

/* Bounds of the route: SW_WEBHOOK_* in steward/base/limits.h. */
#define SW_WEBHOOK_EVENT_MAX_LEN 64        /* an event header */
#define SW_WEBHOOK_TOKEN_MAX_LEN 256       /* X-Gitlab-Token; secrets longer never verify */
#define SW_WEBHOOK_MAX_SIGNATURES 8        /* entries of webhook-signature */
#define SW_WEBHOOK_MAX_URLS 4              /* repository identifiers read from a payload */
#define SW_WEBHOOK_MAX_CHANGES 16          /* ref changes read from one push */
#define SW_WEBHOOK_REF_MAX_LEN 255         /* a ref in a payload */
#define SW_WEBHOOK_FULL_NAME_MAX_LEN 255   /* Bitbucket's "workspace/slug" */
#define SW_WEBHOOK_TIMESTAMP_MAX_DIGITS 12

enum sw_webhook_provider {
	SW_WEBHOOK_GITHUB,
	SW_WEBHOOK_GITLAB,
	SW_WEBHOOK_BITBUCKET,
	SW_WEBHOOK_GENERIC,
};

/* The route's path segment ("github", "gitlab", "bitbucket", "generic";
 * exactly, lower case) -> provider. false for anything else. */
bool sw_webhook_provider_parse(struct sw_str s, enum sw_webhook_provider *ret);
/* "github", ...: the path segment and webhook_deliveries.provider. */
const char *sw_webhook_provider_name(enum sw_webhook_provider p);
/* "GITHUB", ...: git_sources.provider. */
const char *sw_webhook_source_provider(enum sw_webhook_provider p);

/* What the headers of one request say. Views point into the headers given
 * to sw_webhook_headers_parse(). */
struct sw_webhook_headers {
	enum sw_webhook_provider provider;
	struct sw_str delivery; /* the delivery id */
	struct sw_str event;    /* the event header; empty for generic */
	/* github, bitbucket: the MAC sent */
	bool has_mac;
	uint8_t mac[32];
	/* generic: Steward-Signature as sent ("v1=" + 64 lower hex) */
	struct sw_str signature;
	/* generic, and gitlab's signed form: the timestamp sent */
	bool has_timestamp;
	int64_t timestamp;
	/* gitlab: X-Gitlab-Token */
	bool has_token;
	struct sw_str token;
	/* gitlab's signed form: the v1 MACs sent, and webhook-id */
	unsigned nsignatures;
	uint8_t signatures[SW_WEBHOOK_MAX_SIGNATURES][32];
	struct sw_str webhook_id;
};

/* Parses the headers (n of them, names in any case) of a request to
 * provider into *ret. 0; -EACCES when a credential header is missing,
 * repeated or not of its form (401); -EBADMSG when another header read
 * here is (400); *ret_why is then a sentence naming the header (static). */
int sw_webhook_headers_parse(enum sw_webhook_provider provider, const struct sw_http_header *h,
			     unsigned n, struct sw_webhook_headers *ret, const char **ret_why);

/* Whether timestamp is within SW_WEBHOOK_TOLERANCE_S of now (both unix
 * seconds). */
bool sw_webhook_fresh(int64_t timestamp, int64_t now);

/* Whether the request whose parsed headers are h and raw body is body was
 * signed with secret, at now (unix seconds, for timestamps). Constant time
 * in the secret and the MACs (sw_ct_equal()); false for an empty secret or
 * one longer than SW_WEBHOOK_TOKEN_MAX_LEN, a stale timestamp, or a
 * failure of libcrypto. */
bool sw_webhook_verify(const struct sw_webhook_headers *h, struct sw_str secret, struct sw_str body,
		       int64_t now);

/* ---- payloads ---- */

enum sw_webhook_ref_kind { SW_WEBHOOK_REF_BRANCH, SW_WEBHOOK_REF_TAG, SW_WEBHOOK_REF_OTHER };

/* One ref a push changed. Strings point into the parsed payload. */
struct sw_webhook_change {
	enum sw_webhook_ref_kind kind;
	const char *name;  /* the branch or tag name ("main"), or the whole ref for OTHER */
	size_t name_len;
	const char *after; /* the commit it now points at (40 or 64 lower-case hex), or NULL */
	bool deleted;      /* the ref was deleted */
};

/* What a payload says, as far as deploying goes. */
struct sw_webhook_event {
	bool push;      /* the provider's push event (always for generic) */
	bool ping;      /* GitHub's ping */
	bool deploy_head; /* generic: a push without "after" deploys the branch's head */
	/* How the payload names its repository (URLs in any of the forms
	 * git_sources holds; matched by steward_git_repository_key()). Point
	 * into the payload, or into full_name_url. */
	const char *urls[SW_WEBHOOK_MAX_URLS];
	unsigned nurls;
	char full_name_url[sizeof("https://bitbucket.org/") + SW_WEBHOOK_FULL_NAME_MAX_LEN];
	struct sw_webhook_change changes[SW_WEBHOOK_MAX_CHANGES];
	unsigned nchanges;
};

/* Reads body (the parsed payload; it must outlive *ret) of a delivery to
 * provider with event header event into *ret. The hosted providers'
 * payloads are read leniently: a member that is missing or of another
 * shape is left out (no URL: nothing can verify; no change: nothing is
 * deployed). The generic payload is Steward's own and read strictly:
 *   {"repository": "<git URL>", "ref": "refs/heads/<branch>",
 *    "after": "<commit sha>" (optional: the branch's head at clone time)}
 * 0; -EINVAL for a generic payload that breaks a rule (or a body that is
 * not an object), with *ret_field (the member: the name of an unknown one
 * points into body; NULL for the body itself) and *ret_msg (a sentence
 * holding no client text). */
int sw_webhook_event_read(enum sw_webhook_provider provider, struct sw_str event, json_t *body,
			  struct sw_webhook_event *ret, const char **ret_field, const char **ret_msg);

/* What a verified delivery does for an application that deploys branch. */
enum sw_webhook_outcome {
	SW_WEBHOOK_DEPLOY,          /* a push to the branch: deploy its commit */
	SW_WEBHOOK_PING,            /* GitHub's ping */
	SW_WEBHOOK_NOT_A_PUSH,      /* another event */
	SW_WEBHOOK_TAG,             /* only tags were pushed */
	SW_WEBHOOK_OTHER_BRANCH,    /* no change to the branch */
	SW_WEBHOOK_BRANCH_DELETED,  /* the branch was deleted */
	SW_WEBHOOK_NO_COMMIT,       /* a push to the branch that names no commit */
};
/* Decides for ev and branch. On SW_WEBHOOK_DEPLOY, *ret_ref is what to
 * deploy: the commit pushed (exactly that one is built), or, for a generic
 * payload without "after", the branch name. */
enum sw_webhook_outcome sw_webhook_decide(const struct sw_webhook_event *ev, struct sw_str branch,
					  const char **ret_ref, size_t *ret_ref_len);
/* "DEPLOYED", "PING", "NOT_A_PUSH", "TAG", "OTHER_BRANCH",
 * "BRANCH_DELETED", "NO_COMMIT": as answered and stored. */
const char *sw_webhook_outcome_code(enum sw_webhook_outcome o);
/* The sentence of a code ("" for an unknown one). */
const char *sw_webhook_outcome_reason(const char *code);

#endif
