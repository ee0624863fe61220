// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's traffic: the generator's frames (xdp_gen of
 * bpf/tests/silo_test.bpf.c) in three sizes, each kind of traffic as a
 * pattern of them, the check that the generator writes what it should, and
 * the measurement of the sink's rate over the path's time on its CPU.
 */
#include <dirent.h>
#include <fcntl.h>
#include "live.h"
#include "../bench.h"

#define GEN_HDR BENCH_GEN_HDR /* bytes xdp_gen writes: GEN_WORDS * 8 */
#define FRAMES_PER_CALL (1 << 14)
#define UDP6_HDRS (14 + 40 + 8)

/* Frames of 64 bytes, of IP length 576 and of IP length 1500 (no FCS). */
const size_t size_bytes[NR_SIZES] = { 64, 14 + 576, 14 + 1500 };

/*
 * The simple IMIX, by count: 7 of 64 bytes, 4 of 590 (IP 576), 1 of 1514
 * (IP 1500) in every 12 frames, the large ones spread out.
 */
struct traffic traffic[NR_TRAFFIC] = {
	[STEADY_64] = { "steady_64", 16, 1, { SIZE_64 } },
	[STEADY_1514] = { "steady_1514", 16, 1, { SIZE_1514 } },
	[IMIX] = { "imix",
		   16,
		   12,
		   { SIZE_64, SIZE_590, SIZE_64, SIZE_64, SIZE_590, SIZE_64,
		     SIZE_64, SIZE_590, SIZE_64, SIZE_1514, SIZE_64,
		     SIZE_590 } },
	[FLOOD] = { "flood_1m_src", 1000000, 1, { SIZE_64 } },
};

/* The frames for source SRC_BASE: the headers xdp_gen writes, then the
 * same payload bytes for every size (pkt_build() counts them from 0). */
void frames_build(const struct pkt_spec *spec)
{
	struct pkt_spec sp = *spec;
	int z;

	for (z = 0; z < NR_SIZES; z++) {
		sp.payload = size_bytes[z] - UDP6_HDRS;
		pkt_build(L.frame[z], &sp);
		bench_gen_frame(L.frame[z], L.frame[z], size_bytes[z],
				SRC_BASE);
	}
}

/* The largest size traffic t sends: the frame a run sends, cut down. */
static int traffic_max(int t)
{
	int j, z = 0;

	for (j = 0; j < traffic[t].npat; j++)
		if (traffic[t].pat[j] > z)
			z = traffic[t].pat[j];
	return z;
}

/* The mean size of traffic t's frames, and on the wire (WIRE_EXTRA). */
double traffic_frame_bytes(int t)
{
	double sum = 0;
	int j;

	for (j = 0; j < traffic[t].npat; j++)
		sum += size_bytes[traffic[t].pat[j]];
	return sum / traffic[t].npat;
}

/* Every CPU's generator state back to the first source and frame. */
static int gen_reset(void)
{
	int ncpus = libbpf_num_possible_cpus();
	__u64 zero[ncpus > 0 ? ncpus : 1];
	__u32 k = 0;

	memset(zero, 0, sizeof(zero));
	return bpf_map_update_elem(bpf_map__fd(L.skel->maps.gen_next), &k, zero,
				   BPF_ANY);
}

/* The generator's settings for traffic t. */
static void gen_traffic(int t)
{
	struct silo_test__bss *bss = L.skel->bss;
	int z, top = traffic_max(t);

	bss->gen_nsrc = traffic[t].nsrc;
	bss->gen_npat = traffic[t].npat;
	memcpy(bss->gen_pat, traffic[t].pat, traffic[t].npat);
	for (z = 0; z < NR_SIZES; z++)
		bss->gen_cut[z] =
			z <= top ? size_bytes[top] - size_bytes[z] : 0;
}

/* The templates, one per size; the sink counts what arrives forwarded. */
int gen_setup(void)
{
	struct silo_test__bss *bss = L.skel->bss;
	int z;

	if (NR_SIZES > sizeof(bss->gen_csum) / sizeof(bss->gen_csum[0]) ||
	    sizeof(traffic[0].pat) > sizeof(bss->gen_pat))
		return -1;
	for (z = 0; z < NR_SIZES; z++) {
		memcpy(bss->gen_tmpl[z], L.frame[z], GEN_HDR);
		bss->gen_csum[z] = bench_gen_csum(L.frame[z]);
	}
	bss->gen_src = SRC_BASE;
	bss->count_hlim = HOP_LIMIT - 1;
	return gen_reset();
}

/*
 * Through BPF_PROG_TEST_RUN without live frames, on this thread's CPU (the
 * state is per CPU: call it pinned), a check that the generator writes
 * exactly the frames traffic t should send, in turn (every header byte,
 * the source, the checksum, the length), over junk headers.
 */
int gen_check(int t)
{
	static const __u32 srcs[] = { SRC_BASE, SRC_BASE + 1, SRC_BASE + 0xFFFF,
				      SRC_BASE + 999999, 0xFFFFFFFF };
	struct silo_test__bss *bss = L.skel->bss;
	uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	int top = traffic_max(t), j, z;
	size_t len = size_bytes[top];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out,
		    .data_size_in = len, .repeat = 1);
	unsigned int i;

	gen_traffic(t);
	bss->gen_nsrc = 1;
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		bss->gen_src = srcs[i];
		if (gen_reset())
			return -1;
		for (j = 0; j < 2 * traffic[t].npat; j++) {
			z = traffic[t].pat[j % traffic[t].npat];
			memset(in, 0xA5, GEN_HDR);
			memcpy(in + GEN_HDR, L.frame[top] + GEN_HDR,
			       len - GEN_HDR);
			o.data_size_out = sizeof(out);
			bench_gen_frame(want, L.frame[z], size_bytes[z],
					srcs[i]);
			if (bpf_prog_test_run_opts(
				    bpf_program__fd(L.skel->progs.xdp_gen),
				    &o) ||
			    o.retval != XDP_REDIRECT ||
			    o.data_size_out != size_bytes[z] ||
			    memcmp(out, want, size_bytes[z])) {
				fprintf(stderr,
					"bench_live: %s: xdp_gen does not write the frame it should (source %#x, frame %d)\n",
					traffic[t].name, srcs[i], j);
				return -1;
			}
		}
	}
	bss->gen_src = SRC_BASE;
	return gen_reset();
}

/*
 * The time the path had the CPU: the generator thread's time there (the
 * softirqs it runs on leaving each batch count in it), and the time that
 * ksoftirqd, which runs what softirqs defer, had it meanwhile. Measured as
 * wall time less the thread's wait for the CPU (schedstat's run delay) plus
 * ksoftirqd's run time, so it holds with or without IRQ time accounting;
 * the thread does not sleep (see DEV_KEEP).
 */
struct clock_opts clk_opts;
static struct {
	int self, ksoftirqd; /* /proc/.../schedstat */
} clk = { -1, -1 };

int clock_open(int cpu)
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

void clock_close(void)
{
	if (clk.self >= 0)
		close(clk.self);
	if (clk.ksoftirqd >= 0)
		close(clk.ksoftirqd);
	clk.self = clk.ksoftirqd = -1;
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

	if (clk_opts.wall || schedstat(clk.self, &run, &wait) ||
	    schedstat(clk.ksoftirqd, &soft, &dummy))
		return bench_mono();
	return bench_mono() - wait + soft;
}

/*
 * Sends traffic t for secs of wall time; returns the sink's rate in packets
 * per second of the path's time on the CPU (*share: that time / wall
 * time), or < 0.
 */
static double send_for(int t, double secs, double *share)
{
	int top = traffic_max(t);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = L.frame[top],
		    .data_size_in = size_bytes[top],
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

/* Adds after - before of silo's counters to sum. */
static void stats_add(struct silo_stats *sum, const struct silo_stats *before,
		      const struct silo_stats *after)
{
	unsigned int i;

	for (i = 0; i < SILO_STAT_MAX; i++)
		((__u64 *)sum)[i] += ((__u64 *)after)[i] - ((__u64 *)before)[i];
}

/*
 * Traffic t through the variant in place: a warm-up, then the sink's rate
 * over secs, into round round of c. Called in the router's namespace
 * (where the stack's forwarding counter is read), and returns there.
 */
int measure(struct cell *c, int t, int round, double warmup, double secs)
{
	struct silo_stats before, after;
	__u64 c0 = 0, all0, fwd0;
	double pps;

	gen_traffic(t);
	fwd0 = ip6_forwarded();
	all0 = sink_count(NULL);
	if (bench_enter("bench_live", L.ns_client))
		return -1;
	pps = send_for(t, warmup, NULL);
	if (pps >= 0) {
		c0 = sink_count(NULL);
		if (bench_silo_stats(L.s, &before))
			pps = -1;
		else
			pps = send_for(t, secs, &c->share[round]);
		if (pps >= 0 && bench_silo_stats(L.s, &after))
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
			"bench_live: round %d, %s: %.3f Mpps, %.0f %% of the CPU\n",
			round, traffic[t].name, pps / 1e6,
			100 * c->share[round]);
	c->pkts += sink_count(NULL) - c0;
	c->all_pkts += sink_count(NULL) - all0;
	c->stack_fwd += ip6_forwarded() - fwd0;
	stats_add(&c->d, &before, &after);
	return 0;
}
