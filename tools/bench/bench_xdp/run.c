// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp's timed runs, all through BPF_PROG_TEST_RUN: a packet BATCH
 * times a call (measure()), one packet a call for the storms (storm()),
 * on one CPU or on several at once, each thread pinned to its own.
 */
#include <pthread.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "xdp.h"
#include "../bench.h"

/*
 * A miss storm: packets first..last-1, each of its own source (what = 's')
 * or destination ('d'), inside the routes build_routes makes (12.A.B.C, A <
 * 16 for a million), so every one is forwarded and, with the cache, a miss.
 * One packet a call: the kernel's duration is the program's time alone.
 * Returns the average ns per packet.
 */
static double storm(const struct variant *v, struct pkt_spec sp, char what,
		    int first, int last)
{
	struct xdp_md ctx = { .ingress_ifindex = v->ifindex };
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_out = out,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	uint8_t *a = what == 's' ? sp.src : sp.dst;
	double total = 0;
	int i;

	for (i = first; i < last; i++) {
		a[0] = 12;
		a[1] = (i >> 16) & 15;
		a[2] = (i >> 8) & 255;
		a[3] = i & 255;
		opts.data_size_in = ctx.data_end = pkt_build(pkt, &sp);
		opts.data_size_out = sizeof(out);
		if (bpf_prog_test_run_opts(v->prog_fd, &opts) ||
		    (int)opts.retval != XDP_REDIRECT) {
			fprintf(stderr, "bench_xdp: storm %s: verdict %d\n",
				v->name, opts.retval);
			return -1;
		}
		total += opts.duration;
	}
	return last > first ? total / (last - first) : 0;
}

struct storm_job {
	pthread_t tid;
	const struct variant *v;
	struct pkt_spec sp;
	char what;
	int cpu, first, last;
	double ns;
};

static void *storm_thread(void *arg)
{
	struct storm_job *j = arg;

	bench_pin_cpu(j->cpu);
	j->ns = storm(j->v, j->sp, j->what, j->first, j->last);
	return NULL;
}

/* Packets base..base+n-1 of a storm on cpus threads at once: the mean ns
 * per packet. */
static double storm_cpus(const struct variant *v, struct pkt_spec sp, char what,
			 int base, int n, int cpus)
{
	struct storm_job job[64];
	double sum = 0;
	int i, started = 0;

	for (i = 0; i < cpus; i++) {
		job[i] = (struct storm_job){
			.v = v,
			.sp = sp,
			.what = what,
			.cpu = i % silo_nr_cpus(),
			.first = base + (long long)n * i / cpus,
			.last = base + (long long)n * (i + 1) / cpus
		};
		if (pthread_create(&job[i].tid, NULL, storm_thread, &job[i]))
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(job[i].tid, NULL);
		if (job[i].ns < 0)
			return -1;
		sum += job[i].ns;
	}
	return started == cpus ? sum / cpus : -1;
}

/* Average ns per packet over calls calls of BATCH repeats each. */
static double measure(const struct variant *v, const uint8_t *pkt, size_t len,
		      int calls)
{
	uint8_t out[PKT_MAX];
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = v->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = BATCH);
	double total = 0;
	int i;

	for (i = 0; i < calls; i++) {
		opts.data_size_out = sizeof(out);
		if (bpf_prog_test_run_opts(v->prog_fd, &opts) ||
		    (int)opts.retval != v->want_verdict) {
			fprintf(stderr, "bench_xdp: %s: verdict %d, want %d\n",
				v->name, opts.retval, v->want_verdict);
			return -1;
		}
		total += opts.duration;
	}
	return total / calls;
}

/*
 * Scaling: the same measurement on cpus threads at once, thread i pinned to
 * CPU i, all released together. Counters and admission state are each
 * CPU's own memory; the rest of the hit path only reads (genid, the entry,
 * devices, tx_ports), so it should cost the same on N CPUs as on one. A
 * cache line the hit path writes and other CPUs touch would bounce.
 */
struct scale_job {
	pthread_t tid;
	const struct variant *v;
	const uint8_t *pkt;
	size_t len;
	int cpu, calls;
	pthread_barrier_t *go;
	double ns;
};

static void *scale_thread(void *arg)
{
	struct scale_job *j = arg;
	int err = bench_pin_cpu(j->cpu);

	pthread_barrier_wait(j->go);
	j->ns = err ? -1 : measure(j->v, j->pkt, j->len, j->calls);
	return NULL;
}

/* pkts[i] (PKT_MAX bytes apart) on CPU i, cpus threads at once: the mean
 * ns per packet over the threads, or -1. */
static double measure_cpus(const struct variant *v, const uint8_t *pkts,
			   const size_t *lens, int cpus, int calls)
{
	struct scale_job job[64];
	pthread_barrier_t go;
	double sum = 0;
	int i, err = 0;

	if (pthread_barrier_init(&go, NULL, cpus))
		return -1;
	for (i = 0; i < cpus; i++) {
		job[i] = (struct scale_job){
			.v = v,
			.pkt = pkts + (size_t)i * PKT_MAX,
			.len = lens[i],
			.cpu = i % silo_nr_cpus(),
			.calls = calls,
			.go = &go,
		};
		/* The barrier waits for cpus threads: a thread short would
		 * hang the others, so give up at once. */
		if (pthread_create(&job[i].tid, NULL, scale_thread, &job[i])) {
			fprintf(stderr, "bench_xdp: cannot start %d threads\n",
				cpus);
			exit(1);
		}
	}
	for (i = 0; i < cpus; i++) {
		pthread_join(job[i].tid, NULL);
		if (job[i].ns < 0)
			err = 1;
		sum += job[i].ns;
	}
	pthread_barrier_destroy(&go);
	return err ? -1 : sum / cpus;
}

/*
 * 1 CPU, then su->cpus at once, alternating in rounds: the hit with one
 * flow for every CPU (one cache entry), the hit with a flow per CPU
 * (10.200.C.1: an entry each), and the controls. Ratios per round, so
 * that a drift of the machine falls on both halves of a ratio alike; three
 * times the rounds and twice the calls of the other figures, since a line
 * that bounces between two CPUs costs only some 10 % of a hit (a locked
 * add planted on the hit's entry: 1.05-1.10 on the 2-CPU VM, against 1.01
 * without), less than 9 rounds' noise on a shared machine.
 */
int run_scale(const struct setup *su, struct variant *v, struct scale_run *sc)
{
	static uint8_t pkts[2][64][PKT_MAX];
	const struct variant *var[SCALE_RUNS] = { &v[0], &v[0], &v[2], &v[1] };
	int rounds = su->rounds * 3 > 64 ? 64 : su->rounds * 3;
	size_t lens[2][64];
	int r, i;

	for (i = 0; i < su->cpus; i++) {
		struct pkt_spec sp = su->sp;

		lens[0][i] = pkt_build(pkts[0][i], &sp);
		sp.dst[2] = 1 + i;
		lens[1][i] = pkt_build(pkts[1][i], &sp);
	}
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < SCALE_RUNS; i++) {
			const uint8_t *p = pkts[i == SCALE_HIT_OWN][0];
			const size_t *l = lens[i == SCALE_HIT_OWN];
			/* A FIB lookup costs some ten hits: fewer calls. */
			int calls = i == SCALE_FIB ? su->calls / 4 + 1 :
						     su->calls * 2;

			sc->one[i][r] = measure_cpus(var[i], p, l, 1, calls);
			sc->many[i][r] =
				measure_cpus(var[i], p, l, su->cpus, calls);
			if (sc->one[i][r] <= 0 || sc->many[i][r] < 0)
				return -1;
			sc->ratio[i][r] = sc->many[i][r] / sc->one[i][r];
		}
	}
	sc->rounds = rounds;
	for (i = 0; i < SCALE_RUNS; i++) {
		sc->one_ns[i] = bench_median(sc->one[i], rounds);
		sc->many_ns[i] = bench_median(sc->many[i], rounds);
		sc->med[i] = bench_median(sc->ratio[i], rounds);
	}
	return 0;
}

/*
 * The variants (nv: with the reference or without) at the benchmark's
 * packet, in rounds; with the reference, also the cache hit and the
 * reference at 64 and at 1514 bytes (SZ_*), and the median of the rounds'
 * 1514/64 ratios of the hit. A FIB lookup costs some ten hits: those get
 * fewer calls.
 */
int run_rounds(const struct setup *su, struct variant *v, int nv,
	       struct kind_run *k)
{
	static uint8_t pkt[3][PKT_MAX];
	double sz[NR_SZ][64], q[64];
	size_t len[3];
	int r, i, p;

	len[0] = pkt_build(pkt[0], &su->sp);
	len[1] = ref_frame(pkt[1], &su->sp, 64);
	len[2] = ref_frame(pkt[2], &su->sp, 1514);
	for (r = 0; r < su->rounds; r++) {
		for (i = 0; i < nv; i++) {
			v[i].ns[r] = measure(&v[i], pkt[0], len[0], su->calls);
			if (v[i].ns[r] < 0)
				return -1;
		}
		for (i = 0; k->ref && i < NR_SZ; i++) {
			p = i == SZ_HIT_64 || i == SZ_REF_64 ? 1 : 2;
			sz[i][r] = measure(
				i < SZ_REF_64 ? &v[0] : &v[3], pkt[p], len[p],
				i == SZ_HIT_64 ? su->calls : su->calls / 4 + 1);
			if (sz[i][r] < 0)
				return -1;
		}
		q[r] = k->ref ? sz[SZ_HIT_1514][r] / sz[SZ_HIT_64][r] : 0;
	}
	for (i = 0; i < nv; i++)
		k->ns[i] = bench_median(v[i].ns, su->rounds);
	for (i = 0; k->ref && i < NR_SZ; i++)
		k->sz[i] = bench_median(sz[i], su->rounds);
	k->size_ratio = bench_median(q, su->rounds);
	return 0;
}

/*
 * Miss storms, with the cache, without and (k->ref) the reference, the
 * same packets, in slices that alternate between them: a drift of the
 * machine (another task, frequency) falls on all alike.
 */
int run_storms(const struct setup *su, struct variant *v, struct kind_run *k)
{
	const struct variant *sv[3] = { &v[0], &v[1], &v[3] };
	int r, i, sl, first, n, nv = k->ref ? 3 : 2;
	struct pkt_spec ssp = su->sp;
	double ns;

	ssp.ttl = 64;
	for (r = 0; su->storm_n && r < 2; r++) {
		k->st[r][0] = k->st[r][1] = k->st[r][2] = 0;
		for (sl = 0; sl < STORM_SLICES; sl++) {
			first = (long long)su->storm_n * sl / STORM_SLICES;
			n = (long long)su->storm_n * (sl + 1) / STORM_SLICES -
			    first;
			for (i = 0; i < nv; i++) {
				ns = storm_cpus(sv[i], ssp, r ? 'd' : 's',
						first, n, su->cpus);
				if (ns < 0)
					return -1;
				k->st[r][i] += ns * n / su->storm_n;
			}
		}
	}
	return 0;
}
