// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp: the per-packet cost of silo's forward path, side by side in one
 * run, through BPF_PROG_TEST_RUN in a network namespace of its own that holds
 * 100,000 IPv4 routes and 10 policy rules:
 *
 *   fwd_cache_hit      silo, route cache on, every packet a hit
 *   fwd_fib_every_pkt  silo, cache off: bpf_fib_lookup for every packet
 *   xdp_empty          a program that returns XDP_PASS: the floor
 *   ref_fwd            the reference forwarder (xdp_ref_fwd of
 *                      bpf/tests/silo_test.bpf.c): what a plain XDP router
 *                      does, bpf_fib_lookup for every packet with its
 *                      length, TTL, MACs and a devmap redirect, as the
 *                      kernel's samples/bpf/xdp_fwd does; the baseline
 *                      (checked first: it forwards the benchmark's frames
 *                      and passes what it must)
 *   fwd_cache_hit_size the cache hit for a 1514-byte frame (IP length
 *                      1500) over the hit for a 64-byte frame (target <=
 *                      1.1: a hit costs what it costs whatever the size),
 *                      the reference at both sizes beside it
 *   miss_storm         a million packets, each of its own source, then each
 *                      of its own destination (inside the routes), through
 *                      silo with the cache, without it and the reference
 *                      forwarder: ns per packet and their ratios (target
 *                      <= 1.05, against no cache and against the
 *                      reference: miss_storm_vs_ref); then again with a
 *                      rule "from" that puts the source into the key, so
 *                      that every packet is a route miss and only
 *                      admission keeps it cheap
 *   cache_kind         the same, for each route cache map type (LRU with
 *                      one list, LRU with per-CPU lists, plain hash): which
 *                      is fastest under steady flows and under storms
 *   xdp_scale          the cache hit on 1 CPU, then on --cpus CPUs at once
 *                      (a thread pinned to each): ns per packet on N CPUs
 *                      over ns on 1 (target <= 1.05: the hit path writes no
 *                      cache line another CPU writes or reads), for one
 *                      flow every CPU hits and for a flow of its own per
 *                      CPU; the empty program and the FIB lookup on every
 *                      packet, as controls, show what the machine itself
 *                      loses with every CPU busy (SMT siblings, frequency)
 *
 * Variants alternate in rounds; the median round is reported, one JSON object
 * per line. The forward path rewrites the packet it runs on (TTL), so each
 * BPF_PROG_TEST_RUN call runs a fresh copy BATCH times and the kernel's
 * per-repeat time is averaged over calls. Storms run one packet a call, on
 * --cpus threads at once (each pinned to its CPU, each with its own share
 * of the addresses), as a flood spread by RSS would. Without live frames
 * no redirect is performed, for silo as for the reference: both are timed
 * up to their verdict, which must be XDP_REDIRECT.
 *
 *   bench_xdp [--rounds N] [--calls N] [--routes N] [--rules N] [--storm N]
 *             [--cpus N] [--kinds all|lru|lru-percpu|hash] [--no-scale]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "fwd.h"
#include "silo_test.skel.h"
#include "bench.h"
#include "silod_child.h"
#include "bench_xdp/ref.h"

#define BATCH 200 /* TTL 255 stays above 1 */
#define TARGET_RATIO 0.35
#define STORM_TARGET 1.05
#define STORM_SLICES 20
#define SCALE_TARGET 1.05
#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

struct variant {
	const char *name;
	int prog_fd;
	__u32 ifindex;
	int want_verdict;
	double ns[64];
};

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

/* 11.A.B.0/24 in the rules' tables, 12.A.B.0/24 in main. */
static void route4(FILE *f, int i, int n, int per_table)
{
	if (i >= 0)
		fprintf(f, "route add 11.%d.%d.0/24 via 10.2.0.2 table %d\n",
			(i * per_table + n) / 256 % 256,
			(i * per_table + n) % 256, 100 + i);
	else
		fprintf(f, "route add 12.%d.%d.0/24 via 10.2.0.2\n",
			n / 256 % 256, n % 256);
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

static const struct {
	const char *name;
	enum silo_cache_kind kind;
} kinds[] = {
	{ "lru", SILO_CACHE_LRU },
	{ "lru-percpu", SILO_CACHE_LRU_PERCPU },
	{ "hash", SILO_CACHE_HASH },
};

struct setup {
	struct silo_opts opts;
	struct pkt_spec sp;
	int empty_fd, ref_fd, rounds, calls, storm_n, cpus;
};

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
static int run_scale(const struct setup *su, struct variant *v,
		     struct scale_run *sc)
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

static void print_counters(struct silo *s)
{
	struct silo_stats *st = calloc(silo_nr_cpus(), sizeof(*st));
	unsigned int k;
	int i;

	fprintf(stderr, "bench_xdp: failed; silo's counters:\n");
	if (st && !silo_stats_read(s, st))
		for (k = 0; k < SILO_STAT_MAX; k++) {
			unsigned long long sum = 0;

			for (i = 0; i < silo_nr_cpus(); i++)
				sum += ((__u64 *)&st[i])[k];
			if (sum)
				fprintf(stderr, "  %s %llu\n",
					silo_stat_name(k), sum);
		}
	free(st);
}

/*
 * The variants (nv: with the reference or without) at the benchmark's
 * packet, in rounds; with the reference, also the cache hit and the
 * reference at 64 and at 1514 bytes (SZ_*), and the median of the rounds'
 * 1514/64 ratios of the hit. A FIB lookup costs some ten hits: those get
 * fewer calls.
 */
static int run_rounds(const struct setup *su, struct variant *v, int nv,
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
static int run_storms(const struct setup *su, struct variant *v,
		      struct kind_run *k)
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

/* Everything for one kind of route cache: load, measure, unload. */
static int run_kind(const struct setup *su, struct kind_run *k)
{
	struct silo_xdp_load_opts cached = { .forward = true,
					     .cache_kind = k->kind,
					     .unbound = true };
	struct silo_xdp_load_opts uncached = { .forward = true,
					       .no_cache = true,
					       .unbound = true };
	struct variant v[4] = {
		{ .name = "fwd_cache_hit", .want_verdict = XDP_REDIRECT },
		{ .name = "fwd_fib_every_pkt", .want_verdict = XDP_REDIRECT },
		{ .name = "xdp_empty", .want_verdict = XDP_PASS },
		{ .name = "ref_fwd", .want_verdict = XDP_REDIRECT },
	};
	struct silo_stats *per_cpu = NULL;
	pid_t silod = -1;
	int i, ret = -1;

	/* s: fwd.h's, which prog_of() reads. */
	s = NULL;
	sh("rm -rf %s", su->opts.pin_root);
	if (silo_open(&s, &su->opts) || silo_xdp_load(s, "in0", &cached) ||
	    silo_xdp_load(s, "in1", &uncached) ||
	    silo_xdp_load(s, "out0", &cached))
		goto out;
	silod = silod_child_start(s, su->opts.pin_root);
	if (silod < 0)
		goto out;
	v[0].ifindex = if_nametoindex("in0");
	v[0].prog_fd = prog_of(v[0].ifindex);
	v[1].ifindex = if_nametoindex("in1");
	v[1].prog_fd = prog_of(v[1].ifindex);
	v[2].ifindex = v[3].ifindex = v[0].ifindex;
	v[2].prog_fd = su->empty_fd;
	v[3].prog_fd = su->ref_fd;
	if (v[0].prog_fd < 0 || v[1].prog_fd < 0 ||
	    run_rounds(su, v, k->ref ? 4 : 3, k))
		goto out;
	if (k->scale && run_scale(su, v, k->scale))
		goto out;
	if (run_storms(su, v, k))
		goto out;
	/* Each variant ran the path it is named for. */
	per_cpu = calloc(silo_nr_cpus(), sizeof(*per_cpu));
	if (!per_cpu || silo_stats_read(s, per_cpu))
		goto out;
	for (i = 0; i < silo_nr_cpus(); i++) {
		k->hits += per_cpu[i].cache_hit;
		k->lookups += per_cpu[i].fib_success;
		k->inserts += per_cpu[i].cache_insert;
		k->refused += per_cpu[i].cache_refused;
		k->evicted += per_cpu[i].cache_evict;
	}
	ret = 0;
out:
	if (ret && s)
		print_counters(s);
	free(per_cpu);
	silod_child_stop(silod);
	if (s) {
		silo_xdp_unload(s, "in0");
		silo_xdp_unload(s, "in1");
		silo_xdp_unload(s, "out0");
		silo_close(s);
	}
	sh("rm -rf %s", su->opts.pin_root);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'c' },
		{ "routes", required_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'u' },
		{ "storm", required_argument, NULL, 's' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "no-scale", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct setup su = {
		.opts = { .pin_root = "/sys/fs/bpf/silo-bench" },
		.sp = { .family = AF_INET, .payload = 18, .ttl = 255 },
		.rounds = 9,
		.calls = 2000,
		.storm_n = 1000000,
		.cpus = silo_nr_cpus(),
	};
	struct kind_run runs[NR_KINDS] = {}, keyed = {};
	int routes = 100000, rules = 10, c, i, nr = 0, scale = 1;
	static const char *const scale_names[SCALE_RUNS][2] = {
		[SCALE_HIT_ONE] = { "fwd_cache_hit", "one" },
		[SCALE_HIT_OWN] = { "fwd_cache_hit", "per_cpu" },
		[SCALE_EMPTY] = { "xdp_empty", "one" },
		[SCALE_FIB] = { "fwd_fib_every_pkt", "one" },
	};
	static struct scale_run sc;
	const char *which = "all";
	struct silo_test *empty = NULL;
	struct ref_storm storms[2];
	struct kind_run *k;
	int ret = 1;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			su.rounds = atoi(optarg);
			break;
		case 'c':
			su.calls = atoi(optarg);
			break;
		case 'R':
			routes = atoi(optarg);
			break;
		case 'u':
			rules = atoi(optarg);
			break;
		case 's':
			su.storm_n = atoi(optarg);
			break;
		case 'C':
			su.cpus = atoi(optarg);
			break;
		case 'k':
			which = optarg;
			break;
		case 'S':
			scale = 0;
			break;
		default:
			fprintf(stderr,
				"usage: bench_xdp [--rounds N] [--calls N] [--routes N] [--rules N]\n"
				"                 [--storm N]  (packets of the miss storms, <= 1048576)\n"
				"                 [--cpus N]   (threads a storm and xdp_scale run on;\n"
				"                              default: every CPU)\n"
				"                 [--kinds all|lru|lru-percpu|hash]  (route cache map types)\n"
				"                 [--no-scale] (no xdp_scale: the hit on 1 and N CPUs)\n");
			return c == 'h' ? 0 : 2;
		}
	}
	for (i = 0; i < (int)NR_KINDS; i++)
		if (!strcmp(which, "all") || !strcmp(which, kinds[i].name)) {
			runs[nr].name = kinds[i].name;
			runs[nr++].kind = kinds[i].kind;
		}
	if (su.rounds < 1 || su.rounds > 64 || su.calls < 1 || routes < 1 ||
	    rules < 0 || su.storm_n < 0 || su.storm_n > (1 << 20) ||
	    su.cpus < 1 || su.cpus > 64 || !nr) {
		fprintf(stderr, "bench_xdp: bad arguments\n");
		return 2;
	}
	/* Two threads on one CPU would measure the scheduler. */
	if (scale && su.cpus > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr,
			"bench_xdp: --cpus %d: %ld CPUs online; xdp_scale pins a thread to each CPU (or use --no-scale)\n",
			su.cpus, sysconf(_SC_NPROCESSORS_ONLN));
		return 2;
	}
	if (test_init())
		return 1;
	if (sh("set -e\n"
	       "ip link add in0 type veth peer name in0p\n"
	       "ip link add in1 type veth peer name in1p\n"
	       "ip link add out0 type veth peer name out0p\n"
	       /* Down for good: holds the reference in the dispatcher. */
	       "ip link add ref0 type veth peer name ref0p\n"
	       "for d in in0 in0p in1 in1p out0 out0p; do ip link set $d up; done\n"
	       "ip addr add 10.1.0.1/24 dev in0\n"
	       "ip addr add 10.3.0.1/24 dev in1\n"
	       "ip addr add 10.2.0.1/24 dev out0\n"
	       /* The nexthop has the ingress MAC, so a frame rewritten by
		* one repeat is again for this host in the next. */
	       "ip link set in0 address 02:00:00:00:00:01\n"
	       "ip link set in1 address 02:00:00:00:00:01\n"
	       "ip neigh add 10.2.0.2 lladdr 02:00:00:00:00:01 dev out0 nud permanent\n"
	       "sysctl -qw net.ipv4.ip_forward=1\n") ||
	    bench_routes("", routes, rules, route4, NULL,
			 "route add 10.200.0.0/16 via 10.2.0.2"))
		return 1;
	empty = silo_test__open_and_load();
	if (!empty)
		goto out;
	su.empty_fd = bpf_program__fd(empty->progs.xdp_pass);
	/*
	 * Attached somewhere, a program stays in the kernel's XDP dispatcher;
	 * otherwise each BPF_PROG_TEST_RUN adds and removes it, which costs
	 * milliseconds of wall time (not of the measured time).
	 */
	if (bpf_xdp_attach(if_nametoindex("out0p"), su.empty_fd,
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;
	if (read_mac("in0", su.sp.dmac))
		goto out;
	su.sp.src[0] = 10, su.sp.src[1] = 1, su.sp.src[3] = 2;
	su.sp.dst[0] = 10, su.sp.dst[1] = 200, su.sp.dst[2] = 1,
	su.sp.dst[3] = 1;
	/* The baseline, checked before anything is timed against it. */
	su.ref_fd = ref_setup(empty, "out0", "ref0");
	if (su.ref_fd < 0 ||
	    ref_check(su.ref_fd, if_nametoindex("in0"), &su.sp, "out0",
		      (const uint8_t *)"\x02\x00\x00\x00\x00\x01"))
		goto out;
	runs[0].ref = keyed.ref = true;
	/* Scaling for the first kind only, silo's default. */
	runs[0].scale = scale ? &sc : NULL;
	for (i = 0; i < nr; i++)
		if (run_kind(&su, &runs[i]))
			goto out;
	/* A rule on sources (matching none of the packets) puts the source
	 * into the key: every storm packet a route miss, where admission
	 * alone keeps the cost near the lookup's. */
	keyed.name = runs[0].name;
	keyed.kind = runs[0].kind;
	if (su.storm_n &&
	    (sh("ip rule add from 11.0.0.0/8 lookup 100 pref 99") ||
	     run_kind(&su, &keyed)))
		goto out;

	/* The headline figures: the first kind, silo's default. */
	k = &runs[0];
	printf("{\"bench\":\"xdp_setup\",\"routes\":%d,\"rules\":%d,\"rounds\":%d,\"pkts_per_round\":%d,\"storm_cpus\":%d,\"cache\":\"%s\",\"cache_hits\":%llu,\"fib_lookups\":%llu}\n",
	       routes, rules, su.rounds, su.calls * BATCH, su.cpus, k->name,
	       k->hits, k->lookups);
	printf("{\"bench\":\"xdp_empty\",\"ns_per_pkt\":%.1f}\n", k->ns[2]);
	printf("{\"bench\":\"fwd_fib_every_pkt\",\"ns_per_pkt\":%.1f,\"vs\":\"xdp_empty\",\"ratio\":%.2f}\n",
	       k->ns[1], k->ns[1] / k->ns[2]);
	printf("{\"bench\":\"fwd_cache_hit\",\"ns_per_pkt\":%.1f,\"vs\":\"fwd_fib_every_pkt\",\"ratio\":%.3f,\"target\":%.2f,\"met\":%s}\n",
	       k->ns[0], k->ns[0] / k->ns[1], TARGET_RATIO,
	       k->ns[0] / k->ns[1] <= TARGET_RATIO ? "true" : "false");
	for (c = 0; scale && c < SCALE_RUNS; c++) {
		printf("{\"bench\":\"xdp_scale\",\"path\":\"%s\",\"flows\":\"%s\",\"cpus\":%d,\"rounds\":%d,\"ns_per_pkt_1cpu\":%.1f,\"ns_per_pkt_ncpus\":%.1f,\"ratio\":%.3f",
		       scale_names[c][0], scale_names[c][1], su.cpus, sc.rounds,
		       sc.one_ns[c], sc.many_ns[c], sc.med[c]);
		if (c == SCALE_HIT_ONE || c == SCALE_HIT_OWN)
			printf(",\"target\":%.2f,\"met\":%s}\n", SCALE_TARGET,
			       sc.med[c] <= SCALE_TARGET ? "true" : "false");
		else
			printf(",\"control\":true}\n");
	}
	for (c = 0; su.storm_n && c < 2; c++)
		printf("{\"bench\":\"miss_storm\",\"distinct\":\"%s\",\"key\":\"without the source\",\"packets\":%d,\"cpus\":%d,\"ns_per_pkt\":%.1f,\"vs\":\"no_cache\",\"no_cache_ns_per_pkt\":%.1f,\"ratio\":%.3f,\"target\":%.2f,\"met\":%s}\n",
		       c ? "destinations" : "sources", su.storm_n, su.cpus,
		       k->st[c][0], k->st[c][1], k->st[c][0] / k->st[c][1],
		       STORM_TARGET,
		       k->st[c][0] / k->st[c][1] <= STORM_TARGET ? "true" :
								   "false");
	for (c = 0; su.storm_n && c < 2; c++)
		printf("{\"bench\":\"miss_storm\",\"distinct\":\"%s\",\"key\":\"with the source (a rule from)\",\"packets\":%d,\"cpus\":%d,\"ns_per_pkt\":%.1f,\"vs\":\"no_cache\",\"no_cache_ns_per_pkt\":%.1f,\"ratio\":%.3f,\"target\":%.2f,\"met\":%s,\"inserted\":%llu,\"refused\":%llu,\"evicted\":%llu}\n",
		       c ? "destinations" : "sources", su.storm_n, su.cpus,
		       keyed.st[c][0], keyed.st[c][1],
		       keyed.st[c][0] / keyed.st[c][1], STORM_TARGET,
		       keyed.st[c][0] / keyed.st[c][1] <= STORM_TARGET ?
			       "true" :
			       "false",
		       keyed.inserts, keyed.refused, keyed.evicted);
	for (i = 0; su.storm_n && i < nr; i++) {
		k = &runs[i];
		printf("{\"bench\":\"cache_kind\",\"cache\":\"%s\",\"hit_ns\":%.1f,\"hit_ratio\":%.3f,\"storm_src_ratio\":%.3f,\"storm_dst_ratio\":%.3f,\"inserted\":%llu,\"refused\":%llu,\"evicted\":%llu}\n",
		       k->name, k->ns[0], k->ns[0] / k->ns[1],
		       k->st[0][0] / k->st[0][1], k->st[1][0] / k->st[1][1],
		       k->inserts, k->refused, k->evicted);
	}
	k = &runs[0];
	storms[0] = (struct ref_storm){ .key = "without the source",
					.packets = su.storm_n,
					.cpus = su.cpus };
	storms[1] = (struct ref_storm){ .key = "with the source (a rule from)",
					.packets = su.storm_n,
					.cpus = su.cpus };
	memcpy(storms[0].ns, k->st, sizeof(storms[0].ns));
	memcpy(storms[1].ns, keyed.st, sizeof(storms[1].ns));
	ref_print(k->ns[3], k->ns[1], k->ns[0], k->sz, k->size_ratio, storms,
		  2);
	ret = 0;
out:
	silo_test__destroy(empty);
	return ret;
}
