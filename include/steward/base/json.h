/* JSON in and out.
 *
 * Output: a streaming writer over an sw_buf. It escapes every string and
 * tracks nesting, so a response cannot be malformed by its data; errors are
 * sticky and reported once by sw_json_finish(), so call chains need no
 * checks in between.
 *
 * Input: jansson with duplicate keys refused (JSON_REJECT_DUPLICATES), a
 * depth cap (SW_JSON_MAX_DEPTH) and only an object accepted at the top. */
#ifndef STEWARD_JSON_H
#define STEWARD_JSON_H

#include <jansson.h>
#include "steward/base/base.h"
#include "steward/base/buf.h"
#include "steward/base/limits.h"

struct sw_json {
	struct sw_buf *buf;
	int err;          /* first error: -ENOMEM or -EINVAL (misuse) */
	unsigned depth;
	bool first[SW_JSON_MAX_DEPTH + 1]; /* no element yet at this depth */
	bool after_key;
};

void sw_json_init(struct sw_json *j, struct sw_buf *buf);
void sw_json_object_begin(struct sw_json *j);
void sw_json_object_end(struct sw_json *j);
void sw_json_array_begin(struct sw_json *j);
void sw_json_array_end(struct sw_json *j);
/* Writes a key inside an object; the next call writes its value. */
void sw_json_key(struct sw_json *j, const char *key);
void sw_json_string(struct sw_json *j, struct sw_str s);
void sw_json_cstr(struct sw_json *j, const char *s); /* NULL writes null */
void sw_json_int(struct sw_json *j, int64_t v);
void sw_json_bool(struct sw_json *j, bool v);
/* A finite double in the shortest text that reads back the same (%.17g);
 * NaN and the infinities, which JSON cannot write, as 0. */
void sw_json_double(struct sw_json *j, double v);
void sw_json_null(struct sw_json *j);
/* Writes already-serialised JSON produced by a trusted serialiser
 * (json_dumps); never pass client input. */
void sw_json_raw(struct sw_json *j, struct sw_str json);
/* 0 when the document is complete and nothing failed, else the error. */
int sw_json_finish(const struct sw_json *j);

/* Appends s as a JSON string literal (with quotes), escaping as needed. */
int sw_json_append_escaped(struct sw_buf *b, struct sw_str s);

/* Parses a request body that must be one JSON object. Returns a new
 * reference, or NULL with a message for the client in err (e.g.
 * "duplicate key \"email\"", "nesting deeper than 32 levels"). */
json_t *sw_json_parse_object(struct sw_str body, char *err, size_t errlen);

/* Why a body sw_json_parse_object() refused may deserve a field error: when
 * body is valid JSON but for numbers out of range (an integer past 64-bit,
 * which jansson refuses, or a real past a double, 1e400), writes the path
 * of the first one's member into path (cap bytes: "port",
 * "set.KEY", "list[2]"; cut to fit) and returns true. false when the body
 * has none, or is not JSON for another reason too. */
bool sw_json_out_of_range_path(struct sw_str body, char *path, size_t cap);

#endif
