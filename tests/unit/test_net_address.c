/* Which addresses a notification may go to: every special-purpose range,
 * at its edges, in IPv4, IPv6 and the IPv6 forms that carry an IPv4
 * address (mapped, compatible, NAT64, 6to4), and IP literals of URLs. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "steward/net/address.h"
#include "test_help.h"

/* The refusal of a textual address (NULL: public); "?" when unparsable. */
static const char *why(const char *text)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	if (inet_pton(AF_INET, text, &a4.sin_addr) == 1)
		return sw_net_address_refusal((const struct sockaddr *)&a4);
	if (inet_pton(AF_INET6, text, &a6.sin6_addr) == 1)
		return sw_net_address_refusal((const struct sockaddr *)&a6);
	return "?";
}

#define REFUSED(addr, reason) CHECK_STR_EQ(why(addr), reason)
#define PUBLIC(addr) CHECK(why(addr) == NULL)

TEST(ipv4_loopback_and_unspecified_are_refused)
{
	REFUSED("127.0.0.1", "loopback");
	REFUSED("127.255.255.255", "loopback");
	REFUSED("0.0.0.0", "unspecified");
	REFUSED("0.255.255.255", "unspecified");
	PUBLIC("1.0.0.0");
	PUBLIC("126.255.255.255");
	PUBLIC("128.0.0.0");
}

TEST(ipv4_private_ranges_are_refused_at_their_edges)
{
	REFUSED("10.0.0.0", "private");
	REFUSED("10.255.255.255", "private");
	PUBLIC("9.255.255.255");
	PUBLIC("11.0.0.0");
	REFUSED("172.16.0.0", "private");
	REFUSED("172.31.255.255", "private");
	PUBLIC("172.15.255.255");
	PUBLIC("172.32.0.0");
	REFUSED("192.168.0.0", "private");
	REFUSED("192.168.255.255", "private");
	PUBLIC("192.167.255.255");
	PUBLIC("192.169.0.0");
}

TEST(ipv4_shared_link_local_and_metadata_are_refused)
{
	REFUSED("100.64.0.0", "shared address space");
	REFUSED("100.127.255.255", "shared address space");
	PUBLIC("100.63.255.255");
	PUBLIC("100.128.0.0");
	REFUSED("169.254.0.0", "link-local");
	REFUSED("169.254.169.254", "link-local"); /* cloud metadata */
	REFUSED("169.254.255.255", "link-local");
	PUBLIC("169.253.255.255");
	PUBLIC("169.255.0.0");
}

TEST(ipv4_multicast_broadcast_reserved_and_documentation_are_refused)
{
	REFUSED("224.0.0.1", "multicast");
	REFUSED("239.255.255.255", "multicast");
	REFUSED("240.0.0.1", "reserved");
	REFUSED("255.255.255.254", "reserved");
	REFUSED("255.255.255.255", "broadcast");
	REFUSED("192.0.0.8", "reserved");
	REFUSED("192.0.2.1", "documentation");
	REFUSED("198.51.100.7", "documentation");
	REFUSED("203.0.113.9", "documentation");
	REFUSED("198.18.0.1", "reserved");
	REFUSED("198.19.255.255", "reserved");
	REFUSED("192.88.99.1", "reserved");
	PUBLIC("223.255.255.255");
	PUBLIC("198.20.0.0");
	PUBLIC("192.0.3.1");
}

TEST(ordinary_public_addresses_pass)
{
	PUBLIC("8.8.8.8");
	PUBLIC("1.1.1.1");
	PUBLIC("93.184.216.34");
	PUBLIC("2606:4700:4700::1111");
	PUBLIC("2a00:1450:4001:80b::200e");
}

TEST(ipv6_loopback_unspecified_and_compatible_are_refused)
{
	REFUSED("::1", "loopback");
	REFUSED("::", "unspecified");
	REFUSED("::2", "IPv4-compatible");
	REFUSED("::8.8.8.8", "IPv4-compatible");
}

TEST(ipv6_unique_local_link_local_site_local_and_multicast_are_refused)
{
	REFUSED("fc00::1", "private");
	REFUSED("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "private");
	REFUSED("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "reserved"); /* outside 2000::/3 */
	REFUSED("fe80::1", "link-local");
	REFUSED("febf:ffff::1", "link-local");
	REFUSED("fec0::1", "private");
	REFUSED("ff02::1", "multicast");
	REFUSED("ff0e::1", "multicast");
	REFUSED("fe00::1", "reserved");
}

TEST(ipv6_outside_global_unicast_is_refused)
{
	REFUSED("1fff:ffff::1", "reserved");
	REFUSED("4000::1", "reserved");
	REFUSED("8000::1", "reserved");
	PUBLIC("2000::1");
	PUBLIC("3ffe:ffff::1");
}

TEST(ipv6_documentation_and_reserved_ranges_are_refused)
{
	REFUSED("2001:db8::1", "documentation");
	REFUSED("3fff::1", "documentation");
	REFUSED("2001::1", "reserved");          /* Teredo */
	REFUSED("2001:2::1", "reserved");        /* benchmarking */
	REFUSED("2001:10::1", "reserved");       /* ORCHID */
	REFUSED("100::1", "reserved");           /* discard-only */
	REFUSED("64:ff9b:1::1", "reserved");     /* local-use NAT64 */
	PUBLIC("2001:4860::1");
}

TEST(ipv4_mapped_ipv6_is_judged_by_its_ipv4_address)
{
	REFUSED("::ffff:127.0.0.1", "loopback");
	REFUSED("::ffff:7f00:1", "loopback");
	REFUSED("::ffff:10.1.2.3", "private");
	REFUSED("::ffff:169.254.169.254", "link-local");
	REFUSED("::ffff:0.0.0.0", "unspecified");
	REFUSED("::ffff:100.64.0.1", "shared address space");
	REFUSED("::ffff:224.0.0.1", "multicast");
	PUBLIC("::ffff:8.8.8.8");
}

TEST(nat64_and_6to4_are_judged_by_the_ipv4_address_inside)
{
	REFUSED("64:ff9b::127.0.0.1", "loopback");
	REFUSED("64:ff9b::a00:1", "private");
	PUBLIC("64:ff9b::808:808");
	REFUSED("2002:7f00:1::", "loopback");
	REFUSED("2002:c0a8:101::1", "private");
	PUBLIC("2002:808:808::1");
}

TEST(other_address_families_are_refused)
{
	struct sockaddr sa = { .sa_family = AF_UNIX };
	CHECK_STR_EQ(sw_net_address_refusal(&sa), "reserved");
}

static bool literal(const char *host, const char **ret)
{
	return sw_net_literal_refusal(sw_str_cstr(host), ret);
}

TEST(url_hosts_are_judged_only_when_they_are_ip_literals)
{
	const char *w = "unset";
	CHECK(literal("127.0.0.1", &w) && w && strcmp(w, "loopback") == 0);
	CHECK(literal("::1", &w) && w && strcmp(w, "loopback") == 0);
	CHECK(literal("::ffff:192.168.1.1", &w) && w && strcmp(w, "private") == 0);
	CHECK(literal("8.8.8.8", &w) && w == NULL);
	CHECK(!literal("localhost", &w) && w == NULL);
	CHECK(!literal("example.com", &w));
	CHECK(!literal("", &w));
	CHECK(!literal("fe80::1%eth0", &w)); /* a zone is no literal sw_valid_url() passes */
}

TEST_MAIN()
