// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's traffic: the source's frames (tools/lib/source.h: a ring
 * through the router, or AF_PACKET's sends) in three sizes, each kind of
 * traffic a pattern of them, the check that the source sends what it
 * should, and the measurement of the sink's rate over the path CPU's busy
 * time.
 */
#include <linux/if_link.h>
#include "live.h"
#include "../bench.h"
#include "../../../user/lib/pins.h"

#define SEND_CALL 256 /* AF_PACKET: frames a source_send() */
#define DRAIN_MS 200

bool wall_time;
int softirq_measures; /* measurements timed by the path CPU's softirqs */

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
	[OFFLOAD_64] = { "offload_64", 16, 1, { SIZE_64 }, true, STEADY_64 },
	[OFFLOAD_1514] = { "offload_1514",
			   16,
			   1,
			   { SIZE_1514 },
			   true,
			   STEADY_1514 },
};

/* The frames for source SRC_BASE, the same payload bytes at every size
 * (pkt_build() counts them from 0); the source fills in the checksums. */
void frames_build(const struct pkt_spec *spec)
{
	struct pkt_spec sp = *spec;
	int z;

	for (z = 0; z < NR_SIZES; z++) {
		sp.payload = size_bytes[z] - (14 + 40 + 8);
		pkt_build(L.frame[z], &sp);
	}
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

/*
 * The source in the client's namespace: its entry blc0, and a ring's back
 * bls0, where frames arrive forwarded (hop limit 254); AF_PACKET's frames
 * end there in xdp_count. Returns in the client's namespace.
 */
int source_up(void)
{
	struct source_opts o = { .shape = L.shape,
				 .entry = DEV_CLIENT,
				 .back = DEV_SINK,
				 .back_hlim = HOP_LIMIT - 1,
				 .cpu = L.shape == SOURCE_RING ? L.cpu : -1 };
	struct source_class cls[NR_SIZES];
	int z, err;

	if (bench_enter("bench_live", L.ns_client))
		return -1;
	err = source_open(&L.src, &o);
	for (z = 0; !err && z < NR_SIZES; z++)
		cls[z] = (struct source_class){ .frame = L.frame[z],
						.len = size_bytes[z] };
	if (!err)
		err = source_set_classes(L.src, cls, NR_SIZES);
	if (!err && L.shape == SOURCE_PACKET) {
		L.skel->bss->count_hlim = HOP_LIMIT - 1;
		err = bpf_xdp_attach(if_nametoindex(DEV_SINK),
				     bpf_program__fd(L.skel->progs.xdp_count),
				     XDP_FLAGS_DRV_MODE, NULL);
	}
	L.cannot_run = source_cannot_run(err);
	return err ? -1 : 0;
}

/* The classes, their checksums complete or left to offload, and the
 * pattern of traffic t, over nsrc sources. */
static int traffic_pattern(int t, __u32 nsrc)
{
	struct source_class cls[NR_SIZES];
	int z;

	for (z = 0; z < NR_SIZES; z++)
		cls[z] = (struct source_class){ L.frame[z], size_bytes[z],
						traffic[t].partial };
	return source_set_classes(L.src, cls, NR_SIZES) ?:
		       source_set_pattern(L.src, traffic[t].pat,
					  traffic[t].npat, SRC_BASE, nsrc);
}

/*
 * Through BPF_PROG_TEST_RUN (no live frames), that the source's program
 * writes exactly the frames traffic t should send, in turn, over junk
 * headers: every header byte, the source, the checksum, the length.
 */
int traffic_check(int t)
{
	int err = traffic_pattern(t, traffic[t].nsrc) ?: source_check(L.src);

	L.cannot_run = source_cannot_run(err);
	if (err && !L.cannot_run)
		fprintf(stderr,
			"bench_live: %s: the source does not send what it should\n",
			traffic[t].name);
	return err ? -1 : 0;
}

/* Forwarded frames the sink has counted (*other: frames not the
 * source's). */
__u64 sink_count(__u64 *other)
{
	int ncpus = libbpf_num_possible_cpus(), fd, cpu;
	__u64 v[ncpus > 0 ? ncpus : 1], sum[2] = {};
	struct source_counts c;
	__u32 k;

	if (L.shape == SOURCE_RING) {
		source_counts(L.src, &c);
		if (other)
			*other = c.other;
		return c.back;
	}
	fd = bpf_map__fd(L.skel->maps.count_pkts);
	for (k = 0; k < 2; k++)
		if (!bpf_map_lookup_elem(fd, &k, v))
			for (cpu = 0; cpu < ncpus; cpu++)
				sum[k] += v[cpu];
	if (other)
		*other = sum[1];
	return sum[0];
}

/*
 * Traffic for secs of wall time: a ring turns by itself (this thread
 * sleeps, on another CPU); AF_PACKET's frames are this thread's to send,
 * from the path's CPU. 0, or -1 (said).
 */
static int run_for(double secs)
{
	double t0 = bench_mono();
	long n;

	if (L.shape == SOURCE_RING) {
		while (!stopping && bench_mono() - t0 < secs)
			usleep(10000);
		return stopping ? -1 : 0;
	}
	if (bench_pin_cpu(L.cpu))
		return -1;
	do {
		n = source_send(L.src, SEND_CALL);
	} while (n > 0 && !stopping && bench_mono() - t0 < secs);
	bench_pin_other_cpus(L.cpu);
	return n > 0 && !stopping ? 0 : -1;
}

/* Adds after - before of silo's counters to sum. */
static void stats_add(struct silo_stats *sum, const struct silo_stats *before,
		      const struct silo_stats *after)
{
	unsigned int i;

	for (i = 0; i < SILO_STAT_MAX; i++)
		((__u64 *)sum)[i] += ((__u64 *)after)[i] - ((__u64 *)before)[i];
}

/* Adds after - before of silo's conntrack counters to sum. */
static void ct_add(struct silo_ct_stats *sum,
		   const struct silo_ct_stats *before,
		   const struct silo_ct_stats *after)
{
	unsigned int i;

	for (i = 0; i < SILO_CT_STAT_MAX; i++)
		((__u64 *)sum)[i] += ((__u64 *)after)[i] - ((__u64 *)before)[i];
}

/* What one measured interval reads at its start and at its end (the
 * conntrack counters under the firewall only). */
struct snap {
	__u64 sink;
	double busy, softirq, wall;
	struct silo_stats st;
	struct silo_ct_stats ct;
};

static int snap(struct snap *s)
{
	s->sink = sink_count(NULL);
	s->wall = bench_mono();
	return bench_cpu_busy(L.cpu, &s->busy, &s->softirq) ||
			       bench_silo_stats(L.s, &s->st) ||
			       (L.fw && fw_ct_read(&s->ct)) ?
		       -1 :
		       0;
}

/*
 * The path's time between a and b. A ring runs in softirqs alone, so its
 * time is the CPU's softirq time, whatever else ran there meanwhile; a
 * kernel that does not account IRQ time (softirqs then count as the time
 * of what they interrupted, ksoftirqd's as system time) leaves the CPU's
 * busy time. AF_PACKET's path includes its sender's system calls: busy
 * time. Or wall time (--wall).
 */
static double path_time(const struct snap *a, const struct snap *b)
{
	double soft = b->softirq - a->softirq, busy = b->busy - a->busy;

	if (wall_time)
		return b->wall - a->wall;
	if (L.shape == SOURCE_RING && soft > busy / 2) {
		softirq_measures++;
		return soft;
	}
	return busy;
}

/*
 * One measured interval of secs under the source already running: the
 * sink's rate per second of the path's time (path_time()) into *pps, the
 * share of wall time that was into *share when asked, and the interval's
 * packets and silo's counters added to c. 0, or -1 (said).
 */
static int interval(struct cell *c, double secs, double *pps, double *share)
{
	struct snap a = {}, b = {};
	double time;

	if (snap(&a) || run_for(secs) || snap(&b))
		return -1;
	if (b.sink == a.sink) {
		fprintf(stderr, "bench_live: no packet reached the sink\n");
		return -1;
	}
	time = path_time(&a, &b);
	if (time <= 0) {
		fprintf(stderr, "bench_live: CPU %d was not busy\n", L.cpu);
		return -1;
	}
	*pps = (b.sink - a.sink) / time;
	if (share)
		*share = time / (b.wall - a.wall);
	c->pkts += b.sink - a.sink;
	stats_add(&c->d, &a.st, &b.st);
	ct_add(&c->ct, &a.ct, &b.ct);
	return 0;
}

/*
 * Traffic t through the variant in place: the source started (a ring
 * seeded), a warm-up, the sink's rate over secs, the source stopped (a
 * ring drained), into round round of c. The rate is per second of the
 * path's time on its CPU (path_time()), which on an idle machine is the
 * wall time: everything the path does runs there. Under the firewall
 * conntrack is made ready for the traffic first (fw_prepare()). Called in the router's
 * namespace (where the stack's forwarding counter is read).
 */
int measure(struct cell *c, int t, int round, double warmup, double secs)
{
	struct fw_counts f0 = {}, f1;
	__u64 all0, fwd0, lost = 0;
	__u32 nsrc;
	int err;

	nsrc = L.fw ? fw_sources(t, traffic[t].nsrc) : traffic[t].nsrc;
	if (traffic_pattern(t, nsrc))
		return -1;
	if (L.fw && (fw_prepare(t, nsrc) || fw_read(&f0)))
		return -1;
	fwd0 = ip6_forwarded();
	all0 = sink_count(NULL);
	err = L.shape == SOURCE_RING ? source_seed(L.src) : 0;
	if (!err)
		err = run_for(warmup);
	if (!err)
		err = interval(c, secs, &c->pps[round], &c->share[round]);
	if (L.shape == SOURCE_RING && source_drain(L.src, DRAIN_MS, &lost))
		err = -1;
	if (err)
		return -1;
	if (verbose)
		fprintf(stderr,
			"bench_live: round %d, %s: %.3f Mpps, CPU %d %.0f %% busy\n",
			round, traffic[t].name, c->pps[round] / 1e6, L.cpu,
			100 * c->share[round]);
	c->all_pkts += sink_count(NULL) - all0;
	c->stack_fwd += ip6_forwarded() - fwd0;
	c->lost += lost;
	if (L.fw) {
		if (fw_read(&f1))
			return -1;
		fw_add(&c->fw, &f0, &f1);
	}
	return 0;
}

/*
 * One slice of the turns: variant v (0 kernel_fw, 1 silo_fw) on the
 * ingress since the last swap, settle seconds for the frames of the one
 * before, then an interval() of tu->slice into pair pair. 0, or -1
 * (said).
 */
static int turn(struct turns *tu, int v, int pair)
{
	struct cell *c = &tu->c[v];
	struct fw_counts f0 = {}, f1 = {};
	__u64 all0, fwd0, all1, fwd1;

	if (run_for(tu->settle) || fw_read(&f0))
		return -1;
	fwd0 = ip6_forwarded();
	all0 = sink_count(NULL);
	if (interval(c, tu->slice, &tu->pps[v][pair], NULL))
		return -1;
	all1 = sink_count(NULL);
	fwd1 = ip6_forwarded();
	if (fw_read(&f1))
		return -1;
	c->all_pkts += all1 - all0;
	c->stack_fwd += fwd1 - fwd0;
	fw_add(&c->fw, &f0, &f1);
	return 0;
}

/*
 * The flood under the firewall once more, in turns: kernel_fw and silo_fw
 * swapped on the router's ingress every slice of one ring that runs
 * throughout (silo's link given xdp_pass and back, bpf_link_update(): an
 * XDP program replaced on a veth that keeps running one), pairs of slices
 * in the order ABBA. A pair's two slices are a fraction of a second
 * apart, so they share the VM's speed, which moves by up to 2x between
 * measurements seconds apart (the rounds'); the conntrack table is the
 * same for both (every packet is new either way), and the table's own
 * churn (its expired entries, its garbage collection) is in both. Called
 * with silo_fw in place (set_variant()); 0, or -1 (said), silo's program
 * on the link again after either.
 */
int fw_turns(struct turns *tu, double warmup)
{
	int pass_fd = bpf_program__fd(L.skel->progs.xdp_pass);
	__u32 nsrc = fw_sources(FLOOD, traffic[FLOOD].nsrc), len;
	int link, silo_fd, i, v, on = 1, err = -1;
	struct bpf_link_info info;
	__u64 lost = 0;

	link = silo_link_pin_get(L.s, L.in_ifindex);
	if (link < 0) {
		fprintf(stderr, "bench_live: silo's link on %s: %s\n", DEV_IN,
			strerror(-link));
		return -1;
	}
	memset(&info, 0, sizeof(info));
	len = sizeof(info);
	silo_fd = bpf_obj_get_info_by_fd(link, &info, &len) ?
			  -1 :
			  bpf_prog_get_fd_by_id(info.prog_id);
	if (silo_fd < 0) {
		fprintf(stderr, "bench_live: silo's program on %s: %s\n",
			DEV_IN, strerror(errno));
		goto close_link;
	}
	if (traffic_pattern(FLOOD, nsrc) || fw_prepare(FLOOD, nsrc) ||
	    (L.shape == SOURCE_RING && source_seed(L.src)))
		goto close_prog;
	if (run_for(warmup))
		goto drain;
	for (i = 0; i < 2 * tu->pairs; i++) {
		v = (i + 1) / 2 % 2; /* kernel_fw, silo_fw, silo_fw, ... */
		if (v != on &&
		    bpf_link_update(link, v ? silo_fd : pass_fd, NULL)) {
			fprintf(stderr,
				"bench_live: cannot swap the programs on %s: %s\n",
				DEV_IN, strerror(errno));
			goto drain;
		}
		on = v;
		if (turn(tu, v, i / 2))
			goto drain;
	}
	err = 0;
drain:
	if (L.shape == SOURCE_RING && source_drain(L.src, DRAIN_MS, &lost))
		err = -1;
	tu->c[0].lost += lost;
close_prog:
	if (on != 1 && bpf_link_update(link, silo_fd, NULL)) {
		fprintf(stderr, "bench_live: cannot put silo back on %s: %s\n",
			DEV_IN, strerror(errno));
		err = -1;
	}
	close(silo_fd);
close_link:
	close(link);
	return err;
}
