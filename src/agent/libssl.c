/* libssl loaded with dlopen() on first use (libssl.h). */
#include "libssl.h"

/* OpenSSL 3 has been soname 3 throughout; the headers we are built with
 * must be of that series. */
_Static_assert(OPENSSL_VERSION_MAJOR == 3, "OpenSSL 3 (libssl.so.3) expected");

#define SYMBOL(name) SW_DYNLIB_SYMBOL(struct sw_libssl, , name)
static const struct sw_dynlib_symbol symbols[] = { SW_LIBSSL_FUNCTIONS(SYMBOL) };
#undef SYMBOL

SW_DYNLIB_DEFINE(sw_libssl, struct sw_libssl, symbols, "libssl.so.3", "libssl3", NULL)
