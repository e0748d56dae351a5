/* Validators for user-supplied strings. Each accepts only a strict format,
 * so nothing stored can later be read as markup, a path or a command. */
#ifndef STEWARD_VALIDATE_H
#define STEWARD_VALIDATE_H

#include "steward/base/base.h"

/* An e-mail address: local@domain, at most SW_EMAIL_MAX_LEN bytes, a dot-atom
 * local part of at most 64 bytes, a domain of LDH labels with at least one
 * dot. Writes the lower-cased address into out (cap bytes, NUL-terminated).
 * false with a field-error message in *ret_msg. */
bool sw_valid_email(struct sw_str s, char *out, size_t cap, const char **ret_msg);

/* A display name: 1..max characters after trimming spaces, valid UTF-8 (as
 * jansson guarantees), no control characters. *ret_trimmed is the trimmed
 * view. false with a field-error message. */
bool sw_valid_display_name(struct sw_str s, size_t max, struct sw_str *ret_trimmed,
			   const char **ret_msg);

/* Number of UTF-8 code points in s. */
size_t sw_utf8_length(struct sw_str s);

/* ---- formats of the resource API ----
 * Each validator takes the client's string as given (no trimming) and
 * returns true when it is in the format, else false with a field-error
 * message (a static sentence such as "must be ...") in *ret_msg. Each
 * but the last two (values and arguments, which are UTF-8) accepts
 * printable ASCII without spaces only, so that nothing stored can later be
 * read as a command, a path outside its root or markup. Lengths are named
 * in limits.h. */

/* A resource name (application, project, environment, server, service,
 * volume, channel, credential): a DNS label, 1..SW_RESOURCE_NAME_MAX_LEN
 * of [a-z0-9-], starting with a letter, not ending with '-', no "--".
 * Usable as a container, compose project and volume name as it is. */
bool sw_valid_resource_name(struct sw_str s, const char **ret_msg);

/* A hostname a domain is served under: lower-case LDH labels of 1..63
 * bytes separated by dots, at least two labels, 1..253 bytes, no trailing
 * dot, no label starting or ending with '-', the last label starting with
 * a letter (so no IPv4 literal in any spelling inet_aton() reads, such as
 * "1.2.3.4" or "0.0x7f0001"). A leading "*." wildcard is refused. IDNs
 * are given in their xn-- form. */
bool sw_valid_hostname(struct sw_str s, const char **ret_msg);

/* A git branch name, by git check-ref-format's rules over the characters
 * [A-Za-z0-9._/-]: 1..SW_GIT_BRANCH_MAX_LEN bytes, not starting with '-'
 * or '/', not ending with '/' or '.', no "..", no "//", no "@{", no
 * component starting with '.' or ending with ".lock", not "HEAD". */
bool sw_valid_git_branch(struct sw_str s, const char **ret_msg);

/* A path relative to the root of a source tree (Dockerfile path, build
 * context): 1..SW_PATH_MAX_LEN bytes of [A-Za-z0-9._/-], not absolute, no
 * empty, "." or ".." component except that the whole path may be ".",
 * no trailing '/', no component starting with '-'. */
bool sw_valid_relative_path(struct sw_str s, const char **ret_msg);

/* An absolute path inside a container (volume mount path): '/' then
 * components of [A-Za-z0-9._-], 2..SW_PATH_MAX_LEN bytes, no "." or ".."
 * component, no empty component, no trailing '/', not "/" itself, and not
 * under /proc, /sys or /dev (the runtime's own). */
bool sw_valid_container_path(struct sw_str s, const char **ret_msg);

/* An absolute path on a host (a bind mount, operators only): the same
 * rules as sw_valid_container_path() without the /proc, /sys, /dev rule,
 * but refusing "/" and the host's /etc, /proc, /sys, /dev, /boot, /root,
 * /var/run/docker.sock and /run/docker.sock themselves, anything below
 * them, and anything above them (/var, /var/run and /run would show the
 * socket). The check is by text: the caller resolves symbolic links on
 * the host before mounting. */
bool sw_valid_host_path(struct sw_str s, const char **ret_msg);

/* The path of an HTTP request (a health check): '/' followed by at most
 * SW_HTTP_PATH_MAX_LEN - 1 bytes of RFC 3986 pchar, '/' and '?' query
 * characters ([A-Za-z0-9-._~!$&'()*+,;=:@/?%], '%' only before two hex
 * digits); no "#", no "..", no "//" at the start. */
bool sw_valid_http_path(struct sw_str s, const char **ret_msg);

/* An absolute http(s) URL (notification webhooks, git host API base):
 * scheme "http" or "https" (lower-case), "://", a host that is a hostname
 * (lower-case LDH labels as in sw_valid_hostname(), one label allowed,
 * e.g. "localhost"), an IPv4 dotted quad of four decimal numbers (other
 * spellings inet_aton() takes, "127.1" or "0x7f000001", are refused) or
 * a bracketed IPv6 literal without a zone, an optional ":port" (1..65535,
 * no leading zero), then an optional path and query of RFC 3986
 * characters; no userinfo, no fragment, 1..SW_URL_MAX_LEN bytes. When
 * https_only, "http" is refused.
 * The host is a view into s (*ret_host, brackets removed), *ret_port the
 * port given or the scheme's default; either may be NULL. */
bool sw_valid_url(struct sw_str s, bool https_only, struct sw_str *ret_host, unsigned *ret_port,
		  const char **ret_msg);

enum sw_git_url_kind { SW_GIT_URL_HTTPS, SW_GIT_URL_SSH, SW_GIT_URL_FILE };
/* A git repository URL: "https://host[:port]/path" (no userinfo, no query,
 * no fragment), "ssh://user@host[:port]/path", the scp form
 * "user@host:path" (path not starting with '/' or '-'), or, when
 * allow_file, "file:///absolute/path". user is [a-z_][a-z0-9_-]{0,31};
 * host as in sw_valid_url(); the path is one or more '/'-separated
 * components of [A-Za-z0-9._~-] with no empty, "." or ".." component
 * (so no trailing '/') and none starting with '-'. Plain http:// is
 * refused. 1..SW_URL_MAX_LEN bytes. *ret_kind (may be NULL) says which. */
bool sw_valid_git_url(struct sw_str s, bool allow_file, enum sw_git_url_kind *ret_kind,
		      const char **ret_msg);

/* The key of an environment variable: [A-Za-z_][A-Za-z0-9_]*, 1..
 * SW_ENV_KEY_MAX_LEN bytes. */
bool sw_valid_env_key(struct sw_str s, const char **ret_msg);

/* A variable's value: 0..SW_ENV_VALUE_MAX_LEN bytes of valid UTF-8 with no
 * NUL (other control characters, newlines included, are allowed). */
bool sw_valid_env_value(struct sw_str s, const char **ret_msg);

/* One argument of an exec-form command (start command): 1..
 * SW_COMMAND_ARG_MAX_LEN bytes of valid UTF-8 without control characters
 * (C0, DEL or C1). */
bool sw_valid_command_arg(struct sw_str s, const char **ret_msg);

/* Whether s is a UUID in its canonical text form (36 characters). */
bool sw_is_uuid(struct sw_str s);

#endif
