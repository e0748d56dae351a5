/* The shared rate limiter (ratelimit.h).
 *
 * One static table, so nothing is allocated and nothing can fail: entries
 * in an array, a hash index over them (chains through the entries) and a
 * doubly linked recency list whose oldest end is evicted when the array is
 * full. Clients choose the keys, so the index is hashed with SipHash-2-4
 * under a per-process random key: nobody can aim many keys at one chain.
 *
 * Buckets count in integer units so that refill is exact: one token is
 * per_seconds * 1000 units, a full bucket burst tokens, and each
 * millisecond adds burst units. Links are index + 1, so 0 is "none" and
 * the zeroed .bss is an empty table. */
#include <pthread.h>
#include <sys/random.h>
#include "steward/auth/ratelimit.h"
#include "steward/base/secret.h"

#define NBUCKETS (2 * SW_RATELIMIT_MAX_ENTRIES) /* a power of two */
#define MAX_BURST_TIMES_PERIOD 1000000000000ULL

struct entry {
	const char *name;
	uint64_t level;   /* units in the bucket */
	uint64_t last_ms; /* when level was last brought up to date */
	uint32_t hash;
	uint32_t chain;   /* next entry in the same index bucket */
	uint32_t newer, older;
	uint8_t key_len;
	bool hashed;      /* key is the SHA-256 of a longer key */
	char key[SW_RATELIMIT_MAX_KEY];
};

static struct {
	pthread_mutex_t lock;
	pthread_once_t once;
	uint64_t sip[2];
	uint32_t index[NBUCKETS];
	struct entry entries[SW_RATELIMIT_MAX_ENTRIES];
	uint32_t used;
	uint32_t newest, oldest;
} T = { .lock = PTHREAD_MUTEX_INITIALIZER, .once = PTHREAD_ONCE_INIT };

static uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = rotl(v[1], 13) ^ v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3];
	v[3] = rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = rotl(v[1], 17) ^ v[2];
	v[2] = rotl(v[2], 32);
}

/* SipHash-2-4 (Aumasson and Bernstein, 2012). */
static uint64_t siphash24(const uint64_t k[2], const uint8_t *p, size_t n)
{
	uint64_t v[4] = { k[0] ^ 0x736f6d6570736575ULL, k[1] ^ 0x646f72616e646f6dULL,
			  k[0] ^ 0x6c7967656e657261ULL, k[1] ^ 0x7465646279746573ULL };
	size_t whole = n - n % 8;
	for (size_t i = 0; i <= whole; i += 8) {
		uint64_t m = 0;
		if (i < whole) {
			for (int j = 0; j < 8; j++)
				m |= (uint64_t)p[i + (size_t)j] << (8 * j);
		} else {
			m = (uint64_t)n << 56; /* the last block: length and tail */
			for (size_t j = 0; j < n % 8; j++)
				m |= (uint64_t)p[i + j] << (8 * j);
		}
		v[3] ^= m;
		sipround(v);
		sipround(v);
		v[0] ^= m;
	}
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* From the kernel, not OpenSSL: the first request of any kind is limited
 * (the global per-address limit), and OpenSSL's first use initialises it
 * (about 2 MB resident for the process's life), which a request that
 * needs no cryptography should not cost. */
static void init_key(void)
{
	if (getrandom(T.sip, sizeof(T.sip), 0) != (ssize_t)sizeof(T.sip)) {
		/* Still a working limiter, only predictable chains. */
		T.sip[0] = sw_now_us() ^ (uint64_t)(uintptr_t)&T;
		T.sip[1] = sw_wall_ms();
	}
}

/* What identifies a bucket besides its name: the key, or its digest. */
struct lookup {
	const char *name;
	uint32_t hash;
	uint8_t key_len;
	bool hashed;
	char key[SW_RATELIMIT_MAX_KEY];
};

static void lookup_init(struct lookup *l, const char *name, struct sw_str key)
{
	pthread_once(&T.once, init_key);
	l->name = name;
	l->hashed = key.len > SW_RATELIMIT_MAX_KEY;
	if (l->hashed) {
		sw_sha256(key.ptr, key.len, (uint8_t *)l->key);
		l->key_len = 32;
	} else {
		if (key.len)
			memcpy(l->key, key.ptr, key.len);
		l->key_len = (uint8_t)key.len;
	}
	/* name digest, then the flag and the key: an unambiguous encoding. */
	uint8_t material[8 + 1 + SW_RATELIMIT_MAX_KEY];
	uint64_t nh = siphash24(T.sip, (const uint8_t *)name, strlen(name));
	memcpy(material, &nh, 8);
	material[8] = l->hashed;
	memcpy(material + 9, l->key, l->key_len);
	l->hash = (uint32_t)siphash24(T.sip, material, 9 + (size_t)l->key_len);
}

static bool matches(const struct entry *e, const struct lookup *l)
{
	return e->hash == l->hash && e->key_len == l->key_len && e->hashed == l->hashed &&
	       memcmp(e->key, l->key, l->key_len) == 0 &&
	       (e->name == l->name || strcmp(e->name, l->name) == 0);
}

static struct entry *at(uint32_t link)
{
	return &T.entries[link - 1];
}

static uint32_t link_of(const struct entry *e)
{
	return (uint32_t)(e - T.entries) + 1;
}

static void recency_unlink(struct entry *e)
{
	if (e->newer)
		at(e->newer)->older = e->older;
	else
		T.newest = e->older;
	if (e->older)
		at(e->older)->newer = e->newer;
	else
		T.oldest = e->newer;
	e->newer = e->older = 0;
}

static void recency_push_newest(struct entry *e)
{
	e->older = T.newest;
	e->newer = 0;
	if (T.newest)
		at(T.newest)->newer = link_of(e);
	T.newest = link_of(e);
	if (!T.oldest)
		T.oldest = link_of(e);
}

static void index_unlink(struct entry *e)
{
	uint32_t *p = &T.index[e->hash & (NBUCKETS - 1)];
	while (*p && *p != link_of(e))
		p = &at(*p)->chain;
	if (SW_ALWAYS(*p))
		*p = e->chain;
	e->chain = 0;
}

static struct entry *find(const struct lookup *l)
{
	for (uint32_t i = T.index[l->hash & (NBUCKETS - 1)]; i; i = at(i)->chain)
		if (matches(at(i), l))
			return at(i);
	return NULL;
}

/* A fresh entry for l: a never-used slot, else the least recently touched. */
static struct entry *insert(const struct lookup *l)
{
	struct entry *e;
	if (T.used < SW_RATELIMIT_MAX_ENTRIES) {
		e = &T.entries[T.used++];
	} else {
		e = at(T.oldest);
		recency_unlink(e);
		index_unlink(e);
	}
	e->name = l->name;
	e->hash = l->hash;
	e->key_len = l->key_len;
	e->hashed = l->hashed;
	memcpy(e->key, l->key, l->key_len);
	uint32_t *head = &T.index[l->hash & (NBUCKETS - 1)];
	e->chain = *head;
	*head = link_of(e);
	recency_push_newest(e);
	return e;
}

static bool policy_valid(const struct sw_ratelimit *rl)
{
	return rl && rl->name && rl->burst >= 1 && rl->per_seconds >= 1 &&
	       (uint64_t)rl->burst * rl->per_seconds <= MAX_BURST_TIMES_PERIOD;
}

bool sw_ratelimit_take(const struct sw_ratelimit *rl, struct sw_str key, uint64_t now_ms,
		       unsigned *ret_retry_after_s)
{
	unsigned retry = 1;
	bool allowed = false;
	if (SW_NEVER(!policy_valid(rl)))
		goto out;
	const uint64_t unit = (uint64_t)rl->per_seconds * 1000; /* units per token */
	const uint64_t full = unit * rl->burst;
	struct lookup l;
	lookup_init(&l, rl->name, key);

	pthread_mutex_lock(&T.lock);
	struct entry *e = find(&l);
	if (e) {
		recency_unlink(e);
		recency_push_newest(e);
		if (now_ms > e->last_ms) {
			/* After unit ms the bucket is full whatever it held. */
			uint64_t elapsed = SW_MIN(now_ms - e->last_ms, unit);
			e->level = SW_MIN(full, e->level + elapsed * rl->burst);
			e->last_ms = now_ms;
		}
	} else {
		e = insert(&l);
		e->level = full;
		e->last_ms = now_ms;
	}
	if (e->level >= unit) {
		e->level -= unit;
		allowed = true;
		retry = 0;
	} else {
		uint64_t ms = (unit - e->level + rl->burst - 1) / rl->burst;
		retry = (unsigned)SW_MAX((ms + 999) / 1000, 1);
	}
	pthread_mutex_unlock(&T.lock);
out:
	if (ret_retry_after_s)
		*ret_retry_after_s = retry;
	return allowed;
}

void sw_ratelimit_reset(const struct sw_ratelimit *rl, struct sw_str key)
{
	if (SW_NEVER(!policy_valid(rl)))
		return;
	struct lookup l;
	lookup_init(&l, rl->name, key);
	pthread_mutex_lock(&T.lock);
	struct entry *e = find(&l);
	if (e)
		e->level = (uint64_t)rl->per_seconds * 1000 * rl->burst;
	pthread_mutex_unlock(&T.lock);
}

size_t sw_ratelimit_count(void)
{
	pthread_mutex_lock(&T.lock);
	size_t n = T.used;
	pthread_mutex_unlock(&T.lock);
	return n;
}
