// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The offload envelope: XDP forwarding equals the kernel's only where
 * nothing the data path cannot reproduce sees forwarded packets: netfilter
 * hooks, xfrm policies, IPv6 forwarding switched off, a multipath hash over
 * fields bpf_fib_lookup is not given. This file finds which of those hold in
 * the current network namespace, per family, and writes the answer into
 * genid.outside, where the data path reads it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/xfrm.h>
#include <net/if.h>
#include "../maps.h"
#include "../nl.h"
#include "../util.h"
#include "nft.h"

/* Condition bit holds for the families in fams; the first one found is
 * named in detail. */
static void __attribute__((format(printf, 4, 5)))
hold(struct silo_envelope *env, unsigned int fams, __u32 bit, const char *fmt,
     ...)
{
	va_list ap;

	if (fams & FAM_V4)
		env->holds[SILO_FAM_V4] |= bit;
	if (fams & FAM_V6)
		env->holds[SILO_FAM_V6] |= bit;
	/* What could not be read is news: it wins the line. */
	if (env->detail[0] && bit != SILO_ENV(UNKNOWN))
		return;
	va_start(ap, fmt);
	vsnprintf(env->detail, sizeof(env->detail), fmt, ap);
	va_end(ap);
}

/* nftables: a chain on the forward path that is not proven neutral. */
static int eval_nftables(struct silo_envelope *env)
{
	struct nft_view v;
	int err = nft_view_read(&v);

	if (!err && v.outside)
		hold(env, v.outside, SILO_ENV(NFTABLES), "%s", v.detail);
	if (!err) {
		env->ct_shape = v.est;
		snprintf(env->ct_detail, sizeof(env->ct_detail), "%s",
			 v.est_detail);
	}
	return err;
}

/* Conntrack's settings that its established connections' packets meet;
 * none to read (no conntrack in this namespace): no shape is proven. */
static void eval_conntrack(struct silo_envelope *env)
{
	static const char *const dir = "/proc/sys/net/netfilter/";
	char path[96];
	int v[3] = { 0 };
	static const char *const names[] = {
		"nf_conntrack_checksum",
		"nf_conntrack_tcp_timeout_established",
		"nf_conntrack_udp_timeout_stream",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, names[i]);
		if (silo_read_sysctl_int(path, &v[i]) || v[i] < 0) {
			if (env->ct_shape)
				snprintf(env->ct_detail, sizeof(env->ct_detail),
					 "cannot read %s", path);
			env->ct_shape = 0;
			return;
		}
	}
	env->ct_flags = v[0] ? SILO_CT_F_CHECKSUM : 0;
	env->ct_timeout[0] = v[1];
	env->ct_timeout[1] = v[2];
}

int silo_envelope_eval_ct(struct silo_envelope *env)
{
	int err;

	memset(env, 0, sizeof(*env));
	err = eval_nftables(env);
	eval_conntrack(env);
	return err;
}

unsigned int silo_envelope_ct_fams(const struct silo_envelope *env, bool optin)
{
	unsigned int fams = 0, f;

	for (f = 0; f < 2; f++)
		if (optin && (env->ct_shape & (1U << f)) &&
		    env->holds[f] == SILO_ENV(NFTABLES))
			fams |= 1U << f;
	return fams;
}

/* iptables-legacy: a table is registered once something used it. */
static int eval_iptables_legacy(struct silo_envelope *env)
{
	static const struct {
		const char *path;
		unsigned int fams;
	} files[] = {
		{ "/proc/thread-self/net/ip_tables_names", FAM_V4 },
		{ "/proc/thread-self/net/ip6_tables_names", FAM_V6 },
	};
	unsigned int i;
	char buf[256];
	int n;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		n = silo_read_file(files[i].path, buf, sizeof(buf));
		if (n == -ENOENT)
			continue; /* no legacy iptables in this kernel */
		if (n < 0)
			return n;
		if (!n)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		hold(env, files[i].fams, SILO_ENV(IPTABLES_LEGACY),
		     "%s table '%s' (%s)",
		     files[i].fams == FAM_V4 ? "iptables-legacy" :
					       "ip6tables-legacy",
		     buf, files[i].path);
	}
	return 0;
}

/* xfrm */

static const char *xfrm_dir_name(__u8 dir)
{
	return dir == XFRM_POLICY_FWD ? "fwd" :
	       dir == XFRM_POLICY_OUT ? "out" :
					"in";
}

static int policy_cb(const struct nlmsghdr *nlh, void *data)
{
	struct silo_envelope *env = data;
	char src[INET6_ADDRSTRLEN] = "?", dst[INET6_ADDRSTRLEN] = "?";
	const struct xfrm_userpolicy_info *p;
	struct xfrm_userpolicy_info copy;
	unsigned int fams;

	if (nlh->nlmsg_type != XFRM_MSG_NEWPOLICY ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(copy))
		return MNL_CB_OK;
	/* A copy: netlink aligns to 4 bytes, the struct's __u64s want 8. */
	memcpy(&copy, mnl_nlmsg_get_payload(nlh), sizeof(copy));
	p = &copy;
	/* Input policies apply to packets for this host only. */
	if (p->dir != XFRM_POLICY_FWD && p->dir != XFRM_POLICY_OUT)
		return MNL_CB_OK;
	switch (p->sel.family) {
	case AF_INET:
		fams = FAM_V4;
		inet_ntop(AF_INET, &p->sel.saddr.a4, src, sizeof(src));
		inet_ntop(AF_INET, &p->sel.daddr.a4, dst, sizeof(dst));
		break;
	case AF_INET6:
		fams = FAM_V6;
		inet_ntop(AF_INET6, &p->sel.saddr.a6, src, sizeof(src));
		inet_ntop(AF_INET6, &p->sel.daddr.a6, dst, sizeof(dst));
		break;
	default:
		fams = FAM_BOTH;
		break;
	}
	hold(env, fams, SILO_ENV(XFRM),
	     "xfrm policy dir %s src %s/%u dst %s/%u", xfrm_dir_name(p->dir),
	     src, p->sel.prefixlen_s, dst, p->sel.prefixlen_d);
	return MNL_CB_OK;
}

static int eval_xfrm(struct silo_envelope *env)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	int err;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = XFRM_MSG_GETPOLICY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	err = silo_nl_request(NETLINK_XFRM, nlh, policy_cb, env);
	if (err == -EPROTONOSUPPORT)
		return 0; /* no xfrm_user: no policy could be made */
	return err;
}

/* tc */

/*
 * Forwarding in XDP skips tc: a frame redirected by XDP meets neither the
 * ingress device's tc ingress nor the egress device's qdisc and tc egress.
 * So any tc filter (cls_bpf included), any tcx program, and any qdisc that
 * drops, shapes or delays by its configuration puts both families outside,
 * on whatever device: being conservative costs speed, not correctness. The
 * qdiscs below only queue (and drop when the device's queue is full, as
 * the driver's XDP queue does).
 */
static bool qdisc_queues_only(const char *kind)
{
	/* noop: the qdisc of a device that is down */
	static const char *const kinds[] = {
		"noqueue",  "noop", "pfifo_fast", "pfifo",  "bfifo",
		"fq_codel", "fq",   "fq_pie",	  "sfq",    "mq",
		"mqprio",   "prio", "ingress",	  "clsact",
	};

	return silo_str_in(kind, kinds, ARRAY_SIZE(kinds));
}

/* Where filters may hang: one block per entry, dumped after the qdiscs. */
struct tc_scan {
	struct silo_envelope *env;
	struct tc_block {
		__u32 ifindex, parent;
		const char *dir;
	} * blocks;
	size_t n, cap;
	int err;
	bool filter;
};

static void tc_block(struct tc_scan *t, __u32 ifindex, __u32 parent,
		     const char *dir)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct tc_block *nb;

	if (t->n == t->cap) {
		nb = realloc(t->blocks, cap * sizeof(*nb));
		if (!nb) {
			t->err = -ENOMEM;
			return;
		}
		t->blocks = nb;
		t->cap = cap;
	}
	t->blocks[t->n++] = (struct tc_block){ ifindex, parent, dir };
}

static int qdisc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct tcmsg *tcm = mnl_nlmsg_get_payload(nlh);
	struct tc_scan *t = data;
	char ifname[IF_NAMESIZE] = "?";
	const struct nlattr *a;
	const char *kind = NULL;

	if (nlh->nlmsg_type != RTM_NEWQDISC)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*tcm))
	{
		if (mnl_attr_get_type(a) == TCA_KIND &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			kind = mnl_attr_get_str(a);
	}
	if (!kind)
		return MNL_CB_OK;
	if (!qdisc_queues_only(kind)) {
		if_indextoname(tcm->tcm_ifindex, ifname);
		hold(t->env, FAM_BOTH, SILO_ENV(TC), "tc qdisc %s on %s", kind,
		     ifname);
	} else if (!strcmp(kind, "clsact")) {
		tc_block(t, tcm->tcm_ifindex,
			 TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_INGRESS), "ingress");
		tc_block(t, tcm->tcm_ifindex,
			 TC_H_MAKE(TC_H_CLSACT, TC_H_MIN_EGRESS), "egress");
	} else if (!strcmp(kind, "ingress")) {
		tc_block(t, tcm->tcm_ifindex, tcm->tcm_handle, "ingress");
	} else if (tcm->tcm_handle) {
		/* A classful qdisc's own block (prio, mq). */
		tc_block(t, tcm->tcm_ifindex, tcm->tcm_handle, "egress");
	}
	return MNL_CB_OK;
}

static int filter_cb(const struct nlmsghdr *nlh, void *data)
{
	struct tc_scan *t = data;

	if (nlh->nlmsg_type == RTM_NEWTFILTER)
		t->filter = true;
	return MNL_CB_OK;
}

/* BPF programs attached with tcx (Linux 6.6): no qdisc, no filter. */
#define SILO_BPF_TCX_INGRESS 46
#define SILO_BPF_TCX_EGRESS 47

static void eval_tcx(struct silo_envelope *env)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	__u32 cnt;
	int dir;

	if (!ifs)
		return;
	for (i = ifs; i->if_index; i++)
		for (dir = 0; dir < 2; dir++) {
			cnt = 0;
			/* An older kernel answers EINVAL: no tcx there. */
			if (!bpf_prog_query(i->if_index,
					    dir ? SILO_BPF_TCX_EGRESS :
						  SILO_BPF_TCX_INGRESS,
					    0, NULL, NULL, &cnt) &&
			    cnt)
				hold(env, FAM_BOTH, SILO_ENV(TC),
				     "tcx program on %s %s", i->if_name,
				     dir ? "egress" : "ingress");
		}
	if_freenameindex(ifs);
}

/* A dump of type (RTM_GETQDISC, RTM_GETTFILTER) for ifindex and parent
 * (0, 0: every device's qdiscs). */
static int tc_dump(__u16 type, __u32 ifindex, __u32 parent,
		   int (*cb)(const struct nlmsghdr *nlh, void *data),
		   void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct tcmsg *tcm;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	tcm = mnl_nlmsg_put_extra_header(nlh, sizeof(*tcm));
	tcm->tcm_family = AF_UNSPEC;
	tcm->tcm_ifindex = ifindex;
	tcm->tcm_parent = parent;
	return silo_nl_request(NETLINK_ROUTE, nlh, cb, data);
}

static int eval_tc(struct silo_envelope *env)
{
	struct tc_scan t = { .env = env };
	char ifname[IF_NAMESIZE];
	size_t i;
	int err;

	err = tc_dump(RTM_GETQDISC, 0, 0, qdisc_cb, &t);
	if (!err)
		err = t.err;
	for (i = 0; !err && i < t.n; i++) {
		t.filter = false;
		err = tc_dump(RTM_GETTFILTER, t.blocks[i].ifindex,
			      t.blocks[i].parent, filter_cb, &t);
		/* The device went in between: nothing hangs there now. */
		if (err == -ENODEV || err == -ENOENT)
			err = 0;
		if (!err && t.filter) {
			if (!if_indextoname(t.blocks[i].ifindex, ifname))
				strcpy(ifname, "?");
			hold(env, FAM_BOTH, SILO_ENV(TC), "tc filter on %s %s",
			     ifname, t.blocks[i].dir);
		}
	}
	free(t.blocks);
	if (!err)
		eval_tcx(env);
	return err;
}

/* Sysctls */

static int read_sysctl_uint(const char *path, unsigned long *val)
{
	char buf[32], *end;
	int n;

	n = silo_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	errno = 0;
	*val = strtoul(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

static void eval_forwarding(struct silo_envelope *env)
{
	unsigned long fwd;

	/* IPv4 forwarding is per device, and bpf_fib_lookup checks it. No
	 * file: no IPv6, nothing to forward. */
	if (read_sysctl_uint("/proc/sys/net/ipv6/conf/all/forwarding", &fwd))
		return;
	if (!fwd)
		hold(env, FAM_V6, SILO_ENV(FORWARDING_OFF),
		     "net.ipv6.conf.all.forwarding is 0");
}

/* fib_multipath_hash_fields: the outer header's fields. bpf_fib_lookup
 * hands these to the hash; inner headers (0x0040 and up) it cannot. */
#define MPATH_OUTER_FIELDS 0x003fUL

static void eval_mpath_hash(struct silo_envelope *env)
{
	static const struct {
		const char *policy, *fields, *name;
		unsigned int fams;
	} fams[] = {
		{ "/proc/sys/net/ipv4/fib_multipath_hash_policy",
		  "/proc/sys/net/ipv4/fib_multipath_hash_fields", "ipv4",
		  FAM_V4 },
		{ "/proc/sys/net/ipv6/fib_multipath_hash_policy",
		  "/proc/sys/net/ipv6/fib_multipath_hash_fields", "ipv6",
		  FAM_V6 },
	};
	unsigned long policy, fields;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fams); i++) {
		/* Unreadable: a kernel without multipath routes. */
		if (read_sysctl_uint(fams[i].policy, &policy) || policy != 3)
			continue;
		if (!read_sysctl_uint(fams[i].fields, &fields) &&
		    !(fields & ~MPATH_OUTER_FIELDS))
			continue;
		hold(env, fams[i].fams, SILO_ENV(MPATH_HASH),
		     "net.%s.fib_multipath_hash_policy 3 with inner header fields",
		     fams[i].name);
	}
}

static int eval_rules(struct silo_envelope *env)
{
	int rc = silo_nl_rules_suppress6();

	if (rc > 0)
		hold(env, FAM_V6, SILO_ENV(RULE_SUPPRESS),
		     "an IPv6 rule suppresses results");
	return rc < 0 ? rc : 0;
}

int silo_envelope_eval(struct silo_envelope *env)
{
	static const struct {
		const char *what;
		int (*fn)(struct silo_envelope *env);
	} readers[] = {
		{ "nftables chains", eval_nftables },
		{ "iptables-legacy tables", eval_iptables_legacy },
		{ "xfrm policies", eval_xfrm },
		{ "tc qdiscs and filters", eval_tc },
		{ "policy rules", eval_rules },
	};
	unsigned int i;
	int err, ret = 0;

	memset(env, 0, sizeof(*env));
	for (i = 0; i < ARRAY_SIZE(readers); i++) {
		err = readers[i].fn(env);
		if (!err)
			continue;
		/* What cannot be read might hold: stand aside. The callers
		 * say so (silod would repeat it every second). */
		pr_debug("cannot read the %s: %s\n", readers[i].what,
			 strerror(-err));
		hold(env, FAM_BOTH, SILO_ENV(UNKNOWN), "cannot read the %s: %s",
		     readers[i].what, strerror(-err));
		if (!ret)
			ret = err;
	}
	eval_forwarding(env);
	eval_mpath_hash(env);
	eval_conntrack(env);
	return ret;
}

int silo_envelope_apply(int genid_fd, const struct silo_envelope *env,
			int override, int ct_optin)
{
	struct silo_genid g, old;
	__u32 zero = 0;
	unsigned int f;

	if (bpf_map_lookup_elem(genid_fd, &zero, &g))
		return -errno;
	old = g;
	if (override >= 0)
		g.override = override & SILO_ENV_OVERRIDABLE;
	for (f = 0; f < ARRAY_SIZE(g.outside); f++)
		g.outside[f] = env->holds[f] & ~g.override;
	if (ct_optin >= 0)
		g.ct_optin = !!ct_optin;
	g.ct_fams = silo_envelope_ct_fams(env, g.ct_optin);
	g.ct_flags = env->ct_flags;
	memcpy(g.ct_timeout, env->ct_timeout, sizeof(g.ct_timeout));
	if (!memcmp(g.outside, old.outside, sizeof(g.outside))) {
		if (g.override == old.override && g.ct_optin == old.ct_optin &&
		    g.ct_fams == old.ct_fams && g.ct_flags == old.ct_flags &&
		    !memcmp(g.ct_timeout, old.ct_timeout, sizeof(g.ct_timeout)))
			return 0; /* no write: nothing to race with */
	} else {
		/* Entries made before are not trusted across the change. */
		silo_genid_advance(&g, 1);
	}
	if (bpf_map_update_elem(genid_fd, &zero, &g, BPF_ANY))
		return -errno;
	return 0;
}
