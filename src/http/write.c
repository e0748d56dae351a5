/* Response heads and in-memory bodies: the status line and the headers
 * every response carries (date, request id, caching, CORS, connection),
 * and the buffer producer (sw_http_respond*), whose body goes into the
 * output generation with its head, so the request is done at once. */
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include "http/conn.h"

const char *sw_http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 416: return "Range Not Satisfiable";
	case 417: return "Expectation Failed";
	case 422: return "Unprocessable Content";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	}
	return "Unknown";
}

void sw_server_refresh_date(struct sw_server *srv)
{
	time_t now = time(NULL);
	if (now == srv->date_sec)
		return;
	srv->date_sec = now;
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(srv->date, sizeof(srv->date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* CORS: the request's Origin, when it is one of CORS_ALLOWED_ORIGINS. */
struct sw_str sw_http_allowed_origin(const struct sw_http_request *req)
{
	const struct sw_server_shared *sh = req->server->shared;
	if (sh->cors_count == 0)
		return SW_STR_NULL;
	const struct sw_http_header *o = sw_http_request_header(req, SW_STR("Origin"));
	if (!o)
		return SW_STR_NULL;
	for (unsigned i = 0; i < sh->cors_count; i++)
		if (sw_str_eq(o->value, sh->cors[i]))
			return o->value;
	return SW_STR_NULL;
}

/* Whether the connection closes after this response. */
bool sw_http_response_closes(const struct sw_http_request *req, int status)
{
	return !req->keep_alive || req->server->stopping || req->conn->close_after_write ||
	       status == 400 || status == 408 || status == 413 || status == 414 || status == 431;
}

/* Writes the status line and the headers of req's response. A response
 * framed by length that closes the connection sets close_after_write; a
 * stream says Connection: close and closes at its end instead. */
void sw_http_write_head(struct sw_http_request *req, int status, const char *content_type,
			enum body_framing framing, uint64_t length)
{
	struct sw_conn *c = req->conn;
	struct sw_server *srv = req->server;
	bool close = framing == FRAME_CLOSE || sw_http_response_closes(req, status);
	sw_server_refresh_date(srv);
	char line[256];
	int n;
	if (framing != FRAME_LENGTH)
		n = snprintf(line, sizeof(line), "HTTP/1.1 %d %s\r\nDate: %s\r\n%s", status,
			     sw_http_reason(status), srv->date,
			     framing == FRAME_CHUNKED ? "Transfer-Encoding: chunked\r\n" : "");
	else if (status == 204) /* RFC 9110 15.3.5: no Content-Length, no body */
		n = snprintf(line, sizeof(line), "HTTP/1.1 204 No Content\r\nDate: %s\r\n", srv->date);
	else
		n = snprintf(line, sizeof(line), "HTTP/1.1 %d %s\r\nDate: %s\r\nContent-Length: %llu\r\n",
			     status, sw_http_reason(status), srv->date, (unsigned long long)length);
	sw_conn_out_bytes(c, line, (size_t)n);
	if (content_type && (framing != FRAME_LENGTH || length || req->head_only)) {
		sw_conn_out_bytes(c, "Content-Type: ", 14);
		sw_conn_out_bytes(c, content_type, strlen(content_type));
		sw_conn_out_bytes(c, "\r\n", 2);
	}
	sw_conn_out_bytes(c, "X-Request-Id: ", 14);
	sw_conn_out_bytes(c, req->request_id, req->request_id_len);
	const char *cache = req->cache_control ? req->cache_control : "no-store";
	sw_conn_out_bytes(c, "\r\nCache-Control: ", 17);
	sw_conn_out_bytes(c, cache, strlen(cache));
	sw_conn_out_bytes(c, "\r\nX-Content-Type-Options: nosniff\r\n", 35);
	struct sw_str origin = sw_http_allowed_origin(req);
	if (srv->shared->cors_count)
		sw_conn_out_bytes(c, "Vary: Origin\r\n", 14);
	if (origin.len) {
		sw_conn_out_bytes(c, "Access-Control-Allow-Origin: ", 29);
		sw_conn_out_bytes(c, origin.ptr, origin.len);
		sw_conn_out_bytes(c, "\r\nAccess-Control-Allow-Credentials: true\r\n"
				  "Access-Control-Expose-Headers: X-Request-Id\r\n", 88);
	}
	if (req->resp_headers.len)
		sw_conn_out_bytes(c, req->resp_headers.data, req->resp_headers.len);
	if (close) {
		sw_conn_out_bytes(c, "Connection: close\r\n\r\n", 21);
		if (framing == FRAME_LENGTH)
			c->close_after_write = true;
	} else if (req->keep_alive && req->version_minor == 0) {
		sw_conn_out_bytes(c, "Connection: keep-alive\r\n\r\n", 26);
	} else {
		sw_conn_out_bytes(c, "\r\n", 2);
	}
}

bool sw_http_begin_answer(struct sw_http_request *req, int status)
{
	if (SW_NEVER(req->status != 0))
		return false;
	req->status = status;
	if (!req->request_id_len)
		sw_http_request_set_id(req);
	if (req->conn->closing) {
		/* The client went away while the handler ran: nothing to send. */
		sw_conn_request_done(req, 0);
		return false;
	}
	return true;
}

void sw_http_respond_body(struct sw_http_request *req, int status, const char *content_type,
			  struct sw_str body, bool by_reference)
{
	struct sw_conn *c = req->conn;
	if (!sw_http_begin_answer(req, status))
		return;
	sw_http_write_head(req, status, content_type, FRAME_LENGTH, status == 204 ? 0 : body.len);
	size_t sent_body = 0;
	if (!req->head_only && body.len) {
		if (by_reference)
			sw_conn_out_static(c, body.ptr, body.len);
		else
			sw_conn_out_bytes(c, body.ptr, body.len);
		sent_body = body.len;
	}
	sw_conn_request_done(req, sent_body);
}

void sw_http_respond(struct sw_http_request *req, int status, const char *content_type,
		     struct sw_str body)
{
	sw_http_respond_body(req, status, content_type, body, false);
}

void sw_http_respond_static(struct sw_http_request *req, int status, const char *content_type,
			    struct sw_str body)
{
	sw_http_respond_body(req, status, content_type, body, true);
}
