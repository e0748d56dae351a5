// SPDX-License-Identifier: GPL-2.0
/* Two other ways of counting a cgroup's packets, measured beside
 * bpf/net.bpf.c by bench/metrics_bpf.c (attached to the same cgroup, so
 * all run on the same packets). Benchmark only.
 *
 * hash_*: the network counters as bpf/net.bpf.c had them before it moved
 *   to per-CPU cgroup storage: keyed by the socket's cgroup id
 *   (bpf_skb_cgroup_id) in an LRU per-CPU hash of 16,384 cgroups, a
 *   lookup per packet (and an insert for a cgroup's first).
 * array_*: a per-CPU array of one element, which the verifier inlines (no
 *   helper call at all, Linux 6.10 and later): it would need a program
 *   and a map of its own loaded for each container (the array has no
 *   cgroup in it), which is what the cgroup storage saves. */
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

static __always_inline void add(struct hash_net *v, struct __sk_buff *skb, int egress)
{
	if (egress) {
		v->tx_bytes += skb->len;
		v->tx_packets++;
	} else {
		v->rx_bytes += skb->len;
		v->rx_packets++;
	}
}

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
	add(v, skb, egress);
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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct hash_net);
} array_net SEC(".maps");

static __always_inline void array_count(struct __sk_buff *skb, int egress)
{
	__u32 k = 0;
	struct hash_net *v = bpf_map_lookup_elem(&array_net, &k);
	if (v)
		add(v, skb, egress);
}

SEC("cgroup_skb/ingress")
int array_ingress(struct __sk_buff *skb)
{
	array_count(skb, 0);
	return 1;
}

SEC("cgroup_skb/egress")
int array_egress(struct __sk_buff *skb)
{
	array_count(skb, 1);
	return 1;
}
