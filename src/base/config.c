/* Settings from the environment. Every variable is documented in
 * README.md; an invalid value stops start-up with a message naming it. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "steward/config.h"
#include "steward/limits.h"

const char *sw_env_name(enum sw_env e)
{
	switch (e) {
	case SW_ENV_DEVELOPMENT:
		return "development";
	case SW_ENV_TEST:
		return "test";
	case SW_ENV_PRODUCTION:
		break;
	}
	return "production";
}

int sw_parse_listen(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	size_t hlen;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		hlen = (size_t)(close - s - 1);
		if (hlen >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hlen);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - s);
		if (hlen >= sizeof(host))
			return -EINVAL;
		memcpy(host, s, hlen);
	}
	host[hlen] = '\0';
	uint64_t port;
	if (!sw_parse_u64(sw_str_cstr(colon + 1), &port) || port > 65535)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	struct sockaddr_in *v4 = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ret;
	if (hlen == 0 || inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		if (hlen == 0)
			v4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*ret_len = sizeof(*v4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*ret_len = sizeof(*v6);
		return 0;
	}
	return -EINVAL;
}

static int get_uint(const char *name, unsigned def, unsigned min, unsigned max,
		    unsigned *ret, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v || !*v) {
		*ret = def;
		return 0;
	}
	uint64_t n;
	if (!sw_parse_u64(sw_str_cstr(v), &n) || n < min || n > max) {
		snprintf(err, errlen, "%s must be a whole number from %u to %u (got \"%.40s\")",
			 name, min, max, v);
		return -EINVAL;
	}
	*ret = (unsigned)n;
	return 0;
}

static int get_bool(const char *name, bool def, bool *ret, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v || !*v) {
		*ret = def;
		return 0;
	}
	struct sw_str s = sw_str_cstr(v);
	if (sw_str_case_eq(s, SW_STR("true")) || sw_str_eq(s, SW_STR("1")) ||
	    sw_str_case_eq(s, SW_STR("on")) || sw_str_case_eq(s, SW_STR("yes"))) {
		*ret = true;
		return 0;
	}
	if (sw_str_case_eq(s, SW_STR("false")) || sw_str_eq(s, SW_STR("0")) ||
	    sw_str_case_eq(s, SW_STR("off")) || sw_str_case_eq(s, SW_STR("no"))) {
		*ret = false;
		return 0;
	}
	snprintf(err, errlen, "%s must be true or false (got \"%.40s\")", name, v);
	return -EINVAL;
}

static char *dup_env(const char *name)
{
	const char *v = getenv(name);
	return (v && *v) ? strdup(v) : NULL;
}

int sw_config_load(struct sw_config *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	const char *listen = getenv("STEWARD_LISTEN");
	if (!listen || !*listen)
		listen = "127.0.0.1:8080";
	if (strlen(listen) >= sizeof(c->listen_str) ||
	    sw_parse_listen(listen, &c->listen_addr, &c->listen_addr_len) < 0) {
		snprintf(err, errlen,
			 "STEWARD_LISTEN must be a numeric address and port such as 127.0.0.1:8080 or [::1]:8080 (got \"%.60s\")",
			 listen);
		return -EINVAL;
	}
	snprintf(c->listen_str, sizeof(c->listen_str), "%s", listen);

	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (cores < 1)
		cores = 1;
	int r = 0;
	r = r ?: get_uint("STEWARD_THREADS", (unsigned)SW_MIN(cores, 64), 1, 64, &c->threads, err, errlen);
	r = r ?: get_uint("STEWARD_WORKERS", 2, 1, 64, &c->workers, err, errlen);
	r = r ?: get_uint("STEWARD_MAX_CONNECTIONS", SW_DEFAULT_MAX_CONNECTIONS, 1, 1000000,
			  &c->max_connections, err, errlen);
	r = r ?: get_uint("STEWARD_DB_POOL_SIZE", 2, 1, 64, &c->db_pool_size, err, errlen);
	r = r ?: get_uint("STEWARD_HEADER_TIMEOUT_MS", SW_DEFAULT_HEADER_TIMEOUT_MS, 100, 3600000,
			  &c->header_timeout_ms, err, errlen);
	r = r ?: get_uint("STEWARD_BODY_TIMEOUT_MS", SW_DEFAULT_BODY_TIMEOUT_MS, 100, 3600000,
			  &c->body_timeout_ms, err, errlen);
	r = r ?: get_uint("STEWARD_IDLE_TIMEOUT_MS", SW_DEFAULT_IDLE_TIMEOUT_MS, 100, 3600000,
			  &c->idle_timeout_ms, err, errlen);
	r = r ?: get_uint("STEWARD_SHUTDOWN_TIMEOUT_MS", SW_DEFAULT_SHUTDOWN_TIMEOUT_MS, 0, 3600000,
			  &c->shutdown_timeout_ms, err, errlen);
	r = r ?: get_uint("STEWARD_DB_QUERY_TIMEOUT_MS", SW_DEFAULT_DB_QUERY_TIMEOUT_MS, 10, 3600000,
			  &c->db_query_timeout_ms, err, errlen);
	r = r ?: get_bool("SIGNUP_ENABLED", false, &c->signup_enabled, err, errlen);
	r = r ?: get_bool("STEWARD_ACCESS_LOG", true, &c->access_log, err, errlen);
	r = r ?: get_uint("DEPLOY_LOG_MAX_BYTES", 16u * 1024 * 1024, 64u * 1024, 1024u * 1024 * 1024,
			  &c->deploy_log_max_bytes, err, errlen);
	r = r ?: get_uint("DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB", 512, 0, 1048576,
			  &c->blue_green_min_free_mb, err, errlen);
	r = r ?: get_bool("STEWARD_RUNNERS", true, &c->runners, err, errlen);
	if (r < 0)
		return r;

	const char *env = getenv("STEWARD_ENV");
	if (!env || !*env || strcmp(env, "production") == 0) {
		c->env = SW_ENV_PRODUCTION;
	} else if (strcmp(env, "development") == 0) {
		c->env = SW_ENV_DEVELOPMENT;
	} else if (strcmp(env, "test") == 0) {
		c->env = SW_ENV_TEST;
	} else {
		snprintf(err, errlen, "STEWARD_ENV must be production, development or test (got \"%.40s\")", env);
		return -EINVAL;
	}

	const char *dir = getenv("STEWARD_DATA_DIR");
	if (!dir || !*dir) /* as root, a system path the postgres user can reach */
		dir = geteuid() == 0 ? "/var/lib/steward" : "./steward-data";
	if (strlen(dir) >= sizeof(c->data_dir)) {
		snprintf(err, errlen, "STEWARD_DATA_DIR is longer than %zu bytes", sizeof(c->data_dir) - 1);
		return -EINVAL;
	}
	snprintf(c->data_dir, sizeof(c->data_dir), "%s", dir);
	c->database_url = dup_env("DATABASE_URL");
	c->cors_origins = dup_env("CORS_ALLOWED_ORIGINS");
	c->public_base_url = dup_env("PUBLIC_BASE_URL");
	c->auth_trusted_origins = dup_env("AUTH_TRUSTED_ORIGINS");
	c->deploy_base_image = dup_env("DEPLOY_BASE_IMAGE");
	c->git_ca_file = dup_env("GIT_CA_FILE");
	if (c->git_ca_file && (c->git_ca_file[0] != '/' || access(c->git_ca_file, R_OK) != 0)) {
		snprintf(err, errlen, "GIT_CA_FILE must be the absolute path of a readable PEM file");
		return -EINVAL;
	}
	c->ui_dir = dup_env("STEWARD_UI_DIR");
	c->docker_host = dup_env("DOCKER_HOST");
	if (!c->docker_host)
		c->docker_host = strdup("unix:///var/run/docker.sock");
	c->caddy_admin_url = dup_env("CADDY_ADMIN_URL");
	if (!c->caddy_admin_url)
		c->caddy_admin_url = strdup("http://127.0.0.1:2019");
	if (!c->docker_host || !c->caddy_admin_url) {
		snprintf(err, errlen, "out of memory reading the configuration");
		return -ENOMEM;
	}
	if (strncmp(c->docker_host, "unix://", 7) != 0 || c->docker_host[7] != '/') {
		snprintf(err, errlen, "DOCKER_HOST must be unix:///path/to/docker.sock (got \"%.60s\")",
			 c->docker_host);
		return -EINVAL;
	}
	return 0;
}

void sw_config_release(struct sw_config *c)
{
	free(c->database_url);
	free(c->cors_origins);
	free(c->public_base_url);
	free(c->auth_trusted_origins);
	free(c->deploy_base_image);
	free(c->docker_host);
	free(c->caddy_admin_url);
	free(c->git_ca_file);
	c->git_ca_file = NULL;
	free(c->ui_dir);
	c->ui_dir = NULL;
	c->database_url = c->cors_origins = c->public_base_url = c->auth_trusted_origins = NULL;
	c->deploy_base_image = c->docker_host = c->caddy_admin_url = NULL;
}
