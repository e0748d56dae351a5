/* .dockerignore: which paths of a build context are left out, decided as
 * the Docker CLI decides when it sends a context to the engine
 * (docs.docker.com/build/concepts/context/#dockerignore-files; the code
 * is moby's ignorefile.ReadAll, patternmatcher and archive.TarWithOptions).
 *
 * Reading (ReadAll): lines end at '\n' (a '\r' before it goes with the
 * whitespace); a UTF-8 BOM opening the file is dropped; a line whose
 * first byte is '#' is a comment (only there: "  #x" is a pattern);
 * surrounding whitespace (Go's unicode.IsSpace) is trimmed and empty lines
 * are skipped; a leading '!' makes an exception (whitespace after it is
 * trimmed too); the rest is cleaned as Go's filepath.Clean cleans ("a//b/"
 * -> "a/b", "./a" -> "a", "a/../b" -> "b") and a leading '/' is dropped.
 * "!" alone is refused, as patternmatcher.New refuses it.
 *
 * Syntax (Go's filepath.Match, checked as patternmatcher.New checks it):
 * '*' any run of characters but '/', '?' one character but '/', "[...]" a
 * class of characters and ranges ("[^...]" negated; it can match '/'),
 * '\' takes the next character literally; and "**" (patternmatcher's own)
 * any number of directories: "**" then "/x" matches "x", "a/x", "a/b/x",
 * and "x/" then "**" matches everything under x. Characters are UTF-8 code points (an
 * invalid byte is one U+FFFD, as Go's regexp reads it).
 *
 * Matching (MatchesUsingParentResults, as the CLI's walk uses it): the
 * patterns are tried in order on the path itself, each remembering whether
 * it matched the path's parent; a pattern that matched the parent matches
 * the child; the last pattern that matches decides (an exception:
 * included; else excluded); a path no pattern matches is included. As in
 * moby, a pattern is not even tried where it could not change the answer
 * so far (an exclusion while nothing excluded the path, an exception while
 * it is included), and it then does not pass its match on to children:
 * that rule is kept because it decides real cases, e.g. with the lines
 * "a", "!a/b", "a", the path a/b/c is sent.
 *
 * Where this deliberately differs from moby (whose patterns become Go
 * regular expressions, so some texts mean something filepath.Match does
 * not): '\' before a letter, a digit or a non-ASCII character is refused
 * (Go's regexp reads "\d" as a digit and refuses most others); a range
 * running backwards ("[z-a]") is refused (the regexp refuses it when the
 * first path is matched); inside a class, '*' and '?' are the characters
 * themselves and "[:alpha:]" is a list of characters (the regexp garbles
 * the first two and reads the last as a POSIX class). What is kept as
 * moby has it, odd as it is: a pattern without any of "*?[]\" compares as
 * plain text (so a '^' in it is a '^'), while in one with them '^' matches
 * only at the start of the path; "**" not followed by '/' mid-pattern
 * ("a**b") is the regexp "a(.*[/])?b": ab, a/b, ax/b but not axb; a pattern starting
 * with "**" and otherwise plain text matches by suffix ("**" + "foo" also
 * matches "barfoo"); a "**" does not cross a newline in a file name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "driver/driver_internal.h"

#define RUNE_ERROR 0xFFFDu

enum tok_kind {
	TOK_LIT,         /* one code point */
	TOK_ANY,         /* '?': one code point but '/' */
	TOK_CLASS,       /* "[...]" */
	TOK_STAR,        /* '*': any run without '/' */
	TOK_DSTAR_SLASH, /* "**" mid-pattern: empty, or any run ending with '/' */
	TOK_DSTAR_END,   /* "**" at the end (after something not plain) */
	TOK_CARET,       /* '^' in a regular-expression pattern: the path's start */
};

struct tok {
	uint8_t kind;
	bool negated;      /* TOK_CLASS */
	uint32_t rune;     /* TOK_LIT */
	uint32_t first;    /* TOK_CLASS: its ranges in m->ranges */
	uint32_t nranges;
};

struct range {
	uint32_t lo, hi;
};

enum match_type { MATCH_EXACT, MATCH_PREFIX, MATCH_SUFFIX, MATCH_GLOB };

struct pattern {
	char *text;        /* cleaned, without the '!' (may hold NUL bytes) */
	size_t len;
	bool exclusion;
	enum match_type type;
	uint32_t first_tok, ntoks; /* MATCH_GLOB: its tokens in m->toks */
};

/* The results of one directory level of the last path asked about: each
 * pattern's "matched" bit and the decision. */
struct level {
	size_t len;        /* the prefix of m->last this level is */
	bool excluded;
};

struct sw_dockerignore {
	struct pattern *pats;
	size_t npats, pats_cap;
	struct tok *toks;
	size_t ntoks, toks_cap;
	struct range *ranges;
	size_t nranges, ranges_cap;
	bool exclusions;
	/* the ancestors' results (see sw_dockerignore_excluded) */
	char *last;
	size_t last_cap;
	struct level *levels;
	uint8_t *bits;     /* nlevels rows of npats bits */
	size_t nlevels, levels_cap, bits_row;
	/* the NFA's state sets (ntoks + 1 each) */
	uint8_t *cur, *next;
	size_t sets_cap;
};

/* ---- UTF-8, as Go reads it ---- */

/* The code point at s (n bytes left) and its width; an invalid or
 * truncated sequence is one U+FFFD of width 1. */
static uint32_t decode(const unsigned char *s, size_t n, size_t *width)
{
	*width = 1;
	if (s[0] < 0x80)
		return s[0];
	size_t need;
	uint32_t r, min;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		need = 1, r = s[0] & 0x1Fu, min = 0x80;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		need = 2, r = s[0] & 0x0Fu, min = 0x800;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		need = 3, r = s[0] & 0x07u, min = 0x10000;
	else
		return RUNE_ERROR;
	if (n < need + 1)
		return RUNE_ERROR;
	for (size_t i = 1; i <= need; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return RUNE_ERROR;
		r = r << 6 | (s[i] & 0x3Fu);
	}
	if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF))
		return RUNE_ERROR;
	*width = need + 1;
	return r;
}

/* Go's unicode.IsSpace. */
static bool is_space(uint32_t r)
{
	switch (r) {
	case '\t': case '\n': case '\v': case '\f': case '\r': case ' ':
	case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029:
	case 0x202F: case 0x205F: case 0x3000:
		return true;
	default:
		return r >= 0x2000 && r <= 0x200A;
	}
}

/* strings.TrimSpace of [*s, *s + *n): from the end, each code point is
 * read as utf8.DecodeLastRune reads it. */
static void trim_space(const char **s, size_t *n)
{
	const unsigned char *p = (const unsigned char *)*s;
	size_t len = *n, w;
	while (len > 0 && is_space(decode(p, len, &w))) {
		p += w;
		len -= w;
	}
	while (len > 0) {
		size_t start = len - 1, lim = len >= 4 ? len - 4 : 0;
		while (start > lim && (p[start] & 0xC0) == 0x80)
			start--;
		uint32_t r = decode(p + start, len - start, &w);
		if (start + w != len)
			start = len - 1, r = RUNE_ERROR;
		if (!is_space(r))
			break;
		len = start;
	}
	*s = (const char *)p;
	*n = len;
}

/* ---- filepath.Clean (Unix) ---- */

/* The cleaned form of [s, s + n) into out (n + 1 bytes at least); its
 * length. */
static size_t clean(const char *s, size_t n, char *out)
{
	if (n == 0) {
		out[0] = '.';
		return 1;
	}
	bool rooted = s[0] == '/';
	size_t w = 0, r = 0, dotdot = 0;
	if (rooted) {
		out[w++] = '/';
		r = dotdot = 1;
	}
	while (r < n) {
		if (s[r] == '/') {
			r++;
		} else if (s[r] == '.' && (r + 1 == n || s[r + 1] == '/')) {
			r++;
		} else if (s[r] == '.' && s[r + 1] == '.' && (r + 2 == n || s[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out[w] != '/')
					w--;
			} else if (!rooted) {
				if (w > 0)
					out[w++] = '/';
				out[w++] = '.';
				out[w++] = '.';
				dotdot = w;
			}
		} else {
			if ((rooted && w != 1) || (!rooted && w != 0))
				out[w++] = '/';
			for (; r < n && s[r] != '/'; r++)
				out[w++] = s[r];
		}
	}
	if (w == 0)
		out[w++] = '.';
	return w;
}

/* ---- growing arrays ---- */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* ---- compiling one pattern ---- */

enum bad {
	BAD_NONE,
	BAD_CLASS_OPEN,
	BAD_CLASS_START,
	BAD_RANGE,
	BAD_BACKSLASH_END,
	BAD_ESCAPE,
	BAD_UTF8,
	BAD_BANG,
	BAD_MEMORY,
};

static const char *bad_why(enum bad b)
{
	switch (b) {
	case BAD_CLASS_OPEN:
		return "a character class \"[\" is not closed";
	case BAD_CLASS_START:
		return "a character class is empty or starts with \"]\" or \"-\" (escape them with \"\\\")";
	case BAD_RANGE:
		return "a range in a character class is incomplete or runs backwards";
	case BAD_BACKSLASH_END:
		return "it ends with \"\\\", which escapes nothing";
	case BAD_ESCAPE:
		return "\"\\\" escapes a letter, a digit or a non-ASCII character "
		       "(only punctuation can be escaped)";
	case BAD_UTF8:
		return "a character class holds bytes that are not UTF-8";
	case BAD_BANG:
		return "\"!\" alone names no pattern";
	default:
		return "out of memory";
	}
}

/* What '\' may escape: ASCII but letters and digits (Go's regexp reads
 * those as its own escapes or refuses them). */
static bool escapable(unsigned char c)
{
	return c < 0x80 && !(c >= '0' && c <= '9') && !((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

/* One character of a class (Go's getEsc) at *i: its code point. */
static enum bad class_char(const unsigned char *s, size_t n, size_t *i, uint32_t *ret)
{
	if (*i >= n)
		return BAD_CLASS_OPEN;
	if (s[*i] == '-' || s[*i] == ']')
		return BAD_RANGE;
	if (s[*i] == '\\') {
		(*i)++;
		if (*i >= n)
			return BAD_CLASS_OPEN;
		if (!escapable(s[*i]))
			return BAD_ESCAPE;
	}
	size_t w;
	uint32_t r = decode(s + *i, n - *i, &w);
	if (r == RUNE_ERROR && w == 1 && s[*i] >= 0x80)
		return BAD_UTF8;
	*i += w;
	if (*i >= n)
		return BAD_CLASS_OPEN;
	*ret = r;
	return BAD_NONE;
}

/* The class opening at s[*i] (just after '[') into m's ranges. */
static enum bad compile_class(struct sw_dockerignore *m, const unsigned char *s, size_t n, size_t *i,
			      struct tok *t)
{
	if (*i >= n)
		return BAD_CLASS_OPEN;
	t->kind = TOK_CLASS;
	t->negated = s[*i] == '^';
	if (t->negated)
		(*i)++;
	t->first = (uint32_t)m->nranges;
	t->nranges = 0;
	for (;;) {
		if (*i < n && s[*i] == ']' && t->nranges > 0) {
			(*i)++;
			return BAD_NONE;
		}
		if (*i < n && (s[*i] == ']' || s[*i] == '-') && t->nranges == 0)
			return BAD_CLASS_START;
		uint32_t lo, hi;
		enum bad b = class_char(s, n, i, &lo);
		if (b)
			return b;
		hi = lo;
		if (s[*i] == '-') {
			(*i)++;
			if ((b = class_char(s, n, i, &hi)) != BAD_NONE)
				return b;
			if (hi < lo)
				return BAD_RANGE;
		}
		if (grow((void **)&m->ranges, &m->ranges_cap, m->nranges + 1, sizeof(*m->ranges)) < 0)
			return BAD_MEMORY;
		m->ranges[m->nranges++] = (struct range){ lo, hi };
		t->nranges++;
	}
}

/* patternmatcher's compile(): the tokens of p and its match type. */
static enum bad compile(struct sw_dockerignore *m, struct pattern *p)
{
	const unsigned char *s = (const unsigned char *)p->text;
	size_t n = p->len, i = 0;
	enum match_type type = MATCH_EXACT;
	p->first_tok = (uint32_t)m->ntoks;
	for (unsigned iter = 0; i < n; iter++) {
		struct tok t = { .kind = TOK_LIT };
		size_t w;
		uint32_t ch = decode(s + i, n - i, &w);
		i += w;
		bool add = true;
		if (ch == '*' && i < n && s[i] == '*') {
			i++;
			if (i < n && s[i] == '/')
				i++;
			if (i == n) {
				if (type == MATCH_EXACT) {
					type = MATCH_PREFIX;
					add = false;
				} else {
					t.kind = TOK_DSTAR_END;
					type = MATCH_GLOB;
				}
			} else {
				t.kind = TOK_DSTAR_SLASH;
				type = MATCH_GLOB;
			}
			if (iter == 0)
				type = MATCH_SUFFIX;
		} else if (ch == '*') {
			t.kind = TOK_STAR;
			type = MATCH_GLOB;
		} else if (ch == '?') {
			t.kind = TOK_ANY;
			type = MATCH_GLOB;
		} else if (ch == '\\') {
			if (i >= n)
				return BAD_BACKSLASH_END;
			if (!escapable(s[i]))
				return BAD_ESCAPE;
			t.rune = s[i++];
			type = MATCH_GLOB;
		} else if (ch == '[') {
			enum bad b = compile_class(m, s, n, &i, &t);
			if (b)
				return b;
			type = MATCH_GLOB;
		} else if (ch == ']') {
			t.rune = ch;
			type = MATCH_GLOB;
		} else if (ch == '^') {
			t.kind = TOK_CARET;
		} else {
			t.rune = ch; /* ".+()|{}$" too: moby escapes them */
		}
		if (add) {
			if (grow((void **)&m->toks, &m->toks_cap, m->ntoks + 1, sizeof(*m->toks)) < 0)
				return BAD_MEMORY;
			m->toks[m->ntoks++] = t;
		}
	}
	p->type = type;
	p->ntoks = (uint32_t)m->ntoks - p->first_tok;
	if (type != MATCH_GLOB) /* plain text: the tokens are not needed */
		m->ntoks = p->first_tok, p->ntoks = 0;
	return BAD_NONE;
}

/* Adds the pattern [s, s + n) (cleaned, with its '!' if any). */
static enum bad add_pattern(struct sw_dockerignore *m, const char *s, size_t n)
{
	bool exclusion = n > 0 && s[0] == '!';
	if (exclusion && n == 1)
		return BAD_BANG;
	if (exclusion)
		s++, n--;
	if (grow((void **)&m->pats, &m->pats_cap, m->npats + 1, sizeof(*m->pats)) < 0)
		return BAD_MEMORY;
	struct pattern *p = &m->pats[m->npats];
	*p = (struct pattern){ .exclusion = exclusion, .len = n, .text = malloc(n + 1) };
	if (!p->text)
		return BAD_MEMORY;
	memcpy(p->text, s, n);
	p->text[n] = '\0';
	enum bad b = compile(m, p);
	if (b) {
		free(p->text);
		return b;
	}
	m->npats++;
	m->exclusions |= exclusion;
	return BAD_NONE;
}

/* One line of the file as ReadAll and New take it: BAD_NONE when it is
 * a comment, empty, or added. */
static enum bad add_line(struct sw_dockerignore *m, const char *s, size_t n, char *scratch)
{
	if (n > 0 && s[0] == '#')
		return BAD_NONE;
	trim_space(&s, &n);
	if (n == 0)
		return BAD_NONE;
	bool invert = s[0] == '!';
	size_t o = 0;
	if (invert) {
		s++, n--;
		trim_space(&s, &n);
		scratch[o++] = '!';
	}
	if (n > 0) {
		size_t c = clean(s, n, scratch + o);
		if (c > 1 && scratch[o] == '/') {
			memmove(scratch + o, scratch + o + 1, c - 1);
			c--;
		}
		o += c;
	}
	/* New() trims and cleans again: only "!/" changes (to "!"). */
	if (o == 2 && scratch[0] == '!' && scratch[1] == '/')
		o = 1;
	return add_pattern(m, scratch, o);
}

/* The line as a short quotation: printable ASCII, others as '?'. */
static void quote(char *out, size_t cap, const char *s, size_t n)
{
	size_t o = 0, limit = 60;
	for (size_t i = 0; i < n && i < limit && o + 4 < cap; i++)
		out[o++] = (s[i] >= ' ' && s[i] < 0x7F) ? s[i] : '?';
	if (n > limit && o + 4 < cap)
		out[o++] = '.', out[o++] = '.', out[o++] = '.';
	out[o] = '\0';
}

struct sw_dockerignore *sw_dockerignore_parse(const char *text, size_t len, char *err, size_t errlen)
{
	if (len > SW_DOCKERIGNORE_MAX_BYTES) {
		snprintf(err, errlen, "the .dockerignore file is larger than %u bytes", SW_DOCKERIGNORE_MAX_BYTES);
		errno = EFBIG;
		return NULL;
	}
	struct sw_dockerignore *m = calloc(1, sizeof(*m));
	char *scratch = malloc(len + 2);
	if (!m || !scratch) {
		free(m);
		free(scratch);
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	const char *s = text, *end = text + len;
	if (len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		s += 3;
	for (unsigned line = 1; s < end; line++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - s);
		size_t body = n > 0 && s[n - 1] == '\r' ? n - 1 : n;
		enum bad b = add_line(m, s, body, scratch);
		if (b) {
			char q[80];
			quote(q, sizeof(q), s, body);
			if (b == BAD_MEMORY)
				snprintf(err, errlen, "out of memory");
			else
				snprintf(err, errlen, ".dockerignore line %u: \"%s\" is not a valid pattern: %s", line, q,
					 bad_why(b));
			errno = b == BAD_MEMORY ? ENOMEM : EINVAL;
			free(scratch);
			sw_dockerignore_free(m);
			return NULL;
		}
		s += n + (nl ? 1 : 0);
	}
	free(scratch);
	return m;
}

int sw_dockerignore_keep(struct sw_dockerignore *m, const char *path)
{
	size_t n = strlen(path);
	if (n == 0)
		return -EINVAL;
	char *scratch = malloc(n + 2);
	if (!scratch)
		return -ENOMEM;
	scratch[0] = '!';
	size_t c = clean(path, n, scratch + 1);
	if (c > 1 && scratch[1] == '/') {
		memmove(scratch + 1, scratch + 2, c - 1);
		c--;
	}
	enum bad b = add_pattern(m, scratch, c + 1);
	free(scratch);
	m->nlevels = 0; /* the cached results predate the pattern */
	return b == BAD_NONE ? 0 : b == BAD_MEMORY ? -ENOMEM : -EINVAL;
}

/* ---- matching ---- */

static bool class_has(const struct sw_dockerignore *m, const struct tok *t, uint32_t r)
{
	bool in = false;
	for (uint32_t k = 0; k < t->nranges && !in; k++)
		in = m->ranges[t->first + k].lo <= r && r <= m->ranges[t->first + k].hi;
	return in != t->negated;
}

/* The tokens' empty moves from the states in set, at the path's start or
 * not. */
static void closure(const struct tok *t, size_t n, uint8_t *set, bool at_start)
{
	for (size_t i = 0; i < n; i++) {
		if (!set[i])
			continue;
		if (t[i].kind == TOK_STAR || t[i].kind == TOK_DSTAR_SLASH || t[i].kind == TOK_DSTAR_END ||
		    (t[i].kind == TOK_CARET && at_start))
			set[i + 1] = 1;
	}
}

/* The regular-expression form of a pattern, run as an NFA over the path's
 * code points (no backtracking: tokens x length at worst). */
static bool glob_match(struct sw_dockerignore *m, const struct pattern *p, const char *path, size_t len)
{
	const struct tok *t = m->toks + p->first_tok;
	size_t n = p->ntoks;
	uint8_t *cur = m->cur, *next = m->next;
	memset(cur, 0, n + 1);
	cur[0] = 1;
	closure(t, n, cur, true);
	const unsigned char *s = (const unsigned char *)path;
	for (size_t i = 0; i < len;) {
		size_t w;
		uint32_t c = decode(s + i, len - i, &w);
		i += w;
		memset(next, 0, n + 1);
		bool any = false;
		for (size_t k = 0; k < n; k++) {
			if (!cur[k])
				continue;
			switch (t[k].kind) {
			case TOK_LIT:
				next[k + 1] |= c == t[k].rune;
				break;
			case TOK_ANY:
				next[k + 1] |= c != '/';
				break;
			case TOK_CLASS:
				next[k + 1] |= class_has(m, &t[k], c);
				break;
			case TOK_STAR:
				next[k] |= c != '/';
				break;
			case TOK_DSTAR_END:
				next[k] |= c != '\n'; /* Go's '.' */
				break;
			case TOK_DSTAR_SLASH:
				next[k] |= c != '\n';
				next[k + 1] |= c == '/';
				break;
			default:
				break;
			}
		}
		closure(t, n, next, false);
		for (size_t k = 0; k <= n && !any; k++)
			any = next[k];
		uint8_t *tmp = cur;
		cur = next;
		next = tmp;
		if (!any)
			return false;
	}
	return cur[n];
}

static bool pattern_match(struct sw_dockerignore *m, const struct pattern *p, const char *path, size_t len)
{
	switch (p->type) {
	case MATCH_EXACT:
		return len == p->len && memcmp(path, p->text, len) == 0;
	case MATCH_PREFIX:
		return len >= p->len - 2 && memcmp(path, p->text, p->len - 2) == 0;
	case MATCH_SUFFIX: {
		const char *suffix = p->text + 2;
		size_t sl = p->len - 2;
		if (len >= sl && memcmp(path + len - sl, suffix, sl) == 0)
			return true;
		return sl > 0 && suffix[0] == '/' && len == sl - 1 && memcmp(path, suffix + 1, len) == 0;
	}
	default:
		return glob_match(m, p, path, len);
	}
}

/* Level k (the path's first len bytes) from level k - 1 (none: k == 0). */
static void evaluate(struct sw_dockerignore *m, size_t k, const char *path, size_t len)
{
	const uint8_t *parent = k ? m->bits + (k - 1) * m->bits_row : NULL;
	uint8_t *bits = m->bits + k * m->bits_row;
	memset(bits, 0, m->bits_row);
	bool matched = false;
	for (size_t i = 0; i < m->npats; i++) {
		const struct pattern *p = &m->pats[i];
		bool match = parent && (parent[i / 8] >> (i % 8) & 1);
		if (!match) {
			if (p->exclusion != matched)
				continue;
			match = pattern_match(m, p, path, len);
		}
		if (match) {
			bits[i / 8] |= (uint8_t)(1u << (i % 8));
			matched = !p->exclusion;
		}
	}
	m->levels[k] = (struct level){ .len = len, .excluded = matched };
}

int sw_dockerignore_excluded(struct sw_dockerignore *m, const char *path)
{
	size_t len = strlen(path), depth = 1;
	for (size_t i = 0; i < len; i++)
		depth += path[i] == '/';
	size_t toks = m->ntoks + 1;
	m->bits_row = (m->npats + 7) / 8 + 1;
	if (grow((void **)&m->levels, &m->levels_cap, depth, sizeof(*m->levels)) < 0)
		return -ENOMEM;
	uint8_t *bits = realloc(m->bits, m->levels_cap * m->bits_row);
	if (!bits)
		return -ENOMEM;
	m->bits = bits;
	if (toks > m->sets_cap) {
		uint8_t *a = realloc(m->cur, toks), *b = a ? realloc(m->next, toks) : NULL;
		if (a)
			m->cur = a;
		if (!b)
			return -ENOMEM;
		m->next = b;
		m->sets_cap = toks;
	}
	/* Keep the cached levels that are this path's ancestors (or itself). */
	size_t keep = 0;
	while (keep < m->nlevels && keep < depth) {
		size_t l = m->levels[keep].len;
		if (l > len || memcmp(m->last, path, l) != 0 || (path[l] != '/' && path[l] != '\0'))
			break;
		keep++;
	}
	if (grow((void **)&m->last, &m->last_cap, len + 1, 1) < 0)
		return -ENOMEM;
	memcpy(m->last, path, len + 1);
	size_t k = 0, at = 0;
	for (; k < depth; k++) {
		size_t end = at;
		while (end < len && path[end] != '/')
			end++;
		if (k >= keep)
			evaluate(m, k, path, end);
		at = end + 1;
	}
	m->nlevels = depth;
	return m->levels[depth - 1].excluded ? 1 : 0;
}

bool sw_dockerignore_walk_into(const struct sw_dockerignore *m, const char *dir)
{
	if (!m->exclusions)
		return false;
	size_t d = strlen(dir);
	for (size_t i = 0; i < m->npats; i++) {
		const struct pattern *p = &m->pats[i];
		/* (pattern + "/") starts with (dir + "/") */
		if (p->exclusion && p->len >= d && memcmp(p->text, dir, d) == 0 &&
		    (p->len == d || p->text[d] == '/'))
			return true;
	}
	return false;
}

size_t sw_dockerignore_count(const struct sw_dockerignore *m)
{
	return m->npats;
}

void sw_dockerignore_free(struct sw_dockerignore *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->npats; i++)
		free(m->pats[i].text);
	free(m->pats);
	free(m->toks);
	free(m->ranges);
	free(m->last);
	free(m->levels);
	free(m->bits);
	free(m->cur);
	free(m->next);
	free(m);
}
