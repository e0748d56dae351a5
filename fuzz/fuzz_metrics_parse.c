/* libFuzzer harness for the sampler's parsers (steward/metrics/parse.h):
 * the kernel's text files read from a host tree that may be mounted from
 * elsewhere. The whole input goes to every parser in turn. Checks, beyond
 * "no crash, no UB, no read past the input" (the input is copied to a
 * buffer of exactly its size, so ASan sees any overrun):
 * - counts never exceed the caps given, names and paths are
 *   NUL-terminated within their fields;
 * - CPU percentages between any two readings stay within 0..100;
 * - memory figures keep used <= total and swap_used <= swap_total;
 * - load averages and uptime are finite and not negative. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/metrics/parse.h"
#include "fuzz.h"

#define CHECK(c) \
	do { \
		if (!(c)) { \
			fprintf(stderr, "fuzz_metrics_parse.c:%d: %s\n", __LINE__, #c); \
			abort(); \
		} \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);

	struct sw_metrics_cpu_times total = { 0 }, per[4] = { 0 };
	size_t n = 99;
	uint64_t btime = 0;
	if (sw_metrics_parse_stat(buf, size, &total, per, 4, &n, &btime) == 0) {
		CHECK(n <= 4);
		double busy, steal;
		for (size_t i = 0; i < n; i++) {
			sw_metrics_cpu_pct(&per[i], &total, &busy, &steal);
			CHECK(busy >= 0 && busy <= 100 && steal >= 0 && steal <= 100);
			sw_metrics_cpu_pct(&total, &per[i], &busy, &steal);
			CHECK(busy >= 0 && busy <= 100 && steal >= 0 && steal <= 100);
		}
	}

	struct sw_metrics_memory m;
	if (sw_metrics_parse_meminfo(buf, size, &m) == 0) {
		CHECK(m.used <= m.total);
		CHECK(m.swap_used <= m.swap_total);
	}

	double load[3], up;
	if (sw_metrics_parse_loadavg(buf, size, load) == 0)
		for (int i = 0; i < 3; i++)
			CHECK(isfinite(load[i]) && load[i] >= 0);
	if (sw_metrics_parse_uptime(buf, size, &up) == 0)
		CHECK(isfinite(up) && up >= 0);

	char model[64], name[32], version[32];
	unsigned phys = 0, logical = 0;
	if (sw_metrics_parse_cpuinfo(buf, size, model, sizeof(model), &phys, &logical) == 0) {
		CHECK(logical > 0 && phys > 0);
		CHECK(memchr(model, '\0', sizeof(model)) != NULL);
	}
	sw_metrics_parse_os_release(buf, size, name, sizeof(name), version, sizeof(version));
	CHECK(memchr(name, '\0', sizeof(name)) && memchr(version, '\0', sizeof(version)));

	struct sw_metrics_net_counters nc[3];
	if (sw_metrics_parse_net_dev(buf, size, nc, 3, &n) == 0) {
		CHECK(n <= 3);
		for (size_t i = 0; i < n; i++)
			CHECK(memchr(nc[i].name, '\0', sizeof(nc[i].name)) && nc[i].name[0]);
	}

	struct sw_metrics_mount mt[3];
	if (sw_metrics_parse_mountinfo(buf, size, mt, 3, &n) == 0) {
		CHECK(n <= 3);
		for (size_t i = 0; i < n; i++) {
			CHECK(mt[i].mount_point[0] == '/');
			CHECK(memchr(mt[i].source, '\0', sizeof(mt[i].source)) != NULL);
			for (size_t j = 0; j < i; j++)
				CHECK(mt[i].major != mt[j].major || mt[i].minor != mt[j].minor);
		}
	}

	uint64_t v;
	sw_metrics_parse_keyed_u64(buf, size, "oom_kill", &v);
	sw_metrics_parse_u64(buf, size, &v);
	char u[64], c[64], mem[64];
	if (sw_metrics_parse_proc_cgroup(buf, size, u, sizeof(u), c, sizeof(c), mem, sizeof(mem)) == 0)
		CHECK((u[0] == '\0' || u[0] == '/') && (c[0] == '\0' || c[0] == '/') && (mem[0] == '\0' || mem[0] == '/'));
	sw_metrics_cgroup_says_container(buf, size);
	free(buf);
	return 0;
}
