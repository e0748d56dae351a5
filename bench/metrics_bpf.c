/* The eBPF collectors' own cost (issue goal: network under 100 ns per
 * packet on average) from the kernel's BPF run-time statistics, and the
 * memory their maps hold.
 *
 * Usage: bench_metrics_bpf [MiB] (root; default 256)
 * Loads the programs (bpf/net.bpf.c on the unified cgroup hierarchy's
 * root, bpf/oom.bpf.c), turns the statistics on for this process's life,
 * then sends MiB over one loopback TCP connection in 64 KiB writes (large
 * segments) and 20,000 messages of 100 bytes with TCP_NODELAY (small
 * packets), and prints runs and average ns per run of each program. The
 * programs see every packet of the host while attached, other processes'
 * included: the averages are over all of them. The floor beside them: a
 * cgroup_skb program that only returns 1, attached the same way, measured
 * the same way (what the statistics and the hook cost without our work). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include "steward/metrics/bpf.h"

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

/* The floor: "r0 = 1; exit" as a cgroup_skb program on both hooks. */
struct floor {
	int prog, ingress, egress;
};

static int floor_attach(struct floor *f, const char *root)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int cg = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	f->prog = bpf_prog_load(BPF_PROG_TYPE_CGROUP_SKB, "sw_floor", "GPL", insns, 2, NULL);
	if (cg < 0 || f->prog < 0)
		return -1;
	f->ingress = bpf_link_create(f->prog, cg, BPF_CGROUP_INET_INGRESS, NULL);
	f->egress = bpf_link_create(f->prog, cg, BPF_CGROUP_INET_EGRESS, NULL);
	close(cg);
	return f->ingress >= 0 && f->egress >= 0 ? 0 : -1;
}

static void floor_runs(const struct floor *f, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	memset(&info, 0, sizeof(info));
	*runs = *ns = 0;
	if (bpf_obj_get_info_by_fd(f->prog, &info, &len) == 0) {
		*runs = info.run_cnt;
		*ns = info.run_time_ns;
	}
}

static void report(const char *what, const struct sw_metrics_bpf_stats *a, const struct sw_metrics_bpf_stats *b)
{
	uint64_t ir = b->ingress_runs - a->ingress_runs, in = b->ingress_ns - a->ingress_ns;
	uint64_t er = b->egress_runs - a->egress_runs, en = b->egress_ns - a->egress_ns;
	printf("| %s | %lu | %.1f | %lu | %.1f |\n", what, (unsigned long)ir, ir ? (double)in / (double)ir : 0.0,
	       (unsigned long)er, er ? (double)en / (double)er : 0.0);
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
	const char *root = unified_root();
	char why[256];
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
	struct floor fl = { -1, -1, -1 };
	bool have_floor = floor_attach(&fl, root) == 0;
	uint64_t f0r = 0, f0n = 0, f2r = 0, f2n = 0;
	struct sw_metrics_bpf_stats s0, s1, s2;
	static char chunk[65536];
	memset(chunk, 'x', sizeof(chunk));

	pid_t child;
	int s = connect_sink(&child);
	if (s < 0)
		return 1;
	sw_metrics_bpf_stats(b, &s0);
	if (have_floor)
		floor_runs(&fl, &f0r, &f0n);
	for (size_t i = 0; i < mib * 16; i++)
		if (send_all(s, chunk, sizeof(chunk)) < 0)
			return 1;
	sw_metrics_bpf_stats(b, &s1);
	int one = 1;
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < 20000; i++)
		if (send_all(s, chunk, 100) < 0)
			return 1;
	sw_metrics_bpf_stats(b, &s2);
	if (have_floor)
		floor_runs(&fl, &f2r, &f2n);
	close(s);
	waitpid(child, NULL, 0);

	printf("eBPF collectors on %s; %zu MiB in 64 KiB writes, then 20000 writes of 100 bytes\n\n", root, mib);
	printf("| traffic | ingress runs | ns per run | egress runs | ns per run |\n|---|---|---|---|---|\n");
	report("64 KiB writes", &s0, &s1);
	report("100-byte writes, TCP_NODELAY", &s1, &s2);
	report("both", &s0, &s2);
	if (have_floor)
		printf("| floor: an empty cgroup_skb program, both hooks | %lu runs | %.1f ns per run | | |\n",
		       (unsigned long)(f2r - f0r), f2r > f0r ? (double)(f2n - f0n) / (double)(f2r - f0r) : 0.0);
	else
		printf("(no floor: the empty program did not load)\n");
	printf("\nmaps: %lu bytes (LRU per-CPU hash of %d cgroups, ring buffer)\n", (unsigned long)s2.map_bytes, 16384);
	close(stats_fd);
	if (fl.ingress >= 0)
		close(fl.ingress);
	if (fl.egress >= 0)
		close(fl.egress);
	if (fl.prog >= 0)
		close(fl.prog);
	sw_metrics_bpf_close(b);
	return 0;
}
