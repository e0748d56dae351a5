/* The sampler: one metric sample of a host and its containers, the
 * spec's "Metric sample groups" (host, CPU, memory, disk, network,
 * containers), read from /proc, /sys, cgroup files and, where they load,
 * the eBPF programs of bpf/ (bpf.h). Linked by stewardd for its own host
 * and by steward-agent for the server it runs on.
 *
 * Reads are blocking file reads: call from a worker or a thread of its
 * own, never from an io loop. A sampler is safe to share between threads
 * (one mutex; a sample takes about a millisecond). Library code: nothing
 * here logs; sw_metrics_paths_warning() hands the start-up warning to the
 * caller. */
#ifndef STEWARD_METRICS_H
#define STEWARD_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "steward/base/json.h"
#include "steward/metrics/parse.h"

/* Bounds of one sample: more CPUs, interfaces or file systems than this
 * are left out of the sample (the first ones are kept). */
#define SW_METRICS_CPU_MAX 1024
#define SW_METRICS_IFACE_MAX 64
#define SW_METRICS_FS_MAX 64
#define SW_METRICS_CONTAINER_MAX 4096
/* A previous reading older than this is not used for rates: a new pair
 * of readings is taken. */
#define SW_METRICS_RATE_MAX_AGE_MS 60000
/* Without a previous reading, the two reads a rate needs are this far apart. */
#define SW_METRICS_SETTLE_MS 250

/* Where the host's trees are: HOST_PROC_PATH, HOST_SYS_PATH,
 * HOST_ROOT_PATH, each without a trailing '/' ("" for "/"). */
struct sw_metrics_paths {
	char proc[256];
	char sys[256];
	char root[256];
	bool configured;     /* at least one of the three variables is set */
	bool in_container;   /* this process runs in a container */
	/* Figures describe this process's container, not the host: it runs
	 * in a container and the host's trees were not given. */
	bool describes_container;
};
/* Reads the three variables (defaults /proc, /sys, /) and whether this
 * process runs in a container (/.dockerenv, /run/.containerenv, the
 * "container" variable of PID 1, a runtime's cgroup path). A relative
 * path or one of 256 bytes or more: -EINVAL naming it in err. */
int sw_metrics_paths_from_env(struct sw_metrics_paths *ret, char *err, size_t errlen);
/* The start-up warning when figures describe the container, else NULL. */
const char *sw_metrics_paths_warning(const struct sw_metrics_paths *p);

/* A container as the engine reports it: filled by the caller from the
 * Docker Engine (the driver), keyed by container and application id. */
struct sw_metrics_container_ref {
	char id[65];              /* the engine's full id */
	char application_id[64];  /* label steward.application, "" when none */
	char name[128];
	char state[16];           /* running, exited, created, restarting, paused, dead */
	char health[16];          /* healthy, unhealthy, starting, "" without a check */
	int64_t restart_count;
	pid_t pid;                /* of its init process on the host; 0 when not running */
};

struct sw_metrics_iface {
	char name[32];
	uint64_t rx_bytes, tx_bytes, rx_packets, tx_packets;
	double rx_bytes_per_s, tx_bytes_per_s;
};

struct sw_metrics_fs {
	char mount_point[256]; /* as the host sees it (HOST_ROOT_PATH removed) */
	char device[128];
	char fstype[32];
	uint64_t total, used, free, available; /* bytes; available: for unprivileged users */
	uint64_t inodes_total, inodes_used, inodes_free;
};

/* Where a container's figures came from. */
enum sw_metrics_source {
	SW_METRICS_SRC_NONE,       /* not available: the field is null */
	SW_METRICS_SRC_PROC,       /* /proc files */
	SW_METRICS_SRC_CGROUP_V2,  /* cpu.stat, memory.current, memory.max, memory.events */
	SW_METRICS_SRC_CGROUP_V1,  /* cpuacct.usage, memory.usage_in_bytes, memory.oom_control */
	SW_METRICS_SRC_EBPF,       /* the programs of bpf/ */
	SW_METRICS_SRC_NETNS,      /* the container's own network namespace's /proc/<pid>/net/dev */
};
const char *sw_metrics_source_name(enum sw_metrics_source s);

struct sw_metrics_container {
	struct sw_metrics_container_ref ref;
	uint64_t cgroup_id;        /* the unified hierarchy's id (its directory's inode); 0 unknown */
	bool have_cpu, have_memory, have_net, have_oom;
	bool have_cpu_usage;       /* cpu_usage_us was read */
	double cpu_pct;            /* of one core: 200 is two cores busy */
	uint64_t cpu_usage_us;     /* cumulative, of the container's cgroup */
	uint64_t memory_bytes;
	uint64_t memory_limit;     /* UINT64_MAX: no limit */
	uint64_t net_rx_bytes, net_tx_bytes, net_rx_packets, net_tx_packets; /* cumulative */
	uint64_t oom_kills;        /* the cgroup's own count (memory.events / oom_control) */
	uint64_t oom_events;       /* OOM kills seen by eBPF in this container since the sampler started */
};

struct sw_metrics_sample {
	int64_t taken_at_ms;       /* wall clock, unix milliseconds */
	uint32_t interval_ms;      /* between the two readings rates come from */
	bool describes_container;
	/* Host */
	char os_name[64], os_version[64], kernel[128], arch[32], hostname[256];
	uint64_t uptime_s;
	char public_ip[64];        /* "" when not configured */
	char virtualization[32];   /* "none", "kvm", "docker", ... */
	/* CPU */
	char cpu_model[128];
	unsigned physical_cores, logical_cores;
	double cpu_pct, steal_pct, load[3];
	size_t ncpu;
	double *cpu_core_pct;      /* ncpu entries */
	/* Memory */
	struct sw_metrics_memory memory;
	/* Disk */
	size_t nfs;
	struct sw_metrics_fs *fs;
	/* Network */
	size_t niface;
	struct sw_metrics_iface *iface;
	/* Containers */
	unsigned running, stopped, unhealthy;
	size_t ncontainer;
	struct sw_metrics_container *container;
	/* Why containers are missing (the engine did not answer), else "";
	 * set by the caller, who asks the engine. */
	char containers_error[256];
	/* The container runtime's disk usage, set by the caller from the
	 * engine on a slower schedule (measured_at_ms says when). */
	bool have_runtime_disk;
	uint64_t runtime_images, runtime_containers, runtime_volumes, runtime_build_cache;
	int64_t runtime_disk_at_ms;
	enum sw_metrics_source container_cpu_src, container_memory_src, container_net_src, container_oom_src;
	char bpf_status[160];      /* "loaded", or why the eBPF programs are not in use */
	/* The control plane's figures (database, connections, queues) as JSON
	 * from PostgreSQL, set by the caller for an operator; NULL: written as
	 * null. Not owned. */
	const char *platform_json;
};
void sw_metrics_sample_release(struct sw_metrics_sample *s);
/* Counts running, stopped and unhealthy among s->container again (after a
 * caller kept only some of them). */
void sw_metrics_sample_count(struct sw_metrics_sample *s);

struct sw_metrics_options {
	struct sw_metrics_paths paths;
	const char *public_ip;     /* METRICS_PUBLIC_IP, or NULL: never discovered over the network */
	bool bpf;                  /* try to load the eBPF programs */
};

struct sw_metrics_sampler;
/* NULL with errno ENOMEM. When the eBPF programs do not load, the sampler
 * reads cgroup files instead and the sample's bpf_status says why. */
struct sw_metrics_sampler *sw_metrics_sampler_new(const struct sw_metrics_options *o);
void sw_metrics_sampler_free(struct sw_metrics_sampler *s);
/* "loaded", or why eBPF is off. */
const char *sw_metrics_sampler_bpf_status(const struct sw_metrics_sampler *s);

/* One sample now. Rates and percentages compare with the sampler's
 * previous reading when it is 100 ms to SW_METRICS_RATE_MAX_AGE_MS old,
 * else with a reading taken settle_ms before (0: SW_METRICS_SETTLE_MS).
 * refs: the host's containers (n <= SW_METRICS_CONTAINER_MAX; more:
 * -E2BIG), each mapped to its cgroup once and remembered by id. *ret is
 * filled on success; release it. -errno when /proc cannot be read. */
int sw_metrics_sample(struct sw_metrics_sampler *s, const struct sw_metrics_container_ref *refs, size_t n,
		      unsigned settle_ms, struct sw_metrics_sample *ret);

/* Writes the sample as the API's JSON object (docs: the OpenAPI schema
 * "MetricSample" in src/api/metrics.c), with member serverId first unless
 * server_id is NULL. */
void sw_metrics_sample_write(const struct sw_metrics_sample *s, const char *server_id, struct sw_json *j);

/* The figures of a sample written by sw_metrics_sample_write (an agent's
 * metrics.sample) read back into *ret: CPU total and load, memory, file
 * systems' sizes, interfaces' bytes and rates, containers (ids, state,
 * health, restarts, CPU % and cumulative CPU time, memory and limit,
 * network bytes, OOM kills).
 * Host facts, per-core figures and sources are not read; taken_at_ms is
 * left 0 for the caller. A member missing or null is a figure not read.
 * -EINVAL when o is not a sample, -ENOMEM; release *ret either way. */
struct json_t;
int sw_metrics_sample_read(const struct json_t *o, struct sw_metrics_sample *ret);

#endif
