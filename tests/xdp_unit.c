// SPDX-License-Identifier: GPL-2.0
/*
 * silo's XDP program through BPF_PROG_TEST_RUN: packet in, verdict and exact
 * bytes out, counters and route cache contents after. The program is the one
 * libsilo loads onto veths in this test's own network namespace, where the
 * routes and neighbours bpf_fib_lookup answers from are set up.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "test.h"
#include "pkt.h"

static struct silo *s;
static __u32 in0, out0, out1;
static int prog_in0, prog_out1;
static uint8_t mac_in0[6], mac_out0[6];
static const uint8_t mac_peer[6] = { 0x02, 0, 0, 0, 0x01, 0x02 };
static const uint8_t mac_gw[6] = { 0x02, 0, 0, 0, 0x02, 0x02 };
static const uint8_t mac_gw2[6] = { 0x02, 0, 0, 0, 0x02, 0x03 };

static int prog_of(__u32 ifindex)
{
	struct silo_xdp_dev *devs;
	size_t n, i;
	int fd = -1;

	if (silo_xdp_list(s, &devs, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (devs[i].ifindex == ifindex)
			fd = bpf_prog_get_fd_by_id(devs[i].prog_id);
	free(devs);
	return fd;
}

static int setup(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };
	struct silo_xdp_load_opts fwd = { .forward = true };
	struct silo_xdp_load_opts plain = { 0 };

	if (sh("set -e\n"
	       "ip link add in0 type veth peer name in0p\n"
	       "ip link add out0 type veth peer name out0p\n"
	       "ip link add out1 type veth peer name out1p\n"
	       "for d in in0 in0p out0 out0p out1 out1p; do ip link set $d up; done\n"
	       "ip addr add 10.1.0.1/24 dev in0\n"
	       "ip addr add fd01::1/64 dev in0 nodad\n"
	       "ip addr add 10.2.0.1/24 dev out0\n"
	       "ip addr add fd02::1/64 dev out0 nodad\n"
	       "ip addr add 10.3.0.1/24 dev out1\n"
	       "ip neigh add 10.2.0.2 lladdr 02:00:00:00:02:02 dev out0 nud permanent\n"
	       "ip neigh add 10.2.0.3 lladdr 02:00:00:00:02:03 dev out0 nud permanent\n"
	       "ip neigh add fd02::2 lladdr 02:00:00:00:02:02 dev out0 nud permanent\n"
	       "ip neigh add 10.3.0.2 lladdr 02:00:00:00:03:02 dev out1 nud permanent\n"
	       "ip neigh add 10.1.0.3 lladdr 02:00:00:00:01:03 dev in0 nud permanent\n"
	       "ip route add 10.99.0.0/16 via 10.2.0.2\n"
	       "ip route add fd99::/64 via fd02::2\n"
	       "ip route add 10.98.0.0/16 via 10.2.0.9\n"
	       "ip route add 10.97.0.0/16 via 10.3.0.2\n"
	       "ip route add 10.96.0.0/16 via 10.1.0.3\n"
	       "ip route add 10.95.0.0/16 via 10.2.0.2 mtu lock 1000\n"
	       "ip route add unreachable 10.66.0.0/16\n"
	       "ip route add blackhole 10.67.0.0/16\n"
	       "ip route add prohibit 10.68.0.0/16\n"
	       "sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1\n"
	       "sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.in0.rp_filter=0\n"))
		return -1;
	in0 = if_nametoindex("in0");
	out0 = if_nametoindex("out0");
	out1 = if_nametoindex("out1");
	if (read_mac("in0", mac_in0) || read_mac("out0", mac_out0)) {
		printf("# cannot read MAC addresses\n");
		return -1;
	}
	if (silo_open(&s, &opts) || silo_xdp_load(s, "in0", &fwd) ||
	    silo_xdp_load(s, "out0", &fwd) || silo_xdp_load(s, "out1", &plain))
		return -1;
	prog_in0 = prog_of(in0);
	prog_out1 = prog_of(out1);
	if (prog_in0 < 0 || prog_out1 < 0) {
		printf("# cannot find the loaded programs\n");
		return -1;
	}
	return 0;
}

static int run_on(int prog_fd, __u32 ifindex, const uint8_t *pkt, size_t len,
		  uint8_t *out, __u32 *out_len)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = len, .data_out = out,
		    .data_size_out = PKT_MAX, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*out_len = opts.data_size_out;
	return opts.retval;
}

static void stats_total(struct silo_stats *total)
{
	int ncpus = silo_nr_cpus(), cpu;
	struct silo_stats *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	unsigned int i;

	memset(total, 0, sizeof(*total));
	if (!per_cpu || silo_stats_read(s, per_cpu)) {
		free(per_cpu);
		return;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_STAT_MAX; i++)
			((__u64 *)total)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
}

/* Runs pkt on in0 (or dev) and returns the counters it changed. */
struct result {
	int verdict;
	uint8_t out[PKT_MAX];
	__u32 len;
	struct silo_stats d; /* deltas */
};

static void run_pkt_dev(int prog_fd, __u32 ifindex, const uint8_t *pkt,
			size_t len, struct result *r)
{
	struct silo_stats before, after;
	unsigned int i;

	stats_total(&before);
	r->verdict = run_on(prog_fd, ifindex, pkt, len, r->out, &r->len);
	stats_total(&after);
	for (i = 0; i < SILO_STAT_MAX; i++)
		((__u64 *)&r->d)[i] =
			((__u64 *)&after)[i] - ((__u64 *)&before)[i];
}

static void run_pkt(const uint8_t *pkt, size_t len, struct result *r)
{
	run_pkt_dev(prog_in0, in0, pkt, len, r);
}

static void v4(uint8_t a[16], const char *s)
{
	memset(a, 0, 16);
	inet_pton(AF_INET, s, a);
}

static void v6(uint8_t a[16], const char *s)
{
	inet_pton(AF_INET6, s, a);
}

/* A UDP packet from the client side (10.1.0.2) to dst, for in0. */
static struct pkt_spec spec4(const char *dst)
{
	struct pkt_spec sp = { .family = AF_INET, .payload = 32 };

	memcpy(sp.dmac, mac_in0, 6);
	memcpy(sp.smac, mac_peer, 6);
	v4(sp.src, "10.1.0.2");
	v4(sp.dst, dst);
	return sp;
}

static struct pkt_spec spec6(const char *dst)
{
	struct pkt_spec sp = { .family = AF_INET6, .payload = 32 };

	memcpy(sp.dmac, mac_in0, 6);
	memcpy(sp.smac, mac_peer, 6);
	v6(sp.src, "fd01::2");
	v6(sp.dst, dst);
	return sp;
}

struct find_ctx {
	struct silo_route_key key;
	struct silo_route_entry entry;
	__u32 node;
	int found;
};

static int find_cb(__u32 node, const struct silo_route_key *k,
		   const struct silo_route_entry *e, void *data)
{
	struct find_ctx *f = data;

	if (k->ifindex == f->key.ifindex && k->family == f->key.family &&
	    !memcmp(k->src, f->key.src, 16) &&
	    !memcmp(k->dst, f->key.dst, 16) && k->sport == f->key.sport &&
	    k->dport == f->key.dport) {
		f->entry = *e;
		f->node = node;
		f->found++;
	}
	return 0;
}

/* The cache entry for sp's flow arriving on in0, if any. */
static int cache_entry(const struct pkt_spec *sp, struct silo_route_entry *e)
{
	struct find_ctx f = {};

	f.key.ifindex = in0;
	f.key.family = sp->family == AF_INET6 ? SILO_AF_INET6 : SILO_AF_INET;
	memcpy(f.key.src, sp->src, 16);
	memcpy(f.key.dst, sp->dst, 16);
	if (silo_route_foreach(s, find_cb, &f))
		return -1;
	if (f.found)
		*e = f.entry;
	return f.found;
}

static __u64 genid_now(void)
{
	struct silo_info info;

	return silo_info(s, &info) ? 0 : info.genid;
}

/* The packet the forward path must produce: new MACs, TTL - 1. */
static size_t expected_fwd(struct pkt_spec sp, const uint8_t *dmac,
			   uint8_t *buf)
{
	memcpy(sp.dmac, dmac, 6);
	memcpy(sp.smac, mac_out0, 6);
	sp.ttl = (sp.ttl ? sp.ttl : 64) - 1;
	return pkt_build(buf, &sp);
}

static void check_forwarded(const struct pkt_spec *sp, const struct result *r,
			    const uint8_t *dmac)
{
	uint8_t want[PKT_MAX];
	size_t len = expected_fwd(*sp, dmac, want);

	CHECK_EQ(r->verdict, XDP_REDIRECT);
	CHECK_EQ(r->len, len);
	CHECK(!memcmp(r->out, want, len),
	      "output bytes differ from the expected forwarded packet");
	CHECK_EQ(r->d.rx, 1);
	CHECK_EQ(r->d.redirect, 1);
	CHECK_EQ(r->d.pass, 0);
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
	CHECK_EQ(r.d.cache_insert, 1);
	CHECK_EQ(r.d.fib_success, 1);
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
	CHECK_EQ(r.d.cache_insert, 1);
	REQUIRE(silo_genid_bump(s, &g) == 0, "genid bump failed");
	REQUIRE(cache_entry(&sp, &e) == 1, "entry gone after a bump");
	CHECK(e.genid < g, "entry genid %llu not older than %llu",
	      (unsigned long long)e.genid, (unsigned long long)g);

	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	CHECK_EQ(r.d.cache_stale, 1);
	CHECK_EQ(r.d.cache_refresh, 1);
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
static void test_mtu_checked_on_hit(void)
{
	struct pkt_spec sp = spec4("10.95.0.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);
	sp.payload = 1200;
	len = pkt_build(pkt, &sp);
	expect_pass("larger than the cached mtu", pkt, len, SILO_STAT_PASS_MTU);
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

static void test_rp_filter(void)
{
	struct silo_xdp_load_opts fwd = { .forward = true, .replace = true };
	struct pkt_spec sp = spec4("10.99.6.6");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=1");
	REQUIRE(silo_xdp_load(s, "in0", &fwd) == 0, "replace on in0");
	close(prog_in0);
	prog_in0 = prog_of(in0);
	v4(sp.src, "10.55.0.1"); /* the way back is not through in0 */
	len = pkt_build(pkt, &sp);
	expect_pass("strict rp_filter", pkt, len, SILO_STAT_PASS_RP_FILTER);

	sp = spec4("10.99.6.6");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, mac_gw);

	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=0");
	REQUIRE(silo_xdp_load(s, "in0", &fwd) == 0, "replace on in0");
	close(prog_in0);
	prog_in0 = prog_of(in0);
}

/* A rule on ports puts protocol and ports into the cache key. */
static void test_port_rules_key_on_ports(void)
{
	struct silo_xdp_load_opts fwd = { .forward = true, .replace = true };
	struct pkt_spec sp = spec4("10.99.7.7");
	struct silo_info info;
	uint8_t pkt[PKT_MAX];
	struct result r;
	__u64 g0 = genid_now();
	size_t len;

	REQUIRE(!sh("ip rule add ipproto tcp dport 22 prohibit pref 100"),
		"ip rule add");
	REQUIRE(silo_xdp_load(s, "in0", &fwd) == 0, "replace on in0");
	close(prog_in0);
	prog_in0 = prog_of(in0);
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
	REQUIRE(silo_xdp_load(s, "in0", &fwd) == 0, "replace on in0");
	close(prog_in0);
	prog_in0 = prog_of(in0);
	REQUIRE(silo_info(s, &info) == 0, "info");
	CHECK(!(info.genid_flags & SILO_GENID_KEY_L4), "key_l4 flag left set");
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
	RUN(test_ipv6_extension_headers_forwarded);
	RUN(test_fib_codes_pass_and_are_not_cached);
	RUN(test_mtu_checked_on_hit);
	RUN(test_device_without_forward);
	RUN(test_rp_filter);
	RUN(test_port_rules_key_on_ports);
	RUN(test_route_flush);
	RUN(test_fib_probe_matches_cache);
	silo_xdp_unload(s, "in0");
	silo_xdp_unload(s, "out0");
	silo_xdp_unload(s, "out1");
	close(prog_in0);
	close(prog_out1);
	silo_close(s);
	return 0;
}
