/* Outgoing mail: plain-text messages over SMTP, sent with libcurl.
 *
 * Settings, read once from the environment:
 *   SMTP_URL   smtp://[user:password@]host[:port][/ehlo-name] (port 25 by
 *              default; STARTTLS when the server offers it, else plain
 *              text, credentials included: beyond loopback use smtps:// or
 *              a server that offers STARTTLS), or smtps://... (TLS from the
 *              first byte, certificate verified; port 465). User and
 *              password are percent-decoded, so "%40" stands for "@".
 *              Unset or empty: no mail is sent. A value that is not such a
 *              URL is refused at start-up the same way (logged, no mail).
 *   SMTP_FROM  the envelope and header sender (default steward@localhost).
 *
 * Sending is fire-and-forget on one sender thread of this module, not on
 * the shared worker pool: an SMTP server may take its full timeout
 * (SW_MAIL_TIMEOUT_S) and must not hold the threads that hash passwords,
 * and a message queued by a request must not complete back to a loop that
 * has stopped meanwhile. A message is tried once; a failure is logged
 * (never the message, the recipient or the URL's password). Messages still
 * queued when the process exits are lost.
 *
 * Nothing here logs a message's text: it may hold a secret link. */
#ifndef STEWARD_MAIL_H
#define STEWARD_MAIL_H

#include "steward/base/base.h"
#include "steward/base/buf.h"
#include "steward/base/limits.h"

#define SW_MAIL_DEFAULT_FROM "steward@localhost"
/* Connect and whole-transaction timeout of one message, in seconds. */
#define SW_MAIL_TIMEOUT_S 10
/* Messages waiting for the sender thread; sw_mail_send() refuses more. */
#define SW_MAIL_MAX_QUEUE 64
/* Bytes of a subject and of a message's text. */
#define SW_MAIL_MAX_SUBJECT 200
#define SW_MAIL_MAX_TEXT 16384
/* RFC 5322: a line is at most 998 characters. */
#define SW_MAIL_MAX_LINE 998

/* Parsed settings. url keeps the credentials (given to libcurl only);
 * server is "scheme://host:port" without them, for logs. */
struct sw_mail_settings {
	char url[1024];
	char server[300];
	char from[SW_EMAIL_MAX_LEN + 1];
};

/* Checks SMTP_URL and SMTP_FROM values (from NULL or empty: the default)
 * into *ret. 0; -EINVAL with a message naming the variable in err (which
 * never quotes the URL, as it may hold a password). */
int sw_mail_settings_parse(const char *url, const char *from, struct sw_mail_settings *ret,
			   char *err, size_t errlen);

/* Whether SMTP_URL is set and valid (reads the environment on first use). */
bool sw_mail_configured(void);

/* Logs the mail configuration once, at start-up: the server (without
 * credentials) and sender, or "SMTP_URL is not set: password-reset mail is
 * not sent", or why SMTP_URL was refused. Also initialises libcurl while
 * the process has one thread. */
void sw_mail_log_configuration(void);

/* Writes a complete RFC 5322 message into out: Date (from wall_ms),
 * From ("Steward <from>"), To, Subject, Message-ID (<message_id@domain of
 * from>), MIME-Version, Content-Type text/plain; charset=utf-8, then text
 * with every line ending turned into CRLF. 0; -EINVAL when an address is
 * not a plain one (dot-atom local part, "@", LDH labels; a single label
 * such as "localhost" is allowed), the subject is empty, longer than
 * SW_MAIL_MAX_SUBJECT or not printable ASCII, message_id not [A-Za-z0-9],
 * or the text longer than SW_MAIL_MAX_TEXT, not valid for a header-free
 * body (NUL or a bare CR) or has a line longer than SW_MAIL_MAX_LINE;
 * -ENOMEM. out is unchanged on error. */
int sw_mail_format(struct sw_buf *out, const char *from, const char *to, const char *subject,
		   const char *text, uint64_t wall_ms, const char *message_id);

/* Queues a message to `to` from SMTP_FROM, formatted now. The caller's
 * strings are copied; the copy of the message is wiped once sent. 0;
 * -ENOTCONN when SMTP is not configured; -EINVAL (see sw_mail_format);
 * -EBUSY when SW_MAIL_MAX_QUEUE messages wait; -ENOMEM; -EAGAIN when the
 * sender thread cannot be started. Any thread. */
int sw_mail_send(const char *to, const char *subject, const char *text);

#endif
