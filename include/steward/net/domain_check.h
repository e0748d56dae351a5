/* Proof that whoever adds a domain controls its hostname.
 *
 * A domain gets a verification token when it is added (64 hex digits). The
 * proof is either of:
 *   DNS   a TXT record "_steward-challenge.<hostname>" whose value (its
 *         character-strings joined) is the token;
 *   HTTP  "GET http://<hostname>/.well-known/steward-challenge/<token>"
 *         answering 200 with the token as its body (surrounding white
 *         space ignored; no redirect is followed).
 * DNS is asked first; HTTP goes to the hostname's A and AAAA addresses
 * (at most SW_DOMAIN_CHECK_MAX_ADDRESSES, asked of the same resolver).
 *
 * sw_domain_check() blocks (a resolver, sockets): worker threads only. Its
 * time is bounded: each DNS query SW_DOMAIN_CHECK_DNS_TIMEOUT_S with one
 * try, the HTTP part SW_DOMAIN_CHECK_HTTP_TIMEOUT_MS in all, and reads at
 * most SW_DOMAIN_CHECK_HTTP_MAX_RESPONSE bytes of an answer.
 *
 * Settings (environment, read by sw_domain_check_settings_load()):
 *   DOMAIN_VERIFY_NAMESERVER  "a.b.c.d[:port]": the one DNS server asked
 *                             (tests run their own); unset: the system
 *                             resolver (/etc/resolv.conf).
 *   DOMAIN_VERIFY_HTTP_PORT   the port of the HTTP check (default 80;
 *                             tests listen elsewhere).
 *
 * The parsers below read what a remote server sent and are fuzzed
 * (fuzz/fuzz_domain_check.c). */
#ifndef STEWARD_DOMAIN_CHECK_H
#define STEWARD_DOMAIN_CHECK_H

#include <netinet/in.h>
#include <sys/socket.h>
#include "steward/base/base.h"

#define SW_DOMAIN_CHECK_DNS_TIMEOUT_S 2
#define SW_DOMAIN_CHECK_HTTP_TIMEOUT_MS 5000
#define SW_DOMAIN_CHECK_HTTP_MAX_RESPONSE 8192
#define SW_DOMAIN_CHECK_MAX_ADDRESSES 4
#define SW_DOMAIN_CHECK_REASON_MAX 512
/* Bytes of a DNS answer read (a larger one is cut: its records past the
 * cut are not read). */
#define SW_DNS_ANSWER_MAX 8192
/* Resource records of one answer looked at. */
#define SW_DNS_MAX_RECORDS 64

struct sw_domain_check_settings {
	bool has_nameserver;
	struct sockaddr_in nameserver;
	unsigned http_port;
	/* HTTP to loopback, private, link-local and other non-public
	 * addresses (sw_net_address_refusal()): refused in production (a
	 * hostname pointed at an internal address must not make the control
	 * plane call it). */
	bool allow_private;
};

/* Reads DOMAIN_VERIFY_NAMESERVER and DOMAIN_VERIFY_HTTP_PORT into *ret
 * (allow_private false). 0, or -EINVAL with a message naming the variable
 * in err. */
int sw_domain_check_settings_load(struct sw_domain_check_settings *ret, char *err, size_t errlen);

enum sw_domain_proof { SW_DOMAIN_PROOF_NONE, SW_DOMAIN_PROOF_DNS, SW_DOMAIN_PROOF_HTTP };

/* Looks for either proof of token for hostname (a valid hostname, see
 * sw_valid_hostname(); token [0-9a-f]{64}). On NONE, reason says what was
 * found instead, for the client: one sentence per method. Blocking. */
enum sw_domain_proof sw_domain_check(const struct sw_domain_check_settings *s, const char *hostname,
				     const char *token, char reason[SW_DOMAIN_CHECK_REASON_MAX]);

/* ---- parsers (pure) ---- */

/* A resource record of a DNS answer section: rdata points into the
 * message. */
struct sw_dns_rr {
	uint16_t type;
	uint16_t rdlen;
	const uint8_t *rdata;
};
#define SW_DNS_TYPE_A 1
#define SW_DNS_TYPE_TXT 16
#define SW_DNS_TYPE_AAAA 28

/* The records of the answer section of a DNS response msg (len bytes),
 * at most cap of them into out, *ret_n set. Names (compressed or not) are
 * skipped, never followed, so a loop of pointers costs nothing. 0, or
 * -EBADMSG when the message is cut short or malformed before the records
 * read (the records read so far are still given). */
int sw_dns_answers(const uint8_t *msg, size_t len, struct sw_dns_rr *out, size_t cap, size_t *ret_n);

/* Whether the rdata of a TXT record, its character-strings joined, is
 * exactly want. false for malformed rdata. */
bool sw_dns_txt_equals(const struct sw_dns_rr *rr, const char *want);

/* Whether resp (n bytes: an HTTP/1.x response as read, possibly cut at
 * SW_DOMAIN_CHECK_HTTP_MAX_RESPONSE) answers 200 with token as its body,
 * de-chunked when it is chunked, white space around it ignored. On false
 * writes why into why (whylen bytes), e.g. "answered HTTP 404". */
bool sw_http_challenge_answer_ok(const char *resp, size_t n, const char *token, char *why,
				 size_t whylen);

#endif
