/* libcurl loaded with dlopen() on first use (steward/net/libcurl.h says why). */
#include <stdio.h>
#include "steward/net/libcurl.h"

static int init(const void *table, char *err, size_t errlen)
{
	const struct sw_libcurl *fn = table;
	if (fn->global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(err, errlen, "libcurl could not be initialised");
		return -1;
	}
	return 0;
}

#define SYMBOL(name) SW_DYNLIB_SYMBOL(struct sw_libcurl, curl_, name)
static const struct sw_dynlib_symbol symbols[] = { SW_LIBCURL_FUNCTIONS(SYMBOL) };
#undef SYMBOL

SW_DYNLIB_DEFINE(sw_libcurl, struct sw_libcurl, symbols, "libcurl.so.4", "libcurl4", init)
