// SPDX-License-Identifier: GPL-2.0
/*
 * A checksum that a sender on this host left to offload (CHECKSUM_PARTIAL:
 * the pseudo header's sum where the checksum goes), forwarded by silo from
 * a device whose senders are on this host (in0, a veth): it leaves
 * finished, as the kernel's egress device would send it, from the full
 * path and from route_hot alike, in both families, UDP and TCP. A complete
 * checksum, and a wrong one, leave as they came (the kernel forwards a
 * wrong one as it is); so does IPv4 UDP without one. On a device whose
 * senders are elsewhere (a NIC: in0's record without SILO_DEV_F_LOCAL_TX)
 * nothing is finished. In generic XDP (the frame stays an skb, which keeps
 * the offload) such a frame goes to the stack, as it is. Each counts in
 * csum_stats, which silo_xdp_csum() reads. The test runs on one CPU:
 * route_hot is per CPU.
 */
#include "fwd.h"

static int setup(void)
{
	return fwd_setup("ip route add 10.93.0.0/16 via 10.2.0.2\n"
			 "ip -6 route add fd93::/64 via fd02::2\n");
}

static struct pkt_spec flow(int family, __u8 proto, int n)
{
	struct pkt_spec sp =
		family == AF_INET ? spec4("10.93.0.9") : spec6("fd93::9");

	sp.proto = proto;
	sp.sport = 20000 + n;
	sp.dport = 443;
	sp.payload = 101 + n; /* odd: the tail's byte counts */
	return sp;
}

enum csum_kind { LEFT_TO_OFFLOAD, COMPLETE, WRONG };

static size_t build(uint8_t *pkt, const struct pkt_spec *sp, enum csum_kind k)
{
	size_t len = pkt_build(pkt, sp);

	if (k == LEFT_TO_OFFLOAD) {
		pkt_l4_csum_partial(pkt, len, sp);
	} else {
		pkt_l4_csum(pkt, len, sp);
		if (k == WRONG)
			pkt[len - 1] ^= 0x5A; /* changed after the sum */
	}
	return len;
}

/* The L4 bytes (checksum included) of out are those of want's. */
static int same_l4(const uint8_t *out, const uint8_t *want, size_t len,
		   const struct pkt_spec *sp)
{
	size_t l4 = pkt_l3_off(sp) + (sp->family == AF_INET ? 20 : 40);

	return !memcmp(out + l4, want + l4, len - l4);
}

/* sp's frame of kind k through in0: forwarded, its L4 bytes as those of
 * want (NULL: the frame's own), its counters. */
static struct silo_stats forward_as(const struct pkt_spec *sp, enum csum_kind k,
				    const uint8_t *want)
{
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = build(pkt, sp, k);

	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	CHECK_EQ(r.len, len);
	CHECK(same_l4(r.out, want ? want : pkt, len, sp),
	      "family %d proto %d: the TCP or UDP bytes are not the %s ones",
	      sp->family, sp->proto, want ? "finished" : "same");
	return r.d;
}

/* in0's checksums left to offload, finished and passed, so far. */
static struct silo_xdp_csum_info csum_info(void)
{
	struct silo_xdp_csum_info i;

	CHECK_EQ(silo_xdp_csum(s, "in0", &i), 0);
	return i;
}

/* Finished: the bytes the egress device would send, and counted; the
 * counters' deltas. */
static struct silo_stats finished_through(const struct pkt_spec *sp)
{
	struct silo_xdp_csum_info a = csum_info(), b;
	uint8_t full[PKT_MAX];
	size_t len = build(full, sp, LEFT_TO_OFFLOAD);
	struct silo_stats d;

	pkt_l4_csum_device(full, len, sp);
	CHECK(pkt_l4_csum_ok(full, len, sp), "the test's own sum is wrong");
	d = forward_as(sp, LEFT_TO_OFFLOAD, full);
	b = csum_info();
	CHECK_EQ(b.finished - a.finished, 1);
	CHECK_EQ(b.passed, a.passed);
	return d;
}

static void test_left_to_offload_leaves_finished(void)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	static const __u8 protos[] = { IPPROTO_UDP, IPPROTO_TCP };
	unsigned int f, p;
	int n;

	for (f = 0; f < 2; f++)
		for (p = 0; p < 2; p++) {
			struct pkt_spec sp = flow(fams[f], protos[p], 0);

			/* A miss, a hit, the copy made, then from the copy:
			 * every one finished. */
			for (n = 0; n < 5; n++)
				finished_through(&sp);
		}
}

/* A flow that route_hot serves: a frame left to offload is not sent on
 * from the copy as it is, but finished there, as the full path would. */
static void test_route_hot_finishes_too(void)
{
	struct pkt_spec sp = flow(AF_INET6, IPPROTO_UDP, 7);
	struct silo_route_entry e;
	int fd = fwd_pin_get(SILO_PIN_ROUTE_CACHE_NODE "0");
	struct silo_stats d;
	int n;

	REQUIRE(fd >= 0, "node 0's cache pin");
	for (n = 0; n < 3; n++)
		forward_as(&sp, COMPLETE, NULL);
	/* Only the copy can answer now: a complete frame is a hit. */
	REQUIRE(cache_entry(&sp, &e) == 1, "no entry");
	CHECK(!bpf_map_delete_elem(fd, &e.key), "delete: %s", strerror(errno));
	d = forward_as(&sp, COMPLETE, NULL);
	CHECK_EQ(d.cache_hit, 1);
	CHECK_EQ(d.fib_success, 0);
	/* One left to offload is finished from the copy: no lookup. */
	d = finished_through(&sp);
	CHECK_EQ(d.cache_hit, 1);
	CHECK_EQ(d.fib_success, 0);
	close(fd);
}

static void test_complete_and_wrong_leave_as_they_came(void)
{
	static const int fams[] = { AF_INET, AF_INET6 };
	unsigned int f;
	int n;

	for (f = 0; f < 2; f++)
		for (n = 0; n < 4; n++) {
			struct pkt_spec sp = flow(fams[f], IPPROTO_TCP, 20 + n);

			forward_as(&sp, COMPLETE, NULL);
			forward_as(&sp, WRONG, NULL);
		}
}

static void test_udp4_without_checksum(void)
{
	struct pkt_spec sp = flow(AF_INET, IPPROTO_UDP, 30);
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = pkt_build(pkt, &sp); /* checksum 0: none */
	int n;

	for (n = 0; n < 4; n++) {
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_REDIRECT);
		CHECK(same_l4(r.out, pkt, len, &sp), "UDP's 0 changed");
	}
}

/* in0's record with or without SILO_DEV_F_LOCAL_TX; genid bumped, as any
 * change of a record bumps it. */
static int local_tx(bool on)
{
	int devs = fwd_pin_get(SILO_PIN_DEVICES);
	int gen = fwd_pin_get(SILO_PIN_GENID);
	struct silo_device dev;
	struct silo_genid g;
	__u32 zero = 0;
	int err = -1;

	if (devs >= 0 && gen >= 0 && !bpf_map_lookup_elem(devs, &in0, &dev) &&
	    !bpf_map_lookup_elem(gen, &zero, &g)) {
		if (on)
			dev.flags |= SILO_DEV_F_LOCAL_TX;
		else
			dev.flags &= ~SILO_DEV_F_LOCAL_TX;
		g.genid++;
		err = bpf_map_update_elem(devs, &in0, &dev, BPF_ANY) ||
		      bpf_map_update_elem(gen, &zero, &g, BPF_ANY);
	}
	if (devs >= 0)
		close(devs);
	if (gen >= 0)
		close(gen);
	return err;
}

/* A veth's record says its senders are local; where they are not (a NIC),
 * a checksum that holds the pseudo sum is one the sender computed: sent
 * on as it came. */
static void test_only_local_senders(void)
{
	struct pkt_spec sp = flow(AF_INET, IPPROTO_UDP, 40);
	int devs = fwd_pin_get(SILO_PIN_DEVICES);
	struct silo_device dev;
	int n;

	REQUIRE(devs >= 0 && !bpf_map_lookup_elem(devs, &in0, &dev),
		"in0's record");
	close(devs);
	CHECK(dev.flags & SILO_DEV_F_LOCAL_TX,
	      "in0, a veth, is not a device of local senders");
	REQUIRE(!local_tx(false), "in0's record");
	for (n = 0; n < 4; n++)
		forward_as(&sp, LEFT_TO_OFFLOAD, NULL);
	REQUIRE(!local_tx(true), "in0's record");
	for (n = 0; n < 4; n++)
		finished_through(&sp);
}

static void test_reported(void)
{
	struct silo_xdp_csum_info i = csum_info();

	CHECK_EQ(i.what, SILO_XDP_CSUM_FINISH);
	CHECK(!strcmp(i.kind, "veth"), "kind '%s'", i.kind);
	CHECK_EQ(silo_xdp_csum(s, "lo", &i), -ENOENT);
	CHECK_EQ(silo_xdp_csum(s, "no-such-dev", &i), -ENODEV);
}

/* Generic XDP: a redirected frame stays an skb, which keeps its offload
 * state; finished, its device would sum the finished field again. Such a
 * frame goes to the stack untouched, counted; a complete one is still
 * forwarded. */
static void test_generic_passes(void)
{
	struct silo_xdp_load_opts skb = { .forward = true,
					  .mode = SILO_XDP_SKB };
	struct pkt_spec sp = flow(AF_INET6, IPPROTO_TCP, 50);
	struct silo_xdp_csum_info a, b;
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = build(pkt, &sp, LEFT_TO_OFFLOAD);
	int n;

	REQUIRE(!silo_xdp_unload(s, "in0"), "unload in0");
	REQUIRE(!fwd_reload_in0(&skb), "generic XDP on in0");
	a = csum_info();
	CHECK_EQ(a.what, SILO_XDP_CSUM_PASS);
	for (n = 0; n < 3; n++) {
		run_pkt(pkt, len, &r);
		CHECK_EQ(r.verdict, XDP_PASS);
		CHECK_EQ(r.d.pass_l4_bad, 1);
		CHECK(r.len == len && !memcmp(r.out, pkt, len),
		      "a frame passed to the stack changed");
	}
	b = csum_info();
	CHECK_EQ(b.passed - a.passed, 3);
	CHECK_EQ(b.finished, a.finished);
	/* A flow route_hot serves: complete frames from the copy, one left
	 * to offload passed all the same. */
	for (n = 0; n < 4; n++)
		forward_as(&sp, COMPLETE, NULL);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK(r.len == len && !memcmp(r.out, pkt, len),
	      "a frame passed to the stack changed");
	CHECK_EQ(csum_info().passed - a.passed, 4);
	REQUIRE(!silo_xdp_unload(s, "in0"), "unload in0");
	skb.mode = SILO_XDP_NATIVE;
	skb.unbound = true;
	REQUIRE(!fwd_reload_in0(&skb), "native XDP on in0 again");
	CHECK_EQ(csum_info().what, SILO_XDP_CSUM_FINISH);
}

int main(void)
{
	cpu_set_t was;

	if (test_init())
		return 1;
	if (fwd_run_on_cpu0(&was) || setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_left_to_offload_leaves_finished);
	RUN(test_route_hot_finishes_too);
	RUN(test_complete_and_wrong_leave_as_they_came);
	RUN(test_udp4_without_checksum);
	RUN(test_only_local_senders);
	RUN(test_reported);
	RUN(test_generic_passes);
	fwd_teardown();
	return 0;
}
