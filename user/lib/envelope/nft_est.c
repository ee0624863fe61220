// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The rule that lets a stateful firewall's established connections
 * through first: `ct state established,related accept` (any set of states
 * that holds established, a counter allowed), as the kernel holds it:
 *
 *   [ ct load state => reg R ]
 *   [ bitwise reg R = (reg R & MASK) ^ 0 ]      MASK has ESTABLISHED's bit
 *   [ cmp neq reg R 0 ]
 *   [ counter ]                                 optional
 *   [ immediate reg 0 accept ]
 *
 * Anything else is not proven (a verdict map on the state, a set of states,
 * an xt match): the chain then keeps its family outside, as before.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include "../internal.h"
#include "nft.h"

enum { EST_CT, EST_BITWISE, EST_CMP, EST_VERDICT, EST_DONE, EST_FAIL };

struct est_match {
	int step;
	__u32 reg;
};

static bool data_zero(struct nftnl_expr *e, __u16 attr, __u32 want_len)
{
	__u32 len = 0, i;
	const __u8 *d = nftnl_expr_get(e, attr, &len);

	if (!d || len != want_len)
		return false;
	for (i = 0; i < len; i++)
		if (d[i])
			return false;
	return true;
}

static int est_step(struct est_match *m, struct nftnl_expr *e, const char *name)
{
	__u32 len = 0, mask;
	const void *d;

	switch (m->step) {
	case EST_CT:
		if (strcmp(name, "ct") ||
		    !nftnl_expr_is_set(e, NFTNL_EXPR_CT_DREG) ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY) != NFT_CT_STATE)
			return EST_FAIL;
		m->reg = nftnl_expr_get_u32(e, NFTNL_EXPR_CT_DREG);
		return EST_BITWISE;
	case EST_BITWISE:
		if (strcmp(name, "bitwise") ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_SREG) != m->reg ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_DREG) != m->reg ||
		    (nftnl_expr_is_set(e, NFTNL_EXPR_BITWISE_OP) &&
		     nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_OP) !=
			     NFT_BITWISE_BOOL) ||
		    !data_zero(e, NFTNL_EXPR_BITWISE_XOR, sizeof(__u32)))
			return EST_FAIL;
		d = nftnl_expr_get(e, NFTNL_EXPR_BITWISE_MASK, &len);
		if (!d || len != sizeof(mask))
			return EST_FAIL;
		memcpy(&mask, d, sizeof(mask));
		/* The state is the host's u32 of NF_CT_STATE_BIT(ctinfo);
		 * either direction of an established one is the same bit. */
		if (!(mask & NF_CT_STATE_BIT(IP_CT_ESTABLISHED)))
			return EST_FAIL;
		return EST_CMP;
	case EST_CMP:
		if (strcmp(name, "cmp") ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG) != m->reg ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP) != NFT_CMP_NEQ ||
		    !data_zero(e, NFTNL_EXPR_CMP_DATA, sizeof(__u32)))
			return EST_FAIL;
		return EST_VERDICT;
	case EST_VERDICT:
		if (!strcmp(name, "counter"))
			return EST_VERDICT;
		if (strcmp(name, "immediate") ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG) !=
			    NFT_REG_VERDICT ||
		    !nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT) ||
		    nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT) != NF_ACCEPT)
			return EST_FAIL;
		return EST_DONE;
	}
	return EST_FAIL; /* anything after the verdict */
}

static int est_cb(struct nftnl_expr *e, void *data)
{
	struct est_match *m = data;
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

	m->step = name ? est_step(m, e, name) : EST_FAIL;
	return m->step == EST_FAIL ? -1 : 0;
}

bool nft_rule_accepts_established(struct nftnl_rule *r)
{
	struct est_match m = { .step = EST_CT };

	nftnl_expr_foreach(r, est_cb, &m);
	return m.step == EST_DONE;
}

const char *nft_family_name(__u32 family)
{
	switch (family) {
	case NFPROTO_INET:
		return "inet";
	case NFPROTO_IPV4:
		return "ip";
	case NFPROTO_IPV6:
		return "ip6";
	case NFPROTO_NETDEV:
		return "netdev";
	case NFPROTO_BRIDGE:
		return "bridge";
	case NFPROTO_ARP:
		return "arp";
	}
	return "?";
}

const char *nft_hook_name(__u32 family, __u32 hook)
{
	static const char *const inet[] = {
		[NF_INET_PRE_ROUTING] = "prerouting",
		[NF_INET_LOCAL_IN] = "input",
		[NF_INET_FORWARD] = "forward",
		[NF_INET_LOCAL_OUT] = "output",
		[NF_INET_POST_ROUTING] = "postrouting",
		[NF_INET_INGRESS] = "ingress",
	};

	if (family == NFPROTO_NETDEV)
		return hook == NF_NETDEV_INGRESS ? "ingress" : "egress";
	return hook < ARRAY_SIZE(inet) && inet[hook] ? inet[hook] : "?";
}

/* The families no established shape can let in any more. */
unsigned int nft_est_lost(const struct ruleset *rs)
{
	unsigned int fams = rs->strict.fams;
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->chains[i].est == EST_NO)
			fams |= rs->chains[i].fams;
	return fams;
}

/* Whether an established connection's packets pass the chain untouched. */
static bool chain_lets_est(const struct fwd_chain *f)
{
	switch (f->est) {
	case EST_YES:
		return true;
	case EST_RULES:
		return !f->rules && f->accept;
	case EST_NEUTRAL_ONLY:
		return !f->rules && !f->why;
	default:
		return false;
	}
}

void nft_decide_est(const struct ruleset *rs, struct nft_view *v)
{
	const struct fwd_chain *named = NULL, *bad = NULL;
	unsigned int est = FAM_BOTH & ~rs->strict.fams;
	size_t i;

	for (i = 0; i < rs->n; i++) {
		const struct fwd_chain *f = &rs->chains[i];

		if (!chain_lets_est(f)) {
			est &= ~f->fams;
			if (!bad && (f->fams & v->outside))
				bad = f;
		} else if (!named && f->est == EST_YES && f->rules) {
			named = f;
		}
	}
	v->est = est & v->outside;
	if (v->est && named)
		snprintf(
			v->est_detail, sizeof(v->est_detail),
			"established connections accepted first by '%s %.48s %.48s'",
			nft_family_name(named->family), named->table,
			named->name);
	else if (v->est)
		snprintf(v->est_detail, sizeof(v->est_detail),
			 "established connections meet no rule");
	else if (rs->strict.fams & v->outside)
		snprintf(v->est_detail, sizeof(v->est_detail),
			 "conntrack used beyond state and NAT: %s",
			 rs->strict.why);
	else if (bad)
		snprintf(
			v->est_detail, sizeof(v->est_detail),
			"'%s %.40s %.40s' (hook %s) %s",
			nft_family_name(bad->family), bad->table, bad->name,
			nft_hook_name(bad->family, bad->hook),
			bad->early ?
				"sees packets before conntrack and is not neutral" :
				"does not accept established connections first");
}
