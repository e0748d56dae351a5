/* Shared between the eBPF programs of this folder and their loader
 * (src/metrics/bpf.c): map keys, values and ring-buffer records. Fixed
 * width types only; both sides compile it. */
#ifndef STEWARD_BPF_SHARED_H
#define STEWARD_BPF_SHARED_H

/* Cgroups whose traffic is counted at once (the loader's table of
 * attached cgroups; the map itself grows with the attachments). */
#define SW_BPF_CGROUPS_MAX 16384
/* Bytes of OOM records waiting for the sampler (each 40 bytes). */
#define SW_BPF_OOM_RING_BYTES (64 * 1024)

/* Per cgroup, per direction (the storage key's attach type: ingress is
 * received, egress sent) and per CPU (per-CPU storage, so no atomics on
 * the packet path); the loader sums the CPUs. */
struct sw_bpf_net {
	__u64 bytes;
	__u64 packets;
};

struct sw_bpf_oom {
	__u64 cgroup_id; /* the victim's cgroup in the unified hierarchy */
	__u64 at_ns;     /* bpf_ktime_get_ns() */
	__u32 pid;       /* the victim */
	__u32 pad;
	char comm[16];
};

#endif
