/* Steward's containers on the local engine, followed by the engine's event
 * stream instead of asked for every metrics tick.
 *
 * A thread of its own lists the engine's containers labelled
 * steward.application once (a list and one inspect each), then follows
 * GET /events (type container, label steward.application; create, start,
 * restart, die, destroy, pause, unpause, health_status, oom, rename) on one
 * long-lived connection from a second before that list, so nothing that
 * happens meanwhile is missed. Each event has its container inspected again
 * (pid, state, health, restart count) or, on destroy, forgotten. When the
 * stream ends (the engine restarted or went away) the set is not trusted
 * until a new list, made as soon as the engine answers again (retried
 * every SW_CONTAINER_WATCH_RETRY_MS). So a metrics tick reads the set in
 * memory and asks the engine nothing. */
#ifndef STEWARD_DRIVER_CONTAINER_WATCH_H
#define STEWARD_DRIVER_CONTAINER_WATCH_H

#include <stddef.h>
#include <stdint.h>
#include "steward/driver/container_state.h"
#include "steward/driver/driver.h"

#define SW_CONTAINER_WATCH_MAX 4096      /* containers kept; more are left out */
#define SW_CONTAINER_WATCH_RETRY_MS 500  /* between attempts while the engine does not answer */

struct sw_container_watch;
/* Starts following d's engine (a local driver; a remote one: NULL with
 * errno EOPNOTSUPP). NULL with errno ENOMEM or the thread's error. */
struct sw_container_watch *sw_container_watch_new(struct sw_driver *d);
/* Stops the thread (within about a second: the stream's cancel poll). */
void sw_container_watch_free(struct sw_container_watch *w);

/* The containers of application_id (every one of Steward's when NULL),
 * at most cap, newest first by creation, into out; *ret_n set. -EAGAIN
 * with why in err while the set is not in step with the engine (before
 * the first list, after the stream ended and before the next list): the
 * caller asks the engine itself then. */
int sw_container_watch_list(struct sw_container_watch *w, const char *application_id,
			    struct sw_container_state *out, size_t cap, size_t *ret_n, char *err, size_t errlen);

/* What the watch has done: lists made, events applied. */
struct sw_container_watch_stats {
	uint64_t lists, events;
	bool in_step;
};
void sw_container_watch_stats(struct sw_container_watch *w, struct sw_container_watch_stats *ret);

#endif
