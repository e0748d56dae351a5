/* Unpacking an uploaded source archive (sw_archive_unpack, source.h).
 *
 * The archive is the most hostile input Steward takes: a client chooses
 * every name, link and size in it. libarchive only reads it (tar, gzip-
 * compressed tar, zip; no other format or filter, and never an external
 * decompressor program); the extraction is ours, entry by entry, because
 * archive_read_extract()'s defaults follow symlinks, restore owners and
 * modes and accept absolute names. Rules:
 *
 * - Names: relative; a leading "./" and a trailing "/" are normalised
 *   away, nothing else is (no empty or "." component inside a name, no
 *   ".." anywhere, no backslash, no control character); at most
 *   max_depth components of at most NAME_MAX bytes. The entry "./" itself
 *   (tar -C dir .) is the root and skipped.
 * - Types: regular files, directories, symbolic links, hard links.
 *   Devices, FIFOs, sockets and anything else are refused.
 * - Symbolic links: the target is relative, and ".." may only lead it
 *   ("../../x", never "a/../x"), at most as many as the link's own
 *   directory is deep. Since every directory we create is a real one,
 *   the leading ".." climb exactly and the rest only descends, through
 *   names that are themselves links checked the same way: no link can
 *   resolve outside dest. (A purely lexical check of "a/../x" is not
 *   enough: with "s -> .", "t -> s/.." would leave.)
 * - Hard links: the target must name a regular file already extracted
 *   (not a link: a symlink hard-linked elsewhere would resolve its
 *   relative target from another directory).
 * - Writing: every name is reached from dest's descriptor one component
 *   at a time with openat(O_NOFOLLOW | O_DIRECTORY); a component that is
 *   a symlink or a file is refused, so nothing is ever written through a
 *   link. Files are created with O_CREAT | O_EXCL | O_NOFOLLOW: an entry
 *   that names an existing file or link (a duplicate) is refused.
 *   Missing parent directories are created.
 * - Modes: directories 0755, files 0644, or 0755 when the archive gives
 *   any execute bit; set with fchmod() whatever the umask. No owner, no
 *   setuid/setgid/sticky bit, no times, no extended attributes or ACLs.
 * - Caps: entries counted as headers are read, and so is each directory
 *   made for an entry whose archive did not list it (so max_entries caps
 *   what is created, whatever the depth); bytes counted as they come
 *   out of libarchive (written, or read and discarded for entries without
 *   a place for data), so a header that lies about a size, a gzip bomb or
 *   a zip whose directory understates a member cannot pass max_bytes.
 *   A size declared over what is left is refused before any byte is read.
 *
 * On failure dest may hold what was extracted before the refusal; the
 * caller removes it (it is the deployment's own scratch directory). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/base/base.h"
#include "steward/base/libarchive.h"
#include "steward/deploy/source.h"

/* Components of one name we keep track of; a max_depth above it is
 * treated as this. */
#define ARCHIVE_MAX_COMPONENTS 256
/* Characters of a name shown in an error sentence (escapes included),
 * so that a sentence naming an entry and a link target fits in 512 bytes. */
#define SHOWN_MAX 150
#define SHOWN_SIZE (SHOWN_MAX + sizeof("..."))
/* libarchive's read block and our copy buffer. */
#define READ_BLOCK (64 * 1024)

struct unpack {
	const struct sw_libarchive *la;
	struct archive *a;
	int root;                 /* dest */
	const struct sw_archive_limits *lim;
	unsigned max_depth;
	uint64_t bytes, entries;
	char *buf;                /* READ_BLOCK bytes */
	char *err;
	size_t errlen;
	char shown[SHOWN_SIZE]; /* the current entry's name, quoted for err */
};

/* A parsed name: components as offsets into a private copy. */
struct path {
	char text[PATH_MAX];
	const char *comp[ARCHIVE_MAX_COMPONENTS];
	size_t n;
};

/* ---- error sentences ---- */

/* Writes s for an error sentence into out (cap >= SHOWN_SIZE bytes):
 * printable ASCII but '"' and '\\' as is, other bytes as \xNN (the
 * sentence becomes JSON: it must be UTF-8 and must not carry a terminal's
 * control bytes), cut after SHOWN_MAX characters with "...". */
static void show(char *out, size_t cap, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i = 0, room = SW_MIN(cap - sizeof("..."), SHOWN_MAX);
	for (; s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
		if (o + (plain ? 1 : 4) > room)
			break;
		if (plain) {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (s[i]) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

__attribute__((format(printf, 3, 4))) static int fail(struct unpack *u, int code, const char *fmt, ...)
{
	if (u->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(u->err, u->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

/* A refusal naming the current entry. */
#define REFUSE(u, code, fmt, ...) fail((u), (code), "archive entry \"%s\" is refused: " fmt, (u)->shown, ##__VA_ARGS__)

static int fail_archive(struct unpack *u, const char *what)
{
	char msg[SHOWN_SIZE];
	const char *s = u->la->error_string(u->a);
	show(msg, sizeof(msg), s ? s : "unknown error");
	if (u->shown[0])
		return fail(u, -EINVAL, "the archive cannot be read at entry \"%s\" (%s): %s", u->shown, what, msg);
	return fail(u, -EINVAL, "the archive cannot be read (%s): %s", what, msg);
}

/* ---- names ---- */

/* Splits name into p's components. Returns 0, or a refusal. */
static int parse_name(struct unpack *u, const char *name, struct path *p)
{
	size_t len = strlen(name);
	if (len == 0)
		return REFUSE(u, -EINVAL, "the name is empty");
	if (name[0] == '/')
		return REFUSE(u, -EINVAL, "absolute paths are not allowed");
	if (len >= sizeof(p->text))
		return REFUSE(u, -EINVAL, "the name is longer than %d bytes", PATH_MAX - 1);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '\\')
			return REFUSE(u, -EINVAL, "backslashes are not allowed in names");
		if (c < 0x20 || c == 0x7f)
			return REFUSE(u, -EINVAL, "control characters are not allowed in names");
	}
	memcpy(p->text, name, len + 1);
	char *s = p->text;
	if (s[0] == '.' && s[1] == '/')
		s += 2;
	size_t slen = strlen(s);
	if (slen && s[slen - 1] == '/')
		s[--slen] = '\0';
	p->n = 0;
	if (slen == 0)
		return 0; /* "./": the root itself */
	for (char *c = s;;) {
		char *slash = strchr(c, '/');
		if (slash)
			*slash = '\0';
		if (strcmp(c, "..") == 0)
			return REFUSE(u, -EINVAL, "\"..\" components are not allowed");
		if (c[0] == '\0' || strcmp(c, ".") == 0)
			return REFUSE(u, -EINVAL, "empty or \".\" components are not allowed");
		if (strlen(c) > NAME_MAX)
			return REFUSE(u, -EINVAL, "a component is longer than %d bytes", NAME_MAX);
		if (p->n == u->max_depth)
			return REFUSE(u, -EFBIG, "it is deeper than %u directories", u->max_depth);
		p->comp[p->n++] = c;
		if (!slash)
			break;
		c = slash + 1;
	}
	return 0;
}

/* A symlink target, from a link at depth `depth` (its directory's
 * components): relative, ".." only leading and at most depth of them. */
static int check_link_target(struct unpack *u, const char *target, size_t depth)
{
	char shown[SHOWN_SIZE];
	show(shown, sizeof(shown), target);
	if (target[0] == '\0')
		return REFUSE(u, -EINVAL, "the symbolic link has an empty target");
	if (target[0] == '/')
		return REFUSE(u, -EINVAL, "the symbolic link target \"%s\" is absolute", shown);
	if (strlen(target) >= PATH_MAX)
		return REFUSE(u, -EINVAL, "the symbolic link target is longer than %d bytes", PATH_MAX - 1);
	size_t ups = 0;
	bool descended = false;
	for (const char *c = target; *c;) {
		const char *slash = strchr(c, '/');
		size_t n = slash ? (size_t)(slash - c) : strlen(c);
		for (size_t i = 0; i < n; i++) {
			unsigned char ch = (unsigned char)c[i];
			if (ch == '\\' || ch < 0x20 || ch == 0x7f)
				return REFUSE(u, -EINVAL,
					      "the symbolic link target \"%s\" has a backslash or a control character",
					      shown);
		}
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			if (descended)
				return REFUSE(u, -EINVAL,
					      "the symbolic link target \"%s\" has \"..\" after a name (\"..\" may only lead a target)",
					      shown);
			if (++ups > depth)
				return REFUSE(u, -EINVAL, "the symbolic link target \"%s\" leaves the tree", shown);
		} else if (n && !(n == 1 && c[0] == '.')) {
			descended = true;
		}
		c += n;
		if (*c == '/')
			c++;
	}
	return 0;
}

/* ---- walking below dest without following links ---- */

/* Opens the directory named by p's first n_dirs components (n - 1: the
 * one holding the entry). Missing directories are created (0755) when
 * create, else -ENOENT with no sentence; a component that is a symlink or
 * not a directory is refused. *ret_fd may be u->root: close_dir() it. */
static int open_dirs(struct unpack *u, const struct path *p, size_t n_dirs, bool create, int *ret_fd)
{
	int fd = u->root;
	for (size_t i = 0; i < n_dirs; i++) {
		int next = openat(fd, p->comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			/* A directory made for an entry counts as one. */
			if (++u->entries > u->lim->max_entries) {
				if (fd != u->root)
					close(fd);
				return REFUSE(u, -EFBIG, "the archive has more than %llu entries "
					      "(directories made for entries count)",
					      (unsigned long long)u->lim->max_entries);
			}
			if (mkdirat(fd, p->comp[i], 0755) < 0) {
				int e = errno;
				if (fd != u->root)
					close(fd);
				return REFUSE(u, -e, "cannot create a directory for it: %s", strerror(e));
			}
			next = openat(fd, p->comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next >= 0 && fchmod(next, 0755) < 0) {
				close(next);
				next = -1;
			}
		}
		if (next < 0) {
			int e = errno;
			struct stat st;
			bool link = fstatat(fd, p->comp[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
			if (fd != u->root)
				close(fd);
			if (e == ENOENT)
				return -ENOENT; /* only when !create: the caller says what is missing */
			if (e == ELOOP || e == ENOTDIR) {
				char comp[SHOWN_SIZE];
				show(comp, sizeof(comp), p->comp[i]);
				return REFUSE(u, -EINVAL, "its directory \"%s\" is %s", comp,
					      link ? "a symbolic link (nothing is written through links)"
						   : "not a directory");
			}
			return REFUSE(u, -e, "cannot open its directory: %s", strerror(e));
		}
		if (fd != u->root)
			close(fd);
		fd = next;
	}
	*ret_fd = fd;
	return 0;
}

static void close_dir(struct unpack *u, int fd)
{
	if (fd >= 0 && fd != u->root)
		close(fd);
}

/* ---- entries ---- */

/* Reads the current entry's data, into fd (or nowhere when fd < 0),
 * counting every byte against the cap. */
static int copy_data(struct unpack *u, int fd)
{
	for (;;) {
		la_ssize_t n = u->la->read_data(u->a, u->buf, READ_BLOCK);
		if (n == 0)
			return 0;
		if (n < 0)
			return fail_archive(u, "its data");
		if ((uint64_t)n > u->lim->max_bytes - u->bytes)
			return REFUSE(u, -EFBIG, "the archive unpacks to more than %llu bytes",
				      (unsigned long long)u->lim->max_bytes);
		u->bytes += (uint64_t)n;
		for (la_ssize_t off = 0; fd >= 0 && off < n;) {
			ssize_t w = write(fd, u->buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				int e = w < 0 ? errno : EIO;
				return REFUSE(u, -e, "cannot write it: %s", strerror(e));
			}
			off += w;
		}
	}
}

static int extract_dir(struct unpack *u, const struct path *p)
{
	int parent, r = open_dirs(u, p, p->n - 1, true, &parent);
	if (r < 0)
		return r;
	const char *name = p->comp[p->n - 1];
	if (mkdirat(parent, name, 0755) < 0 && errno != EEXIST) {
		int e = errno;
		close_dir(u, parent);
		return REFUSE(u, -e, "cannot create it: %s", strerror(e));
	}
	/* New or already there (named twice, or made for an earlier entry):
	 * either way it must be a real directory. */
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close_dir(u, parent);
	if (fd < 0)
		return REFUSE(u, -EINVAL, "a file or link of that name was extracted before it");
	r = fchmod(fd, 0755) < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return REFUSE(u, r, "cannot set its mode: %s", strerror(-r));
	return copy_data(u, -1);
}

static int extract_file(struct unpack *u, const struct path *p, struct archive_entry *e)
{
	if (u->la->entry_size_is_set(e) && u->la->entry_size(e) >= 0 &&
	    (uint64_t)u->la->entry_size(e) > u->lim->max_bytes - u->bytes)
		return REFUSE(u, -EFBIG, "the archive unpacks to more than %llu bytes",
			      (unsigned long long)u->lim->max_bytes);
	int parent, r = open_dirs(u, p, p->n - 1, true, &parent);
	if (r < 0)
		return r;
	mode_t mode = (u->la->entry_perm(e) & 0111) ? 0755 : 0644;
	int fd = openat(parent, p->comp[p->n - 1], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	int err = errno;
	close_dir(u, parent);
	if (fd < 0) {
		if (err == EEXIST)
			return REFUSE(u, -EINVAL, "a file, directory or link of that name was extracted before it");
		return REFUSE(u, -err, "cannot create it: %s", strerror(err));
	}
	r = fchmod(fd, mode) < 0 ? REFUSE(u, -errno, "cannot set its mode: %s", strerror(errno)) : 0;
	if (r == 0)
		r = copy_data(u, fd);
	if (close(fd) < 0 && r == 0)
		r = REFUSE(u, -errno, "cannot write it: %s", strerror(errno));
	return r;
}

static int extract_symlink(struct unpack *u, const struct path *p, struct archive_entry *e)
{
	const char *target = u->la->entry_symlink(e);
	if (!target)
		target = u->la->entry_symlink_utf8(e);
	if (!target)
		return REFUSE(u, -EINVAL, "the symbolic link has no readable target");
	int r = check_link_target(u, target, p->n - 1);
	if (r < 0)
		return r;
	int parent;
	r = open_dirs(u, p, p->n - 1, true, &parent);
	if (r < 0)
		return r;
	if (symlinkat(target, parent, p->comp[p->n - 1]) < 0) {
		int err = errno;
		close_dir(u, parent);
		if (err == EEXIST)
			return REFUSE(u, -EINVAL, "a file, directory or link of that name was extracted before it");
		return REFUSE(u, -err, "cannot create it: %s", strerror(err));
	}
	close_dir(u, parent);
	return copy_data(u, -1);
}

static int extract_hardlink(struct unpack *u, const struct path *p, const char *target_name)
{
	/* The target is a name in the archive, checked like any name. */
	struct path *t = malloc(sizeof(*t));
	if (!t)
		return fail(u, -ENOMEM, "out of memory");
	char saved[sizeof(u->shown)], shown_target[sizeof(u->shown)];
	show(shown_target, sizeof(shown_target), target_name);
	memcpy(saved, u->shown, sizeof(saved));
	int r = parse_name(u, target_name, t);
	memcpy(u->shown, saved, sizeof(saved));
	if (r < 0 || t->n == 0) {
		free(t);
		return REFUSE(u, -EINVAL, "the hard link target \"%s\" is not a name inside the tree",
			      shown_target);
	}
	int tdir = -1, parent = -1;
	r = open_dirs(u, t, t->n - 1, false, &tdir);
	struct stat st;
	if (r < 0 || fstatat(tdir, t->comp[t->n - 1], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode)) {
		if (r == 0)
			close_dir(u, tdir);
		free(t);
		return REFUSE(u, -EINVAL, "the hard link target \"%s\" is not a file extracted before it",
			      shown_target);
	}
	r = open_dirs(u, p, p->n - 1, true, &parent);
	if (r == 0) {
		if (linkat(tdir, t->comp[t->n - 1], parent, p->comp[p->n - 1], 0) < 0) {
			int err = errno;
			r = err == EEXIST ? REFUSE(u, -EINVAL,
						   "a file, directory or link of that name was extracted before it")
					  : REFUSE(u, -err, "cannot create the hard link: %s", strerror(err));
		}
		close_dir(u, parent);
	}
	close_dir(u, tdir);
	free(t);
	return r < 0 ? r : copy_data(u, -1);
}

static int extract_entry(struct unpack *u, struct archive_entry *e, struct path *p)
{
	const char *name = u->la->entry_pathname(e);
	if (!name)
		name = u->la->entry_pathname_utf8(e);
	if (!name) {
		strcpy(u->shown, "?");
		return REFUSE(u, -EINVAL, "its name cannot be read");
	}
	show(u->shown, sizeof(u->shown), name);
	if (++u->entries > u->lim->max_entries)
		return REFUSE(u, -EFBIG, "the archive has more than %llu entries",
			      (unsigned long long)u->lim->max_entries);
	int r = parse_name(u, name, p);
	if (r < 0)
		return r;
	if (u->la->entry_is_encrypted(e))
		return REFUSE(u, -EINVAL, "encrypted entries are not supported");

	const char *hardlink = u->la->entry_hardlink(e);
	if (!hardlink)
		hardlink = u->la->entry_hardlink_utf8(e);
	mode_t type = u->la->entry_filetype(e);
	if (p->n == 0) {
		/* "./": the root, which exists already; only a directory may say so. */
		if (hardlink || type != AE_IFDIR)
			return REFUSE(u, -EINVAL, "only a directory may name the root");
		return copy_data(u, -1);
	}
	if (hardlink)
		return extract_hardlink(u, p, hardlink);
	switch (type) {
	case AE_IFREG:
		return extract_file(u, p, e);
	case AE_IFDIR:
		return extract_dir(u, p);
	case AE_IFLNK:
		return extract_symlink(u, p, e);
	case AE_IFCHR:
	case AE_IFBLK:
		return REFUSE(u, -EINVAL, "device files are not allowed");
	case AE_IFIFO:
		return REFUSE(u, -EINVAL, "FIFOs are not allowed");
	case AE_IFSOCK:
		return REFUSE(u, -EINVAL, "sockets are not allowed");
	default:
		return REFUSE(u, -EINVAL, "only files, directories and links are allowed");
	}
}

int sw_archive_unpack(const char *archive_path, const char *dest, const struct sw_archive_limits *lim,
		      char *err, size_t errlen)
{
	struct unpack u = { .root = -1, .lim = lim, .err = err, .errlen = errlen };
	struct path *p = NULL;
	int r;
	if (errlen)
		err[0] = '\0';
	if (SW_NEVER(!lim || !archive_path || !dest))
		return -EINVAL;
	u.max_depth = SW_MIN(lim->max_depth, ARCHIVE_MAX_COMPONENTS);

	if (mkdir(dest, 0755) < 0)
		return fail(&u, -errno, "cannot create the directory to unpack into: %s", strerror(errno));
	u.root = open(dest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (u.root < 0)
		return fail(&u, -errno, "cannot open the directory to unpack into: %s", strerror(errno));
	if (fchmod(u.root, 0755) < 0) {
		r = fail(&u, -errno, "cannot set the mode of the directory to unpack into: %s", strerror(errno));
		goto close_root;
	}
	char why[192];
	u.la = sw_libarchive(why, sizeof(why));
	if (!u.la) {
		r = fail(&u, -ENOTSUP, "cannot read archives: %s", why);
		goto close_root;
	}
	u.buf = malloc(READ_BLOCK);
	p = malloc(sizeof(*p));
	u.a = u.la->read_new();
	if (!u.buf || !p || !u.a) {
		r = fail(&u, -ENOMEM, "out of memory");
		goto free_all;
	}
	/* ARCHIVE_WARN from the gzip filter means "through an external gzip
	 * program": refused, as is anything but exactly these readers. */
	if (u.la->read_support_filter_gzip(u.a) != ARCHIVE_OK ||
	    u.la->read_support_format_tar(u.a) != ARCHIVE_OK ||
	    u.la->read_support_format_zip(u.a) != ARCHIVE_OK) {
		r = fail(&u, -ENOTSUP, "this libarchive cannot read gzip, tar and zip by itself");
		goto free_all;
	}
	if (u.la->read_open_filename(u.a, archive_path, READ_BLOCK) != ARCHIVE_OK) {
		r = fail_archive(&u, "not a tar, tar.gz or zip archive");
		goto free_all;
	}
	for (;;) {
		struct archive_entry *e;
		u.shown[0] = '\0';
		int h = u.la->read_next_header(u.a, &e);
		if (h == ARCHIVE_EOF)
			break;
		/* ARCHIVE_RETRY (a damaged header libarchive could skip) is a
		 * refusal too: nothing in a damaged archive is trusted. */
		if (h != ARCHIVE_OK && h != ARCHIVE_WARN) {
			r = fail_archive(&u, u.la->format(u.a) == 0 ? "not a tar, tar.gz or zip archive"
					     : u.entries ? "after its last good entry"
							 : "at its first entry");
			goto free_all;
		}
		r = extract_entry(&u, e, p);
		if (r < 0)
			goto free_all;
	}
	r = 0;
free_all:
	if (u.a)
		u.la->read_free(u.a);
	free(p);
	free(u.buf);
close_root:
	close(u.root);
	return r;
}
