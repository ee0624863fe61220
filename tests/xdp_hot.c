// SPDX-License-Identifier: GPL-2.0
/*
 * route_hot, this CPU's answers for the flows it forwards, found by the
 * frame's shape before anything is parsed: a flow's second packet copies
 * its entry there and the next ones are forwarded from the copy, with no
 * route cache lookup (shown by deleting the route cache's entry by hand:
 * the flow is still a hit). What makes the copy go: genid.sweeps moved
 * forward (silod's sweeps, "silo route flush"), a genid bump, another flow
 * in its slot; it is not used while a silod beats that does not move
 * sweeps. A frame of another MAC is not the flow's; a refused source is
 * never copied; and what the shape leaves out (lengths, IPv4's ID and
 * checksum, the TCP header past the ports, the size against the MTUs and
 * the PMTU marks) is checked for every frame. The test runs on one CPU:
 * the copies are per CPU.
 */
#include <stdio.h>
#include "silo/abi/internal.h"
#include "fwd.h"
#include "../user/lib/silod.h"

/* route_hot's slot of a frame with a shape (internal.h), as the program
 * computes it. */
static __u32 hot_slot_of(const uint8_t *pkt)
{
	__u64 w[SILO_SHAPE_WORDS];

	memcpy(w, pkt, sizeof(w));
	if (pkt[12] == 0x08 && pkt[13] == 0x00)
		return silo_hot_index(silo_hot_hash(w[3] & SILO_SHAPE_V4_M3,
						    w[4] & SILO_SHAPE_V4_M4, 0,
						    0, 0, 0));
	return silo_hot_index(silo_hot_hash(w[2] & SILO_SHAPE_V6_M2, w[3], w[4],
					    w[5], w[6],
					    w[7] & SILO_SHAPE_V6_M7));
}

static __u32 spec_slot(const struct pkt_spec *sp)
{
	uint8_t pkt[PKT_MAX];

	pkt_build(pkt, sp);
	return hot_slot_of(pkt);
}

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

/* Three packets: a miss (inserted), a route cache hit (the flow seen), a
 * route cache hit (copied). */
static void make_hot(const struct pkt_spec *sp, const uint8_t *dmac)
{
	struct silo_stats d;
	int i;

	d = forward_through(sp, dmac);
	CHECK_EQ(d.cache_miss, 1);
	for (i = 0; i < 2; i++) {
		d = forward_through(sp, dmac);
		CHECK_EQ(d.cache_hit, 1);
		CHECK_EQ(d.fib_success, 0);
	}
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

/* sp's frame, sent to the stack: its counters (none from a copy). */
static struct silo_stats expect_pass(const struct pkt_spec *sp)
{
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = pkt_build(pkt, sp);

	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.cache_hit, 0);
	return r.d;
}

/* silod watching family fam's errors (larger frames from the cache), no
 * mark and no error unseen: pmtu_marks' and pmtu_unseen's fds. */
static void pmtu_watch_only(int fam, int *marks, int *unseen)
{
	*marks = fwd_pin_get(SILO_PIN_PMTU_MARKS);
	*unseen = fwd_pin_get(SILO_PIN_PMTU_UNSEEN);
	REQUIRE(*marks >= 0 && *unseen >= 0, "pmtu maps");
	fwd_pmtu_forget(*marks, *unseen);
	fwd_pmtu_watch = 1U << fam;
	REQUIRE(fwd_heartbeat(1) == 0, "heartbeat");
}

static void pmtu_unwatch(int marks, int unseen)
{
	fwd_pmtu_forget(marks, unseen);
	close(marks);
	close(unseen);
	fwd_pmtu_watch = 0;
	REQUIRE(fwd_heartbeat(1) == 0, "heartbeat");
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
	fwd_sweeps_forward();
	expect_miss(&sp, mac_gw2);
	CHECK_EQ(forward_through(&sp, mac_gw2).cache_hit, 1); /* copied */
	delete_entry(&sp);
	expect_hot(&sp, mac_gw2);
	REQUIRE(!sh("ip route replace 10.93.0.0/16 via 10.2.0.2"), "restore");
	fwd_sweeps_forward();
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

/* Two flows in one slot take turns: each is a copy of its own entry. */
static void test_slot_holds_one_flow(void)
{
	struct pkt_spec a = spec4("10.93.7.7"), b = a;
	char dst[32];
	int i;

	for (i = 1; i < 65536; i++) {
		b.dst[2] = i >> 8;
		b.dst[3] = i;
		if (spec_slot(&b) == spec_slot(&a) && memcmp(b.dst, a.dst, 4))
			break;
	}
	REQUIRE(i < 65536, "no flow to 10.93/16 shares a's slot");
	snprintf(dst, sizeof(dst), "10.93.%u.%u", b.dst[2], b.dst[3]);
	/* Another way out for b: a copy of one flow's answer given to the
	 * other would show in the MACs. */
	REQUIRE(!sh("ip route add %s/32 via 10.2.0.3", dst), "b's route");
	make_hot(&a, mac_gw);
	make_hot(&b, mac_gw2);
	delete_entry(&b);
	expect_hot(&b, mac_gw2);
	/* b took the slot: a's frames are route cache hits again, seen
	 * then copied back, b's as well. */
	CHECK_EQ(forward_through(&a, mac_gw).cache_hit, 1);
	CHECK_EQ(forward_through(&a, mac_gw).cache_hit, 1);
	delete_entry(&a);
	expect_hot(&a, mac_gw);
	expect_miss(&b, mac_gw2);
	sh("ip route del %s/32", dst);
}

/*
 * A copy is the ingress device's: the same bytes given to in0's program
 * as if from out0 are not the flow's (and out0's MAC is not the frame's:
 * the stack's).
 */
static void test_copy_is_the_ingress_devices(void)
{
	struct pkt_spec sp = spec4("10.93.11.11");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	make_hot(&sp, mac_gw);
	len = pkt_build(pkt, &sp);
	run_pkt_dev(prog_in0, out0, pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_not_host, 1);
	CHECK_EQ(r.d.cache_hit, 0);
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
}

/* Only while silod beats: not with a beat from another clock's future,
 * not with none. */
static void test_copy_needs_silod(void)
{
	struct pkt_spec sp = spec6("fd93::16");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;
	int live;

	make_hot(&sp, mac_gw);
	len = pkt_build(pkt, &sp);
	for (live = -1; live <= 0; live++) {
		REQUIRE(fwd_heartbeat(live) == 0, "heartbeat");
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_no_daemon, 1);
	}
	REQUIRE(fwd_heartbeat(1) == 0, "heartbeat");
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
}

/* Strict rp_filter on in0 (the loader reads it into in0's record). */
static void rp_filter_mode(int mode)
{
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=%d", mode);
	CHECK(fwd_reload_in0(NULL) == 0, "replace on in0");
}

/*
 * A hot flow takes no source check; a source the check refuses is never
 * copied: each of its frames takes the check (from its source entry) and
 * goes to the stack, and the flow whose slot it shares keeps its copy.
 */
static void test_refused_source_not_copied(void)
{
	struct pkt_spec ok = spec4("10.93.8.8"), bad = ok;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;
	int i;

	rp_filter_mode(1);
	make_hot(&ok, mac_gw);
	r.d = forward_through(&ok, mac_gw);
	CHECK_EQ(r.d.src_hit + r.d.src_miss, 0);

	/* A source whose way back is through out0, in ok's slot. */
	for (i = 1; i < 65536; i++) {
		bad.src[0] = 10;
		bad.src[1] = 93;
		bad.src[2] = i >> 8;
		bad.src[3] = i;
		if (spec_slot(&bad) == spec_slot(&ok))
			break;
	}
	REQUIRE(i < 65536, "no source of 10.93/16 shares ok's slot");
	len = pkt_build(pkt, &bad);
	for (i = 0; i < 3; i++) {
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_rp_filter, 1);
		CHECK_EQ(r.d.src_hit + r.d.src_miss, 1);
	}
	CHECK_EQ(r.d.src_hit, 1);
	delete_entry(&ok);
	expect_hot(&ok, mac_gw);
	rp_filter_mode(0);
}

/* sp's frame with its IPv4 ID set to id, the checksum made right again. */
/* An IPv4 header's checksum made right again. */
static void ip_csum(uint8_t *ip)
{
	uint16_t c;

	memset(ip + 10, 0, 2);
	c = pkt_csum(ip, 20);
	memcpy(ip + 10, &c, 2);
}

static size_t frame_with_id(const struct pkt_spec *sp, uint8_t *pkt,
			    uint16_t id)
{
	size_t len = pkt_build(pkt, sp), l3 = pkt_l3_off(sp);

	pkt_put16(pkt + l3 + 4, id);
	ip_csum(pkt + l3);
	return len;
}

/*
 * What the shape leaves out is checked for every frame of a hot IPv4
 * flow: another ID with its checksum right, another length, a trailer
 * (trimmed) are the flow's; TTL 1, a wrong checksum, a length past the
 * frame or short of the UDP header are not, and the full path has them
 * as it would without a copy.
 */
static void test_front_checks_each_frame(void)
{
	struct pkt_spec sp = spec4("10.93.9.9"), big;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len, l3 = pkt_l3_off(&sp);

	make_hot(&sp, mac_gw);
	delete_entry(&sp);
	len = frame_with_id(&sp, pkt, 0x1234);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	CHECK_EQ(r.d.cache_hit, 1);
	CHECK_EQ(r.out[l3 + 8], 63); /* TTL */
	CHECK_EQ(pkt_csum(r.out + l3, 20), 0);
	big = sp;
	big.payload = 500;
	expect_hot(&big, mac_gw);

	/* TTL 1: the stack's, for time exceeded. */
	big = sp;
	big.ttl = 1;
	len = pkt_build(pkt, &big);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_ttl, 1);
	CHECK_EQ(r.d.cache_hit, 0);

	/* A wrong checksum: to the stack. */
	len = frame_with_id(&sp, pkt, 0x1234);
	pkt[l3 + 10] ^= 0x40;
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_bad_csum, 1);
	CHECK_EQ(r.d.cache_hit, 0);
	/* An IP length past the frame: to the stack. */
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len - 1, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_bad_len, 1);
	/* A trailer (Ethernet's padding): trimmed, from the copy. */
	len = pkt_build(pkt, &sp);
	memset(pkt + len, 0xEE, 6);
	run_pkt(pkt, len + 6, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.trimmed, 1);
	CHECK_EQ(r.d.cache_hit, 1);
	/* An IP length that cuts the UDP header, the rest a trailer: the
	 * stack's, as the parse has it. */
	len = pkt_build(pkt, &sp);
	pkt_put16(pkt + l3 + 2, 20 + 4);
	ip_csum(pkt + l3);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_l4_bad, 1);
}

/* The TCP header past the ports: one shorter than 20 bytes is the
 * stack's, as the parse has it. */
static void test_front_checks_tcp_header(void)
{
	struct pkt_spec sp = spec6("fd93::10");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	sp.proto = IPPROTO_TCP;
	sp.sport = 40000;
	sp.dport = 443;
	make_hot(&sp, mac_gw);
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
	len = pkt_build(pkt, &sp);
	pkt[pkt_l3_off(&sp) + 40 + 12] = 4 << 4; /* data offset 4 */
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_l4_bad, 1);
	CHECK_EQ(r.d.cache_hit, 0);
}

/* genid.outside changes with no bump: every frame reads it. */
/* Every conntrack verdict the program took, all CPUs: ct_stats' sum. */
static __u64 ct_counted(void)
{
	int fd = fwd_pin_get(SILO_PIN_CT_STATS);
	struct silo_ct_stats t;
	__u64 sum = 0;
	__u32 i;

	if (fd >= 0 && !silo_ct_stats_sum(fd, &t))
		for (i = 0; i < SILO_CT_STAT_MAX; i++)
			sum += ((__u64 *)&t)[i];
	if (fd >= 0)
		close(fd);
	return sum;
}

static void test_front_checks_the_envelope(void)
{
	struct pkt_spec sp = spec6("fd93::11");
	int fd = fwd_pin_get(SILO_PIN_GENID);
	uint8_t pkt[PKT_MAX];
	struct silo_genid g;
	struct result r;
	__u32 zero = 0;
	__u64 asked;
	size_t len;

	REQUIRE(fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &g), "genid");
	make_hot(&sp, mac_gw);
	g.outside[SILO_FAM_V6] = 1;
	CHECK(!bpf_map_update_elem(fd, &zero, &g, BPF_ANY), "outside");
	len = pkt_build(pkt, &sp);
	asked = ct_counted();
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_envelope, 1);
	/* Outside for more than a firewall: conntrack is not asked. */
	CHECK_EQ(ct_counted(), asked);
	g.outside[SILO_FAM_V6] = 0;
	CHECK(!bpf_map_update_elem(fd, &zero, &g, BPF_ANY), "outside");
	close(fd);
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
}

/* sp with a payload of n bytes. */
static struct pkt_spec sized(const struct pkt_spec *sp, size_t n)
{
	struct pkt_spec big = *sp;

	big.payload = n;
	return big;
}

/* An ICMPv6 Packet Too Big for this host, quoting one of its own to dst:
 * the program marks dst. */
static void mark6(int marks, const char *dst)
{
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = fwd_icmp_error(pkt, AF_INET6, dst, 2, 0);

	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK(fwd_pmtu_marked(marks, AF_INET6, dst, -1), "no mark");
}

/*
 * The size: a larger frame of a hot flow is served while no PMTU mark
 * names its destination; marked, it goes to the stack; past the egress
 * MTU too.
 */
static void test_front_checks_the_size(void)
{
	struct pkt_spec sp = spec6("fd93::12"), big = sized(&sp, 1400);
	int marks, unseen;

	pmtu_watch_only(SILO_FAM_V6, &marks, &unseen);
	make_hot(&big, mac_gw);
	delete_entry(&big);
	expect_hot(&big, mac_gw);
	expect_hot(&sp, mac_gw);
	mark6(marks, "fd93::12");
	CHECK_EQ(expect_pass(&big).pass_mtu, 1);
	expect_hot(&sp, mac_gw); /* smaller: no exception applies */
	/* Past out0's 1500: not from the copy; the lookup (the entry is
	 * gone) says the kernel must fragment or refuse it. */
	fwd_pmtu_forget(marks, unseen);
	big = sized(&sp, 1600);
	CHECK_EQ(expect_pass(&big).fib_frag_needed, 1);
	pmtu_unwatch(marks, unseen);
}

/* genid, as silod writes it: route_mtu[fam] = mtu, then a bump. */
static void route_mtu_set(int fam, __u16 mtu)
{
	int fd = fwd_pin_get(SILO_PIN_GENID);
	struct silo_genid g;
	__u32 zero = 0;
	__u64 n;

	REQUIRE(fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &g), "genid");
	g.route_mtu[fam] = mtu;
	CHECK(!bpf_map_update_elem(fd, &zero, &g, BPF_ANY), "route_mtu");
	close(fd);
	CHECK(silo_genid_bump(s, &n) == 0, "genid bump");
}

/* The least route MTU of the family, while route_mtus is not whole: a
 * larger frame of a hot flow, still under the PMTU floor, is the stack's. */
static void test_front_checks_the_route_mtu(void)
{
	struct pkt_spec sp = spec6("fd93::14"), big = sized(&sp, 1100);

	route_mtu_set(SILO_FAM_V6, 1000);
	make_hot(&sp, mac_gw);
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
	CHECK_EQ(expect_pass(&big).pass_route_mtu, 1);
	route_mtu_set(SILO_FAM_V6, 0);
}

/*
 * A copy made by smaller frames does not serve larger ones until a larger
 * frame has passed the marks on the full path: a destination marked
 * before the copy was made stays the stack's above the floor.
 */
static void test_front_marked_before_the_copy(void)
{
	struct pkt_spec sp = spec6("fd93::15"), big = sized(&sp, 1400);
	int marks, unseen;

	pmtu_watch_only(SILO_FAM_V6, &marks, &unseen);
	mark6(marks, "fd93::15");
	/* Some ticks of the coarse clock: the copy's stamp is then later
	 * than the mark's time, and only "not clean" stops larger frames. */
	usleep(50000);
	make_hot(&sp, mac_gw);
	delete_entry(&sp);
	expect_hot(&sp, mac_gw);
	CHECK_EQ(expect_pass(&big).pass_mtu, 1);
	pmtu_unwatch(marks, unseen);
}

/*
 * An error the program cannot read (a fragment for this host) sends every
 * larger frame of the family to the stack until silod covers it: a hot
 * flow's too. Smaller ones are still the copy's.
 */
static void test_front_sees_unseen_errors(void)
{
	struct pkt_spec sp = spec4("10.93.10.10"), big = sized(&sp, 1400);
	struct pkt_spec frag = spec4("10.1.0.1");
	__u32 i = SILO_FAM_V4, c = SILO_PMTU_COVERED + SILO_FAM_V4;
	int marks, unseen;
	__u64 seen = 0;

	pmtu_watch_only(SILO_FAM_V4, &marks, &unseen);
	make_hot(&big, mac_gw);
	delete_entry(&big);
	expect_hot(&big, mac_gw);
	frag.proto = IPPROTO_ICMP;
	frag.frag_off = 0x2000; /* MF */
	CHECK_EQ(expect_pass(&frag).pass_fragment, 1);
	REQUIRE(!bpf_map_lookup_elem(unseen, &i, &seen) && seen,
		"the fragment left no unseen time");
	CHECK_EQ(expect_pass(&big).pass_mtu, 1);
	expect_hot(&sp, mac_gw);
	CHECK(!bpf_map_update_elem(unseen, &c, &seen, BPF_ANY), "cover");
	pmtu_unwatch(marks, unseen);
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
	RUN(test_slot_holds_one_flow);
	RUN(test_copy_is_the_ingress_devices);
	RUN(test_copy_needs_silod);
	RUN(test_refused_source_not_copied);
	RUN(test_front_checks_each_frame);
	RUN(test_front_checks_tcp_header);
	RUN(test_front_checks_the_envelope);
	RUN(test_front_checks_the_size);
	RUN(test_front_checks_the_route_mtu);
	RUN(test_front_marked_before_the_copy);
	RUN(test_front_sees_unseen_errors);
	fwd_teardown();
	return 0;
}
