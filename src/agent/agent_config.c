/* steward-agent's configuration, read once from the environment. Every
 * refusal names the variable, so an operator reading the unit's log knows
 * which line of the unit file to fix. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/agent/daemon.h"
#include "steward/base/secret.h"

static const char *get(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int copy(char *dst, size_t cap, const char *src, const char *name, char *err,
		size_t errlen)
{
	if (strlen(src) >= cap) {
		snprintf(err, errlen, "%s is longer than %zu bytes", name, cap - 1);
		return -EINVAL;
	}
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

static bool is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (strcmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

static bool host_chars_ok(const char *h, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = h[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == ':'))
			return false;
	}
	return n > 0;
}

/* "http[s]://host[:port][/path]": no user, query or fragment. */
static int parse_url(const char *url, struct sw_agent_config *c, char *err, size_t errlen)
{
	const char *p;
	if (strncmp(url, "https://", 8) == 0) {
		c->tls = true;
		p = url + 8;
	} else if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
	} else {
		snprintf(err, errlen, "STEWARD_URL must start with https:// (or http:// to a loopback address)");
		return -EINVAL;
	}
	if (strpbrk(p, "@?#") || strchr(p, ' ')) {
		snprintf(err, errlen, "STEWARD_URL must be the control plane's base URL, without credentials, query or fragment");
		return -EINVAL;
	}
	const char *host = p, *host_end, *after;
	if (*p == '[') {
		host = p + 1;
		host_end = strchr(host, ']');
		if (!host_end) {
			snprintf(err, errlen, "STEWARD_URL has an unterminated [IPv6] host");
			return -EINVAL;
		}
		after = host_end + 1;
	} else {
		host_end = p + strcspn(p, ":/");
		after = host_end;
	}
	size_t hlen = (size_t)(host_end - host);
	if (!host_chars_ok(host, hlen) || hlen >= sizeof(c->host)) {
		snprintf(err, errlen, "STEWARD_URL has no valid host");
		return -EINVAL;
	}
	memcpy(c->host, host, hlen);
	c->host[hlen] = '\0';
	snprintf(c->port, sizeof(c->port), "%s", c->tls ? "443" : "80");
	if (*after == ':') {
		const char *port = after + 1;
		size_t plen = strcspn(port, "/");
		char *end;
		long v = strtol(port, &end, 10);
		if (plen == 0 || plen > 5 || end != port + plen || v < 1 || v > 65535) {
			snprintf(err, errlen, "STEWARD_URL has an invalid port");
			return -EINVAL;
		}
		snprintf(c->port, sizeof(c->port), "%ld", v);
		after = port + plen;
	}
	if (*after && *after != '/') {
		snprintf(err, errlen, "STEWARD_URL has an invalid host");
		return -EINVAL;
	}
	size_t base = strlen(after);
	while (base && after[base - 1] == '/')
		base--;
	int n = snprintf(c->path, sizeof(c->path), "%.*s/agent/connect", (int)base, after);
	if (n < 0 || (size_t)n >= sizeof(c->path)) {
		snprintf(err, errlen, "STEWARD_URL's path is too long");
		return -EINVAL;
	}
	return 0;
}

static int dir_var(char *const *env, const char *name, const char *def, char *dst, size_t cap,
		   char *err, size_t errlen)
{
	const char *v = get(env, name);
	if (!v || !*v)
		v = def;
	struct stat st;
	if (v[0] != '/' || stat(v, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s must be the absolute path of a directory", name);
		return -EINVAL;
	}
	return copy(dst, cap, v, name, err, errlen);
}

int sw_agent_config_load(char *const *env, struct sw_agent_config *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	const char *url = get(env, "STEWARD_URL");
	if (!url || !*url) {
		snprintf(err, errlen, "STEWARD_URL is required: the control plane's base URL (https://...)");
		return -EINVAL;
	}
	int rc = parse_url(url, c, err, errlen);
	if (rc < 0)
		return rc;
	const char *plain = get(env, "STEWARD_AGENT_ALLOW_PLAIN");
	if (plain && strcmp(plain, "1") != 0 && strcmp(plain, "0") != 0) {
		snprintf(err, errlen, "STEWARD_AGENT_ALLOW_PLAIN must be 1 or 0");
		return -EINVAL;
	}
	if (!c->tls && !is_loopback(c->host) && !(plain && strcmp(plain, "1") == 0)) {
		snprintf(err, errlen, "STEWARD_URL is plain http to a host that is not loopback: use https, or set STEWARD_AGENT_ALLOW_PLAIN=1 on a network you trust");
		return -EINVAL;
	}
	const char *token = get(env, "STEWARD_AGENT_TOKEN");
	if (!token || !sw_agent_token_well_formed(sw_str_cstr(token))) {
		snprintf(err, errlen, "STEWARD_AGENT_TOKEN must be the server's agent token (sta_ and 43 characters), as POST /servers answered");
		return -EINVAL;
	}
	snprintf(c->token, sizeof(c->token), "%s", token);
	const char *docker = get(env, "DOCKER_HOST");
	if (!docker || !*docker)
		docker = "unix:///var/run/docker.sock";
	if (strncmp(docker, "unix:///", 8) != 0) {
		snprintf(err, errlen, "DOCKER_HOST must be unix:///path/to/docker.sock");
		return -EINVAL;
	}
	if ((rc = copy(c->docker_host, sizeof(c->docker_host), docker, "DOCKER_HOST", err, errlen)) < 0)
		return rc;
	const char *caddy = get(env, "CADDY_ADMIN_URL");
	if (!caddy || !*caddy)
		caddy = "http://127.0.0.1:2019";
	if (strncmp(caddy, "http://", 7) != 0 && strncmp(caddy, "https://", 8) != 0) {
		snprintf(err, errlen, "CADDY_ADMIN_URL must be an http:// or https:// URL");
		return -EINVAL;
	}
	if ((rc = copy(c->caddy_admin_url, sizeof(c->caddy_admin_url), caddy, "CADDY_ADMIN_URL", err,
		       errlen)) < 0)
		return rc;
	if ((rc = dir_var(env, "HOST_PROC_PATH", "/proc", c->proc_path, sizeof(c->proc_path), err, errlen)) < 0 ||
	    (rc = dir_var(env, "HOST_SYS_PATH", "/sys", c->sys_path, sizeof(c->sys_path), err, errlen)) < 0 ||
	    (rc = dir_var(env, "HOST_ROOT_PATH", "/", c->root_path, sizeof(c->root_path), err, errlen)) < 0)
		return rc;
	const char *data = get(env, "STEWARD_AGENT_DATA_DIR");
	if (!data || !*data)
		data = "/var/lib/steward-agent";
	if (data[0] != '/') {
		snprintf(err, errlen, "STEWARD_AGENT_DATA_DIR must be an absolute path");
		return -EINVAL;
	}
	if (mkdir(data, 0700) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "STEWARD_AGENT_DATA_DIR cannot be created: %s", strerror(errno));
		return -EINVAL;
	}
	if ((rc = dir_var(env, "STEWARD_AGENT_DATA_DIR", data, c->data_dir, sizeof(c->data_dir), err,
			  errlen)) < 0)
		return rc;
	const char *ca = get(env, "STEWARD_CA_FILE");
	if (ca && *ca) {
		if (ca[0] != '/' || access(ca, R_OK) != 0) {
			snprintf(err, errlen, "STEWARD_CA_FILE must be the absolute path of a readable PEM file");
			return -EINVAL;
		}
		if ((rc = copy(c->ca_file, sizeof(c->ca_file), ca, "STEWARD_CA_FILE", err, errlen)) < 0)
			return rc;
	}
	return 0;
}
