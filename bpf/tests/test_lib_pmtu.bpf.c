// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of one bpf/lib/ function: pmtu_now() of lib/forward.h, the
 * marks' clock from a CPU's cached reading, which near an epoch's end must
 * be the clock itself (tests/bpf_lib.c runs it). in_ns: the reading;
 * out_ns: what pmtu_now() made of it.
 */
#include "lib/forward.h"

__u64 in_ns, out_ns;

SEC("xdp")
int test_pmtu_now(struct xdp_md *ctx)
{
	(void)ctx;
	out_ns = pmtu_now(in_ns);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
