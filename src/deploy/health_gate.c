/* The health gate of a new version, and the free port a BLUE_GREEN colour
 * listens on.
 *
 * The gate is a plain HTTP/1.1 GET on 127.0.0.1 (containers run with host
 * networking and listen on $PORT): one request per try, each bounded by
 * the application's healthCheckTimeoutSeconds for connecting, sending and
 * reading the status line, a try every second, healthCheckRetries tries.
 * Success is exactly the application's healthCheckExpectedStatus. Between
 * failed tries the container is looked up: one that exited fails the gate
 * at once ("the container exited"), rather than after every retry. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "deploy/pipeline_internal.h"

#define SW_PL_HEALTH_INTERVAL_MS 1000
#define SW_PL_HEALTH_READ_MAX 512 /* the status line is in the first bytes */

int sw_pl_free_port(unsigned *ret_port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int r = 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		r = -errno;
	close(fd);
	if (r)
		return r;
	*ret_port = ntohs(a.sin_port);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until the deadline: 0, or -ETIMEDOUT. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = { fd, events, 0 };
		int n = poll(&pfd, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* One GET: the answer's status into *ret_status; 0 or -errno. */
static int http_status(unsigned port, const char *path, unsigned timeout_s, int *ret_status)
{
	int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int r = 0;
	char buf[SW_PL_HEALTH_READ_MAX + 1];
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		if (errno != EINPROGRESS) {
			r = -errno;
			goto out;
		}
		if ((r = wait_fd(fd, POLLOUT, deadline)) != 0)
			goto out;
		int so = 0;
		socklen_t sl = sizeof(so);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &sl) < 0 || so) {
			r = so ? -so : -errno;
			goto out;
		}
	}
	int n = snprintf(buf, sizeof(buf),
			 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUser-Agent: steward-health-check\r\n"
			 "Accept: */*\r\nConnection: close\r\n\r\n", path, port);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		r = -ENAMETOOLONG;
		goto out;
	}
	for (size_t sent = 0; sent < (size_t)n;) {
		ssize_t w = send(fd, buf + sent, (size_t)n - sent, MSG_NOSIGNAL);
		if (w > 0) {
			sent += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if ((r = wait_fd(fd, POLLOUT, deadline)) != 0)
			goto out;
	}
	size_t got = 0;
	while (got < SW_PL_HEALTH_READ_MAX && !memchr(buf, '\n', got)) {
		ssize_t m = recv(fd, buf + got, SW_PL_HEALTH_READ_MAX - got, 0);
		if (m > 0) {
			got += (size_t)m;
			continue;
		}
		if (m == 0) {
			r = -ECONNRESET;
			goto out;
		}
		if (errno != EAGAIN && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if ((r = wait_fd(fd, POLLIN, deadline)) != 0)
			goto out;
	}
	buf[got] = '\0';
	int status = 0;
	if (sscanf(buf, "HTTP/1.%*1[01] %3d", &status) != 1 || status < 100 || status > 599) {
		r = -EPROTO;
		goto out;
	}
	*ret_status = status;
out:
	close(fd);
	return r;
}

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

static const char *why(int r, char *buf, size_t cap)
{
	switch (r) {
	case -ECONNREFUSED:
		return "the connection was refused";
	case -ETIMEDOUT:
		return "no answer within the timeout";
	case -ECONNRESET:
		return "the connection was closed without an answer";
	case -EPROTO:
		return "the answer was not HTTP";
	default:
		snprintf(buf, cap, "%s", strerror(-r));
		return buf;
	}
}

int sw_pl_health_gate(struct sw_pl *p, unsigned port, const char *path, int expected,
		      unsigned timeout_s, unsigned retries, const char *app_id,
		      const char *container, char *err, size_t errlen)
{
	char last[128] = "no try was made", tmp[64];
	sw_pl_log(p, "Health gate: GET %s on port %u, expecting %d, %u tries of %u s each.", path, port,
		  expected, retries, timeout_s);
	for (unsigned i = 1; i <= retries; i++) {
		if (sw_pl_stopping(p)) {
			snprintf(err, errlen, "The deployment was stopped.");
			return -ECANCELED;
		}
		int status = 0, r = http_status(port, path, timeout_s, &status);
		if (r == 0 && status == expected) {
			sw_pl_log(p, "Health gate passed on try %u (%d).", i, status);
			return 0;
		}
		if (r == 0)
			snprintf(last, sizeof(last), "answered %d", status);
		else
			snprintf(last, sizeof(last), "%s", why(r, tmp, sizeof(tmp)));
		sw_pl_log(p, "Health check %u/%u: %s.", i, retries, last);
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
