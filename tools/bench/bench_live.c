// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live: what forwarding costs a packet, in a router namespace with
 * traffic through it, for four forwarders side by side in one run (and two
 * more behind a stateful firewall, below):
 *
 *   kernel   the kernel forwards (the router's ingress veth runs an
 *            XDP_PASS program, see below)
 *   silo     silo xdp load --forward on both router veths, silod running
 *   ref      the reference forwarder, xdp_ref_fwd of
 *            bpf/tests/silo_test.bpf.c, on the router's ingress, its devmap
 *            holding the egress: bpf_fib_lookup for every packet, as the
 *            kernel's samples/bpf/xdp_fwd does; the baseline of silo's
 *            ratios
 *   floor    a program that only decrements the hop limit and redirects,
 *            what the path costs without a router
 *
 * and, on one route set (--firewall-set, from_rules by default) for some
 * traffics (--firewall, steady_64, steady_1514 and flood by default; none,
 * or any of those and imix), the same router behind a stateful firewall
 * (firewall.c): an nftables forward chain, policy drop, that accepts
 * established connections first (ct state established,related accept),
 * drops invalid packets and accepts new connections from the ring's
 * ingress, the ring's flows made established in conntrack beforehand
 * (assured UDP entries that have seen a reply, inserted with conntrack(8):
 * the ring is one-way); for the flood none is, and each packet is a new
 * connection's (the router's unreplied UDP entries expire as they are
 * confirmed, its sources at most half of nf_conntrack_max, so that the
 * table never fills):
 *
 *   kernel_fw  the kernel forwards under that ruleset (XDP_PASS, as
 *              kernel): conntrack and the chain for every packet
 *   silo_fw    silo loaded --forward --forward-established: each packet
 *              forwarded with conntrack's verdict (bpf_xdp_ct_lookup()),
 *              or for the flood, looked up, not found and passed to the
 *              stack, which does kernel_fw's work (silo is then loaded so
 *              in every variant, which without the ruleset changes
 *              nothing: firewall.c)
 *
 * measured in the same rounds as the other variants; a
 * forward_live_firewall line per traffic compares them (ns per packet and
 * over the floor, silo_fw over kernel_fw) and with kernel and silo without
 * the firewall (conntrack_ns: what it adds to each per packet), and what
 * shows they measured what they say (the chain's and conntrack's
 * counters, silo's ct_stats). The flood's two are measured once more in
 * turns (--turns N pairs, 40 by default; fw_turns()): one ring runs while
 * silo's link on blr-in swaps silo's program and XDP_PASS every quarter
 * second, pairs of slices in the order ABBA, so that each pair shares the
 * VM's speed of that second; a forward_live_firewall_turns line gives the
 * median over pairs of silo_fw's ns over the floor to kernel_fw's, which
 * the flood's firewall target then reads instead of the rounds' median.
 *
 * each with four kinds of traffic (--traffic):
 *
 *   steady_64     16 flows (sources), 64-byte frames, over and over
 *   steady_1514   the same, 1514-byte frames (IP length 1500)
 *   imix          the same flows, the simple IMIX by count: 7 frames of 64
 *                 bytes, 4 of 590 (IP 576) and 1 of 1514 in every 12
 *   flood_1m_src  1,000,000 sources, one 64-byte packet each, cycling
 *   offload_64    steady_64 with the UDP checksums left to offload, as a
 *   offload_1514  sender on this host leaves them (the pseudo header's
 *                 sum in the field; blr-in is a veth, whose senders are
 *                 on this host): silo finishes each before it forwards it
 *                 (docs/ENVELOPE.md), the others forward it as it is.
 *                 Beside steady_64 and steady_1514, what finishing costs
 *                 a packet: forward_live_offload_csum lines
 *
 * over two route sets (--sets), built in turn, each 100,000 IPv6 routes:
 *
 *   lookup_tables  10 policy rules (pref 100+i lookup 100+i) whose tables
 *                  hold 90 % of the routes, none the destination; the rest
 *                  in main (bench_xdp builds the same for IPv4): silo's key
 *                  leaves the source out
 *   from_rules     every route in main, 10 rules "from" prefixes none of
 *                  the traffic's sources is in: the lookup is main's, but
 *                  silo's key holds the source (a flood misses every time)
 *
 *   silo-bl-client          silo-bl-router
 *        blc0 ---------- blr-in          blr-out ------+
 *        bls0 -------+   fd01::1/64      fd02::1/64    |
 *                    +----------------------------------+ (fd02::2)
 *
 * The destination, fd20::1, is routed via fd02::2, a permanent neighbour:
 * bls0, back in the client. The traffic is the source's ring
 * (tools/lib/source.h; no BPF_PROG_RUN, which some kernels refuse): 128
 * IPv6/UDP frames (120 for IMIX, whole turns of its pattern) seeded out
 * of blc0 with hop limit 255; the router forwards each to bls0, whose
 * program counts it (hop limit 254), writes its headers anew from the
 * template of its size (the next source, the UDP checksum to match) and
 * sends it in again through blc0. The frames go round as XDP frames, no
 * skb and no copy, with the router's work, the veths' and the ring's own
 * on one CPU (--cpu, the last by default), saturated: each lap is one
 * packet forwarded, and a rate's inverse is the whole cost of a packet
 * there. ns_over_floor (1/rate less the floor's 1/rate) cancels what the
 * source and the veths add, and is each router's own cost. Time is that
 * CPU's softirq time (/proc/stat), all the ring runs in, whatever else
 * ran there meanwhile; its busy time on a kernel that does not account
 * IRQ time, and with AF_PACKET; --wall: wall time. On an idle machine all
 * are the wall time; cpu_share says how much of it that was. This thread
 * and silod run on the other CPUs, so that the path's CPU is the path's
 * alone. What the source checks at start through
 * BPF_PROG_TEST_RUN: that it writes exactly the frames it should.
 * --source af_packet sends the same frames from an AF_PACKET socket
 * instead (sendmmsg, qdisc bypass), from this thread pinned to that CPU,
 * to xdp_count on bls0: each frame becomes an skb that the veth copies
 * into a page before XDP sees it, and a NAPI poll runs for each. The
 * frames' sources and sizes come in the same turn either way. Variants
 * alternate in rounds; per variant and traffic the ring is seeded, warmed
 * up, measured over a fixed interval and drained. Rates are the median round; ratios the median of the
 * rounds' ratios, each round measuring the variants back to back for each
 * traffic in turn (this VM's speed drifts over minutes, by up to 2x).
 *
 * veth takes redirected frames only in NAPI mode, which it enters when an
 * XDP program is attached or GRO is on. For the kernel the router's
 * ingress runs XDP_PASS, GRO off on every veth; with GRO on and no program
 * instead, the kernel measured within 5 % (the noise). Kernel forwarding
 * hands the sink skbs, which its veth turns into XDP frames again; silo
 * hands it frames: that difference is forwarding's own. silo stays loaded
 * on blr-out in every variant (its maps and silod live with it); XDP runs
 * on ingress only, so the kernel's path out of blr-out is the same.
 *
 * Output, one JSON object per line, each naming the source and the
 * kernel: per route set and traffic the rates in Mpps and Gbit/s, silo's
 * ratios to the reference, the floor and the kernel, ns_over_floor and
 * silo's counters summed over the measured intervals (sink_pkts: the
 * frames the sink counted meanwhile); the firewall's lines
 * (forward_live_firewall, forward_live_firewall_turns); then the targets
 * (forward_live_target, "met"
 * true or false): silo's ns over the floor at most 0.25 of the
 * reference's for steady traffic and IMIX, 0.95 for the flood, and no
 * more than 25 ns at 64 bytes, and silo_fw's ns over the floor for the
 * flood at most 1.05 of kernel_fw's (in turns), for established flows a
 * third; then
 * the setup, with the run's
 * length. A target not met is "met":false; the tool fails (exit 1) only
 * when it cannot measure: a setup error, a source that does not send what it
 * should, no packet at the sink, a silo variant whose packets the stack
 * forwarded instead (silo_fw: not forwarded under conntrack's verdict), a
 * kernel_fw whose packets the stack did not forward, packets of the
 * firewall's variants that the ruleset took for new or invalid (the flows
 * were not established), for the flood packets that were not new (silo_fw
 * found an entry, the new connections' rule missed some), invalid or lost,
 * or a full conntrack table, or a reference forwarder that does not forward
 * the frames itself (checked through BPF_PROG_TEST_RUN at start and by the
 * router's Ip6OutForwDatagrams during each measurement); exit 3 when the
 * source cannot run here at all (this kernel, or a policy that refuses
 * AF_PACKET or BPF). Everything it
 * makes (namespaces, pins under /sys/fs/bpf/silo-bl, silod) goes on exit,
 * on failure and on SIGINT or SIGTERM; leftovers of a run that was killed
 * go at the next start.
 *
 *   bench_live [--rounds N] [--secs S] [--warmup S] [--cpu N]
 *              [--routes N] [--rules N] [--flows N] [--sources N]
 *              [--traffic LIST] [--sets LIST] [--source ring|af_packet]
 *              [--firewall LIST|none] [--firewall-set lookup|from]
 *              [--turns N] [--wall] [--verbose]
 */
#include <sched.h>
#include "bench_live/live.h"
#include "bench.h"

volatile sig_atomic_t stopping;
bool verbose;
/* The lab's state, which lab.c and traffic.c both use: here, so that
 * neither file needs the other's. */
struct live L = { .ns_orig = -1,
		  .ns_client = -1,
		  .ns_router = -1,
		  .silod = -1,
		  .variant = -1,
		  .ct_fd = -1 };

static struct cell cells[NR_SETS][NR_VARIANTS][NR_TRAFFIC];
/* The flood's turns under the firewall: slices of a quarter second, each
 * after a twentieth for the frames of the program before (fw_turns()). */
#define TURN_SLICE 0.25
#define TURN_SETTLE 0.05
static struct turns turns;

/*
 * The targets, each the median over rounds of silo's ns over the floor,
 * over the reference's (ratio) or alone (ns), at most max; on route set
 * set (-1: on both).
 */
enum { RATIO, NS };

static const struct target {
	int set;
	const char *name;
	int t, kind;
	double max;
} targets[] = {
	{ -1, "silo_vs_ref_ns", STEADY_64, RATIO, 0.25 },
	{ -1, "silo_vs_ref_ns", STEADY_1514, RATIO, 0.25 },
	{ -1, "silo_vs_ref_ns", IMIX, RATIO, 0.25 },
	{ -1, "silo_vs_ref_ns", FLOOD, RATIO, 0.95 },
	{ -1, "silo_ns_over_floor", STEADY_64, NS, 25 },
};

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

/*
 * The floor does not look at the source nor at the checksum: a flood's
 * 64-byte frames cost it what steady ones do, an offload traffic's what
 * its steady one's do, so it measures those only without that one.
 */
static int floor_of(int t)
{
	return t == FLOOD	  ? STEADY_64 :
	       traffic[t].partial ? traffic[t].base :
				    t;
}

static bool measured(const struct run *run, int set, int v, int t)
{
	if (!run->traffic_on[t])
		return false;
	if (VARIANT_FW(v))
		return set == run->fw_set && run->fw_on[t];
	return v != FLOOR || floor_of(t) == t || !run->traffic_on[floor_of(t)];
}

static const struct cell *cell_of(const struct run *run, int set, int v, int t)
{
	if (v == FLOOR && !measured(run, set, v, t))
		t = floor_of(t);
	return &cells[set][v][t];
}

/* The cells of route set set, traffic t, by variant. */
static void cells_of(const struct run *run, int set, int t,
		     const struct cell *c[NR_VARIANTS])
{
	int v;

	for (v = 0; v < NR_VARIANTS; v++)
		c[v] = cell_of(run, set, v, t);
}

/*
 * Every round of route set set: each traffic, and for it each variant in
 * turn (each round in another order), so that the variants a ratio
 * compares are measured seconds apart: this VM's speed drifts over
 * minutes.
 */
static int run_set(const struct run *run, int set)
{
	int r, i, v, t;

	for (r = 0; r < run->rounds; r++) {
		for (t = 0; t < NR_TRAFFIC; t++) {
			for (i = 0; i < NR_VARIANTS; i++) {
				v = (r + t + i) % NR_VARIANTS;
				if (!measured(run, set, v, t))
					continue;
				if (verbose)
					fprintf(stderr, "bench_live: %s, %s\n",
						set_name[set], variant_name[v]);
				if (stopping || set_variant(v)) {
					fprintf(stderr,
						"bench_live: cannot set up %s\n",
						variant_name[v]);
					return -1;
				}
				if (measure(&cells[set][v][t], t, r,
					    run->warmup, run->secs))
					return -1;
			}
		}
	}
	return 0;
}

/*
 * What a forwarder's rate would not show: silo's packets forwarded by the
 * stack instead (it passed them), the reference's likewise. Either would
 * have measured the kernel.
 */
static int check_forwarded(const struct run *run, int set)
{
	const struct cell *c, *all[NR_VARIANTS];
	int t;

	for (t = 0; t < NR_TRAFFIC; t++) {
		if (!run->traffic_on[t])
			continue;
		cells_of(run, set, t, all);
		if (measured(run, set, SILO_FW, t) && fw_check(all, set, t))
			return -1;
		c = &cells[set][SILO][t];
		if (c->d.redirect < c->pkts / 10 * 9) {
			fprintf(stderr,
				"bench_live: %s, %s: silo redirected %llu of %llu packets; the rest went through the stack\n",
				set_name[set], traffic[t].name,
				(unsigned long long)c->d.redirect,
				(unsigned long long)c->pkts);
			return -1;
		}
		c = &cells[set][REF][t];
		if (c->stack_fwd > c->all_pkts / 10) {
			fprintf(stderr,
				"bench_live: %s, %s: the stack forwarded %llu of the reference's %llu packets: it passed them\n",
				set_name[set], traffic[t].name,
				(unsigned long long)c->stack_fwd,
				(unsigned long long)c->all_pkts);
			return -1;
		}
	}
	return 0;
}

/* Variant v's ns over the floor in round r, traffic t. */
static double ns_over(const struct run *run, int set, int v, int t, int r)
{
	return 1e9 / cell_of(run, set, v, t)->pps[r] -
	       1e9 / cell_of(run, set, FLOOR, t)->pps[r];
}

/* The median over rounds of a target's value; 0 when not measured. */
static double target_value(const struct run *run, int set,
			   const struct target *g)
{
	double q[MAX_ROUNDS];
	int r;

	if (!run->traffic_on[g->t])
		return 0;
	for (r = 0; r < run->rounds; r++) {
		q[r] = ns_over(run, set, SILO, g->t, r);
		if (g->kind == RATIO)
			q[r] /= ns_over(run, set, REF, g->t, r);
	}
	return bench_median(q, run->rounds);
}

/* The median over rounds of silo's rate / variant b's, traffic t. */
static double silo_vs(const struct run *run, int set, int t, int b)
{
	double q[MAX_ROUNDS];
	int r;

	for (r = 0; r < run->rounds; r++)
		q[r] = cell_of(run, set, SILO, t)->pps[r] /
		       cell_of(run, set, b, t)->pps[r];
	return bench_median(q, run->rounds);
}

/* Every line's start: what it is, the source, the kernel. */
static void print_head(const char *bench)
{
	bench_line(bench, source_shape_name(L.shape));
}

static void print_counters(const char *name, const struct cell *c)
{
	const struct silo_stats *d = &c->d;

	printf(",\"%s_counters\":{\"sink_pkts\":%llu,\"rx\":%llu,\"redirect\":%llu,\"pass\":%llu,\"fib_lookups\":%llu,\"cache_hit\":%llu,\"cache_miss\":%llu,\"cache_big\":%llu,\"cache_insert\":%llu,\"cache_refused\":%llu,\"cache_evict\":%llu}",
	       name, (unsigned long long)c->pkts, (unsigned long long)d->rx,
	       (unsigned long long)d->redirect, (unsigned long long)d->pass,
	       (unsigned long long)d->fib_success,
	       (unsigned long long)d->cache_hit,
	       (unsigned long long)d->cache_miss,
	       (unsigned long long)d->cache_big,
	       (unsigned long long)d->cache_insert,
	       (unsigned long long)d->cache_refused,
	       (unsigned long long)d->cache_evict);
}

/* Ring frames of traffic t that never came back, every variant but the
 * firewall's (their line says theirs). */
static __u64 lost(const struct run *run, int set, int t)
{
	__u64 n = 0;
	int v;

	for (v = 0; v < NR_BASE; v++)
		if (measured(run, set, v, t))
			n += cells[set][v][t].lost;
	return n;
}

/* One route set's line for traffic t: rates, ratios, costs, counters. */
static void print_row(const struct run *run, int set, int t)
{
	double mpps[NR_BASE], bytes = traffic_frame_bytes(t), fl;
	struct cell tmp;
	int v;

	for (v = 0; v < NR_BASE; v++) {
		tmp = *cell_of(run, set, v, t);
		mpps[v] = bench_median(tmp.pps, run->rounds) / 1e6;
	}
	print_head("forward_live");
	printf(",\"route_set\":\"%s\",\"traffic\":\"%s\",\"flows\":%u,\"frame_bytes\":%.1f,\"mpps\":{",
	       set_name[set], traffic[t].name, traffic[t].nsrc, bytes);
	for (v = 0; v < NR_BASE; v++)
		printf("%s\"%s\":%.3f", v ? "," : "", variant_name[v], mpps[v]);
	printf("},\"gbps\":{");
	for (v = 0; v < NR_BASE; v++)
		printf("%s\"%s\":%.2f", v ? "," : "", variant_name[v],
		       mpps[v] * (bytes + WIRE_EXTRA) * 8 / 1e3);
	printf("},\"silo_vs_ref\":%.3f,\"silo_vs_floor\":%.3f,\"silo_vs_kernel\":%.2f",
	       silo_vs(run, set, t, REF), silo_vs(run, set, t, FLOOR),
	       silo_vs(run, set, t, KERNEL));
	fl = 1e3 / mpps[FLOOR];
	printf(",\"ns_over_floor\":{\"kernel\":%.0f,\"silo\":%.0f,\"ref\":%.0f}",
	       1e3 / mpps[KERNEL] - fl, 1e3 / mpps[SILO] - fl,
	       1e3 / mpps[REF] - fl);
	print_counters("silo", &cells[set][SILO][t]);
	printf(",\"ref_stack_forwarded\":%llu,\"ring_lost\":%llu}\n",
	       (unsigned long long)cells[set][REF][t].stack_fwd,
	       (unsigned long long)lost(run, set, t));
}

/* turns: the flood's in turns (fw_turns_print()), or < 0. */
static void print_targets(const struct run *run, int set, double turns)
{
	const struct cell *c[NR_VARIANTS];
	const struct target *g;
	unsigned int i;
	double val;
	int t;

	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		g = &targets[i];
		if ((g->set >= 0 && g->set != set) || !run->traffic_on[g->t])
			continue;
		val = target_value(run, set, g);
		print_head("forward_live_target");
		printf(",\"route_set\":\"%s\",\"traffic\":\"%s\",\"what\":\"%s\",\"value\":%.3f,\"target\":\"<= %g\",\"met\":%s}\n",
		       set_name[set], traffic[g->t].name, g->name, val, g->max,
		       val <= g->max ? "true" : "false");
	}
	for (t = 0; t < NR_TRAFFIC; t++) {
		if (!measured(run, set, SILO_FW, t))
			continue;
		cells_of(run, set, t, c);
		fw_target(c, run->rounds, set, t, turns);
	}
}

/*
 * What finishing a checksum left to offload costs silo a packet: its ns
 * over the floor with them (offload_*) less with complete ones (steady_*),
 * the median over rounds of each round's difference.
 */
static void print_offload(const struct run *run, int set, int t)
{
	double q[MAX_ROUNDS], a[MAX_ROUNDS], b[MAX_ROUNDS];
	int base = traffic[t].base, r;

	if (!traffic[t].partial || !run->traffic_on[base])
		return;
	for (r = 0; r < run->rounds; r++) {
		a[r] = ns_over(run, set, SILO, base, r);
		b[r] = ns_over(run, set, SILO, t, r);
		q[r] = b[r] - a[r];
	}
	print_head("forward_live_offload_csum");
	printf(",\"route_set\":\"%s\",\"frame_bytes\":%zu,\"silo_ns_over_floor\":{\"%s\":%.1f,\"%s\":%.1f},\"finish_ns\":%.1f}\n",
	       set_name[set], size_bytes[traffic[t].pat[0]], traffic[base].name,
	       bench_median(a, run->rounds), traffic[t].name,
	       bench_median(b, run->rounds), bench_median(q, run->rounds));
}

static void print_firewall(const struct run *run, int set, int t)
{
	const struct cell *c[NR_VARIANTS];

	cells_of(run, set, t, c);
	fw_print(c, run->rounds, set, t);
}

static void print_setup(const struct run *run, double t0)
{
	static double shares[NR_SETS * NR_VARIANTS * NR_TRAFFIC * MAX_ROUNDS];
	int set, v, t, r, n = 0;
	__u64 other = 0;

	for (set = 0; set < NR_SETS; set++)
		for (v = 0; v < NR_VARIANTS; v++)
			for (t = 0; t < NR_TRAFFIC; t++) {
				if (!run->set_on[set] ||
				    !measured(run, set, v, t))
					continue;
				for (r = 0; r < run->rounds; r++)
					shares[n++] = cells[set][v][t].share[r];
			}
	sink_count(&other);
	print_head("forward_live_setup");
	printf(",\"routes\":%d,\"rules\":%d,\"rounds\":%d,\"secs\":%.2f,\"warmup_secs\":%.2f,\"path_cpu\":%d,\"cpus\":%ld,\"steady_flows\":%u,\"flood_sources\":%u,\"frame_sizes\":[%zu,%zu,%zu],\"wire_bytes\":\"frame + 4 FCS + 20 preamble, SFD and gap\",\"time\":\"%s\",\"cpu_share\":%.2f,\"sink_other_pkts\":%llu,\"run_secs\":%.0f}\n",
	       run->routes, run->rules, run->rounds, run->secs, run->warmup,
	       run->cpu, sysconf(_SC_NPROCESSORS_ONLN), traffic[STEADY_64].nsrc,
	       traffic[FLOOD].nsrc, size_bytes[SIZE_64], size_bytes[SIZE_590],
	       size_bytes[SIZE_1514],
	       wall_time	     ? "wall" :
	       softirq_measures == n ? "softirq" :
	       softirq_measures	     ? "softirq, busy" :
				       "busy",
	       n ? bench_median(shares, n) : 0, (unsigned long long)other,
	       bench_mono() - t0);
}

/* The lab, the programs, the source and its checks: 0 or -1. */
static int setup(struct run *run)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int t;

	if (run->cpu < 0)
		run->cpu = bench_last_cpu();
	L.cpu = run->cpu;
	for (t = 0; t < NR_TRAFFIC; t++)
		L.ct_optin |= run->set_on[run->fw_set] &&
			      measured(run, run->fw_set, SILO_FW, t);
	if (L.ct_optin && fw_tools())
		return -1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(print_stderr);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	L.ns_orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (L.ns_orig < 0)
		return -1;
	lab_down(); /* what an earlier run left, if it was killed */
	if (lab_up())
		return -1;
	L.ns_client = bench_open_ns(NS_CLIENT);
	L.ns_router = bench_open_ns(NS_ROUTER);
	if (L.ns_client < 0 || L.ns_router < 0 || lab_endpoints())
		return -1;
	for (t = 0; t < NR_TRAFFIC; t++)
		if (run->traffic_on[t] && traffic_check(t))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct run run = {
		.rounds = 5,
		.routes = 100000,
		.rules = 10,
		.cpu = -1,
		.secs = 0.5,
		.warmup = 0.2,
		.set_on = { true, true },
		.traffic_on = { true, true, true, true, true, true },
		.fw_on = { [STEADY_64] = true,
			   [STEADY_1514] = true,
			   [FLOOD] = true },
		.fw_set = SET_FROM,
		.turns = 40,
	};
	double t0 = bench_mono(), turned;
	const struct cell *c[NR_VARIANTS];
	int ret = 1, set, t;
	char flood[32];

	t = parse_args(argc, argv, &run);
	if (t >= 0)
		return t;
	if (traffic[FLOOD].nsrc != 1000000) {
		snprintf(flood, sizeof(flood), "flood_%u_src",
			 traffic[FLOOD].nsrc);
		traffic[FLOOD].name = flood;
	}
	if (setup(&run))
		goto out;
	for (set = 0; set < NR_SETS; set++) {
		if (!run.set_on[set])
			continue;
		if (lab_routes(set, run.routes, run.rules) || ref_check() ||
		    run_set(&run, set) || check_forwarded(&run, set))
			goto out;
		turned = -1;
		turns.pairs =
			measured(&run, set, SILO_FW, FLOOD) ? run.turns : 0;
		turns.settle = TURN_SETTLE;
		turns.slice = TURN_SLICE;
		if (turns.pairs &&
		    (set_variant(SILO_FW) || fw_turns(&turns, run.warmup) ||
		     fw_turns_check(&turns, set)))
			goto out;
		for (t = 0; t < NR_TRAFFIC; t++)
			if (run.traffic_on[t])
				print_row(&run, set, t);
		for (t = 0; t < NR_TRAFFIC; t++)
			if (run.traffic_on[t])
				print_offload(&run, set, t);
		for (t = 0; t < NR_TRAFFIC; t++)
			if (measured(&run, set, SILO_FW, t))
				print_firewall(&run, set, t);
		if (turns.pairs) {
			cells_of(&run, set, FLOOD, c);
			turned = fw_turns_print(&turns, c, run.rounds, set);
		}
		print_targets(&run, set, turned);
	}
	print_setup(&run, t0);
	ret = 0;
out:
	if (ret && L.cannot_run) {
		fprintf(stderr,
			"bench_live: the traffic source cannot run here (above): nothing measured\n");
		ret = 3;
	} else if (ret) {
		fprintf(stderr, "bench_live: failed%s\n",
			stopping ? " (interrupted)" : "");
	}
	lab_cleanup();
	return ret;
}
