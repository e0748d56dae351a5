/* The eBPF collectors (bpf/net.bpf.c and bpf/oom.bpf.c, loaded through libbpf skeletons
 * generated at build time): per-cgroup network bytes and packets counted
 * by cgroup_skb programs attached to the unified cgroup hierarchy's root,
 * and OOM kills as events from the oom:mark_victim tracepoint, each with
 * the victim's cgroup. Keys are cgroup ids of the unified hierarchy (the
 * inode number of the cgroup's directory), the same on a pure v2 host and
 * on a hybrid one.
 *
 * Built only when bpftool, clang and libbpf were found at configure time
 * (SW_HAVE_BPF); otherwise sw_metrics_bpf_open() says so and the sampler
 * reads cgroup files. Loading needs CAP_BPF and CAP_NET_ADMIN (root) and
 * the kernel's BTF. */
#ifndef STEWARD_METRICS_BPF_H
#define STEWARD_METRICS_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sw_metrics_bpf;

struct sw_metrics_cgroup_net {
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets; /* IP packet bytes (headers included) */
};

struct sw_metrics_oom_event {
	uint64_t cgroup_id;   /* the victim's cgroup (unified hierarchy) */
	uint64_t at_ns;       /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	pid_t pid;            /* the victim, as the host's PID namespace sees it */
	char comm[16];
};

/* Whether this build carries the programs. */
bool sw_metrics_bpf_built(void);
/* Loads the programs and attaches them: the cgroup_skb pair to the
 * unified hierarchy's root directory cgroup2_root (multi-attach, so
 * programs others attached stay), the tracepoint globally. NULL with a
 * sentence in why (not built, no BTF, not permitted, ...). */
struct sw_metrics_bpf *sw_metrics_bpf_open(const char *cgroup2_root, char *why, size_t whylen);
/* Detaches and unloads; NULL-safe. */
void sw_metrics_bpf_close(struct sw_metrics_bpf *b);
/* The counters of one cgroup since the programs were attached; a cgroup
 * with no traffic yet: zeros and -ENOENT. */
int sw_metrics_bpf_net(struct sw_metrics_bpf *b, uint64_t cgroup_id, struct sw_metrics_cgroup_net *ret);
/* Hands each OOM event waiting in the ring buffer to cb, without
 * blocking; the count handed, or -errno. */
int sw_metrics_bpf_oom_drain(struct sw_metrics_bpf *b,
			     void (*cb)(void *arg, const struct sw_metrics_oom_event *e), void *arg);
/* Waits up to timeout_ms for OOM events, handing each to cb; the count. */
int sw_metrics_bpf_oom_wait(struct sw_metrics_bpf *b, int timeout_ms,
			    void (*cb)(void *arg, const struct sw_metrics_oom_event *e), void *arg);

/* The programs' own cost, from the kernel's BPF run-time statistics
 * (counted only while someone holds BPF_ENABLE_STATS: see
 * sw_metrics_bpf_enable_stats()), and the memory their maps hold. */
struct sw_metrics_bpf_stats {
	uint64_t ingress_runs, ingress_ns, egress_runs, egress_ns, oom_runs, oom_ns;
	uint64_t map_bytes; /* the kernel's "memlock" of every map */
};
int sw_metrics_bpf_stats(struct sw_metrics_bpf *b, struct sw_metrics_bpf_stats *ret);
/* Turns the kernel's run-time statistics on for as long as the returned
 * descriptor stays open (a benchmark's, never the daemon's): the fd or
 * -errno. */
int sw_metrics_bpf_enable_stats(void);

#endif
