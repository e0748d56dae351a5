/* What the engine says beyond its lists, for metric samples: one
 * container's process (for the sampler to find its cgroup), restart count
 * and health; and the engine's disk usage. Blocking, like every driver
 * call: run them on a worker. */
#ifndef STEWARD_DRIVER_CONTAINER_STATE_H
#define STEWARD_DRIVER_CONTAINER_STATE_H

#include <stdint.h>
#include <sys/types.h>
#include "steward/driver/driver.h"

struct sw_container_state {
	char id[SW_DRIVER_ID_MAX];
	char application_id[64]; /* label steward.application, "" without it */
	char name[128];
	char state[24];          /* State.Status: created, running, paused, restarting, exited, dead */
	char health[16];         /* State.Health.Status: starting, healthy, unhealthy; "" without a check */
	int64_t restart_count;   /* RestartCount */
	pid_t pid;               /* State.Pid on the host; 0 when not running */
	bool oom_killed;         /* State.OOMKilled: the last exit was the OOM killer's */
};

/* GET /containers/<id>/json into *ret. id: the engine's id or a name (hex,
 * letters, digits, '_', '.', '-'; else -EINVAL). No such container:
 * -ENOENT. An engine that does not answer: -errno with a sentence. */
int sw_driver_container_state(struct sw_driver *d, const char *id, struct sw_container_state *ret,
			      char *err, size_t errlen);

/* The engine's disk usage (GET /system/df), bytes: image layers (each
 * counted once), containers' writable layers, named volumes, build cache.
 * Slow on a big host (it walks every layer and volume): call it seldom. */
struct sw_runtime_disk_usage {
	uint64_t images, containers, volumes, build_cache;
};
int sw_driver_disk_usage(struct sw_driver *d, struct sw_runtime_disk_usage *ret, char *err, size_t errlen);

/* A remote server's metric sample, taken by its agent (metrics.sample:
 * the same sampler, under the agent's HOST_* paths, with every container
 * of Steward's on its engine): the API's MetricSample JSON without
 * serverId, into *ret_json (malloc'd, the caller frees). The local
 * driver: -EOPNOTSUPP (stewardd samples its own host itself). An agent
 * that does not carry it: -EOPNOTSUPP with its sentence. */
int sw_driver_metrics_sample(struct sw_driver *d, char **ret_json, char *err, size_t errlen);

#endif
