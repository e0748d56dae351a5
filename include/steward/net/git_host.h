/* The repository picker: asks a git host's API which repositories a
 * stored token can see, and answers them in one shape for every host.
 *
 * Requests (the documented APIs; base is the credential's apiBaseUrl):
 *   GITHUB     GET {base}/user/repos?per_page=100&sort=updated
 *              Authorization: Bearer <token>, Accept: application/vnd.github+json
 *   GITLAB     GET {base}/projects?membership=true&per_page=100&order_by=last_activity_at
 *              PRIVATE-TOKEN: <token>
 *   BITBUCKET  GET {base}/repositories?role=member&pagelen=100&sort=-updated_on
 *              Authorization: Basic base64(<username>:<token>)
 * Only the host's first page is read (100 repositories).
 *
 * libcurl does the HTTP (DESIGN.md; loaded on first use, libcurl.h),
 * speaking http and https only, following no
 * redirect, within SW_GIT_HOST_TIMEOUT_MS and reading at most
 * SW_GIT_HOST_MAX_RESPONSE bytes. sw_git_host_repositories() blocks:
 * worker threads only. The token goes into one request header, which is
 * wiped after use; nothing here logs. */
#ifndef STEWARD_GIT_HOST_H
#define STEWARD_GIT_HOST_H

#include "steward/base/base.h"
#include "steward/base/buf.h"

#define SW_GIT_HOST_TIMEOUT_MS 10000
#define SW_GIT_HOST_CONNECT_TIMEOUT_MS 5000
#define SW_GIT_HOST_MAX_RESPONSE (4 * 1024 * 1024)
/* Repositories of one answer written out at most. */
#define SW_GIT_HOST_MAX_REPOSITORIES 1000

enum sw_git_provider { SW_GIT_GITHUB, SW_GIT_GITLAB, SW_GIT_BITBUCKET, SW_GIT_GENERIC };

/* "GITHUB" ... -> the provider; false for any other text. */
bool sw_git_provider_parse(const char *s, enum sw_git_provider *ret);

enum sw_git_host_outcome {
	SW_GIT_HOST_OK,
	SW_GIT_HOST_REJECTED,    /* the host answered 401 or 403: the token is refused */
	SW_GIT_HOST_UNAVAILABLE, /* no answer, another status, too large, not the shape expected */
};

struct sw_git_host_request {
	enum sw_git_provider provider; /* GITHUB, GITLAB or BITBUCKET */
	const char *api_base_url;      /* no trailing '/' */
	const char *username;          /* BITBUCKET; else ignored */
	const char *token;
};

/* Asks the host. OK: out holds the normalised JSON array (see
 * sw_git_host_normalise()). Otherwise why (whylen bytes) holds a sentence
 * for the client, naming no secret. Blocking. */
enum sw_git_host_outcome sw_git_host_repositories(const struct sw_git_host_request *r,
						  struct sw_buf *out, char *why, size_t whylen);

/* Turns a host's answer (body, len bytes) into a JSON array of
 * {"fullName", "cloneUrlHttps", "cloneUrlSsh", "defaultBranch", "private"}
 * appended to out (strings or null; private a boolean): GitHub's array of
 * {full_name, clone_url, ssh_url, default_branch, private}; GitLab's array
 * of {path_with_namespace, http_url_to_repo, ssh_url_to_repo,
 * default_branch, visibility}; Bitbucket's {"values": [{full_name,
 * is_private, mainbranch.name, links.clone[{name, href}]}]} (user names
 * removed from https clone URLs). Items without a full name are skipped;
 * at most SW_GIT_HOST_MAX_REPOSITORIES are written. 0; -EBADMSG when body
 * is not JSON of that shape (out unchanged); -ENOMEM. Pure; fuzzed
 * (fuzz/fuzz_git_host.c). */
int sw_git_host_normalise(enum sw_git_provider p, const char *body, size_t len, struct sw_buf *out);

#endif
