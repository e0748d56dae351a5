/* steward-agent: runs on each server beside dockerd and Caddy, dials the
 * control plane and does only what the closed command set allows. A thin
 * main: the configuration, the signals, the executor, then the agent's
 * loop (src/agent/daemon.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "steward/agent/daemon.h"
#include "steward/base/log.h"

extern char **environ;

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* What this agent runs. The driver's commands (image builds, containers,
 * volumes, Caddy routes, service tools, metrics), through the same code as
 * the control plane's local driver, are not linked in yet: it announces no
 * capability, and the control plane is told NOT_AVAILABLE for every
 * command rather than left waiting. */
static const struct sw_agent_executor executor = { .run = NULL, .kinds = 0 };

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
	int rc = sw_agent_run(&c, &executor, &stop);
	if (rc < 0) {
		fprintf(stderr, "steward-agent: cannot open the journal in STEWARD_AGENT_DATA_DIR (%s): %s\n",
			c.data_dir, strerror(-rc));
		return 1;
	}
	sw_log_flush_thread();
	return 0;
}
