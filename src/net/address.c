/* Which addresses an outbound request may reach (steward/net/address.h).
 *
 * Only public unicast addresses are targets. The tables follow the IANA
 * special-purpose address registries (RFC 6890 and its updates); anything
 * a host could reach without crossing the internet, or that no public
 * host holds, is refused with the reason named. IPv6 forms that carry an
 * IPv4 address inside are judged by that address, so ::ffff:127.0.0.1 is
 * loopback as 127.0.0.1 is. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include "steward/net/address.h"

struct range4 {
	uint32_t net;
	unsigned bits;
	const char *why;
};

/* The first match wins: more specific ranges come before wider ones. */
static const struct range4 ranges4[] = {
	{ 0x00000000u, 8, "unspecified" },          /* 0.0.0.0/8: "this network" */
	{ 0x0a000000u, 8, "private" },              /* 10/8 */
	{ 0x64400000u, 10, "shared address space" }, /* 100.64/10 (carrier-grade NAT) */
	{ 0x7f000000u, 8, "loopback" },             /* 127/8 */
	{ 0xa9fe0000u, 16, "link-local" },          /* 169.254/16 (cloud metadata) */
	{ 0xac100000u, 12, "private" },             /* 172.16/12 */
	{ 0xc0000000u, 24, "reserved" },            /* 192.0.0/24: IETF protocol assignments */
	{ 0xc0000200u, 24, "documentation" },       /* 192.0.2/24 TEST-NET-1 */
	{ 0xc0586300u, 24, "reserved" },            /* 192.88.99/24: 6to4 relay anycast */
	{ 0xc0a80000u, 16, "private" },             /* 192.168/16 */
	{ 0xc6120000u, 15, "reserved" },            /* 198.18/15: benchmarking */
	{ 0xc6336400u, 24, "documentation" },       /* 198.51.100/24 TEST-NET-2 */
	{ 0xcb007100u, 24, "documentation" },       /* 203.0.113/24 TEST-NET-3 */
	{ 0xe0000000u, 4, "multicast" },            /* 224/4 */
	{ 0xffffffffu, 32, "broadcast" },           /* 255.255.255.255 */
	{ 0xf0000000u, 4, "reserved" },             /* 240/4 */
};

static const char *refusal4(uint32_t a)
{
	for (size_t i = 0; i < SW_ARRAY_SIZE(ranges4); i++) {
		uint32_t mask = ranges4[i].bits ? ~0u << (32 - ranges4[i].bits) : 0;
		if ((a & mask) == ranges4[i].net)
			return ranges4[i].why;
	}
	return NULL;
}

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Whether the first bits of a equal those of prefix. */
static bool in6(const uint8_t a[16], const uint8_t prefix[16], unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;
	if (memcmp(a, prefix, whole) != 0)
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & mask) == (prefix[whole] & mask);
}

struct range6 {
	uint8_t net[16];
	unsigned bits;
	const char *why;
};

static const struct range6 ranges6[] = {
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, "reserved" }, /* 64:ff9b:1::/48 local NAT64 */
	{ { 0x01, 0x00, 0, 0, 0, 0, 0, 0 }, 64, "reserved" },        /* 100::/64 discard-only */
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, "reserved" },             /* 2001::/32 Teredo */
	{ { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 }, 48, "reserved" },  /* 2001:2::/48 benchmarking */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, "documentation" },        /* 2001:db8::/32 */
	{ { 0x20, 0x01, 0x00, 0x10 }, 28, "reserved" },             /* 2001:10::/28 ORCHID */
	{ { 0x3f, 0xff }, 20, "documentation" },                    /* 3fff::/20 */
	{ { 0xfc }, 7, "private" },                                 /* fc00::/7 unique local */
	{ { 0xfe, 0x80 }, 10, "link-local" },                       /* fe80::/10 */
	{ { 0xfe, 0xc0 }, 10, "private" },                          /* fec0::/10 site-local (deprecated) */
	{ { 0xff }, 8, "multicast" },                               /* ff00::/8 */
};

static const char *refusal6(const uint8_t a[16])
{
	static const uint8_t zero[16];
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t nat64[12] = { 0x00, 0x64, 0xff, 0x9b };
	static const uint8_t six_to_four[2] = { 0x20, 0x02 };
	if (memcmp(a, zero, 15) == 0)
		return a[15] == 0 ? "unspecified" : a[15] == 1 ? "loopback" : "IPv4-compatible";
	/* ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64) reach a.b.c.d. */
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0)
		return refusal4(be32_at(a + 12));
	/* ::a.b.c.d (IPv4-compatible, deprecated by RFC 4291). */
	if (memcmp(a, zero, 12) == 0)
		return "IPv4-compatible";
	/* 2002:AABB:CCDD::/48 (6to4) reaches AA.BB.CC.DD. */
	if (memcmp(a, six_to_four, 2) == 0) {
		const char *why = refusal4(be32_at(a + 2));
		if (why)
			return why;
	}
	for (size_t i = 0; i < SW_ARRAY_SIZE(ranges6); i++)
		if (in6(a, ranges6[i].net, ranges6[i].bits))
			return ranges6[i].why;
	/* Global unicast is 2000::/3; the rest is unassigned or reserved. */
	return (a[0] & 0xe0) == 0x20 ? NULL : "reserved";
}

const char *sw_net_address_refusal(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		return refusal4(ntohl(in->sin_addr.s_addr));
	}
	if (sa->sa_family == AF_INET6) {
		/* Copied out: the caller's object is a sockaddr_in6 (or storage),
		 * which the struct sockaddr type does not tell the compiler. */
		struct sockaddr_in6 in;
		memcpy(&in, (const void *)sa, sizeof(in));
		return refusal6(in.sin6_addr.s6_addr);
	}
	return "reserved";
}

bool sw_net_literal_refusal(struct sw_str host, const char **ret_refusal)
{
	char text[INET6_ADDRSTRLEN];
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	*ret_refusal = NULL;
	if (host.len == 0 || host.len >= sizeof(text))
		return false;
	memcpy(text, host.ptr, host.len);
	text[host.len] = '\0';
	if (inet_pton(AF_INET, text, &a4.sin_addr) == 1) {
		*ret_refusal = sw_net_address_refusal((const struct sockaddr *)&a4);
		return true;
	}
	if (inet_pton(AF_INET6, text, &a6.sin6_addr) == 1) {
		*ret_refusal = sw_net_address_refusal((const struct sockaddr *)&a6);
		return true;
	}
	return false;
}
