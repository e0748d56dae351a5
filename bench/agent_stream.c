/* A build context's stream through the agent channel against a plain
 * loopback TCP copy of the same bytes, in one run (bench/agent_fleet.mjs,
 * part "stream", drives it; bench/METHODOLOGY.md).
 *
 *   bench_agent_stream CONNINFO SERVER_ID MASTER_KEY_FILE WORK_DIR MIB
 *
 * Writes a context of MIB MiB of random bytes (incompressible, one file)
 * and a Dockerfile under WORK_DIR, then:
 *   tcp    the context's tar stream (sw_driver_tar, as the builds read it)
 *          written to a TCP socket on 127.0.0.1, read by a thread into an
 *          unnamed file in WORK_DIR (the agent stages into an unnamed file
 *          too); timed from the first read to the receiver's last write;
 *   agent  sw_driver_image_build() of the remote driver for SERVER_ID, whose
 *          real steward-agent is connected with a DOCKER_HOST nobody serves:
 *          the context's digest, its input chunks through agent_command_input,
 *          the holder's session and the socket, staged and checked by the
 *          agent, then the engine call, which fails at once (UNREACHABLE).
 *          The call's time is the stream's; its error must be the engine's,
 *          which proves the whole context arrived and matched its SHA-256.
 * Each runs RUNS (3) times, alternating; prints per run
 * "tcp <bytes> <us>" and "agent <bytes> <us>".
 * MASTER_KEY_FILE: stewardd's master.key (the remote driver seals each
 * command's payload under it). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <libpq-fe.h>
#include "steward/base/seal.h"
#include "steward/driver/remote.h"
#include "driver/driver_internal.h"

#define RUNS 3
#define COPY_BUF (256u * 1024)

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static const char *work;

struct rx {
	int lfd;
	uint64_t bytes, end_us;
	int rc;
};

static void *receiver(void *arg)
{
	struct rx *rx = arg;
	int c = accept(rx->lfd, NULL, NULL);
	int out = open(work, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	char *buf = malloc(COPY_BUF);
	rx->rc = c >= 0 && out >= 0 && buf ? 0 : -1;
	for (ssize_t n; rx->rc == 0 && (n = read(c, buf, COPY_BUF)) != 0;) {
		if (n < 0 && errno == EINTR)
			continue;
		for (ssize_t off = 0; n > 0 && off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w <= 0) {
				rx->rc = -1;
				break;
			}
			off += w;
		}
		if (n < 0)
			rx->rc = -1;
		else
			rx->bytes += (uint64_t)n;
	}
	rx->end_us = now_us();
	free(buf);
	if (out >= 0)
		close(out);
	if (c >= 0)
		close(c);
	return NULL;
}

/* The tar stream of the context to a loopback socket: 0 with the bytes and
 * the time, or -1. */
static int tcp_copy(uint64_t *bytes, uint64_t *us)
{
	struct rx rx = { .lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0) };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	if (rx.lfd < 0 || bind(rx.lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(rx.lfd, 1) < 0 ||
	    getsockname(rx.lfd, (struct sockaddr *)&a, &alen) < 0)
		return -1;
	pthread_t th;
	if (pthread_create(&th, NULL, receiver, &rx) != 0)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char err[256];
	char *buf = malloc(COPY_BUF);
	uint64_t t0 = now_us();
	struct sw_driver_tar *t = sw_driver_tar_open(work, "Dockerfile", 0, err, sizeof(err));
	int rc = fd >= 0 && buf && t && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 ? 0 : -1;
	for (ssize_t n; rc == 0 && (n = sw_driver_tar_read(t, buf, COPY_BUF)) != 0;) {
		if (n < 0) {
			rc = -1;
			break;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = send(fd, buf + off, (size_t)(n - off), MSG_NOSIGNAL);
			if (w <= 0) {
				rc = -1;
				break;
			}
			off += w;
		}
	}
	uint64_t sent = t ? sw_driver_tar_bytes(t) : 0;
	if (fd >= 0)
		close(fd);
	pthread_join(th, NULL);
	close(rx.lfd);
	sw_driver_tar_free(t);
	free(buf);
	if (rc || rx.rc || rx.bytes != sent) {
		fprintf(stderr, "tcp copy failed (%llu of %llu bytes)\n", (unsigned long long)rx.bytes,
			(unsigned long long)sent);
		return -1;
	}
	*bytes = rx.bytes;
	*us = rx.end_us - t0;
	return 0;
}

static void no_log(void *arg, const char *line, size_t len)
{
	(void)arg;
	fprintf(stderr, "agent build: %.*s\n", (int)len, line);
}

static int agent_copy(PGconn *pg, const char *server, uint64_t *bytes, uint64_t *us)
{
	char err[512];
	struct sw_driver *d = NULL;
	if (sw_driver_remote_new(pg, server, NULL, 30000, &d, err, sizeof(err)) < 0) {
		fprintf(stderr, "remote driver: %s\n", err);
		return -1;
	}
	char tag[64];
	snprintf(tag, sizeof(tag), "bench/stream:%llu", (unsigned long long)now_us());
	struct sw_image_build b = { .context_dir = work, .dockerfile = "Dockerfile", .tag = tag };
	uint64_t t0 = now_us();
	int rc = sw_driver_image_build(d, &b, no_log, NULL, err, sizeof(err));
	*us = now_us() - t0;
	sw_driver_free(d);
	/* The engine is nobody: a build that got to it had its context whole. */
	fprintf(stderr, "agent build ended (%d): %s\n", rc, err);
	if (rc == 0 || rc == -EBADMSG || rc == -ETIMEDOUT || rc == -EHOSTUNREACH || rc == -ECANCELED) {
		fprintf(stderr, "the remote build did not end at the engine\n");
		return -1;
	}
	struct sw_driver_tar *t = sw_driver_tar_open(work, "Dockerfile", 0, err, sizeof(err));
	char buf[65536];
	while (t && sw_driver_tar_read(t, buf, sizeof(buf)) > 0) {
	}
	*bytes = t ? sw_driver_tar_bytes(t) : 0;
	sw_driver_tar_free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s CONNINFO SERVER_ID MASTER_KEY_FILE WORK_DIR MIB\n", argv[0]);
		return 2;
	}
	work = argv[4];
	unsigned mib = (unsigned)atoi(argv[5]);
	uint8_t key[32];
	FILE *kf = fopen(argv[3], "rb");
	if (!kf || fread(key, 1, 32, kf) != 32) {
		fprintf(stderr, "cannot read 32 bytes of %s\n", argv[3]);
		return 1;
	}
	fclose(kf);
	sw_seal_init_key(key);
	/* The context: a Dockerfile and mib MiB of random bytes. */
	char path[4096];
	snprintf(path, sizeof(path), "%s/Dockerfile", work);
	FILE *f = fopen(path, "w");
	if (!f || fputs("FROM scratch\nCOPY blob /blob\n", f) < 0 || fclose(f) != 0)
		return 1;
	snprintf(path, sizeof(path), "%s/blob", work);
	f = fopen(path, "w");
	FILE *ur = fopen("/dev/urandom", "rb");
	char *chunk = malloc(1 << 20);
	for (unsigned i = 0; f && ur && chunk && i < mib; i++)
		if (fread(chunk, 1, 1 << 20, ur) != 1 << 20 || fwrite(chunk, 1, 1 << 20, f) != 1 << 20)
			return 1;
	if (!f || !ur || !chunk || fclose(f) != 0)
		return 1;
	fclose(ur);
	free(chunk);
	PGconn *pg = PQconnectdb(argv[1]);
	if (PQstatus(pg) != CONNECTION_OK) {
		fprintf(stderr, "%s", PQerrorMessage(pg));
		return 1;
	}
	for (int i = 0; i < RUNS; i++) {
		uint64_t bytes, us;
		if (tcp_copy(&bytes, &us) < 0)
			return 1;
		printf("tcp %llu %llu\n", (unsigned long long)bytes, (unsigned long long)us);
		fflush(stdout);
		if (agent_copy(pg, argv[2], &bytes, &us) < 0)
			return 1;
		printf("agent %llu %llu\n", (unsigned long long)bytes, (unsigned long long)us);
		fflush(stdout);
	}
	PQfinish(pg);
	unlink(path);
	return 0;
}
