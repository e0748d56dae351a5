/* libcurl loaded with dlopen() on first use (steward/libcurl.h says why). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "steward/net/libcurl.h"

static struct {
	pthread_once_t once;
	bool ok;
	char error[160];
	CURLcode (*global_init)(long);
	struct sw_libcurl fn;
} lib = { .once = PTHREAD_ONCE_INIT };

static void load(void)
{
	/* Never closed: the process keeps it until it exits. */
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(lib.error, sizeof(lib.error), "libcurl cannot be loaded (apt-get install libcurl4)");
		return;
	}
	struct sw_libcurl *f = &lib.fn;
	struct {
		void **slot;
		const char *name;
	} syms[] = {
		{ (void **)&f->url_get, "curl_url_get" }, { (void **)&f->free, "curl_free" },
		{ (void **)&f->url, "curl_url" }, { (void **)&f->url_set, "curl_url_set" },
		{ (void **)&f->url_cleanup, "curl_url_cleanup" },
		{ (void **)&lib.global_init, "curl_global_init" },
		{ (void **)&f->easy_init, "curl_easy_init" },
		{ (void **)&f->slist_append, "curl_slist_append" },
		{ (void **)&f->easy_setopt, "curl_easy_setopt" },
		{ (void **)&f->easy_perform, "curl_easy_perform" },
		{ (void **)&f->easy_getinfo, "curl_easy_getinfo" },
		{ (void **)&f->easy_strerror, "curl_easy_strerror" },
		{ (void **)&f->slist_free_all, "curl_slist_free_all" },
		{ (void **)&f->easy_cleanup, "curl_easy_cleanup" },
	};
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			snprintf(lib.error, sizeof(lib.error), "libcurl lacks %s", syms[i].name);
			return;
		}
	}
	if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(lib.error, sizeof(lib.error), "libcurl could not be initialised");
		return;
	}
	lib.ok = true;
}

const struct sw_libcurl *sw_libcurl(char *err, size_t errlen)
{
	pthread_once(&lib.once, load);
	if (lib.ok)
		return &lib.fn;
	if (err && errlen)
		snprintf(err, errlen, "%s", lib.error);
	return NULL;
}
