/* The host facts an agent reports in its hello, read through
 * HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH so that an agent in a
 * container describes the host, not its container. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "steward/agent/daemon.h"
#include "steward/base/limits.h"

/* The first line of dir/rel (cut to a printable fact) into out; false if
 * it cannot be read or is empty. */
static bool read_line(const char *dir, const char *rel, char *out, size_t cap)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, rel);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool ok = fgets(out, (int)cap, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	out[strcspn(out, "\r\n")] = '\0';
	return out[0] != '\0';
}

/* Control characters become spaces, the length is capped at a whole
 * UTF-8 character, so the fact passes the protocol's F_TEXT check. */
static void tidy(char *s)
{
	size_t n = strlen(s);
	if (n > SW_AGENT_MAX_FACT_LEN) {
		n = SW_AGENT_MAX_FACT_LEN;
		while (n && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
		s[n] = '\0';
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F)
			s[i] = ' ';
}

/* PRETTY_NAME of os-release, unquoted. */
static bool os_name(const char *root, char *out, size_t cap)
{
	static const char *const files[] = { "etc/os-release", "usr/lib/os-release" };
	for (size_t k = 0; k < 2; k++) {
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", strcmp(root, "/") == 0 ? "" : root, files[k]);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		char line[512];
		bool found = false;
		while (!found && fgets(line, sizeof(line), f)) {
			if (strncmp(line, "PRETTY_NAME=", 12) != 0)
				continue;
			char *v = line + 12;
			v[strcspn(v, "\r\n")] = '\0';
			size_t n = strlen(v);
			if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
				v[n - 1] = '\0';
				v++;
			}
			snprintf(out, cap, "%s", v);
			found = out[0] != '\0';
		}
		fclose(f);
		if (found)
			return true;
	}
	return false;
}

static uint64_t count_cpus(const char *proc)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/cpuinfo", proc);
	FILE *f = fopen(path, "re");
	uint64_t n = 0;
	if (f) {
		char line[256];
		while (fgets(line, sizeof(line), f))
			n += strncmp(line, "processor", 9) == 0;
		fclose(f);
	}
	if (n == 0) {
		long v = sysconf(_SC_NPROCESSORS_ONLN);
		n = v > 0 ? (uint64_t)v : 1;
	}
	return n;
}

static uint64_t mem_total(const char *proc)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/meminfo", proc);
	FILE *f = fopen(path, "re");
	unsigned long long kb = 0;
	if (f) {
		char line[256];
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
				break;
		fclose(f);
	}
	return (uint64_t)kb * 1024;
}

void sw_agent_host_facts(const struct sw_agent_config *c, struct sw_agent_msg *hello, char *store,
			 size_t store_len)
{
	/* Five facts of at most SW_AGENT_MAX_FACT_LEN bytes each. */
	size_t slot = store_len / 5;
	char *os = store, *kernel = store + slot, *arch = store + 2 * slot,
	     *host = store + 3 * slot, *boot = store + 4 * slot;
	struct utsname u;
	bool have_uname = uname(&u) == 0;
	if (!os_name(c->root_path, os, slot))
		snprintf(os, slot, "Linux");
	if (!read_line(c->proc_path, "sys/kernel/osrelease", kernel, slot))
		snprintf(kernel, slot, "%s", have_uname ? u.release : "unknown");
	snprintf(arch, slot, "%s", have_uname ? u.machine : "unknown");
	if (!read_line(c->root_path, "etc/hostname", host, slot) &&
	    !read_line(c->proc_path, "sys/kernel/hostname", host, slot) &&
	    gethostname(host, slot) != 0)
		snprintf(host, slot, "unknown");
	if (!read_line(c->proc_path, "sys/kernel/random/boot_id", boot, slot))
		snprintf(boot, slot, "unknown");
	boot[SW_MIN(strlen(boot), (size_t)SW_AGENT_MAX_ID_LEN)] = '\0';
	tidy(os);
	tidy(kernel);
	tidy(arch);
	tidy(host);
	hello->type = SW_AGENT_MSG_HELLO;
	hello->agent_version = SW_AGENT_VERSION;
	hello->protocol_min = SW_AGENT_PROTOCOL_MIN;
	hello->protocol_max = SW_AGENT_PROTOCOL_MAX;
	hello->boot_id = boot;
	hello->host.os = os;
	hello->host.kernel = kernel;
	hello->host.arch = arch;
	hello->host.hostname = host;
	hello->host.cores = count_cpus(c->proc_path);
	hello->host.memory_bytes = mem_total(c->proc_path);
}
