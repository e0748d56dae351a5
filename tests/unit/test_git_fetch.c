/* sw_git_fetch() (source.h) against real repositories made with
 * /usr/bin/git (run with an argv array, never a shell) in a temporary
 * directory: over file:// (branch, tag, sha, unknown refs, refusals), over
 * ssh from an OpenSSH server started here on 127.0.0.1 with the deploy key
 * authorised, and against a server that accepts and never answers
 * (timeout, cancel). This file includes src/deploy/git_fetch.c to reach its
 * static helpers and its key-file switch.
 *
 * An https server with a self-signed certificate (openssl s_server) must
 * be refused.
 *
 * Exits 77 when /usr/bin/git, /usr/sbin/sshd or /usr/bin/openssl is
 * missing (apt-get install git openssh-server openssl). sshd runs as root (it needs
 * /run/sshd, made here) and logs into <tmp>/sshd.log. */
#include "deploy/git_fetch.c"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/socket.h>
#include "steward/base/sshkey.h"
#include "test_help.h"
#include "scratch_dir.h"

extern char **environ;

#define GIT "/usr/bin/git"
#define SSHD "/usr/sbin/sshd"
#define OPENSSL "/usr/bin/openssl"

static char tmp[64];        /* the test's directory */
static char origin[128];    /* the repository the tests fetch */
static char sha_first[41], sha_second[41], sha_feature[41], sha_weird[41], sha_loose[41];
static unsigned clone_no;

/* ---- helpers ---- */

/* Runs argv (no shell) in cwd with a fixed identity and no user or system
 * git configuration; stdout into out (trailing newline cut) when out. 0
 * when it exited 0. */
static int run(const char *cwd, char *out, size_t cap, const char *const *argv)
{
	int pipefd[2];
	if (pipe(pipefd) < 0)
		return -1;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	char home[128];
	snprintf(home, sizeof(home), "HOME=%s", tmp);
	char *env[] = { home, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Ada Lovelace",
			"GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Steward Test",
			"GIT_COMMITTER_EMAIL=test@example.com", "PATH=/usr/bin:/bin", NULL };
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	char sink[4096];
	size_t len = 0;
	for (;;) {
		char *p = out ? out + len : sink;
		size_t room = out ? cap - 1 - len : sizeof(sink);
		ssize_t n = read(pipefd[0], p, room ? room : 1);
		if (n <= 0)
			break;
		if (out && room)
			len += (size_t)n;
	}
	close(pipefd[0]);
	if (out) {
		while (len && out[len - 1] == '\n')
			len--;
		out[len] = '\0';
	}
	int status;
	if (rc != 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

#define GITC(out, ...) run(origin, out, sizeof(out), (const char *const[]){ GIT, __VA_ARGS__, NULL })
#define GITV(...) run(origin, NULL, 0, (const char *const[]){ GIT, __VA_ARGS__, NULL })

static int write_text(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "w");
	if (!fp)
		return -1;
	fputs(text, fp);
	return fclose(fp);
}


static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return false;
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n == 0;
}

/* Starts argv[0] (no shell) with stdin from /dev/null and stdout and
 * stderr appended to logpath; it gets SIGTERM if this process dies. */
static pid_t spawn_server(const char *const *argv, const char *logpath)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int in = open("/dev/null", O_RDONLY), out = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(127);
	close_range(3, ~0u, 0);
	execve(argv[0], (char *const *)argv, environ);
	_exit(127);
}

/* A fresh destination path (not created). */
static const char *next_dest(char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/clones/c%u", tmp, ++clone_no);
	return buf;
}

/* Collects log lines. */
struct lines {
	char text[16384];
	size_t len;
	unsigned count;
};

static void collect(void *arg, const char *line, size_t len)
{
	struct lines *l = arg;
	if (l->len + len + 2 < sizeof(l->text)) {
		memcpy(l->text + l->len, line, len);
		l->len += len;
		l->text[l->len++] = '\n';
		l->text[l->len] = '\0';
	}
	l->count++;
}

static int fetch(const char *url, const char *ref, const char *branch, bool allow_file, char *dest_buf,
		 struct sw_commit_info *info, struct lines *log, char *err)
{
	struct sw_git_fetch f = { .url = url, .ref = ref, .branch = branch, .allow_file = allow_file,
				  .timeout_s = 60 };
	err[0] = '\0';
	return sw_git_fetch(&f, next_dest(dest_buf, 256), info, log ? collect : NULL, log, err, 512);
}

/* The repository: main has "First commit" (tag v1, annotated) then
 * "Second"; feature branches off the first with "Feature" (lightweight
 * tag light); weird holds a message with control characters and invalid
 * UTF-8; one more commit is reachable from no ref. */
static void make_origin(void)
{
	char tree[41], raw[512];
	snprintf(origin, sizeof(origin), "%s/origin", tmp);
	if (mkdir(origin, 0755) < 0 || GITV("init", "-q", "-b", "main") < 0 ||
	    write_text(origin, "index.html", "v1\n") < 0 || GITV("add", "index.html") < 0 ||
	    GITV("commit", "-q", "-m", "First commit\n\nThe body, line one.\nLine two.") < 0 ||
	    GITC(sha_first, "rev-parse", "HEAD") < 0 ||
	    GITV("tag", "-a", "v1", "-m", "Version one") < 0 ||
	    write_text(origin, "index.html", "v2\n") < 0 || GITV("commit", "-q", "-am", "Second") < 0 ||
	    GITC(sha_second, "rev-parse", "HEAD") < 0 ||
	    GITV("checkout", "-q", "-b", "feature", sha_first) < 0 ||
	    write_text(origin, "feature.txt", "feature\n") < 0 || GITV("add", "feature.txt") < 0 ||
	    GITV("commit", "-q", "-m", "Feature") < 0 || GITC(sha_feature, "rev-parse", "HEAD") < 0 ||
	    GITV("tag", "light") < 0 || GITC(sha_loose, "commit-tree", "-m", "Loose", "HEAD^{tree}") < 0 ||
	    GITV("checkout", "-q", "main") < 0 || GITC(tree, "rev-parse", "HEAD^{tree}") < 0) {
		fprintf(stderr, "could not make the test repository with git\n");
		exit(1);
	}
	/* written as raw bytes: git commit would re-encode the message */
	snprintf(raw, sizeof(raw),
		 "tree %s\nparent %s\nauthor Ada Lovelace <ada@example.com> 1700000000 +0000\n"
		 "committer Steward Test <test@example.com> 1700000000 +0000\n\n"
		 "Bad \x1b[31mred\x1b[0m \xff\xfe end\r\nbody\x07\n",
		 tree, sha_second);
	if (write_text(tmp, "weird-commit", raw) < 0 ||
	    GITC(sha_weird, "hash-object", "-t", "commit", "-w", "--literally", "../weird-commit") < 0 ||
	    GITV("branch", "weird", sha_weird) < 0) {
		fprintf(stderr, "could not make the test repository with git\n");
		exit(1);
	}
}

static void cleanup(void);

/* Once per process, from the first test: skips (77) when a program is
 * missing; the directory goes at exit unless SW_TEST_KEEP is set. */
static void setup(void)
{
	if (tmp[0])
		return;
	if (access(GIT, X_OK) != 0) {
		printf("SKIP: %s not found (apt-get install git)\n", GIT);
		exit(77);
	}
	if (access(SSHD, X_OK) != 0) {
		printf("SKIP: %s not found (apt-get install openssh-server)\n", SSHD);
		exit(77);
	}
	if (access(OPENSSL, X_OK) != 0) {
		printf("SKIP: %s not found (apt-get install openssl)\n", OPENSSL);
		exit(77);
	}
	snprintf(tmp, sizeof(tmp), "/tmp/sw-gitfetch-XXXXXX");
	if (!mkdtemp(tmp))
		exit(1);
	atexit(cleanup);
	char path[128];
	snprintf(path, sizeof(path), "%s/clones", tmp);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/keys", tmp);
	mkdir(path, 0700);
	setenv("TMPDIR", path, 1); /* where the key directories go: checked empty */
	make_origin();
}

static pid_t sshd_pid;

static void cleanup(void)
{
	if (sshd_pid > 0) {
		kill(sshd_pid, SIGTERM);
		waitpid(sshd_pid, NULL, 0);
	}
	if (getenv("SW_TEST_KEEP"))
		fprintf(stderr, "kept %s\n", tmp);
	else
		remove_tree(tmp);
}

/* ---- text helpers (static in git_fetch.c) ---- */

TEST(clean_text_drops_controls_and_replaces_invalid_utf8)
{
	setup();
	char out[64];
	clean_text("a\x1b[1mb\tc\nd\xc3\xa9\xff\xc0\xafz", 16, out, sizeof(out), false);
	CHECK_STR_EQ(out, "a[1mbcd\xc3\xa9???z");
	clean_text("a\tb\nc\r", 6, out, sizeof(out), true);
	CHECK_STR_EQ(out, "a\tb\nc");
	clean_text("\xed\xa0\x80" "x\xc2\x85y", 7, out, sizeof(out), false); /* surrogate, C1 NEL */
	CHECK_STR_EQ(out, "???xy");
}

TEST(clean_text_cuts_on_a_character_boundary)
{
	setup();
	char out[5];
	CHECK_INT_EQ(clean_text("ab\xc3\xa9\xc3\xa9", 6, out, sizeof(out), false), 4);
	CHECK_STR_EQ(out, "ab\xc3\xa9");
	char tiny[3];
	CHECK_INT_EQ(clean_text("a\xe2\x82\xac", 4, tiny, sizeof(tiny), false), 1);
	CHECK_STR_EQ(tiny, "a");
}

TEST(url_host_of_each_form)
{
	setup();
	char h[64];
	url_host("https://github.com/a/b.git", h, sizeof(h));
	CHECK_STR_EQ(h, "github.com");
	url_host("ssh://git@example.com:2222/a/b", h, sizeof(h));
	CHECK_STR_EQ(h, "example.com");
	url_host("git@example.com:a/b.git", h, sizeof(h));
	CHECK_STR_EQ(h, "example.com");
	url_host("ssh://git@[::1]:22/a", h, sizeof(h));
	CHECK_STR_EQ(h, "::1");
	url_host("file:///srv/repo", h, sizeof(h));
	CHECK_STR_EQ(h, "");
}

TEST(key_files_are_0600_in_the_private_directory_and_removed)
{
	setup();
	char keydir[128];
	snprintf(keydir, sizeof(keydir), "%s/keytest-XXXXXX", tmp);
	REQUIRE(mkdtemp(keydir));
	struct stat st;
	REQUIRE(stat(keydir, &st) == 0);
	CHECK_INT_EQ(st.st_mode & 0777, 0700);
	struct sw_git_fetch f = { .private_key = "-----BEGIN OPENSSH PRIVATE KEY-----\nx\n",
				  .public_key = "ssh-ed25519 AAAA test" };
	struct child c = { .f = &f, .keydir = keydir };
	char priv[PATH_MAX], pub[PATH_MAX];
	REQUIRE(write_key_files(&c, priv, pub) == 0);
	REQUIRE(stat(priv, &st) == 0);
	CHECK_INT_EQ(st.st_mode & 0777, 0600);
	char text[128];
	CHECK(scratch_read_into(priv, text, sizeof(text)) && strcmp(text, f.private_key) == 0);
	CHECK(scratch_read_into(pub, text, sizeof(text)) && strcmp(text, f.public_key) == 0);
	/* a link planted at the path is never followed */
	remove_key_files(&c);
	CHECK(!exists(priv) && !exists(pub));
	char target[160];
	snprintf(target, sizeof(target), "%s/planted", tmp);
	REQUIRE(symlink(target, priv) == 0);
	CHECK(write_key_files(&c, priv, pub) < 0);
	CHECK(!exists(target));
	unlink(priv);
	CHECK(remove_tree(keydir) == 0 && !exists(keydir));
}

/* ---- file:// ---- */

static void file_url(char *out, size_t cap)
{
	snprintf(out, cap, "file://%s", origin);
}

TEST(file_branch_checks_out_its_tip_without_git_directory)
{
	setup();
	char url[256], dest[256], err[512], path[300], text[64];
	struct sw_commit_info info;
	struct lines log = { 0 };
	file_url(url, sizeof(url));
	REQUIRE(fetch(url, NULL, "main", true, dest, &info, &log, err) == 0);
	CHECK_STR_EQ(info.sha, sha_second);
	CHECK_STR_EQ(info.ref, "refs/heads/main");
	CHECK_STR_EQ(info.message, "Second");
	CHECK_STR_EQ(info.author, "Ada Lovelace <ada@example.com>");
	snprintf(path, sizeof(path), "%s/index.html", dest);
	CHECK(scratch_read_into(path, text, sizeof(text)) && strcmp(text, "v2\n") == 0);
	snprintf(path, sizeof(path), "%s/.git", dest);
	CHECK(!exists(path));
	snprintf(path, sizeof(path), "%s/feature.txt", dest);
	CHECK(!exists(path));
	CHECK(strstr(log.text, "Fetching file://") != NULL);
	CHECK(strstr(log.text, "Receiving objects: 100% (") != NULL);
	CHECK(strstr(log.text, "Checked out refs/heads/main at ") != NULL);
}

TEST(host_git_configuration_is_not_read)
{
	setup();
	char url[256], dest[256], err[512], home[128], conf[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	/* were it read, this would send the fetch elsewhere */
	snprintf(home, sizeof(home), "%s/home", tmp);
	REQUIRE(mkdir(home, 0700) == 0);
	snprintf(conf, sizeof(conf), "[url \"file:///nonexistent-sw\"]\n\tinsteadOf = %s\n", url);
	REQUIRE(write_text(home, ".gitconfig", conf) == 0);
	const char *old = getenv("HOME");
	char saved[256];
	snprintf(saved, sizeof(saved), "%s", old ? old : "");
	setenv("HOME", home, 1);
	int rc = fetch(url, NULL, "main", true, dest, &info, NULL, err);
	if (old)
		setenv("HOME", saved, 1);
	else
		unsetenv("HOME");
	CHECK_INT_EQ(rc, 0);
	CHECK_STR_EQ(info.sha, sha_second);
}

TEST(file_no_ref_and_no_branch_is_the_default_branch)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	REQUIRE(fetch(url, NULL, NULL, true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_second);
	CHECK_STR_EQ(info.ref, "refs/heads/main");
}

TEST(file_ref_overrides_the_branch)
{
	setup();
	char url[256], dest[256], err[512], path[300];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	REQUIRE(fetch(url, "feature", "main", true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_feature);
	CHECK_STR_EQ(info.ref, "refs/heads/feature");
	CHECK_STR_EQ(info.message, "Feature");
	snprintf(path, sizeof(path), "%s/feature.txt", dest);
	CHECK(exists(path));
	REQUIRE(fetch(url, "refs/heads/feature", NULL, true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_feature);
}

TEST(file_annotated_tag_is_peeled_to_its_commit)
{
	setup();
	char url[256], dest[256], err[512], path[300], text[64];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	REQUIRE(fetch(url, "v1", "main", true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_first);
	CHECK_STR_EQ(info.ref, "refs/tags/v1");
	CHECK_STR_EQ(info.message, "First commit\n\nThe body, line one.\nLine two.");
	snprintf(path, sizeof(path), "%s/index.html", dest);
	CHECK(scratch_read_into(path, text, sizeof(text)) && strcmp(text, "v1\n") == 0);
	REQUIRE(fetch(url, "refs/tags/light", NULL, true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_feature);
	CHECK_STR_EQ(info.ref, "refs/tags/light");
}

TEST(file_sha_checks_out_that_commit)
{
	setup();
	char url[256], dest[256], err[512], path[300];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	REQUIRE(fetch(url, sha_feature, "main", true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_feature);
	CHECK_STR_EQ(info.ref, sha_feature);
	snprintf(path, sizeof(path), "%s/feature.txt", dest);
	CHECK(exists(path));
}

TEST(file_message_is_cleaned)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	REQUIRE(fetch(url, "weird", NULL, true, dest, &info, NULL, err) == 0);
	CHECK_STR_EQ(info.sha, sha_weird);
	CHECK_STR_EQ(info.message, "Bad [31mred[0m ?? end\nbody");
}

TEST(file_unknown_ref_is_enoent_and_leaves_nothing)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	CHECK_INT_EQ(fetch(url, "nope", "main", true, dest, &info, NULL, err), -ENOENT);
	CHECK_STR_EQ(err, "'nope' is not a branch, a tag or a commit of the repository");
	CHECK(!exists(dest));
	CHECK_INT_EQ(fetch(url, "refs/tags/main", NULL, true, dest, &info, NULL, err), -ENOENT);
	CHECK_STR_EQ(err, "'refs/tags/main' is not a tag of the repository");
	CHECK_INT_EQ(fetch(url, NULL, "gone", true, dest, &info, NULL, err), -ENOENT);
}

TEST(file_sha_reachable_from_no_ref_is_enoent)
{
	setup();
	char url[256], dest[256], err[512], want[200];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	CHECK_INT_EQ(fetch(url, sha_loose, NULL, true, dest, &info, NULL, err), -ENOENT);
	snprintf(want, sizeof(want), "commit %s is not in the repository", sha_loose);
	CHECK(strncmp(err, want, strlen(want)) == 0);
	CHECK(!exists(dest));
}

TEST(file_url_is_refused_unless_allowed)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	CHECK_INT_EQ(fetch(url, NULL, "main", false, dest, &info, NULL, err), -EINVAL);
	CHECK_STR_EQ(err, "the repository URL is refused: it must not be a file:// URL");
	CHECK(!exists(dest));
}

TEST(other_schemes_and_local_paths_are_refused)
{
	setup();
	static const char *const bad[] = {
		"ext::sh -c touch% /tmp/sw-pwned", "/tmp/repo", "tmp/repo", "http://example.com/a.git",
		"git://example.com/a.git", "https://user:pass@example.com/a.git", "file:relative",
		"ssh://-oProxyCommand=x/a", "fd::17",
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		char dest[256], err[512];
		struct sw_commit_info info;
		int rc = fetch(bad[i], NULL, NULL, true, dest, &info, NULL, err);
		if (rc != -EINVAL)
			fprintf(stderr, "  %s: %d %s\n", bad[i], rc, err);
		CHECK_INT_EQ(rc, -EINVAL);
		CHECK(strncmp(err, "the repository URL is refused: it ", 34) == 0);
		CHECK(!exists(dest));
	}
	CHECK(!exists("/tmp/sw-pwned"));
}

TEST(bad_ref_names_are_refused)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	CHECK_INT_EQ(fetch(url, "--upload-pack=x", NULL, true, dest, &info, NULL, err), -EINVAL);
	CHECK_INT_EQ(fetch(url, "a..b", NULL, true, dest, &info, NULL, err), -EINVAL);
	CHECK_INT_EQ(fetch(url, NULL, "bad branch", true, dest, &info, NULL, err), -EINVAL);
	CHECK_STR_EQ(err, "the git ref is not a valid branch, tag or commit name");
}

TEST(existing_dest_is_eexist)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	file_url(url, sizeof(url));
	snprintf(dest, sizeof(dest), "%s/clones/existing", tmp);
	REQUIRE(mkdir(dest, 0700) == 0);
	struct sw_git_fetch f = { .url = url, .allow_file = true };
	CHECK_INT_EQ(sw_git_fetch(&f, dest, &info, NULL, NULL, err, sizeof(err)), -EEXIST);
	CHECK(exists(dest)); /* not ours: left alone */
}

TEST(missing_repository_is_enoent)
{
	setup();
	char url[256], dest[256], err[512];
	struct sw_commit_info info;
	snprintf(url, sizeof(url), "file://%s/nothing-here", tmp);
	CHECK_INT_EQ(fetch(url, NULL, NULL, true, dest, &info, NULL, err), -ENOENT);
	CHECK(strncmp(err, "no git repository was found at the URL", 38) == 0);
	CHECK(!exists(dest));
}

TEST(unresolvable_host_is_a_clear_error_fast)
{
	setup();
	static const char *const urls[] = { "ssh://git@nosuch.invalid/a/b.git", "https://nosuch.invalid/a/b.git",
					    "git@nosuch.invalid:a/b.git" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(urls); i++) {
		char dest[256], err[512];
		struct sw_commit_info info;
		uint64_t t0 = sw_now_ms();
		int rc = fetch(urls[i], NULL, NULL, false, dest, &info, NULL, err);
		if (rc != -EHOSTUNREACH)
			fprintf(stderr, "  %s: %d %s\n", urls[i], rc, err);
		CHECK_INT_EQ(rc, -EHOSTUNREACH);
		CHECK_STR_EQ(err, "could not resolve host nosuch.invalid");
		CHECK(sw_now_ms() - t0 < 20000);
	}
}

TEST(connection_refused_is_a_clear_error)
{
	setup();
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	REQUIRE(bind(s, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		getsockname(s, (struct sockaddr *)&a, &al) == 0);
	close(s); /* nothing listens there now */
	char url[128], dest[256], err[512];
	struct sw_commit_info info;
	snprintf(url, sizeof(url), "ssh://git@127.0.0.1:%u/a/b.git", ntohs(a.sin_port));
	CHECK_INT_EQ(fetch(url, NULL, NULL, false, dest, &info, NULL, err), -ECONNREFUSED);
	CHECK(strncmp(err, "could not connect to 127.0.0.1", 30) == 0);
}

/* ---- a server that accepts and never answers ---- */

/* A socket listening on 127.0.0.1 (a free port) that nobody accepts from:
 * connections complete and then hear nothing. */
static int listener(unsigned *port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 8) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0) {
		close(s);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return s;
}

/* sw_git_fetch() of an ssh URL on a server that accepts and never says
 * a word; how long it took into *took_ms. */
static int fetch_stalled(unsigned timeout_s, const volatile bool *cancel, char *dest, char *err,
			 uint64_t *took_ms)
{
	unsigned port;
	int s = listener(&port);
	if (s < 0)
		return INT_MIN;
	char url[128];
	struct sw_commit_info info;
	snprintf(url, sizeof(url), "ssh://git@127.0.0.1:%u/a/b.git", port);
	struct sw_git_fetch f = { .url = url, .timeout_s = timeout_s, .cancel = cancel };
	uint64_t t0 = sw_now_ms();
	int rc = sw_git_fetch(&f, next_dest(dest, 256), &info, NULL, NULL, err, 512);
	*took_ms = sw_now_ms() - t0;
	close(s);
	return rc;
}

TEST(silent_server_times_out)
{
	setup();
	char dest[256], err[512];
	uint64_t took;
	CHECK_INT_EQ(fetch_stalled(1, NULL, dest, err, &took), -ETIMEDOUT);
	CHECK(took >= 1000 && took < 3000);
	CHECK_STR_EQ(err, "the git fetch did not finish within 1 seconds");
	CHECK(!exists(dest));
}

static void *cancel_later(void *arg)
{
	usleep(300 * 1000);
	__atomic_store_n((volatile bool *)arg, true, __ATOMIC_RELAXED);
	return NULL;
}

TEST(cancel_stops_a_stalled_fetch)
{
	setup();
	char dest[256], err[512];
	uint64_t took;
	volatile bool cancel = false;
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, cancel_later, (void *)&cancel) == 0);
	CHECK_INT_EQ(fetch_stalled(60, &cancel, dest, err, &took), -ECANCELED);
	CHECK(took >= 300 && took < 2000);
	CHECK_STR_EQ(err, "the git fetch was cancelled");
	CHECK(!exists(dest));
	pthread_join(t, NULL);
}

/* The fetch runs in steward-git, a new process image started by
 * posix_spawn, never a fork of this threaded process (a forked copy can
 * inherit a lock another thread held: under ASan the allocator's, which
 * hung clones in a CI run). Seen from here while a fetch stalls: our one
 * child's executable is steward-git, and it has none of our environment
 * but what the helper is given. */
struct child_seen {
	volatile bool cancel;
	char exe[PATH_MAX];
	bool environ_clean;
};

static void *look_at_the_child(void *arg)
{
	struct child_seen *cs = arg;
	for (int i = 0; i < 200 && !cs->exe[0]; i++) {
		usleep(10 * 1000);
		char path[64], kids[256] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
		FILE *fp = fopen(path, "r");
		if (fp) {
			if (!fgets(kids, sizeof(kids), fp))
				kids[0] = '\0';
			fclose(fp);
		}
		/* children of any of our threads: the fetch's thread is the main one */
		int pid = atoi(kids);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		ssize_t n = readlink(path, cs->exe, sizeof(cs->exe) - 1);
		cs->exe[n > 0 ? n : 0] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/environ", pid);
		char env[8192];
		int fd = open(path, O_RDONLY);
		ssize_t m = fd >= 0 ? read(fd, env, sizeof(env) - 1) : -1;
		if (fd >= 0)
			close(fd);
		env[m > 0 ? m : 0] = '\0';
		cs->environ_clean = m >= 0;
		for (ssize_t k = 0; k < m; k += (ssize_t)strlen(env + k) + 1)
			if (strncmp(env + k, "SW_TEST_SECRET=", 15) == 0)
				cs->environ_clean = false;
	}
	__atomic_store_n(&cs->cancel, true, __ATOMIC_RELAXED);
	return NULL;
}

TEST(the_fetch_runs_in_steward_git_not_a_fork)
{
	setup();
	setenv("SW_TEST_SECRET", "not for the helper", 1);
	char dest[256], err[512];
	uint64_t took;
	struct child_seen cs = { 0 };
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, look_at_the_child, &cs) == 0);
	CHECK_INT_EQ(fetch_stalled(60, &cs.cancel, dest, err, &took), -ECANCELED);
	pthread_join(t, NULL);
	const char *base = strrchr(cs.exe, '/');
	CHECK_STR_EQ(base ? base + 1 : cs.exe, "steward-git");
	CHECK(cs.environ_clean);
	unsetenv("SW_TEST_SECRET");
}

TEST(a_missing_helper_is_a_clear_error)
{
	setup();
	const char *was = getenv("STEWARD_GIT_HELPER");
	char keep[PATH_MAX];
	snprintf(keep, sizeof(keep), "%s", was ? was : "");
	setenv("STEWARD_GIT_HELPER", "/nonexistent/steward-git", 1);
	char dest[256], err[512];
	struct sw_commit_info info;
	struct sw_git_fetch f = { .url = "https://example.com/a/b.git" };
	CHECK_INT_EQ(sw_git_fetch(&f, next_dest(dest, sizeof(dest)), &info, NULL, NULL, err, sizeof(err)), -ENOENT);
	CHECK_STR_EQ(err, "the git fetch helper steward-git is not next to this program");
	CHECK(!exists(dest));
	if (was)
		setenv("STEWARD_GIT_HELPER", keep, 1);
	else
		unsetenv("STEWARD_GIT_HELPER");
}

/* steward-git started by anything but sw_git_fetch() (no report pipe, or
 * a request naming another parent) exits 2 having done nothing. */
TEST(steward_git_started_by_hand_exits_2)
{
	setup();
	const char *helper = getenv("STEWARD_GIT_HELPER");
	if (!helper)
		return;
	int in[2];
	REQUIRE(pipe(in) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		close(in[1]);
		close(3);
		execl(helper, "steward-git", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(in[1]);
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2);
}

/* ---- https with a certificate nobody signed ---- */

static bool port_open(unsigned port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	bool ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(s);
	return ok;
}


TEST(https_certificate_is_checked_against_the_system_bundle_or_ca_file)
{
	setup();
	char key[160], cert[160], accept_at[32];
	snprintf(key, sizeof(key), "%s/tls-key.pem", tmp);
	snprintf(cert, sizeof(cert), "%s/tls-cert.pem", tmp);
	REQUIRE(run(tmp, NULL, 0, (const char *const[]){ OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt",
							 "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
							 "-out", cert, "-days", "1", "-subj", "/CN=localhost",
							 NULL }) == 0);
	unsigned port = (unsigned)scratch_port();
	snprintf(accept_at, sizeof(accept_at), "127.0.0.1:%u", port);
	const char *argv[] = { OPENSSL, "s_server", "-accept", accept_at, "-cert", cert, "-key", key, "-quiet", NULL };
	pid_t pid = spawn_server(argv, "/dev/null");
	REQUIRE(pid > 0);
	for (int i = 0; i < 100 && !port_open(port); i++)
		usleep(50 * 1000);
	char url[128], dest[256], err[512];
	struct sw_commit_info info;
	snprintf(url, sizeof(url), "https://localhost:%u/a/b.git", port);
	CHECK_INT_EQ(fetch(url, NULL, NULL, false, dest, &info, NULL, err), -EACCES);
	CHECK_STR_EQ(err, "the TLS certificate of localhost is not valid for it");
	CHECK(!exists(dest));

	/* the same server, its certificate trusted through ca_file: TLS passes
	 * (the server then speaks no HTTP, so the fetch fails later) */
	struct sw_git_fetch f = { .url = url, .branch = "main", .ca_file = cert, .timeout_s = 20 };
	int rc = sw_git_fetch(&f, next_dest(dest, sizeof(dest)), &info, NULL, NULL, err, sizeof(err));
	CHECK(rc < 0);
	CHECK(strstr(err, "TLS certificate") == NULL);
	CHECK(!exists(dest));
	/* an unreadable ca_file is said before anything runs */
	f.ca_file = "/nonexistent/ca.pem";
	CHECK_INT_EQ(sw_git_fetch(&f, next_dest(dest, sizeof(dest)), &info, NULL, NULL, err, sizeof(err)), -EIO);
	CHECK_STR_EQ(err, "the CA bundle for https git servers (GIT_CA_FILE) cannot be read");
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

/* ---- ssh ---- */

static unsigned sshd_port;
static char deploy_pub[SW_SSH_PUBLIC_KEY_MAX], deploy_priv[SW_SSH_PRIVATE_KEY_MAX];
static char host_fp[64];


static bool banner_ready(unsigned port)
{
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char buf[8] = "";
	bool ok = connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 && read(s, buf, 7) == 7 &&
		  memcmp(buf, "SSH-2.0", 7) == 0;
	close(s);
	return ok;
}

/* sshd on 127.0.0.1:<free port>, key-only root logins with the deploy
 * key authorised; the host key is made by sw_ssh_ed25519_generate() too. */
static void start_sshd(void)
{
	char host_pub[SW_SSH_PUBLIC_KEY_MAX], host_priv[SW_SSH_PRIVATE_KEY_MAX];
	if (sw_ssh_ed25519_generate("test-host", host_pub, host_priv) < 0 ||
	    sw_ssh_ed25519_generate("deploy", deploy_pub, deploy_priv) < 0 ||
	    sw_ssh_fingerprint(host_pub, host_fp) < 0)
		exit(1);
	char path[256], conf[1024];
	snprintf(path, sizeof(path), "%s/host_key", tmp);
	if (write_file_0600(path, host_priv) < 0)
		exit(1);
	snprintf(path, sizeof(path), "%s/authorized_keys", tmp);
	char line[SW_SSH_PUBLIC_KEY_MAX + 1];
	snprintf(line, sizeof(line), "%s\n", deploy_pub);
	if (write_file_0600(path, line) < 0)
		exit(1);
	if (mkdir("/run/sshd", 0755) < 0 && errno != EEXIST) {
		printf("SKIP: cannot make /run/sshd (%s): sshd needs it\n", strerror(errno));
		exit(77);
	}
	sshd_port = (unsigned)scratch_port();
	snprintf(conf, sizeof(conf),
		 "Port %u\nListenAddress 127.0.0.1\nHostKey %s/host_key\nPidFile none\n"
		 "AuthorizedKeysFile %s/authorized_keys\nPubkeyAuthentication yes\n"
		 "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
		 "StrictModes no\nPermitRootLogin prohibit-password\nAllowUsers root\n"
		 "LogLevel VERBOSE\n",
		 sshd_port, tmp, tmp);
	if (write_text(tmp, "sshd_config", conf) < 0)
		exit(1);
	char config[160], logpath[160];
	snprintf(config, sizeof(config), "%s/sshd_config", tmp);
	snprintf(logpath, sizeof(logpath), "%s/sshd.log", tmp);
	const char *argv[] = { SSHD, "-D", "-e", "-f", config, NULL };
	if ((sshd_pid = spawn_server(argv, logpath)) < 0)
		exit(1);
	for (int i = 0; i < 100 && !banner_ready(sshd_port); i++)
		usleep(50 * 1000);
	if (!banner_ready(sshd_port)) {
		fprintf(stderr, "sshd did not start: see %s\n", logpath);
		exit(1);
	}
}

static int fetch_ssh_pinned(const char *priv, const char *pub, const char *pin, char *dest,
			    struct sw_commit_info *info, struct lines *log, char *err)
{
	char url[256];
	snprintf(url, sizeof(url), "ssh://root@127.0.0.1:%u%s", sshd_port, origin);
	struct sw_git_fetch f = { .url = url, .branch = "main", .private_key = priv, .public_key = pub,
				  .ssh_host_key = pin, .timeout_s = 60 };
	err[0] = '\0';
	return sw_git_fetch(&f, next_dest(dest, 256), info, log ? collect : NULL, log, err, 512);
}

static int fetch_ssh(const char *priv, const char *pub, char *dest, struct sw_commit_info *info,
		     struct lines *log, char *err)
{
	return fetch_ssh_pinned(priv, pub, NULL, dest, info, log, err);
}

TEST(ssh_clone_with_the_deploy_key_logs_and_returns_the_host_key)
{
	setup();
	if (!sshd_pid)
		start_sshd();
	char dest[256], err[512], keys[128], want[160];
	struct sw_commit_info info;
	struct lines log = { 0 };
	int rc = fetch_ssh(deploy_priv, deploy_pub, dest, &info, &log, err);
	if (rc || getenv("SW_TEST_VERBOSE"))
		fprintf(stderr, "  %d %s\n%s", rc, err, log.text);
	REQUIRE(rc == 0);
	CHECK_STR_EQ(info.sha, sha_second);
	CHECK_STR_EQ(info.ref, "refs/heads/main");
	snprintf(want, sizeof(want), "Host key of 127.0.0.1: ssh-ed25519 %s (pinned on first use)", host_fp);
	CHECK(strstr(log.text, want) != NULL);
	snprintf(want, sizeof(want), "ssh-ed25519 %s", host_fp);
	CHECK_STR_EQ(info.host_key, want);
	CHECK(strstr(log.text, "remote: Enumerating objects: ") != NULL);
	CHECK(strstr(log.text, "BEGIN OPENSSH") == NULL);
	snprintf(keys, sizeof(keys), "%s/keys", tmp);
	CHECK(dir_empty(keys));
}

TEST(ssh_pinned_host_key_that_matches_is_accepted)
{
	setup();
	if (!sshd_pid)
		start_sshd();
	char dest[256], err[512], pin[160], want[200];
	struct sw_commit_info info;
	struct lines log = { 0 };
	snprintf(pin, sizeof(pin), "ssh-ed25519 %s", host_fp);
	int rc = fetch_ssh_pinned(deploy_priv, deploy_pub, pin, dest, &info, &log, err);
	if (rc)
		fprintf(stderr, "  %d %s\n%s", rc, err, log.text);
	REQUIRE(rc == 0);
	CHECK_STR_EQ(info.sha, sha_second);
	CHECK_STR_EQ(info.host_key, pin);
	snprintf(want, sizeof(want), "Host key of 127.0.0.1: %s (matches the pinned key)", pin);
	CHECK(strstr(log.text, want) != NULL);
}

TEST(ssh_changed_host_key_is_refused_naming_both_keys)
{
	setup();
	if (!sshd_pid)
		start_sshd();
	static const char pin[] = "ssh-ed25519 SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
	char dest[256], err[512], want[512];
	struct sw_commit_info info;
	struct lines log = { 0 };
	CHECK_INT_EQ(fetch_ssh_pinned(deploy_priv, deploy_pub, pin, dest, &info, &log, err), -EACCES);
	snprintf(want, sizeof(want),
		 "the ssh host key of 127.0.0.1 has changed: the server offered ssh-ed25519 %s, but %s is "
		 "pinned. If the server's key was replaced on purpose, set the git source's sshHostKey to "
		 "the new key (or to null to pin the next key met)", host_fp, pin);
	CHECK_STR_EQ(err, want);
	CHECK(!exists(dest));
	/* a key of another type is another key too */
	char other[200];
	snprintf(other, sizeof(other), "ssh-rsa %s", host_fp);
	CHECK_INT_EQ(fetch_ssh_pinned(deploy_priv, deploy_pub, other, dest, &info, NULL, err), -EACCES);
	CHECK(strstr(err, "has changed") != NULL);
}

TEST(ssh_clone_through_a_key_file_leaves_no_key_behind)
{
	setup();
	if (!sshd_pid)
		start_sshd();
	char dest[256], err[512], keys[128];
	struct sw_commit_info info;
	force_key_file = true;
	int rc = fetch_ssh(deploy_priv, deploy_pub, dest, &info, NULL, err);
	force_key_file = false;
	if (rc)
		fprintf(stderr, "  %d %s\n", rc, err);
	CHECK_INT_EQ(rc, 0);
	CHECK_STR_EQ(info.sha, sha_second);
	snprintf(keys, sizeof(keys), "%s/keys", tmp);
	CHECK(dir_empty(keys));
}

TEST(ssh_key_not_authorised_is_eacces)
{
	setup();
	if (!sshd_pid)
		start_sshd();
	char pub[SW_SSH_PUBLIC_KEY_MAX], priv[SW_SSH_PRIVATE_KEY_MAX];
	REQUIRE(sw_ssh_ed25519_generate("other", pub, priv) == 0);
	char dest[256], err[512], keys[128];
	struct sw_commit_info info;
	struct lines log = { 0 };
	CHECK_INT_EQ(fetch_ssh(priv, pub, dest, &info, &log, err), -EACCES);
	CHECK_STR_EQ(err, "the git server at 127.0.0.1 did not accept the deploy key: add the application's "
			  "deploy key to the repository (read access is enough)");
	CHECK(!exists(dest));
	CHECK(strstr(log.text, "BEGIN OPENSSH") == NULL);
	force_key_file = true;
	CHECK_INT_EQ(fetch_ssh(priv, pub, dest, &info, NULL, err), -EACCES);
	force_key_file = false;
	CHECK(strstr(err, tmp) == NULL);
	snprintf(keys, sizeof(keys), "%s/keys", tmp);
	CHECK(dir_empty(keys));
}

TEST(ssh_without_a_deploy_key_is_eacces)
{
	setup();
	if (!sshd_pid)
		start_sshd();
	char dest[256], err[512];
	struct sw_commit_info info;
	CHECK_INT_EQ(fetch_ssh(NULL, NULL, dest, &info, NULL, err), -EACCES);
	CHECK_STR_EQ(err, "the git server at 127.0.0.1 asks for a key and the application has no deploy key");
}

TEST_MAIN()
