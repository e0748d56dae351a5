/* The sampler: two readings of the kernel's counters make one sample.
 *
 * Rates (CPU %, bytes per second, a container's CPU %) need two readings.
 * The sampler keeps the previous one, so a sample every 15 seconds costs
 * one reading, and an on-demand sample taken long after the last (or the
 * first ever) reads twice, SW_METRICS_SETTLE_MS apart.
 *
 * Containers come from the caller (the engine's view, by container and
 * application id). Each is mapped to its cgroup once, through its init
 * process's /proc/<pid>/cgroup, and remembered by (container id, pid): a
 * restart makes a new cgroup, so a new pid maps again. The cgroup is read
 * from the unified hierarchy (cpu.stat, memory.current, memory.max,
 * memory.events) or, on a v1 or hybrid host, from the cpuacct and memory
 * controllers. Network counters per container come only from eBPF:
 * containers run with host networking, so their namespace's counters are
 * the host's; without eBPF the field is null and the sample says why.
 * The eBPF counters are attached to a container's cgroup when it is
 * mapped (sw_metrics_bpf_watch()), so they count from its first sample. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "steward/metrics/bpf.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define OOM_TABLE_MAX 1024 /* cgroups whose eBPF OOM counts are remembered */

/* A container's cgroup files, opened once when it is mapped and read
 * with pread() every tick: opening a cgroup file costs more than reading
 * it (kernfs sets up a seq_file per open), and the path walk more again. */
enum cg_file { CG_CPU, CG_MEM, CG_MEM_MAX, CG_OOM, CG_FILES };

struct cgroup_entry {
	char id[65];
	pid_t pid;
	bool seen;                 /* in the current sample's refs */
	bool resolved;             /* mapped (successfully or not) for this pid */
	uint64_t cgroup_id;        /* unified hierarchy */
	bool net_watched;          /* its traffic counted by eBPF */
	int fd[CG_FILES];          /* -1 when absent */
	enum sw_metrics_source cpu_src, mem_src;
	uint64_t usage_us, usage_at_us;         /* the latest reading */
	uint64_t prev_usage_us, prev_usage_at_us; /* the one before */
	bool have_usage, have_prev;
};

struct oom_count {
	uint64_t cgroup_id, count;
};

/* per[] is sized to the host's CPUs (grown as needed, up to
 * SW_METRICS_CPU_MAX), not to the maximum: two fixed arrays of 1024 were
 * 128 KB of an idle stewardd's resident heap, for a host of a few CPUs. */
struct raw {
	uint64_t at_us;
	struct sw_metrics_cpu_times total;
	struct sw_metrics_cpu_times *per;
	size_t ncpu, capcpu;
	struct sw_metrics_net_counters net[SW_METRICS_IFACE_MAX];
	size_t nnet;
};

struct sw_metrics_sampler {
	pthread_mutex_t mu;
	struct sw_metrics_paths paths;
	char public_ip[64];
	/* The cgroup layout, found once. */
	char unified_root[PATH_MAX]; /* absolute, "" when no unified hierarchy */
	char v1_cpuacct[PATH_MAX], v1_memory[PATH_MAX]; /* absolute controller roots, "" when absent */
	struct sw_metrics_bpf *bpf;
	char bpf_status[160];
	struct oom_count oom[OOM_TABLE_MAX];
	size_t noom;
	/* Facts read once. */
	struct sw_metrics_sample facts;
	/* Readings: swapped, not copied, once cur has served. */
	struct raw prev, cur;
	bool have_prev;
	struct cgroup_entry *cg;
	size_t ncg, capcg;
	struct sw_buf buf;
	struct sw_metrics_mounts mounts;
};

static void entry_close(struct cgroup_entry *e)
{
	for (int f = 0; f < CG_FILES; f++) {
		if (e->fd[f] >= 0)
			close(e->fd[f]);
		e->fd[f] = -1;
	}
}

static bool is_cgroup2(const char *path)
{
	struct statfs f;
	return statfs(path, &f) == 0 && (unsigned long)f.f_type == (unsigned long)CGROUP2_SUPER_MAGIC;
}

static bool dir_has(const char *dir, const char *file)
{
	char p[PATH_MAX];
	return (size_t)snprintf(p, sizeof(p), "%s/%s", dir, file) < sizeof(p) && access(p, F_OK) == 0;
}

static void find_cgroup_layout(struct sw_metrics_sampler *s)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/fs/cgroup", s->paths.sys);
	if (is_cgroup2(p)) {
		snprintf(s->unified_root, sizeof(s->unified_root), "%s", p);
		return;
	}
	snprintf(p, sizeof(p), "%s/fs/cgroup/unified", s->paths.sys);
	if (is_cgroup2(p))
		snprintf(s->unified_root, sizeof(s->unified_root), "%s", p);
	static const char *const cpuacct[] = { "cpuacct", "cpu,cpuacct", "cpuacct,cpu" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(cpuacct) && !s->v1_cpuacct[0]; i++) {
		snprintf(p, sizeof(p), "%s/fs/cgroup/%s", s->paths.sys, cpuacct[i]);
		if (dir_has(p, "cpuacct.usage"))
			snprintf(s->v1_cpuacct, sizeof(s->v1_cpuacct), "%s", p);
	}
	snprintf(p, sizeof(p), "%s/fs/cgroup/memory", s->paths.sys);
	if (dir_has(p, "memory.usage_in_bytes"))
		snprintf(s->v1_memory, sizeof(s->v1_memory), "%s", p);
}

struct sw_metrics_sampler *sw_metrics_sampler_new(const struct sw_metrics_options *o)
{
	struct sw_metrics_sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	s->paths = o->paths;
	if (o->public_ip)
		snprintf(s->public_ip, sizeof(s->public_ip), "%s", o->public_ip);
	find_cgroup_layout(s);
	if (!o->bpf)
		snprintf(s->bpf_status, sizeof(s->bpf_status), "off by configuration");
	else if (!s->unified_root[0])
		snprintf(s->bpf_status, sizeof(s->bpf_status), "no unified cgroup hierarchy to attach to");
	else if ((s->bpf = sw_metrics_bpf_open(s->unified_root, s->bpf_status, sizeof(s->bpf_status))))
		snprintf(s->bpf_status, sizeof(s->bpf_status), "loaded");
	sw_metrics_host_facts(&s->paths, &s->facts);
	return s;
}

void sw_metrics_sampler_free(struct sw_metrics_sampler *s)
{
	if (!s)
		return;
	sw_metrics_bpf_close(s->bpf);
	for (size_t i = 0; i < s->ncg; i++)
		entry_close(&s->cg[i]);
	free(s->cg);
	free(s->prev.per);
	free(s->cur.per);
	sw_buf_release(&s->buf);
	sw_metrics_mounts_release(&s->mounts);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

const char *sw_metrics_sampler_bpf_status(const struct sw_metrics_sampler *s)
{
	return s->bpf_status;
}

const char *sw_metrics_source_name(enum sw_metrics_source src)
{
	switch (src) {
	case SW_METRICS_SRC_PROC: return "proc";
	case SW_METRICS_SRC_CGROUP_V2: return "cgroup-v2";
	case SW_METRICS_SRC_CGROUP_V1: return "cgroup-v1";
	case SW_METRICS_SRC_EBPF: return "ebpf";
	case SW_METRICS_SRC_NETNS: return "netns";
	case SW_METRICS_SRC_NONE: break;
	}
	return "none";
}

void sw_metrics_sample_count(struct sw_metrics_sample *s)
{
	s->running = s->stopped = s->unhealthy = 0;
	for (size_t i = 0; i < s->ncontainer; i++) {
		const struct sw_metrics_container_ref *r = &s->container[i].ref;
		if (strcmp(r->state, "running") == 0 || strcmp(r->state, "restarting") == 0)
			s->running++;
		else if (strcmp(r->state, "paused") != 0)
			s->stopped++;
		if (strcmp(r->health, "unhealthy") == 0)
			s->unhealthy++;
	}
}

void sw_metrics_sample_release(struct sw_metrics_sample *s)
{
	if (!s)
		return;
	free(s->cpu_core_pct);
	free(s->fs);
	free(s->iface);
	free(s->container);
	s->cpu_core_pct = NULL;
	s->fs = NULL;
	s->iface = NULL;
	s->container = NULL;
}

/* ---- containers ---- */

static void entry_init(struct cgroup_entry *e, const struct sw_metrics_container_ref *r)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->id, sizeof(e->id), "%s", r->id);
	e->pid = r->pid;
	for (int f = 0; f < CG_FILES; f++)
		e->fd[f] = -1;
}

/* The entry of ref r, made when new; hint: where it was last tick (refs
 * come in the same order each tick, so the search is usually one compare). */
static struct cgroup_entry *entry_for(struct sw_metrics_sampler *s, const struct sw_metrics_container_ref *r,
				      size_t hint)
{
	struct cgroup_entry *e = NULL;
	if (hint < s->ncg && strcmp(s->cg[hint].id, r->id) == 0)
		e = &s->cg[hint];
	for (size_t i = 0; i < s->ncg && !e; i++)
		if (strcmp(s->cg[i].id, r->id) == 0)
			e = &s->cg[i];
	if (e) {
		if (e->pid != r->pid) { /* restarted: a new cgroup */
			entry_close(e);
			entry_init(e, r);
		}
		return e;
	}
	if (s->ncg == s->capcg) {
		size_t cap = s->capcg ? s->capcg * 2 : 16;
		struct cgroup_entry *n = realloc(s->cg, cap * sizeof(*n));
		if (!n)
			return NULL;
		s->cg = n;
		s->capcg = cap;
	}
	e = &s->cg[s->ncg++];
	entry_init(e, r);
	return e;
}

static int open_at(const char *root, const char *path, const char *file)
{
	char p[PATH_MAX];
	if (!root[0] || !path[0] || (size_t)snprintf(p, sizeof(p), "%s%s/%s", root, path, file) >= sizeof(p))
		return -1;
	return open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

/* /proc/<pid>/cgroup once per (container, pid), then its files. CPU from
 * the unified hierarchy's cpu.stat (there even on hybrid hosts) else
 * cpuacct; memory from the unified hierarchy when its memory controller
 * is on there, else the v1 memory controller. */
static void resolve(struct sw_metrics_sampler *s, struct cgroup_entry *e)
{
	if (e->resolved || e->pid <= 0)
		return;
	e->resolved = true;
	char rel[64], unified[512], cpuacct[512], memory[512];
	snprintf(rel, sizeof(rel), "/%d/cgroup", (int)e->pid);
	if (sw_metrics_read(s->paths.proc, rel, &s->buf, 65536) < 0 ||
	    sw_metrics_parse_proc_cgroup(s->buf.data, s->buf.len, unified, sizeof(unified), cpuacct,
					 sizeof(cpuacct), memory, sizeof(memory)) < 0)
		return;
	if (unified[0] && s->unified_root[0]) {
		char dir[PATH_MAX];
		struct stat st;
		/* The cgroup id the kernel hands BPF programs is the inode of the
		 * cgroup's directory in the unified hierarchy. */
		if ((size_t)snprintf(dir, sizeof(dir), "%s%s", s->unified_root, unified) < sizeof(dir) &&
		    stat(dir, &st) == 0)
			e->cgroup_id = (uint64_t)st.st_ino;
		/* Its traffic is counted from now on (once per cgroup: a
		 * container sampled again after a gap keeps its counters). */
		e->net_watched = s->bpf && e->cgroup_id && sw_metrics_bpf_watch(s->bpf, dir, e->cgroup_id) == 0;
	}
	if ((e->fd[CG_CPU] = open_at(s->unified_root, unified, "cpu.stat")) >= 0)
		e->cpu_src = SW_METRICS_SRC_CGROUP_V2;
	else if ((e->fd[CG_CPU] = open_at(s->v1_cpuacct, cpuacct, "cpuacct.usage")) >= 0)
		e->cpu_src = SW_METRICS_SRC_CGROUP_V1;
	if ((e->fd[CG_MEM] = open_at(s->unified_root, unified, "memory.current")) >= 0) {
		e->mem_src = SW_METRICS_SRC_CGROUP_V2;
		e->fd[CG_MEM_MAX] = open_at(s->unified_root, unified, "memory.max");
		e->fd[CG_OOM] = open_at(s->unified_root, unified, "memory.events");
	} else if ((e->fd[CG_MEM] = open_at(s->v1_memory, memory, "memory.usage_in_bytes")) >= 0) {
		e->mem_src = SW_METRICS_SRC_CGROUP_V1;
		e->fd[CG_MEM_MAX] = open_at(s->v1_memory, memory, "memory.limit_in_bytes");
		e->fd[CG_OOM] = open_at(s->v1_memory, memory, "memory.oom_control");
	}
}

/* Reads one of the entry's files from its start: the value of key, or
 * the file's one number when key is NULL. */
static bool cg_read_u64(const struct cgroup_entry *e, enum cg_file f, const char *key, uint64_t *ret)
{
	char buf[4096];
	if (e->fd[f] < 0)
		return false;
	ssize_t n = pread(e->fd[f], buf, sizeof(buf) - 1, 0);
	if (n < 0)
		return false; /* ENODEV: the cgroup is gone */
	buf[n] = '\0';
	return (key ? sw_metrics_parse_keyed_u64(buf, (size_t)n, key, ret) : sw_metrics_parse_u64(buf, (size_t)n, ret)) == 0;
}

/* The cumulative CPU time of a container, microseconds. */
static bool read_usage(const struct cgroup_entry *e, uint64_t *ret)
{
	if (e->cpu_src == SW_METRICS_SRC_CGROUP_V2)
		return cg_read_u64(e, CG_CPU, "usage_usec", ret);
	uint64_t ns;
	if (!cg_read_u64(e, CG_CPU, NULL, &ns))
		return false;
	*ret = ns / 1000;
	return true;
}

static void read_container_usage(struct sw_metrics_sampler *s, const struct sw_metrics_container_ref *refs,
				 size_t n, uint64_t now_us)
{
	for (size_t i = 0; i < n; i++) {
		if (refs[i].pid <= 0)
			continue;
		struct cgroup_entry *e = entry_for(s, &refs[i], i);
		if (!e)
			continue;
		resolve(s, e);
		uint64_t u;
		if (read_usage(e, &u)) {
			if (e->have_usage) {
				e->prev_usage_us = e->usage_us;
				e->prev_usage_at_us = e->usage_at_us;
				e->have_prev = true;
			}
			e->usage_us = u;
			e->usage_at_us = now_us;
			e->have_usage = true;
		}
	}
}

static void count_oom(void *arg, const struct sw_metrics_oom_event *ev)
{
	struct sw_metrics_sampler *s = arg;
	for (size_t i = 0; i < s->noom; i++)
		if (s->oom[i].cgroup_id == ev->cgroup_id) {
			s->oom[i].count++;
			return;
		}
	if (s->noom < OOM_TABLE_MAX)
		s->oom[s->noom++] = (struct oom_count){ ev->cgroup_id, 1 };
}

static void sample_container(struct sw_metrics_sampler *s, const struct sw_metrics_container_ref *r,
			     size_t hint, struct sw_metrics_container *c, struct sw_metrics_sample *out)
{
	c->ref = *r;
	c->memory_limit = UINT64_MAX;
	struct cgroup_entry *e = NULL;
	if (r->pid > 0 && hint < s->ncg && strcmp(s->cg[hint].id, r->id) == 0)
		e = &s->cg[hint];
	for (size_t i = 0; i < s->ncg && r->pid > 0 && !e; i++)
		if (strcmp(s->cg[i].id, r->id) == 0)
			e = &s->cg[i];
	if (!e || e->pid != r->pid)
		return;
	e->seen = true;
	c->cgroup_id = e->cgroup_id;
	if (e->have_usage) {
		c->cpu_usage_us = e->usage_us;
		c->have_cpu_usage = true;
		c->have_cpu = e->have_prev && e->usage_at_us > e->prev_usage_at_us;
		if (c->have_cpu) {
			out->container_cpu_src = e->cpu_src;
			c->cpu_pct = 100.0 * (double)(e->usage_us - SW_MIN(e->usage_us, e->prev_usage_us)) /
				     (double)(e->usage_at_us - e->prev_usage_at_us);
		}
	}
	uint64_t v;
	if (cg_read_u64(e, CG_MEM, NULL, &v)) {
		c->memory_bytes = v;
		c->have_memory = true;
		/* v1 says "no limit" with the largest page-aligned signed value. */
		if (cg_read_u64(e, CG_MEM_MAX, NULL, &v) && (e->mem_src == SW_METRICS_SRC_CGROUP_V2 || v < (UINT64_C(1) << 62)))
			c->memory_limit = v;
		c->have_oom = cg_read_u64(e, CG_OOM, "oom_kill", &c->oom_kills);
		out->container_memory_src = e->mem_src;
	}
	if (c->have_oom)
		out->container_oom_src = out->container_memory_src;
	struct sw_metrics_cgroup_net n;
	if (s->bpf && e->net_watched && sw_metrics_bpf_net(s->bpf, e->cgroup_id, &n) == 0) {
		c->net_rx_bytes = n.rx_bytes;
		c->net_tx_bytes = n.tx_bytes;
		c->net_rx_packets = n.rx_packets;
		c->net_tx_packets = n.tx_packets;
		c->have_net = true;
	}
	if (s->bpf && e->cgroup_id) {
		for (size_t i = 0; i < s->noom; i++)
			if (s->oom[i].cgroup_id == e->cgroup_id)
				c->oom_events = s->oom[i].count;
	}
}

/* ---- host readings ---- */

/* /proc/stat into r, growing r->per until every cpuN line fits. */
static int parse_stat_into(struct raw *r, const struct sw_buf *b)
{
	for (;;) {
		int rc = sw_metrics_parse_stat(b->data, b->len, &r->total, r->per, r->capcpu, &r->ncpu, NULL);
		if (rc < 0 || r->ncpu < r->capcpu || r->capcpu == SW_METRICS_CPU_MAX)
			return rc;
		size_t cap = r->capcpu ? r->capcpu * 2 : 8;
		if (cap > SW_METRICS_CPU_MAX)
			cap = SW_METRICS_CPU_MAX;
		struct sw_metrics_cpu_times *per = realloc(r->per, cap * sizeof(*per));
		if (!per)
			return -ENOMEM;
		r->per = per;
		r->capcpu = cap;
	}
}

static int read_raw(struct sw_metrics_sampler *s, struct raw *r, const struct sw_metrics_container_ref *refs,
		    size_t n)
{
	r->at_us = sw_now_us();
	int rc = sw_metrics_read(s->paths.proc, "/stat", &s->buf, SW_METRICS_FILE_MAX);
	if (rc < 0)
		return rc;
	if ((rc = parse_stat_into(r, &s->buf)) < 0)
		return rc;
	r->nnet = 0;
	/* /proc/net is this process's namespace; PID 1's is the host's. */
	if (sw_metrics_read(s->paths.proc, s->paths.configured ? "/1/net/dev" : "/net/dev", &s->buf,
			    SW_METRICS_FILE_MAX) == 0)
		sw_metrics_parse_net_dev(s->buf.data, s->buf.len, r->net, SW_METRICS_IFACE_MAX, &r->nnet);
	read_container_usage(s, refs, n, r->at_us);
	return 0;
}

static int wall_ms(int64_t *ret)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		return -errno;
	*ret = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	return 0;
}

static int fill(struct sw_metrics_sampler *s, const struct sw_metrics_container_ref *refs, size_t n,
		struct sw_metrics_sample *out)
{
	const struct raw *a = &s->prev, *b = &s->cur;
	const struct sw_metrics_sample *f = &s->facts;
	memcpy(out->os_name, f->os_name, sizeof(out->os_name));
	memcpy(out->os_version, f->os_version, sizeof(out->os_version));
	memcpy(out->kernel, f->kernel, sizeof(out->kernel));
	memcpy(out->arch, f->arch, sizeof(out->arch));
	memcpy(out->hostname, f->hostname, sizeof(out->hostname));
	memcpy(out->virtualization, f->virtualization, sizeof(out->virtualization));
	memcpy(out->cpu_model, f->cpu_model, sizeof(out->cpu_model));
	out->physical_cores = f->physical_cores;
	out->logical_cores = f->logical_cores;
	snprintf(out->public_ip, sizeof(out->public_ip), "%s", s->public_ip);
	out->describes_container = s->paths.describes_container;
	wall_ms(&out->taken_at_ms);
	out->interval_ms = (uint32_t)((b->at_us - a->at_us) / 1000);

	char line[128];
	double up;
	ssize_t len = sw_metrics_read_small(s->paths.proc, "/uptime", line, sizeof(line));
	if (len > 0 && sw_metrics_parse_uptime(line, (size_t)len, &up) == 0)
		out->uptime_s = (uint64_t)up;
	len = sw_metrics_read_small(s->paths.proc, "/loadavg", line, sizeof(line));
	if (len > 0)
		sw_metrics_parse_loadavg(line, (size_t)len, out->load);

	sw_metrics_cpu_pct(&a->total, &b->total, &out->cpu_pct, &out->steal_pct);
	out->ncpu = b->ncpu;
	out->cpu_core_pct = calloc(b->ncpu ? b->ncpu : 1, sizeof(double));
	out->iface = calloc(b->nnet ? b->nnet : 1, sizeof(*out->iface));
	if (!out->cpu_core_pct || !out->iface)
		return -ENOMEM;
	for (size_t i = 0; i < b->ncpu; i++) {
		double steal;
		if (i < a->ncpu)
			sw_metrics_cpu_pct(&a->per[i], &b->per[i], &out->cpu_core_pct[i], &steal);
	}
	int rc = sw_metrics_read(s->paths.proc, "/meminfo", &s->buf, SW_METRICS_FILE_MAX);
	if (rc < 0 || (rc = sw_metrics_parse_meminfo(s->buf.data, s->buf.len, &out->memory)) < 0)
		return rc;
	double secs = (double)(b->at_us - a->at_us) / 1e6;
	for (size_t i = 0; i < b->nnet; i++) {
		struct sw_metrics_iface *o = &out->iface[out->niface++];
		const struct sw_metrics_net_counters *c = &b->net[i];
		snprintf(o->name, sizeof(o->name), "%s", c->name);
		o->rx_bytes = c->rx_bytes;
		o->tx_bytes = c->tx_bytes;
		o->rx_packets = c->rx_packets;
		o->tx_packets = c->tx_packets;
		for (size_t j = 0; j < a->nnet && secs > 0; j++) {
			if (strcmp(a->net[j].name, c->name) != 0)
				continue;
			if (c->rx_bytes >= a->net[j].rx_bytes)
				o->rx_bytes_per_s = (double)(c->rx_bytes - a->net[j].rx_bytes) / secs;
			if (c->tx_bytes >= a->net[j].tx_bytes)
				o->tx_bytes_per_s = (double)(c->tx_bytes - a->net[j].tx_bytes) / secs;
		}
	}
	if ((rc = sw_metrics_disks(&s->paths, &s->mounts, out)) < 0)
		return rc;

	/* Containers. */
	if (s->bpf)
		sw_metrics_bpf_oom_drain(s->bpf, count_oom, s);
	out->container = calloc(n ? n : 1, sizeof(*out->container));
	if (!out->container)
		return -ENOMEM;
	for (size_t i = 0; i < s->ncg; i++)
		s->cg[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct sw_metrics_container *c = &out->container[out->ncontainer++];
		sample_container(s, &refs[i], i, c, out);
	}
	sw_metrics_sample_count(out);
	/* Entries of containers no longer listed are forgotten. */
	size_t keep = 0;
	for (size_t i = 0; i < s->ncg; i++) {
		if (s->cg[i].seen)
			s->cg[keep++] = s->cg[i];
		else
			entry_close(&s->cg[i]);
	}
	s->ncg = keep;
	/* Links to removed cgroups (the kernel detached them) are closed once
	 * more cgroups are watched than containers listed. */
	if (s->bpf && sw_metrics_bpf_watched(s->bpf) > s->ncg)
		sw_metrics_bpf_sweep(s->bpf);
	out->container_net_src = s->bpf ? SW_METRICS_SRC_EBPF : SW_METRICS_SRC_NONE;
	snprintf(out->bpf_status, sizeof(out->bpf_status), "%s", s->bpf_status);
	return 0;
}

/* Whether every running container of refs has a reading of its CPU time
 * already: else the previous reading, however fresh, gives it no rate. */
static bool containers_read_before(const struct sw_metrics_sampler *s,
				   const struct sw_metrics_container_ref *refs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		bool found = refs[i].pid <= 0; /* not running: no CPU time to compare */
		for (size_t k = 0; k < s->ncg && !found; k++)
			found = strcmp(s->cg[k].id, refs[i].id) == 0 && s->cg[k].pid == refs[i].pid &&
				s->cg[k].have_usage;
		if (!found)
			return false;
	}
	return true;
}

int sw_metrics_sample(struct sw_metrics_sampler *s, const struct sw_metrics_container_ref *refs, size_t n,
		      unsigned settle_ms, struct sw_metrics_sample *ret)
{
	if (n > SW_METRICS_CONTAINER_MAX)
		return -E2BIG;
	if (!settle_ms)
		settle_ms = SW_METRICS_SETTLE_MS;
	struct sw_metrics_sample out = { 0 };
	pthread_mutex_lock(&s->mu);
	uint64_t now = sw_now_us();
	int rc = 0;
	uint64_t age = s->have_prev ? now - s->prev.at_us : UINT64_MAX;
	/* A fresh previous reading serves, unless a container is new to it (a
	 * container started since the last tick would have no CPU rate). */
	if (age < 100000 || age > (uint64_t)SW_METRICS_RATE_MAX_AGE_MS * 1000 ||
	    !containers_read_before(s, refs, n)) {
		if ((rc = read_raw(s, &s->prev, refs, n)) < 0)
			goto out;
		s->have_prev = true;
		struct timespec ts = { settle_ms / 1000, (long)(settle_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if ((rc = read_raw(s, &s->cur, refs, n)) < 0)
		goto out;
	rc = fill(s, refs, n, &out);
	if (rc == 0) {
		struct raw older = s->prev;
		s->prev = s->cur;
		s->cur = older;
	}
out:
	pthread_mutex_unlock(&s->mu);
	if (rc < 0) {
		sw_metrics_sample_release(&out);
		return rc;
	}
	*ret = out;
	return 0;
}
