/* Delivery of notifications over HTTP (steward/notify.h has the contract:
 * signature, SSRF rules, retries).
 *
 * SW_NOTIFY_THREADS threads of this module share one queue ordered by when
 * each delivery is due. A thread takes the first due delivery, makes one
 * attempt (resolve, check every address, connect to a checked one only,
 * POST), then either ends the delivery or puts it back due after its
 * backoff. The threads are started on the first delivery and block every
 * signal (stewardd's main thread waits for them). */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <openssl/crypto.h>
#include "steward/net/libcurl.h"
#include "steward/base/log.h"
#include "steward/net/address.h"
#include "steward/notify/notify.h"
#include "steward/base/validate.h"

struct delivery {
	struct delivery *next;
	uint64_t due_ms; /* sw_now_ms() */
	unsigned attempts;
	bool allow_private;
	char channel_id[40];
	char delivery_id[40];
	char event[64];
	char host[256];
	unsigned port;
	char *url;
	char *secret; /* NUL-terminated; wiped */
	size_t secret_len;
	char *body;
	size_t body_len;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct delivery *head; /* by due_ms, then arrival */
	unsigned live;         /* queued or being attempted */
	bool started;
} q = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- settings ---- */

static struct {
	pthread_once_t once;
	unsigned base_ms;
} settings = { .once = PTHREAD_ONCE_INIT };

static void read_settings(void)
{
	const char *v = getenv("NOTIFY_RETRY_BASE_MS");
	uint64_t n;
	settings.base_ms = SW_NOTIFY_RETRY_BASE_MS;
	if (!v || !*v)
		return;
	if (sw_parse_u64(sw_str_cstr(v), &n) && n >= 1 && n <= SW_NOTIFY_RETRY_BASE_MAX_MS)
		settings.base_ms = (unsigned)n;
	else
		sw_log_error("NOTIFY_RETRY_BASE_MS must be a whole number of milliseconds from 1 to %u; "
			     "using %u", SW_NOTIFY_RETRY_BASE_MAX_MS, SW_NOTIFY_RETRY_BASE_MS);
}

unsigned sw_notify_retry_base_ms(void)
{
	pthread_once(&settings.once, read_settings);
	return settings.base_ms;
}

/* ---- one attempt ---- */

enum outcome { DELIVERED, RETRY, FAILED, REFUSED };

struct answer {
	size_t bytes;
	bool capped;
};

static size_t read_answer(char *data, size_t size, size_t nitems, void *arg)
{
	struct answer *a = arg;
	size_t n = size * nitems;
	if (a->bytes + n > SW_NOTIFY_MAX_RESPONSE) {
		a->capped = true;
		return 0; /* stops the transfer: the rest is not waited for */
	}
	a->bytes += n;
	return n;
}

/* The addresses host resolves to, all checked: "host:port:a1,a2,..." for
 * CURLOPT_RESOLVE in pin (NULL for an IP literal, which curl does not
 * resolve). REFUSED with the reason, RETRY when the name does not
 * resolve, else DELIVERED (meaning: go on). */
static enum outcome resolve(const struct delivery *d, char *pin, size_t pinlen, const char **why)
{
	const char *literal_why;
	pin[0] = '\0';
	if (sw_net_literal_refusal(sw_str_cstr(d->host), &literal_why)) {
		if (literal_why && !d->allow_private) {
			*why = literal_why;
			return REFUSED;
		}
		return DELIVERED;
	}
	char port[8];
	snprintf(port, sizeof(port), "%u", d->port);
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL;
	if (getaddrinfo(d->host, port, &hints, &res) != 0 || !res) {
		*why = "the host name does not resolve";
		return RETRY;
	}
	enum outcome o = DELIVERED;
	size_t used = (size_t)snprintf(pin, pinlen, "%s:%u:", d->host, d->port);
	unsigned n = 0;
	for (struct addrinfo *ai = res; ai && o == DELIVERED; ai = ai->ai_next) {
		const char *refusal = sw_net_address_refusal(ai->ai_addr);
		if (refusal && !d->allow_private) {
			*why = refusal;
			o = REFUSED;
			break;
		}
		char text[INET6_ADDRSTRLEN];
		const void *a = ai->ai_family == AF_INET6
					? (const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr
					: (const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		if (!inet_ntop(ai->ai_family, a, text, sizeof(text)))
			continue;
		int w = snprintf(pin + used, pinlen > used ? pinlen - used : 0,
				 ai->ai_family == AF_INET6 ? "%s[%s]" : "%s%s", n ? "," : "", text);
		if (w < 0 || used + (size_t)w >= pinlen)
			break; /* the addresses that fit are pinned, all were checked */
		used += (size_t)w;
		n++;
	}
	freeaddrinfo(res);
	if (o == DELIVERED && n == 0) {
		*why = "the host name does not resolve";
		return RETRY;
	}
	return o;
}

/* The request's header lines, signed at now_s (the attempt's own time);
 * *ok false when one could not be made (out of memory). */
static struct curl_slist *headers_of(const struct sw_libcurl *lib, const struct delivery *d,
				     int64_t now_s, bool *ok)
{
	char delivery[80], event[96], stamp[48], signature[96];
	char sig[SW_NOTIFY_SIGNATURE_LEN + 1] = "";
	*ok = !d->secret_len || sw_notify_sign(sw_str_from(d->secret, d->secret_len), now_s,
					       sw_str_from(d->body, d->body_len), sig) == 0;
	snprintf(delivery, sizeof(delivery), "Steward-Delivery: %s", d->delivery_id);
	snprintf(event, sizeof(event), "Steward-Event: %s", d->event);
	snprintf(stamp, sizeof(stamp), "Steward-Timestamp: %" PRId64, now_s);
	snprintf(signature, sizeof(signature), "Steward-Signature: %s", sig);
	const char *lines[] = { "Content-Type: application/json", "User-Agent: Steward-Notify/1",
				"Expect:", delivery, event, stamp, d->secret_len ? signature : NULL };
	struct curl_slist *h = NULL;
	for (size_t i = 0; i < SW_ARRAY_SIZE(lines) && *ok; i++) {
		if (!lines[i])
			continue; /* unsigned: no signature line */
		struct curl_slist *t = lib->slist_append(h, lines[i]);
		*ok = t != NULL;
		h = t ? t : h;
	}
	return h;
}

static enum outcome attempt(struct delivery *d, char *why, size_t whylen, long *ret_status)
{
	char curl_err[160];
	const struct sw_libcurl *lib = sw_libcurl(curl_err, sizeof(curl_err));
	*ret_status = 0;
	if (!lib) {
		snprintf(why, whylen, "%s", curl_err);
		return FAILED;
	}
	char pin[1024];
	const char *refusal = NULL;
	enum outcome o = resolve(d, pin, sizeof(pin), &refusal);
	if (o != DELIVERED) {
		if (o == REFUSED)
			snprintf(why, whylen, "the target's address is %s; the channel does not allow "
				 "private targets", refusal);
		else
			snprintf(why, whylen, "%s", refusal);
		return o;
	}
	bool ok;
	struct curl_slist *headers = headers_of(lib, d, (int64_t)(sw_wall_ms() / 1000), &ok);
	struct curl_slist *resolve_list = pin[0] ? lib->slist_append(NULL, pin) : NULL;
	CURL *c = lib->easy_init();
	struct answer ans = { 0 };
	CURLcode rc = CURLE_OUT_OF_MEMORY;
	if (c && ok && (resolve_list || !pin[0])) {
		lib->easy_setopt(c, CURLOPT_URL, d->url);
		lib->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		lib->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
		lib->easy_setopt(c, CURLOPT_PROXY, ""); /* never a proxy from the environment */
		if (resolve_list)
			lib->easy_setopt(c, CURLOPT_RESOLVE, resolve_list);
		lib->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
		lib->easy_setopt(c, CURLOPT_POST, 1L);
		lib->easy_setopt(c, CURLOPT_POSTFIELDS, d->body);
		lib->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)d->body_len);
		lib->easy_setopt(c, CURLOPT_WRITEFUNCTION, read_answer);
		lib->easy_setopt(c, CURLOPT_WRITEDATA, &ans);
		lib->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)SW_NOTIFY_CONNECT_TIMEOUT_S);
		lib->easy_setopt(c, CURLOPT_TIMEOUT, (long)SW_NOTIFY_TIMEOUT_S);
		lib->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		rc = lib->easy_perform(c);
		lib->easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
	}
	lib->easy_cleanup(c);
	lib->slist_free_all(headers);
	lib->slist_free_all(resolve_list);
	long s = *ret_status;
	if (rc != CURLE_OK && !(ans.capped && s)) {
		snprintf(why, whylen, "%s", lib->easy_strerror(rc));
		return rc == CURLE_OUT_OF_MEMORY ? FAILED : RETRY;
	}
	if (s >= 200 && s <= 299)
		return DELIVERED;
	snprintf(why, whylen, "the receiver answered %ld", s);
	return s == 408 || s == 429 || s >= 500 ? RETRY : FAILED;
}

/* ---- the queue ---- */

static void delivery_free(struct delivery *d)
{
	if (!d)
		return;
	if (d->secret)
		OPENSSL_cleanse(d->secret, d->secret_len);
	free(d->secret);
	free(d->url);
	free(d->body);
	free(d);
}

/* Under q.lock. */
static void enqueue_locked(struct delivery *d)
{
	struct delivery **p = &q.head;
	while (*p && (*p)->due_ms <= d->due_ms)
		p = &(*p)->next;
	d->next = *p;
	*p = d;
	pthread_cond_broadcast(&q.cond);
}

/* Under q.lock: waits for the first due delivery and takes it. */
static struct delivery *take_locked(void)
{
	for (;;) {
		uint64_t now = sw_now_ms();
		if (q.head && q.head->due_ms <= now) {
			struct delivery *d = q.head;
			q.head = d->next;
			d->next = NULL;
			return d;
		}
		if (!q.head) {
			pthread_cond_wait(&q.cond, &q.lock);
			continue;
		}
		struct timespec ts;
		sw_deadline_after(CLOCK_MONOTONIC, q.head->due_ms - now, &ts);
		pthread_cond_timedwait(&q.cond, &q.lock, &ts);
	}
}

static uint64_t backoff_ms(unsigned attempts)
{
	uint64_t ms = sw_notify_retry_base_ms();
	for (unsigned i = 1; i < attempts; i++)
		ms *= SW_NOTIFY_RETRY_FACTOR;
	return ms;
}

static void *deliverer_main(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&q.lock);
		struct delivery *d = take_locked();
		pthread_mutex_unlock(&q.lock);

		char why[200] = "";
		long status = 0;
		enum outcome o = attempt(d, why, sizeof(why), &status);
		d->attempts++;
		if (o == RETRY && d->attempts <= SW_NOTIFY_MAX_RETRIES) {
			uint64_t wait = backoff_ms(d->attempts);
			sw_log_warn("notify retry channel=%s delivery=%s event=%s attempt=%u error=\"%s\" "
				    "retry_in_ms=%" PRIu64, d->channel_id, d->delivery_id, d->event,
				    d->attempts, why, wait);
			d->due_ms = sw_now_ms() + wait;
			pthread_mutex_lock(&q.lock);
			enqueue_locked(d);
			pthread_mutex_unlock(&q.lock);
			continue;
		}
		if (o == DELIVERED)
			sw_log_info("notify delivered channel=%s delivery=%s event=%s attempt=%u status=%ld",
				    d->channel_id, d->delivery_id, d->event, d->attempts, status);
		else if (o == REFUSED)
			sw_log_warn("notify refused channel=%s delivery=%s event=%s reason=\"%s\"",
				    d->channel_id, d->delivery_id, d->event, why);
		else
			sw_log_error("notify failed channel=%s delivery=%s event=%s attempts=%u error=\"%s\"",
				     d->channel_id, d->delivery_id, d->event, d->attempts, why);
		delivery_free(d);
		pthread_mutex_lock(&q.lock);
		q.live--;
		pthread_mutex_unlock(&q.lock);
	}
	return NULL;
}

/* Under q.lock. */
static int start_locked(void)
{
	if (q.started)
		return 0;
	pthread_condattr_t ca;
	if (pthread_condattr_init(&ca) != 0 || pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&q.cond, &ca) != 0)
		return -EAGAIN;
	pthread_condattr_destroy(&ca);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	unsigned started = 0;
	for (unsigned i = 0; i < SW_NOTIFY_THREADS; i++) {
		pthread_attr_t attr;
		pthread_t t;
		if (pthread_attr_init(&attr) != 0)
			break;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int r = pthread_create(&t, &attr, deliverer_main, NULL);
		pthread_attr_destroy(&attr);
		if (r != 0)
			break;
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* One thread running is enough to go on with. */
	if (!started) {
		pthread_cond_destroy(&q.cond);
		return -EAGAIN;
	}
	q.started = true;
	return 0;
}

static char *copy(struct sw_str s)
{
	char *p = malloc(s.len + 1);
	if (p) {
		if (s.len)
			memcpy(p, s.ptr, s.len);
		p[s.len] = '\0';
	}
	return p;
}

int sw_notify_post(const struct sw_notify_request *r)
{
	const char *msg;
	struct sw_str host;
	unsigned port;
	if (!r->channel_id || !r->delivery_id || !r->event_type || !r->url || !r->body.ptr ||
	    r->body.len > SW_NOTIFY_MAX_BODY ||
	    !sw_valid_url(sw_str_cstr(r->url), false, &host, &port, &msg))
		return -EINVAL;
	struct delivery *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	snprintf(d->channel_id, sizeof(d->channel_id), "%s", r->channel_id);
	snprintf(d->delivery_id, sizeof(d->delivery_id), "%s", r->delivery_id);
	snprintf(d->event, sizeof(d->event), "%s", r->event_type);
	snprintf(d->host, sizeof(d->host), "%.*s", (int)host.len, host.ptr);
	d->port = port;
	d->allow_private = r->allow_private;
	d->url = copy(sw_str_cstr(r->url));
	d->body = copy(r->body);
	d->body_len = r->body.len;
	d->secret = copy(r->secret);
	d->secret_len = r->secret.len;
	if (!d->url || !d->body || !d->secret || host.len >= sizeof(d->host)) {
		int e = host.len >= sizeof(d->host) ? -EINVAL : -ENOMEM;
		delivery_free(d);
		return e;
	}
	int ret;
	pthread_mutex_lock(&q.lock);
	if (q.live >= SW_NOTIFY_MAX_QUEUE)
		ret = -EBUSY;
	else
		ret = start_locked();
	if (ret == 0) {
		d->due_ms = sw_now_ms();
		q.live++;
		enqueue_locked(d);
	}
	pthread_mutex_unlock(&q.lock);
	if (ret < 0)
		delivery_free(d);
	return ret;
}
