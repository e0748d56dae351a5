/* libFuzzer harness for what clients send as JSON bodies: the body parser
 * (sw_json_parse_object()) and the scanner that names the member of a
 * number out of range (sw_json_out_of_range_path()), which reads bodies
 * the parser refused.
 *
 * Checks, beyond "no crash, no UB": the scanner never names a member of a
 * body the parser took; a named path fits its buffer, NUL-terminated, for
 * every buffer size, and a shorter buffer holds its start; the same body
 * gives the same answer twice (the scanner keeps no state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ASSERT(x) ((x) ? (void)0 : abort())

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 64 * 1024)
		return 0;
	struct sw_str body = sw_str_from((const char *)data, size);
	char err[160];
	json_t *v = sw_json_parse_object(body, err, sizeof(err));
	char path[128], again[128], small[5];
	memset(path, 'x', sizeof(path));
	bool named = sw_json_out_of_range_path(body, path, sizeof(path));
	if (v) {
		ASSERT(!named);
		json_decref(v);
		return 0;
	}
	ASSERT(strlen(err) < sizeof(err));
	if (!named)
		return 0;
	ASSERT(memchr(path, '\0', sizeof(path)));
	ASSERT(sw_json_out_of_range_path(body, again, sizeof(again)));
	ASSERT(strcmp(path, again) == 0);
	memset(small, 'x', sizeof(small));
	ASSERT(sw_json_out_of_range_path(body, small, sizeof(small)));
	ASSERT(memchr(small, '\0', sizeof(small)));
	ASSERT(strncmp(small, path, strlen(small)) == 0);
	return 0;
}
