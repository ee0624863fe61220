// SPDX-License-Identifier: GPL-2.0
/*
 * What the route cache key holds (genid's flags), decided from the rules,
 * routes and sysctls: the library's computation for each configuration
 * (silo_sync_genid, as a load or silod calls it), what "silo genid show" and
 * "silo xdp status" print of it, and silod following changes: a change that
 * makes a field matter is keyed in the burst that brings it (its lazy poll
 * is made too slow to explain it), one that makes it stop mattering within
 * a poll, and ordinary routes cost no route dump.
 */
#include <fcntl.h>
#include "silod_util.h"
#include "../user/lib/silod.h"

#define KEY(f) ((f)&SILO_GENID_KEY_MASK)
#define SRC4 SILO_GENID_KEY_SRC_V4
#define SRC6 SILO_GENID_KEY_SRC_V6
#define L4 SILO_GENID_KEY_L4
#define LABEL SILO_GENID_KEY_FLOWLABEL
/* Every bit the configuration sets, less the hash policies'. */
#define CONFIG_BITS                                                            \
	(SILO_GENID_KEY_MASK | SILO_GENID_RULES_L4 | SILO_GENID_RULES_SRC_V4 | \
	 SILO_GENID_RULES_SRC_V6 | SILO_GENID_ROUTES_BITS)

static int genid_fd = -1;
static char log_path[] = "/tmp/silod-keyflags-XXXXXX";
static bool silod_unclean;
static bool has_compat_mode;

static struct silo_genid genid_read(void)
{
	struct silo_genid g = {};
	__u32 zero = 0;

	bpf_map_lookup_elem(genid_fd, &zero, &g);
	return g;
}

/* Syncs what, as a load or silod does; the flags and how far genid went. */
static __u32 sync_flags(unsigned int what, long long *bumps)
{
	struct silo_genid a = genid_read(), b;
	int err;

	err = silo_sync_genid(genid_fd, -1, -1, -1, what);
	if (err)
		printf("# silo_sync_genid(%#x): %s\n", what, strerror(-err));
	b = genid_read();
	*bumps = b.genid - a.genid;
	return b.flags;
}

static void test_nothing_keys_destination_only(void)
{
	long long bumps;
	__u32 f;

	f = sync_flags(SILO_SYNC_ALL, &bumps);
	CHECK_EQ(f & CONFIG_BITS, 0);
	/* IPv6's default hash takes the label: without a multipath route
	 * it does not matter. */
	CHECK(f & SILO_GENID_HASH_FLOWLABEL, "hash_flowlabel not set");
	f = sync_flags(SILO_SYNC_ALL, &bumps);
	CHECK_EQ(bumps, 0); /* no change, no bump */
}

/* cmd makes the key want (with why); undo takes it back to nothing. Each
 * change moves genid by one, flags written before. */
static void key_case(const char *cmd, unsigned int what, __u32 want, __u32 why,
		     const char *undo)
{
	long long bumps;
	__u32 f;

	if (sh("%s", cmd)) {
		t_fail(__FILE__, __LINE__, "%s", cmd);
		return;
	}
	f = sync_flags(what, &bumps);
	CHECK(KEY(f) == want, "'%s': key %#x, want %#x", cmd, KEY(f), want);
	CHECK((f & why) == why, "'%s': flags %#x lack %#x", cmd, f, why);
	CHECK(bumps == (want ? 1 : 0), "'%s': genid moved %lld", cmd, bumps);
	sh("%s", undo);
	f = sync_flags(what, &bumps);
	CHECK(!(f & CONFIG_BITS), "'%s' undone: flags %#x left", cmd, f);
	CHECK(bumps == (want ? 1 : 0), "'%s' undone: genid moved %lld", cmd,
	      bumps);
}

static void test_rules(void)
{
	key_case("ip rule add from 10.9.0.0/16 lookup 100 pref 1000",
		 SILO_SYNC_RULES, SRC4, SILO_GENID_RULES_SRC_V4,
		 "ip rule del pref 1000");
	key_case("ip -6 rule add from fd09::/64 lookup 100 pref 1000",
		 SILO_SYNC_RULES, SRC6, SILO_GENID_RULES_SRC_V6,
		 "ip -6 rule del pref 1000");
	key_case("ip rule add ipproto udp lookup 100 pref 1000",
		 SILO_SYNC_RULES, L4, SILO_GENID_RULES_L4,
		 "ip rule del pref 1000");
	key_case("ip rule add dport 53 lookup 100 pref 1000", SILO_SYNC_RULES,
		 L4, SILO_GENID_RULES_L4, "ip rule del pref 1000");
	key_case("ip -6 rule add sport 1000-2000 lookup 100 pref 1000",
		 SILO_SYNC_RULES, L4, SILO_GENID_RULES_L4,
		 "ip -6 rule del pref 1000");
	/* A destination prefix is in every key already. */
	key_case("ip rule add to 10.9.0.0/16 lookup 100 pref 1000",
		 SILO_SYNC_RULES, 0, 0, "ip rule del pref 1000");
}

static void set_policy(const char *family, int policy, int fields)
{
	sh("sysctl -qw net.%s.fib_multipath_hash_policy=%d", family, policy);
	if (fields >= 0)
		sh("sysctl -qw net.%s.fib_multipath_hash_fields=%d", family,
		   fields);
}

static bool has_hash_fields(void)
{
	return !access("/proc/sys/net/ipv4/fib_multipath_hash_fields", F_OK);
}

static void test_ipv4_multipath(void)
{
	long long bumps;
	__u32 f;

	REQUIRE(!sh("ip route add 10.77.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3"),
		"multipath route");
	/* Only what is asked is read. */
	f = sync_flags(SILO_SYNC_RULES | SILO_SYNC_SYSCTLS, &bumps);
	CHECK_EQ(KEY(f), 0);
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(KEY(f), SRC4);
	CHECK(f & SILO_GENID_MPATH_V4, "mpath_v4 not set");
	CHECK(!(f & SILO_GENID_MPATH_V6), "mpath_v6 set");
	CHECK_EQ(bumps, 1);
	/* Every IPv4 hash takes the source; policy 1 the ports too. */
	set_policy("ipv4", 1, -1);
	f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
	CHECK_EQ(KEY(f), SRC4 | L4);
	CHECK(f & SILO_GENID_HASH_L4, "hash_l4 not set");
	CHECK_EQ(bumps, 1);
	if (has_hash_fields()) {
		set_policy("ipv4", 3, 0x0037); /* addresses, proto, ports */
		f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
		CHECK_EQ(KEY(f), SRC4 | L4);
		set_policy("ipv4", 3, 0x0003); /* addresses only */
		f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
		CHECK_EQ(KEY(f), SRC4);
	}
	/* Another family's hash on ports does not count. */
	set_policy("ipv4", 0, -1);
	set_policy("ipv6", 1, -1);
	f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
	CHECK_EQ(KEY(f), SRC4);
	set_policy("ipv6", 0, -1);
	/* The hash on ports without a multipath route: nothing. */
	sh("ip route del 10.77.0.0/16");
	set_policy("ipv4", 1, -1);
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(KEY(f), 0);
	CHECK_EQ(f & CONFIG_BITS, 0);
	CHECK(f & SILO_GENID_HASH_L4, "hash_l4 not set");
	CHECK_EQ(bumps, 1);
	set_policy("ipv4", 0, -1);
	sync_flags(SILO_SYNC_ALL, &bumps);
}

static void test_ipv6_multipath(void)
{
	long long bumps;
	__u32 f;

	REQUIRE(!sh("ip -6 route add fd77::/64 nexthop via fd02::2 nexthop via fd02::3"),
		"multipath route");
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	/* Policy 0: addresses, flow label and next header. */
	CHECK_EQ(KEY(f), SRC6 | LABEL);
	CHECK(f & SILO_GENID_MPATH_V6, "mpath_v6 not set");
	CHECK(!(f & SILO_GENID_MPATH_V4), "mpath_v4 set");
	CHECK_EQ(bumps, 1);
	set_policy("ipv6", 1, -1);
	f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
	CHECK_EQ(KEY(f), SRC6 | L4);
	set_policy("ipv6", 2, -1);
	f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
	CHECK_EQ(KEY(f), SRC6 | LABEL);
	if (has_hash_fields()) {
		set_policy("ipv6", 3, 0x0003);
		f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
		CHECK_EQ(KEY(f), SRC6);
		set_policy("ipv6", 3, 0x000B); /* and the flow label */
		f = sync_flags(SILO_SYNC_SYSCTLS, &bumps);
		CHECK_EQ(KEY(f), SRC6 | LABEL);
	}
	set_policy("ipv6", 0, -1);
	sh("ip -6 route del fd77::/64");
	f = sync_flags(SILO_SYNC_ALL, &bumps);
	CHECK_EQ(f & CONFIG_BITS, 0);

	/* Made by appending a second nexthop; one nexthop deleted again. */
	key_case("ip -6 route add fd76::/64 via fd02::2", SILO_SYNC_ROUTES, 0,
		 0, "true");
	key_case("ip -6 route append fd76::/64 via fd02::3", SILO_SYNC_ROUTES,
		 SRC6 | LABEL, SILO_GENID_MPATH_V6,
		 "ip -6 route del fd76::/64 via fd02::2");
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(f & CONFIG_BITS, 0); /* one nexthop left */
	sh("ip -6 route del fd76::/64");
}

static void test_ipv6_source_routes(void)
{
	key_case("ip -6 route add fd75::/64 from fd01::/64 via fd02::2",
		 SILO_SYNC_ROUTES, SRC6, SILO_GENID_SRC_ROUTES_V6,
		 "ip -6 route del fd75::/64 from fd01::/64");
	/* An IPv4 route has no source prefix; a rule "to" is no source. */
	key_case("ip route add 10.75.0.0/16 via 10.2.0.2", SILO_SYNC_ROUTES, 0,
		 0, "ip route del 10.75.0.0/16");
}

/*
 * Routes through nexthop objects: multipath when a group exists. Without
 * compat mode the kernel shows such a route with its nexthop id alone.
 */
static void test_nexthop_groups(void)
{
	long long bumps;
	__u32 f;

	if (has_compat_mode)
		sh("sysctl -qw net.ipv4.nexthop_compat_mode=0");
	REQUIRE(!sh("ip nexthop add id 71 via 10.2.0.2 dev out0\n"
		    "ip nexthop add id 72 via 10.2.0.3 dev out0\n"
		    "ip nexthop add id 81 via fd02::2 dev out0\n"
		    "ip nexthop add id 82 via fd02::3 dev out0\n"
		    "ip route add 10.74.0.0/16 nhid 71"),
		"nexthops");
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(f & CONFIG_BITS, 0); /* no group */
	REQUIRE(!sh("ip nexthop add id 79 group 71/72\n"
		    "ip route add 10.73.0.0/16 nhid 79"),
		"a group");
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(KEY(f), SRC4);
	CHECK(f & SILO_GENID_MPATH_V4, "mpath_v4 not set");
	CHECK_EQ(bumps, 1);
	REQUIRE(!sh("ip nexthop add id 89 group 81/82\n"
		    "ip -6 route add fd74::/64 nhid 89"),
		"an IPv6 group");
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(KEY(f), SRC4 | SRC6 | LABEL);
	/* The groups go, and their routes with them, unannounced. */
	sh("ip nexthop del id 79\nip nexthop del id 89");
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(f & CONFIG_BITS, 0);
	CHECK_EQ(bumps, 1);
	sh("ip route del 10.74.0.0/16\n"
	   "ip nexthop flush >/dev/null");
	if (has_compat_mode)
		sh("sysctl -qw net.ipv4.nexthop_compat_mode=1");
}

/* Route MTUs and the route flags come from one walk, each when asked. */
static void test_route_mtu_and_flags_apart(void)
{
	struct silo_genid g;
	long long bumps;
	__u32 f;

	REQUIRE(!sh("ip route add 10.72.0.0/16 via 10.2.0.2 mtu 1400\n"
		    "ip route add 10.71.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3"),
		"routes");
	f = sync_flags(SILO_SYNC_ROUTE_MTU, &bumps);
	g = genid_read();
	CHECK_EQ(g.route_mtu[SILO_FAM_V4], 1400);
	CHECK_EQ(f & CONFIG_BITS, 0);
	f = sync_flags(SILO_SYNC_ROUTES, &bumps);
	CHECK_EQ(KEY(f), SRC4);
	sh("ip route del 10.72.0.0/16\nip route del 10.71.0.0/16");
	f = sync_flags(SILO_SYNC_ROUTE_MTU | SILO_SYNC_ROUTES, &bumps);
	g = genid_read();
	CHECK_EQ(g.route_mtu[SILO_FAM_V4], 0);
	CHECK_EQ(f & CONFIG_BITS, 0);
	CHECK_EQ(bumps, 1); /* both in one change */
}

static const char want_line[] =
	"route cache key: destination, source (IPv4: rule from a prefix; IPv6: multipath route), flow label (IPv6 multipath hash)";

static void test_cli_shows_the_key(void)
{
	const char *silo = getenv("SILO"), *root = test_pin_root();
	long long bumps;

	REQUIRE(!sh("ip rule add from 10.9.0.0/16 lookup 100 pref 1000\n"
		    "ip -6 route add fd77::/64 nexthop via fd02::2 nexthop via fd02::3"),
		"configuration");
	sync_flags(SILO_SYNC_ALL, &bumps);
	CHECK(!sh("%s --pin-root %s -j genid show | jq -e '.key_src_v4 and .key_src_v6 and .key_flowlabel and (.key_l4 | not) and (.why | index(\"rules_src_v4\") != null and index(\"mpath_v6\") != null and index(\"mpath_v4\") == null)' >/dev/null",
		  silo, root),
	      "genid show -j");
	CHECK(!sh("%s --pin-root %s genid show | grep -qxF '%s'", silo, root,
		  want_line),
	      "genid show");
	CHECK(!sh("%s --pin-root %s xdp status | grep -qxF '%s'", silo, root,
		  want_line),
	      "xdp status");
	CHECK(!sh("%s --pin-root %s -j xdp status | jq -e '.route_key.key_src_v4 and .route_key.key_src_v6 and (.route_key.why | index(\"rules_src_v4\") != null)' >/dev/null",
		  silo, root),
	      "xdp status -j");
	sh("ip rule del pref 1000\nip -6 route del fd77::/64");
	sh("ip route add 10.77.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3\n"
	   "ip rule add dport 53 lookup 100 pref 1000\n"
	   "sysctl -qw net.ipv4.fib_multipath_hash_policy=1");
	sync_flags(SILO_SYNC_ALL, &bumps);
	CHECK(!sh("%s --pin-root %s genid show | grep -qxF 'route cache key: destination, source (IPv4: multipath route), protocol and ports (rule on them / multipath hash)'",
		  silo, root),
	      "genid show, ports");
	sh("ip rule del pref 1000\nip route del 10.77.0.0/16\n"
	   "sysctl -qw net.ipv4.fib_multipath_hash_policy=0");
	sync_flags(SILO_SYNC_ALL, &bumps);
	CHECK(!sh("%s --pin-root %s genid show | grep -qxF 'route cache key: destination'",
		  silo, root),
	      "genid show, nothing");
	CHECK(!sh("%s --pin-root %s -j genid show | jq -e '(.key_src_v4 or .key_src_v6 or .key_l4 or .key_flowlabel | not) and (.why | index(\"mpath_v4\") == null)' >/dev/null",
		  silo, root),
	      "genid show -j, nothing");
}

/* silod. */

static const char LONG_POLL[] = "SILOD_TEST_ENVELOPE_POLL_MS=600000";

/* (Re)starts silod, its log (debug) appended to log_path; env: NULL or
 * LONG_POLL, which leaves deletions unseen. */
static int restart(const char *env)
{
	int fd, save, status;

	status = silod_stop(silod_pid, SIGTERM);
	if (silod_pid > 0 && status != 0)
		silod_unclean = true;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	save = dup(2);
	dup2(fd, 2);
	silod_pid = silod_start_env("-v -v", -1, env);
	dup2(save, 2);
	close(save);
	close(fd);
	return silod_wait_ready(silod_pid);
}

/* How many times silod dumped the routes for the key so far. */
static int recounts(void)
{
	char cmd[256];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "grep -c 'counting multipath and source routes' %s", log_path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

static __u32 info_flags(void)
{
	struct silo_info info;

	return silo_info(s, &info) ? 0 : info.genid_flags;
}

/* Waits up to ms for (flags & mask) == want; true when it came. */
static bool wait_flags(__u32 mask, __u32 want, int ms)
{
	int i;

	for (i = 0; i <= ms / 5; i++) {
		if ((info_flags() & mask) == want)
			return true;
		usleep(5000);
	}
	return false;
}

struct change {
	const char *name;
	const char *before; /* set up first (silod restarts after) */
	const char *cmd;
	__u32 bits;
	const char *undo; /* may leave the bits set until a poll */
	const char *cleanup;
};

static const struct change changes[] = {
	{ "rule from (IPv4)", "true",
	  "ip rule add from 10.9.0.0/16 lookup 100 pref 1000",
	  SRC4 | SILO_GENID_RULES_SRC_V4, "ip rule del pref 1000", "true" },
	{ "rule from (IPv6)", "true",
	  "ip -6 rule add from fd09::/64 lookup 100 pref 1000",
	  SRC6 | SILO_GENID_RULES_SRC_V6, "ip -6 rule del pref 1000", "true" },
	{ "IPv4 multipath route", "true",
	  "ip route add 10.78.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3",
	  SRC4 | SILO_GENID_MPATH_V4, "ip route del 10.78.0.0/16", "true" },
	{ "IPv4 multipath route replaced by one path", "true",
	  "ip route add 10.78.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3",
	  SRC4 | SILO_GENID_MPATH_V4,
	  "ip route replace 10.78.0.0/16 via 10.2.0.2",
	  "ip route del 10.78.0.0/16" },
	{ "IPv6 multipath route", "true",
	  "ip -6 route add fd78::/64 nexthop via fd02::2 nexthop via fd02::3",
	  SRC6 | LABEL | SILO_GENID_MPATH_V6,
	  /* one nexthop goes: the kernel names only it */
	  "ip -6 route del fd78::/64 via fd02::3",
	  "ip -6 route del fd78::/64" },
	{ "IPv6 route appended to", "ip -6 route add fd78::/64 via fd02::2",
	  "ip -6 route append fd78::/64 via fd02::3",
	  SRC6 | LABEL | SILO_GENID_MPATH_V6, "ip -6 route del fd78::/64",
	  "true" },
	{ "IPv6 route from a prefix", "true",
	  "ip -6 route add fd79::/64 from fd01::/64 via fd02::2",
	  SRC6 | SILO_GENID_SRC_ROUTES_V6,
	  "ip -6 route del fd79::/64 from fd01::/64", "true" },
	{ "route through a nexthop group",
	  "ip nexthop add id 91 via 10.2.0.2 dev out0\n"
	  "ip nexthop add id 92 via 10.2.0.3 dev out0\n"
	  "ip nexthop add id 99 group 91/92",
	  "ip route add 10.79.0.0/16 nhid 99", SRC4 | SILO_GENID_MPATH_V4,
	  /* the route goes with the group, unannounced */
	  "ip nexthop del id 99", "ip nexthop flush >/dev/null" },
	{ "nexthop group under a route", /* a group: any nhid counts */
	  "ip nexthop add id 91 via 10.2.0.2 dev out0\n"
	  "ip nexthop add id 92 via 10.2.0.3 dev out0\n"
	  "ip route add 10.79.0.0/16 nhid 91",
	  "ip nexthop add id 99 group 91/92", SRC4 | SILO_GENID_MPATH_V4,
	  "ip nexthop del id 99",
	  "ip route del 10.79.0.0/16\nip nexthop flush >/dev/null" },
};

/*
 * Each change sets its bits within silod's handling of its burst: its lazy
 * poll is ten minutes away and it must not have resynced; genid moved with
 * the flags. Then (another silod, polling each second) undoing it clears
 * them within a few seconds.
 */
static void test_silod_keys_at_once(void)
{
	struct silo_daemon before, after;
	unsigned int i;
	int n0, t;
	__u64 g0;

	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		const struct change *c = &changes[i];

		REQUIRE(!sh("%s", c->before), "%s: before", c->name);
		REQUIRE(!restart(LONG_POLL), "silod did not start");
		CHECK(!(info_flags() & c->bits), "%s: %#x set before", c->name,
		      info_flags() & c->bits);
		before = daemon_counters();
		g0 = genid_now();
		n0 = recounts();
		REQUIRE(!sh("%s", c->cmd), "%s", c->name);
		CHECK(wait_flags(c->bits, c->bits, 3000),
		      "%s: flags %#x, want %#x within silod's burst", c->name,
		      info_flags(), c->bits);
		/* The flags are written first, genid is bumped right after. */
		for (t = 0; t < 40 && genid_now() == g0; t++)
			usleep(5000);
		CHECK(genid_now() != g0, "%s: genid not bumped", c->name);
		after = daemon_counters();
		CHECK_EQ(after.resyncs, before.resyncs);
		/* Rules have their own dump; each route change costs one. */
		if (c->bits & (SILO_GENID_MPATH_V4 | SILO_GENID_MPATH_V6 |
			       SILO_GENID_SRC_ROUTES_V6))
			CHECK(recounts() > n0, "%s: routes not counted",
			      c->name);
		sh("%s", c->undo);
		sh("%s", c->cleanup);
	}
	REQUIRE(!restart(NULL), "silod did not start");
	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		const struct change *c = &changes[i];

		REQUIRE(!sh("%s", c->before), "%s: before", c->name);
		REQUIRE(!sh("%s", c->cmd), "%s", c->name);
		CHECK(wait_flags(c->bits, c->bits, 3000), "%s: not set",
		      c->name);
		sh("%s", c->undo);
		CHECK(wait_flags(c->bits, 0, 3000),
		      "%s undone: flags %#x still set after 3 s", c->name,
		      info_flags() & c->bits);
		sh("%s", c->cleanup);
	}
	CHECK(wait_flags(CONFIG_BITS, 0, 3000), "flags %#x left",
	      info_flags() & CONFIG_BITS);
}

/* Writes n route commands (fmt with %d, %d) for ip -batch and runs it. */
static int batch(const char *fmt, int n)
{
	char path[] = "/tmp/silod-keyflags-batch-XXXXXX";
	int fd, i, err;
	FILE *f;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(f, fmt, i / 250, i % 250 + 1);
	fclose(f);
	err = sh("ip -batch %s", path);
	unlink(path);
	return err;
}

/*
 * Thousands of ordinary route changes, and routes through a nexthop with
 * no group anywhere, cost no route dump; nor do multipath routes once the
 * key has their field, nor deletions until the (here distant) poll.
 */
static void test_silod_ordinary_routes_no_dump(void)
{
	int n0;

	REQUIRE(!sh("ip nexthop add id 61 via 10.2.0.2 dev out0"), "nexthop");
	REQUIRE(!restart(LONG_POLL), "silod did not start");
	n0 = recounts();
	REQUIRE(!batch("route add 10.81.%d.%d/32 via 10.2.0.2\n", 5000),
		"routes");
	REQUIRE(!batch("route add 10.82.%d.%d/32 nhid 61\n", 500),
		"nexthop routes");
	silod_quiet();
	CHECK_EQ(recounts() - n0, 0);
	CHECK_EQ(info_flags() & CONFIG_BITS, 0);

	REQUIRE(!sh("ip route add 10.78.0.0/16 nexthop via 10.2.0.2 nexthop via 10.2.0.3"),
		"multipath route");
	CHECK(wait_flags(SILO_GENID_MPATH_V4, SILO_GENID_MPATH_V4, 3000),
	      "mpath_v4 not set");
	silod_quiet();
	n0 = recounts();
	REQUIRE(!batch("route add 10.83.%d.%d/32 nexthop via 10.2.0.2 nexthop via 10.2.0.3\n",
		       500),
		"multipath routes");
	REQUIRE(!batch("route del 10.81.%d.%d/32\n", 5000), "deletions");
	silod_quiet();
	CHECK_EQ(recounts() - n0, 0);
	sh("ip route flush 10.83.0.0/16\nip route flush 10.82.0.0/16\n"
	   "ip route del 10.78.0.0/16\nip nexthop flush >/dev/null");
}

int main(void)
{
	char path[PATH_MAX];
	int fd;

	if (test_init())
		return 1;
	/* No DAD: its end brings messages at a random moment. */
	if (sh("sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0"))
		return 1;
	if (fwd_setup(NULL)) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	has_compat_mode =
		!access("/proc/sys/net/ipv4/nexthop_compat_mode", F_OK);
	snprintf(path, sizeof(path), "%s/genid", silo_pin_dir(s));
	genid_fd = bpf_obj_get(path);
	if (genid_fd < 0) {
		printf("not ok - setup: no genid map at %s\n", path);
		fwd_teardown();
		return 1;
	}
	RUN(test_nothing_keys_destination_only);
	RUN(test_rules);
	RUN(test_ipv4_multipath);
	RUN(test_ipv6_multipath);
	RUN(test_ipv6_source_routes);
	RUN(test_nexthop_groups);
	RUN(test_route_mtu_and_flags_apart);
	RUN(test_cli_shows_the_key);

	fd = mkstemp(config_path);
	if (fd < 0)
		goto out;
	close(fd);
	fd = mkstemp(log_path);
	if (fd < 0)
		goto out_config;
	close(fd);
	if (has_compat_mode) /* routes through groups: their nhid alone */
		sh("sysctl -qw net.ipv4.nexthop_compat_mode=0");
	RUN(test_silod_keys_at_once);
	RUN(test_silod_ordinary_routes_no_dump);
	if (silod_stop(silod_pid, SIGTERM) != 0 || silod_unclean) {
		printf("not ok - silod exit: not clean (a sanitizer report?)\n");
		sh("sed 's/^/# /' %s | tail -50", log_path);
	}
	unlink(log_path);
out_config:
	unlink(config_path);
out:
	close(genid_fd);
	fwd_teardown();
	return 0;
}
