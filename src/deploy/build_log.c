/* The log writer: every line of a deployment's build and deploy output
 * passes here on its way to the file, the record's tail and live readers.
 *
 * Why it looks like this:
 * - Secrets go first: scrubbing runs on a whole call's text before it is
 *   split into lines or pieces, so a value can never straddle a split. It
 *   marks every byte inside any occurrence of any value and turns each
 *   marked run into one "***": values that overlap or contain one another
 *   leave nothing of either behind, whatever their order.
 * - The file is the log. One write(2) per line (O_APPEND), so a reader
 *   never needs more than whole lines up to the byte count the writer last
 *   published; the tail kept for the record is a ring of the last bytes
 *   written (one more than the tail, to know whether the tail starts a
 *   line).
 * - Live readers cost the writer nothing while there are none: the hub
 *   says whether anyone listens (sw_hub_advance) before a line is framed.
 * - The cap keeps room for its own notice, so the file never exceeds
 *   DEPLOY_LOG_MAX_BYTES even with the notice.
 * - A mutex makes the byte count and the tail readable from other threads
 *   while the runner writes. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "steward/base/scrub.h"
#include "steward/base/validate.h"
#include "steward/deploy/deploy.h"
#include "steward/base/limits.h"

static const char cut_line[] = "[log cut: DEPLOY_LOG_MAX_BYTES reached]\n";
#define CUT_LEN (sizeof(cut_line) - 1)
#define RING (SW_DEPLOY_LOG_TAIL + 1)

struct sw_deploy_log {
	pthread_mutex_t lock;
	int fd;
	char id[37];
	uint64_t max;
	uint64_t bytes;
	bool cut;
	struct sw_scrubber *scrubber;
	struct sw_hub_topic *topic;
	char ring[RING];  /* the last bytes of the file */
	size_t ring_pos;  /* where the next byte goes */
	size_t ring_len;
	char *buf;        /* a line with its "\n", or a frame */
	size_t buf_cap;
};

int sw_deploy_log_path(const char *dir, const char *deployment_id, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/logs/%s.log", dir, deployment_id);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* ---- writing (lock held) ---- */

static int reserve(struct sw_deploy_log *l, size_t n)
{
	if (n <= l->buf_cap)
		return 0;
	size_t cap = l->buf_cap ? l->buf_cap : 256;
	while (cap < n)
		cap *= 2;
	char *b = realloc(l->buf, cap);
	if (!b)
		return -ENOMEM;
	l->buf = b;
	l->buf_cap = cap;
	return 0;
}

static void ring_add(struct sw_deploy_log *l, const char *p, size_t n)
{
	if (n >= RING) {
		p += n - RING;
		n = RING;
	}
	for (size_t i = 0; i < n; i++) {
		l->ring[l->ring_pos] = p[i];
		l->ring_pos = (l->ring_pos + 1) % RING;
	}
	l->ring_len = SW_MIN(l->ring_len + n, (size_t)RING);
}

/* Appends whole lines p[0..n) to the file, the tail and the hub. */
static int append(struct sw_deploy_log *l, const char *p, size_t n)
{
	size_t done = 0;
	int err = 0;
	while (done < n) {
		ssize_t w = write(l->fd, p + done, n - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		done += (size_t)w;
	}
	l->bytes += done;
	ring_add(l, p, done);
	if (err)
		return err; /* a partial line is in the file; readers read it from there */
	if (sw_hub_advance(l->topic, l->bytes) == -EAGAIN) {
		size_t fn = sw_hub_frame_log(NULL, l->bytes, p, n);
		struct sw_hub_chunk *c = sw_hub_chunk_new(SW_HUB_LOG, l->bytes, fn);
		if (!c)
			return -ENOMEM;
		sw_hub_frame_log(c->data, l->bytes, p, n);
		sw_hub_publish(l->topic, c);
	}
	return 0;
}

/* One line (no "\n" in it, valid UTF-8, at most SW_DEPLOY_LOG_MAX_LINE). */
static int write_piece(struct sw_deploy_log *l, const char *p, size_t n)
{
	if (l->cut)
		return -EFBIG;
	if (l->bytes + n + 1 + CUT_LEN > l->max) {
		l->cut = true;
		if (l->bytes + CUT_LEN <= l->max)
			append(l, cut_line, CUT_LEN);
		return -EFBIG;
	}
	int r = reserve(l, n + 1);
	if (r < 0)
		return r;
	memmove(l->buf, p, n); /* p may be l->buf itself: never here, but cheap to allow */
	l->buf[n] = '\n';
	return append(l, l->buf, n + 1);
}

/* A line of scrubbed text: cleaned, then cut into pieces at UTF-8
 * boundaries. */
static int write_line(struct sw_deploy_log *l, const char *p, size_t n)
{
	if (n && p[n - 1] == '\r')
		n--;
	char stack[1024];
	char *clean = 3 * n <= sizeof(stack) ? stack : malloc(3 * n);
	if (!clean)
		return -ENOMEM;
	size_t cn = sw_utf8_clean(p, n, clean);
	int r = 0;
	size_t i = 0;
	do {
		size_t k = cn - i;
		if (k > SW_DEPLOY_LOG_MAX_LINE) {
			k = SW_DEPLOY_LOG_MAX_LINE;
			while (k > 1 && ((unsigned char)clean[i + k] & 0xC0) == 0x80)
				k--;
		}
		r = write_piece(l, clean + i, k);
		i += k;
	} while (r == 0 && i < cn);
	if (clean != stack)
		free(clean);
	return r;
}

static int log_text(struct sw_deploy_log *l, const char *text, size_t len)
{
	size_t sn;
	char *s = sw_scrubber_apply(l->scrubber, text, len, &sn);
	if (!s)
		return -ENOMEM;
	int r = 0;
	size_t i = 0;
	for (;;) {
		const char *nl = memchr(s + i, '\n', sn - i);
		size_t e = nl ? (size_t)(nl - s) : sn;
		r = write_line(l, s + i, e - i);
		if (r < 0 || !nl || e + 1 == sn) /* a final "\n" ends the last line */
			break;
		i = e + 1;
	}
	OPENSSL_cleanse(s, sn); /* it had the text around the secrets */
	free(s);
	return r;
}

/* ---- the API ---- */

static bool ends_with_cut(int fd, uint64_t size)
{
	char tail[CUT_LEN];
	if (size < CUT_LEN || pread(fd, tail, CUT_LEN, (off_t)(size - CUT_LEN)) != (ssize_t)CUT_LEN)
		return false;
	return memcmp(tail, cut_line, CUT_LEN) == 0;
}

struct sw_deploy_log *sw_deploy_log_open(const char *dir, const char *deployment_id,
					 uint64_t max_bytes, const char *const *secrets,
					 size_t nsecrets)
{
	if (!sw_is_uuid(sw_str_cstr(deployment_id))) {
		errno = EINVAL;
		return NULL;
	}
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/logs", dir);
	if (n < 0 || (size_t)n >= sizeof(path) || sw_deploy_log_path(dir, deployment_id, path, sizeof(path)) < 0) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	struct sw_deploy_log *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	int err = 0;
	pthread_mutex_init(&l->lock, NULL);
	snprintf(l->id, sizeof(l->id), "%s", deployment_id);
	l->max = max_bytes ? max_bytes : SW_DEPLOY_LOG_DEFAULT_MAX;
	l->fd = -1;
	l->scrubber = sw_scrubber_new(secrets, nsecrets);
	if (!l->scrubber) {
		err = -ENOMEM;
		goto fail;
	}

	char logs[4096];
	snprintf(logs, sizeof(logs), "%s/logs", dir);
	if (mkdir(logs, 0700) < 0 && errno != EEXIST) {
		err = -errno;
		goto fail;
	}
	l->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (l->fd < 0) {
		err = -errno;
		goto fail;
	}
	struct stat st;
	if (fstat(l->fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	/* Continue an existing log: its size, its tail, whether it was cut. */
	l->bytes = (uint64_t)st.st_size;
	size_t back = (size_t)SW_MIN(l->bytes, (uint64_t)RING);
	if (back) {
		char tmp[RING];
		if (pread(l->fd, tmp, back, (off_t)(l->bytes - back)) != (ssize_t)back) {
			err = -EIO;
			goto fail;
		}
		ring_add(l, tmp, back);
	}
	l->cut = ends_with_cut(l->fd, l->bytes);
	l->topic = sw_hub_writer_open(deployment_id, l->bytes);
	if (!l->topic) {
		err = -errno;
		goto fail;
	}
	return l;

fail:
	if (l->fd >= 0)
		close(l->fd);
	sw_scrubber_free(l->scrubber);
	pthread_mutex_destroy(&l->lock);
	free(l);
	errno = -err;
	return NULL;
}

int sw_deploy_log_line(struct sw_deploy_log *l, const char *line, size_t len)
{
	pthread_mutex_lock(&l->lock);
	int r = l->cut ? -EFBIG : log_text(l, line, len);
	pthread_mutex_unlock(&l->lock);
	return r;
}

int sw_deploy_log_printf(struct sw_deploy_log *l, const char *fmt, ...)
{
	char stack[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(stack, sizeof(stack), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n < sizeof(stack))
		return sw_deploy_log_line(l, stack, (size_t)n);
	char *big = malloc((size_t)n + 1);
	if (!big)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	int r = sw_deploy_log_line(l, big, (size_t)n);
	free(big);
	return r;
}

uint64_t sw_deploy_log_bytes(const struct sw_deploy_log *l)
{
	struct sw_deploy_log *m = (struct sw_deploy_log *)l; /* the lock only */
	pthread_mutex_lock(&m->lock);
	uint64_t b = l->bytes;
	pthread_mutex_unlock(&m->lock);
	return b;
}

ssize_t sw_deploy_log_read(const struct sw_deploy_log *l, uint64_t off, char *buf, size_t n)
{
	ssize_t r;
	while ((r = pread(l->fd, buf, n, (off_t)off)) < 0 && errno == EINTR) {
	}
	return r < 0 ? -errno : r;
}

void sw_deploy_log_tail(const struct sw_deploy_log *l, char *out)
{
	struct sw_deploy_log *m = (struct sw_deploy_log *)l; /* the lock only */
	pthread_mutex_lock(&m->lock);
	size_t n = SW_MIN(l->ring_len, (size_t)SW_DEPLOY_LOG_TAIL);
	size_t start = (l->ring_pos + RING - n) % RING;
	for (size_t i = 0; i < n; i++)
		out[i] = l->ring[(start + i) % RING];
	/* The byte before the window, when the file has one. */
	bool at_line = l->bytes <= n || l->ring[(start + RING - 1) % RING] == '\n';
	pthread_mutex_unlock(&m->lock);
	size_t skip = 0;
	if (!at_line) {
		const char *nl = memchr(out, '\n', n);
		if (nl && (size_t)(nl - out) + 1 < n)
			skip = (size_t)(nl - out) + 1; /* the next line */
		else
			while (skip < n && ((unsigned char)out[skip] & 0xC0) == 0x80)
				skip++; /* one long line: at least a whole character */
	}
	memmove(out, out + skip, n - skip);
	out[n - skip] = '\0';
}

void sw_deploy_log_end(struct sw_deploy_log *l, const char *status, const char *error_message)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	struct sw_hub_chunk *final = NULL;
	if (status) {
		char *msg = NULL;
		if (error_message) {
			size_t mn = strlen(error_message), sn;
			char *s = sw_scrubber_apply(l->scrubber, error_message, mn, &sn);
			msg = s ? malloc(3 * sn + 1) : NULL;
			if (msg)
				msg[sw_utf8_clean(s, sn, msg)] = '\0';
			if (s) {
				OPENSSL_cleanse(s, sn);
				free(s);
			}
		}
		final = sw_hub_status_chunk(status, msg);
		free(msg);
	}
	sw_hub_writer_close(l->topic, final);
	close(l->fd);
	sw_scrubber_free(l->scrubber);
	free(l->buf);
	pthread_mutex_unlock(&l->lock);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void sw_deploy_log_close(struct sw_deploy_log *l, const char *final_status)
{
	sw_deploy_log_end(l, final_status, NULL);
}
