/* The pure half of the sampler: parsers of the kernel's text files
 * (/proc/stat, /proc/meminfo, /proc/loadavg, /proc/cpuinfo, /proc/net/dev,
 * mountinfo, os-release, cgroup files). They read a buffer and write plain
 * structs; they never open a file, allocate or log, so a fuzzer drives
 * them with any bytes (fuzz/fuzz_metrics_parse.c). Buffers need not be
 * NUL-terminated. Every parser returns 0, or -EINVAL when the text lacks
 * what it must hold (fields it may lack are left zero). */
#ifndef STEWARD_METRICS_PARSE_H
#define STEWARD_METRICS_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Jiffies of one "cpu" line of /proc/stat. guest and guest_nice are
 * already inside user and nice, so they are not kept. */
struct sw_metrics_cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

/* /proc/stat: the aggregate "cpu" line into *ret_total; each "cpuN" line
 * into per[N] when N < cap; *ret_n is the count of cpuN lines seen (at
 * most cap). "btime" into *ret_boot_time when present. Without the
 * aggregate line: -EINVAL. */
int sw_metrics_parse_stat(const char *buf, size_t len, struct sw_metrics_cpu_times *ret_total,
			  struct sw_metrics_cpu_times *per, size_t cap, size_t *ret_n,
			  uint64_t *ret_boot_time);

/* Busy and steal percentages (0..100) between two readings, the newer
 * second. No time passed, or a counter went back (a CPU came back
 * online): both 0. */
void sw_metrics_cpu_pct(const struct sw_metrics_cpu_times *older, const struct sw_metrics_cpu_times *newer,
			double *ret_busy_pct, double *ret_steal_pct);

/* Bytes, from /proc/meminfo's kB figures. used is what free(1) shows:
 * total - free - buffers - cache, where cache is Cached + SReclaimable. */
struct sw_metrics_memory {
	uint64_t total, free, available, buffers, cache, used, swap_total, swap_free, swap_used;
};
/* Without MemTotal and MemFree: -EINVAL. MemAvailable missing (kernels
 * before 3.14): free + buffers + cache. */
int sw_metrics_parse_meminfo(const char *buf, size_t len, struct sw_metrics_memory *ret);

/* /proc/loadavg: the three averages. */
int sw_metrics_parse_loadavg(const char *buf, size_t len, double ret[3]);
/* /proc/uptime: seconds since boot (the first figure). */
int sw_metrics_parse_uptime(const char *buf, size_t len, double *ret_seconds);

/* /proc/cpuinfo: the first "model name" (or "Hardware"/"cpu model" on
 * other architectures), logical CPUs ("processor" entries) and physical
 * cores (distinct "physical id"/"core id" pairs; when the file does not
 * say, the logical count). No processor entry: -EINVAL. */
int sw_metrics_parse_cpuinfo(const char *buf, size_t len, char *model, size_t model_size,
			     unsigned *ret_physical, unsigned *ret_logical);

/* os-release(5): NAME and VERSION_ID (else VERSION), unquoted. Missing
 * NAME: "Linux", as os-release(5) says. */
int sw_metrics_parse_os_release(const char *buf, size_t len, char *name, size_t name_size,
				char *version, size_t version_size);

/* One interface's counters. */
struct sw_metrics_net_counters {
	char name[32];
	uint64_t rx_bytes, rx_packets, tx_bytes, tx_packets;
};
/* /proc/net/dev: one entry per interface line, at most cap (the rest
 * are dropped); *ret_n set. An interface name longer than 31 bytes
 * cannot exist (IFNAMSIZ); such a line is skipped. */
int sw_metrics_parse_net_dev(const char *buf, size_t len, struct sw_metrics_net_counters *out,
			     size_t cap, size_t *ret_n);

/* One mounted file system from mountinfo(5), escapes (\040) decoded. */
struct sw_metrics_mount {
	unsigned major, minor;
	char mount_point[256];
	char fstype[32];
	char source[128];
};
/* The real file systems of a mountinfo file: those of the types that
 * store data (ext4, xfs, btrfs, zfs, nfs, ...; never proc, tmpfs, cgroup,
 * overlay but at "/"), one per device (the shortest mount point wins, so
 * bind mounts and subvolumes count once), at most cap; *ret_n set.
 * Lines too long for the fields are skipped. */
int sw_metrics_parse_mountinfo(const char *buf, size_t len, struct sw_metrics_mount *out, size_t cap,
			       size_t *ret_n);

/* "key value" lines (cpu.stat, memory.events, memory.stat,
 * memory.oom_control): the value of key. Absent: -ENOENT. */
int sw_metrics_parse_keyed_u64(const char *buf, size_t len, const char *key, uint64_t *ret);
/* A file of one number (memory.current, cpuacct.usage); "max" is
 * UINT64_MAX (memory.max without a limit). */
int sw_metrics_parse_u64(const char *buf, size_t len, uint64_t *ret);

/* /proc/<pid>/cgroup: the unified ("0::") path, and the v1 paths of the
 * cpuacct and memory controllers (hybrid and v1 hosts), each "" when
 * absent. Paths longer than their buffer: -ENAMETOOLONG. */
int sw_metrics_parse_proc_cgroup(const char *buf, size_t len, char *unified, size_t unified_size,
				 char *cpuacct, size_t cpuacct_size, char *memory, size_t memory_size);

/* Whether /proc/1/cgroup or /proc/self/cgroup shows a container runtime's
 * path (docker, containerd, kubepods, lxc, libpod). On a pure cgroup v2
 * host a container sees "0::/", so this is one clue among others. */
bool sw_metrics_cgroup_says_container(const char *buf, size_t len);

/* The virtualisation type from the DMI vendor and product names (either
 * may be ""): "kvm", "qemu", "vmware", "microsoft", "xen", "oracle",
 * "amazon", "google", "parallels", "bochs", or NULL when unknown. */
const char *sw_metrics_virt_from_dmi(const char *sys_vendor, const char *product_name);

#endif
