// SPDX-License-Identifier: GPL-2.0
/*
 * The traffic source of the tests, benchmarks and lab (tools/lib/source.h)
 * sends what it says, on a kernel that refuses BPF_PROG_RUN's live frames
 * as on one that takes them: it uses none.
 *
 *   g0 ---- in   a router (this namespace: fd01::1 on in, fd02::1 on out,
 *               fd20::/16 via fd02::2 out of out)   out ---- s0
 *
 * A ring seeded out of g0 goes through the router and comes back on s0,
 * round and round: with the kernel forwarding (XDP_PASS on in) and with a
 * bare XDP redirect. A pump's loop (sl-a, sl-b) sends its copies out of g0
 * to a UDP socket on in's address, as many as its credit, each with its
 * number. AF_PACKET's frames do the same without a loop.
 */
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <time.h>
#include <linux/if_link.h>
#include "test.h"
#include "pkt.h"
#include "source.h"
#include "silo_test.skel.h"

#define PORT 9000
#define SEQ_OFF (14 + 40 + 8 + 4) /* past the template, 4-aligned */

static struct silo_test *fwd;
static int in_ifindex, out_ifindex;
static uint8_t frames[3][PKT_MAX];
static size_t lens[3];
static int open_err; /* the last source_open()'s or source_check()'s */

/* A source that cannot run here at all is a skip, with the reason; one
 * that opens wrong fails. */
/* source_check(), which a kernel that cannot run the shape makes a skip
 * (the source closed first). */
#define CHECK_SOURCE(src)                                             \
	do {                                                          \
		open_err = source_check(src);                         \
		if (source_cannot_run(open_err)) {                    \
			source_close(src);                            \
			SKIP("this kernel cannot run the source: %s", \
			     strerror(-open_err));                    \
		}                                                     \
		CHECK_EQ(open_err, 0);                                \
	} while (0)

#define REQUIRE_SOURCE(src, what)                                              \
	do {                                                                   \
		if (!(src) && source_cannot_run(open_err))                     \
			SKIP("the traffic source cannot run here: %s",         \
			     strerror(-open_err));                             \
		REQUIRE(src, "cannot open %s: %s", what, strerror(-open_err)); \
	} while (0)

static int setup(void)
{
	struct pkt_spec sp = {
		.family = AF_INET6, .ttl = 64, .sport = 4000, .dport = PORT
	};
	static const size_t sizes[3] = { 80, 590, 1514 };
	uint8_t s0_mac[6];
	int i;

	if (sh("set -e\n"
	       "ip link add g0 type veth peer name in\n"
	       "ip link add s0 type veth peer name out\n"
	       "for d in g0 s0; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6; done\n"
	       "sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0\n"
	       "ip addr add fd01::1/64 dev in nodad\n"
	       "ip addr add fd02::1/64 dev out nodad\n"
	       "for d in g0 s0 in out; do ip link set $d up; done\n"
	       "ip route add fd20::/16 via fd02::2\n"))
		return -1;
	in_ifindex = if_nametoindex("in");
	out_ifindex = if_nametoindex("out");
	/* By ioctl: sysfs shows another namespace's devices. */
	if (read_mac("in", sp.dmac) || read_mac("g0", sp.smac) ||
	    read_mac("s0", s0_mac) ||
	    sh("ip neigh add fd02::2 lladdr %02x:%02x:%02x:%02x:%02x:%02x dev out nud permanent",
	       s0_mac[0], s0_mac[1], s0_mac[2], s0_mac[3], s0_mac[4],
	       s0_mac[5]))
		return -1;
	inet_pton(AF_INET6, "fd01::100:0", sp.src);
	inet_pton(AF_INET6, "fd20::1", sp.dst);
	for (i = 0; i < 3; i++) {
		sp.payload = sizes[i] - 14 - 40 - 8;
		lens[i] = pkt_build(frames[i], &sp);
	}
	fwd = silo_test__open_and_load();
	if (!fwd)
		return -1;
	fwd->bss->bounce_ifindex = out_ifindex;
	return 0;
}

/* The router's ingress program (the kernel forwards past XDP_PASS). */
static int router(struct bpf_program *p)
{
	bpf_xdp_detach(in_ifindex, 0, NULL);
	return p ? bpf_xdp_attach(in_ifindex, bpf_program__fd(p),
				  XDP_FLAGS_DRV_MODE, NULL) :
		   0;
}

static struct source *ring_open(int nclasses, const __u8 *pat, int npat)
{
	struct source_opts o = { .shape = SOURCE_RING,
				 .entry = "g0",
				 .back = "s0",
				 .back_hlim = 63,
				 .cpu = -1 };
	struct source_class cls[3];
	struct source *src;
	int i;

	open_err = source_open(&src, &o);
	if (open_err)
		return NULL;
	for (i = 0; i < nclasses; i++)
		cls[i] = (struct source_class){ .frame = frames[i],
						.len = lens[i] };
	if (source_set_classes(src, cls, nclasses) ||
	    source_set_pattern(src, pat, npat, 0x01000000, 1000)) {
		source_close(src);
		return NULL;
	}
	return src;
}

/* The source's .bss, found as another writer would find it. */
static int bss_fd(__u32 *size)
{
	struct bpf_map_info info;
	__u32 id = 0, best = 0, len;
	int fd;

	while (!bpf_map_get_next_id(id, &id)) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    !strcmp(info.name, "test_sou.bss")) {
			best = id;
			*size = info.value_size;
		}
		close(fd);
	}
	return best ? bpf_map_get_fd_by_id(best) : -1;
}

/* The check reads the bytes the programs write: a template changed behind
 * user space's back is caught, and set again it passes. */
static void test_check_sees_a_wrong_frame(void)
{
	static const __u8 pat[] = { 0, 1, 2 };
	struct source_class cls[3];
	struct source *src = ring_open(3, pat, 3);
	__u32 size = 0, zero = 0;
	uint8_t *bss = NULL;
	int fd, i;

	REQUIRE_SOURCE(src, "a ring");
	CHECK_SOURCE(src);
	fd = bss_fd(&size);
	if (fd >= 0)
		bss = calloc(1, size);
	if (bss && !bpf_map_lookup_elem(fd, &zero, bss)) {
		bss[14 + 24] ^= 0xFF; /* class 0's destination */
		CHECK(!bpf_map_update_elem(fd, &zero, bss, BPF_ANY),
		      "cannot write the .bss");
		CHECK_EQ(source_check(src), -EPROTO);
		for (i = 0; i < 3; i++)
			cls[i] = (struct source_class){ .frame = frames[i],
							.len = lens[i] };
		CHECK_EQ(source_set_classes(src, cls, 3), 0);
		CHECK_EQ(source_check(src), 0);
	} else {
		CHECK(0, "cannot read the source's .bss");
	}
	free(bss);
	if (fd >= 0)
		close(fd);
	source_close(src);
}

/*
 * Classes left to offload: each frame, for every source, carries the
 * pseudo header's folded sum where the UDP checksum goes, as a sender on
 * this host leaves it (tests/lib/pkt.h's), and the programs write the
 * same (source_check).
 */
static void test_partial_classes(void)
{
	static const __u8 pat[] = { 0, 1, 2 };
	struct source *src = ring_open(3, pat, 3);
	struct pkt_spec sp = { .family = AF_INET6 };
	struct source_class cls[3];
	uint8_t buf[PKT_MAX], want[PKT_MAX];
	__u32 k, word;
	size_t n;
	int i;

	REQUIRE_SOURCE(src, "a ring");
	for (i = 0; i < 3; i++)
		cls[i] = (struct source_class){ .frame = frames[i],
						.len = lens[i],
						.partial = true };
	CHECK_EQ(source_set_classes(src, cls, 3), 0);
	CHECK_EQ(source_check(src), 0);
	inet_pton(AF_INET6, "fd20::1", sp.dst);
	for (i = 0; i < 3; i++)
		for (k = 0; k < 4; k++) {
			n = source_frame(src, buf, i, k, 0);
			REQUIRE(n == lens[i], "class %d: %zu bytes", i, n);
			memcpy(want, buf, n);
			memcpy(sp.src, want + 14 + 8, 16);
			word = htonl(0x01000000 + k);
			CHECK(!memcmp(sp.src + 12, &word, 4),
			      "class %d, source %u: its address", i, k);
			pkt_l4_csum_partial(want, n, &sp);
			CHECK(!memcmp(buf, want, n),
			      "class %d, source %u: not the pseudo header's sum",
			      i, k);
		}
	source_close(src);
}

static void ring_turns(struct bpf_program *p, const char *what)
{
	static const __u8 pat[] = { 0, 0, 1, 2 };
	struct source_counts a, b;
	struct source *src = ring_open(3, pat, 4);
	__u64 fwd0 = ip6_forwarded(), lost = 1;

	REQUIRE_SOURCE(src, "a ring");
	CHECK_SOURCE(src);
	REQUIRE(!router(p), "%s on in", what);
	REQUIRE(!source_seed(src), "seeding");
	source_counts(src, &a);
	usleep(300000);
	source_counts(src, &b);
	printf("# %s: %llu frames round the ring in 0.3 s\n", what,
	       (unsigned long long)(b.back - a.back));
	/* 128 frames, 32 turns of the pattern, each many times round. */
	CHECK_EQ(a.seeded, 128);
	CHECK(b.back - a.back > 100 * 128, "the ring hardly turned");
	CHECK_EQ(source_drain(src, 200, &lost), 0);
	CHECK_EQ(lost, 0);
	source_counts(src, &a);
	CHECK_EQ(a.retired, 128);
	CHECK_EQ(a.back, a.sent + 128);
	if (!p) /* the kernel forwarded every one */
		CHECK(ip6_forwarded() - fwd0 >= a.back,
		      "the stack forwarded %llu of %llu",
		      (unsigned long long)(ip6_forwarded() - fwd0),
		      (unsigned long long)a.back);
	/* Drained: nothing moves any more; seeded again, it turns. */
	usleep(20000);
	source_counts(src, &b);
	CHECK_EQ(b.back, a.back);
	REQUIRE(!source_seed(src), "seeding again");
	usleep(50000);
	CHECK_EQ(source_drain(src, 200, &lost), 0);
	CHECK_EQ(lost, 0);
	source_counts(src, &b);
	CHECK(b.back > a.back + 128, "seeded again, the ring did not turn");
	router(NULL);
	source_close(src);
}

static void test_ring_through_the_kernel(void)
{
	ring_turns(fwd->progs.xdp_pass, "the kernel");
}

static void test_ring_through_a_redirect(void)
{
	ring_turns(fwd->progs.xdp_bounce, "a bare redirect");
}

/* A ring that loses its frames says so when drained, and why: in takes
 * redirected frames no more (no program, no GRO), the entry's flush
 * counts every one it refused. */
static void test_ring_lost_frames_are_counted(void)
{
	static const __u8 pat[] = { 0 };
	struct source *src = ring_open(1, pat, 1);
	struct source_counts c;
	__u64 lost = 0;

	REQUIRE_SOURCE(src, "a ring");
	REQUIRE(!router(fwd->progs.xdp_bounce), "bounce on in");
	REQUIRE(!source_seed(src), "seeding");
	usleep(20000);
	router(NULL);
	CHECK_EQ(source_drain(src, 100, &lost), 0);
	CHECK_EQ(lost, 128);
	source_counts(src, &c);
	CHECK_EQ(c.refused, 128);
	source_close(src);
}

/* A UDP socket on in's address: the pump's and AF_PACKET's frames. */
static int sink_open(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(PORT) };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), big = 8 << 20;

	inet_pton(AF_INET6, "fd01::1", &a.sin6_addr);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads until 200 ms of quiet (5 s at most: a source that never stops
 * fails the test, not the runner's timeout); marks each number in seen[]
 * (n of them); returns the datagrams read, and counts repeats and
 * strangers. */
static long sink_read(int fd, __u8 *seen, long n, long *bad)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	time_t end = time(NULL) + 5;
	uint8_t buf[2048];
	long got = 0;
	__u32 seq;
	ssize_t r;

	while (time(NULL) < end && poll(&p, 1, 200) == 1) {
		r = recv(fd, buf, sizeof(buf), 0);
		if (r < SEQ_OFF - 62 + 4)
			continue;
		got++;
		memcpy(&seq, buf + SEQ_OFF - 62, 4);
		seq = ntohl(seq);
		if (seq >= n || seen[seq]++)
			(*bad)++;
	}
	return got;
}

/* Frames of 80 bytes to in's own address (the stack takes them), from
 * source ports 4000 and 4001. */
static struct source *local_open(enum source_shape shape, int nclasses)
{
	struct source_opts o = { .shape = shape,
				 .entry = "g0",
				 .loop = "sl",
				 .seq_off = SEQ_OFF,
				 .cpu = -1 };
	static uint8_t local[2][PKT_MAX];
	struct pkt_spec sp = { .family = AF_INET6,
			       .dport = PORT,
			       .payload = 80 - 14 - 40 - 8 };
	static const __u8 pat[] = { 0, 1 };
	struct source_class cls[2] = {};
	struct source *src;
	int i;

	if (read_mac("in", sp.dmac) || read_mac("g0", sp.smac))
		return NULL;
	inet_pton(AF_INET6, "fd01::100:0", sp.src);
	inet_pton(AF_INET6, "fd01::1", sp.dst);
	for (i = 0; i < nclasses; i++) {
		sp.sport = 4000 + i;
		cls[i].frame = local[i];
		cls[i].len = pkt_build(local[i], &sp);
	}
	open_err = source_open(&src, &o);
	if (open_err)
		return NULL;
	if (source_set_classes(src, cls, nclasses) ||
	    source_set_pattern(src, pat, nclasses, 0x01000000, 7)) {
		source_close(src);
		return NULL;
	}
	return src;
}

static void test_pump_sends_its_credit(void)
{
	static __u8 seen[3000];
	struct source_counts c;
	struct source *src;
	long bad = 0, got;
	int fd = sink_open(), i, missing = 0;

	REQUIRE(fd >= 0, "UDP socket: %s", strerror(errno));
	REQUIRE(!router(fwd->progs.xdp_pass), "XDP_PASS on in");
	src = local_open(SOURCE_PUMP, 2);
	REQUIRE_SOURCE(src, "a pump");
	open_err = source_check(src);
	if (source_cannot_run(open_err)) {
		source_close(src);
		close(fd);
		router(NULL);
		SKIP("this kernel cannot run a pump: %s", strerror(-open_err));
	}
	CHECK_EQ(open_err, 0);
	REQUIRE(!source_credit(src, 1000), "credit");
	got = sink_read(fd, seen, sizeof(seen), &bad);
	CHECK_EQ(got, 1000);
	/* Out of credit, the loop emptied; more credit seeds it again. */
	source_counts(src, &c);
	CHECK_EQ(c.sent, 1000);
	CHECK_EQ(c.retired, c.seeded);
	REQUIRE(!source_credit(src, 1500), "more credit");
	got += sink_read(fd, seen, sizeof(seen), &bad);
	CHECK_EQ(got, 2500);
	CHECK_EQ(bad, 0);
	for (i = 0; i < 2500; i++)
		missing += !seen[i];
	CHECK_EQ(missing, 0);
	source_counts(src, &c);
	CHECK_EQ(c.sent, 2500);
	CHECK(c.seeded <= 2 * 32, "%llu seeds for two credits",
	      (unsigned long long)c.seeded);
	source_close(src);
	close(fd);
	router(NULL);
}

static void test_packet_sends_straight(void)
{
	static __u8 seen[3000];
	struct source *src;
	long bad = 0, got;
	int fd = sink_open(), i, missing = 0;

	REQUIRE(fd >= 0, "UDP socket: %s", strerror(errno));
	src = local_open(SOURCE_PACKET, 2);
	REQUIRE_SOURCE(src, "AF_PACKET's source");
	CHECK_EQ(source_send(src, 300), 300);
	got = sink_read(fd, seen, sizeof(seen), &bad);
	CHECK_EQ(got, 300);
	CHECK_EQ(bad, 0);
	for (i = 0; i < 300; i++)
		missing += !seen[i];
	CHECK_EQ(missing, 0);
	source_close(src);
	close(fd);
}

/* Closed, a pump leaves no device and no program behind. */
static void test_close_leaves_nothing(void)
{
	struct source *src = local_open(SOURCE_PUMP, 1);
	__u32 prog = 0;

	REQUIRE_SOURCE(src, "a pump");
	CHECK(if_nametoindex("sl-a"), "no loop");
	source_close(src);
	CHECK(!if_nametoindex("sl-a") && !if_nametoindex("sl-b"),
	      "the loop is left");
	src = ring_open(1, (const __u8[]){ 0 }, 1);
	REQUIRE_SOURCE(src, "a ring");
	source_close(src);
	CHECK(!bpf_xdp_query_id(if_nametoindex("s0"), 0, &prog) && !prog,
	      "a program is left on s0");
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_check_sees_a_wrong_frame);
	RUN(test_partial_classes);
	RUN(test_ring_through_the_kernel);
	RUN(test_ring_through_a_redirect);
	RUN(test_ring_lost_frames_are_counted);
	RUN(test_pump_sends_its_credit);
	RUN(test_packet_sends_straight);
	RUN(test_close_leaves_nothing);
	silo_test__destroy(fwd);
	return 0;
}
