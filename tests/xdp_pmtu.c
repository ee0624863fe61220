// SPDX-License-Identifier: GPL-2.0
/*
 * PMTU exceptions in the data path (include/silo/abi/route.h): an ICMP
 * error for this host marks the destination it quotes; a larger packet is
 * served from the cache only in a family silod watches and towards a
 * destination with no mark in this epoch's slot or the last one's; an
 * error the program cannot read makes the family stand aside until silod
 * covers it; unwatched, bpf_fib_lookup resolves larger packets, except
 * IPv4 under ip_forward_use_pmtu. Through BPF_PROG_TEST_RUN, counters and
 * the map checked.
 */
#include <stdio.h>
#include "fwd.h"

#define EPOCH_SHIFT SILO_PMTU_EPOCH_SHIFT

static int marks_fd, unseen_fd;

static int setup(void)
{
	if (fwd_setup("ip route add 10.99.0.0/16 via 10.2.0.2\n"
		      "ip route add fd99::/32 via fd02::2\n"))
		return -1;
	marks_fd = fwd_pin_get(SILO_PIN_PMTU_MARKS);
	unseen_fd = fwd_pin_get(SILO_PIN_PMTU_UNSEEN);
	return marks_fd < 0 || unseen_fd < 0 ? -1 : 0;
}

static __u8 slot_now(void)
{
	return (fwd_coarse_ns() >> EPOCH_SHIFT) % SILO_PMTU_SLOTS;
}

static void watch(__u32 fams)
{
	fwd_pmtu_watch = fams;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
}

static void send_error(int family, const char *quoted, uint8_t type,
		       uint8_t code)
{
	uint8_t pkt[PKT_MAX];
	size_t len = fwd_icmp_error(pkt, family, quoted, type, code);
	struct result r;

	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK(r.len == len && !memcmp(r.out, pkt, len), "error modified");
}

/* A packet of IP length l3 to dst: its verdict and counters. */
static void run_sized(int family, const char *dst, size_t l3, struct result *r)
{
	struct pkt_spec sp = family == AF_INET ? spec4(dst) : spec6(dst);
	uint8_t pkt[PKT_MAX];
	size_t len;

	sp.payload = l3 - (family == AF_INET ? 28 : 48);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, r);
}

static void expect_hit(int family, const char *dst, size_t l3)
{
	struct result r;

	run_sized(family, dst, l3, &r);
	run_sized(family, dst, l3, &r);
	CHECK(r.verdict == XDP_REDIRECT && r.d.cache_hit == 1 &&
		      r.d.cache_big == 0,
	      "%s, %zu bytes: verdict %d hit %llu big %llu, want a hit", dst,
	      l3, r.verdict, (unsigned long long)r.d.cache_hit,
	      (unsigned long long)r.d.cache_big);
}

static void expect_pmtu_pass(int family, const char *dst, size_t l3)
{
	struct result r;

	run_sized(family, dst, l3, &r);
	/* Before any lookup: not the egress MTU's check. */
	CHECK(r.verdict == XDP_PASS && r.d.pass_mtu == 1 &&
		      r.d.cache_hit + r.d.cache_miss + r.d.fib_success == 0,
	      "%s, %zu bytes: verdict %d pass_mtu %llu hit %llu fib %llu, want to the stack at once",
	      dst, l3, r.verdict, (unsigned long long)r.d.pass_mtu,
	      (unsigned long long)r.d.cache_hit,
	      (unsigned long long)r.d.fib_success);
}

static void test_errors_mark_their_destination(void)
{
	__u8 slot = slot_now();

	fwd_pmtu_forget(marks_fd, unseen_fd);
	send_error(AF_INET, "10.99.1.1", 3, 4);
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.1.1", slot),
	      "frag-needed: no mark");
	send_error(AF_INET6, "fd99::1", 2, 0);
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET6, "fd99::1", slot),
	      "packet too big: no mark");
	/* Other errors teach nothing: port unreachable, time exceeded, an
	 * IPv6 destination unreachable. */
	send_error(AF_INET, "10.99.1.2", 3, 3);
	send_error(AF_INET, "10.99.1.3", 11, 0);
	send_error(AF_INET6, "fd99::2", 1, 4);
	CHECK(!fwd_pmtu_marked(marks_fd, AF_INET, "10.99.1.2", slot),
	      "port unreachable marked");
	CHECK(!fwd_pmtu_marked(marks_fd, AF_INET, "10.99.1.3", slot),
	      "time exceeded marked");
	CHECK(!fwd_pmtu_marked(marks_fd, AF_INET6, "fd99::2", slot),
	      "unreachable marked");
}

/* An error for another host is forwarded, not learned from. */
static void test_error_for_another_host_marks_nothing(void)
{
	uint8_t pkt[PKT_MAX];
	size_t len;
	struct result r;

	fwd_pmtu_forget(marks_fd, unseen_fd);
	len = fwd_icmp_error(pkt, AF_INET, "10.99.2.1", 3, 4);
	/* The outer destination another host's, the checksum to match. */
	memcpy(pkt + 14 + 16, (uint8_t[]){ 10, 99, 2, 9 }, 4);
	memset(pkt + 14 + 10, 0, 2);
	memcpy(pkt + 14 + 10, (uint16_t[]){ pkt_csum(pkt + 14, 20) }, 2);
	run_pkt(pkt, len, &r);
	CHECK(!fwd_pmtu_marked(marks_fd, AF_INET, "10.99.2.1", slot_now()),
	      "an error for another host marked");
	/* The same error for this host does. */
	send_error(AF_INET, "10.99.2.1", 3, 4);
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.2.1", slot_now()),
	      "no mark");
}

/* Errors for a local route (AnyIP: no address of ours) are the host's:
 * the kernel's routing says so, not local_addrs. */
static void test_error_for_a_local_route_marks(void)
{
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	fwd_pmtu_forget(marks_fd, unseen_fd);
	REQUIRE(!sh("ip route add local 10.77.0.0/16 dev lo"), "local route");
	len = fwd_icmp_error(pkt, AF_INET, "10.99.2.5", 3, 4);
	memcpy(pkt + 14 + 16, (uint8_t[]){ 10, 77, 1, 1 }, 4);
	memset(pkt + 14 + 10, 0, 2);
	memcpy(pkt + 14 + 10, (uint16_t[]){ pkt_csum(pkt + 14, 20) }, 2);
	run_pkt(pkt, len, &r);
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.2.5", slot_now()),
	      "an error for a local route's address not marked");
	sh("ip route del local 10.77.0.0/16 dev lo");
}

static void test_watched_larger_packets_use_the_cache(void)
{
	fwd_pmtu_forget(marks_fd, unseen_fd);
	watch(1U << SILO_FAM_V4 | 1U << SILO_FAM_V6);
	expect_hit(AF_INET, "10.99.3.1", 1400);
	expect_hit(AF_INET, "10.99.3.1", 1500);
	expect_hit(AF_INET6, "fd99::3:1", 1500);
	/* A marked destination stands aside above the floor only. */
	send_error(AF_INET, "10.99.3.1", 3, 4);
	send_error(AF_INET6, "fd99::3:1", 2, 0);
	expect_pmtu_pass(AF_INET, "10.99.3.1", 1400);
	expect_pmtu_pass(AF_INET6, "fd99::3:1", 1281);
	expect_hit(AF_INET, "10.99.3.1", 500);
	expect_hit(AF_INET6, "fd99::3:1", 1280);
	/* Others of the family are not touched. */
	expect_hit(AF_INET, "10.99.3.2", 1500);
	expect_hit(AF_INET6, "fd99::3:2", 1500);
}

/* A mark counts in its epoch and the next, not in the one after. */
static void test_marks_count_two_epochs(void)
{
	struct silo_pmtu_mark m = { .seen_ns = 1 };
	struct silo_pmtu_key k = { .family = AF_INET };
	__u8 now = slot_now();

	__u32 stamp = SILO_PMTU_MARKED_SILOD + SILO_FAM_V4;
	__u64 last_epoch = fwd_coarse_ns() - (1ULL << EPOCH_SHIFT);

	fwd_pmtu_forget(marks_fd, unseen_fd);
	watch(1U << SILO_FAM_V4);
	v4(k.addr, "10.99.4.1");
	k.slot = (now + SILO_PMTU_SLOTS - 1) % SILO_PMTU_SLOTS; /* last */
	REQUIRE(!bpf_map_update_elem(marks_fd, &k, &m, BPF_ANY), "mark");
	v4(k.addr, "10.99.4.2");
	k.slot = (now + 1) % SILO_PMTU_SLOTS; /* the one before that */
	REQUIRE(!bpf_map_update_elem(marks_fd, &k, &m, BPF_ANY), "mark");
	/* Marks unannounced (no writer's time since the last epoch): not
	 * looked up, as none could count. */
	expect_hit(AF_INET, "10.99.4.1", 1400);
	/* As silod writes them: the mark, then the time, then sweeps moved
	 * (route_hot's copies go). */
	REQUIRE(!bpf_map_update_elem(unseen_fd, &stamp, &last_epoch, BPF_ANY),
		"stamp");
	fwd_sweeps_forward();
	expect_pmtu_pass(AF_INET, "10.99.4.1", 1400);
	expect_hit(AF_INET, "10.99.4.2", 1400);
}

/* A fragment for this host may be an error: the family stands aside
 * until silod covers it. */
static void test_unread_error_stands_aside_until_covered(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	__u32 c = SILO_PMTU_COVERED + SILO_FAM_V4, i = SILO_FAM_V4;
	__u64 seen = 0;
	size_t len;

	fwd_pmtu_forget(marks_fd, unseen_fd);
	watch(1U << SILO_FAM_V4 | 1U << SILO_FAM_V6);
	expect_hit(AF_INET, "10.99.5.1", 1400);
	sp.proto = IPPROTO_ICMP;
	sp.frag_off = 0x2000; /* MF */
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.d.pass_fragment, 1);
	REQUIRE(!bpf_map_lookup_elem(unseen_fd, &i, &seen) && seen,
		"the fragment left no unseen time");
	expect_pmtu_pass(AF_INET, "10.99.5.1", 1400);
	expect_hit(AF_INET, "10.99.5.1", 500);
	expect_hit(AF_INET6, "fd99::5:1", 1400);
	REQUIRE(!bpf_map_update_elem(unseen_fd, &c, &seen, BPF_ANY), "cover");
	expect_hit(AF_INET, "10.99.5.1", 1400);
	/* A UDP fragment teaches nothing. */
	sp.proto = IPPROTO_UDP;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	expect_hit(AF_INET, "10.99.5.1", 1400);
}

/* Unwatched: bpf_fib_lookup for each larger packet; IPv4 under
 * ip_forward_use_pmtu to the stack (the lookup takes a route's MTU over
 * an exception). */
static void test_unwatched_family(void)
{
	struct result r;

	fwd_pmtu_forget(marks_fd, unseen_fd);
	watch(1U << SILO_FAM_V6);
	run_sized(AF_INET, "10.99.6.1", 1400, &r);
	run_sized(AF_INET, "10.99.6.1", 1400, &r);
	CHECK(r.verdict == XDP_REDIRECT && r.d.cache_big == 1 &&
		      r.d.fib_success == 1,
	      "unwatched: verdict %d big %llu", r.verdict,
	      (unsigned long long)r.d.cache_big);
	sh("sysctl -qw net.ipv4.ip_forward_use_pmtu=1");
	REQUIRE(!fwd_reload_in0(NULL), "replace"); /* resyncs */
	expect_pmtu_pass(AF_INET, "10.99.6.1", 1400);
	expect_hit(AF_INET6, "fd99::6:1", 1400);
	watch(1U << SILO_FAM_V4 | 1U << SILO_FAM_V6);
	expect_hit(AF_INET, "10.99.6.1", 1400);
	sh("sysctl -qw net.ipv4.ip_forward_use_pmtu=0");
	REQUIRE(!fwd_reload_in0(NULL), "replace");
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_errors_mark_their_destination);
	RUN(test_error_for_another_host_marks_nothing);
	RUN(test_error_for_a_local_route_marks);
	RUN(test_watched_larger_packets_use_the_cache);
	RUN(test_marks_count_two_epochs);
	RUN(test_unread_error_stands_aside_until_covered);
	RUN(test_unwatched_family);
	close(marks_fd);
	close(unseen_fd);
	fwd_teardown();
	return 0;
}
