/* Which addresses an outbound request may reach: the SSRF policy shared by
 * every client that connects where a user said (notification deliveries,
 * the domain proof, the git host APIs). Only public unicast addresses are
 * targets (src/net/address.c holds the tables). */
#ifndef STEWARD_NET_ADDRESS_H
#define STEWARD_NET_ADDRESS_H

#include <stdbool.h>
#include <sys/socket.h>
#include "steward/base/base.h"

/* Why an address is not a public unicast one ("loopback", "private",
 * "link-local", "shared address space", "unspecified", "multicast",
 * "broadcast", "reserved", "documentation", "IPv4-compatible"), or NULL
 * when it is public. IPv6 forms that embed an IPv4 address
 * (::ffff:a.b.c.d, 64:ff9b::a.b.c.d, 2002:AABB:CCDD::) are judged by that
 * address; other IPv6 outside 2000::/3 is "reserved". sa is an AF_INET or
 * AF_INET6 address; any other family is "reserved". */
const char *sw_net_address_refusal(const struct sockaddr *sa);

/* Whether host (a URL's host as sw_valid_url() gives it, IPv6 without its
 * brackets) is an IP literal: true with *ret_refusal set to
 * sw_net_address_refusal() of it (NULL: public). false for a name
 * (which only delivery resolves). */
bool sw_net_literal_refusal(struct sw_str host, const char **ret_refusal);

#endif
