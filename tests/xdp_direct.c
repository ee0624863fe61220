// SPDX-License-Identifier: GPL-2.0
/*
 * Lookups of the main table alone (direct_skip, BPF_FIB_LOOKUP_DIRECT):
 * where every rule before main's selects on a prefix or looks a table up,
 * a packet outside the prefixes, outside the tables' routes and outside
 * the local table's is looked up in main alone; the others walk the
 * rules. Each answer is the kernel's ("ip route
 * get ... iif in0" says which gateway). Through BPF_PROG_TEST_RUN, in this
 * test's namespace.
 */
#include <stdio.h>
#include "fwd.h"
#include "../user/lib/nl.h"

static int setup(void)
{
	/* This silod keeps src_checked: sources without a route back go. */
	fwd_pmtu_watch = SILO_HB_SRCS;
	return fwd_setup(
		"ip link set lo up\n"
		"ip route add 10.99.0.0/16 via 10.2.0.2\n"
		"ip -6 route add fd99::/32 via fd02::2\n"
		/* Sources of 10.10.5.0/24, fd01::5: table 100, gateway .3 */
		"ip rule add from 10.10.5.0/24 lookup 100 pref 100\n"
		"ip route add 10.99.0.0/16 via 10.2.0.3 table 100\n"
		"ip -6 rule add from fd01::5/128 lookup 100 pref 100\n"
		"ip -6 route add fd99::/32 via fd02::3 table 100\n"
		/* Towards 10.99.7.0/24, fd99:0:7::/48: table 101 */
		"ip rule add to 10.99.7.0/24 lookup 101 pref 101\n"
		"ip route add 10.99.7.0/24 via 10.2.0.3 table 101\n"
		"ip -6 rule add to fd99:0:7::/48 lookup 101 pref 101\n"
		"ip -6 route add fd99:0:7::/48 via fd02::3 table 101\n"
		/* A unicast route in the local table, looked in first. */
		"ip route add 10.99.8.0/24 via 10.2.0.3 table local\n"
		"ip -6 route add fd99:0:8::/48 via fd02::3 table local\n");
}

/* A load over the pins syncs genid and direct_skip, as silod does. */
static void resync(void)
{
	REQUIRE(fwd_reload_in0(NULL) == 0, "replace on in0");
}

static __u32 genid_flags(void)
{
	struct silo_info info = {};

	return silo_info(s, &info) ? 0 : info.genid_flags;
}

/* The gateway's MAC the kernel forwards src -> dst through, arriving on
 * in0: mac_gw (10.2.0.2, fd02::2) or mac_gw2. */
static const uint8_t *kernel_gw(const char *src, const char *dst)
{
	char cmd[256], out[512] = "";
	size_t n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ip route get %s from %s iif in0 2>&1", dst,
		 src);
	f = popen(cmd, "r");
	if (f) {
		n = fread(out, 1, sizeof(out) - 1, f);
		pclose(f);
	}
	out[n] = 0;
	if (strstr(out, "via 10.2.0.3 ") || strstr(out, "via fd02::3 "))
		return mac_gw2;
	if (strstr(out, "via 10.2.0.2 ") || strstr(out, "via fd02::2 "))
		return mac_gw;
	printf("# %s: %s", cmd, out);
	return NULL;
}

/* src -> dst through silo: forwarded the kernel's way, which is want. */
static void expect_gw(const char *src, const char *dst, const uint8_t *want)
{
	int is6 = strchr(dst, ':') != NULL;
	struct pkt_spec sp = is6 ? spec6(dst) : spec4(dst);
	const uint8_t *gw = kernel_gw(src, dst);
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	CHECK(gw == want, "%s -> %s: the kernel's gateway is not the test's",
	      src, dst);
	if (is6)
		v6(sp.src, src);
	else
		v4(sp.src, src);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	check_forwarded(&sp, &r, want);
}

/* What the walks put in, and the flags that let the data path use it. */
static void test_map_holds_the_rules_prefixes(void)
{
	__u32 want = SILO_GENID_DIRECT_V4 | SILO_GENID_DIRECT_V6 |
		     SILO_GENID_DIRECT_SRC_V4 | SILO_GENID_DIRECT_SRC_V6;

	CHECK_EQ(genid_flags() & want, want);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_SRC_V4, "10.10.5.0", 24), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V4, "10.99.7.0", 24), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V4, "10.99.8.0", 24), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V4, "10.1.0.1", 32), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_SRC_V6, "fd01::5", 128), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V6, "fd99:0:7::", 48), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V6, "fd99:0:8::", 48), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V6, "fd01::1", 128), 1);
	/* Main's routes are not the rules' business. */
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V4, "10.99.0.0", 16), 0);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V6, "fd99::", 32), 0);
}

/* Each packet the table the kernel's rules pick. */
static void test_each_gets_the_rules_table(void)
{
	expect_gw("10.10.0.9", "10.99.1.1", mac_gw); /* main, directly */
	expect_gw("10.10.5.9", "10.99.1.1", mac_gw2); /* from: table 100 */
	expect_gw("10.10.0.9", "10.99.7.1", mac_gw2); /* to: table 101 */
	expect_gw("10.10.0.9", "10.99.8.1", mac_gw2); /* the local table */
	expect_gw("fd01::9", "fd99:0:1::1", mac_gw);
	expect_gw("fd01::5", "fd99:0:1::1", mac_gw2);
	expect_gw("fd01::9", "fd99:0:7::1", mac_gw2);
	expect_gw("fd01::9", "fd99:0:8::1", mac_gw2);
}

/* Removes direct_skip's key of the prefix, as a broken writer would. */
static void forget(__u8 kind, const char *addr, __u32 len)
{
	struct silo_direct_key k = fwd_direct_key(kind, addr, len);
	int fd = fwd_pin_get(SILO_PIN_DIRECT_SKIP);

	REQUIRE(fd >= 0, "direct_skip");
	REQUIRE(!bpf_map_delete_elem(fd, &k), "delete %s/%u", addr, len);
	close(fd);
}

/* Sends src -> dst; the gateway it went out through, NULL if not out. */
static const uint8_t *sent_through(const char *src, const char *dst)
{
	struct pkt_spec sp = spec4(dst);
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	v4(sp.src, src);
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	if (r.verdict != XDP_REDIRECT || r.len < 6)
		return NULL;
	return !memcmp(r.out, mac_gw, 6)  ? mac_gw :
	       !memcmp(r.out, mac_gw2, 6) ? mac_gw2 :
					    NULL;
}

/*
 * The lookup is direct where the map says so: with the rule's prefix gone
 * from it (which silod never does), a new source of the rule gets main's
 * answer; not with a silod that does not keep the map with the tables'
 * routes (an earlier release's beats SILO_HB_DIRECT alone).
 */
static void test_map_decides(void)
{
	forget(SILO_DIRECT_SRC_V4, "10.10.5.0", 24);
	CHECK(sent_through("10.10.5.20", "10.99.1.1") == mac_gw,
	      "the lookup walked the rules with the prefix gone");
	fwd_hb_keeps &= ~SILO_HB_DIRECT_TABLES;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	CHECK(sent_through("10.10.5.21", "10.99.1.1") == mac_gw2,
	      "direct under a silod that keeps direct_skip without tables");
	fwd_hb_keeps |= SILO_HB_DIRECT_TABLES;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	resync();
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_SRC_V4, "10.10.5.0", 24), 1);
	CHECK(sent_through("10.10.5.22", "10.99.1.1") == mac_gw2,
	      "the prefix back, the rule not applied");
}

/* A rule before main's that may match any packet: every lookup walks the
 * rules (and the answers stay the kernel's). */
static void test_rule_without_prefix_walks(void)
{
	static const char *const rules[] = {
		"ip rule add iif in0 lookup 102 pref 90",
		"ip rule add not from 10.10.6.0/24 lookup 102 pref 90",
		"ip rule add lookup main suppress_prefixlength 0 pref 90",
		"ip rule add fwmark 1 lookup 102 pref 90",
	};
	unsigned int i;

	REQUIRE(!sh("ip route add 10.99.0.0/16 via 10.2.0.3 table 102"),
		"table 102");
	for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		REQUIRE(!sh("%s", rules[i]), "%s", rules[i]);
		resync();
		CHECK(!(genid_flags() & SILO_GENID_DIRECT_V4), "%s: direct",
		      rules[i]);
		CHECK(genid_flags() & SILO_GENID_DIRECT_V6,
		      "%s: IPv6 not direct", rules[i]);
		REQUIRE(!sh("ip rule del pref 90"), "rule del");
	}
	REQUIRE(!sh("ip rule add iif in0 lookup 102 pref 90"), "iif rule");
	resync();
	expect_gw("10.10.0.30", "10.99.1.1", mac_gw2);
	REQUIRE(!sh("ip rule del pref 90 && ip route flush table 102"),
		"clean up");
	resync();
	CHECK(genid_flags() & SILO_GENID_DIRECT_V4, "not direct again");
	expect_gw("10.10.0.31", "10.99.1.1", mac_gw);
}

/*
 * A rule that looks every packet up in a table: a destination the table
 * has a route for gets the table's answer, one outside its routes main's,
 * directly (with the table's prefix gone from the map, main's answer: the
 * map decides). A table with a default route holds every destination:
 * nothing is direct. Table 103: 10.99.3.0/24 and fd99:0:3::/48 via the
 * second gateway.
 */
static void test_table_rule(void)
{
	REQUIRE(!sh("ip route add 10.99.3.0/24 via 10.2.0.3 table 103 && "
		    "ip -6 route add fd99:0:3::/48 via fd02::3 table 103 && "
		    "ip rule add lookup 103 pref 103 && "
		    "ip -6 rule add lookup 103 pref 103"),
		"table 103");
	resync();
	CHECK(genid_flags() & SILO_GENID_DIRECT_V4, "IPv4 not direct");
	CHECK(genid_flags() & SILO_GENID_DIRECT_V6, "IPv6 not direct");
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V4, "10.99.3.0", 24), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V6, "fd99:0:3::", 48), 1);
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_DST_V4, "10.99.4.0", 24), 0);
	expect_gw("10.10.0.40", "10.99.3.1", mac_gw2);
	expect_gw("10.10.0.40", "10.99.4.1", mac_gw);
	expect_gw("fd01::9", "fd99:0:3::1", mac_gw2);
	expect_gw("fd01::9", "fd99:0:4::1", mac_gw);
	forget(SILO_DIRECT_DST_V4, "10.99.3.0", 24);
	CHECK(sent_through("10.10.0.41", "10.99.3.2") == mac_gw,
	      "the lookup walked the rules with the table's prefix gone");
	REQUIRE(!sh("ip route add default via 10.2.0.3 table 103"), "default");
	resync();
	CHECK(!(genid_flags() & SILO_GENID_DIRECT_V4),
	      "direct past a table with a default route");
	CHECK(genid_flags() & SILO_GENID_DIRECT_V6, "IPv6 not direct");
	expect_gw("10.10.0.42", "10.99.4.1", mac_gw2);
	REQUIRE(!sh("ip rule del pref 103 && ip -6 rule del pref 103 && "
		    "ip route flush table 103 && ip -6 route flush table 103"),
		"clean up");
	resync();
}

/* More tables than a walk reads (SILO_NL_TABLES_MAX): the rules are
 * walked, and the last table's route is taken. */
static void test_too_many_tables_walk(void)
{
	int i;

	for (i = 0; i <= SILO_NL_TABLES_MAX; i++)
		REQUIRE(!sh("ip rule add lookup %d pref %d", 110 + i, 110 + i),
			"rule %d", i);
	REQUIRE(!sh("ip route add 10.99.5.0/24 via 10.2.0.3 table %d",
		    110 + SILO_NL_TABLES_MAX),
		"the last table's route");
	resync();
	CHECK(!(genid_flags() & SILO_GENID_DIRECT_V4), "direct");
	expect_gw("10.10.0.50", "10.99.5.1", mac_gw2);
	for (i = 0; i <= SILO_NL_TABLES_MAX; i++)
		REQUIRE(!sh("ip rule del pref %d", 110 + i), "rule del %d", i);
	REQUIRE(!sh("ip route flush table %d", 110 + SILO_NL_TABLES_MAX),
		"flush");
	resync();
	CHECK(genid_flags() & SILO_GENID_DIRECT_V4, "not direct again");
}

/* n routes, ROUTE (a printf format of the route's index i: "%d" twice, its
 * third and fourth octets), added or deleted (verb) as one batch. */
static int routes_batch(const char *verb, const char *route, int n)
{
	char fmt[256];

	snprintf(fmt, sizeof(fmt), "route %s %s", verb, route);
	return sh("i=0; while [ $i -lt %d ]; do "
		  "printf '%s\\n' $((i / 256)) $((i %% 256)); i=$((i + 1)); "
		  "done | ip -batch -",
		  n, fmt);
}

/*
 * Past SILO_DIRECT_MAX prefixes no lookup is direct: a prefix left out of
 * the map would be looked up in main alone. The route MTUs have their own
 * limit (SILO_ROUTE_MTUS_MAX): one past does not touch the other.
 */
static void test_direct_and_route_mtus_past_their_limits(void)
{
	const int n = SILO_DIRECT_MAX + 64, m = SILO_ROUTE_MTUS_MAX + 64;
	__u32 both = SILO_GENID_DIRECT_V4 | SILO_GENID_DIRECT_V6;
	struct pkt_spec sp = spec4("10.96.0.1");
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len;

	fwd_pmtu_watch |= SILO_HB_ROUTE_MTUS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
	/* The local table's routes, each its own prefix in direct_skip. */
	REQUIRE(!sh("ip route add 10.96.0.0/16 via 10.2.0.2 mtu 1000"),
		"mtu route");
	REQUIRE(!routes_batch("add", "10.97.%d.%d/32 via 10.2.0.3 table local",
			      n),
		"%d local routes", n);
	resync();
	CHECK_EQ(genid_flags() & both, 0);
	expect_gw("10.10.0.60", "10.97.16.63", mac_gw2); /* the last one */
	expect_gw("10.10.0.61", "10.97.0.0", mac_gw2);
	CHECK_EQ(fwd_route_mtu_of("10.96.0.1"), 1000);
	sp.payload = 1000 - 28 + 1;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK(r.verdict == XDP_PASS && r.d.pass_mtu == 1,
	      "over the route's MTU: verdict %d", r.verdict);
	REQUIRE(!routes_batch("del", "10.97.%d.%d/32 via 10.2.0.3 table local",
			      n),
		"local routes del");
	REQUIRE(!sh("ip route del 10.96.0.0/16"), "mtu route del");
	resync();
	CHECK_EQ(genid_flags() & both, both);

	/* Past the route MTUs' limit: the least MTU applies to every prefix
	 * of the family; lookups stay direct. */
	REQUIRE(!routes_batch("add", "10.95.%d.%d/32 via 10.2.0.2 mtu 1200", m),
		"%d mtu routes", m);
	resync();
	CHECK_EQ(genid_flags() & both, both);
	CHECK_EQ(fwd_route_mtu_of("10.95.16.63"), 0);
	sp = spec4("10.95.16.63");
	sp.payload = 1200 - 28 + 1;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK(r.verdict == XDP_PASS && (r.d.pass_mtu || r.d.pass_route_mtu),
	      "over the last route's MTU: verdict %d", r.verdict);
	sp = spec4("10.99.1.1");
	sp.payload = 1200 - 28 + 1;
	len = pkt_build(pkt, &sp);
	run_pkt(pkt, len, &r);
	CHECK(r.verdict == XDP_PASS && r.d.pass_route_mtu == 1,
	      "the least MTU not applied elsewhere: verdict %d", r.verdict);
	REQUIRE(!routes_batch("del", "10.95.%d.%d/32 via 10.2.0.2 mtu 1200", m),
		"mtu routes del");
	resync();
	fwd_pmtu_watch &= ~SILO_HB_ROUTE_MTUS;
	REQUIRE(!fwd_heartbeat(1), "heartbeat");
}

/* IPv4 under the kernel's three rules alone: not direct (its local and
 * main tables are one lookup); IPv6: direct, past the local table. */
static void test_kernels_rules_only(void)
{
	REQUIRE(!sh("ip rule del pref 100 && ip rule del pref 101 && "
		    "ip -6 rule del pref 100 && ip -6 rule del pref 101"),
		"rules del");
	resync();
	CHECK(!(genid_flags() & SILO_GENID_DIRECT_V4), "IPv4 direct");
	CHECK(genid_flags() & SILO_GENID_DIRECT_V6, "IPv6 not direct");
	CHECK(!(genid_flags() & SILO_GENID_DIRECT_SRC_V6), "sources kept");
	CHECK_EQ(fwd_direct_skip(SILO_DIRECT_SRC_V6, "fd01::5", 128), 0);
	expect_gw("fd01::5", "fd99:0:1::1", mac_gw);
	expect_gw("fd01::9", "fd99:0:8::1", mac_gw2);
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_map_holds_the_rules_prefixes);
	RUN(test_each_gets_the_rules_table);
	RUN(test_map_decides);
	RUN(test_rule_without_prefix_walks);
	RUN(test_table_rule);
	RUN(test_too_many_tables_walk);
	RUN(test_direct_and_route_mtus_past_their_limits);
	RUN(test_kernels_rules_only);
	fwd_teardown();
	return 0;
}
