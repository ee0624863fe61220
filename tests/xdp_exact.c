// SPDX-License-Identifier: GPL-2.0
/*
 * silo's verdict is the kernel's verdict: configurations in which the XDP
 * program used to forward what the kernel drops or sends elsewhere, each
 * through BPF_PROG_TEST_RUN on veths in this test's own namespace, and,
 * where the kernel can be asked ("ip route get"), compared with its answer.
 */
#include <stdio.h>
#include "fwd.h"

static int setup(void)
{
	return fwd_setup("ip route add 10.99.0.0/16 via 10.2.0.2\n"
			 "ip route add fd99::/64 via fd02::2\n");
}

static void replace_in0(const struct silo_xdp_load_opts *o)
{
	REQUIRE(fwd_reload_in0(o) == 0, "replace on in0");
}

static void expect_verdict(const char *what, const struct pkt_spec *sp,
			   int verdict, unsigned int reason)
{
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, sp);
	struct result r;

	run_pkt(pkt, len, &r);
	CHECK(r.verdict == verdict, "%s: verdict %d, want %d", what, r.verdict,
	      verdict);
	if (reason < SILO_STAT_MAX)
		CHECK(((__u64 *)&r.d)[reason] == 1, "%s: %s += %llu, want 1",
		      what, silo_stat_name(reason),
		      (unsigned long long)((__u64 *)&r.d)[reason]);
}

/*
 * Without silod nothing invalidates the cache or notices a firewall added
 * after the load: silo stands aside until silod beats again.
 */
static void test_no_silod_stands_aside(void)
{
	struct pkt_spec sp = spec4("10.99.1.1");
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, &sp);
	struct result r;

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	REQUIRE(!fwd_heartbeat(0), "heartbeat");
	expect_verdict("no silod", &sp, XDP_PASS, SILO_STAT_PASS_NO_DAEMON);
	/* A beat from the future (another clock) is no beat either. */
	REQUIRE(!fwd_heartbeat(-1), "heartbeat");
	expect_verdict("beat from the future", &sp, XDP_PASS,
		       SILO_STAT_PASS_NO_DAEMON);
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
}

/* rp_filter 0, accept_local 0: the kernel drops a packet from itself. */
static void test_local_source(void)
{
	struct pkt_spec sp = spec4("10.99.2.2");

	v4(sp.src, "10.2.0.1"); /* out0's address */
	expect_verdict("local source", &sp, XDP_PASS, SILO_STAT_PASS_LOCAL_SRC);
	sh("sysctl -qw net.ipv4.conf.in0.accept_local=1");
	replace_in0(NULL);
	expect_verdict("local source, accept_local", &sp, XDP_REDIRECT,
		       SILO_STAT_REDIRECT);
	sh("sysctl -qw net.ipv4.conf.in0.accept_local=0");
	replace_in0(NULL);
	expect_verdict("local source again", &sp, XDP_PASS,
		       SILO_STAT_PASS_LOCAL_SRC);
}

/*
 * Strict rp_filter with a rule "iif in0 lookup 100" whose table routes the
 * source back through in0: the kernel's source check looks up from
 * loopback, the rule does not apply, the main table says out0: drop.
 */
static void test_rp_filter_ignores_iif_rules(void)
{
	struct pkt_spec sp = spec4("10.99.3.3");

	REQUIRE(!sh("ip route add 10.77.0.0/16 via 10.2.0.3\n"
		    "ip route add 10.77.0.0/16 via 10.1.0.2 dev in0 table 100\n"
		    "ip rule add iif in0 lookup 100 pref 100\n"
		    "sysctl -qw net.ipv4.conf.in0.rp_filter=1"),
		"setup");
	replace_in0(NULL);
	v4(sp.src, "10.77.0.1");
	expect_verdict("strict, rule iif", &sp, XDP_PASS,
		       SILO_STAT_PASS_RP_FILTER);
	/* Loose: a unicast route back exists. */
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=2");
	replace_in0(NULL);
	expect_verdict("loose, rule iif", &sp, XDP_REDIRECT,
		       SILO_STAT_REDIRECT);
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=0\n"
	   "ip rule del pref 100\n"
	   "ip route del 10.77.0.0/16 table 100\n"
	   "ip route del 10.77.0.0/16");
	replace_in0(NULL);
}

/* ip route add P via inet6 G: the nexthop, and its neighbour, are IPv6. */
static void test_ipv4_via_ipv6_gateway(void)
{
	struct pkt_spec sp = spec4("10.88.0.1");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX], gw[16];
	size_t len = pkt_build(pkt, &sp);
	struct result r;

	REQUIRE(!sh("ip route add 10.88.0.0/16 via inet6 fd02::3 dev out0"),
		"route via inet6");
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw2);
	REQUIRE(cache_entry(&sp, &e) == 1, "no entry");
	CHECK_EQ(e.family, SILO_AF_INET6);
	v6(gw, "fd02::3");
	CHECK(!memcmp(e.nexthop, gw, 16), "nexthop is not fd02::3");
	sh("ip route del 10.88.0.0/16");
}

/* The stack trims bytes after the IP packet and forwards the rest. */
static void test_trailing_bytes_trimmed(void)
{
	struct pkt_spec sp4 = spec4("10.99.4.4"), sp6 = spec6("fd99::4");
	const struct pkt_spec *sps[] = { &sp4, &sp6 };
	uint8_t pkt[PKT_MAX];
	unsigned int i;
	struct result r;
	size_t len;

	for (i = 0; i < 2; i++) {
		len = pkt_build(pkt, sps[i]);
		memset(pkt + len, 0xAB, 6);
		run_pkt(pkt, len + 6, &r);
		check_forwarded(sps[i], &r, mac_gw);
		CHECK_EQ(r.d.trimmed, 1);
	}
}

static int node_cache_fd(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/route_cache_n0", silo_pin_dir(s));
	return bpf_obj_get(path);
}

/*
 * An element reused by another key while a reader holds it: the reader
 * sees the other key's fields under a current genid. Stored here as such an
 * element (key B, fields and key of A, a bogus MAC): B must not use it.
 */
static void test_entry_of_another_key_refused(void)
{
	struct pkt_spec a = spec4("10.99.5.1"), b = spec4("10.99.5.2");
	struct silo_route_entry e;
	struct silo_route_key kb;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;
	int fd;

	len = pkt_build(pkt, &a);
	run_pkt(pkt, len, &r);
	REQUIRE(cache_entry(&a, &e) == 1, "no entry for A");
	kb = e.key;
	memcpy(kb.dst, b.dst, 16);
	memcpy(e.dmac, "\x02\xBA\xD0\x00\x00\x01", 6);
	fd = node_cache_fd();
	REQUIRE(fd >= 0, "route_cache_n0: %s", strerror(errno));
	REQUIRE(!bpf_map_update_elem(fd, &kb, &e, BPF_ANY), "update");
	close(fd);
	len = pkt_build(pkt, &b);
	run_pkt(pkt, len, &r);
	check_forwarded(&b, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 0);
	CHECK_EQ(r.d.cache_race, 1);
}

/* Reads the gateway "ip route get" names for a flow arriving on in0. */
static int kernel_gateway(const char *args, char *gw, size_t len)
{
	char cmd[512], line[512], *p;
	FILE *f;
	int found = -1;

	snprintf(cmd, sizeof(cmd), "ip route get %s iif in0 2>&1", args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, " via ");
		if (p && sscanf(p, " via %63s", gw) == 1 && strlen(gw) < len)
			found = 0;
	}
	pclose(f);
	return found;
}

/*
 * IPv4 multipath with the L4 hash (policy 1): the kernel hashes on ports;
 * so must the lookup, with the cache and without it.
 */
static void test_ecmp_ipv4_l4_hash(void)
{
	struct silo_xdp_load_opts nocache = { .forward = true,
					      .replace = true,
					      .no_cache = true,
					      .unbound = true };
	int pass, i, agree = 0, used2 = 0, used3 = 0;
	uint8_t pkt[PKT_MAX];
	struct result r;
	char gw[64], args[256];
	size_t len;

	REQUIRE(!sh("sysctl -qw net.ipv4.fib_multipath_hash_policy=1\n"
		    "ip route add 10.66.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3"),
		"ecmp route");
	for (pass = 0; pass < 2; pass++) {
		replace_in0(pass ? &nocache : NULL);
		for (i = 0; i < 32; i++) {
			struct pkt_spec sp = spec4("10.66.0.1");

			sp.sport = 1000 + i;
			sp.dport = 53;
			len = pkt_build(pkt, &sp);
			run_pkt(pkt, len, &r);
			REQUIRE(r.verdict == XDP_REDIRECT, "not forwarded");
			snprintf(
				args, sizeof(args),
				"10.66.0.1 from 10.1.0.2 ipproto udp sport %d dport 53",
				1000 + i);
			REQUIRE(!kernel_gateway(args, gw, sizeof(gw)),
				"ip route get %s", args);
			used2 += !memcmp(r.out, mac_gw, 6);
			used3 += !memcmp(r.out, mac_gw2, 6);
			agree += !strcmp(gw, "10.2.0.2") ?
					 !memcmp(r.out, mac_gw, 6) :
					 !memcmp(r.out, mac_gw2, 6);
		}
	}
	CHECK(used2 && used3, "one nexthop only: %d and %d", used2, used3);
	CHECK_EQ(agree, 64);
	sh("ip route del 10.66.0.0/16\n"
	   "sysctl -qw net.ipv4.fib_multipath_hash_policy=0");
	replace_in0(NULL);
}

/*
 * IPv6 multipath, default policy: the flow label and next header are hashed.
 * Flows that differ only in their label must spread as the kernel spreads
 * them, and each label needs its own cache entry.
 */
static void test_ecmp_ipv6_flow_label(void)
{
	int i, used2 = 0, used3 = 0, again = 0;
	uint8_t pkt[PKT_MAX], first[64][6];
	struct result r;
	size_t len;

	REQUIRE(!sh("ip -6 route add fd66::/64 nexthop via fd02::2 nexthop via fd02::3"),
		"ecmp route");
	replace_in0(NULL); /* the key's format follows the sysctl */
	for (i = 0; i < 64; i++) {
		struct pkt_spec sp = spec6("fd66::1");

		sp.flowlabel = 0x12345 + i * 7919;
		len = pkt_build(pkt, &sp);
		run_pkt(pkt, len, &r);
		REQUIRE(r.verdict == XDP_REDIRECT, "not forwarded");
		memcpy(first[i], r.out, 6);
		used2 += !memcmp(r.out, mac_gw, 6);
		used3 += !memcmp(r.out, mac_gw2, 6);
	}
	CHECK(used2 && used3, "one nexthop only: %d and %d", used2, used3);
	/* From the cache now: the same choice for each label. */
	for (i = 0; i < 64; i++) {
		struct pkt_spec sp = spec6("fd66::1");

		sp.flowlabel = 0x12345 + i * 7919;
		len = pkt_build(pkt, &sp);
		run_pkt(pkt, len, &r);
		again += r.d.cache_hit && !memcmp(r.out, first[i], 6);
	}
	CHECK_EQ(again, 64);
	sh("ip -6 route del fd66::/64");
}

/*
 * A route's MTU: the kernel's forwarding honours it (fragments, or sends
 * "fragmentation needed" / "packet too big"), bpf_fib_lookup only when it
 * is locked. Larger packets towards its prefix go to the stack, the same
 * towards another prefix are forwarded (route_mtus).
 */
static void route_mtu_case(const char *prefix, const char *via,
			   struct pkt_spec sp, int mtu, const char *other)
{
	struct pkt_spec osp = sp;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	REQUIRE(!sh("ip route add %s via %s mtu %d", prefix, via, mtu),
		"route add");
	replace_in0(NULL); /* silod would resync; the load does too */
	sp.payload = mtu - (sp.family == AF_INET6 ? 48 : 28);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sp.payload++;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_mtu, 1);
	run_pkt(pkt, len, &r); /* from the cache: the entry holds the MTU */
	CHECK(r.verdict == XDP_PASS && r.d.pass_mtu == 1 && r.d.cache_hit == 1,
	      "cached: verdict %d pass_mtu %llu hit %llu", r.verdict,
	      (unsigned long long)r.d.pass_mtu,
	      (unsigned long long)r.d.cache_hit);
	/* Other prefixes of the family are not touched. */
	if (sp.family == AF_INET)
		v4(osp.dst, other);
	else
		v6(osp.dst, other);
	osp.payload = sp.payload;
	len = pkt_build(pkt, &osp);
	run_pkt(pkt, len, &r);
	check_forwarded(&osp, &r, mac_gw);
	/* Without a silod that keeps route_mtus (an earlier release's), the
	 * least route MTU of the family applies to every prefix. */
	fwd_pmtu_watch &= ~SILO_HB_ROUTE_MTUS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	run_pkt(pkt, len, &r);
	CHECK(r.verdict == XDP_PASS && r.d.pass_route_mtu == 1,
	      "without a silod that keeps route_mtus: verdict %d", r.verdict);
	fwd_pmtu_watch |= SILO_HB_ROUTE_MTUS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	sp.payload = mtu - (sp.family == AF_INET6 ? 48 : 28) + 1;
	len = pkt_build(pkt, &sp);
	/* Without the MTU the same packet is forwarded. */
	sh("ip route replace %s via %s", prefix, via);
	replace_in0(NULL);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sh("ip route del %s", prefix);
}

static void test_route_mtu(void)
{
	/* Watched, as silod says on this lab: larger packets use the cache;
	 * and silod keeps route_mtus. */
	fwd_pmtu_watch =
		1U << SILO_FAM_V4 | 1U << SILO_FAM_V6 | SILO_HB_ROUTE_MTUS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	route_mtu_case("10.40.0.0/16", "10.2.0.2", spec4("10.40.0.1"), 1000,
		       "10.99.40.1");
	route_mtu_case("fd40::/64", "fd02::2", spec6("fd40::1"), 1280,
		       "fd99::40:1");
	fwd_pmtu_watch = 0;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
}

/*
 * Where rules make the matched route unknowable, the least candidate: a
 * prefix holds the least MTU of every prefix that covers it, in any table.
 * A locked MTU is bpf_fib_lookup's own: not there.
 */
static void test_route_mtus_least_of_covering(void)
{
	REQUIRE(!sh("ip route add 10.41.0.0/16 via 10.2.0.2 mtu 1300 table 100\n"
		    "ip route add 10.41.1.0/24 via 10.2.0.2 mtu 1450\n"
		    "ip route add 10.42.0.0/16 via 10.2.0.2 mtu lock 1200"),
		"routes");
	replace_in0(NULL);
	CHECK_EQ(fwd_route_mtu_of("10.41.1.1"), 1300);
	CHECK_EQ(fwd_route_mtu_of("10.41.2.1"), 1300);
	CHECK_EQ(fwd_route_mtu_of("10.42.0.1"), 0);
	CHECK_EQ(fwd_route_mtu_of("10.99.0.1"), 0);
	sh("ip route del 10.41.0.0/16 table 100\n"
	   "ip route del 10.41.1.0/24\n"
	   "ip route del 10.42.0.0/16");
	replace_in0(NULL);
	CHECK_EQ(fwd_route_mtu_of("10.41.1.1"), 0);
}

/* A bridge port's frames belong to the bridge, not to IP routing. */
static void test_bridge_port_passes(void)
{
	struct silo_xdp_load_opts fwd = { .forward = true, .unbound = true };
	struct pkt_spec sp = spec4("10.99.6.6");
	uint8_t pkt[PKT_MAX], mac[6];
	struct result r;
	size_t len;
	__u32 ifindex;
	int prog;

	REQUIRE(!sh("ip link add br0 type bridge\n"
		    "ip link add in1 type veth peer name in1p\n"
		    "ip link set in1 master br0\n"
		    "for d in br0 in1 in1p; do ip link set $d up; done"),
		"bridge");
	ifindex = if_nametoindex("in1");
	REQUIRE(!read_mac("in1", mac), "mac");
	REQUIRE(!silo_xdp_load(s, "in1", &fwd), "load on in1");
	prog = prog_of(ifindex);
	REQUIRE(prog >= 0, "prog");
	memcpy(sp.dmac, mac, 6);
	len = pkt_build(pkt, &sp);
	run_pkt_dev(prog, ifindex, pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_port, 1);
	close(prog);
	silo_xdp_unload(s, "in1");
	sh("ip link del in1; ip link del br0");
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_no_silod_stands_aside);
	RUN(test_local_source);
	RUN(test_rp_filter_ignores_iif_rules);
	RUN(test_ipv4_via_ipv6_gateway);
	RUN(test_trailing_bytes_trimmed);
	RUN(test_entry_of_another_key_refused);
	RUN(test_ecmp_ipv4_l4_hash);
	RUN(test_ecmp_ipv6_flow_label);
	RUN(test_route_mtu);
	RUN(test_route_mtus_least_of_covering);
	RUN(test_bridge_port_passes);
	fwd_teardown();
	return 0;
}
