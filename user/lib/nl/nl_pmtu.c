// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What the PMTU watch reads (user/silod/pmtu.c): from rtnetlink every
 * device of the namespace with its kind, and the PMTU exceptions the
 * kernel holds (RTM_F_CLONED: "ip route show cache table all"); from
 * sysctls a device's mtu6 and how long an exception lives.
 */
#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include "../nl.h"
#include "../util.h"

struct link_dump {
	silo_nl_dev_fn fn;
	void *ctx;
	int err;
};

static int dev_kind_cb(const struct nlattr *attr, void *data)
{
	struct silo_nl_dev *dev = data;

	if (mnl_attr_get_type(attr) == IFLA_INFO_KIND)
		snprintf(dev->kind, sizeof(dev->kind), "%.*s",
			 (int)mnl_attr_get_payload_len(attr),
			 (const char *)mnl_attr_get_payload(attr));
	return MNL_CB_OK;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[IFLA_MAX + 1] = {};
	struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct link_dump *d = data;
	struct silo_nl_dev dev = {};

	if (nlh->nlmsg_type != RTM_NEWLINK)
		return MNL_CB_OK;
	silo_nl_attrs(nlh, sizeof(*ifi), tb, IFLA_MAX);
	dev.ifindex = ifi->ifi_index;
	dev.flags = ifi->ifi_flags;
	if (tb[IFLA_IFNAME])
		snprintf(dev.name, sizeof(dev.name), "%s",
			 mnl_attr_get_str(tb[IFLA_IFNAME]));
	if (tb[IFLA_LINKINFO])
		mnl_attr_parse_nested(tb[IFLA_LINKINFO], dev_kind_cb, &dev);
	d->err = d->fn(&dev, d->ctx);
	return d->err ? MNL_CB_ERROR : MNL_CB_OK;
}

int silo_nl_dump_devs(silo_nl_dev_fn fn, void *ctx)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct link_dump d = { .fn = fn, .ctx = ctx };
	struct ifinfomsg *ifi;
	struct nlmsghdr *nlh;
	int err;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	err = silo_nl_request(NETLINK_ROUTE, nlh, dev_cb, &d);
	return d.err ? d.err : err;
}

struct exc_dump {
	silo_nl_exc_fn fn;
	void *ctx;
	int err;
};

/* The dump holds the routes too: an exception is a clone of one. */
static int exc_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[RTA_MAX + 1] = {};
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct exc_dump *d = data;
	struct silo_addr a = {};
	size_t len;

	if (nlh->nlmsg_type != RTM_NEWROUTE || !(rtm->rtm_flags & RTM_F_CLONED))
		return MNL_CB_OK;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return MNL_CB_OK;
	silo_nl_attrs(nlh, sizeof(*rtm), tb, RTA_MAX);
	len = rtm->rtm_family == AF_INET ? 4 : 16;
	if (!tb[RTA_DST] || mnl_attr_get_payload_len(tb[RTA_DST]) < len)
		return MNL_CB_OK;
	a.family = rtm->rtm_family;
	memcpy(a.addr, mnl_attr_get_payload(tb[RTA_DST]), len);
	d->err = d->fn(&a, d->ctx);
	return d->err ? MNL_CB_ERROR : MNL_CB_OK;
}

int silo_nl_dump_exceptions(int family, silo_nl_exc_fn fn, void *ctx)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct exc_dump d = { .fn = fn, .ctx = ctx };
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	int err;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = family;
	rtm->rtm_flags = RTM_F_CLONED; /* every table: rtm_table 0 */
	err = silo_nl_request(NETLINK_ROUTE, nlh, exc_cb, &d);
	return d.err ? d.err : err;
}

int silo_dev_mtu6(const char *name, int *mtu6)
{
	char path[96];

	if (snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/mtu",
		     name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	*mtu6 = 0;
	return silo_read_sysctl_int(path, mtu6);
}

bool silo_pmtu_expires_ok(int family)
{
	int secs = -1;

	if (silo_read_sysctl_int(
		    family == AF_INET ? "/proc/sys/net/ipv4/route/mtu_expires" :
					"/proc/sys/net/ipv6/route/mtu_expires",
		    &secs))
		return false;
	return secs >= 0 && secs <= SILO_PMTU_EXPIRES_MAX;
}
