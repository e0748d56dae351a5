/* Inbound webhook verification (steward/deploy/webhook.h) against the vectors the
 * providers publish:
 * - GitHub, "Validating webhook deliveries": secret "It's a Secret to
 *   Everybody", payload "Hello, World!", X-Hub-Signature-256
 *   sha256=757107ea...3e17;
 * - Atlassian (Bitbucket Cloud's "Manage webhooks" and Jira Cloud's webhook
 *   pages, X-Hub-Signature): the same secret, payload "Hello World!",
 *   sha256=a4771c39...63c9;
 * - GitLab publishes no example for X-Gitlab-Token (a plain comparison);
 *   its signing token follows the Standard Webhooks specification, whose
 *   test vector (whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, msg_p5jX...,
 *   1614265330, {"test": 2432232314} -> v1,g0hM9SsE...) is used;
 * - the generic scheme is Steward's own: a vector computed independently
 *   with `openssl dgst -sha256 -hmac`;
 * - HMAC-SHA256 itself: RFC 4231 test cases 1 and 2 through the GitHub form.
 * And: an empty secret never verifies; malformed and repeated headers are
 * refused with the right status; timestamps outside 300 s are refused;
 * every MAC comparison goes through sw_ct_equal over the whole MAC; the
 * payloads of each provider are read into the right decision. */
#include <errno.h>
#include <jansson.h>
#include "steward/deploy/webhook.h"
#include "test_help.h"

/* ---- sw_ct_equal, observed: the link wraps it for this executable
 * (-Wl,--wrap=sw_ct_equal, tests/CMakeLists.txt), so the tests can see that
 * comparisons of secrets go through it, and over how many bytes; the real
 * one still compares. */
static unsigned memcmp_calls;
static size_t memcmp_lens[64];

bool __real_sw_ct_equal(const void *a, size_t alen, const void *b, size_t blen);
bool __wrap_sw_ct_equal(const void *a, size_t alen, const void *b, size_t blen);
bool __wrap_sw_ct_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	if (memcmp_calls < SW_ARRAY_SIZE(memcmp_lens))
		memcmp_lens[memcmp_calls] = alen;
	memcmp_calls++;
	return __real_sw_ct_equal(a, alen, b, blen);
}

static void memcmp_reset(void)
{
	memcmp_calls = 0;
	memset(memcmp_lens, 0, sizeof(memcmp_lens));
}

static bool memcmp_saw(size_t len)
{
	for (unsigned i = 0; i < memcmp_calls && i < SW_ARRAY_SIZE(memcmp_lens); i++)
		if (memcmp_lens[i] == len)
			return true;
	return false;
}

/* ---- helpers ---- */

#define H(n, v) { SW_STR(n), SW_STR(v) }
#define N(a) (unsigned)SW_ARRAY_SIZE(a)

static const char *const GITHUB_SECRET = "It's a Secret to Everybody";
#define GITHUB_SIG "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
#define ATLASSIAN_SIG "sha256=a4771c39fbe90f317c7824e83ddef3caae9cb3d976c214ace1f2937e133263c9"
#define UUID1 "72d3162e-cc78-11e3-81ab-4c9367dc0958"

static int parse(enum sw_webhook_provider p, const struct sw_http_header *h, unsigned n,
		 struct sw_webhook_headers *w)
{
	const char *why = NULL;
	int r = sw_webhook_headers_parse(p, h, n, w, &why);
	if (r < 0 && (!why || !*why))
		return -999; /* a refusal must say why */
	return r;
}

static bool verify(const struct sw_webhook_headers *w, const char *secret, const char *body, int64_t now)
{
	return sw_webhook_verify(w, sw_str_cstr(secret), sw_str_cstr(body), now);
}

/* ---- published vectors ---- */

TEST(github_published_vector_verifies)
{
	struct sw_http_header h[] = { H("X-Hub-Signature-256", GITHUB_SIG), H("X-GitHub-Event", "push"),
				      H("X-GitHub-Delivery", UUID1) };
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GITHUB, h, N(h), &w) == 0);
	CHECK(w.has_mac);
	CHECK(sw_str_eq(w.event, SW_STR("push")));
	CHECK(sw_str_eq(w.delivery, SW_STR(UUID1)));
	memcmp_reset();
	CHECK(verify(&w, GITHUB_SECRET, "Hello, World!", 0));
	CHECK(memcmp_saw(32));
	CHECK(!verify(&w, GITHUB_SECRET, "Hello, World?", 0));
	CHECK(!verify(&w, "It's a Secret to Everybody!", "Hello, World!", 0));
	CHECK(!verify(&w, "it's a secret to everybody", "Hello, World!", 0));
}

TEST(github_hex_digits_may_be_upper_case)
{
	struct sw_http_header h[] = {
		H("x-hub-signature-256", "sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17"),
		H("x-github-event", "push"), H("x-github-delivery", UUID1)
	};
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GITHUB, h, N(h), &w) == 0);
	CHECK(verify(&w, GITHUB_SECRET, "Hello, World!", 0));
}

TEST(atlassian_published_vector_verifies_for_bitbucket)
{
	struct sw_http_header h[] = { H("X-Hub-Signature", ATLASSIAN_SIG), H("X-Event-Key", "repo:push"),
				      H("X-Request-UUID", UUID1) };
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_BITBUCKET, h, N(h), &w) == 0);
	CHECK(sw_str_eq(w.event, SW_STR("repo:push")));
	memcmp_reset();
	CHECK(verify(&w, GITHUB_SECRET, "Hello World!", 0));
	CHECK(memcmp_saw(32));
	CHECK(!verify(&w, GITHUB_SECRET, "Hello, World!", 0));
}

TEST(bitbucket_reads_x_hub_signature_not_github_header)
{
	/* GitHub's SHA-256 header name means nothing to the Bitbucket route. */
	struct sw_http_header h[] = { H("X-Hub-Signature-256", ATLASSIAN_SIG), H("X-Event-Key", "repo:push"),
				      H("X-Request-UUID", UUID1) };
	struct sw_webhook_headers w;
	CHECK_INT_EQ(parse(SW_WEBHOOK_BITBUCKET, h, N(h), &w), -EACCES);
}

TEST(rfc4231_hmac_vectors_through_the_github_form)
{
	struct sw_webhook_headers w;
	struct sw_http_header h2[] = {
		H("X-Hub-Signature-256", "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
		H("X-GitHub-Event", "push"), H("X-GitHub-Delivery", "d")
	};
	REQUIRE(parse(SW_WEBHOOK_GITHUB, h2, N(h2), &w) == 0);
	CHECK(verify(&w, "Jefe", "what do ya want for nothing?", 0));
	struct sw_http_header h1[] = {
		H("X-Hub-Signature-256", "sha256=b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
		H("X-GitHub-Event", "push"), H("X-GitHub-Delivery", "d")
	};
	REQUIRE(parse(SW_WEBHOOK_GITHUB, h1, N(h1), &w) == 0);
	static const char key[20] = { 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b,
				      0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b, 0x0b };
	CHECK(sw_webhook_verify(&w, sw_str_from(key, sizeof(key)), SW_STR("Hi There"), 0));
}

#define SW_SECRET "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" /* whsec_ + this, base64url decoded: the key */
#define SW_ID "msg_p5jXN8AQM9LWM0D4loKWxJek"
#define SW_TS 1614265330
#define SW_BODY "{\"test\": 2432232314}"
#define SW_SIG "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

TEST(gitlab_signed_form_verifies_the_standard_webhooks_vector)
{
	struct sw_http_header h[] = { H("webhook-id", SW_ID), H("webhook-timestamp", "1614265330"),
				      H("webhook-signature", SW_SIG), H("X-Gitlab-Event", "Push Hook"),
				      H("Idempotency-Key", UUID1) };
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GITLAB, h, N(h), &w) == 0);
	CHECK_INT_EQ(w.nsignatures, 1);
	CHECK(!w.has_token);
	memcmp_reset();
	CHECK(verify(&w, SW_SECRET, SW_BODY, SW_TS));
	CHECK(memcmp_saw(32));
	CHECK(verify(&w, SW_SECRET, SW_BODY, SW_TS + 300));
	CHECK(!verify(&w, SW_SECRET, SW_BODY, SW_TS + 301));
	CHECK(!verify(&w, SW_SECRET, "{\"test\": 2432232315}", SW_TS));
	CHECK(!verify(&w, "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx", SW_BODY, SW_TS));
}

TEST(gitlab_signed_form_takes_any_matching_entry_and_compares_every_one)
{
	struct sw_http_header h[] = {
		H("webhook-id", SW_ID), H("webhook-timestamp", "1614265330"),
		H("webhook-signature",
		  "v2,abc v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= " SW_SIG " v1,BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBA="),
		H("X-Gitlab-Event", "Push Hook"), H("X-Gitlab-Event-UUID", UUID1)
	};
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GITLAB, h, N(h), &w) == 0);
	CHECK_INT_EQ(w.nsignatures, 3); /* v2 is skipped */
	CHECK(sw_str_eq(w.delivery, SW_STR(UUID1)));
	memcmp_reset();
	CHECK(verify(&w, SW_SECRET, SW_BODY, SW_TS));
	CHECK_INT_EQ(memcmp_calls, 3); /* no early exit at the match */
}

TEST(gitlab_token_is_compared_in_constant_time)
{
	struct sw_http_header h[] = { H("X-Gitlab-Token", "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-8"),
				      H("X-Gitlab-Event", "Push Hook"), H("X-Gitlab-Event-UUID", UUID1) };
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GITLAB, h, N(h), &w) == 0);
	CHECK(w.has_token && w.nsignatures == 0);
	memcmp_reset();
	CHECK(verify(&w, "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-8", "{}", 0));
	CHECK(memcmp_saw(43));
	CHECK(!verify(&w, "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-9", "{}", 0));
	CHECK(!verify(&w, "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-", "{}", 0));
	CHECK(!verify(&w, "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-88", "{}", 0));
}

TEST(gitlab_every_credential_sent_must_verify)
{
	struct sw_http_header h[] = { H("X-Gitlab-Token", "wrong-token"), H("webhook-id", SW_ID),
				      H("webhook-timestamp", "1614265330"), H("webhook-signature", SW_SIG),
				      H("X-Gitlab-Event", "Push Hook"), H("Idempotency-Key", UUID1) };
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GITLAB, h, N(h), &w) == 0);
	CHECK(!verify(&w, SW_SECRET, SW_BODY, SW_TS)); /* the signature holds, the token does not */
	struct sw_http_header h2[] = { H("X-Gitlab-Token", SW_SECRET), H("webhook-id", SW_ID),
				       H("webhook-timestamp", "1614265330"), H("webhook-signature", SW_SIG),
				       H("X-Gitlab-Event", "Push Hook"), H("Idempotency-Key", UUID1) };
	REQUIRE(parse(SW_WEBHOOK_GITLAB, h2, N(h2), &w) == 0);
	CHECK(verify(&w, SW_SECRET, SW_BODY, SW_TS));
	CHECK(!verify(&w, SW_SECRET, SW_BODY, SW_TS - 301));
}

#define GENERIC_BODY "{\"repository\":\"https://git.example.com/acme/shop.git\",\"ref\":\"refs/heads/main\"}"
#define GENERIC_SECRET "InfZ18L3wLqRK5mlMu6a3ndlHvZEFEkDa9x6obRLO-8"
/* openssl dgst -sha256 -hmac GENERIC_SECRET over "1700000000." GENERIC_BODY */
#define GENERIC_SIG "v1=3369798c3d06903784d2fb2cfce6e115e8b964fec1da3ec0442c13115d387357"

TEST(generic_vector_verifies_within_300_seconds_only)
{
	struct sw_http_header h[] = { H("Steward-Signature", GENERIC_SIG), H("Steward-Timestamp", "1700000000"),
				      H("Steward-Delivery", "delivery-1") };
	struct sw_webhook_headers w;
	REQUIRE(parse(SW_WEBHOOK_GENERIC, h, N(h), &w) == 0);
	CHECK_INT_EQ(w.timestamp, 1700000000);
	memcmp_reset();
	CHECK(verify(&w, GENERIC_SECRET, GENERIC_BODY, 1700000000));
	CHECK(memcmp_saw(67)); /* "v1=" and 64 hex digits, compared whole */
	CHECK(verify(&w, GENERIC_SECRET, GENERIC_BODY, 1700000000 - 300));
	CHECK(verify(&w, GENERIC_SECRET, GENERIC_BODY, 1700000000 + 300));
	CHECK(!verify(&w, GENERIC_SECRET, GENERIC_BODY, 1700000000 + 301));
	CHECK(!verify(&w, GENERIC_SECRET, GENERIC_BODY, 1700000000 - 301));
	CHECK(!verify(&w, GENERIC_SECRET, GENERIC_BODY " ", 1700000000));
	/* The timestamp is signed: another one does not verify. */
	struct sw_http_header h2[] = { H("Steward-Signature", GENERIC_SIG), H("Steward-Timestamp", "1700000001"),
				       H("Steward-Delivery", "delivery-1") };
	REQUIRE(parse(SW_WEBHOOK_GENERIC, h2, N(h2), &w) == 0);
	CHECK(!verify(&w, GENERIC_SECRET, GENERIC_BODY, 1700000000));
}

TEST(fresh_is_300_seconds_either_way)
{
	CHECK(sw_webhook_fresh(1000, 1300));
	CHECK(sw_webhook_fresh(1300, 1000));
	CHECK(!sw_webhook_fresh(1000, 1301));
	CHECK(!sw_webhook_fresh(1301, 1000));
}

/* ---- an empty secret never verifies ---- */

TEST(empty_secret_never_verifies)
{
	/* Signatures made WITH the empty key, so only the rule refuses them. */
	struct sw_webhook_headers w;
	struct sw_http_header gh[] = {
		H("X-Hub-Signature-256", "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),
		H("X-GitHub-Event", "push"), H("X-GitHub-Delivery", "d")
	}; /* HMAC-SHA256("", "") */
	REQUIRE(parse(SW_WEBHOOK_GITHUB, gh, N(gh), &w) == 0);
	CHECK(!verify(&w, "", "", 0));
	struct sw_http_header bb[] = {
		H("X-Hub-Signature", "sha256=b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"),
		H("X-Event-Key", "repo:push"), H("X-Request-UUID", "d")
	};
	REQUIRE(parse(SW_WEBHOOK_BITBUCKET, bb, N(bb), &w) == 0);
	CHECK(!verify(&w, "", "", 0));
	CHECK(!sw_webhook_verify(&w, SW_STR_NULL, SW_STR(""), 0));
	struct sw_http_header gl[] = { H("X-Gitlab-Token", "x"), H("X-Gitlab-Event", "Push Hook"),
				       H("X-Gitlab-Event-UUID", "d") };
	REQUIRE(parse(SW_WEBHOOK_GITLAB, gl, N(gl), &w) == 0);
	w.token = SW_STR(""); /* even if a token could be empty */
	CHECK(!verify(&w, "", "{}", 0));
	struct sw_http_header ge[] = {
		H("Steward-Signature", "v1=0000000000000000000000000000000000000000000000000000000000000000"),
		H("Steward-Timestamp", "1"), H("Steward-Delivery", "d")
	};
	REQUIRE(parse(SW_WEBHOOK_GENERIC, ge, N(ge), &w) == 0);
	CHECK(!verify(&w, "", "", 1));
}

TEST(empty_token_header_is_refused)
{
	struct sw_http_header h[] = { H("X-Gitlab-Token", ""), H("X-Gitlab-Event", "Push Hook"),
				      H("X-Gitlab-Event-UUID", "d") };
	struct sw_webhook_headers w;
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITLAB, h, N(h), &w), -EACCES);
}

/* ---- malformed headers ---- */

static int github_with_signature(const char *sig)
{
	struct sw_http_header h[] = { { SW_STR("X-Hub-Signature-256"), sw_str_cstr(sig) },
				      H("X-GitHub-Event", "push"), H("X-GitHub-Delivery", UUID1) };
	struct sw_webhook_headers w;
	return parse(SW_WEBHOOK_GITHUB, h, N(h), &w);
}

TEST(malformed_hub_signatures_are_401)
{
	CHECK_INT_EQ(github_with_signature(GITHUB_SIG), 0);
	CHECK_INT_EQ(github_with_signature(""), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha256="), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1"), -EACCES);
	CHECK_INT_EQ(github_with_signature(GITHUB_SIG "7"), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e1g"), -EACCES);
	CHECK_INT_EQ(github_with_signature("SHA256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha1=757107ea0eb2509fc211221cce984b8a37570b6d"), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha256 =757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha256=757107ea0eb2509fc211221cce984b8a 7570b6d7586c22c46f4379c8b043e17"), -EACCES);
	CHECK_INT_EQ(github_with_signature("sha256=" GITHUB_SIG), -EACCES);
}

TEST(missing_or_repeated_headers_are_refused)
{
	struct sw_webhook_headers w;
	struct sw_http_header none[] = { H("X-GitHub-Event", "push"), H("X-GitHub-Delivery", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITHUB, none, N(none), &w), -EACCES);
	struct sw_http_header twice[] = { H("X-Hub-Signature-256", GITHUB_SIG), H("x-hub-signature-256", GITHUB_SIG),
					  H("X-GitHub-Event", "push"), H("X-GitHub-Delivery", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITHUB, twice, N(twice), &w), -EACCES);
	struct sw_http_header no_event[] = { H("X-Hub-Signature-256", GITHUB_SIG), H("X-GitHub-Delivery", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITHUB, no_event, N(no_event), &w), -EBADMSG);
	struct sw_http_header no_delivery[] = { H("X-Hub-Signature-256", GITHUB_SIG), H("X-GitHub-Event", "push") };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITHUB, no_delivery, N(no_delivery), &w), -EBADMSG);
	struct sw_http_header two_deliveries[] = { H("X-Hub-Signature-256", GITHUB_SIG), H("X-GitHub-Event", "push"),
						   H("X-GitHub-Delivery", "a"), H("X-GitHub-Delivery", "b") };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITHUB, two_deliveries, N(two_deliveries), &w), -EBADMSG);
	struct sw_http_header bad_event[] = { H("X-Hub-Signature-256", GITHUB_SIG), H("X-GitHub-Event", "push\x01"),
					      H("X-GitHub-Delivery", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITHUB, bad_event, N(bad_event), &w), -EBADMSG);
}

static int generic_with(const char *sig, const char *ts, const char *delivery)
{
	struct sw_http_header h[3];
	unsigned n = 0;
	if (sig)
		h[n++] = (struct sw_http_header){ SW_STR("Steward-Signature"), sw_str_cstr(sig) };
	if (ts)
		h[n++] = (struct sw_http_header){ SW_STR("Steward-Timestamp"), sw_str_cstr(ts) };
	if (delivery)
		h[n++] = (struct sw_http_header){ SW_STR("Steward-Delivery"), sw_str_cstr(delivery) };
	struct sw_webhook_headers w;
	return parse(SW_WEBHOOK_GENERIC, h, n, &w);
}

TEST(malformed_generic_headers_are_refused)
{
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", "d-1"), 0);
	CHECK_INT_EQ(generic_with(NULL, "1700000000", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with("v1=3369798C3D06903784D2FB2CFCE6E115E8B964FEC1DA3EC0442C13115D387357", "1700000000", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with("v2=3369798c3d06903784d2fb2cfce6e115e8b964fec1da3ec0442c13115d387357", "1700000000", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with("t=1700000000,v1=3369798c3d06903784d2fb2cfce6e115e8b964fec1da3ec0442c13115d387357", "1700000000", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, NULL, "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "-1", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "17e8", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000.5", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1234567890123", "d-1"), -EACCES);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", NULL), -EBADMSG);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", ""), -EBADMSG);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", "a b"), -EBADMSG);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", "a/b"), -EBADMSG);
	char longest[SW_WEBHOOK_DELIVERY_MAX_LEN + 2];
	memset(longest, 'a', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", longest), -EBADMSG);
	longest[SW_WEBHOOK_DELIVERY_MAX_LEN] = '\0';
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", longest), 0);
	CHECK_INT_EQ(generic_with(GENERIC_SIG, "1700000000", "{" UUID1 "}"), 0);
}

static int gitlab_with_signature(const char *sig, bool with_ts, bool with_id)
{
	struct sw_http_header h[5];
	unsigned n = 0;
	h[n++] = (struct sw_http_header){ SW_STR("webhook-signature"), sw_str_cstr(sig) };
	if (with_ts)
		h[n++] = (struct sw_http_header)H("webhook-timestamp", "1614265330");
	if (with_id)
		h[n++] = (struct sw_http_header)H("webhook-id", SW_ID);
	h[n++] = (struct sw_http_header)H("X-Gitlab-Event", "Push Hook");
	h[n++] = (struct sw_http_header)H("Idempotency-Key", UUID1);
	struct sw_webhook_headers w;
	return parse(SW_WEBHOOK_GITLAB, h, n, &w);
}

TEST(malformed_gitlab_signatures_are_401)
{
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG, true, true), 0);
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG, false, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG, true, false), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature("", true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature("v2,abc", true, true), -EACCES); /* no v1 entry */
	CHECK_INT_EQ(gitlab_with_signature("v1,abc", true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature("v1,g0hM9SsE-OTPJTGt_tmIKtSyZlE3uFJELVlNIOLJ1OE=", true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE", true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG "  " SW_SIG, true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG " ", true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature(",abc " SW_SIG, true, true), -EACCES);
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG " " SW_SIG " " SW_SIG " " SW_SIG " " SW_SIG " " SW_SIG
					   " " SW_SIG " " SW_SIG, true, true), 0);
	CHECK_INT_EQ(gitlab_with_signature(SW_SIG " " SW_SIG " " SW_SIG " " SW_SIG " " SW_SIG " " SW_SIG
					   " " SW_SIG " " SW_SIG " " SW_SIG, true, true), -EACCES);
}

TEST(gitlab_needs_a_credential_an_event_and_a_delivery)
{
	struct sw_webhook_headers w;
	struct sw_http_header none[] = { H("X-Gitlab-Event", "Push Hook"), H("X-Gitlab-Event-UUID", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITLAB, none, N(none), &w), -EACCES);
	struct sw_http_header no_event[] = { H("X-Gitlab-Token", "t"), H("X-Gitlab-Event-UUID", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITLAB, no_event, N(no_event), &w), -EBADMSG);
	struct sw_http_header no_delivery[] = { H("X-Gitlab-Token", "t"), H("X-Gitlab-Event", "Push Hook") };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITLAB, no_delivery, N(no_delivery), &w), -EBADMSG);
	struct sw_http_header both[] = { H("X-Gitlab-Token", "t"), H("X-Gitlab-Event", "Push Hook"),
					 H("X-Gitlab-Event-UUID", "event"), H("Idempotency-Key", "retry-key") };
	REQUIRE(parse(SW_WEBHOOK_GITLAB, both, N(both), &w) == 0);
	CHECK(sw_str_eq(w.delivery, SW_STR("retry-key"))); /* the same on retries */
	struct sw_http_header two_tokens[] = { H("X-Gitlab-Token", "t"), H("X-Gitlab-Token", "t"),
					       H("X-Gitlab-Event", "Push Hook"), H("X-Gitlab-Event-UUID", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITLAB, two_tokens, N(two_tokens), &w), -EACCES);
	struct sw_http_header spaced[] = { H("X-Gitlab-Token", "a b"), H("X-Gitlab-Event", "Push Hook"),
					   H("X-Gitlab-Event-UUID", UUID1) };
	CHECK_INT_EQ(parse(SW_WEBHOOK_GITLAB, spaced, N(spaced), &w), -EACCES);
}

TEST(provider_names_are_exact)
{
	enum sw_webhook_provider p;
	CHECK(sw_webhook_provider_parse(SW_STR("github"), &p) && p == SW_WEBHOOK_GITHUB);
	CHECK(sw_webhook_provider_parse(SW_STR("gitlab"), &p) && p == SW_WEBHOOK_GITLAB);
	CHECK(sw_webhook_provider_parse(SW_STR("bitbucket"), &p) && p == SW_WEBHOOK_BITBUCKET);
	CHECK(sw_webhook_provider_parse(SW_STR("generic"), &p) && p == SW_WEBHOOK_GENERIC);
	CHECK(!sw_webhook_provider_parse(SW_STR("GitHub"), &p));
	CHECK(!sw_webhook_provider_parse(SW_STR("gitea"), &p));
	CHECK(!sw_webhook_provider_parse(SW_STR(""), &p));
	CHECK_STR_EQ(sw_webhook_source_provider(SW_WEBHOOK_BITBUCKET), "BITBUCKET");
	CHECK_STR_EQ(sw_webhook_provider_name(SW_WEBHOOK_GENERIC), "generic");
}

/* ---- payloads and decisions ---- */

#define SHA1 "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c"
#define SHA2 "b7e8f5d3a1c2e4f6a8b0c2d4e6f8a0b2c4d6e8f0"
#define ZERO "0000000000000000000000000000000000000000"

/* The payload's first and last repository URLs, copied before it goes. */
static char url_first[256], url_last[256];

static enum sw_webhook_outcome decide_json(enum sw_webhook_provider p, const char *event, const char *json,
					   const char *branch, char *ref_out, size_t ref_cap,
					   struct sw_webhook_event *ev)
{
	json_error_t je;
	json_t *body = json_loads(json, 0, &je);
	const char *field = NULL, *msg = NULL, *ref = NULL;
	size_t ref_len = 0;
	if (!body || sw_webhook_event_read(p, sw_str_cstr(event), body, ev, &field, &msg) < 0) {
		json_decref(body);
		return (enum sw_webhook_outcome)-1;
	}
	enum sw_webhook_outcome o = sw_webhook_decide(ev, sw_str_cstr(branch), &ref, &ref_len);
	ref_out[0] = '\0';
	if (o == SW_WEBHOOK_DEPLOY && ref_len < ref_cap) {
		memcpy(ref_out, ref, ref_len);
		ref_out[ref_len] = '\0';
	}
	snprintf(url_first, sizeof(url_first), "%s", ev->nurls ? ev->urls[0] : "");
	snprintf(url_last, sizeof(url_last), "%s", ev->nurls ? ev->urls[ev->nurls - 1] : "");
	json_decref(body);
	return o;
}

#define GITHUB_PUSH(ref, after, deleted)                                                                  \
	"{\"ref\":\"" ref "\",\"before\":\"" SHA2 "\",\"after\":\"" after "\",\"deleted\":" deleted ","        \
	"\"repository\":{\"full_name\":\"acme/shop\",\"clone_url\":\"https://github.com/acme/shop.git\","  \
	"\"ssh_url\":\"git@github.com:acme/shop.git\",\"html_url\":\"https://github.com/acme/shop\"}}"

TEST(github_push_to_the_branch_deploys_the_pushed_commit)
{
	struct sw_webhook_event ev;
	char ref[80];
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", GITHUB_PUSH("refs/heads/main", SHA1, "false"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_DEPLOY);
	CHECK_STR_EQ(ref, SHA1);
	CHECK_INT_EQ(ev.nurls, 3);
	CHECK_STR_EQ(url_first, "https://github.com/acme/shop.git");
	CHECK_STR_EQ(url_last, "https://github.com/acme/shop");
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", GITHUB_PUSH("refs/heads/dev", SHA1, "false"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_OTHER_BRANCH);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", GITHUB_PUSH("refs/heads/main", ZERO, "true"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_BRANCH_DELETED);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", GITHUB_PUSH("refs/tags/v1.0", SHA1, "false"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_TAG);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", GITHUB_PUSH("refs/heads/main", "HEAD", "false"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_NO_COMMIT);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "ping", "{\"zen\":\"Keep it logically awesome.\",\"hook_id\":1,"
				 "\"repository\":{\"clone_url\":\"https://github.com/acme/shop.git\"}}",
				 "main", ref, sizeof(ref), &ev), SW_WEBHOOK_PING);
	CHECK_INT_EQ(ev.nurls, 1);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "issues", GITHUB_PUSH("refs/heads/main", SHA1, "false"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_NOT_A_PUSH);
	/* A branch named like a prefix of another is not it. */
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", GITHUB_PUSH("refs/heads/main2", SHA1, "false"), "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_OTHER_BRANCH);
}

TEST(gitlab_push_and_tag_push)
{
	struct sw_webhook_event ev;
	char ref[80];
	const char *push = "{\"object_kind\":\"push\",\"ref\":\"refs/heads/main\",\"before\":\"" SHA2 "\","
			   "\"after\":\"" SHA1 "\",\"checkout_sha\":\"" SHA1 "\",\"project\":{"
			   "\"git_http_url\":\"https://gitlab.example.com/acme/shop.git\","
			   "\"git_ssh_url\":\"git@gitlab.example.com:acme/shop.git\","
			   "\"web_url\":\"https://gitlab.example.com/acme/shop\"}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITLAB, "Push Hook", push, "main", ref, sizeof(ref), &ev), SW_WEBHOOK_DEPLOY);
	CHECK_STR_EQ(ref, SHA1);
	CHECK_INT_EQ(ev.nurls, 3);
	const char *del = "{\"object_kind\":\"push\",\"ref\":\"refs/heads/main\",\"after\":\"" ZERO "\","
			  "\"checkout_sha\":null,\"project\":{\"git_http_url\":\"https://gitlab.example.com/a/b.git\"}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITLAB, "Push Hook", del, "main", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_BRANCH_DELETED);
	const char *tag = "{\"object_kind\":\"tag_push\",\"ref\":\"refs/tags/v1\",\"after\":\"" SHA1 "\","
			  "\"project\":{\"git_http_url\":\"https://gitlab.example.com/a/b.git\"}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITLAB, "Tag Push Hook", tag, "main", ref, sizeof(ref), &ev), SW_WEBHOOK_TAG);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITLAB, "Merge Request Hook", push, "main", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_NOT_A_PUSH);
	/* An older payload names its repository in "repository" only. */
	const char *old = "{\"ref\":\"refs/heads/main\",\"after\":\"" SHA1 "\",\"repository\":{"
			  "\"git_ssh_url\":\"git@gitlab.example.com:a/b.git\"}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITLAB, "Push Hook", old, "main", ref, sizeof(ref), &ev), SW_WEBHOOK_DEPLOY);
	CHECK_STR_EQ(url_first, "git@gitlab.example.com:a/b.git");
}

TEST(bitbucket_push_picks_the_change_of_the_branch)
{
	struct sw_webhook_event ev;
	char ref[80];
	const char *push =
		"{\"push\":{\"changes\":["
		"{\"new\":{\"type\":\"tag\",\"name\":\"v1\",\"target\":{\"hash\":\"" SHA2 "\"}},\"old\":null},"
		"{\"new\":{\"type\":\"branch\",\"name\":\"main\",\"target\":{\"hash\":\"" SHA1 "\"}},"
		"\"old\":{\"type\":\"branch\",\"name\":\"main\",\"target\":{\"hash\":\"" SHA2 "\"}}}]},"
		"\"repository\":{\"full_name\":\"team/shop\",\"links\":{\"html\":{\"href\":"
		"\"https://bitbucket.org/team/shop\"}}}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_BITBUCKET, "repo:push", push, "main", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_DEPLOY);
	CHECK_STR_EQ(ref, SHA1);
	CHECK_INT_EQ(ev.nurls, 2);
	CHECK_STR_EQ(url_first, "https://bitbucket.org/team/shop");
	CHECK_STR_EQ(url_last, "https://bitbucket.org/team/shop"); /* from full_name */
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_BITBUCKET, "repo:push", push, "dev", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_OTHER_BRANCH);
	const char *deleted = "{\"push\":{\"changes\":[{\"new\":null,\"old\":{\"type\":\"branch\",\"name\":"
			      "\"main\",\"target\":{\"hash\":\"" SHA2 "\"}}}]},\"repository\":{\"full_name\":\"t/s\"}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_BITBUCKET, "repo:push", deleted, "main", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_BRANCH_DELETED);
	const char *tags = "{\"push\":{\"changes\":[{\"new\":{\"type\":\"tag\",\"name\":\"v2\",\"target\":{"
			   "\"hash\":\"" SHA1 "\"}}}]},\"repository\":{\"full_name\":\"t/s\"}}";
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_BITBUCKET, "repo:push", tags, "main", ref, sizeof(ref), &ev), SW_WEBHOOK_TAG);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_BITBUCKET, "pullrequest:created", push, "main", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_NOT_A_PUSH);
}

TEST(generic_payload_is_read_strictly)
{
	struct sw_webhook_event ev;
	char ref[80];
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GENERIC, "", "{\"repository\":\"git@git.example.com:a/b.git\","
				 "\"ref\":\"refs/heads/main\",\"after\":\"" SHA1 "\"}", "main", ref, sizeof(ref), &ev),
		     SW_WEBHOOK_DEPLOY);
	CHECK_STR_EQ(ref, SHA1);
	/* Without "after": the branch's head. */
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GENERIC, "", GENERIC_BODY, "main", ref, sizeof(ref), &ev), SW_WEBHOOK_DEPLOY);
	CHECK_STR_EQ(ref, "main");
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GENERIC, "", "{\"repository\":\"x:y\",\"ref\":\"refs/heads/main\","
				 "\"after\":\"" ZERO "\"}", "main", ref, sizeof(ref), &ev), SW_WEBHOOK_BRANCH_DELETED);

	static const struct {
		const char *json, *field;
	} bad[] = {
		{ "{\"ref\":\"refs/heads/main\"}", "repository" },
		{ "{\"repository\":1,\"ref\":\"refs/heads/main\"}", "repository" },
		{ "{\"repository\":\"\",\"ref\":\"refs/heads/main\"}", "repository" },
		{ "{\"repository\":\"x:y\"}", "ref" },
		{ "{\"repository\":\"x:y\",\"ref\":\"main\"}", "ref" },
		{ "{\"repository\":\"x:y\",\"ref\":\"refs/heads/ma in\"}", "ref" },
		{ "{\"repository\":\"x:y\",\"ref\":\"refs/heads/main\",\"after\":\"ABC\"}", "after" },
		{ "{\"repository\":\"x:y\",\"ref\":\"refs/heads/main\",\"after\":\"" SHA1 "0\"}", "after" },
		{ "{\"repository\":\"x:y\",\"ref\":\"refs/heads/main\",\"pusher\":\"me\"}", "pusher" },
	};
	for (size_t i = 0; i < SW_ARRAY_SIZE(bad); i++) {
		json_error_t je;
		json_t *body = json_loads(bad[i].json, 0, &je);
		const char *field = NULL, *msg = NULL;
		REQUIRE(body);
		CHECK_INT_EQ(sw_webhook_event_read(SW_WEBHOOK_GENERIC, SW_STR(""), body, &ev, &field, &msg), -EINVAL);
		CHECK_STR_EQ(field, bad[i].field);
		CHECK(msg && *msg);
		json_decref(body);
	}
}

TEST(a_payload_of_another_shape_names_no_repository_and_deploys_nothing)
{
	struct sw_webhook_event ev;
	char ref[80];
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_GITHUB, "push", "{\"ref\":7,\"after\":[],\"repository\":\"x\"}", "main",
				 ref, sizeof(ref), &ev), SW_WEBHOOK_OTHER_BRANCH);
	CHECK_INT_EQ(ev.nurls, 0);
	CHECK_INT_EQ(ev.nchanges, 0);
	CHECK_INT_EQ(decide_json(SW_WEBHOOK_BITBUCKET, "repo:push", "{\"push\":{\"changes\":{}},\"repository\":[]}",
				 "main", ref, sizeof(ref), &ev), SW_WEBHOOK_OTHER_BRANCH);
	CHECK_INT_EQ(ev.nurls, 0);
}

TEST(outcome_codes_and_reasons)
{
	CHECK_STR_EQ(sw_webhook_outcome_code(SW_WEBHOOK_DEPLOY), "DEPLOYED");
	CHECK_STR_EQ(sw_webhook_outcome_code(SW_WEBHOOK_OTHER_BRANCH), "OTHER_BRANCH");
	CHECK(strlen(sw_webhook_outcome_reason("BRANCH_DELETED")) > 10);
	CHECK_STR_EQ(sw_webhook_outcome_reason("NOPE"), "");
}

TEST_MAIN()
