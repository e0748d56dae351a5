/* The health gate of a new version.
 *
 * The gate is a plain HTTP/1.1 GET on 127.0.0.1 of the application's
 * server (containers run with host networking and listen on $PORT), made
 * on that server through the driver (sw_driver_http_probe(): directly on
 * the local server, by the agent's container.probe on a remote one): one
 * request per try, each bounded by the application's
 * healthCheckTimeoutSeconds for connecting, sending and reading the status
 * line, a try every second, healthCheckRetries tries.
 * Success is exactly the application's healthCheckExpectedStatus. Between
 * failed tries the container is looked up: one that exited fails the gate
 * at once ("the container exited"), rather than after every retry. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "deploy/pipeline_internal.h"

#define SW_PL_HEALTH_INTERVAL_MS 1000

/* The state of the container named name of app_id ("" when gone). */
static void container_state(struct sw_pl *p, const char *app_id, const char *name, char state[24])
{
	struct sw_container_info *c = calloc(SW_PL_MAX_CONTAINERS, sizeof(*c));
	size_t n = 0;
	char err[256];
	snprintf(state, 24, "unknown");
	if (!c || sw_pl_containers(p, app_id, c, &n, err, sizeof(err)) != 0) {
		free(c);
		return;
	}
	state[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *cn = c[i].name[0] == '/' ? c[i].name + 1 : c[i].name;
		if (strcmp(cn, name) == 0)
			snprintf(state, 24, "%s", c[i].state);
	}
	free(c);
}

int sw_pl_health_gate(struct sw_pl *p, unsigned port, const char *path, int expected,
		      unsigned timeout_s, unsigned retries, const char *app_id,
		      const char *container, char *err, size_t errlen)
{
	char last[256] = "no try was made";
	sw_pl_log(p, "Health gate: GET %s on port %u of the server, made there, expecting %d, %u tries of "
		  "%u s each.", path, port, expected, retries, timeout_s);
	struct sw_http_probe q = { .port = port, .path = path, .timeout_s = timeout_s };
	for (unsigned i = 1; i <= retries; i++) {
		if (sw_pl_stopping(p)) {
			snprintf(err, errlen, "The deployment was stopped.");
			return -ECANCELED;
		}
		int status = 0;
		char why[256] = "";
		int r = sw_driver_http_probe(p->driver, &q, &status, NULL, why, sizeof(why));
		if (r == 0 && status == expected) {
			sw_pl_log(p, "Health gate passed on try %u (%d).", i, status);
			return 0;
		}
		if (r == 0)
			snprintf(last, sizeof(last), "answered %d", status);
		else if (why[0] >= 'A' && why[0] <= 'Z') /* a sentence of the remote driver's own */
			snprintf(last, sizeof(last), "failed: %s", why);
		else
			snprintf(last, sizeof(last), "%s", why[0] ? why : strerror(-r));
		size_t n = strlen(last);
		while (n && last[n - 1] == '.')
			last[--n] = '\0';
		sw_pl_log(p, "Health check %u/%u: %s.", i, retries, last);
		if (r == -EOPNOTSUPP || r == -EINVAL || r == -ENOENT) {
			/* No try can pass: an agent without container.probe, a
			 * probe out of bounds, the server gone. */
			snprintf(err, errlen, "The health check could not be made (GET %s on port %u): %s.",
				 path, port, last);
			return -ETIMEDOUT;
		}
		char state[24];
		container_state(p, app_id, container, state);
		if (strcmp(state, "running") != 0 && strcmp(state, "unknown") != 0) {
			/* "restarting" too: it exited, and its restart policy runs it
			 * again; a version that crashes is not waited for. */
			snprintf(err, errlen, "The new version's container %s before it passed the health "
				 "check (GET %s on port %u: %s).", *state ? "exited" : "disappeared", path,
				 port, last);
			return -ECHILD;
		}
		if (i < retries && !sw_pl_sleep(p, SW_PL_HEALTH_INTERVAL_MS)) {
			snprintf(err, errlen, "The deployment was stopped.");
			return -ECANCELED;
		}
	}
	snprintf(err, errlen, "The new version did not pass the health check: GET %s on port %u %s "
		 "(expected %d) after %u tries.", path, port, last, expected, retries);
	return -ETIMEDOUT;
}
