/* The local driver: the control plane's own host (steward/driver/driver.h).
 *
 * Its settings come from the environment, as the rest of Steward's do
 * (src/base/config.c reads and checks the first two at start-up too):
 *   DOCKER_HOST        unix:///var/run/docker.sock (only unix:// sockets)
 *   CADDY_ADMIN_URL    http://127.0.0.1:2019
 *   CADDY_HTTP_LISTEN  ":80": the listen addresses of the Caddy server
 *                      "steward" when the driver has to create it (a
 *                      comma-separated list, e.g. ":80,:443"); Caddy's own
 *                      configuration, so an existing server keeps its own
 *   HOST_PROC_PATH     /proc (the host's, when Steward runs in a container)
 * The driver holds nothing but these strings, so one driver serves every
 * runner thread at once. Images and containers: docker.c; ingress:
 * caddy.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver/driver_internal.h"

static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v && *v ? v : fallback;
}

struct sw_driver *sw_driver_local_new(void)
{
	const char *docker = env_or("DOCKER_HOST", "unix:///var/run/docker.sock");
	const char *admin = env_or("CADDY_ADMIN_URL", "http://127.0.0.1:2019");
	const char *listen = env_or("CADDY_HTTP_LISTEN", ":80");
	const char *proc = env_or("HOST_PROC_PATH", "/proc");
	if (strncmp(docker, "unix://", 7) != 0 || docker[7] != '/') {
		errno = EINVAL;
		return NULL;
	}
	struct sw_driver *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	size_t admin_len = strlen(admin);
	while (admin_len > 0 && admin[admin_len - 1] == '/')
		admin_len--;
	if (strlen(docker + 7) >= sizeof(d->docker_socket) || admin_len >= sizeof(d->caddy_admin) ||
	    strlen(listen) >= sizeof(d->caddy_listen) || strlen(proc) >= sizeof(d->proc_path)) {
		free(d);
		errno = ENAMETOOLONG;
		return NULL;
	}
	snprintf(d->docker_socket, sizeof(d->docker_socket), "%s", docker + 7);
	snprintf(d->caddy_admin, sizeof(d->caddy_admin), "%.*s", (int)admin_len, admin);
	snprintf(d->caddy_listen, sizeof(d->caddy_listen), "%s", listen);
	snprintf(d->proc_path, sizeof(d->proc_path), "%s", proc);
	return d;
}

void sw_driver_free(struct sw_driver *d)
{
	if (d && d->remote)
		d->rops->free(d->remote);
	free(d);
}

int sw_rd_unavailable(const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s on a remote server is not available yet.", what);
	return -EOPNOTSUPP;
}

int sw_driver_memory_available(struct sw_driver *d, uint64_t *ret_bytes)
{
	if (d->remote)
		return sw_rd_memory_available(d, ret_bytes);
	char path[sizeof(d->proc_path) + 16];
	snprintf(path, sizeof(path), "%s/meminfo", d->proc_path);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char line[256];
	int rc = -ENODATA;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kib;
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
			*ret_bytes = (uint64_t)kib * 1024;
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}
