/* The JSON envelopes every route answers with: {"data": ...}, the error
 * envelope {"error": {code, message, requestId, fields?}}, the field
 * errors of a 422, and the JSON body of a request. Above write.c: an
 * envelope is an in-memory body. */
#include <errno.h>
#include <string.h>
#include "steward/base/log.h"
#include "http/conn.h"

void sw_http_json_begin(struct sw_http_request *req, struct sw_buf *buf, struct sw_json *j)
{
	(void)req;
	buf->len = 0;
	sw_json_init(j, buf);
	sw_json_object_begin(j);
	sw_json_key(j, "data");
}

void sw_http_json_end(struct sw_http_request *req, int status, struct sw_buf *buf,
		      struct sw_json *j)
{
	sw_json_object_end(j);
	if (sw_json_finish(j) < 0) {
		sw_log_error("response JSON could not be built for %.*s", (int)req->path.len, req->path.ptr);
		sw_buf_release(buf);
		sw_http_error(req, 500, "INTERNAL_ERROR", "The server could not build the response.");
		return;
	}
	sw_http_respond(req, status, "application/json", sw_str_from(buf->data, buf->len));
	sw_buf_release(buf);
}

int sw_http_error_json(struct sw_buf *b, const char *code, const char *message,
		       struct sw_str request_id, const struct sw_field_errors *fe)
{
	struct sw_json j;
	sw_json_init(&j, b);
	sw_json_object_begin(&j);
	sw_json_key(&j, "error");
	sw_json_object_begin(&j);
	sw_json_key(&j, "code");
	sw_json_cstr(&j, code);
	sw_json_key(&j, "message");
	sw_json_cstr(&j, message);
	sw_json_key(&j, "requestId");
	sw_json_string(&j, request_id);
	if (fe) {
		sw_json_key(&j, "fields");
		/* fe->buf holds members rendered by sw_field_error() with
		 * sw_json_append_escaped(); close the last array and object. */
		struct sw_buf inner = { 0 };
		int r = sw_buf_append_lit(&inner, "{");
		r = r ?: sw_buf_append(&inner, fe->buf.data, fe->buf.len);
		r = r ?: (fe->count ? sw_buf_append_lit(&inner, "]}") : sw_buf_append_lit(&inner, "}"));
		if (r < 0)
			j.err = r;
		sw_json_raw(&j, sw_str_from(inner.data, inner.len));
		sw_buf_release(&inner);
	}
	sw_json_object_end(&j);
	sw_json_object_end(&j);
	return sw_json_finish(&j);
}

static void error_envelope(struct sw_http_request *req, int status, const char *code,
			   const char *message, const struct sw_field_errors *fe)
{
	if (!req->request_id_len)
		sw_http_request_set_id(req);
	struct sw_buf b = { 0 };
	if (sw_http_error_json(&b, code, message, sw_str_from(req->request_id, req->request_id_len),
			       fe) < 0) {
		sw_buf_release(&b);
		static const char oom[] = "{\"error\":{\"code\":\"INTERNAL_ERROR\",\"message\":\"Out of memory.\"}}";
		sw_http_respond_body(req, 500, "application/json", SW_STR(oom), true);
		return;
	}
	sw_http_respond_body(req, status, "application/json", sw_str_from(b.data, b.len), false);
	sw_buf_release(&b);
}

void sw_http_error(struct sw_http_request *req, int status, const char *code, const char *message)
{
	error_envelope(req, status, code, message, NULL);
}

void sw_field_error(struct sw_field_errors *fe, const char *field, const char *message)
{
	int r = 0;
	if (fe->last_field && strcmp(fe->last_field, field) == 0) {
		r = sw_buf_append_lit(&fe->buf, ",");
	} else {
		if (fe->count)
			r = sw_buf_append_lit(&fe->buf, "],");
		r = r ?: sw_json_append_escaped(&fe->buf, sw_str_cstr(field));
		r = r ?: sw_buf_append_lit(&fe->buf, ":[");
		fe->last_field = field;
	}
	r = r ?: sw_json_append_escaped(&fe->buf, sw_str_cstr(message));
	(void)r; /* on -ENOMEM the envelope reports an internal error */
	fe->count++;
}

void sw_http_validation_error(struct sw_http_request *req, struct sw_field_errors *fe)
{
	error_envelope(req, 422, "VALIDATION_FAILED", "The request has invalid fields.", fe);
	sw_buf_release(&fe->buf);
	fe->count = 0;
	fe->last_field = NULL;
}

json_t *sw_http_json_body(struct sw_http_request *req)
{
	const struct sw_http_header *ct = sw_http_request_header(req, SW_STR("Content-Type"));
	struct sw_str media = ct ? ct->value : SW_STR_NULL;
	for (size_t i = 0; i < media.len; i++)
		if (media.ptr[i] == ';' || media.ptr[i] == ' ') {
			media.len = i;
			break;
		}
	if (!sw_str_case_eq(media, SW_STR("application/json"))) {
		sw_http_error(req, 415, "UNSUPPORTED_MEDIA_TYPE",
			      "The request body must be JSON with Content-Type: application/json.");
		return NULL;
	}
	char err[160];
	json_t *v = sw_json_parse_object(req->body, err, sizeof(err));
	char path[128];
	if (!v && sw_json_out_of_range_path(req->body, path, sizeof(path))) {
		/* JSON but for a number no member can hold: the member's
		 * error, as for any other value out of its range. */
		struct sw_field_errors fe = { 0 };
		sw_field_error(&fe, path[0] ? path : "body",
			       "is a number out of range (integers are 64-bit at most, reals finite)");
		sw_http_validation_error(req, &fe);
	} else if (!v) {
		sw_http_error(req, 400, "INVALID_JSON", err);
	}
	return v;
}
