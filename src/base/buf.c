/* Growable buffers and bump arenas. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "steward/base/buf.h"

int sw_buf_grow(struct sw_buf *b, size_t extra)
{
	if (b->cap - b->len >= extra)
		return 0;
	if (extra > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < extra)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int sw_buf_appendf(struct sw_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	int r = sw_buf_reserve(b, (size_t)n + 1);
	if (r < 0)
		return r;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int sw_buf_append_u64(struct sw_buf *b, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return sw_buf_append(b, tmp + i, sizeof(tmp) - i);
}

void sw_buf_consume(struct sw_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void sw_buf_release(struct sw_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

struct sw_arena_block {
	struct sw_arena_block *next;
	size_t size;
	_Alignas(16) char data[];
};

#define ARENA_BLOCK_MIN 4096

void sw_arena_init(struct sw_arena *a, void *first, size_t first_size)
{
	a->head = NULL;
	a->first = first;
	a->first_size = first ? first_size : 0;
	a->cur = first;
	a->end = first ? (char *)first + first_size : NULL;
}

void *sw_arena_alloc(struct sw_arena *a, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	if (n == 0)
		n = 16;
	if (a->cur) {
		uintptr_t p = ((uintptr_t)a->cur + 15) & ~(uintptr_t)15;
		if (p + n <= (uintptr_t)a->end) {
			a->cur = (char *)(p + n);
			return (void *)p;
		}
	}
	size_t size = n > ARENA_BLOCK_MIN ? n : ARENA_BLOCK_MIN;
	struct sw_arena_block *blk = malloc(sizeof(*blk) + size);
	if (!blk)
		return NULL;
	blk->next = a->head;
	blk->size = size;
	a->head = blk;
	a->cur = blk->data + n;
	a->end = blk->data + size;
	return blk->data;
}

char *sw_arena_strndup(struct sw_arena *a, const char *s, size_t n)
{
	char *p = sw_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void sw_arena_reset(struct sw_arena *a)
{
	struct sw_arena_block *b = a->head;
	while (b) {
		struct sw_arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
	a->cur = a->first;
	a->end = a->first ? a->first + a->first_size : NULL;
}

void sw_arena_release(struct sw_arena *a)
{
	sw_arena_reset(a);
}
