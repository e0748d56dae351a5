/* The sampler's own cost per 15-second tick (issue goal: at most 25 us
 * per container per tick), measured as this thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID: user + system, in nanoseconds) around
 * sw_metrics_sample() alone.
 *
 * Usage: bench_metrics_tick [ticks] [pid]
 * For N = 0, 50 and 200 containers it takes `ticks` samples (default 40)
 * 110 ms apart (so each uses the previous reading, as a 15 s tick does)
 * and prints CPU per tick and per container. The containers all stand for
 * one process's cgroup (pid, default this process): each is mapped once
 * and read every tick exactly as a real container is (cpu.stat or
 * cpuacct.usage, memory files, OOM count, and the eBPF map when loaded),
 * so the per-container figure is the real one without running 200
 * containers. BENCH_METRICS_EBPF=0 measures without eBPF. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "steward/metrics/metrics.h"

static double thread_cpu_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int ticks = argc > 1 ? atoi(argv[1]) : 40;
	pid_t pid = argc > 2 ? (pid_t)atoi(argv[2]) : getpid();
	const char *e = getenv("BENCH_METRICS_EBPF");
	struct sw_metrics_options o = { .bpf = !(e && strcmp(e, "0") == 0) };
	char err[256];
	if (ticks < 2 || sw_metrics_paths_from_env(&o.paths, err, sizeof(err)) < 0) {
		fprintf(stderr, "usage: bench_metrics_tick [ticks >= 2] [pid]\n");
		return 2;
	}
	struct sw_metrics_sampler *s = sw_metrics_sampler_new(&o);
	if (!s)
		return 1;
	printf("eBPF: %s\n", sw_metrics_sampler_bpf_status(s));
	printf("| containers | CPU per tick (us) | per container (us) |\n|---|---|---|\n");
	static const size_t counts[] = { 0, 50, 200 };
	double base = 0;
	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		size_t n = counts[c];
		struct sw_metrics_container_ref *refs = calloc(n ? n : 1, sizeof(*refs));
		for (size_t i = 0; i < n; i++) {
			snprintf(refs[i].id, sizeof(refs[i].id), "%064zx", i + 1);
			snprintf(refs[i].state, sizeof(refs[i].state), "running");
			refs[i].pid = pid;
		}
		struct sw_metrics_sample out;
		sw_metrics_sample(s, refs, n, 100, &out); /* maps the cgroups once */
		sw_metrics_sample_release(&out);
		double total = 0;
		for (int t = 0; t < ticks; t++) {
			usleep(110 * 1000);
			double a = thread_cpu_us();
			if (sw_metrics_sample(s, refs, n, 100, &out) < 0)
				return 1;
			total += thread_cpu_us() - a;
			sw_metrics_sample_release(&out);
		}
		double per_tick = total / ticks;
		if (n == 0)
			base = per_tick;
		if (n == 0)
			printf("| %zu | %.0f | - |\n", n, per_tick);
		else
			printf("| %zu | %.0f | %.1f |\n", n, per_tick, (per_tick - base) / (double)n);
		free(refs);
	}
	sw_metrics_sampler_free(s);
	return 0;
}
