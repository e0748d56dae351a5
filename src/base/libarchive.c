/* libarchive loaded with dlopen() on first use (steward/base/libarchive.h). */
#include "steward/base/libarchive.h"

/* libarchive 3 has been soname 13 throughout; the headers we are built
 * with must be of that series. */
_Static_assert(ARCHIVE_VERSION_NUMBER / 1000000 == 3, "libarchive 3 (libarchive.so.13) expected");

#define SYMBOL(name) SW_DYNLIB_SYMBOL(struct sw_libarchive, archive_, name)
static const struct sw_dynlib_symbol symbols[] = { SW_LIBARCHIVE_FUNCTIONS(SYMBOL) };
#undef SYMBOL

SW_DYNLIB_DEFINE(sw_libarchive, struct sw_libarchive, symbols, "libarchive.so.13", "libarchive13", NULL)
