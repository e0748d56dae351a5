/* The per-thread composition root of stewardd: one server thread owns
 * {loop, database pool, HTTP server}. Private to src/main (and the tests
 * that run a server the way stewardd does). */
#ifndef STEWARD_MAIN_THREAD_H
#define STEWARD_MAIN_THREAD_H

#include "steward/http/http.h"

struct sw_db_pool;

/* Process-wide, read-only once threads run. */
struct sw_main_threads {
	struct sw_server_shared *server;
	const char *conninfo; /* the database every thread's pool connects to */
	/* Called on each thread with its pool once it exists (the guard
	 * listens for revocations through it); may be NULL. */
	void (*pool_created)(struct sw_db_pool *pool);
	/* Called once by each thread when it accepts connections, or when it
	 * gives up starting (start-up barrier); may be NULL. */
	void (*ready)(unsigned index);
};

/* Thread entry point: creates the calling thread's loop, the server and
 * its listener, the pool, and runs until shutdown completes. The server
 * accepts only once the pool has a connection, or after a bound (so
 * /health means what it says on every thread, and a database that is
 * down does not keep stewardd from starting). 0, or -errno. */
int sw_main_thread_run(const struct sw_main_threads *threads, unsigned index);
/* Asks a running thread to shut down gracefully: the server drains, then
 * the pool closes, then the loop stops. Any thread. */
void sw_main_thread_request_shutdown(unsigned index);

#endif
