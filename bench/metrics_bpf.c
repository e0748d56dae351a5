/* The eBPF collectors' own cost (issue goal: network under 100 ns per
 * packet on average) from the kernel's BPF run-time statistics, and the
 * memory their maps hold.
 *
 * Usage: bench_metrics_bpf [MiB] [rounds] (root; default 256 MiB, 3 rounds)
 * Loads the programs (bpf/net.bpf.c, bpf/oom.bpf.c) as the sampler does,
 * and per round makes a cgroup of its own under the unified hierarchy's
 * root, moves itself there and has the collectors watch it as they watch
 * a container's cgroup. Two peers are attached to the same cgroup, so all
 * three run on the same packets (in an order that rotates each round: a
 * program's place in the cgroup's list is no one's advantage):
 * - the floor: a cgroup_skb program that only returns 1, one for each
 *   hook: what the hook and the statistics cost without any work (the
 *   statistics read the clock twice per run);
 * - the earlier counters (bench/net_peers.bpf.c): keyed by
 *   bpf_skb_cgroup_id in an LRU per-CPU hash, as bpf/net.bpf.c had them;
 * - per-CPU cgroup storage (bench/net_peers.bpf.c): one program for every
 *   cgroup, its counters reached with bpf_get_local_storage(), a helper
 *   call per packet that bpf/net.bpf.c (a copy per cgroup, with a per-CPU
 *   array whose lookup the verifier inlines) does without.
 * It also times sw_metrics_bpf_watch(), which loads and attaches a copy
 * (once per container), and prints the memory of a copy.
 * Then, per round, it sends MiB over one loopback TCP connection (the
 * receiver a child process, in the same cgroup) in 64 KiB writes (large
 * segments) and 20,000 messages of 100 bytes with TCP_NODELAY (small
 * packets), and prints runs and average ns per run of each program on
 * each hook. The statistics are on (BPF_ENABLE_STATS) for the process's
 * life. Only this process's traffic passes the programs (they are
 * attached to its cgroup, nowhere else). After each round it moves itself
 * back and removes the round's cgroup. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include "steward/metrics/bpf.h"
#include "net_peers.skel.h"

#define CGROUP2_MAGIC 0x63677270

static const char *unified_root(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < 2; i++) {
		struct statfs f;
		if (statfs(roots[i], &f) == 0 && (unsigned long)f.f_type == CGROUP2_MAGIC)
			return roots[i];
	}
	return NULL;
}

/* Writes "0" (this process) to dir/cgroup.procs. */
static int move_self(const char *dir)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	int fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, "0", 1);
	close(fd);
	return n == 1 ? 0 : -1;
}

/* This process's cgroup in the unified hierarchy ("/..." under root). */
static int own_cgroup(char *ret, size_t len)
{
	char line[4200];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int rc = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::", 3) == 0) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(ret, len, "%s", line + 3);
			rc = 0;
		}
	if (f)
		fclose(f);
	return rc;
}

/* "r0 = 1; exit" as a cgroup_skb program, one per hook. */
struct peer {
	int prog[2], link[2];
};

static int floor_load(struct peer *f)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	for (int i = 0; i < 2; i++) {
		f->prog[i] = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, i ? "sw_floor_out" : "sw_floor_in", "GPL", insns,
					   2, NULL);
		if (f->prog[i] < 0)
			return -1;
	}
	return 0;
}

static void floor_detach(struct peer *f)
{
	for (int i = 0; i < 2; i++) {
		if (f->link[i] >= 0)
			close(f->link[i]);
		f->link[i] = -1;
	}
}

static int floor_attach(struct peer *f, int cg)
{
	static const enum bpf_attach_type types[2] = { BPF_CGROUP_INET_INGRESS, BPF_CGROUP_INET_EGRESS };
	for (int i = 0; i < 2; i++)
		if ((f->link[i] = bpf_link_create(f->prog[i], cg, types[i], NULL)) < 0)
			return -1;
	return 0;
}

static void peers_detach(struct net_peers_bpf *h)
{
	struct bpf_link **l[] = { &h->links.hash_ingress, &h->links.hash_egress, &h->links.storage_ingress,
				  &h->links.storage_egress };
	for (size_t i = 0; i < 4; i++) {
		bpf_link__destroy(*l[i]);
		*l[i] = NULL;
	}
}

static int hash_attach(struct net_peers_bpf *h, int cg)
{
	if (!(h->links.hash_ingress = bpf_program__attach_cgroup(h->progs.hash_ingress, cg)) ||
	    !(h->links.hash_egress = bpf_program__attach_cgroup(h->progs.hash_egress, cg)))
		return -1;
	return 0;
}

static int storage_attach(struct net_peers_bpf *h, int cg)
{
	if (!(h->links.storage_ingress = bpf_program__attach_cgroup(h->progs.storage_ingress, cg)) ||
	    !(h->links.storage_egress = bpf_program__attach_cgroup(h->progs.storage_egress, cg)))
		return -1;
	return 0;
}

static void prog_runs(int fd, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	memset(&info, 0, sizeof(info));
	*runs = *ns = 0;
	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0) {
		*runs = info.run_cnt;
		*ns = info.run_time_ns;
	}
}

/* Runs and ns of each program on each hook: [program][hook][runs, ns]. */
enum { OURS, FLOOR, HASH, STORAGE, PROGS };
static const char *const prog_names[PROGS] = { "bpf/net.bpf.c (a copy per cgroup, per-CPU array)",
					       "floor: empty program", "earlier: LRU per-CPU hash by cgroup id",
					       "per-CPU cgroup storage" };
struct reading {
	uint64_t v[PROGS][2][2];
};

static void read_all(struct sw_metrics_bpf *b, const struct peer *fl, struct net_peers_bpf *h, struct reading *r)
{
	struct sw_metrics_bpf_stats s;
	sw_metrics_bpf_stats(b, &s);
	r->v[OURS][0][0] = s.ingress_runs;
	r->v[OURS][0][1] = s.ingress_ns;
	r->v[OURS][1][0] = s.egress_runs;
	r->v[OURS][1][1] = s.egress_ns;
	for (int d = 0; d < 2; d++)
		prog_runs(fl->prog[d], &r->v[FLOOR][d][0], &r->v[FLOOR][d][1]);
	prog_runs(h ? bpf_program__fd(h->progs.hash_ingress) : -1, &r->v[HASH][0][0], &r->v[HASH][0][1]);
	prog_runs(h ? bpf_program__fd(h->progs.hash_egress) : -1, &r->v[HASH][1][0], &r->v[HASH][1][1]);
	prog_runs(h ? bpf_program__fd(h->progs.storage_ingress) : -1, &r->v[STORAGE][0][0], &r->v[STORAGE][0][1]);
	prog_runs(h ? bpf_program__fd(h->progs.storage_egress) : -1, &r->v[STORAGE][1][0], &r->v[STORAGE][1][1]);
}

static double per_run(const struct reading *a, const struct reading *b, int p, int d)
{
	uint64_t runs = b->v[p][d][0] - a->v[p][d][0];
	return runs ? (double)(b->v[p][d][1] - a->v[p][d][1]) / (double)runs : 0.0;
}

static void report(const char *what, const struct reading *a, const struct reading *b, bool have_hash)
{
	double floor_in = per_run(a, b, FLOOR, 0), floor_out = per_run(a, b, FLOOR, 1);
	for (int p = 0; p < PROGS; p++) {
		if ((p == HASH || p == STORAGE) && !have_hash)
			continue;
		double in = per_run(a, b, p, 0), out = per_run(a, b, p, 1);
		uint64_t rin = b->v[p][0][0] - a->v[p][0][0], rout = b->v[p][1][0] - a->v[p][1][0];
		double all = rin + rout ? (in * (double)rin + out * (double)rout) / (double)(rin + rout) : 0.0;
		double fl = rin + rout ? (floor_in * (double)rin + floor_out * (double)rout) / (double)(rin + rout) : 0.0;
		if (p == FLOOR)
			printf("| %s | %s | %lu | %.1f | %lu | %.1f | %.1f | - |\n", what, prog_names[p], (unsigned long)rin,
			       in, (unsigned long)rout, out, all);
		else
			printf("| %s | %s | %lu | %.1f | %lu | %.1f | %.1f | %.1f |\n", what, prog_names[p],
			       (unsigned long)rin, in, (unsigned long)rout, out, all, all - fl);
	}
}

/* One loopback connection: the child reads and discards everything. */
static int connect_sink(pid_t *child)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0)
		return -1;
	*child = fork();
	if (*child == 0) {
		int c = accept(l, NULL, NULL);
		char buf[65536];
		while (c >= 0 && read(c, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(l);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	return s;
}

static int send_all(int s, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(s, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	const char *root = unified_root();
	char why[256], dir[4200], back[4096], backdir[8400];
	if (rounds < 1 || rounds > 20 || mib < 1 || mib > 4096) {
		fprintf(stderr, "usage: bench_metrics_bpf [MiB 1..4096] [rounds 1..20]\n");
		return 2;
	}
	if (!root) {
		printf("SKIP: no unified cgroup hierarchy\n");
		return 77;
	}
	struct sw_metrics_bpf *b = sw_metrics_bpf_open(root, why, sizeof(why));
	if (!b) {
		printf("SKIP: %s\n", why);
		return 77;
	}
	int stats_fd = sw_metrics_bpf_enable_stats();
	if (stats_fd < 0) {
		printf("SKIP: the kernel's BPF statistics cannot be turned on (%s)\n", strerror(-stats_fd));
		return 77;
	}
	if (own_cgroup(back, sizeof(back)) < 0) {
		printf("SKIP: this process's cgroup in the unified hierarchy is unknown\n");
		return 77;
	}
	snprintf(backdir, sizeof(backdir), "%s%s", root, back);
	int rc = 1;
	struct peer fl = { { -1, -1 }, { -1, -1 } };
	if (floor_load(&fl) < 0) {
		fprintf(stderr, "the empty program did not load: %s\n", strerror(errno));
		return 1;
	}
	struct net_peers_bpf *h = net_peers_bpf__open_and_load();
	if (!h)
		fprintf(stderr, "(the peers of bench/net_peers.bpf.c did not load: %s; left out)\n", strerror(errno));
	static char chunk[65536];
	memset(chunk, 'x', sizeof(chunk));

	printf("eBPF network counters on a cgroup of their own under %s; per round %zu MiB in 64 KiB writes, "
	       "then 20000 writes of 100 bytes; %d rounds\n\n",
	       root, mib, rounds);
	printf("| round, traffic | program | ingress runs | ns per run | egress runs | ns per run | ns per run, both hooks "
	       "| minus floor |\n|---|---|---|---|---|---|---|---|\n");
	struct reading first, r0, r1, r2;
	struct sw_metrics_cgroup_net n = { 0 };
	uint64_t sent = 0;
	double watch_us = 0;
	read_all(b, &fl, h, &first);
	for (int round = 1; round <= rounds; round++) {
		struct stat st;
		snprintf(dir, sizeof(dir), "%s/steward-bench-net-%d-%d", root, (int)getpid(), round);
		if (mkdir(dir, 0755) < 0 || stat(dir, &st) < 0) {
			printf("SKIP: cannot make a cgroup of its own under %s (%s)\n", root, strerror(errno));
			rc = 77;
			goto out;
		}
		int cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bool ok = cg >= 0 && move_self(dir) == 0;
		/* Attached in the order ours, floor, hash, storage shifted by the round. */
		for (int k = 0; ok && k < PROGS; k++) {
			int p = (k + round - 1) % PROGS;
			if (p == OURS) {
				struct timespec t0, t1;
				clock_gettime(CLOCK_MONOTONIC, &t0);
				ok = sw_metrics_bpf_watch(b, dir, (uint64_t)st.st_ino) == 0;
				clock_gettime(CLOCK_MONOTONIC, &t1);
				watch_us += (double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3;
			}
			else if (p == FLOOR)
				ok = floor_attach(&fl, cg) == 0;
			else if (p == HASH && h)
				ok = hash_attach(h, cg) == 0;
			else if (p == STORAGE && h)
				ok = storage_attach(h, cg) == 0;
		}
		if (cg >= 0)
			close(cg);
		pid_t child = -1;
		int s = ok ? connect_sink(&child) : -1;
		if (s >= 0) {
			read_all(b, &fl, h, &r0);
			for (size_t i = 0; i < mib * 16 && ok; i++)
				ok = send_all(s, chunk, sizeof(chunk)) == 0;
			read_all(b, &fl, h, &r1);
			int one = 1;
			setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			for (int i = 0; i < 20000 && ok; i++)
				ok = send_all(s, chunk, 100) == 0;
			read_all(b, &fl, h, &r2);
			close(s);
			waitpid(child, NULL, 0);
			sw_metrics_bpf_net(b, (uint64_t)st.st_ino, &n);
		} else {
			ok = false;
		}
		floor_detach(&fl);
		if (h)
			peers_detach(h);
		if (move_self(backdir) < 0)
			fprintf(stderr, "cannot move back to %s: %s\n", backdir, strerror(errno));
		if (rmdir(dir) < 0)
			fprintf(stderr, "cannot remove %s: %s\n", dir, strerror(errno));
		if (!ok) {
			fprintf(stderr, "round %d failed: %s\n", round, strerror(errno));
			goto out;
		}
		sent = mib * 1048576 + 20000 * 100;
		char what[64];
		snprintf(what, sizeof(what), "%d, 64 KiB writes", round);
		report(what, &r0, &r1, h != NULL);
		snprintf(what, sizeof(what), "%d, 100-byte writes", round);
		report(what, &r1, &r2, h != NULL);
	}
	struct reading last;
	read_all(b, &fl, h, &last);
	report("all rounds", &first, &last, h != NULL);

	struct sw_metrics_bpf_stats s;
	sw_metrics_bpf_stats(b, &s);
	printf("\ncounted on the last round's cgroup: tx %lu bytes in %lu packets, rx %lu bytes in %lu packets, for %lu "
	       "bytes of TCP payload written (IP and TCP headers, handshakes and ACKs counted too)\n",
	       (unsigned long)n.tx_bytes, (unsigned long)n.tx_packets, (unsigned long)n.rx_bytes,
	       (unsigned long)n.rx_packets, (unsigned long)sent);
	printf("watching a cgroup (loading and attaching its copy): %.0f us on average over %d\n", watch_us / rounds,
	       rounds);
	printf("memory: %lu bytes of memlock per copy's map and %lu per copy's two programs (%lu copies loaded), "
	       "the OOM ring buffer %lu, on %d possible CPUs",
	       (unsigned long)(s.cgroups ? s.net_map_bytes / s.cgroups : 0),
	       (unsigned long)(s.cgroups ? s.net_prog_bytes / s.cgroups : 0), (unsigned long)s.cgroups,
	       (unsigned long)(s.map_bytes - s.net_map_bytes), libbpf_num_possible_cpus());
	if (h)
		printf("; the earlier LRU per-CPU hash of 16,384 cgroups: %lu bytes, the cgroup storage map: %lu "
		       "(its storages, two per cgroup, not counted there)",
		       (unsigned long)sw_metrics_bpf_memlock(bpf_map__fd(h->maps.hash_by_cgroup)),
		       (unsigned long)sw_metrics_bpf_memlock(bpf_map__fd(h->maps.storage_net)));
	printf("\n");
	rc = 0;
out:
	net_peers_bpf__destroy(h);
	for (int i = 0; i < 2; i++)
		if (fl.prog[i] >= 0)
			close(fl.prog[i]);
	sw_metrics_bpf_close(b);
	close(stats_fd);
	return rc;
}
