/* Sources of a deployment (src/deploy/git_fetch.c, archive.c, plan.c):
 * a git clone, an uploaded archive unpacked, and the build plan detected
 * in the tree. All blocking: run on a runner thread. Errors are 0 or
 * -errno with one sentence in err for the deployment's errorMessage. */
#ifndef STEWARD_SOURCE_H
#define STEWARD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "steward/driver/driver.h"

/* ---- git (libgit2) ---- */
struct sw_git_fetch {
	const char *url;          /* validated by sw_valid_git_url() when stored */
	const char *ref;          /* a branch, a tag or a commit sha; NULL: the source's branch */
	const char *branch;       /* the git source's branch */
	const char *private_key;  /* OpenSSH private key (ssh URLs), or NULL; wiped by the caller */
	const char *public_key;   /* its authorized_keys line */
	const char *ssh_host_key; /* "<type> SHA256:<base64>" pinned, or NULL: accept and report */
	const char *https_username; /* with https_token: HTTP Basic when the server asks */
	const char *https_token;  /* NULL: none (public repositories); wiped by the caller */
	const char *ca_file;      /* PEM CA bundle for https, NULL: the system's */
	bool allow_file;          /* file:// allowed (not in production) */
	const volatile bool *cancel;
	unsigned timeout_s;       /* the whole fetch */
};
struct sw_commit_info {
	char sha[41];
	char ref[256];            /* the full ref resolved, e.g. refs/heads/main; or the sha */
	char message[1024];       /* the summary line and body, cut */
	char author[256];         /* "Name <email>" */
	char host_key[128];       /* ssh: "<type> SHA256:<base64>" of the server; else "" */
};
/* Clones url into dest (a directory that must not exist), checks out the
 * ref, and reads the commit's metadata from the clone into ret (set only
 * on success). dest then holds the commit's files without .git. Refuses
 * (-EINVAL) a URL sw_valid_git_url() refuses (file:// unless allow_file;
 * any scheme but https, ssh and file; local paths), and a ref or branch
 * sw_valid_git_branch() refuses. ref: NULL is branch, and both NULL the
 * remote's default branch; a 40-hex sha must be a commit reachable from a
 * branch or tag; "refs/heads/x" and "refs/tags/x" name one kind; any other
 * name is a branch, else a tag. ssh offers the deploy key (private_key)
 * once; https sends https_username and https_token once when the server
 * asks (none: -EACCES). The ssh host key must be ssh_host_key when that is
 * set (another: -EACCES naming both); else it is accepted; either way it
 * is logged and returned in ret->host_key. Progress lines go to log (may be
 * NULL), from the calling thread. The clone runs in a forked child, so
 * the cancel flag and timeout_s (0: 600 s) end it within 100 ms wherever
 * it is. Errors, each with a sentence in err: -EEXIST (dest exists),
 * -EHOSTUNREACH (host does not resolve), -ECONNREFUSED, -EACCES (key
 * refused, credentials needed, bad certificate), -ENOENT (no repository,
 * unknown ref, empty repository), -EFBIG (over 2 GiB received),
 * -ETIMEDOUT, -ECANCELED, -EIO; dest is then removed. err never holds
 * the key or a credential. */
int sw_git_fetch(const struct sw_git_fetch *f, const char *dest, struct sw_commit_info *ret,
		 sw_driver_log_fn log, void *log_arg, char *err, size_t errlen);

/* steward-git's main: runs one fetch that sw_git_fetch() started (the
 * request on stdin, frames on fd 3) and never returns but when started
 * any other way (2). */
int sw_git_fetch_helper_main(void);

/* ---- archives (libarchive) ---- */
struct sw_archive_limits {
	uint64_t max_bytes;    /* total unpacked bytes */
	uint64_t max_entries;
	unsigned max_depth;    /* path components */
};
/* Unpacks a tar, tar.gz or zip archive into dest (created). Refuses with
 * -EINVAL and a sentence naming the entry: absolute paths, ".." components,
 * symbolic or hard links whose target leaves the tree, device files, FIFOs,
 * sockets; with -EFBIG past a limit. Nothing outside dest is ever written. */
int sw_archive_unpack(const char *archive_path, const char *dest, const struct sw_archive_limits *lim,
		      char *err, size_t errlen);

/* ---- the build plan ---- */
struct sw_build_plan {
	char dockerfile[256];   /* relative to the context */
	char stack[16];         /* "dockerfile", "static", "node", "python", "go" */
	bool generated;         /* Steward wrote the Dockerfile (".steward.Dockerfile") */
};
struct sw_app_build {
	const char *dockerfile_path; /* the application's setting, or NULL: detect */
	const char *build_context;   /* relative to the source root, "." by default */
	const char *const *start_command; /* exec form, or NULL */
	unsigned port;
	const char *base_image;      /* FROM of generated Dockerfiles */
};
/* Decides how to build the tree at root: the configured Dockerfile
 * (relative to the build context), else a Dockerfile at the context's
 * root, else a known stack, first marker wins: Go (go.mod), Python
 * (requirements.txt or pyproject.toml), Node (package.json), static files
 * (index.html), rendered as <context>/.steward.Dockerfile with every FROM
 * replaced by base_image when it is set (plans: src/deploy/plan.c). A
 * Dockerfile must be a regular file that stays inside the context once
 * links are resolved; the context must stay inside root. ret->dockerfile
 * is relative to the context. -ENOENT (configured Dockerfile or context
 * missing, nothing detected, a Python app with no entry point and no
 * start command), -EINVAL (a link leaving the tree, a bad path, base
 * image or start command), -ENOTDIR, -EIO; a sentence in err. */
int sw_build_plan_detect(const char *root, const struct sw_app_build *app, struct sw_build_plan *ret,
			 char *err, size_t errlen);

#endif
