// SPDX-License-Identifier: GPL-2.0
/* Two other ways of counting a cgroup's packets, measured beside
 * bpf/net.bpf.c by bench/metrics_bpf.c (attached to the same cgroup, so
 * all run on the same packets). Benchmark only.
 *
 * hash_*: the network counters as bpf/net.bpf.c had them before it moved
 *   to per-CPU cgroup storage: keyed by the socket's cgroup id
 *   (bpf_skb_cgroup_id) in an LRU per-CPU hash of 16,384 cgroups, a
 *   lookup per packet (and an insert for a cgroup's first).
 * storage_*: one program for every cgroup, its counters in per-CPU cgroup
 *   storage (BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE, keyed by cgroup and
 *   attach type, made when the program is attached to a cgroup) reached
 *   with bpf_get_local_storage(): one helper call per packet, where
 *   bpf/net.bpf.c (a copy per cgroup, a per-CPU array whose lookup the
 *   verifier inlines) makes none. */
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

/* Per cgroup, per direction (the key's attach type), per CPU. */
struct storage_net {
	__u64 bytes;
	__u64 packets;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct storage_net);
} storage_net SEC(".maps");

static __always_inline void storage_count(struct __sk_buff *skb)
{
	struct storage_net *v = bpf_get_local_storage(&storage_net, 0);
	v->bytes += skb->len;
	v->packets++;
}

SEC("cgroup_skb/ingress")
int storage_ingress(struct __sk_buff *skb)
{
	storage_count(skb);
	return 1;
}

SEC("cgroup_skb/egress")
int storage_egress(struct __sk_buff *skb)
{
	storage_count(skb);
	return 1;
}
