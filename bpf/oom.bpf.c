/* OOM kills as events: the oom:mark_victim tracepoint fires once per
 * victim the OOM killer (global or a memory cgroup's) chooses. Attached
 * as a raw tracepoint, so it needs no tracefs mount (servers and
 * containers often lack /sys/kernel/tracing).
 *
 * The record carries the victim's cgroup. Since Linux 6.8 the tracepoint
 * hands over the victim's task, whose cgroup is read directly; before,
 * only its pid, and the cgroup of the task that ran out of memory stands
 * in (for a memory cgroup's OOM that task is inside the same container as
 * the victim). CO-RE tells the two apart by the fields 6.8 added to the
 * tracepoint's record. Records go through a ring buffer the sampler
 * drains. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "steward_bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SW_BPF_OOM_RING_BYTES);
} oom_events SEC(".maps");

SEC("raw_tp/mark_victim")
int sw_oom_mark_victim(struct bpf_raw_tracepoint_args *ctx)
{
	struct sw_bpf_oom *e = bpf_ringbuf_reserve(&oom_events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->at_ns = bpf_ktime_get_ns();
	e->pad = 0;
	if (bpf_core_field_exists(struct trace_event_raw_mark_victim, total_vm)) {
		struct task_struct *t = (struct task_struct *)ctx->args[0];
		e->pid = (__u32)BPF_CORE_READ(t, pid);
		e->cgroup_id = BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
		BPF_CORE_READ_STR_INTO(&e->comm, t, comm);
	} else {
		e->pid = (__u32)ctx->args[0];
		e->cgroup_id = bpf_get_current_cgroup_id();
		bpf_get_current_comm(&e->comm, sizeof(e->comm));
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
