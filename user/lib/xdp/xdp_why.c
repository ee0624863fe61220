// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Why attaching silo's program to a device failed, told from the device's
 * state rather than from the errno alone: one cause is ERANGE on veth,
 * EINVAL on i40e and EOPNOTSUPP on ice, and the attach of an XDP link
 * carries no extended ack. The device's kind, MTU, RX queues and XDP
 * features (netdev netlink) say the cause; the sentence says the fix. And
 * what a replace in place leaves: a veth peer's MTU cap.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "../ethtool.h"
#include "../nl.h"
#include "xdp.h"

/* A driver whose XDP takes no multi-buffer frame (no rx-sg) runs a
 * program only while a frame fits one page: about this MTU on 4 KiB pages
 * (veth: a page less headroom and shared info, less the Ethernet header). */
#define PAGE_FIT_MTU 3498

int silo_xdp_dev_state_get(__u32 ifindex, struct silo_xdp_dev_state *st)
{
	struct silo_nl_link link;
	struct silo_netdev nd;
	int err;

	memset(st, 0, sizeof(*st));
	err = silo_nl_link(ifindex, &link);
	if (err && err != -EOPNOTSUPP) /* no MAC: still a device */
		return err;
	snprintf(st->kind, sizeof(st->kind), "%s", link.kind);
	st->mtu = link.mtu;
	st->rx_queues = link.rx_queues;
	if (!silo_netdev_get(ifindex, &nd) && nd.known) {
		st->known = true;
		st->xdp_features = nd.xdp_features;
	}
	return 0;
}

void silo_xdp_why(const char *dev, bool native, int err,
		  const struct silo_xdp_dev_state *st, char *buf, size_t len)
{
	bool veth = !strcmp(st->kind, "veth");
	bool no_sg =
		st->known && !(st->xdp_features & SILO_NETDEV_XDP_ACT_RX_SG);

	if (err == -EBUSY || err == -EEXIST)
		snprintf(
			buf, len,
			"%s already has an XDP program in another mode: see 'ip link show dev %s'",
			dev, dev);
	else if (!native)
		snprintf(buf, len, "cannot attach to %s: %s", dev,
			 strerror(-err));
	else if (veth && err == -ENOSPC)
		snprintf(
			buf, len,
			"%s has %u RX queues, fewer than its veth peer has TX queues, and XDP on a veth needs at least as many: make the pair again with as many (ip link add ... numrxqueues N numtxqueues N type veth peer ... numrxqueues N numtxqueues N), or load with --mode skb",
			dev, st->rx_queues);
	else if (veth && err == -ENOTCONN)
		snprintf(
			buf, len,
			"%s is a veth whose peer is gone: XDP runs on a veth only with both ends; make the pair again",
			dev);
	else if (veth && err == -ERANGE)
		snprintf(
			buf, len,
			"the peer of veth %s has an MTU above what XDP on %s takes: lower the peer's MTU, or load with --mode skb",
			dev, dev);
	else if (st->known && !(st->xdp_features & SILO_NETDEV_XDP_ACT_BASIC))
		snprintf(
			buf, len,
			"%s's driver has no native XDP (its XDP features are empty): load with --mode skb",
			dev);
	else if (no_sg && st->mtu > PAGE_FIT_MTU &&
		 (err == -EINVAL || err == -EOPNOTSUPP || err == -ERANGE))
		snprintf(
			buf, len,
			"%s's MTU %u is above what its driver's native XDP takes: a frame must fit one page (its XDP features lack rx-sg): lower the MTU (ip link set dev %s mtu %u), or load with --mode skb",
			dev, st->mtu, dev, PAGE_FIT_MTU);
	else if (err == -EOPNOTSUPP)
		snprintf(buf, len,
			 "%s has no native XDP support: load with --mode skb",
			 dev);
	else
		snprintf(buf, len, "cannot attach to %s: %s", dev,
			 strerror(-err));
}

int silo_xdp_attach_error(const char *dev, __u32 ifindex, bool native, int err)
{
	struct silo_xdp_dev_state st;
	char why[512];

	if (silo_xdp_dev_state_get(ifindex, &st))
		memset(&st, 0, sizeof(st));
	silo_xdp_why(dev, native, err, &st, why, sizeof(why));
	pr_err("%s\n", why);
	return err;
}

void silo_xdp_peer_cap(const char *dev, __u32 ifindex)
{
	struct silo_nl_link l, peer;

	if (silo_nl_link(ifindex, &l) || strcmp(l.kind, "veth") || !l.link ||
	    silo_nl_link_in(l.link_netnsid, l.link, &peer))
		return;
	/* A page's worth, where a veth without such a program allows 64 KiB. */
	if (!peer.max_mtu || peer.max_mtu >= 4096)
		return;
	pr_warn("the peer of veth %s keeps the MTU cap of %u that the program replaced set (it took frames of one page only; a veth sets the cap when a program is first attached): to raise the peer's MTU above it, run 'silo xdp unload %s' and load again\n",
		dev, peer.max_mtu, dev);
}
