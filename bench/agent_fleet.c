/* A fleet of agents speaking the agent protocol (docs/agent-protocol.md) over
 * plain WebSocket to one stewardd, on many sockets from one process: the
 * same framing (src/agent/ws.c) and message code (src/agent/protocol.c)
 * as steward-agent, none of its Docker or journal work. bench/agent_fleet.mjs
 * drives it and measures stewardd from outside (bench/METHODOLOGY.md).
 *
 *   bench_agent_fleet PORT TOKENS_FILE N HOLD_S MAX_S
 *
 * Connects N agents (one token a line), each from its own 127.1.x.y source
 * address shared by at most 50 (the per-address limit of /agent/connect is
 * 120 a minute), says hello offering protocols 1 to BENCH_PROTOCOL_MAX
 * (default SW_AGENT_PROTOCOL_MAX), then heartbeats as the welcome's
 * protocol says (1: answers the control plane's; 2: sends its own every
 * interval) and answers a
 * host.facts command at once. Prints "online <n> <ms>" once all are
 * welcomed, then holds HOLD_S seconds (0: until stdin closes). An agent
 * dropped reconnects as steward-agent does (sw_agent_backoff_ms: the
 * goaway hint, else 1 s to 60 s with full jitter). After the first drop,
 * each agent's time from its drop to its next welcome is recorded; once
 * every dropped agent is back (or MAX_S pass) it prints
 * "storm <n> p50 <ms> p99 <ms> max <ms>" and "accepts <per 500 ms ...>".
 * On exit: "heartbeats <n> commands <n>".
 *
 * BENCH_RTT="<conninfo>|<server id>|<count>": once all are online, count
 * no-op commands (host.facts) are issued one after another the way the
 * control plane issues them (an INSERT into agent_commands, whose trigger
 * notifies the replica holding the agent) and each is timed from before
 * the INSERT to the NOTIFY of its result (the agent's answer written by
 * the holder), after 20 not timed: "rtt <count> p50 <us> p99 <us> max <us>". */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <libpq-fe.h>
#include "steward/agent/daemon.h"
#include "steward/agent/protocol.h"
#include "steward/agent/ws.h"
#include "steward/base/buf.h"
#include "steward/base/limits.h"

enum st { IDLE, UPGRADING, OPEN };

struct agent {
	int fd;
	enum st st;
	unsigned idx;
	char token[64];
	struct sw_buf in;
	struct sw_ws_reader rd;
	struct sw_ws_out out;
	uint64_t retry_at;   /* IDLE: when to dial */
	uint64_t hint_ms;    /* a goaway's */
	uint64_t dropped_at; /* 0: not dropped since the storm began */
	unsigned attempt;
	bool welcomed;
	uint64_t protocol;   /* the welcome's */
	uint64_t hb_ms, hb_due, hb_seq; /* protocol 2: this agent's own heartbeats */
};

static struct agent *A;
static unsigned N;
static int ep;
static uint16_t port;
static unsigned online, heartbeats, commands;
static uint64_t protocol_max = SW_AGENT_PROTOCOL_MAX;
static uint64_t storm_start; /* the first drop */
static uint64_t *storm_ms;
static unsigned storm_n, storm_back;
#define BINS 240
static unsigned accepts[BINS]; /* welcomes per 500 ms after the first drop */

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static double unit(void)
{
	return (double)random() / ((double)RAND_MAX + 1.0);
}

static void flush(struct agent *a)
{
	while (a->out.buf.len) {
		ssize_t w = send(a->fd, a->out.buf.data, a->out.buf.len, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		sw_buf_consume(&a->out.buf, (size_t)w);
	}
}

static void send_msg(struct agent *a, const struct sw_agent_msg *m)
{
	struct sw_buf b = { 0 };
	if (sw_agent_msg_encode(&b, m) == 0)
		sw_ws_out_message(&a->out, SW_WS_OP_TEXT, b.data, b.len);
	sw_buf_release(&b);
	flush(a);
}

static void drop(struct agent *a, bool hinted)
{
	uint64_t t = now_ms();
	if (a->fd >= 0) {
		epoll_ctl(ep, EPOLL_CTL_DEL, a->fd, NULL);
		close(a->fd);
	}
	a->fd = -1;
	if (a->welcomed) {
		online--;
		if (!storm_start)
			storm_start = t;
		if (!a->dropped_at) {
			a->dropped_at = t;
			storm_n++;
		}
	}
	a->welcomed = false;
	a->st = IDLE;
	sw_buf_release(&a->in);
	sw_ws_reader_release(&a->rd);
	sw_ws_out_release(&a->out);
	a->retry_at = t + sw_agent_backoff_ms(hinted ? SW_AGENT_DROP_HINTED : SW_AGENT_DROP_NETWORK,
					      a->attempt, a->hint_ms, unit());
	if (a->attempt < 30)
		a->attempt++;
	a->hint_ms = 0;
}

static void dial(struct agent *a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		a->retry_at = now_ms() + 1000;
		return;
	}
	unsigned addr = a->idx / 50;
	struct sockaddr_in src = { .sin_family = AF_INET };
	src.sin_addr.s_addr = htonl((127u << 24) | (1u << 16) | ((addr / 250) << 8) | (addr % 250 + 1));
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) < 0 && errno != EINPROGRESS)) {
		close(fd);
		a->retry_at = now_ms() + 1000;
		return;
	}
	a->fd = fd;
	a->st = UPGRADING;
	sw_ws_reader_init(&a->rd, SW_WS_CLIENT, SW_AGENT_MAX_MESSAGE);
	sw_ws_out_init(&a->out, SW_WS_CLIENT, SW_AGENT_MAX_QUEUED_OUTPUT);
	char key[25];
	sw_ws_client_key(key);
	sw_buf_appendf(&a->out.buf,
		       "GET /agent/connect HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nUpgrade: websocket\r\n"
		       "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %s\r\n"
		       "x-agent-token: %s\r\n\r\n",
		       port, key, a->token);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.u32 = a->idx };
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static void hello(struct agent *a)
{
	char boot[40];
	snprintf(boot, sizeof(boot), "bench-boot-%u", a->idx);
	struct sw_agent_msg m = { .type = SW_AGENT_MSG_HELLO, .agent_version = SW_AGENT_VERSION,
				  .protocol_min = SW_AGENT_PROTOCOL_MIN,
				  .protocol_max = protocol_max, .boot_id = boot };
	m.host.os = "Linux";
	m.host.kernel = "6.1";
	m.host.arch = "x86_64";
	m.host.hostname = "bench";
	m.host.cores = 2;
	m.host.memory_bytes = 1u << 30;
	m.capabilities = json_pack("[s]", "host.facts");
	send_msg(a, &m);
	json_decref(m.capabilities);
}

static void on_message(struct agent *a, const char *text, size_t len)
{
	struct sw_agent_msg m;
	char err[128];
	if (sw_agent_msg_decode(text, len, &m, err, sizeof(err)) < 0)
		return;
	if (m.type == SW_AGENT_MSG_WELCOME && !a->welcomed) {
		a->welcomed = true;
		a->attempt = 0;
		a->protocol = m.protocol;
		a->hb_ms = m.heartbeat_ms;
		a->hb_due = now_ms() + m.heartbeat_ms;
		a->hb_seq = 0;
		online++;
		if (a->dropped_at) {
			uint64_t t = now_ms();
			storm_ms[storm_back++] = t - a->dropped_at;
			unsigned bin = (unsigned)((t - storm_start) / 500);
			accepts[bin < BINS ? bin : BINS - 1]++;
		}
	} else if (m.type == SW_AGENT_MSG_HEARTBEAT) {
		struct sw_agent_msg r = { .type = SW_AGENT_MSG_HEARTBEAT, .seq = m.seq };
		send_msg(a, &r);
		heartbeats++;
	} else if (m.type == SW_AGENT_MSG_COMMAND) {
		struct sw_agent_msg ack = { .type = SW_AGENT_MSG_ACK, .id = m.id };
		send_msg(a, &ack);
		struct sw_agent_msg r = { .type = SW_AGENT_MSG_RESULT, .id = m.id, .ok = true,
					  .result = json_pack("{s:s}", "hostname", "bench") };
		send_msg(a, &r);
		json_decref(r.result);
		commands++;
	} else if (m.type == SW_AGENT_MSG_GOAWAY) {
		a->hint_ms = m.retry_after_ms;
	}
	sw_agent_msg_release(&m);
}

static void on_readable(struct agent *a)
{
	char tmp[16384];
	bool eof = false; /* the frames that came before it are read first (a goaway) */
	for (;;) {
		ssize_t r = recv(a->fd, tmp, sizeof(tmp), 0);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
			eof = true;
			break;
		}
		if (r < 0)
			break;
		sw_buf_append(&a->in, tmp, (size_t)r);
	}
	if (a->st == UPGRADING) {
		char *end = a->in.len ? memmem(a->in.data, a->in.len, "\r\n\r\n", 4) : NULL;
		if (!end) {
			if (eof)
				drop(a, false);
			return;
		}
		if (a->in.len < 12 || memcmp(a->in.data, "HTTP/1.1 101", 12) != 0) {
			drop(a, false);
			return;
		}
		sw_buf_consume(&a->in, (size_t)(end + 4 - a->in.data));
		a->st = OPEN;
		hello(a);
	}
	while (a->in.len) {
		size_t used = 0;
		struct sw_ws_event ev;
		if (sw_ws_read(&a->rd, (const uint8_t *)a->in.data, a->in.len, &used, &ev) < 0) {
			drop(a, false);
			return;
		}
		sw_buf_consume(&a->in, used);
		if (ev.kind == SW_WS_MESSAGE) {
			on_message(a, (const char *)ev.data, ev.len);
		} else if (ev.kind == SW_WS_PING) {
			sw_ws_out_control(&a->out, SW_WS_OP_PONG, ev.data, ev.len);
			flush(a);
		} else if (ev.kind == SW_WS_CLOSE || ev.kind == SW_WS_ERROR) {
			drop(a, a->hint_ms != 0);
			return;
		} else if (ev.kind == SW_WS_NEED_MORE && !used) {
			break;
		}
	}
	if (eof)
		drop(a, a->hint_ms != 0);
}

/* Waits at most timeout_ms for the sockets and serves what is ready. */
static void events(int timeout_ms)
{
	struct epoll_event evs[512];
	int n = epoll_wait(ep, evs, 512, timeout_ms);
	for (int i = 0; i < n; i++) {
		struct agent *a = &A[evs[i].data.u32];
		if (a->fd < 0)
			continue;
		if (evs[i].events & EPOLLOUT) {
			flush(a);
			if (!a->out.buf.len) {
				struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u32 = a->idx };
				epoll_ctl(ep, EPOLL_CTL_MOD, a->fd, &ev);
			}
		}
		if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			on_readable(a);
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void events(int timeout_ms);

#define RTT_WARMUP 20

/* BENCH_RTT: see the top. 0, or 1 on a failure (said on stderr). */
static int rtt(const char *spec)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *server = strchr(buf, '|'), *count_s = server ? strchr(server + 1, '|') : NULL;
	if (!count_s) {
		fprintf(stderr, "BENCH_RTT must be <conninfo>|<server id>|<count>\n");
		return 1;
	}
	*server++ = '\0';
	*count_s++ = '\0';
	unsigned count = (unsigned)atoi(count_s);
	PGconn *pg = PQconnectdb(buf);
	if (PQstatus(pg) != CONNECTION_OK) {
		fprintf(stderr, "rtt: %s", PQerrorMessage(pg));
		return 1;
	}
	PQclear(PQexec(pg, "LISTEN steward_agent"));
	uint64_t *us = calloc(count, sizeof(*us));
	/* The first RTT_WARMUP are not timed: the holder's statements are
	 * prepared on their first use. */
	for (unsigned i = 0; us && i < count + RTT_WARMUP; i++) {
		const char *params[] = { server };
		uint64_t t0 = now_us();
		PGresult *res = PQexecParams(pg,
			"INSERT INTO agent_commands (organization_id, server_id, kind, expires_at)"
			" SELECT organization_id, id, 'host.facts', now() + interval '1 minute'"
			" FROM servers WHERE id = $1::uuid RETURNING id", 1, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
			fprintf(stderr, "rtt: insert: %s", PQerrorMessage(pg));
			PQclear(res);
			return 1;
		}
		char want[64];
		snprintf(want, sizeof(want), "result:%s", PQgetvalue(res, 0, 0));
		PQclear(res);
		bool done = false;
		while (!done) {
			if (now_us() - t0 > 10 * 1000000ull) {
				fprintf(stderr, "rtt: no answer within 10 s\n");
				return 1;
			}
			/* Sleeps on both the agents and the database: no spinning
			 * on a machine whose cores stewardd and PostgreSQL share. */
			struct pollfd p[2] = { { .fd = PQsocket(pg), .events = POLLIN },
					       { .fd = ep, .events = POLLIN } };
			poll(p, 2, 100);
			if (p[1].revents & POLLIN)
				events(0);
			if (p[0].revents & POLLIN) {
				PQconsumeInput(pg);
				PGnotify *nf;
				while ((nf = PQnotifies(pg))) {
					done = done || strcmp(nf->extra, want) == 0;
					PQfreemem(nf);
				}
			}
		}
		if (i >= RTT_WARMUP)
			us[i - RTT_WARMUP] = now_us() - t0;
	}
	qsort(us, count, sizeof(*us), cmp_u64);
	printf("rtt %u p50 %llu p99 %llu max %llu\n", count, (unsigned long long)us[count / 2],
	       (unsigned long long)us[(count * 99) / 100], (unsigned long long)us[count - 1]);
	fflush(stdout);
	free(us);
	PQfinish(pg);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s PORT TOKENS_FILE N HOLD_S MAX_S\n", argv[0]);
		return 2;
	}
	port = (uint16_t)atoi(argv[1]);
	const char *pmax = getenv("BENCH_PROTOCOL_MAX");
	if (pmax)
		protocol_max = strtoull(pmax, NULL, 10);
	N = (unsigned)atoi(argv[3]);
	unsigned hold_s = (unsigned)atoi(argv[4]), max_s = (unsigned)atoi(argv[5]);
	struct rlimit rl = { N + 64, N + 64 };
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		perror("setrlimit RLIMIT_NOFILE");
		return 1;
	}
	FILE *f = fopen(argv[2], "r");
	A = calloc(N, sizeof(*A));
	storm_ms = calloc(N, sizeof(*storm_ms));
	if (!f || !A || !storm_ms)
		return 1;
	for (unsigned i = 0; i < N; i++) {
		if (!fgets(A[i].token, sizeof(A[i].token), f)) {
			fprintf(stderr, "fewer than %u tokens\n", N);
			return 1;
		}
		A[i].token[strcspn(A[i].token, "\r\n")] = '\0';
		A[i].idx = i;
		A[i].fd = -1;
		A[i].retry_at = 0;
	}
	fclose(f);
	srandom((unsigned)getpid());
	ep = epoll_create1(EPOLL_CLOEXEC);
	uint64_t t0 = now_ms(), end = 0, deadline = t0 + (uint64_t)max_s * 1000;
	bool all_printed = false, storm_printed = false;
	unsigned dialing = 0; /* a cap on dials per turn: the listen backlog */
	for (;;) {
		uint64_t t = now_ms();
		dialing = 0;
		for (unsigned i = 0; i < N; i++) {
			struct agent *a = &A[i];
			if (a->st == IDLE && a->retry_at <= t && dialing < 256) {
				dial(a);
				dialing++;
			} else if (a->st == OPEN && a->welcomed &&
				   a->protocol >= SW_AGENT_PROTOCOL_AGENT_BEATS && a->hb_due <= t) {
				struct sw_agent_msg hb = { .type = SW_AGENT_MSG_HEARTBEAT,
							   .seq = ++a->hb_seq };
				send_msg(a, &hb);
				a->hb_due = t + a->hb_ms;
				heartbeats++;
			}
		}
		events(20);
		t = now_ms();
		if (!all_printed && online == N) {
			printf("online %u %llu\n", N, (unsigned long long)(t - t0));
			fflush(stdout);
			all_printed = true;
			end = hold_s ? t + (uint64_t)hold_s * 1000 : 0;
			const char *spec = getenv("BENCH_RTT");
			if (spec && rtt(spec))
				return 1;
		}
		if (storm_n && !storm_printed && storm_back == storm_n && online == N) {
			qsort(storm_ms, storm_back, sizeof(*storm_ms), cmp_u64);
			printf("storm %u p50 %llu p99 %llu max %llu\naccepts", storm_back,
			       (unsigned long long)storm_ms[storm_back / 2],
			       (unsigned long long)storm_ms[(storm_back * 99) / 100],
			       (unsigned long long)storm_ms[storm_back - 1]);
			unsigned last = BINS;
			while (last > 0 && !accepts[last - 1])
				last--;
			for (unsigned b = 0; b < last; b++)
				printf(" %u", accepts[b]);
			printf("\n");
			fflush(stdout);
			storm_printed = true;
		}
		if (all_printed && end && t >= end && (!storm_n || storm_printed))
			break;
		if (all_printed && !end) {
			struct pollfd p = { .fd = 0, .events = POLLIN };
			char c;
			if (poll(&p, 1, 0) == 1 && read(0, &c, 1) <= 0)
				break;
		}
		if (t > deadline) {
			fprintf(stderr, "bench_agent_fleet: %u of %u online, %u of %u back after %u s\n", online, N,
				storm_back, storm_n, max_s);
			break;
		}
	}
	printf("heartbeats %u commands %u\n", heartbeats, commands);
	return 0;
}
