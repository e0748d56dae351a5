/* Request objects (recycled per loop, released after the completion that
 * answered them), request ids, and the accessors of http.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include "http/conn.h"

static uint32_t rid_prefix;
static pthread_once_t rid_once = PTHREAD_ONCE_INIT;

/* A random per-process prefix makes request ids unique across restarts
 * and replicas; the loop index and a counter make them unique within. */
static void rid_init(void)
{
	if (getrandom(&rid_prefix, sizeof(rid_prefix), 0) != sizeof(rid_prefix))
		rid_prefix = (uint32_t)sw_wall_ms();
}

size_t sw_http_request_id_new(struct sw_server *srv, char out[40])
{
	pthread_once(&rid_once, rid_init);
	int n = snprintf(out, 40, "%08x-%x-%llx", rid_prefix, sw_loop_index(srv->loop),
			 (unsigned long long)++srv->seq);
	return n > 0 ? (size_t)n : 0;
}

struct sw_http_request *sw_http_request_new(struct sw_conn *c)
{
	struct sw_server *srv = c->srv;
	struct sw_http_request *req = srv->free_reqs;
	if (req) {
		srv->free_reqs = req->next_free;
		srv->nfree--;
	} else {
		req = malloc(sizeof(*req));
		if (!req)
			return NULL;
		req->resp_headers = (struct sw_buf){ 0 };
	}
	struct sw_buf keep = req->resp_headers;
	memset(req, 0, offsetof(struct sw_http_request, arena_first));
	req->resp_headers = keep;
	req->resp_headers.len = 0;
	sw_arena_init(&req->arena, req->arena_first, sizeof(req->arena_first));
	req->conn = c;
	req->server = srv;
	req->loop = srv->loop;
	req->start_us = sw_now_us();
	req->keep_alive = true;
	req->method_str = SW_STR("-");
	req->path = SW_STR("-");
	return req;
}

void sw_http_request_free(struct sw_http_request *req)
{
	struct sw_server *srv = req->server;
	sw_arena_reset(&req->arena);
	if (srv->nfree < 256) {
		if (req->resp_headers.cap > 4096)
			sw_buf_release(&req->resp_headers);
		req->next_free = srv->free_reqs;
		srv->free_reqs = req;
		srv->nfree++;
	} else {
		sw_buf_release(&req->resp_headers);
		free(req);
	}
}

void sw_http_request_reap(struct sw_server *srv)
{
	while (srv->answered) {
		struct sw_http_request *req = srv->answered;
		srv->answered = req->next_free;
		sw_http_request_free(req);
	}
}

/* A handler's code may still run after it answered (a callback chain
 * unwinding, wiping a secret it held in the request's arena), so the
 * request is released after the current batch of completions, not inside
 * the answer: Valkey's freeClientAsync, for requests. */
static void reap_answered(struct sw_timer *t)
{
	sw_http_request_reap(SW_CONTAINER_OF(t, struct sw_server, reap_timer));
}

void sw_http_request_release_later(struct sw_http_request *req)
{
	struct sw_server *srv = req->server;
	req->next_free = srv->answered;
	srv->answered = req;
	if (!sw_timer_armed(&srv->reap_timer))
		sw_timer_start(srv->loop, &srv->reap_timer, 0, reap_answered);
}

static bool request_id_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == ':' || ch == '-';
}

void sw_http_request_set_id(struct sw_http_request *req)
{
	const struct sw_http_header *h = sw_http_request_header(req, SW_STR("X-Request-Id"));
	if (h && h->value.len >= 1 && h->value.len <= 64) {
		bool ok = true;
		for (size_t i = 0; i < h->value.len && ok; i++)
			ok = request_id_char(h->value.ptr[i]);
		if (ok) {
			memcpy(req->request_id, h->value.ptr, h->value.len);
			req->request_id_len = h->value.len;
			return;
		}
	}
	req->request_id_len = sw_http_request_id_new(req->server, req->request_id);
}

const struct sw_http_header *sw_http_request_header(const struct sw_http_request *req,
						    struct sw_str name)
{
	for (unsigned i = 0; i < req->header_count; i++)
		if (sw_str_case_eq(req->headers[i].name, name))
			return &req->headers[i];
	return NULL;
}

const struct sw_config *sw_http_config(const struct sw_http_request *req)
{
	return req->server->config;
}


const struct sw_router *sw_http_router(const struct sw_http_request *req)
{
	return req->server->shared->router;
}

int sw_http_add_header(struct sw_http_request *req, const char *name, struct sw_str value)
{
	for (size_t i = 0; i < value.len; i++)
		if (value.ptr[i] == '\r' || value.ptr[i] == '\n' || value.ptr[i] == '\0')
			return -EINVAL;
	if (strpbrk(name, "\r\n: "))
		return -EINVAL;
	int r = sw_buf_append_str(&req->resp_headers, sw_str_cstr(name));
	r = r ?: sw_buf_append_lit(&req->resp_headers, ": ");
	r = r ?: sw_buf_append_str(&req->resp_headers, value);
	r = r ?: sw_buf_append_lit(&req->resp_headers, "\r\n");
	return r;
}

/* Copies what the handler may read out of the connection's input buffer,
 * which later receives may move. */
int sw_http_request_capture_head(struct sw_http_request *req, const struct sw_http_head *h)
{
	struct sw_arena *a = &req->arena;
	char *m = sw_arena_strndup(a, h->method_str.ptr, h->method_str.len);
	char *p = sw_arena_strndup(a, h->path.ptr, h->path.len);
	char *q = sw_arena_strndup(a, h->query.ptr, h->query.len);
	req->headers = sw_arena_alloc(a, sizeof(*req->headers) * (h->header_count ? h->header_count : 1));
	if (!m || !p || !q || !req->headers)
		return -ENOMEM;
	req->method = h->method;
	req->method_str = sw_str_from(m, h->method_str.len);
	req->path = sw_str_from(p, h->path.len);
	req->query = sw_str_from(q, h->query.len);
	size_t total = 0;
	for (unsigned i = 0; i < h->header_count; i++)
		total += h->headers[i].name.len + h->headers[i].value.len;
	char *store = sw_arena_alloc(a, total ? total : 1);
	if (!store)
		return -ENOMEM;
	for (unsigned i = 0; i < h->header_count; i++) {
		const struct sw_http_header *src = &h->headers[i];
		memcpy(store, src->name.ptr, src->name.len);
		req->headers[i].name = sw_str_from(store, src->name.len);
		store += src->name.len;
		memcpy(store, src->value.ptr, src->value.len);
		req->headers[i].value = sw_str_from(store, src->value.len);
		store += src->value.len;
	}
	req->header_count = h->header_count;
	req->keep_alive = h->keep_alive;
	req->head_only = h->method == SW_HTTP_HEAD;
	req->version_minor = h->version_minor;
	return 0;
}

const char *sw_http_peer_address(const struct sw_http_request *req)
{
	return req->conn->peer;
}
