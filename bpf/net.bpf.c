/* Network bytes and packets per cgroup: one cgroup_skb program for each
 * direction, attached (through BPF links) to each container's own cgroup
 * in the unified hierarchy by the loader (src/metrics/bpf.c), so only the
 * containers' packets pass through them, the host's others never do. The
 * counters live in the kernel's per-CPU cgroup storage: one value per
 * (cgroup, attach type) and per CPU, made when the program is attached and
 * freed when the link goes, reached with bpf_get_local_storage() without
 * a key, a hash or a lookup, and written without atomics. A program
 * attached to a cgroup also runs for the cgroups below it, so a container
 * that makes cgroups of its own is still counted whole. The cgroup is the
 * socket's, which is right for containers with host networking too: they
 * share the host's interfaces but not its cgroups. Bytes are skb->len,
 * the IP packet with its headers. The programs never drop anything: they
 * return 1 (pass). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "steward_bpf.h"

/* Keyed by struct bpf_cgroup_storage_key { cgroup id, attach type }: the
 * two programs share the map and each direction has its own value. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE);
	__type(key, struct bpf_cgroup_storage_key);
	__type(value, struct sw_bpf_net);
} net_by_cgroup SEC(".maps");

SEC("cgroup_skb/ingress")
int sw_net_ingress(struct __sk_buff *skb)
{
	struct sw_bpf_net *v = bpf_get_local_storage(&net_by_cgroup, 0);
	v->bytes += skb->len;
	v->packets++;
	return 1;
}

SEC("cgroup_skb/egress")
int sw_net_egress(struct __sk_buff *skb)
{
	struct sw_bpf_net *v = bpf_get_local_storage(&net_by_cgroup, 0);
	v->bytes += skb->len;
	v->packets++;
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
