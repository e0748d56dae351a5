/* The host's side of a sample: where its trees are, the facts that stay
 * (OS, kernel, CPU model, virtualisation), and its file systems.
 *
 * Everything is read under HOST_PROC_PATH, HOST_SYS_PATH and
 * HOST_ROOT_PATH. Two files must come from the host's own namespaces even
 * when stewardd runs in a container with the host's /proc mounted:
 * /proc/self/... would name the reader, so mountinfo and net/dev are read
 * through PID 1 (the host's init) when HOST_PROC_PATH is set. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "internal.h"

/* Opens base + rel for reading; the descriptor or -errno. */
static int open_under(const char *base, const char *rel)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof(path), "%s%s", base, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	return fd < 0 ? -errno : fd;
}

/* read(2) past EINTR: the count, 0 at the end, or -errno. */
static ssize_t read_some(int fd, char *p, size_t n)
{
	for (;;) {
		ssize_t r = read(fd, p, n);
		if (r >= 0 || errno != EINTR)
			return r < 0 ? -errno : r;
	}
}

/* The rest of fd into b (reset first, NUL-terminated). */
static int read_fd(int fd, struct sw_buf *b, size_t max)
{
	b->len = 0;
	int rc = 0;
	for (;;) {
		if (b->len >= max) {
			rc = -EFBIG;
			break;
		}
		if ((rc = sw_buf_reserve(b, 16384 + 1)) < 0)
			break;
		ssize_t n = read_some(fd, b->data + b->len, SW_MIN(b->cap - b->len - 1, max - b->len));
		if (n <= 0) {
			rc = (int)n;
			break;
		}
		b->len += (size_t)n;
	}
	if (rc == 0)
		b->data[b->len] = '\0';
	return rc;
}

int sw_metrics_read(const char *base, const char *rel, struct sw_buf *b, size_t max)
{
	int fd = open_under(base, rel);
	if (fd < 0)
		return fd;
	int rc = read_fd(fd, b, max);
	close(fd);
	return rc;
}

ssize_t sw_metrics_read_small(const char *base, const char *rel, char *buf, size_t size)
{
	int fd = open_under(base, rel);
	if (fd < 0)
		return fd;
	size_t len = 0;
	ssize_t rc = 0;
	while (len + 1 < size && (rc = read_some(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)rc;
	char extra;
	if (rc >= 0 && len + 1 >= size && read_some(fd, &extra, 1) > 0)
		rc = -EFBIG;
	close(fd);
	if (rc < 0)
		return rc;
	buf[len] = '\0';
	return (ssize_t)len;
}

/* ---- paths ---- */

static int path_var(const char *name, const char *def, char *out, size_t size, bool *set, char *err,
		    size_t errlen)
{
	const char *v = getenv(name);
	if (v && *v) {
		*set = true;
	} else {
		v = def;
	}
	if (v[0] != '/' || strlen(v) >= size) {
		snprintf(err, errlen, "%s must be an absolute path shorter than %zu bytes", name, size);
		return -EINVAL;
	}
	size_t n = strlen(v);
	while (n > 0 && v[n - 1] == '/')
		n--; /* "/" becomes "": paths are joined as base + "/rel" */
	memcpy(out, v, n);
	out[n] = '\0';
	return 0;
}

bool sw_metrics_detect_container(void)
{
	if (access("/.dockerenv", F_OK) == 0 || access("/run/.containerenv", F_OK) == 0)
		return true;
	/* systemd-nspawn, podman and LXC set "container=" in PID 1's environment. */
	char env[8192];
	ssize_t n = sw_metrics_read_small("/proc", "/1/environ", env, sizeof(env));
	if (n > 0 && n >= 10) {
		for (ssize_t i = 0; i + 10 <= n; i++)
			if ((i == 0 || env[i - 1] == '\0') && memcmp(env + i, "container=", 10) == 0)
				return true;
	}
	char cg[4096];
	n = sw_metrics_read_small("/proc", "/1/cgroup", cg, sizeof(cg));
	return n > 0 && sw_metrics_cgroup_says_container(cg, (size_t)n);
}

int sw_metrics_paths_from_env(struct sw_metrics_paths *ret, char *err, size_t errlen)
{
	struct sw_metrics_paths p = { 0 };
	bool a = false, b = false, c = false;
	int rc;
	if ((rc = path_var("HOST_PROC_PATH", "/proc", p.proc, sizeof(p.proc), &a, err, errlen)) < 0 ||
	    (rc = path_var("HOST_SYS_PATH", "/sys", p.sys, sizeof(p.sys), &b, err, errlen)) < 0 ||
	    (rc = path_var("HOST_ROOT_PATH", "/", p.root, sizeof(p.root), &c, err, errlen)) < 0)
		return rc;
	p.configured = a || b || c;
	p.in_container = sw_metrics_detect_container();
	p.describes_container = p.in_container && !p.configured;
	*ret = p;
	return 0;
}

const char *sw_metrics_paths_warning(const struct sw_metrics_paths *p)
{
	if (!p->describes_container)
		return NULL;
	return "metrics: running in a container without HOST_PROC_PATH, HOST_SYS_PATH and HOST_ROOT_PATH: "
	       "host figures describe this container (mount the host's /proc, /sys and / and point the "
	       "three variables at them)";
}

/* ---- facts ---- */

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

void sw_metrics_virtualization(const struct sw_metrics_paths *p, bool in_container, const char *cpuinfo,
			       char *out, size_t size)
{
	if (in_container && !p->configured) {
		const char *kind = access("/run/.containerenv", F_OK) == 0 ? "podman" : "docker";
		if (access("/.dockerenv", F_OK) != 0 && access("/run/.containerenv", F_OK) != 0)
			kind = "container";
		snprintf(out, size, "%s", kind);
		return;
	}
	char vendor[128] = "", product[128] = "";
	if (sw_metrics_read_small(p->sys, "/class/dmi/id/sys_vendor", vendor, sizeof(vendor)) > 0)
		trim(vendor);
	if (sw_metrics_read_small(p->sys, "/class/dmi/id/product_name", product, sizeof(product)) > 0)
		trim(product);
	const char *t = sw_metrics_virt_from_dmi(vendor, product);
	if (t) {
		snprintf(out, size, "%s", t);
		return;
	}
	char hv[64] = "";
	if (sw_metrics_read_small(p->sys, "/hypervisor/type", hv, sizeof(hv)) > 0) {
		trim(hv);
		if (hv[0]) {
			snprintf(out, size, "%s", hv);
			return;
		}
	}
	/* A hypervisor that names itself nowhere (Firecracker, for one) still
	 * sets the CPUID bit the kernel shows as the "hypervisor" flag. */
	const char *flags = cpuinfo ? strstr(cpuinfo, "\nflags") : NULL;
	if (flags) {
		const char *eol = strchr(flags + 1, '\n');
		size_t n = eol ? (size_t)(eol - flags) : strlen(flags);
		if (memmem(flags, n, " hypervisor", 11)) {
			snprintf(out, size, "vm");
			return;
		}
	}
	snprintf(out, size, "none");
}

void sw_metrics_host_facts(const struct sw_metrics_paths *p, struct sw_metrics_sample *s)
{
	struct sw_buf b = { 0 };
	/* os-release: /etc first, then /usr/lib, as os-release(5) says. */
	if (sw_metrics_read(p->root, "/etc/os-release", &b, 65536) == 0 ||
	    sw_metrics_read(p->root, "/usr/lib/os-release", &b, 65536) == 0)
		sw_metrics_parse_os_release(b.data, b.len, s->os_name, sizeof(s->os_name), s->os_version,
					    sizeof(s->os_version));
	else
		snprintf(s->os_name, sizeof(s->os_name), "Linux");
	/* The kernel from /proc (uname(2) says the same; the file is the
	 * host's even when read from a container). The hostname: uname(2)
	 * names this process's UTS namespace, so with the host's tree mounted
	 * its /etc/hostname is the host's name. */
	char line[256];
	if (sw_metrics_read_small(p->proc, "/sys/kernel/osrelease", line, sizeof(line)) > 0) {
		trim(line);
		snprintf(s->kernel, sizeof(s->kernel), "%s", line);
	}
	if (p->configured && sw_metrics_read_small(p->root, "/etc/hostname", line, sizeof(line)) > 0) {
		trim(line);
		snprintf(s->hostname, sizeof(s->hostname), "%s", line);
	}
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(s->arch, sizeof(s->arch), "%s", u.machine);
		if (!s->kernel[0])
			snprintf(s->kernel, sizeof(s->kernel), "%s", u.release);
		if (!s->hostname[0])
			snprintf(s->hostname, sizeof(s->hostname), "%s", u.nodename);
	}
	if (sw_metrics_read(p->proc, "/cpuinfo", &b, SW_METRICS_FILE_MAX) == 0) {
		sw_metrics_parse_cpuinfo(b.data, b.len, s->cpu_model, sizeof(s->cpu_model), &s->physical_cores,
					 &s->logical_cores);
		sw_metrics_virtualization(p, p->in_container, b.data, s->virtualization, sizeof(s->virtualization));
	} else {
		sw_metrics_virtualization(p, p->in_container, NULL, s->virtualization, sizeof(s->virtualization));
	}
	sw_buf_release(&b);
}

/* ---- disks ---- */

void sw_metrics_mounts_release(struct sw_metrics_mounts *c)
{
	if (c->fd > 0)
		close(c->fd);
	free(c->m);
	*c = (struct sw_metrics_mounts){ 0 };
}

/* The real file systems of the mount table, in c: read again only when
 * the table changed. A mountinfo file polls POLLPRI once its mount
 * namespace's table changes after the descriptor's last poll (proc(5));
 * with 50 containers the table holds 50 overlay mounts whose options are
 * long (every lower layer), and reading and parsing it was the largest
 * fixed cost of a tick. */
static int mounts_current(const struct sw_metrics_paths *p, struct sw_metrics_mounts *c)
{
	if (c->fd <= 0) {
		int fd = open_under(p->proc, p->configured ? "/1/mountinfo" : "/self/mountinfo");
		if (fd < 0)
			return fd;
		c->fd = fd;
		c->have = false;
	}
	struct pollfd pf = { .fd = c->fd, .events = POLLPRI };
	bool changed = poll(&pf, 1, 0) > 0 && (pf.revents & (POLLPRI | POLLERR));
	if (c->have && !changed)
		return 0;
	if (!c->m && !(c->m = calloc(SW_METRICS_FS_MAX, sizeof(*c->m))))
		return -ENOMEM;
	struct sw_buf b = { 0 };
	int rc = lseek(c->fd, 0, SEEK_SET) < 0 ? -errno : read_fd(c->fd, &b, SW_METRICS_FILE_MAX);
	if (rc == 0) {
		c->n = 0;
		sw_metrics_parse_mountinfo((const char *)b.data, b.len, c->m, SW_METRICS_FS_MAX, &c->n);
		c->have = true;
	} else { /* opened again next time */
		close(c->fd);
		c->fd = 0;
		c->have = false;
	}
	sw_buf_release(&b);
	return rc;
}

int sw_metrics_disks(const struct sw_metrics_paths *p, struct sw_metrics_mounts *mounts, struct sw_metrics_sample *s)
{
	s->fs = calloc(SW_METRICS_FS_MAX, sizeof(*s->fs));
	if (!s->fs)
		return -ENOMEM;
	int rc = mounts_current(p, mounts);
	if (rc < 0)
		return rc;
	const struct sw_metrics_mount *m = mounts->m;
	for (size_t i = 0; i < mounts->n; i++) {
		char path[PATH_MAX];
		struct statvfs v;
		if ((size_t)snprintf(path, sizeof(path), "%s%s", p->root, m[i].mount_point) >= sizeof(path) ||
		    statvfs(path, &v) != 0)
			continue; /* not reachable from here (a mount the root tree does not show) */
		struct sw_metrics_fs *f = &s->fs[s->nfs++];
		snprintf(f->mount_point, sizeof(f->mount_point), "%s", m[i].mount_point);
		snprintf(f->device, sizeof(f->device), "%s", m[i].source);
		snprintf(f->fstype, sizeof(f->fstype), "%s", m[i].fstype);
		uint64_t fr = v.f_frsize ? v.f_frsize : v.f_bsize;
		f->total = (uint64_t)v.f_blocks * fr;
		f->free = (uint64_t)v.f_bfree * fr;
		f->available = (uint64_t)v.f_bavail * fr;
		f->used = f->total - SW_MIN(f->total, f->free);
		f->inodes_total = v.f_files;
		f->inodes_free = v.f_ffree;
		f->inodes_used = v.f_files - SW_MIN(v.f_files, v.f_ffree);
	}
	return 0;
}
