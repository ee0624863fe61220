// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The devices map: each device's record (what the data path needs of it as
 * an ingress and as an egress) and, from it, its tx_ports entry.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <linux/rtnetlink.h>
#include "ethtool.h"
#include "maps.h"
#include "nl.h"
#include "util.h"

/* Stops the dump (returns 1) at an IPv4 address of ifindex *ctx. */
static int find_v4_addr(const struct silo_nl_addr *a, void *ctx)
{
	return a->family == AF_INET && a->ifindex == *(__u32 *)ctx;
}

/* conf/all and conf/DEV of an IPv4 sysctl, or -1 where unreadable. */
static void read_conf(const char *ifname, const char *name, int *all, int *one)
{
	char path[128];

	*all = *one = -1;
	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/all/%s", name);
	silo_read_sysctl_int(path, all);
	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/%s", ifname,
		 name);
	silo_read_sysctl_int(path, one);
}

/* What the data path reads of a device record per packet, or not at all:
 * no cached answer depends on these, so a change of them alone bumps no
 * genid. */
#define DEV_F_UNCACHED \
	(SILO_DEV_F_XMIT | SILO_DEV_F_XMIT_SG | SILO_DEV_F_EGRESS)

int silo_sync_tx_port(int map_fd, int tx_fd, __u32 ifindex)
{
	struct silo_device dev;
	bool want;

	if (bpf_map_lookup_elem(map_fd, &ifindex, &dev))
		return -errno;
	want = (dev.flags & SILO_DEV_F_EGRESS) && (dev.flags & SILO_DEV_F_XMIT);
	if (want && bpf_map_update_elem(tx_fd, &ifindex, &ifindex, BPF_ANY))
		return -errno;
	if (!want && bpf_map_delete_elem(tx_fd, &ifindex) && errno != ENOENT)
		return -errno;
	return 0;
}

/* Device kinds whose frames come from a sender on this host, which may
 * leave a checksum to offload (SILO_DEV_F_LOCAL_TX). */
bool silo_kind_local_tx(const char *kind)
{
	static const char *const kinds[] = { "veth",	"tun",	   "netkit",
					     "macvlan", "macvtap", "ipvlan",
					     "ipvtap" };
	unsigned int i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/*
 * Of those, the kinds whose native XDP redirects every frame as bytes
 * (an xdp_frame): a checksum finished in XDP is then what leaves. A veth
 * runs XDP on its peer's skb and redirects an xdp_frame made of it. A tap
 * runs its native program on an skb wherever it builds one first (a
 * blocking writer, a frame for segmentation, a full page): redirected,
 * that skb keeps CHECKSUM_PARTIAL, and the device that sends it would sum
 * a finished field again (tests/xdp_tap.c). The others have no native XDP.
 */
bool silo_kind_csum_finish(const char *kind)
{
	return !strcmp(kind, "veth");
}

int silo_fill_device(int map_fd, int genid_fd, int tx_fd, __u32 ifindex)
{
	struct silo_device dev = { .rp_ifindex = 1 /* loopback */ }, old;
	struct silo_nl_link link;
	char ifname[IF_NAMESIZE];
	int all, one, err;
	__u32 idx = ifindex, port;
	bool had;

	err = silo_nl_link(ifindex, &link);
	if (err) {
		pr_err("cannot read the MAC address of ifindex %u: %s\n",
		       ifindex, strerror(-err));
		return err;
	}
	memcpy(dev.mac, link.mac, sizeof(dev.mac));
	/* A port of a bridge or bond is not an IP interface; a VRF port is,
	 * and the kernel's source check looks up in its VRF. */
	if (link.master && !strcmp(link.slave_kind, "vrf"))
		dev.rp_ifindex = link.master;
	else if (link.master)
		dev.flags |= SILO_DEV_F_PORT;
	if (silo_kind_local_tx(link.kind))
		dev.flags |= SILO_DEV_F_LOCAL_TX;
	if (!if_indextoname(ifindex, ifname))
		return -ENODEV;
	/* The kernel uses the larger of conf/all and conf/DEV ... */
	read_conf(ifname, "rp_filter", &all, &one);
	one = all > one ? all : one;
	/* Unreadable: strict, which sends more to the stack, never less. */
	dev.rp_filter = one < 0 ? 1 : one;
	/* ... and either of them for accept_local. Unreadable: the safe
	 * answer, which is off. */
	read_conf(ifname, "accept_local", &all, &one);
	if (all > 0 || one > 0)
		dev.flags |= SILO_DEV_F_ACCEPT_LOCAL;
	err = silo_nl_dump_addrs(find_v4_addr, &idx);
	if (err < 0)
		return err;
	if (err == 0)
		dev.flags |= SILO_DEV_F_NO_V4_ADDR;
	dev.flags |= silo_netdev_xmit_flags(ifindex);
	had = !bpf_map_lookup_elem(map_fd, &ifindex, &old);
	if (had)
		dev.flags |= old.flags & SILO_DEV_F_EGRESS;
	/* A record of an earlier release, which knew no EGRESS: its loader
	 * put the forwarding devices in tx_ports, and they stay egresses. */
	if (had && !(old.flags & SILO_DEV_F_EGRESS) && tx_fd >= 0 &&
	    !bpf_map_lookup_elem(tx_fd, &ifindex, &port))
		dev.flags |= SILO_DEV_F_EGRESS;
	if (!had || memcmp(&old, &dev, sizeof(dev))) {
		if (bpf_map_update_elem(map_fd, &ifindex, &dev, BPF_ANY))
			return -errno;
	}
	/* A device that stops sending XDP frames leaves tx_ports before
	 * anything is redirected to it again (the kernel would drop it). */
	if (tx_fd >= 0) {
		err = silo_sync_tx_port(map_fd, tx_fd, ifindex);
		if (err)
			return err;
	}
	/* Cached answers took the old record's source check: they go. */
	if (had) {
		old.flags &= ~DEV_F_UNCACHED;
		dev.flags &= ~DEV_F_UNCACHED;
		if (!memcmp(&old, &dev, sizeof(dev)))
			return 0;
	}
	return genid_fd >= 0 ? silo_genid_bump_fd(genid_fd, 1) : 0;
}
