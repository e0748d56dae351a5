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

/* The functions of libcurl that Steward calls. */
struct sw_libcurl {
	CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
	void (*free)(void *);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
	void (*url_cleanup)(CURLU *);
	CURL *(*easy_init)(void);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	void (*slist_free_all)(struct curl_slist *);
	void (*easy_cleanup)(CURL *);
};

/* The loaded and initialised library, the same for every caller; loads it
 * on the first call (any thread; concurrent first calls wait for one
 * load). NULL when it cannot be loaded or initialised: why (naming the
 * package to install) in err (errlen bytes; may be NULL). */
const struct sw_libcurl *sw_libcurl(char *err, size_t errlen);

#endif
