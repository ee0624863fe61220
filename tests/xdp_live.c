// SPDX-License-Identifier: GPL-2.0
/*
 * Replacing silo on a device that carries traffic loses no packet.
 *
 * Frames sent with BPF_F_TEST_XDP_LIVE_FRAMES out of veth "src" arrive on its
 * peer "dut", where silo runs and counts every one it sees (UDP to a local
 * address: pass_local). veth takes redirected frames only while the receiving
 * side runs an XDP program (GRO is off), so a moment without one drops them:
 * the detach-then-attach run shows this test sees such a loss, and the link
 * update run shows silo's replace has none.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "pkt.h"
#include "silo_test.skel.h"

#define ROUNDS 20
#define FRAMES_PER_RUN 256

static struct silo *s;
static struct silo_test *gen;
static uint8_t frame[PKT_MAX];
static size_t frame_len;
static atomic_bool stop;
static atomic_long sent;

static int setup(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };
	struct silo_xdp_load_opts native = { 0 };
	struct silo_xdp_load_opts skb = { .mode = SILO_XDP_SKB };
	struct pkt_spec sp = { .family = AF_INET, .payload = 18 };

	if (sh("set -e\n"
	       "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1\n"
	       "ip link add src type veth peer name dut\n"
	       "ip link add keep type veth peer name keepp\n"
	       "for d in src dut keep keepp; do ip link set $d up; done\n"
	       "ip addr add 10.9.0.1/24 dev src\n"
	       "ip addr add 10.9.0.2/24 dev dut\n"))
		return -1;
	if (read_mac("dut", sp.dmac) || read_mac("src", sp.smac))
		return -1;
	sp.src[0] = 10, sp.src[1] = 9, sp.src[3] = 1;
	sp.dst[0] = 10, sp.dst[1] = 9, sp.dst[3] = 2;
	sp.dport = 9;
	frame_len = pkt_build(frame, &sp);

	/* "keep" holds the maps (and the counters) while dut is unloaded. */
	if (silo_open(&s, &opts) || silo_xdp_load(s, "keep", &skb) ||
	    silo_xdp_load(s, "dut", &native))
		return -1;
	gen = silo_test__open();
	if (!gen)
		return -1;
	gen->rodata->tx_ifindex = if_nametoindex("src");
	return silo_test__load(gen);
}

static void *sender(void *arg)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = frame_len,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .repeat = FRAMES_PER_RUN, .batch_size = 64);
	int fd = bpf_program__fd(gen->progs.xdp_send);

	(void)arg;
	while (!atomic_load(&stop)) {
		if (bpf_prog_test_run_opts(fd, &opts)) {
			printf("# live frames: %s\n", strerror(errno));
			break;
		}
		atomic_fetch_add(&sent, FRAMES_PER_RUN);
	}
	return NULL;
}

static __u64 seen(void)
{
	int ncpus = silo_nr_cpus(), cpu;
	struct silo_stats *st = calloc(ncpus, sizeof(*st));
	__u64 n = 0;

	if (st && !silo_stats_read(s, st))
		for (cpu = 0; cpu < ncpus; cpu++)
			n += st[cpu].pass_local;
	free(st);
	return n;
}

enum change { NONE, REPLACE, DETACH_ATTACH };

/* Sends while changing silo on dut; returns sent - seen. */
static long run_traffic(enum change how, long *total)
{
	struct silo_xdp_load_opts replace = { .replace = true };
	struct silo_xdp_load_opts fresh = { 0 };
	pthread_t t;
	__u64 before = seen();
	int i, err = 0;

	atomic_store(&stop, false);
	atomic_store(&sent, 0);
	if (pthread_create(&t, NULL, sender, NULL))
		return -1;
	while (atomic_load(&sent) < 4 * FRAMES_PER_RUN)
		usleep(1000);
	for (i = 0; i < ROUNDS && !err; i++) {
		if (how == REPLACE)
			err = silo_xdp_load(s, "dut", &replace);
		else if (how == DETACH_ATTACH)
			err = silo_xdp_unload(s, "dut") ?:
				      silo_xdp_load(s, "dut", &fresh);
		else
			usleep(10000);
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	usleep(200000); /* let the last NAPI poll run */
	if (err)
		printf("# changing silo on dut failed: %s\n", strerror(-err));
	*total = atomic_load(&sent);
	return err ? -1 : *total - (long)(seen() - before);
}

static void test_measure_without_change(void)
{
	long total, lost = run_traffic(NONE, &total);

	printf("# no change: %ld frames sent, %ld not seen\n", total, lost);
	CHECK(total > 0, "nothing sent");
	CHECK_EQ(lost, 0);
}

static void test_replace_loses_nothing(void)
{
	long total, lost = run_traffic(REPLACE, &total);

	printf("# %d replaces: %ld frames sent, %ld not seen\n", ROUNDS, total,
	       lost);
	CHECK(total > 0, "nothing sent");
	CHECK_EQ(lost, 0);
}

/* The control: the same measurement sees the loss of a detach. */
static void test_detach_attach_loss_is_seen(void)
{
	long total, lost = run_traffic(DETACH_ATTACH, &total);

	printf("# %d detach+attach: %ld frames sent, %ld not seen\n", ROUNDS,
	       total, lost);
	CHECK(total > 0, "nothing sent");
	CHECK(lost > 0, "detaching lost nothing: the test cannot see loss");
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_measure_without_change);
	RUN(test_replace_loses_nothing);
	RUN(test_detach_attach_loss_is_seen);
	silo_xdp_unload(s, "dut");
	silo_xdp_unload(s, "keep");
	silo_test__destroy(gen);
	silo_close(s);
	return 0;
}
