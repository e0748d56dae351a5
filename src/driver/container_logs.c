/* A container's logs through the engine (driver.h, "a container's logs").
 *
 * The engine answers GET /containers/{id}/logs of a container made
 * without a TTY in the frames of the exec API ([stream, 0, 0, 0, length
 * big-endian], then length bytes; service_data.c's reader takes them
 * apart), each frame one write of the program: a frame may hold several
 * lines or part of one, so each stream keeps its open line. With
 * timestamps=1 each line starts with the engine's RFC 3339 time (nanoseconds)
 * and a space. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver_internal.h"
#include "steward/base/timeparse.h"

struct line_buf {
	char *p;
	size_t len;
};

struct sw_driver_log_lines {
	struct sw_driver_exec_stream st;
	struct line_buf open[2]; /* stdout, stderr */
	sw_driver_container_log_fn fn;
	void *arg;
};

/* A line's bytes: SW_DRIVER_CONTAINER_LOG_LINE_MAX and its timestamp. */
#define OPEN_MAX (SW_DRIVER_CONTAINER_LOG_LINE_MAX + SW_RFC3339_MAX_LEN + 1)

/* One whole line of stream (1 or 2), its timestamp still in front. */
static int emit(struct sw_driver_log_lines *r, int stream, const char *p, size_t n)
{
	if (n && p[n - 1] == '\r')
		n--;
	struct sw_container_log_line l = { .stream = stream, .text = p, .len = n };
	const char *sp = memchr(p, ' ', SW_MIN(n, (size_t)SW_RFC3339_MAX_LEN + 1));
	int64_t us;
	if (sp && sw_rfc3339_parse_us(sw_str_from(p, (size_t)(sp - p)), &us) == 0) {
		l.time_us = us;
		l.text = sp + 1;
		l.len = n - (size_t)(sp + 1 - p);
	}
	return r->fn(r->arg, &l);
}

/* The next bytes of stream: whole lines out, the rest kept (a line past
 * the cap is given in pieces; the engine's timestamp stays on the first). */
static int take(struct sw_driver_log_lines *r, int stream, const char *p, size_t n)
{
	struct line_buf *b = &r->open[stream - 1];
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n;
		if (k > OPEN_MAX - b->len)
			k = OPEN_MAX - b->len;
		memcpy(b->p + b->len, p, k);
		b->len += k;
		p += k;
		n -= k;
		bool whole = n && *p == '\n';
		if (whole || b->len == OPEN_MAX) {
			int rc = emit(r, stream, b->p, b->len);
			b->len = 0;
			if (rc < 0)
				return rc;
			if (whole) {
				p++;
				n--;
			}
		}
	}
	return 0;
}

static int take_out(void *arg, const char *p, size_t n)
{
	return take(arg, 1, p, n);
}

static int take_err(void *arg, const char *p, size_t n)
{
	return take(arg, 2, p, n);
}

struct sw_driver_log_lines *sw_driver_log_lines_new(sw_driver_container_log_fn fn, void *arg)
{
	struct sw_driver_log_lines *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fn = fn;
	r->arg = arg;
	r->st.out = take_out;
	r->st.out_arg = r;
	r->st.err_out = take_err;
	r->st.err_out_arg = r;
	r->open[0].p = malloc(OPEN_MAX);
	r->open[1].p = malloc(OPEN_MAX);
	if (!r->open[0].p || !r->open[1].p) {
		sw_driver_log_lines_free(r);
		return NULL;
	}
	return r;
}

int sw_driver_log_lines_feed(struct sw_driver_log_lines *r, const char *p, size_t n)
{
	return sw_driver_exec_stream_feed(&r->st, p, n);
}

int sw_driver_log_lines_end(struct sw_driver_log_lines *r)
{
	int rc = 0;
	for (int s = 0; rc == 0 && s < 2; s++)
		if (r->open[s].len)
			rc = emit(r, s + 1, r->open[s].p, r->open[s].len);
	r->open[0].len = r->open[1].len = 0;
	return rc;
}

void sw_driver_log_lines_free(struct sw_driver_log_lines *r)
{
	if (!r)
		return;
	free(r->open[0].p);
	free(r->open[1].p);
	free(r);
}

static int on_data(void *arg, const char *p, size_t n)
{
	return sw_driver_log_lines_feed(arg, p, n);
}

int sw_driver_container_logs(struct sw_driver *d, const struct sw_container_logs_query *q,
			     sw_driver_container_log_fn fn, void *arg, char *err, size_t errlen)
{
	if (d->remote)
		return d->rops->container_logs(d, q, fn, arg, err, errlen);
	if (!q->container || !sw_driver_token_ok(q->container, "_.-", SW_DRIVER_ID_MAX - 1)) {
		snprintf(err, errlen, "invalid container id");
		return -EINVAL;
	}
	struct sw_driver_log_lines *r = sw_driver_log_lines_new(fn, arg);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	char url[512];
	int64_t since = q->since_us > 0 ? q->since_us / 1000000 : 0;
	snprintf(url, sizeof(url),
		 SW_DRIVER_ENGINE_BASE "/containers/%s/logs?stdout=1&stderr=1&timestamps=1&tail=%u"
				       "&since=%" PRId64 "&follow=%d",
		 q->container, q->tail, since, q->follow ? 1 : 0);
	/* Following has no timeout: it lasts until the container stops or the
	 * reader leaves (cancel). */
	struct sw_driver_http h = { .method = "GET", .url = url, .unix_socket = d->docker_socket,
				    .on_data = on_data, .data_arg = r, .cancel = q->cancel,
				    .timeout_ms = q->follow ? 0 : SW_DRIVER_ENGINE_TIMEOUT_MS };
	int rc = sw_driver_http_run(&h, "the Docker engine", err, errlen);
	if (rc == -ECANCELED)
		snprintf(err, errlen, "cancelled");
	if (rc == 0 && h.status != 200) {
		sw_driver_answer_error(&h, "the container's logs cannot be read", err, errlen);
		rc = sw_driver_status_errno(h.status);
	}
	if (rc == 0)
		rc = sw_driver_log_lines_end(r);
	sw_buf_release(&h.response);
	sw_driver_log_lines_free(r);
	return rc;
}
