// SPDX-License-Identifier: GPL-2.0
/*
 * silod keeps the route cache exact: scoped invalidation of route and
 * neighbour changes, the race a second sweep exists for (driven step by step
 * through silod's test hook), several first sweeps queued for one second
 * sweep (the grace period held open by hold_rcu), netlink overrun and
 * resync, SIGKILL and restart with the heartbeat fail-safe, SIGTERM, and a
 * faked two-node topology set through the config file and SIGHUP, with a
 * route change while both nodes' caches hold the route.
 */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include "silod_util.h"
#include "silo_test.skel.h"

/* test_store of bpf/tests/silo_test.bpf.c on the live maps: a data path's store. */
static struct silo_test *store_skel;

static int store_open(void)
{
	int err;

	store_skel = silo_test__open();
	if (!store_skel)
		return -errno;
	bpf_program__set_autoload(store_skel->progs.test_store, true);
	bpf_program__set_autoload(store_skel->progs.hold_rcu, true);
	err = fwd_reuse_pin(store_skel->maps.route_cache, "route_cache");
	if (!err)
		err = fwd_reuse_pin(store_skel->maps.fill_log, "fill_log");
	if (!err)
		err = fwd_reuse_pin(store_skel->maps.stats, "stats");
	if (!err)
		err = silo_test__load(store_skel);
	if (err)
		printf("# cannot load test_store: %s\n", strerror(-err));
	return err;
}

/*
 * Stores e in node 0's cache as the data path stores an insert: logged,
 * stored, counted. The frame: __u32 node, 4 bytes of padding, the entry.
 */
static int data_path_store(const struct silo_route_entry *e)
{
	__u8 frame[8 + sizeof(*e)] = {};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame));

	memcpy(frame + 8, e, sizeof(*e));
	if (bpf_prog_test_run_opts(
		    bpf_program__fd(store_skel->progs.test_store), &o))
		return -errno;
	return o.retval == XDP_PASS ? 0 : -EIO;
}

static void scoped(struct pkt_spec in, struct pkt_spec out, struct pkt_spec sub,
		   const char *replace, const char *add, const char *del)
{
	struct silo_route_entry e;

	__u64 sweeps;

	prime(&in, mac_gw);
	prime(&out, mac_gw);
	prime(&sub, mac_gw);

	/* replace P: entries inside P go, the one outside stays a hit */
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("%s", replace), "route replace");
	CHECK(wait_gone(&in), "entry inside P survived the replace");
	CHECK(wait_gone(&sub), "entry inside P survived the replace");
	wait_settled(sweeps);
	REQUIRE(cache_entry(&out, &e) == 1, "entry outside P was removed");
	CHECK_EQ(e.genid, genid_now());
	expect_hit(&out, mac_gw);
	prime(&in, mac_gw2); /* the next packet takes the new route */
	prime(&sub, mac_gw2);

	/* add a longer prefix inside P: only what it covers goes */
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("%s", add), "route add");
	CHECK(wait_gone(&sub), "entry inside the new prefix survived");
	wait_settled(sweeps);
	CHECK(cache_entry(&in, &e) == 1, "entry outside the new prefix went");
	prime(&sub, mac_gw);

	/* and delete it again */
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("%s", del), "route del");
	CHECK(wait_gone(&sub), "entry of the deleted prefix survived");
	wait_settled(sweeps);
	prime(&sub, mac_gw2);
	expect_hit(&in, mac_gw2);
	expect_hit(&out, mac_gw);
}

static void test_route_changes_scoped_ipv4(void)
{
	scoped(spec4("10.99.1.1"), spec4("10.98.1.1"), spec4("10.99.2.2"),
	       "ip route replace 10.99.0.0/16 via 10.2.0.3",
	       "ip route add 10.99.2.0/24 via 10.2.0.2",
	       "ip route del 10.99.2.0/24");
}

static void test_route_changes_scoped_ipv6(void)
{
	scoped(spec6("fd99::1:1"), spec6("fd98::1"), spec6("fd99::2:2"),
	       "ip -6 route replace fd99::/64 via fd02::3",
	       "ip -6 route add fd99::2:0/112 via fd02::2",
	       "ip -6 route del fd99::2:0/112");
}

static void test_neighbour_mac_change(void)
{
	static const uint8_t mac_new[6] = { 0x02, 0, 0, 0, 0x02, 0x99 };
	struct pkt_spec sp = spec4("10.97.0.1");
	struct silo_route_entry e;

	REQUIRE(!sh("ip neigh add 10.2.0.7 lladdr 02:00:00:00:02:02 dev out0 nud permanent\n"
		    "ip route add 10.97.0.0/16 via 10.2.0.7"),
		"setup");
	/* Only the neighbour change may remove the entry: silod is done
	 * with the route add, second sweep included, before it is cached. */
	silod_quiet();
	prime(&sp, mac_gw);
	expect_hit(&sp, mac_gw);
	silod_quiet();
	REQUIRE(cache_entry(&sp, &e) == 1 && e.genid == genid_now(),
		"the entry went before the neighbour changed");
	REQUIRE(!sh("ip neigh replace 10.2.0.7 lladdr 02:00:00:00:02:99 dev out0 nud permanent"),
		"neigh replace");
	CHECK(wait_gone(&sp), "entry kept the old MAC");
	prime(&sp, mac_new);
	expect_hit(&sp, mac_new);
	/* and back: the MAC silod saw before is a change again */
	silod_quiet();
	REQUIRE(!sh("ip neigh replace 10.2.0.7 lladdr 02:00:00:00:02:02 dev out0 nud permanent"),
		"neigh replace");
	CHECK(wait_gone(&sp), "entry kept the second MAC");
	prime(&sp, mac_gw);
	expect_hit(&sp, mac_gw);
}

/*
 * A policy rule can send any destination elsewhere: it cannot be scoped, so
 * genid must change and entries from before must not be used.
 */
static void rule_change(const char *family, struct pkt_spec sp,
			const char *rule)
{
	struct silo_route_entry e;
	__u64 g;
	int i;

	/* The previous change (a rule deleted) handled first: its bump
	 * would take the primed entry. */
	silod_quiet();
	prime(&sp, mac_gw);
	expect_hit(&sp, mac_gw);
	silod_quiet();
	g = genid_now();
	REQUIRE(!sh("ip %s rule add %s", family, rule), "rule add");
	for (i = 0; i < 400 && genid_now() == g; i++)
		usleep(5000);
	CHECK(genid_now() != g, "no genid bump on a rule change");
	REQUIRE(cache_entry(&sp, &e) == 1, "the entry is gone");
	CHECK(e.genid != genid_now(),
	      "an entry made before the rule change is still valid");
	/* The burst may bump genid twice (the sync's flags, then the
	 * bump): an entry made between the two would not hit. */
	silod_quiet();
	CHECK_EQ(forward_through(&sp, mac_gw).cache_hit, 0);
	expect_hit(&sp, mac_gw);
	sh("ip %s rule del %s", family, rule);
}

/* rp_filter of ifindex as the devices map has it, or -1. */
static int device_rp_filter(__u32 ifindex)
{
	struct silo_device dev;
	char path[PATH_MAX];
	int fd, rc = -1;

	snprintf(path, sizeof(path), "%s/devices", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (!bpf_map_lookup_elem(fd, &ifindex, &dev))
		rc = dev.rp_filter;
	close(fd);
	return rc;
}

/*
 * The source check's answer is cached in a source entry: a route change for
 * a prefix holding the source must remove it. Strict rp_filter; the way
 * back to 10.77.0.1 moves from in0 to out0, so its packets, forwarded
 * before, go to the stack after.
 */
static void test_source_entries_swept(void)
{
	struct pkt_spec sp = spec4("10.76.7.1");
	struct silo_route_entry e;
	uint8_t pkt[PKT_MAX];
	struct result r;
	__u64 sweeps;
	size_t len;
	int i;

	v4(sp.src, "10.77.0.1");
	len = pkt_build(pkt, &sp);
	REQUIRE(!sh("ip route add 10.76.0.0/16 via 10.2.0.2 && "
		    "ip route add 10.77.0.0/16 via 10.1.0.3 && "
		    "sysctl -qw net.ipv4.conf.in0.rp_filter=1"),
		"route back, strict rp_filter");
	/* silod re-reads the device (a netconf message) and bumps genid. */
	for (i = 0; i < 200 && device_rp_filter(in0) != 1; i++)
		usleep(10000);
	REQUIRE(i < 200, "silod did not see rp_filter 1");
	silod_quiet();
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	REQUIRE(source_entry(&sp, &e) == 1 && e.genid == genid_now(),
		"no current source entry");
	CHECK_EQ(e.verdict, 0);
	CHECK_EQ(forward_through(&sp, mac_gw).src_hit, 1);

	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip route replace 10.77.0.0/16 via 10.2.0.3"), "replace");
	wait_settled(sweeps);
	CHECK_EQ(source_entry(&sp, &e), 0);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_rp_filter, 1);
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=0; "
	   "ip route del 10.77.0.0/16; ip route del 10.76.0.0/16");
}

/*
 * A device's change reaches what the data path keeps of its record (this
 * CPU's copy of the ingress device's, route_hot's copies): strict
 * rp_filter, set while a flow whose way back is through out0 is hot,
 * sends its next packet to the stack. On one CPU: the copies are per CPU.
 */
static void test_device_change_reaches_the_copies(void)
{
	struct pkt_spec sp = spec4("10.76.8.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	cpu_set_t all;
	int i;

	REQUIRE(!fwd_run_on_cpu0(&all), "run on CPU 0");
	v4(sp.src, "10.2.0.9"); /* the way back is through out0 */
	REQUIRE(!sh("ip route add 10.76.0.0/16 via 10.2.0.2"), "route");
	silod_quiet();
	for (i = 0; i < 3; i++)
		forward_through(&sp, mac_gw);
	REQUIRE(!sh("sysctl -qw net.ipv4.conf.in0.rp_filter=1"), "strict");
	for (i = 0; i < 200 && device_rp_filter(in0) != 1; i++)
		usleep(10000);
	REQUIRE(i < 200, "silod did not see rp_filter 1");
	silod_quiet();
	run_pkt(pkt, pkt_build(pkt, &sp), &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_rp_filter, 1);
	sh("sysctl -qw net.ipv4.conf.in0.rp_filter=0; "
	   "ip route del 10.76.0.0/16");
	sched_setaffinity(0, sizeof(all), &all);
}

static void test_rule_change_bumps_genid(void)
{
	rule_change("-4", spec4("10.98.3.1"),
		    "to 10.201.0.0/16 table 201 pref 201");
	rule_change("-6", spec6("fd98::3:1"),
		    "to fd21::/64 table 201 pref 201");
}

/*
 * Entries just inside and just outside a prefix's boundaries: after cover
 * (routes through the first gateway) and a change of the prefix (to the
 * second), those inside go and those outside stay valid and hit.
 */
static void boundary(bool v6, const char *cover, const char *change,
		     const char *const *inside, const char *const *outside)
{
	struct silo_route_entry e;
	struct pkt_spec sp;
	int i;

#define SPEC(a) (v6 ? spec6(a) : spec4(a))
	REQUIRE(!sh("%s", cover), "covering routes");
	silod_quiet();
	for (i = 0; inside[i]; i++) {
		sp = SPEC(inside[i]);
		prime(&sp, mac_gw);
	}
	for (i = 0; outside[i]; i++) {
		sp = SPEC(outside[i]);
		prime(&sp, mac_gw);
	}
	REQUIRE(!sh("%s", change), "route change");
	for (i = 0; inside[i]; i++) {
		sp = SPEC(inside[i]);
		CHECK(wait_gone(&sp), "the entry for %s, inside, survived",
		      inside[i]);
	}
	silod_quiet();
	for (i = 0; outside[i]; i++) {
		sp = SPEC(outside[i]);
		CHECK(cache_entry(&sp, &e) == 1 && e.genid == genid_now(),
		      "the entry for %s, outside, was removed", outside[i]);
		expect_hit(&sp, mac_gw);
	}
	for (i = 0; inside[i]; i++) {
		sp = SPEC(inside[i]);
		prime(&sp, mac_gw2);
		expect_hit(&sp, mac_gw2);
	}
#undef SPEC
}

static void test_prefix_boundaries_ipv4(void)
{
	/* /20: its last bit inside a byte; 10.77.16.0 - 10.77.31.255 */
	static const char *const in[] = { "10.77.16.0", "10.77.31.255", NULL };
	static const char *const out[] = { "10.77.15.255", "10.77.32.0", NULL };

	boundary(false, "ip route add 10.77.0.0/16 via 10.2.0.2",
		 "ip route add 10.77.16.0/20 via 10.2.0.3", in, out);
}

static void test_prefix_boundaries_ipv6(void)
{
	/* /61: fd77:0:0:10:: - fd77:0:0:17:ffff:ffff:ffff:ffff */
	static const char *const in[] = {
		"fd77:0:0:10::", "fd77:0:0:17:ffff:ffff:ffff:ffff", NULL
	};
	static const char *const out[] = { "fd77:0:0:f:ffff:ffff:ffff:ffff",
					   "fd77:0:0:18::", NULL };

	boundary(true, "ip -6 route add fd77::/48 via fd02::2",
		 "ip -6 route add fd77:0:0:10::/61 via fd02::3", in, out);
}

static void test_host_routes_replaced(void)
{
	static const char *const in4[] = { "10.76.0.5", NULL };
	static const char *const out4[] = { "10.76.0.4", "10.76.0.6", NULL };
	static const char *const in6[] = { "fd76::5", NULL };
	static const char *const out6[] = { "fd76::4", "fd76::6", NULL };

	boundary(false,
		 "ip route add 10.76.0.0/24 via 10.2.0.2\n"
		 "ip route add 10.76.0.5/32 via 10.2.0.2",
		 "ip route replace 10.76.0.5/32 via 10.2.0.3", in4, out4);
	boundary(true,
		 "ip -6 route add fd76::/64 via fd02::2\n"
		 "ip -6 route add fd76::5/128 via fd02::2",
		 "ip -6 route replace fd76::5/128 via fd02::3", in6, out6);
}

/*
 * What a program that resolved before the change does when its store lands
 * after silod's first sweep: the entry with the old answer, stamped with
 * the current genid, and its fill counted.
 */
static int late_store(const struct pkt_spec *sp, const uint8_t *dmac)
{
	struct silo_route_entry e = { .genid = genid_now(),
				      .ifindex = out0,
				      .mtu = 1500,
				      .family = SILO_AF_INET };

	e.key.ifindex = in0;
	e.key.family = SILO_AF_INET;
	memcpy(e.key.dst, sp->dst, 16);
	memcpy(e.dmac, dmac, 6);
	memcpy(e.smac, mac_out0, 6);
	memcpy(e.nexthop, (uint8_t[4]){ 10, 2, 0, 2 }, 4);
	return data_path_store(&e);
}

static void race(bool second_sweep, const char *dst, const char *prefix)
{
	struct pkt_spec sp = spec4(dst);
	struct silo_route_entry e;
	int hook[2];
	char c;

	/* Before silod starts: it sweeps (and stops at the hook) only for
	 * the change under test. */
	sh("ip route add %s via 10.2.0.2", prefix);
	REQUIRE(!socketpair(AF_UNIX, SOCK_STREAM, 0, hook), "socketpair");
	REQUIRE(!silod_restart(second_sweep ? "" : "--test-no-second-sweep",
			       hook[1]),
		"silod with the test hook");
	close(hook[1]);
	prime(&sp, mac_gw);

	sh("ip route replace %s via 10.2.0.3", prefix);
	/* silod has swept once and waits for us */
	REQUIRE(poll(&(struct pollfd){ .fd = hook[0], .events = POLLIN }, 1,
		     10000) == 1 &&
			read(hook[0], &c, 1) == 1,
		"no first sweep");
	CHECK_EQ(cache_entry(&sp, &e), 0);
	REQUIRE(!late_store(&sp, mac_gw), "late store");
	REQUIRE(write(hook[0], "G", 1) == 1, "release silod");

	if (second_sweep) {
		CHECK(wait_gone(&sp),
		      "an entry resolved before the change outlived it");
		prime(&sp, mac_gw2);
	} else {
		/* The control: without the second sweep the test sees it. */
		usleep(300000);
		CHECK(cache_entry(&sp, &e) == 1 && e.genid == genid_now() &&
			      !memcmp(e.dmac, mac_gw, 6),
		      "the stale entry did not survive: the test cannot see the race");
	}
	close(hook[0]);
	REQUIRE(!silod_restart("", -1), "silod");
}

static void test_race_entry_resolved_before_change_is_removed(void)
{
	race(true, "10.91.0.1", "10.91.0.0/16");
}

static void test_race_without_second_sweep_is_seen(void)
{
	race(false, "10.92.0.1", "10.92.0.0/16");
}

/*
 * hold_rcu of bpf/silo_test.bpf.c in a thread of its own: an RCU reader
 * that started before the grace periods it holds open, until hold_stop()
 * (or 3 s).
 */
struct holder {
	pthread_t thread;
	bool started;
	int ret; /* XDP_PASS: it held until released */
};

static void *hold_main(void *arg)
{
	int fd = bpf_program__fd(store_skel->progs.hold_rcu);
	struct holder *h = arg;
	__u8 frame[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame));

	h->ret = bpf_prog_test_run_opts(fd, &o) ? -errno : (int)o.retval;
	return NULL;
}

static int hold_start(struct holder *h)
{
	struct timespec ts;
	int i;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	store_skel->bss->hold_release = 0;
	/* At most 3 s: a route change may wait for it (see below). */
	store_skel->bss->hold_until =
		(ts.tv_sec + 3) * 1000000000ULL + ts.tv_nsec;
	if (pthread_create(&h->thread, NULL, hold_main, h))
		return -1;
	h->started = true;
	for (i = 0; i < 2000; i++) {
		if (__atomic_load_n(&store_skel->bss->hold_running,
				    __ATOMIC_SEQ_CST))
			return 0;
		usleep(1000);
	}
	return -1;
}

static int hold_stop(struct holder *h)
{
	if (!h->started)
		return -1;
	__atomic_store_n(&store_skel->bss->hold_release, 1, __ATOMIC_SEQ_CST);
	pthread_join(h->thread, NULL);
	h->started = false;
	return h->ret;
}

/* Whether thread tid of process pid sleeps uninterruptibly (state D). */
static bool task_blocked(pid_t pid, const char *tid)
{
	char path[300], buf[512], *p;
	bool blocked = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid, tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		blocked = !strncmp(p, ") D", 3);
	fclose(f);
	return blocked;
}

/* A thread of pid but except that sleeps uninterruptibly, or 0. */
static pid_t blocked_thread(pid_t pid, pid_t except)
{
	struct dirent *de;
	char path[64];
	pid_t tid = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	while (dir && !tid && (de = readdir(dir)))
		if (de->d_name[0] != '.' && atoi(de->d_name) != except &&
		    task_blocked(pid, de->d_name))
			tid = atoi(de->d_name);
	if (dir)
		closedir(dir);
	return tid;
}

/* "ip -batch -", reading the commands the test writes; *pid its pid. */
static FILE *ip_batch(pid_t *pid)
{
	FILE *f = NULL;
	int fd[2];

	if (pipe(fd))
		return NULL;
	fflush(stdout);
	*pid = fork();
	if (*pid == 0) {
		dup2(fd[0], 0);
		close(fd[0]);
		close(fd[1]);
		execlp("ip", "ip", "-batch", "-", (char *)NULL);
		_exit(127);
	}
	close(fd[0]);
	if (*pid > 0)
		f = fdopen(fd[1], "w");
	if (!f) {
		close(fd[1]);
		if (*pid > 0)
			waitpid(*pid, NULL, 0);
	}
	return f;
}

static int ip_batch_end(FILE *f, pid_t pid)
{
	int status;

	fclose(f);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* silod's first sweep of a change: it waits at the hook. */
static int hook_wait_ms(int hook, int ms)
{
	struct pollfd pfd = { .fd = hook, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, ms) != 1 || read(hook, &c, 1) != 1)
		return -1;
	return 0;
}

/*
 * Waits for silod's first sweep of a change: its hook. A route change
 * takes the RTNL lock, which another may hold while it waits for a grace
 * period (synchronize_net()): held open by h, that one waits for hold_rcu
 * and the change for it. So while ip, or a thread of silod but the regrace
 * one, sleeps uninterruptibly for 50 ms, h lets go, and *why says so.
 */
static int change_swept(int hook, struct holder *h, pid_t ip, pid_t regrace,
			const char **why)
{
	int i, stuck = 0;

	for (i = 0; i < 1000; i++) {
		if (!hook_wait_ms(hook, 10))
			return 0;
		if (!h->started)
			continue;
		if (blocked_thread(ip, 0) || blocked_thread(silod_pid, regrace))
			stuck++;
		else
			stuck = 0;
		if (stuck == 5) {
			if (!*why)
				*why = "a route change waited for the grace period";
			hold_stop(h);
		}
	}
	return -1;
}

/*
 * One try of the test below, with the prefixes 10.NET.0.0/16 (X) and the
 * next three (A, B, C), routed through the first gateway. 1: the grace
 * period after X held from before A's first sweep until C's was queued;
 * 0: it did not, said why; -1: the test cannot go on. The changes go
 * through one "ip -batch", quicker than an ip each.
 */
static int queued_changes(int hook, unsigned int net)
{
	const char *why = NULL;
	struct pkt_spec late[2];
	struct silo_route_entry e;
	struct holder h = {};
	pid_t ip_pid, regrace = 0;
	__u64 sweeps, pending = 0;
	char dst[32];
	int i, j;
	FILE *ip;

	for (i = 0; i < 2; i++) {
		snprintf(dst, sizeof(dst), "10.%u.0.1", net + 1 + i);
		late[i] = spec4(dst);
	}
	ip = ip_batch(&ip_pid);
	if (!ip) {
		CHECK(0, "ip -batch");
		return -1;
	}
	if (hold_start(&h)) {
		hold_stop(&h);
		ip_batch_end(ip, ip_pid);
		CHECK(0, "hold_rcu did not start");
		return -1;
	}
	sweeps = daemon_counters().sweeps;
	for (i = 0; i < 4; i++) {
		fprintf(ip, "route replace 10.%u.0.0/16 via 10.2.0.3\n",
			net + i);
		fflush(ip);
		if (change_swept(hook, &h, ip_pid, regrace, &why)) {
			hold_stop(&h);
			ip_batch_end(ip, ip_pid);
			CHECK(0, "no first sweep of 10.%u.0.0/16", net + i);
			return -1;
		}
		/* A and B: an entry resolved before the change, stored late */
		if (i == 1 || i == 2) {
			CHECK(cache_entry(&late[i - 1], &e) == 0,
			      "an entry in 10.%u.0.0/16 before its late store",
			      net + i);
			CHECK(!late_store(&late[i - 1], mac_gw), "late store");
		}
		if (write(hook, "G", 1) != 1) {
			hold_stop(&h);
			ip_batch_end(ip, ip_pid);
			CHECK(0, "release silod");
			return -1;
		}
		/* X: the regrace thread takes it, waits for a grace period */
		for (j = 0; i == 0 && h.started && j < 400 && !regrace; j++) {
			regrace = blocked_thread(silod_pid, 0);
			if (!regrace)
				usleep(5000);
		}
		if (i == 0 && !regrace && !why)
			why = "the regrace thread did not wait for a grace period";
	}
	/* X in its grace period; A, B and C queued */
	for (j = 0;
	     j < 400 && h.started &&
	     (pending = daemon_counters().pending) != 4 &&
	     __atomic_load_n(&store_skel->bss->hold_running, __ATOMIC_SEQ_CST);
	     j++)
		usleep(5000);
	if (!why && pending != 4)
		why = "the changes were not all queued";
	if (!why && blocked_thread(silod_pid, 0) != regrace)
		why = "the grace period ended too soon";
	if (hold_stop(&h) != XDP_PASS && !why)
		why = "hold_rcu ran out of time";
	CHECK(!ip_batch_end(ip, ip_pid), "ip -batch failed");

	/* one second sweep for A, B and C */
	wait_settled(sweeps);
	for (i = 0; i < 2; i++) {
		CHECK(cache_entry(&late[i], &e) == 0,
		      "an entry resolved before the change of 10.%u.0.0/16 outlived it",
		      net + 1 + i);
		prime(&late[i], mac_gw2);
	}
	if (why)
		printf("# 10.%u.0.0/16 and the next three: the grace period did not hold: %s\n",
		       net, why);
	return !why;
}

#define QUEUED_TRIES 8

/*
 * Several first sweeps wait for one grace period. While the regrace thread
 * waits for the grace period after a change of X, held open by hold_rcu,
 * changes of A, B and C are swept once each and queued; an entry resolved
 * before its change is stored late in A and in B, as in race(), none in C.
 * The one second sweep after the next grace period must remove both: it
 * covers every queued prefix, and it is due by the fill count of the
 * earliest queued first sweep (C's own count has both late stores).
 */
static void test_second_sweep_covers_every_queued_change(void)
{
	int hook[2] = { -1, -1 }, held = 0, t;

	/* hold_rcu keeps a CPU busy: the others do the test's work. */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("needs two CPUs");
	/* Before silod starts: it stops at the hook only for the changes. */
	sh("for n in $(seq 100 %d); do ip route add 10.$n.0.0/16 via 10.2.0.2; done",
	   100 + 4 * QUEUED_TRIES - 1);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, hook)) {
		CHECK(0, "socketpair");
		goto out;
	}
	if (silod_restart("", hook[1])) {
		CHECK(0, "silod with the test hook");
		goto out;
	}
	close(hook[1]);
	hook[1] = -1;
	for (t = 0; t < QUEUED_TRIES && !held && !t_failures; t++) {
		held = queued_changes(hook[0], 100 + 4 * t);
		if (held < 0)
			break;
	}
out:
	if (hook[0] >= 0)
		close(hook[0]);
	if (hook[1] >= 0)
		close(hook[1]);
	CHECK(!silod_restart("", -1), "silod");
	sh("for n in $(seq 100 %d); do ip route del 10.$n.0.0/16; done",
	   100 + 4 * QUEUED_TRIES - 1);
	if (!held && !t_failures)
		SKIP("the grace period did not hold in %d tries", QUEUED_TRIES);
}

/* Every valid entry agrees with what bpf_fib_lookup says now. */
static int agree_cb(__u32 node, const struct silo_route_key *k,
		    const struct silo_route_entry *e, void *data)
{
	struct silo_route_entry fib;
	int *bad = data;

	(void)node;
	if (e->genid != genid_now())
		return 0; /* stale: never used */
	if (k->format & SILO_KEY_SOURCE) {
		/* The lab's sources are on-link: the check accepts. */
		*bad += e->verdict != 0;
		return 0;
	}
	if (silo_route_resolve(s, k, &fib) != BPF_FIB_LKUP_RET_SUCCESS ||
	    fib.ifindex != e->ifindex || memcmp(fib.dmac, e->dmac, 6) ||
	    memcmp(fib.smac, e->smac, 6))
		++*bad;
	return 0;
}

static void test_overrun_resync_leaves_cache_consistent(void)
{
	struct silo_daemon before, after;
	struct pkt_spec sp;
	char dst[32], path[] = "/tmp/silod-burst-XXXXXX";
	int i, bad = 0, fd, settled = 0;
	FILE *f;

	REQUIRE(!silod_restart("--rcvbuf 4096 --resync-interval-ms 20", -1),
		"silod with a tiny buffer");
	sh("ip route add 10.60.0.0/16 via 10.2.0.2");
	for (i = 0; i < 200; i++) {
		snprintf(dst, sizeof(dst), "10.60.%d.%d", i / 100, i % 100 + 1);
		sp = spec4(dst);
		prime(&sp, mac_gw);
	}
	before = daemon_counters();

	/* 50,000 changes: /32s for every cached destination and more,
	 * through the other gateway. */
	fd = mkstemp(path);
	REQUIRE(fd >= 0 && (f = fdopen(fd, "w")), "batch file");
	for (i = 0; i < 50000; i++)
		fprintf(f, "route add 10.60.%d.%d/32 via 10.2.0.3\n", i / 250,
			i % 250 + 1);
	fclose(f);
	REQUIRE(!sh("ip -batch %s", path), "ip -batch");
	unlink(path);

	/* settled: no new burst for 300 ms */
	for (i = 0; i < 200 && settled < 6; i++) {
		__u64 bursts = daemon_counters().bursts;

		usleep(50000);
		settled = daemon_counters().bursts == bursts ? settled + 1 : 0;
	}
	after = daemon_counters();
	printf("# overruns %llu, resyncs %llu, bursts %llu\n",
	       (unsigned long long)(after.overruns - before.overruns),
	       (unsigned long long)(after.resyncs - before.resyncs),
	       (unsigned long long)(after.bursts - before.bursts));
	CHECK(after.overruns > before.overruns, "no overrun detected");
	CHECK(after.resyncs > before.resyncs, "no resync after the overrun");
	REQUIRE(!silo_route_foreach(s, agree_cb, &bad), "foreach");
	CHECK_EQ(bad, 0);
	/* traffic again: every entry resolves through the new /32s */
	for (i = 0; i < 200; i++) {
		snprintf(dst, sizeof(dst), "10.60.%d.%d", i / 100, i % 100 + 1);
		sp = spec4(dst);
		prime(&sp, mac_gw2);
	}
	REQUIRE(!silo_route_foreach(s, agree_cb, &bad), "foreach");
	CHECK_EQ(bad, 0);
	sh("ip route flush 10.60.0.0/16 via 10.2.0.3 >/dev/null 2>&1");
	REQUIRE(!silod_restart("", -1), "silod");
}

static void test_sigkill_restart_fail_safe(void)
{
	struct pkt_spec sp = spec4("10.93.0.1");
	struct silo_daemon_info di;
	__u32 cache_id = pinned_map_id(silo_pin_dir(s), "route_cache_n0");
	__u32 genid_map = pinned_map_id(silo_pin_dir(s), "genid");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = pkt_build(pkt, &sp);
	pid_t churn;
	int status;

	sh("ip route add 10.93.0.0/16 via 10.2.0.2");
	prime(&sp, mac_gw);
	churn = fork();
	if (churn == 0) { /* unrelated route churn while silod dies */
		execl("/bin/sh", "sh", "-c",
		      "while :; do ip route replace 10.94.0.0/24 via 10.2.0.2;"
		      " ip route replace 10.94.0.0/24 via 10.2.0.3; done",
		      (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	status = silod_stop(silod_pid, SIGKILL);
	silod_pid = 0;
	CHECK(WIFSIGNALED(status), "silod did not die of SIGKILL");
	sh("ip route replace 10.93.0.0/16 via 10.2.0.3");
	usleep(400000); /* past the 200 ms timeout */

	REQUIRE(!silo_daemon_info(s, &di), "daemon info");
	CHECK(!di.running, "silod still counted as running");
	CHECK(!di.cache_trusted, "heartbeat not stale while silod is down");
	/* The cache still holds the old way, but silo stands aside: the
	 * stack forwards by the new one. */
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_no_daemon, 1);
	CHECK_EQ(r.d.cache_hit, 0);

	silod_pid = silod_start("", -1);
	REQUIRE(!silod_wait_ready(silod_pid), "silod did not come back");
	kill(churn, SIGKILL);
	waitpid(churn, NULL, 0);
	CHECK_EQ(pinned_map_id(silo_pin_dir(s), "route_cache_n0"), cache_id);
	CHECK_EQ(pinned_map_id(silo_pin_dir(s), "genid"), genid_map);
	REQUIRE(!silo_daemon_info(s, &di), "daemon info");
	CHECK(di.cache_trusted, "cache not trusted after the restart");
	prime(&sp, mac_gw2);
	expect_hit(&sp, mac_gw2);
	sh("ip route del 10.94.0.0/24 >/dev/null 2>&1");
}

static void test_sigterm_leaves_data_path(void)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct silo_daemon_info di;
	int status;

	status = silod_stop(silod_pid, SIGTERM);
	silod_pid = 0;
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "silod exited with status %d", status);
	CHECK(!bpf_xdp_query(in0, 0, &q) && q.prog_id, "XDP detached");
	CHECK(!silo_daemon_info(s, &di) && !di.running,
	      "pins gone or silod still counted as running");
	/* No silod, no invalidation: the cache must not be used now, not
	 * only once the heartbeat is old. */
	CHECK_EQ(di.heartbeat.last_ns, 0);
	silod_pid = silod_start("", -1);
	REQUIRE(!silod_wait_ready(silod_pid), "silod did not come back");
}

static void run_on_cpu(int cpu, const struct pkt_spec *sp, struct result *r)
{
	cpu_set_t set, old;
	uint8_t pkt[PKT_MAX];
	size_t len = pkt_build(pkt, sp);

	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	run_pkt(pkt, len, r);
	sched_setaffinity(0, sizeof(old), &old);
}

struct node_find {
	const struct pkt_spec *sp;
	__u64 genid; /* 0: any entry; else only entries of this genid */
	__u32 nodes; /* bit per node holding the entry */
};

static int node_cb(__u32 node, const struct silo_route_key *k,
		   const struct silo_route_entry *e, void *data)
{
	struct node_find *f = data;

	if (!memcmp(k->dst, f->sp->dst, 16) && k->ifindex == in0 &&
	    (!f->genid || e->genid == f->genid))
		f->nodes |= 1U << node;
	return 0;
}

static __u32 nodes_of(const struct pkt_spec *sp)
{
	struct node_find f = { .sp = sp };

	silo_route_foreach(s, node_cb, &f);
	return f.nodes;
}

/* The nodes whose cache holds an entry for sp that the data path uses. */
static __u32 nodes_current(const struct pkt_spec *sp)
{
	struct node_find f = { .sp = sp, .genid = genid_now() };

	silo_route_foreach(s, node_cb, &f);
	return f.nodes;
}

/*
 * Fakes two nodes through the config file and SIGHUP: CPU 0 on node 0,
 * CPU 1 on node 1. Applied: two caches, and genid bumped after them.
 */
static int fake_two_nodes(void)
{
	struct silo_info info = {};
	__u64 g = genid_now();
	FILE *f;
	int i;

	f = fopen(config_path, "w");
	if (!f)
		return -1;
	fprintf(f, "# faked: CPU 0 on node 0, CPU 1 on node 1\n"
		   "cpu-nodes = 0:0,1:1\n");
	fclose(f);
	kill(silod_pid, SIGHUP);
	for (i = 0; i < 200; i++) {
		if (!silo_info(s, &info) && info.nr_nodes == 2 &&
		    info.genid != g)
			break;
		usleep(10000);
	}
	if (info.nr_nodes != 2 || info.genid == g)
		return -1;
	silod_quiet();
	return 0;
}

static void test_two_nodes_each_cpu_its_own_cache(void)
{
	struct pkt_spec a = spec4("10.99.5.1"), b = spec4("10.99.5.2");
	struct result r;
	FILE *f;

	if (silo_nr_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("needs two CPUs");
	REQUIRE(!fake_two_nodes(), "SIGHUP did not apply the config");

	run_on_cpu(0, &a, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	run_on_cpu(1, &b, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	CHECK_EQ(nodes_of(&a), 1);
	CHECK_EQ(nodes_of(&b), 2);
	run_on_cpu(0, &a, &r);
	CHECK_EQ(r.d.cache_hit, 1);
	run_on_cpu(1, &b, &r);
	CHECK_EQ(r.d.cache_hit, 1);
	/* the other CPU's node has its own cache: a miss there */
	run_on_cpu(1, &a, &r);
	CHECK_EQ(r.d.cache_miss, 1);
	CHECK_EQ(nodes_of(&a), 3);

	f = fopen(config_path, "w");
	if (f)
		fclose(f);
}

/*
 * A route change while both nodes' caches hold the route: each insert was
 * logged with the node whose cache took it, so the sweep removes the entry
 * from both caches, and a packet on either CPU resolves the new route.
 */
static void test_two_nodes_route_change_sweeps_both(void)
{
	struct pkt_spec sp = spec4("10.86.0.1");
	struct result r;
	__u64 sweeps;
	FILE *f;
	int cpu;

	if (silo_nr_cpus() < 2 || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("needs two CPUs");
	REQUIRE(!fake_two_nodes(), "SIGHUP did not apply the config");
	if (sh("ip route add 10.86.0.0/16 via 10.2.0.2")) {
		CHECK(0, "route add");
		goto out;
	}
	silod_quiet();
	for (cpu = 0; cpu < 2; cpu++) {
		run_on_cpu(cpu, &sp, &r);
		check_forwarded(&sp, &r, mac_gw);
	}
	if (nodes_current(&sp) != 3) {
		CHECK(0, "not both nodes' caches hold the entry (%#x)",
		      nodes_current(&sp));
		goto out;
	}

	sweeps = daemon_counters().sweeps;
	CHECK(!sh("ip route replace 10.86.0.0/16 via 10.2.0.3"), "replace");
	wait_settled(sweeps);
	CHECK(nodes_current(&sp) == 0,
	      "an entry of the replaced route is still used (nodes %#x)",
	      nodes_current(&sp));
	for (cpu = 0; cpu < 2; cpu++) {
		run_on_cpu(cpu, &sp, &r);
		check_forwarded(&sp, &r, mac_gw2);
		CHECK(r.d.cache_hit == 0, "CPU %d: a hit on the old route",
		      cpu);
	}
out:
	sh("ip route del 10.86.0.0/16");
	f = fopen(config_path, "w");
	if (f)
		fclose(f);
}

/*
 * A change shorter than the index's buckets (/24, /64) removes what each
 * bucket it covers holds inside it, and nothing else: looked up bucket by
 * bucket (a /23, a /62) or through a walk of the buckets (a /40).
 */
static void test_prefixes_shorter_than_buckets(void)
{
	struct pkt_spec a = spec4("10.87.0.1"), b = spec4("10.87.1.1"),
			c = spec4("10.87.2.1"), a6 = spec6("fd87:0:0:1::1"),
			b6 = spec6("fd87:0:0:2::1"), c6 = spec6("fd87:0:1::1"),
			d6 = spec6("fd87:0:100::1");
	struct silo_route_entry e;
	__u64 sweeps;

	prime(&a, mac_gw);
	prime(&b, mac_gw);
	prime(&c, mac_gw);
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip route add 10.87.0.0/23 via 10.2.0.3"), "route add");
	CHECK(wait_gone(&a), "entry in the /23's first /24 survived");
	CHECK(wait_gone(&b), "entry in the /23's second /24 survived");
	wait_settled(sweeps);
	CHECK(cache_entry(&c, &e) == 1, "entry outside the /23 went");
	expect_hit(&c, mac_gw);
	prime(&a, mac_gw2);

	prime(&a6, mac_gw);
	prime(&b6, mac_gw);
	prime(&c6, mac_gw);
	prime(&d6, mac_gw);
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip -6 route add fd87::/62 via fd02::3"), "route add");
	CHECK(wait_gone(&a6), "entry inside the /62 survived");
	CHECK(wait_gone(&b6), "entry inside the /62 survived");
	wait_settled(sweeps);
	CHECK(cache_entry(&c6, &e) == 1, "entry outside the /62 went");
	CHECK(cache_entry(&d6, &e) == 1, "entry outside the /62 went");
	prime(&a6, mac_gw2);

	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip -6 route add fd87::/40 via fd02::3"), "route add");
	CHECK(wait_gone(&c6), "entry inside the /40 survived");
	CHECK(wait_gone(&a6), "entry inside the /40 survived");
	wait_settled(sweeps);
	CHECK(cache_entry(&d6, &e) == 1, "entry outside the /40 went");
	expect_hit(&d6, mac_gw);
	sh("ip route del 10.87.0.0/23; ip -6 route del fd87::/62;"
	   " ip -6 route del fd87::/40");
	silod_quiet();
}

/*
 * Past its limit the index is built again from a walk of the cache (and at
 * startup, from entries silod did not see logged): a change still removes
 * exactly what its prefix holds.
 */
static void test_index_rebuilt_past_its_limit(void)
{
	struct pkt_spec out = spec4("10.87.9.1"), sp[12];
	struct silo_route_entry e;
	__u64 rebuilds, sweeps;
	char dst[32];
	int i;

	for (i = 0; i < 12; i++) {
		snprintf(dst, sizeof(dst), "10.87.8.%d", i + 1);
		sp[i] = spec4(dst);
		prime(&sp[i], mac_gw);
	}
	/* Cached before this silod: it finds them by its startup walk. */
	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start_env("", -1, "SILOD_TEST_INDEX_LIMIT=8");
	REQUIRE(!silod_wait_ready(silod_pid), "silod with a small index");
	rebuilds = daemon_counters().index_rebuilds;
	CHECK(rebuilds >= 1, "no index built at startup");
	for (i = 0; i < 12; i++)
		prime(&sp[i], mac_gw);
	prime(&out, mac_gw);
	/* An unrelated change drains the log: past the limit, a rebuild. */
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip route add 10.87.10.0/24 via 10.2.0.3"), "route add");
	wait_settled(sweeps);
	CHECK(daemon_counters().index_rebuilds > rebuilds,
	      "the index was not built again past its limit");
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip route add 10.87.8.0/24 via 10.2.0.3"), "route add");
	for (i = 0; i < 12; i++)
		CHECK(wait_gone(&sp[i]), "entry %d of the prefix survived", i);
	wait_settled(sweeps);
	CHECK(cache_entry(&out, &e) == 1, "entry outside the prefix went");
	expect_hit(&out, mac_gw);
	sh("ip route del 10.87.8.0/24; ip route del 10.87.10.0/24");
	REQUIRE(!silod_restart("", -1), "silod");
}

static int wait_src_checked(const char *addr, __u32 len, int want)
{
	int i;

	for (i = 0; i < 200 && fwd_src_checked(addr, len) != want; i++)
		usleep(10000);
	return fwd_src_checked(addr, len) == want;
}

/*
 * src_checked follows the routes and addresses as they come and go: a
 * local route (AnyIP) in any table, an address; its sources then take the
 * full check (a rule sends every lookup to that table first: the kernel
 * refuses them), and a source outside none.
 */
static void test_src_checked_follows_routes(void)
{
	struct pkt_spec sp = spec4("10.99.6.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	REQUIRE(!sh("ip rule add from all lookup 62 pref 62 && "
		    "ip route add local 10.62.0.0/16 dev lo table 62"),
		"local route in table 62");
	CHECK(wait_src_checked("10.62.0.0", 16, 1),
	      "the local route's prefix did not come");
	silod_quiet();
	v4(sp.src, "10.62.0.9");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_local_src, 1);
	v4(sp.src, "10.1.0.9");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_REDIRECT);
	CHECK_EQ(r.d.src_miss + r.d.src_hit, 0);

	REQUIRE(!sh("ip addr add 10.63.0.1/32 dev lo"), "address");
	CHECK(wait_src_checked("10.63.0.1", 32, 1), "the address did not come");
	/* local_addrs and its filter, local_bits, came first. */
	sp = spec4("10.63.0.1");
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	CHECK_EQ(r.d.pass_local, 1);
	REQUIRE(!sh("ip addr del 10.63.0.1/32 dev lo && "
		    "ip route del local 10.62.0.0/16 dev lo table 62 && "
		    "ip rule del pref 62"),
		"clean up");
	CHECK(wait_src_checked("10.62.0.0", 16, 0),
	      "the local route's prefix stayed");
	CHECK(wait_src_checked("10.63.0.1", 32, 0), "the address stayed");
	silod_quiet();
}

static int wait_direct_skip(__u8 kind, const char *addr, __u32 len, int want)
{
	int i;

	for (i = 0; i < 200 && fwd_direct_skip(kind, addr, len) != want; i++)
		usleep(10000);
	return fwd_direct_skip(kind, addr, len) == want;
}

/* src (NULL: the spec's) -> dst: forwarded through gw. */
static void forwarded_via(const char *src, const char *dst, const uint8_t *gw)
{
	struct pkt_spec sp = spec4(dst);
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	if (src)
		v4(sp.src, src);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, gw);
}

/*
 * direct_skip follows the rules and the local table as they come and go:
 * a rule "from" a prefix before main's, a route of the local table, a
 * route of a table a rule looks every packet up in; a packet of each then
 * takes the rules' table, the kernel's answer.
 */
static void test_direct_skip_follows_rules(void)
{
	REQUIRE(!sh("ip route add 10.98.0.0/16 via 10.2.0.3 table 64 && "
		    "ip rule add from 10.64.0.0/16 lookup 64 pref 64"),
		"rule 64");
	CHECK(wait_direct_skip(SILO_DIRECT_SRC_V4, "10.64.0.0", 16, 1),
	      "the rule's prefix did not come");
	REQUIRE(!sh("ip route add 10.98.9.0/24 via 10.2.0.3 table local"),
		"local table route");
	CHECK(wait_direct_skip(SILO_DIRECT_DST_V4, "10.98.9.0", 24, 1),
	      "the local table's route did not come");
	silod_quiet();
	forwarded_via("10.64.0.9", "10.98.1.1", mac_gw2);
	forwarded_via(NULL, "10.98.9.1", mac_gw2);
	/* A table a rule looks every packet up in: its routes, added
	 * after the rule, come too. */
	REQUIRE(!sh("ip rule add lookup 65 pref 65"), "rule 65");
	silod_quiet();
	REQUIRE(!sh("ip route add 10.98.10.0/24 via 10.2.0.3 table 65"),
		"table 65");
	CHECK(wait_direct_skip(SILO_DIRECT_DST_V4, "10.98.10.0", 24, 1),
	      "the route of the rule's table did not come");
	silod_quiet();
	forwarded_via(NULL, "10.98.10.1", mac_gw2);
	REQUIRE(!sh("ip route del 10.98.9.0/24 table local && "
		    "ip rule del pref 64 && ip route flush table 64 && "
		    "ip rule del pref 65 && ip route flush table 65"),
		"clean up");
	CHECK(wait_direct_skip(SILO_DIRECT_SRC_V4, "10.64.0.0", 16, 0),
	      "the rule's prefix stayed");
	CHECK(wait_direct_skip(SILO_DIRECT_DST_V4, "10.98.9.0", 24, 0),
	      "the local table's route stayed");
	CHECK(wait_direct_skip(SILO_DIRECT_DST_V4, "10.98.10.0", 24, 0),
	      "the rule's table's route stayed");
	silod_quiet();
	forwarded_via(NULL, "10.98.9.2", mac_gw);
}

/*
 * A flow forwarded from route_hot, this CPU's copy of its entry: the sweep
 * of a route change moves genid.sweeps, and the copy goes with the entry
 * (the packet after the change takes the new route). On one CPU: the
 * copies are per CPU.
 */
static void test_hot_copy_follows_route_change(void)
{
	struct pkt_spec sp = spec4("10.85.1.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	cpu_set_t all;
	__u64 sweeps;

	REQUIRE(!fwd_run_on_cpu0(&all), "run on CPU 0");
	REQUIRE(!sh("ip route add 10.85.0.0/16 via 10.2.0.2"), "route add");
	silod_quiet();
	CHECK_EQ(forward_through(&sp, mac_gw).cache_miss, 1);
	CHECK_EQ(forward_through(&sp, mac_gw).cache_hit, 1); /* copied */
	CHECK_EQ(forward_through(&sp, mac_gw).cache_hit, 1); /* the copy */
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip route replace 10.85.0.0/16 via 10.2.0.3"), "replace");
	CHECK(wait_gone(&sp), "entry survived the replace");
	wait_settled(sweeps);
	CHECK_EQ(forward_through(&sp, mac_gw2).fib_success, 1);
	CHECK_EQ(forward_through(&sp, mac_gw2).cache_hit, 1);
	CHECK_EQ(forward_through(&sp, mac_gw2).cache_hit, 1);
	sweeps = daemon_counters().sweeps;
	REQUIRE(!sh("ip route del 10.85.0.0/16"), "route del");
	CHECK(wait_gone(&sp), "entry survived the delete");
	wait_settled(sweeps);
	/* No route: the stack's (an ICMP error), not the copy's. */
	run_pkt(pkt, pkt_build(pkt, &sp), &r);
	CHECK_EQ(r.verdict, XDP_PASS);
	sched_setaffinity(0, sizeof(all), &all);
}

int main(void)
{
	if (test_init())
		return 1;
	/* No DAD: its end (seconds after setup) brings an address and a
	 * route message, which would fall into a test's window at random. */
	if (sh("sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0"))
		return 1;
	if (fwd_setup("ip route add 10.99.0.0/16 via 10.2.0.2\n"
		      "ip route add 10.98.0.0/16 via 10.2.0.2\n"
		      "ip -6 route add fd99::/64 via fd02::2\n"
		      "ip -6 route add fd98::/64 via fd02::2\n"
		      "ip route add 10.87.0.0/16 via 10.2.0.2\n"
		      "ip -6 route add fd87::/32 via fd02::2\n") ||
	    store_open()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	if (silod_boot())
		return 1;
	RUN(test_route_changes_scoped_ipv4);
	RUN(test_route_changes_scoped_ipv6);
	RUN(test_neighbour_mac_change);
	RUN(test_rule_change_bumps_genid);
	RUN(test_source_entries_swept);
	RUN(test_device_change_reaches_the_copies);
	RUN(test_src_checked_follows_routes);
	RUN(test_direct_skip_follows_rules);
	RUN(test_hot_copy_follows_route_change);
	RUN(test_prefix_boundaries_ipv4);
	RUN(test_prefix_boundaries_ipv6);
	RUN(test_host_routes_replaced);
	RUN(test_prefixes_shorter_than_buckets);
	RUN(test_index_rebuilt_past_its_limit);
	RUN(test_race_entry_resolved_before_change_is_removed);
	RUN(test_race_without_second_sweep_is_seen);
	RUN(test_second_sweep_covers_every_queued_change);
	RUN(test_overrun_resync_leaves_cache_consistent);
	RUN(test_sigkill_restart_fail_safe);
	RUN(test_sigterm_leaves_data_path);
	RUN(test_two_nodes_each_cpu_its_own_cache);
	RUN(test_two_nodes_route_change_sweeps_both);
	if (silod_stop(silod_pid, SIGTERM) != 0)
		printf("not ok - silod exit: not clean (a sanitizer report?)\n");
	silo_test__destroy(store_skel);
	fwd_teardown();
	unlink(config_path);
	return 0;
}
