/* Every bound a client can push against, named once. Settings that an
 * operator may change (timeouts, connection cap) have their defaults here
 * and are read in config.c; the rest are fixed. Each has a test that
 * crosses it (tests/unit/test_limits.c and tests/integration). */
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
/* Output queued on one connection before we stop reading from it. */
#define SW_HTTP_MAX_PENDING_OUTPUT (4 * 1024 * 1024)

/* JSON input */
#define SW_JSON_MAX_DEPTH 32

/* Timeouts (defaults of settings, milliseconds) */
#define SW_DEFAULT_HEADER_TIMEOUT_MS 10000     /* head not complete in time: close */
#define SW_DEFAULT_BODY_TIMEOUT_MS 10000       /* body stalls this long: close */
#define SW_DEFAULT_IDLE_TIMEOUT_MS 60000       /* idle keep-alive: close */
#define SW_DEFAULT_SHUTDOWN_TIMEOUT_MS 10000   /* in-flight work on SIGTERM */
#define SW_DEFAULT_DB_QUERY_TIMEOUT_MS 5000
#define SW_DEFAULT_MAX_CONNECTIONS 20000       /* per process */

/* Database */
#define SW_DB_MAX_PENDING_QUERIES 4096         /* per loop; beyond: 503 */
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

#endif
