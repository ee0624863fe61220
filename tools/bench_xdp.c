// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp: the per-packet cost of silo's forward path, side by side in one
 * run, through BPF_PROG_TEST_RUN in a network namespace of its own that holds
 * 100,000 IPv4 routes and 10 policy rules:
 *
 *   fwd_cache_hit      silo, route cache on, every packet a hit
 *   fwd_fib_every_pkt  silo, cache off: bpf_fib_lookup for every packet
 *   xdp_empty          a program that returns XDP_PASS: the floor
 *   miss_storm_src     a million packets, each of its own source, through
 *   miss_storm_dst     silo with the cache and without (then each of its
 *                      own destination): ns per packet and their ratio
 *
 * Variants alternate in rounds; the median round is reported, one JSON object
 * per line. The forward path rewrites the packet it runs on (TTL), so each
 * BPF_PROG_TEST_RUN call runs a fresh copy BATCH times and the kernel's
 * per-repeat time is averaged over calls.
 *
 *   bench_xdp [--rounds N] [--calls N] [--routes N] [--rules N] [--storm N]
 */
#include <getopt.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "../tests/fwd.h"
#include "silo_test.skel.h"
#include "bench.h"
#include "silod_child.h"

#define BATCH 200 /* TTL 255 stays above 1 */
#define TARGET_RATIO 0.35
#define STORM_TARGET 1.05

struct variant {
	const char *name;
	int prog_fd;
	__u32 ifindex;
	int want_verdict;
	double ns[64];
};

/*
 * A miss storm: n packets, each of its own source (what = 's') or
 * destination ('d'), inside the routes build_routes makes (12.A.B.C, A <
 * 16 for a million), so every one is forwarded and, with the cache, a miss.
 * One packet a call: the kernel's duration is the program's time alone.
 * Returns the average ns per packet.
 */
static double storm(const struct variant *v, struct pkt_spec sp, char what,
		    int n)
{
	struct xdp_md ctx = { .ingress_ifindex = v->ifindex };
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt, .data_out = out,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1);
	uint8_t *a = what == 's' ? sp.src : sp.dst;
	double total = 0;
	int i;

	for (i = 0; i < n; i++) {
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
	return total / n;
}

static int build_routes(int routes, int rules)
{
	int per_table = rules ? routes * 9 / 10 / rules : 0;
	int main_routes = routes - per_table * rules, i, n;
	char path[] = "/tmp/silo-bench-XXXXXX";
	FILE *f;
	int fd, rc;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	/* Tables the rules consult first, none holding the bench's route. */
	for (i = 0; i < rules; i++) {
		fprintf(f, "rule add pref %d lookup %d\n", 100 + i, 100 + i);
		for (n = 0; n < per_table; n++)
			fprintf(f,
				"route add 11.%d.%d.0/24 via 10.2.0.2 table %d\n",
				(i * per_table + n) / 256 % 256,
				(i * per_table + n) % 256, 100 + i);
	}
	for (n = 0; n < main_routes - 1; n++)
		fprintf(f, "route add 12.%d.%d.0/24 via 10.2.0.2\n",
			n / 256 % 256, n % 256);
	fprintf(f, "route add 10.200.0.0/16 via 10.2.0.2\n");
	fclose(f);
	rc = sh("ip -batch %s", path);
	unlink(path);
	return rc;
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

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "calls", required_argument, NULL, 'c' },
		{ "routes", required_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'u' },
		{ "storm", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct silo_opts opts = { .pin_root = "/sys/fs/bpf/silo-bench" };
	struct silo_xdp_load_opts cached = { .forward = true };
	struct silo_xdp_load_opts uncached = { .forward = true,
					       .no_cache = true };
	int rounds = 9, calls = 2000, routes = 100000, rules = 10, c, r, i;
	int storm_n = 1000000;
	double st[2][2]; /* [source, destination][cache, no cache] */
	struct pkt_spec sp = { .family = AF_INET, .payload = 18, .ttl = 255 };
	struct variant v[3] = {
		{ .name = "fwd_cache_hit", .want_verdict = XDP_REDIRECT },
		{ .name = "fwd_fib_every_pkt", .want_verdict = XDP_REDIRECT },
		{ .name = "xdp_empty", .want_verdict = XDP_PASS },
	};
	unsigned long long hits = 0, lookups = 0;
	struct silo_stats *per_cpu = NULL;
	struct silo_test *empty = NULL;
	uint8_t pkt[PKT_MAX];
	double ns[3];
	size_t len;
	pid_t silod = -1;
	int ret = 1;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'c':
			calls = atoi(optarg);
			break;
		case 'R':
			routes = atoi(optarg);
			break;
		case 'u':
			rules = atoi(optarg);
			break;
		case 's':
			storm_n = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: bench_xdp [--rounds N] [--calls N] [--routes N] [--rules N]\n"
				"                 [--storm N]  (packets of the miss storms, <= 1048576)\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (rounds < 1 || rounds > 64 || calls < 1 || routes < 1 || rules < 0 ||
	    storm_n < 0 || storm_n > (1 << 20)) {
		fprintf(stderr, "bench_xdp: bad arguments\n");
		return 2;
	}
	if (test_init())
		return 1;
	if (sh("set -e\n"
	       "ip link add in0 type veth peer name in0p\n"
	       "ip link add in1 type veth peer name in1p\n"
	       "ip link add out0 type veth peer name out0p\n"
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
	    build_routes(routes, rules))
		return 1;
	sh("rm -rf %s", opts.pin_root);
	if (silo_open(&s, &opts) || silo_xdp_load(s, "in0", &cached) ||
	    silo_xdp_load(s, "in1", &uncached) ||
	    silo_xdp_load(s, "out0", &cached))
		goto out;
	silod = silod_child_start(s, opts.pin_root);
	if (silod < 0)
		goto out;
	v[0].ifindex = if_nametoindex("in0");
	v[0].prog_fd = prog_of(v[0].ifindex);
	v[1].ifindex = if_nametoindex("in1");
	v[1].prog_fd = prog_of(v[1].ifindex);
	empty = silo_test__open_and_load();
	if (!empty || v[0].prog_fd < 0 || v[1].prog_fd < 0)
		goto out;
	v[2].ifindex = v[0].ifindex;
	v[2].prog_fd = bpf_program__fd(empty->progs.xdp_pass);
	/*
	 * Attached somewhere, a program stays in the kernel's XDP dispatcher;
	 * otherwise each BPF_PROG_TEST_RUN adds and removes it, which costs
	 * milliseconds of wall time (not of the measured time).
	 */
	if (bpf_xdp_attach(if_nametoindex("out0p"), v[2].prog_fd,
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;

	if (read_mac("in0", sp.dmac))
		goto out;
	sp.src[0] = 10, sp.src[1] = 1, sp.src[3] = 2;
	sp.dst[0] = 10, sp.dst[1] = 200, sp.dst[2] = 1, sp.dst[3] = 1;
	len = pkt_build(pkt, &sp);
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < 3; i++) {
			v[i].ns[r] = measure(&v[i], pkt, len, calls);
			if (v[i].ns[r] < 0)
				goto out;
		}
	}
	for (i = 0; i < 3; i++)
		ns[i] = bench_median(v[i].ns, rounds);
	/* Miss storms, with the cache and without, the same packets. */
	for (r = 0; storm_n && r < 2; r++) {
		for (i = 0; i < 2; i++) {
			struct pkt_spec ssp = sp;

			ssp.ttl = 64;
			st[r][i] = storm(&v[i], ssp, r ? 'd' : 's', storm_n);
			if (st[r][i] < 0)
				goto out;
		}
	}
	/* Each variant ran the path it is named for. */
	per_cpu = calloc(silo_nr_cpus(), sizeof(*per_cpu));
	if (!per_cpu || silo_stats_read(s, per_cpu))
		goto out;
	for (i = 0; i < silo_nr_cpus(); i++) {
		hits += per_cpu[i].cache_hit;
		lookups += per_cpu[i].fib_success;
	}
	printf("{\"bench\":\"xdp_setup\",\"routes\":%d,\"rules\":%d,\"rounds\":%d,\"pkts_per_round\":%d,\"cache_hits\":%llu,\"fib_lookups\":%llu}\n",
	       routes, rules, rounds, calls * BATCH, hits, lookups);
	printf("{\"bench\":\"xdp_empty\",\"ns_per_pkt\":%.1f}\n", ns[2]);
	printf("{\"bench\":\"fwd_fib_every_pkt\",\"ns_per_pkt\":%.1f,\"vs\":\"xdp_empty\",\"ratio\":%.2f}\n",
	       ns[1], ns[1] / ns[2]);
	printf("{\"bench\":\"fwd_cache_hit\",\"ns_per_pkt\":%.1f,\"vs\":\"fwd_fib_every_pkt\",\"ratio\":%.3f,\"target\":%.2f,\"met\":%s}\n",
	       ns[0], ns[0] / ns[1], TARGET_RATIO,
	       ns[0] / ns[1] <= TARGET_RATIO ? "true" : "false");
	for (r = 0; storm_n && r < 2; r++)
		printf("{\"bench\":\"miss_storm_%s\",\"packets\":%d,\"ns_per_pkt\":%.1f,\"vs\":\"no_cache\",\"no_cache_ns_per_pkt\":%.1f,\"ratio\":%.3f,\"target\":%.2f,\"met\":%s}\n",
		       r ? "dst" : "src", storm_n, st[r][0], st[r][1],
		       st[r][0] / st[r][1], STORM_TARGET,
		       st[r][0] / st[r][1] <= STORM_TARGET ? "true" : "false");
	ret = 0;
out:
	if (ret && s) {
		struct silo_stats *st = calloc(silo_nr_cpus(), sizeof(*st));
		unsigned int k;

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
	free(per_cpu);
	silo_test__destroy(empty);
	silod_child_stop(silod);
	if (s) {
		silo_xdp_unload(s, "in0");
		silo_xdp_unload(s, "in1");
		silo_xdp_unload(s, "out0");
		silo_close(s);
	}
	return ret;
}
