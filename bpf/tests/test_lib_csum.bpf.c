// SPDX-License-Identifier: GPL-2.0
/*
 * A unit test of one bpf/lib/ function: l4_csum_ok() of lib/csum.h, on
 * frames parsed by lib/parse.h, with nothing else of silo's program around
 * it (tests/bpf_lib.c runs it). XDP_PASS: the TCP or UDP checksum is
 * complete and right; XDP_DROP: it is not; XDP_ABORTED: the frame did not
 * parse, or the scratch map is missing.
 */
#include "lib/csum.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct l4_csum);
} csum_scratch SEC(".maps");

/* Frags: a test run of more than a page is multi-buffer, as a jumbo frame
 * on a device is. */
SEC("xdp.frags")
int test_l4_csum(struct xdp_md *ctx)
{
	struct l4_csum *cs;
	struct pkt p = {};
	__u32 zero = 0;

	if (parse_packet(ctx, &p, bpf_xdp_get_buff_len(ctx)))
		return XDP_ABORTED;
	cs = bpf_map_lookup_elem(&csum_scratch, &zero);
	if (!cs)
		return XDP_ABORTED;
	return l4_csum_ok(ctx, &p, cs) ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "GPL";
