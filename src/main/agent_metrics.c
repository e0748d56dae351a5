/* steward-agent's metrics.sample: one sample of this server, taken by the
 * sampler stewardd takes its own host's with (sw_api_metrics_host), so a
 * remote server's figures are read exactly as the local one's: under this
 * agent's HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH, its containers
 * from its own engine. The answer is the API's MetricSample JSON; a result
 * is at most SW_AGENT_MAX_RESULT bytes, so the containers are capped (the
 * host's figures always fit). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "steward/api/api.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "main/agent_metrics.h"

/* Containers in one sample: about 400 bytes of JSON each. */
#define AGENT_SAMPLE_CONTAINERS_MAX 100

static struct sw_api_metrics_host *host;

bool sw_agent_metrics_start(void)
{
	char why[256];
	host = sw_api_metrics_host_new(why, sizeof(why));
	if (!host)
		sw_log_warn("agent: metrics.sample is not available: %s", why);
	return host != NULL;
}

void sw_agent_metrics_stop(void)
{
	sw_api_metrics_host_free(host);
	host = NULL;
}

static void fail(struct sw_agent_outcome *out, const char *code, const char *message)
{
	out->ok = false;
	snprintf(out->error_code, sizeof(out->error_code), "%s", code);
	snprintf(out->error_message, sizeof(out->error_message), "%s", message);
}

void sw_agent_metrics_sample(const struct sw_agent_msg *cmd, struct sw_agent_outcome *out)
{
	(void)cmd;
	if (!host) {
		fail(out, "NOT_AVAILABLE", "metrics.sample: the sampler could not be made on this server");
		return;
	}
	char *text = NULL;
	int rc = sw_api_metrics_host_sample_json(host, AGENT_SAMPLE_CONTAINERS_MAX, &text);
	if (rc < 0) {
		fail(out, rc == -ENOMEM ? "INTERNAL" : "FAILED", "metrics.sample: the host could not be read");
		return;
	}
	if (strlen(text) > SW_AGENT_MAX_RESULT) {
		free(text);
		fail(out, "TOO_LARGE", "metrics.sample: the sample is larger than a result may be");
		return;
	}
	out->result = json_loads(text, 0, NULL);
	free(text);
	out->ok = out->result != NULL;
	if (!out->ok)
		fail(out, "INTERNAL", "out of memory");
}
