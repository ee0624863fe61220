// SPDX-License-Identifier: GPL-2.0
/*
 * A guest behind a tap leaves its checksums to offload: its virtio-net
 * header says NEEDS_CSUM, and the frame holds the pseudo header's sum where
 * the TCP or UDP checksum goes. A tap runs its XDP program on an skb
 * wherever it builds one first (a blocking writer, as here; a frame for
 * segmentation; one larger than a page), and a frame redirected from there
 * stays an skb that keeps CHECKSUM_PARTIAL: finished in XDP, its field would
 * be summed again by the device that sends it. So silo, native on the tap,
 * passes such a frame to the stack, whichever way the VMM writes it, and
 * counts it; the kernel forwards it still to offload, and the capture on
 * out0p finishes it as the wire would. A frame whose checksum the guest
 * computed is forwarded by silo, untouched.
 *
 *   tap tp0 (this test writes to it, as a VMM would) -> silo -> out0 ->
 *   out0p (a packet socket captures there)
 */
#include <fcntl.h>
#include <poll.h>
#include <sys/uio.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include "fwd.h"

static int tap = -1, cap = -1;
static __u32 tp0;
static uint8_t mac_tp0[6];

static int tap_open(void)
{
	struct ifreq ifr = { .ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR };
	int hdr = sizeof(struct virtio_net_hdr);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "tp0");
	tap = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tap < 0)
		return -errno;
	if (ioctl(tap, TUNSETIFF, &ifr) || ioctl(tap, TUNSETVNETHDRSZ, &hdr))
		return -errno;
	return 0;
}

static int setup(void)
{
	struct silo_xdp_load_opts fwd = { .forward = true };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	int one = 1, err;

	if (fwd_setup("ip route add 10.93.0.0/16 via 10.2.0.2\n"))
		return -1;
	err = tap_open();
	if (err)
		return err;
	if (sh("set -e\n"
	       "ip link set tp0 up\n"
	       "ip addr add 10.7.0.1/24 dev tp0\n"
	       "sysctl -qw net.ipv4.conf.tp0.rp_filter=0\n"))
		return -1;
	tp0 = if_nametoindex("tp0");
	if (read_mac("tp0", mac_tp0) || silo_xdp_load(s, "tp0", &fwd))
		return -1;
	sll.sll_ifindex = if_nametoindex("out0p");
	cap = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	if (cap < 0 ||
	    setsockopt(cap, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) ||
	    bind(cap, (struct sockaddr *)&sll, sizeof(sll)))
		return -1;
	return 0;
}

/* A UDP packet from the guest (10.7.0.2) through the tap to 10.93.0.9. */
static struct pkt_spec guest(int n)
{
	struct pkt_spec sp = { .family = AF_INET,
			       .payload = 200 + n,
			       .sport = 3000 + n,
			       .dport = 53 };

	memcpy(sp.dmac, mac_tp0, 6);
	memcpy(sp.smac, mac_peer, 6);
	v4(sp.src, "10.7.0.2");
	v4(sp.dst, "10.93.0.9");
	return sp;
}

/* Writes the frame as a VMM writes what its guest sent: left to offload
 * (NEEDS_CSUM) or not. */
static int tap_write(const uint8_t *pkt, size_t len, bool needs_csum)
{
	struct virtio_net_hdr h = { .gso_type = VIRTIO_NET_HDR_GSO_NONE };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)pkt, len } };

	if (needs_csum) {
		h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h.csum_start = 14 + 20;
		h.csum_offset = 6;
	}
	return writev(tap, iov, 2) == (ssize_t)(sizeof(h) + len) ? 0 : -errno;
}

/* The next frame of protocol proto captured on out0p (1 s at most): its
 * length, and whether the kernel had still to finish its checksum. */
static ssize_t capture_proto(uint8_t *buf, bool *partial, uint8_t proto)
{
	char ctl[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	struct pollfd p = { .fd = cap, .events = POLLIN };
	struct iovec iov = { buf, PKT_MAX };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct tpacket_auxdata aux;
	struct cmsghdr *c;
	ssize_t n;

	while (poll(&p, 1, 1000) == 1) {
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		n = recvmsg(cap, &msg, 0);
		if (n < 14 + 20 + 8 || buf[12] != 0x08 || buf[14 + 9] != proto)
			continue;
		*partial = false;
		for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
			if (c->cmsg_level == SOL_PACKET &&
			    c->cmsg_type == PACKET_AUXDATA) {
				memcpy(&aux, CMSG_DATA(c), sizeof(aux));
				*partial =
					aux.tp_status & TP_STATUS_CSUMNOTREADY;
			}
		return n;
	}
	return -1;
}

static ssize_t capture(uint8_t *buf, bool *partial)
{
	return capture_proto(buf, partial, IPPROTO_UDP);
}

static __u64 redirected(void)
{
	struct silo_stats t;

	stats_total(&t);
	return t.redirect;
}

/* One frame through the tap: what left on out0p, finished as the device
 * that sends it would (a field finished already comes out wrong); *partial
 * whether the kernel still had to. */
static ssize_t through(const struct pkt_spec *sp, bool needs_csum, uint8_t *out,
		       bool *partial)
{
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, sp);
	ssize_t n;

	if (needs_csum)
		pkt_l4_csum_partial(pkt, len, sp);
	else
		pkt_l4_csum(pkt, len, sp);
	if (tap_write(pkt, len, needs_csum))
		return -1;
	n = capture(out, partial);
	if (n > 0 && *partial)
		pkt_l4_csum_device(out, n, sp);
	return n;
}

static struct silo_xdp_csum_info csum_info(void)
{
	struct silo_xdp_csum_info i;

	CHECK_EQ(silo_xdp_csum(s, "tp0", &i), 0);
	return i;
}

/* Frames left to offload, written as a VMM writes them (nonblock: the
 * tap's own XDP path, else the skb's): passed by silo, forwarded by the
 * kernel, right on the wire; the last one's bytes in last. */
static void left_to_offload_passed(bool nonblock, uint8_t *last, ssize_t *n)
{
	int fl = fcntl(tap, F_GETFL), i;
	struct silo_xdp_csum_info a, b;
	struct silo_stats x, y;
	bool partial;

	REQUIRE(fl >= 0 &&
			!fcntl(tap, F_SETFL,
			       nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK),
		"fcntl: %s", strerror(errno));
	for (i = 0; i < 6; i++) {
		struct pkt_spec sp = guest(i);

		a = csum_info();
		stats_total(&x);
		*n = through(&sp, true, last, &partial);
		stats_total(&y);
		b = csum_info();
		REQUIRE(*n > 0, "nothing left out0 (frame %d)", i);
		CHECK(pkt_l4_csum_ok(last, *n, &sp),
		      "the checksum is wrong on the wire (frame %d)", i);
		CHECK_EQ(y.redirect - x.redirect, 0);
		CHECK_EQ(y.pass_l4_bad - x.pass_l4_bad, 1);
		CHECK_EQ(b.passed - a.passed, 1);
		CHECK_EQ(b.finished, a.finished);
	}
	fcntl(tap, F_SETFL, fl);
}

static void test_reported(void)
{
	struct silo_xdp_csum_info i = csum_info();

	CHECK_EQ(i.what, SILO_XDP_CSUM_PASS);
	CHECK(!strcmp(i.kind, "tun"), "kind '%s'", i.kind);
}

static void test_guest_offload_passed(void)
{
	struct silo_xdp_load_opts fwd = { .forward = true };
	uint8_t by_silo[PKT_MAX], by_kernel[PKT_MAX];
	struct pkt_spec sp = guest(5);
	ssize_t n, k;
	bool partial;

	left_to_offload_passed(true, by_silo, &n);
	left_to_offload_passed(false, by_silo, &n);
	/* The kernel alone: the same frame, the same bytes. */
	REQUIRE(!silo_xdp_unload(s, "tp0"), "unload");
	k = through(&sp, true, by_kernel, &partial);
	REQUIRE(k > 0, "nothing left out0 without silo");
	CHECK(k == n && !memcmp(by_kernel, by_silo, n),
	      "silo's bytes are not the kernel's");
	REQUIRE(!silo_xdp_load(s, "tp0", &fwd), "load");
}

static void test_guest_complete_forwarded(void)
{
	uint8_t out[PKT_MAX], pkt[PKT_MAX];
	struct pkt_spec sp = guest(20);
	size_t len = pkt_build(pkt, &sp);
	bool partial;
	ssize_t n;
	__u64 r0;
	int i;

	pkt_l4_csum(pkt, len, &sp);
	for (i = 0; i < 4; i++) {
		r0 = redirected();
		n = through(&sp, false, out, &partial);
		REQUIRE(n == (ssize_t)len, "nothing left out0");
		CHECK(redirected() > r0, "silo did not forward frame %d", i);
		CHECK(!partial, "a complete checksum left to offload");
		CHECK(!memcmp(out + 34, pkt + 34, len - 34),
		      "the UDP bytes changed");
	}
}

/*
 * A guest's segmentation offload (TSO): a TCP packet of 2,900 bytes of
 * payload, to be cut into segments of 1,000 (the vnet header's gso_size),
 * its checksum left to offload. The tap runs XDP on its skb; silo passes
 * it (larger than the route's MTU) and the kernel forwards it, whole to
 * out0 (a veth takes such a packet as it is; a NIC would cut it): every
 * byte arrives, the checksum right once the wire's device finishes it.
 */
static void test_guest_tso_passed(void)
{
	struct virtio_net_hdr h = { .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				    .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
				    .hdr_len = 14 + 20 + 20,
				    .gso_size = 1000,
				    .csum_start = 14 + 20,
				    .csum_offset = 16 };
	struct pkt_spec sp = guest(30), seg;
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	struct iovec iov[2] = { { &h, sizeof(h) }, { pkt, 0 } };
	struct silo_stats x, y;
	size_t len, got = 0;
	bool partial;
	ssize_t n;
	int frames = 0;

	sp.proto = IPPROTO_TCP;
	sp.payload = 2900;
	len = pkt_build(pkt, &sp);
	pkt_l4_csum_partial(pkt, len, &sp);
	iov[1].iov_len = len;
	stats_total(&x);
	REQUIRE(writev(tap, iov, 2) == (ssize_t)(sizeof(h) + len), "writev: %s",
		strerror(errno));
	while ((n = capture_proto(out, &partial, IPPROTO_TCP)) > 0) {
		seg = sp;
		seg.payload = n - (14 + 20 + 20);
		if (partial)
			pkt_l4_csum_device(out, n, &seg);
		CHECK(pkt_l4_csum_ok(out, n, &seg),
		      "segment %d: the checksum is wrong on the wire", frames);
		got += n - (14 + 20 + 20);
		frames++;
		if (got >= 2900)
			break;
	}
	stats_total(&y);
	CHECK_EQ(got, 2900);
	CHECK(frames >= 1, "no segment left out0");
	CHECK_EQ(y.redirect - x.redirect, 0);
	CHECK(y.pass - x.pass >= 1, "silo did not pass it");
}

int main(void)
{
	int err;

	if (test_init())
		return 1;
	err = setup();
	if (err == -ENOENT || err == -ENODEV) {
		printf("skip - test_reported: no /dev/net/tun (%s)\n",
		       strerror(-err));
		printf("skip - test_guest_offload_passed: no /dev/net/tun\n");
		printf("skip - test_guest_complete_forwarded: no /dev/net/tun\n");
		printf("skip - test_guest_tso_passed: no /dev/net/tun\n");
		fwd_teardown();
		return 0;
	}
	if (err) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_reported);
	RUN(test_guest_offload_passed);
	RUN(test_guest_complete_forwarded);
	RUN(test_guest_tso_passed);
	silo_xdp_unload(s, "tp0");
	close(cap);
	close(tap);
	fwd_teardown();
	return 0;
}
