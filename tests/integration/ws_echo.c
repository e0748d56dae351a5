/* A WebSocket echo server on Steward's frame layer (src/agent/ws.c) for
 * ws_frames.test.mjs: the npm ws package, as a real client, and raw
 * sockets talk to it. One connection at a time, blocking I/O; it prints
 * "port N" once listening, then one line per event ("message 1 12",
 * "ping", "close 4000", "error 1002 <why>").
 *
 * Usage: sw_ws_echo MAX_MESSAGE_BYTES */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include "steward/agent/ws.h"

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads the upgrade request and answers 101; the bytes after the head
 * stay in *in. */
static int upgrade(int fd, struct sw_buf *in)
{
	char *end = NULL;
	while (!end) {
		if (in->len > 16384 || sw_buf_reserve(in, 4096) < 0)
			return -1;
		ssize_t r = recv(fd, in->data + in->len, in->cap - in->len - 1, 0);
		if (r <= 0)
			return -1;
		in->len += (size_t)r;
		in->data[in->len] = '\0';
		end = strstr(in->data, "\r\n\r\n");
	}
	char *key = strcasestr(in->data, "\r\nSec-WebSocket-Key:");
	if (!key)
		return -1;
	key += 20;
	while (*key == ' ')
		key++;
	char accept[29];
	if (sw_ws_accept_key(sw_str_from(key, strcspn(key, "\r\n ")), accept) < 0)
		return -1;
	char resp[256];
	int n = snprintf(resp, sizeof(resp),
			 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
			 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", accept);
	sw_buf_consume(in, (size_t)(end - in->data) + 4);
	return send_all(fd, resp, (size_t)n);
}

static void serve(int fd, size_t max_message)
{
	struct sw_buf in = { 0 };
	struct sw_ws_reader r;
	struct sw_ws_out out;
	sw_ws_reader_init(&r, SW_WS_SERVER, max_message);
	sw_ws_out_init(&out, SW_WS_SERVER, 1 << 20);
	bool done = upgrade(fd, &in) < 0;
	while (!done) {
		size_t used;
		struct sw_ws_event ev;
		if (sw_ws_read(&r, (const uint8_t *)in.data, in.len, &used, &ev) < 0)
			break;
		switch (ev.kind) {
		case SW_WS_NEED_MORE:
			break;
		case SW_WS_MESSAGE:
			printf("message %d %zu\n", ev.opcode, ev.len);
			sw_ws_out_message(&out, ev.opcode, ev.data, ev.len);
			break;
		case SW_WS_PING:
			printf("ping\n");
			sw_ws_out_control(&out, SW_WS_OP_PONG, ev.data, ev.len);
			break;
		case SW_WS_PONG:
			printf("pong\n");
			break;
		case SW_WS_CLOSE:
			printf("close %u\n", ev.close_code);
			sw_ws_out_close(&out, ev.close_code == SW_WS_CLOSE_NO_STATUS ? 0 : ev.close_code, NULL);
			done = true;
			break;
		case SW_WS_ERROR:
			printf("error %u %s\n", ev.close_code, ev.error);
			sw_ws_out_close(&out, ev.close_code, ev.error);
			done = true;
			break;
		}
		fflush(stdout);
		sw_buf_consume(&in, used);
		if (out.buf.len) {
			if (send_all(fd, out.buf.data, out.buf.len) < 0)
				break;
			out.buf.len = 0;
		}
		if (done || used)
			continue;
		if (sw_buf_reserve(&in, 16384) < 0)
			break;
		ssize_t n = recv(fd, in.data + in.len, in.cap - in.len, 0);
		if (n <= 0) {
			printf("eof\n");
			fflush(stdout);
			break;
		}
		in.len += (size_t)n;
	}
	shutdown(fd, SHUT_WR);
	char sink[512];
	while (recv(fd, sink, sizeof(sink), 0) > 0) {
	}
	close(fd);
	sw_buf_release(&in);
	sw_ws_reader_release(&r);
	sw_ws_out_release(&out);
}

int main(int argc, char **argv)
{
	size_t max_message = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 8) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &alen) < 0) {
		perror("sw_ws_echo");
		return 1;
	}
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			serve(fd, max_message);
	}
}
