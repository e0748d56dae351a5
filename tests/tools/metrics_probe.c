/* The sampler, driven over stdin for the integration tests of
 * tests/integration/metrics_*.test.mjs, which own the containers.
 *
 * Starts a sampler on this host's trees (HOST_*_PATH honoured) with eBPF
 * on, prints one line "bpf <status>", then for each input line
 *     sample <container id> <pid> [application id]
 * prints one line: the sample as the API renders it (JSON), with that one
 * container; "sample - 0" samples no container. "quit" or EOF ends it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/metrics/metrics.h"

int main(void)
{
	struct sw_metrics_options o = { .bpf = true };
	char err[256];
	if (sw_metrics_paths_from_env(&o.paths, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	struct sw_metrics_sampler *s = sw_metrics_sampler_new(&o);
	if (!s) {
		perror("sampler");
		return 1;
	}
	printf("bpf %s\n", sw_metrics_sampler_bpf_status(s));
	fflush(stdout);
	char line[512];
	while (fgets(line, sizeof(line), stdin)) {
		char id[80] = "", app[80] = "";
		int pid = 0;
		if (strncmp(line, "quit", 4) == 0)
			break;
		if (sscanf(line, "sample %79s %d %79s", id, &pid, app) < 2) {
			printf("{\"error\":\"bad line\"}\n");
			fflush(stdout);
			continue;
		}
		struct sw_metrics_container_ref r = { .pid = pid };
		snprintf(r.id, sizeof(r.id), "%s", id);
		snprintf(r.application_id, sizeof(r.application_id), "%s", app);
		snprintf(r.state, sizeof(r.state), "running");
		struct sw_metrics_sample sample;
		int rc = sw_metrics_sample(s, &r, strcmp(id, "-") == 0 ? 0 : 1, 100, &sample);
		if (rc < 0) {
			printf("{\"error\":\"%s\"}\n", strerror(-rc));
			fflush(stdout);
			continue;
		}
		struct sw_buf b = { 0 };
		struct sw_json j;
		sw_json_init(&j, &b);
		sw_metrics_sample_write(&sample, NULL, &j);
		if (sw_json_finish(&j) == 0)
			printf("%.*s\n", (int)b.len, (const char *)b.data);
		else
			printf("{\"error\":\"render\"}\n");
		fflush(stdout);
		sw_buf_release(&b);
		sw_metrics_sample_release(&sample);
	}
	sw_metrics_sampler_free(s);
	return 0;
}
