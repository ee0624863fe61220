// SPDX-License-Identifier: GPL-2.0
/*
 * A failed attach explained from the device's state (user/lib/xdp/
 * xdp_why.c): each cause that a device can show, faked (a NIC driver
 * without multi-buffer XDP at MTU 9000, one without native XDP, veth's
 * queue, peer and MTU refusals), and the veth queue refusal for real: a
 * pair with fewer RX queues than its peer has TX queues.
 */
#include <stdio.h>
#include "test.h"
#include "../user/lib/ethtool.h"
#include "../user/lib/xdp/xdp.h"

static char why[512];

static void explain(const char *kind, __u32 mtu, bool known, __u64 features,
		    bool native, int err)
{
	struct silo_xdp_dev_state st = { .mtu = mtu,
					 .rx_queues = 1,
					 .known = known,
					 .xdp_features = features };

	snprintf(st.kind, sizeof(st.kind), "%s", kind);
	silo_xdp_why("dev0", native, err, &st, why, sizeof(why));
}

#define BASIC SILO_NETDEV_XDP_ACT_BASIC
#define RX_SG SILO_NETDEV_XDP_ACT_RX_SG

static void test_nic_mtu_above_a_page(void)
{
	static const int errs[] = { -EINVAL, -EOPNOTSUPP, -ERANGE };
	unsigned int i;

	/* i40e says EINVAL, ice EOPNOTSUPP: the same cause. */
	for (i = 0; i < 3; i++) {
		explain("", 9000, true, BASIC, true, errs[i]);
		CHECK(strstr(why, "MTU 9000 is above") &&
			      strstr(why, "lack rx-sg") &&
			      strstr(why, "ip link set dev dev0 mtu 3498") &&
			      strstr(why, "--mode skb"),
		      "errno %d: %s", errs[i], why);
	}
	/* With rx-sg, or a frame that fits a page, the MTU is not why. */
	explain("", 9000, true, BASIC | RX_SG, true, -EINVAL);
	CHECK(!strstr(why, "MTU"), "rx-sg: %s", why);
	explain("", 1500, true, BASIC, true, -EINVAL);
	CHECK(!strstr(why, "MTU"), "MTU 1500: %s", why);
	/* Features unknown (before 6.3): not guessed at. */
	explain("", 9000, false, 0, true, -EINVAL);
	CHECK(!strstr(why, "MTU"), "unknown features: %s", why);
}

static void test_no_native_xdp(void)
{
	explain("", 1500, true, 0, true, -EOPNOTSUPP);
	CHECK(strstr(why, "no native XDP") && strstr(why, "--mode skb"), "%s",
	      why);
	explain("", 1500, false, 0, true, -EOPNOTSUPP);
	CHECK(strstr(why, "no native XDP support: load with --mode skb"), "%s",
	      why);
}

static void test_veth_refusals(void)
{
	explain("veth", 1500, true, BASIC | RX_SG, true, -ENOSPC);
	CHECK(strstr(why,
		     "1 RX queues, fewer than its veth peer has TX queues") &&
		      strstr(why, "numrxqueues"),
	      "%s", why);
	explain("veth", 1500, true, BASIC | RX_SG, true, -ENOTCONN);
	CHECK(strstr(why, "peer is gone"), "%s", why);
	explain("veth", 1500, true, BASIC | RX_SG, true, -ERANGE);
	CHECK(strstr(why, "peer of veth dev0 has an MTU above"), "%s", why);
}

static void test_other_mode(void)
{
	explain("veth", 1500, true, BASIC, false, -EEXIST);
	CHECK(strstr(why, "another mode"), "%s", why);
	explain("", 1500, true, BASIC, true, -EBUSY);
	CHECK(strstr(why, "another mode"), "%s", why);
}

/* The real thing: silo on a veth with 1 RX queue whose peer has 2 TX. */
static void test_live_veth_queues(void)
{
	struct silo_xdp_dev_state st;
	__u32 ifindex;

	REQUIRE(!sh("ip link add wy0 numrxqueues 1 numtxqueues 1 type veth "
		    "peer name wy1 numrxqueues 2 numtxqueues 2"),
		"veth pair");
	ifindex = if_nametoindex("wy0");
	REQUIRE(ifindex, "wy0");
	CHECK_EQ(silo_xdp_dev_state_get(ifindex, &st), 0);
	CHECK(!strcmp(st.kind, "veth"), "kind '%s'", st.kind);
	CHECK_EQ(st.mtu, 1500);
	CHECK_EQ(st.rx_queues, 1);
	/* A veth with fewer RX queues than its peer's TX ones reports no
	 * XDP feature at all. */
	CHECK(st.known && !st.xdp_features, "features %llx",
	      (unsigned long long)st.xdp_features);
	explain(st.kind, st.mtu, st.known, st.xdp_features, true, -ENOSPC);
	CHECK(strstr(why, "fewer than its veth peer has TX queues"), "%s", why);
	sh("ip link del wy0");
}

int main(void)
{
	if (test_init())
		return 1;
	RUN(test_nic_mtu_above_a_page);
	RUN(test_no_native_xdp);
	RUN(test_veth_refusals);
	RUN(test_other_mode);
	RUN(test_live_veth_queues);
	return 0;
}
