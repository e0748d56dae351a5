/* HTTP server: connections, requests, responses, the route table.
 *
 * A request is handled by its route's handler on the loop thread. A
 * handler either responds before returning, or keeps the request and
 * responds later from a database callback or a worker's done() (the
 * connection holds further pipelined requests until then). Exactly one
 * sw_http_respond*() per request. After it, the request and its arena stay
 * readable and writable until the current completion has been handled (so
 * code unwinding may wipe a secret it kept there), then they are gone: never
 * keep a pointer to them across an asynchronous call. */
#ifndef STEWARD_HTTP_H
#define STEWARD_HTTP_H

#include "steward/base/ref.h"
#include "steward/base/base.h"
#include "steward/base/buf.h"
#include "steward/base/config.h"
#include "steward/http/http_parser.h"
#include "steward/base/json.h"

struct sw_loop;
struct sw_conn;
struct sw_server;
struct sw_http_request;

typedef void (*sw_http_handler)(struct sw_http_request *req);

/* Who may call a route (spec, "Endpoints"). The guard authenticates every
 * route that is not PUBLIC and checks the role for the others. */
enum sw_access {
	SW_ACCESS_PUBLIC,
	SW_ACCESS_SESSION,     /* any authenticated principal */
	SW_ACCESS_OWNER,       /* OWNER of the organization */
	SW_ACCESS_OWNER_ADMIN, /* OWNER or ADMIN */
	SW_ACCESS_OPERATOR,    /* the user's operator flag */
};
const char *sw_access_name(enum sw_access a);

enum sw_role { SW_ROLE_NONE, SW_ROLE_MEMBER, SW_ROLE_ADMIN, SW_ROLE_OWNER };

enum sw_credential { SW_CRED_NONE, SW_CRED_SESSION, SW_CRED_TOKEN };

/* The caller's account, as text: what GET /auth/session answers with. */
struct sw_principal_account {
	const char *user_id;
	const char *user_email;
	const char *user_name;
	const char *user_is_operator; /* "t" or "f" */
	const char *user_created_at;  /* RFC 3339 UTC with milliseconds */
	const char *organization_id;
	const char *organization_name;
	const char *organization_created_at;
	const char *role;             /* "OWNER" */
};

/* The authenticated-session shape a cookie or an API token resolves to. */
struct sw_principal {
	bool authenticated;
	enum sw_credential credential;
	char credential_id[37]; /* the session's or the token's id */
	char user_id[37];
	char organization_id[37];
	enum sw_role role;
	bool is_operator;
	/* The caller's account as the guard read it with the credential, in
	 * the request's arena; account.user_id is NULL when not available. */
	struct sw_principal_account account;
};

/* Route flags */
#define SW_ROUTE_SIGNUP (1u << 0)   /* present only when SIGNUP_ENABLED */
#define SW_ROUTE_DEV_ONLY (1u << 1) /* present only outside production */
#define SW_ROUTE_DASHBOARD (1u << 2) /* the dashboard's files, not the API: not in the OpenAPI document */

/* Documentation of a route for the OpenAPI document. Schemas are names of
 * components defined in src/api/docs.c. */
struct sw_route_doc {
	const char *summary;
	const char *description;
	const char *tag;
	const char *request_schema;  /* NULL: no body */
	const char *response_schema; /* schema of "data" in the success envelope */
	int success_status;          /* 200, 201, 204 */
	const int *error_statuses;   /* 0-terminated: statuses this route may answer with */
	/* Query parameters, space-separated ("limit cursor order projectId"),
	 * or NULL. A list with "cursor" is documented as a page: its answer
	 * has the member "pagination": {"nextCursor"}. */
	const char *query;
	/* A second success status with the same schema (a PUT that answers
	 * 201 when it creates and 200 when it replaces), or 0. */
	int also_status;
	/* A success body that is not the JSON envelope: its media type
	 * ("text/plain; charset=utf-8", "text/event-stream"), documented as a
	 * string; response_schema is then NULL. */
	const char *media_type;
	/* The request body's media type when it is not application/json
	 * ("multipart/form-data"), or NULL. */
	const char *request_media;
};

struct sw_route {
	enum sw_http_method method;
	const char *pattern; /* "/projects/:id/environments" */
	enum sw_access access;
	sw_http_handler handler;
	/* 0: the route takes no body. It still reads up to
	 * SW_HTTP_BODILESS_MAX_BODY bytes: white space or an empty JSON object
	 * is taken as no body, anything else is refused before the handler
	 * runs (422 naming the members, 400 INVALID_JSON), longer is 413. */
	size_t max_body;
	unsigned flags;
	struct sw_route_doc doc;
};

#define SW_ROUTE_MAX_PARAMS 4
#define SW_ROUTE_MAX_SEGMENTS 8

struct sw_route_params {
	unsigned count;
	struct sw_str name[SW_ROUTE_MAX_PARAMS];
	struct sw_str value[SW_ROUTE_MAX_PARAMS];
};

struct sw_router;
/* Builds a router from the routes whose flags fit the configuration. The
 * routes array must outlive the router. NULL with errno on failure
 * (EINVAL: a bad or duplicate pattern). */
struct sw_router *sw_router_new(const struct sw_route *routes, size_t n,
				const struct sw_config *config);
void sw_router_free(struct sw_router *r);
size_t sw_router_count(const struct sw_router *r);
const struct sw_route *sw_router_route(const struct sw_router *r, size_t i);

enum sw_route_match { SW_ROUTE_FOUND, SW_ROUTE_NOT_FOUND, SW_ROUTE_METHOD_NOT_ALLOWED };
/* Matches method and path. HEAD matches GET routes. On FOUND sets *ret_route
 * and the params (views into path); on METHOD_NOT_ALLOWED *ret_allowed is a
 * bit mask of (1 << method) that the path does accept (HEAD and OPTIONS
 * included). */
enum sw_route_match sw_router_match(const struct sw_router *r, enum sw_http_method method,
				    struct sw_str path, const struct sw_route **ret_route,
				    struct sw_route_params *ret_params, unsigned *ret_allowed);
/* Allowed-method mask of a path regardless of method; 0 if no route. */
unsigned sw_router_allowed(const struct sw_router *r, struct sw_str path);
/* Writes "GET, HEAD, OPTIONS" for a mask. */
int sw_http_append_allow(struct sw_buf *b, unsigned mask);

struct sw_http_request {
	struct sw_conn *conn;
	struct sw_server *server;
	struct sw_loop *loop;
	struct sw_arena arena;
	enum sw_http_method method;
	struct sw_str method_str;
	struct sw_str path;
	struct sw_str query;
	struct sw_http_header *headers;
	unsigned header_count;
	struct sw_str body;
	const struct sw_route *route;
	struct sw_route_params params;
	struct sw_principal principal;
	char request_id[68];
	size_t request_id_len;
	uint64_t start_us;
	int version_minor; /* HTTP/1.x */
	bool head_only;  /* HEAD: headers as for GET, no body */
	bool keep_alive;
	struct sw_buf resp_headers; /* extra "Name: value\r\n" lines */
	/* The response's Cache-Control value, a literal; NULL: "no-store"
	 * (every API answer). The dashboard's files set their own. */
	const char *cache_control;
	int status;
	void *state;     /* the handler's own */
	struct sw_http_request *next_free;
	char arena_first[1024];
};

const struct sw_http_header *sw_http_request_header(const struct sw_http_request *req,
						    struct sw_str name);
/* The configuration of the request's server. (The database pool of its
 * thread is not http's: sw_db_pool_of(req->loop).) */
const struct sw_config *sw_http_config(const struct sw_http_request *req);
const struct sw_router *sw_http_router(const struct sw_http_request *req);

/* Runs the request's route handler: the guard's way to admit a request. */
void sw_http_run_handler(struct sw_http_request *req);

/* The peer's address as text ("127.0.0.1", "::1"), for audit records and
 * per-address rate limits. */
const char *sw_http_peer_address(const struct sw_http_request *req);

/* Adds a response header. Refuses (-EINVAL) names or values with CR, LF or NUL. */
int sw_http_add_header(struct sw_http_request *req, const char *name, struct sw_str value);

/* Sends a response with body (copied), or a body that lives at least until
 * the server stops (sw_http_respond_static: sent by reference with writev). */
void sw_http_respond(struct sw_http_request *req, int status, const char *content_type,
		     struct sw_str body);
void sw_http_respond_static(struct sw_http_request *req, int status, const char *content_type,
			    struct sw_str body);

/* Bytes sent by reference (struct sw_ref, steward/base/ref.h) are never
 * copied into the connection's buffers: release(ref) runs once for each
 * write the bytes were given to, on the loop's thread, after the kernel has
 * taken them or once they are dropped (the connection closed). */

/* Answers status with len bytes of the open file fd from offset off
 * (Content-Length: len), without copying them through user space:
 * splice(2) file -> pipe -> socket on the ring, or sendfile(2) on the
 * worker pool where the ring cannot splice. Takes fd (closed when done or
 * on failure). HEAD: the head alone. A file that ends before off + len
 * closes the connection after what it had (the client sees a short body).
 * Headers added with sw_http_add_header() are sent. */
void sw_http_respond_file(struct sw_http_request *req, int status, const char *content_type,
			  int fd, uint64_t off, uint64_t len);

/* ---- streamed responses (SSE) ----
 * A response whose body is written as it comes: HTTP/1.1 chunked (the
 * connection can serve further requests after it), or delimited by
 * closing the connection for HTTP/1.0. Every piece is sent by reference
 * (a struct sw_ref) or copied once into a piece of its own; pieces
 * are written in order with writev. All calls on the loop's thread. */
struct sw_http_stream;
struct sw_http_stream_ops {
	/* The stream is over without the owner ending it: the client went
	 * away, a write failed, the server is stopping (-ESHUTDOWN; the
	 * response is ended cleanly), the reader fell too far behind
	 * (-ENOBUFS, SW_HTTP_STREAM_MAX_QUEUED*) or stopped reading
	 * (-ETIMEDOUT). Runs once, never inside a stream function; the stream
	 * is freed when it returns. Never runs after sw_http_stream_end(). */
	void (*closed)(void *arg, int reason);
	/* Optional: everything written so far has been handed to a write
	 * (nothing waits in the stream's queue): a producer reading a file
	 * writes its next block. */
	void (*writable)(void *arg);
	/* Written when nothing else was for this long (0: never), e.g. an SSE
	 * comment ": ping\n\n" (a literal: it is sent by reference). */
	unsigned heartbeat_ms;
	const char *heartbeat;
};
/* Sends the head of a streamed response (status, content_type, the common
 * headers and those added with sw_http_add_header()). The request stays
 * open (later pipelined requests wait) until sw_http_stream_end() or
 * ops->closed. NULL when there is no stream to write: HEAD (the head was
 * sent and the request is over), the client already gone, or out of
 * memory (answered 500); ops->closed never runs then. */
struct sw_http_stream *sw_http_stream_begin(struct sw_http_request *req, int status,
					    const char *content_type,
					    const struct sw_http_stream_ops *ops, void *arg);
/* Queues n bytes at p: by reference when ref is given (ref->release runs
 * once they are written or dropped, also when this call fails), else
 * copied. 0; -EPIPE once the stream has failed (closed runs or ran);
 * -ENOBUFS when the reader is too far behind (the stream fails, closed
 * runs later); -ENOMEM. */
int sw_http_stream_write(struct sw_http_stream *s, const void *p, size_t n, struct sw_ref *ref);
/* Bytes queued on s that no write has taken yet. */
size_t sw_http_stream_queued(const struct sw_http_stream *s);
/* Ends the body once what is queued is written (the last chunk), then the
 * connection serves its next request (or closes, for HTTP/1.0, Connection:
 * close, or a server stopping). s is gone when it returns; closed never
 * runs after it, even for a stream that had failed. */
void sw_http_stream_end(struct sw_http_stream *s);
/* Drops what is queued and closes the connection at once, without the
 * last chunk (a reader too far behind: the client sees the stream cut and
 * resumes). s is gone when it returns; closed never runs after it. */
void sw_http_stream_abort(struct sw_http_stream *s);

/* Envelope helpers: sw_http_json_begin() writes `{"data":` into buf and
 * returns a writer for the value; sw_http_json_end() closes and sends it
 * (a writer error becomes a 500). */
void sw_http_json_begin(struct sw_http_request *req, struct sw_buf *buf, struct sw_json *j);
void sw_http_json_end(struct sw_http_request *req, int status, struct sw_buf *buf,
		      struct sw_json *j);

/* The error envelope. code is SNAKE_UPPER; message a sentence. */
void sw_http_error(struct sw_http_request *req, int status, const char *code, const char *message);

/* Validation failures: collect field errors, then answer 422. */
struct sw_field_errors {
	struct sw_buf buf;   /* pre-rendered "field":["msg",...] members */
	unsigned count;
	const char *last_field;
};
void sw_field_error(struct sw_field_errors *fe, const char *field, const char *message);
void sw_http_validation_error(struct sw_http_request *req, struct sw_field_errors *fe);

/* Parses the body as a JSON object (415 on a wrong Content-Type, 400 on
 * bad JSON, 422 on the member of a number out of range: JSON but for an
 * integer past 64 bits or a real past a double; responding itself); NULL
 * means the request has been answered. */
json_t *sw_http_json_body(struct sw_http_request *req);

/* ---- server ---- */

/* Process-wide state shared by every loop's server (read-only after
 * start-up, but for the connection counter). */
struct sw_server_shared {
	const struct sw_config *config;
	const struct sw_router *router;
	struct sw_str cors[16];   /* CORS_ALLOWED_ORIGINS, split */
	unsigned cors_count;
	unsigned connections;     /* atomic: open connections in the process */
	/* The global guard (src/auth): authenticates req for its route's access
	 * level. It either runs the handler (sw_http_run_handler), now or after
	 * a database lookup, or answers the request itself (401/403). */
	void (*guard)(struct sw_http_request *req);
	/* Runs first for every complete request, routed or not (OPTIONS, 404
	 * and 405 included): the global rate limit (src/auth). false when it
	 * has answered the request itself. NULL: every request passes. */
	bool (*admit)(struct sw_http_request *req);
};

/* One server per loop thread. Its owner (the thread's composition root,
 * src/main/thread.c) owns the loop and what handlers need beside the
 * server (the database pool), and decides when the server accepts.
 * All calls on the loop's thread. */

/* A server on loop with its own listener (SO_REUSEPORT), bound and
 * listening but not accepting yet: the kernel holds connections in the
 * backlog until sw_server_accept(). NULL with errno on failure (the
 * listener's bind error). */
struct sw_server *sw_server_new(struct sw_loop *loop, struct sw_server_shared *shared);
/* Starts accepting connections (again a no-op, or once stopping). */
void sw_server_accept(struct sw_server *srv);
/* Graceful shutdown: stops accepting, closes idle connections, ends
 * streams cleanly, lets requests in flight finish until the shutdown
 * deadline, then closes what is left. drained(arg) runs once, on the
 * loop, when no connection is left. Later calls do nothing. */
void sw_server_shutdown(struct sw_server *srv, void (*drained)(void *arg), void *arg);
/* Frees the server once its loop has stopped; NULL is fine. */
void sw_server_free(struct sw_server *srv);
/* Opens a listening socket for the configured address (used by every
 * thread; SO_REUSEPORT lets each thread bind its own). */
int sw_server_listen(const struct sw_config *config, int *ret_fd);

#endif
