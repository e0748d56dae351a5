/* Growable byte buffers and per-request arenas. */
#ifndef STEWARD_BUF_H
#define STEWARD_BUF_H

#include "steward/base/base.h"

/* A growable byte buffer. Zero-initialised is empty and valid. */
struct sw_buf {
	char *data;
	size_t len;
	size_t cap;
};

/* Grows the buffer to hold extra more bytes (the slow path of the two
 * below, out of line). 0 or -ENOMEM. */
int sw_buf_grow(struct sw_buf *b, size_t extra);
/* Ensures room for extra more bytes. 0 or -ENOMEM. Inline: a response's
 * JSON makes a few hundred of these calls, nearly all with room. */
static inline int sw_buf_reserve(struct sw_buf *b, size_t extra)
{
	return b->cap - b->len >= extra ? 0 : sw_buf_grow(b, extra);
}
/* Appends n bytes. 0 or -ENOMEM (the buffer is unchanged on failure). */
static inline int sw_buf_append(struct sw_buf *b, const void *p, size_t n)
{
	if (n == 0)
		return 0;
	int r = sw_buf_reserve(b, n);
	if (r < 0)
		return r;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}
static inline int sw_buf_append_str(struct sw_buf *b, struct sw_str s)
{
	return sw_buf_append(b, s.ptr, s.len);
}
#define sw_buf_append_lit(b, lit) sw_buf_append((b), (lit), sizeof(lit) - 1)
/* Appends printf-formatted text. 0 or -ENOMEM. */
int sw_buf_appendf(struct sw_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends the decimal form of v. */
int sw_buf_append_u64(struct sw_buf *b, uint64_t v);
/* Drops the first n bytes. */
void sw_buf_consume(struct sw_buf *b, size_t n);
/* Frees the memory; the buffer is empty and reusable afterwards. */
void sw_buf_release(struct sw_buf *b);

/* A bump allocator whose memory dies all at once. The first block can be
 * supplied by the owner (embedded in a connection) so that a small request
 * allocates nothing. */
struct sw_arena_block;
struct sw_arena {
	struct sw_arena_block *head; /* heap blocks, newest first */
	char *cur;
	char *end;
	char *first;                 /* caller-supplied block, may be NULL */
	size_t first_size;
};

void sw_arena_init(struct sw_arena *a, void *first, size_t first_size);
/* Returns 16-byte aligned memory, or NULL when out of memory. */
void *sw_arena_alloc(struct sw_arena *a, size_t n);
/* Copies s into the arena with a terminating NUL; NULL on -ENOMEM. */
char *sw_arena_strndup(struct sw_arena *a, const char *s, size_t n);
/* Frees heap blocks and rewinds to the caller-supplied block. */
void sw_arena_reset(struct sw_arena *a);
void sw_arena_release(struct sw_arena *a);

#endif
