/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Netlink (nl.c): requests, and the dumps silo reads. */
#ifndef SILO_LIB_NL_H
#define SILO_LIB_NL_H

#include "silod.h"

/* Netlink (libmnl). */
struct nlmsghdr;
/* Sends req on a netlink socket of protocol (NETLINK_ROUTE, ...) and runs cb
 * on every answer; an interrupted dump is run again. */
int silo_nl_request(int protocol, struct nlmsghdr *req,
		    int (*cb)(const struct nlmsghdr *nlh, void *data),
		    void *data);
struct nlattr;
/* tb[0..max] (zeroed by the caller): the attributes of nlh past its
 * hdrlen-byte family header, by type; unknown types left out. */
void silo_nl_attrs(const struct nlmsghdr *nlh, size_t hdrlen,
		   const struct nlattr **tb, int max);
struct silo_nl_addr {
	int family;
	__u32 ifindex;
	__u8 prefixlen;
	__u8 scope;
	__u8 addr[16];
};
typedef int (*silo_nl_addr_fn)(const struct silo_nl_addr *a, void *ctx);
int silo_nl_dump_addrs(silo_nl_addr_fn fn, void *ctx);
struct silo_nl_link {
	__u8 mac[6];
	bool has_mac;
	__u32 master; /* IFLA_MASTER, 0: none */
	char slave_kind[16]; /* IFLA_INFO_SLAVE_KIND: bridge, bond, vrf... */
	char kind[16]; /* IFLA_INFO_KIND: veth, vxlan...; "" for a NIC */
	__u32 mtu; /* IFLA_MTU */
	__u32 max_mtu; /* IFLA_MAX_MTU, 0: not told */
	__u32 rx_queues; /* IFLA_NUM_RX_QUEUES, 0: not told */
	__u32 link; /* IFLA_LINK: a veth's peer, 0: none */
	__s32 link_netnsid; /* IFLA_LINK_NETNSID: the peer's, -1: here */
};
/* A device's MAC (-EOPNOTSUPP without one), master, port kind, kind, MTUs,
 * RX queues and peer. */
int silo_nl_link(__u32 ifindex, struct silo_nl_link *l);
/* The same of a device in the namespace netnsid (as this one knows it, as
 * IFLA_LINK_NETNSID says; -1: this one). */
int silo_nl_link_in(__s32 netnsid, __u32 ifindex, struct silo_nl_link *l);
/* One walk of the IPv4 and IPv6 routes of every table. */
struct silo_nl_route_mtu {
	__u8 family;
	__u8 len; /* prefix length */
	__u32 mtu;
	__u8 addr[16];
};
struct silo_nl_routes {
	__u32 mtu_min[2]; /* [SILO_FAM_*]: the least unlocked MTU, 0: none */
	__u32 flags; /* SILO_GENID_MPATH_V4, _MPATH_V6, _SRC_ROUTES_V6 */
	/* The prefix of every route with an unlocked MTU (free() it); past
	 * SILO_ROUTE_MTUS_MAX, or out of memory, mtus_lost: mtu_min stands
	 * in. */
	struct silo_nl_route_mtu *mtus;
	size_t nr_mtus;
	bool mtus_lost;
	/* The prefix of every IPv4 route a source check may refuse a source
	 * of (route.h, src_checked; free() it); past SILO_SRC_CHECKED_MAX,
	 * or out of memory, srcs_lost. */
	struct silo_src_key *srcs;
	size_t nr_srcs;
	bool srcs_lost;
	/* For direct_skip (route.h): every route of the local table, then
	 * (silo_direct_cover) the cover of the rules' tables' routes and
	 * (silo_nl_rules_direct) the prefixes of the rules before main's;
	 * free() it. Past SILO_DIRECT_MAX, or out of memory, direct_lost. */
	struct silo_direct_key *direct;
	size_t nr_direct;
	bool direct_lost;
	/* Every route of the tables the scan was asked to read (DST kinds;
	 * free() it). Past SILO_NL_COVER_MAX, or out of memory,
	 * direct_lost. */
	struct silo_direct_key *cover;
	size_t nr_cover;
};
#define SILO_NL_COVER_MAX (1U << 20)
/* The tables rules before main's look every packet up in ("lookup T"
 * selecting on nothing), per family: read by a walk of the rules before
 * the walk of the routes, which collects their routes. */
#define SILO_NL_TABLES_MAX 16
struct silo_nl_tables {
	__u32 id[2][SILO_NL_TABLES_MAX]; /* [SILO_FAM_*] */
	unsigned int nr[2];
};
/* Is table one of tables' (NULL: none) of family f (SILO_FAM_*)? */
bool silo_nl_tables_has(const struct silo_nl_tables *tables, int f,
			__u32 table);
/* Adds a prefix of kind (SILO_DIRECT_*) to r's direct. */
void silo_nl_direct_add(struct silo_nl_routes *r, __u8 kind, const void *addr,
			__u8 len);
/* Adds a route's prefix of kind to r's cover. */
void silo_nl_cover_add(struct silo_nl_routes *r, __u8 kind, const void *addr,
		       __u8 len);
/* Adds k to r's srcs (srcs_lost when it cannot). */
void silo_nl_srcs_add(struct silo_nl_routes *r, const struct silo_src_key *k);
/* Frees what a walk collected. */
void silo_nl_routes_free(struct silo_nl_routes *r);
/* Walks the routes into r; the routes of tables (NULL: none) into r's
 * cover. */
int silo_nl_routes_scan(struct silo_nl_routes *r,
			const struct silo_nl_tables *tables);
/* Runs cb on every policy rule of family (AF_INET, AF_INET6, AF_UNSPEC:
 * both, IPv4's first), each family's in order of priority. */
int silo_nl_dump_rules(int family, int (*cb)(const struct nlmsghdr *, void *),
		       void *data);
/* What the policy rules select on: SILO_GENID_RULES_L4 (ipproto, ports),
 * SILO_GENID_RULES_SRC_V4 and _V6 (a source prefix). */
int silo_nl_rules_keys(__u32 *flags);
/* The tables looked up by rules before each family's main lookup, for
 * the walk of the routes (nl_rules.c). */
int silo_nl_rules_tables(struct silo_nl_tables *t);
/* The rules before each family's main lookup (nl_rules.c): their prefixes
 * into r's direct; *flags the SILO_GENID_DIRECT_* bits they allow (with
 * the local table's routes and the cover of tables' in r's direct, and r's
 * direct whole). A table not in tables (a rule added since it was read)
 * allows none of its family. */
int silo_nl_rules_direct(struct silo_nl_routes *r,
			 const struct silo_nl_tables *tables, __u32 *flags);
/* 1 when an IPv6 rule suppresses results (suppress_prefixlength,
 * suppress_ifgroup), which bpf_fib_lookup does not apply; else 0. */
int silo_nl_rules_suppress6(void);

#endif /* SILO_LIB_NL_H */
