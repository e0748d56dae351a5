/* The HTTP probe (steward/driver/driver.h): the health gate's GET, made on
 * the server the driver drives. A local driver makes it here: a plain
 * HTTP/1.1 GET on the loopback (containers run with host networking and
 * listen on $PORT), one request bounded by the timeout for connecting,
 * sending and reading the status line. A remote driver hands it to the
 * server's agent (container.probe), whose executor calls this same code on
 * its own local driver (agent_exec.c), so the request never leaves the
 * server it is about. The bounds (loopback host, port, path, timeout) are
 * sw_agent_probe_valid()'s, on both sides of the channel. A BLUE_GREEN
 * colour's free port is found the same way: here, or by the agent's
 * port.free on the server that runs the container. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "steward/agent/protocol.h"
#include "driver/driver_internal.h"

#define PROBE_READ_MAX 512 /* the status line is in the first bytes */

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

/* One GET on the loopback: the answer's status into *ret_status; 0 or -errno. */
static int http_status(bool v6, unsigned port, const char *path, unsigned timeout_s, int *ret_status)
{
	int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	const struct sockaddr *a = v6 ? (const struct sockaddr *)&a6 : (const struct sockaddr *)&a4;
	socklen_t alen = v6 ? sizeof(a6) : sizeof(a4);
	int r = 0;
	char buf[PROBE_READ_MAX + 1];
	if (connect(fd, a, alen) < 0) {
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
			 "GET %s HTTP/1.1\r\nHost: %s:%u\r\nUser-Agent: steward-health-check\r\n"
			 "Accept: */*\r\nConnection: close\r\n\r\n", path, v6 ? "[::1]" : "127.0.0.1", port);
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
	while (got < PROBE_READ_MAX && !memchr(buf, '\n', got)) {
		ssize_t m = recv(fd, buf + got, PROBE_READ_MAX - got, 0);
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

static const char *probe_why(int r)
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
		return strerror(-r);
	}
}

int sw_driver_free_port(struct sw_driver *d, unsigned *ret_port, char *err, size_t errlen)
{
	if (d && d->remote)
		return d->rops->free_port(d, ret_port, err, errlen);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int r = -errno;
		snprintf(err, errlen, "no socket for a port: %s", strerror(-r));
		return r;
	}
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int r = 0;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		r = -errno;
	close(fd);
	if (r) {
		snprintf(err, errlen, "no free port on 127.0.0.1: %s", strerror(-r));
		return r;
	}
	*ret_port = ntohs(a.sin_port);
	return 0;
}

int sw_driver_http_probe(struct sw_driver *d, const struct sw_http_probe *q, int *ret_status,
			 uint64_t *ret_ms, char *err, size_t errlen)
{
	if (ret_ms)
		*ret_ms = 0;
	if (!sw_agent_probe_valid(q->host, q->port, q->path, q->timeout_s, err, errlen))
		return -EINVAL;
	if (d && d->remote) /* no driver (the pipeline's unit test): the probe is local */
		return d->rops->http_probe(d, q, ret_status, ret_ms, err, errlen);
	int64_t t0 = now_ms();
	int r = http_status(q->host && strcmp(q->host, "::1") == 0, q->port, q->path, q->timeout_s, ret_status);
	if (ret_ms)
		*ret_ms = (uint64_t)(now_ms() - t0);
	if (r)
		snprintf(err, errlen, "%s", probe_why(r));
	return r;
}
