// SPDX-License-Identifier: GPL-2.0
/*
 * silod's PMTU watch (user/silod/pmtu.c): the heartbeat says a family is
 * watched only while every device but loopback carries silo; exceptions
 * the kernel learned where silo could not see are marked before; an error
 * the data path could not read is covered once the stack has learned from
 * it; an mtu6 written by sysctl bumps genid; the next epoch's slot is
 * emptied in the first half of an epoch only.
 */
#include <stdio.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include "silod_util.h"

#define BOTH (1U << SILO_FAM_V4 | 1U << SILO_FAM_V6)

static int marks_fd, unseen_fd;

static __u32 watch_now(void)
{
	struct silo_daemon_info di;

	if (silo_daemon_info(s, &di))
		return ~0U;
	return di.heartbeat.pmtu_watch &
	       (1U << SILO_FAM_V4 | 1U << SILO_FAM_V6);
}

/* Waits up to 3 s (a poll is once a second) for the heartbeat's word. */
static int wait_watch(__u32 want)
{
	int i;

	for (i = 0; i < 300; i++) {
		if (watch_now() == want)
			return 0;
		usleep(10000);
	}
	return -1;
}

static void test_watched_while_every_device_has_silo(void)
{
	CHECK(!wait_watch(BOTH), "watch %#x, want both families", watch_now());
	REQUIRE(!sh("ip link add nosilo0 type veth peer name nosilo1"),
		"veth without silo");
	CHECK(!wait_watch(0), "a device without silo: watch %#x, want none",
	      watch_now());
	sh("ip link del nosilo0");
	CHECK(!wait_watch(BOTH), "device gone: watch %#x", watch_now());
	/* An exception may outlive a mark: that family is not watched. */
	sh("sysctl -qw net.ipv6.route.mtu_expires=5000");
	CHECK(!wait_watch(1U << SILO_FAM_V4), "IPv6 mtu_expires 5000: %#x",
	      watch_now());
	sh("sysctl -qw net.ipv6.route.mtu_expires=600");
	CHECK(!wait_watch(BOTH), "mtu_expires back: %#x", watch_now());
}

/* An exception the kernel learned from an error silo did not see (on a
 * device without silo, while silod was away) is marked when silod comes. */
static void test_exceptions_marked_at_start(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	uint8_t pkt[PKT_MAX], mac[6];
	size_t len;
	int fd;

	REQUIRE(!sh("set -e\n"
		    "ip link add x0 type veth peer name x0p\n"
		    "ip link set x0 up; ip link set x0p up\n"
		    "ip addr add 10.5.0.1/24 dev x0\n"
		    "sysctl -qw net.ipv4.conf.x0.rp_filter=0"),
		"x0");
	REQUIRE(!read_mac("x0", mac), "mac");
	len = fwd_icmp_error(pkt, AF_INET, "10.99.7.1", 3, 4);
	memcpy(pkt, mac, 6);
	pkt_put16(pkt + 14 + 20 + 6, 1300); /* the next-hop MTU */
	fwd_icmp_csum(pkt, len, AF_INET);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	REQUIRE(fd >= 0, "packet socket");
	sll.sll_ifindex = if_nametoindex("x0p");
	sll.sll_halen = 6;
	CHECK(sendto(fd, pkt, len, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
		      (ssize_t)len,
	      "send: %s", strerror(errno));
	close(fd);
	usleep(100000);
	REQUIRE(!sh("ip route get 10.99.7.1 | grep -q 'mtu 1300'"),
		"the kernel learned no exception (ip route get 10.99.7.1)");
	CHECK(!fwd_pmtu_marked(marks_fd, AF_INET, "10.99.7.1", -1),
	      "marked by XDP?");
	sh("ip link del x0");
	REQUIRE(!silod_restart("", -1), "silod restart");
	CHECK(!wait_watch(BOTH), "watch %#x", watch_now());
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.7.1", -1),
	      "the kernel's exception is not marked");
	sh("ip route flush cache");
}

static void test_unseen_error_covered(void)
{
	__u32 i = SILO_FAM_V6, c = SILO_PMTU_COVERED + SILO_FAM_V6;
	__u64 seen = fwd_coarse_ns() - 2000000000ULL, covered = 0, late;
	int n;

	/* Polls every 50 ms: an error covered early would be seen below. */
	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start_env("", -1, "SILOD_TEST_ENVELOPE_POLL_MS=50");
	REQUIRE(!silod_wait_ready(silod_pid), "silod restart");

	REQUIRE(!bpf_map_update_elem(unseen_fd, &c, &covered, BPF_ANY) &&
			!bpf_map_update_elem(unseen_fd, &i, &seen, BPF_ANY),
		"unseen");
	for (n = 0; n < 300 && covered != seen; n++) {
		usleep(10000);
		bpf_map_lookup_elem(unseen_fd, &c, &covered);
	}
	CHECK(covered == seen, "not covered: %llu, seen %llu",
	      (unsigned long long)covered, (unsigned long long)seen);
	/* One just seen waits for the stack to learn from it. */
	late = fwd_coarse_ns();
	REQUIRE(!bpf_map_update_elem(unseen_fd, &i, &late, BPF_ANY), "unseen");
	usleep(500000);
	bpf_map_lookup_elem(unseen_fd, &c, &covered);
	CHECK(covered == seen, "covered before its grace: %llu",
	      (unsigned long long)covered);
	for (n = 0; n < 300 && covered != late; n++) {
		usleep(10000);
		bpf_map_lookup_elem(unseen_fd, &c, &covered);
	}
	CHECK(covered == late, "not covered after its grace");
	/* An error seen after silod read the clock: later than its now. */
	late = fwd_coarse_ns() + 5000000000ULL;
	REQUIRE(!bpf_map_update_elem(unseen_fd, &i, &late, BPF_ANY), "unseen");
	usleep(500000);
	bpf_map_lookup_elem(unseen_fd, &c, &covered);
	CHECK(covered != late,
	      "an error seen after the clock was read covered");
	REQUIRE(!bpf_map_update_elem(unseen_fd, &c, &late, BPF_ANY), "cover");
	REQUIRE(!silod_restart("", -1), "silod restart");
}

static void test_mtu6_sysctl_bumps_genid(void)
{
	__u64 before = genid_now();
	int i;

	sh("sysctl -qw net.ipv6.conf.out0.mtu=1400");
	for (i = 0; i < 300 && genid_now() == before; i++)
		usleep(10000);
	CHECK(genid_now() != before, "mtu6 1400: genid unchanged");
	sh("sysctl -qw net.ipv6.conf.out0.mtu=1500");
}

/*
 * The next epoch's slot holds the marks of two epochs ago: emptied in the
 * first half of an epoch, when nothing writes it; kept in the second.
 * silod's clock for it moved (SILOD_TEST_PMTU_EMPTY_NS) to 10 s into the
 * next epoch, then to three quarters into it: both halves, every run.
 */
static void next_slot_case(__u64 into, bool emptied)
{
	__u64 now = fwd_coarse_ns();
	__u64 epoch = (now >> SILO_PMTU_EPOCH_SHIFT) + 1;
	struct silo_pmtu_mark m = { .seen_ns = 1 };
	struct silo_pmtu_key k = { .family = AF_INET };
	char env[64];

	snprintf(env, sizeof(env), "SILOD_TEST_PMTU_EMPTY_NS=%llu",
		 (unsigned long long)((epoch << SILO_PMTU_EPOCH_SHIFT) + into -
				      now));
	fwd_pmtu_forget(marks_fd, -1);
	v4(k.addr, "10.99.8.1");
	k.slot = (epoch + 1) % SILO_PMTU_SLOTS;
	REQUIRE(!bpf_map_update_elem(marks_fd, &k, &m, BPF_ANY), "mark");
	v4(k.addr, "10.99.8.2");
	k.slot = epoch % SILO_PMTU_SLOTS;
	REQUIRE(!bpf_map_update_elem(marks_fd, &k, &m, BPF_ANY), "mark");
	v4(k.addr, "10.99.8.3");
	k.slot = (epoch + 2) % SILO_PMTU_SLOTS; /* the last epoch's */
	REQUIRE(!bpf_map_update_elem(marks_fd, &k, &m, BPF_ANY), "mark");
	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start_env("", -1, env);
	REQUIRE(!silod_wait_ready(silod_pid), "silod restart");
	usleep(1500000);
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.8.1", -1) == !emptied,
	      "%llu s into an epoch: the next epoch's slot %s",
	      (unsigned long long)(into / 1000000000ULL),
	      emptied ? "kept" : "emptied");
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.8.2", -1),
	      "this epoch's mark went");
	CHECK(fwd_pmtu_marked(marks_fd, AF_INET, "10.99.8.3", -1),
	      "the last epoch's mark went");
}

static void test_next_slot_emptied_in_first_half(void)
{
	__u64 len = 1ULL << SILO_PMTU_EPOCH_SHIFT;

	next_slot_case(10000000000ULL, true);
	next_slot_case(len / 2 + len / 4, false);
	REQUIRE(!silod_restart("", -1), "silod restart");
}

int main(void)
{
	struct silo_xdp_load_opts plain = { .unbound = true };

	if (test_init())
		return 1;
	if (sh("sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0") ||
	    fwd_setup("ip route add 10.99.0.0/16 via 10.2.0.2\n"
		      "ip -6 route add fd99::/32 via fd02::2\n") ||
	    silo_xdp_load(s, "in0p", &plain) ||
	    silo_xdp_load(s, "out0p", &plain)) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	marks_fd = fwd_pin_get(SILO_PIN_PMTU_MARKS);
	unseen_fd = fwd_pin_get(SILO_PIN_PMTU_UNSEEN);
	if (marks_fd < 0 || unseen_fd < 0 || silod_boot())
		return 1;
	RUN(test_watched_while_every_device_has_silo);
	RUN(test_exceptions_marked_at_start);
	RUN(test_unseen_error_covered);
	RUN(test_mtu6_sysctl_bumps_genid);
	RUN(test_next_slot_emptied_in_first_half);
	if (silod_stop(silod_pid, SIGTERM) != 0)
		printf("not ok - silod exit: not clean (a sanitizer report?)\n");
	silo_xdp_unload(s, "in0p");
	silo_xdp_unload(s, "out0p");
	close(marks_fd);
	close(unseen_fd);
	fwd_teardown();
	unlink(config_path);
	return 0;
}
