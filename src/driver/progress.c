/* The reader of the engine's build progress (internal.h has the message
 * kinds). The answer arrives in pieces that cut messages anywhere, and a
 * message's output cuts lines anywhere, so both are reassembled here. The
 * classic builder wraps a step's stderr in colour sequences (ESC[91m ...
 * ESC[0m): terminal control sequences and other control characters are
 * dropped so that the log holds text only. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include "driver/driver_internal.h"

void sw_driver_progress_init(struct sw_driver_progress *p, sw_driver_log_fn log, void *log_arg)
{
	*p = (struct sw_driver_progress){ .log = log, .log_arg = log_arg };
}

void sw_driver_progress_release(struct sw_driver_progress *p)
{
	sw_buf_release(&p->message);
	sw_buf_release(&p->line);
}

static void emit(struct sw_driver_progress *p, const char *s, size_t n)
{
	if (p->log)
		p->log(p->log_arg, s, n);
}

static void emit_line(struct sw_driver_progress *p)
{
	emit(p, p->line.data ? p->line.data : "", p->line.len);
	p->line.len = 0;
}

/* The line is full: emit it up to its last whole UTF-8 character and keep
 * the cut character's first bytes for the next piece. */
static void emit_full_line(struct sw_driver_progress *p)
{
	size_t cut = p->line.len;
	for (size_t back = 0; back < 3 && cut > 0 && ((unsigned char)p->line.data[cut - 1] & 0xC0) == 0x80; back++)
		cut--;
	if (cut > 0 && ((unsigned char)p->line.data[cut - 1] & 0xC0) == 0xC0)
		cut--;
	if (cut == 0)
		cut = p->line.len;
	emit(p, p->line.data, cut);
	sw_buf_consume(&p->line, cut);
}

/* Output text: ends lines at '\n', '\r' or "\r\n"; drops escape
 * sequences (CSI "ESC [ params final", OSC "ESC ] ... BEL or ESC \\",
 * and "ESC intermediates final") and control characters but tab. The
 * escape state does not cross messages: the engine sends a sequence
 * whole. */
static int add_output(struct sw_driver_progress *p, const char *s, size_t n)
{
	enum { TEXT, ESC, CSI, OSC } state = TEXT;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (state == ESC) {
			if (c == '[')
				state = CSI;
			else if (c == ']')
				state = OSC;
			else if (c < 0x20 || c > 0x2F) /* intermediates stay */
				state = TEXT;
			continue;
		}
		if (state == CSI) {
			if (c >= 0x40 && c <= 0x7E)
				state = TEXT;
			continue;
		}
		if (state == OSC) {
			if (c == 0x07)
				state = TEXT;
			else if (c == 0x1B)
				state = ESC; /* ESC \\ ends it; the '\\' is then dropped */
			continue;
		}
		if (c == 0x1B) {
			state = ESC;
		} else if (c == '\n' || c == '\r') {
			emit_line(p);
			if (c == '\r' && i + 1 < n && s[i + 1] == '\n')
				i++;
		} else if (c >= 0x20 && c != 0x7F) {
			if (sw_buf_append(&p->line, &s[i], 1) < 0)
				return -ENOMEM;
			if (p->line.len >= SW_DRIVER_LOG_LINE_MAX)
				emit_full_line(p);
		} else if (c == '\t') {
			if (sw_buf_append(&p->line, &s[i], 1) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

static void set_error(struct sw_driver_progress *p, const char *msg)
{
	if (p->failed)
		return;
	p->failed = true;
	/* Keep the sentence on one line and without control characters. */
	size_t o = 0;
	for (const char *c = msg; *c && o + 1 < sizeof(p->error); c++)
		p->error[o++] = (unsigned char)*c < 0x20 ? ' ' : *c;
	while (o > 0 && p->error[o - 1] == ' ')
		o--;
	p->error[o] = '\0';
}

static int handle_message(struct sw_driver_progress *p, const char *s, size_t n)
{
	while (n > 0 && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n == 0)
		return 0;
	json_t *m = json_loadb(s, n, 0, NULL);
	if (!json_is_object(m)) {
		json_decref(m);
		return 0; /* not a message: nothing to do with it */
	}
	int rc = 0;
	const char *stream = json_string_value(json_object_get(m, "stream"));
	const char *status = json_string_value(json_object_get(m, "status"));
	json_t *detail = json_object_get(m, "errorDetail");
	const char *error = json_string_value(json_object_get(detail, "message"));
	if (!error)
		error = json_string_value(json_object_get(m, "error"));
	json_t *aux = json_object_get(m, "aux");
	if (stream) {
		rc = add_output(p, stream, json_string_length(json_object_get(m, "stream")));
	} else if (status) {
		/* Pull progress bars ("Downloading" with current/total) are noise. */
		json_t *pd = json_object_get(m, "progressDetail");
		if (!json_object_get(pd, "current")) {
			const char *id = json_string_value(json_object_get(m, "id"));
			char line[512];
			int len = id ? snprintf(line, sizeof(line), "%s: %s", id, status)
				     : snprintf(line, sizeof(line), "%s", status);
			if (len > 0)
				rc = add_output(p, line, SW_MIN((size_t)len, sizeof(line) - 1));
			if (rc == 0 && len > 0)
				emit_line(p);
		}
	} else if (error) {
		set_error(p, error);
	} else if (json_is_object(aux)) {
		const char *id = json_string_value(json_object_get(aux, "ID"));
		if (id)
			snprintf(p->image_id, sizeof(p->image_id), "%s", id);
	}
	json_decref(m);
	return rc;
}

int sw_driver_progress_feed(struct sw_driver_progress *p, const char *data, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t piece = nl ? (size_t)(nl - data) : n;
		if (p->skipping) {
			if (nl)
				p->skipping = false;
		} else if (p->message.len + piece > SW_DRIVER_PROGRESS_MSG_MAX) {
			p->message.len = 0;
			p->skipping = !nl;
			static const char note[] = "(a build output message longer than 1 MiB was left out)";
			emit(p, note, sizeof(note) - 1);
		} else if (nl && p->message.len == 0) {
			int rc = handle_message(p, data, piece);
			if (rc < 0)
				return rc;
		} else {
			if (sw_buf_append(&p->message, data, piece) < 0)
				return -ENOMEM;
			if (nl) {
				int rc = handle_message(p, p->message.data, p->message.len);
				p->message.len = 0;
				if (rc < 0)
					return rc;
			}
		}
		if (!nl)
			break;
		data = nl + 1;
		n -= piece + 1;
	}
	return 0;
}

void sw_driver_progress_finish(struct sw_driver_progress *p)
{
	if (p->message.len && !p->skipping)
		handle_message(p, p->message.data, p->message.len);
	p->message.len = 0;
	p->skipping = false;
	if (p->line.len)
		emit_line(p);
}
