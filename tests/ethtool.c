// SPDX-License-Identifier: GPL-2.0
/*
 * silo_rss_get: the parsing of ethtool netlink replies, fed crafted
 * messages (a table, a key, the hash function, channel counts; malformed
 * and oversized ones refused), and live on a veth, which has channels but
 * no RSS: -EOPNOTSUPP with the channel counts filled. silo_vlan_view_get:
 * the features and XDP RX metadata replies, crafted, and live on the veth,
 * which strips tags by default and tells XDP programs of them.
 */
#include <libmnl/libmnl.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include "test.h"
#include "../user/lib/ethtool.h"

static char buf[65536];

static struct nlmsghdr *reply(__u8 cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = 42;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = ETHTOOL_GENL_VERSION;
	return nlh;
}

static struct silo_rss rss;

static void parse_rss_table_key_hfunc(void)
{
	static const __u8 key[40] = { 0x6d, 0x5a, 0x56, 0xda, [39] = 0xfa };
	__u32 indir[128];
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(indir); i++)
		indir[i] = i % 3;
	nlh = reply(SILO_ETHTOOL_MSG_RSS_GET_REPLY);
	nest = mnl_attr_nest_start(nlh, SILO_ETHTOOL_A_RSS_HEADER);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, "eth0");
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_put_u32(nlh, SILO_ETHTOOL_A_RSS_CONTEXT, 0);
	mnl_attr_put_u32(nlh, SILO_ETHTOOL_A_RSS_HFUNC, SILO_RSS_HASH_TOP);
	mnl_attr_put(nlh, SILO_ETHTOOL_A_RSS_INDIR, sizeof(indir), indir);
	mnl_attr_put(nlh, SILO_ETHTOOL_A_RSS_HKEY, sizeof(key), key);
	/* An attribute of a later kernel is no error. */
	mnl_attr_put_u32(nlh, 99, 7);
	memset(&rss, 0xff, sizeof(rss));
	rss.indir_size = rss.key_size = rss.hfunc = 0;
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), 0);
	CHECK_EQ(rss.indir_size, 128);
	CHECK_EQ(rss.indir[0], 0);
	CHECK_EQ(rss.indir[4], 1);
	CHECK_EQ(rss.indir[127], 1);
	CHECK_EQ(rss.key_size, 40);
	CHECK(!memcmp(rss.key, key, sizeof(key)), "the key differs");
	CHECK_EQ(rss.hfunc, SILO_RSS_HASH_TOP);
	CHECK(!strcmp(silo_rss_hfunc_name(rss.hfunc), "toeplitz"), "name");
	CHECK(!strcmp(silo_rss_hfunc_name(SILO_RSS_HASH_CRC32), "crc32"),
	      "name");
	CHECK(!silo_rss_hfunc_name(0), "no name for 0");
}

static void parse_rss_refuses_bad_replies(void)
{
	static __u32 big[SILO_RSS_DEV_INDIR_MAX + 1];
	__u8 key[SILO_RSS_DEV_KEY_MAX + 1] = {};
	struct nlmsghdr *nlh;

	nlh = reply(SILO_ETHTOOL_MSG_RSS_GET_REPLY);
	mnl_attr_put(nlh, SILO_ETHTOOL_A_RSS_INDIR, 6, big);
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), -EPROTO);
	nlh = reply(SILO_ETHTOOL_MSG_RSS_GET_REPLY);
	mnl_attr_put(nlh, SILO_ETHTOOL_A_RSS_INDIR, sizeof(big), big);
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), -E2BIG);
	nlh = reply(SILO_ETHTOOL_MSG_RSS_GET_REPLY);
	mnl_attr_put(nlh, SILO_ETHTOOL_A_RSS_HKEY, sizeof(key), key);
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), -E2BIG);
	nlh = reply(SILO_ETHTOOL_MSG_RSS_GET_REPLY);
	mnl_attr_put_u16(nlh, SILO_ETHTOOL_A_RSS_HFUNC, 1);
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), -EPROTO);
	/* Another message than the reply. */
	nlh = reply(ETHTOOL_MSG_CHANNELS_GET_REPLY);
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), -EPROTO);
	/* A header cut short. */
	nlh = mnl_nlmsg_put_header(buf);
	CHECK_EQ(silo_ethtool_parse_rss(nlh, &rss), -EPROTO);
}

static void parse_channels_and_family(void)
{
	struct nlmsghdr *nlh;
	__u16 id = 0;

	memset(&rss, 0, sizeof(rss));
	nlh = reply(ETHTOOL_MSG_CHANNELS_GET_REPLY);
	mnl_attr_put_u32(nlh, ETHTOOL_A_CHANNELS_COMBINED_COUNT, 6);
	mnl_attr_put_u32(nlh, ETHTOOL_A_CHANNELS_RX_COUNT, 2);
	mnl_attr_put_u32(nlh, ETHTOOL_A_CHANNELS_TX_COUNT, 1);
	mnl_attr_put_u32(nlh, ETHTOOL_A_CHANNELS_COMBINED_MAX, 63);
	CHECK_EQ(silo_ethtool_parse_channels(nlh, &rss), 0);
	CHECK(rss.has_channels, "has_channels");
	CHECK_EQ(rss.rx_queues, 8);
	CHECK_EQ(rss.tx_count, 1);
	CHECK_EQ(rss.combined_max, 63);
	CHECK_EQ(rss.rx_max, 0);
	nlh = reply(CTRL_CMD_NEWFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, "ethtool");
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, 23);
	CHECK_EQ(silo_ethtool_parse_family(nlh, &id), 0);
	CHECK_EQ(id, 23);
	nlh = reply(CTRL_CMD_NEWFAMILY);
	CHECK_EQ(silo_ethtool_parse_family(nlh, &id), -EPROTO);
}

/* A bit of a verbose bitset, in the ETHTOOL_A_BITSET_BITS nest. */
static void put_bit(struct nlmsghdr *nlh, const char *name, bool value)
{
	struct nlattr *b = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS_BIT);

	mnl_attr_put_strz(nlh, ETHTOOL_A_BITSET_BIT_NAME, name);
	if (value)
		mnl_attr_put(nlh, ETHTOOL_A_BITSET_BIT_VALUE, 0, NULL);
	mnl_attr_nest_end(nlh, b);
}

/* A features reply whose active set holds names[] (values[] in a set with
 * a mask, all of them in a list). */
static struct nlmsghdr *features(bool list, const char *const *names,
				 const bool *values, unsigned int n)
{
	struct nlmsghdr *nlh = reply(ETHTOOL_MSG_FEATURES_GET_REPLY);
	struct nlattr *set, *bits;
	unsigned int i;

	set = mnl_attr_nest_start(nlh, ETHTOOL_A_FEATURES_ACTIVE);
	if (list)
		mnl_attr_put(nlh, ETHTOOL_A_BITSET_NOMASK, 0, NULL);
	mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_SIZE, 64);
	bits = mnl_attr_nest_start(nlh, ETHTOOL_A_BITSET_BITS);
	for (i = 0; i < n; i++)
		put_bit(nlh, names[i], !list && values[i]);
	mnl_attr_nest_end(nlh, bits);
	mnl_attr_nest_end(nlh, set);
	return nlh;
}

static void parse_vlan_view(void)
{
	static const char *const strip[] = { "rx-checksum",
					     "rx-vlan-stag-hw-parse" };
	static const char *const no_strip[] = { "rx-checksum",
						"tx-vlan-hw-insert",
						"rx-vlan-filter" };
	static const char *const ctag[] = { "rx-vlan-hw-parse" };
	static const bool off[] = { false }, on[] = { true };
	struct silo_vlan_view v = {};
	struct nlmsghdr *nlh;
	struct nlattr *set;

	CHECK_EQ(
		silo_ethtool_parse_features(features(true, strip, NULL, 2), &v),
		0);
	CHECK(v.strips, "802.1ad stripping listed active");
	v.strips = false;
	CHECK_EQ(silo_ethtool_parse_features(features(true, no_strip, NULL, 3),
					     &v),
		 0);
	CHECK(!v.strips, "inserting or filtering tags is no stripping");
	CHECK_EQ(silo_ethtool_parse_features(features(false, ctag, off, 1), &v),
		 0);
	CHECK(!v.strips, "a bit with a mask and no value is clear");
	CHECK_EQ(silo_ethtool_parse_features(features(false, ctag, on, 1), &v),
		 0);
	CHECK(v.strips, "a bit with a value is set");
	/* Compact bitsets: not what silo asks for, not guessed at. */
	nlh = reply(ETHTOOL_MSG_FEATURES_GET_REPLY);
	set = mnl_attr_nest_start(nlh, ETHTOOL_A_FEATURES_ACTIVE);
	mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_SIZE, 32);
	mnl_attr_put_u32(nlh, ETHTOOL_A_BITSET_VALUE, 0x100);
	mnl_attr_nest_end(nlh, set);
	CHECK_EQ(silo_ethtool_parse_features(nlh, &v), -EPROTO);
	nlh = reply(ETHTOOL_MSG_FEATURES_GET_REPLY);
	CHECK_EQ(silo_ethtool_parse_features(nlh, &v), -EPROTO);
}

static void parse_netdev(void)
{
	struct silo_netdev nd = {};
	struct nlmsghdr *nlh;

	nlh = reply(SILO_NETDEV_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, SILO_NETDEV_A_DEV_IFINDEX, 7);
	mnl_attr_put_u64(nlh, SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES, 3);
	mnl_attr_put_u64(nlh, SILO_NETDEV_A_DEV_XDP_FEATURES, 0x3f);
	CHECK_EQ(silo_netdev_parse_dev(nlh, &nd), 0);
	CHECK(!(nd.xdp_rx_metadata & SILO_NETDEV_XDP_RX_METADATA_VLAN_TAG),
	      "timestamp and hash are no VLAN tag");
	CHECK(!(nd.xdp_features & SILO_NETDEV_XDP_ACT_NDO_XMIT_SG),
	      "ndo-xmit and rx-sg are no ndo-xmit-sg");
	nlh = reply(SILO_NETDEV_CMD_DEV_GET);
	mnl_attr_put_u64(nlh, SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES,
			 SILO_NETDEV_XDP_RX_METADATA_VLAN_TAG | 1);
	mnl_attr_put_u64(nlh, SILO_NETDEV_A_DEV_XDP_FEATURES,
			 SILO_NETDEV_XDP_ACT_NDO_XMIT_SG);
	CHECK_EQ(silo_netdev_parse_dev(nlh, &nd), 0);
	CHECK(nd.xdp_rx_metadata & SILO_NETDEV_XDP_RX_METADATA_VLAN_TAG,
	      "the vlan-tag bit");
	CHECK(nd.xdp_features & SILO_NETDEV_XDP_ACT_NDO_XMIT_SG,
	      "the ndo-xmit-sg bit");
	memset(&nd, 0, sizeof(nd));
	nlh = reply(SILO_NETDEV_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, SILO_NETDEV_A_DEV_IFINDEX, 7);
	CHECK_EQ(silo_netdev_parse_dev(nlh, &nd), 0);
	CHECK(!nd.xdp_rx_metadata && !nd.xdp_features,
	      "a kernel that reports nothing tells nothing");
	nlh = reply(SILO_NETDEV_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES, 4);
	CHECK_EQ(silo_netdev_parse_dev(nlh, &nd), -EPROTO);
	nlh = reply(SILO_NETDEV_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, SILO_NETDEV_A_DEV_XDP_FEATURES, 0x40);
	CHECK_EQ(silo_netdev_parse_dev(nlh, &nd), -EPROTO);
}

static void live_veth(void)
{
	struct silo_vlan_view v;
	__u32 ifindex;
	int err;

	REQUIRE(!sh("ip link add et0 numrxqueues 4 numtxqueues 3 type veth "
		    "peer name et1"),
		"veth");
	err = silo_rss_get("et0", &rss);
	CHECK_EQ(err, -EOPNOTSUPP);
	CHECK(rss.has_channels, "a veth reports its channels");
	CHECK_EQ(rss.rx_queues, 4);
	CHECK_EQ(rss.tx_count, 3);
	CHECK_EQ(rss.indir_size, 0);
	/* RSS_GET is asked first: an unknown command would be -EOPNOTSUPP,
	 * so -ENODEV says the kernel knows silo's RSS_GET number. */
	CHECK_EQ(silo_rss_get("et-none", &rss), -ENODEV);
	/* lo has neither. */
	CHECK_EQ(silo_rss_get("lo", &rss), -EOPNOTSUPP);
	CHECK(!rss.has_channels, "lo reports no channels");

	ifindex = if_nametoindex("et0");
	CHECK_EQ(silo_vlan_view_get("et0", ifindex, &v), 0);
	CHECK(v.strips, "a veth strips tags (rx-vlan-offload on)");
	CHECK(v.meta, "a veth tells XDP the tag (Linux 6.8 and later)");
	REQUIRE(!sh("ethtool -K et0 rxvlan off rx-vlan-stag-hw-parse off"),
		"ethtool -K");
	CHECK_EQ(silo_vlan_view_get("et0", ifindex, &v), 0);
	CHECK(!v.strips, "stripping turned off");
	CHECK_EQ(silo_vlan_view_get("et-none", 999, &v), -ENODEV);
	sh("ip link del et0");
}

int main(void)
{
	if (test_init())
		return 1;
	RUN(parse_rss_table_key_hfunc);
	RUN(parse_rss_refuses_bad_replies);
	RUN(parse_channels_and_family);
	RUN(parse_vlan_view);
	RUN(parse_netdev);
	RUN(live_veth);
	return 0;
}
