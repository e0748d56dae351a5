/* Every bound a client can push against, named once. Settings that an
 * operator may change (timeouts, connection cap) have their defaults here
 * and are read in config.c; the rest are fixed. Each has a test that
 * crosses it (the unit tests of the module that enforces it, and
 * tests/integration). */
#ifndef STEWARD_LIMITS_H
#define STEWARD_LIMITS_H

/* HTTP request head */
#define SW_HTTP_MAX_REQUEST_LINE (8 * 1024)    /* over it: 414 */
#define SW_HTTP_MAX_HEAD_BYTES (16 * 1024)     /* header section; over it: 431 */
#define SW_HTTP_MAX_HEADERS 100                /* header fields; over it: 431 */
#define SW_HTTP_MAX_CHUNK_LINE 1024            /* chunk-size line incl. extensions */
#define SW_HTTP_MAX_TRAILER_BYTES (8 * 1024)   /* trailer section */
#define SW_HTTP_MAX_TRAILERS 32                /* trailer fields */

/* Bodies: the default per-route limit; a route may set a smaller or larger one. */
#define SW_HTTP_DEFAULT_MAX_BODY (64 * 1024)
/* What a route that takes no body still reads: clients (fetch, axios, most
 * SDKs) send "{}" or a small object on every POST. Such a body is empty, or
 * an empty JSON object, or it is refused with 422 naming its members;
 * past this many bytes it is 413 unread. */
#define SW_HTTP_BODILESS_MAX_BODY 1024
/* Output queued on one connection before we stop reading from it. */
#define SW_HTTP_MAX_PENDING_OUTPUT (4 * 1024 * 1024)

/* Build logs and engine messages are scrubbed of the application's variable
 * values (src/deploy/build_log.c, src/driver/docker.c, the pipeline's
 * messages), but not of a value shorter than this many bytes: masking "1",
 * "on" or "dev" would hide every such character or word in the log and make
 * it unreadable, and so short a value is no secret. The variables API says
 * which values are masked ("masked" on each variable). */
#define SW_VARIABLE_SCRUB_MIN_LEN 4

/* JSON input */
#define SW_JSON_MAX_DEPTH 32

/* Timeouts (defaults of settings, milliseconds) */
#define SW_DEFAULT_HEADER_TIMEOUT_MS 10000     /* head not complete in time: close */
#define SW_DEFAULT_BODY_TIMEOUT_MS 10000       /* body stalls this long: close */
#define SW_DEFAULT_IDLE_TIMEOUT_MS 60000       /* idle keep-alive: close */
#define SW_DEFAULT_SHUTDOWN_TIMEOUT_MS 10000   /* in-flight work on SIGTERM */
#define SW_DEFAULT_DB_QUERY_TIMEOUT_MS 5000
/* A job's wait for a remote server's agent that is reconnecting
 * (STEWARD_AGENT_RECONNECT_WAIT_MS): a little above the agent's longest
 * reconnect backoff (60 s, sw_agent_backoff_ms; a control plane's goaway
 * asks for at most SW_AGENT_GOAWAY_MIN_MS + SW_AGENT_GOAWAY_SPREAD_MS,
 * 14 s) plus its dial and hello. */
#define SW_DEFAULT_AGENT_RECONNECT_WAIT_MS 65000
#define SW_DEFAULT_MAX_CONNECTIONS 20000       /* per process */

/* The global rate limit: requests per minute from one address, on every
 * route (a burst of that many, then one every 60/N seconds);
 * STEWARD_RATE_LIMIT_PER_MINUTE. Its floor keeps the webhook route's own
 * limit (60 a minute, src/api/limits.c) the tighter one. */
#define SW_DEFAULT_RATE_LIMIT_PER_MINUTE 1200
#define SW_RATE_LIMIT_PER_MINUTE_MIN 120
#define SW_RATE_LIMIT_PER_MINUTE_MAX 100000000

/* Database */
#define SW_DB_MAX_PENDING_QUERIES 4096         /* per loop; beyond: 503 */
#define SW_DB_PIPELINE_DEPTH 32                /* queries on the wire per connection */
#define SW_DB_HEALTH_MAX_AGE_MS 1000           /* /health may reuse state this old */
#define SW_DB_RECONNECT_MIN_MS 100
#define SW_DB_RECONNECT_MAX_MS 5000

/* Identity */
#define SW_PASSWORD_MIN_LEN 10
#define SW_PASSWORD_MAX_LEN 256
#define SW_EMAIL_MAX_LEN 254
#define SW_NAME_MAX_LEN 100

/* Worker pool */
#define SW_WORKER_MAX_QUEUE 1024

/* Rate limiter (src/auth/ratelimit.c) */
/* Entries in the table (about 200 bytes each, in .bss: pages are only
 * resident once used). */
#define SW_RATELIMIT_MAX_ENTRIES 16384
/* Keys longer than this are stored as their SHA-256 (still distinct). */
#define SW_RATELIMIT_MAX_KEY 128

/* Cookies (src/http/cookie.c) */
/* The longest value sw_set_cookie_header() writes: browsers keep cookies
 * of 4096 bytes (RFC 6265 section 6.1's minimum, name and attributes
 * included) and may drop longer ones silently. */
#define SW_COOKIE_MAX_VALUE 4000

/* Two-factor input (src/auth/totp.c) */
#define SW_RECOVERY_CODE_INPUT_MAX 64 /* bytes of typed input considered at all */

/* WebAuthn input (src/auth/webauthn.c) */
/* Bounds on what a client may send (bytes). */
#define SW_WEBAUTHN_MAX_CLIENT_DATA 4096        /* clientDataJSON */
#define SW_WEBAUTHN_MAX_ATTESTATION (32 * 1024) /* attestationObject */
#define SW_WEBAUTHN_MAX_AUTH_DATA 4096          /* authenticatorData */
#define SW_WEBAUTHN_MAX_SIGNATURE 1024          /* an assertion's signature */
#define SW_WEBAUTHN_MAX_CREDENTIAL_ID 1023      /* §6.5.1: at most 1023 bytes */
#define SW_WEBAUTHN_MAX_PUBLIC_KEY 1024         /* COSE_Key bytes */
#define SW_WEBAUTHN_MAX_CHALLENGE 64            /* the challenge we issued */
#define SW_WEBAUTHN_MAX_X5C 4                   /* certificates in an x5c chain */
#define SW_WEBAUTHN_MAX_CBOR_DEPTH 16           /* nesting of any CBOR item */

/* Query strings (src/http/query.c); SW_QUERY_PAGE_MAX is the largest ?limit=. */
/* Pieces ("name=value") in one query string; past it: a field error. */
#define SW_QUERY_MAX_PARAMS 16
/* Bytes of a parameter name; a longer unknown one is named cut to this. */
#define SW_QUERY_MAX_NAME_LEN 64
/* Bytes of a decoded value. */
#define SW_QUERY_MAX_VALUE_LEN 256
#define SW_QUERY_PAGE_MAX 200

/* Resources: formats (include/steward/base/validate.h) */
#define SW_RESOURCE_NAME_MAX_LEN 63            /* a DNS label */
#define SW_DESCRIPTION_MAX_LEN 500             /* free text shown in the dashboard */
#define SW_HOSTNAME_MAX_LEN 253
#define SW_GIT_BRANCH_MAX_LEN 200
/* A git credential's token (a host's personal access token or app
 * password), in bytes. */
#define SW_GIT_TOKEN_MIN_LEN 8
#define SW_GIT_TOKEN_MAX_LEN 1024
#define SW_PATH_MAX_LEN 255                    /* relative, container and host paths */
#define SW_HTTP_PATH_MAX_LEN 256               /* a health-check path */
#define SW_URL_MAX_LEN 2048
#define SW_ENV_KEY_MAX_LEN 128
#define SW_ENV_VALUE_MAX_LEN (32 * 1024)
#define SW_ENV_MAX_VARIABLES 500               /* per application */
#define SW_COMMAND_ARG_MAX_LEN 1024
#define SW_COMMAND_MAX_ARGS 64
#define SW_VOLUMES_MAX 20                      /* per application */
#define SW_DOMAINS_MAX 50                      /* per application */
#define SW_RESOURCE_BODY_MAX (256 * 1024)      /* a bulk variables body */

/* Deployments */
/* An uploaded archive (POST /deployments, the part "archive"); over it: 413. */
#define SW_DEPLOY_UPLOAD_MAX (100 * 1024 * 1024)
/* The route's body limit: the archive plus the multipart framing and the
 * form's other fields. */
#define SW_DEPLOY_UPLOAD_BODY_MAX (SW_DEPLOY_UPLOAD_MAX + 64 * 1024)

/* Streamed responses (src/http/stream.c) and live deployment logs */
/* Pieces queued on one streamed response beyond what its socket has taken;
 * past either bound the writer of the stream is not listening to its
 * backpressure (sw_http_stream_queued): the stream is closed. */
#define SW_HTTP_STREAM_MAX_QUEUED 1024
#define SW_HTTP_STREAM_MAX_QUEUED_BYTES (1024 * 1024)
/* SSE readers of one deployment's live log in one process; past it: 503. */
#define SW_SSE_MAX_READERS 2000
/* A comment line (": ping") on an idle SSE stream this often, so proxies
 * and clients see the stream is alive. */
#define SW_SSE_HEARTBEAT_MS 15000
/* A live reader this far (bytes of log) behind the writer loses its
 * stream (an SSE client resumes with Last-Event-ID); it bounds the chunks
 * the hub keeps for the slowest reader. */
#define SW_HUB_MAX_LAG_BYTES (4 * 1024 * 1024)
/* One line of a deployment's log: a longer one is split. */
#define SW_DEPLOY_LOG_MAX_LINE 4096
/* A live reader in a process that does not write the log polls the file
 * and the deployment's status this often. */
#define SW_DEPLOY_LOG_POLL_MS 1000

/* An application's container logs (GET /applications/:id/logs). */
#define SW_CONTAINER_LOGS_TAIL_DEFAULT 100   /* lines per container when tail is absent */
#define SW_CONTAINER_LOGS_TAIL_MAX 5000      /* ?tail= above it: 422 */
#define SW_CONTAINER_LOGS_CONTAINERS_MAX 4   /* running containers read at once (blue-green: 2) */
#define SW_CONTAINER_LOGS_ANSWER_MAX (4 * 1024 * 1024) /* bytes of lines in one answer */
#define SW_CONTAINER_LOGS_FOLLOWERS_MAX 256  /* following containers per process; past it 503 */

/* Inbound repository webhooks (POST /webhooks/:provider). */
#define SW_WEBHOOK_MAX_BODY (1024 * 1024)  /* bytes of a payload; over it: 413 */
#define SW_WEBHOOK_MAX_CANDIDATES 20       /* git sources tried for one payload */
#define SW_WEBHOOK_TOLERANCE_S 300         /* timestamp skew either way */
#define SW_WEBHOOK_DELIVERY_MAX_LEN 128    /* a delivery id: [A-Za-z0-9._:{}-] */

/* The agents' channel (src/agent): WebSocket and the typed protocol. */
/* Bytes of one WebSocket message, all fragments joined; over it: close 1009. */
#define SW_AGENT_MAX_MESSAGE (1024 * 1024)
/* Bytes queued for one peer beyond what its socket has taken; a data
 * message past it waits (or the peer is dropped as too slow). */
#define SW_AGENT_MAX_QUEUED_OUTPUT (4 * 1024 * 1024)
/* Container logs an agent follows at once (container.logs with follow,
 * each on a thread of its own beside the one-at-a-time commands); past it
 * the command is refused BUSY. A follow lasts at most
 * SW_AGENT_FOLLOW_MAX_MS (its command's expiry), then the reader gets the
 * stream's end and reconnects with since. */
#define SW_AGENT_FOLLOWS_MAX 4
#define SW_AGENT_FOLLOW_MAX_MS (6u * 3600 * 1000)
/* A command's payload, serialised, in bytes; a command id's characters. */
#define SW_AGENT_MAX_PAYLOAD (256 * 1024)
#define SW_AGENT_MAX_ID_LEN 64
/* One progress chunk's text, in bytes. */
#define SW_AGENT_MAX_CHUNK (64 * 1024)
/* Capabilities named in a hello, and the bytes of each host fact. */
#define SW_AGENT_MAX_CAPABILITIES 64
#define SW_AGENT_MAX_FACT_LEN 256
/* The agent's journal: commands remembered, and its file's size before it
 * is rewritten with only the newest of them. */
#define SW_AGENT_JOURNAL_MAX_ENTRIES 1024
#define SW_AGENT_JOURNAL_MAX_BYTES (4 * 1024 * 1024)
/* A recorded result, serialised, in bytes. */
#define SW_AGENT_MAX_RESULT (64 * 1024)

#endif
