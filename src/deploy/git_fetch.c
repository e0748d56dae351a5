/* Git sources: sw_git_fetch() clones a repository with libgit2 (source.h).
 *
 * Why a child process. libgit2 1.5 has no connect or read timeout and no
 * way to interrupt a read that blocks (ssh goes through libssh2, https
 * through mbedTLS, both on blocking sockets it owns): a server that accepts
 * the connection and then says nothing would hold the build runner
 * (concurrency 1, so every build of the installation) for ever, and a
 * cancel could not stop it. So the clone runs in a child process: the
 * helper program steward-git (src/main/steward_git.c, built next to
 * stewardd; STEWARD_GIT_HELPER names another path, which the tests use),
 * started with posix_spawn, never a fork of this threaded process (a
 * forked copy can inherit a lock another thread held at the fork: under
 * ASan the allocator's, and the child then hung until the deadline; a
 * clean-clone CI run lost two deployments' tests that way). It gets the
 * request on stdin (request_write: length-prefixed fields written from
 * the caller's strings, so no copy of a credential is left here), the
 * report pipe as fd 3, no other descriptor, default signals, and only the
 * environment the C library, OpenSSL and the sanitizers read. It asks the
 * kernel for SIGKILL if the thread that started it dies, refuses a
 * request from any process but its parent, and opens and initialises
 * libgit2 for itself (stewardd never maps it: libgit2.h); it uses nothing
 * of stewardd's
 * beyond the request. It reports progress lines, then the commit or one
 * error, as frames on the pipe. The parent polls the pipe, the cancel flag and the deadline every
 * SW_GIT_POLL_MS and ends the child with SIGKILL when either trips; a
 * stalled server, a cancel and a timeout all end the fetch within that
 * tick, wherever libgit2 is. Side benefits: libgit2's global state and
 * its allocations never live in stewardd, and a crash in it fails one
 * deployment ("the git fetch process ended unexpectedly").
 *
 * Decisions:
 * - URLs: sw_valid_git_url() again (https, ssh://, user@host:path, and
 *   file:/// only when allow_file); everything else (http://, git://,
 *   ext::, plain local paths, userinfo in https URLs) is refused with
 *   -EINVAL before anything runs. Local clones never take libgit2's
 *   hard-link shortcut (GIT_CLONE_NO_LOCAL): file:// is fetched like any
 *   remote. No system, global or XDG git configuration is read (no
 *   url.insteadOf from the host), no proxy is used.
 * - Credentials: ssh offers the deploy key once (a refused key ends the
 *   fetch with -EACCES instead of libgit2 asking again). The key goes to
 *   libssh2 from memory (git_credential_ssh_key_memory_new; Debian's
 *   libgit2 1.5 is built with it). A build without it gets the key as a
 *   0600 file in a 0700 directory made by mkdtemp, removed as soon as
 *   the transfer starts and again, with the directory, by the parent when
 *   the child has ended (also after SIGKILL). https: the git source's
 *   credential (https_username, https_token) as HTTP Basic, offered once
 *   when the server asks (a refusal ends the fetch with -EACCES instead
 *   of libgit2 asking again); without one a server asking is -EACCES with
 *   a sentence saying how to attach one.
 * - Host keys (ssh): trust on first use. The key's type and SHA256
 *   fingerprint (ssh-keygen -l's form) are compared with ssh_host_key when
 *   one is pinned (a different key ends the fetch before any credential is
 *   sent: libssh2 checks the host key first), logged, and returned in
 *   ret->host_key so the caller can pin it. TLS (https): the library's
 *   verification against ca_file (else the system CA bundle) decides; an
 *   invalid certificate is refused with a sentence naming the host.
 * - The clone is a full one (libgit2 1.5 has no shallow clone), all tags
 *   included, then the ref is resolved in it: NULL is the source's branch
 *   (or the remote's default branch when that is NULL too); a 40-hex sha
 *   must be a commit of the clone (reachable from a branch or a tag;
 *   libgit2 1.5 cannot fetch a bare object id); "refs/heads/X" and
 *   "refs/tags/X" name one kind; any other name is a branch first, then a
 *   tag (as git checkout does). Annotated tags are peeled to their commit.
 *   The commit is checked out (forced), then the .git directory is removed:
 *   dest holds the commit's files only, like an unpacked archive, so no
 *   history or remote configuration reaches an image (a static site would
 *   serve it). Submodules and LFS objects are not fetched.
 * - Metadata comes from the clone: the sha, the full ref name
 *   (refs/heads/<b>, refs/tags/<t>, or the sha itself), the message
 *   (summary and body, control characters but newline and tab dropped,
 *   invalid UTF-8 replaced, cut on a character boundary) and the author as
 *   "Name <email>".
 * - Bounds: timeout_s (0: SW_GIT_FETCH_TIMEOUT_S) for the whole fetch;
 *   SW_GIT_FETCH_MAX_BYTES received; progress lines at most one per second
 *   per phase, server messages ("remote: ...") at most
 *   SW_GIT_REMOTE_LINES_MAX lines, both with control characters dropped.
 * - Errors are one sentence each, never holding a credential or the key
 *   file's path: -EINVAL (URL or ref refused), -EEXIST (dest exists),
 *   -EHOSTUNREACH (the host does not resolve), -ECONNREFUSED (no
 *   connection), -EACCES (credentials refused or needed, certificate),
 *   -ENOENT (no repository at the URL, unknown ref, empty repository),
 *   -EFBIG, -ETIMEDOUT, -ECANCELED, -EIO (anything else, with libgit2's
 *   message cleaned). On failure dest is removed. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/evp.h>
#include "steward/base/base.h"
#include "steward/base/secret.h"
#include "steward/deploy/source.h"
#include "steward/base/validate.h"
#include "libgit2.h"

#define SW_GIT_FETCH_TIMEOUT_S 600u                    /* timeout_s 0 */
#define SW_GIT_FETCH_MAX_BYTES (2ull * 1024 * 1024 * 1024) /* received pack data */
#define SW_GIT_REMOTE_LINES_MAX 200
#define SW_GIT_POLL_MS 100
#define PROGRESS_EVERY_MS 1000
#define LINE_MAX_LEN 512
#define REPORT_FD 3 /* the pipe's write end in the child */
#define CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* Tests set it to take the key-file path although libssh2 could read the
 * key from memory (tests/unit/test_git_fetch.c includes this file). */
static bool force_key_file;

/* libgit2, in the child only (child_main opens it). */
static const struct sw_libgit2 *lg;

/* ---- text ---- */

/* Copies n bytes of src as valid UTF-8 without control characters (C0
 * but tab and newline when multiline, DEL, C1) into out (cap >= 1 bytes),
 * NUL-terminated; an invalid sequence becomes '?'; cut on a character
 * boundary. Returns the length written. */
static size_t clean_text(const char *src, size_t n, char *out, size_t cap, bool multiline)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, i = 0;
	while (i < n) {
		unsigned char c = s[i];
		size_t len = c < 0x80 ? 1 : c >= 0xC2 && c < 0xE0 ? 2 : c >= 0xE0 && c < 0xF0 ? 3
			   : c >= 0xF0 && c < 0xF5 ? 4 : 0;
		bool ok = len != 0 && len <= n - i;
		uint32_t cp = len == 1 ? c : len ? c & (0x7Fu >> len) : 0;
		for (size_t k = 1; ok && k < len; k++) {
			ok = (s[i + k] & 0xC0) == 0x80;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		if (ok && len > 1) /* overlong, surrogates, past U+10FFFF */
			ok = !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
			     !(cp >= 0xD800 && cp <= 0xDFFF);
		if (!ok) {
			if (o + 1 >= cap)
				break;
			out[o++] = '?';
			i++;
			continue;
		}
		bool control = cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0);
		if (control && !(multiline && (cp == '\n' || cp == '\t'))) {
			i += len;
			continue;
		}
		if (o + len >= cap)
			break;
		memcpy(out + o, s + i, len);
		o += len;
		i += len;
	}
	out[o] = '\0';
	return o;
}

/* The host part of a validated git URL ("" for file://). */
static void url_host(const char *url, char *out, size_t cap)
{
	const char *p = strstr(url, "://");
	p = p ? p + 3 : url;
	const char *at = strchr(p, '@'), *slash = strchr(p, '/');
	if (at && (!slash || at < slash))
		p = at + 1;
	size_t n;
	if (*p == '[')
		n = strcspn(++p, "]");
	else
		n = strcspn(p, ":/");
	snprintf(out, cap, "%.*s", (int)n, p);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* Removes path and everything below it, never following a link. */
static int remove_tree(const char *path)
{
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

/* ---- the report pipe ---- */

enum { MSG_LINE = 'L', MSG_DONE = 'C', MSG_FAIL = 'E' };
struct msg_head {
	uint32_t type;
	uint32_t len;
};
#define MSG_PAYLOAD_MAX (sizeof(struct sw_commit_info) + 16)
_Static_assert(sizeof(struct msg_head) + MSG_PAYLOAD_MAX <= PIPE_BUF, "a frame is one atomic write");

static void child_send(uint32_t type, const void *p, size_t len)
{
	char frame[sizeof(struct msg_head) + MSG_PAYLOAD_MAX];
	struct msg_head h = { type, (uint32_t)SW_MIN(len, MSG_PAYLOAD_MAX) };
	memcpy(frame, &h, sizeof(h));
	memcpy(frame + sizeof(h), p, h.len);
	size_t n = sizeof(h) + h.len, off = 0;
	while (off < n) {
		ssize_t w = write(REPORT_FD, frame + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3); /* the parent is gone */
		off += (size_t)w;
	}
}

static void __attribute__((format(printf, 1, 2))) child_log(const char *fmt, ...)
{
	char raw[LINE_MAX_LEN], line[LINE_MAX_LEN];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = clean_text(raw, SW_MIN((size_t)n, sizeof(raw) - 1), line, sizeof(line), false);
	child_send(MSG_LINE, line, len);
}

/* ---- the child ---- */

struct child {
	const struct sw_git_fetch *f;
	enum sw_git_url_kind kind;
	const char *dest;
	const char *keydir; /* NULL without a key */
	char host[256];
	bool key_offered;
	bool token_offered;
	bool key_files; /* written: remove them */
	char host_key[128]; /* the ssh server's key as met, or "" */
	int code;       /* the first error a callback decided, with msg */
	char msg[512];
	uint64_t last_ms[3]; /* receiving, resolving, checking out */
	bool done[3];
	char side[LINE_MAX_LEN];
	size_t side_len;
	unsigned side_lines;
};

static int child_fail(struct child *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int child_fail(struct child *c, int code, const char *fmt, ...)
{
	if (c->code)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	c->code = code;
	return -1;
}

static void key_paths(const struct child *c, char priv[PATH_MAX], char pub[PATH_MAX])
{
	snprintf(priv, PATH_MAX, "%s/id", c->keydir);
	snprintf(pub, PATH_MAX, "%s/id.pub", c->keydir);
}

static void remove_key_files(struct child *c)
{
	if (!c->key_files)
		return;
	char priv[PATH_MAX], pub[PATH_MAX];
	key_paths(c, priv, pub);
	unlink(priv);
	unlink(pub);
	c->key_files = false;
}

static int write_file_0600(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	size_t n = strlen(text), off = 0;
	int r = 0;
	while (off < n) {
		ssize_t w = write(fd, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = w < 0 ? -errno : -EIO;
			break;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

/* The deploy key as files for libssh2 builds that cannot read it from
 * memory: <keydir>/id (0600) and id.pub, in the parent's mkdtemp
 * directory (0700). */
static int write_key_files(struct child *c, char priv[PATH_MAX], char pub[PATH_MAX])
{
	key_paths(c, priv, pub);
	c->key_files = true;
	int r = write_file_0600(priv, c->f->private_key);
	if (r == 0 && c->f->public_key)
		r = write_file_0600(pub, c->f->public_key);
	if (r < 0)
		remove_key_files(c);
	return r;
}

/* Why a server turned the fetch away, each said in one sentence: by the
 * credential callback when it knows, and from GIT_EAUTH otherwise. */
enum auth_refusal { KEY_REFUSED, TOKEN_REFUSED, TOKEN_NEEDED };

static void auth_sentence(enum auth_refusal why, const char *host, char *out, size_t cap)
{
	switch (why) {
	case KEY_REFUSED:
		snprintf(out, cap, "the git server at %s did not accept the deploy key: add the application's "
				   "deploy key to the repository (read access is enough)", host);
		break;
	case TOKEN_REFUSED:
		snprintf(out, cap, "the git host at %s did not accept the git credential: check that its "
				   "token is current and can read the repository", host);
		break;
	case TOKEN_NEEDED:
		snprintf(out, cap, "the repository at %s asks for credentials: attach a git credential to the "
				   "git source (credentialId), or use an ssh URL with the application's deploy "
				   "key", host);
		break;
	}
}

static int auth_fail(struct child *c, enum auth_refusal why)
{
	char sentence[sizeof(c->msg)];
	auth_sentence(why, c->host, sentence, sizeof(sentence));
	return child_fail(c, -EACCES, "%s", sentence);
}

static int credentials_cb(git_credential **out, const char *url, const char *user_from_url,
			  unsigned int allowed, void *payload)
{
	struct child *c = payload;
	(void)url;
	const char *user = user_from_url && *user_from_url ? user_from_url : "git";
	if (c->kind != SW_GIT_URL_SSH) {
		if (!c->f->https_token || !(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
			return auth_fail(c, TOKEN_NEEDED);
		if (c->token_offered)
			return auth_fail(c, TOKEN_REFUSED);
		c->token_offered = true;
		return lg->credential_userpass_plaintext_new(out, c->f->https_username ? c->f->https_username
										       : "git",
							     c->f->https_token);
	}
	if (allowed & GIT_CREDENTIAL_USERNAME)
		return lg->credential_username_new(out, user);
	if (!c->f->private_key)
		return child_fail(c, -EACCES, "the git server at %s asks for a key and the application has "
					      "no deploy key", c->host);
	if (c->key_offered)
		return auth_fail(c, KEY_REFUSED);
	c->key_offered = true;
	if ((allowed & GIT_CREDENTIAL_SSH_MEMORY) && !force_key_file &&
	    lg->credential_ssh_key_memory_new(out, user, c->f->public_key, c->f->private_key, NULL) == 0)
		return 0;
	if (!(allowed & GIT_CREDENTIAL_SSH_KEY))
		return child_fail(c, -EACCES, "the git server at %s accepts no public key", c->host);
	char priv[PATH_MAX], pub[PATH_MAX];
	if (write_key_files(c, priv, pub) < 0)
		return child_fail(c, -EIO, "could not hand the deploy key to libssh2");
	return lg->credential_ssh_key_new(out, user, c->f->public_key ? pub : NULL, priv, NULL);
}

static const char *ssh_key_type(git_cert_ssh_raw_type_t t)
{
	switch (t) {
	case GIT_CERT_SSH_RAW_TYPE_RSA:
		return "ssh-rsa";
	case GIT_CERT_SSH_RAW_TYPE_DSS:
		return "ssh-dss";
	case GIT_CERT_SSH_RAW_TYPE_KEY_ECDSA_256:
		return "ecdsa-sha2-nistp256";
	case GIT_CERT_SSH_RAW_TYPE_KEY_ECDSA_384:
		return "ecdsa-sha2-nistp384";
	case GIT_CERT_SSH_RAW_TYPE_KEY_ECDSA_521:
		return "ecdsa-sha2-nistp521";
	case GIT_CERT_SSH_RAW_TYPE_KEY_ED25519:
		return "ssh-ed25519";
	default:
		return "ssh";
	}
}

static int certificate_cb(git_cert *cert, int valid, const char *host, void *payload)
{
	struct child *c = payload;
	if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2) {
		if (valid)
			return 0;
		return child_fail(c, -EACCES, "the TLS certificate of %s is not valid for it", c->host);
	}
	const git_cert_hostkey *k = (const git_cert_hostkey *)cert;
	uint8_t sha[32];
	if (k->type & GIT_CERT_SSH_SHA256)
		memcpy(sha, k->hash_sha256, sizeof(sha));
	else if (k->type & GIT_CERT_SSH_RAW)
		sw_sha256(k->hostkey, k->hostkey_len, sha);
	else
		return child_fail(c, -EACCES, "the ssh host key of %s could not be read", c->host);
	unsigned char b64[48];
	int n = EVP_EncodeBlock(b64, sha, sizeof(sha));
	while (n > 0 && b64[n - 1] == '=')
		n--;
	const char *type = k->type & GIT_CERT_SSH_RAW ? ssh_key_type(k->raw_type) : "ssh";
	snprintf(c->host_key, sizeof(c->host_key), "%s SHA256:%.*s", type, n, (const char *)b64);
	(void)host;
	const char *pinned = c->f->ssh_host_key;
	if (pinned && strcmp(pinned, c->host_key) != 0)
		return child_fail(c, -EACCES,
				  "the ssh host key of %s has changed: the server offered %s, but %s is pinned. "
				  "If the server's key was replaced on purpose, set the git source's sshHostKey "
				  "to the new key (or to null to pin the next key met)",
				  c->host, c->host_key, pinned);
	child_log("Host key of %s: %s (%s)", c->host, c->host_key,
		  pinned ? "matches the pinned key" : "pinned on first use");
	return 0;
}

/* Whether a progress line for phase is due: at most one a second, and the
 * final one (complete) once. */
static bool progress_due(struct child *c, int phase, bool complete)
{
	if (c->done[phase])
		return false;
	uint64_t now = sw_now_ms();
	if (!complete && c->last_ms[phase] && now - c->last_ms[phase] < PROGRESS_EVERY_MS)
		return false;
	if (!complete && !c->last_ms[phase]) {
		c->last_ms[phase] = now; /* the first tick: wait a second before a line */
		return false;
	}
	c->last_ms[phase] = now;
	c->done[phase] = complete;
	return true;
}

static unsigned percent(size_t part, size_t whole)
{
	return whole ? (unsigned)(part * 100 / whole) : 100;
}

static int transfer_cb(const git_indexer_progress *p, void *payload)
{
	struct child *c = payload;
	remove_key_files(c); /* authenticated: libssh2 has read it */
	if (p->received_bytes > SW_GIT_FETCH_MAX_BYTES)
		return child_fail(c, -EFBIG, "the repository is larger than the %llu MiB a fetch may download",
				  SW_GIT_FETCH_MAX_BYTES / (1024 * 1024));
	double mib = (double)p->received_bytes / (1024 * 1024);
	if (p->total_objects && progress_due(c, 0, p->received_objects == p->total_objects))
		child_log("Receiving objects: %u%% (%u/%u), %.2f MiB%s",
			  percent(p->received_objects, p->total_objects), p->received_objects, p->total_objects,
			  mib, p->received_objects == p->total_objects ? ", done." : "");
	if (p->total_deltas && progress_due(c, 1, p->indexed_deltas == p->total_deltas))
		child_log("Resolving deltas: %u%% (%u/%u)%s", percent(p->indexed_deltas, p->total_deltas),
			  p->indexed_deltas, p->total_deltas, p->indexed_deltas == p->total_deltas ? ", done." : "");
	return 0;
}

/* Server messages: complete lines only ("\r" starts the line over, so
 * only the final state of a progress line is shown). */
static int sideband_cb(const char *str, int len, void *payload)
{
	struct child *c = payload;
	for (int i = 0; i < len; i++) {
		if (str[i] == '\r') {
			c->side_len = 0;
		} else if (str[i] == '\n') {
			if (c->side_len && c->side_lines <= SW_GIT_REMOTE_LINES_MAX) {
				if (c->side_lines++ == SW_GIT_REMOTE_LINES_MAX)
					child_log("remote: (further messages not shown)");
				else
					child_log("remote: %.*s", (int)c->side_len, c->side);
			}
			c->side_len = 0;
		} else if (c->side_len < sizeof(c->side) - 1) {
			c->side[c->side_len++] = str[i];
		}
	}
	return 0;
}

static void checkout_cb(const char *path, size_t done, size_t total, void *payload)
{
	struct child *c = payload;
	(void)path;
	if (total && progress_due(c, 2, done == total))
		child_log("Checking out files: %u%% (%zu/%zu)%s", percent(done, total), done, total,
			  done == total ? ", done." : "");
}

/* The ref to check out, as a peeled commit and its full name. */
static int resolve_ref(struct child *c, git_repository *repo, git_commit **ret, char full[256])
{
	const char *want = c->f->ref ? c->f->ref : c->f->branch;
	git_reference *r = NULL;
	git_object *obj = NULL;
	int rc;
	if (!want) {
		rc = lg->repository_head(&r, repo);
		if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND)
			return child_fail(c, -ENOENT, "the repository is empty: it has no commit to deploy");
		if (rc < 0)
			return rc;
		snprintf(full, 256, "%s", lg->reference_name(r));
		goto peel;
	}
	if (strlen(want) == 40 && strspn(want, "0123456789abcdefABCDEF") == 40) {
		git_oid oid;
		if (lg->oid_fromstr(&oid, want) == 0 && lg->commit_lookup(ret, repo, &oid) == 0) {
			lg->oid_tostr(full, 41, &oid);
			return 0;
		}
		return child_fail(c, -ENOENT,
				  "commit %s is not in the repository (it must be reachable from a branch or "
				  "a tag)", want);
	}
	const char *name = want;
	bool branch = true, tag = true;
	if (!strncmp(want, "refs/heads/", 11)) {
		name = want + 11;
		tag = false;
	} else if (!strncmp(want, "refs/tags/", 10)) {
		name = want + 10;
		branch = false;
	}
	char path[300];
	if (branch) {
		snprintf(path, sizeof(path), "refs/remotes/origin/%s", name);
		if (lg->reference_lookup(&r, repo, path) == 0) {
			snprintf(full, 256, "refs/heads/%s", name);
			goto peel;
		}
	}
	if (tag) {
		snprintf(path, sizeof(path), "refs/tags/%s", name);
		if (lg->reference_lookup(&r, repo, path) == 0) {
			snprintf(full, 256, "refs/tags/%s", name);
			goto peel;
		}
	}
	return child_fail(c, -ENOENT, "'%s' is not a %s of the repository", want,
			  branch && tag ? "branch, a tag or a commit" : branch ? "branch" : "tag");
peel:
	rc = lg->reference_peel(&obj, r, GIT_OBJECT_COMMIT);
	lg->reference_free(r);
	if (rc < 0)
		return child_fail(c, -ENOENT, "'%s' does not point at a commit", full);
	*ret = (git_commit *)obj;
	return 0;
}

static void read_commit(git_commit *commit, struct sw_commit_info *info)
{
	lg->oid_tostr(info->sha, sizeof(info->sha), lg->commit_id(commit));
	const char *msg = lg->commit_message(commit);
	size_t n = msg ? strlen(msg) : 0;
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r' || msg[n - 1] == ' ' || msg[n - 1] == '\t'))
		n--;
	clean_text(msg ? msg : "", n, info->message, sizeof(info->message), true);
	const git_signature *a = lg->commit_author(commit);
	char raw[600];
	snprintf(raw, sizeof(raw), "%s <%s>", a && a->name ? a->name : "",
		 a && a->email ? a->email : "");
	clean_text(raw, strlen(raw), info->author, sizeof(info->author), false);
}

/* The failure of a libgit2 call as one clean sentence. */
static void describe_failure(struct child *c, int rc, int *code, char *out, size_t cap)
{
	if (c->code) {
		*code = c->code;
		snprintf(out, cap, "%s", c->msg);
		return;
	}
	const git_error *e = lg->error_last();
	const char *raw = e && e->message ? e->message : "unknown error";
	char msg[400];
	clean_text(raw, strlen(raw), msg, sizeof(msg), false);
	if (c->keydir) { /* the key file's directory never leaves the child */
		char *at;
		while ((at = strstr(msg, c->keydir)))
			memset(at, '*', strlen(c->keydir));
	}
	/* nor does the control plane's own path of the clone */
	size_t dn = strlen(c->dest);
	for (char *at; dn > sizeof("<clone>") && (at = strstr(msg, c->dest));) {
		memcpy(at, "<clone>", 7);
		memmove(at + 7, at + dn, strlen(at + dn) + 1);
	}
	const char *where = c->host[0] ? c->host : "the repository";
	if (rc == GIT_EAUTH) {
		*code = -EACCES;
		auth_sentence(c->kind == SW_GIT_URL_SSH ? KEY_REFUSED
			      : c->f->https_token    ? TOKEN_REFUSED
						     : TOKEN_NEEDED,
			      where, out, cap);
	} else if (strstr(msg, "failed to resolve address")) {
		*code = -EHOSTUNREACH;
		snprintf(out, cap, "could not resolve host %s", where);
	} else if (strstr(msg, "failed to connect")) {
		*code = -ECONNREFUSED;
		snprintf(out, cap, "could not connect to %s (%s)", where, msg);
	} else if (rc == GIT_ENOTFOUND || strstr(msg, "could not find repository") ||
		   strstr(msg, "failed to resolve path") ||
		   strstr(msg, "does not appear to be a git repository")) {
		*code = -ENOENT;
		snprintf(out, cap, "no git repository was found at the URL (%s)", msg);
	} else {
		*code = -EIO;
		snprintf(out, cap, "could not fetch the repository: %s", msg);
	}
}

static void __attribute__((noreturn)) child_main(struct child *c)
{
	struct sw_commit_info info;
	memset(&info, 0, sizeof(info));
	git_repository *repo = NULL;
	git_commit *commit = NULL;
	int rc, code = 0;
	char msg[512] = "";

	/* Opened here, in the child, and initialised for it: the parent never
	 * maps libgit2 (libgit2.h). glibc resets the loader's lock in a forked
	 * child; should the loader's state be torn anyway, the child fails or
	 * is killed at the deadline, as for any other fault in it. */
	lg = sw_libgit2(msg, sizeof(msg));
	if (!lg) {
		code = -ENOTSUP;
		goto report;
	}
	/* no system, XDG or global configuration: nothing of the host's git
	 * setup (insteadOf, credential helpers, proxies) applies */
	lg->libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, "");
	lg->libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, "");
	lg->libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "");
	lg->libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_PROGRAMDATA, "");
	const char *ca = c->f->ca_file ? c->f->ca_file : CA_BUNDLE;
	if (c->kind == SW_GIT_URL_HTTPS && access(ca, R_OK) == 0)
		lg->libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca, NULL);

	git_clone_options co = GIT_CLONE_OPTIONS_INIT;
	co.local = GIT_CLONE_NO_LOCAL;
	co.checkout_opts.checkout_strategy = GIT_CHECKOUT_NONE;
	co.fetch_opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_ALL;
	co.fetch_opts.callbacks.credentials = credentials_cb;
	co.fetch_opts.callbacks.certificate_check = certificate_cb;
	co.fetch_opts.callbacks.transfer_progress = transfer_cb;
	co.fetch_opts.callbacks.sideband_progress = sideband_cb;
	co.fetch_opts.callbacks.payload = c;
	rc = lg->clone(&repo, c->f->url, c->dest, &co);
	remove_key_files(c);
	if (rc < 0)
		goto failed;

	char full[256] = "";
	if ((rc = resolve_ref(c, repo, &commit, full)) < 0)
		goto failed;
	git_checkout_options ck = GIT_CHECKOUT_OPTIONS_INIT;
	ck.checkout_strategy = GIT_CHECKOUT_FORCE;
	ck.progress_cb = checkout_cb;
	ck.progress_payload = c;
	if ((rc = lg->checkout_tree(repo, (const git_object *)commit, &ck)) < 0)
		goto failed;
	read_commit(commit, &info);
	snprintf(info.ref, sizeof(info.ref), "%s", full);
	lg->commit_free(commit);
	commit = NULL;
	lg->repository_free(repo);
	repo = NULL;

	char gitdir[PATH_MAX];
	snprintf(gitdir, sizeof(gitdir), "%s/.git", c->dest);
	if (remove_tree(gitdir) < 0) {
		child_fail(c, -EIO, "could not remove the clone's .git directory");
		goto failed;
	}
	memcpy(info.host_key, c->host_key, sizeof(info.host_key));
	child_send(MSG_DONE, &info, sizeof(info));
	_exit(0);

failed:
	describe_failure(c, rc, &code, msg, sizeof(msg));
	lg->commit_free(commit);
	lg->repository_free(repo);
report:;
	char payload[sizeof(int32_t) + sizeof(msg)];
	int32_t code32 = code;
	memcpy(payload, &code32, sizeof(code32));
	size_t len = strlen(msg);
	memcpy(payload + sizeof(code32), msg, len);
	child_send(MSG_FAIL, payload, sizeof(code32) + len);
	_exit(1);
}

/* ---- the request, parent to helper ---- */

/* The request crosses the helper's stdin as fields in this order, each a
 * uint32 length (REQ_NULL for NULL) and its bytes, then the flags and the
 * parent's pid. Written field by field from the caller's strings, so no
 * copy of a credential is left in stewardd's memory. */
enum { REQ_URL, REQ_REF, REQ_BRANCH, REQ_PRIVATE_KEY, REQ_PUBLIC_KEY, REQ_SSH_HOST_KEY,
       REQ_HTTPS_USERNAME, REQ_HTTPS_TOKEN, REQ_CA_FILE, REQ_DEST, REQ_KEYDIR, REQ_FIELDS };
#define REQ_NULL UINT32_MAX
#define REQ_MAX (1u << 20) /* the whole request, read by the helper */
struct req_tail {
	int32_t kind;
	int32_t parent;
	uint8_t allow_file, force_key_file;
};

/* On the request's socket: MSG_NOSIGNAL, so a helper gone early is an
 * error here, not a SIGPIPE. */
static int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EPIPE;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int request_write(int fd, const struct sw_git_fetch *f, const char *dest, const char *keydir,
			 enum sw_git_url_kind kind)
{
	const char *v[REQ_FIELDS] = {
		[REQ_URL] = f->url, [REQ_REF] = f->ref, [REQ_BRANCH] = f->branch,
		[REQ_PRIVATE_KEY] = f->private_key, [REQ_PUBLIC_KEY] = f->public_key,
		[REQ_SSH_HOST_KEY] = f->ssh_host_key, [REQ_HTTPS_USERNAME] = f->https_username,
		[REQ_HTTPS_TOKEN] = f->https_token, [REQ_CA_FILE] = f->ca_file, [REQ_DEST] = dest,
		[REQ_KEYDIR] = keydir,
	};
	int r = 0;
	for (int i = 0; i < REQ_FIELDS && r == 0; i++) {
		uint32_t len = v[i] ? (uint32_t)strlen(v[i]) : REQ_NULL;
		r = write_all(fd, &len, sizeof(len));
		if (r == 0 && v[i])
			r = write_all(fd, v[i], len);
	}
	struct req_tail t = { .kind = (int32_t)kind, .parent = (int32_t)getpid(),
			      .allow_file = f->allow_file, .force_key_file = force_key_file };
	return r ? r : write_all(fd, &t, sizeof(t));
}

/* The helper's side: the request from fd 0 into f and c (pointing into
 * buf, which it keeps). false: a request it cannot read. */
static bool request_read(char **buf, struct sw_git_fetch *f, struct child *c, pid_t *parent)
{
	size_t len = 0, cap = 4096;
	char *b = malloc(cap);
	for (;;) {
		if (!b)
			return false;
		if (len == cap) {
			if (cap >= REQ_MAX)
				return false;
			char *nb = realloc(b, cap *= 2);
			if (!nb) {
				free(b);
				return false;
			}
			b = nb;
		}
		ssize_t n = read(0, b + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(b);
			return false;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* Each field is moved down one byte to end with a NUL where its length
	 * was: the strings stay in b. */
	const char *v[REQ_FIELDS];
	size_t off = 0;
	for (int i = 0; i < REQ_FIELDS; i++) {
		uint32_t n;
		if (len - off < sizeof(n))
			goto bad;
		memcpy(&n, b + off, sizeof(n));
		if (n == REQ_NULL) {
			v[i] = NULL;
			off += sizeof(n);
			continue;
		}
		if (n > len - off - sizeof(n))
			goto bad;
		memmove(b + off, b + off + sizeof(n), n);
		b[off + n] = '\0';
		v[i] = b + off;
		off += sizeof(n) + n;
	}
	struct req_tail t;
	if (len - off != sizeof(t) || !v[REQ_URL] || !v[REQ_DEST])
		goto bad;
	memcpy(&t, b + off, sizeof(t));
	*f = (struct sw_git_fetch){
		.url = v[REQ_URL], .ref = v[REQ_REF], .branch = v[REQ_BRANCH],
		.private_key = v[REQ_PRIVATE_KEY], .public_key = v[REQ_PUBLIC_KEY],
		.ssh_host_key = v[REQ_SSH_HOST_KEY], .https_username = v[REQ_HTTPS_USERNAME],
		.https_token = v[REQ_HTTPS_TOKEN], .ca_file = v[REQ_CA_FILE], .allow_file = t.allow_file,
	};
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->kind = (enum sw_git_url_kind)t.kind;
	c->dest = v[REQ_DEST];
	c->keydir = v[REQ_KEYDIR];
	url_host(f->url, c->host, sizeof(c->host));
	force_key_file = t.force_key_file;
	*parent = (pid_t)t.parent;
	*buf = b;
	return true;
bad:
	free(b);
	return false;
}

/* steward-git's main (src/main/steward_git.c): a fresh process, started
 * by sw_git_fetch() with the request on stdin and the report pipe on
 * REPORT_FD, its signals at their defaults and none blocked. */
int sw_git_fetch_helper_main(void)
{
	/* Ended if the thread that started it ends (the parent's deadline and
	 * cancel need it alive); started by another process: refused. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct sw_git_fetch f;
	struct child c;
	char *buf = NULL;
	pid_t parent = 0;
	if (fcntl(REPORT_FD, F_GETFD) < 0)
		return 2;
	if (!request_read(&buf, &f, &c, &parent) || getppid() != parent)
		_exit(2);
	signal(SIGPIPE, SIG_IGN); /* a closed connection is an error, not a death */
	if (close_range(REPORT_FD + 1, ~0u, 0) < 0)
		for (int fd = REPORT_FD + 1; fd < 1024; fd++)
			close(fd);
	child_main(&c);
}

/* Where steward-git is: STEWARD_GIT_HELPER (tests: the build's), else
 * next to this program. */
static int helper_path(char *out, size_t cap)
{
	const char *env = getenv("STEWARD_GIT_HELPER");
	if (env && *env) {
		snprintf(out, cap, "%s", env);
	} else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return -ENOENT;
		self[n] = '\0';
		char *slash = strrchr(self, '/');
		if (!slash)
			return -ENOENT;
		*slash = '\0';
		snprintf(out, cap, "%s/steward-git", self);
	}
	return access(out, X_OK) == 0 ? 0 : -ENOENT;
}

/* The environment steward-git gets: none of stewardd's (its database URL,
 * its settings), only what the C library, OpenSSL, libssh2 (HOME: libgit2
 * 1.5 fails an ssh fetch without it, reading known_hosts) and a sanitizer
 * read. */
static void helper_env(const char **envp, size_t cap)
{
	static const char *const keep[] = { "HOME=", "TMPDIR=", "SSL_CERT_FILE=", "SSL_CERT_DIR=", "ASAN_OPTIONS=",
					    "UBSAN_OPTIONS=", "LSAN_OPTIONS=", "TSAN_OPTIONS=" };
	extern char **environ;
	size_t n = 0;
	for (char **e = environ; *e && n + 1 < cap; e++)
		for (size_t i = 0; i < SW_ARRAY_SIZE(keep); i++)
			if (strncmp(*e, keep[i], strlen(keep[i])) == 0) {
				envp[n++] = *e;
				break;
			}
	envp[n] = NULL;
}

/* ---- the parent ---- */

struct reader {
	char buf[4 * PIPE_BUF];
	size_t len;
	bool done, failed;
	struct sw_commit_info info;
	int code;
	char msg[512];
};

static void read_frames(struct reader *rd, sw_driver_log_fn log, void *log_arg)
{
	size_t off = 0;
	while (rd->len - off >= sizeof(struct msg_head)) {
		struct msg_head h;
		memcpy(&h, rd->buf + off, sizeof(h));
		if (h.len > MSG_PAYLOAD_MAX) { /* never written: treat as a crash */
			rd->len = 0;
			return;
		}
		if (rd->len - off < sizeof(h) + h.len)
			break;
		const char *p = rd->buf + off + sizeof(h);
		if (h.type == MSG_LINE && log) {
			log(log_arg, p, h.len);
		} else if (h.type == MSG_DONE && h.len == sizeof(rd->info)) {
			memcpy(&rd->info, p, sizeof(rd->info));
			rd->info.sha[sizeof(rd->info.sha) - 1] = rd->info.ref[sizeof(rd->info.ref) - 1] = '\0';
			rd->info.message[sizeof(rd->info.message) - 1] = '\0';
			rd->info.author[sizeof(rd->info.author) - 1] = '\0';
			rd->info.host_key[sizeof(rd->info.host_key) - 1] = '\0';
			rd->done = true;
		} else if (h.type == MSG_FAIL && h.len >= sizeof(int32_t)) {
			int32_t code;
			memcpy(&code, p, sizeof(code));
			rd->code = code < 0 ? code : -EIO;
			size_t n = SW_MIN(h.len - sizeof(code), sizeof(rd->msg) - 1);
			memcpy(rd->msg, p + sizeof(code), n);
			rd->msg[n] = '\0';
			rd->failed = true;
		}
		off += sizeof(h) + h.len;
	}
	memmove(rd->buf, rd->buf + off, rd->len - off);
	rd->len -= off;
}

/* Reads the child's frames until it closes the pipe, or until the cancel
 * flag or the deadline trips: 0, -ECANCELED or -ETIMEDOUT. */
static int watch_child(int fd, const struct sw_git_fetch *f, uint64_t deadline_ms, struct reader *rd,
		       sw_driver_log_fn log, void *log_arg)
{
	for (;;) {
		if (f->cancel && __atomic_load_n(f->cancel, __ATOMIC_RELAXED))
			return -ECANCELED;
		uint64_t now = sw_now_ms();
		if (now >= deadline_ms)
			return -ETIMEDOUT;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int wait = (int)SW_MIN((uint64_t)SW_GIT_POLL_MS, deadline_ms - now);
		int n = poll(&pfd, 1, wait);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		ssize_t r = read(fd, rd->buf + rd->len, sizeof(rd->buf) - rd->len);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return 0;
		rd->len += (size_t)r;
		read_frames(rd, log, log_arg);
	}
}

static bool ref_ok(const char *ref)
{
	const char *msg;
	return !ref || sw_valid_git_branch(sw_str_cstr(ref), &msg);
}

int sw_git_fetch(const struct sw_git_fetch *f, const char *dest, struct sw_commit_info *ret,
		 sw_driver_log_fn log, void *log_arg, char *err, size_t errlen)
{
	const char *why;
	enum sw_git_url_kind kind;
	struct reader *rd = NULL;
	char keydir[PATH_MAX] = "";
	int fds[2] = { -1, -1 }, req[2] = { -1, -1 };
	int r;

	if (!f->url || !sw_valid_git_url(sw_str_cstr(f->url), f->allow_file, &kind, &why)) {
		snprintf(err, errlen, "the repository URL is refused: it %s", f->url ? why : "is missing");
		return -EINVAL;
	}
	if (!ref_ok(f->ref) || !ref_ok(f->branch)) {
		snprintf(err, errlen, "the git ref is not a valid branch, tag or commit name");
		return -EINVAL;
	}
	if (kind == SW_GIT_URL_HTTPS && f->ca_file && access(f->ca_file, R_OK) != 0) {
		snprintf(err, errlen, "the CA bundle for https git servers (GIT_CA_FILE) cannot be read");
		return -EIO;
	}
	struct stat st;
	if (lstat(dest, &st) == 0 || errno != ENOENT) {
		snprintf(err, errlen, "the clone directory already exists");
		return -EEXIST;
	}

	if (kind == SW_GIT_URL_SSH && f->private_key) {
		const char *tmp = getenv("TMPDIR");
		snprintf(keydir, sizeof(keydir), "%s/steward-key-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
		if (!mkdtemp(keydir)) { /* mode 0700 */
			r = -errno;
			keydir[0] = '\0';
			snprintf(err, errlen, "could not make a private directory for the deploy key");
			goto out;
		}
	}
	rd = calloc(1, sizeof(*rd));
	if (!rd) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (log) {
		char line[LINE_MAX_LEN];
		int n = snprintf(line, sizeof(line), "Fetching %s (%s%s)", f->url,
				 f->ref ? "ref " : f->branch ? "branch " : "the default branch",
				 f->ref ? f->ref : f->branch ? f->branch : "");
		log(log_arg, line, (size_t)SW_MIN((size_t)n, sizeof(line) - 1));
	}

	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, errlen, "could not start the git fetch");
		goto out;
	}
	char helper[PATH_MAX];
	if (helper_path(helper, sizeof(helper)) < 0) {
		r = -ENOENT;
		snprintf(err, errlen, "the git fetch helper steward-git is not next to this program");
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, req) < 0) {
		r = -errno;
		snprintf(err, errlen, "could not start the git fetch");
		goto out;
	}
	/* A new process image, not a fork: a forked copy of this threaded
	 * process could find a lock another thread held at the fork (the
	 * allocator's under ASan: a child stuck until the deadline). */
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_adddup2(&fa, req[0], 0);
	posix_spawn_file_actions_adddup2(&fa, fds[1], REPORT_FD);
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	const char *envp[16];
	helper_env(envp, SW_ARRAY_SIZE(envp));
	char *const argv[] = { "steward-git", NULL };
	pid_t pid;
	int se = posix_spawn(&pid, helper, &fa, &attr, argv, (char *const *)envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (se != 0) {
		r = -se;
		snprintf(err, errlen, "could not start the git fetch");
		goto out;
	}
	close(req[0]);
	req[0] = -1;
	close(fds[1]);
	fds[1] = -1;
	/* A helper that dies before reading it all fails below, by its status. */
	request_write(req[1], f, dest, keydir[0] ? keydir : NULL, kind);
	close(req[1]);
	req[1] = -1;

	unsigned timeout_s = f->timeout_s ? f->timeout_s : SW_GIT_FETCH_TIMEOUT_S;
	int stop = watch_child(fds[0], f, sw_now_ms() + (uint64_t)timeout_s * 1000, rd, log, log_arg);
	if (stop < 0)
		kill(pid, SIGKILL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (stop == -ECANCELED) {
		r = stop;
		snprintf(err, errlen, "the git fetch was cancelled");
	} else if (stop == -ETIMEDOUT) {
		r = stop;
		snprintf(err, errlen, "the git fetch did not finish within %u seconds", timeout_s);
	} else if (stop < 0) {
		r = stop;
		snprintf(err, errlen, "the git fetch could not be watched");
	} else if (rd->done && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		*ret = rd->info;
		if (log) {
			char line[LINE_MAX_LEN];
			int n = snprintf(line, sizeof(line), "Checked out %s at %s", ret->ref, ret->sha);
			log(log_arg, line, (size_t)SW_MIN((size_t)n, sizeof(line) - 1));
		}
		r = 0;
	} else if (rd->failed) {
		r = rd->code;
		snprintf(err, errlen, "%s", rd->msg);
	} else {
		r = -EIO;
		if (WIFSIGNALED(status))
			snprintf(err, errlen, "the git fetch process ended unexpectedly (signal %d)", WTERMSIG(status));
		else
			snprintf(err, errlen, "the git fetch process ended unexpectedly");
	}

out:
	for (int i = 0; i < 2; i++)
		if (req[i] >= 0)
			close(req[i]);
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	if (keydir[0])
		remove_tree(keydir);
	if (r < 0)
		remove_tree(dest);
	free(rd);
	return r;
}
