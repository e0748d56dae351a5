/* The agent's loop (src/agent/daemon.c) with an executor, against a
 * control plane written here on the frame layer: a command is
 * acknowledged and run once, its resend (on the same connection and after
 * a reconnect) is answered from the journal without running again, and
 * the hello announces exactly the executor's kinds. The heartbeats: in
 * protocol 2 the agent sends its own and stays on a silent control plane,
 * but leaves one whose host stops acknowledging (TCP_USER_TIMEOUT; in a
 * network namespace of its own whose loopback is taken down, when this
 * runs as root); in protocol 1 it echoes the control plane's. A cancel
 * for a command whose input is still arriving ends it CANCELLED, never run. */
#include <arpa/inet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include "steward/agent/daemon.h"
#include "steward/agent/ws.h"
#include "steward/base/limits.h"
#include "scratch_dir.h"
#include "test_help.h"

TEST_MAIN()

#define TOKEN "sta_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static int runs;
static volatile int stop;

static void run_sample(void *arg, const struct sw_agent_msg *cmd, struct sw_agent_outcome *out)
{
	(void)arg;
	(void)cmd;
	runs++;
	out->ok = true;
	out->result = json_pack("{s:i}", "run", runs);
}

struct agent_arg {
	const struct sw_agent_config *c;
	volatile int *stop;
	const struct sw_agent_executor *exec; /* NULL: metrics.sample by run_sample */
};

static void *agent_thread(void *p)
{
	static const struct sw_agent_executor sample = {
		.run = run_sample, .kinds = SW_AGENT_KIND_BIT(SW_AGENT_CMD_METRICS_SAMPLE)
	};
	const struct agent_arg *a = p;
	sw_agent_run(a->c, a->exec ? a->exec : &sample, a->stop);
	return NULL;
}

/* A listening socket on 127.0.0.1 for the control plane written here, and
 * an agent configuration that dials it (data in a scratch dir named
 * dir); -1 if it cannot listen. */
static int control_plane(struct sw_agent_config *c, const char *dir)
{
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 4) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) != 0)
		return -1;
	memset(c, 0, sizeof(*c));
	snprintf(c->host, sizeof(c->host), "127.0.0.1");
	snprintf(c->port, sizeof(c->port), "%d", ntohs(a.sin_port));
	snprintf(c->path, sizeof(c->path), "/agent/connect");
	snprintf(c->token, sizeof(c->token), TOKEN);
	snprintf(c->proc_path, sizeof(c->proc_path), "/proc");
	snprintf(c->sys_path, sizeof(c->sys_path), "/sys");
	snprintf(c->root_path, sizeof(c->root_path), "/");
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", scratch_dir(dir));
	return lfd;
}

/* One accepted agent connection, seen from the control plane. */
struct peer {
	int fd;
	struct sw_buf in;
	struct sw_ws_reader r;
	char head[2048];
};

static bool peer_accept(int lfd, struct peer *p)
{
	memset(p, 0, sizeof(*p));
	struct timeval tv = { 10, 0 };
	setsockopt(lfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	p->fd = accept(lfd, NULL, NULL);
	if (p->fd < 0)
		return false;
	setsockopt(p->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	sw_ws_reader_init(&p->r, SW_WS_SERVER, SW_AGENT_MAX_MESSAGE);
	size_t len = 0;
	while (!strstr(p->head, "\r\n\r\n")) {
		ssize_t n = recv(p->fd, p->head + len, sizeof(p->head) - 1 - len, 0);
		if (n <= 0)
			return false;
		len += (size_t)n;
		p->head[len] = '\0';
	}
	char *key = strcasestr(p->head, "\r\nSec-WebSocket-Key: ");
	char accept[29], resp[200];
	if (!key || sw_ws_accept_key(sw_str_from(key + 21, 24), accept) < 0)
		return false;
	int n = snprintf(resp, sizeof(resp), "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", accept);
	return send(p->fd, resp, (size_t)n, MSG_NOSIGNAL) == n;
}

static void peer_send(struct peer *p, const char *text)
{
	struct sw_buf b = { 0 };
	if (sw_ws_frame_append(&b, SW_WS_OP_TEXT, true, text, strlen(text), NULL) == 0)
		send(p->fd, b.data, b.len, MSG_NOSIGNAL);
	sw_buf_release(&b);
}

/* The next text message, decoded; false on a timeout or a close. */
static bool peer_next(struct peer *p, struct sw_agent_msg *m)
{
	for (;;) {
		size_t used;
		struct sw_ws_event ev;
		if (sw_ws_read(&p->r, (const uint8_t *)p->in.data, p->in.len, &used, &ev) < 0)
			return false;
		if (ev.kind == SW_WS_MESSAGE) {
			char err[256];
			int rc = sw_agent_msg_decode((const char *)ev.data, ev.len, m, err, sizeof(err));
			sw_buf_consume(&p->in, used);
			return rc == 0;
		}
		sw_buf_consume(&p->in, used);
		if (ev.kind == SW_WS_CLOSE || ev.kind == SW_WS_ERROR)
			return false;
		if (used)
			continue;
		if (sw_buf_reserve(&p->in, 4096) < 0)
			return false;
		ssize_t n = recv(p->fd, p->in.data + p->in.len, p->in.cap - p->in.len, 0);
		if (n <= 0)
			return false;
		p->in.len += (size_t)n;
	}
}

static void peer_close(struct peer *p)
{
	close(p->fd);
	sw_buf_release(&p->in);
	sw_ws_reader_release(&p->r);
}

/* Reads the hello and answers with a welcome. */
static bool greet(int *sw_failed_, struct peer *p)
{
	struct sw_agent_msg m;
	if (!peer_next(p, &m))
		return false;
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_HELLO);
	CHECK_INT_EQ(json_array_size(m.capabilities), 1);
	CHECK_STR_EQ(json_string_value(json_array_get(m.capabilities, 0)), "metrics.sample");
	sw_agent_msg_release(&m);
	peer_send(p, "{\"type\":\"welcome\",\"connectionId\":\"t\",\"protocol\":1,\"heartbeatMs\":5000}");
	return true;
}

/* Reads the hello (offering 1 to 2) and welcomes it with protocol 2 and
 * that heartbeat interval. */
static bool welcome_2(int *sw_failed_, struct peer *p, unsigned heartbeat_ms)
{
	struct sw_agent_msg m;
	if (!peer_next(p, &m))
		return false;
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_HELLO);
	CHECK_INT_EQ(m.protocol_min, 1);
	CHECK_INT_EQ(m.protocol_max, 2);
	sw_agent_msg_release(&m);
	char welcome[128];
	snprintf(welcome, sizeof(welcome),
		 "{\"type\":\"welcome\",\"connectionId\":\"t\",\"protocol\":2,\"heartbeatMs\":%u}", heartbeat_ms);
	peer_send(p, welcome);
	return true;
}

TEST(a_command_runs_once_across_resends_and_reconnects)
{
	struct sw_agent_config c;
	int lfd = control_plane(&c, "sw-agent-daemon");
	REQUIRE(lfd >= 0);
	struct agent_arg arg = { &c, &stop };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, agent_thread, &arg) == 0);

	struct peer p;
	REQUIRE(peer_accept(lfd, &p));
	CHECK(strstr(p.head, "GET /agent/connect HTTP/1.1\r\n") == p.head);
	CHECK(strstr(p.head, "\r\nx-agent-token: " TOKEN "\r\n") != NULL);
	REQUIRE(greet(sw_failed_, &p));
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "{\"type\":\"command\",\"id\":\"s-1\",\"kind\":\"metrics.sample\",\"expiresAt\":%llu,\"payload\":{}}",
		 (unsigned long long)sw_wall_ms() + 60000);
	peer_send(&p, cmd);
	struct sw_agent_msg m;
	REQUIRE(peer_next(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_ACK);
	CHECK_STR_EQ(m.id, "s-1");
	sw_agent_msg_release(&m);
	REQUIRE(peer_next(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_RESULT);
	CHECK(m.ok);
	CHECK_INT_EQ(json_integer_value(json_object_get(m.result, "run")), 1);
	sw_agent_msg_release(&m);
	/* Resent on the same connection: the same result, no ack, no run. */
	peer_send(&p, cmd);
	REQUIRE(peer_next(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_RESULT);
	CHECK_INT_EQ(json_integer_value(json_object_get(m.result, "run")), 1);
	sw_agent_msg_release(&m);
	/* A kind the executor does not run: NOT_AVAILABLE, never run. */
	snprintf(cmd + 0, sizeof(cmd), "{\"type\":\"command\",\"id\":\"s-2\",\"kind\":\"container.list\",\"expiresAt\":%llu,\"payload\":{}}",
		 (unsigned long long)sw_wall_ms() + 60000);
	peer_send(&p, cmd);
	REQUIRE(peer_next(&p, &m));
	CHECK(!m.ok);
	CHECK_STR_EQ(m.error_code, "NOT_AVAILABLE");
	sw_agent_msg_release(&m);
	/* Dropped: the agent dials again, and the resend is still answered
	 * from the journal. */
	peer_close(&p);
	REQUIRE(peer_accept(lfd, &p));
	REQUIRE(greet(sw_failed_, &p));
	snprintf(cmd, sizeof(cmd), "{\"type\":\"command\",\"id\":\"s-1\",\"kind\":\"metrics.sample\",\"expiresAt\":%llu,\"payload\":{}}",
		 (unsigned long long)sw_wall_ms() + 60000);
	peer_send(&p, cmd);
	REQUIRE(peer_next(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_RESULT);
	CHECK_INT_EQ(json_integer_value(json_object_get(m.result, "run")), 1);
	sw_agent_msg_release(&m);
	CHECK_INT_EQ(runs, 1);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	peer_close(&p);
	close(lfd);
}

static volatile int stop2;

TEST(heartbeats_protocol_2_the_agent_sends_them_protocol_1_it_echoes)
{
	struct sw_agent_config c;
	int lfd = control_plane(&c, "sw-agent-daemon-hb");
	REQUIRE(lfd >= 0);
	struct agent_arg arg = { &c, &stop2 };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, agent_thread, &arg) == 0);

	/* Protocol 2: the hello offers 1 to 2; welcomed with 2 and a 100 ms
	 * interval, the agent sends heartbeats 1, 2, 3, ... on one connection
	 * while this control plane sends nothing: eight of them span more
	 * than the three silent intervals that end a protocol 1 session. */
	struct peer p;
	REQUIRE(peer_accept(lfd, &p));
	REQUIRE(welcome_2(sw_failed_, &p, 100));
	struct sw_agent_msg m;
	for (uint64_t seq = 1; seq <= 8; seq++) {
		REQUIRE(peer_next(&p, &m));
		CHECK_INT_EQ(m.type, SW_AGENT_MSG_HEARTBEAT);
		CHECK_INT_EQ(m.seq, seq);
		sw_agent_msg_release(&m);
	}
	peer_close(&p);

	/* Protocol 1 (a control plane that speaks only 1): the agent sends
	 * none of its own and echoes the control plane's seq. */
	REQUIRE(peer_accept(lfd, &p));
	REQUIRE(peer_next(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_HELLO);
	sw_agent_msg_release(&m);
	peer_send(&p, "{\"type\":\"welcome\",\"connectionId\":\"t\",\"protocol\":1,\"heartbeatMs\":5000}");
	peer_send(&p, "{\"type\":\"heartbeat\",\"seq\":7}");
	REQUIRE(peer_next(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_HEARTBEAT);
	CHECK_INT_EQ(m.seq, 7);
	sw_agent_msg_release(&m);
	__atomic_store_n(&stop2, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	peer_close(&p);
	close(lfd);
}

static volatile int stop4;
static int builds;

static void run_build(void *arg, const struct sw_agent_msg *cmd, struct sw_agent_outcome *out)
{
	(void)arg;
	(void)cmd;
	builds++;
	out->ok = true;
}

/* The next message that is not one of the agent's heartbeats (protocol 2). */
static bool peer_next_not_heartbeat(struct peer *p, struct sw_agent_msg *m)
{
	for (;;) {
		if (!peer_next(p, m))
			return false;
		if (m->type != SW_AGENT_MSG_HEARTBEAT)
			return true;
		sw_agent_msg_release(m);
	}
}

TEST(protocol_2_a_cancel_while_the_input_arrives_ends_the_command_cancelled_never_run)
{
	struct sw_agent_config c;
	int lfd = control_plane(&c, "sw-agent-daemon-cancel");
	REQUIRE(lfd >= 0);
	static const struct sw_agent_executor build = {
		.run = run_build, .kinds = SW_AGENT_KIND_BIT(SW_AGENT_CMD_IMAGE_BUILD)
	};
	struct agent_arg arg = { &c, &stop4, &build };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, agent_thread, &arg) == 0);
	struct peer p;
	REQUIRE(peer_accept(lfd, &p));
	REQUIRE(welcome_2(sw_failed_, &p, 5000));
	struct sw_agent_msg m;
	char cmd[512];
	snprintf(cmd, sizeof(cmd),
		 "{\"type\":\"command\",\"id\":\"b-1\",\"kind\":\"image.build\",\"expiresAt\":%llu,\"payload\":"
		 "{\"tag\":\"steward/x:1\",\"contextBytes\":6,\"contextSha256\":"
		 "\"0000000000000000000000000000000000000000000000000000000000000000\"}}",
		 (unsigned long long)sw_wall_ms() + 60000);
	peer_send(&p, cmd);
	REQUIRE(peer_next_not_heartbeat(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_ACK);
	CHECK_STR_EQ(m.id, "b-1");
	sw_agent_msg_release(&m);
	/* Half its input, taken; then the control plane gives up on it. */
	peer_send(&p, "{\"type\":\"input\",\"id\":\"b-1\",\"seq\":0,\"data\":\"AAAA\"}");
	REQUIRE(peer_next_not_heartbeat(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_ACK);
	CHECK_INT_EQ(m.input_taken, 1);
	sw_agent_msg_release(&m);
	peer_send(&p, "{\"type\":\"cancel\",\"id\":\"b-1\"}");
	REQUIRE(peer_next_not_heartbeat(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_RESULT);
	CHECK_STR_EQ(m.id, "b-1");
	CHECK(!m.ok);
	CHECK_STR_EQ(m.error_code, "CANCELLED");
	sw_agent_msg_release(&m);
	/* The rest of its input is ignored, and its resend answered from the
	 * journal: it is never run. */
	peer_send(&p, "{\"type\":\"input\",\"id\":\"b-1\",\"seq\":1,\"data\":\"AAAA\",\"last\":true}");
	peer_send(&p, cmd);
	REQUIRE(peer_next_not_heartbeat(&p, &m));
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_RESULT);
	CHECK_STR_EQ(m.error_code, "CANCELLED");
	sw_agent_msg_release(&m);
	CHECK_INT_EQ(builds, 0);
	__atomic_store_n(&stop4, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	peer_close(&p);
	close(lfd);
}

static volatile int stop3;

/* Takes this network namespace's loopback up or down; -1 on failure. */
static int loopback(bool up)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	int rc = fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ? -1 : 0;
	if (rc == 0) {
		ifr.ifr_flags = (short)(up ? ifr.ifr_flags | IFF_UP : ifr.ifr_flags & ~IFF_UP);
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Whether a TCP socket of this namespace has local port port
 * (/proc/self/net/tcp: "sl: ADDR:PORT ...", in hex). */
static bool tcp_port_open(unsigned port)
{
	FILE *f = fopen("/proc/self/net/tcp", "r");
	char line[256];
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned local = 0;
		found = sscanf(line, " %*u: %*x:%x", &local) == 1 && local == port;
	}
	if (f)
		fclose(f);
	return found;
}

/* The child of the test below, in a network namespace of its own: 0 when
 * the agent left the silent peer, 77 when a namespace cannot be had. */
static int dead_peer(void)
{
	if (unshare(CLONE_NEWNET) < 0 || loopback(true) < 0)
		return 77;
	int sw_failed__ = 0, *sw_failed_ = &sw_failed__;
	struct sw_agent_config c;
	int lfd = control_plane(&c, "sw-agent-daemon-dead");
	if (lfd < 0)
		return 1;
	struct agent_arg arg = { &c, &stop3 };
	pthread_t t;
	if (pthread_create(&t, NULL, agent_thread, &arg) != 0)
		return 1;
	struct peer p;
	struct sw_agent_msg m;
	if (!peer_accept(lfd, &p) || !peer_next(&p, &m))
		return 1;
	sw_agent_msg_release(&m);
	peer_send(&p, "{\"type\":\"welcome\",\"connectionId\":\"t\",\"protocol\":2,\"heartbeatMs\":200}");
	if (!peer_next(&p, &m))
		return 1;
	CHECK_INT_EQ(m.type, SW_AGENT_MSG_HEARTBEAT);
	sw_agent_msg_release(&m);
	struct sockaddr_in agent;
	socklen_t alen = sizeof(agent);
	if (getpeername(p.fd, (struct sockaddr *)&agent, &alen) < 0 || loopback(false) < 0)
		return 1;
	/* Nothing is acknowledged now and this peer says nothing: the agent's
	 * socket goes once its heartbeat has waited two intervals. */
	uint64_t deadline = sw_now_ms() + 20000;
	while (tcp_port_open(ntohs(agent.sin_port)) && sw_now_ms() < deadline)
		usleep(20000);
	CHECK(!tcp_port_open(ntohs(agent.sin_port)));
	/* Back up: the agent dials again. */
	struct peer again;
	CHECK(loopback(true) == 0 && peer_accept(lfd, &again));
	__atomic_store_n(&stop3, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	peer_close(&again);
	peer_close(&p);
	close(lfd);
	return sw_failed__ ? 1 : 0;
}

TEST(protocol_2_the_agent_leaves_a_control_plane_that_stops_acknowledging)
{
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(dead_peer());
	int st = 0;
	REQUIRE(waitpid(pid, &st, 0) == pid);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		printf("skipped: no network namespace of its own (unshare(CLONE_NEWNET) needs root)\n");
		return;
	}
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
