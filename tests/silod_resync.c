// SPDX-License-Identifier: GPL-2.0
/*
 * silod never leaves the route cache trusted when invalidations may have
 * been lost: an overrun bumps genid and resyncs; a failed resync (injected
 * with SILOD_TEST_FAIL_RESYNC) bumps genid anyway, stops the heartbeat and is
 * retried until it works; a truncated netlink read counts as lost messages
 * (SILOD_TEST_RECV_BUF); a process that reused silod's pid is not silod; and
 * silod refuses a time namespace whose clocks are not the kernel's.
 */
#include "silod_util.h"

/* Polls cond for up to 4 s; its last value. */
#define WAIT_FOR(cond)                                  \
	({                                              \
		int _i;                                 \
		for (_i = 0; _i < 800 && !(cond); _i++) \
			usleep(5000);                   \
		(cond);                                 \
	})

static __u64 heartbeat_ns(void)
{
	struct silo_daemon_info di;

	return silo_daemon_info(s, &di) ? ~0ULL : di.heartbeat.last_ns;
}

/*
 * ~4000 scoped route changes that touch nothing cached, and in their middle
 * the replace of prefix (cached through the first gateway), while silod
 * waits in its test hook after the first sweep of an unrelated change: its
 * tiny receive buffer overflows for sure, and the replace is lost (a few
 * messages fit). Only the overrun's bump and resync can keep the entry of
 * the replaced route from being used. The hook is closed afterwards.
 */
static int churn_overrun(int hook, const char *prefix, unsigned int net)
{
	char path[] = "/tmp/silod-churn-XXXXXX", c;
	int fd, i, err = -1;
	FILE *f;

	fd = mkstemp(path);
	if (fd < 0)
		goto out;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		goto out_unlink;
	}
	for (i = 0; i < 4000; i++) {
		if (i == 2000)
			fprintf(f, "route replace %s via 10.2.0.3\n", prefix);
		fprintf(f, "route add 10.%u.%d.%d/32 via 10.2.0.2\n", net,
			i / 250, i % 250 + 1);
	}
	fclose(f);
	if (sh("ip route add 10.%u.255.0/24 via 10.2.0.2", net) ||
	    read(hook, &c, 1) != 1)
		goto out_unlink;
	err = sh("ip -batch %s", path);
	if (write(hook, "G", 1) != 1)
		err = -1;
out_unlink:
	unlink(path);
out:
	close(hook);
	return err;
}

/* silod with a tiny buffer, its test hook and env; prefix already routed
 * (before it starts, so that only the trigger reaches the hook). */
static int start_hooked(const char *extra, const char *env, int *hook)
{
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp))
		return -1;
	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start_env(extra, sp[1], env);
	close(sp[1]);
	*hook = sp[0];
	if (silod_wait_ready(silod_pid)) {
		close(sp[0]);
		return -1;
	}
	return 0;
}

/* The entry cached for sp before the replace is not used any more. */
static void check_replaced(const struct pkt_spec *sp)
{
	struct silo_route_entry e;

	if (cache_entry(sp, &e) == 1)
		CHECK(e.genid != genid_now(),
		      "the entry of the replaced route is still valid");
	CHECK_EQ(forward_through(sp, mac_gw2).cache_hit, 0);
	expect_hit(sp, mac_gw2);
}

static void test_overrun_bumps_genid_and_replaced_route_unused(void)
{
	struct pkt_spec sp = spec4("10.61.0.1");
	struct silo_daemon before, after;
	int hook;
	__u64 g;

	REQUIRE(!sh("ip route add 10.61.0.0/16 via 10.2.0.2"), "route");
	REQUIRE(!start_hooked("--rcvbuf 4096 --resync-interval-ms 20", NULL,
			      &hook),
		"silod with a tiny buffer");
	prime(&sp, mac_gw);
	expect_hit(&sp, mac_gw);
	before = daemon_counters();
	g = genid_now();
	REQUIRE(!churn_overrun(hook, "10.61.0.0/16", 62), "churn");
	silod_quiet();
	after = daemon_counters();
	printf("# overruns %llu, resyncs %llu\n",
	       (unsigned long long)(after.overruns - before.overruns),
	       (unsigned long long)(after.resyncs - before.resyncs));
	REQUIRE(after.overruns > before.overruns,
		"no overrun: the churn did not overrun silod");
	CHECK(after.resyncs > before.resyncs, "no resync after the overrun");
	CHECK(genid_now() != g, "genid not bumped after lost messages");
	check_replaced(&sp);
	sh("ip route flush 10.62.0.0/16; ip route del 10.61.0.0/16");
	REQUIRE(!silod_restart("", -1), "silod");
}

static void test_failed_resync_bumps_stops_heartbeat_and_is_retried(void)
{
	struct pkt_spec sp = spec4("10.63.0.1");
	struct silo_daemon before, mid;
	int hook;
	__u64 g;

	REQUIRE(!sh("ip route add 10.63.0.0/16 via 10.2.0.2"), "route");
	/* The first resync (at start) works, the next three fail. */
	REQUIRE(!start_hooked("--rcvbuf 4096 --resync-interval-ms 200",
			      "SILOD_TEST_FAIL_RESYNC=3@1", &hook),
		"silod did not start");
	prime(&sp, mac_gw);
	expect_hit(&sp, mac_gw);
	before = daemon_counters();
	g = genid_now();
	REQUIRE(!churn_overrun(hook, "10.63.0.0/16", 64), "churn");

	/* While the resync fails: genid bumped, no heartbeat. */
	CHECK(WAIT_FOR(heartbeat_ns() == 0),
	      "the heartbeat went on while the resync failed");
	mid = daemon_counters();
	CHECK(mid.overruns > before.overruns,
	      "no overrun: the churn did not overrun silod");
	CHECK_EQ(mid.resyncs, before.resyncs);
	CHECK(genid_now() != g, "genid not bumped before the failing resync");
	/* Then it is tried again until it works, and silod beats again. */
	CHECK(WAIT_FOR(daemon_counters().resyncs > before.resyncs),
	      "the failed resync was not tried again");
	CHECK(WAIT_FOR(heartbeat_ns() != 0 && heartbeat_ns() != ~0ULL),
	      "no heartbeat after the resync succeeded");
	silod_quiet();
	check_replaced(&sp);
	sh("ip route flush 10.64.0.0/16; ip route del 10.63.0.0/16");
	REQUIRE(!silod_restart("", -1), "silod");
}

static void test_failed_first_resync_is_retried(void)
{
	struct silo_daemon_info di;
	int i, unsynced = 0;

	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start_env("--resync-interval-ms 100", -1,
				    "SILOD_TEST_FAIL_RESYNC=3");
	/* Running, not yet resynced: no heartbeat. */
	for (i = 0; i < 800; i++) {
		if (!silo_daemon_info(s, &di) && di.running &&
		    di.state.pid == (__u32)silod_pid) {
			if (di.state.resyncs)
				break;
			unsynced++;
			CHECK(!di.heartbeat.last_ns,
			      "a heartbeat before any resync succeeded");
			if (di.heartbeat.last_ns)
				break;
		}
		usleep(5000);
	}
	CHECK(unsynced > 0, "never saw silod before its resync succeeded");
	REQUIRE(!silod_wait_ready(silod_pid), "silod gave up");
	di.state = daemon_counters();
	CHECK_EQ(di.state.resyncs, 1);
	/* Three failed resyncs bumped first, the good one first and last. */
	CHECK(di.state.genid_bumps >= 5, "genid bumped %llu times, want 5",
	      (unsigned long long)di.state.genid_bumps);
}

static void test_truncated_message_resyncs(void)
{
	struct silo_daemon before;

	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start_env("", -1, "SILOD_TEST_RECV_BUF=256");
	REQUIRE(!silod_wait_ready(silod_pid), "silod did not start");
	silod_quiet();
	before = daemon_counters();
	/* A link message is larger than 256 bytes. */
	REQUIRE(!sh("ip link add silodtr0 type veth peer name silodtr1"),
		"veth link");
	CHECK(WAIT_FOR(daemon_counters().overruns > before.overruns &&
		       daemon_counters().resyncs > before.resyncs),
	      "a truncated message went unnoticed");
	sh("ip link del silodtr0");
	REQUIRE(!silod_restart("", -1), "silod");
}

/* starttime, field 22 of /proc/PID/stat. */
static __u64 start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p, " %llu", &t);
	return t;
}

static int write_daemon(const struct silo_daemon *st)
{
	char path[PATH_MAX];
	__u32 zero = 0;
	int fd, err;

	snprintf(path, sizeof(path), "%s/daemon", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	err = bpf_map_update_elem(fd, &zero, st, BPF_ANY);
	close(fd);
	return err;
}

static bool daemon_running(void)
{
	struct silo_daemon_info di;

	return !silo_daemon_info(s, &di) && di.running;
}

static void test_pid_reuse_is_not_silod(void)
{
	char dir[] = "/tmp/silod-impostor-XXXXXX", bin[PATH_MAX];
	struct silo_daemon st;
	pid_t imp;

	/* silod dies; a later process named silod* takes its place. */
	st = daemon_counters();
	REQUIRE(st.start_ticks, "silod recorded no start time");
	silod_stop(silod_pid, SIGKILL);
	silod_pid = 0;
	REQUIRE(mkdtemp(dir), "mkdtemp");
	snprintf(bin, sizeof(bin), "%s/silod", dir);
	REQUIRE(!symlink("/bin/sleep", bin), "symlink");
	imp = fork();
	if (imp == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(bin, "silod", "30", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	st.pid = imp;
	REQUIRE(!write_daemon(&st), "daemon map");
	CHECK(!daemon_running(),
	      "a process that reused silod's pid counts as silod");
	/* The control: with its own start time it passes for silod, so only
	 * the start time told them apart. */
	st.start_ticks = start_ticks(imp);
	REQUIRE(!write_daemon(&st), "daemon map");
	CHECK(daemon_running(),
	      "the impostor does not pass for silod at all: the test proves nothing");
	kill(imp, SIGKILL);
	waitpid(imp, NULL, 0);
	unlink(bin);
	rmdir(dir);
	st.pid = 0;
	write_daemon(&st);
	silod_pid = silod_start("", -1);
	REQUIRE(!silod_wait_ready(silod_pid), "silod did not come back");
}

static void test_time_namespace_refused(void)
{
	char out[] = "/tmp/silod-timens-XXXXXX";
	int fd, rc;

	fd = mkstemp(out);
	REQUIRE(fd >= 0, "mkstemp");
	close(fd);
	if (sh("unshare --time --monotonic 1000 --fork true 2>/dev/null")) {
		unlink(out);
		SKIP("no time namespaces (unshare --time)");
	}
	/* Exit status 1 expected: the shell turns it into success. */
	rc = sh("unshare --time --monotonic 1000 --fork %s/silod --pin-root %s --config %s -q >%s 2>&1; test $? = 1",
		getenv("BUILD"), test_pin_root(), config_path, out);
	CHECK(rc == 0, "silod did not exit with status 1");
	CHECK(!sh("grep -q 'time namespace' %s", out),
	      "silod did not say why it refused");
	sh("sed 's/^/# /' %s", out);
	unlink(out);
	CHECK(daemon_running(), "the running silod was disturbed");
}

int main(void)
{
	if (test_init())
		return 1;
	/* No DAD: its end brings messages at a random moment. */
	if (sh("sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0"))
		return 1;
	if (fwd_setup(NULL)) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	if (silod_boot())
		return 1;
	RUN(test_overrun_bumps_genid_and_replaced_route_unused);
	RUN(test_failed_resync_bumps_stops_heartbeat_and_is_retried);
	RUN(test_failed_first_resync_is_retried);
	RUN(test_truncated_message_resyncs);
	RUN(test_pid_reuse_is_not_silod);
	RUN(test_time_namespace_refused);
	if (silod_stop(silod_pid, SIGTERM) != 0)
		printf("not ok - silod exit: not clean (a sanitizer report?)\n");
	fwd_teardown();
	unlink(config_path);
	return 0;
}
