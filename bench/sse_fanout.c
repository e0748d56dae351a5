/* bench_sse_fanout: one deployment's log streamed live to N readers.
 *
 * One process runs what stewardd runs for GET /deployments/:id/live: the
 * server (one loop thread, composed as stewardd composes one), the hub, the log writer
 * (src/deploy/build_log.c) on a thread of its own writing lines at a fixed rate,
 * and the route's stream code (sw_deploy_live_start; the route table is this
 * file's: the database lookup in front of it is not what is measured, so
 * the database is absent). A second process (this binary with --client,
 * pinned to another core) opens N connections, reads every stream to its
 * end and counts what arrived.
 *
 * One run is one row: N readers, the writer at --rate lines/s for
 * --seconds (every line must reach every reader), or with --burst L the
 * writer writing L lines as fast as it can (its own cost per line; readers
 * that cannot keep up lose their stream, as the hub's bounds say). It
 * prints one line "RESULT key=value ..." (bench/sse_fanout turns rows into
 * the report; bench/METHODOLOGY.md explains the columns). Bounded: the
 * client gives up --seconds + 60 s after it starts. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "steward/base/config.h"
#include "steward/deploy/deploy.h"
#include "steward/http/http.h"
#include "steward/io/io.h"
#include "steward/base/log.h"
#include "steward/deploy/live_log.h"
#include "main/thread.h"

static const char deployment_id[] = "00000000-0000-4000-8000-00000000beef";

static void die(const char *what)
{
	fprintf(stderr, "bench_sse_fanout: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* ---- the client: N readers ---- */

struct reader {
	int fd;
	unsigned long long bytes;
	unsigned long long data_lines; /* "\ndata: " seen */
	int m;                          /* chars of "\ndata: " matched */
	bool eof;
};

static int client_main(int n, int port, int seconds, unsigned long long expect)
{
	static const char pat[] = "\ndata: ";
	struct reader *rs = calloc((size_t)n, sizeof(*rs));
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (!rs || ep < 0)
		die("client setup");
	char req[256];
	int reqlen = snprintf(req, sizeof(req), "GET /live/%s HTTP/1.0\r\nHost: bench\r\n\r\n", deployment_id);
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
			die("connect");
		if (write(fd, req, (size_t)reqlen) != reqlen)
			die("write");
		fcntl(fd, F_SETFL, O_NONBLOCK);
		rs[i].fd = fd;
		rs[i].m = 1; /* the body starts a line */
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)i };
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	int ready = 0, open = n;
	bool announced = false;
	double start = now_s(), first = 0, last = 0;
	static char buf[256 * 1024];
	struct epoll_event evs[256];
	while (open > 0 && now_s() - start < seconds + 60) {
		int k = epoll_wait(ep, evs, 256, 1000);
		for (int e = 0; e < k; e++) {
			struct reader *r = &rs[evs[e].data.u32];
			for (;;) {
				ssize_t got = read(r->fd, buf, sizeof(buf));
				if (got < 0 && (errno == EAGAIN || errno == EINTR))
					break;
				if (got <= 0) {
					r->eof = true;
					open--;
					epoll_ctl(ep, EPOLL_CTL_DEL, r->fd, NULL);
					close(r->fd);
					last = now_s();
					break;
				}
				unsigned long long before = r->data_lines;
				for (ssize_t i = 0; i < got; i++) {
					char b = buf[i];
					if (b == pat[r->m]) {
						if (++r->m == 7) {
							r->data_lines++;
							r->m = 0;
						}
					} else {
						r->m = b == '\n';
					}
				}
				if (announced) {
					if (!first)
						first = now_s();
					r->bytes += (unsigned long long)got;
				}
				/* The first data line is the log's "ready". */
				if (before == 0 && r->data_lines > 0 && ++ready == n && !announced) {
					announced = true;
					printf("connected\n");
					fflush(stdout);
				}
			}
		}
	}
	unsigned long long bytes = 0, lo = ~0ull, hi = 0;
	int eof = 0, complete = 0;
	for (int i = 0; i < n; i++) {
		bytes += rs[i].bytes;
		lo = rs[i].data_lines < lo ? rs[i].data_lines : lo;
		hi = rs[i].data_lines > hi ? rs[i].data_lines : hi;
		eof += rs[i].eof;
		complete += rs[i].data_lines == expect;
	}
	printf("CLIENT bytes=%llu lines_min=%llu lines_max=%llu ended=%d complete=%d seconds=%.3f\n",
	       bytes, lo, hi, eof, complete, last > first && first ? last - first : 0.0);
	fflush(stdout);
	return 0;
}

/* ---- the server ---- */

static struct sw_server_shared shared;
static struct sw_main_threads threads_shared;
static sem_t ready; /* posted once the server listens (or failed) */
static char data_dir[128];

static void on_ready(unsigned index)
{
	(void)index;
	sem_post(&ready);
}

static void building(const char *id, sw_deploy_live_status_cb done, void *arg)
{
	(void)id;
	done(arg, "BUILDING", NULL);
}

static void live(struct sw_http_request *req)
{
	struct sw_deploy_live_source src = { .deployment_id = deployment_id, .data_dir = data_dir,
					  .status = "BUILDING", .poll = building };
	sw_deploy_live_start(req, &src);
}

static void ping(struct sw_http_request *req)
{
	sw_http_respond(req, 204, NULL, SW_STR_NULL);
}

static void guard(struct sw_http_request *req)
{
	sw_http_run_handler(req);
}

static const struct sw_route routes[] = {
	{ SW_HTTP_GET, "/live/:id", SW_ACCESS_PUBLIC, live, 0, 0, { .summary = "bench" } },
	{ SW_HTTP_GET, "/ping", SW_ACCESS_PUBLIC, ping, 0, 0, { .summary = "bench" } },
};

/* Requests one after another, so that every receive buffer of the loop
 * (mapped lazily; a cost of the loop, not of any reader) is resident before
 * the first measurement. */
static void warm_up(int port, int n)
{
	static const char req[] = "GET /ping HTTP/1.0\r\n\r\n";
	for (int i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		char buf[512];
		if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
		    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
			die("warm-up");
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
}

static void *server_main(void *arg)
{
	(void)arg;
	if (sw_main_thread_run(&threads_shared, 0) < 0)
		fprintf(stderr, "bench_sse_fanout: the server thread failed\n");
	on_ready(0);
	return NULL;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

struct writer {
	struct sw_deploy_log *log;
	int rate, seconds, line_bytes;
	unsigned long long burst; /* lines as fast as it can; 0: paced */
	unsigned long long lines;
	double cpu;     /* the writer thread's CPU seconds */
	double wall;
	double in_calls; /* wall seconds inside sw_deploy_log_line() */
	double max_call_us;
	bool done;      /* atomic */
};

static void *writer_main(void *p)
{
	struct writer *w = p;
	char line[4096];
	memset(line, 'x', sizeof(line));
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	double t0 = now_s(), next = t0;
	unsigned long long target = (unsigned long long)w->rate * (unsigned long long)w->seconds;
	if (w->burst) {
		for (; w->lines < w->burst; w->lines++) {
			int n = snprintf(line, sizeof(line), "%08llu ", w->lines);
			line[n] = 'x';
			sw_deploy_log_line(w->log, line, (size_t)w->line_bytes);
		}
		target = 0;
	}
	/* Lines go out in ticks of 1 ms: rate / 1000 per tick (at least one). */
	while (w->lines < target) {
		double t = now_s();
		if (t < next) {
			struct timespec ts = { 0, (long)((next - t) * 1e9) };
			nanosleep(&ts, NULL);
			continue;
		}
		unsigned long long due = (unsigned long long)((t - t0) * w->rate) + 1;
		while (w->lines < due && w->lines < target) {
			int n = snprintf(line, sizeof(line), "%08llu ", w->lines);
			line[n] = 'x';
			double a = now_s();
			sw_deploy_log_line(w->log, line, (size_t)w->line_bytes);
			double us = (now_s() - a) * 1e6;
			w->in_calls += us / 1e6;
			if (us > w->max_call_us)
				w->max_call_us = us;
			w->lines++;
		}
		next += 0.001;
	}
	w->wall = now_s() - t0;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	w->cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;
	__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		die("a free port");
	close(fd);
	return ntohs(a.sin_port);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_sse_fanout [--readers N] [--rate LINES_PER_S] [--seconds S]\n"
			"                        [--line-bytes B] [--burst LINES] [--client-cpu CPU]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int readers = 100, rate = 1000, seconds = 5, line_bytes = 120, client_cpu = -1, burst = 0;
	if (argc >= 6 && strcmp(argv[1], "--client") == 0)
		return client_main(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), strtoull(argv[5], NULL, 10));
	/* Options come in pairs: a name, then its value. */
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		int v = atoi(argv[i + 1]);
		if (strcmp(argv[i], "--readers") == 0)
			readers = v;
		else if (strcmp(argv[i], "--rate") == 0)
			rate = v;
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = v;
		else if (strcmp(argv[i], "--line-bytes") == 0)
			line_bytes = v;
		else if (strcmp(argv[i], "--client-cpu") == 0)
			client_cpu = v;
		else if (strcmp(argv[i], "--burst") == 0)
			burst = v;
		else
			usage();
	}
	if (readers < 0 || readers > 5000 || rate < 1 || rate > 1000000 || seconds < 1 || seconds > 120 ||
	    line_bytes < 16 || line_bytes > 4000 || burst < 0 || burst > 10000000)
		usage();
	signal(SIGPIPE, SIG_IGN);
	sw_log_set_level(SW_LOG_ERROR);

	snprintf(data_dir, sizeof(data_dir), "/tmp/sw-sse-bench-XXXXXX");
	if (!mkdtemp(data_dir))
		die("mkdtemp");
	int port = free_port();
	char listen[64], err[256];
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	/* No database: the route's lookup in front of the stream is not measured. */
	const char *const env[][2] = {
		{ "STEWARD_LISTEN", listen }, { "STEWARD_DATA_DIR", data_dir },
		{ "STEWARD_ACCESS_LOG", "off" }, { "STEWARD_DB_POOL_SIZE", "1" },
		{ "DATABASE_URL", "postgresql:///none?host=/nonexistent-sw-bench" },
		/* Every reader is 127.0.0.1: out of the global limit's way. */
		{ "STEWARD_RATE_LIMIT_PER_MINUTE", "100000000" },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(env); i++)
		setenv(env[i][0], env[i][1], 1);
	struct sw_config cfg;
	if (sw_config_load(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench_sse_fanout: %s\n", err);
		return 1;
	}
	struct sw_router *router = sw_router_new(routes, SW_ARRAY_SIZE(routes), &cfg);
	if (!router)
		die("router");
	shared = (struct sw_server_shared){ .config = &cfg, .router = router, .guard = guard };
	threads_shared = (struct sw_main_threads){ .server = &shared, .conninfo = cfg.database_url,
						   .ready = on_ready };
	pthread_t st;
	sem_init(&ready, 0, 0);
	pthread_create(&st, NULL, server_main, NULL);
	while (sem_wait(&ready) < 0 && errno == EINTR)
		;

	struct writer w = { .rate = rate, .seconds = seconds, .line_bytes = line_bytes,
			    .burst = (unsigned long long)burst };
	w.log = sw_deploy_log_open(data_dir, deployment_id, 1024u << 20, NULL, 0);
	if (!w.log)
		die("the log");
	sw_deploy_log_line(w.log, "ready", 5);
	warm_up(port, 1024);
	usleep(200 * 1000);
	long rss_before = rss_kb();

	int out[2] = { -1, -1 };
	pid_t child = -1;
	FILE *from_client = NULL;
	if (readers > 0) {
		if (pipe(out) < 0)
			die("pipe");
		child = fork();
		if (child == 0) {
			pin(client_cpu);
			dup2(out[1], 1);
			/* Every reader should see "ready", each line, and the status. */
			char n[16], p[16], s[16], e[32];
			snprintf(n, sizeof(n), "%d", readers);
			snprintf(p, sizeof(p), "%d", port);
			snprintf(s, sizeof(s), "%d", seconds);
			snprintf(e, sizeof(e), "%llu",
				 (burst ? (unsigned long long)burst : (unsigned long long)rate * (unsigned long long)seconds) + 2);
			execl("/proc/self/exe", argv[0], "--client", n, p, s, e, (char *)NULL);
			_exit(127);
		}
		close(out[1]);
		from_client = fdopen(out[0], "r");
		char line[256];
		if (!fgets(line, sizeof(line), from_client) || strcmp(line, "connected\n") != 0) {
			fprintf(stderr, "bench_sse_fanout: the readers did not connect\n");
			return 1;
		}
	}
	long rss_connected = rss_kb();
	double cpu0 = cpu_s(), t0 = now_s();
	pthread_t wt;
	pthread_create(&wt, NULL, writer_main, &w);
	long rss_peak = rss_connected;
	while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE)) {
		usleep(100 * 1000);
		long r = rss_kb();
		if (r > rss_peak)
			rss_peak = r;
	}
	pthread_join(wt, NULL);
	double cpu1 = cpu_s(), t1 = now_s();
	long rss_end = rss_kb();
	if (rss_end > rss_peak)
		rss_peak = rss_end;
	struct sw_hub_counters hc;
	sw_hub_counters(&hc);
	sw_deploy_log_end(w.log, "SUCCEEDED", NULL);

	char client[512] = "CLIENT bytes=0 lines_min=0 lines_max=0 ended=0 complete=0 seconds=0";
	if (from_client) {
		char line[512];
		while (fgets(line, sizeof(line), from_client))
			if (strncmp(line, "CLIENT ", 7) == 0) {
				line[strcspn(line, "\n")] = '\0';
				snprintf(client, sizeof(client), "%s", line);
			}
		waitpid(child, NULL, 0);
	}
	printf("RESULT readers=%d mode=%s rate=%d seconds=%d line_bytes=%d lines=%llu "
	       "writer_cpu_us_per_line=%.2f writer_call_us=%.2f writer_max_call_us=%.0f "
	       "writer_lines_per_s=%.0f process_cpu_s=%.3f wall_s=%.3f rss_before_kb=%ld "
	       "rss_connected_kb=%ld rss_peak_kb=%ld chunks=%llu pulled=%llu posts=%llu %s\n",
	       readers, burst ? "burst" : "paced", rate, seconds, line_bytes, w.lines,
	       w.cpu * 1e6 / (double)w.lines, w.in_calls * 1e6 / (double)w.lines, w.max_call_us,
	       (double)w.lines / w.wall, cpu1 - cpu0, t1 - t0, rss_before, rss_connected, rss_peak,
	       (unsigned long long)hc.chunks_allocated, (unsigned long long)hc.pulled,
	       (unsigned long long)hc.posts, client + 7);
	fflush(stdout);
	sw_main_thread_request_shutdown(0);
	pthread_join(st, NULL);
	char path[256];
	sw_deploy_log_path(data_dir, deployment_id, path, sizeof(path));
	unlink(path);
	snprintf(path, sizeof(path), "%s/logs", data_dir);
	rmdir(path);
	rmdir(data_dir);
	sw_router_free(router);
	sw_config_release(&cfg);
	return 0;
}
