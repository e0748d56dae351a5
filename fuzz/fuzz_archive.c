/* libFuzzer harness for sw_archive_unpack (source.h): the input is the
 * uploaded archive's bytes (tar, tar.gz or zip, or anything else).
 *
 * An input starting with '#' is a script instead, written into an archive
 * with libarchive's writer so that the fuzzer reaches our rules without
 * having to learn tar checksums: "#t" (tar), "#g" (tar.gz) or "#z" (zip),
 * then lines "<type> <name>[ <arg>]": f file (arg: its data), x
 * executable file, d directory, l symlink (arg: target), h hard link (arg:
 * target), c character device, p FIFO, b big file (arg: size in bytes,
 * zeros, at most 4 MiB). Names and args run to a space or the line end.
 *
 * Each run writes the archive to <scratch>/a/b/c/in (scratch on /dev/shm
 * when there is one), unpacks it into <scratch>/a/b/c/out with small caps
 * (1 MiB, 64 entries, depth 8), and checks, beyond "no crash, no UB":
 * - the answer is 0, or negative with a sentence; -EFBIG only with a
 *   sentence about a limit;
 * - nothing appeared beside out, in, c or b (three fence levels: a name
 *   climbing out lands in one of them);
 * - the tree under out holds only directories (mode 0755), regular files
 *   (0644 or 0755) and symbolic links, within the caps (bytes, entries,
 *   depth), whatever the answer;
 * - every symbolic link, resolved by the kernel itself (openat2() with
 *   RESOLVE_BENEATH from out), never climbs above out.
 * out is removed after each run without following links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <archive.h>
#include <archive_entry.h>
#include "steward/base/base.h"
#include "steward/deploy/source.h"
#include "fuzz.h"

static const struct sw_archive_limits lim = { 1024 * 1024, 64, 8 };

static char base[64];           /* <scratch> */
static char c_dir[96], in_path[112], out_path[112];
static size_t out_len;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void teardown(void)
{
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void oracle_self_check(void);

static void setup(void)
{
	if (base[0])
		return;
	struct stat st;
	snprintf(base, sizeof(base), "%s/sw-fuzz-archive-XXXXXX",
		 stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
	ASSERT(mkdtemp(base));
	char p[96];
	snprintf(p, sizeof(p), "%s/a", base);
	ASSERT(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/a/b", base);
	ASSERT(mkdir(p, 0755) == 0);
	snprintf(c_dir, sizeof(c_dir), "%s/a/b/c", base);
	ASSERT(mkdir(c_dir, 0755) == 0);
	snprintf(in_path, sizeof(in_path), "%s/in", c_dir);
	snprintf(out_path, sizeof(out_path), "%s/out", c_dir);
	out_len = strlen(out_path);
	atexit(teardown);
	oracle_self_check();
}

/* dir holds exactly the names in allowed (NULL-terminated). */
static void only(const char *dir, const char *const *allowed)
{
	DIR *d = opendir(dir);
	ASSERT(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		bool ok = false;
		for (size_t i = 0; allowed[i]; i++)
			ok |= strcmp(e->d_name, allowed[i]) == 0;
		if (!ok)
			fprintf(stderr, "escaped: %s/%s\n", dir, e->d_name);
		ASSERT(ok);
	}
	closedir(d);
}

/* ---- resolving links: the kernel is the oracle ---- */

/* Whether the kernel, resolving path (relative to dir_fd, following every
 * link, the last one included), stays beneath out: openat2() with
 * RESOLVE_BENEATH refuses (EXDEV) an absolute link or a ".." that would
 * climb above out at any step. A name that does not resolve (dangling,
 * ELOOP, ENAMETOOLONG, ENOTDIR) leaves nothing to reach: it stays.
 * ("out" below: dir_fd.) */
static bool stays_beneath(int dir_fd, const char *path)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
	int fd, tries = 0;
	/* EAGAIN: a rename or mount somewhere on the machine during a ".."
	 * step; the kernel asks to try again */
	do
		fd = (int)syscall(SYS_openat2, dir_fd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN && ++tries < 1000);
	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (errno == ENOSYS) {
		fprintf(stderr, "openat2() is missing: this harness needs Linux 5.6 or later\n");
		abort();
	}
	if (errno == EXDEV)
		return false;
	if (errno != ENOENT && errno != ELOOP && errno != ENAMETOOLONG && errno != ENOTDIR && errno != EACCES) {
		fprintf(stderr, "openat2(%s): %s\n", path, strerror(errno));
		abort();
	}
	return true;
}

static int out_fd = -1;

/* The oracle on links made here, once: one that climbs out is caught,
 * one that stays and one that dangles are not. */
static void oracle_self_check(void)
{
	char dir[96], link[112];
	snprintf(dir, sizeof(dir), "%s/probe", base);
	ASSERT(mkdir(dir, 0755) == 0);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT(fd >= 0);
	static const struct {
		const char *name, *target;
		bool stays;
	} cases[] = { { "up", "../probe/../..", false }, { "abs", "/etc", false }, { "here", ".", true },
		      { "gone", "nothing/there", true }, { "via", "here/../up", false } };
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		snprintf(link, sizeof(link), "%s/%s", dir, cases[i].name);
		ASSERT(symlink(cases[i].target, link) == 0);
	}
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++)
		ASSERT(stays_beneath(fd, cases[i].name) == cases[i].stays);
	for (size_t i = 0; i < SW_ARRAY_SIZE(cases); i++) {
		snprintf(link, sizeof(link), "%s/%s", dir, cases[i].name);
		ASSERT(unlink(link) == 0);
	}
	close(fd);
	ASSERT(rmdir(dir) == 0);
}
static uint64_t seen_bytes, seen_entries;

static int check_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	ASSERT(strncmp(path, out_path, out_len) == 0);
	if (ftw->level == 0)
		return 0;
	seen_entries++;
	ASSERT((unsigned)ftw->level <= lim.max_depth);
	if (S_ISDIR(st->st_mode)) {
		ASSERT((st->st_mode & 07777) == 0755);
	} else if (S_ISREG(st->st_mode)) {
		ASSERT((st->st_mode & 07777) == 0644 || (st->st_mode & 07777) == 0755);
		seen_bytes += (uint64_t)st->st_size;
	} else {
		ASSERT(S_ISLNK(st->st_mode));
		bool inside = stays_beneath(out_fd, path + out_len + 1);
		if (!inside) {
			char target[PATH_MAX];
			ssize_t n = readlink(path, target, sizeof(target) - 1);
			target[n < 0 ? 0 : n] = '\0';
			fprintf(stderr, "link %s -> %s leaves the tree\n", path, target);
		}
		ASSERT(inside);
	}
	return 0;
}

/* ---- scripts ---- */

static void script_entry(struct archive *a, char type, const char *name, const char *arg)
{
	static const char zeros[65536];
	struct archive_entry *e = archive_entry_new();
	ASSERT(e);
	archive_entry_set_pathname(e, name);
	archive_entry_set_mtime(e, 1700000000, 0);
	archive_entry_set_perm(e, type == 'x' ? 0755 : 0644);
	size_t size = 0;
	switch (type) {
	case 'f':
	case 'x':
		archive_entry_set_filetype(e, AE_IFREG);
		size = strlen(arg);
		break;
	case 'b':
		archive_entry_set_filetype(e, AE_IFREG);
		size = (size_t)strtoul(arg, NULL, 10);
		if (size > 4 * 1024 * 1024)
			size = 4 * 1024 * 1024;
		break;
	case 'd':
		archive_entry_set_filetype(e, AE_IFDIR);
		break;
	case 'l':
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_symlink(e, arg);
		break;
	case 'h':
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_hardlink(e, arg);
		break;
	case 'c':
		archive_entry_set_filetype(e, AE_IFCHR);
		break;
	case 'p':
		archive_entry_set_filetype(e, AE_IFIFO);
		break;
	default:
		archive_entry_free(e);
		return;
	}
	archive_entry_set_size(e, (la_int64_t)size);
	if (archive_write_header(a, e) == ARCHIVE_OK) {
		for (size_t off = 0; off < size;) {
			size_t n = type == 'b' ? SW_MIN(size - off, sizeof(zeros)) : size;
			if (archive_write_data(a, type == 'b' ? zeros : arg, n) != (la_ssize_t)n)
				break;
			off += n;
		}
	}
	archive_entry_free(e);
}

/* Writes the script in text (NUL-terminated) as an archive at in_path. */
static void write_script(char *text)
{
	struct archive *a = archive_write_new();
	ASSERT(a);
	char kind = text[1];
	if (kind == 'z')
		ASSERT(archive_write_set_format_zip(a) == ARCHIVE_OK);
	else
		ASSERT(archive_write_set_format_pax_restricted(a) == ARCHIVE_OK);
	if (kind == 'g')
		ASSERT(archive_write_add_filter_gzip(a) == ARCHIVE_OK);
	ASSERT(archive_write_open_filename(a, in_path) == ARCHIVE_OK);
	char *save = NULL;
	unsigned lines = 0;
	for (char *line = strtok_r(text + 1, "\n", &save); line && lines < 100;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		if (line == text + 1)
			continue; /* the kind */
		if (strlen(line) < 3 || line[1] != ' ')
			continue;
		char *name = line + 2, *arg = strchr(name, ' ');
		if (arg)
			*arg++ = '\0';
		script_entry(a, line[0], name, arg ? arg : "");
	}
	archive_write_close(a);
	archive_write_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 256 * 1024)
		return 0;
	setup();
	if (size >= 2 && data[0] == '#') {
		char *text = malloc(size + 1);
		ASSERT(text);
		memcpy(text, data, size);
		text[size] = '\0';
		write_script(text);
		free(text);
	} else {
		int fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		ASSERT(fd >= 0);
		ASSERT(write(fd, data, size) == (ssize_t)size);
		close(fd);
	}

	char err[512] = "untouched";
	int r = sw_archive_unpack(in_path, out_path, &lim, err, sizeof(err));
	ASSERT(r <= 0);
	if (r < 0)
		ASSERT(err[0] && strcmp(err, "untouched") != 0);
	if (r == -EFBIG)
		ASSERT(strstr(err, "more than") || strstr(err, "deeper than"));

	static const char *const in_c[] = { "in", "out", NULL };
	static const char *const in_b[] = { "c", NULL };
	static const char *const in_a[] = { "b", NULL };
	static const char *const in_base[] = { "a", NULL };
	only(c_dir, in_c);
	char p[96];
	snprintf(p, sizeof(p), "%s/a/b", base);
	only(p, in_b);
	snprintf(p, sizeof(p), "%s/a", base);
	only(p, in_a);
	only(base, in_base);

	seen_bytes = seen_entries = 0;
	struct stat st;
	if (lstat(out_path, &st) == 0) {
		ASSERT(S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0755);
		out_fd = open(out_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ASSERT(out_fd >= 0);
		ASSERT(nftw(out_path, check_one, 16, FTW_PHYS) == 0);
		close(out_fd);
		out_fd = -1;
		ASSERT(seen_bytes <= lim.max_bytes);
		ASSERT(seen_entries <= lim.max_entries);
		ASSERT(nftw(out_path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
	}
	return 0;
}
