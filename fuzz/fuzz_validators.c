/* libFuzzer harness for the formats of the resource API (validate.h).
 *
 * The first byte picks the validator (one of "hbrcpqnuUgGkva": hostname,
 * branch, relative, container, host and HTTP path, name, URL, https URL,
 * git URL, git URL or file, env key, value, argument; else by its value
 * modulo 14) and the rest is the client's string, in a buffer of
 * exactly its size so that ASan sees any read past it. Beyond "no crash,
 * no UB", each answer is checked against properties written here
 * independently of validate.c:
 * - a refusal always comes with a sentence starting lower-case;
 * - names, keys, values and arguments: accepted exactly when a plain
 *   oracle accepts (a table-driven UTF-8 check for the last two);
 * - everything else, when accepted, is printable ASCII without spaces and
 *   has the property its format exists for: a hostname has no upper case
 *   and no address inet_aton() reads; a path climbs nowhere ("/../",
 *   "/./", a leading '-'); a container path is outside /proc, /sys and
 *   /dev and a host path outside /etc, ... and above no Docker socket; a
 *   URL has no userinfo and no fragment, its host view lies inside it
 *   and its port is the one written or the scheme's; a git URL's kind
 *   matches its spelling, and file:// is only ever accepted when allowed;
 * - an accepted resource name or hostname is a host sw_valid_url() takes,
 *   and it reports that host back. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/limits.h"
#include "steward/base/validate.h"
#include "fuzz.h"

static bool has(struct sw_str s, const char *needle)
{
	return memmem(s.ptr, s.len, needle, strlen(needle)) != NULL;
}

static bool begins(struct sw_str s, const char *prefix)
{
	return s.len >= strlen(prefix) && memcmp(s.ptr, prefix, strlen(prefix)) == 0;
}

static bool ends(struct sw_str s, const char *suffix)
{
	size_t n = strlen(suffix);
	return s.len >= n && memcmp(s.ptr + s.len - n, suffix, n) == 0;
}

static bool printable_no_space(struct sw_str s)
{
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] <= ' ' || s.ptr[i] > '~')
			return false;
	return true;
}

/* s has a '/'-separated component that climbs or looks like an option. */
static bool climbs(struct sw_str s)
{
	return has(s, "/../") || has(s, "/./") || ends(s, "/..") || ends(s, "/.") ||
	       begins(s, "../") || begins(s, "./") || has(s, "/-") || has(s, "//");
}

/* ---- exact oracles ---- */

static bool oracle_name(struct sw_str s)
{
	if (s.len < 1 || s.len > 63 || s.ptr[0] < 'a' || s.ptr[0] > 'z' || s.ptr[s.len - 1] == '-' ||
	    has(s, "--"))
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!((s.ptr[i] >= 'a' && s.ptr[i] <= 'z') || (s.ptr[i] >= '0' && s.ptr[i] <= '9') ||
		      s.ptr[i] == '-'))
			return false;
	return true;
}

static bool oracle_env_key(struct sw_str s)
{
	static const char ident[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
	if (s.len < 1 || s.len > 128 || (s.ptr[0] >= '0' && s.ptr[0] <= '9'))
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!s.ptr[i] || !strchr(ident, s.ptr[i]))
			return false;
	return true;
}

/* Well-formed UTF-8 by the Unicode Standard's table 3-7: the lead byte's
 * range fixes the length and the range of the byte after it. */
static const struct {
	unsigned char lead_lo, lead_hi, next_lo, next_hi, len;
} utf8_rows[] = {
	{ 0x00, 0x7F, 0x00, 0x00, 1 }, { 0xC2, 0xDF, 0x80, 0xBF, 2 }, { 0xE0, 0xE0, 0xA0, 0xBF, 3 },
	{ 0xE1, 0xEC, 0x80, 0xBF, 3 }, { 0xED, 0xED, 0x80, 0x9F, 3 }, { 0xEE, 0xEF, 0x80, 0xBF, 3 },
	{ 0xF0, 0xF0, 0x90, 0xBF, 4 }, { 0xF1, 0xF3, 0x80, 0xBF, 4 }, { 0xF4, 0xF4, 0x80, 0x8F, 4 },
};

/* Valid UTF-8; with no_controls, also no C0, DEL or C1 control. */
static bool oracle_utf8(struct sw_str s, bool no_controls)
{
	const unsigned char *p = (const unsigned char *)s.ptr;
	for (size_t i = 0; i < s.len;) {
		size_t row = 0;
		while (row < sizeof(utf8_rows) / sizeof(utf8_rows[0]) &&
		       (p[i] < utf8_rows[row].lead_lo || p[i] > utf8_rows[row].lead_hi))
			row++;
		if (row == sizeof(utf8_rows) / sizeof(utf8_rows[0]) || s.len - i < utf8_rows[row].len)
			return false;
		size_t n = utf8_rows[row].len;
		if (n > 1 && (p[i + 1] < utf8_rows[row].next_lo || p[i + 1] > utf8_rows[row].next_hi))
			return false;
		for (size_t k = 2; k < n; k++)
			if (p[i + k] < 0x80 || p[i + k] > 0xBF)
				return false;
		if (no_controls && (p[i] < 0x20 || p[i] == 0x7F || (p[i] == 0xC2 && p[i + 1] < 0xA0)))
			return false;
		i += n;
	}
	return true;
}

/* ---- properties of accepted values ---- */

static void check_as_url_host(struct sw_str host)
{
	char u[300];
	snprintf(u, sizeof(u), "https://%.*s/x", (int)host.len, host.ptr);
	struct sw_str got;
	unsigned port = 0;
	const char *msg;
	ASSERT(sw_valid_url(sw_str_cstr(u), true, &got, &port, &msg));
	ASSERT(sw_str_eq(got, host) && port == 443);
}

static void check_hostname(struct sw_str s)
{
	char buf[300];
	ASSERT(s.len <= SW_HOSTNAME_MAX_LEN && memchr(s.ptr, '.', s.len));
	ASSERT(s.ptr[0] != '.' && s.ptr[0] != '-' && !ends(s, ".") && !ends(s, "-"));
	ASSERT(!has(s, "..") && !has(s, ".-") && !has(s, "-.") && !begins(s, "*"));
	for (size_t i = 0; i < s.len; i++)
		ASSERT(!(s.ptr[i] >= 'A' && s.ptr[i] <= 'Z'));
	memcpy(buf, s.ptr, s.len);
	buf[s.len] = '\0';
	struct in_addr a;
	ASSERT(inet_aton(buf, &a) == 0);
	check_as_url_host(s);
}

static void check_branch(struct sw_str s)
{
	ASSERT(s.len <= SW_GIT_BRANCH_MAX_LEN && !has(s, "..") && !has(s, "//") && !has(s, "@{"));
	ASSERT(s.ptr[0] != '-' && s.ptr[0] != '/' && s.ptr[0] != '.');
	ASSERT(!ends(s, "/") && !ends(s, ".") && !ends(s, ".lock") && !has(s, ".lock/"));
	ASSERT(!has(s, "/.") && !sw_str_eq(s, SW_STR("HEAD")));
}

static void check_relative(struct sw_str s)
{
	ASSERT(s.len <= SW_PATH_MAX_LEN && s.ptr[0] != '/' && s.ptr[0] != '-');
	if (sw_str_eq(s, SW_STR(".")))
		return;
	ASSERT(!climbs(s) && !sw_str_eq(s, SW_STR("..")) && !ends(s, "/"));
}

static bool at_or_below(struct sw_str s, const char *dir)
{
	size_t n = strlen(dir);
	return begins(s, dir) && (s.len == n || s.ptr[n] == '/');
}

static void check_absolute(struct sw_str s)
{
	ASSERT(s.len >= 2 && s.len <= SW_PATH_MAX_LEN && s.ptr[0] == '/');
	ASSERT(!has(s, "/../") && !has(s, "/./") && !ends(s, "/..") && !ends(s, "/.") &&
	       !has(s, "//") && !ends(s, "/"));
}

static void check_container_path(struct sw_str s)
{
	check_absolute(s);
	ASSERT(!at_or_below(s, "/proc") && !at_or_below(s, "/sys") && !at_or_below(s, "/dev"));
}

static void check_host_path(struct sw_str s)
{
	static const char *const system[] = { "/etc", "/proc", "/sys", "/dev", "/boot", "/root",
					      "/run/docker.sock", "/var/run/docker.sock" };
	check_absolute(s);
	for (size_t i = 0; i < sizeof(system) / sizeof(system[0]); i++)
		ASSERT(!at_or_below(s, system[i]));
	/* Nor a directory the socket is in. */
	ASSERT(!sw_str_eq(s, SW_STR("/var")) && !sw_str_eq(s, SW_STR("/var/run")) &&
	       !sw_str_eq(s, SW_STR("/run")));
}

static bool hex(char c)
{
	return c && strchr("0123456789abcdefABCDEF", c);
}

static void check_http_path(struct sw_str s)
{
	ASSERT(s.len <= SW_HTTP_PATH_MAX_LEN && s.ptr[0] == '/' && !begins(s, "//"));
	ASSERT(!has(s, "..") && !memchr(s.ptr, '#', s.len));
	for (size_t i = 0; i < s.len; i++)
		if (s.ptr[i] == '%')
			ASSERT(i + 2 < s.len && hex(s.ptr[i + 1]) && hex(s.ptr[i + 2]));
}

static void check_url(struct sw_str s, bool https_only)
{
	struct sw_str host = SW_STR_NULL;
	unsigned port = 0;
	const char *msg = NULL;
	ASSERT(sw_valid_url(s, https_only, &host, &port, &msg));
	bool https = begins(s, "https://");
	ASSERT(https || (!https_only && begins(s, "http://")));
	size_t start = https ? 8 : 7, end = start;
	while (end < s.len && !(s.ptr[end] && strchr("/?#", s.ptr[end])))
		end++;
	ASSERT(!memchr(s.ptr, '#', s.len) && !memchr(s.ptr + start, '@', end - start));
	ASSERT(host.len > 0 && host.ptr >= s.ptr + start && host.ptr + host.len <= s.ptr + end);
	ASSERT(port >= 1 && port <= 65535);
	const char *after = host.ptr + host.len;
	if (after < s.ptr + end && *after == ']')
		after++;
	if (after < s.ptr + end) {
		ASSERT(*after == ':');
		unsigned written = 0;
		for (after++; after < s.ptr + end; after++) {
			ASSERT(*after >= '0' && *after <= '9');
			written = written * 10 + (unsigned)(*after - '0');
		}
		ASSERT(written == port);
	} else {
		ASSERT(port == (https ? 443u : 80u));
	}
	char buf[300];
	if (host.len < sizeof(buf)) {
		memcpy(buf, host.ptr, host.len);
		buf[host.len] = '\0';
		struct in_addr a;
		if (inet_aton(buf, &a))
			ASSERT(strcmp(inet_ntoa(a), buf) == 0);
	}
}

static void check_git_url(struct sw_str s, bool allow_file, enum sw_git_url_kind kind)
{
	ASSERT(s.len <= SW_URL_MAX_LEN && s.ptr[0] != '-');
	ASSERT(!has(s, "/../") && !has(s, "/./") && !ends(s, "/..") && !ends(s, "/") &&
	       !has(s, "/-") && !has(s, ":-"));
	switch (kind) {
	case SW_GIT_URL_HTTPS:
		ASSERT(begins(s, "https://") && !memchr(s.ptr, '@', s.len) &&
		       !memchr(s.ptr, '?', s.len) && !memchr(s.ptr, '#', s.len));
		break;
	case SW_GIT_URL_SSH:
		ASSERT(begins(s, "ssh://") || (memchr(s.ptr, '@', s.len) && !has(s, "://")));
		ASSERT(s.ptr[begins(s, "ssh://") ? 6 : 0] != '-');
		break;
	case SW_GIT_URL_FILE:
		ASSERT(allow_file && begins(s, "file:///"));
		break;
	default:
		ASSERT(0);
	}
}

/* ---- dispatch ---- */

/* The formats checked only by properties of what they accept. */
static const struct {
	bool (*valid)(struct sw_str, const char **);
	void (*check)(struct sw_str);
} by_property[] = {
	{ sw_valid_hostname, check_hostname },
	{ sw_valid_git_branch, check_branch },
	{ sw_valid_relative_path, check_relative },
	{ sw_valid_container_path, check_container_path },
	{ sw_valid_host_path, check_host_path },
	{ sw_valid_http_path, check_http_path },
};
#define BY_PROPERTY (sizeof(by_property) / sizeof(by_property[0]))

/* kind: an index into by_property, then n u U g G k v a. */
static bool run(size_t kind, struct sw_str s, const char **msg)
{
	bool ok;
	enum sw_git_url_kind git = (enum sw_git_url_kind)-1;
	if (kind < BY_PROPERTY) {
		ok = by_property[kind].valid(s, msg);
		if (ok)
			by_property[kind].check(s);
		return ok;
	}
	switch (kind - BY_PROPERTY) {
	case 0:
		ok = sw_valid_resource_name(s, msg);
		ASSERT(ok == oracle_name(s));
		if (ok)
			check_as_url_host(s);
		return ok;
	case 1:
	case 2:
		ok = sw_valid_url(s, kind - BY_PROPERTY == 2, NULL, NULL, msg);
		if (ok)
			check_url(s, kind - BY_PROPERTY == 2);
		return ok;
	case 3:
	case 4:
		ok = sw_valid_git_url(s, kind - BY_PROPERTY == 4, &git, msg);
		if (ok)
			check_git_url(s, kind - BY_PROPERTY == 4, git);
		return ok;
	case 5:
		ok = sw_valid_env_key(s, msg);
		ASSERT(ok == oracle_env_key(s));
		return ok;
	case 6:
		ok = sw_valid_env_value(s, msg);
		ASSERT(ok == (s.len <= SW_ENV_VALUE_MAX_LEN && !memchr(s.ptr, '\0', s.len) &&
			      oracle_utf8(s, false)));
		return ok;
	default:
		ok = sw_valid_command_arg(s, msg);
		ASSERT(ok == (s.len >= 1 && s.len <= SW_COMMAND_ARG_MAX_LEN && oracle_utf8(s, true)));
		return ok;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char kinds[] = "hbrcpqnuUgGkva";
	if (size < 1 || size > SW_ENV_VALUE_MAX_LEN + 2)
		return 0;
	const char *k = memchr(kinds, data[0], sizeof(kinds) - 1);
	size_t kind = k ? (size_t)(k - kinds) : data[0] % (sizeof(kinds) - 1);
	size_t n = size - 1;
	char *s = malloc(n ? n : 1);
	ASSERT(s);
	memcpy(s, data + 1, n);
	const char *msg = NULL;
	bool ok = run(kind, sw_str_from(s, n), &msg);
	if (!ok)
		ASSERT(msg && msg[0] >= 'a' && msg[0] <= 'z');
	/* All but values and arguments are printable ASCII without spaces. */
	if (ok && kinds[kind] != 'v' && kinds[kind] != 'a')
		ASSERT(printable_no_space(sw_str_from(s, n)));
	free(s);
	return 0;
}
