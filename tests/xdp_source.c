// SPDX-License-Identifier: GPL-2.0
/*
 * The IPv4 source check without a lookup back (src_checked): under
 * rp_filter 0 a source outside every prefix the kernel's check may refuse
 * (routes neither unicast nor an error, in any table; this host's
 * addresses) is forwarded with no lookup and no source entry; one inside
 * takes the full check, whose verdict is the kernel's ("ip route get ...
 * iif in0" asks it). Through BPF_PROG_TEST_RUN, in this test's namespace.
 */
#include <stdio.h>
#include "fwd.h"

static int setup(void)
{
	/* This silod keeps src_checked (the heartbeat says so). */
	fwd_pmtu_watch = SILO_HB_SRCS;
	return fwd_setup("ip link set lo up\n"
			 "ip route add 10.99.0.0/16 via 10.2.0.2\n");
}

/* A load over the pins syncs genid and src_checked, as silod does. */
static void resync(void)
{
	REQUIRE(fwd_reload_in0(NULL) == 0, "replace on in0");
}

static __u32 genid_flags(void)
{
	struct silo_info info = {};

	return silo_info(s, &info) ? 0 : info.genid_flags;
}

static void set_genid_flags(__u32 flags)
{
	int fd = fwd_pin_get(SILO_PIN_GENID);
	struct silo_genid g;
	__u32 zero = 0;

	REQUIRE(fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &g), "genid");
	g.flags = flags;
	REQUIRE(!bpf_map_update_elem(fd, &zero, &g, BPF_ANY), "genid write");
	close(fd);
}

/* Does the kernel forward from src to 10.99.1.1, arriving on in0? */
static int kernel_forwards(const char *src)
{
	return !sh("ip route get 10.99.1.1 from %s iif in0 >/dev/null 2>&1",
		   src);
}

static void run_from(const char *src, struct pkt_spec *sp, struct result *r)
{
	uint8_t pkt[PKT_MAX];
	size_t len;

	*sp = spec4("10.99.1.1");
	v4(sp->src, src);
	len = pkt_build(pkt, sp);
	run_pkt(pkt, len, r);
}

/* What the walk puts in, and what it leaves out. */
static void test_map_holds_what_may_be_refused(void)
{
	CHECK(genid_flags() & SILO_GENID_SRCS_WHOLE, "src_checked not whole");
	CHECK_EQ(fwd_src_checked("10.1.0.1", 32), 1); /* in0's address */
	CHECK_EQ(fwd_src_checked("10.2.0.1", 32), 1);
	CHECK_EQ(fwd_src_checked("10.1.0.255", 32), 1); /* broadcast route */
	CHECK_EQ(fwd_src_checked("127.0.0.0", 8), 1); /* lo's local route */
	CHECK_EQ(fwd_src_checked("10.99.0.0", 16), 0); /* unicast */
	CHECK_EQ(fwd_src_checked("10.1.0.0", 24), 0);
	REQUIRE(!sh("ip route add blackhole 10.70.0.0/16 table 70 && "
		    "ip route add unreachable 10.71.0.0/16 table 70 && "
		    "ip route add local 10.72.0.0/16 dev lo table 70 && "
		    "ip route add broadcast 10.73.0.0/16 dev out0 table 70"),
		"routes of table 70");
	resync();
	CHECK_EQ(fwd_src_checked("10.70.0.0", 16), 0);
	CHECK_EQ(fwd_src_checked("10.71.0.0", 16), 0);
	CHECK_EQ(fwd_src_checked("10.72.0.0", 16), 1);
	CHECK_EQ(fwd_src_checked("10.73.0.0", 16), 1);
	sh("ip route flush table 70");
	resync();
	CHECK_EQ(fwd_src_checked("10.72.0.0", 16), 0);
	CHECK_EQ(fwd_src_checked("10.73.0.0", 16), 0);
	CHECK(genid_flags() & SILO_GENID_SRCS_WHOLE, "src_checked not whole");
}

/*
 * A source outside: forwarded, no lookup back, no source entry; 10.10/16
 * has no route back, which the kernel accepts and the full check (a
 * lookup that cannot tell no route from a local one) leaves to the stack.
 */
static void test_outside_needs_no_lookup(void)
{
	struct silo_route_entry e;
	struct pkt_spec sp;
	struct result r;
	int i;

	REQUIRE(kernel_forwards("10.10.0.9"), "the kernel refuses 10.10.0.9");
	/* Four frames: the last from this CPU's copy (route_hot). */
	for (i = 0; i < 4; i++) {
		run_from("10.10.0.9", &sp, &r);
		check_forwarded(&sp, &r, mac_gw);
		CHECK_EQ(r.d.src_miss, 0);
		CHECK_EQ(r.d.src_hit, 0);
	}
	CHECK_EQ(source_entry(&sp, &e), 0);

	/* A silod that does not keep src_checked (an earlier release's):
	 * the full check, cached; the copy made while it was kept is not
	 * used. */
	fwd_pmtu_watch = 0;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	run_from("10.10.0.9", &sp, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.src_miss, 1);
	run_from("10.99.5.5", &sp, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.src_miss, 1);
	CHECK_EQ(source_entry(&sp, &e), 1);
	fwd_pmtu_watch = SILO_HB_SRCS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");

	/* Nor where genid says the map is not whole. */
	set_genid_flags(genid_flags() & ~SILO_GENID_SRCS_WHOLE);
	run_from("10.10.0.10", &sp, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.src_miss, 1);
	resync();
	run_from("10.10.0.10", &sp, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK(genid_flags() & SILO_GENID_SRCS_WHOLE, "not whole again");

	/* rp_filter 2 takes the full check for every source. */
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=2");
	resync();
	run_from("10.99.7.7", &sp, &r);
	CHECK_EQ(r.d.src_miss, 1);
	CHECK_EQ(r.verdict,
		 kernel_forwards("10.99.7.7") ? XDP_REDIRECT : XDP_PASS);
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=0");
	resync();
}

/*
 * One of this host's addresses whose local route is gone: the kernel,
 * without custom rules or local routes, still refuses it (it asks its
 * addresses); the routes alone would say forward.
 */
static void test_address_without_local_route(void)
{
	struct pkt_spec sp;
	struct result r;
	__u64 gen;

	run_from("10.2.0.1", &sp, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_local_src, 1);
	REQUIRE(!sh("ip route del local 10.2.0.1 dev out0 table local"),
		"delete the local route");
	resync();
	/* What silod's sweep would do: the source entry made above goes. */
	REQUIRE(silo_genid_bump(s, &gen) == 0, "genid bump");
	CHECK_EQ(fwd_src_checked("10.2.0.1", 32), 1);
	REQUIRE(!kernel_forwards("10.2.0.1"), "the kernel forwards 10.2.0.1");
	run_from("10.2.0.1", &sp, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_local_src, 1);
	sh("ip route add local 10.2.0.1 dev out0 table local proto kernel "
	   "scope host src 10.2.0.1");
	resync();
}

/*
 * A local route (AnyIP) in a table a rule reaches: the kernel refuses its
 * sources, and silo leaves them to it; before the rule, the kernel
 * forwards them (no route back). Other sources still need no lookup.
 */
static void test_local_route_in_ruled_table(void)
{
	struct pkt_spec sp;
	struct result r;

	REQUIRE(!sh("ip route add local 10.60.0.0/16 dev lo table 60"),
		"local route in table 60");
	resync();
	CHECK_EQ(fwd_src_checked("10.60.0.0", 16), 1);
	REQUIRE(kernel_forwards("10.60.0.9"), "refused before the rule");
	run_from("10.60.0.9", &sp, &r);
	CHECK_EQ(r.d.src_miss, 1);
	/* No route back: bpf_fib_lookup cannot tell it from a local one. */
	CHECK_EQ(r.verdict, XDP_PASS);

	REQUIRE(!sh("ip rule add from all lookup 60 pref 60"), "rule");
	resync();
	REQUIRE(!kernel_forwards("10.60.0.10"), "forwarded after the rule");
	run_from("10.60.0.10", &sp, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_local_src, 1);
	run_from("10.10.0.11", &sp, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.src_miss, 0);
	sh("ip rule del pref 60; ip route flush table 60");
	resync();
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
	/* First: a local route added by hand (table 70's, 60's) makes the
	 * kernel check every source by its routes from then on. */
	RUN(test_address_without_local_route);
	RUN(test_map_holds_what_may_be_refused);
	RUN(test_outside_needs_no_lookup);
	RUN(test_local_route_in_ruled_table);
	fwd_teardown();
	return 0;
}
