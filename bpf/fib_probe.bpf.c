// SPDX-License-Identifier: GPL-2.0
/*
 * Runs bpf_fib_lookup for user space through BPF_PROG_TEST_RUN: the "packet"
 * is a struct silo_fib_probe, and the answer is written back into it. This is
 * the helper the data path calls, with the same flags, so "silo route lookup"
 * compares the cache with exactly what a miss would have resolved.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "silo/abi.h"

SEC("xdp")
int silo_fib_probe(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct silo_fib_probe *probe = data;
	struct bpf_fib_lookup params;

	if ((void *)(probe + 1) > data_end)
		return XDP_ABORTED;
	__builtin_memcpy(&params, &probe->params, sizeof(params));
	probe->rc = bpf_fib_lookup(ctx, &params, sizeof(params), probe->flags);
	__builtin_memcpy(&probe->params, &params, sizeof(params));
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
