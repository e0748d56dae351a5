/* Validators for user-supplied strings. Each accepts only a strict format,
 * so nothing stored can later be read as markup, a path or a command. */
#ifndef STEWARD_VALIDATE_H
#define STEWARD_VALIDATE_H

#include "steward/base.h"

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

#endif
