/* Shared between the eBPF programs of this folder and their loader
 * (src/metrics/bpf.c): map keys, values and ring-buffer records. Fixed
 * width types only; both sides compile it. */
#ifndef STEWARD_BPF_SHARED_H
#define STEWARD_BPF_SHARED_H

/* Cgroups whose traffic is counted at once (the loader's table of
 * watched cgroups, each with its own copy of bpf/net.bpf.c). */
#define SW_BPF_CGROUPS_MAX 16384
/* The elements of net.bpf.c's per-CPU array. */
#define SW_BPF_NET_RX 0
#define SW_BPF_NET_TX 1
#define SW_BPF_NET_DIRECTIONS 2
/* Bytes of OOM records waiting for the sampler (each 40 bytes, plus the
 * ring's 8-byte header: about 340 kills between two reads). The ring is
 * mapped into the reader whole, resident: 64 KiB cost an idle
 * steward-agent 0.13 MB of RSS, 16 KiB 0.04 (issue 11). */
#define SW_BPF_OOM_RING_BYTES (16 * 1024)

/* Per cgroup (a copy of the programs each), per direction and per CPU
 * (a per-CPU array, so no atomics on the packet path); the loader sums
 * the CPUs. */
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
