// SPDX-License-Identifier: GPL-2.0
/*
 * bench_jumbo: jumbo frames (9,014 bytes: IPv6, UDP, IP length 9,000)
 * through a router namespace whose veths all have MTU 9000, live, for four
 * forwarders side by side in one run (as bench_live's, each program in its
 * multi-buffer form: a veth takes a program without it only while a frame
 * fits a page):
 *
 *   kernel  the kernel forwards (XDP_PASS on the router's ingress, which
 *           keeps the veth in NAPI mode, as bench_live does)
 *   silo    silo xdp load --forward on both router veths, silod running
 *   ref     the reference forwarder (xdp_ref_fwd_frags of
 *           bpf/tests/silo_test.bpf.c: bpf_fib_lookup for every packet,
 *           the whole frame's length): the baseline of silo's ratio
 *   floor   hop limit - 1 and a redirect, no lookup: the path's own cost
 *
 *   silo-bj-client        silo-bj-router                silo-bj-sink
 *       bjc0 ---------- bjr-in          bjr-out ---------- bjs0
 *                       fd01::1/64      fd02::1/64         (fd02::2)
 *
 * The source is tools/lib/source.h's AF_PACKET sender (its ring's programs
 * take frames of one buffer only): a socket on bjc0 (PACKET_QDISC_BYPASS)
 * sends --flows steady flows (sources fd01::100:k, one frame each in turn,
 * UDP checksums right) to fd20::1 in batches of sendmmsg, its thread
 * pinned to --cpu. A veth runs what is sent into it in a NAPI poll on the sending
 * CPU, so the rate is one CPU's worth of generator, router and sink
 * together, as in bench_live; frames reach XDP in several buffers (the
 * veth copies an skb it cannot use in place into pages). The sink,
 * xdp_count_frags on bjs0, counts the frames that arrive forwarded (hop
 * limit 254). Variants alternate in rounds, each round in another order;
 * per variant a warm-up, then the sink's count over --secs of wall time.
 * Rates are the median round, the ratio silo / ref the median of the
 * rounds' ratios. Gbit/s count each frame on the wire (+ 24 bytes: FCS,
 * preamble, SFD, gap).
 *
 * Output, one JSON object per line, each naming the source and the
 * kernel: per variant Mpps and Gbit/s, silo's
 * ratios, silo's counters (redirect, and the packets its program saw in
 * several buffers are all of them), the target jumbo_vs_ref (silo >= 1.3x
 * the reference, "met" true or false), and the setup. The tool fails
 * (exit 1) only when it cannot measure: a setup error, no packet at the
 * sink, or a silo or reference run whose frames the router's stack
 * forwarded instead. Everything it makes (namespaces, pins under
 * /sys/fs/bpf/silo-bj, silod) goes on exit.
 *
 *   bench_jumbo [--rounds N] [--secs S] [--warmup S] [--cpu N] [--flows N]
 */
#include <getopt.h>
#include <linux/if_link.h>
#include "test.h"
#include "pkt.h"
#include "bench.h"
#include "source.h"
#include "silod_child.h"
#include "silo_test.skel.h"

#define NS_C "silo-bj-client"
#define NS_R "silo-bj-router"
#define NS_S "silo-bj-sink"
#define PINS "/sys/fs/bpf/silo-bj"
#define FRAME 9014
#define BATCH 32 /* frames a sendmmsg */
#define MAX_FLOWS 64
#define MAX_ROUNDS 32
#define WIRE_EXTRA (4 + 8 + 12)

enum { KERNEL, SILO, REF, FLOOR, NR_VARIANTS };
static const char *const vname[NR_VARIANTS] = { "kernel", "silo", "ref",
						"floor" };

static struct {
	int ns_orig, ns_c, ns_r, ns_s;
	struct silo *s;
	struct silo_test *skel;
	struct source *src;
	pid_t silod;
	__u32 in, out;
	bool in_silo, in_prog, out_silo;
} B = { .ns_orig = -1, .ns_c = -1, .ns_r = -1, .ns_s = -1, .silod = -1 };

static void lab_down(void)
{
	sh("for n in %s %s %s; do ip netns del $n 2>/dev/null; done; rm -rf %s; true",
	   NS_C, NS_R, NS_S, PINS);
}

static int lab_up(void)
{
	return sh(
		"set -e\n"
		"for n in %1$s %2$s %3$s; do ip netns add $n; ip -n $n link set lo up; done\n"
		"for n in %1$s %3$s; do\n"
		"  ip netns exec $n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1\n"
		"done\n"
		"ip netns exec %2$s sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.forwarding=1\n"
		"ip -n %1$s link add bjc0 mtu 9000 type veth peer name bjr-in mtu 9000 netns %2$s\n"
		"ip -n %3$s link add bjs0 mtu 9000 type veth peer name bjr-out mtu 9000 netns %2$s\n"
		"ip -n %2$s addr add fd01::1/64 dev bjr-in nodad\n"
		"ip -n %2$s addr add fd02::1/64 dev bjr-out nodad\n"
		"ip netns exec %1$s ethtool -K bjc0 gro off tx off >/dev/null\n"
		"ip netns exec %2$s ethtool -K bjr-in gro off\n"
		"ip netns exec %2$s ethtool -K bjr-out gro off\n"
		"ip netns exec %3$s ethtool -K bjs0 gro off\n"
		"ip -n %1$s link set bjc0 up\n"
		"ip -n %2$s link set bjr-in up\n"
		"ip -n %2$s link set bjr-out up\n"
		"ip -n %3$s link set bjs0 up\n"
		"ip -n %2$s neigh add fd02::2 lladdr $(ip netns exec %3$s cat /sys/class/net/bjs0/address) dev bjr-out nud permanent\n"
		"ip -n %2$s route add fd20::/16 via fd02::2\n",
		NS_C, NS_R, NS_S);
}

static int read_mac_in(int ns, const char *dev, uint8_t mac[6])
{
	return bench_enter("bench_jumbo", ns) || read_mac(dev, mac) ? -1 : 0;
}

/* The source on bjc0, in the client: a frame of source fd01::100:0, flows
 * sources in turn. */
static int gen_setup(int flows)
{
	struct source_opts o = { .shape = SOURCE_PACKET,
				 .entry = "bjc0",
				 .cpu = -1 };
	static uint8_t frame[PKT_MAX];
	struct pkt_spec sp = { .family = AF_INET6,
			       .proto = IPPROTO_UDP,
			       .ttl = 255,
			       .sport = 4000,
			       .dport = 9,
			       .payload = FRAME - 14 - 40 - 8 };
	struct source_class cls = { .frame = frame, .len = FRAME };
	static const __u8 pat[] = { 0 };

	if (read_mac_in(B.ns_c, "bjc0", sp.smac) ||
	    read_mac_in(B.ns_r, "bjr-in", sp.dmac))
		return -1;
	inet_pton(AF_INET6, "fd01::100:0", sp.src);
	inet_pton(AF_INET6, "fd20::1", sp.dst);
	if (pkt_build(frame, &sp) != FRAME ||
	    bench_enter("bench_jumbo", B.ns_c) || source_open(&B.src, &o))
		return -1;
	return source_set_classes(B.src, &cls, 1) ?:
		       source_set_pattern(B.src, pat, 1, 0x01000000, flows);
}

/* Sends for secs seconds, BATCH frames a call; returns frames sent. */
static __u64 gen_run(double secs)
{
	double end = bench_mono() + secs;
	__u64 sent = 0;
	long n;

	while (bench_mono() < end) {
		n = source_send(B.src, BATCH);
		if (n < 0)
			break;
		sent += n;
	}
	return sent;
}

/* Every line's start: what it is, the source, the kernel. */
static void print_head(const char *bench)
{
	bench_line(bench, source_shape_name(SOURCE_PACKET));
}

static __u64 sink_count(void)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	__u64 v[ncpus > 0 ? ncpus : 1], sum = 0;
	__u32 k = 0;

	if (!bpf_map_lookup_elem(bpf_map__fd(B.skel->maps.count_pkts), &k, v))
		for (cpu = 0; cpu < ncpus; cpu++)
			sum += v[cpu];
	return sum;
}

/* IPv6 datagrams the router's stack forwarded (read in the router). */
static __u64 stack_forwarded(void)
{
	return bench_enter("bench_jumbo", B.ns_r) ? 0 : ip6_forwarded();
}

/* The variant's program on the router's ingress. */
static int set_variant(int v)
{
	struct silo_xdp_load_opts o = { .forward = true };
	struct bpf_program *p;

	if (bench_enter("bench_jumbo", B.ns_r))
		return -1;
	if (B.in_silo && silo_xdp_unload(B.s, "bjr-in"))
		return -1;
	B.in_silo = false;
	if (B.in_prog && bpf_xdp_detach(B.in, XDP_FLAGS_DRV_MODE, NULL))
		return -1;
	B.in_prog = false;
	if (v == SILO) {
		struct silo_daemon_info di;
		int i;

		if (silo_xdp_load(B.s, "bjr-in", &o))
			return -1;
		B.in_silo = true;
		/* silod watches IPv6's PMTU errors once every device has
		 * silo: from then on jumbo frames come from the cache. */
		for (i = 0; i < 150; i++) {
			if (!silo_daemon_info(B.s, &di) && di.cache_trusted &&
			    (di.heartbeat.pmtu_watch & (1U << SILO_FAM_V6)))
				return 0;
			usleep(20000);
		}
		fprintf(stderr,
			"bench_jumbo: silod does not watch IPv6 PMTU errors\n");
		return -1;
	}
	p = v == KERNEL ? B.skel->progs.xdp_pass_frags :
	    v == REF	? B.skel->progs.xdp_ref_fwd_frags :
			  B.skel->progs.xdp_bounce_frags;
	if (bpf_xdp_attach(B.in, bpf_program__fd(p), XDP_FLAGS_DRV_MODE, NULL))
		return -1;
	B.in_prog = true;
	return 0;
}

static int setup(void)
{
	struct silo_opts so = { .pin_root = PINS };
	struct silo_xdp_load_opts fwd = { .forward = true };

	lab_down();
	if (lab_up())
		return -1;
	B.ns_orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	B.ns_c = bench_open_ns(NS_C);
	B.ns_r = bench_open_ns(NS_R);
	B.ns_s = bench_open_ns(NS_S);
	if (B.ns_orig < 0 || B.ns_c < 0 || B.ns_r < 0 || B.ns_s < 0 ||
	    bench_enter("bench_jumbo", B.ns_r))
		return -1;
	B.in = if_nametoindex("bjr-in");
	B.out = if_nametoindex("bjr-out");
	B.skel = silo_test__open();
	if (!B.skel || silo_test__load(B.skel))
		return -1;
	B.skel->bss->bounce_ifindex = B.out;
	B.skel->bss->count_hlim = 254;
	/* A devmap resolves its ifindex in the namespace of the update. */
	if (bpf_map_update_elem(bpf_map__fd(B.skel->maps.ref_tx), &B.out,
				&B.out, BPF_ANY))
		return -1;
	if (bench_enter("bench_jumbo", B.ns_s) ||
	    bpf_xdp_attach(if_nametoindex("bjs0"),
			   bpf_program__fd(B.skel->progs.xdp_count_frags),
			   XDP_FLAGS_DRV_MODE, NULL))
		return -1;
	if (bench_enter("bench_jumbo", B.ns_r) || silo_open(&B.s, &so) ||
	    silo_xdp_load(B.s, "bjr-out", &fwd))
		return -1;
	B.out_silo = true;
	B.silod = silod_child_start(B.s, PINS);
	return B.silod < 0 ? -1 : 0;
}

static void cleanup(void)
{
	silod_child_stop(B.silod);
	if (B.s) {
		bench_enter("bench_jumbo", B.ns_r);
		if (B.in_silo)
			silo_xdp_unload(B.s, "bjr-in");
		if (B.out_silo)
			silo_xdp_unload(B.s, "bjr-out");
		silo_close(B.s);
	}
	silo_test__destroy(B.skel);
	source_close(B.src);
	if (B.ns_orig >= 0)
		bench_enter("bench_jumbo", B.ns_orig);
	lab_down();
}

static void on_signal(int sig)
{
	(void)sig;
	cleanup();
	_exit(1);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "flows", required_argument, NULL, 'f' },
		{},
	};
	double pps[NR_VARIANTS][MAX_ROUNDS], ratio[MAX_ROUNDS],
		secs = 1.0, warmup = 0.3, med[NR_VARIANTS];
	int rounds = 5, cpu = 0, flows = 16, o, r, i, v, rc = 1;
	struct silo_stats st0, st1, d = {};
	__u64 fwd0, sink0, sunk, silo_sunk = 0;
	unsigned int k;

	while ((o = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		if (o == 'r')
			rounds = atoi(optarg);
		else if (o == 's')
			secs = atof(optarg);
		else if (o == 'w')
			warmup = atof(optarg);
		else if (o == 'c')
			cpu = atoi(optarg);
		else if (o == 'f')
			flows = atoi(optarg);
		else {
			fprintf(stderr,
				"usage: bench_jumbo [--rounds N] [--secs S] [--warmup S] [--cpu N] [--flows N]\n");
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS || flows < 1 ||
	    flows > MAX_FLOWS || secs <= 0) {
		fprintf(stderr,
			"bench_jumbo: bad --rounds, --flows or --secs\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	silo_set_print(quiet_print);
	if (bench_pin_cpu(cpu) || setup() || gen_setup(flows)) {
		fprintf(stderr, "bench_jumbo: setup failed (%s)\n",
			strerror(errno));
		goto out;
	}
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_VARIANTS; i++) {
			v = (i + r) % NR_VARIANTS;
			if (set_variant(v)) {
				fprintf(stderr,
					"bench_jumbo: cannot set up %s\n",
					vname[v]);
				goto out;
			}
			bench_enter("bench_jumbo", B.ns_c);
			gen_run(warmup);
			fwd0 = stack_forwarded();
			bench_silo_stats(B.s, &st0);
			sink0 = sink_count();
			bench_enter("bench_jumbo", B.ns_c);
			{
				double t0 = bench_mono();

				gen_run(secs);
				sunk = sink_count() - sink0;
				pps[v][r] = sunk / (bench_mono() - t0);
			}
			if (!sunk) {
				fprintf(stderr,
					"bench_jumbo: nothing reached the sink under %s\n",
					vname[v]);
				goto out;
			}
			/* A baseline the stack did for it measures the kernel. */
			if ((v == SILO || v == REF) &&
			    (stack_forwarded() - fwd0) * 100 > sunk) {
				fprintf(stderr,
					"bench_jumbo: the router's stack forwarded %s's frames\n",
					vname[v]);
				goto out;
			}
			if (v == SILO) {
				bench_silo_stats(B.s, &st1);
				for (k = 0; k < SILO_STAT_MAX; k++)
					((__u64 *)&d)[k] += ((__u64 *)&st1)[k] -
							    ((__u64 *)&st0)[k];
				silo_sunk += sunk;
			}
		}
		ratio[r] = pps[SILO][r] / pps[REF][r];
	}
	for (v = 0; v < NR_VARIANTS; v++) {
		med[v] = bench_median(pps[v], rounds);
		print_head("jumbo_live");
		printf(",\"variant\":\"%s\",\"frame_bytes\":%d,\"mpps\":%.4f,\"gbit_s\":%.2f}\n",
		       vname[v], FRAME, med[v] / 1e6,
		       med[v] * (FRAME + WIRE_EXTRA) * 8 / 1e9);
	}
	/* ns per frame each forwarder adds to the floor's path. */
	print_head("jumbo_live_ratios");
	printf(",\"silo_vs_ref\":%.3f,\"silo_vs_kernel\":%.3f,\"silo_vs_floor\":%.3f,\"ref_vs_kernel\":%.3f,\"floor_vs_ref\":%.3f,\"silo_ns_over_floor\":%.0f,\"ref_ns_over_floor\":%.0f}\n",
	       bench_median(ratio, rounds), med[SILO] / med[KERNEL],
	       med[SILO] / med[FLOOR], med[REF] / med[KERNEL],
	       med[FLOOR] / med[REF], 1e9 / med[SILO] - 1e9 / med[FLOOR],
	       1e9 / med[REF] - 1e9 / med[FLOOR]);
	print_head("jumbo_live_silo");
	printf(",\"sink\":%llu,\"rx\":%llu,\"redirect\":%llu,\"cache_hit\":%llu,\"cache_big\":%llu,\"cache_miss\":%llu,\"pass\":%llu}\n",
	       (unsigned long long)silo_sunk, (unsigned long long)d.rx,
	       (unsigned long long)d.redirect, (unsigned long long)d.cache_hit,
	       (unsigned long long)d.cache_big,
	       (unsigned long long)d.cache_miss, (unsigned long long)d.pass);
	print_head("jumbo_live_target");
	printf(",\"name\":\"silo_vs_ref\",\"value\":%.3f,\"target\":1.3,\"met\":%s}\n",
	       bench_median(ratio, rounds),
	       bench_median(ratio, rounds) >= 1.3 ? "true" : "false");
	print_head("jumbo_live_setup");
	printf(",\"rounds\":%d,\"secs\":%.2f,\"warmup\":%.2f,\"cpu\":%d,\"flows\":%d,\"mtu\":9000,\"generator\":\"AF_PACKET sendmmsg x%d, qdisc bypass\"}\n",
	       rounds, secs, warmup, cpu, flows, BATCH);
	rc = 0;
out:
	cleanup();
	return rc;
}
