/* Inside the sampler (src/metrics): whole-file reads under the host's
 * trees, the pieces of a sample each file feeds, and the eBPF collectors'
 * glue. Only src/metrics and its tests include this. */
#ifndef STEWARD_METRICS_INTERNAL_H
#define STEWARD_METRICS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "steward/base/buf.h"
#include "steward/metrics/metrics.h"

/* The largest kernel text file read whole (/proc/cpuinfo of a big host is
 * about 1.5 KB per CPU). */
#define SW_METRICS_FILE_MAX (4u * 1024 * 1024)

/* Reads the file base + rel (rel starts with '/') into b (reset first,
 * NUL-terminated). -errno of open/read, -EFBIG past max. */
int sw_metrics_read(const char *base, const char *rel, struct sw_buf *b, size_t max);
/* The same into a small fixed buffer (a cgroup file, one line of /sys):
 * the length read, or -errno; a file that does not fit: -EFBIG. */
ssize_t sw_metrics_read_small(const char *base, const char *rel, char *buf, size_t size);

/* Host facts that do not change between samples (host.c). */
void sw_metrics_host_facts(const struct sw_metrics_paths *p, struct sw_metrics_sample *s);
/* The mount table as last read (host.c): mountinfo kept open (fd > 0)
 * and parsed again only when it polls a change. Zeroed: nothing read. */
struct sw_metrics_mounts {
	int fd;
	bool have;
	struct sw_metrics_mount *m; /* SW_METRICS_FS_MAX */
	size_t n;
};
void sw_metrics_mounts_release(struct sw_metrics_mounts *c);
/* The real file systems under HOST_ROOT_PATH, statvfs'd (host.c); the
 * mount table from mounts (brought up to date). */
int sw_metrics_disks(const struct sw_metrics_paths *p, struct sw_metrics_mounts *mounts, struct sw_metrics_sample *s);
/* Whether this process runs in a container (host.c). */
bool sw_metrics_detect_container(void);
/* The virtualisation type (host.c): a container runtime's name first,
 * else the hypervisor from DMI, /sys/hypervisor or cpuinfo's flag. */
void sw_metrics_virtualization(const struct sw_metrics_paths *p, bool in_container, const char *cpuinfo,
			       char *out, size_t size);

#endif
