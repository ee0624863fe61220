// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of bpf/lib/ functions, each through a test program of
 * bpf/tests/ that includes one lib header and runs one function under
 * BPF_PROG_TEST_RUN. l4_csum_ok() (lib/csum.h): every length from an
 * empty payload to a jumbo frame's, both families, both protocols, right
 * and wrong sums, and UDP over IPv4 without a sum. A frame of more than a
 * page is multi-buffer (test runs put the rest in fragments): the sum
 * runs over them. pmtu_now() (lib/forward.h): a CPU's cached clock
 * reading taken as the marks' clock, but near an epoch's end.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "pkt.h"
#include "test_lib_csum.skel.h"
#include "test_lib_pmtu.skel.h"
#include "silo/abi/route.h"

static struct test_lib_csum *skel;
static struct test_lib_pmtu *pskel;

static int run(uint8_t *frame, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = len, .repeat = 1);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.test_l4_csum),
				     &opts);
	return err ? err : (int)opts.retval;
}

static struct pkt_spec spec(int family, uint8_t proto, size_t payload)
{
	struct pkt_spec s = { .family = family,
			      .proto = proto,
			      .sport = htons(1234),
			      .dport = htons(80),
			      .payload = payload };

	if (family == AF_INET) {
		inet_pton(AF_INET, "10.1.0.2", s.src);
		inet_pton(AF_INET, "10.9.0.1", s.dst);
	} else {
		inet_pton(AF_INET6, "fd01::2", s.src);
		inet_pton(AF_INET6, "fd09::1", s.dst);
	}
	return s;
}

/* Payloads that end on every tail the function handles: the chunks of
 * 256 bytes, then 128 down to 4, then 0 to 3 odd bytes. */
static const size_t payloads[] = { 0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 63,
				   64, 127, 128, 255, 256, 257, 511, 999, 1400,
				   1472, 2047, 3000, 3400,
				   /* multi-buffer */
				   4000, 5000, 8000, 8951, 8952, 8953, 9100 };

static void check_sums(int family, uint8_t proto)
{
	static uint8_t frame[PKT_MAX];
	struct pkt_spec s;
	size_t i, len;

	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		s = spec(family, proto, payloads[i]);
		len = pkt_build(frame, &s);
		pkt_l4_csum(frame, len, &s);
		CHECK(run(frame, len) == XDP_PASS,
		      "family %d proto %u payload %zu: right sum refused",
		      family, proto, payloads[i]);
		/* One bit of the last byte of the segment: any word. */
		frame[len - 1] ^= 0x01;
		CHECK(run(frame, len) == XDP_DROP,
		      "family %d proto %u payload %zu: wrong sum taken", family,
		      proto, payloads[i]);
	}
}

static void test_csum_udp4(void)
{
	check_sums(AF_INET, IPPROTO_UDP);
}

static void test_csum_tcp4(void)
{
	check_sums(AF_INET, IPPROTO_TCP);
}

static void test_csum_udp6(void)
{
	check_sums(AF_INET6, IPPROTO_UDP);
}

static void test_csum_tcp6(void)
{
	check_sums(AF_INET6, IPPROTO_TCP);
}

/* UDP over IPv4 may go without a sum (0): nothing to check. Over IPv6 a
 * zero sum is not allowed, and the frame's sum is wrong. */
static void test_csum_udp_zero(void)
{
	static uint8_t frame[PKT_MAX];
	struct pkt_spec s = spec(AF_INET, IPPROTO_UDP, 100);
	size_t len = pkt_build(frame, &s);

	CHECK_EQ(run(frame, len), XDP_PASS);
	s = spec(AF_INET6, IPPROTO_UDP, 100);
	len = pkt_build(frame, &s);
	CHECK_EQ(run(frame, len), XDP_DROP);
}

/* Lengths against the whole frame: an IP length past it is refused, one
 * that ends before it (bytes follow the packet) is taken, on a frame of
 * one buffer and on one of several. */
static void test_parse_whole_frame(void)
{
	static const size_t sizes[] = { 100, 5000, 8000 };
	static uint8_t frame[PKT_MAX];
	struct pkt_spec s;
	size_t i, len;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		s = spec(AF_INET, IPPROTO_UDP, sizes[i]);
		len = pkt_build(frame, &s);
		pkt_l4_csum(frame, len, &s);
		CHECK(run(frame, len + 60) == XDP_PASS,
		      "payload %zu: 60 bytes after the packet refused",
		      sizes[i]);
		frame[16] = (len - 14 + 1) >> 8; /* IPv4 total length + 1 */
		frame[17] = (len - 14 + 1) & 0xff;
		CHECK(run(frame, len) == XDP_ABORTED,
		      "payload %zu: IP length past the frame parsed", sizes[i]);
		s = spec(AF_INET6, IPPROTO_UDP, sizes[i]);
		len = pkt_build(frame, &s);
		pkt_l4_csum(frame, len, &s);
		frame[18] = (len - 54 + 1) >> 8; /* IPv6 payload length + 1 */
		frame[19] = (len - 54 + 1) & 0xff;
		CHECK(run(frame, len) == XDP_ABORTED,
		      "payload %zu: IPv6 length past the frame parsed",
		      sizes[i]);
	}
}

/* pmtu_now(in) through the test program. */
static __u64 pmtu_now_of(__u64 in)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .repeat = 1);
	uint8_t frame[64] = {};

	opts.data_in = frame;
	opts.data_size_in = sizeof(frame);
	pskel->bss->in_ns = in;
	pskel->bss->out_ns = 0;
	if (bpf_prog_test_run_opts(bpf_program__fd(pskel->progs.test_pmtu_now),
				   &opts))
		return 0;
	return pskel->bss->out_ns;
}

/*
 * A mark is looked for in the epoch of the CPU's clock reading and the one
 * before. A reading made just before an epoch turned (the coarse clock is
 * read once a tick, and kept) would miss a mark written in the new epoch:
 * within COARSE_SLACK_NS (20 ms) of an epoch's end the clock itself is
 * read. Readings here are hours from now: the clock's is told apart.
 */
static void test_pmtu_now_near_an_epoch_end(void)
{
	const __u64 epoch = 1ULL << SILO_PMTU_EPOCH_SHIFT, e = 5 * epoch;
	const __u64 cases[] = { e, e + epoch / 2, e + epoch - 21000000ULL,
				e + epoch - 19000000ULL, e + epoch - 1 };
	const int near[] = { 0, 0, 0, 1, 1 };
	__u64 out, clock;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* The program's clock: bpf_ktime_get_coarse_ns()'s. */
		clock = silo_clock_ns(CLOCK_MONOTONIC_COARSE);
		out = pmtu_now_of(cases[i]);
		if (near[i])
			CHECK(out >= clock && out < clock + 1000000000ULL,
			      "%llu ns before an epoch's end: %llu, not the clock",
			      (unsigned long long)(e + epoch - cases[i]),
			      (unsigned long long)out);
		else
			CHECK(out == cases[i],
			      "%llu ns before an epoch's end: %llu, not the reading",
			      (unsigned long long)(e + epoch - cases[i]),
			      (unsigned long long)out);
	}
}

int main(void)
{
	if (test_init())
		return 1;
	skel = test_lib_csum__open_and_load();
	if (!skel) {
		printf("not ok - load bpf/tests/test_lib_csum.bpf.c\n");
		return 1;
	}
	RUN(test_csum_udp4);
	RUN(test_csum_tcp4);
	RUN(test_csum_udp6);
	RUN(test_csum_tcp6);
	RUN(test_csum_udp_zero);
	RUN(test_parse_whole_frame);
	/* lib/forward.h brings every map of the program, cpumap sized by the
	 * loader to the CPUs there are: so here, though none is used. */
	pskel = test_lib_pmtu__open();
	if (pskel)
		bpf_map__set_max_entries(pskel->maps.cpumap,
					 libbpf_num_possible_cpus());
	if (!pskel || test_lib_pmtu__load(pskel)) {
		printf("not ok - load bpf/tests/test_lib_pmtu.bpf.c\n");
		test_lib_pmtu__destroy(pskel);
		test_lib_csum__destroy(skel);
		return 1;
	}
	RUN(test_pmtu_now_near_an_epoch_end);
	test_lib_pmtu__destroy(pskel);
	test_lib_csum__destroy(skel);
	return 0;
}
