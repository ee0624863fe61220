// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp's csum_offload lines: what a checksum that a sender on this host
 * left to offload costs silo's hit (bpf/lib/csum.h, docs/ENVELOPE.md), at
 * 64 and at 1514 bytes, on in0 (a veth: its record has SILO_DEV_F_LOCAL_TX)
 * and on the same device as a NIC's record has it:
 *
 *   nic       in0's record without the flag, the checksum complete: what
 *             the hit costs where no sender is local (nothing compared)
 *   complete  with the flag, the checksum complete: the comparison with
 *             the pseudo header's sum alone (the offload off)
 *   offload   with the flag, the checksum left to offload: the full path's
 *             hit (route_hot leaves such a frame to it) and the packet's
 *             sum, then the finished checksum
 *
 * One packet a call (a finished packet is complete at the next repeat),
 * the kernel's duration the program's time alone; the variants alternate
 * in rounds, the median round is reported.
 */
#include <bpf/bpf.h>
#include "test.h"
#include "xdp.h"
#include "../bench.h"

enum { CS_NIC, CS_COMPLETE, CS_OFFLOAD, NR_CS };

static const char *const cs_name[NR_CS] = { "nic", "complete", "offload" };

/* One packet a call, calls calls: the average ns per packet. */
static double once_each(const struct variant *v, const uint8_t *pkt, size_t len,
			int calls)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = v->ifindex };
	uint8_t out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .data_out = out, .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);
	double total = 0;
	int i;

	for (i = 0; i < calls; i++) {
		o.data_size_out = sizeof(out);
		if (bpf_prog_test_run_opts(v->prog_fd, &o) ||
		    o.retval != XDP_REDIRECT) {
			fprintf(stderr,
				"bench_xdp: csum_offload: verdict %d, want %d\n",
				o.retval, XDP_REDIRECT);
			return -1;
		}
		total += o.duration;
	}
	return total / calls;
}

/* in0's record with or without SILO_DEV_F_LOCAL_TX, genid bumped. */
static int local_tx(const struct csum_maps *m, __u32 ifindex, bool on)
{
	struct silo_device dev;
	struct silo_genid g;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(m->devices, &ifindex, &dev) ||
	    bpf_map_lookup_elem(m->genid, &zero, &g))
		return -1;
	dev.flags = on ? dev.flags | SILO_DEV_F_LOCAL_TX :
			 dev.flags & ~SILO_DEV_F_LOCAL_TX;
	g.genid++;
	return bpf_map_update_elem(m->devices, &ifindex, &dev, BPF_ANY) ||
			       bpf_map_update_elem(m->genid, &zero, &g,
						   BPF_ANY) ?
		       -1 :
		       0;
}

int run_csum(const struct setup *su, const struct variant *hit,
	     const struct csum_maps *m, struct csum_run *c)
{
	static const size_t sizes[2] = { 64, 1514 };
	static uint8_t pkt[2][2][PKT_MAX]; /* [size][complete, offload] */
	double ns[2][NR_CS][64];
	struct pkt_spec sp = su->sp;
	int rounds = su->rounds > 64 ? 64 : su->rounds;
	int calls = su->calls, r, z, i;
	size_t len[2];

	for (z = 0; z < 2; z++) {
		len[z] = ref_frame(pkt[z][0], &sp, sizes[z]);
		sp.payload = len[z] - 14 - 20 - 8;
		pkt_l4_csum(pkt[z][0], len[z], &sp);
		memcpy(pkt[z][1], pkt[z][0], len[z]);
		pkt_l4_csum_partial(pkt[z][1], len[z], &sp);
	}
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_CS; i++) {
			if ((i == CS_NIC || i == CS_COMPLETE) &&
			    local_tx(m, hit->ifindex, i != CS_NIC))
				return -1;
			for (z = 0; z < 2; z++) {
				const uint8_t *p = pkt[z][i == CS_OFFLOAD];

				/* The entry and the copy made again after
				 * the bump. */
				if (once_each(hit, p, len[z], 8) < 0)
					return -1;
				ns[z][i][r] = once_each(hit, p, len[z], calls);
				if (ns[z][i][r] < 0)
					return -1;
			}
		}
	}
	for (z = 0; z < 2; z++)
		for (i = 0; i < NR_CS; i++)
			c->ns[z][i] = bench_median(ns[z][i], rounds);
	c->rounds = rounds;
	return 0;
}

void csum_print(const struct csum_run *c)
{
	static const int bytes[2] = { 64, 1514 };
	int z, i;

	for (z = 0; z < 2; z++) {
		bench_line("csum_offload", "prog_test_run");
		printf(",\"frame_bytes\":%d,\"rounds\":%d,\"ns_per_pkt\":{",
		       bytes[z], c->rounds);
		for (i = 0; i < NR_CS; i++)
			printf("%s\"%s\":%.1f", i ? "," : "", cs_name[i],
			       c->ns[z][i]);
		printf("},\"compare_ns\":%.1f,\"finish_ns\":%.1f}\n",
		       c->ns[z][CS_COMPLETE] - c->ns[z][CS_NIC],
		       c->ns[z][CS_OFFLOAD] - c->ns[z][CS_NIC]);
	}
}
