// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The policy rules before each family's main lookup, for direct_skip
 * (include/silo/abi/route.h): the kernel walks the rules in order of
 * priority (fib_rules_lookup()), and a rule matches only when each of its
 * selectors does. So where every rule before the first "lookup main" that
 * selects on nothing else selects on a source or destination prefix, a
 * packet outside those prefixes reaches main's rule having matched none,
 * and the main table's answer is the rules' answer. A rule that looks a
 * table up for every packet (the local table's, "lookup T") goes on to the
 * next when the table has no route for the destination
 * (fib_rules_lookup(): -EAGAIN from the table's lookup): a destination
 * outside the table's routes (walked with the routes) passes it too.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include "../nl.h"
#include "../util.h"

/* The kernel's rules at boot: local, main and default. */
#define PREF_MAIN 32766
#define PREF_DEFAULT 32767

struct rules_walk {
	struct silo_nl_routes *r; /* NULL: only the tables are read */
	/* The tables of plain lookups before main's: read into (tables),
	 * or checked against what the walk of routes read (want). */
	struct silo_nl_tables *tables;
	const struct silo_nl_tables *want;
	/* Per family (SILO_FAM_*): 0 before main's rule, 1 main's rule
	 * reached, -1 a rule that may match any packet came first. */
	int state[2];
	bool custom[2]; /* a rule other than the kernel's three */
	bool srcs[2]; /* a source prefix in r's direct */
};

/* One rule's selectors as the walk needs them. */
struct rule_info {
	const void *src, *dst;
	__u16 src_bytes, dst_bytes;
	__u32 table, pref;
	bool other; /* a selector other than the prefixes, or one unknown */
};

/* suppress_prefixlength, suppress_ifgroup: set (sent with -1 where unset,
 * which some kernels always send). */
static bool suppress_set(const struct nlattr *attr)
{
	return mnl_attr_get_payload_len(attr) < sizeof(__u32) ||
	       mnl_attr_get_u32(attr) != (__u32)-1;
}

static int rule_attr_cb(const struct nlattr *attr, void *data)
{
	struct rule_info *ri = data;

	switch (mnl_attr_get_type(attr)) {
	case FRA_SRC:
		ri->src = mnl_attr_get_payload(attr);
		ri->src_bytes = mnl_attr_get_payload_len(attr);
		break;
	case FRA_DST:
		ri->dst = mnl_attr_get_payload(attr);
		ri->dst_bytes = mnl_attr_get_payload_len(attr);
		break;
	case FRA_TABLE:
		if (mnl_attr_get_payload_len(attr) >= sizeof(__u32))
			ri->table = mnl_attr_get_u32(attr);
		break;
	case FRA_PRIORITY:
		if (mnl_attr_get_payload_len(attr) >= sizeof(__u32))
			ri->pref = mnl_attr_get_u32(attr);
		break;
	case FRA_PROTOCOL: /* who made it */
	case FRA_GOTO: /* what a match does */
		break;
	case FRA_SUPPRESS_PREFIXLEN:
	case FRA_SUPPRESS_IFGROUP:
		if (suppress_set(attr))
			ri->other = true;
		break;
	default:
		/* iif, oif, fwmark, uid, ports, l3mdev, suppress_*, ...:
		 * what this walk does not read may match anything. */
		ri->other = true;
	}
	return MNL_CB_OK;
}

/* Does the rule select on nothing (every packet matches it) and look a
 * table up? Then ri->table is the table every packet is looked up in. */
static bool plain_lookup(const struct fib_rule_hdr *frh,
			 const struct rule_info *ri)
{
	return !frh->src_len && !frh->dst_len && !frh->tos && !ri->other &&
	       !(frh->flags & FIB_RULE_INVERT) && frh->action == FR_ACT_TO_TBL;
}

/* One of the kernel's three, if a plain lookup. */
static bool kernels(const struct rule_info *ri)
{
	return (ri->pref == 0 && ri->table == RT_TABLE_LOCAL) ||
	       (ri->pref == PREF_MAIN && ri->table == RT_TABLE_MAIN) ||
	       (ri->pref == PREF_DEFAULT && ri->table == RT_TABLE_DEFAULT);
}

/* A plain lookup of table before main's (family f): can a packet pass
 * it? Where the walk of routes read the table's routes into the cover. */
static bool table_passed(struct rules_walk *w, int f, __u32 table)
{
	struct silo_nl_tables *t = w->tables;

	if (w->want)
		return silo_nl_tables_has(w->want, f, table);
	if (silo_nl_tables_has(t, f, table))
		return true;
	if (t->nr[f] == SILO_NL_TABLES_MAX)
		return false;
	t->id[f][t->nr[f]++] = table;
	return true;
}

/* A prefix of a rule's into r's direct, where the walk fills one. */
static void prefix_add(struct rules_walk *w, __u8 kind, const void *addr,
		       __u8 len)
{
	if (w->r)
		silo_nl_direct_add(w->r, kind, addr, len);
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	struct rules_walk *w = data;
	struct rule_info ri = {};
	bool v4 = frh->family == AF_INET, lookup;
	int f = v4 ? SILO_FAM_V4 : SILO_FAM_V6;

	if (nlh->nlmsg_type != RTM_NEWRULE ||
	    (frh->family != AF_INET && frh->family != AF_INET6))
		return MNL_CB_OK;
	ri.table = frh->table;
	mnl_attr_parse(nlh, sizeof(*frh), rule_attr_cb, &ri);
	/* A prefix is read only whole. */
	if (ri.src_bytes < (v4 ? 4 : 16))
		ri.src = NULL;
	if (ri.dst_bytes < (v4 ? 4 : 16))
		ri.dst = NULL;
	lookup = plain_lookup(frh, &ri);
	if (!lookup || !kernels(&ri))
		w->custom[f] = true;
	if (w->state[f])
		return MNL_CB_OK;
	if (lookup && ri.table == RT_TABLE_MAIN) {
		w->state[f] = 1;
	} else if (lookup && ri.table == RT_TABLE_LOCAL) {
		/* Its routes are in direct_skip, from the walk of routes. */
	} else if (lookup) {
		if (!table_passed(w, f, ri.table))
			w->state[f] = -1;
	} else if ((frh->flags & FIB_RULE_INVERT) ||
		   (!(frh->src_len && ri.src) && !(frh->dst_len && ri.dst))) {
		w->state[f] = -1;
	} else if (frh->src_len && ri.src) {
		prefix_add(w, v4 ? SILO_DIRECT_SRC_V4 : SILO_DIRECT_SRC_V6,
			   ri.src, frh->src_len);
		w->srcs[f] = true;
	} else {
		prefix_add(w, v4 ? SILO_DIRECT_DST_V4 : SILO_DIRECT_DST_V6,
			   ri.dst, frh->dst_len);
	}
	return MNL_CB_OK;
}

int silo_nl_rules_tables(struct silo_nl_tables *t)
{
	struct rules_walk w = { .tables = t };

	memset(t, 0, sizeof(*t));
	return silo_nl_dump_rules(AF_UNSPEC, rule_cb, &w);
}

/* Does r's direct hold every destination of the family (a table with a
 * default route)? Then no lookup would be direct. */
static bool holds_all(const struct silo_nl_routes *r, __u8 kind)
{
	size_t i;

	for (i = 0; i < r->nr_direct; i++)
		if (r->direct[i].kind == kind && r->direct[i].prefixlen == 8)
			return true;
	return false;
}

int silo_nl_rules_direct(struct silo_nl_routes *r,
			 const struct silo_nl_tables *tables, __u32 *flags)
{
	static const struct silo_nl_tables none;
	struct rules_walk w = { .r = r, .want = tables ? tables : &none };
	int err;

	*flags = 0;
	err = silo_nl_dump_rules(AF_UNSPEC, rule_cb, &w);
	if (err)
		return err;
	if (r->direct_lost)
		return 0;
	if (holds_all(r, SILO_DIRECT_DST_V4))
		w.state[SILO_FAM_V4] = -1;
	if (holds_all(r, SILO_DIRECT_DST_V6))
		w.state[SILO_FAM_V6] = -1;
	/* IPv4 under the kernel's rules alone looks its local and main
	 * tables up as one (they are merged until a rule is added). */
	if (w.state[SILO_FAM_V4] == 1 && w.custom[SILO_FAM_V4])
		*flags |= SILO_GENID_DIRECT_V4 |
			  (w.srcs[SILO_FAM_V4] ? SILO_GENID_DIRECT_SRC_V4 : 0);
	if (w.state[SILO_FAM_V6] == 1)
		*flags |= SILO_GENID_DIRECT_V6 |
			  (w.srcs[SILO_FAM_V6] ? SILO_GENID_DIRECT_SRC_V6 : 0);
	return 0;
}

/* An IPv6 rule that suppresses a result: fib6_rule_suppress() reads the
 * route bpf_fib_lookup's walk does not make (fib6_rule_action_alt()), so
 * the lookup returns the result the kernel's forwarding suppresses. */
static int suppress_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	bool *found = data;

	if (nlh->nlmsg_type != RTM_NEWRULE || frh->family != AF_INET6)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*frh))
	{
		if ((mnl_attr_get_type(attr) == FRA_SUPPRESS_PREFIXLEN ||
		     mnl_attr_get_type(attr) == FRA_SUPPRESS_IFGROUP) &&
		    suppress_set(attr))
			*found = true;
	}
	return MNL_CB_OK;
}

int silo_nl_rules_suppress6(void)
{
	bool found = false;
	int err = silo_nl_dump_rules(AF_INET6, suppress_cb, &found);

	return err ? err : found;
}
