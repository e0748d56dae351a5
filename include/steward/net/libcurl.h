/* libcurl, loaded on first use.
 *
 * Linked, libcurl and the libraries only it needs (ssh2, nghttp2, rtmp,
 * ...) cost an idle server most of a megabyte of resident pages, and its
 * initialisation brings up all of OpenSSL: megabytes more. Mail (SMTP_URL)
 * and outbound notifications are the only users, and many installations
 * turn neither on, so the library is opened with dlopen() and initialised
 * (curl_global_init, thread-safe from libcurl 7.84; Debian 12 has 7.88)
 * the first time one of them needs it, never at start-up. */
#ifndef STEWARD_LIBCURL_H
#define STEWARD_LIBCURL_H

#include <stdbool.h>
#include <stddef.h>
#include <curl/curl.h>
#include "steward/base/dynlib.h"

/* The functions of libcurl that Steward calls, without their curl_ prefix
 * (steward/base/dynlib.h). */
#define SW_LIBCURL_FUNCTIONS(X)                                                              \
	X(url_get) X(free) X(url) X(url_set) X(url_cleanup) X(global_init) X(easy_init)      \
	X(slist_append) X(easy_setopt) X(easy_perform) X(easy_getinfo) X(easy_strerror)       \
	X(slist_free_all) X(easy_cleanup) X(multi_init) X(multi_add_handle)                  \
	X(multi_remove_handle) X(multi_perform) X(multi_poll) X(multi_info_read) X(multi_cleanup)

#define SW_LIBCURL_MEMBER(name) SW_DYNLIB_MEMBER(curl_, name)
struct sw_libcurl {
	SW_LIBCURL_FUNCTIONS(SW_LIBCURL_MEMBER)
};
#undef SW_LIBCURL_MEMBER

/* The loaded and initialised library, the same for every caller; loads it
 * on the first call (any thread; concurrent first calls wait for one
 * load). NULL when it cannot be loaded or initialised: why (naming the
 * package to install) in err (errlen bytes; may be NULL). */
const struct sw_libcurl *sw_libcurl(char *err, size_t errlen);

#endif
