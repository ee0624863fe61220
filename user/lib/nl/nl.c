// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* rtnetlink requests and dumps, through libmnl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/nexthop.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include "../nl.h"

/* Dumps interrupted by a concurrent change (NLM_F_DUMP_INTR) are retried. */
#define NL_DUMP_RETRIES 10

unsigned long silo_nl_dumps_retried;

struct nl_dump {
	bool intr;
	/* The answer's datagrams, kept until it is known to be whole. */
	struct nl_chunk {
		void *buf;
		size_t len;
	} * chunks;
	size_t nr, cap;
};

static int check_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nl_dump *d = data;

	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		d->intr = true;
	return MNL_CB_OK;
}

static int keep_chunk(struct nl_dump *d, const void *buf, size_t len)
{
	struct nl_chunk *c;

	if (d->nr == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;

		c = realloc(d->chunks, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		d->chunks = c;
		d->cap = cap;
	}
	c = &d->chunks[d->nr];
	c->buf = malloc(len);
	if (!c->buf)
		return -ENOMEM;
	memcpy(c->buf, buf, len);
	c->len = len;
	d->nr++;
	return 0;
}

static void drop_chunks(struct nl_dump *d)
{
	while (d->nr)
		free(d->chunks[--d->nr].buf);
}

static int cb_error(void)
{
	return errno ? -errno : -EIO;
}

/*
 * Sends req (a dump or a single request) on a socket of protocol and runs
 * cb on every answer. cb sees only a whole, consistent answer: a dump interrupted by a concurrent
 * change (NLM_F_DUMP_INTR) is read to its end, dropped and run again; one
 * still inconsistent after NL_DUMP_RETRIES tries fails with -EAGAIN, and cb
 * has then seen nothing (partial data would pass for the whole state).
 */
int silo_nl_request(int protocol, struct nlmsghdr *req,
		    int (*cb)(const struct nlmsghdr *nlh, void *data),
		    void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE * 4];
	struct nl_dump d = {};
	struct mnl_socket *nl;
	unsigned int portid, seq;
	int ret, tries = 0;
	size_t i;

	nl = mnl_socket_open2(protocol, SOCK_CLOEXEC);
	if (!nl)
		return -errno;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out_close;
	}
	portid = mnl_socket_get_portid(nl);
	/* A single answer ends with the ack; a dump with NLMSG_DONE. */
	if (!(req->nlmsg_flags & NLM_F_DUMP))
		req->nlmsg_flags |= NLM_F_ACK;
again:
	seq = req->nlmsg_seq = time(NULL) + tries;
	d.intr = false;
	drop_chunks(&d);
	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0) {
		ret = -errno;
		goto out_free;
	}
	do {
		ret = mnl_socket_recvfrom(nl, buf, sizeof(buf));
		if (ret < 0) {
			ret = -errno;
			goto out_free;
		}
		if (keep_chunk(&d, buf, ret)) {
			ret = -ENOMEM;
			goto out_free;
		}
		errno = 0;
		ret = mnl_cb_run(buf, ret, seq, portid, check_cb, &d);
	} while (ret > 0);
	if (ret < 0) {
		ret = cb_error();
		goto out_free;
	}
	if (d.intr) {
		if (++tries >= NL_DUMP_RETRIES) {
			ret = -EAGAIN;
			goto out_free;
		}
		__atomic_add_fetch(&silo_nl_dumps_retried, 1, __ATOMIC_RELAXED);
		goto again;
	}
	/* Whole: now the caller sees it. */
	for (i = 0, ret = MNL_CB_OK; i < d.nr && ret > 0; i++) {
		errno = 0;
		ret = mnl_cb_run(d.chunks[i].buf, d.chunks[i].len, seq, portid,
				 cb, data);
	}
	ret = ret < 0 ? cb_error() : 0;
out_free:
	drop_chunks(&d);
	free(d.chunks);
out_close:
	mnl_socket_close(nl);
	return ret;
}

struct attr_table {
	const struct nlattr **tb;
	int max;
};

static int attr_table_cb(const struct nlattr *attr, void *data)
{
	struct attr_table *t = data;

	if (mnl_attr_type_valid(attr, t->max) < 0)
		return MNL_CB_OK;
	t->tb[mnl_attr_get_type(attr)] = attr;
	return MNL_CB_OK;
}

void silo_nl_attrs(const struct nlmsghdr *nlh, size_t hdrlen,
		   const struct nlattr **tb, int max)
{
	struct attr_table t = { .tb = tb, .max = max };

	mnl_attr_parse(nlh, hdrlen, attr_table_cb, &t);
}

static int nl_request(struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
	return silo_nl_request(NETLINK_ROUTE, req, cb, data);
}

struct addr_dump {
	silo_nl_addr_fn fn;
	void *ctx;
	int err;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFA_MAX + 1] = {};
	struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
	struct addr_dump *d = data;
	struct silo_nl_addr a = {};
	const struct nlattr *attr;
	size_t len;

	if (nlh->nlmsg_type != RTM_NEWADDR)
		return MNL_CB_OK;
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return MNL_CB_OK;
	silo_nl_attrs(nlh, sizeof(*ifa), tb, IFA_MAX);
	/* On point-to-point links IFA_ADDRESS is the peer's. */
	attr = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (!attr)
		return MNL_CB_OK;
	len = ifa->ifa_family == AF_INET ? 4 : 16;
	if (mnl_attr_get_payload_len(attr) < len)
		return MNL_CB_OK;
	a.family = ifa->ifa_family;
	a.ifindex = ifa->ifa_index;
	a.prefixlen = ifa->ifa_prefixlen;
	a.scope = ifa->ifa_scope;
	memcpy(a.addr, mnl_attr_get_payload(attr), len);
	d->err = d->fn(&a, d->ctx);
	return d->err ? MNL_CB_ERROR : MNL_CB_OK;
}

int silo_nl_dump_addrs(silo_nl_addr_fn fn, void *ctx)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct addr_dump d = { .fn = fn, .ctx = ctx };
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;
	int err;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = AF_UNSPEC;
	err = nl_request(nlh, addr_cb, &d);
	return d.err ? d.err : err;
}

static int linkinfo_attr_cb(const struct nlattr *attr, void *data)
{
	struct silo_nl_link *l = data;

	char *to = mnl_attr_get_type(attr) == IFLA_INFO_SLAVE_KIND ?
			   l->slave_kind :
		   mnl_attr_get_type(attr) == IFLA_INFO_KIND ? l->kind :
							       NULL;

	/* Both the same size: a string of the attribute's length. */
	if (to)
		snprintf(to, sizeof(l->kind), "%.*s",
			 (int)mnl_attr_get_payload_len(attr),
			 (const char *)mnl_attr_get_payload(attr));
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = {};
	struct silo_nl_link *l = data;

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	silo_nl_attrs(nlh, sizeof(struct ifinfomsg), tb, IFLA_MAX);
	if (tb[IFLA_ADDRESS] &&
	    mnl_attr_get_payload_len(tb[IFLA_ADDRESS]) == 6) {
		memcpy(l->mac, mnl_attr_get_payload(tb[IFLA_ADDRESS]), 6);
		l->has_mac = true;
	}
	if (tb[IFLA_MASTER])
		l->master = mnl_attr_get_u32(tb[IFLA_MASTER]);
	if (tb[IFLA_MTU])
		l->mtu = mnl_attr_get_u32(tb[IFLA_MTU]);
	if (tb[IFLA_MAX_MTU])
		l->max_mtu = mnl_attr_get_u32(tb[IFLA_MAX_MTU]);
	if (tb[IFLA_NUM_RX_QUEUES])
		l->rx_queues = mnl_attr_get_u32(tb[IFLA_NUM_RX_QUEUES]);
	if (tb[IFLA_LINK])
		l->link = mnl_attr_get_u32(tb[IFLA_LINK]);
	if (tb[IFLA_LINK_NETNSID])
		l->link_netnsid =
			(__s32)mnl_attr_get_u32(tb[IFLA_LINK_NETNSID]);
	if (tb[IFLA_LINKINFO])
		mnl_attr_parse_nested(tb[IFLA_LINKINFO], linkinfo_attr_cb, l);
	return MNL_CB_OK;
}

int silo_nl_link_in(__s32 netnsid, __u32 ifindex, struct silo_nl_link *l)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int err;

	memset(l, 0, sizeof(*l));
	l->link_netnsid = -1;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (netnsid >= 0)
		mnl_attr_put_u32(nlh, IFLA_TARGET_NETNSID, netnsid);
	err = nl_request(nlh, link_cb, l);
	if (err)
		return err;
	return l->has_mac ? 0 : -EOPNOTSUPP;
}

int silo_nl_link(__u32 ifindex, struct silo_nl_link *l)
{
	return silo_nl_link_in(-1, ifindex, l);
}

static int nexthop_attr_cb(const struct nlattr *attr, void *data)
{
	if (mnl_attr_get_type(attr) == NHA_GROUP)
		*(bool *)data = true;
	return MNL_CB_OK;
}

static int nexthop_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nlh->nlmsg_type == RTM_NEWNEXTHOP)
		mnl_attr_parse(nlh, sizeof(struct nhmsg), nexthop_attr_cb,
			       data);
	return MNL_CB_OK;
}

int silo_nl_nexthop_groups(void)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nhmsg *nhm;
	bool group = false;
	int err;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETNEXTHOP;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nhm = mnl_nlmsg_put_extra_header(nlh, sizeof(*nhm));
	nhm->nh_family = AF_UNSPEC;
	err = nl_request(nlh, nexthop_cb, &group);
	/* A kernel without nexthop objects has no group. */
	if (err == -EOPNOTSUPP)
		return 0;
	return err ? err : group;
}

static int rule_attr_cb(const struct nlattr *attr, void *data)
{
	__u32 *flags = data;

	switch (mnl_attr_get_type(attr)) {
	case FRA_IP_PROTO:
	case FRA_SPORT_RANGE:
	case FRA_DPORT_RANGE:
		*flags |= SILO_GENID_RULES_L4;
		break;
	}
	return MNL_CB_OK;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
	struct fib_rule_hdr *frh = mnl_nlmsg_get_payload(nlh);
	__u32 *flags = data;

	if (nlh->nlmsg_type != RTM_NEWRULE)
		return MNL_CB_OK;
	if (frh->src_len && frh->family == AF_INET)
		*flags |= SILO_GENID_RULES_SRC_V4;
	else if (frh->src_len && frh->family == AF_INET6)
		*flags |= SILO_GENID_RULES_SRC_V6;
	mnl_attr_parse(nlh, sizeof(*frh), rule_attr_cb, data);
	return MNL_CB_OK;
}

int silo_nl_dump_rules(int family, int (*cb)(const struct nlmsghdr *, void *),
		       void *data)
{
	static const int families[] = { AF_INET, AF_INET6 };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct fib_rule_hdr *frh;
	struct nlmsghdr *nlh;
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(families); i++) {
		if (family != AF_UNSPEC && family != families[i])
			continue;
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETRULE;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
		frh->family = families[i];
		err = nl_request(nlh, cb, data);
		if (err)
			return err;
	}
	return 0;
}

int silo_nl_rules_keys(__u32 *flags)
{
	*flags = 0;
	return silo_nl_dump_rules(AF_UNSPEC, rule_cb, flags);
}
