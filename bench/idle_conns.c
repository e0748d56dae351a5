/* bench_idle_conns: opens N keep-alive connections to an HTTP server,
 * sends one `GET /health` on each and reads its response, then holds them
 * all open so that bench/run can read the server's RSS, and finally checks
 * that the server kept every one of them open.
 *
 * Usage: bench_idle_conns [-n N] [-s SOURCES] [-t HOLD_S] [-p PATH] HOST PORT
 *   -n  connections (default 10000, at most MAX_CONNS)
 *   -s  spread connections over source addresses 127.0.0.1 .. 127.0.0.SOURCES
 *       (default 1; more only matters past ~28,000 connections per source)
 *   -t  seconds to hold them all open (default 5)
 *   -p  request path (default /health)
 *
 * Output, one line each, flushed as they happen:
 *   connected N in MS ms         all requests answered
 *   ready N                      bench/run reads the server's RSS from here on
 *   held N closed_by_server M    after the hold
 * Exit status: 0 if every connection got a 2xx and none was closed during
 * the hold; 1 on any failure (message on stderr); 2 on bad usage.
 *
 * Connections are opened one after another, each answered before the next
 * is opened: the server's accept queue never overflows, and the count
 * reached is exact. On loopback 10,000 take well under a second. Plain
 * blocking sockets with receive/send timeouts: this links nothing of ours,
 * so it measures the server, not our own client code. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 200000
#define MAX_SOURCES 250
#define MAX_HOLD_S 3600
#define IO_TIMEOUT_S 10
#define RESPONSE_BUF 8192
#define FD_HEADROOM 32 /* stdio and whatever else this process has open */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int parse_uint(const char *s, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v > max || s[0] == '-')
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Raises the soft open-file limit as far as the hard limit allows; returns
 * the limit in force. */
static unsigned long raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	return (unsigned long)rl.rlim_cur;
}

/* Finds the end of the head (offset after CRLFCRLF) or returns 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (buf[i - 3] == '\r' && buf[i - 2] == '\n' && buf[i - 1] == '\r' && buf[i] == '\n')
			return i + 1;
	return 0;
}

/* Content-Length of a response head, or -1 if absent or malformed. */
static long content_length(const char *head, size_t len)
{
	static const char name[] = "\r\ncontent-length:";
	size_t nlen = sizeof(name) - 1;

	for (size_t i = 0; i + nlen < len; i++) {
		if (strncasecmp(head + i, name, nlen) != 0)
			continue;
		size_t j = i + nlen;
		long v = 0;
		bool any = false;

		while (j < len && (head[j] == ' ' || head[j] == '\t'))
			j++;
		while (j < len && head[j] >= '0' && head[j] <= '9') {
			if (v > 100000000L)
				return -1;
			v = v * 10 + (head[j] - '0');
			any = true;
			j++;
		}
		return any ? v : -1;
	}
	return -1;
}

/* Reads one whole response on fd; returns its status code or -errno
 * (-EPROTO for an unreadable response, -ECONNRESET if the server closed). */
static int read_response(int fd)
{
	char buf[RESPONSE_BUF];
	size_t have = 0, hend = 0;
	long clen = -1;

	for (;;) {
		if (have == sizeof(buf))
			return -EPROTO;
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		have += (size_t)n;
		if (hend == 0) {
			hend = head_end(buf, have);
			if (hend == 0)
				continue;
			clen = content_length(buf, hend);
			if (clen < 0 || have < 12 || memcmp(buf, "HTTP/1.", 7) != 0)
				return -EPROTO;
		}
		if (have >= hend + (size_t)clen)
			break;
	}
	if (have != hend + (size_t)clen)
		return -EPROTO; /* more than one response: not what we sent */
	return (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Opens one connection from source index src, sends the request and reads
 * the answer. Returns the fd or -errno; *status gets the response status. */
static int open_one(const struct sockaddr_in *dst, unsigned src, const char *req,
		    size_t reqlen, int *status)
{
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	int fd, r, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
		r = -errno;
		goto fail;
	}
	if (src > 0) {
		struct sockaddr_in sa = { .sin_family = AF_INET };

		sa.sin_addr.s_addr = htonl(0x7f000001u + src);
		(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
			r = -errno;
			goto fail;
		}
	}
	if (connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) != 0) {
		r = -errno;
		goto fail;
	}
	r = write_all(fd, req, reqlen);
	if (r < 0)
		goto fail;
	r = read_response(fd);
	if (r < 0)
		goto fail;
	*status = r;
	return fd;
fail:
	close(fd);
	return r;
}

/* True if the peer has closed (or reset) fd, or sent something unasked. */
static bool peer_gone(const struct pollfd *p)
{
	return (p->revents & (POLLIN | POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_idle_conns [-n N] [-s SOURCES] [-t HOLD_S] [-p PATH] HOST PORT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long n = 10000, sources = 1, hold = 5, port, limit;
	const char *path = "/health";
	struct sockaddr_in dst = { .sin_family = AF_INET };
	char req[512];
	int *fds = NULL;
	struct pollfd *pfds = NULL;
	unsigned long opened = 0, closed = 0;
	int c, reqlen, ret = 1;
	double t0;

	while ((c = getopt(argc, argv, "n:s:t:p:")) != -1) {
		switch (c) {
		case 'n':
			if (parse_uint(optarg, MAX_CONNS, &n) != 0 || n == 0)
				usage();
			break;
		case 's':
			if (parse_uint(optarg, MAX_SOURCES, &sources) != 0 || sources == 0)
				usage();
			break;
		case 't':
			if (parse_uint(optarg, MAX_HOLD_S, &hold) != 0)
				usage();
			break;
		case 'p':
			path = optarg;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || parse_uint(argv[optind + 1], 65535, &port) != 0 || port == 0)
		usage();
	if (inet_pton(AF_INET, argv[optind], &dst.sin_addr) != 1) {
		fprintf(stderr, "bench_idle_conns: HOST must be a numeric IPv4 address\n");
		return 2;
	}
	dst.sin_port = htons((uint16_t)port);
	if (path[0] != '/' || strpbrk(path, " \r\n") != NULL)
		usage();
	reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	if (reqlen < 0 || (size_t)reqlen >= sizeof(req))
		usage();

	limit = raise_nofile();
	if (n + FD_HEADROOM > limit) {
		fprintf(stderr, "bench_idle_conns: %lu connections need more open files than the limit (%lu)\n",
			n, limit);
		return 1;
	}
	/* A server that closes a connection must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);

	fds = calloc(n, sizeof(*fds));
	pfds = calloc(n, sizeof(*pfds));
	if (fds == NULL || pfds == NULL) {
		fprintf(stderr, "bench_idle_conns: out of memory\n");
		goto cleanup;
	}

	t0 = now_ms();
	for (opened = 0; opened < n; opened++) {
		int status = 0;
		int fd = open_one(&dst, sources > 1 ? (unsigned)(opened % sources) : 0, req,
				  (size_t)reqlen, &status);

		if (fd < 0) {
			fprintf(stderr, "bench_idle_conns: connection %lu: %s\n", opened + 1,
				fd == -EPROTO ? "unreadable response" : strerror(-fd));
			goto cleanup;
		}
		fds[opened] = fd;
		if (status < 200 || status > 299) {
			fprintf(stderr, "bench_idle_conns: connection %lu: status %d\n", opened + 1, status);
			opened++;
			goto cleanup;
		}
	}
	printf("connected %lu in %.0f ms\n", opened, now_ms() - t0);
	printf("ready %lu\n", opened);
	fflush(stdout);

	sleep((unsigned)hold);

	for (unsigned long i = 0; i < n; i++)
		pfds[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN | POLLRDHUP };
	if (poll(pfds, (nfds_t)n, 0) < 0) {
		fprintf(stderr, "bench_idle_conns: poll: %s\n", strerror(errno));
		goto cleanup;
	}
	for (unsigned long i = 0; i < n; i++)
		closed += peer_gone(&pfds[i]);
	printf("held %lu closed_by_server %lu\n", n - closed, closed);
	fflush(stdout);
	ret = closed == 0 ? 0 : 1;
cleanup:
	for (unsigned long i = 0; i < opened; i++)
		close(fds[i]);
	free(pfds);
	free(fds);
	return ret;
}
