/* Validators for user-supplied strings (see steward/base/validate.h). */
#include <arpa/inet.h>
#include <stdio.h>
#include "steward/base/limits.h"
#include "steward/base/validate.h"

size_t sw_utf8_length(struct sw_str s)
{
	size_t n = 0;
	for (size_t i = 0; i < s.len; i++)
		if (((unsigned char)s.ptr[i] & 0xC0) != 0x80)
			n++;
	return n;
}

static bool atext(char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("!#$%&'*+-/=?^_`{|}~", c) != NULL;
}

static bool ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

bool sw_valid_email(struct sw_str s, char *out, size_t cap, const char **ret_msg)
{
	*ret_msg = "must be a valid e-mail address";
	if (s.len == 0) {
		*ret_msg = "must not be empty";
		return false;
	}
	if (s.len > SW_EMAIL_MAX_LEN) {
		*ret_msg = "must be at most 254 characters";
		return false;
	}
	if (s.len + 1 > cap)
		return false;
	const char *at = memchr(s.ptr, '@', s.len);
	if (!at)
		return false;
	size_t local = (size_t)(at - s.ptr), dom = s.len - local - 1;
	if (local == 0 || local > 64 || dom < 3 || memchr(at + 1, '@', dom))
		return false;
	for (size_t i = 0; i < local; i++) {
		char c = s.ptr[i];
		if (c == '.') {
			if (i == 0 || i == local - 1 || s.ptr[i - 1] == '.')
				return false;
		} else if (!atext(c)) {
			return false;
		}
	}
	const char *d = at + 1;
	size_t label = 0, labels = 1;
	for (size_t i = 0; i < dom; i++) {
		char c = d[i];
		if (c == '.') {
			if (label == 0 || d[i - 1] == '-')
				return false;
			label = 0;
			labels++;
		} else if (ldh(c)) {
			if (label == 0 && c == '-')
				return false;
			if (++label > 63)
				return false;
		} else {
			return false;
		}
	}
	if (label == 0 || d[dom - 1] == '-' || labels < 2)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		out[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
	}
	out[s.len] = '\0';
	return true;
}

bool sw_valid_display_name(struct sw_str s, size_t max, struct sw_str *ret_trimmed,
			   const char **ret_msg)
{
	while (s.len && s.ptr[0] == ' ') {
		s.ptr++;
		s.len--;
	}
	while (s.len && s.ptr[s.len - 1] == ' ')
		s.len--;
	if (s.len == 0) {
		*ret_msg = "must not be empty";
		return false;
	}
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.ptr[i];
		if (c < 0x20 || c == 0x7f) {
			*ret_msg = "must not contain control characters";
			return false;
		}
		/* U+0080..U+009F (C1 controls) are 0xC2 0x80..0x9F in UTF-8. */
		if (c == 0xC2 && i + 1 < s.len && (unsigned char)s.ptr[i + 1] < 0xA0) {
			*ret_msg = "must not contain control characters";
			return false;
		}
	}
	if (sw_utf8_length(s) > max) {
		*ret_msg = max == SW_NAME_MAX_LEN ? "must be at most 100 characters" : "is too long";
		return false;
	}
	*ret_trimmed = s;
	return true;
}

/* ---- formats of the resource API ----
 *
 * Each format is a whitelist of characters first, then the rules that
 * keep a value from meaning more than it says: no component that climbs
 * out of a root, nothing that starts like an option, no host that a
 * resolver would read as another address than the one written. The
 * messages quote the limits, which the assertions keep in step. */

_Static_assert(SW_RESOURCE_NAME_MAX_LEN == 63, "the messages say 63");
_Static_assert(SW_HOSTNAME_MAX_LEN == 253, "the messages say 253");
_Static_assert(SW_GIT_BRANCH_MAX_LEN == 200, "the messages say 200");
_Static_assert(SW_PATH_MAX_LEN == 255, "the messages say 255");
_Static_assert(SW_HTTP_PATH_MAX_LEN == 256, "the messages say 256");
_Static_assert(SW_URL_MAX_LEN == 2048, "the messages say 2048");
_Static_assert(SW_ENV_KEY_MAX_LEN == 128, "the messages say 128");
_Static_assert(SW_ENV_VALUE_MAX_LEN == 32768, "the messages say 32768");
_Static_assert(SW_COMMAND_ARG_MAX_LEN == 1024, "the messages say 1024");

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_lower(c) || is_digit(c) || (c >= 'A' && c <= 'Z');
}

static bool is_hex(char c)
{
	return sw_hex_value((unsigned char)c) >= 0;
}

/* Whether every byte of s is a letter, a digit or one of extra. */
static bool only_alnum_and(struct sw_str s, const char *extra)
{
	for (size_t i = 0; i < s.len; i++)
		if (!is_alnum(s.ptr[i]) && !(s.ptr[i] && strchr(extra, s.ptr[i])))
			return false;
	return true;
}

static bool starts_with(struct sw_str s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.len >= n && memcmp(s.ptr, prefix, n) == 0;
}

static bool ends_with(struct sw_str s, const char *suffix)
{
	size_t n = strlen(suffix);
	return s.len >= n && memcmp(s.ptr + s.len - n, suffix, n) == 0;
}

static bool contains(struct sw_str s, const char *needle)
{
	return memmem(s.ptr, s.len, needle, strlen(needle)) != NULL;
}

static struct sw_str tail(struct sw_str s, size_t from)
{
	return sw_str_from(s.ptr + from, s.len - from);
}

static bool refuse(const char *msg, const char **ret_msg)
{
	*ret_msg = msg;
	return false;
}

/* 1..max bytes, else "must not be empty" or too_long. */
static bool size_ok(struct sw_str s, size_t max, const char *too_long, const char **ret_msg)
{
	if (s.len == 0)
		return refuse("must not be empty", ret_msg);
	return s.len <= max || refuse(too_long, ret_msg);
}

/* The first problem with the '/'-separated components of s (an empty, "."
 * or ".." component, or with no_dash one starting with '-'), or NULL. */
static const char *component_problem(struct sw_str s, bool no_dash)
{
	size_t start = 0;
	for (size_t i = 0; i <= s.len; i++) {
		if (i < s.len && s.ptr[i] != '/')
			continue;
		struct sw_str c = sw_str_from(s.ptr + start, i - start);
		if (c.len == 0)
			return "must not have an empty component (\"//\" or a '/' at either end)";
		if (sw_str_eq(c, SW_STR(".")) || sw_str_eq(c, SW_STR("..")))
			return "must not have a \".\" or \"..\" component";
		if (no_dash && c.ptr[0] == '-')
			return "must not have a component starting with '-'";
		start = i + 1;
	}
	return NULL;
}

bool sw_valid_resource_name(struct sw_str s, const char **ret_msg)
{
	static const char format[] =
		"must be 1 to 63 lower-case letters, digits and hyphens, starting with a letter";
	if (!size_ok(s, SW_RESOURCE_NAME_MAX_LEN, format, ret_msg))
		return false;
	for (size_t i = 0; i < s.len; i++)
		if (!is_lower(s.ptr[i]) && !is_digit(s.ptr[i]) && s.ptr[i] != '-')
			return refuse(format, ret_msg);
	if (!is_lower(s.ptr[0]))
		return refuse(format, ret_msg);
	if (s.ptr[s.len - 1] == '-' || contains(s, "--"))
		return refuse("must not end with a hyphen or have two hyphens in a row", ret_msg);
	return true;
}

/* Lower-case LDH labels of 1..63 bytes joined by dots, none starting or
 * ending with '-', 1..253 bytes, at least min_labels labels, the last
 * starting with a letter: as no top-level domain does otherwise, and a
 * resolver reads "1.2.3.4", "127.1" and "0.0x7f0001" as addresses. */
static bool dns_name_ok(struct sw_str s, size_t min_labels, const char **ret_msg)
{
	if (!size_ok(s, SW_HOSTNAME_MAX_LEN, "must be at most 253 characters", ret_msg))
		return false;
	size_t labels = 0, start = 0, last = 0;
	for (size_t i = 0; i <= s.len; i++) {
		char c = i < s.len ? s.ptr[i] : '.';
		if (c >= 'A' && c <= 'Z')
			return refuse("must be lower-case", ret_msg);
		if (c != '.' && !is_lower(c) && !is_digit(c) && c != '-')
			return refuse("may contain only lower-case letters, digits, hyphens and dots",
				      ret_msg);
		if (c != '.')
			continue;
		size_t n = i - start;
		if (n == 0 || n > 63)
			return refuse("must be labels of 1 to 63 characters separated by single dots",
				      ret_msg);
		if (s.ptr[start] == '-' || s.ptr[i - 1] == '-')
			return refuse("must not have a label starting or ending with a hyphen", ret_msg);
		labels++;
		last = start;
		start = i + 1;
	}
	if (!is_lower(s.ptr[last]))
		return refuse("must end with a label starting with a letter", ret_msg);
	if (labels < min_labels)
		return refuse("must be a full domain name such as app.example.com", ret_msg);
	return true;
}

bool sw_valid_hostname(struct sw_str s, const char **ret_msg)
{
	if (starts_with(s, "*."))
		return refuse("must not be a wildcard", ret_msg);
	return dns_name_ok(s, 2, ret_msg);
}

/* 1..max bytes of [A-Za-z0-9._/-]: the characters of branches and paths. */
static bool path_chars_ok(struct sw_str s, size_t max, const char *too_long, const char **ret_msg)
{
	if (!size_ok(s, max, too_long, ret_msg))
		return false;
	if (!only_alnum_and(s, "._/-"))
		return refuse("may contain only letters, digits, '.', '_', '/' and '-'", ret_msg);
	return true;
}

bool sw_valid_git_branch(struct sw_str s, const char **ret_msg)
{
	if (!path_chars_ok(s, SW_GIT_BRANCH_MAX_LEN, "must be at most 200 characters", ret_msg))
		return false;
	if (s.ptr[0] == '-')
		return refuse("must not start with '-'", ret_msg);
	if (sw_str_eq(s, SW_STR("HEAD")))
		return refuse("must not be HEAD", ret_msg);
	if (contains(s, ".."))
		return refuse("must not contain \"..\"", ret_msg);
	const char *problem = component_problem(s, false);
	if (problem)
		return refuse(problem, ret_msg);
	if (s.ptr[0] == '.' || contains(s, "/."))
		return refuse("must not have a component starting with '.'", ret_msg);
	if (s.ptr[s.len - 1] == '.')
		return refuse("must not end with '.'", ret_msg);
	if (ends_with(s, ".lock") || contains(s, ".lock/"))
		return refuse("must not have a component ending with \".lock\"", ret_msg);
	return true;
}

bool sw_valid_relative_path(struct sw_str s, const char **ret_msg)
{
	if (!path_chars_ok(s, SW_PATH_MAX_LEN, "must be at most 255 characters", ret_msg))
		return false;
	if (s.ptr[0] == '/')
		return refuse("must be relative to the root of the source (not start with '/')",
			      ret_msg);
	if (sw_str_eq(s, SW_STR(".")))
		return true;
	const char *problem = component_problem(s, true);
	return problem ? refuse(problem, ret_msg) : true;
}

/* '/' and components of [A-Za-z0-9._-], 2..SW_PATH_MAX_LEN bytes. */
static bool absolute_path_ok(struct sw_str s, const char **ret_msg)
{
	if (!path_chars_ok(s, SW_PATH_MAX_LEN, "must be at most 255 characters", ret_msg))
		return false;
	if (s.ptr[0] != '/')
		return refuse("must be an absolute path (start with '/')", ret_msg);
	if (s.len == 1)
		return refuse("must not be the root directory", ret_msg);
	const char *problem = component_problem(tail(s, 1), false);
	return problem ? refuse(problem, ret_msg) : true;
}

/* Whether s is dir, below it, or above it (so that mounting s shows dir). */
static bool overlaps(struct sw_str s, const char *dir)
{
	struct sw_str d = sw_str_cstr(dir);
	if (s.len >= d.len)
		return starts_with(s, dir) && (s.len == d.len || s.ptr[d.len] == '/');
	return memcmp(d.ptr, s.ptr, s.len) == 0 && d.ptr[s.len] == '/';
}

bool sw_valid_container_path(struct sw_str s, const char **ret_msg)
{
	if (!absolute_path_ok(s, ret_msg))
		return false;
	if (overlaps(s, "/proc") || overlaps(s, "/sys") || overlaps(s, "/dev"))
		return refuse("must not be under /proc, /sys or /dev", ret_msg);
	return true;
}

bool sw_valid_host_path(struct sw_str s, const char **ret_msg)
{
	if (!absolute_path_ok(s, ret_msg))
		return false;
	/* /var/run is a link to /run on current distributions. */
	static const char *const host[] = { "/etc", "/proc", "/sys", "/dev", "/boot", "/root",
					    "/var/run/docker.sock", "/run/docker.sock" };
	for (size_t i = 0; i < SW_ARRAY_SIZE(host); i++)
		if (overlaps(s, host[i]))
			return refuse("must not be, contain or be under /etc, /proc, /sys, /dev, /boot, "
				      "/root or the Docker socket",
				      ret_msg);
	return true;
}

/* RFC 3986 path and query characters, '%' only before two hex digits. */
static bool uri_chars_ok(struct sw_str s, const char **ret_msg)
{
	for (size_t i = 0; i < s.len; i++) {
		char c = s.ptr[i];
		if (c == '#')
			return refuse("must not have a fragment ('#')", ret_msg);
		if (c == '%') {
			if (s.len - i < 3 || !is_hex(s.ptr[i + 1]) || !is_hex(s.ptr[i + 2]))
				return refuse("must have two hex digits after each '%'", ret_msg);
			i += 2;
		} else if (!is_alnum(c) && !(c && strchr("-._~!$&'()*+,;=:@/?", c))) {
			return refuse("may contain only URL characters (RFC 3986)", ret_msg);
		}
	}
	return true;
}

bool sw_valid_http_path(struct sw_str s, const char **ret_msg)
{
	if (!size_ok(s, SW_HTTP_PATH_MAX_LEN, "must be at most 256 characters", ret_msg))
		return false;
	if (s.ptr[0] != '/' || starts_with(s, "//"))
		return refuse("must start with a single '/'", ret_msg);
	if (contains(s, ".."))
		return refuse("must not contain \"..\"", ret_msg);
	return uri_chars_ok(s, ret_msg);
}

/* A host of a URL: a canonical dotted quad, a DNS name (one label will
 * do), or the inside of "[...]" as an IPv6 literal when bracketed. Any
 * other spelling inet_aton() would take ("127.1", "0x7f000001") is
 * refused, so the host checked is the host connected to. */
static bool url_host_ok(struct sw_str h, bool bracketed, const char **ret_msg)
{
	char buf[SW_HOSTNAME_MAX_LEN + 1];
	bool fits = h.len > 0 && h.len < sizeof(buf);
	if (fits) {
		memcpy(buf, h.ptr, h.len);
		buf[h.len] = '\0';
	}
	if (bracketed) {
		struct in6_addr a6;
		if (!fits || !only_alnum_and(h, ":.") || inet_pton(AF_INET6, buf, &a6) != 1)
			return refuse("must have a valid IPv6 address in brackets", ret_msg);
		return true;
	}
	struct in_addr a;
	/* buf would end at a NUL: inet_aton() must see all of h. */
	if (fits && only_alnum_and(h, ".-") && inet_aton(buf, &a) == 1) {
		char canon[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &a, canon, sizeof(canon));
		if (strcmp(canon, buf) != 0)
			return refuse("must write an IPv4 address as four decimal numbers", ret_msg);
		return true;
	}
	return h.len ? dns_name_ok(h, 1, ret_msg) : refuse("must have a host", ret_msg);
}

/* Reads a host at the start of s ("[v6]" or up to a ':' or the end) into
 * *ret_host; *ret_used is how many bytes it took. */
static bool read_host(struct sw_str s, struct sw_str *ret_host, size_t *ret_used,
		      const char **ret_msg)
{
	if (s.len && s.ptr[0] == '[') {
		const char *close = memchr(s.ptr, ']', s.len);
		if (!close)
			return refuse("must have a valid IPv6 address in brackets", ret_msg);
		*ret_host = sw_str_from(s.ptr + 1, (size_t)(close - s.ptr) - 1);
		*ret_used = (size_t)(close - s.ptr) + 1;
		return url_host_ok(*ret_host, true, ret_msg);
	}
	const char *colon = memchr(s.ptr, ':', s.len);
	*ret_host = sw_str_from(s.ptr, colon ? (size_t)(colon - s.ptr) : s.len);
	*ret_used = ret_host->len;
	return url_host_ok(*ret_host, false, ret_msg);
}

static bool port_ok(struct sw_str s, unsigned *ret_port, const char **ret_msg)
{
	unsigned v = 0;
	if (s.len == 0 || s.len > 5 || s.ptr[0] == '0')
		return refuse("must have a port from 1 to 65535", ret_msg);
	for (size_t i = 0; i < s.len; i++) {
		if (!is_digit(s.ptr[i]))
			return refuse("must have a port from 1 to 65535", ret_msg);
		v = v * 10 + (unsigned)(s.ptr[i] - '0');
	}
	if (v > 65535)
		return refuse("must have a port from 1 to 65535", ret_msg);
	*ret_port = v;
	return true;
}

/* The authority at s[*pos] (up to '/', '?', '#' or the end): host and an
 * optional ":port" (*ret_port is left alone without one); no userinfo. */
static bool read_authority(struct sw_str s, size_t *pos, struct sw_str *ret_host,
			   unsigned *ret_port, const char **ret_msg)
{
	size_t end = *pos;
	while (end < s.len && !(s.ptr[end] && strchr("/?#", s.ptr[end])))
		end++;
	struct sw_str auth = sw_str_from(s.ptr + *pos, end - *pos);
	if (memchr(auth.ptr, '@', auth.len))
		return refuse("must not contain a user name or password", ret_msg);
	size_t used;
	if (!read_host(auth, ret_host, &used, ret_msg))
		return false;
	if (used < auth.len) {
		if (auth.ptr[used] != ':')
			return refuse("must have a valid host", ret_msg);
		if (!port_ok(tail(auth, used + 1), ret_port, ret_msg))
			return false;
	}
	*pos = end;
	return true;
}

bool sw_valid_url(struct sw_str s, bool https_only, struct sw_str *ret_host, unsigned *ret_port,
		  const char **ret_msg)
{
	if (!size_ok(s, SW_URL_MAX_LEN, "must be at most 2048 characters", ret_msg))
		return false;
	size_t pos;
	unsigned port;
	if (starts_with(s, "https://")) {
		pos = 8;
		port = 443;
	} else if (starts_with(s, "http://") && !https_only) {
		pos = 7;
		port = 80;
	} else {
		return refuse(https_only ? "must be an https:// URL" : "must be an http:// or https:// URL",
			      ret_msg);
	}
	struct sw_str host;
	if (!read_authority(s, &pos, &host, &port, ret_msg) || !uri_chars_ok(tail(s, pos), ret_msg))
		return false;
	if (ret_host)
		*ret_host = host;
	if (ret_port)
		*ret_port = port;
	return true;
}

/* The path of a repository: components of [A-Za-z0-9._~-], none ".", ".."
 * or starting with '-'. */
static bool git_path_ok(struct sw_str s, const char **ret_msg)
{
	if (s.len == 0)
		return refuse("must name a repository path", ret_msg);
	if (!only_alnum_and(s, "._~-/"))
		return refuse("must have a path of letters, digits and '.', '_', '~', '-', '/'", ret_msg);
	const char *problem = component_problem(s, true);
	return problem ? refuse(problem, ret_msg) : true;
}

/* "user@" at the start of s: [a-z_][a-z0-9_-]{0,31}. *ret_used counts the '@'. */
static bool git_user_ok(struct sw_str s, size_t *ret_used, const char **ret_msg)
{
	const char *at = memchr(s.ptr, '@', s.len);
	size_t n = at ? (size_t)(at - s.ptr) : 0;
	bool ok = n >= 1 && n <= 32 && (is_lower(s.ptr[0]) || s.ptr[0] == '_');
	for (size_t i = 1; ok && i < n; i++)
		ok = is_lower(s.ptr[i]) || is_digit(s.ptr[i]) || s.ptr[i] == '_' || s.ptr[i] == '-';
	if (!ok)
		return refuse("must have a user of lower-case letters, digits, '_' and '-' before '@'",
			      ret_msg);
	*ret_used = n + 1;
	return true;
}

static bool git_https_ok(struct sw_str s, const char **ret_msg)
{
	size_t pos = 8;
	struct sw_str host;
	unsigned port;
	if (!read_authority(s, &pos, &host, &port, ret_msg))
		return false;
	if (memchr(s.ptr, '?', s.len) || memchr(s.ptr, '#', s.len))
		return refuse("must not have a query or a fragment", ret_msg);
	if (pos == s.len || s.ptr[pos] != '/')
		return refuse("must name a repository path", ret_msg);
	return git_path_ok(tail(s, pos + 1), ret_msg);
}

static bool git_ssh_ok(struct sw_str s, const char **ret_msg)
{
	size_t pos = 6, used;
	struct sw_str host;
	unsigned port;
	if (!git_user_ok(tail(s, pos), &used, ret_msg))
		return false;
	pos += used;
	if (!read_authority(s, &pos, &host, &port, ret_msg))
		return false;
	if (pos == s.len || s.ptr[pos] != '/')
		return refuse("must name a repository path", ret_msg);
	return git_path_ok(tail(s, pos + 1), ret_msg);
}

/* "user@host:path", the path relative to the user's home. */
static bool git_scp_ok(struct sw_str s, const char **ret_msg)
{
	size_t pos, used;
	struct sw_str host;
	if (!git_user_ok(s, &pos, ret_msg) || !read_host(tail(s, pos), &host, &used, ret_msg))
		return false;
	pos += used;
	if (pos == s.len || s.ptr[pos] != ':')
		return refuse("must have ':' and a path after the host", ret_msg);
	struct sw_str path = tail(s, pos + 1);
	if (path.len && path.ptr[0] == '/')
		return refuse("must have a path relative to the home directory after ':'", ret_msg);
	return git_path_ok(path, ret_msg);
}

bool sw_valid_git_url(struct sw_str s, bool allow_file, enum sw_git_url_kind *ret_kind,
		      const char **ret_msg)
{
	if (!size_ok(s, SW_URL_MAX_LEN, "must be at most 2048 characters", ret_msg))
		return false;
	enum sw_git_url_kind kind;
	bool ok;
	if (starts_with(s, "https://")) {
		kind = SW_GIT_URL_HTTPS;
		ok = git_https_ok(s, ret_msg);
	} else if (starts_with(s, "ssh://")) {
		kind = SW_GIT_URL_SSH;
		ok = git_ssh_ok(s, ret_msg);
	} else if (starts_with(s, "file://")) {
		if (!allow_file)
			return refuse("must not be a file:// URL", ret_msg);
		kind = SW_GIT_URL_FILE;
		ok = starts_with(s, "file:///") ? git_path_ok(tail(s, 8), ret_msg)
						: refuse("must be file:// and an absolute path", ret_msg);
	} else if (memchr(s.ptr, '@', s.len)) {
		kind = SW_GIT_URL_SSH;
		ok = git_scp_ok(s, ret_msg);
	} else {
		return refuse(allow_file ? "must be an https://, ssh://, user@host:path or file:/// URL"
					 : "must be an https://, ssh:// or user@host:path URL",
			      ret_msg);
	}
	if (ok && ret_kind)
		*ret_kind = kind;
	return ok;
}

bool sw_valid_env_key(struct sw_str s, const char **ret_msg)
{
	static const char format[] = "must be letters, digits and '_', not starting with a digit";
	if (!size_ok(s, SW_ENV_KEY_MAX_LEN, "must be at most 128 characters", ret_msg))
		return false;
	if (is_digit(s.ptr[0]) || !only_alnum_and(s, "_"))
		return refuse(format, ret_msg);
	return true;
}

/* The code point of the UTF-8 sequence at s[*i], advancing *i past it;
 * -1 for anything but the shortest form of a scalar value. */
static long utf8_decode(struct sw_str s, size_t *i)
{
	unsigned char lead = (unsigned char)s.ptr[*i];
	size_t more;
	if (lead < 0x80)
		more = 0;
	else if (lead >= 0xC0 && lead < 0xE0)
		more = 1;
	else if (lead >= 0xE0 && lead < 0xF0)
		more = 2;
	else if (lead >= 0xF0 && lead < 0xF8)
		more = 3;
	else
		return -1;
	if (more > s.len - *i - 1)
		return -1;
	long cp = more ? lead & (0x3F >> more) : lead;
	for (size_t k = 1; k <= more; k++) {
		unsigned char b = (unsigned char)s.ptr[*i + k];
		if (b >> 6 != 2)
			return -1;
		cp = cp << 6 | (b & 0x3F);
	}
	static const long shortest[4] = { 0, 0x80, 0x800, 0x10000 };
	if (cp < shortest[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*i += more + 1;
	return cp;
}

/* Valid UTF-8 without NUL; without any control character (C0, DEL, C1)
 * when no_controls. */
static bool utf8_text_ok(struct sw_str s, bool no_controls, const char **ret_msg)
{
	for (size_t i = 0; i < s.len;) {
		long cp = utf8_decode(s, &i);
		if (cp < 0)
			return refuse("must be valid UTF-8", ret_msg);
		if (cp == 0 || (no_controls && (cp < 0x20 || (cp >= 0x7F && cp < 0xA0))))
			return refuse(no_controls ? "must not contain control characters"
						  : "must not contain NUL characters",
				      ret_msg);
	}
	return true;
}

bool sw_valid_env_value(struct sw_str s, const char **ret_msg)
{
	if (s.len > SW_ENV_VALUE_MAX_LEN)
		return refuse("must be at most 32768 bytes", ret_msg);
	return utf8_text_ok(s, false, ret_msg);
}

bool sw_valid_command_arg(struct sw_str s, const char **ret_msg)
{
	if (!size_ok(s, SW_COMMAND_ARG_MAX_LEN, "must be at most 1024 bytes", ret_msg))
		return false;
	return utf8_text_ok(s, true, ret_msg);
}

bool sw_is_uuid(struct sw_str s)
{
	if (s.len != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		char c = s.ptr[i];
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
			return false;
		}
	}
	return true;
}
