/* steward-agent: runs on each server beside dockerd and Caddy, dials the
 * control plane and does only what the closed command set allows. A thin
 * main: the configuration, the signals, the executor, then the agent's
 * loop (src/agent/daemon.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "steward/agent/daemon.h"
#include "steward/base/limits.h"
#include "steward/base/log.h"

extern char **environ;

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* host.facts: the facts of the hello, read again now. */
static void run_command(void *arg, const struct sw_agent_msg *cmd, struct sw_agent_outcome *out)
{
	const struct sw_agent_config *c = arg;
	sw_log_info("agent: running command %s (%s)", cmd->id, cmd->kind_name);
	if (cmd->kind != SW_AGENT_CMD_HOST_FACTS) {
		snprintf(out->error_code, sizeof(out->error_code), "NOT_AVAILABLE");
		snprintf(out->error_message, sizeof(out->error_message), "not run by this agent");
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
	out->ok = out->result != NULL;
	if (!out->ok) {
		snprintf(out->error_code, sizeof(out->error_code), "INTERNAL");
		snprintf(out->error_message, sizeof(out->error_message), "out of memory");
	}
}

/* What this agent runs: host.facts. The driver's commands (image builds,
 * containers, volumes, Caddy routes, service tools, metrics), through the
 * same code as the control plane's local driver, are not linked in yet:
 * the control plane is told NOT_AVAILABLE for them rather than left
 * waiting. */

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "--version") == 0)) {
		printf("steward-agent %s (protocol %d..%d)\n", SW_AGENT_VERSION, SW_AGENT_PROTOCOL_MIN,
		       SW_AGENT_PROTOCOL_MAX);
		return 0;
	}
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
	const struct sw_agent_executor executor = {
		.run = run_command, .arg = &c, .kinds = SW_AGENT_KIND_BIT(SW_AGENT_CMD_HOST_FACTS)
	};
	int rc = sw_agent_run(&c, &executor, &stop);
	if (rc < 0) {
		fprintf(stderr, "steward-agent: cannot open the journal in STEWARD_AGENT_DATA_DIR (%s): %s\n",
			c.data_dir, strerror(-rc));
		return 1;
	}
	sw_log_flush_thread();
	return 0;
}
