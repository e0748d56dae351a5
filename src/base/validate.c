/* Validators for user-supplied strings (see steward/validate.h). */
#include <stdio.h>
#include "steward/limits.h"
#include "steward/validate.h"

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
