/* Shared between the eBPF programs of this folder and their loader
 * (src/metrics/bpf.c): map keys, values and ring-buffer records. Fixed
 * width types only; both sides compile it. */
#ifndef STEWARD_BPF_SHARED_H
#define STEWARD_BPF_SHARED_H

/* Cgroups whose traffic is counted at once; the least recently updated
 * is dropped past it (an LRU map), which only a host with more live
 * cgroups than this could notice. */
#define SW_BPF_CGROUPS_MAX 16384
/* Bytes of OOM records waiting for the sampler (each 40 bytes). */
#define SW_BPF_OOM_RING_BYTES (64 * 1024)

/* Per cgroup and per CPU (the map is per-CPU, so no atomics on the
 * packet path); the loader sums the CPUs. */
struct sw_bpf_net {
	__u64 rx_bytes;
	__u64 rx_packets;
	__u64 tx_bytes;
	__u64 tx_packets;
};

struct sw_bpf_oom {
	__u64 cgroup_id; /* the victim's cgroup in the unified hierarchy */
	__u64 at_ns;     /* bpf_ktime_get_ns() */
	__u32 pid;       /* the victim */
	__u32 pad;
	char comm[16];
};

#endif
