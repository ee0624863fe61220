// SPDX-License-Identifier: GPL-2.0
/* Programs for tests and benchmarks only: never loaded onto a device by silo. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

const volatile __u32 tx_ifindex = 0;

/*
 * A traffic source: run with BPF_F_TEST_XDP_LIVE_FRAMES, every frame is sent
 * out of tx_ifindex, so it arrives on the veth peer's XDP program.
 */
SEC("xdp")
int xdp_send(struct xdp_md *ctx)
{
	return bpf_redirect(tx_ifindex, 0);
}

/*
 * Does nothing: the floor of the benchmark (what BPF_PROG_TEST_RUN costs with
 * no work), and what keeps a veth peer able to receive redirected frames.
 */
SEC("xdp")
int xdp_pass(struct xdp_md *ctx __attribute__((unused)))
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
