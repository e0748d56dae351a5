/* One HTTP exchange of the driver, over libcurl loaded by the shared
 * loader (steward/net/libcurl.h).
 *
 * The peers are local: the Docker engine on its unix socket and Caddy's
 * admin API on loopback. So no proxy from the environment is ever used
 * (an http_proxy variable must not send the engine's traffic elsewhere),
 * no redirect is followed, only http is spoken, and signals are left
 * alone (CURLOPT_NOSIGNAL: runner threads). A handle lives for one call:
 * connecting to a unix socket or loopback costs microseconds, and a
 * driver shared by several runner threads then needs no lock. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <curl/curl.h>
#include "steward/net/libcurl.h"
#include "driver/driver_internal.h"

struct exchange {
	struct sw_driver_http *h;
	const struct sw_libcurl *lib;
	CURL *curl;
	int callback_error; /* from read or on_data */
	bool too_big;       /* the collected answer passed its cap */
	bool cancelled;
};

static bool cancel_requested(const struct exchange *x)
{
	return x->h->cancel && __atomic_load_n(x->h->cancel, __ATOMIC_RELAXED);
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *arg)
{
	struct exchange *x = arg;
	struct sw_driver_http *h = x->h;
	size_t n = size * nmemb;
	if (cancel_requested(x)) {
		x->cancelled = true;
		return 0;
	}
	long status = 0;
	x->lib->easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
	if (h->on_data && status >= 200 && status < 300) {
		int rc = h->on_data(h->data_arg, p, n);
		if (rc < 0) {
			x->callback_error = rc;
			return 0;
		}
		return n;
	}
	size_t max = status >= 200 && status < 300
			     ? (h->response_max ? h->response_max : SW_DRIVER_RESPONSE_MAX)
			     : SW_DRIVER_ERROR_BODY_MAX;
	if (h->response.len + n > max) {
		x->too_big = true;
		return 0;
	}
	if (sw_buf_reserve(&h->response, n + 1) < 0)
		return 0; /* CURLE_WRITE_ERROR, reported as -ENOMEM */
	memcpy(h->response.data + h->response.len, p, n);
	h->response.len += n;
	h->response.data[h->response.len] = '\0';
	return n;
}

static size_t on_read(char *out, size_t size, size_t nmemb, void *arg)
{
	struct exchange *x = arg;
	if (cancel_requested(x)) {
		x->cancelled = true;
		return CURL_READFUNC_ABORT;
	}
	ssize_t n = x->h->read(x->h->read_arg, out, size * nmemb);
	if (n < 0) {
		x->callback_error = (int)n;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)n;
}

static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	struct exchange *x = arg;
	if (cancel_requested(x)) {
		x->cancelled = true;
		return 1;
	}
	return 0;
}

static int transport_errno(CURLcode rc, long status)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return -ECONNREFUSED;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
		/* Closed or reset before a status line came; after one, -EIO. */
		return status ? -EIO : -ECONNRESET;
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* curl_easy_perform() wakes at least once a second (its multi_poll waits
 * 1000 ms at most) to call the progress callback, which reads the cancel
 * flag. With h->cancel_fd, the same transfer on a multi handle of its own
 * sleeps until the socket, that descriptor or one of curl's timers
 * (connect timeout, h->timeout_ms) is due. */
static CURLcode perform_until_cancelled(struct exchange *x)
{
	const struct sw_libcurl *lib = x->lib;
	CURLM *m = lib->multi_init();
	if (!m)
		return CURLE_OUT_OF_MEMORY;
	CURLcode rc = CURLE_OK;
	if (lib->multi_add_handle(m, x->curl) != CURLM_OK) {
		lib->multi_cleanup(m);
		return CURLE_OUT_OF_MEMORY;
	}
	int running = 1;
	for (;;) {
		if (lib->multi_perform(m, &running) != CURLM_OK) {
			rc = CURLE_RECV_ERROR;
			break;
		}
		if (!running) {
			int left;
			CURLMsg *msg;
			while ((msg = lib->multi_info_read(m, &left)))
				if (msg->msg == CURLMSG_DONE)
					rc = msg->data.result;
			break;
		}
		if (cancel_requested(x)) {
			x->cancelled = true;
			rc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		/* The timeout only bounds a wait curl has no timer for; curl
		 * shortens it to its own next timer. */
		struct curl_waitfd wfd = { .fd = x->h->cancel_fd, .events = CURL_WAIT_POLLIN };
		if (lib->multi_poll(m, &wfd, 1, 24 * 3600 * 1000, NULL) != CURLM_OK) {
			rc = CURLE_RECV_ERROR;
			break;
		}
	}
	lib->multi_remove_handle(m, x->curl);
	lib->multi_cleanup(m);
	return rc;
}

int sw_driver_http_run(struct sw_driver_http *h, const char *peer, char *err, size_t errlen)
{
	char why[CURL_ERROR_SIZE] = "";
	h->status = 0;
	/* An engine socket that does not exist cannot be connected to: said as
	 * curl says it, without loading libcurl. Loading it initialises
	 * OpenSSL (its configuration, providers and error strings: about 3 MB
	 * resident for the process's life), which a host without the engine
	 * would pay for the metrics sampler's first disk-usage read. */
	if (h->unix_socket && access(h->unix_socket, F_OK) != 0 && errno == ENOENT) {
		snprintf(err, errlen, "%s at %s cannot be reached: Couldn't connect to server", peer,
			 h->unix_socket);
		return -ECONNREFUSED;
	}
	const struct sw_libcurl *lib = sw_libcurl(why, sizeof(why));
	if (!lib) {
		snprintf(err, errlen, "%s cannot be reached: %s", peer, why);
		return -ENOSYS;
	}
	struct exchange x = { .h = h, .lib = lib };
	struct curl_slist *headers = NULL;
	int ret = -ENOMEM;
	x.curl = lib->easy_init();
	if (!x.curl)
		goto fail;

	/* "Content-Type:" empty: curl's form type is not sent for no body. */
	char content_type[96] = "Content-Type:";
	const char *lines[3] = { "Expect:", content_type, NULL };
	size_t nlines = 2;
	if (h->content_type)
		snprintf(content_type, sizeof(content_type), "Content-Type: %s", h->content_type);
	if (h->read)
		lines[nlines++] = "Transfer-Encoding: chunked";
	for (size_t i = 0; i < nlines; i++) {
		struct curl_slist *t = lib->slist_append(headers, lines[i]);
		if (!t)
			goto fail;
		headers = t;
	}

	CURL *c = x.curl;
	lib->easy_setopt(c, CURLOPT_URL, h->url);
	if (h->unix_socket)
		lib->easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, h->unix_socket);
	lib->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	lib->easy_setopt(c, CURLOPT_PROXY, "");
	lib->easy_setopt(c, CURLOPT_NOPROXY, "*");
	lib->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	lib->easy_setopt(c, CURLOPT_ERRORBUFFER, why);
	lib->easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	lib->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)SW_DRIVER_CONNECT_TIMEOUT_MS);
	if (h->timeout_ms > 0)
		lib->easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
	lib->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	lib->easy_setopt(c, CURLOPT_WRITEDATA, &x);
	lib->easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	lib->easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	lib->easy_setopt(c, CURLOPT_XFERINFODATA, &x);
	bool is_post = strcmp(h->method, "POST") == 0;
	if (h->read) {
		lib->easy_setopt(c, CURLOPT_POST, 1L);
		lib->easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		lib->easy_setopt(c, CURLOPT_READDATA, &x);
	} else if (h->body || is_post) {
		/* POST semantics carry the body of PUT and PATCH too. */
		lib->easy_setopt(c, CURLOPT_POST, 1L);
		lib->easy_setopt(c, CURLOPT_POSTFIELDS, h->body ? h->body : "");
		lib->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(h->body ? h->body_len : 0));
	}
	if (!is_post && strcmp(h->method, "GET") != 0)
		lib->easy_setopt(c, CURLOPT_CUSTOMREQUEST, h->method);

	CURLcode rc = h->cancel_fd > 0 ? perform_until_cancelled(&x) : lib->easy_perform(c);
	lib->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &h->status);
	if (rc == CURLE_OK) {
		ret = 0;
	} else if (x.cancelled) {
		snprintf(err, errlen, "cancelled");
		ret = -ECANCELED;
	} else if (x.too_big) {
		snprintf(err, errlen, "%s sent an answer larger than the driver accepts", peer);
		ret = -EFBIG;
	} else if (x.callback_error) {
		/* The callback's owner words this one. */
		snprintf(err, errlen, "%s", strerror(-x.callback_error));
		ret = x.callback_error;
	} else if (rc == CURLE_WRITE_ERROR) {
		snprintf(err, errlen, "out of memory reading the answer of %s", peer);
		ret = -ENOMEM;
	} else if (h->unix_socket) {
		/* curl's own sentence would name the URL's placeholder host. */
		snprintf(err, errlen, "%s at %s cannot be reached: %s", peer, h->unix_socket,
			 lib->easy_strerror(rc));
		ret = transport_errno(rc, h->status);
	} else {
		snprintf(err, errlen, "%s cannot be reached: %s", peer,
			 why[0] ? why : lib->easy_strerror(rc));
		ret = transport_errno(rc, h->status);
	}
	goto done;
fail:
	snprintf(err, errlen, "out of memory talking to %s", peer);
done:
	if (headers)
		lib->slist_free_all(headers);
	if (x.curl)
		lib->easy_cleanup(x.curl);
	return ret;
}

bool sw_driver_token_ok(const char *s, const char *extra, size_t max)
{
	size_t n = 0;
	for (; s && s[n]; n++) {
		char c = s[n];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return false;
	}
	return n > 0 && n <= max;
}

int sw_driver_url_encode(struct sw_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
		char enc[3] = { '%', hex[*p >> 4], hex[*p & 15] };
		int rc = plain ? sw_buf_append(b, p, 1) : sw_buf_append(b, enc, 3);
		if (rc < 0)
			return rc;
	}
	return 0;
}

void sw_driver_answer_error(const struct sw_driver_http *h, const char *what, char *err, size_t errlen)
{
	json_t *doc = h->response.len ? json_loadb(h->response.data, h->response.len, 0, NULL) : NULL;
	const char *msg = NULL;
	if (json_is_object(doc)) {
		msg = json_string_value(json_object_get(doc, "message"));
		if (!msg)
			msg = json_string_value(json_object_get(doc, "error"));
	}
	if (msg && *msg)
		snprintf(err, errlen, "%s: %s", what, msg);
	else
		snprintf(err, errlen, "%s (HTTP %ld)", what, h->status);
	json_decref(doc);
}

int sw_driver_status_errno(long status)
{
	switch (status) {
	case 400:
		return -EINVAL;
	case 401:
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 409:
		return -EEXIST;
	case 413:
		return -EFBIG;
	default:
		return -EIO;
	}
}
