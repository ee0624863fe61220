// SPDX-License-Identifier: GPL-2.0
/*
 * bench_steer: is silo's steering worth having, against the kernel's own
 * steering (RPS, RFS)? Services whose readers run on other CPUs than the
 * one that receives their packets, in four cases, each with its variants
 * side by side in one run:
 *
 *   one            one service, its unconnected reader on the last CPU:
 *                  no_silo, rps, reuseport, steering
 *   one_connected  the same with a connected reader (one flow), where
 *                  RFS can act: no_silo, rps, rfs, steering
 *   one_tcp        one TCP stream to a reader on the last CPU, its
 *                  sender on CPU 0 (tcp.c): no_silo, rps, rfs, steering
 *   services       one receiving queue, several services (--cpus N, 2 by
 *                  default): reader i pinned to CPU i, so reader 0 shares
 *                  CPU 0 with the generator, equal load to each:
 *                  no_silo, rps, rfs (connected readers), steering (each
 *                  service whose reader is not on CPU 0 steered there)
 *
 * The variants:
 *
 *   no_silo    the kernel alone (the receiving veth runs XDP_PASS, see
 *              below): the stack runs where the packet arrived, the
 *              reader takes the datagram from another CPU's cache
 *   rps        the kernel's software steering: no_silo with RPS on the
 *              receiving queue to the readers' CPUs (rps_cpus), each flow
 *              to one of them by its hash
 *   rfs        rps plus RFS (rps_flow_cnt on the queue; the host's
 *              rps_sock_flow_entries, put back on exit): each flow to the
 *              CPU that last read its socket; RFS records flows only for
 *              connected sockets, so the readers connect to their one flow
 *   reuseport  the reader's socket in a silo reuseport group, policy cpu,
 *              in the slot of the reader's CPU: nothing moves, the slot
 *              of the receiving CPU is empty and selection falls back
 *   steering   silo in native mode on the receiving veth and a service on
 *              each steered port that follows its group (silo service add
 *              --proto udp --port P --group G): XDP redirects each such
 *              datagram through a cpumap, so its stack runs on the
 *              reader's CPU
 *
 * veth has no ntuple filters or accelerated RFS, the hardware's answers.
 *
 *   silo-bs-c                        silo-bs-s
 *     bsc0 ------------------------- bss0 fd03::2, UDP [::]:7500 + i
 *     generator, pinned to CPU 0       reader threads
 *
 * The generator is the traffic source's pump (tools/lib/source.h: no
 * BPF_PROG_RUN, which some kernels refuse): frames going round a loop of
 * two veths in the client namespace (bsp-a, bsp-b), each turn sending a
 * copy out of bsc0, run on CPU 0: 80-byte IPv6/UDP frames with full
 * checksums (as a NIC receives them; silo steers only those), to each
 * service in turn, from 16 sources (one, when the readers are connected).
 * They reach bss0 as XDP frames, no skb and no copy, as a NIC's DMA
 * delivers them. veth runs what it receives in a NAPI poll on the sending
 * CPU, as a NIC queue whose IRQ is on CPU 0 would; it takes redirected
 * frames only with an XDP program on the receiving end, hence XDP_PASS
 * when silo is not there. silo stays loaded on a device that stays down
 * (bsh0) in every variant, so its pins, the groups and the services live
 * through the rounds; only the receiving veth's program changes.
 *
 * The generator keeps the readers busy without flooding the sockets: it
 * gives the pump credit for 1,024 frames at a time (a pump whose frames
 * left its loop for want of credit is seeded again, 32 frames through
 * AF_PACKET) and holds at most --window (2,048) datagrams
 * sent and not yet read, below what a socket buffer (32 MiB forced) or a
 * service's cpumap queue (4,096) holds, so the readers always find
 * datagrams waiting and nothing is dropped for want of room; what is
 * measured is what the busiest CPU can carry. While the window is full
 * the generator sleeps (20 us naps), so a reader on its CPU runs and each
 * CPU's idle time is its own. Drops are reported anyway: lost (sent,
 * never read) and the namespace's UdpRcvbufErrors.
 *
 * Where a datagram was processed: SO_INCOMING_CPU is kept only for
 * connected UDP sockets, and a connected socket bypasses the reuseport
 * program, so each socket carries a socket filter (SO_ATTACH_BPF, a few
 * instructions built here) that counts, in a per-CPU array, every datagram
 * on the CPU that queues it to the socket: share is the count on the
 * reader's CPU over all, per datagram, not per batch or sample. A reader
 * reads with recvmmsg, 64 at most a call, blocking for the first
 * (MSG_WAITFORONE); --poll makes it spin instead (MSG_DONTWAIT), which
 * shows whether wake-ups are what costs. Per CPU: busy (/proc/stat: with
 * the generator asleep while it waits, all that ran there) and the CPU
 * time per datagram read; gen_waiting, the share of the time the
 * generator waited for the window (near 0: CPU 0 is what limits the rate;
 * near 1: a reader's side is).
 *
 * Variants alternate in rounds (each round in another order); per variant
 * a warm-up, then datagrams read per second of wall time over a fixed
 * interval (datagrams, or bytes for the TCP stream). Rates are the median
 * round; a ratio is the median of the rounds' ratios, the worst round
 * beside it. Then, in the UDP cases, the variants again in rounds for the
 * latency of a request/response exchange (latency.c) while the generator
 * offers a fifth of the slowest variant's rate: p50 and p99 over every
 * exchange, the worst round's p99 beside them. Targets: share >= 0.99 for
 * each steered service, steering >= 1.0x the best kernel variant of its
 * case (per round, the best of no_silo, rps and rfs), steering's p99 <=
 * 1.1x the best kernel variant's, and in the services case >= 1.25x
 * no_silo. See docs/BENCHMARKS.md, "bench_steer", for the figures and for
 * why two CPUs cannot show the gain in the one-service cases.
 *
 * Output, one JSON object per line, each naming the source and the
 * kernel: per case and variant its rate, the
 * datagrams sent, read and lost, UdpRcvbufErrors, the CPUs' time, per
 * service its share and (steering) its counters; then per case a summary
 * with the targets and "met" for each. A target not met is "met":false;
 * the tool fails (exit 1) only when it cannot measure, and exits 3 when
 * its source cannot run here at all (this kernel, or a policy that
 * refuses AF_PACKET or BPF). Everything it makes
 * (namespaces, pins under /sys/fs/bpf/silo-bs) goes on exit, on failure
 * and on SIGINT, SIGTERM or SIGHUP, and the host's rps_sock_flow_entries
 * is put back; leftovers of a run that was killed go at the next start.
 *
 *   bench_steer [--case one|one_connected|one_tcp|services] [--cpus N]
 *               [--variant no_silo|rps|rfs|reuseport|steering]
 *               [--rounds N] [--secs S] [--warmup S] [--reader-cpu N]
 *               [--window N] [--poll] [--verbose]
 */
#include <fcntl.h>
#include <getopt.h>
#include <sys/prctl.h>
#include <linux/if_link.h>
#include "bench_steer/steer.h"

#define SHARE_TARGET 0.99
#define BEST_KERNEL_TARGET 1.0 /* of the best of no_silo, rps and rfs */
#define SERVICES_TARGET 1.25 /* of no_silo, in the services case */
#define P99_TARGET 1.10 /* of the best kernel variant's p99 latency */

struct steer L = { .ns_orig = -1,
		   .ns_client = -1,
		   .ns_server = -1,
		   .filter_map = -1,
		   .rfs_saved = -1 };
volatile sig_atomic_t stopping;

static struct steer_case cases[] = {
	{ .name = "one",
	  .nsvc = 1,
	  .variants = { NO_SILO, RPS, REUSEPORT, STEERING },
	  .nvariants = 4 },
	{ .name = "one_connected",
	  .nsvc = 1,
	  .connected = true,
	  .variants = { NO_SILO, RPS, RFS, STEERING },
	  .nvariants = 4 },
	{ .name = "one_tcp",
	  .nsvc = 1,
	  .connected = true,
	  .tcp = true,
	  .variants = { NO_SILO, RPS, RFS, STEERING },
	  .nvariants = 4 },
	{ .name = "services",
	  .nsvc = 2,
	  .variants = { NO_SILO, RPS, RFS, STEERING },
	  .nvariants = 4 },
};

#define NR_CASES (int)(sizeof(cases) / sizeof(cases[0]))
#define SERVICES (NR_CASES - 1)

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void print_stderr(enum silo_log_level level, const char *fmt, va_list ap)
{
	if (level > SILO_LOG_WARN)
		return;
	fprintf(stderr, "bench_steer: silo: ");
	vfprintf(stderr, fmt, ap);
}

static void close_services(void)
{
	int i;

	if (L.ns_server >= 0)
		bench_enter("bench_steer", L.ns_server);
	for (i = 0; i < L.nsvc; i++)
		if (L.svc[i].proto == IPPROTO_TCP)
			tcp_close(&L.svc[i]);
		else
			svc_close(&L.svc[i]);
	L.nsvc = 0;
}

static void cleanup(void)
{
	close_services();
	if (L.s) {
		if (L.server_silo)
			silo_xdp_unload(L.s, DEV_SERVER);
		if (L.hold_silo)
			silo_xdp_unload(L.s, DEV_HOLD);
		silo_close(L.s);
		L.s = NULL;
	}
	if (L.filter_map >= 0)
		close(L.filter_map);
	source_close(L.src);
	L.src = NULL;
	silo_test__destroy(L.skel);
	L.skel = NULL;
	if (L.ns_orig >= 0 && rfs_restore())
		fprintf(stderr,
			"bench_steer: cannot put back net.core.rps_sock_flow_entries (%d)\n",
			L.rfs_saved);
	if (L.ns_orig >= 0)
		bench_enter("bench_steer", L.ns_orig);
	if (L.ns_client >= 0)
		close(L.ns_client);
	if (L.ns_server >= 0)
		close(L.ns_server);
	if (L.ns_orig >= 0)
		close(L.ns_orig);
	lab_down();
}

/* Per round r, the steering rate over the best of the case's kernel
 * variants (no_silo_only: over no_silo's), into q. */
static void steer_ratios(const struct steer_case *k, const struct cell *cells,
			 int rounds, bool no_silo_only, double *q)
{
	int r, i, v;
	double best;

	for (r = 0; r < rounds; r++) {
		for (best = 0, i = 0; i < k->nvariants; i++) {
			v = k->variants[i];
			if ((v == NO_SILO ||
			     (!no_silo_only && (v == RPS || v == RFS))) &&
			    cells[v].rate[r] > best)
				best = cells[v].rate[r];
		}
		q[r] = best ? cells[STEERING].rate[r] / best : 0;
	}
}

/* The best (lowest) p99 of the case's kernel variants. */
static double best_kernel_p99(const struct steer_case *k,
			      const struct lat *lats)
{
	double best = 0;
	int i, v;

	for (i = 0; i < k->nvariants; i++) {
		v = k->variants[i];
		if ((v == NO_SILO || v == RPS || v == RFS) &&
		    (!best || lats[v].p99 < best))
			best = lats[v].p99;
	}
	return best;
}

static void print_summary(const struct steer_case *k, const struct cell *cells,
			  const struct lat *lats, const double *rate,
			  int rounds, double secs, double warmup,
			  unsigned long window)
{
	double q[MAX_ROUNDS], best, best_worst, ns, ns_worst, share = 1, p99;
	int i, v, best_v = NO_SILO;

	steer_ratios(k, cells, rounds, false, q);
	best = bench_median(q, rounds);
	best_worst = q[0];
	steer_ratios(k, cells, rounds, true, q);
	ns = bench_median(q, rounds);
	ns_worst = q[0];
	for (i = 0; i < k->nvariants; i++) {
		v = k->variants[i];
		if ((v == RPS || v == RFS) && rate[v] > rate[best_v])
			best_v = v;
	}
	for (i = 0; i < L.nsvc; i++)
		if (L.svc[i].steered && cell_share(&cells[STEERING], i) < share)
			share = cell_share(&cells[STEERING], i);
	p99 = k->tcp ? 0 : best_kernel_p99(k, lats);
	p99 = p99 ? lats[STEERING].p99 / p99 : 0;
	bench_line("steer_summary",
		   k->tcp ? "tcp_socket" : source_shape_name(SOURCE_PUMP));
	printf(",\"case\":\"%s\",\"gen_cpu\":%d,\"reader_cpus\":[", k->name,
	       GEN_CPU);
	for (i = 0; i < L.nsvc; i++)
		printf("%s%d", i ? "," : "", L.svc[i].cpu);
	printf("],\"rounds\":%d,\"secs\":%.2f,\"warmup_secs\":%.2f,", rounds,
	       secs, warmup);
	if (k->tcp)
		printf("\"stream\":\"tcp, one connection, segments of the MTU\",\"share_by\":\"socket filter, per segment\",");
	else
		printf("\"frame_bytes\":%zu,\"window\":%lu,\"reader\":\"%s\",\"readers_connected\":\"%s\",\"flows_per_service\":%d,\"share_by\":\"socket filter, per datagram\",",
		       L.frame_len, window, L.poll_reader ? "poll" : "block",
		       k->connected ? "always" : "rfs only",
		       k->connected ? 1 : SOURCES / L.nsvc);
	printf("\"best_kernel\":\"%s\",\"steering_share\":%.4f,\"steering_vs_best_kernel\":{\"median\":%.2f,\"worst\":%.2f},\"steering_vs_no_silo\":{\"median\":%.2f,\"worst\":%.2f},",
	       variant_name[best_v], share, best, best_worst, ns, ns_worst);
	if (!k->tcp)
		printf("\"steering_p99_vs_best_kernel\":%.2f,", p99);
	printf("\"targets\":{\"share\":%.2f,\"vs_best_kernel\":%.2f",
	       SHARE_TARGET, BEST_KERNEL_TARGET);
	if (!k->tcp)
		printf(",\"p99_vs_best_kernel\":%.2f", P99_TARGET);
	if (k == &cases[SERVICES])
		printf(",\"vs_no_silo\":%.2f", SERVICES_TARGET);
	printf("},\"met\":{\"share\":%s,\"vs_best_kernel\":%s",
	       share >= SHARE_TARGET ? "true" : "false",
	       best >= BEST_KERNEL_TARGET ? "true" : "false");
	if (!k->tcp)
		printf(",\"p99_vs_best_kernel\":%s",
		       p99 && p99 <= P99_TARGET ? "true" : "false");
	if (k == &cases[SERVICES])
		printf(",\"vs_no_silo\":%s",
		       ns >= SERVICES_TARGET ? "true" : "false");
	printf("}}\n");
}

static bool has_variant(const struct steer_case *k, int v)
{
	int i;

	for (i = 0; i < k->nvariants; i++)
		if (k->variants[i] == v)
			return true;
	return false;
}

/* Each variant of case k in rounds, each round in another order. */
static int rounds_of(const struct steer_case *k, int rounds,
		     int (*one)(int v, int r, void *ctx), void *ctx)
{
	int r, i, v, err;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < k->nvariants; i++) {
			v = k->variants[(r + i) % k->nvariants];
			err = stopping ? -EINTR : set_variant(v, k->connected);
			if (err) {
				fprintf(stderr,
					"bench_steer: %s: cannot set up %s: %s\n",
					k->name, variant_name[v],
					strerror(-err));
				return err;
			}
			err = one(v, r, ctx);
			if (err)
				return err;
		}
	}
	return 0;
}

struct run {
	struct cell cells[NR_VARIANTS];
	struct lat lats[NR_VARIANTS];
	double secs, warmup, load;
	unsigned long window;
};

static int one_rate(int v, int r, void *ctx)
{
	struct run *x = ctx;

	return measure(&x->cells[v], v, r, x->warmup, x->secs, x->window);
}

static int one_tcp(int v, int r, void *ctx)
{
	struct run *x = ctx;

	return tcp_measure(&x->cells[v], v, r, x->warmup, x->secs);
}

static int one_latency(int v, int r, void *ctx)
{
	struct run *x = ctx;

	return measure_latency(&x->lats[v], r, x->load, x->warmup, x->secs);
}

/*
 * One case: its services and readers; its variants in rounds for the
 * rate; then in rounds again for the latency at LOAD_SHARE of the slowest
 * variant's rate (the same load for each, none of them past a fifth of
 * what it carries); its lines.
 */
static int run_case(const struct steer_case *k, int reader_cpu, int rounds,
		    double secs, double warmup, unsigned long window)
{
	static struct run x;
	double rate[NR_VARIANTS] = {}, q[MAX_ROUNDS], slowest = 0;
	int i, v, err;

	memset(&x, 0, sizeof(x));
	x.secs = secs;
	x.warmup = warmup;
	x.window = window;
	err = bench_enter("bench_steer", L.ns_server);
	if (!err && k->tcp) {
		L.nsvc = 1;
		err = tcp_open(&L.svc[0], reader_cpu);
	}
	for (i = 0; !err && !k->tcp && i < k->nsvc; i++) {
		L.nsvc = i + 1;
		err = svc_open(&L.svc[i], i, k->nsvc == 1 ? reader_cpu : i,
			       has_variant(k, REUSEPORT), k->connected);
	}
	if (err || rounds_of(k, rounds, k->tcp ? one_tcp : one_rate, &x))
		return -1;
	for (i = 0; i < k->nvariants; i++) {
		v = k->variants[i];
		/* bench_median sorts: the ratios take the rates first. */
		memcpy(q, x.cells[v].rate, sizeof(q));
		rate[v] = bench_median(q, rounds);
		if (!slowest || rate[v] < slowest)
			slowest = rate[v];
	}
	x.load = LOAD_SHARE * slowest;
	if (!k->tcp && rounds_of(k, rounds, one_latency, &x)) {
		err = -1;
		goto out_lats;
	}
	for (i = 0; i < k->nvariants; i++) {
		v = k->variants[i];
		if (k->tcp) {
			tcp_print(v, &x.cells[v], rate[v]);
			continue;
		}
		lat_sum(&x.lats[v], rounds);
		print_variant(k, v, &x.cells[v], rate[v], &x.lats[v], x.load);
	}
	if (!k->no_summary)
		print_summary(k, x.cells, x.lats, rate, rounds, secs, warmup,
			      window);
	close_services();
out_lats:
	for (i = 0; i < NR_VARIANTS; i++)
		lat_free(&x.lats[i]);
	return err;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: bench_steer [--case one|one_connected|one_tcp|services] [--cpus N]\n"
		"                   [--variant no_silo|rps|rfs|reuseport|steering]\n"
		"                   [--rounds N] [--secs S] [--warmup S] [--reader-cpu N]\n"
		"                   [--window N] [--poll] [--verbose]\n"
		"  --cpus N        the services case: N services, reader i on CPU i\n"
		"                  (2 to %d; default 2)\n"
		"  --reader-cpu N  the one-service cases' reader (default: the last CPU)\n"
		"  --variant V     only V, in the cases that have it, and no summary\n"
		"                  (to profile one variant)\n",
		MAX_SVC);
}

/* The generator, its frames from fd03::100:0 + k to fd03::2 port PORT + i;
 * xdp_pass for the variants without silo. */
static int gen_up(void)
{
	struct pkt_spec *sp = &L.spec;

	L.skel = silo_test__open_and_load();
	if (!L.skel || bench_enter("bench_steer", L.ns_client) ||
	    read_mac(DEV_CLIENT, sp->smac))
		return -1;
	if (bench_enter("bench_steer", L.ns_server) ||
	    read_mac(DEV_SERVER, sp->dmac))
		return -1;
	L.server_ifindex = if_nametoindex(DEV_SERVER);
	sp->family = AF_INET6;
	sp->payload = PAYLOAD;
	sp->sport = SPORT;
	sp->dport = PORT;
	inet_pton(AF_INET6, "fd03::", sp->src);
	inet_pton(AF_INET6, "fd03::2", sp->dst);
	L.frame_len = pkt_build(L.frame, sp);
	return gen_setup();
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "case", required_argument, NULL, 'C' },
		{ "variant", required_argument, NULL, 'V' },
		{ "cpus", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "reader-cpu", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'W' },
		{ "poll", no_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct silo_opts sopts = { .netns = NS_SERVER, .pin_root = PIN_ROOT };
	struct silo_xdp_load_opts hold = { .mode = SILO_XDP_NATIVE };
	struct sigaction sa = { .sa_handler = on_signal };
	int rounds = 5, c, i, v, err, ret = 1, reader_cpu = -1, only = -1;
	int only_variant = -1;
	int ncpus = libbpf_num_possible_cpus();
	double secs = 1.0, warmup = 0.3;
	unsigned long window = 2048;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'C':
			for (i = 0; i < NR_CASES; i++)
				if (!strcmp(optarg, cases[i].name))
					only = i;
			if (only < 0) {
				fprintf(stderr,
					"bench_steer: no case %s: one, one_connected, one_tcp or services\n",
					optarg);
				return 2;
			}
			break;
		case 'V':
			for (v = 0; v < NR_VARIANTS; v++)
				if (!strcmp(optarg, variant_name[v]))
					only_variant = v;
			if (only_variant < 0) {
				fprintf(stderr,
					"bench_steer: no variant %s: no_silo, rps, rfs, reuseport or steering\n",
					optarg);
				return 2;
			}
			break;
		case 'n':
			cases[SERVICES].nsvc = atoi(optarg);
			break;
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
			reader_cpu = atoi(optarg);
			break;
		case 'W':
			window = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			L.poll_reader = true;
			break;
		case 'v':
			L.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (reader_cpu < 0)
		reader_cpu = bench_last_cpu();
	if (rounds < 1 || rounds > MAX_ROUNDS || secs <= 0 || warmup < 0 ||
	    window < 2 * FRAMES_PER_CALL || window > WINDOW_MAX ||
	    reader_cpu >= ncpus) {
		fprintf(stderr, "bench_steer: bad arguments (--help)\n");
		return 2;
	}
	if (cases[SERVICES].nsvc < 2 || cases[SERVICES].nsvc > MAX_SVC ||
	    cases[SERVICES].nsvc > ncpus) {
		fprintf(stderr,
			"bench_steer: --cpus %d: from 2 to %d (the CPUs here, at most %d)\n",
			cases[SERVICES].nsvc, ncpus < MAX_SVC ? ncpus : MAX_SVC,
			MAX_SVC);
		return 2;
	}
	/* One variant (for a profile): the cases that have it, no summary. */
	for (i = 0, v = 0; only_variant >= 0 && i < NR_CASES; i++) {
		if (!has_variant(&cases[i], only_variant))
			continue;
		cases[i].variants[0] = only_variant;
		cases[i].nvariants = 1;
		cases[i].no_summary = true;
		v += only < 0 || only == i;
	}
	if (only_variant >= 0 && !v) {
		fprintf(stderr, "bench_steer: %s has no variant %s\n",
			only < 0 ? "no case" : cases[only].name,
			variant_name[only_variant]);
		return 2;
	}
	if (reader_cpu == GEN_CPU) {
		fprintf(stderr,
			"bench_steer: needs two CPUs (the sender runs on CPU 0)\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(print_stderr);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* The generator's naps as asked, not 50 us late. */
	prctl(PR_SET_TIMERSLACK, 1000UL);

	L.ns_orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (L.ns_orig < 0)
		return 1;
	lab_down(); /* what an earlier run left, if it was killed */
	if (lab_up())
		goto out;
	L.ns_client = bench_open_ns(NS_CLIENT);
	L.ns_server = bench_open_ns(NS_SERVER);
	if (L.ns_client < 0 || L.ns_server < 0 || gen_up() || lab_neighbours())
		goto out;

	/* silo (on the holder), the readers' filters. */
	if (bench_enter("bench_steer", L.ns_orig) || silo_open(&L.s, &sopts))
		goto out;
	if (silo_xdp_load(L.s, DEV_HOLD, &hold)) {
		fprintf(stderr, "bench_steer: cannot load silo on %s\n",
			DEV_HOLD);
		goto out;
	}
	L.hold_silo = true;
	if (filter_setup()) {
		fprintf(stderr, "bench_steer: socket filter map: %s\n",
			strerror(errno));
		goto out;
	}
	err = bench_pin_cpu(GEN_CPU);
	if (err) {
		fprintf(stderr, "bench_steer: CPU 0: %s\n", strerror(-err));
		goto out;
	}
	for (i = 0; i < NR_CASES; i++)
		if ((only < 0 || only == i) &&
		    (only_variant < 0 ||
		     cases[i].variants[0] == only_variant) &&
		    run_case(&cases[i], reader_cpu, rounds, secs, warmup,
			     window))
			goto out;
	ret = 0;
out:
	if (ret && L.cannot_run) {
		fprintf(stderr, "bench_steer: nothing measured\n");
		ret = 3;
	} else if (ret) {
		fprintf(stderr, "bench_steer: failed%s\n",
			stopping ? " (interrupted)" : "");
	}
	cleanup();
	return ret;
}
