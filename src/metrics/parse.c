/* Parsers of the kernel's text files, over buffers only (parse.h).
 *
 * The kernel's formats are stable but these functions are still written
 * as if the bytes were hostile: the same code reads files of a host
 * mounted into a container, and a fuzzer feeds it. Every number is read
 * with an explicit overflow check, every copy is bounded by its
 * destination, and no line is assumed to end before the buffer does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/base.h"
#include "steward/metrics/parse.h"

/* One line of buf from *pos, without its '\n'; false at the end. */
static bool next_line(const char *buf, size_t len, size_t *pos, struct sw_str *ret)
{
	if (*pos >= len)
		return false;
	const char *p = buf + *pos;
	const char *nl = memchr(p, '\n', len - *pos);
	size_t n = nl ? (size_t)(nl - p) : len - *pos;
	*ret = sw_str_from(p, n);
	*pos += n + (nl ? 1 : 0);
	return true;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void skip_spaces(struct sw_str *s)
{
	while (s->len && is_space(*s->ptr)) {
		s->ptr++;
		s->len--;
	}
}

/* The next whitespace-separated word of *s. */
static bool next_word(struct sw_str *s, struct sw_str *ret)
{
	skip_spaces(s);
	if (!s->len)
		return false;
	size_t n = 0;
	while (n < s->len && !is_space(s->ptr[n]))
		n++;
	*ret = sw_str_from(s->ptr, n);
	s->ptr += n;
	s->len -= n;
	return true;
}

/* A whole word of decimal digits, without overflow. */
static bool word_u64(struct sw_str w, uint64_t *ret)
{
	if (!w.len || w.len > 20)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < w.len; i++) {
		unsigned d = (unsigned char)w.ptr[i] - '0';
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*ret = v;
	return true;
}

static bool next_u64(struct sw_str *s, uint64_t *ret)
{
	struct sw_str w;
	return next_word(s, &w) && word_u64(w, ret);
}

/* A non-negative decimal like "0.52" or "12345.67" (loadavg, uptime). */
static bool word_decimal(struct sw_str w, double *ret)
{
	size_t dot = 0;
	while (dot < w.len && w.ptr[dot] != '.')
		dot++;
	uint64_t ip, fp = 0;
	if (!word_u64(sw_str_from(w.ptr, dot), &ip))
		return false;
	double frac = 0, scale = 1;
	if (dot < w.len) {
		struct sw_str f = sw_str_from(w.ptr + dot + 1, w.len - dot - 1);
		if (f.len > 9 || !word_u64(f, &fp))
			return false;
		for (size_t i = 0; i < f.len; i++)
			scale *= 10;
		frac = (double)fp / scale;
	}
	*ret = (double)ip + frac;
	return true;
}

static bool starts_with(struct sw_str s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.len >= n && memcmp(s.ptr, prefix, n) == 0;
}

/* Copies s into dst (NUL-terminated); false when it does not fit. */
static bool copy_str(char *dst, size_t size, struct sw_str s)
{
	if (!size || s.len >= size)
		return false;
	memcpy(dst, s.ptr, s.len);
	dst[s.len] = '\0';
	return true;
}

/* ---- /proc/stat ---- */

static bool cpu_times(struct sw_str rest, struct sw_metrics_cpu_times *t)
{
	uint64_t v[8] = { 0 };
	/* user nice system idle are always there; the rest came with later
	 * kernels (iowait 2.5.41, irq/softirq 2.6.0, steal 2.6.11). */
	for (size_t i = 0; i < SW_ARRAY_SIZE(v); i++) {
		if (!next_u64(&rest, &v[i])) {
			if (i < 4)
				return false;
			break;
		}
	}
	*t = (struct sw_metrics_cpu_times){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7] };
	return true;
}

int sw_metrics_parse_stat(const char *buf, size_t len, struct sw_metrics_cpu_times *ret_total,
			  struct sw_metrics_cpu_times *per, size_t cap, size_t *ret_n,
			  uint64_t *ret_boot_time)
{
	size_t pos = 0, n = 0;
	bool total = false;
	struct sw_str line, word;
	while (next_line(buf, len, &pos, &line)) {
		if (!next_word(&line, &word))
			continue;
		if (sw_str_eq(word, SW_STR("cpu"))) {
			if (!cpu_times(line, ret_total))
				return -EINVAL;
			total = true;
		} else if (word.len > 3 && starts_with(word, "cpu")) {
			uint64_t idx;
			if (!word_u64(sw_str_from(word.ptr + 3, word.len - 3), &idx) || idx >= cap)
				continue;
			if (cpu_times(line, &per[idx]) && n < idx + 1)
				n = idx + 1;
		} else if (sw_str_eq(word, SW_STR("btime")) && ret_boot_time) {
			uint64_t b;
			if (next_u64(&line, &b))
				*ret_boot_time = b;
		}
	}
	if (ret_n)
		*ret_n = n;
	return total ? 0 : -EINVAL;
}

static uint64_t times_sum(const struct sw_metrics_cpu_times *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq + t->steal;
}

void sw_metrics_cpu_pct(const struct sw_metrics_cpu_times *older, const struct sw_metrics_cpu_times *newer,
			double *ret_busy_pct, double *ret_steal_pct)
{
	*ret_busy_pct = 0;
	*ret_steal_pct = 0;
	uint64_t a = times_sum(older), b = times_sum(newer);
	uint64_t idle_a = older->idle + older->iowait, idle_b = newer->idle + newer->iowait;
	if (b <= a || idle_b < idle_a || newer->steal < older->steal)
		return;
	double total = (double)(b - a);
	double idle = (double)(idle_b - idle_a);
	if (idle > total)
		idle = total;
	*ret_busy_pct = 100.0 * (total - idle) / total;
	double steal = (double)(newer->steal - older->steal);
	*ret_steal_pct = steal > total ? 100.0 : 100.0 * steal / total;
}

/* ---- /proc/meminfo ---- */

int sw_metrics_parse_meminfo(const char *buf, size_t len, struct sw_metrics_memory *ret)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "MemTotal:", offsetof(struct sw_metrics_memory, total) },
		{ "MemFree:", offsetof(struct sw_metrics_memory, free) },
		{ "MemAvailable:", offsetof(struct sw_metrics_memory, available) },
		{ "Buffers:", offsetof(struct sw_metrics_memory, buffers) },
		{ "Cached:", offsetof(struct sw_metrics_memory, cache) },
		{ "SwapTotal:", offsetof(struct sw_metrics_memory, swap_total) },
		{ "SwapFree:", offsetof(struct sw_metrics_memory, swap_free) },
	};
	struct sw_metrics_memory m = { 0 };
	uint64_t sreclaimable = 0;
	unsigned seen = 0; /* bit i: keys[i] */
	size_t pos = 0;
	struct sw_str line, word;
	while (next_line(buf, len, &pos, &line)) {
		if (!next_word(&line, &word))
			continue;
		uint64_t kb, *dst = NULL;
		for (size_t i = 0; i < SW_ARRAY_SIZE(keys); i++) {
			if (sw_str_eq(word, sw_str_cstr(keys[i].key))) {
				dst = (uint64_t *)(void *)((char *)&m + keys[i].off);
				seen |= 1u << i;
			}
		}
		if (!dst && sw_str_eq(word, SW_STR("SReclaimable:")))
			dst = &sreclaimable;
		if (!dst || !next_u64(&line, &kb) || kb > UINT64_MAX / 1024)
			continue;
		*dst = kb * 1024;
	}
	if ((seen & 3u) != 3u)
		return -EINVAL;
	m.cache += sreclaimable;
	if (!(seen & 4u))
		m.available = SW_MIN(m.total, m.free + m.buffers + m.cache);
	uint64_t unused = m.free + m.buffers + m.cache;
	/* free(1)'s rule: cache larger than what is not free is shown as free. */
	m.used = m.total > unused ? m.total - unused : m.total - SW_MIN(m.total, m.free);
	m.swap_used = m.swap_total > m.swap_free ? m.swap_total - m.swap_free : 0;
	*ret = m;
	return 0;
}

/* ---- loadavg, uptime ---- */

int sw_metrics_parse_loadavg(const char *buf, size_t len, double ret[3])
{
	struct sw_str s = sw_str_from(buf, len), w;
	double v[3];
	for (int i = 0; i < 3; i++)
		if (!next_word(&s, &w) || !word_decimal(w, &v[i]))
			return -EINVAL;
	memcpy(ret, v, sizeof(v));
	return 0;
}

int sw_metrics_parse_uptime(const char *buf, size_t len, double *ret_seconds)
{
	struct sw_str s = sw_str_from(buf, len), w;
	if (!next_word(&s, &w) || !word_decimal(w, ret_seconds))
		return -EINVAL;
	return 0;
}

/* ---- /proc/cpuinfo ---- */

/* "key\t: value": the key (trailing blanks cut) and the value. */
static bool colon_pair(struct sw_str line, struct sw_str *key, struct sw_str *value)
{
	const char *c = memchr(line.ptr, ':', line.len);
	if (!c)
		return false;
	*key = sw_str_from(line.ptr, (size_t)(c - line.ptr));
	while (key->len && is_space(key->ptr[key->len - 1]))
		key->len--;
	*value = sw_str_from(c + 1, line.len - (size_t)(c + 1 - line.ptr));
	skip_spaces(value);
	while (value->len && is_space(value->ptr[value->len - 1]))
		value->len--;
	return true;
}

#define CPUINFO_CORES_MAX 4096 /* distinct (package, core) pairs remembered */

int sw_metrics_parse_cpuinfo(const char *buf, size_t len, char *model, size_t model_size,
			     unsigned *ret_physical, unsigned *ret_logical)
{
	/* On the heap, made at the first core seen: as a thread-local array
	 * every thread of the process would carry (and zero) its 32 KiB. */
	uint64_t *cores = NULL;
	size_t ncores = 0;
	unsigned logical = 0;
	uint64_t package = 0, core = 0;
	bool have_package = false, have_core = false, model_set = false;
	size_t pos = 0;
	struct sw_str line, key, value;
	if (model_size)
		model[0] = '\0';
	for (bool more = true; more;) {
		more = next_line(buf, len, &pos, &line);
		bool end_of_entry = !more || (line.len == 0 || (line.len == 1 && line.ptr[0] == '\r'));
		if (end_of_entry) {
			if (have_package && have_core && !cores &&
			    !(cores = malloc(CPUINFO_CORES_MAX * sizeof(*cores))))
				return -ENOMEM;
			if (have_package && have_core && ncores < CPUINFO_CORES_MAX) {
				uint64_t id = package << 32 | (core & 0xffffffffu);
				size_t i = 0;
				while (i < ncores && cores[i] != id)
					i++;
				if (i == ncores)
					cores[ncores++] = id;
			}
			have_package = have_core = false;
			continue;
		}
		if (!colon_pair(line, &key, &value))
			continue;
		if (sw_str_eq(key, SW_STR("processor"))) {
			logical++;
		} else if (sw_str_eq(key, SW_STR("physical id"))) {
			have_package = word_u64(value, &package) && package <= UINT32_MAX;
		} else if (sw_str_eq(key, SW_STR("core id"))) {
			have_core = word_u64(value, &core);
		} else if (!model_set && (sw_str_eq(key, SW_STR("model name")) || sw_str_eq(key, SW_STR("Hardware")) ||
					  sw_str_eq(key, SW_STR("cpu model")) || sw_str_eq(key, SW_STR("cpu")))) {
			if (model_size) {
				struct sw_str v = value;
				if (v.len >= model_size)
					v.len = model_size - 1;
				model_set = copy_str(model, model_size, v);
			}
		}
	}
	free(cores);
	if (!logical)
		return -EINVAL;
	*ret_logical = logical;
	*ret_physical = ncores ? (unsigned)ncores : logical;
	return 0;
}

/* ---- os-release ---- */

/* VALUE, "VALUE" or 'VALUE' with shell escapes \" \\ \$ \` undone. */
static void os_release_value(struct sw_str v, char *dst, size_t size)
{
	if (!size)
		return;
	char q = 0;
	if (v.len >= 2 && (v.ptr[0] == '"' || v.ptr[0] == '\'') && v.ptr[v.len - 1] == v.ptr[0]) {
		q = v.ptr[0];
		v.ptr++;
		v.len -= 2;
	}
	size_t o = 0;
	for (size_t i = 0; i < v.len && o + 1 < size; i++) {
		char c = v.ptr[i];
		if (q == '"' && c == '\\' && i + 1 < v.len)
			c = v.ptr[++i];
		if ((unsigned char)c < 0x20 || c == 0x7f)
			continue;
		dst[o++] = c;
	}
	dst[o] = '\0';
}

int sw_metrics_parse_os_release(const char *buf, size_t len, char *name, size_t name_size,
				char *version, size_t version_size)
{
	bool have_name = false, have_version_id = false;
	size_t pos = 0;
	struct sw_str line;
	if (version_size)
		version[0] = '\0';
	while (next_line(buf, len, &pos, &line)) {
		const char *eq = memchr(line.ptr, '=', line.len);
		if (!eq)
			continue;
		struct sw_str key = sw_str_from(line.ptr, (size_t)(eq - line.ptr));
		struct sw_str val = sw_str_from(eq + 1, line.len - key.len - 1);
		while (val.len && is_space(val.ptr[val.len - 1]))
			val.len--;
		if (sw_str_eq(key, SW_STR("NAME"))) {
			os_release_value(val, name, name_size);
			have_name = true;
		} else if (sw_str_eq(key, SW_STR("VERSION_ID"))) {
			os_release_value(val, version, version_size);
			have_version_id = true;
		} else if (sw_str_eq(key, SW_STR("VERSION")) && !have_version_id) {
			os_release_value(val, version, version_size);
		}
	}
	if (!have_name && name_size)
		snprintf(name, name_size, "Linux");
	return 0;
}

/* ---- /proc/net/dev ---- */

int sw_metrics_parse_net_dev(const char *buf, size_t len, struct sw_metrics_net_counters *out,
			     size_t cap, size_t *ret_n)
{
	size_t pos = 0, n = 0;
	struct sw_str line;
	while (next_line(buf, len, &pos, &line)) {
		const char *colon = memchr(line.ptr, ':', line.len);
		if (!colon)
			continue; /* the two header lines */
		struct sw_str name = sw_str_from(line.ptr, (size_t)(colon - line.ptr));
		skip_spaces(&name);
		/* The kernel refuses names with blanks, '/' and ':' (dev_valid_name);
		 * anything outside printable ASCII is not a name it wrote. */
		bool printable = true;
		for (size_t i = 0; i < name.len; i++)
			printable = printable && name.ptr[i] > ' ' && name.ptr[i] < 0x7f && name.ptr[i] != '/';
		struct sw_str rest = sw_str_from(colon + 1, line.len - (size_t)(colon + 1 - line.ptr));
		uint64_t v[10];
		bool ok = printable && name.len > 0 && name.len < sizeof(out->name);
		for (size_t i = 0; ok && i < SW_ARRAY_SIZE(v); i++)
			ok = next_u64(&rest, &v[i]);
		if (!ok)
			continue;
		if (n == cap)
			break;
		/* rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets ... */
		struct sw_metrics_net_counters *c = &out[n++];
		copy_str(c->name, sizeof(c->name), name);
		c->rx_bytes = v[0];
		c->rx_packets = v[1];
		c->tx_bytes = v[8];
		c->tx_packets = v[9];
	}
	*ret_n = n;
	return 0;
}

/* ---- mountinfo ---- */

/* Types that hold data on a device or a server. Everything else (proc,
 * sysfs, tmpfs, cgroup, devpts, squashfs images, fuse helpers...) is a
 * view, a memory file system or a read-only image. */
static const char *const data_fstypes[] = {
	"ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "f2fs", "jfs", "reiserfs", "bcachefs",
	"vfat", "exfat", "ntfs", "ntfs3", "fuseblk", "nfs", "nfs4", "cifs", "smb3", "ceph",
	"glusterfs", "virtiofs", "9p", "lustre", "gfs2", "ocfs2",
};

static bool data_fstype(struct sw_str t)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(data_fstypes); i++)
		if (sw_str_eq(t, sw_str_cstr(data_fstypes[i])))
			return true;
	return false;
}

/* mountinfo escapes ' ', '\t', '\n' and '\\' as \ooo. A NUL, escaped or
 * not, would cut the path short and name another file: refused. */
static bool unescape(struct sw_str s, char *dst, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (c == '\\' && i + 3 < s.len && s.ptr[i + 1] >= '0' && s.ptr[i + 1] <= '3' &&
		    s.ptr[i + 2] >= '0' && s.ptr[i + 2] <= '7' && s.ptr[i + 3] >= '0' && s.ptr[i + 3] <= '7') {
			c = (char)((s.ptr[i + 1] - '0') * 64 + (s.ptr[i + 2] - '0') * 8 + (s.ptr[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= size || c == '\0')
			return false;
		dst[o++] = c;
	}
	if (!size)
		return false;
	dst[o] = '\0';
	return true;
}

static bool parse_mount_line(struct sw_str line, struct sw_metrics_mount *m)
{
	struct sw_str w, root, mp, devno, fstype, source;
	/* id parent major:minor root mount-point options [optional...] - fstype source super-options */
	if (!next_word(&line, &w) || !next_word(&line, &w) || !next_word(&line, &devno) ||
	    !next_word(&line, &root) || !next_word(&line, &mp) || !next_word(&line, &w))
		return false;
	for (;;) {
		if (!next_word(&line, &w))
			return false;
		if (sw_str_eq(w, SW_STR("-")))
			break;
	}
	if (!next_word(&line, &fstype) || !next_word(&line, &source))
		return false;
	const char *colon = memchr(devno.ptr, ':', devno.len);
	uint64_t major, minor;
	if (!colon || !word_u64(sw_str_from(devno.ptr, (size_t)(colon - devno.ptr)), &major) ||
	    !word_u64(sw_str_from(colon + 1, devno.len - (size_t)(colon + 1 - devno.ptr)), &minor) ||
	    major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	m->major = (unsigned)major;
	m->minor = (unsigned)minor;
	return unescape(mp, m->mount_point, sizeof(m->mount_point)) &&
	       copy_str(m->fstype, sizeof(m->fstype), fstype) &&
	       unescape(source, m->source, sizeof(m->source)) && m->mount_point[0] == '/';
}

int sw_metrics_parse_mountinfo(const char *buf, size_t len, struct sw_metrics_mount *out, size_t cap,
			       size_t *ret_n)
{
	size_t pos = 0, n = 0;
	struct sw_str line;
	while (next_line(buf, len, &pos, &line)) {
		struct sw_metrics_mount m;
		if (!parse_mount_line(line, &m))
			continue;
		bool root_overlay = strcmp(m.fstype, "overlay") == 0 && strcmp(m.mount_point, "/") == 0;
		if (!root_overlay && !data_fstype(sw_str_cstr(m.fstype)))
			continue;
		size_t i = 0;
		while (i < n && !(out[i].major == m.major && out[i].minor == m.minor))
			i++;
		if (i < n) {
			if (strlen(m.mount_point) < strlen(out[i].mount_point))
				out[i] = m;
			continue;
		}
		if (n < cap)
			out[n++] = m;
	}
	*ret_n = n;
	return 0;
}

/* ---- cgroup files ---- */

int sw_metrics_parse_keyed_u64(const char *buf, size_t len, const char *key, uint64_t *ret)
{
	size_t pos = 0;
	struct sw_str line, word;
	struct sw_str k = sw_str_cstr(key);
	while (next_line(buf, len, &pos, &line)) {
		if (next_word(&line, &word) && sw_str_eq(word, k))
			return next_u64(&line, ret) ? 0 : -EINVAL;
	}
	return -ENOENT;
}

int sw_metrics_parse_u64(const char *buf, size_t len, uint64_t *ret)
{
	struct sw_str s = sw_str_from(buf, len), w;
	if (!next_word(&s, &w))
		return -EINVAL;
	while (w.len && w.ptr[w.len - 1] == '\n')
		w.len--;
	if (sw_str_eq(w, SW_STR("max"))) {
		*ret = UINT64_MAX;
		return 0;
	}
	return word_u64(w, ret) ? 0 : -EINVAL;
}

/* Whether a comma-separated controller list holds name. */
static bool has_controller(struct sw_str list, const char *name)
{
	struct sw_str want = sw_str_cstr(name);
	while (list.len) {
		const char *comma = memchr(list.ptr, ',', list.len);
		size_t n = comma ? (size_t)(comma - list.ptr) : list.len;
		if (sw_str_eq(sw_str_from(list.ptr, n), want))
			return true;
		if (!comma)
			break;
		list.ptr += n + 1;
		list.len -= n + 1;
	}
	return false;
}

int sw_metrics_parse_proc_cgroup(const char *buf, size_t len, char *unified, size_t unified_size,
				 char *cpuacct, size_t cpuacct_size, char *memory, size_t memory_size)
{
	unified[0] = cpuacct[0] = memory[0] = '\0';
	size_t pos = 0;
	struct sw_str line;
	while (next_line(buf, len, &pos, &line)) {
		/* hierarchy-id:controllers:path; the path may hold ':' */
		const char *c1 = memchr(line.ptr, ':', line.len);
		if (!c1)
			continue;
		const char *rest = c1 + 1;
		size_t rest_len = line.len - (size_t)(rest - line.ptr);
		const char *c2 = memchr(rest, ':', rest_len);
		if (!c2)
			continue;
		struct sw_str id = sw_str_from(line.ptr, (size_t)(c1 - line.ptr));
		struct sw_str ctl = sw_str_from(rest, (size_t)(c2 - rest));
		struct sw_str path = sw_str_from(c2 + 1, rest_len - ctl.len - 1);
		if (!path.len || path.ptr[0] != '/')
			continue;
		char *dst = NULL;
		size_t size = 0;
		if (sw_str_eq(id, SW_STR("0")) && ctl.len == 0) {
			dst = unified;
			size = unified_size;
		} else if (has_controller(ctl, "cpuacct")) {
			dst = cpuacct;
			size = cpuacct_size;
		} else if (has_controller(ctl, "memory")) {
			dst = memory;
			size = memory_size;
		}
		if (dst && !copy_str(dst, size, path))
			return -ENAMETOOLONG;
	}
	return 0;
}

bool sw_metrics_cgroup_says_container(const char *buf, size_t len)
{
	static const char *const marks[] = { "/docker/", "/docker-", "/containerd/", "/kubepods",
					     "/lxc/", "/lxc.payload", "/libpod-", "/machine.slice/" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(marks); i++)
		if (memmem(buf, len, marks[i], strlen(marks[i])))
			return true;
	return false;
}

const char *sw_metrics_virt_from_dmi(const char *sys_vendor, const char *product_name)
{
	static const struct {
		const char *mark, *type;
	} table[] = {
		{ "KVM", "kvm" }, { "Amazon EC2", "amazon" }, { "Google", "google" }, { "QEMU", "qemu" },
		{ "VMware", "vmware" }, { "VMW", "vmware" }, { "Microsoft Corporation", "microsoft" },
		{ "innotek GmbH", "oracle" }, { "VirtualBox", "oracle" }, { "Oracle Corporation", "oracle" },
		{ "Xen", "xen" }, { "Parallels", "parallels" }, { "Bochs", "bochs" },
	};
	/* Product first: a KVM guest on AWS says "Amazon EC2" as vendor, and
	 * Hyper-V's product "Virtual Machine" is only meaningful with its vendor. */
	for (size_t i = 0; i < SW_ARRAY_SIZE(table); i++) {
		size_t n = strlen(table[i].mark);
		if ((product_name && strncmp(product_name, table[i].mark, n) == 0) ||
		    (sys_vendor && strncmp(sys_vendor, table[i].mark, n) == 0)) {
			if (strcmp(table[i].type, "microsoft") == 0 &&
			    !(product_name && strstr(product_name, "Virtual Machine")))
				continue; /* Microsoft hardware, not Hyper-V */
			return table[i].type;
		}
	}
	return NULL;
}
