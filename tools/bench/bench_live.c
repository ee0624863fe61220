// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live: packets per second through a router namespace, with live
 * traffic, for three routers side by side in one run:
 *
 *   kernel     the kernel forwards (the router's ingress veth runs an
 *              XDP_PASS program, see below)
 *   silo       silo xdp load --forward on both router veths, silod running
 *   no_cache   the same, loaded with no_cache: bpf_fib_lookup every packet
 *
 * each with two kinds of traffic:
 *
 *   steady_16     16 flows (sources), over and over
 *   flood_1m_src  1,000,000 sources, one packet each, cycling
 *
 * and a floor: a program that only decrements the hop limit and redirects,
 * what the path costs without a router.
 *
 *   silo-bl-client          silo-bl-router                silo-bl-sink
 *        blc0 ---------- blr-in          blr-out ---------- bls0
 *                        fd01::1/64      fd02::1/64         (fd02::2)
 *
 * The router holds 100,000 IPv6 routes and 10 policy rules (pref 100+i
 * lookup 100+i, tables without the benchmark's destination, as bench_xdp
 * builds them for IPv4); the destination, fd20::1, is routed via fd02::2,
 * a permanent neighbour. The generator, xdp_gen of bpf/tests/silo_test.bpf.c,
 * runs with BPF_PROG_RUN and BPF_F_TEST_XDP_LIVE_FRAMES in the client
 * namespace, its thread pinned to one CPU, and sends 80-byte IPv6/UDP
 * frames out of blc0 with hop limit 255, writing every header byte of each
 * from a template (the kernel recycles the pages, which keep what the
 * router rewrote) and the source from a per-CPU counter, with the UDP
 * checksum to match (checked at start through BPF_PROG_TEST_RUN). The
 * sink, xdp_count on bls0, counts the frames that arrive forwarded (hop
 * limit 254) and drops them. Variants alternate in rounds (each round in
 * another order); per variant and traffic, a warm-up, then the sink's
 * count over a fixed interval. Rates are the median round; ratios the
 * median of the rounds' ratios, each round measuring the variants back to
 * back.
 *
 * The whole path runs on the generator's CPU: a veth takes frames
 * redirected into it into a NAPI poll scheduled on the sending CPU, which
 * runs when the generator's batch ends; nothing is lost on the way. A rate
 * is therefore one CPU's worth of generator, router and sink together:
 * ns_over_floor is each router's own cost per packet (1/rate less the
 * floor's 1/rate). Time is the path's time on that CPU: wall time less the
 * generator thread's wait for the CPU (schedstat), plus what ksoftirqd ran
 * there; on a quiet machine the same as wall time (--wall uses wall time).
 * cpu_share says how much of the wall time that was.
 *
 * veth takes redirected frames only in NAPI mode, which it enters when an
 * XDP program is attached or GRO is on. For the kernel the router's
 * ingress runs XDP_PASS, GRO off on every veth; with GRO on and no program
 * instead, the kernel measured within 5 % (the noise). Kernel forwarding
 * hands the sink skbs, silo hands it frames: that difference is
 * forwarding's own. silo stays loaded on blr-out in every variant (its
 * maps and silod live with it); XDP runs on ingress only, so the kernel's
 * path out of blr-out is the same.
 *
 * Output, one JSON object per line: the setup; then per traffic the three
 * rates in Mpps, the ratios against their targets (steady: silo >= 3x
 * kernel; flood: silo >= 0.95x no_cache and >= 1x kernel), ns_over_floor,
 * and silo's counters summed over the measured intervals (sink_pkts: the
 * frames the sink counted meanwhile), which explain the rates. A target not
 * met is "met":false; the tool fails (exit 1) only when it cannot measure:
 * a setup error, no packet at the sink, or a silo variant whose packets
 * the stack forwarded instead. Everything it makes (namespaces, pins under
 * /sys/fs/bpf/silo-bl, silod) goes on exit, on failure and on SIGINT or
 * SIGTERM; leftovers of a run that was killed go at the next start.
 *
 *   bench_live [--rounds N] [--secs S] [--warmup S] [--cpu N]
 *              [--routes N] [--rules N] [--flows N] [--sources N] [--wall]
 *              [--verbose]
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "test.h"
#include "pkt.h"
#include "silo_test.skel.h"
#include "bench.h"
#include "silod_child.h"

#define NS_CLIENT "silo-bl-client"
#define NS_ROUTER "silo-bl-router"
#define NS_SINK "silo-bl-sink"
#define PIN_ROOT "/sys/fs/bpf/silo-bl"
#define DEV_CLIENT "blc0"
#define DEV_IN "blr-in"
#define DEV_OUT "blr-out"
#define DEV_SINK "bls0"
#define DEV_KEEP "blk0" /* holds xdp_gen in the XDP dispatcher */

#define HOP_LIMIT 255
#define PAYLOAD 18 /* 80-byte frames */
#define GEN_HDR BENCH_GEN_HDR /* bytes xdp_gen writes: GEN_WORDS * 8 */
#define SRC_BASE 0x01000000U /* sources fd01::100:0 + k */
#define FRAMES_PER_CALL (1 << 14)
#define MAX_ROUNDS 32

#define STEADY_TARGET 3.0
#define FLOOD_VS_NO_CACHE 0.95
#define FLOOD_VS_KERNEL 1.0

enum { KERNEL, SILO, NO_CACHE, FLOOR, NR_VARIANTS };
enum { STEADY, FLOOD, NR_TRAFFIC };

static const char *const variant_name[] = { "kernel", "silo", "no_cache",
					    "floor" };

/* What bench_live made, for cleanup on every path. */
static struct {
	int ns_orig, ns_client, ns_router, ns_sink;
	struct silo *s;
	struct silo_test *skel;
	pid_t silod;
	__u32 in_ifindex;
	bool in_silo, in_prog, out_silo;
	uint8_t frame[PKT_MAX];
	size_t frame_len;
} L = { .ns_orig = -1, .ns_client = -1, .ns_router = -1, .ns_sink = -1 };

static volatile sig_atomic_t stopping;
static bool verbose;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void print_stderr(enum silo_log_level level, const char *fmt, va_list ap)
{
	if (level > SILO_LOG_WARN)
		return;
	fprintf(stderr, "bench_live: silo: ");
	vfprintf(stderr, fmt, ap);
}

/* Removes the namespaces (their veths and XDP attachments) and the pins. */
static void lab_down(void)
{
	sh("for n in %s %s %s; do ip netns del $n 2>/dev/null; done; rm -rf %s; true",
	   NS_CLIENT, NS_ROUTER, NS_SINK, PIN_ROOT);
}

/*
 * 100,000 IPv6 routes, 10 policy rules (bench_routes() of bench.h): 90 % in
 * the tables the rules consult first (fd11:TABLE:N::/48), none holding the
 * destination; the rest in main (fd12:0:N::/48) with the benchmark's route,
 * fd20::/16.
 */
static void route6(FILE *f, int i, int n, int per_table)
{
	(void)per_table;
	if (i >= 0)
		fprintf(f, "route add fd11:%x:%x::/48 via fd02::2 table %d\n",
			i, n, 100 + i);
	else
		fprintf(f, "route add fd12:0:%x::/48 via fd02::2\n", n);
}

static int lab_up(int routes, int rules)
{
	if (sh("set -e\n"
	       "for n in %1$s %2$s %3$s; do ip netns add $n; ip -n $n link set lo up; done\n"
	       /* Client and sink stay silent: no IPv6 (MLD, DAD, RS). */
	       "for n in %1$s %3$s; do\n"
	       "  ip netns exec $n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1\n"
	       "done\n"
	       "ip netns exec %2$s sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.forwarding=1\n"
	       "ip -n %1$s link add %4$s type veth peer name %5$s netns %2$s\n"
	       "ip -n %1$s link add %8$s type veth peer name %8$sp\n"
	       "ip -n %3$s link add %7$s type veth peer name %6$s netns %2$s\n"
	       "ip -n %2$s addr add fd01::1/64 dev %5$s nodad\n"
	       "ip -n %2$s addr add fd02::1/64 dev %6$s nodad\n"
	       /* GRO off (veth's default, made sure of): see the header. */
	       "ip netns exec %1$s ethtool -K %4$s gro off\n"
	       "ip netns exec %2$s ethtool -K %5$s gro off\n"
	       "ip netns exec %2$s ethtool -K %6$s gro off\n"
	       "ip netns exec %3$s ethtool -K %7$s gro off\n"
	       "ip -n %1$s link set %4$s up\n"
	       "ip -n %2$s link set %5$s up\n"
	       "ip -n %2$s link set %6$s up\n"
	       "ip -n %3$s link set %7$s up\n"
	       "ip -n %2$s neigh add fd02::2 lladdr $(ip netns exec %3$s cat /sys/class/net/%7$s/address) dev %6$s nud permanent\n",
	       NS_CLIENT, NS_ROUTER, NS_SINK, DEV_CLIENT, DEV_IN, DEV_OUT,
	       DEV_SINK, DEV_KEEP))
		return -1;
	return bench_routes("-n " NS_ROUTER " -6", routes, rules, route6, NULL,
			    "route add fd20::/16 via fd02::2");
}

/* The frame the generator sends for source fd01::N (N = SRC_BASE + k). */
static void frame_for(uint8_t *buf, __u32 n)
{
	bench_gen_frame(buf, L.frame, L.frame_len, n);
}

/*
 * The template for xdp_gen. Then, through BPF_PROG_TEST_RUN without live
 * frames, a check that it writes exactly the frames it should (every
 * header byte, the source, the checksum) over junk headers.
 */
static int gen_setup(void)
{
	struct silo_test__bss *bss = L.skel->bss;
	static const __u32 srcs[] = { SRC_BASE, SRC_BASE + 1, SRC_BASE + 0xFFFF,
				      SRC_BASE + 999999, 0xFFFFFFFF };
	uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out,
		    .repeat = 1);
	unsigned int i;

	frame_for(L.frame, SRC_BASE);
	memcpy(bss->gen_tmpl[0], L.frame, GEN_HDR);
	bss->gen_src = SRC_BASE;
	bss->gen_csum[0] = bench_gen_csum(L.frame);
	bss->gen_nsrc = 1;
	bss->count_hlim = HOP_LIMIT - 1;
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		bss->gen_src = srcs[i];
		memset(in, 0xA5, GEN_HDR);
		memcpy(in + GEN_HDR, L.frame + GEN_HDR, L.frame_len - GEN_HDR);
		o.data_size_in = L.frame_len;
		o.data_size_out = sizeof(out);
		frame_for(want, srcs[i]);
		if (bpf_prog_test_run_opts(
			    bpf_program__fd(L.skel->progs.xdp_gen), &o) ||
		    o.retval != XDP_REDIRECT ||
		    o.data_size_out != L.frame_len ||
		    memcmp(out, want, L.frame_len)) {
			fprintf(stderr,
				"bench_live: xdp_gen does not write the frame it should (source %#x)\n",
				srcs[i]);
			return -1;
		}
	}
	bss->gen_src = SRC_BASE;
	return 0;
}

/* Forwarded frames the sink has counted. */
static __u64 sink_count(__u64 *other)
{
	int ncpus = libbpf_num_possible_cpus(), fd, cpu;
	__u64 v[ncpus > 0 ? ncpus : 1], sum[2] = {};
	__u32 k;

	fd = bpf_map__fd(L.skel->maps.count_pkts);
	for (k = 0; k < 2; k++)
		if (!bpf_map_lookup_elem(fd, &k, v))
			for (cpu = 0; cpu < ncpus; cpu++)
				sum[k] += v[cpu];
	if (other)
		*other = sum[1];
	return sum[0];
}

static int stats_total(struct silo_stats *total)
{
	int ncpus = silo_nr_cpus(), cpu, err;
	struct silo_stats *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	unsigned int i;

	memset(total, 0, sizeof(*total));
	if (!per_cpu)
		return -ENOMEM;
	err = silo_stats_read(L.s, per_cpu);
	for (cpu = 0; !err && cpu < ncpus; cpu++)
		for (i = 0; i < SILO_STAT_MAX; i++)
			((__u64 *)total)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
	return err;
}

/* Puts the variant's program on the router's ingress (in its namespace). */
static int set_variant(int v)
{
	struct silo_xdp_load_opts o = { .forward = true,
					.no_cache = v == NO_CACHE };
	struct silo_daemon_info di;
	int err, i;

	if (L.in_silo) {
		err = silo_xdp_unload(L.s, DEV_IN);
		if (err)
			return err;
		L.in_silo = false;
	}
	if (L.in_prog) {
		err = bpf_xdp_detach(L.in_ifindex, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			return err;
		L.in_prog = false;
	}
	if (v == KERNEL || v == FLOOR) {
		struct bpf_program *p = v == KERNEL ? L.skel->progs.xdp_pass :
						      L.skel->progs.xdp_bounce;

		err = bpf_xdp_attach(L.in_ifindex, bpf_program__fd(p),
				     XDP_FLAGS_DRV_MODE, NULL);
		L.in_prog = !err;
		return err;
	}
	err = silo_xdp_load(L.s, DEV_IN, &o);
	if (err)
		return err;
	L.in_silo = true;
	/* silo forwards only while silod beats and trusts the cache. */
	for (i = 0; i < 100; i++) {
		if (!silo_daemon_info(L.s, &di) && di.running &&
		    di.cache_trusted)
			return 0;
		usleep(20000);
	}
	fprintf(stderr, "bench_live: silod is not running\n");
	return -ESRCH;
}

/*
 * The time the path had the CPU: the generator thread's time there (the
 * softirqs it runs on leaving each batch count in it), and the time that
 * ksoftirqd, which runs what softirqs defer, had it meanwhile. Measured as
 * wall time less the thread's wait for the CPU (schedstat's run delay) plus
 * ksoftirqd's run time, so it holds with or without IRQ time accounting;
 * the thread does not sleep (see DEV_KEEP).
 */
static struct {
	int self, ksoftirqd; /* /proc/.../schedstat */
	bool wall; /* --wall: wall time only */
} clk = { -1, -1, false };

static int clock_open(int cpu)
{
	char path[PATH_MAX], comm[32], want[32];
	struct dirent *de;
	DIR *d;
	int fd;

	clk.self = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	if (clk.self < 0)
		return -errno;
	snprintf(want, sizeof(want), "ksoftirqd/%d\n", cpu);
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (clk.ksoftirqd < 0 && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(comm, 0, sizeof(comm));
		if (read(fd, comm, sizeof(comm) - 1) > 0 &&
		    !strcmp(comm, want)) {
			snprintf(path, sizeof(path), "/proc/%s/schedstat",
				 de->d_name);
			clk.ksoftirqd = open(path, O_RDONLY | O_CLOEXEC);
		}
		close(fd);
	}
	closedir(d);
	return clk.ksoftirqd < 0 ? -ENOENT : 0;
}

/* schedstat: run time and run delay (waiting for the CPU), in ns. */
static int schedstat(int fd, double *run, double *wait)
{
	unsigned long long r, w;
	char buf[128];
	ssize_t n;

	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &r, &w) != 2)
		return -1;
	*run = r / 1e9;
	*wait = w / 1e9;
	return 0;
}

/* Seconds of the path's time on the CPU since (the same call's) zero. */
static double busy_now(void)
{
	double run, wait, soft, dummy;

	if (clk.wall || schedstat(clk.self, &run, &wait) ||
	    schedstat(clk.ksoftirqd, &soft, &dummy))
		return bench_mono();
	return bench_mono() - wait + soft;
}

/*
 * Sends for secs of wall time; returns the sink's rate in packets per
 * second of the path's time on the CPU (*share: that time / wall time), or
 * < 0.
 */
static double send_for(double secs, double *share)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = L.frame,
		    .data_size_in = L.frame_len,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .repeat = FRAMES_PER_CALL);
	int fd = bpf_program__fd(L.skel->progs.xdp_gen);
	double t0, t1, b0, b1;
	__u64 c0, c1;

	t0 = bench_mono();
	b0 = busy_now();
	c0 = sink_count(NULL);
	do {
		if (bpf_prog_test_run_opts(fd, &o) && errno != EINTR) {
			fprintf(stderr, "bench_live: live frames: %s\n",
				strerror(errno));
			return -1;
		}
	} while (!stopping && bench_mono() - t0 < secs);
	c1 = sink_count(NULL);
	b1 = busy_now();
	t1 = bench_mono();
	if (stopping || b1 <= b0)
		return -1;
	if (share)
		*share = (b1 - b0) / (t1 - t0);
	return (c1 - c0) / (b1 - b0);
}

struct cell {
	double pps[MAX_ROUNDS];
	double share[MAX_ROUNDS]; /* of wall time the path had the CPU */
	__u64 pkts; /* at the sink, over the measured intervals */
	struct silo_stats d; /* silo's counters over the same intervals */
};

static int measure(struct cell *c, int round, __u32 nsrc, double warmup,
		   double secs)
{
	struct silo_stats before, after;
	unsigned int i;
	__u64 c0 = 0;
	double pps;

	L.skel->bss->gen_nsrc = nsrc;
	if (bench_enter("bench_live", L.ns_client))
		return -1;
	pps = send_for(warmup, NULL);
	if (pps >= 0) {
		c0 = sink_count(NULL);
		if (stats_total(&before))
			pps = -1;
		else
			pps = send_for(secs, &c->share[round]);
		if (pps >= 0 && stats_total(&after))
			pps = -1;
	}
	if (bench_enter("bench_live", L.ns_router) || pps < 0)
		return -1;
	if (pps == 0) {
		fprintf(stderr, "bench_live: no packet reached the sink\n");
		return -1;
	}
	c->pps[round] = pps;
	if (verbose)
		fprintf(stderr,
			"bench_live: round %d, %u sources: %.3f Mpps, %.0f %% of the CPU\n",
			round, nsrc, pps / 1e6, 100 * c->share[round]);
	c->pkts += sink_count(NULL) - c0;
	for (i = 0; i < SILO_STAT_MAX; i++)
		((__u64 *)&c->d)[i] +=
			((__u64 *)&after)[i] - ((__u64 *)&before)[i];
	return 0;
}

static void print_counters(const char *name, const struct cell *c)
{
	const struct silo_stats *d = &c->d;

	printf(",\"%s_counters\":{\"sink_pkts\":%llu,\"rx\":%llu,\"redirect\":%llu,\"pass\":%llu,\"fib_lookups\":%llu,\"cache_hit\":%llu,\"cache_miss\":%llu,\"cache_insert\":%llu,\"cache_refused\":%llu,\"cache_evict\":%llu}",
	       name, (unsigned long long)c->pkts, (unsigned long long)d->rx,
	       (unsigned long long)d->redirect, (unsigned long long)d->pass,
	       (unsigned long long)d->fib_success,
	       (unsigned long long)d->cache_hit,
	       (unsigned long long)d->cache_miss,
	       (unsigned long long)d->cache_insert,
	       (unsigned long long)d->cache_refused,
	       (unsigned long long)d->cache_evict);
}

/*
 * The rest of a traffic's line: each router's cost per packet above the
 * floor's (a rate is one CPU's worth of generator, router and sink), and
 * silo's counters.
 */
static void print_details(double mpps[][NR_TRAFFIC], int t,
			  struct cell cells[][NR_TRAFFIC])
{
	double floor_ns = 1e3 / mpps[FLOOR][t];

	printf(",\"ns_over_floor\":{\"kernel\":%.0f,\"silo\":%.0f,\"no_cache\":%.0f}",
	       1e3 / mpps[KERNEL][t] - floor_ns, 1e3 / mpps[SILO][t] - floor_ns,
	       1e3 / mpps[NO_CACHE][t] - floor_ns);
	print_counters("silo", &cells[SILO][t]);
	print_counters("no_cache", &cells[NO_CACHE][t]);
	printf("}\n");
}

/* The median over rounds of variant a's rate / variant b's, traffic t. */
static double median_ratio(struct cell cells[][NR_TRAFFIC], int a, int b, int t,
			   int rounds)
{
	double q[MAX_ROUNDS];
	int r;

	for (r = 0; r < rounds; r++)
		q[r] = cells[a][t].pps[r] / cells[b][t].pps[r];
	return bench_median(q, rounds);
}

/* A silo variant whose packets the stack forwarded measured the kernel. */
static int check_xdp_forwarded(int v, int t, const struct cell *c)
{
	if (c->d.redirect >= c->pkts / 10 * 9)
		return 0;
	fprintf(stderr,
		"bench_live: %s, %s: silo redirected %llu of %llu packets; the rest went through the stack\n",
		variant_name[v], t == STEADY ? "steady" : "flood",
		(unsigned long long)c->d.redirect, (unsigned long long)c->pkts);
	return -1;
}

static void cleanup(void)
{
	silod_child_stop(L.silod);
	L.silod = -1;
	if (L.s) {
		if (L.ns_router >= 0)
			bench_enter("bench_live", L.ns_router);
		if (L.in_silo)
			silo_xdp_unload(L.s, DEV_IN);
		if (L.out_silo)
			silo_xdp_unload(L.s, DEV_OUT);
		silo_close(L.s);
		L.s = NULL;
	}
	silo_test__destroy(L.skel);
	L.skel = NULL;
	if (L.ns_orig >= 0)
		bench_enter("bench_live", L.ns_orig);
	if (L.ns_client >= 0)
		close(L.ns_client);
	if (L.ns_router >= 0)
		close(L.ns_router);
	if (L.ns_sink >= 0)
		close(L.ns_sink);
	if (L.ns_orig >= 0)
		close(L.ns_orig);
	if (clk.self >= 0)
		close(clk.self);
	if (clk.ksoftirqd >= 0)
		close(clk.ksoftirqd);
	lab_down();
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "routes", required_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'u' },
		{ "flows", required_argument, NULL, 'f' },
		{ "sources", required_argument, NULL, 'S' },
		{ "wall", no_argument, NULL, 'W' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct silo_opts sopts = { .netns = NS_ROUTER, .pin_root = PIN_ROOT };
	struct silo_xdp_load_opts fwd = { .forward = true };
	int rounds = 5, routes = 100000, rules = 10, cpu = -1, c, r, i, v, t;
	double secs = 1.2, warmup = 0.5, mpps[NR_VARIANTS][NR_TRAFFIC];
	__u32 nsrc[NR_TRAFFIC] = { 16, 1000000 };
	static struct cell cells[NR_VARIANTS][NR_TRAFFIC];
	struct pkt_spec sp = { .family = AF_INET6,
			       .payload = PAYLOAD,
			       .ttl = HOP_LIMIT };
	struct sigaction sa = { .sa_handler = on_signal };
	double shares[NR_VARIANTS * NR_TRAFFIC * MAX_ROUNDS];
	double steady_vs_kernel, flood_vs_no_cache, flood_vs_kernel;
	__u64 other = 0;
	char flood[16];
	int n, err;
	int ret = 1;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 'w':
			warmup = atof(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		case 'R':
			routes = atoi(optarg);
			break;
		case 'u':
			rules = atoi(optarg);
			break;
		case 'f':
			nsrc[STEADY] = atoi(optarg);
			break;
		case 'S':
			nsrc[FLOOD] = atoi(optarg);
			break;
		case 'W':
			clk.wall = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: bench_live [--rounds N] [--secs S] [--warmup S] [--cpu N]\n"
				"                  [--routes N] [--rules N] [--flows N] [--sources N]\n"
				"                  [--wall] [--verbose]  (each measurement to stderr)\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || secs <= 0 || warmup < 0 ||
	    routes < 1 || rules < 0 || rules > 1000 || !nsrc[STEADY] ||
	    !nsrc[FLOOD] || nsrc[STEADY] > 1U << 24 || nsrc[FLOOD] > 1U << 24 ||
	    cpu >= CPU_SETSIZE) {
		fprintf(stderr, "bench_live: bad arguments\n");
		return 2;
	}
	if (cpu < 0)
		cpu = bench_last_cpu();
	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(print_stderr);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	L.silod = -1;
	L.ns_orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (L.ns_orig < 0)
		return 1;
	lab_down(); /* what an earlier run left, if it was killed */
	if (lab_up(routes, rules))
		goto out;
	L.ns_client = bench_open_ns(NS_CLIENT);
	L.ns_router = bench_open_ns(NS_ROUTER);
	L.ns_sink = bench_open_ns(NS_SINK);
	if (L.ns_client < 0 || L.ns_router < 0 || L.ns_sink < 0)
		goto out;

	/* The generator, its frame from the client to fd20::1. */
	L.skel = silo_test__open();
	if (!L.skel || bench_enter("bench_live", L.ns_client) ||
	    read_mac(DEV_CLIENT, sp.smac))
		goto out;
	L.skel->rodata->tx_ifindex = if_nametoindex(DEV_CLIENT);
	if (bench_enter("bench_live", L.ns_router) || read_mac(DEV_IN, sp.dmac))
		goto out;
	L.in_ifindex = if_nametoindex(DEV_IN);
	if (silo_test__load(L.skel))
		goto out;
	L.skel->bss->bounce_ifindex = if_nametoindex(DEV_OUT);
	inet_pton(AF_INET6, "fd01::", sp.src);
	inet_pton(AF_INET6, "fd20::1", sp.dst);
	L.frame_len = pkt_build(L.frame, &sp);
	if (gen_setup())
		goto out;

	/*
	 * Attached somewhere (a veth that stays down), the generator stays in
	 * the kernel's XDP dispatcher; otherwise each BPF_PROG_RUN adds and
	 * removes it, and waits for RCU each time: the thread would sleep
	 * for much of the run.
	 */
	if (bench_enter("bench_live", L.ns_client) ||
	    bpf_xdp_attach(if_nametoindex(DEV_KEEP),
			   bpf_program__fd(L.skel->progs.xdp_gen),
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;

	/* The sink. */
	if (bench_enter("bench_live", L.ns_sink) ||
	    bpf_xdp_attach(if_nametoindex(DEV_SINK),
			   bpf_program__fd(L.skel->progs.xdp_count),
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;

	/* silo on the router's egress for good, and silod. */
	if (bench_enter("bench_live", L.ns_orig) || silo_open(&L.s, &sopts) ||
	    silo_xdp_load(L.s, DEV_OUT, &fwd))
		goto out;
	L.out_silo = true;
	L.silod = silod_child_start(L.s, PIN_ROOT);
	if (L.silod < 0)
		goto out;

	/* Pinned after silod started: it does not inherit the CPU. */
	err = bench_pin_cpu(cpu);
	if (err) {
		fprintf(stderr, "bench_live: CPU %d: %s\n", cpu,
			strerror(-err));
		goto out;
	}
	if (!clk.wall && clock_open(cpu)) {
		fprintf(stderr,
			"bench_live: no schedstat for this thread or ksoftirqd/%d: rates over wall time\n",
			cpu);
		clk.wall = true;
	}

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_VARIANTS; i++) {
			v = (r + i) % NR_VARIANTS;
			if (verbose)
				fprintf(stderr, "bench_live: %s\n",
					variant_name[v]);
			if (stopping || set_variant(v)) {
				fprintf(stderr,
					"bench_live: cannot set up %s\n",
					variant_name[v]);
				goto out;
			}
			/* The floor does not look at the source. */
			for (t = 0; t < (v == FLOOR ? 1 : NR_TRAFFIC); t++)
				if (measure(&cells[v][t], r, nsrc[t], warmup,
					    secs))
					goto out;
		}
	}
	/* Each round measures the variants back to back: ratios by round. */
	steady_vs_kernel = median_ratio(cells, SILO, KERNEL, STEADY, rounds);
	flood_vs_no_cache = median_ratio(cells, SILO, NO_CACHE, FLOOD, rounds);
	flood_vs_kernel = median_ratio(cells, SILO, KERNEL, FLOOD, rounds);
	for (v = 0; v < NR_VARIANTS; v++)
		for (t = 0; t < (v == FLOOR ? 1 : NR_TRAFFIC); t++) {
			mpps[v][t] =
				bench_median(cells[v][t].pps, rounds) / 1e6;
			if ((v == SILO || v == NO_CACHE) &&
			    check_xdp_forwarded(v, t, &cells[v][t]))
				goto out;
		}
	mpps[FLOOR][FLOOD] = mpps[FLOOR][STEADY];
	sink_count(&other);
	for (v = 0, n = 0; v < NR_VARIANTS; v++)
		for (t = 0; t < (v == FLOOR ? 1 : NR_TRAFFIC); t++)
			for (r = 0; r < rounds; r++)
				shares[n++] = cells[v][t].share[r];

	printf("{\"bench\":\"forward_live_setup\",\"routes\":%d,\"rules\":%d,\"rounds\":%d,\"secs\":%.2f,\"warmup_secs\":%.2f,\"frame_bytes\":%zu,\"gen_cpu\":%d,\"steady_flows\":%u,\"flood_sources\":%u,\"time\":\"%s\",\"cpu_share\":%.2f,\"floor_mpps\":%.3f,\"sink_other_pkts\":%llu}\n",
	       routes, rules, rounds, secs, warmup, L.frame_len, cpu,
	       nsrc[STEADY], nsrc[FLOOD], clk.wall ? "wall" : "cpu",
	       bench_median(shares, n), mpps[FLOOR][STEADY],
	       (unsigned long long)other);
	t = STEADY;
	printf("{\"bench\":\"forward_live\",\"traffic\":\"steady_%u\",\"kernel_mpps\":%.3f,\"silo_mpps\":%.3f,\"no_cache_mpps\":%.3f,\"silo_vs_kernel\":%.2f,\"target\":%.1f,\"met\":%s",
	       nsrc[t], mpps[KERNEL][t], mpps[SILO][t], mpps[NO_CACHE][t],
	       steady_vs_kernel, STEADY_TARGET,
	       steady_vs_kernel >= STEADY_TARGET ? "true" : "false");
	print_details(mpps, t, cells);
	t = FLOOD;
	if (nsrc[t] == 1000000)
		snprintf(flood, sizeof(flood), "1m");
	else
		snprintf(flood, sizeof(flood), "%u", nsrc[t]);
	printf("{\"bench\":\"forward_live\",\"traffic\":\"flood_%s_src\",\"kernel_mpps\":%.3f,\"silo_mpps\":%.3f,\"no_cache_mpps\":%.3f,\"silo_vs_no_cache\":%.3f,\"silo_vs_kernel\":%.2f,\"targets\":{\"vs_no_cache\":%.2f,\"vs_kernel\":%.1f},\"met\":%s",
	       flood, mpps[KERNEL][t], mpps[SILO][t], mpps[NO_CACHE][t],
	       flood_vs_no_cache, flood_vs_kernel, FLOOD_VS_NO_CACHE,
	       FLOOD_VS_KERNEL,
	       flood_vs_no_cache >= FLOOD_VS_NO_CACHE &&
			       flood_vs_kernel >= FLOOD_VS_KERNEL ?
		       "true" :
		       "false");
	print_details(mpps, t, cells);
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "bench_live: failed%s\n",
			stopping ? " (interrupted)" : "");
	cleanup();
	return ret;
}
