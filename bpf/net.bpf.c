/* Network bytes and packets of one cgroup: one cgroup_skb program for each
 * direction. The loader (src/metrics/bpf.c) loads a copy of this object
 * for each container and attaches it (through BPF links) to the
 * container's own cgroup in the unified hierarchy, so only the
 * containers' packets pass through them, the host's others never do, and
 * a copy's counters are its container's: a per-CPU array of two elements
 * (received, sent) whose lookup with a constant key the verifier inlines,
 * so a packet costs no helper call, no key, no hash and no atomics. A
 * program attached to a cgroup also runs for the cgroups below it, so a
 * container that makes cgroups of its own is still counted whole. The
 * cgroup is the socket's, which is right for containers with host
 * networking too: they share the host's interfaces but not its cgroups.
 * Bytes are skb->len, the IP packet with its headers. The programs never
 * drop anything: they return 1 (pass). */
/* The UAPI header, not vmlinux.h: struct __sk_buff is the stable context
 * the verifier rewrites, so nothing here needs CO-RE, and without CO-RE
 * relocations libbpf never loads the kernel's BTF to load a copy (with
 * it, 15 ms a copy). */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "steward_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SW_BPF_NET_DIRECTIONS);
	__type(key, __u32);
	__type(value, struct sw_bpf_net);
} net_counts SEC(".maps");

static __always_inline void count(struct __sk_buff *skb, __u32 dir)
{
	struct sw_bpf_net *v = bpf_map_lookup_elem(&net_counts, &dir);
	if (v) {
		v->bytes += skb->len;
		v->packets++;
	}
}

SEC("cgroup_skb/ingress")
int sw_net_ingress(struct __sk_buff *skb)
{
	count(skb, SW_BPF_NET_RX);
	return 1;
}

SEC("cgroup_skb/egress")
int sw_net_egress(struct __sk_buff *skb)
{
	count(skb, SW_BPF_NET_TX);
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
