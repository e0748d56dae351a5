/* Domain verification: a DNS TXT record or an HTTP token (domain_check.h).
 *
 * Why the resolver is res_nquery() and not getaddrinfo(): the check asks
 * one configured server (DOMAIN_VERIFY_NAMESERVER) for TXT, A and AAAA
 * alike, so that what it sees is what that server says, not a hosts file;
 * and a resolver state per call (res_ninit on the worker's stack) keeps it
 * thread-safe. glibc has res_nquery in libc itself since 2.34.
 *
 * Why a plain socket and not libcurl for the HTTP part: the request is one
 * fixed GET to an address already resolved and checked against the
 * private ranges; a client that resolved names itself could be pointed
 * elsewhere between the check and the connection. */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "steward/net/domain_check.h"
#include "steward/http/http_parser.h"
#include "steward/net/address.h"

#define CHALLENGE_PATH "/.well-known/steward-challenge/"
#define CHALLENGE_LABEL "_steward-challenge."
#define DNS_HEADER_LEN 12

/* ---- settings ---- */

static bool parse_port(const char *s, unsigned *ret)
{
	uint64_t v;
	if (!sw_parse_u64(sw_str_cstr(s), &v) || v < 1 || v > 65535 || s[0] == '0')
		return false;
	*ret = (unsigned)v;
	return true;
}

int sw_domain_check_settings_load(struct sw_domain_check_settings *ret, char *err, size_t errlen)
{
	struct sw_domain_check_settings s = { .http_port = 80 };
	const char *ns = getenv("DOMAIN_VERIFY_NAMESERVER");
	if (ns && *ns) {
		char host[INET_ADDRSTRLEN];
		unsigned port = 53;
		const char *colon = strchr(ns, ':');
		size_t n = colon ? (size_t)(colon - ns) : strlen(ns);
		if (n >= sizeof(host) || (colon && !parse_port(colon + 1, &port))) {
			snprintf(err, errlen, "DOMAIN_VERIFY_NAMESERVER must be an IPv4 address with an "
					      "optional port, such as 127.0.0.1:5353");
			return -EINVAL;
		}
		memcpy(host, ns, n);
		host[n] = '\0';
		s.nameserver.sin_family = AF_INET;
		s.nameserver.sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &s.nameserver.sin_addr) != 1) {
			snprintf(err, errlen, "DOMAIN_VERIFY_NAMESERVER must be an IPv4 address with an "
					      "optional port, such as 127.0.0.1:5353");
			return -EINVAL;
		}
		s.has_nameserver = true;
	}
	const char *port = getenv("DOMAIN_VERIFY_HTTP_PORT");
	if (port && *port && !parse_port(port, &s.http_port)) {
		snprintf(err, errlen, "DOMAIN_VERIFY_HTTP_PORT must be a port number from 1 to 65535");
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

/* ---- DNS answers ---- */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Moves *off past a name: labels up to a zero byte or a compression
 * pointer (two bytes, not followed). */
static int skip_name(const uint8_t *msg, size_t len, size_t *off)
{
	size_t o = *off;
	for (unsigned labels = 0; labels <= 127; labels++) {
		if (o >= len)
			return -EBADMSG;
		uint8_t c = msg[o];
		if ((c & 0xC0) == 0xC0) {
			if (o + 2 > len)
				return -EBADMSG;
			*off = o + 2;
			return 0;
		}
		if (c & 0xC0)
			return -EBADMSG; /* the reserved label types */
		if (c == 0) {
			*off = o + 1;
			return 0;
		}
		o += 1u + c;
	}
	return -EBADMSG;
}

int sw_dns_answers(const uint8_t *msg, size_t len, struct sw_dns_rr *out, size_t cap, size_t *ret_n)
{
	*ret_n = 0;
	if (len < DNS_HEADER_LEN)
		return -EBADMSG;
	unsigned qd = get16(msg + 4), an = get16(msg + 6);
	size_t off = DNS_HEADER_LEN;
	for (unsigned i = 0; i < qd; i++) {
		if (skip_name(msg, len, &off) < 0 || off + 4 > len)
			return -EBADMSG;
		off += 4; /* type, class */
	}
	for (unsigned i = 0; i < an && *ret_n < cap; i++) {
		if (skip_name(msg, len, &off) < 0 || off + 10 > len)
			return -EBADMSG;
		uint16_t type = get16(msg + off), rdlen = get16(msg + off + 8);
		off += 10; /* type, class, ttl, rdlength */
		if (rdlen > len - off)
			return -EBADMSG;
		out[(*ret_n)++] = (struct sw_dns_rr){ type, rdlen, msg + off };
		off += rdlen;
	}
	return 0;
}

bool sw_dns_txt_equals(const struct sw_dns_rr *rr, const char *want)
{
	size_t wlen = strlen(want), w = 0;
	if (rr->type != SW_DNS_TYPE_TXT)
		return false;
	for (size_t o = 0; o < rr->rdlen;) {
		size_t n = rr->rdata[o++];
		if (n > (size_t)rr->rdlen - o || n > wlen - w || memcmp(rr->rdata + o, want + w, n) != 0)
			return false;
		o += n;
		w += n;
	}
	return w == wlen;
}

/* ---- the HTTP answer ---- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The value of header name (lower-case, with its colon) in head, or an
 * empty view. */
static struct sw_str header_value(struct sw_str head, const char *name)
{
	size_t nlen = strlen(name);
	for (size_t i = 0; i + 2 + nlen <= head.len; i++) {
		if (head.ptr[i] != '\n' || !sw_str_case_eq(sw_str_from(head.ptr + i + 1, nlen), sw_str_from(name, nlen)))
			continue;
		size_t s = i + 1 + nlen, e = s;
		while (e < head.len && head.ptr[e] != '\r' && head.ptr[e] != '\n')
			e++;
		while (s < e && is_space(head.ptr[s]))
			s++;
		return sw_str_from(head.ptr + s, e - s);
	}
	return SW_STR_NULL;
}

static bool contains_chunked(struct sw_str v)
{
	for (size_t i = 0; i + 7 <= v.len; i++)
		if (sw_str_case_eq(sw_str_from(v.ptr + i, 7), SW_STR("chunked")))
			return true;
	return false;
}

/* The head's length (up to and with the empty line), or 0 when it is not
 * complete in resp. */
static size_t head_length(const char *resp, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (memcmp(resp + i, "\r\n\r\n", 4) == 0)
			return i + 4;
	return 0;
}

bool sw_http_challenge_answer_ok(const char *resp, size_t n, const char *token, char *why,
				 size_t whylen)
{
	size_t hlen = head_length(resp, n);
	if (n < 12 || memcmp(resp, "HTTP/1.", 7) != 0 || resp[8] != ' ' || resp[9] < '1' ||
	    resp[9] > '5' || resp[10] < '0' || resp[10] > '9' || resp[11] < '0' || resp[11] > '9') {
		snprintf(why, whylen, "did not answer in HTTP/1.x");
		return false;
	}
	int status = (resp[9] - '0') * 100 + (resp[10] - '0') * 10 + (resp[11] - '0');
	if (status != 200) {
		snprintf(why, whylen, "answered HTTP %d%s", status,
			 status >= 300 && status < 400 ? " (redirects are not followed)" : "");
		return false;
	}
	if (!hlen) {
		snprintf(why, whylen, "answered with a head that is incomplete or too large");
		return false;
	}
	struct sw_str head = sw_str_from(resp, hlen);
	const char *body = resp + hlen;
	size_t blen = n - hlen;
	char *decoded = NULL;
	bool ok = false;
	if (contains_chunked(header_value(head, "transfer-encoding:"))) {
		struct sw_http_chunked c;
		struct sw_http_parse_error perr;
		size_t used, written;
		decoded = malloc(blen ? blen : 1);
		if (!decoded) {
			snprintf(why, whylen, "could not be read (out of memory)");
			return false;
		}
		sw_http_chunked_init(&c, SW_DOMAIN_CHECK_HTTP_MAX_RESPONSE);
		if (sw_http_chunked_decode(&c, body, blen, decoded, &used, &written, &perr) != 0) {
			snprintf(why, whylen, "answered with an incomplete or malformed chunked body");
			goto out;
		}
		body = decoded;
		blen = written;
	} else {
		struct sw_str cl = header_value(head, "content-length:");
		uint64_t want;
		if (cl.len && sw_parse_u64(cl, &want)) {
			if (want > blen) {
				snprintf(why, whylen, "answered with a body that is incomplete or too large");
				goto out;
			}
			blen = (size_t)want;
		}
	}
	while (blen && is_space(body[blen - 1]))
		blen--;
	while (blen && is_space(*body)) {
		body++;
		blen--;
	}
	ok = blen == strlen(token) && memcmp(body, token, blen) == 0;
	if (!ok)
		snprintf(why, whylen, "answered 200, but its body is not the token");
out:
	free(decoded);
	return ok;
}

/* ---- the checks ---- */

/* Whether a response in buf is complete before the server closes: its head
 * and a Content-Length body are in. */
static bool response_complete(const char *buf, size_t n)
{
	size_t hlen = head_length(buf, n);
	uint64_t want;
	if (!hlen)
		return false;
	struct sw_str cl = header_value(sw_str_from(buf, hlen), "content-length:");
	return cl.len && sw_parse_u64(cl, &want) && n - hlen >= want;
}

static int remaining_ms(uint64_t deadline)
{
	uint64_t now = sw_now_ms();
	return now >= deadline ? 0 : (int)(deadline - now);
}

/* Waits until fd is ready for events; false on timeout or error. */
static bool wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	for (;;) {
		int ms = remaining_ms(deadline);
		if (ms == 0)
			return false;
		int r = poll(&p, 1, ms);
		if (r > 0)
			return true;
		if (r == 0 || errno != EINTR)
			return false;
	}
}

/* One GET of the challenge URL from one address: true when it proves the
 * token; else why says what happened. */
static bool http_try(const struct sockaddr_storage *addr, socklen_t alen, const char *hostname,
		     unsigned port, const char *token, uint64_t deadline, char *why, size_t whylen)
{
	char req[512], resp[SW_DOMAIN_CHECK_HTTP_MAX_RESPONSE];
	char portpart[8] = "";
	if (port != 80)
		snprintf(portpart, sizeof(portpart), ":%u", port);
	int rlen = snprintf(req, sizeof(req),
			    "GET " CHALLENGE_PATH "%s HTTP/1.1\r\nHost: %s%s\r\n"
			    "User-Agent: Steward-Domain-Verification\r\nAccept: text/plain\r\n"
			    "Connection: close\r\n\r\n",
			    token, hostname, portpart);
	if (rlen < 0 || (size_t)rlen >= sizeof(req)) {
		snprintf(why, whylen, "could not be asked (request too long)");
		return false;
	}
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(why, whylen, "could not be reached (no socket)");
		return false;
	}
	bool ok = false;
	size_t n = 0;
	int err = 0;
	socklen_t elen = sizeof(err);
	if (connect(fd, (const struct sockaddr *)addr, alen) < 0) {
		if (errno != EINPROGRESS)
			err = errno;
		else if (!wait_fd(fd, POLLOUT, deadline))
			err = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
			err = errno;
	}
	if (err) {
		snprintf(why, whylen, "%s",
			 err == ECONNREFUSED ? "refused the connection" :
			 err == ETIMEDOUT ? "could not be connected to in time" :
			 err == ENETUNREACH || err == EHOSTUNREACH ? "is unreachable" :
								     "could not be connected to");
		goto out;
	}
	for (size_t sent = 0; sent < (size_t)rlen;) {
		ssize_t w = send(fd, req + sent, (size_t)rlen - sent, MSG_NOSIGNAL);
		if (w > 0)
			sent += (size_t)w;
		else if (w < 0 && (errno == EAGAIN || errno == EINTR) && wait_fd(fd, POLLOUT, deadline))
			continue;
		else {
			snprintf(why, whylen, "closed the connection before the request was sent");
			goto out;
		}
	}
	while (n < sizeof(resp) && !response_complete(resp, n)) {
		ssize_t r = recv(fd, resp + n, sizeof(resp) - n, 0);
		if (r > 0) {
			n += (size_t)r;
		} else if (r == 0) {
			break;
		} else if ((errno == EAGAIN || errno == EINTR) && wait_fd(fd, POLLIN, deadline)) {
			continue;
		} else {
			if (n == 0) {
				snprintf(why, whylen, "did not answer within %d s",
					 SW_DOMAIN_CHECK_HTTP_TIMEOUT_MS / 1000);
				goto out;
			}
			break;
		}
	}
	ok = sw_http_challenge_answer_ok(resp, n, token, why, whylen);
out:
	close(fd);
	return ok;
}

/* The A and AAAA records of hostname, at most SW_DOMAIN_CHECK_MAX_ADDRESSES. */
static size_t resolve(res_state st, const char *hostname, unsigned port,
		      struct sockaddr_storage out[SW_DOMAIN_CHECK_MAX_ADDRESSES])
{
	static const int types[] = { SW_DNS_TYPE_A, SW_DNS_TYPE_AAAA };
	uint8_t *ans = malloc(SW_DNS_ANSWER_MAX);
	size_t count = 0;
	if (!ans)
		return 0;
	for (size_t t = 0; t < SW_ARRAY_SIZE(types); t++) {
		struct sw_dns_rr rr[SW_DNS_MAX_RECORDS];
		size_t nrr = 0;
		int len = res_nquery(st, hostname, ns_c_in, types[t], ans, SW_DNS_ANSWER_MAX);
		if (len <= 0)
			continue;
		sw_dns_answers(ans, SW_MIN((size_t)len, (size_t)SW_DNS_ANSWER_MAX), rr, SW_ARRAY_SIZE(rr), &nrr);
		for (size_t i = 0; i < nrr && count < SW_DOMAIN_CHECK_MAX_ADDRESSES; i++) {
			struct sockaddr_storage *ss = &out[count];
			memset(ss, 0, sizeof(*ss));
			if (rr[i].type == SW_DNS_TYPE_A && types[t] == SW_DNS_TYPE_A && rr[i].rdlen == 4) {
				struct sockaddr_in *in = (struct sockaddr_in *)(void *)ss;
				in->sin_family = AF_INET;
				in->sin_port = htons((uint16_t)port);
				memcpy(&in->sin_addr, rr[i].rdata, 4);
				count++;
			} else if (rr[i].type == SW_DNS_TYPE_AAAA && types[t] == SW_DNS_TYPE_AAAA &&
				   rr[i].rdlen == 16) {
				struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)(void *)ss;
				in6->sin6_family = AF_INET6;
				in6->sin6_port = htons((uint16_t)port);
				memcpy(&in6->sin6_addr, rr[i].rdata, 16);
				count++;
			}
		}
	}
	free(ans);
	return count;
}

static bool dns_proof(res_state st, const char *hostname, const char *token, char *why, size_t whylen)
{
	char name[sizeof(CHALLENGE_LABEL) + 256];
	snprintf(name, sizeof(name), CHALLENGE_LABEL "%s", hostname);
	uint8_t *ans = malloc(SW_DNS_ANSWER_MAX);
	if (!ans) {
		snprintf(why, whylen, "could not be asked (out of memory)");
		return false;
	}
	bool ok = false;
	int len = res_nquery(st, name, ns_c_in, ns_t_txt, ans, SW_DNS_ANSWER_MAX);
	if (len <= 0) {
		int h = st->res_h_errno;
		/* A reason cut short at whylen is still a reason. */
		if (snprintf(why, whylen, "%s %s",
			     h == HOST_NOT_FOUND ? "there is no record named" :
			     h == NO_DATA ? "there is no TXT record at" :
			     h == TRY_AGAIN ? "the DNS server did not answer (timed out or failed) for" :
					      "the DNS lookup failed for",
			     name) >= (int)whylen)
			why[whylen - 1] = '\0';
		goto out;
	}
	struct sw_dns_rr rr[SW_DNS_MAX_RECORDS];
	size_t nrr = 0;
	sw_dns_answers(ans, SW_MIN((size_t)len, (size_t)SW_DNS_ANSWER_MAX), rr, SW_ARRAY_SIZE(rr), &nrr);
	unsigned txt = 0;
	for (size_t i = 0; i < nrr && !ok; i++) {
		txt += rr[i].type == SW_DNS_TYPE_TXT;
		ok = sw_dns_txt_equals(&rr[i], token);
	}
	if (!ok)
		snprintf(why, whylen, txt ? "the TXT record at %s is not the token" :
				      "there is no TXT record at %s", name);
out:
	free(ans);
	return ok;
}

static bool http_proof(res_state st, const struct sw_domain_check_settings *s, const char *hostname,
		       const char *token, char *why, size_t whylen)
{
	struct sockaddr_storage addrs[SW_DOMAIN_CHECK_MAX_ADDRESSES];
	size_t n = resolve(st, hostname, s->http_port, addrs);
	if (n == 0) {
		snprintf(why, whylen, "%s has no A or AAAA record", hostname);
		return false;
	}
	uint64_t deadline = sw_now_ms() + SW_DOMAIN_CHECK_HTTP_TIMEOUT_MS;
	for (size_t i = 0; i < n; i++) {
		char text[INET6_ADDRSTRLEN] = "?", what[160];
		const void *bytes = addrs[i].ss_family == AF_INET
					    ? (const void *)&((struct sockaddr_in *)(void *)&addrs[i])->sin_addr
					    : (const void *)&((struct sockaddr_in6 *)(void *)&addrs[i])->sin6_addr;
		inet_ntop(addrs[i].ss_family, bytes, text, sizeof(text));
		/* The classification notifications use for their SSRF rule. */
		const char *refusal = sw_net_address_refusal((const struct sockaddr *)&addrs[i]);
		if (!s->allow_private && refusal) {
			snprintf(why, whylen, "%s resolves to %s, which is not a public address (%s) and is "
					      "not asked", hostname, text, refusal);
			continue;
		}
		socklen_t alen = addrs[i].ss_family == AF_INET ? sizeof(struct sockaddr_in)
							       : sizeof(struct sockaddr_in6);
		if (http_try(&addrs[i], alen, hostname, s->http_port, token, deadline, what, sizeof(what)))
			return true;
		snprintf(why, whylen, "%s port %u %s", text, s->http_port, what);
	}
	return false;
}

enum sw_domain_proof sw_domain_check(const struct sw_domain_check_settings *s, const char *hostname,
				     const char *token, char reason[SW_DOMAIN_CHECK_REASON_MAX])
{
	struct __res_state st;
	char dns_why[200], http_why[200];
	enum sw_domain_proof proof = SW_DOMAIN_PROOF_NONE;
	memset(&st, 0, sizeof(st));
	if (res_ninit(&st) != 0) {
		snprintf(reason, SW_DOMAIN_CHECK_REASON_MAX, "The resolver could not be initialised.");
		return SW_DOMAIN_PROOF_NONE;
	}
	st.retrans = SW_DOMAIN_CHECK_DNS_TIMEOUT_S;
	st.retry = 1;
	st.options &= ~(unsigned long)(RES_DNSRCH | RES_DEFNAMES); /* names are absolute */
	if (s->has_nameserver) {
		st.nscount = 1;
		st.nsaddr_list[0] = s->nameserver;
	}
	if (dns_proof(&st, hostname, token, dns_why, sizeof(dns_why)))
		proof = SW_DOMAIN_PROOF_DNS;
	else if (http_proof(&st, s, hostname, token, http_why, sizeof(http_why)))
		proof = SW_DOMAIN_PROOF_HTTP;
	else
		snprintf(reason, SW_DOMAIN_CHECK_REASON_MAX, "Neither proof was found. DNS: %s. HTTP: %s.",
			 dns_why, http_why);
	res_nclose(&st);
	return proof;
}
