// SPDX-License-Identifier: GPL-2.0
/*
 * libsilo's small shared helpers, on their own: the CPU list parser (sysfs
 * cpulist format, as silod's cpu-nodes uses it too), genid's advance (never
 * 0, also through the map), the monotonic clocks, the counter names and
 * direct_skip's cover of a table's routes.
 */
#include "test.h"
#include "../user/lib/maps.h"
#include "../user/lib/nl.h"
#include "../user/lib/util.h"

/* The CPUs set in bits, as "0,1,2" for the messages. */
static const char *cpus_str(const unsigned char *bits, size_t len)
{
	static char buf[256];
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < len && n < sizeof(buf) - 8; i++)
		if (bits[i / 8] & (1 << (i % 8)))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%zu",
				      n ? "," : "", i);
	return buf;
}

static void check_list(const char *list, const char *want)
{
	unsigned char bits[64 / 8];
	int err;

	err = silo_parse_cpulist(list, bits, 64);
	CHECK(!err, "'%s': %s", list, strerror(-err));
	if (!err)
		CHECK(!strcmp(cpus_str(bits, 64), want),
		      "'%s' gave {%s}, want {%s}", list, cpus_str(bits, 64),
		      want);
}

static void test_cpulist_parses(void)
{
	check_list("0-3,8,10-11", "0,1,2,3,8,10,11");
	check_list("0-3,8,10-11\n", "0,1,2,3,8,10,11");
	check_list("5\n", "5");
	check_list("63", "63");
	check_list("2-2", "2");
	check_list("", "");
	check_list("\n", ""); /* a node without CPUs */
}

static void test_cpulist_refuses(void)
{
	static const char *const bad[] = {
		"a",	 "3-1", "1-", "-1",  "1,,2", "1 2",
		"1-2-3", "1;2", " 1", "1-a", "+1",   "99999999999999999999999",
	};
	unsigned char bits[64 / 8];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_EQ(silo_parse_cpulist(bad[i], bits, 64), -EINVAL);
	CHECK_EQ(silo_parse_cpulist("64", bits, 64), -ERANGE);
	CHECK_EQ(silo_parse_cpulist("60-64", bits, 64), -ERANGE);
}

static void test_cpu_range(void)
{
	unsigned long a = 99, b = 99;
	const char *s = "4-7:1";
	char *end;

	CHECK_EQ(silo_parse_cpu_range(s, &end, &a, &b), 0);
	CHECK_EQ(a, 4);
	CHECK_EQ(b, 7);
	CHECK_EQ(end - s, 3);
	s = "12,13";
	CHECK_EQ(silo_parse_cpu_range(s, &end, &a, &b), 0);
	CHECK_EQ(a, 12);
	CHECK_EQ(b, 12);
	CHECK_EQ(*end, ',');
	CHECK_EQ(silo_parse_cpu_range("x", &end, &a, &b), -EINVAL);
}

/* The public parser (silo service's --cpus): a CPU set of u64 words, and
 * nothing after the last CPU. */
static void test_cpulist_public(void)
{
	static const char *const bad[] = { "a",	  "1,",	 "1,,2",
					   "1\n", "3-1", "4096" };
	__u64 cpus[SILO_CPU_WORDS];
	size_t i;

	CHECK_EQ(silo_cpulist_parse("0-2,64,4095", cpus), 0);
	CHECK_EQ(cpus[0], 7);
	CHECK_EQ(cpus[1], 1);
	CHECK_EQ(cpus[SILO_CPU_WORDS - 1], 1ULL << 63);
	CHECK_EQ(silo_cpulist_parse("", cpus), 0);
	CHECK_EQ(cpus[0] | cpus[1], 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_EQ(silo_cpulist_parse(bad[i], cpus), -EINVAL);
}

static void test_genid_advance_skips_zero(void)
{
	struct silo_genid g = { .genid = 5 };

	silo_genid_advance(&g, 3);
	CHECK_EQ(g.genid, 8);
	g.genid = UINT64_MAX - 1;
	silo_genid_advance(&g, 1);
	CHECK(g.genid == UINT64_MAX, "genid %llu, want the top",
	      (unsigned long long)g.genid);
	silo_genid_advance(&g, 1);
	CHECK_EQ(g.genid, 1);
	g.genid = UINT64_MAX - 1;
	silo_genid_advance(&g, 2); /* would land on 0 exactly */
	CHECK_EQ(g.genid, 1);
	g.genid = UINT64_MAX;
	silo_genid_advance(&g, 100);
	CHECK(g.genid != 0, "genid wrapped to 0");
}

static void test_genid_bump_fd_skips_zero(void)
{
	struct silo_genid g = { .genid = UINT64_MAX, .flags = 0x1234 };
	__u32 zero = 0;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_genid", sizeof(__u32),
			    sizeof(g), 1, NULL);
	REQUIRE(fd >= 0, "cannot make a map: %s", strerror(errno));
	CHECK_EQ(bpf_map_update_elem(fd, &zero, &g, BPF_ANY), 0);
	CHECK_EQ(silo_genid_bump_fd(fd, 1), 0);
	memset(&g, 0, sizeof(g));
	CHECK_EQ(bpf_map_lookup_elem(fd, &zero, &g), 0);
	CHECK_EQ(g.genid, 1);
	CHECK_EQ(g.flags, 0x1234); /* the other fields stay */
	CHECK_EQ(silo_genid_bump_fd(fd, 2), 0);
	CHECK_EQ(bpf_map_lookup_elem(fd, &zero, &g), 0);
	CHECK_EQ(g.genid, 3);
	close(fd);
}

static void test_clock_ns(void)
{
	struct timespec ts;
	__u64 a, b, c;

	a = silo_clock_ns(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	b = silo_clock_ns(CLOCK_MONOTONIC);
	c = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	CHECK(a <= c && c <= b, "%llu <= %llu <= %llu", (unsigned long long)a,
	      (unsigned long long)c, (unsigned long long)b);
	/* The coarse clock lags by at most a tick or so. */
	a = silo_clock_ns(CLOCK_MONOTONIC_COARSE);
	b = silo_clock_ns(CLOCK_MONOTONIC);
	CHECK(a <= b && b - a < 100000000ULL, "coarse %llu, fine %llu",
	      (unsigned long long)a, (unsigned long long)b);
}

/* Every counter has a name and a description; names are unique. */
static void check_names(const char *what, const char *(*name)(unsigned int),
			const char *(*desc)(unsigned int), unsigned int max)
{
	unsigned int i, j;

	for (i = 0; i < max; i++) {
		CHECK(name(i) && *name(i), "%s %u has no name", what, i);
		CHECK(desc(i) && *desc(i), "%s %u has no description", what, i);
		for (j = 0; j < i && name(i); j++)
			CHECK(strcmp(name(i), name(j)), "%s %u and %u: %s",
			      what, i, j, name(i));
	}
	CHECK(!name(max) && !desc(max), "%s %u past the end has a name", what,
	      max);
}

static void test_counter_names(void)
{
	check_names("xdp", silo_stat_name, silo_stat_desc, SILO_STAT_MAX);
	check_names("reuseport", silo_reuseport_stat_name,
		    silo_reuseport_stat_desc, SILO_RSTAT_MAX);
	check_names("silod", silo_daemon_stat_name, silo_daemon_stat_desc,
		    SILO_DSTAT_MAX);
	CHECK(!strcmp(silo_stat_name(SILO_STAT_CACHE_HIT), "cache_hit"),
	      "SILO_STAT_CACHE_HIT is '%s'",
	      silo_stat_name(SILO_STAT_CACHE_HIT));
}

/* Every envelope condition has a name, what it is and what to do, and
 * none is left over past the last. */
static void test_envelope_texts(void)
{
	unsigned int bit;

	check_names("envelope", silo_envelope_name, silo_envelope_desc,
		    SILO_ENV_BIT_MAX);
	for (bit = 0; bit < SILO_ENV_BIT_MAX; bit++)
		CHECK(silo_envelope_todo(bit) && *silo_envelope_todo(bit),
		      "envelope %u (%s): nothing to do said", bit,
		      silo_envelope_name(bit));
	CHECK(!silo_envelope_todo(SILO_ENV_BIT_MAX), "a todo past the end");
	CHECK(!strcmp(silo_envelope_name(SILO_ENV_BIT_TC), "tc"),
	      "SILO_ENV_BIT_TC is '%s'", silo_envelope_name(SILO_ENV_BIT_TC));
}

/* Does one of r's direct prefixes of kind hold addr/len? */
static bool cover_holds(const struct silo_nl_routes *r, __u8 kind,
			const __u8 *addr, unsigned int len)
{
	unsigned int l, i;
	size_t k;

	for (k = 0; k < r->nr_direct; k++) {
		l = r->direct[k].prefixlen - 8;
		if (r->direct[k].kind != kind || l > len)
			continue;
		for (i = 0; i < l; i++)
			if ((r->direct[k].addr[i / 8] ^ addr[i / 8]) &
			    (0x80 >> (i % 8)))
				break;
		if (i == l)
			return true;
	}
	return false;
}

/*
 * A table's routes, more than direct_skip takes of a family: a cover of at
 * most SILO_DIRECT_COVER prefixes of each family that holds every route
 * and not much more (no /8, nothing outside the routes' /16s). Routes
 * that fit stay as they are, but two halves of one prefix.
 */
static void test_direct_cover(void)
{
	struct silo_nl_routes r = {};
	__u8 a[16] = {}, far4[16] = { 10, 9 }, far6[16] = { 0xfd, 0x61 };
	unsigned int i, n4 = 0, n6 = 0;
	size_t k;

	/* 600 IPv4 /24s, none beside another; 600 IPv6 /64s, fd60:i::. */
	for (i = 0; i < 600; i++) {
		a[0] = 10, a[1] = 200 + i / 128, a[2] = i % 128 * 2, a[3] = 0;
		silo_nl_cover_add(&r, SILO_DIRECT_DST_V4, a, 24);
	}
	memset(a, 0, sizeof(a));
	for (i = 0; i < 600; i++) {
		a[0] = 0xfd, a[1] = 0x60, a[2] = i >> 8, a[3] = i & 0xFF;
		silo_nl_cover_add(&r, SILO_DIRECT_DST_V6, a, 64);
	}
	CHECK_EQ(silo_direct_cover(&r), 0);
	for (k = 0; k < r.nr_direct; k++) {
		n4 += r.direct[k].kind == SILO_DIRECT_DST_V4;
		n6 += r.direct[k].kind == SILO_DIRECT_DST_V6;
		CHECK(r.direct[k].prefixlen > 8 + 8, "a cover as short as /%u",
		      r.direct[k].prefixlen - 8);
	}
	CHECK(n4 >= 1 && n4 <= SILO_DIRECT_COVER, "%u IPv4 prefixes", n4);
	CHECK(n6 >= 1 && n6 <= SILO_DIRECT_COVER, "%u IPv6 prefixes", n6);
	for (i = 0; i < 600; i++) {
		memset(a, 0, sizeof(a));
		a[0] = 10, a[1] = 200 + i / 128, a[2] = i % 128 * 2;
		CHECK(cover_holds(&r, SILO_DIRECT_DST_V4, a, 24),
		      "10.%u.%u.0/24 left out", a[1], a[2]);
		a[0] = 0xfd, a[1] = 0x60, a[2] = i >> 8, a[3] = i & 0xFF;
		CHECK(cover_holds(&r, SILO_DIRECT_DST_V6, a, 64),
		      "fd60:%x::/64 left out", i);
	}
	CHECK(!cover_holds(&r, SILO_DIRECT_DST_V4, far4, 32), "10.9.0.0 held");
	CHECK(!cover_holds(&r, SILO_DIRECT_DST_V6, far6, 128), "fd61:: held");
	silo_nl_routes_free(&r);

	/* Few routes: each as it is, the two halves of one prefix as one. */
	memset(&r, 0, sizeof(r));
	memset(a, 0, sizeof(a));
	a[0] = 10, a[1] = 7;
	silo_nl_cover_add(&r, SILO_DIRECT_DST_V4, a, 24);
	a[2] = 1;
	silo_nl_cover_add(&r, SILO_DIRECT_DST_V4, a, 24);
	a[2] = 4;
	silo_nl_cover_add(&r, SILO_DIRECT_DST_V4, a, 24);
	CHECK_EQ(silo_direct_cover(&r), 0);
	CHECK_EQ(r.nr_direct, 2);
	if (r.nr_direct == 2) {
		CHECK_EQ(r.direct[0].prefixlen, 8 + 23);
		CHECK_EQ(r.direct[0].addr[2], 0);
		CHECK_EQ(r.direct[1].prefixlen, 8 + 24);
		CHECK_EQ(r.direct[1].addr[2], 4);
	}
	silo_nl_routes_free(&r);
}

int main(void)
{
	RUN(test_cpulist_parses);
	RUN(test_cpulist_refuses);
	RUN(test_cpu_range);
	RUN(test_cpulist_public);
	RUN(test_genid_advance_skips_zero);
	RUN(test_genid_bump_fd_skips_zero);
	RUN(test_clock_ns);
	RUN(test_counter_names);
	RUN(test_envelope_texts);
	RUN(test_direct_cover);
	return 0;
}
