// SPDX-License-Identifier: GPL-2.0
/*
 * Replacing silo on a device that carries traffic loses no packet.
 *
 * The traffic source's pump (tools/lib/source.h: frames going round a loop
 * of veths, a copy out of each turn, no BPF_PROG_RUN) sends numbered
 * IPv6/UDP datagrams out of veth "src" to its peer "dut", where silo runs
 * and passes them to the stack (pass_local) and a socket reads them. veth
 * takes redirected frames only while the receiving side runs an XDP
 * program (GRO is off), so a moment without one refuses them. Every frame
 * is accounted for: silo saw it, or the entry refused it (the devmap's
 * flush counts those); and the socket read its number once, or its buffer
 * was full (Udp6RcvbufErrors). The detach-then-attach run shows that this
 * test sees such a loss; the link update run shows silo's replace has
 * none.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "pkt.h"
#include "source.h"

#define ROUNDS 20
#define CREDIT 256 /* datagrams a millisecond */
#define MAX_FRAMES (1 << 22)
#define PORT 9
#define SEQ_OFF (14 + 40 + 8 + 4)
#define SENDER_WAIT_S 5 /* the sender has this long to show progress */

static struct silo *s;
static struct source *src;
static int sock = -1;
static __u8 *read_seq; /* per number: read how often (the reader's) */
static atomic_bool stop, reading;
static atomic_long nread, bad_seq;
static atomic_int sender_err;

/* The source's copies to [fd09::2]:PORT, from fd09::100:0 + k. */
static int source_up(void)
{
	struct source_opts o = { .shape = SOURCE_PUMP,
				 .entry = "src",
				 .loop = "xl",
				 .seq_off = SEQ_OFF,
				 .cpu = 0 };
	struct pkt_spec sp = { .family = AF_INET6,
			       .dport = PORT,
			       .payload = 32 };
	struct source_class cls = {};
	static uint8_t frame[PKT_MAX];
	static const __u8 pat[] = { 0 };
	int err;

	if (read_mac("dut", sp.dmac) || read_mac("src", sp.smac))
		return -ENODEV;
	inet_pton(AF_INET6, "fd09::100:0", sp.src);
	inet_pton(AF_INET6, "fd09::2", sp.dst);
	cls.frame = frame;
	cls.len = pkt_build(frame, &sp);
	err = source_open(&src, &o);
	if (!err)
		err = source_set_classes(src, &cls, 1)			      ?:
			      source_set_pattern(src, pat, 1, 0x01000000, 16) ?:
			      source_check(src);
	return err;
}

static int setup(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };
	struct silo_xdp_load_opts native = { 0 };
	struct silo_xdp_load_opts skb = { .mode = SILO_XDP_SKB };
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(PORT) };
	int big = 32 << 20;

	if (sh("set -e\n"
	       "sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0\n"
	       "ip link add src type veth peer name dut\n"
	       "ip link add keep type veth peer name keepp\n"
	       "for d in src keep keepp; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6; done\n"
	       "for d in src dut keep keepp; do ip link set $d up; done\n"
	       "ip addr add fd09::2/64 dev dut nodad\n"))
		return -1;
	/* "keep" holds the maps (and the counters) while dut is unloaded. */
	if (silo_open(&s, &opts) || silo_xdp_load(s, "keep", &skb) ||
	    silo_xdp_load(s, "dut", &native))
		return -1;
	inet_pton(AF_INET6, "fd09::2", &a.sin6_addr);
	sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock < 0 ||
	    setsockopt(sock, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) ||
	    bind(sock, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	read_seq = calloc(MAX_FRAMES, 1);
	return read_seq ? 0 : -1;
}

/* Reads every datagram, and marks its number, until told to stop. */
static void *reader(void *arg)
{
	struct pollfd p = { .fd = sock, .events = POLLIN };
	uint8_t buf[256];
	__u32 seq;
	ssize_t n;

	(void)arg;
	while (atomic_load(&reading)) {
		if (poll(&p, 1, 20) != 1)
			continue;
		while ((n = recv(sock, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			if (n < SEQ_OFF - 62 + 4) {
				atomic_fetch_add(&bad_seq, 1);
				continue;
			}
			memcpy(&seq, buf + SEQ_OFF - 62, 4);
			seq = ntohl(seq);
			if (seq >= MAX_FRAMES || read_seq[seq]++)
				atomic_fetch_add(&bad_seq, 1);
			atomic_fetch_add(&nread, 1);
		}
	}
	return NULL;
}

/* CREDIT more datagrams every millisecond, until told to stop. */
static void *sender(void *arg)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	struct source_counts c;
	int err;

	(void)arg;
	while (!atomic_load(&stop)) {
		source_counts(src, &c);
		if (c.sent + CREDIT >= MAX_FRAMES)
			break;
		err = source_credit(src, CREDIT);
		if (err) {
			atomic_store(&sender_err, err);
			break;
		}
		nanosleep(&ms, NULL);
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

static __u64 rcvbuf_errors(void)
{
	unsigned long long n = 0;
	char line[256];
	FILE *f = fopen("/proc/self/net/snmp6", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Udp6RcvbufErrors %llu", &n) == 1)
			break;
	fclose(f);
	return n;
}

enum change { NONE, REPLACE, DETACH_ATTACH };

/* What one run sent, and where each frame went. */
struct tally {
	long sent, refused, seen, read, rcvbuf, bad, unread;
};

/* Waits until the sender has sent n in all: 0, or -1 (said) when it
 * stopped or made no progress for SENDER_WAIT_S seconds. */
static int wait_sent(long n)
{
	struct source_counts c;
	long last = -1;
	time_t since = time(NULL);

	for (;;) {
		source_counts(src, &c);
		if ((long)c.sent >= n)
			return 0;
		if (atomic_load(&sender_err)) {
			printf("# the sender failed: %s\n",
			       strerror(-atomic_load(&sender_err)));
			return -1;
		}
		if ((long)c.sent != last) {
			last = c.sent;
			since = time(NULL);
		} else if (time(NULL) - since > SENDER_WAIT_S) {
			printf("# the source sent nothing for %d s (%llu sent, %llu seeded, %llu retired, %llu refused)\n",
			       SENDER_WAIT_S, (unsigned long long)c.sent,
			       (unsigned long long)c.seeded,
			       (unsigned long long)c.retired,
			       (unsigned long long)c.refused);
			return -1;
		}
		usleep(1000);
	}
}

/* Sends while changing silo on dut; the tally of the run. */
static int run_traffic(enum change how, struct tally *t)
{
	struct silo_xdp_load_opts replace = { .replace = true };
	struct silo_xdp_load_opts fresh = { 0 };
	struct source_counts c0, c1;
	pthread_t ts, tr;
	__u64 seen0 = seen(), rcv0 = rcvbuf_errors();
	long i, read0 = atomic_load(&nread), bad0 = atomic_load(&bad_seq);
	int err = 0;

	memset(t, 0, sizeof(*t));
	source_counts(src, &c0);
	atomic_store(&stop, false);
	atomic_store(&reading, true);
	atomic_store(&sender_err, 0);
	if (pthread_create(&tr, NULL, reader, NULL))
		return -1;
	if (pthread_create(&ts, NULL, sender, NULL)) {
		atomic_store(&reading, false);
		pthread_join(tr, NULL);
		return -1;
	}
	err = wait_sent(c0.sent + 4 * CREDIT);
	for (i = 0; i < ROUNDS && !err; i++) {
		if (how == REPLACE)
			err = silo_xdp_load(s, "dut", &replace);
		else if (how == DETACH_ATTACH)
			err = silo_xdp_unload(s, "dut") ?:
				      silo_xdp_load(s, "dut", &fresh);
		else
			usleep(10000);
		if (err)
			printf("# changing silo on dut failed: %s\n",
			       strerror(-err));
	}
	atomic_store(&stop, true);
	pthread_join(ts, NULL);
	/* The last copies out, the loop empty, the socket read dry. */
	if (source_drain(src, 200, NULL))
		err = -1;
	usleep(100000);
	atomic_store(&reading, false);
	pthread_join(tr, NULL);
	source_counts(src, &c1);
	t->sent = c1.sent - c0.sent;
	t->refused = c1.refused - c0.refused;
	t->seen = seen() - seen0;
	t->read = atomic_load(&nread) - read0;
	t->rcvbuf = rcvbuf_errors() - rcv0;
	t->bad = atomic_load(&bad_seq) - bad0;
	for (i = c0.sent; i < (long)c1.sent; i++)
		t->unread += !read_seq[i];
	printf("# %ld sent: %ld seen by silo, %ld refused (no XDP program on dut); %ld read, %ld dropped by the full socket, %ld unread, %ld read twice or unnumbered\n",
	       t->sent, t->seen, t->refused, t->read, t->rcvbuf, t->unread,
	       t->bad);
	return err ? -1 : 0;
}

/* Every frame sent is one that silo saw or dut refused, and every number
 * was read once or went with the socket's full buffer. */
static void check_accounted(const struct tally *t)
{
	CHECK(t->sent > 4 * CREDIT, "hardly anything sent");
	CHECK_EQ(t->seen + t->refused, t->sent);
	CHECK_EQ(t->read + t->rcvbuf, t->seen);
	CHECK_EQ(t->unread, t->sent - t->read);
	CHECK_EQ(t->bad, 0);
}

static void test_measure_without_change(void)
{
	struct tally t;

	REQUIRE(!run_traffic(NONE, &t), "the run did not finish");
	check_accounted(&t);
	CHECK_EQ(t.refused, 0);
}

static void test_replace_loses_nothing(void)
{
	struct tally t;

	REQUIRE(!run_traffic(REPLACE, &t), "the run did not finish");
	printf("# %d replaces\n", ROUNDS);
	check_accounted(&t);
	CHECK_EQ(t.refused, 0);
	CHECK_EQ(t.seen, t.sent);
}

/* The control: the same measurement sees the loss of a detach. */
static void test_detach_attach_loss_is_seen(void)
{
	struct tally t;

	REQUIRE(!run_traffic(DETACH_ATTACH, &t), "the run did not finish");
	printf("# %d detach+attach\n", ROUNDS);
	check_accounted(&t);
	CHECK(t.refused > 0,
	      "detaching lost nothing: the test cannot see loss");
}

int main(void)
{
	static const char *const names[] = {
		"test_measure_without_change", "test_replace_loses_nothing",
		"test_detach_attach_loss_is_seen"
	};
	int err, i;

	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	err = source_up();
	if (err) {
		/* Said on stderr; no sender, no test: a skip where it cannot
		 * run here at all, a failure where it runs wrong. */
		for (i = 0; i < 3; i++)
			printf("%s - %s: the traffic source %s (%s)\n",
			       source_cannot_run(err) ? "skip" : "not ok",
			       names[i],
			       source_cannot_run(err) ? "cannot run here" :
							"does not work",
			       strerror(-err));
	} else {
		RUN(test_measure_without_change);
		RUN(test_replace_loses_nothing);
		RUN(test_detach_attach_loss_is_seen);
	}
	source_close(src);
	close(sock);
	free(read_seq);
	silo_xdp_unload(s, "dut");
	silo_xdp_unload(s, "keep");
	silo_close(s);
	return 0;
}
