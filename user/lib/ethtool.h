/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* ethtool and netdev netlink (ethtool.c): RSS, channels, VLAN offloads. */
#ifndef SILO_LIB_ETHTOOL_H
#define SILO_LIB_ETHTOOL_H

#include "internal.h"

struct nlmsghdr;

/*
 * RSS_GET came with Linux 6.3; older headers (Debian 12's) lack it. The
 * numbers are uapi, fixed: the message follows PSE_SET and its reply
 * PSE_GET_REPLY in their enums (linux/ethtool_netlink.h).
 */
#define SILO_ETHTOOL_MSG_RSS_GET (ETHTOOL_MSG_PSE_SET + 1)
#define SILO_ETHTOOL_MSG_RSS_GET_REPLY (ETHTOOL_MSG_PSE_GET_REPLY + 1)
enum {
	SILO_ETHTOOL_A_RSS_HEADER = 1, /* nest: ETHTOOL_A_HEADER_* */
	SILO_ETHTOOL_A_RSS_CONTEXT, /* u32 */
	SILO_ETHTOOL_A_RSS_HFUNC, /* u32: SILO_RSS_HASH_* */
	SILO_ETHTOOL_A_RSS_INDIR, /* binary: u32 per entry */
	SILO_ETHTOOL_A_RSS_HKEY, /* binary */
};

/*
 * ethtool netlink (ethtool.c): each reply's attributes into *out, apart
 * from the socket so that tests can feed crafted messages. -EPROTO for a
 * malformed one, -E2BIG for a table or key silo_rss cannot hold.
 */
int silo_ethtool_parse_family(const struct nlmsghdr *nlh, __u16 *id);
int silo_ethtool_parse_rss(const struct nlmsghdr *nlh, struct silo_rss *out);
int silo_ethtool_parse_channels(const struct nlmsghdr *nlh,
				struct silo_rss *out);

/*
 * Whether XDP on a device can see VLAN tags: a device that strips them
 * (rx-vlan-hw-parse or rx-vlan-stag-hw-parse active) hands XDP the frame
 * without its outer tag, and only a driver that reports the tag as XDP RX
 * metadata (netdev netlink: xdp-rx-metadata-features vlan-tag) tells a
 * program bound to the device (bpf_xdp_metadata_rx_vlan_tag). veth reports
 * both: a tag its peer put beside the bytes is stripped in this sense.
 */
struct silo_vlan_view {
	bool strips; /* a stripping feature is active */
	bool meta; /* the driver tells bound XDP programs the tag */
};
/* -EOPNOTSUPP without ethtool netlink; a kernel without netdev netlink
 * (before 6.3) leaves meta false. */
int silo_vlan_view_get(const char *ifname, __u32 ifindex,
		       struct silo_vlan_view *v);
/* Reply: ETHTOOL_MSG_FEATURES_GET_REPLY (verbose bitsets), parsed into
 * *v as above. */
int silo_ethtool_parse_features(const struct nlmsghdr *nlh,
				struct silo_vlan_view *v);

/* netdev netlink (linux/netdev.h, 6.3; the header came after Debian 12's) */
#define SILO_NETDEV_CMD_DEV_GET 1
#define SILO_NETDEV_A_DEV_IFINDEX 1
#define SILO_NETDEV_A_DEV_XDP_FEATURES 3 /* u64 */
#define SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES 5 /* u64 */
#define SILO_NETDEV_XDP_ACT_BASIC (1ULL << 0)
#define SILO_NETDEV_XDP_ACT_NDO_XMIT (1ULL << 2)
#define SILO_NETDEV_XDP_ACT_RX_SG (1ULL << 5)
#define SILO_NETDEV_XDP_ACT_NDO_XMIT_SG (1ULL << 6)
#define SILO_NETDEV_XDP_RX_METADATA_VLAN_TAG 4

/* A device as netdev netlink tells it (NETDEV_CMD_DEV_GET): what its XDP
 * does, and which RX metadata it gives bound programs. */
struct silo_netdev {
	__u64 xdp_features; /* SILO_NETDEV_XDP_ACT_* */
	__u64 xdp_rx_metadata; /* SILO_NETDEV_XDP_RX_METADATA_* */
	bool known; /* the kernel has netdev netlink (6.3) and told */
};
/* 0 with *nd zero (known false) on a kernel without netdev netlink. */
int silo_netdev_get(__u32 ifindex, struct silo_netdev *nd);
/* Its reply, parsed into *nd: -EPROTO for a malformed one. */
int silo_netdev_parse_dev(const struct nlmsghdr *nlh, struct silo_netdev *nd);
/* SILO_DEV_F_XMIT and SILO_DEV_F_XMIT_SG as the device's XDP features
 * say. Where they cannot be read (before 6.3), ndo-xmit is assumed, as
 * silo did before it read them, and multi-buffer is not. */
__u8 silo_netdev_xmit_flags(__u32 ifindex);

#endif /* SILO_LIB_ETHTOOL_H */
