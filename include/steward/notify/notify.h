/* Outbound notifications: webhook, Slack and Discord deliveries over HTTP.
 *
 * A delivery is one JSON body POSTed to a channel's URL, signed, tried on
 * this module's own threads (never on an io loop, never on the shared
 * worker pool: a receiver may take its full timeout), and retried with
 * exponential backoff. Nothing here touches the database: the caller
 * (src/api/channels.c, the alert evaluator of a later issue) reads the
 * channel, opens its signing secret and hands everything over.
 *
 * Signature (also in the OpenAPI description of /notification-channels):
 *   Steward-Timestamp: <unix seconds of this attempt>
 *   Steward-Signature: v1=<hex HMAC-SHA256(key, "<timestamp>.<body>")>
 * where key is the channel's signingSecret exactly as POST
 * /notification-channels returned it (its 43 ASCII characters, not their
 * base64url decoding) and body the raw request body bytes. Each attempt is
 * signed anew with its own timestamp, so a receiver may refuse timestamps
 * older than a few minutes (replays). Steward-Delivery carries the
 * delivery id, the same on every attempt (for deduplication), and
 * Steward-Event the event type.
 *
 * SSRF: a target whose address is loopback, link-local, private, shared
 * (100.64/10), unspecified, multicast, broadcast, reserved or
 * documentation-only, or IPv6 outside global unicast (2000::/3), in IPv4,
 * IPv6 or an IPv6 form that embeds IPv4 (mapped, compatible, NAT64,
 * 6to4), is refused unless the channel allows private targets (an
 * operator's decision). The API refuses such literal addresses when a
 * channel is saved; each attempt here resolves the host again, refuses if
 * ANY address it resolves to is not public, and pins the address it
 * connects to (CURLOPT_RESOLVE), so a DNS answer that changes between the
 * check and the connection (rebinding) cannot move it. Redirects are not
 * followed, proxies from the environment are not used, and only http and
 * https are spoken.
 *
 * Retries: an attempt at once, then up to SW_NOTIFY_MAX_RETRIES more after
 * base, 4 x base, 16 x base, ... (base: NOTIFY_RETRY_BASE_MS, default
 * SW_NOTIFY_RETRY_BASE_MS: 1 s, 4 s, 16 s, 64 s, 256 s). Retried: a
 * connection or DNS failure, a timeout, 408, 429 and 5xx. Final: a 2xx
 * (delivered), any other status (refused by the receiver; redirects
 * included), a refused address. Outcomes are logged ("notify delivered",
 * "notify retry", "notify failed", "notify refused") with the channel and
 * delivery ids, never the URL (Slack and Discord URLs are credentials),
 * the body or the secret. Deliveries still waiting when the process exits
 * are lost. */
#ifndef STEWARD_NOTIFY_H
#define STEWARD_NOTIFY_H

#include <sys/socket.h>
#include "steward/base/base.h"
#include "steward/base/buf.h"

/* Retries after the first attempt, and their base delay (milliseconds;
 * each next delay is 4 times the last). */
#define SW_NOTIFY_MAX_RETRIES 5
#define SW_NOTIFY_RETRY_BASE_MS 1000
#define SW_NOTIFY_RETRY_FACTOR 4
/* NOTIFY_RETRY_BASE_MS is accepted in 1..SW_NOTIFY_RETRY_BASE_MAX_MS. */
#define SW_NOTIFY_RETRY_BASE_MAX_MS 60000
/* Connect timeout and whole-attempt timeout, seconds. */
#define SW_NOTIFY_CONNECT_TIMEOUT_S 5
#define SW_NOTIFY_TIMEOUT_S 10
/* Bytes of a receiver's answer read at most (the rest is not waited for). */
#define SW_NOTIFY_MAX_RESPONSE (16 * 1024)
/* Bytes of a delivery's body. */
#define SW_NOTIFY_MAX_BODY (64 * 1024)
/* Deliveries waiting (first attempt or retry); sw_notify_post() refuses more. */
#define SW_NOTIFY_MAX_QUEUE 256
/* Threads that deliver. */
#define SW_NOTIFY_THREADS 2
/* "v1=" and 64 hex digits. */
#define SW_NOTIFY_SIGNATURE_LEN (3 + 64)

enum sw_notify_kind {
	SW_NOTIFY_WEBHOOK, /* Steward's own event JSON */
	SW_NOTIFY_SLACK,   /* {"text": ...} for an incoming webhook */
	SW_NOTIFY_DISCORD, /* {"content": ...} for a Discord webhook */
};

/* ---- bodies and signatures ---- */

/* Writes the signature header value "v1=<64 hex>" and a NUL into out:
 * HMAC-SHA256 under key over "<timestamp>.<body>". 0 or -EIO. */
int sw_notify_sign(struct sw_str key, int64_t timestamp, struct sw_str body,
		   char out[SW_NOTIFY_SIGNATURE_LEN + 1]);

/* What happened, for a channel of any kind. Strings are UTF-8 as the
 * caller built them (escaped here); data_json is a JSON object written by
 * Steward (never a client's text) or NULL. */
struct sw_notify_event {
	const char *delivery_id; /* a UUID (sw_notify_uuid()) */
	const char *type;        /* "channel.test", "alert.opened", ... */
	uint64_t wall_ms;        /* when it happened */
	const char *title;       /* one line */
	const char *text;        /* a sentence or two */
	const char *data_json;
};
/* Appends the body for a channel of kind: WEBHOOK {"id", "type",
 * "createdAt", "title", "text", "data"}; SLACK {"text": "*title*\ntext"};
 * DISCORD {"content": "**title**\ntext"} (cut to Discord's 2000
 * characters). 0, -EINVAL (a NULL member, or data_json not an object:
 * nothing appended), -ENOMEM (out may hold part of a body). */
int sw_notify_payload(struct sw_buf *out, enum sw_notify_kind kind, const struct sw_notify_event *ev);

/* A random (version 4) UUID and a NUL: delivery ids, and ids chosen
 * before their row exists (a sealed secret's associated data names the
 * row). 0 or -EIO (the CSPRNG failed). */
int sw_notify_uuid(char out[37]);

/* ---- delivery ---- */

struct sw_notify_request {
	const char *channel_id;  /* for the logs */
	const char *delivery_id; /* Steward-Delivery */
	const char *event_type;  /* Steward-Event */
	const char *url;         /* http(s), as sw_valid_url() accepts */
	bool allow_private;      /* the channel allows private targets */
	struct sw_str secret;    /* the signing key; empty: unsigned */
	struct sw_str body;      /* JSON, at most SW_NOTIFY_MAX_BODY bytes */
};
/* Queues a delivery; everything is copied (the secret's copy is wiped when
 * the delivery ends). Any thread; never blocks on the network (libcurl is
 * loaded by the delivery threads, and a failure to load it is logged as
 * the delivery's failure). 0; -EINVAL (a NULL member, a URL that
 * sw_valid_url() refuses, a body too large); -EBUSY (SW_NOTIFY_MAX_QUEUE
 * deliveries wait or are being tried); -ENOMEM; -EAGAIN (no delivery
 * thread can be started). */
int sw_notify_post(const struct sw_notify_request *r);

/* The base delay of retries in force (NOTIFY_RETRY_BASE_MS, read once). */
unsigned sw_notify_retry_base_ms(void);

#endif
