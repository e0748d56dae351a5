/* Logging. Libraries below main do not log errors they return; the
 * boundary logs once. Lines are "ts level msg" with key=value pairs; no
 * caller may pass a secret, cookie, token or query string (SECURITY.md).
 *
 * Access-log lines are buffered per loop thread and written once per batch
 * of completions (sw_log_flush_thread()), not once per request. */
#ifndef STEWARD_LOG_H
#define STEWARD_LOG_H

#include <stdarg.h>
#include "steward/base/base.h"

enum sw_log_level { SW_LOG_DEBUG, SW_LOG_INFO, SW_LOG_WARN, SW_LOG_ERROR };

void sw_log_set_level(enum sw_log_level level);
void sw_log(enum sw_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define sw_log_info(...) sw_log(SW_LOG_INFO, __VA_ARGS__)
#define sw_log_warn(...) sw_log(SW_LOG_WARN, __VA_ARGS__)
#define sw_log_error(...) sw_log(SW_LOG_ERROR, __VA_ARGS__)
#define sw_log_debug(...) sw_log(SW_LOG_DEBUG, __VA_ARGS__)

/* One access-log line. path must not contain the query string. */
void sw_log_access(struct sw_str request_id, struct sw_str method, struct sw_str path,
		   int status, uint64_t bytes, uint64_t duration_us);
/* Writes this thread's buffered access lines. */
void sw_log_flush_thread(void);

#endif
