/* What a notification says and how it is signed (steward/notify/notify.h). Pure
 * functions: no I/O but the CSPRNG. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include "steward/base/json.h"
#include "steward/notify/notify.h"
#include "steward/base/secret.h"

/* Discord refuses a message whose content is longer (in characters). */
#define DISCORD_CONTENT_MAX 2000

int sw_notify_sign(struct sw_str key, int64_t timestamp, struct sw_str body,
		   char out[SW_NOTIFY_SIGNATURE_LEN + 1])
{
	struct sw_buf msg = { 0 };
	uint8_t mac[32];
	int r = sw_buf_appendf(&msg, "%" PRId64 ".", timestamp);
	if (r == 0)
		r = sw_buf_append_str(&msg, body);
	if (r == 0)
		r = sw_hmac_sha256(key.ptr, key.len, msg.data, msg.len, mac);
	sw_buf_release(&msg);
	if (r < 0) {
		out[0] = '\0';
		return -EIO;
	}
	static const char hex[] = "0123456789abcdef";
	memcpy(out, "v1=", 3);
	for (size_t i = 0; i < sizeof(mac); i++) {
		out[3 + 2 * i] = hex[mac[i] >> 4];
		out[3 + 2 * i + 1] = hex[mac[i] & 15];
	}
	out[SW_NOTIFY_SIGNATURE_LEN] = '\0';
	OPENSSL_cleanse(mac, sizeof(mac));
	return 0;
}

int sw_notify_uuid(char out[37])
{
	uint8_t b[16];
	if (RAND_bytes(b, sizeof(b)) != 1) {
		out[0] = '\0';
		return -EIO;
	}
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}

/* Slack's mrkdwn reads &, < and > as control characters: escaped as its
 * documentation asks. */
static int append_slack_escaped(struct sw_buf *b, const char *s)
{
	int r = 0;
	for (; *s && r == 0; s++) {
		if (*s == '&')
			r = sw_buf_append_lit(b, "&amp;");
		else if (*s == '<')
			r = sw_buf_append_lit(b, "&lt;");
		else if (*s == '>')
			r = sw_buf_append_lit(b, "&gt;");
		else
			r = sw_buf_append(b, s, 1);
	}
	return r;
}

/* The first max UTF-8 characters of s (whole characters). */
static struct sw_str utf8_prefix(struct sw_str s, size_t max)
{
	size_t n = 0, i = 0;
	for (; i < s.len; i++) {
		if (((unsigned char)s.ptr[i] & 0xc0) != 0x80 && n++ == max)
			break;
	}
	return sw_str_from(s.ptr, i);
}

/* The chat text of an event: the title in bold, then the text. */
static int chat_text(struct sw_buf *b, enum sw_notify_kind kind, const struct sw_notify_event *ev)
{
	if (kind == SW_NOTIFY_SLACK) {
		int r = sw_buf_append_lit(b, "*");
		if (r == 0)
			r = append_slack_escaped(b, ev->title);
		if (r == 0)
			r = sw_buf_append_lit(b, "*\n");
		return r ? r : append_slack_escaped(b, ev->text);
	}
	return sw_buf_appendf(b, "**%s**\n%s", ev->title, ev->text);
}

int sw_notify_payload(struct sw_buf *out, enum sw_notify_kind kind, const struct sw_notify_event *ev)
{
	if (!ev->delivery_id || !ev->type || !ev->title || !ev->text ||
	    (ev->data_json && ev->data_json[0] != '{'))
		return -EINVAL;
	struct sw_buf text = { 0 };
	struct sw_json j;
	sw_json_init(&j, out);
	sw_json_object_begin(&j);
	if (kind == SW_NOTIFY_WEBHOOK) {
		char at[25];
		sw_format_rfc3339(ev->wall_ms, at);
		sw_json_key(&j, "id");
		sw_json_cstr(&j, ev->delivery_id);
		sw_json_key(&j, "type");
		sw_json_cstr(&j, ev->type);
		sw_json_key(&j, "createdAt");
		sw_json_cstr(&j, at);
		sw_json_key(&j, "title");
		sw_json_cstr(&j, ev->title);
		sw_json_key(&j, "text");
		sw_json_cstr(&j, ev->text);
		sw_json_key(&j, "data");
		if (ev->data_json)
			sw_json_raw(&j, sw_str_cstr(ev->data_json));
		else
			sw_json_null(&j);
	} else {
		int r = chat_text(&text, kind, ev);
		if (r < 0) {
			sw_buf_release(&text);
			return r;
		}
		struct sw_str t = sw_str_from((const char *)text.data, text.len);
		if (kind == SW_NOTIFY_SLACK) {
			sw_json_key(&j, "text");
			sw_json_string(&j, t);
		} else {
			sw_json_key(&j, "content");
			sw_json_string(&j, utf8_prefix(t, DISCORD_CONTENT_MAX));
			/* No @everyone, role or user pings from a notification's text. */
			sw_json_key(&j, "allowed_mentions");
			sw_json_raw(&j, sw_str_cstr("{\"parse\":[]}"));
		}
	}
	sw_json_object_end(&j);
	sw_buf_release(&text);
	return sw_json_finish(&j);
}
