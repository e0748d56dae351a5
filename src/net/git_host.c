/* The repository picker's client of git host APIs (git_host.h).
 *
 * libcurl is the process's one copy, loaded on first use (libcurl.h).
 *
 * Why the answer is normalised on the worker: a 4 MiB JSON document takes
 * milliseconds to parse, which the loop must not spend. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "steward/net/git_host.h"
#include "steward/base/json.h"
#include "steward/net/libcurl.h"

bool sw_git_provider_parse(const char *s, enum sw_git_provider *ret)
{
	static const char *const names[] = { "GITHUB", "GITLAB", "BITBUCKET", "GENERIC" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum sw_git_provider)i;
			return true;
		}
	return false;
}

/* ---- normalising ---- */

static const char *member_string(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* An https clone URL without a user name ("https://user@host/..." ->
 * "https://host/..."), into buf; NULL when href is NULL. */
static const char *without_user(const char *href, char *buf, size_t cap)
{
	if (!href)
		return NULL;
	const char *rest = strstr(href, "://");
	const char *at = rest ? strchr(rest + 3, '@') : NULL;
	const char *slash = rest ? strchr(rest + 3, '/') : NULL;
	if (!at || (slash && slash < at) || (size_t)(rest + 3 - href) + strlen(at + 1) >= cap)
		return href;
	snprintf(buf, cap, "%.*s%s", (int)(rest + 3 - href), href, at + 1);
	return buf;
}

static void write_repository(struct sw_json *j, const char *full_name, const char *https,
			     const char *ssh, const char *branch, bool private)
{
	sw_json_object_begin(j);
	sw_json_key(j, "fullName");
	sw_json_cstr(j, full_name);
	sw_json_key(j, "cloneUrlHttps");
	sw_json_cstr(j, https);
	sw_json_key(j, "cloneUrlSsh");
	sw_json_cstr(j, ssh);
	sw_json_key(j, "defaultBranch");
	sw_json_cstr(j, branch);
	sw_json_key(j, "private");
	sw_json_bool(j, private);
	sw_json_object_end(j);
}

/* One item of a host's list; false when it has no full name. */
static bool write_item(struct sw_json *j, enum sw_git_provider p, json_t *item)
{
	char buf[2048];
	const char *https = NULL, *ssh = NULL, *name, *branch;
	bool private;
	switch (p) {
	case SW_GIT_GITHUB:
		name = member_string(item, "full_name");
		https = member_string(item, "clone_url");
		ssh = member_string(item, "ssh_url");
		branch = member_string(item, "default_branch");
		private = json_is_true(json_object_get(item, "private"));
		break;
	case SW_GIT_GITLAB:
		name = member_string(item, "path_with_namespace");
		https = member_string(item, "http_url_to_repo");
		ssh = member_string(item, "ssh_url_to_repo");
		branch = member_string(item, "default_branch");
		/* "private" and "internal" are both not public. */
		private = !member_string(item, "visibility") ||
			  strcmp(member_string(item, "visibility"), "public") != 0;
		break;
	default: {
		json_t *clone = json_object_get(json_object_get(item, "links"), "clone"), *c;
		size_t i;
		name = member_string(item, "full_name");
		branch = member_string(json_object_get(item, "mainbranch"), "name");
		private = json_is_true(json_object_get(item, "is_private"));
		json_array_foreach(clone, i, c) {
			const char *kind = member_string(c, "name");
			if (kind && strcmp(kind, "https") == 0)
				https = without_user(member_string(c, "href"), buf, sizeof(buf));
			else if (kind && strcmp(kind, "ssh") == 0)
				ssh = member_string(c, "href");
		}
		break;
	}
	}
	if (!name)
		return false;
	write_repository(j, name, https, ssh, branch, private);
	return true;
}

int sw_git_host_normalise(enum sw_git_provider p, const char *body, size_t len, struct sw_buf *out)
{
	json_error_t je;
	json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	json_t *items = p == SW_GIT_BITBUCKET ? json_object_get(doc, "values") : doc;
	if (!doc || !json_is_array(items) || p == SW_GIT_GENERIC) {
		json_decref(doc);
		return -EBADMSG;
	}
	struct sw_buf b = { 0 };
	struct sw_json j;
	json_t *item;
	size_t i, written = 0;
	sw_json_init(&j, &b);
	sw_json_array_begin(&j);
	json_array_foreach(items, i, item) {
		if (written < SW_GIT_HOST_MAX_REPOSITORIES && json_is_object(item) && write_item(&j, p, item))
			written++;
	}
	sw_json_array_end(&j);
	json_decref(doc);
	int r = sw_json_finish(&j);
	r = r ?: sw_buf_append(out, b.data, b.len);
	sw_buf_release(&b);
	return r < 0 ? -ENOMEM : 0;
}

/* ---- asking the host ---- */

struct sink {
	struct sw_buf *buf;
	bool too_large;
};

static size_t sink_write(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n;
	if (s->buf->len + len > SW_GIT_HOST_MAX_RESPONSE) {
		s->too_large = true;
		return 0; /* aborts the transfer */
	}
	return sw_buf_append(s->buf, p, len) == 0 ? len : 0;
}

/* The request's URL and its credential header, both in allocated text. */
static int request_text(const struct sw_git_host_request *q, char **ret_url, char **ret_auth)
{
	static const char *const paths[] = {
		"/user/repos?per_page=100&sort=updated",
		"/projects?membership=true&per_page=100&order_by=last_activity_at",
		"/repositories?role=member&pagelen=100&sort=-updated_on",
	};
	char *url = NULL, *auth = NULL, *pair = NULL;
	if (asprintf(&url, "%s%s", q->api_base_url, paths[q->provider]) < 0)
		return -ENOMEM;
	if (q->provider == SW_GIT_GITHUB) {
		if (asprintf(&auth, "Authorization: Bearer %s", q->token) < 0)
			auth = NULL;
	} else if (q->provider == SW_GIT_GITLAB) {
		if (asprintf(&auth, "PRIVATE-TOKEN: %s", q->token) < 0)
			auth = NULL;
	} else {
		int n = asprintf(&pair, "%s:%s", q->username ? q->username : "", q->token);
		if (n < 0)
			pair = NULL;
		size_t cap = n < 0 ? 0 : sizeof("Authorization: Basic ") + 4 * ((size_t)n / 3 + 1);
		auth = n < 0 ? NULL : malloc(cap);
		if (auth) {
			int e = snprintf(auth, cap, "Authorization: Basic ");
			EVP_EncodeBlock((unsigned char *)auth + e, (const unsigned char *)pair, n);
		}
		if (pair) {
			OPENSSL_cleanse(pair, (size_t)n);
			free(pair);
		}
	}
	if (auth) {
		*ret_url = url;
		*ret_auth = auth;
		return 0;
	}
	free(url);
	return -ENOMEM;
}

enum sw_git_host_outcome sw_git_host_repositories(const struct sw_git_host_request *r,
						  struct sw_buf *out, char *why, size_t whylen)
{
	const struct sw_libcurl *curl = sw_libcurl(NULL, 0);
	if (!curl) {
		snprintf(why, whylen, "The git host cannot be asked: libcurl cannot be loaded.");
		return SW_GIT_HOST_UNAVAILABLE;
	}
	char *url, *auth;
	if (r->provider == SW_GIT_GENERIC || request_text(r, &url, &auth) < 0) {
		snprintf(why, whylen, "The git host cannot be asked.");
		return SW_GIT_HOST_UNAVAILABLE;
	}
	enum sw_git_host_outcome outcome = SW_GIT_HOST_UNAVAILABLE;
	struct sw_buf body = { 0 };
	struct sink sink = { &body, false };
	struct curl_slist *headers = NULL, *h;
	CURL *c = curl->easy_init();
	h = curl->slist_append(headers, auth);
	headers = h ? h : headers;
	h = curl->slist_append(headers, r->provider == SW_GIT_GITHUB ? "Accept: application/vnd.github+json"
								    : "Accept: application/json");
	headers = h ? h : headers;
	if (!c || !headers || !h) {
		snprintf(why, whylen, "The git host cannot be asked (out of memory).");
		goto out;
	}
	curl->easy_setopt(c, CURLOPT_URL, url);
	curl->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl->easy_setopt(c, CURLOPT_USERAGENT, "Steward");
	curl->easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl->easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl->easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	curl->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)SW_GIT_HOST_MAX_RESPONSE);
	curl->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)SW_GIT_HOST_CONNECT_TIMEOUT_MS);
	curl->easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)SW_GIT_HOST_TIMEOUT_MS);
	curl->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	CURLcode cr = curl->easy_perform(c);
	long status = 0;
	curl->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (sink.too_large || cr == CURLE_FILESIZE_EXCEEDED)
		snprintf(why, whylen, "The git host answered more than %d MiB.",
			 SW_GIT_HOST_MAX_RESPONSE / (1024 * 1024));
	else if (cr == CURLE_OPERATION_TIMEDOUT)
		snprintf(why, whylen, "The git host did not answer within %d s.",
			 SW_GIT_HOST_TIMEOUT_MS / 1000);
	else if (cr != CURLE_OK)
		snprintf(why, whylen, "The git host could not be reached (%s).",
			 cr == CURLE_COULDNT_CONNECT ? "connection refused or unreachable" :
			 cr == CURLE_COULDNT_RESOLVE_HOST ? "its name does not resolve" :
			 cr == CURLE_PEER_FAILED_VERIFICATION ? "its TLS certificate is not trusted" :
								"transfer failed");
	else if (status == 401 || status == 403) {
		snprintf(why, whylen, "The git host refused the token (HTTP %ld).", status);
		outcome = SW_GIT_HOST_REJECTED;
	} else if (status < 200 || status > 299)
		snprintf(why, whylen, "The git host answered HTTP %ld.", status);
	else if (sw_git_host_normalise(r->provider, (const char *)body.data, body.len, out) < 0)
		snprintf(why, whylen, "The git host's answer is not the list of repositories its API "
				      "documents.");
	else
		outcome = SW_GIT_HOST_OK;
out:
	if (c)
		curl->easy_cleanup(c);
	for (h = headers; h; h = h->next)
		OPENSSL_cleanse(h->data, strlen(h->data));
	if (headers)
		curl->slist_free_all(headers);
	OPENSSL_cleanse(auth, strlen(auth));
	free(auth);
	free(url);
	sw_buf_release(&body);
	return outcome;
}
