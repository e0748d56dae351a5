/* The build context as a tar stream (src/driver/context_tar.c), read back
 * with libarchive: what is in it, what is left out (.git, special files,
 * what .dockerignore names), the cap. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "driver/driver_internal.h"
#include "test_help.h"

static char root[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", root, rel);
	mkdir(p, 0755);
}

/* A fresh tree:
 *   Dockerfile, www/index.html (0640), bin/run.sh (0755), big (300 KiB),
 *   link -> /etc/passwd, .git/config, sub/.git (a submodule's file),
 *   sub/.gitignore, sub/fifo, a 150-byte name (pax). */
static void make_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/sw-tar-XXXXXX");
	if (!mkdtemp(root))
		abort();
	put("Dockerfile", "FROM scratch\n");
	dir("www");
	put("www/index.html", "hello\n");
	char p[256];
	snprintf(p, sizeof(p), "%s/www/index.html", root);
	chmod(p, 0640);
	dir("bin");
	put("bin/run.sh", "#!/bin/sh\n");
	snprintf(p, sizeof(p), "%s/bin/run.sh", root);
	chmod(p, 0755);
	snprintf(p, sizeof(p), "%s/big", root);
	FILE *f = fopen(p, "w");
	for (int i = 0; f && i < 300 * 1024; i++)
		fputc('a' + i % 26, f);
	if (f)
		fclose(f);
	snprintf(p, sizeof(p), "%s/link", root);
	if (symlink("/etc/passwd", p) < 0)
		abort();
	dir(".git");
	put(".git/config", "secret\n");
	dir("sub");
	put("sub/.git", "gitdir: ../.git/modules/sub\n");
	put("sub/.gitignore", "x\n");
	snprintf(p, sizeof(p), "%s/sub/fifo", root);
	mkfifo(p, 0600);
	char longname[160];
	memset(longname, 'n', 150);
	longname[150] = '\0';
	put(longname, "long\n");
}

static void remove_tree(void)
{
	/* Only what make_tree() made. */
	static const char *files[] = { "Dockerfile", "www/index.html", "bin/run.sh", "big", "link",
				       ".git/config", "sub/.git", "sub/.gitignore", "sub/fifo" };
	char p[256];
	for (size_t i = 0; i < SW_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		unlink(p);
	}
	char longname[160];
	memset(longname, 'n', 150);
	longname[150] = '\0';
	snprintf(p, sizeof(p), "%s/%s", root, longname);
	unlink(p);
	static const char *dirs[] = { "www", "bin", ".git", "sub", "" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(dirs); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		rmdir(p);
	}
}

/* The whole stream, read `piece` bytes at a time. */
static int read_all(const char *d, uint64_t cap_bytes, size_t piece, struct sw_buf *out, char *why, size_t whylen)
{
	char err[256];
	struct sw_driver_tar *t = sw_driver_tar_open(d, "Dockerfile", cap_bytes, err, sizeof(err));
	if (!t) {
		snprintf(why, whylen, "%s", err);
		return -errno;
	}
	char *chunk = malloc(piece);
	ssize_t n;
	while ((n = sw_driver_tar_read(t, chunk, piece)) > 0)
		sw_buf_append(out, chunk, (size_t)n);
	free(chunk);
	if (n < 0)
		snprintf(why, whylen, "%s", sw_driver_tar_error(t));
	else if (sw_driver_tar_bytes(t) != out->len)
		n = -EPROTO;
	sw_driver_tar_free(t);
	return (int)n;
}

struct seen {
	char name[200];
	mode_t mode;
	int64_t size;
	char link[64];
	char data_head[8];
	int64_t uid, gid;
};

static size_t list_tar(const struct sw_buf *b, struct seen *out, size_t cap)
{
	struct archive *a = archive_read_new();
	archive_read_support_format_tar(a);
	size_t n = 0;
	if (archive_read_open_memory(a, b->data, b->len) != ARCHIVE_OK)
		goto done;
	struct archive_entry *e;
	while (n < cap && archive_read_next_header(a, &e) == ARCHIVE_OK) {
		struct seen *s = &out[n++];
		snprintf(s->name, sizeof(s->name), "%s", archive_entry_pathname(e));
		s->mode = archive_entry_mode(e);
		s->size = archive_entry_size(e);
		const char *l = archive_entry_symlink(e);
		snprintf(s->link, sizeof(s->link), "%s", l ? l : "");
		la_ssize_t got = archive_read_data(a, s->data_head, sizeof(s->data_head) - 1);
		s->data_head[got > 0 ? got : 0] = '\0';
		s->uid = archive_entry_uid(e);
		s->gid = archive_entry_gid(e);
	}
done:
	archive_read_free(a);
	return n;
}

static const struct seen *find(const struct seen *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(s[i].name);
		/* directories may carry a trailing '/' */
		if (strcmp(s[i].name, name) == 0 ||
		    (len == strlen(name) + 1 && s[i].name[len - 1] == '/' && strncmp(s[i].name, name, len - 1) == 0))
			return &s[i];
	}
	return NULL;
}

TEST(tree_is_archived_with_modes_links_and_without_git)
{
	make_tree();
	struct sw_buf b = { 0 };
	char why[256] = "";
	int rc = read_all(root, 0, 65536, &b, why, sizeof(why));
	CHECK_INT_EQ(rc, 0);
	struct seen s[32];
	size_t n = list_tar(&b, s, 32);
	const struct seen *e;
	CHECK((e = find(s, n, "Dockerfile")) && S_ISREG(e->mode) && e->size == 13);
	CHECK((e = find(s, n, "www")) && S_ISDIR(e->mode));
	CHECK((e = find(s, n, "www/index.html")) && (e->mode & 07777) == 0640 &&
	      strcmp(e->data_head, "hello\n") == 0);
	CHECK((e = find(s, n, "bin/run.sh")) && (e->mode & 07777) == 0755);
	CHECK((e = find(s, n, "big")) && e->size == 300 * 1024 && strcmp(e->data_head, "abcdefg") == 0);
	/* The link is archived as a link: /etc/passwd is never read. */
	CHECK((e = find(s, n, "link")) && S_ISLNK(e->mode) && strcmp(e->link, "/etc/passwd") == 0);
	CHECK(find(s, n, "sub/.gitignore") != NULL);
	char longname[160];
	memset(longname, 'n', 150);
	longname[150] = '\0';
	CHECK(find(s, n, longname) != NULL);
	for (size_t i = 0; i < n; i++) {
		CHECK(strstr(s[i].name, ".git/") == NULL && strcmp(s[i].name, ".git") != 0);
		CHECK(strcmp(s[i].name, "sub/.git") != 0);
		CHECK(strstr(s[i].name, "fifo") == NULL);
		CHECK(s[i].uid == 0 && s[i].gid == 0);
		CHECK(s[i].name[0] != '/' && strncmp(s[i].name, "./", 2) != 0);
		CHECK(strncmp(s[i].name, root + 1, strlen(root) - 1) != 0);
	}
	CHECK_INT_EQ(n, 10); /* Dockerfile www index bin run.sh big link sub .gitignore long */
	sw_buf_release(&b);
	remove_tree();
}

TEST(stream_read_in_tiny_pieces_is_identical)
{
	make_tree();
	struct sw_buf big = { 0 }, tiny = { 0 };
	char why[256];
	CHECK_INT_EQ(read_all(root, 0, 1 << 20, &big, why, sizeof(why)), 0);
	CHECK_INT_EQ(read_all(root, 0, 7, &tiny, why, sizeof(why)), 0);
	CHECK_INT_EQ(big.len, tiny.len);
	/* mtimes are the same files' own, so the bytes are identical */
	CHECK(big.len == tiny.len && memcmp(big.data, tiny.data, big.len) == 0);
	CHECK(big.len % 512 == 0);
	sw_buf_release(&big);
	sw_buf_release(&tiny);
	remove_tree();
}

TEST(context_past_the_cap_is_efbig_with_a_sentence)
{
	make_tree();
	struct sw_buf b = { 0 };
	char why[256] = "";
	int rc = read_all(root, 100 * 1024, 4096, &b, why, sizeof(why));
	CHECK_INT_EQ(rc, -EFBIG);
	CHECK_STR_EQ(why, "the build context is larger than 102400 bytes");
	CHECK(b.len <= 100 * 1024);
	sw_buf_release(&b);
	/* Just enough passes. */
	struct sw_buf all = { 0 };
	CHECK_INT_EQ(read_all(root, 0, 4096, &all, why, sizeof(why)), 0);
	struct sw_buf exact = { 0 };
	CHECK_INT_EQ(read_all(root, all.len, 4096, &exact, why, sizeof(why)), 0);
	struct sw_buf under = { 0 };
	CHECK_INT_EQ(read_all(root, all.len - 1, 4096, &under, why, sizeof(why)), -EFBIG);
	sw_buf_release(&all);
	sw_buf_release(&exact);
	sw_buf_release(&under);
	remove_tree();
}

TEST(missing_or_file_context_is_refused)
{
	char err[256] = "";
	errno = 0;
	CHECK(sw_driver_tar_open("/nonexistent/steward", NULL, 0, err, sizeof(err)) == NULL);
	CHECK_INT_EQ(errno, ENOTDIR);
	CHECK_STR_EQ(err, "the build context is not a directory");
	CHECK(sw_driver_tar_open("/etc/hostname", NULL, 0, err, sizeof(err)) == NULL);
}

TEST(empty_directory_is_an_empty_archive)
{
	char d[] = "/tmp/sw-tar-empty-XXXXXX";
	REQUIRE(mkdtemp(d));
	struct sw_buf b = { 0 };
	char why[256];
	CHECK_INT_EQ(read_all(d, 0, 4096, &b, why, sizeof(why)), 0);
	struct seen s[4];
	CHECK_INT_EQ(list_tar(&b, s, 4), 0);
	CHECK(b.len >= 1024 && b.len % 512 == 0);
	sw_buf_release(&b);
	rmdir(d);
}

/* ---- .dockerignore ---- */

/* A tree with a .dockerignore (text): secrets.env, logs/a.log,
 * logs/keep.log, node_modules/x/index.js, src/app.js, src/app.test.js,
 * build/app.Dockerfile, Dockerfile. */
static void make_ignore_tree(const char *text)
{
	snprintf(root, sizeof(root), "/tmp/sw-tar-ign-XXXXXX");
	if (!mkdtemp(root))
		abort();
	put(".dockerignore", text);
	put("Dockerfile", "FROM scratch\n");
	put("secrets.env", "TOKEN=x\n");
	dir("logs");
	put("logs/a.log", "a\n");
	put("logs/keep.log", "k\n");
	dir("node_modules");
	dir("node_modules/x");
	put("node_modules/x/index.js", "js\n");
	dir("src");
	put("src/app.js", "app\n");
	put("src/app.test.js", "test\n");
	dir("build");
	put("build/app.Dockerfile", "FROM scratch\n");
}

static void remove_ignore_tree(void)
{
	static const char *files[] = { ".dockerignore", "Dockerfile", "secrets.env", "logs/a.log",
				       "logs/keep.log", "node_modules/x/index.js", "src/app.js",
				       "src/app.test.js", "build/app.Dockerfile", "link" };
	static const char *dirs[] = { "logs", "node_modules/x", "node_modules", "src", "build", "" };
	char p[256];
	for (size_t i = 0; i < SW_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		unlink(p);
	}
	for (size_t i = 0; i < SW_ARRAY_SIZE(dirs); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, dirs[i]);
		rmdir(p);
	}
}

/* The names in the stream of root with Dockerfile df, into s (cap). */
static size_t stream_names(const char *df, struct seen *s, size_t cap, char *why, size_t whylen)
{
	char err[256];
	struct sw_driver_tar *t = sw_driver_tar_open(root, df, 0, err, sizeof(err));
	if (!t) {
		snprintf(why, whylen, "%s", err);
		return 0;
	}
	struct sw_buf b = { 0 };
	char chunk[4096];
	ssize_t n;
	while ((n = sw_driver_tar_read(t, chunk, sizeof(chunk))) > 0)
		sw_buf_append(&b, chunk, (size_t)n);
	if (n < 0)
		snprintf(why, whylen, "%s", sw_driver_tar_error(t));
	sw_driver_tar_free(t);
	size_t count = n < 0 ? 0 : list_tar(&b, s, cap);
	sw_buf_release(&b);
	return count;
}

TEST(dockerignore_leaves_out_files_and_directories_and_exceptions_come_back)
{
	make_ignore_tree("# what the image does not need\n"
			 "secrets.env\n"
			 "node_modules\n"
			 "logs\n"
			 "!logs/keep.log\n"
			 "**/*.test.js\n"
			 "Dockerfile\n"
			 ".dockerignore\n");
	struct seen s[32];
	char why[256] = "";
	size_t n = stream_names("Dockerfile", s, 32, why, sizeof(why));
	CHECK_STR_EQ(why, "");
	CHECK(find(s, n, "secrets.env") == NULL);
	CHECK(find(s, n, "node_modules") == NULL);
	CHECK(find(s, n, "node_modules/x") == NULL);
	CHECK(find(s, n, "node_modules/x/index.js") == NULL);
	CHECK(find(s, n, "src/app.test.js") == NULL);
	CHECK(find(s, n, "logs/a.log") == NULL);
	/* the exception re-includes the file; its excluded directory's own
	 * entry is not sent (the engine makes the directory) */
	const struct seen *e = find(s, n, "logs/keep.log");
	CHECK(e && strcmp(e->data_head, "k\n") == 0);
	CHECK(find(s, n, "logs") == NULL);
	CHECK(find(s, n, "src/app.js") != NULL);
	CHECK(find(s, n, "build/app.Dockerfile") != NULL);
	/* the Dockerfile in use and .dockerignore go whatever it says */
	CHECK(find(s, n, "Dockerfile") != NULL);
	CHECK(find(s, n, ".dockerignore") != NULL);
	CHECK_INT_EQ(n, 7); /* .dockerignore Dockerfile logs/keep.log src src/app.js build build/app.Dockerfile */
	remove_ignore_tree();
}

TEST(dockerignore_keeps_a_dockerfile_inside_an_ignored_directory)
{
	make_ignore_tree("build\nDockerfile\n");
	struct seen s[32];
	char why[256] = "";
	size_t n = stream_names("build/app.Dockerfile", s, 32, why, sizeof(why));
	CHECK_STR_EQ(why, "");
	CHECK(find(s, n, "build/app.Dockerfile") != NULL);
	CHECK(find(s, n, "Dockerfile") == NULL); /* not the one in use */
	CHECK(find(s, n, "secrets.env") != NULL);
	remove_ignore_tree();
}

TEST(malformed_or_linked_dockerignore_fails_the_open_with_a_sentence)
{
	make_ignore_tree("ok\n\n[oops\n");
	char err[256] = "";
	errno = 0;
	CHECK(sw_driver_tar_open(root, "Dockerfile", 0, err, sizeof(err)) == NULL);
	CHECK_INT_EQ(errno, EINVAL);
	CHECK_STR_EQ(err, ".dockerignore line 3: \"[oops\" is not a valid pattern: a character class \"[\" is not closed");
	remove_ignore_tree();

	/* A link is not followed: it could name any file of the host. */
	make_ignore_tree("");
	char p[256];
	snprintf(p, sizeof(p), "%s/.dockerignore", root);
	unlink(p);
	REQUIRE(symlink("/etc/passwd", p) == 0);
	CHECK(sw_driver_tar_open(root, "Dockerfile", 0, err, sizeof(err)) == NULL);
	CHECK_STR_EQ(err, "the build context's .dockerignore is not a regular file (a symbolic link is not followed)");
	remove_ignore_tree();

	make_ignore_tree("");
	snprintf(p, sizeof(p), "%s/.dockerignore", root);
	FILE *f = fopen(p, "w");
	REQUIRE(f);
	for (int i = 0; i < 70000; i++)
		fputc(i % 50 ? 'x' : '\n', f);
	fclose(f);
	errno = 0;
	CHECK(sw_driver_tar_open(root, "Dockerfile", 0, err, sizeof(err)) == NULL);
	CHECK_INT_EQ(errno, EFBIG);
	CHECK_STR_EQ(err, "the .dockerignore file is larger than 65536 bytes");
	remove_ignore_tree();
}

TEST_MAIN()
