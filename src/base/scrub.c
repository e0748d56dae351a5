/* The scrubber (steward/base/scrub.h): the values are kept longest first;
 * scrubbing marks every byte inside any occurrence of any value, then turns
 * each marked run into one "***", so values that overlap or contain one
 * another leave nothing of either behind, whatever their order. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "steward/base/sha.h"
#include "steward/base/base.h"
#include "steward/base/limits.h"
#include "steward/base/scrub.h"

struct secret {
	char *p;
	size_t n;
};

struct sw_scrubber {
	struct secret *secrets; /* longest first */
	size_t n, cap;
};

static int secret_add(struct sw_scrubber *s, const char *p, size_t n)
{
	if (n < SW_VARIABLE_SCRUB_MIN_LEN)
		return 0; /* too short to mask without hiding the text itself */
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 8;
		struct secret *a = realloc(s->secrets, c * sizeof(*a));
		if (!a)
			return -ENOMEM;
		s->secrets = a;
		s->cap = c;
	}
	char *copy = malloc(n);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, p, n);
	s->secrets[s->n++] = (struct secret){ copy, n };
	return 0;
}

static int by_length_desc(const void *a, const void *b)
{
	const struct secret *x = a, *y = b;
	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

void sw_scrubber_free(struct sw_scrubber *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		sw_wipe(s->secrets[i].p, s->secrets[i].n);
		free(s->secrets[i].p);
	}
	free(s->secrets);
	free(s);
}

struct sw_scrubber *sw_scrubber_new(const char *const *values, size_t n)
{
	struct sw_scrubber *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		const char *v = values[i];
		if (!v || !*v)
			continue;
		size_t vn = strlen(v);
		err = secret_add(s, v, vn);
		/* Each line of a value with line breaks, on its own too. */
		if (!err && strpbrk(v, "\r\n")) {
			for (size_t a = 0; a < vn && !err;) {
				size_t b = a + strcspn(v + a, "\r\n");
				if (b - a < vn)
					err = secret_add(s, v + a, b - a);
				a = b + 1;
			}
		}
	}
	if (err) {
		sw_scrubber_free(s);
		errno = ENOMEM;
		return NULL;
	}
	if (s->n > 1)
		qsort(s->secrets, s->n, sizeof(*s->secrets), by_length_desc);
	return s;
}

size_t sw_scrubber_count(const struct sw_scrubber *s)
{
	return s ? s->n : 0;
}

char *sw_scrubber_apply(const struct sw_scrubber *s, const char *in, size_t n, size_t *ret_len)
{
	unsigned char stack_mark[1024];
	unsigned char *mark = n <= sizeof(stack_mark) ? stack_mark : calloc(n ? n : 1, 1);
	if (!mark)
		return NULL;
	if (mark == stack_mark)
		memset(mark, 0, n);
	bool any = false;
	for (size_t k = 0; s && k < s->n; k++) {
		const struct secret *sec = &s->secrets[k];
		size_t from = 0;
		while (from + sec->n <= n) {
			const char *hit = memmem(in + from, n - from, sec->p, sec->n);
			if (!hit)
				break;
			size_t at = (size_t)(hit - in);
			memset(mark + at, 1, sec->n);
			any = true;
			from = at + 1; /* occurrences may overlap themselves */
		}
	}
	/* Each marked run of k >= 1 bytes becomes 3: at most 3 times n. */
	char *out = malloc(any ? 3 * n + 1 : n + 1);
	if (out) {
		size_t o = 0;
		for (size_t i = 0; i < n;) {
			if (!mark[i]) {
				out[o++] = in[i++];
				continue;
			}
			memcpy(out + o, "***", 3);
			o += 3;
			while (i < n && mark[i])
				i++;
		}
		*ret_len = o;
	}
	if (mark != stack_mark)
		free(mark);
	return out;
}

/* The length of the valid UTF-8 sequence at p (n bytes left), or 0 when it
 * is not one (or is NUL). */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char b = p[0];
	if (b == 0)
		return 0;
	if (b < 0x80)
		return 1;
	size_t len;
	unsigned char lo = 0x80, hi = 0xBF;
	if (b >= 0xC2 && b <= 0xDF) {
		len = 2;
	} else if (b >= 0xE0 && b <= 0xEF) {
		len = 3;
		if (b == 0xE0)
			lo = 0xA0; /* overlong */
		else if (b == 0xED)
			hi = 0x9F; /* surrogates */
	} else if (b >= 0xF0 && b <= 0xF4) {
		len = 4;
		if (b == 0xF0)
			lo = 0x90;
		else if (b == 0xF4)
			hi = 0x8F; /* past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xBF)
			return 0;
	return len;
}

size_t sw_utf8_clean(const char *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq((const unsigned char *)in + i, n - i);
		if (k) {
			memcpy(out + o, in + i, k);
			o += k;
			i += k;
		} else {
			memcpy(out + o, "\xEF\xBF\xBD", 3); /* U+FFFD */
			o += 3;
			i++;
		}
	}
	return o;
}
