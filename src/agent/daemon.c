/* The agent's loop: dial the control plane, upgrade to WebSocket with the
 * x-agent-token header, say hello, then heartbeat (protocol 2: send its
 * own; 1: answer the control plane's) and answer commands
 * until the connection ends; wait on the reconnect schedule and dial
 * again.
 *
 * One connection at a time and nothing else to do, so the loop is plain
 * blocking-with-deadlines code on poll(2): the dial and the handshake run
 * with socket timeouts, the session on a non-blocking socket. A command
 * runs on a thread of its own, one at a time (the others wait in a short
 * queue), so heartbeats are answered while a slow one runs; a container
 * log follow (container.logs with follow, protocol 2) runs beside them on
 * a thread of its own, at most SW_AGENT_FOLLOWS_MAX, until the control
 * plane's cancel or the connection's end (it is cancelled then). A thread
 * wakes the loop through a pipe when it is done, and the loop journals and
 * sends its result. A session that ends waits for the command running and
 * journals its result (its next connection's resend is answered from the
 * journal); the queued ones were not started or journaled, and come again. This keeps
 * the agent small (its idle RSS is a benchmark goal) and away from the
 * ring, which serves many connections in stewardd. TLS is OpenSSL's,
 * with the peer's name checked against the host of STEWARD_URL. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <netinet/tcp.h>
#include "libssl.h"
#include "steward/agent/daemon.h"
#include "steward/agent/journal.h"
#include "steward/agent/ws.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/base/secret.h"
#include "steward/base/sha.h"

#define DIAL_TIMEOUT_MS 10000
#define WELCOME_TIMEOUT_MS 10000
#define MAX_RESPONSE_HEAD (16 * 1024)
#define SILENT_HEARTBEATS 3 /* missed heartbeats before the control plane counts as gone */
#define QUEUED_COMMANDS 32  /* accepted and waiting for the one running */
/* A running command's output waiting for the loop: past it the command
 * waits. The loop moves it into the channel's queue only while that holds
 * less than PROGRESS_QUEUE_MAX, far under SW_AGENT_MAX_QUEUED_OUTPUT, so
 * heartbeats and results always fit. */
#define PROGRESS_PENDING_MAX (256 * 1024)
#define PROGRESS_QUEUE_MAX (256 * 1024)
#define PROGRESS_CHUNK (48 * 1024) /* raw bytes a progress message carries (JSON-escaped, under SW_AGENT_MAX_CHUNK) */

uint64_t sw_agent_backoff_ms(enum sw_agent_drop why, unsigned attempt, uint64_t retry_hint_ms,
			     double r)
{
	uint64_t lo, hi;
	if (r < 0 || r >= 1)
		r = 0;
	switch (why) {
	case SW_AGENT_DROP_REJECTED:
		lo = 2 * 60 * 1000;
		hi = 10 * 60 * 1000;
		break;
	case SW_AGENT_DROP_HINTED:
		hi = SW_MAX(retry_hint_ms, 1000);
		lo = SW_MAX(hi / 2, 1000);
		break;
	default:
		lo = 1000;
		hi = attempt >= 5 ? 60000 : SW_MIN(60000, 2000ULL << attempt);
		break;
	}
	return lo + (uint64_t)(r * (double)(hi - lo));
}

struct conn {
	int fd;
	const struct sw_libssl *tls; /* with ssl: libssl's table */
	SSL *ssl;
	struct sw_buf in;
	struct sw_ws_reader reader;
	struct sw_ws_out out;
};

static void conn_close(struct conn *k)
{
	if (k->ssl) {
		k->tls->SSL_free(k->ssl);
		k->ssl = NULL;
	}
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
	sw_buf_release(&k->in);
	sw_ws_reader_release(&k->reader);
	sw_ws_out_release(&k->out);
}

/* Blocking I/O with the socket's timeouts (the handshake). */
static ssize_t io_read(struct conn *k, void *p, size_t n)
{
	if (!k->ssl)
		return recv(k->fd, p, n, 0);
	int r = k->tls->SSL_read(k->ssl, p, (int)SW_MIN(n, (size_t)INT32_MAX));
	if (r > 0)
		return r;
	int e = k->tls->SSL_get_error(k->ssl, r);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		errno = EAGAIN;
		return -1;
	}
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	errno = ECONNRESET;
	return -1;
}

static ssize_t io_write(struct conn *k, const void *p, size_t n)
{
	if (!k->ssl)
		return send(k->fd, p, n, MSG_NOSIGNAL);
	int r = k->tls->SSL_write(k->ssl, p, (int)SW_MIN(n, (size_t)INT32_MAX));
	if (r > 0)
		return r;
	int e = k->tls->SSL_get_error(k->ssl, r);
	errno = (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) ? EAGAIN : ECONNRESET;
	return -1;
}

static int write_all(struct conn *k, const char *p, size_t n)
{
	while (n) {
		ssize_t w = io_write(k, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int connect_timeout(int fd, const struct sockaddr *a, socklen_t alen)
{
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	int rc = connect(fd, a, alen);
	if (rc < 0 && errno == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		rc = poll(&p, 1, DIAL_TIMEOUT_MS);
		int err = 0;
		socklen_t l = sizeof(err);
		if (rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) == 0 && err == 0)
			rc = 0;
		else
			rc = -1;
	}
	fcntl(fd, F_SETFL, fl);
	return rc;
}

/* Finds a header's value in a response head (lines after the first);
 * copies it, trimmed, into out. */
static bool header(const char *head, const char *name, char *out, size_t cap)
{
	size_t n = strlen(name);
	for (const char *l = strstr(head, "\r\n"); l && l[2]; l = strstr(l + 2, "\r\n")) {
		const char *line = l + 2;
		if (strncasecmp(line, name, n) != 0 || line[n] != ':')
			continue;
		const char *v = line + n + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t len = strcspn(v, "\r\n");
		while (len && (v[len - 1] == ' ' || v[len - 1] == '\t'))
			len--;
		snprintf(out, cap, "%.*s", (int)len, v);
		return true;
	}
	return false;
}

struct dial_result {
	enum sw_agent_drop why;
	uint64_t retry_hint_ms;
	int status;
};

/* The upgrade request and its answer; on 101 the bytes after the head
 * are the first of the WebSocket stream. */
static int handshake(const struct sw_agent_config *c, struct conn *k, struct dial_result *res)
{
	char key[25], accept[29];
	if (sw_ws_client_key(key) < 0 || sw_ws_accept_key(sw_str_cstr(key), accept) < 0)
		return -EIO;
	bool v6 = strchr(c->host, ':') != NULL;
	bool default_port = strcmp(c->port, c->tls ? "443" : "80") == 0;
	char req[1024];
	int n = snprintf(req, sizeof(req),
			 "GET %s HTTP/1.1\r\nHost: %s%s%s%s%s\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
			 "x-agent-token: %s\r\nUser-Agent: steward-agent/" SW_AGENT_VERSION "\r\n\r\n",
			 c->path, v6 ? "[" : "", c->host, v6 ? "]" : "", default_port ? "" : ":",
			 default_port ? "" : c->port, key, c->token);
	if (n < 0 || (size_t)n >= sizeof(req) || write_all(k, req, (size_t)n) < 0)
		return -EIO;
	char *end = NULL;
	while (!end) {
		if (k->in.len >= MAX_RESPONSE_HEAD || sw_buf_reserve(&k->in, 4096) < 0)
			return -EPROTO;
		ssize_t r = io_read(k, k->in.data + k->in.len, SW_MIN(k->in.cap - k->in.len - 1, 4096));
		if (r <= 0)
			return -EIO;
		k->in.len += (size_t)r;
		k->in.data[k->in.len] = '\0';
		end = strstr(k->in.data, "\r\n\r\n");
	}
	size_t head_len = (size_t)(end - k->in.data) + 4;
	end[2] = '\0'; /* the head ends with its last line's CRLF */
	int major, minor, status;
	if (sscanf(k->in.data, "HTTP/%d.%d %3d", &major, &minor, &status) != 3)
		return -EPROTO;
	res->status = status;
	char v[256];
	if (status != 101) {
		if (status == 401 || status == 403)
			res->why = SW_AGENT_DROP_REJECTED;
		if (header(k->in.data, "Retry-After", v, sizeof(v))) {
			char *e;
			unsigned long s = strtoul(v, &e, 10);
			if (*v && !*e && s <= 3600) {
				res->why = SW_AGENT_DROP_HINTED;
				res->retry_hint_ms = s * 1000;
			}
		}
		return -ECONNREFUSED;
	}
	if (!header(k->in.data, "Upgrade", v, sizeof(v)) || strcasecmp(v, "websocket") != 0 ||
	    !header(k->in.data, "Sec-WebSocket-Accept", v, sizeof(v)) || strcmp(v, accept) != 0)
		return -EPROTO;
	sw_buf_consume(&k->in, head_len);
	return 0;
}

static int dial(const struct sw_agent_config *c, const struct sw_libssl *tls, SSL_CTX *ctx,
		struct conn *k, struct dial_result *res)
{
	*res = (struct dial_result){ .why = SW_AGENT_DROP_NETWORK };
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(c->host, c->port, &hints, &ai);
	if (rc != 0) {
		sw_log_warn("agent: cannot resolve %s: %s", c->host, gai_strerror(rc));
		return -EHOSTUNREACH;
	}
	k->fd = -1;
	for (struct addrinfo *a = ai; a && k->fd < 0; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (connect_timeout(fd, a->ai_addr, a->ai_addrlen) == 0)
			k->fd = fd;
		else
			close(fd);
	}
	freeaddrinfo(ai);
	if (k->fd < 0)
		return -ECONNREFUSED;
	struct timeval tv = { DIAL_TIMEOUT_MS / 1000, 0 };
	setsockopt(k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(k->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	int one = 1;
	setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (ctx) {
		k->tls = tls;
		k->ssl = tls->SSL_new(ctx);
		if (!k->ssl || tls->SSL_set_fd(k->ssl, k->fd) != 1)
			return -ENOMEM;
		/* An address is checked against the certificate's IP names, a
		 * host name against its DNS names (and sent as SNI). */
		struct in6_addr ip;
		bool literal = inet_pton(AF_INET, c->host, &ip) == 1 ||
			       inet_pton(AF_INET6, c->host, &ip) == 1;
		if (literal ? tls->X509_VERIFY_PARAM_set1_ip_asc(tls->SSL_get0_param(k->ssl), c->host) != 1
			    : tls->SSL_set1_host(k->ssl, c->host) != 1 ||
				      /* SSL_set_tlsext_host_name() */
				      tls->SSL_ctrl(k->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME,
						    TLSEXT_NAMETYPE_host_name, (void *)c->host) != 1)
			return -ENOMEM;
		if (tls->SSL_connect(k->ssl) != 1) {
			unsigned long e = tls->ERR_get_error();
			sw_log_warn("agent: TLS with %s failed: %s", c->host,
				    e ? tls->ERR_reason_error_string(e) : "handshake cut off");
			tls->ERR_clear_error();
			return -EPROTO;
		}
	}
	rc = handshake(c, k, res);
	if (rc < 0)
		return rc;
	fcntl(k->fd, F_SETFL, fcntl(k->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static uint64_t now_ms(void)
{
	return sw_now_ms();
}

static double random_unit(void)
{
	uint32_t v;
	if (sw_random_bytes(&v, sizeof(v)) != 0)
		return 0.5;
	return v / 4294967296.0;
}

/* A command handed to the runner thread: its message (holding a reference
 * to the decoded JSON) and its outcome. A command with input (image.build,
 * service.restore)
 * is journaled and acknowledged when it arrives, then its input is staged
 * into an unnamed file (fd) until the last chunk, checked, and only then
 * queued. */
struct job {
	struct sw_agent_msg m;
	struct sw_agent_outcome o;
	struct sw_agent_stream stream;
	struct session *s;
	bool begun;             /* journaled and acknowledged already */
	bool done;              /* atomic: the runner thread is over */
	pthread_t thread;
	/* Its output: the runner appends, the loop sends (under s->mu). */
	struct sw_buf pending;
	uint64_t out_seq;       /* progress chunks sent */
	int fd;                 /* the staged input, or -1 */
	struct sw_sha256_ctx sha; /* over the input taken so far */
	uint64_t bytes;
	struct sw_agent_seq in;
};

struct session {
	const struct sw_agent_config *c;
	struct conn *k;
	struct sw_agent_journal *journal;
	const struct sw_agent_executor *exec;
	struct job *running;    /* on the runner thread */
	struct job *follows[SW_AGENT_FOLLOWS_MAX]; /* container log follows, each on its thread */
	int wake[2];            /* the runner writes a byte when it is done */
	struct job *queue[QUEUED_COMMANDS];
	unsigned nqueue;
	bool welcomed;
	uint64_t protocol;      /* the welcome's */
	uint64_t heartbeat_ms;
	uint64_t deadline;      /* the control plane is silent past it (1; 2: none once welcomed) */
	uint64_t hb_seq;        /* 2: the last heartbeat this agent sent */
	uint64_t hb_due;        /* 2: when the next one goes */
	bool ending;            /* a close was sent or received */
	struct dial_result drop;
	struct job *receiving;  /* a command whose input is arriving */
	/* The running commands' output (each job's pending). */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool out_closed;        /* under mu: the connection ended, output is dropped */
	int out_wake[2];        /* a runner writes a byte when its pending grows */
};

static int send_msg(struct session *s, const struct sw_agent_msg *m)
{
	struct sw_buf b = { 0 };
	int rc = sw_agent_msg_encode(&b, m);
	if (rc == 0)
		rc = sw_ws_out_message(&s->k->out, SW_WS_OP_TEXT, b.data, b.len);
	sw_buf_release(&b);
	return rc;
}

static int send_text(struct session *s, const char *text)
{
	return sw_ws_out_message(&s->k->out, SW_WS_OP_TEXT, text, strlen(text));
}

static void end_session(struct session *s, unsigned code, const char *why)
{
	if (!s->ending)
		sw_ws_out_close(&s->k->out, code, why);
	s->ending = true;
}

/* The result message for id, as text (the caller frees), from an outcome. */
static char *result_text(const char *id, struct sw_agent_outcome *o)
{
	struct sw_agent_msg r = { .type = SW_AGENT_MSG_RESULT, .id = id, .ok = o->ok };
	if (o->ok) {
		r.result = o->result;
	} else {
		r.error_code = o->error_code[0] ? o->error_code : "FAILED";
		r.error_message = o->error_message[0] ? o->error_message : "the command failed";
	}
	struct sw_buf b = { 0 };
	int rc = sw_agent_msg_encode(&b, &r);
	if (rc == 0)
		rc = sw_buf_append(&b, "", 1);
	json_decref(o->result);
	o->result = NULL;
	if (rc < 0) {
		sw_buf_release(&b);
		return NULL;
	}
	return b.data;
}

static void refuse_command(struct session *s, const char *id, const char *code, const char *msg)
{
	struct sw_agent_outcome o = { .ok = false };
	snprintf(o.error_code, sizeof(o.error_code), "%s", code);
	snprintf(o.error_message, sizeof(o.error_message), "%s", msg);
	char *t = result_text(id, &o);
	if (t)
		send_text(s, t);
	free(t);
}

/* Journals and sends the result of command id. */
static void finish(struct session *s, const char *id, struct sw_agent_outcome *o)
{
	char *t = result_text(id, o);
	if (!t || sw_agent_journal_finish(s->journal, id, t) < 0)
		sw_log_error("agent: the result of command %s could not be journaled", id);
	if (t && !s->ending)
		send_text(s, t);
	free(t);
}

/* ---- a command's streams ---- */

static struct job *job_new(struct session *s, const struct sw_agent_msg *m)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->m = *m;
	json_incref(j->m.root); /* the message's strings live in it */
	j->s = s;
	j->fd = -1;
	return j;
}

static void job_free(struct job *j)
{
	if (j->fd >= 0)
		close(j->fd);
	sw_agent_msg_release(&j->m);
	sw_buf_release(&j->pending);
	free(j);
}

/* On the runner thread: output into pending, waiting while it is full. */
static void stream_output(struct sw_agent_stream *st, const char *data, size_t len)
{
	struct job *j = (struct job *)((char *)st - offsetof(struct job, stream));
	struct session *s = j->s;
	pthread_mutex_lock(&s->mu);
	while (!s->out_closed && j->pending.len && j->pending.len + len > PROGRESS_PENDING_MAX)
		pthread_cond_wait(&s->cv, &s->mu);
	bool wake = !s->out_closed && j->pending.len == 0;
	if (!s->out_closed && sw_buf_append(&j->pending, data, len) < 0)
		wake = false;
	pthread_mutex_unlock(&s->mu);
	char byte = 1;
	if (wake)
		while (write(s->out_wake[1], &byte, 1) < 0 && errno == EINTR) {
		}
}

/* On the loop, under s->mu: moves j's output into the channel's queue as
 * progress chunks, cut at line ends, while the queue has room (all of it
 * when force: the command has ended and its result follows). */
static void flush_job(struct session *s, struct job *j, bool force)
{
	while (!s->ending && j->pending.len && (force || s->k->out.buf.len < PROGRESS_QUEUE_MAX)) {
		size_t n = SW_MIN(j->pending.len, (size_t)PROGRESS_CHUNK);
		if (n < j->pending.len) {
			const char *nl = memrchr(j->pending.data, '\n', n);
			if (nl)
				n = (size_t)(nl - j->pending.data) + 1;
		}
		char *text = malloc(n + 1);
		if (!text)
			break;
		memcpy(text, j->pending.data, n);
		text[n] = '\0';
		struct sw_agent_msg p = { .type = SW_AGENT_MSG_PROGRESS, .id = j->m.id, .seq = j->out_seq,
					  .stream = "log", .data = text };
		if (send_msg(s, &p) == 0)
			j->out_seq++;
		free(text);
		sw_buf_consume(&j->pending, n);
	}
	if (s->ending)
		sw_buf_consume(&j->pending, j->pending.len);
}

/* On the loop: the running commands' output, as flush_job() moves it. */
static void flush_progress(struct session *s, bool force)
{
	pthread_mutex_lock(&s->mu);
	if (s->running)
		flush_job(s, s->running, force);
	for (unsigned i = 0; i < SW_AGENT_FOLLOWS_MAX; i++)
		if (s->follows[i])
			flush_job(s, s->follows[i], false);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void *runner(void *arg)
{
	struct job *j = arg;
	j->o.stream = &j->stream;
	j->s->exec->run(j->s->exec->arg, &j->m, &j->o);
	j->o.stream = NULL;
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	char byte = 1;
	while (write(j->s->wake[1], &byte, 1) < 0 && errno == EINTR) {
	}
	return NULL;
}

/* Starts the next queued command when none runs: journaled as begun,
 * acknowledged, then run on the runner thread. */
static void start_next(struct session *s)
{
	while (!s->running && s->nqueue) {
		struct job *j = s->queue[0];
		memmove(s->queue, s->queue + 1, --s->nqueue * sizeof(s->queue[0]));
		uint8_t digest[32];
		if (!j->begun && (sw_agent_cmd_digest(&j->m, digest) < 0 ||
				  sw_agent_journal_begin(s->journal, j->m.id, digest) < 0)) {
			refuse_command(s, j->m.id, "JOURNAL_FAILED", "the agent could not journal the command; it was not run");
			job_free(j);
			continue;
		}
		if (!j->begun) {
			struct sw_agent_msg ack = { .type = SW_AGENT_MSG_ACK, .id = j->m.id };
			send_msg(s, &ack);
		}
		s->running = j;
		j->stream = (struct sw_agent_stream){ .input_fd = j->fd, .output = stream_output };
		if (pthread_create(&j->thread, NULL, runner, j) != 0) {
			s->running = NULL;
			snprintf(j->o.error_code, sizeof(j->o.error_code), "FAILED");
			snprintf(j->o.error_message, sizeof(j->o.error_message), "the agent could not start the command");
			finish(s, j->m.id, &j->o);
			job_free(j);
		}
	}
}

/* A command whose thread is over (or, when the session ends, will be:
 * waited for): its output, then its result. */
static void reap_job(struct session *s, struct job *j)
{
	pthread_join(j->thread, NULL);
	/* Its output goes before its result, which says how many chunks
	 * there were (the control plane may store them out of order). */
	pthread_mutex_lock(&s->mu);
	flush_job(s, j, true);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (j->o.ok && j->out_seq) {
		if (!j->o.result)
			j->o.result = json_object();
		json_object_set_new(j->o.result, "outputChunks", json_integer((json_int_t)j->out_seq));
	}
	finish(s, j->m.id, &j->o);
	job_free(j);
}

/* The commands whose threads are done; every one when all (the session
 * ends: a follow is cancelled first, the running command waited for). */
static void reap(struct session *s, bool all)
{
	char drain[64];
	while (read(s->wake[0], drain, sizeof(drain)) > 0) {
	}
	for (unsigned i = 0; i < SW_AGENT_FOLLOWS_MAX; i++) {
		struct job *j = s->follows[i];
		if (j && all)
			__atomic_store_n(&j->stream.cancel, true, __ATOMIC_RELAXED);
		if (j && (all || __atomic_load_n(&j->done, __ATOMIC_ACQUIRE))) {
			s->follows[i] = NULL;
			reap_job(s, j);
		}
	}
	struct job *j = s->running;
	if (j && (all || __atomic_load_n(&j->done, __ATOMIC_ACQUIRE))) {
		s->running = NULL;
		reap_job(s, j);
	}
}

/* A command that starts now: journaled as begun, acknowledged; NULL when
 * it could not be (answered already). */
static struct job *job_begin(struct session *s, const struct sw_agent_msg *m, const uint8_t digest[32])
{
	if (sw_agent_journal_begin(s->journal, m->id, digest) < 0) {
		refuse_command(s, m->id, "JOURNAL_FAILED", "the agent could not journal the command; it was not run");
		return NULL;
	}
	struct job *j = job_new(s, m);
	if (!j) {
		struct sw_agent_outcome o = { .ok = false, .error_code = "FAILED",
					      .error_message = "out of memory; the command was not run" };
		finish(s, m->id, &o);
		return NULL;
	}
	j->begun = true;
	struct sw_agent_msg ack = { .type = SW_AGENT_MSG_ACK, .id = m->id };
	send_msg(s, &ack);
	return j;
}

/* container.logs with follow: beside the queue, on a thread of its own
 * (it lasts until cancelled), at most SW_AGENT_FOLLOWS_MAX at once. */
static void start_follow(struct session *s, const struct sw_agent_msg *m, const uint8_t digest[32])
{
	unsigned slot = 0;
	while (slot < SW_AGENT_FOLLOWS_MAX && s->follows[slot])
		slot++;
	if (slot == SW_AGENT_FOLLOWS_MAX) {
		refuse_command(s, m->id, "BUSY", "the agent follows as many container logs as it may; it was not run");
		return;
	}
	struct job *j = job_begin(s, m, digest);
	if (!j)
		return;
	j->stream = (struct sw_agent_stream){ .input_fd = -1, .output = stream_output };
	if (pthread_create(&j->thread, NULL, runner, j) != 0) {
		snprintf(j->o.error_code, sizeof(j->o.error_code), "FAILED");
		snprintf(j->o.error_message, sizeof(j->o.error_message), "the agent could not start the command");
		finish(s, j->m.id, &j->o);
		job_free(j);
		return;
	}
	s->follows[slot] = j;
	sw_log_info("agent: command %s follows container %s", m->id, m->args.name);
}

static void fail_receiving(struct session *s, const char *code, const char *why);

/* The control plane's cancel: a follow (or the running command: a build
 * stops its engine call) of that id is told to stop, its result going as
 * it ends; a command whose input is still arriving ends now, not run. */
static void on_cancel(struct session *s, const char *id)
{
	if (s->receiving && strcmp(s->receiving->m.id, id) == 0) {
		sw_log_info("agent: command %s cancelled by the control plane before its input was whole", id);
		fail_receiving(s, "CANCELLED", "the command was cancelled before its input was whole; nothing was run");
		return;
	}
	for (unsigned i = 0; i < SW_AGENT_FOLLOWS_MAX; i++)
		if (s->follows[i] && strcmp(s->follows[i]->m.id, id) == 0) {
			__atomic_store_n(&s->follows[i]->stream.cancel, true, __ATOMIC_RELAXED);
			sw_log_info("agent: command %s cancelled by the control plane", id);
			return;
		}
	if (s->running && strcmp(s->running->m.id, id) == 0) {
		__atomic_store_n(&s->running->stream.cancel, true, __ATOMIC_RELAXED);
		sw_log_info("agent: command %s cancelled by the control plane", id);
	}
}

/* The command whose input is arriving ends without running: journaled
 * FAILED, so its resend is answered, never run. */
static void fail_receiving(struct session *s, const char *code, const char *why)
{
	struct job *j = s->receiving;
	s->receiving = NULL;
	struct sw_agent_outcome o = { .ok = false };
	snprintf(o.error_code, sizeof(o.error_code), "%s", code);
	snprintf(o.error_message, sizeof(o.error_message), "%s", why);
	finish(s, j->m.id, &o);
	job_free(j);
}

/* A command with input: journaled and acknowledged now, its input staged
 * in an unnamed file of the data directory until its last chunk. */
static void receive_command(struct session *s, const struct sw_agent_msg *m, const uint8_t digest[32])
{
	if (s->receiving) {
		refuse_command(s, m->id, "BUSY", "the agent is receiving another command's input; it was not run");
		return;
	}
	struct job *j = job_begin(s, m, digest);
	if (!j)
		return;
	s->receiving = j;
	j->fd = open(s->c->data_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	sw_sha256_init(&j->sha);
	if (j->fd < 0)
		fail_receiving(s, "FAILED", "the agent cannot stage the command's input in its data directory; nothing was run");
}

static bool write_all_fd(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* The whole input is there: its size and SHA-256 must be the payload's. */
static bool input_whole(struct job *j)
{
	unsigned char md[32];
	char hex[65];
	sw_sha256_final(&j->sha, md);
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return j->bytes == j->m.args.context_bytes && j->m.args.context_sha256 &&
	       strcmp(hex, j->m.args.context_sha256) == 0;
}

static void on_input(struct session *s, const struct sw_agent_msg *m)
{
	struct job *j = s->receiving;
	if (!j || strcmp(j->m.id, m->id) != 0)
		return; /* a command that is over (or this agent never took): nothing waits */
	switch (sw_agent_seq_check(&j->in, m->seq)) {
	case SW_AGENT_SEQ_DUPLICATE:
		return;
	case SW_AGENT_SEQ_GAP:
		fail_receiving(s, "BAD_DATA", "a chunk of the command's input was lost; nothing was run");
		return;
	case SW_AGENT_SEQ_TAKE:
		break;
	}
	size_t n = strlen(m->data), len = 0;
	unsigned char *buf = malloc(n / 4 * 3 + 1);
	const char *bad = NULL;
	if (!buf)
		bad = "the agent is out of memory; nothing was run";
	else if (sw_base64_decode(sw_str_from(m->data, n), buf, n / 4 * 3 + 1, &len) != 0)
		bad = "a chunk of the command's input is not base64; nothing was run";
	else if (j->bytes + (uint64_t)len > j->m.args.context_bytes)
		bad = "the command's input is longer than its contextBytes; nothing was run";
	else if (!write_all_fd(j->fd, buf, len))
		bad = "the agent cannot stage the command's input in its data directory; nothing was run";
	else
		sw_sha256_update(&j->sha, buf, len);
	free(buf);
	if (bad) {
		fail_receiving(s, "BAD_DATA", bad);
		return;
	}
	j->bytes += (uint64_t)len;
	struct sw_agent_msg ack = { .type = SW_AGENT_MSG_ACK, .id = j->m.id, .input_taken = j->in.next };
	send_msg(s, &ack);
	if (!m->last)
		return;
	if (!input_whole(j)) {
		fail_receiving(s, "BAD_DATA", "the command's input arrived with another size or SHA-256 than its payload says; nothing was run");
		return;
	}
	if (lseek(j->fd, 0, SEEK_SET) != 0) {
		fail_receiving(s, "FAILED", "the agent cannot read back the command's staged input; nothing was run");
		return;
	}
	if (s->nqueue >= QUEUED_COMMANDS) {
		fail_receiving(s, "BUSY", "the agent has too many commands waiting; it was not run");
		return;
	}
	s->receiving = NULL;
	s->queue[s->nqueue++] = j;
	start_next(s);
}

static void on_command(struct session *s, const struct sw_agent_msg *m)
{
	uint8_t digest[32];
	if (sw_agent_cmd_digest(m, digest) < 0)
		return;
	const char *recorded;
	switch (sw_agent_journal_lookup(s->journal, m->id, digest, &recorded)) {
	case SW_AGENT_JOURNAL_DONE:
		/* resent: the same answer, not run again */
		sw_log_info("agent: command %s answered from the journal", m->id);
		send_text(s, recorded);
		return;
	case SW_AGENT_JOURNAL_RUNNING: {
		struct sw_agent_msg ack = { .type = SW_AGENT_MSG_ACK, .id = m->id };
		send_msg(s, &ack);
		return;
	}
	case SW_AGENT_JOURNAL_CONFLICT:
		refuse_command(s, m->id, "ID_REUSED", "this command id was used for another command");
		return;
	case SW_AGENT_JOURNAL_NEW:
		break;
	}
	if ((uint64_t)sw_wall_ms() > m->expires_at_ms || !(s->exec->kinds & SW_AGENT_KIND_BIT(m->kind)) ||
	    !s->exec->run) {
		struct sw_agent_outcome o = { 0 };
		if ((uint64_t)sw_wall_ms() > m->expires_at_ms) {
			snprintf(o.error_code, sizeof(o.error_code), "EXPIRED");
			snprintf(o.error_message, sizeof(o.error_message), "the command expired before it reached the agent; it was not run");
		} else {
			snprintf(o.error_code, sizeof(o.error_code), "NOT_AVAILABLE");
			snprintf(o.error_message, sizeof(o.error_message), "this agent (%s) does not run %s",
				 SW_AGENT_VERSION, m->kind_name);
		}
		if (sw_agent_journal_begin(s->journal, m->id, digest) < 0) {
			refuse_command(s, m->id, "JOURNAL_FAILED", "the agent could not journal the command; it was not run");
			return;
		}
		finish(s, m->id, &o);
		return;
	}
	for (unsigned i = 0; i < s->nqueue; i++)
		if (strcmp(s->queue[i]->m.id, m->id) == 0)
			return; /* accepted already, waiting its turn */
	if (m->kind == SW_AGENT_CMD_IMAGE_BUILD || m->kind == SW_AGENT_CMD_SERVICE_RESTORE) {
		receive_command(s, m, digest);
		return;
	}
	if (m->kind == SW_AGENT_CMD_CONTAINER_LOGS && m->args.follow) {
		for (unsigned i = 0; i < SW_AGENT_FOLLOWS_MAX; i++)
			if (s->follows[i] && strcmp(s->follows[i]->m.id, m->id) == 0)
				return; /* following already */
		start_follow(s, m, digest);
		return;
	}
	struct job *j = s->nqueue < QUEUED_COMMANDS ? job_new(s, m) : NULL;
	if (!j) {
		refuse_command(s, m->id, "BUSY", "the agent has too many commands waiting; it was not run");
		return;
	}
	s->queue[s->nqueue++] = j;
	start_next(s);
}

static bool is_command(const json_t *v)
{
	json_t *t = json_object_get(v, "type");
	return json_is_string(t) && strcmp(json_string_value(t), "command") == 0;
}

/* A command the decoder refused still gets an answer when its id can be
 * read, so the control plane's caller is not left waiting. */
static void on_bad_message(struct session *s, const char *text, size_t len, const char *why)
{
	json_t *v = json_loadb(text, len, 0, NULL);
	json_t *id = json_object_get(v, "id");
	struct sw_agent_msg probe = { .type = SW_AGENT_MSG_ACK,
				      .id = json_is_string(id) ? json_string_value(id) : NULL };
	struct sw_buf b = { 0 };
	bool answerable = probe.id && is_command(v) && sw_agent_msg_encode(&b, &probe) == 0;
	sw_buf_release(&b);
	if (answerable) {
		refuse_command(s, probe.id, "INVALID_COMMAND", why);
	} else {
		sw_log_warn("agent: refused a message from the control plane: %s", why);
		end_session(s, SW_WS_CLOSE_POLICY, "invalid message");
	}
	json_decref(v);
}

/* When the control plane counts as gone if nothing more comes: before
 * the welcome WELCOME_TIMEOUT_MS; in protocol 1 three heartbeat intervals
 * from now; in protocol 2 never by silence (TCP_USER_TIMEOUT, set at the
 * welcome, tells). */
static uint64_t silence_deadline(const struct session *s)
{
	if (!s->welcomed)
		return now_ms() + WELCOME_TIMEOUT_MS;
	if (s->protocol >= SW_AGENT_PROTOCOL_AGENT_BEATS)
		return UINT64_MAX;
	return now_ms() + SILENT_HEARTBEATS * s->heartbeat_ms;
}

static void on_message(struct session *s, const struct sw_ws_event *ev)
{
	if (ev->opcode != SW_WS_OP_TEXT) {
		end_session(s, SW_WS_CLOSE_UNSUPPORTED, "binary messages are not part of protocol 1");
		return;
	}
	struct sw_agent_msg m;
	char err[256];
	if (sw_agent_msg_decode((const char *)ev->data, ev->len, &m, err, sizeof(err)) < 0) {
		on_bad_message(s, (const char *)ev->data, ev->len, err);
		return;
	}
	switch (m.type) {
	case SW_AGENT_MSG_WELCOME:
		if (m.protocol < SW_AGENT_PROTOCOL_MIN || m.protocol > SW_AGENT_PROTOCOL_MAX) {
			end_session(s, SW_WS_CLOSE_POLICY, "protocol version not offered");
			break;
		}
		s->welcomed = true;
		s->protocol = m.protocol;
		s->heartbeat_ms = m.heartbeat_ms;
		s->deadline = silence_deadline(s);
		if (s->protocol >= SW_AGENT_PROTOCOL_AGENT_BEATS) {
			s->hb_due = now_ms() + s->heartbeat_ms;
			/* The control plane sends nothing while idle: a dead one is
			 * one whose host stops acknowledging. The next heartbeat goes
			 * within an interval, and the kernel gives up on it after
			 * two more, so the agent dials again at most three intervals
			 * after the control plane went, as in protocol 1. A process
			 * that ended is seen at once (its kernel closes the socket). */
			unsigned ut = (unsigned)SW_MIN((SILENT_HEARTBEATS - 1) * s->heartbeat_ms,
						       (uint64_t)UINT32_MAX);
			if (setsockopt(s->k->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut)) < 0)
				sw_log_warn("agent: cannot set TCP_USER_TIMEOUT: %s", strerror(errno));
		}
		sw_log_info("agent: connected as %s (protocol %llu, heartbeat %llu ms)",
			    m.connection_id, (unsigned long long)m.protocol,
			    (unsigned long long)m.heartbeat_ms);
		break;
	case SW_AGENT_MSG_HEARTBEAT: { /* protocol 1's: echoed */
		struct sw_agent_msg echo = { .type = SW_AGENT_MSG_HEARTBEAT, .seq = m.seq };
		send_msg(s, &echo);
		break;
	}
	case SW_AGENT_MSG_GOAWAY:
		s->drop.why = SW_AGENT_DROP_HINTED;
		s->drop.retry_hint_ms = m.retry_after_ms;
		end_session(s, SW_WS_CLOSE_GOING_AWAY, "goaway");
		break;
	case SW_AGENT_MSG_COMMAND:
		if (s->welcomed)
			on_command(s, &m);
		else
			end_session(s, SW_WS_CLOSE_POLICY, "a command before the welcome");
		break;
	case SW_AGENT_MSG_INPUT:
		if (s->welcomed)
			on_input(s, &m);
		break;
	case SW_AGENT_MSG_CANCEL:
		if (s->welcomed)
			on_cancel(s, m.id);
		break;
	default:
		end_session(s, SW_WS_CLOSE_POLICY, "a message only an agent sends");
		break;
	}
	sw_agent_msg_release(&m);
}

/* Reads what the socket has; false when the connection is gone. */
static bool pump_in(struct session *s)
{
	struct conn *k = s->k;
	for (;;) {
		if (k->in.len > SW_AGENT_MAX_MESSAGE + 64 * 1024)
			return true; /* the reader refuses such frames before this */
		if (sw_buf_reserve(&k->in, 16 * 1024) < 0)
			return false;
		ssize_t r = io_read(k, k->in.data + k->in.len, k->in.cap - k->in.len);
		if (r > 0) {
			k->in.len += (size_t)r;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return true;
		return false;
	}
}

static bool pump_out(struct conn *k);

/* Handles every whole frame read so far; false when the session is over. */
static bool handle_frames(struct session *s)
{
	struct conn *k = s->k;
	size_t off = 0;
	bool alive = true;
	while (alive && !s->ending) {
		size_t used;
		struct sw_ws_event ev;
		if (sw_ws_read(&k->reader, (const uint8_t *)k->in.data + off, k->in.len - off, &used,
			       &ev) < 0)
			return false;
		off += used;
		if (used)
			s->deadline = silence_deadline(s);
		switch (ev.kind) {
		case SW_WS_NEED_MORE:
			if (used == 0)
				alive = false;
			continue;
		case SW_WS_MESSAGE:
			on_message(s, &ev);
			/* Its answer (an input chunk's credit, a heartbeat's echo)
			 * goes now, not after the rest of what was read: a window
			 * of a build's context is 1 MiB, and the control plane
			 * puts the next chunks as the credit comes. */
			if (k->out.buf.len && !pump_out(k))
				return false;
			break;
		case SW_WS_PING:
			sw_ws_out_control(&k->out, SW_WS_OP_PONG, ev.data, ev.len);
			break;
		case SW_WS_PONG:
			break;
		case SW_WS_CLOSE:
			end_session(s, ev.close_code == SW_WS_CLOSE_NO_STATUS ? SW_WS_CLOSE_NORMAL
									     : ev.close_code, NULL);
			break;
		case SW_WS_ERROR:
			sw_log_warn("agent: the control plane sent %s", ev.error);
			end_session(s, ev.close_code, ev.error);
			break;
		}
	}
	sw_buf_consume(&k->in, off);
	return true;
}

/* Writes queued output; false when the socket failed. */
static bool pump_out(struct conn *k)
{
	while (k->out.buf.len) {
		ssize_t w = io_write(k, k->out.buf.data, k->out.buf.len);
		if (w > 0) {
			sw_buf_consume(&k->out.buf, (size_t)w);
			continue;
		}
		return w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
	}
	return true;
}

/* The session is over: the running command is waited for and journaled;
 * the queued ones were not started and come again with the next
 * connection. */
static void end_commands(struct session *s)
{
	s->ending = true;
	if (s->receiving)
		fail_receiving(s, "FAILED", "the connection ended before the command's input was whole; nothing was run");
	pthread_mutex_lock(&s->mu);
	s->out_closed = true; /* the running command's output is dropped from now on */
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	reap(s, true);
	for (unsigned i = 0; i < s->nqueue; i++)
		job_free(s->queue[i]);
	s->nqueue = 0;
}

/* The stop flag is set by a signal handler, or by another thread (a test):
 * read atomically so that neither is a data race. */
static bool stopped(volatile int *stop)
{
	return __atomic_load_n(stop, __ATOMIC_RELAXED) != 0;
}

static void run_session(struct session *s, volatile int *stop)
{
	struct conn *k = s->k;
	char facts[5 * (SW_AGENT_MAX_FACT_LEN + 1)];
	struct sw_agent_msg hello = { 0 };
	sw_agent_host_facts(s->c, &hello, facts, sizeof(facts));
	json_t *caps = json_array();
	for (unsigned i = 0; caps && i < SW_AGENT_CMD_COUNT; i++)
		if (s->exec->kinds & SW_AGENT_KIND_BIT(i))
			json_array_append_new(caps, json_string(sw_agent_cmd_name((enum sw_agent_cmd)i)));
	hello.capabilities = caps;
	int rc = caps ? send_msg(s, &hello) : -ENOMEM;
	json_decref(caps);
	if (rc < 0)
		return;
	s->deadline = now_ms() + WELCOME_TIMEOUT_MS;
	if (!handle_frames(s)) /* bytes that came with the 101 */
		return;
	while (!stopped(stop)) {
		if (!pump_out(k))
			return;
		if (s->ending && k->out.buf.len == 0)
			return;
		uint64_t now = now_ms();
		if (now >= s->deadline) {
			sw_log_warn("agent: the control plane has been silent; reconnecting");
			return;
		}
		bool beats = s->welcomed && s->protocol >= SW_AGENT_PROTOCOL_AGENT_BEATS;
		if (beats && now >= s->hb_due && !s->ending) {
			struct sw_agent_msg hb = { .type = SW_AGENT_MSG_HEARTBEAT, .seq = ++s->hb_seq };
			(void)send_msg(s, &hb); /* a full queue: the next one, as 1's echo */
			s->hb_due = now + s->heartbeat_ms;
			continue; /* written by pump_out() first */
		}
		uint64_t wake = beats ? SW_MIN(s->deadline, s->hb_due) : s->deadline;
		/* SSL may hold decrypted bytes the socket no longer shows. */
		int timeout = k->ssl && k->tls->SSL_pending(k->ssl) ? 0 : (int)SW_MIN(wake - now, 1000);
		struct pollfd pf[3] = { { .fd = k->fd, .events = POLLIN | (k->out.buf.len ? POLLOUT : 0) },
					{ .fd = s->wake[0], .events = POLLIN },
					{ .fd = s->out_wake[0], .events = POLLIN } };
		struct pollfd p = pf[0];
		int n = poll(pf, 3, timeout);
		if (n < 0 && errno != EINTR)
			return;
		if (n > 0 && (pf[2].revents & POLLIN)) {
			char drain[64];
			while (read(s->out_wake[0], drain, sizeof(drain)) > 0) {
			}
			n--;
		}
		flush_progress(s, false);
		if (n > 0 && (pf[1].revents & POLLIN)) {
			reap(s, false);
			start_next(s);
			n--;
		}
		p = pf[0];
		if (n > 0 && (p.revents & (POLLERR | POLLNVAL)))
			return;
		if ((n > 0 && (p.revents & (POLLIN | POLLHUP))) || timeout == 0) {
			size_t before = k->in.len;
			bool open = pump_in(s);
			if (!handle_frames(s))
				return;
			if (!open || (k->in.len == before && (p.revents & POLLHUP)))
				return;
		}
	}
	end_session(s, SW_WS_CLOSE_GOING_AWAY, "the agent is stopping");
	pump_out(k);
}

/* The TLS client context, on libssl opened now (an https:// URL only). */
static SSL_CTX *tls_context(const struct sw_agent_config *c, const struct sw_libssl **ret)
{
	char err[256];
	const struct sw_libssl *t = *ret = sw_libssl(err, sizeof(err));
	if (!t) {
		sw_log_error("agent: %s is https but TLS is not available: %s", "STEWARD_URL", err);
		return NULL;
	}
	SSL_CTX *ctx = t->SSL_CTX_new(t->TLS_client_method());
	if (!ctx)
		return NULL;
	/* SSL_CTX_set_min_proto_version(), SSL_CTX_set_mode() */
	t->SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
	t->SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	t->SSL_CTX_ctrl(ctx, SSL_CTRL_MODE,
			SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
	int ok = c->ca_file[0] ? t->SSL_CTX_load_verify_locations(ctx, c->ca_file, NULL)
			       : t->SSL_CTX_set_default_verify_paths(ctx);
	if (ok != 1) {
		t->SSL_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void sleep_until(uint64_t when, volatile int *stop)
{
	while (!stopped(stop)) {
		uint64_t now = now_ms();
		if (now >= when)
			return;
		uint64_t step = SW_MIN(when - now, 200);
		struct timespec ts = { (time_t)(step / 1000), (long)(step % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
}

int sw_agent_run(const struct sw_agent_config *c, const struct sw_agent_executor *exec,
		 volatile int *stop)
{
	struct sw_agent_journal *journal;
	int rc = sw_agent_journal_open(c->data_dir, SW_AGENT_JOURNAL_MAX_ENTRIES,
				       SW_AGENT_JOURNAL_MAX_BYTES, &journal);
	if (rc < 0)
		return rc;
	const struct sw_libssl *tls = NULL;
	SSL_CTX *ctx = NULL;
	if (c->tls && !(ctx = tls_context(c, &tls))) {
		sw_agent_journal_close(journal);
		return -EIO;
	}
	unsigned attempt = 0;
	while (!stopped(stop)) {
		struct conn k = { .fd = -1 };
		sw_ws_reader_init(&k.reader, SW_WS_CLIENT, SW_AGENT_MAX_MESSAGE);
		sw_ws_out_init(&k.out, SW_WS_CLIENT, SW_AGENT_MAX_QUEUED_OUTPUT);
		struct session s = { .c = c, .k = &k, .journal = journal, .exec = exec };
		if (pipe2(s.wake, O_CLOEXEC | O_NONBLOCK) < 0) {
			sw_log_error("agent: cannot make a pipe for the command runner: %s", strerror(errno));
			break;
		}
		if (pipe2(s.out_wake, O_CLOEXEC | O_NONBLOCK) < 0) {
			sw_log_error("agent: cannot make a pipe for the command runner: %s", strerror(errno));
			close(s.wake[0]);
			close(s.wake[1]);
			break;
		}
		pthread_mutex_init(&s.mu, NULL);
		pthread_cond_init(&s.cv, NULL);
		rc = dial(c, tls, ctx, &k, &s.drop);
		if (rc == 0) {
			run_session(&s, stop);
			end_commands(&s);
			if (s.welcomed)
				attempt = 0;
		} else if (s.drop.why == SW_AGENT_DROP_REJECTED) {
			sw_log_error("agent: the control plane refused the token (HTTP %d); check STEWARD_AGENT_TOKEN", s.drop.status);
		} else if (s.drop.status) {
			sw_log_warn("agent: the control plane answered HTTP %d to the upgrade", s.drop.status);
		} else {
			sw_log_warn("agent: cannot reach %s:%s (%s)", c->host, c->port, strerror(-rc));
		}
		close(s.wake[0]);
		close(s.wake[1]);
		close(s.out_wake[0]);
		close(s.out_wake[1]);
		pthread_mutex_destroy(&s.mu);
		pthread_cond_destroy(&s.cv);
		conn_close(&k);
		if (stopped(stop))
			break;
		uint64_t wait = sw_agent_backoff_ms(s.drop.why, attempt, s.drop.retry_hint_ms,
						    random_unit());
		if (attempt < 30)
			attempt++;
		sw_log_info("agent: reconnecting in %llu ms", (unsigned long long)wait);
		sleep_until(now_ms() + wait, stop);
	}
	if (ctx)
		tls->SSL_CTX_free(ctx);
	sw_agent_journal_close(journal);
	return 0;
}
