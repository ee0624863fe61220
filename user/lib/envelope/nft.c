// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * nftables and the envelope: which families have a chain that a forwarded
 * packet traverses and that is not proven to change nothing, or conntrack.
 *
 * A base chain changes nothing for a packet when it holds no rule, its
 * policy is accept, it keeps no counters (iptables-nft's built-in chains
 * do once a policy is set: a bypass would leave them still) and it is not
 * a nat chain (which registers NAT and conntrack). Regular chains are
 * reached only by a rule's jump or goto: with no rule in a base chain,
 * none is. Conntrack puts a family outside on its own: its hooks
 * (prerouting, postrouting) track every forwarded packet, and an
 * expression or object that uses conntrack anywhere in the namespace (an
 * input chain's `ct state` too, a regular chain's, a set's) registers
 * them. The ruleset is read with libnftnl (the kernel's own expressions)
 * and bracketed by its generation: one that changed between the reads is
 * read again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include "../nl.h"
#include "../util.h"
#include "nft.h"

#define GEN_TRIES 5

/* The families whose forwarded packets a base chain sees; 0: none. */
static unsigned int hook_fams(__u32 family, __u32 hook)
{
	switch (family) {
	case NFPROTO_NETDEV:
		/* Ingress and egress see every packet of the device. */
		return FAM_BOTH;
	case NFPROTO_INET:
	case NFPROTO_IPV4:
	case NFPROTO_IPV6:
		/* Input and output never see forwarded packets. */
		if (hook != NF_INET_PRE_ROUTING && hook != NF_INET_FORWARD &&
		    hook != NF_INET_POST_ROUTING && hook != NF_INET_INGRESS)
			return 0;
		return family == NFPROTO_IPV4 ? FAM_V4 :
		       family == NFPROTO_IPV6 ? FAM_V6 :
						FAM_BOTH;
	}
	return 0; /* arp, bridge: not routed traffic */
}

/* The families whose conntrack a user in this family registers: its own,
 * both for inet and for what is not IP (conservative). */
static unsigned int ct_fams(__u32 family)
{
	return family == NFPROTO_IPV4 ? FAM_V4 :
	       family == NFPROTO_IPV6 ? FAM_V6 :
					FAM_BOTH;
}

/* Use of conntrack for family's families; the first one found named. */
static void __attribute__((format(printf, 3, 4)))
ct_note(struct ct_use *u, __u32 family, const char *fmt, ...)
{
	va_list ap;

	if (!u->fams) {
		va_start(ap, fmt);
		vsnprintf(u->why, sizeof(u->why), fmt, ap);
		va_end(ap);
	}
	u->fams |= ct_fams(family);
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_gen *gen = nftnl_gen_alloc();
	struct ruleset *rs = data;

	if (!gen)
		return MNL_CB_ERROR;
	if (nftnl_gen_nlmsg_parse(nlh, gen) < 0) {
		rs->err = -EINVAL;
	} else {
		rs->gen = nftnl_gen_get_u32(gen, NFTNL_GEN_ID);
	}
	nftnl_gen_free(gen);
	return MNL_CB_OK;
}

static void chain_note(struct ruleset *rs, struct nftnl_chain *c)
{
	__u32 family = nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
	__u32 hook = nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM);
	const char *type = nftnl_chain_get_str(c, NFTNL_CHAIN_TYPE);
	unsigned int fams = hook_fams(family, hook);
	bool nat = type && !strcmp(type, "nat");
	struct fwd_chain *f;

	/* A nat chain registers NAT and conntrack, whatever its hook. */
	if (nat)
		ct_note(&rs->ct, family, "the nat chain '%s %s %s'",
			nft_family_name(family),
			nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE),
			nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	if (!fams)
		return;
	f = realloc(rs->chains, (rs->n + 1) * sizeof(*f));
	if (!f) {
		rs->err = -ENOMEM;
		return;
	}
	rs->chains = f;
	f += rs->n++;
	memset(f, 0, sizeof(*f));
	f->family = family;
	f->hook = hook;
	f->fams = fams;
	snprintf(f->table, sizeof(f->table), "%s",
		 nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE));
	snprintf(f->name, sizeof(f->name), "%s",
		 nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	f->accept = nftnl_chain_is_set(c, NFTNL_CHAIN_POLICY) &&
		    nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY) == NF_ACCEPT;
	if (nat)
		f->est = EST_YES;
	else if (family == NFPROTO_NETDEV || hook == NF_INET_INGRESS ||
		 (__s32)nftnl_chain_get_u32(c, NFTNL_CHAIN_PRIO) <=
			 NF_IP_PRI_CONNTRACK)
		f->est = EST_NEUTRAL_ONLY;
	f->early = f->est == EST_NEUTRAL_ONLY;
	if (nat)
		f->why = "a nat chain";
	else if (!f->accept)
		f->why = "policy drop";
	else if (nftnl_chain_is_set(c, NFTNL_CHAIN_PACKETS))
		f->why = "keeps counters";
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct ruleset *rs = data;

	if (!c)
		return MNL_CB_ERROR;
	/* Base chains only: regular ones are reached by jumps alone. */
	if (nftnl_chain_nlmsg_parse(nlh, c) < 0)
		rs->err = -EINVAL;
	else if (nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		chain_note(rs, c);
	nftnl_chain_free(c);
	return rs->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* Whether an expression uses conntrack (its init registers conntrack's
 * hooks: nf_ct_netns_get()). iptables-nft's xt matches and targets may. */
static bool expr_uses_ct(const char *name)
{
	static const char *const names[] = {
		"ct",	    "nat",	    "masq",  "redir",  "connlimit",
		"synproxy", "flow_offload", "match", "target", "notrack",
	};

	return silo_str_in(name, names, ARRAY_SIZE(names));
}

/* Conntrack's users that no established shape allows: what they do to a
 * connection's packets is more than forwarding (a helper, a timeout
 * policy, notrack, synproxy, a flowtable), or is not read (xt). */
static bool expr_ct_strict(struct nftnl_expr *e, const char *name)
{
	static const char *const names[] = {
		"notrack", "synproxy", "flow_offload", "match", "target",
	};

	/* `ct ... set`: a mark, a zone, a helper, a timeout. */
	if (!strcmp(name, "ct"))
		return nftnl_expr_is_set(e, NFTNL_EXPR_CT_SREG);
	return silo_str_in(name, names, ARRAY_SIZE(names));
}

struct expr_ctx {
	struct ruleset *rs;
	__u32 family;
	const char *table, *where; /* where: "chain NAME" or "set NAME" */
};

static int expr_cb(struct nftnl_expr *e, void *data)
{
	const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
	struct expr_ctx *x = data;

	if (!name)
		return MNL_CB_OK;
	if (expr_uses_ct(name))
		ct_note(&x->rs->ct, x->family, "'%s' in '%s %s', %s", name,
			nft_family_name(x->family), x->table, x->where);
	if (expr_ct_strict(e, name))
		ct_note(&x->rs->strict, x->family, "'%s%s' in '%s %s', %s",
			name, strcmp(name, "ct") ? "" : " set",
			nft_family_name(x->family), x->table, x->where);
	/* A dynamic set's update may carry expressions of its own. */
	if (!strcmp(name, "dynset"))
		nftnl_expr_expr_foreach(e, expr_cb, data);
	return MNL_CB_OK;
}

/* Both families outside whatever else the ruleset holds, and neither
 * can be let in by its established shape: what is left to read changes
 * nothing. */
static bool decided(const struct ruleset *rs)
{
	unsigned int fams = rs->ct.fams;
	size_t i;

	for (i = 0; i < rs->n; i++)
		if (rs->chains[i].why || rs->chains[i].rules)
			fams |= rs->chains[i].fams;
	return fams == FAM_BOTH && nft_est_lost(rs) == FAM_BOTH;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ruleset *rs = data;
	struct expr_ctx x = { .rs = rs };
	char where[NFT_CHAIN_MAXNAMELEN + 16];
	struct nftnl_rule *r;
	const char *chain;
	size_t i;

	if (decided(rs)) {
		rs->cut = true;
		return MNL_CB_OK;
	}
	r = nftnl_rule_alloc();
	if (!r)
		return MNL_CB_ERROR;
	if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
		rs->err = -EINVAL;
		goto out;
	}
	x.family = nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
	x.table = nftnl_rule_get_str(r, NFTNL_RULE_TABLE);
	chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
	if (!x.table || !chain)
		goto out;
	for (i = 0; i < rs->n; i++) {
		struct fwd_chain *f = &rs->chains[i];

		if (f->family != x.family || strcmp(f->table, x.table) ||
		    strcmp(f->name, chain))
			continue;
		/* The dump gives a chain's rules in order: the first decides
		 * what an established connection's packets meet. */
		if (!f->rules++ && f->est == EST_RULES)
			f->est = nft_rule_accepts_established(r) ? EST_YES :
								   EST_NO;
		else if (f->est == EST_NEUTRAL_ONLY)
			f->est = EST_NO;
	}
	snprintf(where, sizeof(where), "chain %s", chain);
	x.where = where;
	nftnl_expr_foreach(r, expr_cb, &x);
out:
	nftnl_rule_free(r);
	return rs->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* A set's element expressions are made when the set is (a `ct count` too). */
static int set_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_set *s = nftnl_set_alloc();
	struct ruleset *rs = data;
	struct expr_ctx x = { .rs = rs };
	char where[NFT_SET_MAXNAMELEN + 16];

	if (!s)
		return MNL_CB_ERROR;
	if (nftnl_set_nlmsg_parse(nlh, s) < 0) {
		rs->err = -EINVAL;
		goto out;
	}
	x.family = nftnl_set_get_u32(s, NFTNL_SET_FAMILY);
	x.table = nftnl_set_get_str(s, NFTNL_SET_TABLE);
	snprintf(where, sizeof(where), "set %s",
		 nftnl_set_get_str(s, NFTNL_SET_NAME));
	x.where = where;
	if (x.table)
		nftnl_set_expr_foreach(s, expr_cb, &x);
out:
	nftnl_set_free(s);
	return rs->err ? MNL_CB_ERROR : MNL_CB_OK;
}

/* Stateful objects of conntrack's register it when they are made. */
static int obj_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct ruleset *rs = data;
	__u32 type, family;

	if (!o)
		return MNL_CB_ERROR;
	if (nftnl_obj_nlmsg_parse(nlh, o) < 0) {
		rs->err = -EINVAL;
		goto out;
	}
	type = nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE);
	family = nftnl_obj_get_u32(o, NFTNL_OBJ_FAMILY);
	if (type == NFT_OBJECT_CT_HELPER || type == NFT_OBJECT_CONNLIMIT ||
	    type == NFT_OBJECT_CT_TIMEOUT || type == NFT_OBJECT_CT_EXPECT ||
	    type == NFT_OBJECT_SYNPROXY)
		ct_note(&rs->ct, family, "the object '%s' in '%s %s'",
			nftnl_obj_get_str(o, NFTNL_OBJ_NAME),
			nft_family_name(family),
			nftnl_obj_get_str(o, NFTNL_OBJ_TABLE));
	if (type != NFT_OBJECT_CONNLIMIT && type != NFT_OBJECT_COUNTER &&
	    type != NFT_OBJECT_QUOTA && type != NFT_OBJECT_LIMIT &&
	    type != NFT_OBJECT_SECMARK)
		ct_note(&rs->strict, family, "the object '%s' in '%s %s'",
			nftnl_obj_get_str(o, NFTNL_OBJ_NAME),
			nft_family_name(family),
			nftnl_obj_get_str(o, NFTNL_OBJ_TABLE));
out:
	nftnl_obj_free(o);
	return rs->err ? MNL_CB_ERROR : MNL_CB_OK;
}

static int dump(struct ruleset *rs, __u16 type,
		int (*cb)(const struct nlmsghdr *nlh, void *data))
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	__u16 flags = type == NFT_MSG_GETGEN ? 0 : NLM_F_DUMP;
	int err;

	nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_UNSPEC, flags, 0);
	err = silo_nl_request(NETLINK_NETFILTER, nlh, cb, rs);
	return err ? err : rs->err;
}

/* One read of the ruleset, from generation to generation. 1: it changed. */
static int read_once(struct ruleset *rs)
{
	static const struct {
		__u16 type;
		int (*cb)(const struct nlmsghdr *nlh, void *data);
	} dumps[] = {
		{ NFT_MSG_GETCHAIN, chain_cb },
		{ NFT_MSG_GETRULE, rule_cb },
		{ NFT_MSG_GETSET, set_cb },
		{ NFT_MSG_GETOBJ, obj_cb },
	};
	unsigned int i;
	__u32 gen;
	int err;

	err = dump(rs, NFT_MSG_GETGEN, gen_cb);
	if (err)
		return err;
	gen = rs->gen;
	for (i = 0; i < ARRAY_SIZE(dumps) && !(i > 1 && decided(rs)); i++) {
		err = dump(rs, dumps[i].type, dumps[i].cb);
		if (err)
			return err;
	}
	err = dump(rs, NFT_MSG_GETGEN, gen_cb);
	if (err)
		return err;
	return rs->gen != gen;
}

static void decide(const struct ruleset *rs, struct nft_view *v)
{
	char why[24];
	size_t i;

	for (i = 0; i < rs->n; i++) {
		const struct fwd_chain *f = &rs->chains[i];

		if (f->why)
			snprintf(why, sizeof(why), "%s", f->why);
		else if (f->rules && rs->cut)
			snprintf(why, sizeof(why), "rules");
		else if (f->rules)
			snprintf(why, sizeof(why), "%u rule%s", f->rules,
				 f->rules == 1 ? "" : "s");
		else
			continue; /* neutral */
		if (!v->outside)
			snprintf(
				v->detail, sizeof(v->detail),
				"nftables chain '%s %.64s %.64s' (hook %s): %s",
				nft_family_name(f->family), f->table, f->name,
				nft_hook_name(f->family, f->hook), why);
		v->outside |= f->fams;
	}
	/* Conntrack's own hooks see every forwarded packet, with or without
	 * a chain on the forward path. */
	if (rs->ct.fams && !v->outside)
		snprintf(v->detail, sizeof(v->detail),
			 "nftables uses conntrack (%s), whose hooks see every "
			 "forwarded packet",
			 rs->ct.why);
	v->outside |= rs->ct.fams;
	nft_decide_est(rs, v);
}

/*
 * The last view read, by namespace (its cookie: never reused while the
 * system runs) and ruleset generation: the generation moves with every
 * change, so an unmoved one keeps the view. silod evaluates the envelope
 * every second; one request then, not a dump of every rule.
 */
static struct {
	pthread_mutex_t lock;
	bool valid;
	__u64 cookie;
	__u32 gen;
	struct nft_view v;
} last = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool from_last(struct nft_view *v, __u64 cookie)
{
	struct ruleset rs = {};
	bool hit = false;

	if (dump(&rs, NFT_MSG_GETGEN, gen_cb))
		return false;
	pthread_mutex_lock(&last.lock);
	if (last.valid && last.cookie == cookie && last.gen == rs.gen) {
		*v = last.v;
		hit = true;
	}
	pthread_mutex_unlock(&last.lock);
	return hit;
}

int nft_view_read(struct nft_view *v)
{
	struct ruleset rs = {};
	int tries, err = -EAGAIN;
	__u64 cookie = 0;

	memset(v, 0, sizeof(*v));
	if (!silo_netns_cookie(&cookie) && from_last(v, cookie))
		return 0;
	for (tries = 0; tries < GEN_TRIES; tries++) {
		free(rs.chains);
		memset(&rs, 0, sizeof(rs));
		err = read_once(&rs);
		if (err <= 0)
			break;
		err = -EAGAIN;
	}
	/* No nfnetlink, or no nf_tables in it: no chain can exist. */
	if (err == -EPROTONOSUPPORT || err == -EOPNOTSUPP || err == -ENOENT)
		err = 0;
	else if (!err)
		decide(&rs, v);
	if (!err && cookie && rs.gen) {
		pthread_mutex_lock(&last.lock);
		last.valid = true;
		last.cookie = cookie;
		last.gen = rs.gen;
		last.v = *v;
		pthread_mutex_unlock(&last.lock);
	}
	free(rs.chains);
	return err;
}
