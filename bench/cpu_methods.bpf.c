// SPDX-License-Identifier: GPL-2.0
/* Two candidate ways of reading container CPU with eBPF, measured against
 * the sampler's cgroup cpu.stat reads by bench/cpu_methods.c (issue 12).
 * Benchmark only: stewardd does not load these.
 *
 * dump_cpu (iter.s/cgroup): one read of the iterator's fd walks every
 *   cgroup under the one it was attached to and writes (cgroup id,
 *   cumulative CPU ns) for each. The figure is the one cpu.stat's
 *   usage_usec shows: the cgroup's base stat after an rstat flush (the
 *   kfunc css_rstat_flush, sleepable, hence iter.s), so the per-CPU
 *   counters of the cgroup and its descendants are folded in first.
 * on_switch (tp_btf/sched_switch): on every context switch the time since
 *   this CPU's previous switch is added to the outgoing task's cgroup (the
 *   unified hierarchy's, keyed by cgroup id) in a hash map; idle (pid 0)
 *   is not counted. Paid on every switch of the host. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

extern void css_rstat_flush(struct cgroup_subsys_state *css) __ksym;

struct cpu_rec {
	__u64 id;
	__u64 ns;
};

SEC("iter.s/cgroup")
int dump_cpu(struct bpf_iter__cgroup *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct cgroup *cgrp = ctx->cgroup;
	if (!cgrp)
		return 0;
	css_rstat_flush(&cgrp->self);
	struct cpu_rec r = {
		.id = BPF_CORE_READ(cgrp, kn, id),
		.ns = BPF_CORE_READ(cgrp, bstat.cputime.sum_exec_runtime),
	};
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} last_switch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, __u64);
} runtime SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0;
	__u64 *last = bpf_map_lookup_elem(&last_switch, &zero);
	if (!last)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 then = *last;
	*last = now;
	if (!then || prev->pid == 0)
		return 0;
	__u64 id = prev->cgroups->dfl_cgrp->kn->id;
	__u64 d = now - then;
	__u64 *v = bpf_map_lookup_elem(&runtime, &id);
	if (v)
		__sync_fetch_and_add(v, d);
	else
		bpf_map_update_elem(&runtime, &id, &d, BPF_NOEXIST);
	return 0;
}
