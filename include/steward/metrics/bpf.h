/* The eBPF collectors (bpf/net.bpf.c and bpf/oom.bpf.c, loaded through libbpf skeletons
 * generated at build time): per-cgroup network bytes and packets counted
 * by cgroup_skb programs attached to each watched cgroup (a container's,
 * in the unified hierarchy; sw_metrics_bpf_watch()), and OOM kills as events from the oom:mark_victim tracepoint, each with
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
/* Loads the programs and attaches the tracepoint (globally); the
 * cgroup_skb pair is attached by sw_metrics_bpf_watch(). cgroup2_root: the
 * unified hierarchy's root directory, where the watched cgroups are. NULL
 * with a sentence in why (not built, no BTF, not permitted, ...). Not
 * thread-safe: one caller at a time (the sampler's lock). */
struct sw_metrics_bpf *sw_metrics_bpf_open(const char *cgroup2_root, char *why, size_t whylen);
/* Detaches and unloads; NULL-safe. */
void sw_metrics_bpf_close(struct sw_metrics_bpf *b);
/* Counts the traffic of the cgroup whose directory is cgroup_dir (and of
 * the cgroups below it) from now on: loads a copy of the pair of
 * cgroup_skb programs with counters of its own and attaches it to the
 * cgroup through links (multi-attach, so programs others attached stay),
 * once however often it is called for the same cgroup_id (the directory's
 * inode). 0 or -errno. */
int sw_metrics_bpf_watch(struct sw_metrics_bpf *b, const char *cgroup_dir, uint64_t cgroup_id);
/* Forgets the watched cgroups that were removed (the kernel detached
 * their links) and unloads their copies; the count still watched. One
 * syscall per watched cgroup: call it when containers went, not per
 * tick for every container. */
size_t sw_metrics_bpf_sweep(struct sw_metrics_bpf *b);
/* The count of watched cgroups (removed ones not yet swept included). */
size_t sw_metrics_bpf_watched(const struct sw_metrics_bpf *b);
/* The counters of one watched cgroup since it was first watched; a
 * cgroup not watched, or removed: zeros and -ENOENT. */
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
 * sw_metrics_bpf_enable_stats()), and the memory their maps hold; the
 * network figures summed over the copies of every watched cgroup. */
struct sw_metrics_bpf_stats {
	uint64_t ingress_runs, ingress_ns, egress_runs, egress_ns, oom_runs, oom_ns;
	uint64_t map_bytes;      /* the kernel's "memlock" of every map */
	uint64_t cgroups;        /* watched cgroups, each with a copy of the network programs */
	uint64_t net_map_bytes;  /* the copies' maps (in map_bytes too) */
	uint64_t net_prog_bytes; /* the copies' programs ("memlock" of each) */
};
int sw_metrics_bpf_stats(struct sw_metrics_bpf *b, struct sw_metrics_bpf_stats *ret);
/* Turns the kernel's run-time statistics on for as long as the returned
 * descriptor stays open (a benchmark's, never the daemon's): the fd or
 * -errno. */
int sw_metrics_bpf_enable_stats(void);
/* The kernel's "memlock" of a BPF map (its fdinfo line), bytes; 0 when
 * unknown. */
uint64_t sw_metrics_bpf_memlock(int map_fd);

#endif
