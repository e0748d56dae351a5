/* libFuzzer harness for .dockerignore (src/driver/dockerignore.c): the
 * file comes from the application's repository, so every byte of it is
 * the client's.
 *
 * Input (at most 4 KiB): the file's text up to the first NUL byte; after
 * it, paths to ask about, one a line. More paths are made from the
 * file's own lines (each line as a path, with "/sub" appended, and its
 * first component), so patterns meet paths they can match. Only clean
 * relative paths are asked (no empty, "." or ".." component), at most 32.
 *
 * Beyond "no crash, no UB", checked against properties written here
 * independently of dockerignore.c:
 * - a refusal comes with one sentence of printable ASCII that names the
 *   line ("... line N: ...", N within the file) or the size;
 * - the answer for a path does not depend on what was asked before:
 *   forward, backward from a fresh matcher, and twice in a row agree;
 * - when every pattern is plain ("[A-Za-z0-9._-]" components, '*' and
 *   '?' but no "**", no '!', already clean), a path is excluded exactly
 *   when some line matches it or one of its ancestors by a small
 *   recursive glob matcher ('*' a run without '/', '?' one byte but '/'),
 *   for ASCII paths; so a line without wildcards matches exactly itself
 *   and its subtree;
 * - after keeping a path without pattern characters (the Dockerfile's
 *   rule) it is never excluded, and every excluded ancestor of it is
 *   walked into;
 * - without any exception, no directory is walked into. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../src/driver/driver_internal.h" /* fuzz/ has no src/ include path */
#include "fuzz.h"

#define MAX_INPUT 4096
#define MAX_PATHS 32
#define MAX_PATH_LEN 255

struct paths {
	char p[MAX_PATHS][MAX_PATH_LEN + 1];
	size_t n;
};

/* A relative path with no empty, "." or ".." component. */
static bool clean_path(const char *s, size_t n)
{
	if (n == 0 || n > MAX_PATH_LEN || memchr(s, '\0', n))
		return false;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		size_t len = j - i;
		if (len == 0 || (len == 1 && s[i] == '.') || (len == 2 && s[i] == '.' && s[i + 1] == '.'))
			return false;
		if (j == n)
			return true;
		i = j + 1;
		if (i == n)
			return false; /* a trailing '/' */
	}
	return true;
}

static void add_path(struct paths *ps, const char *s, size_t n)
{
	if (ps->n == MAX_PATHS || !clean_path(s, n))
		return;
	for (size_t i = 0; i < ps->n; i++)
		if (strlen(ps->p[i]) == n && memcmp(ps->p[i], s, n) == 0)
			return;
	memcpy(ps->p[ps->n], s, n);
	ps->p[ps->n++][n] = '\0';
}

/* ---- the oracle for plain patterns ---- */

static bool plain_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == '-' || c == '/' || c == '*' || c == '?';
}

/* '*': any run without '/'; '?': one byte but '/'; else the byte. */
static bool glob(const char *p, size_t pn, const char *s, size_t sn)
{
	if (pn == 0)
		return sn == 0;
	if (p[0] == '*') {
		for (size_t k = 0;; k++) {
			if (glob(p + 1, pn - 1, s + k, sn - k))
				return true;
			if (k == sn || s[k] == '/')
				return false;
		}
	}
	if (sn == 0 || (p[0] == '?' ? s[0] == '/' : p[0] != s[0]))
		return false;
	return glob(p + 1, pn - 1, s + 1, sn - 1);
}

struct line {
	const char *s;
	size_t n;
};

/* The pattern lines when all are plain, into lines: their count, or -1. */
static int plain_lines(const char *text, size_t len, struct line *lines, size_t cap)
{
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		return -1;
	int n = 0;
	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t l = (size_t)((nl ? nl : end) - s);
		if (l > 0 && s[0] != '#') {
			if ((size_t)n == cap)
				return -1;
			for (size_t i = 0; i < l; i++)
				if (!plain_char((unsigned char)s[i]))
					return -1;
			if (!clean_path(s, l))
				return -1;
			for (size_t i = 0; i + 1 < l; i++)
				if (s[i] == '*' && s[i + 1] == '*')
					return -1;
			lines[n++] = (struct line){ s, l };
		}
		s += l + (nl ? 1 : 0);
	}
	return n;
}

static bool ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/* Excluded by the oracle: some line matches the path or an ancestor. */
static bool oracle(const struct line *lines, int n, const char *path)
{
	size_t len = strlen(path);
	for (size_t end = 0; end <= len; end++) {
		if (end < len && path[end] != '/')
			continue;
		for (int i = 0; i < n; i++)
			if (glob(lines[i].s, lines[i].n, path, end))
				return true;
	}
	return false;
}

/* ---- the harness ---- */

static void check_refusal(const char *err, const char *text, size_t len)
{
	ASSERT(err[0]);
	for (const char *c = err; *c; c++)
		ASSERT(*c >= ' ' && *c < 0x7F);
	if (strcmp(err, "out of memory") == 0)
		return;
	unsigned line = 0;
	ASSERT(sscanf(err, ".dockerignore line %u: ", &line) == 1);
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	ASSERT(line >= 1 && line <= lines);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	const char *text = (const char *)data;
	const char *nul = memchr(text, '\0', size);
	size_t len = nul ? (size_t)(nul - text) : size;
	char err[256] = "";
	struct sw_dockerignore *m = sw_dockerignore_parse(text, len, err, sizeof(err));
	if (!m) {
		check_refusal(err, text, len);
		return 0;
	}
	static struct paths ps;
	ps.n = 0;
	if (nul) {
		const char *s = nul + 1, *end = text + size;
		while (s < end) {
			const char *nl = memchr(s, '\n', (size_t)(end - s));
			size_t l = (size_t)((nl ? nl : end) - s);
			add_path(&ps, s, l);
			s += l + (nl ? 1 : 0);
		}
	}
	bool any_exception = false;
	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t l = (size_t)((nl ? nl : end) - s);
		const char *p = s;
		size_t pl = l;
		while (pl && (*p == ' ' || *p == '\t' || *p == '!' || *p == '/'))
			any_exception |= *p == '!', p++, pl--;
		while (pl && (p[pl - 1] == ' ' || p[pl - 1] == '\r' || p[pl - 1] == '/'))
			pl--;
		if (l && s[0] != '#' && memchr(s, '!', l))
			any_exception = true;
		add_path(&ps, p, pl);
		char sub[MAX_PATH_LEN + 8];
		if (pl + 4 <= MAX_PATH_LEN) {
			memcpy(sub, p, pl);
			memcpy(sub + pl, "/sub", 4);
			add_path(&ps, sub, pl + 4);
		}
		const char *slash = memchr(p, '/', pl);
		if (slash)
			add_path(&ps, p, (size_t)(slash - p));
		s += l + (nl ? 1 : 0);
	}

	/* forward, then backward from a fresh matcher, then twice in a row */
	int fwd[MAX_PATHS];
	for (size_t i = 0; i < ps.n; i++) {
		fwd[i] = sw_dockerignore_excluded(m, ps.p[i]);
		ASSERT(fwd[i] == 0 || fwd[i] == 1);
	}
	struct sw_dockerignore *m2 = sw_dockerignore_parse(text, len, err, sizeof(err));
	ASSERT(m2);
	for (size_t i = ps.n; i-- > 0;) {
		ASSERT(sw_dockerignore_excluded(m2, ps.p[i]) == fwd[i]);
		ASSERT(sw_dockerignore_excluded(m2, ps.p[i]) == fwd[i]);
	}
	sw_dockerignore_free(m2);

	struct line lines[64];
	int nl = plain_lines(text, len, lines, 64);
	for (size_t i = 0; nl >= 0 && i < ps.n; i++)
		if (ascii(ps.p[i]))
			ASSERT(fwd[i] == (int)oracle(lines, nl, ps.p[i]));

	if (!any_exception)
		for (size_t i = 0; i < ps.n; i++)
			ASSERT(!sw_dockerignore_walk_into(m, ps.p[i]));

	/* Keeping a path: never excluded, its excluded ancestors walked into
	 * (a path with pattern characters is a pattern of its own, as it is
	 * for Docker: not checked). */
	if (ps.n > 0) {
		const char *kept = ps.p[data[0] % ps.n];
		if (!strpbrk(kept, "*?[]\\^") && sw_dockerignore_keep(m, kept) == 0) {
			ASSERT(sw_dockerignore_excluded(m, kept) == 0);
			char anc[MAX_PATH_LEN + 1];
			for (size_t k = 0; kept[k]; k++) {
				if (kept[k] != '/')
					continue;
				memcpy(anc, kept, k);
				anc[k] = '\0';
				if (sw_dockerignore_excluded(m, anc) == 1)
					ASSERT(sw_dockerignore_walk_into(m, anc));
			}
		}
	}
	sw_dockerignore_free(m);
	return 0;
}
