/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_xdp's reference forwarder (xdp_ref_fwd of bpf/tests/silo_test.bpf.c):
 * its setup, the check that it forwards what it should, and its rows.
 */
#ifndef SILO_BENCH_XDP_REF_H
#define SILO_BENCH_XDP_REF_H

#include <stdbool.h>
#include "pkt.h"
#include "silo_test.skel.h"

/* The cache hit and the reference at 64 and at 1514 bytes (IP 1500). */
enum { SZ_HIT_64, SZ_HIT_1514, SZ_REF_64, SZ_REF_1514, NR_SZ };

#define REF_STORM_TARGET 1.05
#define SIZE_TARGET 1.1

/* What one storm measured: silo with the cache, without, the reference. */
struct ref_storm {
	const char *key;
	int packets, cpus;
	double ns[2][3]; /* [sources, destinations][cache, no cache, ref] */
};

/* Attaches prog_fd to dev of namespace ns (named, /run/netns), native. */
int attach_in(const char *ns, const char *dev, int prog_fd);
/* The reference's devmap holds out_dev; it is attached to keep_dev of the
 * named namespace keep_ns (the dispatcher then calls it as it calls silo). */
int ref_setup(struct silo_test *skel, const char *out_dev, const char *keep_dev,
	      const char *keep_ns);
int ref_check(int prog_fd, __u32 ifindex, const struct pkt_spec *base,
	      const char *out_dev, const uint8_t nh_mac[6]);
size_t ref_frame(uint8_t *pkt, const struct pkt_spec *base, size_t bytes);
void ref_print(double ref_ns, double fib_ns, double hit_ns, const double *sz,
	       double size_ratio, const struct ref_storm *st, int nr_st);

#endif /* SILO_BENCH_XDP_REF_H */
