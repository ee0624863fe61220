// SPDX-License-Identifier: GPL-2.0
/*
 * route_hot, this CPU's copies of the route entries it hits: a flow's
 * second packet copies its entry there and the next ones are forwarded
 * from the copy, with no route cache lookup (shown by deleting the route
 * cache's entry by hand: the flow is still a hit). What makes the copy go:
 * genid.sweeps moved forward (silod's sweeps, "silo route flush"), a genid
 * bump, another key in its slot; it is not used while a silod beats that
 * does not move sweeps. A copy still checks the frame's MAC against the
 * ingress device's, and carries the source check's verdict for its
 * source. The test runs on one CPU: the copies are per CPU.
 */
#include <stdio.h>
#include "silo/abi/internal.h"
#include "fwd.h"

static int setup(void)
{
	return fwd_setup("ip route add 10.93.0.0/16 via 10.2.0.2\n"
			 "ip -6 route add fd93::/64 via fd02::2\n");
}

/* Deletes sp's entry from node 0's route cache, as a sweep would, without
 * moving sweeps. */
static void delete_entry(const struct pkt_spec *sp)
{
	int fd = fwd_pin_get(SILO_PIN_ROUTE_CACHE_NODE "0");
	struct silo_route_entry e;

	REQUIRE(fd >= 0, "node 0's cache pin");
	REQUIRE(cache_entry(sp, &e) == 1, "no entry to delete");
	CHECK(!bpf_map_delete_elem(fd, &e.key), "delete: %s", strerror(errno));
	CHECK_EQ(cache_entry(sp, &e), 0);
	close(fd);
}

/* What a sweep ends with. */
static void sweeps_forward(void)
{
	int fd = fwd_pin_get(SILO_PIN_GENID);
	struct silo_genid g;
	__u32 zero = 0;

	REQUIRE(fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &g), "genid");
	g.sweeps++;
	CHECK(!bpf_map_update_elem(fd, &zero, &g, BPF_ANY), "sweeps + 1");
	close(fd);
}

/* Two packets: a miss (inserted), a route cache hit (copied). */
static void make_hot(const struct pkt_spec *sp, const uint8_t *dmac)
{
	struct silo_stats d;

	d = forward_through(sp, dmac);
	CHECK_EQ(d.cache_miss, 1);
	d = forward_through(sp, dmac);
	CHECK_EQ(d.cache_hit, 1);
	CHECK_EQ(d.fib_success, 0);
}

/* Forwarded through dmac as a hit, with no entry in the route cache. */
static void expect_hot(const struct pkt_spec *sp, const uint8_t *dmac)
{
	struct silo_route_entry e;
	struct silo_stats d = forward_through(sp, dmac);

	CHECK_EQ(d.cache_hit, 1);
	CHECK_EQ(d.cache_miss, 0);
	CHECK_EQ(d.fib_success, 0);
	CHECK_EQ(cache_entry(sp, &e), 0);
}

/* A miss, resolved by bpf_fib_lookup, through dmac. */
static void expect_miss(const struct pkt_spec *sp, const uint8_t *dmac)
{
	struct silo_stats d = forward_through(sp, dmac);

	CHECK_EQ(d.cache_hit, 0);
	CHECK_EQ(d.cache_miss, 1);
	CHECK_EQ(d.fib_success, 1);
}

static void test_copy_serves_the_flow(void)
{
	struct pkt_spec v4 = spec4("10.93.1.1"), v6 = spec6("fd93::1");

	make_hot(&v4, mac_gw);
	delete_entry(&v4);
	expect_hot(&v4, mac_gw);
	expect_hot(&v4, mac_gw);
	make_hot(&v6, mac_gw);
	delete_entry(&v6);
	expect_hot(&v6, mac_gw);
}

/* A route change swept by silod: the copy goes with the entry. */
static void test_sweeps_make_the_copy_go(void)
{
	struct pkt_spec sp = spec4("10.93.2.2");

	make_hot(&sp, mac_gw);
	REQUIRE(!sh("ip route replace 10.93.0.0/16 via 10.2.0.3"), "replace");
	delete_entry(&sp);
	/* The entry deleted, sweeps not moved: the copy still answers. */
	expect_hot(&sp, mac_gw);
	sweeps_forward();
	expect_miss(&sp, mac_gw2);
	CHECK_EQ(forward_through(&sp, mac_gw2).cache_hit, 1); /* copied */
	delete_entry(&sp);
	expect_hot(&sp, mac_gw2);
	REQUIRE(!sh("ip route replace 10.93.0.0/16 via 10.2.0.2"), "restore");
	sweeps_forward();
	expect_miss(&sp, mac_gw);
}

static void test_genid_bump_makes_the_copy_go(void)
{
	struct pkt_spec sp = spec6("fd93::3");
	__u64 g;

	make_hot(&sp, mac_gw);
	delete_entry(&sp);
	REQUIRE(silo_genid_bump(s, &g) == 0, "genid bump");
	expect_miss(&sp, mac_gw);
}

/* "silo route flush" moves sweeps: the next packet resolves again. */
static void test_flush_makes_the_copy_go(void)
{
	struct pkt_spec sp = spec4("10.93.4.4");

	make_hot(&sp, mac_gw);
	CHECK(silo_route_flush(s) >= 1, "flush deleted nothing");
	expect_miss(&sp, mac_gw);
}

/* A frame for another host is not forwarded from a copy either. */
static void test_copy_checks_the_mac(void)
{
	struct pkt_spec sp = spec4("10.93.5.5");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	make_hot(&sp, mac_gw);
	sp.dmac[5] ^= 1;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_not_host, 1);
	CHECK_EQ(r.d.cache_hit, 0);
	sp.dmac[5] ^= 1;
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
}

/* An earlier release's silod does not move sweeps: no copy is trusted or
 * made while it beats. */
static void test_earlier_silod_no_copies(void)
{
	struct pkt_spec sp = spec4("10.93.6.6"), sp2 = spec4("10.93.6.7");

	make_hot(&sp, mac_gw);
	delete_entry(&sp);
	fwd_hb_keeps &= ~SILO_HB_SWEEPS;
	REQUIRE(fwd_heartbeat(1) == 0, "heartbeat");
	expect_miss(&sp, mac_gw);
	/* Its sweep deletes the entry, and nothing else answers. */
	make_hot(&sp2, mac_gw);
	delete_entry(&sp2);
	expect_miss(&sp2, mac_gw);
	fwd_hb_keeps |= SILO_HB_SWEEPS;
	REQUIRE(fwd_heartbeat(1) == 0, "heartbeat");
}

/* Two keys in one slot take turns: each is a copy of its own entry. */
static void test_slot_holds_one_key(void)
{
	struct pkt_spec a = spec4("10.93.7.7"), b;
	struct silo_route_key ka = {}, kb;
	char dst[32];
	__u32 src4;
	int i;

	/* Keys as fill_key() makes them here: no source, ports or label. */
	ka.ifindex = in0;
	ka.family = SILO_AF_INET;
	memcpy(ka.dst, a.dst, 4);
	kb = ka;
	memcpy(&src4, a.src, sizeof(src4)); /* b's too: a copy is per source */
	for (i = 1; i < 65536; i++) {
		kb.dst[2] = i >> 8;
		kb.dst[3] = i;
		if (silo_hot_slot(&kb, src4) == silo_hot_slot(&ka, src4) &&
		    memcmp(kb.dst, ka.dst, 4))
			break;
	}
	REQUIRE(i < 65536, "no key of 10.93/16 shares a's slot");
	snprintf(dst, sizeof(dst), "10.93.%u.%u", kb.dst[2], kb.dst[3]);
	b = spec4(dst);
	/* Another way out for b: a copy of one key's answer under the
	 * other's key would show in the MACs. */
	REQUIRE(!sh("ip route add %s/32 via 10.2.0.3", dst), "b's route");
	make_hot(&a, mac_gw);
	make_hot(&b, mac_gw2);
	/* b took the slot: a is a route cache hit again, and copied back. */
	CHECK_EQ(forward_through(&a, mac_gw).cache_hit, 1);
	CHECK_EQ(forward_through(&b, mac_gw2).cache_hit, 1);
	CHECK_EQ(forward_through(&a, mac_gw).cache_hit, 1);
	delete_entry(&a);
	expect_hot(&a, mac_gw);
	sh("ip route del %s/32", dst);
}

/* Strict rp_filter on in0 (the loader reads it into in0's record). */
static void rp_filter_mode(int mode)
{
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=%d", mode);
	CHECK(fwd_reload_in0(NULL) == 0, "replace on in0");
}

/*
 * A copy carries the source check's verdict for its source: a hot flow
 * takes no source check, and a refused source stays refused from the
 * copy. Another source of the same destination (the route key leaves the
 * source out) has a copy of its own, even in the same slot.
 */
static void test_copy_carries_the_source_check(void)
{
	struct pkt_spec ok = spec4("10.93.8.8"), bad;
	struct silo_route_key k = {};
	uint8_t pkt[PKT_MAX];
	struct result r;
	__u32 a, b;
	size_t len;
	int i;

	rp_filter_mode(1);
	make_hot(&ok, mac_gw);
	r.d = forward_through(&ok, mac_gw);
	CHECK_EQ(r.d.src_hit + r.d.src_miss, 0);

	/* A source whose way back is through out0, in ok's slot. */
	k.ifindex = in0;
	k.family = SILO_AF_INET;
	memcpy(k.dst, ok.dst, 4);
	memcpy(&a, ok.src, 4);
	bad = ok;
	for (i = 1; i < 65536; i++) {
		bad.src[0] = 10;
		bad.src[1] = 93;
		bad.src[2] = i >> 8;
		bad.src[3] = i;
		memcpy(&b, bad.src, 4);
		if (silo_hot_slot(&k, b) == silo_hot_slot(&k, a))
			break;
	}
	REQUIRE(i < 65536, "no source of 10.93/16 shares ok's slot");
	len = pkt_build(pkt, &bad);
	for (i = 0; i < 3; i++) {
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_rp_filter, 1);
	}
	/* The third from its copy: no source check. */
	CHECK_EQ(r.d.src_hit + r.d.src_miss, 0);
	CHECK_EQ(r.d.cache_hit, 1);
	/* bad took the slot: ok's copy is made again, still forwarded. */
	forward_through(&ok, mac_gw);
	r.d = forward_through(&ok, mac_gw);
	CHECK_EQ(r.d.src_hit + r.d.src_miss, 0);
	rp_filter_mode(0);
}

int main(void)
{
	cpu_set_t all;

	if (test_init())
		return 1;
	if (fwd_run_on_cpu0(&all)) {
		printf("not ok - setup: cannot run on CPU 0\n");
		return 1;
	}
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_copy_serves_the_flow);
	RUN(test_sweeps_make_the_copy_go);
	RUN(test_genid_bump_makes_the_copy_go);
	RUN(test_flush_makes_the_copy_go);
	RUN(test_copy_checks_the_mac);
	RUN(test_earlier_silod_no_copies);
	RUN(test_slot_holds_one_key);
	RUN(test_copy_carries_the_source_check);
	fwd_teardown();
	return 0;
}
