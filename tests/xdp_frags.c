// SPDX-License-Identifier: GPL-2.0
/*
 * Jumbo frames in the data path: on veths with MTU 9000, a frame of more
 * than a page reaches the program in several buffers (BPF_PROG_TEST_RUN
 * puts what does not fit a page in fragments, as a driver does). It is
 * parsed against its whole length, forwarded only to an egress that sends
 * multi-buffer frames (XDP feature ndo-xmit-sg, in the egress's devices
 * record), with its bytes as the stack would send them, and passed,
 * counted, to the stack otherwise: the kernel drops a multi-buffer frame
 * redirected to a device without the feature. A device that sends no XDP
 * frame at all (ndo-xmit: a veth whose peer has neither XDP nor GRO) is
 * kept out of tx_ports.
 */
#include <stdio.h>
#include "fwd.h"

static int devices_fd, tx_fd;

static int setup(void)
{
	/* As silod keeps it: larger packets from the cache, route MTUs by
	 * prefix (route_mtus). */
	fwd_pmtu_watch =
		1U << SILO_FAM_V4 | 1U << SILO_FAM_V6 | SILO_HB_ROUTE_MTUS;
	if (fwd_setup("ip link set in0 mtu 9000\n"
		      "ip link set in0p mtu 9000\n"
		      "ip link set out0 mtu 9000\n"
		      "ip link set out0p mtu 9000\n"
		      "ip route add 10.99.0.0/16 via 10.2.0.2\n"
		      "ip route add fd99::/32 via fd02::2\n"
		      "ip route add 10.98.0.0/16 via 10.2.0.2 mtu 5000\n"))
		return -1;
	devices_fd = fwd_pin_get(SILO_PIN_DEVICES);
	tx_fd = fwd_pin_get(SILO_PIN_TX_PORTS);
	return devices_fd < 0 || tx_fd < 0 ? -1 : 0;
}

/* out0's devices record says it sends multi-buffer frames. */
static int out0_sg(void)
{
	struct silo_device dev;

	if (bpf_map_lookup_elem(devices_fd, &out0, &dev))
		return -1;
	return !!(dev.flags & SILO_DEV_F_XMIT_SG);
}

/* silo loaded on out0 again: its record read from the device anew. */
static void reload_out0(void)
{
	struct silo_xdp_load_opts fwd = { .forward = true,
					  .unbound = true,
					  .replace = true };

	REQUIRE(!silo_xdp_load(s, "out0", &fwd), "load out0 --replace");
}

static struct pkt_spec jumbo(int family, size_t payload)
{
	struct pkt_spec sp =
		family == AF_INET ? spec4("10.99.0.1") : spec6("fd99::1");

	sp.payload = payload;
	return sp;
}

/* out0's record without ndo-xmit-sg, as a driver that sends XDP frames
 * of one buffer only has it (a veth has both or neither: faked here). */
static void test_jumbo_to_egress_without_sg_passes(void)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	static uint8_t pkt[PKT_MAX];
	struct silo_device dev;
	struct pkt_spec sp;
	struct result r;
	unsigned int i, j;
	size_t len;

	CHECK_EQ(out0_sg(), 1);
	REQUIRE(!bpf_map_lookup_elem(devices_fd, &out0, &dev), "out0's record");
	dev.flags &= ~SILO_DEV_F_XMIT_SG;
	REQUIRE(!bpf_map_update_elem(devices_fd, &out0, &dev, BPF_ANY),
		"out0's record without ndo-xmit-sg");
	for (i = 0; i < 2; i++) {
		/* One buffer: forwarded as ever; the flow's third such
		 * frame on, from this CPU's copy (route_hot). */
		sp = jumbo(fams[i], 1000);
		len = pkt_build(pkt, &sp);
		for (j = 0; j < 4; j++) {
			run_pkt(pkt, len, &r);
			check_forwarded(&sp, &r, mac_gw);
		}
		/* The same flow's frame of several buffers: not the copy's. */
		sp = jumbo(fams[i], 8000);
		len = pkt_build(pkt, &sp);
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_no_tx_port, 1);
		CHECK_EQ(r.d.pass_bad_len, 0);
	}
	reload_out0();
	CHECK_EQ(out0_sg(), 1);
}

/* out0 sends multi-buffer frames (out0p has GRO on): jumbo frames are
 * forwarded whole, with trailing bytes trimmed from the fragments as the
 * stack trims them. */
static void test_jumbo_to_egress_with_sg_forwarded(void)
{
	static const size_t sizes[] = { 4000, 8000, 8950 };
	static const int fams[] = { AF_INET, AF_INET6 };
	static uint8_t pkt[PKT_MAX];
	unsigned int i, j;
	struct pkt_spec sp;
	struct result r;
	size_t len;

	for (i = 0; i < 2; i++) {
		for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
			sp = jumbo(fams[i], sizes[j]);
			len = pkt_build(pkt, &sp);
			run_pkt(pkt, len, &r);
			check_forwarded(&sp, &r, mac_gw);
		}
		sp = jumbo(fams[i], 8000);
		len = pkt_build(pkt, &sp);
		memset(pkt + len, 0xEE, 100);
		run_pkt(pkt, len + 100, &r);
		check_forwarded(&sp, &r, mac_gw);
		CHECK_EQ(r.d.trimmed, 1);
	}
}

/* Lengths against the whole frame, to an egress that sends multi-buffer
 * frames: an IP length past it is bad, and a frame above the egress MTU
 * goes to the stack (which fragments it or sends the ICMP error), though
 * its first buffer is far below it. */
static void test_jumbo_lengths(void)
{
	static uint8_t pkt[PKT_MAX];
	struct pkt_spec sp;
	struct result r;
	size_t len;

	sp = jumbo(AF_INET, 8000);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len - 1, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_bad_len, 1);
	REQUIRE(!sh("ip link set out0 mtu 5000"), "out0 mtu 5000");
	/* A destination not cached yet: no silod here to flush the cache
	 * on the MTU change. */
	v4(sp.dst, "10.99.0.2");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_mtu + r.d.pass_fib, 1);
	CHECK_EQ(r.d.redirect, 0);
	REQUIRE(!sh("ip link set out0 mtu 9000"), "out0 mtu 9000");
	/* A route's MTU (unlocked: bpf_fib_lookup leaves it out, silo caps
	 * by route_mtus or stands aside), above the first buffer. */
	sp = jumbo(AF_INET, 8000);
	v4(sp.dst, "10.98.0.1");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_mtu + r.d.pass_route_mtu, 1);
	sp.payload = 4900;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
}

/*
 * GRO off on out0p: a veth then sends no XDP frame at all (ndo-xmit), and
 * the kernel drops what is redirected to it. Read again, out0's record
 * says so, out0 leaves tx_ports, and every frame routed out of it goes to
 * the stack; back with GRO.
 */
static void test_egress_without_xmit(void)
{
	static const size_t sizes[] = { 1000, 8000 };
	static uint8_t pkt[PKT_MAX];
	struct pkt_spec sp;
	struct result r;
	unsigned int i;
	size_t len;
	__u32 v;

	REQUIRE(!sh("ethtool -K out0p gro off >/dev/null"), "GRO off on out0p");
	reload_out0();
	CHECK_EQ(out0_sg(), 0);
	CHECK(bpf_map_lookup_elem(tx_fd, &out0, &v), "out0 left in tx_ports");
	for (i = 0; i < 2; i++) {
		sp = jumbo(AF_INET6, sizes[i]);
		len = pkt_build(pkt, &sp);
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_no_tx_port, 1);
	}
	REQUIRE(!sh("ethtool -K out0p gro on >/dev/null"), "GRO on on out0p");
	reload_out0();
	CHECK_EQ(out0_sg(), 1);
	sp = jumbo(AF_INET6, 1000);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
}

int main(void)
{
	cpu_set_t all;

	if (test_init())
		return 1;
	/* route_hot's copies are per CPU: one CPU, so a flow has one. */
	if (fwd_run_on_cpu0(&all)) {
		printf("not ok - setup: cannot run on CPU 0\n");
		return 1;
	}
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_jumbo_to_egress_without_sg_passes);
	RUN(test_jumbo_to_egress_with_sg_forwarded);
	RUN(test_jumbo_lengths);
	RUN(test_egress_without_xmit);
	close(devices_fd);
	close(tx_fd);
	fwd_teardown();
	return 0;
}
