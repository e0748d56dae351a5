/* The build context as a tar stream, produced as the engine reads it
 * (internal.h has the contract).
 *
 * libarchive writes the archive (pax where a name or a size needs it,
 * ustar otherwise: the engine's Go reader takes both) into a small
 * pending buffer, one step at a time: an entry's header, or the next
 * 64 KiB of a file. curl pulls from that buffer, so memory stays at one
 * step whatever the size of the tree, and nothing is staged on disk.
 * libarchive's disk reader walks the tree without following symbolic
 * links; each entry written is made afresh from the few fields the engine
 * needs (type, mode, size, mtime, link target), so owners, extended
 * attributes and ACLs of the host never leave it.
 *
 * The context's .dockerignore is read here, once, as the Docker CLI reads
 * it (dockerignore.c), with the exceptions the CLI adds for the Dockerfile
 * in use and for .dockerignore itself. An excluded file is not opened; an
 * excluded directory is not descended into, unless an exception names
 * something under it: then it is walked (its own entry is not sent) and
 * each entry under it is decided on its own. The file is opened without
 * following a symbolic link (a link could point anywhere on the host, and
 * a malformed line is quoted in the error). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/libarchive.h"
#include "driver/driver_internal.h"

#define STEP_BYTES (64 * 1024)

struct sw_driver_tar {
	const struct sw_libarchive *la;
	struct archive *disk;
	struct archive *w;
	struct archive_entry *in;
	struct archive_entry *out;
	char root[PATH_MAX];
	size_t root_len;
	int fd;                 /* the regular file being written, or -1 */
	uint64_t file_left;     /* its bytes still to write */
	char rel[PATH_MAX];     /* its name in the archive, for messages */
	struct sw_dockerignore *ignore; /* NULL: no .dockerignore */
	struct sw_buf pending;  /* written by libarchive, not yet read */
	size_t pos;
	uint64_t max_bytes;
	uint64_t produced;
	bool done;
	int error;
	char why[PATH_MAX + 128];
	char chunk[STEP_BYTES];
};

static la_ssize_t on_archive_write(struct archive *a, void *arg, const void *p, size_t n)
{
	struct sw_driver_tar *t = arg;
	if (t->produced + n > t->max_bytes) {
		t->error = -EFBIG;
		snprintf(t->why, sizeof(t->why), "the build context is larger than %llu bytes",
			 (unsigned long long)t->max_bytes);
		return -1;
	}
	if (sw_buf_append(&t->pending, p, n) < 0) {
		t->error = -ENOMEM;
		snprintf(t->why, sizeof(t->why), "out of memory writing the build context");
		return -1;
	}
	t->produced += n;
	return (la_ssize_t)n;
}

/* A failure of libarchive: unless a callback said why already. */
static int fail(struct sw_driver_tar *t, int error, const char *what, const char *detail)
{
	if (!t->error) {
		t->error = error;
		snprintf(t->why, sizeof(t->why), "the build context cannot be read: %s%s%s", what,
			 detail ? ": " : "", detail ? detail : "");
	}
	return t->error;
}

/* Reads <root>/.dockerignore into t->ignore (absent: none). 0, or -errno
 * with a sentence in err. */
static int read_dockerignore(struct sw_driver_tar *t, const char *dockerfile, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/.dockerignore", t->root);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return 0;
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = fd < 0 ? errno : EINVAL;
		snprintf(err, errlen, e == ELOOP || e == EINVAL
					      ? "the build context's .dockerignore is not a regular file "
						"(a symbolic link is not followed)"
					      : "the build context's .dockerignore cannot be read: %s", strerror(e));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	/* One byte past the cap tells a file that is too large. */
	size_t cap = SW_DOCKERIGNORE_MAX_BYTES + 1, len = 0;
	char *text = malloc(cap);
	int rc = text ? 0 : -ENOMEM;
	while (rc == 0 && len < cap) {
		ssize_t r = read(fd, text + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = -errno;
		else if (r == 0)
			break;
		else
			len += (size_t)r;
	}
	close(fd);
	if (rc < 0) {
		snprintf(err, errlen, "the build context's .dockerignore cannot be read: %s", strerror(-rc));
		free(text);
		return rc;
	}
	t->ignore = sw_dockerignore_parse(text, len, err, errlen);
	free(text);
	if (!t->ignore)
		return -errno;
	rc = sw_dockerignore_keep(t->ignore, ".dockerignore");
	if (rc == 0 && dockerfile)
		rc = sw_dockerignore_keep(t->ignore, dockerfile);
	if (rc < 0)
		snprintf(err, errlen, rc == -ENOMEM ? "out of memory"
						    : "the Dockerfile's path cannot be read as a .dockerignore exception");
	return rc;
}

struct sw_driver_tar *sw_driver_tar_open(const char *dir, const char *dockerfile, uint64_t max_bytes,
					 char *err, size_t errlen)
{
	struct sw_driver_tar *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->fd = -1;
	t->max_bytes = max_bytes ? max_bytes : UINT64_MAX;
	char why[192];
	t->la = sw_libarchive(why, sizeof(why));
	if (!t->la) {
		snprintf(err, errlen, "the build context cannot be written: %s", why);
		errno = ENOTSUP;
		goto free_t;
	}
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	struct stat st;
	if (n == 0 || n >= sizeof(t->root) || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "the build context is not a directory");
		errno = ENOTDIR;
		goto free_t;
	}
	memcpy(t->root, dir, n);
	t->root_len = n;
	int rc = read_dockerignore(t, dockerfile, err, errlen);
	if (rc < 0) {
		sw_driver_tar_free(t);
		errno = -rc;
		return NULL;
	}
	t->disk = t->la->read_disk_new();
	t->w = t->la->write_new();
	t->in = t->la->entry_new();
	t->out = t->la->entry_new();
	if (!t->disk || !t->w || !t->in || !t->out) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		goto free_archives;
	}
	t->la->read_disk_set_symlink_physical(t->disk);
	t->la->read_disk_set_behavior(t->disk, ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL |
							ARCHIVE_READDISK_NO_FFLAGS |
							ARCHIVE_READDISK_NO_TRAVERSE_MOUNTS);
	if (t->la->read_disk_open(t->disk, t->root) != ARCHIVE_OK) {
		snprintf(err, errlen, "the build context cannot be read: %s", t->la->error_string(t->disk));
		errno = EIO;
		goto free_archives;
	}
	if (t->la->write_set_format_pax_restricted(t->w) != ARCHIVE_OK ||
	    t->la->write_add_filter_none(t->w) != ARCHIVE_OK ||
	    t->la->write_set_bytes_per_block(t->w, 0) != ARCHIVE_OK ||
	    t->la->write_open2(t->w, t, NULL, on_archive_write, NULL, NULL) != ARCHIVE_OK) {
		snprintf(err, errlen, "the build context cannot be written: %s", t->la->error_string(t->w));
		errno = EIO;
		goto free_archives;
	}
	return t;
free_archives:
	sw_driver_tar_free(t);
	return NULL;
free_t:
	free(t);
	return NULL;
}

static bool is_dot_git(const char *path)
{
	const char *base = strrchr(path, '/');
	return strcmp(base ? base + 1 : path, ".git") == 0;
}

/* The next entry's header (and opens its file). */
static int next_entry(struct sw_driver_tar *t)
{
	for (;;) {
		t->la->entry_clear(t->in);
		int rc = t->la->read_next_header2(t->disk, t->in);
		if (rc == ARCHIVE_EOF) {
			if (t->la->write_close(t->w) != ARCHIVE_OK)
				return fail(t, -EIO, "the archive's end", t->la->error_string(t->w));
			t->done = true;
			return 0;
		}
		if (rc < ARCHIVE_WARN)
			return fail(t, -EIO, "a directory", t->la->error_string(t->disk));
		const char *path = t->la->entry_pathname(t->in);
		if (!path)
			continue;
		const struct stat *st = t->la->entry_stat(t->in);
		if (strncmp(path, t->root, t->root_len) != 0 ||
		    (path[t->root_len] != '/' && path[t->root_len] != '\0'))
			return fail(t, -EIO, "an entry outside the context", NULL);
		const char *rel = path + t->root_len;
		while (*rel == '/')
			rel++;
		if (*rel == '\0') { /* the root itself */
			t->la->read_disk_descend(t->disk);
			continue;
		}
		if (is_dot_git(rel))
			continue;
		if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode))
			continue;
		if (t->ignore) {
			int ex = sw_dockerignore_excluded(t->ignore, rel);
			if (ex < 0)
				return fail(t, -ENOMEM, "out of memory", NULL);
			if (ex) {
				if (S_ISDIR(st->st_mode) && sw_dockerignore_walk_into(t->ignore, rel))
					t->la->read_disk_descend(t->disk);
				continue;
			}
		}
		snprintf(t->rel, sizeof(t->rel), "%s", rel);

		struct stat fst = *st;
		if (S_ISREG(st->st_mode)) {
			t->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
			if (t->fd < 0 || fstat(t->fd, &fst) < 0 || !S_ISREG(fst.st_mode))
				return fail(t, -EIO, t->rel, strerror(errno ? errno : EIO));
			t->file_left = (uint64_t)fst.st_size;
		} else if (S_ISDIR(st->st_mode)) {
			t->la->read_disk_descend(t->disk);
		}
		struct archive_entry *o = t->out;
		t->la->entry_clear(o);
		t->la->entry_set_pathname(o, rel);
		t->la->entry_set_mode(o, fst.st_mode & (S_IFMT | 07777));
		t->la->entry_set_mtime(o, fst.st_mtime, 0);
		t->la->entry_set_uid(o, 0);
		t->la->entry_set_gid(o, 0);
		if (S_ISREG(fst.st_mode))
			t->la->entry_set_size(o, fst.st_size);
		else
			t->la->entry_set_size(o, 0);
		if (S_ISLNK(fst.st_mode))
			t->la->entry_set_symlink(o, t->la->entry_symlink(t->in));
		if (t->la->write_header(t->w, o) < ARCHIVE_WARN)
			return fail(t, -EIO, t->rel, t->la->error_string(t->w));
		if (t->fd >= 0 && t->file_left == 0) {
			close(t->fd);
			t->fd = -1;
		}
		return 0;
	}
}

/* Writes the next piece of the current file. */
static int file_step(struct sw_driver_tar *t)
{
	size_t want = (size_t)SW_MIN((uint64_t)sizeof(t->chunk), t->file_left);
	ssize_t n = read(t->fd, t->chunk, want);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0)
		return fail(t, -EIO, t->rel, strerror(errno));
	if (n > 0 && t->la->write_data(t->w, t->chunk, (size_t)n) < 0)
		return fail(t, -EIO, t->rel, t->la->error_string(t->w));
	t->file_left -= (uint64_t)n;
	/* A file that shrank while read: libarchive pads it to its header's size. */
	if (n == 0 || t->file_left == 0) {
		close(t->fd);
		t->fd = -1;
	}
	return 0;
}

ssize_t sw_driver_tar_read(struct sw_driver_tar *t, char *out, size_t cap)
{
	while (t->pending.len == t->pos && !t->done && !t->error) {
		t->pending.len = t->pos = 0;
		if (t->fd >= 0)
			file_step(t);
		else
			next_entry(t);
	}
	if (t->error)
		return t->error;
	size_t n = SW_MIN(cap, t->pending.len - t->pos);
	memcpy(out, t->pending.data + t->pos, n);
	t->pos += n;
	return (ssize_t)n;
}

const char *sw_driver_tar_error(const struct sw_driver_tar *t)
{
	return t->why;
}

uint64_t sw_driver_tar_bytes(const struct sw_driver_tar *t)
{
	return t->produced;
}

void sw_driver_tar_free(struct sw_driver_tar *t)
{
	if (!t)
		return;
	if (t->fd >= 0)
		close(t->fd);
	if (t->w)
		t->la->write_free(t->w); /* closes it when still open */
	if (t->disk)
		t->la->read_free(t->disk);
	if (t->in)
		t->la->entry_free(t->in);
	if (t->out)
		t->la->entry_free(t->out);
	sw_dockerignore_free(t->ignore);
	sw_buf_release(&t->pending);
	free(t);
}
