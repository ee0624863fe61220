// SPDX-License-Identifier: GPL-2.0
/*
 * silo's XDP program through BPF_PROG_TEST_RUN: packet in, verdict and exact
 * bytes out, counters and route cache contents after. The program is the one
 * libsilo loads onto veths in this test's own network namespace, where the
 * routes and neighbours bpf_fib_lookup answers from are set up.
 */
#include <linux/limits.h>
#include "fwd.h"
#include "silo/abi/internal.h"
#include "silo_test.skel.h"

static __u32 out1;
static int prog_out1;

static int setup(void)
{
	struct silo_xdp_load_opts plain = { .unbound = true };

	if (fwd_setup(
		    "ip link add out1 type veth peer name out1p\n"
		    "sysctl -qw net.ipv6.conf.out1p.disable_ipv6=1\n"
		    "ip link set out1 up\n"
		    "ip link set out1p up\n"
		    "ip addr add 10.3.0.1/24 dev out1\n"
		    "ip neigh add 10.3.0.2 lladdr 02:00:00:00:03:02 dev out1 nud permanent\n"
		    "ip neigh add 10.1.0.3 lladdr 02:00:00:00:01:03 dev in0 nud permanent\n"
		    "ip route add 10.99.0.0/16 via 10.2.0.2\n"
		    "ip route add fd99::/64 via fd02::2\n"
		    "ip route add 10.98.0.0/16 via 10.2.0.9\n"
		    "ip route add 10.97.0.0/16 via 10.3.0.2\n"
		    "ip route add 10.96.0.0/16 via 10.1.0.3\n"
		    "ip route add 10.95.0.0/16 via 10.2.0.2 mtu lock 1000\n"
		    "ip route add 10.92.0.0/16 via 10.2.0.2 mtu lock 500\n"
		    "ip route add unreachable 10.66.0.0/16\n"
		    "ip route add blackhole 10.67.0.0/16\n"
		    "ip route add prohibit 10.68.0.0/16\n"))
		return -1;
	/* out1 runs silo without forwarding: not a place to redirect to. */
	out1 = if_nametoindex("out1");
	if (silo_xdp_load(s, "out1", &plain))
		return -1;
	prog_out1 = prog_of(out1);
	return prog_out1 < 0 ? -1 : 0;
}

static void test_ipv4_forward_miss_then_hit(void)
{
	struct pkt_spec sp = spec4("10.99.1.1");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, &sp);
	struct result r;

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_miss, 1);
	/* The route, and the source check's answer in an entry of its own. */
	CHECK_EQ(r.d.src_miss, 1);
	CHECK_EQ(r.d.cache_insert, 2);
	CHECK_EQ(r.d.fib_success, 1); /* counts forward lookups */
	REQUIRE(source_entry(&sp, &e) == 1, "no source entry after a miss");
	CHECK_EQ(e.verdict, 0);
	CHECK_EQ(e.ifindex, 0);
	CHECK_EQ(e.genid, genid_now());
	REQUIRE(cache_entry(&sp, &e) == 1, "no cache entry after a miss");
	CHECK_EQ(e.ifindex, out0);
	CHECK_EQ(e.genid, genid_now());
	CHECK_EQ(e.mtu, 1500);
	CHECK(!memcmp(e.dmac, mac_gw, 6), "cached dmac is not the neighbour's");
	CHECK(!memcmp(e.smac, mac_out0, 6), "cached smac is not out0's");

	/* Checksum: the incremental update equals a full recomputation. */
	CHECK_EQ(pkt_csum(r.out + 14, 20), 0);

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
	CHECK_EQ(r.d.src_hit, 1);
	CHECK_EQ(r.d.fib_success, 0);
	CHECK_EQ(r.d.cache_miss, 0);
}

static void test_ipv6_forward_miss_then_hit(void)
{
	struct pkt_spec sp = spec6("fd99::1");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, &sp);
	struct result r;

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.out[14 + 7], 63); /* hop limit */
	CHECK_EQ(r.d.cache_miss, 1);
	CHECK_EQ(r.d.fib_success, 1);
	REQUIRE(cache_entry(&sp, &e) == 1, "no cache entry after a miss");
	CHECK_EQ(e.ifindex, out0);
	CHECK_EQ(e.family, SILO_AF_INET6);

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
	CHECK_EQ(r.d.fib_success, 0);
}

/* A stale entry is refreshed in place with the current genid. */
static void test_genid_bump_refreshes_with_current_genid(void)
{
	struct pkt_spec sp = spec4("10.99.2.2");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, &sp);
	struct result r;
	__u64 g;

	run_pkt(pkt, len, &r);
	CHECK_EQ(r.d.cache_insert, 1); /* the source entry is 10.99.1.1's */
	REQUIRE(silo_genid_bump(s, &g) == 0, "genid bump failed");
	REQUIRE(cache_entry(&sp, &e) == 1, "entry gone after a bump");
	CHECK(e.genid < g, "entry genid %llu not older than %llu",
	      (unsigned long long)e.genid, (unsigned long long)g);

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_stale, 1);
	/* The route entry and the (shared) source entry, both in place. */
	CHECK_EQ(r.d.cache_refresh, 2);
	CHECK_EQ(r.d.cache_insert, 0);
	CHECK_EQ(r.d.fib_success, 1);
	REQUIRE(cache_entry(&sp, &e) == 1, "entry gone after a refresh");
	CHECK_EQ(e.genid, g);

	/* ... so the packet after it is a hit again, not a miss forever. */
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
	CHECK_EQ(r.d.fib_success, 0);
}

/* After a route change and a bump, the next packet takes the new route. */
static void test_route_change_takes_new_nexthop(void)
{
	struct pkt_spec sp = spec4("10.94.0.1");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, &sp);
	struct result r;
	__u64 g;

	REQUIRE(!sh("ip route add 10.94.0.0/16 via 10.2.0.2"), "route add");
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sh("ip route replace 10.94.0.0/16 via 10.2.0.3");
	/* Without a bump the cache still says the old way. */
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
	silo_genid_bump(s, &g);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw2);
	REQUIRE(cache_entry(&sp, &e) == 1, "entry gone");
	CHECK(!memcmp(e.dmac, mac_gw2, 6), "cache kept the old nexthop's MAC");
	sh("ip route del 10.94.0.0/16");
}

/* A packet the program must hand to the stack, untouched, for one reason. */
static void expect_pass(const char *what, const uint8_t *pkt, size_t len,
			unsigned int reason)
{
	struct result r;

	run_pkt(pkt, len, &r);
	CHECK(r.verdict == XDP_PASS, "%s: verdict %d, want XDP_PASS", what,
	      r.verdict);
	CHECK(r.len == len && !memcmp(r.out, pkt, len),
	      "%s: the packet was modified", what);
	CHECK(((__u64 *)&r.d)[reason] == 1, "%s: %s += %llu, want 1", what,
	      silo_stat_name(reason),
	      (unsigned long long)((__u64 *)&r.d)[reason]);
	CHECK(r.d.pass == 1 && r.d.rx == 1 && r.d.redirect == 0,
	      "%s: rx %llu pass %llu redirect %llu", what,
	      (unsigned long long)r.d.rx, (unsigned long long)r.d.pass,
	      (unsigned long long)r.d.redirect);
}

static void test_parse_failures_pass_by_reason(void)
{
	uint8_t pkt[PKT_MAX];
	struct pkt_spec sp;
	size_t len, l3;

	sp = spec4("10.99.3.3");
	sp.ethertype = 0x0806; /* ARP */
	len = pkt_build(pkt, &sp);
	expect_pass("arp", pkt, len, SILO_STAT_PASS_NOT_IP);

	sp = spec4("10.99.3.3");
	sp.nr_vlans = 2;
	len = pkt_build(pkt, &sp);
	/* a third tag in front of the two */
	memmove(pkt + 16, pkt + 12, len - 12);
	pkt_put16(pkt + 12, ETH_P_8021Q);
	pkt_put16(pkt + 14, 7);
	pkt_put16(pkt + 16, ETH_P_8021Q);
	expect_pass("three vlan tags", pkt, len + 4, SILO_STAT_PASS_VLAN_DEPTH);

	sp = spec4("10.99.3.3");
	len = pkt_build(pkt, &sp);
	expect_pass("truncated ipv4 header", pkt, 14 + 12,
		    SILO_STAT_PASS_TRUNCATED);
	sp = spec6("fd99::3");
	len = pkt_build(pkt, &sp);
	expect_pass("truncated ipv6 header", pkt, 14 + 30,
		    SILO_STAT_PASS_TRUNCATED);
	sp = spec4("10.99.3.3");
	sp.nr_vlans = 1;
	len = pkt_build(pkt, &sp);
	expect_pass("truncated vlan tag", pkt, 15, SILO_STAT_PASS_TRUNCATED);

	sp = spec4("10.99.3.3");
	len = pkt_build(pkt, &sp);
	pkt[14] = 0x65; /* version 6 under an IPv4 ethertype */
	expect_pass("version mismatch", pkt, len, SILO_STAT_PASS_BAD_VERSION);

	sp = spec4("10.99.3.3");
	len = pkt_build(pkt, &sp);
	pkt[14] = 0x44; /* IHL 16 bytes */
	expect_pass("ihl below 5", pkt, len, SILO_STAT_PASS_BAD_IHL);

	sp = spec4("10.99.3.3");
	len = pkt_build(pkt, &sp);
	pkt_put16(pkt + 16, len - 14 + 1); /* one byte beyond the frame */
	expect_pass("total length beyond frame", pkt, len,
		    SILO_STAT_PASS_BAD_LEN);
	pkt_put16(pkt + 16, 19); /* shorter than its header */
	expect_pass("total length below ihl", pkt, len, SILO_STAT_PASS_BAD_LEN);

	sp = spec6("fd99::3");
	len = pkt_build(pkt, &sp);
	pkt_put16(pkt + 14 + 4, len - 14 - 40 + 1);
	expect_pass("ipv6 payload beyond frame", pkt, len,
		    SILO_STAT_PASS_BAD_LEN);

	sp = spec4("10.99.3.3");
	sp.frag_off = 0x2000; /* more fragments */
	len = pkt_build(pkt, &sp);
	expect_pass("ipv4 first fragment", pkt, len, SILO_STAT_PASS_FRAGMENT);
	sp.frag_off = 0x0010; /* offset 128 */
	len = pkt_build(pkt, &sp);
	expect_pass("ipv4 later fragment", pkt, len, SILO_STAT_PASS_FRAGMENT);

	sp = spec6("fd99::3");
	sp.nr_exthdrs = 1;
	sp.exthdr[0] = 44;
	len = pkt_build(pkt, &sp);
	expect_pass("ipv6 fragment header", pkt, len, SILO_STAT_PASS_FRAGMENT);

	sp = spec6("fd99::3");
	sp.nr_exthdrs = 9;
	memset(sp.exthdr, 60, sizeof(sp.exthdr)); /* destination options */
	len = pkt_build(pkt, &sp);
	expect_pass("nine extension headers", pkt, len, SILO_STAT_PASS_EXTHDR);

	sp = spec6("fd99::3");
	sp.nr_exthdrs = 2;
	sp.exthdr[0] = 60;
	sp.exthdr[1] = 0; /* hop-by-hop, but not first */
	len = pkt_build(pkt, &sp);
	expect_pass("hop-by-hop not first", pkt, len, SILO_STAT_PASS_EXTHDR);

	sp = spec4("10.99.3.3");
	sp.proto = IPPROTO_ICMP;
	len = pkt_build(pkt, &sp);
	expect_pass("icmp", pkt, len, SILO_STAT_PASS_L4_PROTO);

	sp = spec4("10.99.3.3");
	sp.payload = 0;
	len = pkt_build(pkt, &sp);
	l3 = pkt_l3_off(&sp);
	pkt_put16(pkt + l3 + 2, 20 + 4); /* UDP header cut by tot_len */
	memcpy(pkt + l3 + 10, (uint16_t[]){ 0 }, 2);
	memcpy(pkt + l3 + 10, (uint16_t[]){ pkt_csum(pkt + l3, 20) }, 2);
	expect_pass("udp header beyond ip length", pkt, len,
		    SILO_STAT_PASS_L4_BAD);

	sp = spec4("10.99.3.3");
	sp.proto = IPPROTO_TCP;
	len = pkt_build(pkt, &sp);
	pkt[pkt_l3_off(&sp) + 20 + 12] = 4 << 4; /* data offset 16 bytes */
	expect_pass("tcp data offset below 5", pkt, len, SILO_STAT_PASS_L4_BAD);
}

/*
 * local_bits, the filter in front of local_addrs, holds every address's
 * bit: local packets stay local. A clear bit says "not local" without the
 * lookup (in0's, cleared by hand: the forward path then finds the local
 * route), unless a silod that does not keep the filter beats.
 */
static int local_bit_set(const struct silo_local_bits *bits, int v6_,
			 const char *addr)
{
	uint8_t a[16];
	__u32 b;

	if (v6_)
		v6(a, addr);
	else
		v4(a, addr);
	b = silo_local_bit(v6_ ? SILO_AF_INET6 : SILO_AF_INET, a);
	return bits->w[b / 64] >> (b % 64) & 1;
}

static void test_local_bits(void)
{
	int fd = fwd_pin_get(SILO_PIN_LOCAL_BITS);
	struct silo_local_bits bits, saved;
	uint8_t pkt[PKT_MAX], a[16];
	struct pkt_spec sp;
	__u32 zero = 0, b;
	size_t len;

	REQUIRE(fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &saved),
		"local_bits");
	CHECK(local_bit_set(&saved, 0, "10.1.0.1"), "in0's IPv4 bit is clear");
	CHECK(local_bit_set(&saved, 1, "fd01::1"), "in0's IPv6 bit is clear");
	CHECK(local_bit_set(&saved, 0, "10.2.0.1"), "out0's IPv4 bit is clear");

	bits = saved;
	v4(a, "10.1.0.1");
	b = silo_local_bit(SILO_AF_INET, a);
	bits.w[b / 64] &= ~(1ULL << (b % 64));
	REQUIRE(!bpf_map_update_elem(fd, &zero, &bits, BPF_ANY), "write");
	sp = spec4("10.1.0.1");
	len = pkt_build(pkt, &sp);
	expect_pass("local address, bit clear", pkt, len, SILO_STAT_PASS_FIB);
	fwd_hb_keeps = 0;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	expect_pass("local address, bit clear, an earlier silod", pkt, len,
		    SILO_STAT_PASS_LOCAL);
	fwd_hb_keeps = SILO_HB_LOCAL_BITS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	REQUIRE(!bpf_map_update_elem(fd, &zero, &saved, BPF_ANY), "restore");
	expect_pass("local address", pkt, len, SILO_STAT_PASS_LOCAL);
	close(fd);
}

static void test_forward_guards_pass_to_stack(void)
{
	uint8_t pkt[PKT_MAX];
	struct pkt_spec sp;
	size_t len;

	sp = spec4("10.1.0.1");
	len = pkt_build(pkt, &sp);
	expect_pass("local address", pkt, len, SILO_STAT_PASS_LOCAL);
	sp = spec6("fd01::1");
	len = pkt_build(pkt, &sp);
	expect_pass("local ipv6 address", pkt, len, SILO_STAT_PASS_LOCAL);
	sp = spec4("10.1.0.1");
	sp.nr_vlans = 2;
	len = pkt_build(pkt, &sp);
	expect_pass("local, 802.1ad + 802.1Q", pkt, len, SILO_STAT_PASS_LOCAL);
	sp = spec4("10.1.0.1");
	sp.ip_opt_words = 2;
	len = pkt_build(pkt, &sp);
	expect_pass("local, ip options", pkt, len, SILO_STAT_PASS_LOCAL);

	sp = spec4("10.99.3.3");
	sp.nr_vlans = 1;
	len = pkt_build(pkt, &sp);
	expect_pass("tagged, to forward", pkt, len, SILO_STAT_PASS_VLAN);

	sp = spec4("10.99.3.3");
	sp.dmac[5] ^= 1;
	len = pkt_build(pkt, &sp);
	expect_pass("another host's MAC", pkt, len, SILO_STAT_PASS_NOT_HOST);
	memset(sp.dmac, 0xFF, 6);
	len = pkt_build(pkt, &sp);
	expect_pass("broadcast MAC", pkt, len, SILO_STAT_PASS_NOT_HOST);

	sp = spec4("10.99.3.3");
	sp.ip_opt_words = 1;
	len = pkt_build(pkt, &sp);
	expect_pass("ip options", pkt, len, SILO_STAT_PASS_IP_OPTIONS);

	sp = spec4("10.99.3.3");
	len = pkt_build(pkt, &sp);
	pkt[14 + 10] ^= 0x55;
	expect_pass("bad header checksum", pkt, len, SILO_STAT_PASS_BAD_CSUM);

	sp = spec4("224.0.0.5");
	len = pkt_build(pkt, &sp);
	expect_pass("multicast destination", pkt, len, SILO_STAT_PASS_MARTIAN);
	sp = spec4("10.99.3.3");
	v4(sp.src, "127.0.0.1");
	len = pkt_build(pkt, &sp);
	expect_pass("loopback source", pkt, len, SILO_STAT_PASS_MARTIAN);
	sp = spec6("fe80::1");
	len = pkt_build(pkt, &sp);
	expect_pass("link-local destination", pkt, len, SILO_STAT_PASS_MARTIAN);

	sp = spec6("fd99::3");
	sp.nr_exthdrs = 1;
	sp.exthdr[0] = 0;
	len = pkt_build(pkt, &sp);
	expect_pass("hop-by-hop options", pkt, len, SILO_STAT_PASS_HOP_BY_HOP);

	sp = spec4("10.99.3.3");
	sp.ttl = 1;
	len = pkt_build(pkt, &sp);
	expect_pass("ttl 1", pkt, len, SILO_STAT_PASS_TTL);
	sp = spec6("fd99::3");
	sp.ttl = 1;
	len = pkt_build(pkt, &sp);
	expect_pass("hop limit 1", pkt, len, SILO_STAT_PASS_TTL);

	sp = spec4("10.96.0.1");
	len = pkt_build(pkt, &sp);
	expect_pass("egress is ingress", pkt, len, SILO_STAT_PASS_HAIRPIN);
	sp = spec4("10.97.0.1");
	len = pkt_build(pkt, &sp);
	expect_pass("egress without silo", pkt, len, SILO_STAT_PASS_NO_TX_PORT);
}

/* Extension headers that are not fragments or hop-by-hop: forwarded. */
static void test_ipv6_extension_headers_forwarded(void)
{
	struct pkt_spec sp = spec6("fd99::7");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	sp.nr_exthdrs = 2;
	sp.exthdr[0] = 60; /* destination options */
	sp.exthdr[1] = 43; /* routing */
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
}

static void expect_fib(const char *dst, unsigned int code, size_t payload)
{
	struct pkt_spec sp = spec4(dst);
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	size_t len;
	struct result r;

	sp.payload = payload;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK(r.verdict == XDP_PASS, "%s: verdict %d", dst, r.verdict);
	CHECK(((__u64 *)&r.d)[code] == 1, "%s: %s not counted", dst,
	      silo_stat_name(code));
	CHECK(r.d.pass_fib == 1, "%s: pass_fib not counted", dst);
	CHECK(r.d.cache_insert == 0 && cache_entry(&sp, &e) == 0,
	      "%s: a failed lookup was cached", dst);
	CHECK(!memcmp(r.out, pkt, len), "%s: packet modified", dst);
}

static void test_fib_codes_pass_and_are_not_cached(void)
{
	expect_fib("10.66.0.1", SILO_STAT_FIB_UNREACHABLE, 32);
	expect_fib("10.67.0.1", SILO_STAT_FIB_BLACKHOLE, 32);
	expect_fib("10.68.0.1", SILO_STAT_FIB_PROHIBIT, 32);
	expect_fib("10.50.0.1", SILO_STAT_FIB_NOT_FWDED, 32); /* no route */
	expect_fib("10.98.0.1", SILO_STAT_FIB_NO_NEIGH, 32);
	expect_fib("10.95.0.2", SILO_STAT_FIB_FRAG_NEEDED, 1200);
	sh("sysctl -qw net.ipv4.conf.in0.forwarding=0");
	expect_fib("10.99.4.4", SILO_STAT_FIB_FWD_DISABLED, 32);
	sh("sysctl -qw net.ipv4.conf.in0.forwarding=1");
}

/* The MTU is checked on a cache hit too. */
/*
 * A hit checks the route's MTU, cached with the entry (below the least
 * PMTU: no exception can be lower). Above it, every packet is resolved.
 */
static void test_mtu_checked_on_hit(void)
{
	struct pkt_spec sp = spec4("10.92.0.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sp.payload = 510; /* 538 bytes: above 500, below the floor 552 */
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.cache_hit, 1);
	CHECK_EQ(r.d.pass_mtu, 1);

	sp = spec4("10.95.0.1");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sp.payload = 1200;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.cache_big, 1);
	CHECK_EQ(r.d.cache_hit, 0);
	CHECK_EQ(r.d.fib_frag_needed, 1);
}

static void test_device_without_forward(void)
{
	struct pkt_spec sp = spec4("10.99.5.5");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	len = pkt_build(pkt, &sp);
	run_pkt_dev(prog_out1, out1, pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_no_forward, 1);
	CHECK_EQ(r.d.fib_success, 0);
}

static void rp_filter_mode(int mode)
{
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=%d", mode);
	CHECK(fwd_reload_in0(NULL) == 0, "replace on in0");
}

static void test_rp_filter(void)
{
	struct pkt_spec sp = spec4("10.99.6.6");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	rp_filter_mode(1);
	v4(sp.src, "10.55.0.1"); /* no way back at all */
	len = pkt_build(pkt, &sp);
	expect_pass("strict rp_filter, no route back", pkt, len,
		    SILO_STAT_PASS_RP_FILTER);
	/* The "no" is cached in a source entry, and used from there. */
	CHECK(source_entry(&sp, &e) == 1 &&
		      e.verdict == SILO_STAT_PASS_RP_FILTER,
	      "no source entry saying pass_rp_filter");
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.src_hit, 1);
	CHECK_EQ(r.d.pass_rp_filter, 1);
	CHECK_EQ(r.d.fib_success, 0);
	v4(sp.src, "10.2.0.9"); /* the way back is through out0 */
	len = pkt_build(pkt, &sp);
	expect_pass("strict rp_filter, route back through another device", pkt,
		    len, SILO_STAT_PASS_RP_FILTER);
	sp = spec4("10.99.6.6");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);

	/* Loose: any way back will do. */
	rp_filter_mode(2);
	v4(sp.src, "10.2.0.9");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	v4(sp.src, "10.55.0.1");
	len = pkt_build(pkt, &sp);
	expect_pass("loose rp_filter, no route back", pkt, len,
		    SILO_STAT_PASS_RP_FILTER);

	rp_filter_mode(0);
}

/*
 * Without a rule on sources or a multipath route, sources share the route
 * entry of their destination. A rule "from" makes the source matter: the
 * key takes it as the rule appears (flags stored, genid bumped), and the
 * other source's entry is never used for it.
 */
static void test_source_keyed_only_where_it_matters(void)
{
	struct pkt_spec a = spec4("10.86.0.1"), b = a;
	uint8_t pa[PKT_MAX], pb[PKT_MAX];
	struct silo_info info;
	struct result r;
	size_t la, lb;
	__u64 g0;

	REQUIRE(!sh("ip route add 10.86.0.0/16 via 10.2.0.2 && "
		    "ip route add 10.86.0.0/16 via 10.2.0.3 table 200"),
		"routes");
	v4(b.src, "10.1.0.9");
	la = pkt_build(pa, &a);
	lb = pkt_build(pb, &b);
	run_pkt(pa, la, &r);
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.cache_miss, 1);
	run_pkt(pb, lb, &r);
	check_forwarded(&b, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1); /* another source, the same entry */
	CHECK_EQ(r.d.src_miss, 1); /* its own source check */

	g0 = genid_now();
	REQUIRE(!sh("ip rule add from 10.1.0.9 lookup 200 pref 90"), "rule");
	if (fwd_reload_in0(NULL))
		goto out;
	REQUIRE(silo_info(s, &info) == 0, "info");
	CHECK(info.genid_flags & SILO_GENID_KEY_SRC_V4, "source not keyed");
	CHECK(info.genid_flags & SILO_GENID_RULES_SRC_V4, "no reason given");
	CHECK(!(info.genid_flags & SILO_GENID_KEY_SRC_V6), "IPv6 keyed too");
	CHECK(info.genid > g0, "genid not bumped for the new key");
	run_pkt(pb, lb, &r);
	check_forwarded(&b, &r, mac_gw2);
	CHECK_EQ(r.d.cache_hit, 0);
	run_pkt(pa, la, &r);
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 0);
	run_pkt(pb, lb, &r);
	check_forwarded(&b, &r, mac_gw2);
	CHECK_EQ(r.d.cache_hit, 1);

	/* Without the rule the source leaves the key again. */
	sh("ip rule del from 10.1.0.9 lookup 200 pref 90");
	if (fwd_reload_in0(NULL))
		goto out;
	REQUIRE(silo_info(s, &info) == 0, "info");
	CHECK(!(info.genid_flags & SILO_GENID_KEY_SRC_V4),
	      "source still keyed");
	run_pkt(pb, lb, &r);
	check_forwarded(&b, &r, mac_gw);
out:
	sh("ip rule del from 10.1.0.9 lookup 200 pref 90 2>/dev/null; "
	   "ip route del 10.86.0.0/16; ip route del 10.86.0.0/16 table 200");
}

struct src_entries {
	const struct pkt_spec *sp;
	int found; /* source entries of sp's source and destination */
	__u8 verdict;
};

static int src_cb(__u32 node, const struct silo_route_key *k,
		  const struct silo_route_entry *e, void *data)
{
	struct src_entries *f = data;

	(void)node;
	if (k->ifindex == in0 && (k->format & SILO_KEY_SOURCE) &&
	    !memcmp(k->src, f->sp->src, 16) &&
	    !memcmp(k->dst, f->sp->dst, 16)) {
		f->found++;
		f->verdict = e->verdict;
	}
	return 0;
}

/*
 * The route back (rp_filter's lookup) has the packet's destination as its
 * source: under an IPv4 rule "from" a prefix, it depends on the
 * destination, and so does the source entry's key. From one source, a
 * destination the rule sends the way back through out0 is refused by
 * strict rp_filter, another is not: neither takes the other's verdict.
 */
static void test_source_entry_keyed_on_destination(void)
{
	struct pkt_spec a = spec4("10.99.41.1"), b = spec4("10.99.40.1");
	struct src_entries fa = { .sp = &a }, fb = { .sp = &b };
	uint8_t pa[PKT_MAX], pb[PKT_MAX];
	size_t la = pkt_build(pa, &a), lb = pkt_build(pb, &b);
	struct silo_info info;
	struct result r;
	int pass;

	if (sh("ip route add 10.1.0.0/24 via 10.2.0.2 table 202 && "
	       "ip rule add from 10.99.40.0/24 lookup 202 pref 91")) {
		t_fail(__FILE__, __LINE__, "rule");
		goto out;
	}
	rp_filter_mode(1);
	if (silo_info(s, &info) ||
	    !(info.genid_flags & SILO_GENID_RULES_SRC_V4)) {
		t_fail(__FILE__, __LINE__,
		       "no rule from a source in the flags");
		goto out;
	}
	run_pkt(pa, la, &r);
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.src_miss, 1);
	run_pkt(pb, lb, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_rp_filter, 1);
	CHECK_EQ(r.d.src_miss, 1);
	/* From the cache now, each its own answer, in either order. */
	for (pass = 0; pass < 2; pass++) {
		run_pkt(pb, lb, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_rp_filter, 1);
		CHECK_EQ(r.d.src_hit, 1);
		run_pkt(pa, la, &r);
		check_forwarded(&a, &r, mac_gw);
		CHECK_EQ(r.d.src_hit, 1);
	}
	CHECK(silo_route_foreach(s, src_cb, &fa) == 0 && fa.found == 1 &&
		      fa.verdict == 0,
	      "%d source entries of 10.99.41.1, verdict %u", fa.found,
	      fa.verdict);
	CHECK(silo_route_foreach(s, src_cb, &fb) == 0 && fb.found == 1 &&
		      fb.verdict == SILO_STAT_PASS_RP_FILTER,
	      "%d source entries of 10.99.40.1, verdict %u", fb.found,
	      fb.verdict);
out:
	sh("ip rule del from 10.99.40.0/24 lookup 202 pref 91 2>/dev/null; "
	   "ip route del 10.1.0.0/24 table 202 2>/dev/null; true");
	rp_filter_mode(0);
}

/* in0's program's per-CPU admission state (not pinned: per program). */
static int admit_fd(void)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ids[32], i;
	struct bpf_map_info mi;
	__u32 ml;
	int fd;

	info.nr_map_ids = 32;
	info.map_ids = (__u64)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_in0, &info, &len))
		return -1;
	for (i = 0; i < info.nr_map_ids && i < 32; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		memset(&mi, 0, sizeof(mi));
		ml = sizeof(mi);
		if (!bpf_obj_get_info_by_fd(fd, &mi, &ml) &&
		    !strcmp(mi.name, "admit"))
			return fd;
		close(fd);
	}
	return -1;
}

/* The admission clock's now: bpf_ktime_get_coarse_ns(). */
static __u64 coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Every CPU's budget: tokens, last refilled at last_ns. */
static int admit_stamp(int fd, __u32 tokens, __u64 last_ns)
{
	int n = libbpf_num_possible_cpus(), i, err;
	struct silo_admit *v = calloc(n, sizeof(*v));
	__u32 zero = 0;

	if (!v)
		return -1;
	for (i = 0; i < n; i++) {
		v[i].tokens = tokens;
		v[i].last_ns = last_ns;
	}
	err = bpf_map_update_elem(fd, &zero, v, BPF_ANY);
	free(v);
	return err;
}

/* Every CPU's budget: tokens, and no refill before stamp_s from now. */
static int admit_set(int fd, __u32 tokens, int stamp_s)
{
	return admit_stamp(fd, tokens,
			   stamp_s ? coarse_ns() + stamp_s * 1000000000ULL : 0);
}

/*
 * Past its budget a CPU caches a key only on its second sighting: a flood
 * of one-packet flows is forwarded without an insert (or an eviction) each.
 */
static void test_admission(void)
{
	struct pkt_spec a = spec4("10.99.20.1"), c = spec4("10.99.20.3"),
			d = spec4("10.99.20.4");
	uint8_t pa[PKT_MAX], pc[PKT_MAX], pd[PKT_MAX];
	size_t la = pkt_build(pa, &a), lc = pkt_build(pc, &c),
	       ld = pkt_build(pd, &d);
	struct silo_route_entry e;
	cpu_set_t all, one;
	struct result r;
	int fd = admit_fd();

	REQUIRE(fd >= 0, "no admit map on in0's program");
	/* The budget and the keys seen are per CPU: every run on one. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_getaffinity(0, sizeof(all), &all) ||
	    sched_setaffinity(0, sizeof(one), &one)) {
		close(fd);
		REQUIRE(0, "pin to a CPU");
	}
	REQUIRE(admit_set(fd, 0, 100) == 0, "spend the budget");
	run_pkt(pa, la, &r);
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.cache_miss, 1);
	/* Neither the route nor the (cached) source entry is looked up:
	 * this CPU has seen neither key since its budget ran out. */
	CHECK_EQ(r.d.cache_unseen, 2);
	CHECK_EQ(r.d.cache_refused, 2);
	CHECK_EQ(r.d.cache_insert, 0);
	CHECK_EQ(cache_entry(&a, &e), 0);
	run_pkt(pa, la, &r); /* seen before: looked up, admitted */
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.cache_unseen, 0);
	CHECK_EQ(r.d.cache_refused, 0);
	CHECK_EQ(r.d.cache_insert, 1);
	CHECK_EQ(cache_entry(&a, &e), 1);
	run_pkt(pa, la, &r);
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);

	/* Within the budget the first packet is cached, and spends it. */
	REQUIRE(admit_set(fd, 1, 100) == 0, "a budget of one");
	run_pkt(pc, lc, &r);
	check_forwarded(&c, &r, mac_gw);
	CHECK_EQ(r.d.cache_insert, 1);
	run_pkt(pd, ld, &r);
	check_forwarded(&d, &r, mac_gw);
	CHECK_EQ(r.d.cache_refused, 1);

	/* A stamp of 0: the next miss refills the whole budget. */
	admit_set(fd, 0, 0);
	sched_setaffinity(0, sizeof(all), &all);
	close(fd);
}

struct net_count {
	__u8 net[3]; /* a /24 */
	int routes;
};

static int net_cb(__u32 node, const struct silo_route_key *k,
		  const struct silo_route_entry *e, void *data)
{
	struct net_count *c = data;

	(void)node;
	(void)e;
	c->routes += k->ifindex == in0 && k->family == SILO_AF_INET &&
		     !(k->format & SILO_KEY_SOURCE) &&
		     !memcmp(k->dst, c->net, 3);
	return 0;
}

#define FLOOD 200

/*
 * A budget spent, last refilled a little more than one SILO_ADMIT_NS ago:
 * a flood of new keys gets what the time gone by refills, one insert per
 * SILO_ADMIT_NS, and no more; the rest is refused. The refill moves the
 * stamp on by what it granted, or every later miss would refill again.
 * The coarse clock steps by a tick (a few ms): the bound is the time from
 * the stamp to the flood's end, a few inserts, far below the flood.
 */
static void test_admission_refills_by_elapsed_time(void)
{
	struct pkt_spec sp = spec4("10.99.30.1");
	struct silo_stats before, after;
	cpu_set_t all, one;
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	__u64 stamp, grant = 0;
	struct net_count c;
	int fd = admit_fd(), i, try, fwd = 0;
	__u32 olen;

	REQUIRE(fd >= 0, "no admit map on in0's program");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	if (sched_getaffinity(0, sizeof(all), &all) ||
	    sched_setaffinity(0, sizeof(one), &one)) {
		close(fd);
		REQUIRE(0, "pin to a CPU");
	}
	/* A try the machine slowed down to a budget near the flood's size
	 * proves nothing: another, on keys of their own. */
	for (try = 0; try < 3; try++) {
		grant = 0;
		memset(&c, 0, sizeof(c));
		c.net[0] = 10;
		c.net[1] = 99;
		c.net[2] = 30 + try;
		sp.dst[2] = c.net[2];
		stats_total(&before);
		stamp = coarse_ns() - SILO_ADMIT_NS * 3 / 2;
		if (admit_stamp(fd, 0, stamp))
			break;
		for (i = 0, fwd = 0; i < FLOOD; i++) {
			sp.dst[3] = i + 1;
			fwd += run_on(prog_in0, in0, pkt, pkt_build(pkt, &sp),
				      out, &olen) == XDP_REDIRECT;
		}
		grant = (coarse_ns() - stamp) / SILO_ADMIT_NS;
		stats_total(&after);
		if (grant < FLOOD / 4)
			break;
		printf("# try %d: the flood took %llu ms\n", try,
		       (unsigned long long)grant);
	}
	sched_setaffinity(0, sizeof(all), &all);
	admit_set(fd, 0, 0); /* the next miss refills the whole budget */
	close(fd);
	REQUIRE(try < 3, "every flood took too long to tell");
	REQUIRE(grant, "admit state not set");
	CHECK_EQ(fwd, FLOOD);
	REQUIRE(silo_route_foreach(s, net_cb, &c) == 0, "route foreach");
	/* At least the refill the stamp's age gave; at most what the time
	 * to the flood's end gave (the source entry may take one of it). */
	CHECK(c.routes >= 1 && c.routes <= (int)grant,
	      "%d of %d new keys cached, want 1 to %llu", c.routes, FLOOD,
	      (unsigned long long)grant);
	CHECK(after.cache_insert - before.cache_insert <= grant,
	      "%llu inserts, want at most %llu",
	      (unsigned long long)(after.cache_insert - before.cache_insert),
	      (unsigned long long)grant);
	/* The source entry's first sighting may be refused too. */
	CHECK(after.cache_refused - before.cache_refused >=
		      (__u64)(FLOOD - c.routes),
	      "%llu refused of %d new keys, %d cached",
	      (unsigned long long)(after.cache_refused - before.cache_refused),
	      FLOOD, c.routes);
}

/* A rule on ports puts protocol and ports into the cache key; a hash on
 * ports without a multipath route does not. */
static void test_port_rules_key_on_ports(void)
{
	struct pkt_spec sp = spec4("10.99.7.7");
	struct silo_info info;
	uint8_t pkt[PKT_MAX];
	struct result r;
	__u64 g0 = genid_now();
	size_t len;

	REQUIRE(!sh("ip rule add ipproto tcp dport 22 prohibit pref 100"),
		"ip rule add");
	REQUIRE(fwd_reload_in0(NULL) == 0, "replace on in0");
	REQUIRE(silo_info(s, &info) == 0, "info");
	CHECK(info.genid_flags & SILO_GENID_KEY_L4, "key_l4 flag not set");
	CHECK(info.genid > g0, "genid not bumped for the new key");

	sp.proto = IPPROTO_TCP;
	sp.dport = 80;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sp.dport = 22;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.fib_prohibit, 1);

	sh("ip rule del pref 100");
	/* A hash on ports matters only where a multipath route exists. */
	REQUIRE(!sh("sysctl -qw net.ipv4.fib_multipath_hash_policy=1"),
		"hash policy 1");
	REQUIRE(fwd_reload_in0(NULL) == 0, "replace on in0");
	REQUIRE(silo_info(s, &info) == 0, "info");
	sh("sysctl -qw net.ipv4.fib_multipath_hash_policy=0");
	CHECK(!(info.genid_flags & SILO_GENID_KEY_L4), "key_l4 flag left set");
	CHECK(info.genid_flags & SILO_GENID_HASH_L4, "hash_l4 not set");
	CHECK(!(info.genid_flags & SILO_GENID_RULES_L4), "rules_l4 left set");
}

static void test_route_flush(void)
{
	struct pkt_spec sp = spec4("10.99.8.8");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = pkt_build(pkt, &sp);

	run_pkt(pkt, len, &r);
	REQUIRE(cache_entry(&sp, &e) == 1, "no entry");
	CHECK(silo_route_flush(s) >= 1, "flush deleted nothing");
	CHECK_EQ(cache_entry(&sp, &e), 0);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.d.cache_miss, 1);
}

/* What silo route lookup compares: the FIB probe agrees with the cache. */
static int count_record(void *ctx, void *data, size_t size)
{
	(void)data;
	*(long *)ctx += size == sizeof(struct silo_fill_rec);
	return 0;
}

/*
 * With the fill log full (silod not draining it), a miss is not cached:
 * the packet is forwarded by bpf_fib_lookup's answer, so a route changed
 * meanwhile takes effect at once (an entry no one can sweep would not).
 * Once the log is drained, the next miss is cached again.
 */
static void test_full_fill_log_caches_nothing(void)
{
	struct pkt_spec sp = spec4("10.99.77.1");
	struct silo_route_entry e;
	struct ring_buffer *rb = NULL;
	struct silo_test *skel;
	uint8_t pkt[PKT_MAX], frame[64] = {};
	size_t len = pkt_build(pkt, &sp);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = 70000);
	char path[PATH_MAX];
	struct result r;
	long drained = 0;
	int fd;

	skel = silo_test__open();
	REQUIRE(skel, "silo_test");
	bpf_program__set_autoload(skel->progs.log_fill, true);
	snprintf(path, sizeof(path), "%s/fill_log", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	REQUIRE(fd >= 0 && !bpf_map__reuse_fd(skel->maps.fill_log, fd) &&
			!silo_test__load(skel),
		"log_fill on the live fill log");
	/* 65,536 records fill it: the last runs find it full */
	REQUIRE(!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.log_fill),
					&o),
		"test run");
	CHECK_EQ(o.retval, XDP_DROP);

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_insert, 0);
	CHECK_EQ(r.d.cache_no_log, 1); /* its source entry is cached already */
	CHECK_EQ(cache_entry(&sp, &e), 0);
	REQUIRE(!sh("ip route add 10.99.77.1/32 via 10.2.0.3"), "route add");
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw2);
	CHECK_EQ(r.d.cache_miss, 1);
	CHECK_EQ(r.d.fib_success, 1);

	rb = ring_buffer__new(fd, count_record, &drained, NULL);
	REQUIRE(rb, "reading the fill log");
	ring_buffer__consume(rb);
	/* 64-byte records with their headers, less one: the log was full */
	CHECK(drained >= SILO_FILL_LOG_BYTES / 64 - 1,
	      "only %ld records drained", drained);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw2);
	CHECK_EQ(r.d.cache_insert, 1);
	CHECK_EQ(r.d.cache_no_log, 0);
	CHECK_EQ(cache_entry(&sp, &e), 1);
	sh("ip route del 10.99.77.1/32");
	silo_route_flush(s); /* no silod here to sweep it */
	ring_buffer__free(rb);
	close(fd);
	silo_test__destroy(skel);
}

static void test_fib_probe_matches_cache(void)
{
	struct pkt_spec sp = spec4("10.99.9.9");
	struct silo_fib_probe p = {};
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = pkt_build(pkt, &sp);

	run_pkt(pkt, len, &r);
	REQUIRE(cache_entry(&sp, &e) == 1, "no entry");
	p.params.family = AF_INET;
	p.params.ifindex = in0;
	memcpy(&p.params.ipv4_src, sp.src, 4);
	memcpy(&p.params.ipv4_dst, sp.dst, 4);
	REQUIRE(silo_fib_lookup(s, &p) == 0, "fib probe failed");
	CHECK_EQ(p.rc, BPF_FIB_LKUP_RET_SUCCESS);
	CHECK_EQ(p.params.ifindex, e.ifindex);
	CHECK(!memcmp(p.params.dmac, e.dmac, 6), "dmac differs");
	CHECK(!memcmp(p.params.smac, e.smac, 6), "smac differs");
	CHECK_EQ(p.params.mtu_result, e.mtu);
}

/*
 * The in-lookup hooks of bpf/tests/silo_test.bpf.c on this test's live maps: they
 * act from inside bpf_fib_lookup (its FIB tracepoint), which makes the races
 * of the data path deterministic under BPF_PROG_TEST_RUN.
 */
static struct silo_test *hooks;
static struct bpf_link *hook_links[2];

static int hooks_open(void)
{
	int err;

	hooks = silo_test__open();
	if (!hooks)
		return -errno;
	bpf_program__set_autoload(hooks->progs.in_fib4_lookup, true);
	bpf_program__set_autoload(hooks->progs.in_fib6_lookup, true);
	err = fwd_reuse_pin(hooks->maps.genid, "genid");
	if (!err)
		err = fwd_reuse_pin(hooks->maps.route_cache, "route_cache");
	if (!err)
		err = fwd_reuse_pin(hooks->maps.cpu_node, "cpu_node");
	if (!err)
		err = silo_test__load(hooks);
	if (err) {
		printf("# cannot load the in-lookup hooks: %s\n",
		       strerror(-err));
		return err;
	}
	hook_links[0] = bpf_program__attach(hooks->progs.in_fib4_lookup);
	hook_links[1] = bpf_program__attach(hooks->progs.in_fib6_lookup);
	if (!hook_links[0] || !hook_links[1]) {
		err = -errno;
		printf("# cannot attach to the FIB lookup tracepoints: %s\n",
		       strerror(-err));
		return err;
	}
	return 0;
}

static void hooks_close(void)
{
	bpf_link__destroy(hook_links[0]);
	bpf_link__destroy(hook_links[1]);
	silo_test__destroy(hooks);
}

/* Runs pkt with the hooks armed for this process only. */
static void run_pkt_hooked(const uint8_t *pkt, size_t len, struct result *r)
{
	hooks->bss->in_fired = 0;
	hooks->bss->in_taken = 0;
	hooks->bss->in_tgid = getpid();
	run_pkt(pkt, len, r);
	hooks->bss->in_tgid = 0;
}

struct key_ctx {
	const struct pkt_spec *sp;
	struct silo_route_key key;
	struct silo_route_entry entry;
	int found;
};

static int key_cb(__u32 node, const struct silo_route_key *k,
		  const struct silo_route_entry *e, void *data)
{
	struct key_ctx *f = data;

	(void)node;
	if (k->ifindex == in0 && !(k->format & SILO_KEY_SOURCE) &&
	    !memcmp(k->dst, f->sp->dst, 16)) {
		f->key = *k;
		f->entry = *e;
		f->found++;
	}
	return 0;
}

/*
 * An entry carries the genid read before the lookup that filled it, never
 * one read after: when a route changes (and genid is bumped) during the
 * lookup, the entry must be stale at once, not look current with the old
 * answer. The hook bumps genid from inside the lookup.
 */
static void genid_bump_during_lookup(struct pkt_spec sp)
{
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, &sp);
	struct result r;

	hooks->bss->in_bump = 1;
	run_pkt_hooked(pkt, len, &r);
	hooks->bss->in_bump = 0;
	REQUIRE(hooks->bss->in_fired >= 1,
		"the FIB lookup tracepoint did not fire: nothing tested");
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_insert, 1);
	REQUIRE(cache_entry(&sp, &e) == 1, "no cache entry after a miss");
	CHECK(e.genid < genid_now(),
	      "entry stamped with genid %llu, the genid after its lookup "
	      "(%llu): an entry newer than its answer",
	      (unsigned long long)e.genid, (unsigned long long)genid_now());
	/* So the next packet resolves again, and the one after hits. */
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 0);
	CHECK_EQ(r.d.cache_stale, 1);
	CHECK_EQ(r.d.fib_success, 1);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.d.cache_hit, 1);
}

static void test_genid_read_before_lookup(void)
{
	genid_bump_during_lookup(spec4("10.99.10.10"));
	genid_bump_during_lookup(spec6("fd99::10"));
}

/*
 * A refresh in place publishes its genid only if its key still owns the
 * element. During the lookup of flow A's refresh, the hook deletes A and
 * inserts flow B, which takes A's element (the test keeps to one CPU, where
 * a freed element goes to the next insert). The refresh must see that (a
 * race, no refresh) and leave the element unusable: B's next packet goes
 * B's way, not by A's answer written over B's entry.
 */
static void test_refresh_checks_the_key_still_owns_the_entry(void)
{
	struct pkt_spec a = spec4("10.99.11.11"), b = spec4("10.93.0.1");
	struct key_ctx ka = { .sp = &a }, kb = { .sp = &b };
	uint8_t pkta[PKT_MAX], pktb[PKT_MAX];
	size_t lena = pkt_build(pkta, &a), lenb = pkt_build(pktb, &b);
	cpu_set_t all, one;
	struct result r;
	__u64 g;

	REQUIRE(!sh("ip route add 10.93.0.0/16 via 10.2.0.3"), "route add");
	REQUIRE(sched_getaffinity(0, sizeof(all), &all) == 0, "affinity");
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0, "pin to a CPU");

	/* B first, then A: A's element is the last one this CPU took. */
	run_pkt(pktb, lenb, &r);
	check_forwarded(&b, &r, mac_gw2);
	run_pkt(pkta, lena, &r);
	check_forwarded(&a, &r, mac_gw);
	CHECK(silo_route_foreach(s, key_cb, &kb) == 0 && kb.found == 1,
	      "no cache entry for B");
	CHECK(silo_route_foreach(s, key_cb, &ka) == 0 && ka.found == 1,
	      "no cache entry for A");
	CHECK(silo_genid_bump(s, &g) == 0, "genid bump failed");
	if (t_failures)
		goto out;

	hooks->bss->in_key = ka.key;
	hooks->bss->in_key2 = kb.key;
	hooks->bss->in_val = kb.entry;
	hooks->bss->in_val.genid = g; /* B's entry is current */
	hooks->bss->in_take = 1;
	run_pkt_hooked(pkta, lena, &r);
	hooks->bss->in_take = 0;
	if (!hooks->bss->in_taken) {
		sched_setaffinity(0, sizeof(all), &all);
		sh("ip route del 10.93.0.0/16");
		SKIP("B did not get A's element: nothing to test here");
	}
	check_forwarded(&a, &r, mac_gw);
	CHECK_EQ(r.d.cache_stale, 1);
	CHECK_EQ(r.d.cache_race, 1);
	CHECK_EQ(r.d.cache_refresh, 1); /* the source entry, not A's */
	run_pkt(pktb, lenb, &r);
	check_forwarded(&b, &r, mac_gw2);
out:
	sched_setaffinity(0, sizeof(all), &all);
	sh("ip route del 10.93.0.0/16");
}

/* Sets IPv4 total length (and the header checksum) of a built packet. */
static void set_tot_len(uint8_t *pkt, size_t l3, uint16_t tot)
{
	uint16_t c;

	pkt_put16(pkt + l3 + 2, tot);
	memset(pkt + l3 + 10, 0, 2);
	c = pkt_csum(pkt + l3, 20);
	memcpy(pkt + l3 + 10, &c, 2);
}

/*
 * Headers at the edge of the IP length: exactly fitting is forwarded, one
 * byte short is the stack's (the frame itself is long enough either way).
 */
static void test_l4_and_exthdr_boundaries(void)
{
	uint8_t pkt[PKT_MAX];
	struct pkt_spec sp;
	struct result r;
	size_t len, l3;

	sp = spec4("10.99.13.13");
	sp.payload = 0;
	len = pkt_build(pkt, &sp);
	l3 = pkt_l3_off(&sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	set_tot_len(pkt, l3, 20 + 8 - 1);
	expect_pass("udp header one byte past ip length", pkt, len,
		    SILO_STAT_PASS_L4_BAD);

	sp = spec4("10.99.13.14");
	sp.proto = IPPROTO_TCP;
	sp.payload = 0;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	set_tot_len(pkt, l3, 20 + 20 - 1);
	expect_pass("tcp header one byte past ip length", pkt, len,
		    SILO_STAT_PASS_L4_BAD);

	sp = spec6("fd99::13");
	sp.payload = 0;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	pkt_put16(pkt + l3 + 4, 8 - 1);
	expect_pass("ipv6 udp header one byte past the payload", pkt, len,
		    SILO_STAT_PASS_L4_BAD);

	/* destination options (8 bytes), then UDP, no payload */
	sp = spec6("fd99::14");
	sp.payload = 0;
	sp.nr_exthdrs = 1;
	sp.exthdr[0] = 60;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	pkt_put16(pkt + l3 + 4, 8 - 1);
	expect_pass("extension header one byte past the payload", pkt, len,
		    SILO_STAT_PASS_EXTHDR);
	pkt_put16(pkt + l3 + 4, 0);
	expect_pass("extension header 8 bytes past the payload", pkt, len,
		    SILO_STAT_PASS_EXTHDR);
}

/*
 * A packet of exactly the egress MTU fits, on a miss and on a hit; one byte
 * more does not. The route's MTU is below the least PMTU (552), so the
 * entry is cached and used.
 */
static void test_packet_of_exactly_the_mtu_forwarded(void)
{
	struct pkt_spec sp = spec4("10.91.0.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	REQUIRE(!sh("ip route add 10.91.0.0/16 via 10.2.0.2 mtu lock 520"),
		"route add");
	sp.payload = 520 - 20 - 8;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
	sp.payload++;
	len = pkt_build(pkt, &sp);
	expect_pass("one byte over the cached mtu", pkt, len,
		    SILO_STAT_PASS_MTU);
	sh("ip route del 10.91.0.0/16");
}

/*
 * The least PMTU (net.ipv4.route.min_pmtu) splits packets: up to it the
 * cache serves them, above it bpf_fib_lookup does (it sees PMTU exceptions
 * the kernel learned without a notification).
 */
static void test_pmtu_floor_boundary(void)
{
	struct pkt_spec sp = spec4("10.99.14.14");
	uint8_t pkt[PKT_MAX];
	struct result r;
	unsigned int floor = 0;
	size_t len;
	FILE *f;

	f = fopen("/proc/sys/net/ipv4/route/min_pmtu", "r");
	REQUIRE(f, "cannot read min_pmtu");
	if (fscanf(f, "%u", &floor) != 1)
		floor = 0;
	fclose(f);
	REQUIRE(floor >= 68 && floor < 1400, "min_pmtu %u", floor);
	sp.payload = floor - 20 - 8;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_hit, 1);
	CHECK_EQ(r.d.cache_big, 0);
	sp.payload++;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_big, 1);
	CHECK_EQ(r.d.cache_hit, 0);
	CHECK_EQ(r.d.fib_success, 1);
}

/*
 * The TTL's incremental checksum update needs its end-around carry: with a
 * header checksum of 0xFEFF, TTL - 1 makes it 0x0000 (as a full
 * recomputation does), not 0xFFFF.
 */
static void test_ttl_checksum_carry(void)
{
	struct pkt_spec sp = spec4("10.99.12.12");
	uint8_t pkt[PKT_MAX], want[PKT_MAX];
	size_t len = pkt_build(pkt, &sp), l3 = pkt_l3_off(&sp);
	struct result r;
	uint16_t c;
	unsigned int id;

	for (id = 0; id <= 0xFFFF; id++) {
		pkt_put16(pkt + l3 + 4, id);
		memset(pkt + l3 + 10, 0, 2);
		c = pkt_csum(pkt + l3, 20);
		memcpy(pkt + l3 + 10, &c, 2);
		if (pkt[l3 + 10] == 0xFE && pkt[l3 + 11] == 0xFF)
			break;
	}
	REQUIRE(id <= 0xFFFF, "no IP id gives checksum 0xFEFF");
	memcpy(want, pkt, len);
	memcpy(want, mac_gw, 6);
	memcpy(want + 6, mac_out0, 6);
	want[l3 + 8]--;
	memset(want + l3 + 10, 0, 2);
	c = pkt_csum(want + l3, 20);
	memcpy(want + l3 + 10, &c, 2);

	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	CHECK_EQ(r.len, len);
	CHECK(!memcmp(r.out, want, len),
	      "checksum %02x%02x after TTL - 1, want %02x%02x (ttl %u)",
	      r.out[l3 + 10], r.out[l3 + 11], want[l3 + 10], want[l3 + 11],
	      r.out[l3 + 8]);
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_ipv4_forward_miss_then_hit);
	RUN(test_ipv6_forward_miss_then_hit);
	RUN(test_genid_bump_refreshes_with_current_genid);
	RUN(test_route_change_takes_new_nexthop);
	RUN(test_parse_failures_pass_by_reason);
	RUN(test_forward_guards_pass_to_stack);
	RUN(test_local_bits);
	RUN(test_ipv6_extension_headers_forwarded);
	RUN(test_fib_codes_pass_and_are_not_cached);
	RUN(test_mtu_checked_on_hit);
	RUN(test_device_without_forward);
	RUN(test_rp_filter);
	RUN(test_port_rules_key_on_ports);
	RUN(test_source_keyed_only_where_it_matters);
	RUN(test_source_entry_keyed_on_destination);
	RUN(test_admission);
	RUN(test_admission_refills_by_elapsed_time);
	RUN(test_route_flush);
	RUN(test_full_fill_log_caches_nothing);
	RUN(test_fib_probe_matches_cache);
	RUN(test_l4_and_exthdr_boundaries);
	RUN(test_packet_of_exactly_the_mtu_forwarded);
	RUN(test_pmtu_floor_boundary);
	RUN(test_ttl_checksum_carry);
	if (hooks_open() == 0) {
		RUN(test_genid_read_before_lookup);
		RUN(test_refresh_checks_the_key_still_owns_the_entry);
	} else {
		printf("not ok - in-lookup hooks: cannot load or attach\n");
	}
	hooks_close();
	silo_xdp_unload(s, "out1");
	close(prog_out1);
	fwd_teardown();
	return 0;
}
