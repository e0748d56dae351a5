/* steward-agent's metrics.sample (agent_metrics.c): the sampler library
 * stewardd runs for its own host, here for the agent's. */
#ifndef STEWARD_MAIN_AGENT_METRICS_H
#define STEWARD_MAIN_AGENT_METRICS_H

#include "steward/agent/daemon.h"

/* Makes the host's sampler (HOST_* paths, METRICS_EBPF, DOCKER_HOST of the
 * agent's environment; the warnings are logged). false when it cannot be
 * made: metrics.sample is then not announced. */
bool sw_agent_metrics_start(void);
/* Runs metrics.sample into out: the MetricSample of this host, without
 * serverId (the control plane sets it), with every container of
 * Steward's; TOO_LARGE when it does not fit in a result. */
void sw_agent_metrics_sample(const struct sw_agent_msg *cmd, struct sw_agent_outcome *out);
void sw_agent_metrics_stop(void);

#endif
