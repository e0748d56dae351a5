/* Network bytes and packets per cgroup: one cgroup_skb program for each
 * direction, attached to the unified hierarchy's root, so every socket of
 * every cgroup below passes through them. The key is the cgroup of the
 * packet's socket (bpf_skb_cgroup_id), which is right for containers with
 * host networking too: they share the host's interfaces but not its
 * cgroups. Bytes are skb->len, the IP packet with its headers.
 * The programs never drop anything: they return 1 (pass). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "steward_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, SW_BPF_CGROUPS_MAX);
	__type(key, __u64);
	__type(value, struct sw_bpf_net);
} net_by_cgroup SEC(".maps");

static __always_inline void count(struct __sk_buff *skb, int egress)
{
	__u64 id = bpf_skb_cgroup_id(skb);
	struct sw_bpf_net *v = bpf_map_lookup_elem(&net_by_cgroup, &id);
	if (!v) {
		struct sw_bpf_net zero = {};
		bpf_map_update_elem(&net_by_cgroup, &id, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&net_by_cgroup, &id);
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
int sw_net_ingress(struct __sk_buff *skb)
{
	count(skb, 0);
	return 1;
}

SEC("cgroup_skb/egress")
int sw_net_egress(struct __sk_buff *skb)
{
	count(skb, 1);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
