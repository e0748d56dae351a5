/* Libraries opened with dlopen() on first use, behind a typed table.
 *
 * Why. A library linked into stewardd is mapped, relocated and
 * initialised at start, with everything it needs, whether or not the
 * installation ever uses it: libcurl (with ssh2, nghttp2, ...), libgit2
 * (with libssh2, mbedTLS, ...) and libarchive (with libxml2, ICU and so
 * libstdc++) cost an idle server megabytes of resident pages. Each is
 * used by few paths (mail and notifications, a fetch in a forked child,
 * a build), so each is opened by the first of them instead, and only
 * there (`ldd stewardd` does not list them).
 *
 * How. A library's face (steward/net/libcurl.h, steward/base/libarchive.h,
 * src/deploy/libgit2.h) lists the functions Steward calls, once, as an
 * X-macro of their names without the library's prefix. From that list
 * the face declares the table (each member typed with __typeof__ of the
 * library's own declaration, so a call through the table is checked by
 * the compiler exactly as a direct call would be) and its .c file the
 * symbol names, then calls sw_dynlib_open().
 *
 * Sanitizers. A library is opened RTLD_NOW | RTLD_LOCAL, never with
 * RTLD_DEEPBIND (which the sanitizers refuse: their allocator and
 * interceptors must stay first in the lookup order), and never closed:
 * LeakSanitizer scans a library's globals for live pointers only while it
 * is mapped, and reports name its frames only while it is. The library's
 * malloc() is the executable's (jemalloc, or the sanitizer's), which is
 * why stewardd exports the whole malloc family (CMakeLists.txt). */
#ifndef STEWARD_BASE_DYNLIB_H
#define STEWARD_BASE_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One function of a table: its symbol and where its pointer goes. */
struct sw_dynlib_symbol {
	const char *name;
	size_t offset;
};

/* Helpers for a face's X-macro list: the table member typed from the
 * library's declaration, and the symbol entry naming it. */
#define SW_DYNLIB_MEMBER(prefix, name) __typeof__(&prefix##name) name;
#define SW_DYNLIB_SYMBOL(table, prefix, name) { #prefix #name, offsetof(table, name) },

/* One library, in static storage (SW_DYNLIB_DEFINE below writes it). The
 * members after .init belong to sw_dynlib_open(). */
struct sw_dynlib {
	const char *soname;  /* "libcurl.so.4" */
	const char *package; /* the Debian package that holds it, for the error */
	const struct sw_dynlib_symbol *symbols;
	size_t count;
	void *table; /* filled in: a struct of function pointers */
	/* Run once, after every symbol was found (may be NULL): 0, or a
	 * sentence in err and nonzero. */
	int (*init)(const void *table, char *err, size_t errlen);

	pthread_mutex_t lock;
	int state; /* 0 untried, 1 loaded, -1 refused (error says why) */
	char error[192];
};

/* Defines `const table_type *accessor(char *err, size_t errlen)`, which
 * returns sw_dynlib_open() of the library soname (Debian package
 * package), with the symbol list symbols (an array) and init (or NULL). */
#define SW_DYNLIB_DEFINE(accessor, table_type, symbols, soname_, package_, init_)                 \
	static table_type accessor##_table;                                                        \
	static struct sw_dynlib accessor##_lib = {                                                  \
		.soname = soname_, .package = package_, .symbols = symbols,                         \
		.count = sizeof(symbols) / sizeof((symbols)[0]), .table = &accessor##_table,        \
		.init = init_, .lock = PTHREAD_MUTEX_INITIALIZER                                    \
	};                                                                                          \
	const table_type *accessor(char *err, size_t errlen)                                        \
	{                                                                                           \
		return sw_dynlib_open(&accessor##_lib, err, errlen);                                \
	}

/* The library's table, loading and initialising it on the first call
 * (any thread; a concurrent first call waits for that one load; a failed
 * load is not tried again). NULL when it cannot be loaded, lacks a
 * symbol or its init fails: why, naming the package to install, in err
 * (errlen bytes; err may be NULL). */
const void *sw_dynlib_open(struct sw_dynlib *lib, char *err, size_t errlen);

#endif
