/* libFuzzer harness for the repository picker's reading of a git host's
 * answer (sw_git_host_normalise(), git_host.h).
 *
 * The first input byte picks the provider (its value mod 3: GitHub,
 * GitLab, Bitbucket); the rest is the host's body. Checks, beyond "no
 * crash, no UB": the result is all-or-nothing (on error nothing is
 * appended), and an accepted answer is a JSON array of at most
 * SW_GIT_HOST_MAX_REPOSITORIES objects with exactly the five members of
 * the normalised shape, fullName a string, the others strings or null but
 * private, a boolean. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "steward/net/git_host.h"
#include "fuzz.h"

/* Aborts (a finding) when x does not hold. */

static bool string_or_null(json_t *v)
{
	return json_is_string(v) || json_is_null(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	enum sw_git_provider p = (enum sw_git_provider)(data[0] % 3);
	struct sw_buf out = { 0 };
	int r = sw_git_host_normalise(p, (const char *)data + 1, size - 1, &out);
	ASSERT(r == 0 || r == -EBADMSG || r == -ENOMEM);
	if (r != 0) {
		ASSERT(out.len == 0);
		sw_buf_release(&out);
		return 0;
	}
	json_error_t je;
	json_t *list = json_loadb((const char *)out.data, out.len, JSON_REJECT_DUPLICATES, &je);
	ASSERT(json_is_array(list) && json_array_size(list) <= SW_GIT_HOST_MAX_REPOSITORIES);
	size_t i;
	json_t *item;
	json_array_foreach(list, i, item) {
		ASSERT(json_object_size(item) == 5);
		ASSERT(json_is_string(json_object_get(item, "fullName")));
		ASSERT(string_or_null(json_object_get(item, "cloneUrlHttps")));
		ASSERT(string_or_null(json_object_get(item, "cloneUrlSsh")));
		ASSERT(string_or_null(json_object_get(item, "defaultBranch")));
		ASSERT(json_is_boolean(json_object_get(item, "private")));
	}
	json_decref(list);
	sw_buf_release(&out);
	return 0;
}
