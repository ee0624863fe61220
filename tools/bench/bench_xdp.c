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
 *                      <= 1.05 against the reference: miss_storm_vs_ref;
 *                      against no cache, what the cache's bookkeeping
 *                      costs a storm: a control); then again with a
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
 * The timed runs are in bench_xdp/run.c, the reference forwarder's setup,
 * checks and lines in bench_xdp/ref.c.
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
#include "bench_xdp/xdp.h"

#define TARGET_RATIO 0.35
#define SCALE_TARGET 1.05
#define NR_KINDS (sizeof(kinds) / sizeof(kinds[0]))

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

static const struct {
	const char *name;
	enum silo_cache_kind kind;
} kinds[] = {
	{ "lru", SILO_CACHE_LRU },
	{ "lru-percpu", SILO_CACHE_LRU_PERCPU },
	{ "hash", SILO_CACHE_HASH },
};

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

struct args {
	int routes, rules, scale;
	const char *which;
};

/* The options into su and a: -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct setup *su, struct args *a)
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
	int c;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			su->rounds = atoi(optarg);
			break;
		case 'c':
			su->calls = atoi(optarg);
			break;
		case 'R':
			a->routes = atoi(optarg);
			break;
		case 'u':
			a->rules = atoi(optarg);
			break;
		case 's':
			su->storm_n = atoi(optarg);
			break;
		case 'C':
			su->cpus = atoi(optarg);
			break;
		case 'k':
			a->which = optarg;
			break;
		case 'S':
			a->scale = 0;
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
	return -1;
}

/* The kinds to run into runs (their number), or -1 for bad arguments. */
static int select_kinds(const struct setup *su, const struct args *a,
			struct kind_run *runs)
{
	int i, nr = 0;

	for (i = 0; i < (int)NR_KINDS; i++)
		if (!strcmp(a->which, "all") ||
		    !strcmp(a->which, kinds[i].name)) {
			runs[nr].name = kinds[i].name;
			runs[nr++].kind = kinds[i].kind;
		}
	if (su->rounds < 1 || su->rounds > 64 || su->calls < 1 ||
	    a->routes < 1 || a->rules < 0 || su->storm_n < 0 ||
	    su->storm_n > (1 << 20) || su->cpus < 1 || su->cpus > 64 || !nr) {
		fprintf(stderr, "bench_xdp: bad arguments\n");
		return -1;
	}
	/* Two threads on one CPU would measure the scheduler. */
	if (a->scale && su->cpus > sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr,
			"bench_xdp: --cpus %d: %ld CPUs online; xdp_scale pins a thread to each CPU (or use --no-scale)\n",
			su->cpus, sysconf(_SC_NPROCESSORS_ONLN));
		return -1;
	}
	return nr;
}

/* The peers' namespace: gone when the benchmark exits. */
static char peer_ns[64];

static void peer_ns_del(void)
{
	sh("ip netns del %s 2>/dev/null", peer_ns);
}

/*
 * The namespace's devices, addresses, neighbour and routes. Every device
 * but lo carries silo, as an operator's router must for full-size frames
 * to come from the cache (silod's PMTU watch): the veths' peers, and the
 * reference's device (down for good: it holds the reference forwarder in
 * the dispatcher), live in a namespace of their own.
 */
static int lab_setup(const struct args *a)
{
	snprintf(peer_ns, sizeof(peer_ns), "silo-bx-%d", getpid());
	if (sh("ip netns add %s", peer_ns))
		return -1;
	atexit(peer_ns_del);
	return sh("set -e\n"
		  "ip link add in0 type veth peer name in0p netns %1$s\n"
		  "ip link add in1 type veth peer name in1p netns %1$s\n"
		  "ip link add out0 type veth peer name out0p netns %1$s\n"
		  "ip -n %1$s link add ref0 type veth peer name ref0p\n"
		  "for d in in0p in1p out0p; do ip -n %1$s link set $d up; done\n"
		  "for d in in0 in1 out0; do ip link set $d up; done\n"
		  "ip addr add 10.1.0.1/24 dev in0\n"
		  "ip addr add 10.3.0.1/24 dev in1\n"
		  "ip addr add 10.2.0.1/24 dev out0\n"
		  /* The nexthop has the ingress MAC, so a frame rewritten by
		* one repeat is again for this host in the next. */
		  "ip link set in0 address 02:00:00:00:00:01\n"
		  "ip link set in1 address 02:00:00:00:00:01\n"
		  "ip neigh add 10.2.0.2 lladdr 02:00:00:00:00:01 dev out0 nud permanent\n"
		  "sysctl -qw net.ipv4.ip_forward=1\n",
		  peer_ns) ||
	       bench_routes("", a->routes, a->rules, route4, NULL,
			    "route add 10.200.0.0/16 via 10.2.0.2");
}

/* The JSON lines; the headline figures are the first kind's, silo's
 * default. */
static void print_results(const struct setup *su, const struct args *a,
			  struct kind_run *runs, int nr,
			  const struct kind_run *keyed,
			  const struct scale_run *sc)
{
	static const char *const scale_names[SCALE_RUNS][2] = {
		[SCALE_HIT_ONE] = { "fwd_cache_hit", "one" },
		[SCALE_HIT_OWN] = { "fwd_cache_hit", "per_cpu" },
		[SCALE_EMPTY] = { "xdp_empty", "one" },
		[SCALE_FIB] = { "fwd_fib_every_pkt", "one" },
	};
	struct ref_storm storms[2];
	const struct kind_run *k;
	int c, i;

	k = &runs[0];
	bench_line("xdp_setup", "prog_test_run");
	printf(",\"routes\":%d,\"rules\":%d,\"rounds\":%d,\"pkts_per_round\":%d,\"storm_cpus\":%d,\"cache\":\"%s\",\"cache_hits\":%llu,\"fib_lookups\":%llu}\n",
	       a->routes, a->rules, su->rounds, su->calls * BATCH, su->cpus,
	       k->name, k->hits, k->lookups);
	bench_line("xdp_empty", "prog_test_run");
	printf(",\"ns_per_pkt\":%.1f}\n", k->ns[2]);
	bench_line("fwd_fib_every_pkt", "prog_test_run");
	printf(",\"ns_per_pkt\":%.1f,\"vs\":\"xdp_empty\",\"ratio\":%.2f}\n",
	       k->ns[1], k->ns[1] / k->ns[2]);
	bench_line("fwd_cache_hit", "prog_test_run");
	printf(",\"ns_per_pkt\":%.1f,\"vs\":\"fwd_fib_every_pkt\",\"ratio\":%.3f,\"target\":%.2f,\"met\":%s}\n",
	       k->ns[0], k->ns[0] / k->ns[1], TARGET_RATIO,
	       k->ns[0] / k->ns[1] <= TARGET_RATIO ? "true" : "false");
	for (c = 0; a->scale && c < SCALE_RUNS; c++) {
		bench_line("xdp_scale", "prog_test_run");
		printf(",\"path\":\"%s\",\"flows\":\"%s\",\"cpus\":%d,\"rounds\":%d,\"ns_per_pkt_1cpu\":%.1f,\"ns_per_pkt_ncpus\":%.1f,\"ratio\":%.3f",
		       scale_names[c][0], scale_names[c][1], su->cpus,
		       sc->rounds, sc->one_ns[c], sc->many_ns[c], sc->med[c]);
		if (c == SCALE_HIT_ONE || c == SCALE_HIT_OWN)
			printf(",\"target\":%.2f,\"met\":%s}\n", SCALE_TARGET,
			       sc->med[c] <= SCALE_TARGET ? "true" : "false");
		else
			printf(",\"control\":true}\n");
	}
	/* Against silo's own mode without the cache: what the cache's
	 * bookkeeping costs a storm, a control; the storms' targets are
	 * against the reference (miss_storm_vs_ref). */
	for (c = 0; su->storm_n && c < 2; c++) {
		bench_line("miss_storm", "prog_test_run");
		printf(",\"distinct\":\"%s\",\"key\":\"without the source\",\"packets\":%d,\"cpus\":%d,\"ns_per_pkt\":%.1f,\"vs\":\"no_cache\",\"no_cache_ns_per_pkt\":%.1f,\"ratio\":%.3f,\"control\":true}\n",
		       c ? "destinations" : "sources", su->storm_n, su->cpus,
		       k->st[c][0], k->st[c][1], k->st[c][0] / k->st[c][1]);
	}
	for (c = 0; su->storm_n && c < 2; c++) {
		bench_line("miss_storm", "prog_test_run");
		printf(",\"distinct\":\"%s\",\"key\":\"with the source (a rule from)\",\"packets\":%d,\"cpus\":%d,\"ns_per_pkt\":%.1f,\"vs\":\"no_cache\",\"no_cache_ns_per_pkt\":%.1f,\"ratio\":%.3f,\"control\":true,\"inserted\":%llu,\"refused\":%llu,\"evicted\":%llu}\n",
		       c ? "destinations" : "sources", su->storm_n, su->cpus,
		       keyed->st[c][0], keyed->st[c][1],
		       keyed->st[c][0] / keyed->st[c][1], keyed->inserts,
		       keyed->refused, keyed->evicted);
	}
	for (i = 0; su->storm_n && i < nr; i++) {
		k = &runs[i];
		bench_line("cache_kind", "prog_test_run");
		printf(",\"cache\":\"%s\",\"hit_ns\":%.1f,\"hit_ratio\":%.3f,\"storm_src_ratio\":%.3f,\"storm_dst_ratio\":%.3f,\"inserted\":%llu,\"refused\":%llu,\"evicted\":%llu}\n",
		       k->name, k->ns[0], k->ns[0] / k->ns[1],
		       k->st[0][0] / k->st[0][1], k->st[1][0] / k->st[1][1],
		       k->inserts, k->refused, k->evicted);
	}
	k = &runs[0];
	storms[0] = (struct ref_storm){ .key = "without the source",
					.packets = su->storm_n,
					.cpus = su->cpus };
	storms[1] = (struct ref_storm){ .key = "with the source (a rule from)",
					.packets = su->storm_n,
					.cpus = su->cpus };
	memcpy(storms[0].ns, k->st, sizeof(storms[0].ns));
	memcpy(storms[1].ns, keyed->st, sizeof(storms[1].ns));
	ref_print(k->ns[3], k->ns[1], k->ns[0], k->sz, k->size_ratio, storms,
		  2);
}

int main(int argc, char **argv)
{
	struct setup su = {
		.opts = { .pin_root = "/sys/fs/bpf/silo-bench" },
		.sp = { .family = AF_INET, .payload = 18, .ttl = 255 },
		.rounds = 9,
		.calls = 2000,
		.storm_n = 1000000,
		.cpus = silo_nr_cpus(),
	};
	struct args a = {
		.routes = 100000, .rules = 10, .scale = 1, .which = "all"
	};
	struct kind_run runs[NR_KINDS] = {}, keyed = {};
	struct silo_test *empty = NULL;
	static struct scale_run sc;
	int i, nr = 0, ret;

	ret = parse_args(argc, argv, &su, &a);
	if (ret >= 0)
		return ret;
	ret = 1;
	nr = select_kinds(&su, &a, runs);
	if (nr < 0)
		return 2;
	if (test_init() || lab_setup(&a))
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
	if (attach_in(peer_ns, "out0p", su.empty_fd))
		goto out;
	if (read_mac("in0", su.sp.dmac))
		goto out;
	su.sp.src[0] = 10, su.sp.src[1] = 1, su.sp.src[3] = 2;
	su.sp.dst[0] = 10, su.sp.dst[1] = 200, su.sp.dst[2] = 1,
	su.sp.dst[3] = 1;
	/* The baseline, checked before anything is timed against it. */
	su.ref_fd = ref_setup(empty, "out0", "ref0", peer_ns);
	if (su.ref_fd < 0 ||
	    ref_check(su.ref_fd, if_nametoindex("in0"), &su.sp, "out0",
		      (const uint8_t *)"\x02\x00\x00\x00\x00\x01"))
		goto out;
	runs[0].ref = keyed.ref = true;
	/* Scaling for the first kind only, silo's default. */
	runs[0].scale = a.scale ? &sc : NULL;
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

	print_results(&su, &a, runs, nr, &keyed, &sc);
	ret = 0;
out:
	silo_test__destroy(empty);
	return ret;
}
