/* Libraries opened on first use (steward/base/dynlib.h says why). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "steward/base/dynlib.h"

static int load(struct sw_dynlib *lib)
{
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(lib->error, sizeof(lib->error), "%s cannot be loaded (apt-get install %s)",
			 lib->soname, lib->package);
		return -1;
	}
	/* Never closed (the header says why); a table missing a symbol keeps
	 * the handle too, which is harmless: the load is never retried. */
	for (size_t i = 0; i < lib->count; i++) {
		void *sym = dlsym(h, lib->symbols[i].name);
		if (!sym) {
			snprintf(lib->error, sizeof(lib->error), "%s lacks %s (apt-get install %s)",
				 lib->soname, lib->symbols[i].name, lib->package);
			return -1;
		}
		/* POSIX: a function's address from dlsym() converts to a
		 * function pointer of the same representation. */
		memcpy((char *)lib->table + lib->symbols[i].offset, &sym, sizeof(sym));
	}
	if (lib->init && lib->init(lib->table, lib->error, sizeof(lib->error)) != 0)
		return -1;
	return 1;
}

const void *sw_dynlib_open(struct sw_dynlib *lib, char *err, size_t errlen)
{
	int state = __atomic_load_n(&lib->state, __ATOMIC_ACQUIRE);
	if (state == 0) {
		pthread_mutex_lock(&lib->lock);
		state = lib->state;
		if (state == 0) {
			state = load(lib);
			__atomic_store_n(&lib->state, state, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&lib->lock);
	}
	if (state > 0)
		return lib->table;
	if (err && errlen)
		snprintf(err, errlen, "%s", lib->error);
	return NULL;
}
