/* multipart/form-data (RFC 7578 over RFC 2046's multipart grammar), the
 * body of POST /deployments (include/steward/http/multipart.h).
 *
 * Why our own, and why this strict: the body carries an uploaded archive
 * next to the form fields, and a lenient parser is where two readers of
 * one body disagree (a proxy sees one field, we see another). So we accept
 * exactly what the grammar allows and what real senders emit (curl's
 * -F, browsers and node's FormData, which all write the same shape), and
 * refuse the rest with a reason the client can act on:
 *
 *   body      = *CRLF dash-boundary CRLF part *( CRLF dash-boundary CRLF part )
 *               CRLF dash-boundary "--" *CRLF
 *   part      = 1*( header-line CRLF ) CRLF data
 *
 * Decisions, each a narrowing of RFC 2046/7578 that no sender we know
 * needs:
 * - a preamble and an epilogue are allowed only as CRLFs, ignored; any
 *   other byte before the first or after the close delimiter is refused;
 * - no transport padding (spaces after a delimiter): a delimiter line is
 *   "--" boundary and CRLF or "--", nothing else. A delimiter sequence
 *   CRLF "--" boundary followed by anything else is refused, since the
 *   boundary must not occur inside a part (RFC 2046 5.1.1);
 * - line ends in the structure are CRLF: a bare LF or CR in a delimiter
 *   line or a header section is refused (the data is binary: anything
 *   goes there);
 * - a part's header section holds Content-Disposition (form-data, a
 *   name, optionally a filename) and optionally Content-Type, each once,
 *   within SW_MULTIPART_MAX_HEADER bytes; no folded lines, no other
 *   header (Content-Transfer-Encoding is deprecated by RFC 7578 4.7);
 * - Content-Disposition parameters are name and filename only, each once;
 *   filename* is refused (RFC 7578 4.2: senders must not use it); values
 *   are tokens or quoted strings without backslashes: senders encode '"'
 *   as %22 (the HTML rule curl and node follow), and refusing escapes
 *   keeps every value a plain view into the body, never a copy;
 * - values may carry octets 0x80..0xFF (RFC 7578 4.2 allows raw UTF-8 in
 *   filenames); control characters are refused. Names are compared as
 *   bytes, so the caller's fixed ASCII field names decide what is known.
 *
 * Work is linear in the body: one memmem() per part (glibc's two-way
 * search) and one pass over each header section. */
#include <errno.h>
#include <string.h>
#include "steward/http/multipart.h"
#include "http/tchar.h"

#define BOUNDARY_MAX 70 /* RFC 2046 5.1.1 */
_Static_assert(SW_MULTIPART_MAX_HEADER == 1024, "the messages say 1024");

/* ---- characters ---- */

/* RFC 2046 bcharsnospace; a space is a bchar too, but not the last. */
static bool is_bchar_nospace(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c && strchr("'()+_,-./:=?", c) != NULL;
}

/* RFC 9110 qdtext without the backslash (escapes are refused). */
static bool is_qdtext(unsigned char c)
{
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x7e && c != '\\') || c >= 0x80;
}

static bool is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

/* ---- a cursor over a header value ---- */

struct cursor {
	const char *p, *end;
};

static void skip_ows(struct cursor *c)
{
	while (c->p < c->end && is_ows((unsigned char)*c->p))
		c->p++;
}

static bool take_token(struct cursor *c, struct sw_str *ret)
{
	const char *start = c->p;
	while (c->p < c->end && sw_http_is_tchar((unsigned char)*c->p))
		c->p++;
	*ret = sw_str_from(start, (size_t)(c->p - start));
	return ret->len > 0;
}

/* A token or a quoted string (its view without the quotes); *ret_quoted
 * says which. false on an unterminated string, a backslash or a control
 * character. */
static bool take_value(struct cursor *c, struct sw_str *ret, bool *ret_quoted)
{
	*ret_quoted = c->p < c->end && *c->p == '"';
	if (!*ret_quoted)
		return take_token(c, ret);
	const char *start = ++c->p;
	while (c->p < c->end && is_qdtext((unsigned char)*c->p))
		c->p++;
	if (c->p == c->end || *c->p != '"')
		return false;
	*ret = sw_str_from(start, (size_t)(c->p - start));
	c->p++;
	return true;
}

/* The next parameter of "; name=value" pieces. Returns 1 with one, 0 at
 * the end of the value, -1 when malformed. No spaces around '='. */
static int next_param(struct cursor *c, struct sw_str *ret_name, struct sw_str *ret_value,
		      bool *ret_quoted)
{
	skip_ows(c);
	if (c->p == c->end)
		return 0;
	if (*c->p != ';')
		return -1;
	c->p++;
	skip_ows(c);
	if (!take_token(c, ret_name) || c->p == c->end || *c->p != '=')
		return -1;
	c->p++;
	return take_value(c, ret_value, ret_quoted) ? 1 : -1;
}

/* ---- the boundary ---- */

static bool boundary_valid(struct sw_str b, bool quoted)
{
	if (b.len < 1 || b.len > BOUNDARY_MAX || b.ptr[b.len - 1] == ' ')
		return false;
	for (size_t i = 0; i < b.len; i++) {
		unsigned char ch = (unsigned char)b.ptr[i];
		if (!is_bchar_nospace(ch) && ch != ' ')
			return false;
		/* Unquoted, it must be a token as well as bchars. */
		if (!quoted && !sw_http_is_tchar(ch))
			return false;
	}
	return true;
}

int sw_multipart_boundary(struct sw_str content_type, struct sw_str *ret_boundary)
{
	struct cursor c = { content_type.ptr, content_type.ptr + content_type.len };
	struct sw_str type, subtype, name, value, boundary = SW_STR_NULL;
	bool quoted;
	skip_ows(&c);
	if (!take_token(&c, &type) || c.p == c.end || *c.p != '/')
		return -EINVAL;
	c.p++;
	if (!take_token(&c, &subtype) || !sw_str_case_eq(type, SW_STR("multipart")) ||
	    !sw_str_case_eq(subtype, SW_STR("form-data")))
		return -EINVAL;
	int r;
	while ((r = next_param(&c, &name, &value, &quoted)) == 1) {
		if (!sw_str_case_eq(name, SW_STR("boundary")))
			continue; /* charset and the like: well formed is enough */
		if (boundary.ptr || !boundary_valid(value, quoted))
			return -EINVAL;
		boundary = value;
	}
	if (r < 0 || !boundary.ptr)
		return -EINVAL;
	*ret_boundary = boundary;
	return 0;
}

/* ---- one part's header section ---- */

/* Reads Content-Disposition's value into part->name and part->filename. */
static int read_disposition(struct sw_str v, struct sw_multipart_part *part, const char **why)
{
	struct cursor c = { v.ptr, v.ptr + v.len };
	struct sw_str type, name, value;
	bool quoted, have_name = false, have_filename = false;
	if (!take_token(&c, &type) || !sw_str_case_eq(type, SW_STR("form-data"))) {
		*why = "a part's Content-Disposition is not form-data";
		return -EINVAL;
	}
	int r;
	while ((r = next_param(&c, &name, &value, &quoted)) == 1) {
		if (sw_str_case_eq(name, SW_STR("name"))) {
			if (have_name) {
				*why = "a part's Content-Disposition repeats name";
				return -EINVAL;
			}
			have_name = true;
			part->name = value;
		} else if (sw_str_case_eq(name, SW_STR("filename"))) {
			if (have_filename) {
				*why = "a part's Content-Disposition repeats filename";
				return -EINVAL;
			}
			have_filename = true;
			part->filename = value;
		} else if (sw_str_case_eq(name, SW_STR("filename*"))) {
			*why = "filename* is not allowed in multipart/form-data (RFC 7578 4.2)";
			return -EINVAL;
		} else {
			*why = "a part's Content-Disposition has a parameter other than name and filename";
			return -EINVAL;
		}
	}
	if (r < 0) {
		*why = "a part's Content-Disposition is malformed (values are tokens or quoted strings "
		       "without backslashes or control characters)";
		return -EINVAL;
	}
	if (!have_name || part->name.len == 0) {
		*why = "a part's Content-Disposition has no name";
		return -EINVAL;
	}
	return 0;
}

/* Checks a part's Content-Type is type/subtype with well-formed parameters. */
static int read_content_type(struct sw_str v, const char **why)
{
	struct cursor c = { v.ptr, v.ptr + v.len };
	struct sw_str type, subtype, name, value;
	bool quoted;
	if (!take_token(&c, &type) || c.p == c.end || *c.p != '/')
		goto bad;
	c.p++;
	if (!take_token(&c, &subtype))
		goto bad;
	int r;
	while ((r = next_param(&c, &name, &value, &quoted)) == 1)
		;
	if (r == 0)
		return 0;
bad:
	*why = "a part's Content-Type is malformed";
	return -EINVAL;
}

/* Reads the header section at the start of [p, end) (end: where the part's
 * delimiter begins) and sets *ret_data_start after its blank line. */
static int read_headers(const char *p, const char *end, struct sw_multipart_part *part,
			const char **ret_data_start, const char **why)
{
	const char *start = p;
	bool have_disposition = false, have_type = false;
	for (;;) {
		/* One line: only header bytes up to the limit are ever looked at. */
		size_t room = (size_t)(end - p);
		size_t budget = SW_MULTIPART_MAX_HEADER - (size_t)(p - start);
		const char *line = p, *eol = NULL;
		for (size_t i = 0; i < room && i < budget; i++) {
			if (p[i] == '\r') {
				if (i + 1 >= room || p[i + 1] != '\n') {
					*why = i + 1 >= room ? "a part's header section does not end"
							     : "a bare CR in a part's header section";
					return -EINVAL;
				}
				eol = p + i;
				break;
			}
			if (p[i] == '\n') {
				*why = "a bare LF in a part's header section (lines end with CRLF)";
				return -EINVAL;
			}
		}
		if (!eol) {
			*why = room < budget ? "a part's header section does not end"
					     : "a part's header section is over 1024 bytes";
			return -EINVAL;
		}
		if ((size_t)(eol + 2 - start) > SW_MULTIPART_MAX_HEADER) {
			*why = "a part's header section is over 1024 bytes";
			return -EINVAL;
		}
		p = eol + 2;
		if (eol == line)
			break; /* the blank line */
		/* Folding (obs-fold) is refused on either of its lines, before the
		 * first is read as a whole value. */
		if (is_ows((unsigned char)*line) || (p < end && is_ows((unsigned char)*p))) {
			*why = "a folded header line in a part";
			return -EINVAL;
		}
		struct cursor c = { line, eol };
		struct sw_str name;
		if (!take_token(&c, &name) || c.p == c.end || *c.p != ':') {
			*why = "a malformed header line in a part";
			return -EINVAL;
		}
		c.p++;
		skip_ows(&c);
		const char *vend = eol;
		while (vend > c.p && is_ows((unsigned char)vend[-1]))
			vend--;
		for (const char *q = c.p; q < vend; q++) {
			unsigned char ch = (unsigned char)*q;
			if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
				*why = "a control character in a part's header";
				return -EINVAL;
			}
		}
		struct sw_str value = sw_str_from(c.p, (size_t)(vend - c.p));
		if (sw_str_case_eq(name, SW_STR("Content-Disposition"))) {
			if (have_disposition) {
				*why = "a part repeats Content-Disposition";
				return -EINVAL;
			}
			have_disposition = true;
			int r = read_disposition(value, part, why);
			if (r < 0)
				return r;
		} else if (sw_str_case_eq(name, SW_STR("Content-Type"))) {
			if (have_type) {
				*why = "a part repeats Content-Type";
				return -EINVAL;
			}
			have_type = true;
			int r = read_content_type(value, why);
			if (r < 0)
				return r;
			part->content_type = value;
		} else {
			*why = "a part has a header other than Content-Disposition and Content-Type";
			return -EINVAL;
		}
	}
	if (!have_disposition) {
		*why = "a part has no Content-Disposition";
		return -EINVAL;
	}
	*ret_data_start = p;
	return 0;
}

/* ---- the body ---- */

static bool at(const char *p, const char *end, const char *lit, size_t n)
{
	return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

int sw_multipart_parse(struct sw_str body, struct sw_str boundary, struct sw_multipart_part *parts,
		       size_t max, size_t *ret_n, const char **ret_why)
{
	const char *why = NULL;
	int r = -EINVAL;
	if (!boundary_valid(boundary, true)) {
		why = "the boundary is not 1..70 characters of RFC 2046";
		goto refuse;
	}
	if (max > SW_MULTIPART_MAX_PARTS)
		max = SW_MULTIPART_MAX_PARTS;

	/* "\r\n--" boundary: a delimiter anywhere but at the very start. */
	char delim[4 + BOUNDARY_MAX];
	size_t dlen = 4 + boundary.len;
	memcpy(delim, "\r\n--", 4);
	memcpy(delim + 4, boundary.ptr, boundary.len);

	const char *p = body.ptr, *end = body.ptr + body.len;
	while (at(p, end, "\r\n", 2))
		p += 2; /* a preamble of CRLFs */
	if (!at(p, end, delim + 2, dlen - 2)) {
		why = p < end && *p == '\n' ? "a bare LF before the opening delimiter"
					    : "the body does not start with the boundary delimiter";
		goto refuse;
	}
	p += dlen - 2;

	size_t n = 0;
	for (;;) {
		/* p is just past "--" boundary of a delimiter line. */
		if (at(p, end, "--", 2)) {
			if (n == 0) {
				why = "the body has no parts";
				goto refuse;
			}
			p += 2;
			while (at(p, end, "\r\n", 2))
				p += 2; /* an epilogue of CRLFs */
			if (p != end) {
				why = "bytes after the close delimiter";
				goto refuse;
			}
			break;
		}
		if (!at(p, end, "\r\n", 2)) {
			why = p == end ? "the body ends without a close delimiter"
			    : *p == '\n' ? "a bare LF after a boundary delimiter (lines end with CRLF)"
					 : "bytes after a boundary delimiter on its line";
			goto refuse;
		}
		p += 2;
		if (n == max) {
			why = "too many parts";
			r = -E2BIG;
			goto refuse;
		}
		const char *next = memmem(p, (size_t)(end - p), delim, dlen);
		if (!next) {
			why = "the body ends without a close delimiter";
			goto refuse;
		}
		struct sw_multipart_part *part = &parts[n];
		*part = (struct sw_multipart_part){ 0 };
		const char *data;
		if (read_headers(p, next, part, &data, &why) < 0)
			goto refuse;
		part->data = sw_str_from(data, (size_t)(next - data));
		for (size_t i = 0; i < n; i++) {
			if (sw_str_eq(parts[i].name, part->name)) {
				why = "two parts have the same name";
				goto refuse;
			}
		}
		n++;
		p = next + dlen;
	}
	*ret_n = n;
	return 0;
refuse:
	if (ret_why)
		*ret_why = why;
	return r;
}
