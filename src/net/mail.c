/* Outgoing mail over SMTP (steward/net/mail.h has the contract and why it runs
 * on its own thread).
 *
 * libcurl speaks SMTP: EHLO, STARTTLS (smtp://, when offered) or implicit
 * TLS (smtps://), AUTH with the URL's credentials, MAIL FROM, RCPT TO,
 * DATA with dot-stuffing. It is told to speak nothing else
 * (CURLOPT_PROTOCOLS_STR), so no setting can make it fetch a URL of
 * another kind. Messages are formatted here, validated first: addresses
 * are plain dot-atoms and nothing a caller gives can start a header line
 * or an SMTP command. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <curl/curl.h>
#include <openssl/crypto.h>
#include "steward/net/libcurl.h"
#include "steward/base/log.h"
#include "steward/net/mail.h"

#include "steward/base/secret.h"

/* An address for an SMTP envelope and header: a dot-atom local part of
 * 1..64 bytes, "@", a domain of LDH labels (one label is enough:
 * "steward@localhost" is a fine sender), 254 bytes at most. Stricter than
 * RFC 5321 allows (no quoted local parts, no address literals), so that
 * nothing in it can end a header or an SMTP command. */
static bool ascii_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool address_ok(const char *a)
{
	static const char atext[] = "!#$%&'*+-/=?^_`{|}~.";
	const char *at = strrchr(a, '@');
	size_t n = strlen(a);
	if (!at || n > SW_EMAIL_MAX_LEN || at == a || at - a > 64 || a[0] == '.' || at[-1] == '.')
		return false;
	for (const char *p = a; p < at; p++) {
		if (!ascii_alnum(*p) && !strchr(atext, *p))
			return false;
		if (*p == '.' && p[1] == '.')
			return false;
	}
	size_t label = 0;
	for (const char *p = at + 1;; p++) {
		if (*p == '.' || *p == '\0') {
			if (label == 0 || label > 63 || p[-1] == '-')
				return false;
			if (*p == '\0')
				return true;
			label = 0;
		} else if (ascii_alnum(*p) || (*p == '-' && label > 0)) {
			label++;
		} else {
			return false;
		}
	}
}

/* ---- settings ---- */

static bool url_part(const struct sw_libcurl *lib, CURLU *u, CURLUPart part, unsigned flags,
		     char *out, size_t outlen)
{
	char *v = NULL;
	bool ok = lib->url_get(u, part, &v, flags) == CURLUE_OK && v && strlen(v) < outlen;
	if (ok)
		snprintf(out, outlen, "%s", v);
	lib->free(v);
	return ok;
}

static bool has_part(const struct sw_libcurl *lib, CURLU *u, CURLUPart part)
{
	char *v = NULL;
	bool present = lib->url_get(u, part, &v, 0) == CURLUE_OK && v;
	lib->free(v);
	return present;
}

int sw_mail_settings_parse(const char *url, const char *from, struct sw_mail_settings *ret,
			   char *err, size_t errlen)
{
	struct sw_mail_settings s = { 0 };
	if (!url || !*url) {
		snprintf(err, errlen, "SMTP_URL is empty");
		return -EINVAL;
	}
	if (strlen(url) >= sizeof(s.url)) {
		snprintf(err, errlen, "SMTP_URL is longer than %zu bytes", sizeof(s.url) - 1);
		return -EINVAL;
	}
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f) {
			snprintf(err, errlen, "SMTP_URL contains a space or a control character");
			return -EINVAL;
		}
	/* libcurl is loaded only when mail is configured (steward/net/libcurl.h). */
	const struct sw_libcurl *lib = sw_libcurl(err, errlen);
	if (!lib)
		return -ENOTSUP;
	CURLU *u = lib->url();
	if (!u) {
		snprintf(err, errlen, "SMTP_URL cannot be checked (out of memory)");
		return -ENOMEM;
	}
	char scheme[8], host[256], port[8];
	int r = -EINVAL;
	if (lib->url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    !url_part(lib, u, CURLUPART_SCHEME, 0, scheme, sizeof(scheme)) ||
	    (strcmp(scheme, "smtp") != 0 && strcmp(scheme, "smtps") != 0)) {
		snprintf(err, errlen, "SMTP_URL must be smtp://[user:password@]host[:port] or smtps://...");
		goto out;
	}
	if (!url_part(lib, u, CURLUPART_HOST, 0, host, sizeof(host)) || !*host) {
		snprintf(err, errlen, "SMTP_URL names no host");
		goto out;
	}
	if (!url_part(lib, u, CURLUPART_PORT, CURLU_DEFAULT_PORT, port, sizeof(port))) {
		snprintf(err, errlen, "SMTP_URL has an invalid port");
		goto out;
	}
	if (has_part(lib, u, CURLUPART_QUERY) || has_part(lib, u, CURLUPART_FRAGMENT)) {
		snprintf(err, errlen, "SMTP_URL may not have a query or a fragment");
		goto out;
	}
	if (!from || !*from)
		from = SW_MAIL_DEFAULT_FROM;
	if (!address_ok(from)) {
		snprintf(err, errlen, "SMTP_FROM must be an e-mail address such as steward@example.com");
		goto out;
	}
	snprintf(s.from, sizeof(s.from), "%s", from);
	snprintf(s.url, sizeof(s.url), "%s", url);
	snprintf(s.server, sizeof(s.server), "%s://%s:%s", scheme, host, port);
	*ret = s;
	r = 0;
out:
	lib->url_cleanup(u);
	OPENSSL_cleanse(&s, sizeof(s));
	return r;
}

static struct {
	pthread_once_t once;
	bool configured;
	bool set;              /* SMTP_URL was given, valid or not */
	char error[256];
	struct sw_mail_settings settings;
} config = { .once = PTHREAD_ONCE_INIT };

static void load_config(void)
{
	const char *url = getenv("SMTP_URL");
	if (!url || !*url)
		return;
	config.set = true;
	config.configured = sw_mail_settings_parse(url, getenv("SMTP_FROM"), &config.settings,
						   config.error, sizeof(config.error)) == 0;
}

bool sw_mail_configured(void)
{
	pthread_once(&config.once, load_config);
	return config.configured;
}

void sw_mail_log_configuration(void)
{
	if (sw_mail_configured())
		sw_log_info("mail server=%s from=%s", config.settings.server, config.settings.from);
	else if (config.set)
		sw_log_error("%s: password-reset mail is not sent", config.error);
	else
		sw_log_warn("SMTP_URL is not set: password-reset mail is not sent");
}

/* ---- formatting ---- */

static bool header_text_ok(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < ' ' || s[i] > '~')
			return false;
	return true;
}

/* Appends text with CRLF line endings; refuses a bare CR and long lines. */
static int append_body(struct sw_buf *b, const char *text)
{
	size_t n = strlen(text), line = 0;
	if (n > SW_MAIL_MAX_TEXT)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = text[i];
		int r;
		if (c == '\r') {
			if (text[i + 1] != '\n')
				return -EINVAL;
			continue;
		}
		if (c == '\n') {
			r = sw_buf_append_lit(b, "\r\n");
			line = 0;
		} else {
			if (++line > SW_MAIL_MAX_LINE)
				return -EINVAL;
			r = sw_buf_append(b, &c, 1);
		}
		if (r < 0)
			return r;
	}
	if (n && text[n - 1] != '\n')
		return sw_buf_append_lit(b, "\r\n");
	return 0;
}

int sw_mail_format(struct sw_buf *out, const char *from, const char *to, const char *subject,
		   const char *text, uint64_t wall_ms, const char *message_id)
{
	if (!from || !to || !subject || !text || !message_id || !address_ok(from) || !address_ok(to) ||
	    !header_text_ok(subject, SW_MAIL_MAX_SUBJECT) || !*message_id)
		return -EINVAL;
	for (const char *p = message_id; *p; p++)
		if (!ascii_alnum(*p))
			return -EINVAL;
	time_t secs = (time_t)(wall_ms / 1000);
	struct tm tm;
	char date[64];
	if (!gmtime_r(&secs, &tm) || strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm) == 0)
		return -EINVAL;
	struct sw_buf b = { 0 };
	int r = sw_buf_appendf(&b,
			       "Date: %s\r\n"
			       "From: Steward <%s>\r\n"
			       "To: <%s>\r\n"
			       "Subject: %s\r\n"
			       "Message-ID: <%s@%s>\r\n"
			       "MIME-Version: 1.0\r\n"
			       "Content-Type: text/plain; charset=utf-8\r\n"
			       "Content-Transfer-Encoding: 8bit\r\n"
			       "\r\n",
			       date, from, to, subject, message_id, strrchr(from, '@') + 1);
	if (r == 0)
		r = append_body(&b, text);
	if (r == 0)
		r = sw_buf_append(out, b.data, b.len);
	if (b.data)
		OPENSSL_cleanse(b.data, b.len);
	sw_buf_release(&b);
	return r;
}

/* ---- the sender thread ---- */

struct mail_job {
	struct mail_job *next;
	char to[SW_EMAIL_MAX_LEN + 1];
	char message_id[33];
	struct sw_buf message;
	size_t sent; /* bytes handed to libcurl */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct mail_job *head, **tailp; /* FIFO; tailp: where the next job goes */
	unsigned queued;
	bool started;
} outbox = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
	     .tailp = &outbox.head };

static size_t read_message(char *dst, size_t size, size_t nitems, void *arg)
{
	struct mail_job *job = arg;
	size_t n = SW_MIN(size * nitems, job->message.len - job->sent);
	memcpy(dst, job->message.data + job->sent, n);
	job->sent += n;
	return n;
}

static void job_free(struct mail_job *job)
{
	if (job->message.data)
		OPENSSL_cleanse(job->message.data, job->message.len);
	sw_buf_release(&job->message);
	free(job);
}

static void deliver(struct mail_job *job)
{
	const struct sw_libcurl *lib = sw_libcurl(NULL, 0); /* loaded: mail is configured */
	const struct sw_mail_settings *s = &config.settings;
	char from[SW_EMAIL_MAX_LEN + 3], rcpt[SW_EMAIL_MAX_LEN + 3];
	snprintf(from, sizeof(from), "<%s>", s->from);
	snprintf(rcpt, sizeof(rcpt), "<%s>", job->to);
	CURL *c = lib->easy_init();
	struct curl_slist *to = lib->slist_append(NULL, rcpt);
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	if (c && to) {
		lib->easy_setopt(c, CURLOPT_URL, s->url);
		lib->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
		lib->easy_setopt(c, CURLOPT_USE_SSL, (long)CURLUSESSL_TRY);
		lib->easy_setopt(c, CURLOPT_MAIL_FROM, from);
		lib->easy_setopt(c, CURLOPT_MAIL_RCPT, to);
		lib->easy_setopt(c, CURLOPT_UPLOAD, 1L);
		lib->easy_setopt(c, CURLOPT_READFUNCTION, read_message);
		lib->easy_setopt(c, CURLOPT_READDATA, job);
		lib->easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)job->message.len);
		lib->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)SW_MAIL_TIMEOUT_S);
		lib->easy_setopt(c, CURLOPT_TIMEOUT, (long)SW_MAIL_TIMEOUT_S);
		lib->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		rc = lib->easy_perform(c);
	}
	long smtp_code = 0;
	if (c)
		lib->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &smtp_code);
	if (rc == CURLE_OK)
		sw_log_info("mail sent server=%s message_id=%s", s->server, job->message_id);
	else
		sw_log_error("mail not sent server=%s message_id=%s error=\"%s\" smtp_code=%ld", s->server,
			     job->message_id, lib->easy_strerror(rc), smtp_code);
	lib->slist_free_all(to);
	lib->easy_cleanup(c);
}

static void *sender_main(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&outbox.lock);
		while (!outbox.head)
			pthread_cond_wait(&outbox.cond, &outbox.lock);
		struct mail_job *job = outbox.head;
		if (!(outbox.head = job->next))
			outbox.tailp = &outbox.head;
		outbox.queued--;
		pthread_mutex_unlock(&outbox.lock);
		deliver(job);
		job_free(job);
	}
	return NULL;
}

/* Under outbox.lock. The thread blocks every signal (stewardd's main
 * thread waits for them), whichever thread starts it. */
static int start_sender_locked(void)
{
	if (outbox.started)
		return 0;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_t t;
	int r = pthread_attr_init(&attr);
	if (r == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&t, &attr, sender_main, NULL);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -EAGAIN;
	outbox.started = true;
	return 0;
}

int sw_mail_send(const char *to, const char *subject, const char *text)
{
	if (!sw_mail_configured())
		return -ENOTCONN;
	struct mail_job *job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	int r = sw_random_token(job->message_id, sizeof(job->message_id), 12);
	for (char *p = job->message_id; r == 0 && *p; p++)
		if (*p == '-' || *p == '_')
			*p = 'x'; /* base64url to [A-Za-z0-9] for the Message-ID */
	if (r == 0 && (!address_ok(to) || strlen(to) >= sizeof(job->to)))
		r = -EINVAL;
	if (r == 0) {
		snprintf(job->to, sizeof(job->to), "%s", to);
		r = sw_mail_format(&job->message, config.settings.from, job->to, subject, text,
				   sw_wall_ms(), job->message_id);
	}
	if (r < 0) {
		job_free(job);
		return r;
	}
	pthread_mutex_lock(&outbox.lock);
	if (outbox.queued >= SW_MAIL_MAX_QUEUE)
		r = -EBUSY;
	else
		r = start_sender_locked();
	if (r == 0) {
		*outbox.tailp = job;
		outbox.tailp = &job->next;
		outbox.queued++;
		pthread_cond_signal(&outbox.cond);
	}
	pthread_mutex_unlock(&outbox.lock);
	if (r < 0)
		job_free(job);
	return r;
}
