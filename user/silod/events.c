// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink notifications (libmnl) into a burst of work: prefixes and
 * neighbours to sweep, or a global bump for what cannot be scoped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include "silod.h"

/* include/net/neighbour.h: states in which the MAC may be used. */
#define NUD_VALID                                                            \
	(NUD_PERMANENT | NUD_NOARP | NUD_REACHABLE | NUD_PROBE | NUD_STALE | \
	 NUD_DELAY)

#ifndef RTNLGRP_NEXTHOP
#define RTNLGRP_NEXTHOP 32
#endif
#ifndef RTM_NEWNEXTHOP
#define RTM_NEWNEXTHOP 104
#define RTM_DELNEXTHOP 105
#endif

static const unsigned int groups[] = {
	RTNLGRP_LINK,	      RTNLGRP_NEIGH,	 RTNLGRP_IPV4_IFADDR,
	RTNLGRP_IPV4_ROUTE,   RTNLGRP_IPV4_RULE, RTNLGRP_IPV6_IFADDR,
	RTNLGRP_IPV6_ROUTE,   RTNLGRP_IPV6_RULE, RTNLGRP_IPV4_NETCONF,
	RTNLGRP_IPV6_NETCONF, RTNLGRP_NEXTHOP,
};

int nl_events_open(int rcvbuf)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK };
	unsigned int i;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	/* Large, past rmem_max: a burst of changes must fit. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
		       sizeof(rcvbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		pr_warn("cannot set the netlink receive buffer: %s\n",
			strerror(errno));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = -errno;
		pr_err("cannot bind a netlink socket: %s\n", strerror(-err));
		close(fd);
		return err;
	}
	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &groups[i], sizeof(groups[i]))) {
			err = -errno;
			/* Older kernels lack some groups (nexthops). */
			if (err == -EINVAL)
				continue;
			pr_err("cannot join rtnetlink group %u: %s\n",
			       groups[i], strerror(-err));
			close(fd);
			return err;
		}
	}
	return fd;
}

static int route_cb(const struct nlmsghdr *nlh, struct burst *b)
{
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct prefix p = { .len = rtm->rtm_dst_len };
	const struct nlattr *attr;
	size_t len;

	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return 0;
	p.family = rtm->rtm_family == AF_INET ? SILO_AF_INET : SILO_AF_INET6;
	len = rtm->rtm_family == AF_INET ? 4 : 16;
	if (p.len > len * 8)
		return 0;
	/* Routes through nexthop objects are scoped too: a change of the
	 * object itself comes as RTM_NEWNEXTHOP, which bumps genid. */
	mnl_attr_for_each(attr, nlh, sizeof(*rtm))
	{
		if (mnl_attr_get_type(attr) == RTA_DST &&
		    mnl_attr_get_payload_len(attr) >= len)
			memcpy(p.addr, mnl_attr_get_payload(attr), len);
	}
	return work_add_prefix(&b->work, &p);
}

/* Does a route message carry an MTU (RTA_METRICS, RTAX_MTU)? */
static bool route_has_mtu(const struct nlmsghdr *nlh)
{
	const struct nlattr *attr, *m;

	mnl_attr_for_each(attr, nlh, sizeof(struct rtmsg))
	{
		if (mnl_attr_get_type(attr) != RTA_METRICS)
			continue;
		mnl_attr_for_each_nested(m, attr)
		{
			if (mnl_attr_get_type(m) == RTAX_MTU)
				return true;
		}
	}
	return false;
}

/* An IPv4 route whose sources the source check may refuse: src_checked
 * holds its prefix (every such route is announced when it comes; one that
 * goes unannounced only leaves a prefix that costs a lookup). */
static bool route_refuses_srcs(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	return rtm->rtm_family == AF_INET &&
	       silo_nl_route_refuses_srcs(rtm->rtm_type);
}

/* The route's table (past 255, rtm_table says RT_TABLE_COMPAT). */
static __u32 route_table(const struct nlmsghdr *nlh)
{
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;

	mnl_attr_for_each(attr, nlh, sizeof(*rtm))
	{
		if (mnl_attr_get_type(attr) == RTA_TABLE &&
		    mnl_attr_get_payload_len(attr) >= sizeof(__u32))
			return mnl_attr_get_u32(attr);
	}
	return rtm->rtm_table;
}

/* A route of the local table, which every rule walk looks in first, or of
 * a table a rule before main's looks every packet up in (as the last sync
 * read them; while unknown, any but main's): direct_skip holds its prefix,
 * or one that holds it. Other tables' routes (a VRF's) cost no walk. */
static bool route_in_direct_table(const struct silod *d,
				  const struct nlmsghdr *nlh)
{
	__u32 table = route_table(nlh);
	int i;

	if (table == RT_TABLE_LOCAL)
		return true;
	if (d->nr_dtables < 0)
		return table != RT_TABLE_MAIN;
	for (i = 0; i < d->nr_dtables; i++)
		if (d->dtables[i] == table)
			return true;
	return false;
}

static __u32 genid_flags(struct silod *d)
{
	struct silo_genid g;
	__u32 zero = 0;

	/* Unreadable: as if nothing were set, which recounts. */
	if (bpf_map_lookup_elem(d->maps.fd[SILO_MAP_GENID], &zero, &g))
		return 0;
	return g.flags;
}

/*
 * A route that makes a key field matter (multipath, through a nexthop
 * group, IPv6 "from") while its flag is off: recount in this burst, before
 * its invalidation, so no answer keyed without the field is used. Only
 * such routes cost a dump. What can only make a field stop mattering (a
 * deletion, a replace: the kernel names what went only in part, e.g. one
 * nexthop of an IPv6 multipath route) waits for config_poll.
 */
static void route_keys(struct silod *d, const struct nlmsghdr *nlh,
		       struct burst *b)
{
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	__u32 need = 0, mpath;

	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return;
	if (nlh->nlmsg_type == RTM_DELROUTE ||
	    (nlh->nlmsg_flags & NLM_F_REPLACE))
		d->routes_lazy = true;
	if (nlh->nlmsg_type == RTM_DELROUTE || b->routes)
		return;
	mpath = rtm->rtm_family == AF_INET ? SILO_GENID_MPATH_V4 :
					     SILO_GENID_MPATH_V6;
	if (rtm->rtm_family == AF_INET6 && rtm->rtm_src_len)
		need |= SILO_GENID_SRC_ROUTES_V6;
	mnl_attr_for_each(attr, nlh, sizeof(*rtm))
	{
		if (mnl_attr_get_type(attr) == RTA_MULTIPATH ||
		    (mnl_attr_get_type(attr) == RTA_NH_ID && d->nh_groups))
			need |= mpath;
	}
	if (need && (need & ~genid_flags(d)))
		b->routes = true;
}

/* A new or changed nexthop group: its routes are multipath now. */
static void nexthop_keys(struct silod *d, const struct nlmsghdr *nlh,
			 struct burst *b)
{
	const __u32 mpath = SILO_GENID_MPATH_V4 | SILO_GENID_MPATH_V6;
	const struct nlattr *attr;

	if (nlh->nlmsg_type == RTM_DELNEXTHOP) {
		d->routes_lazy = d->nh_lazy = true;
		return;
	}
	mnl_attr_for_each(attr, nlh, sizeof(struct nhmsg))
	{
		if (mnl_attr_get_type(attr) != NHA_GROUP)
			continue;
		d->nh_groups = true;
		if (!b->routes && (genid_flags(d) & mpath) != mpath)
			b->routes = true;
		return;
	}
}

/*
 * The state of each neighbour as its last message said, for neigh_cb: a
 * message that says it is usable with the MAC it had is dropped, since a
 * sweep removes only entries whose neighbour became unusable or whose MAC
 * differs from the new one, and every entry filled since that earlier
 * message holds its MAC (a change in between comes as a message of its
 * own, compared here one by one, before a burst folds them), while those
 * filled before were swept for it (or the message is still in the burst).
 * Neighbours that go through REACHABLE, STALE, DELAY and PROBE with one
 * MAC then cost no walk of the caches. Direct-mapped: a neighbour that
 * loses its slot is swept for next time. Forgotten when messages are lost
 * and at every resync (neigh_seen_reset).
 */
#define NSEEN_SLOTS 4096

static struct nseen {
	struct neigh n;
	bool used;
} nseen[NSEEN_SLOTS];

void neigh_seen_reset(void)
{
	memset(nseen, 0, sizeof(nseen));
}

/* True when n says nothing a sweep would act on; records n either way. */
static bool neigh_seen(const struct neigh *n)
{
	const __u8 *p = (const __u8 *)n->addr;
	size_t h = 14695981039346656037ULL ^ n->ifindex ^ n->family << 24;
	struct nseen *s;
	bool same;
	int i;

	for (i = 0; i < 16; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	s = &nseen[(h ^ h >> 32) & (NSEEN_SLOTS - 1)];
	same = s->used && s->n.ifindex == n->ifindex &&
	       s->n.family == n->family && !memcmp(s->n.addr, n->addr, 16) &&
	       s->n.usable && n->usable && !memcmp(s->n.lladdr, n->lladdr, 6);
	s->n = *n;
	s->used = true;
	return same;
}

static int neigh_cb(const struct nlmsghdr *nlh, struct burst *b)
{
	struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct neigh n = { .ifindex = ndm->ndm_ifindex };
	const struct nlattr *attr;
	size_t len;
	bool has_dst = false;

	if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6)
		return 0; /* bridge FDB and others */
	len = ndm->ndm_family == AF_INET ? 4 : 16;
	n.family = ndm->ndm_family == AF_INET ? SILO_AF_INET : SILO_AF_INET6;
	n.usable =
		nlh->nlmsg_type == RTM_NEWNEIGH && (ndm->ndm_state & NUD_VALID);
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		switch (mnl_attr_get_type(attr)) {
		case NDA_DST:
			if (mnl_attr_get_payload_len(attr) >= len) {
				memcpy(n.addr, mnl_attr_get_payload(attr), len);
				has_dst = true;
			}
			break;
		case NDA_LLADDR:
			if (mnl_attr_get_payload_len(attr) == 6)
				memcpy(n.lladdr, mnl_attr_get_payload(attr), 6);
			break;
		}
	}
	if (!has_dst || neigh_seen(&n))
		return 0;
	return work_add_neigh(&b->work, &n);
}

static int event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct silod *d = ((void **)data)[0];
	struct burst *b = ((void **)data)[1];

	b->messages++;
	switch (nlh->nlmsg_type) {
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		DSTAT_ADD(d, events_route, 1);
		if (route_has_mtu(nlh))
			b->route_mtu = true;
		if (route_refuses_srcs(nlh))
			b->srcs = true;
		if (route_in_direct_table(d, nlh))
			b->direct = true;
		route_keys(d, nlh, b);
		if (d->cfg.global)
			b->route_bumps++;
		else if (route_cb(nlh, b))
			b->bump = true; /* out of memory: be safe */
		break;
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH:
		DSTAT_ADD(d, events_neigh, 1);
		if (neigh_cb(nlh, b))
			b->bump = true;
		break;
	case RTM_NEWRULE:
	case RTM_DELRULE:
		DSTAT_ADD(d, events_rule, 1);
		b->bump = b->rules = true;
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		DSTAT_ADD(d, events_addr, 1);
		b->bump = b->addrs = true;
		/* Routes go with addresses and links, unannounced. */
		d->routes_lazy = true;
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK:
		DSTAT_ADD(d, events_link, 1);
		/* A declared device may have come (silo.conf) */
		d->rec.links |= nlh->nlmsg_type == RTM_NEWLINK;
		b->bump = b->devices = true;
		d->routes_lazy = true;
		break;
	case RTM_NEWNEXTHOP:
	case RTM_DELNEXTHOP:
		DSTAT_ADD(d, events_nexthop, 1);
		b->bump = true;
		nexthop_keys(d, nlh, b);
		break;
	case RTM_NEWNETCONF:
	case RTM_DELNETCONF:
		/* forwarding and rp_filter: both change verdicts */
		DSTAT_ADD(d, events_netconf, 1);
		b->bump = b->devices = true;
		break;
	default:
		b->messages--;
		break;
	}
	return MNL_CB_OK;
}

/* Messages were lost: only a resync is exact. */
static void messages_lost(struct silod *d, struct burst *b)
{
	neigh_seen_reset(); /* a change may be among the lost */
	DSTAT_ADD(d, overruns, 1);
	b->resync = true;
}

int nl_events_drain(struct silod *d, struct burst *b)
{
	void *data[2] = { d, b };
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int overrun = 0;
	ssize_t n;

	if (!d->rx_buf) {
		const char *env = getenv("SILOD_TEST_RECV_BUF");

		/* Tests: a small start, to see a truncated read. */
		d->rx_len = env ? strtoul(env, NULL, 10) : 0;
		if (d->rx_len < 64)
			d->rx_len = MNL_SOCKET_BUFFER_SIZE * 4;
		d->rx_buf = malloc(d->rx_len);
		if (!d->rx_buf)
			return -ENOMEM;
	}
	for (;;) {
		iov.iov_base = d->rx_buf;
		iov.iov_len = d->rx_len;
		/* MSG_TRUNC: the datagram's real length, even when larger. */
		n = recvmsg(d->nl_fd, &msg, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			if (errno == ENOBUFS) {
				messages_lost(d, b);
				overrun = -ENOBUFS;
				continue;
			}
			return -errno;
		}
		if ((msg.msg_flags & MSG_TRUNC) || (size_t)n > d->rx_len) {
			/* Its tail is gone: lost, and room for the next. */
			void *p = malloc(n);

			messages_lost(d, b);
			overrun = -ENOBUFS;
			if (p) {
				free(d->rx_buf);
				d->rx_buf = p;
				d->rx_len = n;
			}
			continue;
		}
		/* Notifications: any sequence number, from the kernel. A
		 * message it cannot parse hides those after it. */
		if (mnl_cb_run(d->rx_buf, n, 0, 0, event_cb, data) < 0) {
			messages_lost(d, b);
			overrun = -ENOBUFS;
		}
	}
	return overrun;
}
