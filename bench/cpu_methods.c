/* Container CPU by three methods, side by side in one run (issue 12):
 *   (a) cgroup: pread each container's cpu.stat (its fd opened once, as
 *       the sampler keeps it) and parse usage_usec: what src/metrics does;
 *   (b) iter:   one read of a BPF cgroup iterator's fd (iter.s/cgroup of
 *       bench/cpu_methods.bpf.c) attached to the containers' parent
 *       cgroup: every descendant's (cgroup id, CPU ns) in one call, then
 *       matched to the containers by cgroup id;
 *   (c) sched:  a tp_btf/sched_switch program adds each switched-out
 *       task's run time to its cgroup in a hash map; a tick looks every
 *       container's id up in the map (one syscall each).
 *
 * Usage (root): bench_cpu_methods PARENT TICKS SPIN [PINGPONG_SECONDS] < dirs
 *   PARENT  the containers' parent directory in the unified hierarchy
 *   SPIN    the cgroup directory of a container spinning a known load
 *   dirs    the N containers' cgroup directories, one a line (N may be 0)
 * Per method: CPU per tick (CLOCK_THREAD_CPUTIME_ID around the tick's
 * reads: user + system, so the iterator's kernel work in read() is
 * counted), TICKS ticks 100 ms apart. Correctness: the spinner's CPU over
 * a 3 s window by each method against cpu.stat's. With PINGPONG_SECONDS
 * (> 0): the scheduler hook's own cost under a pipe ping-pong between two
 * processes, from the kernel's BPF run-time statistics (run_time_ns /
 * run_cnt of on_switch: ns per switch; run_cnt per second: the host's
 * switch rate), and the ping-pong's round trips per second with and
 * without the hook, in alternated rounds of the same run. Prints one JSON object. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "steward/metrics/parse.h"
#include "cpu_methods.skel.h"

#define PP_ROUNDS 3 /* ping-pong rounds with the hook and without it */

struct ctr {
	uint64_t id;
	int fd;
	uint64_t a_ns, b_ns, c_ns;
};

static double thread_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int open_ctr(struct ctr *c, const char *dir)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/cpu.stat", dir);
	if (stat(dir, &st) < 0 || (c->fd = open(p, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "bench_cpu_methods: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	c->id = (uint64_t)st.st_ino; /* the cgroup id BPF programs see */
	return 0;
}

/* (a) */
static void read_cgroup(struct ctr *c, size_t n)
{
	char buf[4096];
	for (size_t i = 0; i < n; i++) {
		ssize_t r = pread(c[i].fd, buf, sizeof(buf) - 1, 0);
		uint64_t us = 0;
		if (r > 0 && sw_metrics_parse_keyed_u64(buf, (size_t)r, "usage_usec", &us) == 0)
			c[i].a_ns = us * 1000;
	}
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct ctr *)a)->id, y = ((const struct ctr *)b)->id;
	return x < y ? -1 : x > y;
}

/* (b): c sorted by id */
static int read_iter(struct bpf_link *link, struct ctr *c, size_t n)
{
	static uint64_t buf[8192];
	int fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -1;
	ssize_t r;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		for (size_t k = 0; k + 1 < (size_t)r / 8; k += 2) {
			struct ctr key = { .id = buf[k] };
			struct ctr *hit = n ? bsearch(&key, c, n, sizeof(*c), cmp_id) : NULL;
			if (hit)
				hit->b_ns = buf[k + 1];
		}
	}
	close(fd);
	return r < 0 ? -1 : 0;
}

/* (c) */
static void read_sched(int map, struct ctr *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		if (bpf_map_lookup_elem(map, &c[i].id, &v) == 0)
			c[i].c_ns = v;
	}
}

/* Two processes bouncing one byte through two pipes for `seconds`:
 * round trips per second. */
static double pingpong(double seconds)
{
	int ab[2], ba[2];
	if (pipe(ab) < 0 || pipe(ba) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char b;
		close(ab[1]);
		close(ba[0]);
		while (read(ab[0], &b, 1) == 1 && write(ba[1], &b, 1) == 1)
			;
		_exit(0);
	}
	close(ab[0]);
	close(ba[1]);
	char b = 'x';
	uint64_t trips = 0;
	double t0 = mono_s(), t;
	do {
		for (int i = 0; i < 1000; i++) {
			if (write(ab[1], &b, 1) != 1 || read(ba[0], &b, 1) != 1)
				return -1;
		}
		trips += 1000;
	} while ((t = mono_s()) - t0 < seconds);
	close(ab[1]);
	close(ba[0]);
	waitpid(pid, NULL, 0);
	return (double)trips / (t - t0);
}

static int prog_stats(int fd, uint64_t *cnt, uint64_t *ns)
{
	struct bpf_prog_info info = { 0 };
	uint32_t len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
		return -1;
	*cnt = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: bench_cpu_methods PARENT TICKS SPIN [PINGPONG_SECONDS] < dirs\n");
		return 2;
	}
	int ticks = atoi(argv[2]);
	double pp_s = argc > 4 ? atof(argv[4]) : 0;
	if (ticks < 1 || ticks > 1000 || pp_s < 0 || pp_s > 60) {
		fprintf(stderr, "bench_cpu_methods: TICKS 1..1000, PINGPONG_SECONDS 0..60\n");
		return 2;
	}
	size_t n = 0, cap = 16;
	struct ctr *c = calloc(cap, sizeof(*c));
	char line[4096];
	while (c && fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			continue;
		if (n == cap && !(c = realloc(c, (cap *= 2) * sizeof(*c))))
			return 1;
		memset(&c[n], 0, sizeof(*c));
		if (open_ctr(&c[n], line) < 0)
			return 1;
		n++;
	}
	if (!c)
		return 1;
	qsort(c, n, sizeof(*c), cmp_id);

	libbpf_set_print(NULL);
	struct cpu_methods_bpf *skel = cpu_methods_bpf__open_and_load();
	if (!skel) {
		printf("{\"skip\":\"the BPF programs do not load here (root, BTF and a kernel with the kfunc css_rstat_flush are needed): %s\"}\n",
		       strerror(errno));
		return 77;
	}
	int parent = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0) {
		fprintf(stderr, "bench_cpu_methods: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	union bpf_iter_link_info li = { 0 };
	li.cgroup.cgroup_fd = (uint32_t)parent;
	li.cgroup.order = BPF_CGROUP_ITER_DESCENDANTS_PRE;
	DECLARE_LIBBPF_OPTS(bpf_iter_attach_opts, io, .link_info = &li, .link_info_len = sizeof(li));
	struct bpf_link *iter = bpf_program__attach_iter(skel->progs.dump_cpu, &io);
	if (!iter) {
		fprintf(stderr, "bench_cpu_methods: attaching the cgroup iterator: %s\n", strerror(errno));
		return 1;
	}

	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	struct bpf_link *sched = bpf_program__attach(skel->progs.on_switch);
	if (!sched) {
		fprintf(stderr, "bench_cpu_methods: attaching sched_switch: %s\n", strerror(errno));
		return 1;
	}
	int map = bpf_map__fd(skel->maps.runtime);

	/* Cost per tick, the three methods interleaved tick by tick. */
	double ta = 0, tb = 0, tc = 0;
	struct timespec gap = { 0, 100 * 1000 * 1000 };
	nanosleep(&gap, NULL);
	for (int t = 0; t < ticks; t++) {
		nanosleep(&gap, NULL);
		double x = thread_cpu_us();
		read_cgroup(c, n);
		double y = thread_cpu_us();
		if (read_iter(iter, c, n) < 0)
			return 1;
		double z = thread_cpu_us();
		read_sched(map, c, n);
		double w = thread_cpu_us();
		ta += y - x;
		tb += z - y;
		tc += w - z;
	}

	/* Correctness: the spinner over 3 s by each method. */
	struct ctr spin = { 0 };
	if (open_ctr(&spin, argv[3]) < 0)
		return 1;
	struct ctr s0, s1;
	read_cgroup(&spin, 1);
	read_iter(iter, &spin, 1);
	read_sched(map, &spin, 1);
	s0 = spin;
	struct timespec win = { 3, 0 };
	nanosleep(&win, NULL);
	read_cgroup(&spin, 1);
	read_iter(iter, &spin, 1);
	read_sched(map, &spin, 1);
	s1 = spin;
	double da = (double)(s1.a_ns - s0.a_ns), db = (double)(s1.b_ns - s0.b_ns), dc = (double)(s1.c_ns - s0.c_ns);

	/* The hook's own cost under a context-switch-heavy load: rounds of
	 * the ping-pong with the hook and without it, alternated (the machine
	 * is shared: alternating spreads other load over both sides). The
	 * statistics count only while the hook is attached. */
	uint64_t c0 = 0, n0 = 0, c1 = 0, n1 = 0;
	double pp_with = 0, pp_without = 0, secs = 0;
	if (pp_s > 0 && stats_fd >= 0) {
		int pfd = bpf_program__fd(skel->progs.on_switch);
		prog_stats(pfd, &c0, &n0);
		for (int round = 0; round < PP_ROUNDS; round++) {
			double t0 = mono_s();
			pp_with += pingpong(pp_s / PP_ROUNDS);
			secs += mono_s() - t0;
			bpf_link__destroy(sched);
			sched = NULL;
			pp_without += pingpong(pp_s / PP_ROUNDS);
			if (round + 1 < PP_ROUNDS && !(sched = bpf_program__attach(skel->progs.on_switch)))
				return 1;
		}
		prog_stats(pfd, &c1, &n1);
		pp_with /= PP_ROUNDS;
		pp_without /= PP_ROUNDS;
	}

	printf("{\"n\":%zu,\"ticks\":%d,\"a_us\":%.1f,\"b_us\":%.1f,\"c_us\":%.1f,"
	       "\"spin_a_ms\":%.1f,\"spin_b_ms\":%.1f,\"spin_c_ms\":%.1f,\"window_s\":3",
	       n, ticks, ta / ticks, tb / ticks, tc / ticks, da / 1e6, db / 1e6, dc / 1e6);
	if (pp_s > 0)
		printf(",\"stats\":%s,\"switches\":%llu,\"switch_s\":%.2f,\"hook_ns\":%llu,"
		       "\"pp_without\":%.0f,\"pp_with\":%.0f",
		       stats_fd >= 0 ? "true" : "false", (unsigned long long)(c1 - c0), secs,
		       (unsigned long long)(n1 - n0), pp_without, pp_with);
	printf("}\n");
	if (sched)
		bpf_link__destroy(sched);
	bpf_link__destroy(iter);
	cpu_methods_bpf__destroy(skel);
	return 0;
}
