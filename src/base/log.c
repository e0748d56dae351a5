/* Log lines to stdout. Ordinary lines are written at once (they are rare);
 * access lines are buffered per thread and flushed once per batch of
 * completions, so a busy loop makes one write(2) per batch, not per request. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "steward/base/log.h"

static enum sw_log_level min_level = SW_LOG_INFO;
static const char *const level_names[] = { "DEBUG", "INFO", "WARN", "ERROR" };

/* A thread's access-line buffer is made at its first access line (only
 * the loop threads write them) and freed when the thread ends: as a
 * thread-local array, every thread of the process would carry and zero its
 * 16 KiB. */
#define ACCESS_BUF_SIZE 16384
static __thread char *access_buf;
static __thread size_t access_len;
static pthread_key_t access_key;
static pthread_once_t access_once = PTHREAD_ONCE_INIT;

static void write_all(const char *p, size_t n);

/* The thread's end: what it buffered is written, then the buffer goes. */
static void access_release(void *buf)
{
	if (access_len)
		write_all(buf, access_len);
	access_len = 0;
	access_buf = NULL;
	free(buf);
}

static void access_key_make(void)
{
	if (pthread_key_create(&access_key, access_release) != 0)
		abort(); /* at the first access line: no key left is a broken process */
}

void sw_log_set_level(enum sw_log_level level)
{
	min_level = level;
}

static void write_all(const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return; /* nowhere to report a failing log */
		}
		p += w;
		n -= (size_t)w;
	}
}

void sw_log(enum sw_log_level level, const char *fmt, ...)
{
	if (level < min_level)
		return;
	char line[2048];
	size_t n = sw_format_rfc3339(sw_wall_ms(), line);
	n += (size_t)snprintf(line + n, sizeof(line) - n, " %s ", level_names[level]);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += SW_MIN((size_t)m, sizeof(line) - n - 2);
	/* One line per record: a newline inside a message would let a
	 * caller-supplied string forge a log line. */
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	sw_log_flush_thread();
	write_all(line, n);
}

static void append_clean(char *dst, size_t *pos, struct sw_str s, size_t max)
{
	/* Paths are already validated by the parser (visible ASCII); keep
	 * only that, and cap the length. */
	size_t n = SW_MIN(s.len, max);
	for (size_t i = 0; i < n; i++) {
		char c = s.ptr[i];
		dst[(*pos)++] = (c > 0x20 && c < 0x7f) ? c : '?';
	}
}

void sw_log_access(struct sw_str request_id, struct sw_str method, struct sw_str path,
		   int status, uint64_t bytes, uint64_t duration_us)
{
	if (SW_LOG_INFO < min_level)
		return;
	char line[512];
	size_t n = sw_format_rfc3339(sw_wall_ms(), line);
	memcpy(line + n, " INFO access rid=", 17);
	n += 17;
	append_clean(line, &n, request_id, 64);
	memcpy(line + n, " method=", 8);
	n += 8;
	append_clean(line, &n, method, 16);
	memcpy(line + n, " path=", 6);
	n += 6;
	append_clean(line, &n, path, 256);
	n += (size_t)snprintf(line + n, sizeof(line) - n, " status=%d bytes=%llu dur_us=%llu\n",
			      status, (unsigned long long)bytes, (unsigned long long)duration_us);
	if (!access_buf) {
		pthread_once(&access_once, access_key_make);
		if (!(access_buf = malloc(ACCESS_BUF_SIZE))) {
			write_all(line, n); /* unbuffered rather than lost */
			return;
		}
		pthread_setspecific(access_key, access_buf);
	}
	if (access_len + n > ACCESS_BUF_SIZE)
		sw_log_flush_thread();
	memcpy(access_buf + access_len, line, n);
	access_len += n;
}

void sw_log_flush_thread(void)
{
	if (access_len == 0)
		return;
	write_all(access_buf, access_len);
	access_len = 0;
}
