/* The sampler (metrics.h, parse.h): each parser against fixture files
 * written by hand from real hosts (tests/unit/fixtures/metrics, a fake
 * /proc, /sys and / tree), a whole sample over that tree with counters
 * changed between two readings so every rate has a known answer, and
 * samples of this machine checked against the kernel's own files read
 * here independently (sscanf, not the parsers under test). */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>
#include "steward/metrics/metrics.h"
#include "steward/metrics/parse.h"
#include "scratch_dir.h"
#include "test_help.h"

static char fixtures[512];

static const char *fixture_dir(void)
{
	if (!fixtures[0]) {
		char here[512];
		snprintf(here, sizeof(here), "%s", __FILE__);
		snprintf(fixtures, sizeof(fixtures), "%s/fixtures/metrics", dirname(here));
	}
	return fixtures;
}

static char *fixture(const char *rel, size_t *len)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", fixture_dir(), rel);
	char *b = scratch_read(p, len);
	if (!b)
		fprintf(stderr, "  cannot read fixture %s\n", p);
	return b;
}

static bool near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

TEST(stat_gives_the_aggregate_each_cpu_and_boot_time)
{
	size_t len, n = 0;
	char *b = fixture("proc/stat", &len);
	REQUIRE(b);
	struct sw_metrics_cpu_times total, per[4];
	uint64_t btime = 0;
	CHECK_INT_EQ(sw_metrics_parse_stat(b, len, &total, per, 4, &n, &btime), 0);
	CHECK_INT_EQ(n, 2);
	CHECK_INT_EQ(total.user, 1000);
	CHECK_INT_EQ(total.idle, 8000);
	CHECK_INT_EQ(total.steal, 400);
	CHECK_INT_EQ(per[1].idle, 4100);
	CHECK_INT_EQ(btime, 1764000000);
	/* A cap of one keeps cpu0 only. */
	CHECK_INT_EQ(sw_metrics_parse_stat(b, len, &total, per, 1, &n, NULL), 0);
	CHECK_INT_EQ(n, 1);
	free(b);
	CHECK_INT_EQ(sw_metrics_parse_stat("cpu0 1 2 3 4\n", 13, &total, per, 4, &n, NULL), -EINVAL);
	CHECK_INT_EQ(sw_metrics_parse_stat("cpu 1 2 3\n", 10, &total, per, 4, &n, NULL), -EINVAL);
	CHECK_INT_EQ(sw_metrics_parse_stat("cpu 99999999999999999999999 2 3 4\n", 34, &total, per, 4, &n, NULL),
		     -EINVAL);
}

TEST(cpu_percentages_come_from_the_difference_of_two_readings)
{
	struct sw_metrics_cpu_times a = { 1000, 0, 500, 8000, 100, 0, 0, 400 };
	struct sw_metrics_cpu_times b = { 1600, 0, 700, 8800, 100, 0, 0, 800 };
	double busy, steal;
	sw_metrics_cpu_pct(&a, &b, &busy, &steal);
	CHECK(near(busy, 60.0, 1e-9));
	CHECK(near(steal, 20.0, 1e-9));
	/* No time passed, or a counter going back: 0, never nonsense. */
	sw_metrics_cpu_pct(&a, &a, &busy, &steal);
	CHECK(busy == 0 && steal == 0);
	sw_metrics_cpu_pct(&b, &a, &busy, &steal);
	CHECK(busy == 0 && steal == 0);
}

TEST(meminfo_used_is_what_free_shows)
{
	size_t len;
	char *b = fixture("proc/meminfo", &len);
	REQUIRE(b);
	struct sw_metrics_memory m;
	CHECK_INT_EQ(sw_metrics_parse_meminfo(b, len, &m), 0);
	free(b);
	CHECK_INT_EQ(m.total, 8000000ull * 1024);
	CHECK_INT_EQ(m.free, 1000000ull * 1024);
	CHECK_INT_EQ(m.available, 5000000ull * 1024);
	CHECK_INT_EQ(m.buffers, 200000ull * 1024);
	CHECK_INT_EQ(m.cache, 3300000ull * 1024); /* Cached + SReclaimable */
	CHECK_INT_EQ(m.used, 3500000ull * 1024);
	CHECK_INT_EQ(m.swap_total, 2000000ull * 1024);
	CHECK_INT_EQ(m.swap_used, 500000ull * 1024);
	/* Before MemAvailable existed: free + buffers + cache. */
	const char *old = "MemTotal: 1000 kB\nMemFree: 100 kB\nBuffers: 50 kB\nCached: 200 kB\n";
	CHECK_INT_EQ(sw_metrics_parse_meminfo(old, strlen(old), &m), 0);
	CHECK_INT_EQ(m.available, 350ull * 1024);
	CHECK_INT_EQ(sw_metrics_parse_meminfo("MemFree: 1 kB\n", 14, &m), -EINVAL);
}

TEST(loadavg_and_uptime)
{
	double load[3], up;
	const char *l = "0.52 1.25 2.00 2/345 6789\n";
	CHECK_INT_EQ(sw_metrics_parse_loadavg(l, strlen(l), load), 0);
	CHECK(near(load[0], 0.52, 1e-9) && near(load[1], 1.25, 1e-9) && near(load[2], 2.0, 1e-9));
	CHECK_INT_EQ(sw_metrics_parse_loadavg("0.52 x 2.00", 11, load), -EINVAL);
	CHECK_INT_EQ(sw_metrics_parse_loadavg("0.52 1.0", 8, load), -EINVAL);
	CHECK_INT_EQ(sw_metrics_parse_uptime("123456.78 200000.00\n", 20, &up), 0);
	CHECK(near(up, 123456.78, 1e-6));
	CHECK_INT_EQ(sw_metrics_parse_uptime("-1", 2, &up), -EINVAL);
}

TEST(cpuinfo_counts_physical_cores_and_threads)
{
	size_t len;
	char *b = fixture("proc/cpuinfo", &len);
	REQUIRE(b);
	char model[128];
	unsigned phys = 0, logical = 0;
	CHECK_INT_EQ(sw_metrics_parse_cpuinfo(b, len, model, sizeof(model), &phys, &logical), 0);
	free(b);
	CHECK_STR_EQ(model, "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz");
	CHECK_INT_EQ(logical, 4);
	CHECK_INT_EQ(phys, 3); /* (0,0) twice, (0,1), (1,0) */
	/* No topology (an ARM board): physical = logical. */
	const char *arm = "processor\t: 0\nBogoMIPS\t: 48.00\n\nprocessor\t: 1\n\nHardware\t: BCM2835\n";
	CHECK_INT_EQ(sw_metrics_parse_cpuinfo(arm, strlen(arm), model, sizeof(model), &phys, &logical), 0);
	CHECK_INT_EQ(logical, 2);
	CHECK_INT_EQ(phys, 2);
	CHECK_STR_EQ(model, "BCM2835");
	CHECK_INT_EQ(sw_metrics_parse_cpuinfo("", 0, model, sizeof(model), &phys, &logical), -EINVAL);
}

TEST(os_release_name_and_version)
{
	size_t len;
	char *b = fixture("root/etc/os-release", &len);
	REQUIRE(b);
	char name[64], version[64];
	CHECK_INT_EQ(sw_metrics_parse_os_release(b, len, name, sizeof(name), version, sizeof(version)), 0);
	free(b);
	CHECK_STR_EQ(name, "Debian GNU/Linux");
	CHECK_STR_EQ(version, "12");
	const char *arch = "NAME=\"Arch \\\"Linux\\\"\"\nVERSION='rolling'\n";
	CHECK_INT_EQ(sw_metrics_parse_os_release(arch, strlen(arch), name, sizeof(name), version, sizeof(version)), 0);
	CHECK_STR_EQ(name, "Arch \"Linux\"");
	CHECK_STR_EQ(version, "rolling");
	CHECK_INT_EQ(sw_metrics_parse_os_release("ID=x\n", 5, name, sizeof(name), version, sizeof(version)), 0);
	CHECK_STR_EQ(name, "Linux");
}

TEST(net_dev_reads_every_interface)
{
	size_t len, n = 0;
	char *b = fixture("proc/1/net/dev", &len);
	REQUIRE(b);
	struct sw_metrics_net_counters c[4];
	CHECK_INT_EQ(sw_metrics_parse_net_dev(b, len, c, 4, &n), 0);
	CHECK_INT_EQ(n, 2);
	CHECK_STR_EQ(c[1].name, "eth0");
	CHECK_INT_EQ(c[1].rx_bytes, 5000000);
	CHECK_INT_EQ(c[1].rx_packets, 4000);
	CHECK_INT_EQ(c[1].tx_bytes, 2000000);
	CHECK_INT_EQ(c[1].tx_packets, 3000);
	CHECK_INT_EQ(sw_metrics_parse_net_dev(b, len, c, 1, &n), 0);
	CHECK_INT_EQ(n, 1);
	free(b);
}

TEST(mountinfo_keeps_real_file_systems_once_each)
{
	size_t len, n = 0;
	char *b = fixture("proc/1/mountinfo", &len);
	REQUIRE(b);
	struct sw_metrics_mount m[8];
	CHECK_INT_EQ(sw_metrics_parse_mountinfo(b, len, m, 8, &n), 0);
	free(b);
	REQUIRE(n == 2); /* / (its bind mount counted once) and the xfs disk; no proc, tmpfs, cgroup, overlay */
	CHECK_STR_EQ(m[0].mount_point, "/");
	CHECK_STR_EQ(m[0].source, "/dev/sda1");
	CHECK_INT_EQ(m[0].major, 8);
	CHECK_STR_EQ(m[1].mount_point, "/mnt/my disk");
	CHECK_STR_EQ(m[1].fstype, "xfs");
	/* A container's root is an overlay: it counts at "/" only. */
	const char *c = "1 0 0:50 / / rw - overlay overlay rw\n";
	CHECK_INT_EQ(sw_metrics_parse_mountinfo(c, strlen(c), m, 8, &n), 0);
	CHECK_INT_EQ(n, 1);
}

TEST(cgroup_files)
{
	uint64_t v;
	const char *stat = "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n";
	CHECK_INT_EQ(sw_metrics_parse_keyed_u64(stat, strlen(stat), "usage_usec", &v), 0);
	CHECK_INT_EQ(v, 123456);
	CHECK_INT_EQ(sw_metrics_parse_keyed_u64(stat, strlen(stat), "usage", &v), -ENOENT);
	const char *oom = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
	CHECK_INT_EQ(sw_metrics_parse_keyed_u64(oom, strlen(oom), "oom_kill", &v), 0);
	CHECK_INT_EQ(v, 3);
	CHECK_INT_EQ(sw_metrics_parse_u64("max\n", 4, &v), 0);
	CHECK(v == UINT64_MAX);
	CHECK_INT_EQ(sw_metrics_parse_u64("33554432\n", 9, &v), 0);
	CHECK_INT_EQ(v, 33554432);
	CHECK_INT_EQ(sw_metrics_parse_u64("12x", 3, &v), -EINVAL);
}

TEST(proc_cgroup_gives_unified_and_v1_paths)
{
	size_t len;
	char *b = fixture("proc/4242/cgroup", &len);
	REQUIRE(b);
	char u[64], c[64], m[64];
	CHECK_INT_EQ(sw_metrics_parse_proc_cgroup(b, len, u, sizeof(u), c, sizeof(c), m, sizeof(m)), 0);
	CHECK_STR_EQ(u, "/docker/6e286e76e807");
	CHECK_STR_EQ(c, "/docker/6e286e76e807");
	CHECK_STR_EQ(m, "/docker/6e286e76e807");
	CHECK(sw_metrics_cgroup_says_container(b, len));
	char small[8];
	CHECK_INT_EQ(sw_metrics_parse_proc_cgroup(b, len, small, sizeof(small), c, sizeof(c), m, sizeof(m)),
		     -ENAMETOOLONG);
	free(b);
	const char *v2 = "0::/system.slice/docker-6e28.scope\n";
	CHECK_INT_EQ(sw_metrics_parse_proc_cgroup(v2, strlen(v2), u, sizeof(u), c, sizeof(c), m, sizeof(m)), 0);
	CHECK_STR_EQ(u, "/system.slice/docker-6e28.scope");
	CHECK_STR_EQ(c, "");
	CHECK(!sw_metrics_cgroup_says_container("0::/\n", 5));
}

TEST(virtualization_from_dmi)
{
	CHECK_STR_EQ(sw_metrics_virt_from_dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)"), "qemu");
	CHECK_STR_EQ(sw_metrics_virt_from_dmi("Amazon EC2", "m5.large"), "amazon");
	CHECK_STR_EQ(sw_metrics_virt_from_dmi("Microsoft Corporation", "Virtual Machine"), "microsoft");
	CHECK(sw_metrics_virt_from_dmi("Microsoft Corporation", "Surface Laptop") == NULL);
	CHECK(sw_metrics_virt_from_dmi("Dell Inc.", "PowerEdge R640") == NULL);
}

/* ---- a whole sample over the fake tree ---- */

static void write_file(const char *dir, const char *rel, const char *text)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void link_fixture(const char *dir, const char *rel)
{
	char from[1024], to[1024];
	snprintf(from, sizeof(from), "%s/%s", fixture_dir(), rel);
	snprintf(to, sizeof(to), "%s/%s", dir, rel);
	if (symlink(from, to) != 0)
		perror(to);
}

static const char net1[] =
	"Inter-| Receive | Transmit\n face |bytes packets ...\n"
	"    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
	"  eth0: 5000000 4000 0 0 0 0 0 0 2000000 3000 0 0 0 0 0 0\n";
static const char net2[] =
	"Inter-| Receive | Transmit\n face |bytes packets ...\n"
	"    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0\n"
	"  eth0: 6000000 5000 0 0 0 0 0 0 2500000 3500 0 0 0 0 0 0\n";
static const char stat2[] = "cpu  1600 0 700 8800 100 0 0 800 0 0\n"
			    "cpu0 900 0 350 4300 50 0 0 400 0 0\n"
			    "cpu1 700 0 350 4500 50 0 0 400 0 0\n";

/* A fixture host tree in the scratch directory's subdirectory name (its
 * /proc/stat and /proc/1/net/dev written from stat and net), and a sampler
 * reading it. */
static struct sw_metrics_sampler *fixture_sampler(const char *name, char *dir, size_t dirlen, const char *stat,
						  const char *net)
{
	char proc[600];
	snprintf(dir, dirlen, "%s/%s", scratch_dir("sw-metrics"), name);
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	if (mkdir(dir, 0755) != 0 || mkdir(proc, 0755) != 0)
		return NULL;
	char p1[700];
	snprintf(p1, sizeof(p1), "%s/1", proc);
	if (mkdir(p1, 0755) != 0)
		return NULL;
	snprintf(p1, sizeof(p1), "%s/1/net", proc);
	if (mkdir(p1, 0755) != 0)
		return NULL;
	link_fixture(dir, "proc/meminfo");
	link_fixture(dir, "proc/loadavg");
	link_fixture(dir, "proc/uptime");
	link_fixture(dir, "proc/cpuinfo");
	link_fixture(dir, "proc/sys");
	link_fixture(dir, "proc/1/mountinfo");
	link_fixture(dir, "root");
	link_fixture(dir, "sys");
	write_file(dir, "proc/stat", stat);
	write_file(dir, "proc/1/net/dev", net);
	struct sw_metrics_options o = { .bpf = false, .public_ip = "203.0.113.7" };
	snprintf(o.paths.proc, sizeof(o.paths.proc), "%s/proc", dir);
	snprintf(o.paths.sys, sizeof(o.paths.sys), "%s/sys", dir);
	snprintf(o.paths.root, sizeof(o.paths.root), "%s/root", dir);
	o.paths.configured = true;
	return sw_metrics_sampler_new(&o);
}

TEST(a_sample_of_the_fixture_tree_has_every_group)
{
	char dir[512];
	char text[4096];
	size_t len;
	char *stat1 = fixture("proc/stat", &len);
	REQUIRE(stat1);
	struct sw_metrics_sampler *s = fixture_sampler("host", dir, sizeof(dir), stat1, net1);
	free(stat1);
	REQUIRE(s);
	struct sw_metrics_sample a, b;
	REQUIRE(sw_metrics_sample(s, NULL, 0, 10, &a) == 0); /* two reads of the same counters */
	CHECK(a.cpu_pct == 0);
	sw_metrics_sample_release(&a);

	write_file(dir, "proc/stat", stat2);
	write_file(dir, "proc/1/net/dev", net2);
	usleep(150 * 1000); /* older than 100 ms: the previous reading serves */
	REQUIRE(sw_metrics_sample(s, NULL, 0, 10, &b) == 0);
	CHECK(near(b.cpu_pct, 60.0, 1e-6));
	CHECK(near(b.steal_pct, 20.0, 1e-6));
	REQUIRE(b.ncpu == 2);
	CHECK(near(b.cpu_core_pct[0], 60.0, 1e-6));
	CHECK(near(b.cpu_core_pct[1], 60.0, 1e-6));
	CHECK(b.interval_ms >= 150);
	REQUIRE(b.niface == 2);
	CHECK_STR_EQ(b.iface[1].name, "eth0");
	double secs = b.interval_ms / 1000.0;
	CHECK(near(b.iface[1].rx_bytes_per_s * secs, 1000000.0, 1000000.0 * 0.01));
	CHECK(near(b.iface[1].tx_bytes_per_s * secs, 500000.0, 500000.0 * 0.01));
	CHECK(b.iface[0].rx_bytes_per_s == 0);
	CHECK_INT_EQ(b.memory.used, 3500000ull * 1024);
	CHECK(near(b.load[0], 0.52, 1e-9));
	CHECK_INT_EQ(b.uptime_s, 123456);
	CHECK_STR_EQ(b.os_name, "Debian GNU/Linux");
	CHECK_STR_EQ(b.os_version, "12");
	CHECK_STR_EQ(b.kernel, "6.1.0-test-amd64");
	CHECK_STR_EQ(b.hostname, "fixture-host");
	CHECK_STR_EQ(b.virtualization, "qemu");
	CHECK_STR_EQ(b.public_ip, "203.0.113.7");
	CHECK_INT_EQ(b.logical_cores, 4);
	CHECK_INT_EQ(b.physical_cores, 3);
	CHECK(!b.describes_container);
	/* The fixture's "/" is the scratch root tree, reachable; the xfs
	 * disk's mount point does not exist there and is left out. */
	REQUIRE(b.nfs == 1);
	CHECK_STR_EQ(b.fs[0].mount_point, "/");
	CHECK(b.fs[0].total > 0 && b.fs[0].total >= b.fs[0].used);
	CHECK(b.fs[0].inodes_total >= b.fs[0].inodes_used);
	CHECK_STR_EQ(b.bpf_status, "off by configuration");

	struct sw_buf out = { 0 };
	struct sw_json j;
	sw_json_init(&j, &out);
	sw_metrics_sample_write(&b, NULL, &j);
	CHECK_INT_EQ(sw_json_finish(&j), 0);
	json_error_t e;
	json_t *doc = json_loadb((const char *)out.data, out.len, 0, &e);
	REQUIRE(doc);
	CHECK_INT_EQ(json_integer_value(json_object_get(json_object_get(doc, "memory"), "usedBytes")),
		     3500000ll * 1024);
	CHECK(near(json_real_value(json_object_get(json_object_get(doc, "cpu"), "totalPercent")), 60.0, 1e-9));
	CHECK_STR_EQ(json_string_value(json_object_get(doc, "scope")), "HOST");
	CHECK_INT_EQ(json_array_size(json_object_get(json_object_get(doc, "cpu"), "perCorePercent")), 2);
	/* Read back (what the control plane does with an agent's sample): the
	 * figures the metrics loop folds and alerts on come back the same. */
	struct sw_metrics_sample r;
	REQUIRE(sw_metrics_sample_read(doc, &r) == 0);
	CHECK(near(r.cpu_pct, 60.0, 0.005));
	CHECK(near(r.load[0], 0.52, 1e-9));
	CHECK_INT_EQ(r.memory.used, b.memory.used);
	CHECK_INT_EQ(r.memory.total, b.memory.total);
	CHECK_INT_EQ(r.memory.swap_total, b.memory.swap_total);
	REQUIRE(r.nfs == b.nfs && r.niface == b.niface);
	CHECK_INT_EQ(r.fs[0].used, b.fs[0].used);
	CHECK_INT_EQ(r.fs[0].total, b.fs[0].total);
	CHECK_STR_EQ(r.iface[1].name, "eth0");
	CHECK_INT_EQ(r.iface[1].rx_bytes, b.iface[1].rx_bytes);
	CHECK(near(r.iface[1].rx_bytes_per_s, b.iface[1].rx_bytes_per_s, 0.005));
	CHECK_STR_EQ(r.hostname, "fixture-host");
	CHECK_INT_EQ(r.ncontainer, 0);
	sw_metrics_sample_release(&r);
	json_t *bad = json_object();
	CHECK_INT_EQ(sw_metrics_sample_read(bad, &r), -EINVAL);
	sw_metrics_sample_release(&r);
	json_decref(bad);
	/* A container's figures, nulls staying "not read". */
	json_t *c = json_pack("{s:s,s:s,s:s,s:s,s:I,s:f,s:I,s:I,s:n,s:{s:I,s:I,s:I,s:I},s:I}", "containerId", "c1",
			      "applicationId", "a1", "state", "running", "health", "unhealthy", "restartCount",
			      (json_int_t)3, "cpuPercent", 12.5, "cpuTimeMicroseconds", (json_int_t)7000001,
			      "memoryBytes", (json_int_t)4096,
			      "memoryLimitBytes", "network", "rxBytes", (json_int_t)10, "txBytes", (json_int_t)20,
			      "rxPackets", (json_int_t)1, "txPackets", (json_int_t)2, "oomKills", (json_int_t)1);
	json_array_append_new(json_object_get(json_object_get(doc, "containers"), "items"), c);
	REQUIRE(sw_metrics_sample_read(doc, &r) == 0);
	REQUIRE(r.ncontainer == 1);
	CHECK_STR_EQ(r.container[0].ref.id, "c1");
	CHECK_STR_EQ(r.container[0].ref.application_id, "a1");
	CHECK_INT_EQ(r.container[0].ref.restart_count, 3);
	CHECK(r.container[0].have_cpu && near(r.container[0].cpu_pct, 12.5, 1e-9));
	/* The cumulative CPU time the minute rows' cpu_usec is folded from. */
	CHECK(r.container[0].have_cpu_usage && r.container[0].cpu_usage_us == 7000001);
	CHECK(r.container[0].have_memory && r.container[0].memory_bytes == 4096);
	CHECK(r.container[0].memory_limit == UINT64_MAX);
	CHECK(r.container[0].have_net && r.container[0].net_tx_bytes == 20);
	CHECK(r.container[0].have_oom && r.container[0].oom_kills == 1);
	CHECK_INT_EQ(r.running, 1);
	CHECK_INT_EQ(r.unhealthy, 1);
	sw_metrics_sample_release(&r);
	json_decref(doc);
	sw_buf_release(&out);
	sw_metrics_sample_release(&b);
	sw_metrics_sampler_free(s);
	(void)text;
}

/* ---- this machine ---- */

static struct sw_metrics_sampler *real_sampler(void)
{
	struct sw_metrics_options o = { .bpf = false };
	snprintf(o.paths.proc, sizeof(o.paths.proc), "/proc");
	snprintf(o.paths.sys, sizeof(o.paths.sys), "/sys");
	o.paths.root[0] = '\0';
	return sw_metrics_sampler_new(&o);
}

static uint64_t meminfo_kb(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long v = 0;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == ':')
			sscanf(line + n + 1, "%llu", &v);
	if (f)
		fclose(f);
	return v;
}

TEST(host_memory_matches_proc_meminfo)
{
	struct sw_metrics_sampler *s = real_sampler();
	REQUIRE(s);
	struct sw_metrics_sample a;
	uint64_t avail_before = meminfo_kb("MemAvailable") * 1024;
	REQUIRE(sw_metrics_sample(s, NULL, 0, 20, &a) == 0);
	uint64_t avail_after = meminfo_kb("MemAvailable") * 1024;
	CHECK_INT_EQ(a.memory.total, meminfo_kb("MemTotal") * 1024);
	CHECK_INT_EQ(a.memory.swap_total, meminfo_kb("SwapTotal") * 1024);
	/* Available moves while we look: it lies between the two readings,
	 * give or take 16 MiB of this machine's other work. */
	uint64_t lo = SW_MIN(avail_before, avail_after), hi = SW_MAX(avail_before, avail_after);
	CHECK(a.memory.available + (16u << 20) >= lo && a.memory.available <= hi + (16u << 20));
	CHECK(a.memory.used + a.memory.free + a.memory.buffers + a.memory.cache >= a.memory.total - (1u << 20));
	sw_metrics_sample_release(&a);
	sw_metrics_sampler_free(s);
}

static bool read_loadavg(double v[3])
{
	FILE *f = fopen("/proc/loadavg", "r");
	bool ok = f && fscanf(f, "%lf %lf %lf", &v[0], &v[1], &v[2]) == 3;
	if (f)
		fclose(f);
	return ok;
}

TEST(load_averages_match_proc_loadavg)
{
	struct sw_metrics_sampler *s = real_sampler();
	REQUIRE(s);
	/* The kernel updates the averages every 5 s: try until one sample
	 * falls between two equal readings. */
	bool matched = false;
	for (int attempt = 0; attempt < 5 && !matched; attempt++) {
		double before[3], after[3];
		struct sw_metrics_sample a;
		REQUIRE(read_loadavg(before));
		REQUIRE(sw_metrics_sample(s, NULL, 0, 20, &a) == 0);
		REQUIRE(read_loadavg(after));
		if (memcmp(before, after, sizeof(before)) == 0) {
			for (int i = 0; i < 3; i++)
				CHECK(near(a.load[i], before[i], 1e-9));
			matched = true;
		}
		sw_metrics_sample_release(&a);
	}
	CHECK(matched);
	sw_metrics_sampler_free(s);
}

TEST(cpu_uptime_and_counts_match_the_kernel)
{
	struct sw_metrics_sampler *s = real_sampler();
	REQUIRE(s);
	struct sw_metrics_sample a;
	REQUIRE(sw_metrics_sample(s, NULL, 0, 100, &a) == 0);
	CHECK_INT_EQ(a.ncpu, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK_INT_EQ(a.logical_cores, sysconf(_SC_NPROCESSORS_ONLN));
	CHECK(a.physical_cores >= 1 && a.physical_cores <= a.logical_cores);
	CHECK(a.cpu_pct >= 0 && a.cpu_pct <= 100);
	CHECK(a.interval_ms >= 100);
	double up = 0;
	FILE *f = fopen("/proc/uptime", "r");
	REQUIRE(f && fscanf(f, "%lf", &up) == 1);
	fclose(f);
	CHECK(fabs((double)a.uptime_s - up) < 3);
	CHECK(a.kernel[0] && a.arch[0] && a.hostname[0] && a.virtualization[0]);
	CHECK(a.nfs >= 1);
	bool lo = false;
	for (size_t i = 0; i < a.niface; i++)
		lo = lo || strcmp(a.iface[i].name, "lo") == 0;
	CHECK(lo);
	sw_metrics_sample_release(&a);
	sw_metrics_sampler_free(s);
}

TEST(this_process_as_a_container_has_cpu_and_memory)
{
	/* A process stands in for a container: its cgroup is found through
	 * /proc/<pid>/cgroup and read like a container's. */
	struct sw_metrics_sampler *s = real_sampler();
	REQUIRE(s);
	struct sw_metrics_container_ref r = { .pid = getpid(), .restart_count = 2 };
	snprintf(r.id, sizeof(r.id), "self");
	snprintf(r.state, sizeof(r.state), "running");
	snprintf(r.health, sizeof(r.health), "unhealthy");
	struct sw_metrics_sample a;
	REQUIRE(sw_metrics_sample(s, &r, 1, 50, &a) == 0);
	REQUIRE(a.ncontainer == 1);
	CHECK_INT_EQ(a.running, 1);
	CHECK_INT_EQ(a.unhealthy, 1);
	if (!a.container[0].have_cpu || !a.container[0].have_memory) {
		printf("  (no readable cgroup for this process: cpu %d memory %d)\n", a.container[0].have_cpu,
		       a.container[0].have_memory);
	} else {
		CHECK(a.container[0].cpu_pct >= 0);
		CHECK(a.container[0].memory_bytes > 0);
		CHECK(a.container[0].have_cpu_usage && a.container[0].cpu_usage_us > 0);
	}
	sw_metrics_sample_release(&a);
	sw_metrics_sampler_free(s);
}

TEST(paths_from_the_environment)
{
	struct sw_metrics_paths p;
	char err[256];
	unsetenv("HOST_PROC_PATH");
	unsetenv("HOST_SYS_PATH");
	unsetenv("HOST_ROOT_PATH");
	CHECK_INT_EQ(sw_metrics_paths_from_env(&p, err, sizeof(err)), 0);
	CHECK_STR_EQ(p.proc, "/proc");
	CHECK_STR_EQ(p.root, "");
	CHECK(!p.configured);
	CHECK(p.describes_container == p.in_container);
	CHECK((sw_metrics_paths_warning(&p) != NULL) == p.describes_container);
	setenv("HOST_PROC_PATH", "/host/proc/", 1);
	CHECK_INT_EQ(sw_metrics_paths_from_env(&p, err, sizeof(err)), 0);
	CHECK_STR_EQ(p.proc, "/host/proc");
	CHECK(p.configured && !p.describes_container);
	CHECK(sw_metrics_paths_warning(&p) == NULL);
	setenv("HOST_ROOT_PATH", "host/root", 1);
	CHECK_INT_EQ(sw_metrics_paths_from_env(&p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "HOST_ROOT_PATH") != NULL);
	unsetenv("HOST_PROC_PATH");
	unsetenv("HOST_ROOT_PATH");
}

/* Without privileges the eBPF programs cannot load: the sampler says why
 * and samples from cgroup files all the same (as root, a child drops to
 * nobody first). */
static int unprivileged_sample(void)
{
	if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setresgid(65534, 65534, 65534) != 0 ||
			       setresuid(65534, 65534, 65534) != 0))
		return 10;
	struct sw_metrics_options o = { .bpf = true };
	snprintf(o.paths.proc, sizeof(o.paths.proc), "/proc");
	snprintf(o.paths.sys, sizeof(o.paths.sys), "/sys");
	struct sw_metrics_sampler *s = sw_metrics_sampler_new(&o);
	if (!s)
		return 11;
	const char *why = sw_metrics_sampler_bpf_status(s);
	printf("  unprivileged: %s\n", why);
	int rc = strncmp(why, "eBPF off", 8) == 0 || strcmp(why, "no unified cgroup hierarchy to attach to") == 0 ? 0 : 12;
	struct sw_metrics_container_ref r = { .pid = getpid() };
	snprintf(r.id, sizeof(r.id), "self");
	snprintf(r.state, sizeof(r.state), "running");
	struct sw_metrics_sample a;
	if (rc == 0 && sw_metrics_sample(s, &r, 1, 20, &a) != 0)
		rc = 13;
	if (rc == 0) {
		if (a.container_net_src != SW_METRICS_SRC_NONE || a.container[0].have_net || a.memory.total == 0)
			rc = 14;
		sw_metrics_sample_release(&a);
	}
	sw_metrics_sampler_free(s);
	fflush(stdout); /* the child ends with _exit() */
	return rc;
}

TEST(without_privileges_ebpf_is_off_with_a_reason_and_sampling_goes_on)
{
	fflush(NULL);
	pid_t child = fork();
	REQUIRE(child >= 0);
	if (child == 0)
		_exit(unprivileged_sample());
	int status = 0;
	REQUIRE(waitpid(child, &status, 0) == child);
	REQUIRE(WIFEXITED(status));
	CHECK_INT_EQ(WEXITSTATUS(status), 0);
}

/* A /proc/stat of 20 CPUs where, at reading k (0, 1, 2), CPU i has spent
 * k * k * (i + 1) ticks busy out of k * 100: more CPUs than the sampler's
 * first per-CPU allocation (8), so it grows while parsing. */
static void write_stat_20(const char *dir, unsigned k)
{
	char text[4096];
	size_t len = (size_t)snprintf(text, sizeof(text), "cpu  %u 0 0 %u 0 0 0 0 0 0\n", k * k * 210,
				      k * 2000 - k * k * 210);
	for (unsigned i = 0; i < 20; i++) {
		unsigned busy = k * k * (i + 1);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "cpu%u %u 0 0 %u 0 0 0 0 0 0\n", i, busy,
					k * 100 - busy);
	}
	write_file(dir, "proc/stat", text);
}

TEST(per_core_rates_past_the_first_allocation_compare_each_reading_with_the_one_before)
{
	char dir[512];
	struct sw_metrics_sampler *s = fixture_sampler("cpus20", dir, sizeof(dir), "cpu  0 0 0 0 0 0 0 0 0 0\n", net1);
	REQUIRE(s);
	struct sw_metrics_sample a, b, c;
	write_stat_20(dir, 0);
	REQUIRE(sw_metrics_sample(s, NULL, 0, 10, &a) == 0);
	CHECK_INT_EQ(a.ncpu, 20);
	sw_metrics_sample_release(&a);

	/* Reading 1 against reading 0: CPU i was busy i + 1 of 100 ticks. */
	write_stat_20(dir, 1);
	usleep(150 * 1000); /* older than 100 ms: the previous reading serves */
	REQUIRE(sw_metrics_sample(s, NULL, 0, 10, &b) == 0);
	REQUIRE(b.ncpu == 20);
	for (unsigned i = 0; i < 20; i++)
		CHECK(near(b.cpu_core_pct[i], (double)(i + 1), 1e-6));
	sw_metrics_sample_release(&b);

	/* Reading 2 against reading 1 (not 0): 3 * (i + 1) of 100 ticks. */
	write_stat_20(dir, 2);
	usleep(150 * 1000);
	REQUIRE(sw_metrics_sample(s, NULL, 0, 10, &c) == 0);
	REQUIRE(c.ncpu == 20);
	for (unsigned i = 0; i < 20; i++)
		CHECK(near(c.cpu_core_pct[i], 3.0 * (i + 1), 1e-6));
	sw_metrics_sample_release(&c);
	sw_metrics_sampler_free(s);
}

TEST_MAIN()
