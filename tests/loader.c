// SPDX-License-Identifier: GPL-2.0
/*
 * libsilo's loader: pins, re-use, replace, foreign programs, failures that
 * leave nothing behind, and unload removing exactly what load made.
 */
#include <limits.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "test.h"
#include "silo_test.skel.h"

static struct silo *s;

static bool exists(const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", silo_pin_dir(s), name);
	return stat(path, &st) == 0;
}

static bool pin_dir_exists(void)
{
	struct stat st;

	return stat(silo_pin_dir(s), &st) == 0;
}

static __u32 attached_prog(const char *dev)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (bpf_xdp_query(if_nametoindex(dev), 0, &q))
		return 0;
	return q.prog_id;
}

static int dev_info(const char *dev, struct silo_xdp_dev *out)
{
	struct silo_xdp_dev *devs;
	__u32 ifindex = if_nametoindex(dev);
	size_t n, i;
	int found = -ENOENT;

	if (silo_xdp_list(s, &devs, &n))
		return -EIO;
	for (i = 0; i < n; i++) {
		if (devs[i].ifindex == ifindex) {
			*out = devs[i];
			found = 0;
		}
	}
	free(devs);
	return found;
}

static void unload_all(void)
{
	silo_xdp_unload(s, "d0");
	silo_xdp_unload(s, "d1");
	silo_xdp_unload(s, "d2");
}

static void test_load_pins_and_stays_attached(void)
{
	struct silo_xdp_load_opts o = { .forward = true };
	struct silo_opts opts = { .pin_root = test_pin_root() };
	char link[32];

	REQUIRE(silo_xdp_load(s, "d0", &o) == 0, "load d0");
	snprintf(link, sizeof(link), "xdp_link_%u", if_nametoindex("d0"));
	CHECK(exists("meta") && exists("stats") && exists("route_cache") &&
		      exists("route_cache_n0") && exists(link),
	      "pins missing");
	/* Nothing of ours holds it now but the pinned link. */
	silo_close(s);
	CHECK(attached_prog("d0") != 0, "program gone with the handle");
	REQUIRE(silo_open(&s, &opts) == 0, "reopen");
	CHECK(silo_xdp_unload(s, "d0") == 0, "unload d0");
	CHECK_EQ(attached_prog("d0"), 0);
	CHECK(!pin_dir_exists(), "pins left after unloading the last device");
}

static void test_double_load_refused_replace_allowed(void)
{
	struct silo_xdp_load_opts o = { .forward = true };
	struct silo_xdp_dev a, b;
	__u32 cache_id;

	REQUIRE(silo_xdp_load(s, "d0", &o) == 0, "load d0");
	REQUIRE(dev_info("d0", &a) == 0, "d0 not listed");
	cache_id = pinned_map_id(silo_pin_dir(s), "route_cache_n0");
	CHECK_EQ(silo_xdp_load(s, "d0", &o), -EEXIST);
	REQUIRE(dev_info("d0", &b) == 0, "d0 not listed");
	CHECK_EQ(b.prog_id, a.prog_id);

	o.replace = true;
	o.forward = false;
	CHECK(silo_xdp_load(s, "d0", &o) == 0, "replace failed");
	REQUIRE(dev_info("d0", &b) == 0, "d0 not listed");
	CHECK(b.prog_id != a.prog_id, "program not replaced");
	CHECK_EQ(b.link_id, a.link_id);
	CHECK(!b.forward && a.forward, "knob not applied by the replace");
	CHECK_EQ(pinned_map_id(silo_pin_dir(s), "route_cache_n0"), cache_id);
	CHECK_EQ(attached_prog("d0"), b.prog_id);

	/* A replace cannot change the attach mode. */
	o.mode = SILO_XDP_SKB;
	CHECK_EQ(silo_xdp_load(s, "d0", &o), -EINVAL);
	unload_all();
}

static void test_foreign_program_refused_unless_forced(void)
{
	struct silo_xdp_load_opts o = { 0 };
	struct silo_test *other;
	__u32 id;
	char link[32];

	other = silo_test__open_and_load();
	REQUIRE(other, "load the other program");
	REQUIRE(bpf_xdp_attach(if_nametoindex("d1"),
			       bpf_program__fd(other->progs.xdp_pass),
			       XDP_FLAGS_DRV_MODE, NULL) == 0,
		"attach the other program");
	id = attached_prog("d1");
	CHECK_EQ(silo_xdp_load(s, "d1", &o), -EBUSY);
	CHECK_EQ(attached_prog("d1"), id);
	CHECK(!pin_dir_exists(), "a refused load left pins");

	o.force = true;
	CHECK(silo_xdp_load(s, "d1", &o) == 0, "forced load failed");
	CHECK(attached_prog("d1") != id && attached_prog("d1") != 0,
	      "the other program is still attached");
	snprintf(link, sizeof(link), "xdp_link_%u", if_nametoindex("d1"));
	CHECK(exists(link), "no link pin after a forced load");
	unload_all();
	silo_test__destroy(other);
}

static void test_failed_loads_leave_nothing(void)
{
	struct silo_xdp_load_opts o = { 0 };

	CHECK_EQ(silo_xdp_load(s, "no-such-dev", &o), -ENODEV);
	CHECK(!pin_dir_exists(), "pins after loading onto no device");
	/* Loopback has no native XDP: fails after the maps were made. */
	CHECK(silo_xdp_load(s, "lo", &o) < 0, "native load on lo worked");
	CHECK(!pin_dir_exists(), "pins after a failed attach");
	CHECK_EQ(attached_prog("lo"), 0);
}

static void test_unload_of_nothing(void)
{
	struct silo_xdp_load_opts o = { 0 };

	CHECK_EQ(silo_xdp_unload(s, "d2"), -ENOENT);
	CHECK_EQ(silo_xdp_unload(s, "no-such-dev"), -ENODEV);
	REQUIRE(silo_xdp_load(s, "d0", &o) == 0, "load d0");
	CHECK_EQ(silo_xdp_unload(s, "d2"), -ENOENT);
	CHECK(attached_prog("d0") != 0, "unload of d2 touched d0");
	unload_all();
}

static void test_last_unload_removes_pins(void)
{
	struct silo_xdp_load_opts o = { 0 };

	REQUIRE(silo_xdp_load(s, "d0", &o) == 0, "load d0");
	REQUIRE(silo_xdp_load(s, "d1", &o) == 0, "load d1");
	CHECK_EQ(silo_xdp_unload(s, "d0"), 0);
	CHECK(exists("meta") && exists("stats"), "maps removed too early");
	CHECK(attached_prog("d1") != 0, "d1 lost its program");
	CHECK_EQ(silo_xdp_unload(s, "d1"), 0);
	CHECK(!pin_dir_exists(), "pins left after the last unload");
}

static void test_incompatible_pins_replaced(void)
{
	struct silo_xdp_load_opts o = { 0 };
	struct silo_meta meta;
	struct silo_info info;
	char path[PATH_MAX];
	__u32 zero = 0, old_stats;
	int fd;

	REQUIRE(silo_xdp_load(s, "d0", &o) == 0, "load d0");
	snprintf(path, sizeof(path), "%s/meta", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	REQUIRE(fd >= 0, "open meta");
	REQUIRE(bpf_map_lookup_elem(fd, &zero, &meta) == 0, "read meta");
	meta.layout_version = 999;
	REQUIRE(bpf_map_update_elem(fd, &zero, &meta, BPF_ANY) == 0,
		"write meta");
	close(fd);
	old_stats = pinned_map_id(silo_pin_dir(s), "stats");
	CHECK_EQ(silo_info(s, &info), -ESTALE);

	CHECK(silo_xdp_load(s, "d1", &o) == 0, "load over stale pins");
	CHECK(silo_info(s, &info) == 0 &&
		      info.layout_version == SILO_LAYOUT_VERSION,
	      "stale pins not replaced");
	CHECK(pinned_map_id(silo_pin_dir(s), "stats") != old_stats,
	      "stats map reused");
	unload_all();
	CHECK(!pin_dir_exists(), "pins left");
}

static void test_cache_size(void)
{
	struct silo_xdp_load_opts o = { .cache_size = 1024 };
	struct silo_info info;

	REQUIRE(silo_xdp_load(s, "d0", &o) == 0, "load with 1024 entries");
	REQUIRE(silo_info(s, &info) == 0, "info");
	CHECK_EQ(info.cache_size, 1024);
	o.cache_size = 2048;
	CHECK_EQ(silo_xdp_load(s, "d1", &o), -EINVAL);
	o.cache_size = 0; /* whatever is there */
	CHECK(silo_xdp_load(s, "d1", &o) == 0, "load with the existing size");
	unload_all();
}

static void test_unknown_netns(void)
{
	struct silo_opts opts = { .netns = "silo-no-such-netns",
				  .pin_root = test_pin_root() };
	struct silo *other = NULL;

	CHECK_EQ(silo_open(&other, &opts), -ENOENT);
	CHECK(other == NULL, "handle returned on failure");
	opts.netns = "../x";
	CHECK_EQ(silo_open(&other, &opts), -EINVAL);
}

int main(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };

	if (test_init())
		return 1;
	if (sh("set -e\n"
	       "for i in 0 1 2; do\n"
	       "  ip link add d$i type veth peer name d${i}p\n"
	       "  ip link set d$i up; ip link set d${i}p up\n"
	       "done\n") ||
	    silo_open(&s, &opts)) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_load_pins_and_stays_attached);
	RUN(test_double_load_refused_replace_allowed);
	RUN(test_foreign_program_refused_unless_forced);
	RUN(test_failed_loads_leave_nothing);
	RUN(test_unload_of_nothing);
	RUN(test_last_unload_removes_pins);
	RUN(test_incompatible_pins_replaced);
	RUN(test_cache_size);
	RUN(test_unknown_netns);
	unload_all();
	silo_close(s);
	return 0;
}
