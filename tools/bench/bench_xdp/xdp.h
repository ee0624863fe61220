/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_xdp's parts (tools/bench/bench_xdp.c says what it measures): the
 * timed runs through BPF_PROG_TEST_RUN in run.c (one CPU and many, the
 * storms, the rounds of a cache kind), the reference forwarder in ref.c.
 */
#ifndef SILO_BENCH_XDP_H
#define SILO_BENCH_XDP_H

#include <stdbool.h>
#include <linux/types.h>
#include "silo/silo.h"
#include "pkt.h"
#include "ref.h"

#define BATCH 200 /* TTL 255 stays above 1 */
#define STORM_SLICES 20

struct variant {
	const char *name;
	int prog_fd;
	__u32 ifindex;
	int want_verdict;
	double ns[64];
};

enum { SCALE_HIT_ONE, SCALE_HIT_OWN, SCALE_EMPTY, SCALE_FIB, SCALE_RUNS };

struct scale_run {
	double one[SCALE_RUNS][64], many[SCALE_RUNS][64], ratio[SCALE_RUNS][64];
	double one_ns[SCALE_RUNS], many_ns[SCALE_RUNS], med[SCALE_RUNS];
	int rounds;
};

struct kind_run {
	const char *name;
	enum silo_cache_kind kind;
	double ns[4]; /* cache hit, fib every packet, empty, reference */
	double st[2][3]; /* [source, destination][cache, no cache, ref] */
	double sz[NR_SZ], size_ratio; /* with ref: frame sizes (SZ_*) */
	bool ref; /* the reference beside silo: ns[3], st[][2], sz */
	unsigned long long hits, lookups, inserts, refused, evicted;
	struct scale_run *scale; /* measure the scaling too */
};

struct setup {
	struct silo_opts opts;
	struct pkt_spec sp;
	int empty_fd, ref_fd, rounds, calls, storm_n, cpus;
};

int run_rounds(const struct setup *su, struct variant *v, int nv,
	       struct kind_run *k);
int run_storms(const struct setup *su, struct variant *v, struct kind_run *k);
int run_scale(const struct setup *su, struct variant *v, struct scale_run *sc);

#endif /* SILO_BENCH_XDP_H */
