// SPDX-License-Identifier: GPL-2.0
/* The network counters as bpf/net.bpf.c had them before it moved to
 * per-CPU cgroup storage: keyed by the socket's cgroup id
 * (bpf_skb_cgroup_id) in an LRU per-CPU hash of 16,384 cgroups, a lookup
 * per packet (and an insert for a cgroup's first). Benchmark only
 * (bench/metrics_bpf.c attaches it beside the real programs, to the same
 * cgroup, so both are measured on the same packets). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct hash_net {
	__u64 rx_bytes;
	__u64 rx_packets;
	__u64 tx_bytes;
	__u64 tx_packets;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct hash_net);
} hash_by_cgroup SEC(".maps");

static __always_inline void count(struct __sk_buff *skb, int egress)
{
	__u64 id = bpf_skb_cgroup_id(skb);
	struct hash_net *v = bpf_map_lookup_elem(&hash_by_cgroup, &id);
	if (!v) {
		struct hash_net zero = {};
		bpf_map_update_elem(&hash_by_cgroup, &id, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&hash_by_cgroup, &id);
		if (!v)
			return;
	}
	if (egress) {
		v->tx_bytes += skb->len;
		v->tx_packets++;
	} else {
		v->rx_bytes += skb->len;
		v->rx_packets++;
	}
}

SEC("cgroup_skb/ingress")
int hash_ingress(struct __sk_buff *skb)
{
	count(skb, 0);
	return 1;
}

SEC("cgroup_skb/egress")
int hash_egress(struct __sk_buff *skb)
{
	count(skb, 1);
	return 1;
}
