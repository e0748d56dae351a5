/* The JSON writer and the strict input parser (see steward/base/json.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/sha.h"
#include "steward/base/json.h"

void sw_json_init(struct sw_json *j, struct sw_buf *buf)
{
	j->buf = buf;
	j->err = 0;
	j->depth = 0;
	j->first[0] = true;
	j->after_key = false;
}

static void put(struct sw_json *j, const char *p, size_t n)
{
	if (j->err)
		return;
	int r = sw_buf_append(j->buf, p, n);
	if (r < 0)
		j->err = r;
}

/* Separator before a value: a comma unless it is the first element, or it
 * follows a key. At depth 0 only one value may be written. */
static void before_value(struct sw_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth]) {
		if (j->depth == 0) {
			j->err = j->err ?: -EINVAL;
			return;
		}
		put(j, ",", 1);
	}
	j->first[j->depth] = false;
}

static void open(struct sw_json *j, char c)
{
	before_value(j);
	if (j->depth >= SW_JSON_MAX_DEPTH) {
		j->err = j->err ?: -EINVAL;
		return;
	}
	put(j, &c, 1);
	j->first[++j->depth] = true;
}

static void close_(struct sw_json *j, char c)
{
	if (j->depth == 0 || j->after_key) {
		j->err = j->err ?: -EINVAL;
		return;
	}
	j->depth--;
	put(j, &c, 1);
}

void sw_json_object_begin(struct sw_json *j)
{
	open(j, '{');
}

void sw_json_object_end(struct sw_json *j)
{
	close_(j, '}');
}

void sw_json_array_begin(struct sw_json *j)
{
	open(j, '[');
}

void sw_json_array_end(struct sw_json *j)
{
	close_(j, ']');
}

/* Bytes a JSON string cannot hold as they are: control characters, '"'
 * and '\\'. */
static inline bool needs_escape(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\';
}

/* Where the first byte that needs escaping is (s.len: none), eight bytes
 * at a time: a word holds one when a byte is below 0x20 or equals '"' or
 * '\\' (the "has less" and "has zero" tests on each byte, exact as a yes
 * or no). Most strings written (ids, names, times, keys) have none. */
static size_t clean_prefix(struct sw_str s)
{
	const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
	size_t i = 0;
	for (; i + 8 <= s.len; i += 8) {
		uint64_t w, q, bs;
		memcpy(&w, s.ptr + i, 8);
		q = w ^ (ones * '"');
		bs = w ^ (ones * '\\');
		uint64_t below = (w - ones * 0x20) & ~w, quote = (q - ones) & ~q,
			 backslash = (bs - ones) & ~bs;
		if ((below | quote | backslash) & highs)
			break;
	}
	for (; i < s.len; i++)
		if (needs_escape((unsigned char)s.ptr[i]))
			return i;
	return s.len;
}

int sw_json_append_escaped(struct sw_buf *b, struct sw_str s)
{
	static const char hex[] = "0123456789abcdef";
	/* Room for the common case, nothing to escape, in one reservation. */
	int r = sw_buf_reserve(b, s.len + 2);
	if (r < 0)
		return r;
	b->data[b->len++] = '"';
	size_t start = 0;
	for (size_t i = clean_prefix(s); i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (!needs_escape(c))
			continue;
		if ((r = sw_buf_append(b, s.ptr + start, i - start)) < 0)
			return r;
		char esc[6] = { '\\', 0 };
		size_t n = 2;
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		if ((r = sw_buf_append(b, esc, n)) < 0)
			return r;
		start = i + 1;
	}
	if (start == 0) {
		/* Nothing escaped: the reservation above holds it and the quote. */
		memcpy(b->data + b->len, s.ptr, s.len);
		b->len += s.len;
		b->data[b->len++] = '"';
		return 0;
	}
	if ((r = sw_buf_append(b, s.ptr + start, s.len - start)) < 0)
		return r;
	return sw_buf_append(b, "\"", 1);
}

void sw_json_key(struct sw_json *j, const char *key)
{
	if (j->depth == 0 || j->after_key) {
		j->err = j->err ?: -EINVAL;
		return;
	}
	if (!j->first[j->depth])
		put(j, ",", 1);
	j->first[j->depth] = false;
	if (!j->err) {
		int r = sw_json_append_escaped(j->buf, sw_str_cstr(key));
		if (r < 0)
			j->err = r;
	}
	put(j, ":", 1);
	j->after_key = true;
}

void sw_json_string(struct sw_json *j, struct sw_str s)
{
	before_value(j);
	if (!j->err) {
		int r = sw_json_append_escaped(j->buf, s);
		if (r < 0)
			j->err = r;
	}
}

void sw_json_cstr(struct sw_json *j, const char *s)
{
	if (!s)
		sw_json_null(j);
	else
		sw_json_string(j, sw_str_cstr(s));
}

void sw_json_int(struct sw_json *j, int64_t v)
{
	before_value(j);
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
	put(j, tmp, (size_t)n);
}

void sw_json_double(struct sw_json *j, double v)
{
	before_value(j);
	char tmp[48];
	int n = snprintf(tmp, sizeof(tmp), "%.17g", isfinite(v) ? v : 0);
	put(j, tmp, (size_t)n);
}

void sw_json_bool(struct sw_json *j, bool v)
{
	before_value(j);
	if (v)
		put(j, "true", 4);
	else
		put(j, "false", 5);
}

void sw_json_null(struct sw_json *j)
{
	before_value(j);
	put(j, "null", 4);
}

void sw_json_raw(struct sw_json *j, struct sw_str json)
{
	before_value(j);
	put(j, json.ptr, json.len);
}

int sw_json_finish(const struct sw_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth != 0 || j->after_key || j->first[0])
		return -EINVAL;
	return 0;
}

/* jansson has no depth option for decoding (its own cap is 2048), so the
 * depth is measured on the raw text first: brackets outside strings. */
static bool depth_within(struct sw_str s, unsigned max)
{
	unsigned depth = 0;
	bool in_str = false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = false;
		} else if (c == '"') {
			in_str = true;
		} else if (c == '{' || c == '[') {
			if (++depth > max)
				return false;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return true;
}

json_t *sw_json_parse_object(struct sw_str body, char *err, size_t errlen)
{
	if (body.len == 0) {
		snprintf(err, errlen, "the request body is empty; a JSON object is required");
		return NULL;
	}
	if (!depth_within(body, SW_JSON_MAX_DEPTH)) {
		snprintf(err, errlen, "the JSON body nests deeper than %d levels", SW_JSON_MAX_DEPTH);
		return NULL;
	}
	json_error_t je;
	json_t *v = json_loadb(body.ptr, body.len, JSON_REJECT_DUPLICATES, &je);
	if (!v) {
		if (json_error_code(&je) == json_error_duplicate_key)
			snprintf(err, errlen, "the JSON body has a duplicate key: %.80s", je.text);
		else
			/* Position only: jansson's text quotes the body near the
			 * error, and the body may hold a secret (a variable's value). */
			snprintf(err, errlen, "the body is not valid JSON (at byte %d)", je.position);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		snprintf(err, errlen, "the JSON body must be an object");
		return NULL;
	}
	return v;
}

/* ---- numbers out of range ---- */

/* Where the scanner is: an object (its current key) or an array (its
 * current index). */
struct frame {
	bool object;
	bool want_key; /* an object's next string is a key */
	struct sw_str key;
	size_t index;
};

/* Whether the number token t is one jansson refuses for its size: an
 * integer past 64 bits, a real past a double. */
static bool number_out_of_range(struct sw_str t)
{
	char buf[64];
	char *copy = t.len < sizeof(buf) ? buf : malloc(t.len + 1);
	if (!copy)
		return false;
	memcpy(copy, t.ptr, t.len);
	copy[t.len] = '\0';
	bool out;
	errno = 0;
	if (strpbrk(copy, ".eE")) {
		double d = strtod(copy, NULL);
		out = errno == ERANGE && (d == HUGE_VAL || d == -HUGE_VAL);
	} else {
		(void)strtoll(copy, NULL, 10);
		out = errno == ERANGE;
	}
	if (copy != buf)
		free(copy);
	return out;
}

static void path_of(const struct frame *st, unsigned depth, char *path, size_t cap)
{
	size_t o = 0;
	path[0] = '\0';
	for (unsigned i = 0; i < depth && o + 1 < cap; i++) {
		int n = st[i].object ? snprintf(path + o, cap - o, "%s%.*s", o ? "." : "",
						(int)st[i].key.len, st[i].key.ptr)
				     : snprintf(path + o, cap - o, "[%zu]", st[i].index);
		if (n < 0)
			break;
		o += (size_t)n;
	}
}

bool sw_json_out_of_range_path(struct sw_str body, char *path, size_t cap)
{
	struct frame st[SW_JSON_MAX_DEPTH + 1];
	unsigned depth = 0;
	bool found = false;
	if (!cap || !body.len)
		return false;
	/* The body with each such number made 0: it must then be JSON. */
	char *copy = malloc(body.len);
	if (!copy)
		return false;
	memcpy(copy, body.ptr, body.len);
	const char *s = body.ptr;
	size_t n = body.len;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		if (c == '"') {
			size_t j = i + 1;
			while (j < n && s[j] != '"')
				j += s[j] == '\\' ? 2 : 1;
			if (j >= n)
				break;
			if (depth && st[depth - 1].object && st[depth - 1].want_key) {
				st[depth - 1].key = sw_str_from(s + i + 1, j - i - 1);
				st[depth - 1].want_key = false;
			}
			i = j + 1;
		} else if (c == '{' || c == '[') {
			if (depth == SW_ARRAY_SIZE(st))
				break;
			st[depth++] = (struct frame){ .object = c == '{', .want_key = c == '{' };
			i++;
		} else if (c == '}' || c == ']') {
			depth -= depth > 0;
			i++;
		} else if (c == ',') {
			if (depth && st[depth - 1].object)
				st[depth - 1].want_key = true;
			else if (depth)
				st[depth - 1].index++;
			i++;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			size_t j = i;
			while (j < n && s[j] && strchr("+-0123456789.eE", s[j]))
				j++;
			if (number_out_of_range(sw_str_from(s + i, j - i))) {
				if (!found)
					path_of(st, depth, path, cap);
				found = true;
				memset(copy + i, ' ', j - i);
				copy[i] = '0';
			}
			i = j;
		} else {
			i++;
		}
	}
	if (found) {
		json_t *v = json_loadb(copy, body.len, JSON_REJECT_DUPLICATES, NULL);
		found = json_is_object(v);
		json_decref(v);
	}
	sw_wipe(copy, body.len); /* a body may hold a secret */
	free(copy);
	return found;
}
