// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_xdp: random and mutated frames through silo's XDP program on a
 * forwarding router (make fuzz).
 *
 *   fuzz_xdp [--count N] [--replay N] [--seed S] [--pin-root DIR]
 *
 * In a network namespace of its own (gone when it exits) it builds the
 * router of tests/differential.sh (r-c, r-s, r-t; the hosts at their far
 * ends in namespaces silo-fuzz-PID-{c,s,t}), loads silo on the three devices with
 * forwarding, and runs N frames (default 1,000,000) through
 * BPF_PROG_TEST_RUN as if received on r-c: the corpus of tests/lib/frames.h
 * mutated (bit flips, bytes set, truncation, growth, length and header
 * length fields, TTL, ethertype, splices) and wholly random frames, up to
 * jumbo sizes (above a page a test run hands the program several
 * buffers). Every verdict must be XDP_PASS, XDP_TX or XDP_REDIRECT: silo
 * never drops and never aborts. The client's and the server's links have
 * MTU 9000, server2's 1500: jumbo frames are forwarded to the one and too
 * big for the other.
 *
 * Then a sample of the frames silo redirected (--replay, default 10,000)
 * goes live through the kernel with silo unloaded: sent from the client's
 * end of r-c, captured on the far ends of all three. What the kernel sends must be what silo made, per
 * egress port (told by the source MAC silo wrote) and byte for byte,
 * compared as multisets. Prints "ok - fuzz/..." or "not ok - fuzz/...".
 */
#include <poll.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "silo/silo.h"
#include "frames.h"
#include "silod_child.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint32_t rndn(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static const uint8_t rmac[6] = { 2, 0, 0, 0, 1, 1 },
		     cmac[6] = { 2, 0, 0, 0, 1, 2 },
		     smac_s[6] = { 2, 0, 0, 0, 2, 1 },
		     smac_t[6] = { 2, 0, 0, 0, 3, 1 };

static int sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		fprintf(stderr, "fuzz_xdp: command failed (%d): %s\n", rc, cmd);
	return rc;
}

/*
 * The router is this process's own namespace; the hosts are named ones
 * ($H-c, $H-s, $H-t, removed at exit), so that what the router sends is
 * not routed again by the router itself.
 */
static char hosts[64];

static void hosts_del(void)
{
	char cmd[256];

	snprintf(
		cmd, sizeof(cmd),
		"for n in c s t; do ip netns del %s-$n 2>/dev/null; done; true",
		hosts);
	system(cmd);
}

static const char topo[] =
	"set -e\n"
	"ip link set lo up\n"
	"for n in c s t; do\n"
	"  ip netns add $H-$n\n"
	"  ip netns exec $H-$n sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
	"net.ipv6.conf.default.disable_ipv6=1\n"
	"done\n"
	"sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 "
	"net.ipv6.conf.default.accept_ra=0 net.ipv4.icmp_ratelimit=0 "
	"net.ipv4.icmp_msgs_per_sec=100000 net.ipv4.icmp_msgs_burst=100000 "
	"net.ipv6.icmp.ratelimit=0 net.ipv4.ip_forward=1 "
	"net.ipv6.conf.all.forwarding=1 net.ipv4.conf.all.send_redirects=0 "
	"net.ipv4.conf.default.send_redirects=0 net.ipv4.conf.all.rp_filter=0 "
	"net.ipv4.conf.default.rp_filter=0\n"
	"ip link add name r-c mtu 9000 address 02:00:00:00:01:01 type veth peer name eth0 mtu 9000 address 02:00:00:00:01:02 netns $H-c\n"
	"ip link add name r-s mtu 9000 address 02:00:00:00:02:01 type veth peer name eth0 mtu 9000 address 02:00:00:00:02:02 netns $H-s\n"
	"ip link add name r-t address 02:00:00:00:03:01 type veth peer name eth0 address 02:00:00:00:03:02 netns $H-t\n"
	"for n in c s t; do\n"
	"  ip netns exec $H-$n ethtool -K eth0 tx off gro on >/dev/null\n"
	"  ip -n $H-$n link set eth0 up\n"
	"done\n"
	"for d in r-c r-s r-t; do\n"
	"  ethtool -K $d tx off gro on >/dev/null\n"
	"  sysctl -qw net.ipv4.conf.$d.rp_filter=0\n"
	"  ip link set $d up\n"
	"done\n"
	"ip addr add 10.1.0.1/24 dev r-c\n"
	"ip addr add fd01::1/64 dev r-c nodad\n"
	"ip addr add 10.2.0.1/24 dev r-s\n"
	"ip addr add fd02::1/64 dev r-s nodad\n"
	"ip addr add 10.3.0.1/24 dev r-t\n"
	"ip addr add fd03::1/64 dev r-t nodad\n"
	"ip neigh replace 10.1.0.2 lladdr 02:00:00:00:01:02 dev r-c nud permanent\n"
	"ip neigh replace fd01::2 lladdr 02:00:00:00:01:02 dev r-c nud permanent\n"
	"ip neigh replace 10.1.0.7 lladdr 02:00:00:00:01:07 dev r-c nud permanent\n"
	"ip neigh replace fd01::7 lladdr 02:00:00:00:01:07 dev r-c nud permanent\n"
	"ip neigh replace fe80::1 lladdr 02:00:00:00:01:08 dev r-c nud permanent\n"
	"ip neigh replace 10.2.0.2 lladdr 02:00:00:00:02:02 dev r-s nud permanent\n"
	"ip neigh replace fd02::2 lladdr 02:00:00:00:02:02 dev r-s nud permanent\n"
	"ip neigh replace 10.2.0.0 lladdr 02:00:00:00:02:09 dev r-s nud permanent\n"
	"ip neigh replace 10.3.0.2 lladdr 02:00:00:00:03:02 dev r-t nud permanent\n"
	"ip neigh replace fd03::2 lladdr 02:00:00:00:03:02 dev r-t nud permanent\n"
	"ip route add 10.10.0.0/16 via 10.1.0.2\n"
	"ip route add 10.20.0.0/16 via 10.2.0.2\n"
	"ip route add 10.40.0.0/16 via 10.2.0.2\n"
	"ip route add 10.30.0.0/16 via 10.3.0.2\n"
	"ip route add 10.40.3.0/24 nexthop via 10.2.0.2 dev r-s nexthop via 10.3.0.2 dev r-t\n"
	"ip -6 route add fd20::/64 via fd02::2\n"
	"ip -6 route add fd40::/48 via fd02::2\n"
	"ip -6 route add fd30::/64 via fd03::2\n"
	"ip -6 route add fd40:0:0:3::/64 nexthop via fd02::2 dev r-s nexthop via fd03::2 dev r-t\n"
	/* Rules on prefixes before main's, and rules that look every packet
	 * up in a table: the frames outside the prefixes and the table's
	 * routes are looked up in main directly, the others through the
	 * rules. */
	"ip rule add from 10.10.0.16/28 lookup 100 pref 100\n"
	"ip route add 10.20.0.0/16 via 10.3.0.2 table 100\n"
	"ip -6 rule add to fd40:0:0:1::/64 lookup 100 pref 100\n"
	"ip -6 route add fd40:0:0:1::/64 via fd03::2 table 100\n"
	"ip rule add lookup 101 pref 101\n"
	"ip route add 10.40.2.0/24 via 10.3.0.2 table 101\n"
	"ip -6 rule add lookup 101 pref 101\n"
	"ip -6 route add fd40:0:0:2::/64 via fd03::2 table 101\n";

/* The longest frame made: a VLAN-tagged jumbo packet and some. Above a
 * page, BPF_PROG_TEST_RUN hands silo's program a multi-buffer frame. */
#define FUZZ_MAX 9100
/* What is replayed through the kernel: frames the client's veth sends
 * (MTU 9000 and its Ethernet header). */
#define REPLAY_MAX (9000 + 14)
/* Above this a test run puts the rest of a frame in fragments: a page less
 * its headroom and the shared info. */
#define LINEAR_MAX (4096 - 256 - 320)

/* One mutated or random frame from the seeds into f; returns its length. */
static size_t mutate(const struct corpus *seeds, uint8_t *f)
{
	const struct frame *s = &seeds->f[rndn(seeds->n)];
	size_t len = s->len, l3, i, n;
	int op = rndn(16);

	if (op == 0) { /* wholly random, with an Ethernet header that may do */
		len = 14 + rndn(FUZZ_MAX - 14);
		for (i = 0; i < len; i++)
			f[i] = rnd();
		memcpy(f, rmac, 6);
		memcpy(f + 6, cmac, 6);
		if (rndn(2))
			put16(f + 12, rndn(2) ? ETH_P_IP : ETH_P_IPV6);
		return len;
	}
	memcpy(f, s->b, len);
	l3 = get16(f + 12) == 0x8100 ? 18 : get16(f + 12) == 0x88a8 ? 22 : 14;
	if (l3 >= len)
		l3 = 14;
	switch (op) {
	case 1:
	case 2: /* a few bit flips anywhere */
		n = 1 + rndn(8);
		for (i = 0; i < n; i++)
			f[rndn(len)] ^= 1 << rndn(8);
		break;
	case 3: /* bit flips in the headers */
		n = 1 + rndn(4);
		for (i = 0; i < n; i++)
			f[l3 + rndn(len - l3 < 64 ? len - l3 : 64)] ^=
				1 << rndn(8);
		break;
	case 4: /* bytes set at random in the headers */
		n = 1 + rndn(4);
		for (i = 0; i < n; i++)
			f[l3 + rndn(len - l3 < 64 ? len - l3 : 64)] = rnd();
		break;
	case 5: /* truncated */
		len = 14 + rndn(len - 14 + 1);
		break;
	case 6: /* grown: trailing bytes */
		n = len < FUZZ_MAX ? rndn(FUZZ_MAX - len + 1) : 0;
		n = n > 64 && rndn(2) ? rndn(64) : n;
		for (i = 0; i < n; i++)
			f[len + i] = rnd();
		len += n;
		break;
	case 7: /* IP length field */
	case 8:
		if (len < l3 + 8)
			break;
		if ((f[l3] >> 4) == 6)
			put16(f + l3 + 4,
			      rndn(2) ? rnd() :
					get16(f + l3 + 4) + rndn(41) - 20);
		else
			put16(f + l3 + 2,
			      rndn(2) ? rnd() :
					get16(f + l3 + 2) + rndn(41) - 20);
		break;
	case 9: /* IPv4 IHL / version nibble */
		f[l3] = rndn(2) ? (f[l3] & 0xf0) | rndn(16) :
				  (f[l3] & 0xf) | rndn(16) << 4;
		break;
	case 10: /* TTL / hop limit */
		if (len > l3 + 8)
			f[l3 + ((f[l3] >> 4) == 6 ? 7 : 8)] = rndn(4);
		break;
	case 11: /* ethertype / VLAN tags */
		put16(f + 12, (const uint16_t[]){ 0x0800, 0x86dd, 0x8100,
						  0x88a8, 0x0806, 0x8847,
						  0x9100, 0x0000 }[rndn(8)]);
		break;
	case 12: /* splice: another seed's tail */
	{
		const struct frame *t = &seeds->f[rndn(seeds->n)];
		size_t at = 14 + rndn(len - 14), from = 14 + rndn(t->len - 14);

		n = t->len - from;
		if (at >= FUZZ_MAX)
			n = 0;
		else if (at + n > FUZZ_MAX)
			n = FUZZ_MAX - at;
		memcpy(f + at, t->b + from, n);
		len = at + n;
		break;
	}
	case 13: /* UDP/TCP header bytes (ports, lengths, flags) */
		n = l3 + ((f[l3] >> 4) == 6 ? 40 : 4 * (f[l3] & 0xf));
		if (n + 20 <= len)
			f[n + rndn(20)] = rnd();
		break;
	default: /* the seed as it is, or with a payload bit flipped */
		if (op == 15)
			f[l3 + rndn(len - l3)] ^= 1 << rndn(8);
		break;
	}
	if (len < 14)
		len = 14;
	return len;
}

struct sample {
	uint16_t len, out_len;
	int port; /* 0 client, 1 server, 2 server2, -1 unknown */
	uint8_t in[REPLAY_MAX];
	uint8_t out[REPLAY_MAX];
};

static const char *const port_name[] = { "client", "server", "server2" };

static int port_of_smac(const uint8_t *b)
{
	if (!memcmp(b + 6, rmac, 6))
		return 0;
	if (!memcmp(b + 6, smac_s, 6))
		return 1;
	if (!memcmp(b + 6, smac_t, 6))
		return 2;
	return -1;
}

static void hex(const char *pfx, const uint8_t *b, size_t len, size_t max)
{
	size_t i;

	printf("%s", pfx);
	for (i = 0; i < len && i < max; i++)
		printf("%02x", b[i]);
	printf("%s (%zu bytes)\n", len > max ? "..." : "", len);
}

/* A captured or expected frame, for the multiset comparison. */
struct rec {
	int port;
	uint16_t len;
	const uint8_t *b;
	int idx; /* the sample, for silo's side */
};

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->port != y->port)
		return x->port - y->port;
	if (x->len != y->len)
		return x->len - y->len;
	return memcmp(x->b, y->b, x->len);
}

static int prog_fd_of(struct silo *s, const char *dev)
{
	__u32 ifindex = if_nametoindex(dev);
	struct silo_xdp_dev *devs;
	size_t n, i;
	int fd = -1;

	if (silo_xdp_list(s, &devs, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (devs[i].ifindex == ifindex)
			fd = bpf_prog_get_fd_by_id(devs[i].prog_id);
	free(devs);
	return fd;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

/* Live replay of the sample with silo unloaded; returns the mismatches. */
static long classes[4]; /* unexplained, other port, trailer kept, local src */

/* A packet from one of the router's own addresses (10.x.0.1, fd0x::1). */
static int local_source(const uint8_t *b, size_t len)
{
	static const uint8_t fd[15] = { 0xfd };

	if (len >= 34 && get16(b + 12) == ETH_P_IP)
		return is_router_v4(b + 26);
	return len >= 54 && get16(b + 12) == ETH_P_IPV6 && b[22] == 0xfd &&
	       b[23] >= 1 && b[23] <= 3 && !memcmp(b + 24, fd + 1, 13) &&
	       b[37] == 1;
}

static int replay(struct sample *sm, int n, int *unsent)
{
	static uint8_t buf[65536];
	struct rec *want, *got;
	int caps[3], tx, i, j, ngot = 0, bad = 0, shown = 0;
	int show = getenv("FUZZ_SHOW") ? atoi(getenv("FUZZ_SHOW")) : 6;
	uint8_t *store;
	uint64_t last;

	char ns[3][80];

	for (j = 0; j < 3; j++)
		snprintf(ns[j], sizeof(ns[j]), "%s-%c", hosts, "cst"[j]);
	tx = packet_socket(ns[0], "eth0", 0);
	caps[0] = packet_socket(ns[0], "eth0", 1);
	caps[1] = packet_socket(ns[1], "eth0", 1);
	caps[2] = packet_socket(ns[2], "eth0", 1);
	if (tx < 0 || caps[0] < 0 || caps[1] < 0 || caps[2] < 0) {
		printf("not ok - fuzz/replay: cannot open packet sockets\n");
		return -1;
	}
	want = calloc(n, sizeof(*want));
	got = calloc(2 * n + 1024, sizeof(*got));
	store = malloc((size_t)(2 * n + 1024) * REPLAY_MAX);
	if (!want || !got || !store)
		return -1;
	for (j = 0; j < 3; j++)
		packet_drain(caps[j]);
	*unsent = 0;

	/* Reads what waits on the capture sockets into got[]. */
#define COLLECT()                                                              \
	do {                                                                   \
		for (j = 0; j < 3; j++) {                                      \
			ssize_t l;                                             \
			while (ngot < 2 * n + 1024 &&                          \
			       (l = recv(caps[j], buf, sizeof(buf),            \
					 MSG_DONTWAIT)) >= 0) {                \
				if (l > REPLAY_MAX || frame_is_noise(buf, l))  \
					continue;                              \
				frame_normalize(buf, l);                       \
				memcpy(store + (size_t)ngot * REPLAY_MAX, buf, \
				       l);                                     \
				got[ngot].b =                                  \
					store + (size_t)ngot * REPLAY_MAX;     \
				got[ngot].len = l;                             \
				got[ngot].port = j;                            \
				ngot++;                                        \
				last = now_ms();                               \
			}                                                      \
		}                                                              \
	} while (0)

	last = now_ms();
	for (i = 0; i < n; i++) {
		if (send(tx, sm[i].in, sm[i].len, 0) != sm[i].len)
			(*unsent)++;
		frame_normalize(sm[i].out, sm[i].out_len);
		want[i].b = sm[i].out;
		want[i].len = sm[i].out_len;
		want[i].port = sm[i].port;
		want[i].idx = i;
		usleep(30);
		COLLECT();
	}
	while (now_ms() < last + 500) {
		usleep(10000);
		COLLECT();
	}
#undef COLLECT
	qsort(want, n, sizeof(*want), rec_cmp);
	qsort(got, ngot, sizeof(*got), rec_cmp);
	/* Merge the two sorted lists: what is on one side only differs.
	 * A silo-only frame is then classed by the kernel-only frame that
	 * explains it: the same bytes to another port (a different nexthop),
	 * or the same packet without silo's trailing bytes. */
	for (i = 0, j = 0; i < n || j < ngot;) {
		int c = i == n	  ? 1 :
			j == ngot ? -1 :
				    rec_cmp(&want[i], &got[j]);

		if (c == 0) {
			i++;
			j++;
			continue;
		}
		bad++;
		if (shown++ < show) {
			const struct rec *r = c < 0 ? &want[i] : &got[j];
			char pfx[96];

			snprintf(pfx, sizeof(pfx), "#   %s only, to %s: ",
				 c < 0 ? "silo" : "kernel",
				 r->port >= 0 ? port_name[r->port] : "?");
			hex(pfx, r->b, r->len, 80);
			if (c < 0)
				hex("#     from: ", sm[r->idx].in,
				    sm[r->idx].len, 80);
		}
		if (c < 0)
			want[i++].idx |= 1 << 30; /* unmatched */
		else
			got[j++].idx = -1; /* unmatched */
	}
	for (i = 0; i < n; i++) {
		const struct rec *w = &want[i];
		int k, how = 0;

		if (!(w->idx & (1 << 30)))
			continue;
		if (local_source(w->b, w->len))
			how = 3;
		for (k = 0; k < ngot && !how; k++) {
			if (got[k].idx != -1)
				continue;
			if (got[k].len == w->len && got[k].port != w->port &&
			    !memcmp(got[k].b + 12, w->b + 12, w->len - 12))
				how = 1;
			else if (got[k].len < w->len &&
				 got[k].port == w->port && got[k].len > 34 &&
				 !memcmp(got[k].b, w->b, got[k].len))
				how = 2;
			if (how)
				got[k].idx = -2;
		}
		classes[how]++;
		if (!how && classes[0] <= show) {
			printf("# unexplained, silo sent to %s:\n",
			       w->port >= 0 ? port_name[w->port] : "?");
			hex("#   out:  ", w->b, w->len, 100);
			hex("#   from: ", sm[w->idx & ~(1 << 30)].in,
			    sm[w->idx & ~(1 << 30)].len, 100);
		}
	}
	free(want);
	free(got);
	free(store);
	for (j = 0; j < 3; j++)
		close(caps[j]);
	close(tx);
	return bad;
}

int main(int argc, char **argv)
{
	long count = 1000000, nreplay = 10000, i, verdicts[8] = {}, bad = 0;
	struct silo_xdp_load_opts fwd = { .forward = true, .unbound = true };
	const char *devs[] = { "r-c", "r-s", "r-t" };
	char pin_root[256], cmd[512];
	struct corpus_env env = {};
	struct silo_opts opts = {};
	static struct corpus seeds;
	static struct sample *sm;
	uint64_t seed = time(NULL);
	long nsample = 0, redirects = 0, multi = 0;
	int prog, rc = 1, unsent = 0;
	pid_t silod = -1;
	static uint8_t in[FRAME_MAX], out[FRAME_MAX];
	__u32 ifindex;

	for (i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--count"))
			count = atol(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--replay"))
			nreplay = atol(argv[++i]);
		else if (i + 1 < argc && !strcmp(argv[i], "--seed"))
			seed = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--pin-root"))
			opts.pin_root = argv[++i];
		else {
			fprintf(stderr,
				"usage: fuzz_xdp [--count N] [--replay N] "
				"[--seed S] [--pin-root DIR]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng_state = seed ? seed : 1;
	printf("# fuzz_xdp: seed %llu, %ld frames, replay %ld\n",
	       (unsigned long long)seed, count, nreplay);
	if (!opts.pin_root) {
		snprintf(pin_root, sizeof(pin_root), "/sys/fs/bpf/silo-fuzz-%d",
			 getpid());
		opts.pin_root = pin_root;
	}
	if (unshare(CLONE_NEWNET)) {
		printf("not ok - fuzz/setup: unshare(CLONE_NEWNET): %s\n",
		       strerror(errno));
		return 1;
	}
	snprintf(hosts, sizeof(hosts), "silo-fuzz-%d", getpid());
	setenv("H", hosts, 1);
	atexit(hosts_del);
	if (sh(topo)) {
		printf("not ok - fuzz/setup: the router's namespace\n");
		return 1;
	}
	{
		struct silo *s;

		if (silo_open(&s, &opts)) {
			printf("not ok - fuzz/setup: silo_open\n");
			return 1;
		}
		for (i = 0; i < 3; i++)
			if (silo_xdp_load(s, devs[i], &fwd)) {
				printf("not ok - fuzz/setup: load silo on %s\n",
				       devs[i]);
				goto unload;
			}
		/* silo forwards only while silod beats */
		silod = silod_child_start(s, opts.pin_root);
		if (silod < 0) {
			printf("not ok - fuzz/setup: silod did not start\n");
			goto unload;
		}
		prog = prog_fd_of(s, "r-c");
		ifindex = if_nametoindex("r-c");
		if (prog < 0) {
			printf("not ok - fuzz/setup: cannot find silo's program\n");
			goto unload;
		}
		sm = calloc(nreplay ? nreplay : 1, sizeof(*sm));
		if (!sm)
			goto unload;
		memcpy(env.rmac, rmac, 6);
		memcpy(env.cmac, cmac, 6);
		corpus_build(&seeds, &env);

		for (i = 0; i < count; i++) {
			size_t len = mutate(&seeds, in);
			int frags = len > LINEAR_MAX;
			struct xdp_md ctx = { .data_end = len,
					      .ingress_ifindex = ifindex };
			LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in,
				    .data_size_in = len, .data_out = out,
				    .data_size_out = sizeof(out),
				    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
				    .repeat = 1);

			if (bpf_prog_test_run_opts(prog, &o)) {
				printf("not ok - fuzz/verdicts: BPF_PROG_TEST_RUN: %s\n",
				       strerror(errno));
				goto close_prog;
			}
			verdicts[o.retval < 8 ? o.retval : 7]++;
			multi += frags;
			if (o.retval == XDP_ABORTED || o.retval == XDP_DROP ||
			    o.retval > XDP_REDIRECT) {
				if (bad++ < 5) {
					printf("# verdict %u for:\n", o.retval);
					hex("#   ", in, len, 200);
				}
				continue;
			}
			if (o.retval != XDP_REDIRECT && o.retval != XDP_TX)
				continue;
			/* Reservoir sample of what silo sends on. */
			redirects++;
			if (!nreplay || len > REPLAY_MAX ||
			    o.data_size_out > REPLAY_MAX)
				continue;
			{
				long k = nsample < nreplay ?
						 nsample++ :
						 (long)rndn(redirects);

				if (k < nreplay) {
					sm[k].len = len;
					memcpy(sm[k].in, in, len);
					sm[k].out_len = o.data_size_out;
					memcpy(sm[k].out, out, o.data_size_out);
					sm[k].port = o.retval == XDP_TX ?
							     0 :
							     port_of_smac(out);
				}
			}
		}
		if (bad)
			printf("not ok - fuzz/verdicts: %ld of %ld frames got XDP_ABORTED or XDP_DROP\n",
			       bad, count);
		else if (!verdicts[XDP_REDIRECT] || nsample < nreplay)
			printf("not ok - fuzz/verdicts: %ld frames redirected, %ld sampled of %ld wanted: silo did not forward\n",
			       verdicts[XDP_REDIRECT], nsample, nreplay);
		else
			printf("ok - fuzz/verdicts: %ld frames (%ld multi-buffer): pass %ld, tx %ld, redirect %ld, none aborted or dropped\n",
			       count, multi, verdicts[XDP_PASS],
			       verdicts[XDP_TX], verdicts[XDP_REDIRECT]);
		if (!verdicts[XDP_REDIRECT] || nsample < nreplay)
			bad++;
		close(prog);
		prog = -1;
		silod_child_stop(silod);
		silod = -1;
		for (i = 0; i < 3; i++)
			silo_xdp_unload(s, devs[i]);
		silo_close(s);
		s = NULL;

		if (getenv("FUZZ_DUMP")) {
			FILE *d = fopen(getenv("FUZZ_DUMP"), "w");

			for (i = 0; d && i < nsample; i++) {
				for (size_t b = 0; b < sm[i].len; b++)
					fprintf(d, "%02x", sm[i].in[b]);
				fprintf(d, " %d ", sm[i].port);
				for (size_t b = 0; b < sm[i].out_len; b++)
					fprintf(d, "%02x", sm[i].out[b]);
				fputc('\n', d);
			}
			if (d)
				fclose(d);
		}
		if (nreplay) {
			int diff = replay(sm, nsample, &unsent);
			long jumbo = 0;

			for (i = 0; i < nsample; i++)
				jumbo += sm[i].len > LINEAR_MAX;

			if (diff < 0)
				bad++;
			else if (diff)
				printf("not ok - fuzz/replay: %d frames differ between silo and the kernel (%ld replayed, %d unsendable; of silo's: %ld to another port, %ld with trailing bytes the kernel trims, %ld from a local address, %ld else)\n",
				       diff, nsample, unsent, classes[1],
				       classes[2], classes[3], classes[0]);
			else
				printf("ok - fuzz/replay: %ld redirected frames (%ld multi-buffer) left the kernel the same way (%d unsendable)\n",
				       nsample, jumbo, unsent);
			if (diff)
				bad++;
		}
		rc = bad ? 1 : 0;
		goto out;
close_prog:
		close(prog);
unload:
		silod_child_stop(silod);
		for (i = 0; i < 3; i++)
			silo_xdp_unload(s, devs[i]);
		silo_close(s);
	}
out:
	free(sm);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", opts.pin_root);
	if (strstr(opts.pin_root, "silo-fuzz-"))
		system(cmd);
	return rc;
}
