/* libgit2 loaded with dlopen() on first use (libgit2.h says why). */
#include <stdio.h>
#include "libgit2.h"

static int init(const void *table, char *err, size_t errlen)
{
	const struct sw_libgit2 *fn = table;
	if (fn->libgit2_init() < 0) {
		snprintf(err, errlen, "libgit2 could not be initialised");
		return -1;
	}
	return 0;
}

#define SYMBOL(name) SW_DYNLIB_SYMBOL(struct sw_libgit2, git_, name)
static const struct sw_dynlib_symbol symbols[] = { SW_LIBGIT2_FUNCTIONS(SYMBOL) };
#undef SYMBOL

SW_DYNLIB_DEFINE(sw_libgit2, struct sw_libgit2, symbols, "libgit2.so." LIBGIT2_SOVERSION,
		 "libgit2-" LIBGIT2_SOVERSION, init)
