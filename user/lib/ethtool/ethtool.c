// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A device's RSS (indirection table, hash key and function) and channel
 * counts, through ethtool's generic netlink family, and whether XDP can
 * see its VLAN tags (ethtool's features, netdev's XDP RX metadata) and
 * what its XDP does (netdev's XDP features), with
 * libmnl. The parsing of each reply is apart from the socket, for the unit
 * tests.
 */
#include <errno.h>
#include <string.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include "../ethtool.h"
#include "../nl.h"

const char *silo_rss_hfunc_name(__u32 hfunc)
{
	switch (hfunc) {
	case SILO_RSS_HASH_TOP:
		return "toeplitz";
	case SILO_RSS_HASH_XOR:
		return "xor";
	case SILO_RSS_HASH_CRC32:
		return "crc32";
	}
	return NULL;
}

static const struct genlmsghdr *genl_hdr(const struct nlmsghdr *nlh)
{
	if (nlh->nlmsg_len < MNL_NLMSG_HDRLEN + sizeof(struct genlmsghdr))
		return NULL;
	return mnl_nlmsg_get_payload(nlh);
}

struct attr_table {
	const struct nlattr **tb;
	unsigned int max;
};

static int table_cb(const struct nlattr *attr, void *data)
{
	const struct attr_table *t = data;
	unsigned int type = mnl_attr_get_type(attr);

	if (type <= t->max)
		t->tb[type] = attr;
	return MNL_CB_OK;
}

/* Attributes of a generic netlink message of command cmd into tb[0..max]. */
static int genl_parse(const struct nlmsghdr *nlh, __u8 cmd,
		      const struct nlattr **tb, unsigned int max)
{
	const struct genlmsghdr *g = genl_hdr(nlh);
	struct attr_table t = { tb, max };

	if (!g || g->cmd != cmd)
		return -EPROTO;
	if (mnl_attr_parse(nlh, sizeof(*g), table_cb, &t) < 0)
		return -EPROTO;
	return 0;
}

static int attr_u32(const struct nlattr *a, __u32 *val)
{
	if (!a)
		return 0;
	if (mnl_attr_validate(a, MNL_TYPE_U32) < 0)
		return -EPROTO;
	*val = mnl_attr_get_u32(a);
	return 0;
}

int silo_ethtool_parse_family(const struct nlmsghdr *nlh, __u16 *id)
{
	const struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	int err;

	err = genl_parse(nlh, CTRL_CMD_NEWFAMILY, tb, CTRL_ATTR_MAX);
	if (err)
		return err;
	if (!tb[CTRL_ATTR_FAMILY_ID] ||
	    mnl_attr_validate(tb[CTRL_ATTR_FAMILY_ID], MNL_TYPE_U16) < 0)
		return -EPROTO;
	*id = mnl_attr_get_u16(tb[CTRL_ATTR_FAMILY_ID]);
	return 0;
}

int silo_ethtool_parse_rss(const struct nlmsghdr *nlh, struct silo_rss *out)
{
	const struct nlattr *tb[SILO_ETHTOOL_A_RSS_HKEY + 1] = {};
	const struct nlattr *a;
	size_t len;
	int err;

	err = genl_parse(nlh, SILO_ETHTOOL_MSG_RSS_GET_REPLY, tb,
			 SILO_ETHTOOL_A_RSS_HKEY);
	if (err)
		return err;
	err = attr_u32(tb[SILO_ETHTOOL_A_RSS_HFUNC], &out->hfunc);
	if (err)
		return err;
	a = tb[SILO_ETHTOOL_A_RSS_INDIR];
	if (a) {
		len = mnl_attr_get_payload_len(a);
		if (len % sizeof(__u32))
			return -EPROTO;
		if (len / sizeof(__u32) > SILO_RSS_DEV_INDIR_MAX)
			return -E2BIG;
		memcpy(out->indir, mnl_attr_get_payload(a), len);
		out->indir_size = len / sizeof(__u32);
	}
	a = tb[SILO_ETHTOOL_A_RSS_HKEY];
	if (a) {
		len = mnl_attr_get_payload_len(a);
		if (len > SILO_RSS_DEV_KEY_MAX)
			return -E2BIG;
		memcpy(out->key, mnl_attr_get_payload(a), len);
		out->key_size = len;
	}
	return 0;
}

int silo_ethtool_parse_channels(const struct nlmsghdr *nlh,
				struct silo_rss *out)
{
	const struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1] = {};
	static const struct {
		int attr;
		size_t off;
	} fields[] = {
		{ ETHTOOL_A_CHANNELS_RX_MAX,
		  offsetof(struct silo_rss, rx_max) },
		{ ETHTOOL_A_CHANNELS_TX_MAX,
		  offsetof(struct silo_rss, tx_max) },
		{ ETHTOOL_A_CHANNELS_COMBINED_MAX,
		  offsetof(struct silo_rss, combined_max) },
		{ ETHTOOL_A_CHANNELS_RX_COUNT,
		  offsetof(struct silo_rss, rx_count) },
		{ ETHTOOL_A_CHANNELS_TX_COUNT,
		  offsetof(struct silo_rss, tx_count) },
		{ ETHTOOL_A_CHANNELS_COMBINED_COUNT,
		  offsetof(struct silo_rss, combined_count) },
	};
	unsigned int i;
	int err;

	err = genl_parse(nlh, ETHTOOL_MSG_CHANNELS_GET_REPLY, tb,
			 ETHTOOL_A_CHANNELS_MAX);
	if (err)
		return err;
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		err = attr_u32(tb[fields[i].attr],
			       (__u32 *)((char *)out + fields[i].off));
		if (err)
			return err;
	}
	out->rx_queues = out->combined_count + out->rx_count;
	out->has_channels = true;
	return 0;
}

/* A feature that takes VLAN tags off before XDP, by its ethtool name. */
static bool strip_feature(const char *name)
{
	return !strcmp(name, "rx-vlan-hw-parse") ||
	       !strcmp(name, "rx-vlan-stag-hw-parse");
}

/*
 * ETHTOOL_A_FEATURES_ACTIVE in the verbose form: a bit per nest with its
 * name; in a list (ETHTOOL_A_BITSET_NOMASK) every bit given is set, else
 * only those with ETHTOOL_A_BITSET_BIT_VALUE.
 */
static int parse_active(const struct nlattr *set, struct silo_vlan_view *v)
{
	const struct nlattr *bits = NULL, *bit, *a;
	bool list = false, value;
	const char *name;

	mnl_attr_for_each_nested(a, set)
	{
		if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_NOMASK)
			list = true;
		else if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_BITS)
			bits = a;
	}
	if (!bits)
		return -EPROTO; /* compact: not what we asked for */
	mnl_attr_for_each_nested(bit, bits)
	{
		if (mnl_attr_get_type(bit) != ETHTOOL_A_BITSET_BITS_BIT)
			continue;
		name = NULL;
		value = list;
		mnl_attr_for_each_nested(a, bit)
		{
			if (mnl_attr_get_type(a) == ETHTOOL_A_BITSET_BIT_NAME) {
				if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) <
				    0)
					return -EPROTO;
				name = mnl_attr_get_str(a);
			} else if (mnl_attr_get_type(a) ==
				   ETHTOOL_A_BITSET_BIT_VALUE) {
				value = true;
			}
		}
		if (name && value && strip_feature(name))
			v->strips = true;
	}
	return 0;
}

int silo_ethtool_parse_features(const struct nlmsghdr *nlh,
				struct silo_vlan_view *v)
{
	const struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1] = {};
	int err;

	err = genl_parse(nlh, ETHTOOL_MSG_FEATURES_GET_REPLY, tb,
			 ETHTOOL_A_FEATURES_MAX);
	if (err)
		return err;
	if (!tb[ETHTOOL_A_FEATURES_ACTIVE])
		return -EPROTO;
	return parse_active(tb[ETHTOOL_A_FEATURES_ACTIVE], v);
}

/* An optional u64 attribute: absent leaves *val, another size is -EPROTO. */
static int attr_u64(const struct nlattr *a, __u64 *val)
{
	if (!a)
		return 0;
	if (mnl_attr_validate(a, MNL_TYPE_U64) < 0)
		return -EPROTO;
	*val = mnl_attr_get_u64(a);
	return 0;
}

int silo_netdev_parse_dev(const struct nlmsghdr *nlh, struct silo_netdev *nd)
{
	const struct nlattr
		*tb[SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES + 1] = {};
	int err;

	/* The reply carries the request's command. Before 6.3 a kernel
	 * reports neither: nothing told, nothing assumed. */
	err = genl_parse(nlh, SILO_NETDEV_CMD_DEV_GET, tb,
			 SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES);
	if (!err)
		err = attr_u64(tb[SILO_NETDEV_A_DEV_XDP_FEATURES],
			       &nd->xdp_features);
	if (!err)
		err = attr_u64(tb[SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES],
			       &nd->xdp_rx_metadata);
	if (!err)
		nd->known = tb[SILO_NETDEV_A_DEV_XDP_FEATURES] != NULL;
	return err;
}

struct genl_reply {
	int (*parse)(const struct nlmsghdr *nlh, void *data);
	void *data;
};

static int reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genl_reply *r = data;
	int err = r->parse(nlh, r->data);

	if (err) {
		errno = -err;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int parse_family(const struct nlmsghdr *nlh, void *data)
{
	return silo_ethtool_parse_family(nlh, data);
}

static int parse_rss(const struct nlmsghdr *nlh, void *data)
{
	return silo_ethtool_parse_rss(nlh, data);
}

static int parse_channels(const struct nlmsghdr *nlh, void *data)
{
	return silo_ethtool_parse_channels(nlh, data);
}

static int parse_features(const struct nlmsghdr *nlh, void *data)
{
	return silo_ethtool_parse_features(nlh, data);
}

static int parse_netdev(const struct nlmsghdr *nlh, void *data)
{
	return silo_netdev_parse_dev(nlh, data);
}

static struct nlmsghdr *genl_put(char *buf, __u16 type, __u8 cmd, __u8 version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

/* The id of a generic netlink family; -EOPNOTSUPP without it. */
static int genl_family(const char *name, __u16 *id)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct genl_reply r = { parse_family, id };
	struct nlmsghdr *nlh;
	int err;

	nlh = genl_put(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, name);
	err = silo_nl_request(NETLINK_GENERIC, nlh, reply_cb, &r);
	return err == -ENOENT ? -EOPNOTSUPP : err;
}

/* "ethtool": -EOPNOTSUPP without it (no ETHTOOL_NETLINK). */
static int ethtool_family(__u16 *id)
{
	return genl_family(ETHTOOL_GENL_NAME, id);
}

/* Sends cmd for ifname with its header nest of type hdr_attr. */
static int ethtool_get(__u16 family, __u8 cmd, __u16 hdr_attr,
		       const char *ifname, struct genl_reply *r)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	nlh = genl_put(buf, family, cmd, ETHTOOL_GENL_VERSION);
	nest = mnl_attr_nest_start(nlh, hdr_attr);
	mnl_attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, ifname);
	mnl_attr_nest_end(nlh, nest);
	return silo_nl_request(NETLINK_GENERIC, nlh, reply_cb, r);
}

int silo_rss_get(const char *ifname, struct silo_rss *out)
{
	struct genl_reply channels = { parse_channels, out };
	struct genl_reply rss = { parse_rss, out };
	int err, rss_err;
	__u16 family;

	memset(out, 0, sizeof(*out));
	if (!ifname || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	err = ethtool_family(&family);
	if (err)
		return err;
	rss_err = ethtool_get(family, SILO_ETHTOOL_MSG_RSS_GET,
			      SILO_ETHTOOL_A_RSS_HEADER, ifname, &rss);
	if (rss_err && rss_err != -EOPNOTSUPP)
		return rss_err;
	/* A device without RSS may still report its channels, and one
	 * without channel counts (-EOPNOTSUPP) may still hash. */
	err = ethtool_get(family, ETHTOOL_MSG_CHANNELS_GET,
			  ETHTOOL_A_CHANNELS_HEADER, ifname, &channels);
	if (err && err != -EOPNOTSUPP)
		return err;
	return rss_err;
}

int silo_netdev_get(__u32 ifindex, struct silo_netdev *nd)
{
	struct genl_reply dev = { parse_netdev, nd };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	__u16 family;
	int err;

	memset(nd, 0, sizeof(*nd));
	err = genl_family("netdev", &family);
	if (err) /* before 6.3: no driver tells XDP programs anything */
		return err == -EOPNOTSUPP ? 0 : err;
	nlh = genl_put(buf, family, SILO_NETDEV_CMD_DEV_GET, 1);
	mnl_attr_put_u32(nlh, SILO_NETDEV_A_DEV_IFINDEX, ifindex);
	return silo_nl_request(NETLINK_GENERIC, nlh, reply_cb, &dev);
}

__u8 silo_netdev_xmit_flags(__u32 ifindex)
{
	struct silo_netdev nd;
	__u8 flags = 0;

	if (silo_netdev_get(ifindex, &nd) || !nd.known)
		return SILO_DEV_F_XMIT;
	if (nd.xdp_features & SILO_NETDEV_XDP_ACT_NDO_XMIT)
		flags |= SILO_DEV_F_XMIT;
	if (nd.xdp_features & SILO_NETDEV_XDP_ACT_NDO_XMIT_SG)
		flags |= SILO_DEV_F_XMIT_SG;
	return flags;
}

int silo_vlan_view_get(const char *ifname, __u32 ifindex,
		       struct silo_vlan_view *v)
{
	struct genl_reply features = { parse_features, v };
	struct silo_netdev nd;
	__u16 family;
	int err;

	memset(v, 0, sizeof(*v));
	if (!ifname || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	/* Verbose bitsets (no ETHTOOL_FLAG_COMPACT_BITSETS): bit names. */
	err = ethtool_family(&family);
	if (!err)
		err = ethtool_get(family, ETHTOOL_MSG_FEATURES_GET,
				  ETHTOOL_A_FEATURES_HEADER, ifname, &features);
	if (!err)
		err = silo_netdev_get(ifindex, &nd);
	if (err)
		return err;
	v->meta = nd.xdp_rx_metadata & SILO_NETDEV_XDP_RX_METADATA_VLAN_TAG;
	return 0;
}
