/* Settings from the environment. Every variable is documented in
 * README.md; an invalid value stops start-up with a message naming it. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "steward/base/config.h"
#include "steward/base/limits.h"

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
	r = r ?: get_uint("STEWARD_AGENT_RECONNECT_WAIT_MS", SW_DEFAULT_AGENT_RECONNECT_WAIT_MS, 0, 3600000,
			  &c->agent_reconnect_wait_ms, err, errlen);
	r = r ?: get_bool("SIGNUP_ENABLED", false, &c->signup_enabled, err, errlen);
	r = r ?: get_uint("STEWARD_RATE_LIMIT_PER_MINUTE", SW_DEFAULT_RATE_LIMIT_PER_MINUTE,
			  SW_RATE_LIMIT_PER_MINUTE_MIN, SW_RATE_LIMIT_PER_MINUTE_MAX,
			  &c->rate_limit_per_minute, err, errlen);
	r = r ?: get_bool("STEWARD_ACCESS_LOG", true, &c->access_log, err, errlen);
	r = r ?: get_uint("DEPLOY_LOG_MAX_BYTES", 16u * 1024 * 1024, 64u * 1024, 1024u * 1024 * 1024,
			  &c->deploy_log_max_bytes, err, errlen);
	r = r ?: get_uint("DEPLOY_BLUE_GREEN_MIN_FREE_MEMORY_MB", 512, 0, 1048576,
			  &c->blue_green_min_free_mb, err, errlen);
	r = r ?: get_bool("STEWARD_RUNNERS", true, &c->runners, err, errlen);
	r = r ?: get_uint("METRICS_MINUTE_RETENTION_DAYS", 7, 1, 3650, &c->metrics_minute_retention_days, err,
			  errlen);
	r = r ?: get_uint("METRICS_RETENTION_DAYS", 90, 1, 3650, &c->metrics_retention_days, err, errlen);
	r = r ?: get_uint("METRICS_SAMPLE_INTERVAL_MS", 15000, 200, 15000, &c->metrics_interval_ms, err, errlen);
	r = r ?: get_uint("METRICS_MINUTE_MS", 60000, 1000, 60000, &c->metrics_minute_ms, err, errlen);
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
	if (c->env != SW_ENV_TEST) { /* test settings: production samples every 15 s, minutes last 60 s */
		c->metrics_interval_ms = 15000;
		c->metrics_minute_ms = 60000;
	}
	/* A shortened minute holds whole intervals, and whole ones make a
	 * real minute (so a minute never straddles an hour). */
	if (c->metrics_minute_ms != 60000 &&
	    (60000 % c->metrics_minute_ms || c->metrics_minute_ms % c->metrics_interval_ms)) {
		snprintf(err, errlen, "METRICS_MINUTE_MS must divide 60000 and be a multiple of "
				      "METRICS_SAMPLE_INTERVAL_MS (got %u and %u)",
			 c->metrics_minute_ms, c->metrics_interval_ms);
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

/* ---- passkeys: the relying party (AUTH_PASSKEY_RP_ID, AUTH_PASSKEY_ORIGINS) ---- */

static bool copy_lower(struct sw_str s, char *out, size_t cap)
{
	if (s.len >= cap)
		return false;
	for (size_t i = 0; i < s.len; i++)
		out[i] = s.ptr[i] >= 'A' && s.ptr[i] <= 'Z' ? (char)(s.ptr[i] + 32) : s.ptr[i];
	out[s.len] = '\0';
	return true;
}

/* A lower-case DNS name of LDH labels; a dotted quad (an address, which
 * WebAuthn refuses as an rp id) is not one. */
static bool domain_valid(const char *s)
{
	size_t n = strlen(s), label = 0;
	bool numeric = true;
	if (n == 0 || n > SW_PASSKEY_DOMAIN_MAX_LEN)
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];
		if (c == '.' || c == '\0') {
			if (label == 0 || label > 63 || s[i - 1] == '-' || s[i - label] == '-')
				return false;
			if (c == '\0')
				return !numeric;
			label = 0;
			numeric = true;
			continue;
		}
		bool digit = c >= '0' && c <= '9';
		if (!digit && !(c >= 'a' && c <= 'z') && c != '-')
			return false;
		numeric = numeric && digit;
		label++;
	}
	return false;
}

static bool host_is_local(const char *host)
{
	size_t n = strlen(host);
	return strcmp(host, "localhost") == 0 || (n > 10 && strcmp(host + n - 10, ".localhost") == 0);
}

/* Whether host is rp_id or a subdomain of it: where a browser lets an
 * origin use the rp id. */
static bool host_within(const char *host, const char *rp_id)
{
	size_t h = strlen(host), r = strlen(rp_id);
	return strcmp(host, rp_id) == 0 ||
	       (h > r + 1 && host[h - r - 1] == '.' && strcmp(host + h - r, rp_id) == 0);
}

/* Parses "scheme://host[:port]" (spaces around and one trailing '/'
 * tolerated) into the serialised origin a browser reports in the client
 * data: lower case, no default port. NULL, or a phrase saying what is
 * wrong. */
static const char *origin_parse(struct sw_str in, char out[SW_PASSKEY_ORIGIN_MAX_LEN + 1],
				char host[SW_PASSKEY_DOMAIN_MAX_LEN + 1])
{
	while (in.len && in.ptr[0] == ' ')
		in = sw_str_from(in.ptr + 1, in.len - 1);
	while (in.len && in.ptr[in.len - 1] == ' ')
		in.len--;
	bool https = in.len >= 8 && sw_str_case_eq(sw_str_from(in.ptr, 8), SW_STR("https://"));
	if (!https && !(in.len >= 7 && sw_str_case_eq(sw_str_from(in.ptr, 7), SW_STR("http://"))))
		return "is not an http:// or https:// origin";
	size_t skip = https ? 8 : 7;
	struct sw_str rest = sw_str_from(in.ptr + skip, in.len - skip);
	if (rest.len && rest.ptr[rest.len - 1] == '/')
		rest.len--;
	const char *colon = rest.len ? memchr(rest.ptr, ':', rest.len) : NULL;
	struct sw_str name = rest, port = SW_STR_NULL;
	if (colon) {
		name.len = (size_t)(colon - rest.ptr);
		port = sw_str_from(colon + 1, rest.len - name.len - 1);
	}
	if (!copy_lower(name, host, SW_PASSKEY_DOMAIN_MAX_LEN + 1) || !domain_valid(host))
		return "must be scheme://host[:port] with a domain name and no path";
	uint64_t p = 0;
	if (colon && (port.len > 5 || !sw_parse_u64(port, &p) || p == 0 || p > 65535))
		return "has an invalid port";
	if (p == (https ? 443 : 80))
		p = 0;
	if (!https && !host_is_local(host))
		return "uses http://, which browsers allow for passkeys only on localhost";
	char port_text[8] = "";
	if (p)
		snprintf(port_text, sizeof(port_text), ":%u", (unsigned)p);
	int n = snprintf(out, SW_PASSKEY_ORIGIN_MAX_LEN + 1, "%s://%s%s", https ? "https" : "http", host, port_text);
	return n > SW_PASSKEY_ORIGIN_MAX_LEN ? "is too long" : NULL;
}

static unsigned listen_port(const struct sw_config *cfg)
{
	if (cfg->listen_addr.ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)&cfg->listen_addr)->sin6_port);
	return ntohs(((const struct sockaddr_in *)&cfg->listen_addr)->sin_port);
}

/* Fills ret->origins from AUTH_PASSKEY_ORIGINS (and hosts[]). Returns the
 * count, or 0 with why. */
static size_t origins_from_list(const char *list, struct sw_passkey_settings *ret,
				char hosts[][SW_PASSKEY_DOMAIN_MAX_LEN + 1], char *why, size_t whylen)
{
	size_t n = 0;
	for (const char *p = list;;) {
		const char *comma = strchr(p, ',');
		struct sw_str item = sw_str_from(p, comma ? (size_t)(comma - p) : strlen(p));
		bool blank = true;
		for (size_t i = 0; i < item.len && blank; i++)
			blank = item.ptr[i] == ' ';
		if (!blank) {
			if (n == SW_PASSKEY_ORIGINS_MAX) {
				snprintf(why, whylen, "AUTH_PASSKEY_ORIGINS lists more than %d origins", SW_PASSKEY_ORIGINS_MAX);
				return 0;
			}
			const char *e = origin_parse(item, ret->origins[n], hosts[n]);
			if (e) {
				snprintf(why, whylen, "AUTH_PASSKEY_ORIGINS: \"%.*s\" %s",
					 (int)SW_MIN(item.len, 200), item.ptr, e);
				return 0;
			}
			n++;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!n)
		snprintf(why, whylen, "AUTH_PASSKEY_ORIGINS lists no origin");
	return n;
}

int sw_config_passkeys(const struct sw_config *cfg, struct sw_passkey_settings *ret, char *why,
		       size_t whylen)
{
	char hosts[SW_PASSKEY_ORIGINS_MAX][SW_PASSKEY_DOMAIN_MAX_LEN + 1];
	const char *env_rp = getenv("AUTH_PASSKEY_RP_ID");
	const char *env_origins = getenv("AUTH_PASSKEY_ORIGINS");
	const char *base = cfg->public_base_url && *cfg->public_base_url ? cfg->public_base_url : NULL;
	env_rp = env_rp && *env_rp ? env_rp : NULL;
	env_origins = env_origins && *env_origins ? env_origins : NULL;
	memset(ret, 0, sizeof(*ret));

	char base_origin[SW_PASSKEY_ORIGIN_MAX_LEN + 1], base_host[SW_PASSKEY_DOMAIN_MAX_LEN + 1];
	if (base && (!env_rp || !env_origins)) {
		const char *sep = strstr(base, "://");
		const char *slash = sep ? strchr(sep + 3, '/') : NULL;
		size_t len = slash ? (size_t)(slash - base) : strlen(base);
		const char *e = origin_parse(sw_str_from(base, len), base_origin, base_host);
		if (e) {
			snprintf(why, whylen, "PUBLIC_BASE_URL %s, so it cannot stand in for "
				 "AUTH_PASSKEY_RP_ID and AUTH_PASSKEY_ORIGINS; set them", e);
			return -EINVAL;
		}
	}
	if (env_rp) {
		if (!copy_lower(sw_str_cstr(env_rp), ret->rp_id, sizeof(ret->rp_id)) ||
		    !domain_valid(ret->rp_id)) {
			snprintf(why, whylen, "AUTH_PASSKEY_RP_ID must be a bare domain name (no "
				 "scheme, no port), such as example.org");
			return -EINVAL;
		}
	} else {
		snprintf(ret->rp_id, sizeof(ret->rp_id), "%s", base ? base_host : "localhost");
	}

	size_t n = 1;
	if (env_origins) {
		n = origins_from_list(env_origins, ret, hosts, why, whylen);
		if (!n)
			return -EINVAL;
	} else if (base) {
		memcpy(ret->origins[0], base_origin, sizeof(base_origin));
		memcpy(hosts[0], base_host, sizeof(base_host));
	} else {
		snprintf(ret->origins[0], sizeof(ret->origins[0]), "http://localhost:%u", listen_port(cfg));
		snprintf(hosts[0], sizeof(hosts[0]), "localhost");
	}
	for (size_t i = 0; i < n; i++) {
		if (!host_within(hosts[i], ret->rp_id)) {
			snprintf(why, whylen, "the passkey origin %s is not on the rp id %s or a "
				 "subdomain of it (set AUTH_PASSKEY_RP_ID and AUTH_PASSKEY_ORIGINS)",
				 ret->origins[i], ret->rp_id);
			return -EINVAL;
		}
	}
	ret->origin_count = n;
	return 0;
}
