/* libFuzzer harness for what a customer's servers send domain
 * verification (domain_check.h): DNS answers and the HTTP answer to the
 * challenge.
 *
 * The first input byte picks the parser: even, the rest is a DNS response
 * (sw_dns_answers(), then sw_dns_txt_equals() on every record); odd, an
 * HTTP response (sw_http_challenge_answer_ok()). Checks, beyond "no
 * crash, no UB": every record lies inside the message; records are given
 * only up to the cap; a TXT comparison agrees with an oracle that joins
 * the character-strings itself; an accepted HTTP answer is an HTTP/1.x 200
 * holding the token, and a refused one always says why. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "steward/net/domain_check.h"
#include "fuzz.h"

/* Aborts (a finding) when x does not hold. */

#define TOKEN "5f2b7c0e8d9a41b3a6c4e2f1d0b9a8c7e6f5d4c3b2a1908f7e6d5c4b3a291807"

/* The oracle: the TXT rdata's strings joined, compared with want. */
static bool joined_equals(const struct sw_dns_rr *rr, const char *want)
{
	char buf[65536];
	size_t n = 0;
	for (size_t o = 0; o < rr->rdlen;) {
		size_t len = rr->rdata[o++];
		if (len > rr->rdlen - o)
			return false;
		memcpy(buf + n, rr->rdata + o, len);
		n += len;
		o += len;
	}
	return rr->type == SW_DNS_TYPE_TXT && n == strlen(want) && memcmp(buf, want, n) == 0;
}

static void dns(const uint8_t *msg, size_t len)
{
	struct sw_dns_rr rr[8];
	size_t n = 99;
	int r = sw_dns_answers(msg, len, rr, 8, &n);
	ASSERT(r == 0 || r == -EBADMSG);
	ASSERT(n <= 8);
	for (size_t i = 0; i < n; i++) {
		ASSERT(rr[i].rdata >= msg && rr[i].rdata + rr[i].rdlen <= msg + len);
		ASSERT(sw_dns_txt_equals(&rr[i], TOKEN) == joined_equals(&rr[i], TOKEN));
		ASSERT(sw_dns_txt_equals(&rr[i], "") == joined_equals(&rr[i], ""));
	}
}

static void http(const uint8_t *data, size_t size)
{
	char why[200] = "";
	/* A copy of its exact size: reads past it are caught. */
	char *resp = malloc(size ? size : 1);
	ASSERT(resp);
	memcpy(resp, data, size);
	bool ok = sw_http_challenge_answer_ok(resp, size, TOKEN, why, sizeof(why));
	if (ok) {
		ASSERT(size >= 12 && memcmp(resp, "HTTP/1.", 7) == 0 && memcmp(resp + 8, " 200", 4) == 0);
		ASSERT(memmem(resp, size, "5f2b7c0e", 8) != NULL);
	} else {
		ASSERT(why[0] != '\0');
	}
	free(resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	if (data[0] % 2 == 0)
		dns(data + 1, size - 1);
	else
		http(data + 1, size - 1);
	return 0;
}
