/* The agent's journal (see steward/agent/journal.h for the format and
 * its guarantees). Entries live in a small array searched linearly: at
 * most a thousand or so, looked up once per command. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "steward/agent/journal.h"
#include "steward/base/buf.h"
#include "steward/base/limits.h"
#include "steward/base/secret.h"

#define MAGIC "SWJ1"
#define HEADER_LEN 16 /* magic, body length (u32 LE), 8 bytes of SHA-256(body) */
#define REC_BEGUN 1
#define REC_FINISHED 2
#define MAX_ID 255
#define LOG_NAME "journal.log"
#define TMP_NAME "journal.tmp"

struct entry {
	char *id;
	uint8_t digest[32];
	char *result; /* NULL while running */
	uint64_t order;
};

struct sw_agent_journal {
	int dirfd;
	int fd;
	size_t max_entries, max_bytes;
	struct entry *e;
	size_t n;
	uint64_t next_order;
	size_t bytes; /* of the log, all of it valid */
};

static struct entry *find(struct sw_agent_journal *j, const char *id)
{
	for (size_t i = 0; i < j->n; i++)
		if (strcmp(j->e[i].id, id) == 0)
			return &j->e[i];
	return NULL;
}

static void drop(struct sw_agent_journal *j, size_t i)
{
	free(j->e[i].id);
	free(j->e[i].result);
	j->e[i] = j->e[--j->n];
}

/* The entry to forget first: the oldest finished one, else the oldest. */
static size_t oldest(const struct sw_agent_journal *j)
{
	size_t best = j->n, any = 0;
	for (size_t i = 0; i < j->n; i++) {
		if (j->e[i].order < j->e[any].order)
			any = i;
		if (j->e[i].result && (best == j->n || j->e[i].order < j->e[best].order))
			best = i;
	}
	return best < j->n ? best : any;
}

static int add(struct sw_agent_journal *j, const char *id, size_t id_len, const uint8_t digest[32])
{
	if (j->n == j->max_entries)
		drop(j, oldest(j));
	char *copy = strndup(id, id_len);
	if (!copy)
		return -ENOMEM;
	j->e[j->n++] = (struct entry){ .id = copy, .order = j->next_order++ };
	memcpy(j->e[j->n - 1].digest, digest, 32);
	return 0;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Appends one record's bytes to b. */
static int encode(struct sw_buf *b, int kind, const char *id, const uint8_t digest[32],
		  const char *result)
{
	size_t id_len = strlen(id), rlen = result ? strlen(result) : 0;
	size_t body = 2 + id_len + 32 + rlen;
	int rc = sw_buf_reserve(b, HEADER_LEN + body);
	if (rc < 0)
		return rc;
	uint8_t *p = (uint8_t *)b->data + b->len;
	uint8_t *q = p + HEADER_LEN;
	q[0] = (uint8_t)kind;
	q[1] = (uint8_t)id_len;
	memcpy(q + 2, id, id_len);
	memcpy(q + 2 + id_len, digest, 32);
	if (rlen)
		memcpy(q + 2 + id_len + 32, result, rlen);
	memcpy(p, MAGIC, 4);
	put_u32(p + 4, (uint32_t)body);
	uint8_t sum[32];
	sw_sha256_digest(q, body, sum);
	memcpy(p + 8, sum, 8);
	b->len += HEADER_LEN + body;
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int fsync_dir(int dirfd)
{
	return fsync(dirfd) < 0 ? -errno : 0;
}

/* Rewrites the log with the entries kept, forgetting the oldest until
 * they fill at most half of max_bytes, so a rewrite is not needed again
 * at once. */
static int compact(struct sw_agent_journal *j)
{
	struct sw_buf b = { 0 };
	int rc;
	for (;;) {
		b.len = 0;
		rc = 0;
		for (size_t i = 0; i < j->n && rc == 0; i++) {
			rc = encode(&b, REC_BEGUN, j->e[i].id, j->e[i].digest, NULL);
			if (rc == 0 && j->e[i].result)
				rc = encode(&b, REC_FINISHED, j->e[i].id, j->e[i].digest, j->e[i].result);
		}
		if (rc < 0 || b.len <= j->max_bytes / 2 || j->n <= 1)
			break;
		drop(j, oldest(j));
	}
	if (rc < 0)
		goto out;
	int fd = openat(j->dirfd, TMP_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	rc = write_all(fd, b.data, b.len);
	if (rc == 0 && fdatasync(fd) < 0)
		rc = -errno;
	if (rc == 0 && renameat(j->dirfd, TMP_NAME, j->dirfd, LOG_NAME) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fsync_dir(j->dirfd);
	if (rc < 0) {
		close(fd);
		unlinkat(j->dirfd, TMP_NAME, 0);
		goto out;
	}
	/* The new log is the one appended to from now on. */
	close(j->fd);
	j->fd = fd;
	if (lseek(fd, 0, SEEK_END) < 0)
		rc = -errno;
	j->bytes = b.len;
out:
	sw_buf_release(&b);
	return rc;
}

static int append(struct sw_agent_journal *j, int kind, const char *id, const uint8_t digest[32],
		  const char *result)
{
	struct sw_buf b = { 0 };
	int rc = encode(&b, kind, id, digest, result);
	if (rc == 0)
		rc = write_all(j->fd, b.data, b.len);
	if (rc == 0 && fdatasync(j->fd) < 0)
		rc = -errno;
	if (rc < 0) {
		/* A half-written record would hide every later one from the
		 * replay: cut it off, so the log stays a valid prefix. */
		if (ftruncate(j->fd, (off_t)j->bytes) == 0)
			lseek(j->fd, (off_t)j->bytes, SEEK_SET);
	} else {
		j->bytes += b.len;
	}
	sw_buf_release(&b);
	return rc;
}

/* Applies the valid prefix of the log and sets *ret_valid to its length.
 * -ENOMEM stops it without a verdict on the rest (nothing is cut then). */
static int replay(struct sw_agent_journal *j, const uint8_t *p, size_t len, size_t *ret_valid)
{
	size_t off = 0;
	while (len - off >= HEADER_LEN) {
		const uint8_t *h = p + off;
		uint32_t body = get_u32(h + 4);
		if (memcmp(h, MAGIC, 4) != 0 || body < 2 + 32 || body > len - off - HEADER_LEN)
			break;
		const uint8_t *q = h + HEADER_LEN;
		uint8_t sum[32];
		sw_sha256_digest(q, body, sum);
		size_t id_len = q[1];
		if (memcmp(sum, h + 8, 8) != 0 || id_len == 0 || 2 + id_len + 32 > body ||
		    (q[0] != REC_BEGUN && q[0] != REC_FINISHED) || memchr(q + 2, '\0', id_len))
			break;
		const char *id = (const char *)q + 2;
		const uint8_t *digest = q + 2 + id_len;
		size_t rlen = body - 2 - id_len - 32;
		char idz[MAX_ID + 1];
		memcpy(idz, id, id_len);
		idz[id_len] = '\0';
		if (q[0] == REC_FINISHED && memchr(digest + 32, '\0', rlen))
			break;
		struct entry *e = find(j, idz);
		if (!e) {
			if (add(j, id, id_len, digest) < 0)
				return -ENOMEM;
			e = &j->e[j->n - 1];
		}
		if (q[0] == REC_FINISHED) {
			char *r = strndup((const char *)digest + 32, rlen);
			if (!r)
				return -ENOMEM;
			free(e->result);
			e->result = r;
		}
		off += HEADER_LEN + body;
	}
	*ret_valid = off;
	return 0;
}

/* Records e's result; no rewrite of the log, so entries stay in place. */
static int finish_entry(struct sw_agent_journal *j, struct entry *e, const char *result)
{
	if (strlen(result) > SW_AGENT_MAX_RESULT)
		return -E2BIG;
	char *copy = strdup(result);
	if (!copy)
		return -ENOMEM;
	int rc = append(j, REC_FINISHED, e->id, e->digest, result);
	if (rc < 0) {
		free(copy);
		return rc;
	}
	e->result = copy;
	return 0;
}

static int read_log(int fd, struct sw_buf *b)
{
	for (;;) {
		int rc = sw_buf_reserve(b, 64 * 1024);
		if (rc < 0)
			return rc;
		ssize_t r = read(fd, b->data + b->len, b->cap - b->len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return 0;
		b->len += (size_t)r;
	}
}

int sw_agent_journal_open(const char *dir, size_t max_entries, size_t max_bytes,
			  struct sw_agent_journal **ret)
{
	*ret = NULL;
	if (!max_entries || !max_bytes)
		return -EINVAL;
	struct sw_agent_journal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fd = -1;
	j->dirfd = -1;
	j->max_entries = max_entries;
	j->max_bytes = max_bytes;
	struct sw_buf log = { 0 };
	int rc = -ENOMEM;
	j->e = calloc(max_entries, sizeof(*j->e));
	if (!j->e)
		goto fail;
	j->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (j->dirfd < 0) {
		rc = -errno;
		goto fail;
	}
	j->fd = openat(j->dirfd, LOG_NAME, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (j->fd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = read_log(j->fd, &log);
	if (rc < 0)
		goto fail;
	rc = replay(j, (const uint8_t *)log.data, log.len, &j->bytes);
	if (rc < 0)
		goto fail;
	if (j->bytes < log.len) {
		/* A record cut short or damaged: what follows is not trusted. */
		if (ftruncate(j->fd, (off_t)j->bytes) < 0 || fdatasync(j->fd) < 0) {
			rc = -errno;
			goto fail;
		}
	}
	if (lseek(j->fd, (off_t)j->bytes, SEEK_SET) < 0) {
		rc = -errno;
		goto fail;
	}
	/* Commands a crash cut off are finished, never run again. */
	for (size_t i = 0; i < j->n; i++) {
		if (j->e[i].result)
			continue;
		rc = finish_entry(j, &j->e[i], SW_AGENT_JOURNAL_RESTARTED);
		if (rc < 0)
			goto fail;
	}
	rc = j->bytes > j->max_bytes ? compact(j) : 0;
	if (rc < 0)
		goto fail;
	sw_buf_release(&log);
	*ret = j;
	return 0;
fail:
	sw_buf_release(&log);
	sw_agent_journal_close(j);
	return rc;
}

void sw_agent_journal_close(struct sw_agent_journal *j)
{
	if (!j)
		return;
	while (j->n)
		drop(j, j->n - 1);
	free(j->e);
	if (j->fd >= 0)
		close(j->fd);
	if (j->dirfd >= 0)
		close(j->dirfd);
	free(j);
}

enum sw_agent_journal_seen sw_agent_journal_lookup(struct sw_agent_journal *j, const char *id,
						   const uint8_t digest[32], const char **ret_result)
{
	*ret_result = NULL;
	struct entry *e = find(j, id);
	if (!e)
		return SW_AGENT_JOURNAL_NEW;
	if (memcmp(e->digest, digest, 32) != 0)
		return SW_AGENT_JOURNAL_CONFLICT;
	if (!e->result)
		return SW_AGENT_JOURNAL_RUNNING;
	*ret_result = e->result;
	return SW_AGENT_JOURNAL_DONE;
}

static int maybe_compact(struct sw_agent_journal *j)
{
	return j->bytes > j->max_bytes ? compact(j) : 0;
}

int sw_agent_journal_begin(struct sw_agent_journal *j, const char *id, const uint8_t digest[32])
{
	size_t id_len = strlen(id);
	if (id_len == 0 || id_len > MAX_ID)
		return -EINVAL;
	if (find(j, id))
		return -EEXIST;
	int rc = append(j, REC_BEGUN, id, digest, NULL);
	if (rc == 0)
		rc = add(j, id, id_len, digest);
	return rc == 0 ? maybe_compact(j) : rc;
}

int sw_agent_journal_finish(struct sw_agent_journal *j, const char *id, const char *result)
{
	struct entry *e = find(j, id);
	if (!e)
		return -ENOENT;
	if (e->result)
		return -EALREADY;
	int rc = finish_entry(j, e, result);
	return rc == 0 ? maybe_compact(j) : rc;
}

size_t sw_agent_journal_count(const struct sw_agent_journal *j)
{
	return j->n;
}

size_t sw_agent_journal_bytes(const struct sw_agent_journal *j)
{
	return j->bytes;
}
