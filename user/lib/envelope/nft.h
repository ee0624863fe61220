/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* nftables as the envelope sees it (nft.c reads, envelope.c decides). */
#ifndef SILO_ENVELOPE_NFT_H
#define SILO_ENVELOPE_NFT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/netfilter/nf_tables.h>
#include "silo/abi/route.h"

#define FAM_V4 (1U << SILO_FAM_V4)
#define FAM_V6 (1U << SILO_FAM_V6)
#define FAM_BOTH (FAM_V4 | FAM_V6)

struct nft_view {
	unsigned int outside; /* FAM_*: a chain on the forward path */
	char detail[256]; /* the first such chain, and why it counts */
	/* FAM_* of outside whose chains are each proven to accept an
	 * established connection's packets before any rule acts on them
	 * (nft_est.c), and conntrack used only as that allows. */
	unsigned int est;
	char est_detail[192]; /* what lets them in, or what keeps them out */
};

/* The ruleset as nft.c reads it; nft_est.c decides the established shape. */
/*
 * What a chain is for an established connection's packets: let through
 * as by a neutral chain (no rule, policy accept), by a first rule that
 * accepts them (nft_est.c), or by being a nat chain (its rules run only
 * for a connection with no NAT binding yet: nf_nat_inet_fn()). A chain
 * that sees packets before conntrack has (ingress, priority -200 or
 * lower) must be neutral.
 */
enum chain_est {
	EST_RULES, /* its first rule decides; none: its policy does */
	EST_NEUTRAL_ONLY, /* before conntrack: only neutral lets them in */
	EST_YES,
	EST_NO,
};

/* A base chain on the forward path, and what keeps it from being neutral. */
struct fwd_chain {
	__u8 family;
	__u32 hook;
	unsigned int fams, rules;
	char table[NFT_TABLE_MAXNAMELEN], name[NFT_CHAIN_MAXNAMELEN];
	const char *why; /* NULL: nothing yet, but for rules and conntrack */
	enum chain_est est;
	bool accept; /* its policy */
	bool early; /* sees packets before conntrack: EST_NEUTRAL_ONLY */
};

/* The families something holds for, and the first thing found. */
struct ct_use {
	unsigned int fams;
	char why[120];
};

struct ruleset {
	struct fwd_chain *chains;
	size_t n;
	struct ct_use ct; /* conntrack registered */
	/* Conntrack used in a way no established shape allows (a helper,
	 * notrack, a timeout policy, an xt match...). */
	struct ct_use strict;
	__u32 gen;
	int err;
	bool cut; /* rules left unread: every family was outside already */
};

struct nftnl_rule;
/* Whether the rule is `ct state established[,...] [counter] accept`. */
bool nft_rule_accepts_established(struct nftnl_rule *r);
/* The families no established shape can let in any more. */
unsigned int nft_est_lost(const struct ruleset *rs);
/* Which families of v->outside the established shape lets in (v->est),
 * and the line that says what does, or what keeps them out. */
void nft_decide_est(const struct ruleset *rs, struct nft_view *v);
const char *nft_family_name(__u32 family);
const char *nft_hook_name(__u32 family, __u32 hook);

/*
 * Reads this namespace's ruleset, bracketed by its generation, and says
 * which families have a chain on the forward path that is not proven to
 * change nothing. 0, or -errno (-EAGAIN: the ruleset kept changing).
 */
int nft_view_read(struct nft_view *v);

#endif /* SILO_ENVELOPE_NFT_H */
