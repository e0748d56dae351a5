/* steward-agent: runs on each server beside dockerd and Caddy, dials the
 * control plane and does only what the closed command set allows. A thin
 * main: the configuration, the signals, the executor, then the agent's
 * loop (src/agent/daemon.c). */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "steward/agent/daemon.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"
#include "steward/driver/remote.h"
#include "main/agent_metrics.h"

extern char **environ;

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct executor {
	const struct sw_agent_config *config;
	struct sw_driver *driver; /* this server's dockerd and Caddy */
};

/* host.facts: the facts of the hello, read again now; the driver's kinds
 * through the local driver, the code the control plane runs on its own
 * host. */
static void run_command(void *arg, const struct sw_agent_msg *cmd, struct sw_agent_outcome *out)
{
	const struct executor *x = arg;
	const struct sw_agent_config *c = x->config;
	sw_log_info("agent: running command %s (%s)", cmd->id, cmd->kind_name);
	if (cmd->kind == SW_AGENT_CMD_METRICS_SAMPLE) {
		sw_agent_metrics_sample(cmd, out);
		return;
	}
	if (cmd->kind != SW_AGENT_CMD_HOST_FACTS) {
		sw_driver_agent_exec(x->driver, cmd, out);
		if (!out->ok)
			sw_log_info("agent: command %s failed: %s %s", cmd->id, out->error_code,
				    out->error_message);
		return;
	}
	struct sw_agent_msg facts = { 0 };
	char store[5 * SW_AGENT_MAX_FACT_LEN];
	sw_agent_host_facts(c, &facts, store, sizeof(store));
	out->result = json_pack("{s:s,s:s,s:s,s:s,s:I,s:I,s:s}", "os", facts.host.os, "kernel",
				facts.host.kernel, "arch", facts.host.arch, "hostname",
				facts.host.hostname, "cores", (json_int_t)facts.host.cores,
				"memoryBytes", (json_int_t)facts.host.memory_bytes, "bootId",
				facts.boot_id);
	uint64_t avail = 0;
	if (out->result && sw_driver_memory_available(x->driver, &avail) == 0)
		json_object_set_new(out->result, "memoryAvailableBytes", json_integer((json_int_t)avail));
	out->ok = out->result != NULL;
	if (!out->ok) {
		snprintf(out->error_code, sizeof(out->error_code), "INTERNAL");
		snprintf(out->error_message, sizeof(out->error_message), "out of memory");
	}
}

/* What this agent runs: host.facts, metrics.sample (agent_metrics.c) and
 * the driver's kinds of sw_driver_agent_kinds(). Image builds, logs and
 * service tools are not carried yet: the control plane is told NOT_AVAILABLE for them
 * rather than left waiting. */

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--version") == 0)) {
		printf("steward-agent %s (protocol %d..%d)\n", SW_AGENT_VERSION, SW_AGENT_PROTOCOL_MIN,
		       SW_AGENT_PROTOCOL_MAX);
		return 0;
	}
	/* The C library's allocator, held small (issue 11; the figures are in
	 * bench/results/agents.md). Fixed thresholds turn off glibc's dynamic
	 * mmap threshold: after the start's peak (13.8 MB, the eBPF
	 * collectors' load) glibc had raised its mmap and trim thresholds to
	 * the largest block freed, and 3.6 MB of freed heap stayed resident
	 * for ever. One arena: a thread's allocations keep no arena of their
	 * own. malloc_trim() below hands back what the start freed. */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_TRIM_THRESHOLD, 64 * 1024);
	struct sw_agent_config c;
	char err[512];
	if (sw_agent_config_load(environ, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "steward-agent: %s\n", err);
		return 2;
	}
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: poll returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sw_log_info("steward-agent %s: dialing %s://%s:%s%s", SW_AGENT_VERSION, c.tls ? "wss" : "ws",
		    c.host, c.port, c.path);
	/* DOCKER_HOST and CADDY_ADMIN_URL were checked by the configuration. */
	struct executor x = { .config = &c, .driver = sw_driver_local_new() };
	if (!x.driver) {
		fprintf(stderr, "steward-agent: the driver of this server cannot be made from DOCKER_HOST "
				"and CADDY_ADMIN_URL: %s\n", strerror(errno));
		return 2;
	}
	uint32_t kinds = SW_AGENT_KIND_BIT(SW_AGENT_CMD_HOST_FACTS) | sw_driver_agent_kinds();
	if (sw_agent_metrics_start())
		kinds |= SW_AGENT_KIND_BIT(SW_AGENT_CMD_METRICS_SAMPLE);
	malloc_trim(0); /* the start's peak (the eBPF load) handed back */
	const struct sw_agent_executor executor = { .run = run_command, .arg = &x, .kinds = kinds };
	int rc = sw_agent_run(&c, &executor, &stop);
	sw_agent_metrics_stop();
	sw_driver_free(x.driver);
	if (rc < 0) {
		fprintf(stderr, "steward-agent: cannot open the journal in STEWARD_AGENT_DATA_DIR (%s): %s\n",
			c.data_dir, strerror(-rc));
		return 1;
	}
	sw_log_flush_thread();
	return 0;
}
