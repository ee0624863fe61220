// SPDX-License-Identifier: GPL-2.0
/*
 * The pin names of include/silo/abi/pins.h are the BPF objects' map names:
 * every SILO_PIN_* of a shared map names a map of its object, and every map
 * of an object is either pinned under such a name or one of the object's
 * own (per-program scratch, the template of a per-node or per-group map).
 * A map renamed on one side only would leave old pins unread after an
 * upgrade, or pin a map under a name user space never opens.
 */
#include <bpf/libbpf.h>
#include "test.h"
#include "silo_xdp.skel.h"
#include "silo_reuseport.skel.h"

static const char *const xdp_pins[] = {
	SILO_PIN_META,		SILO_PIN_LOCAL_ADDRS,	SILO_PIN_GENID,
	SILO_PIN_CPU_NODE,	SILO_PIN_DEVICES,	SILO_PIN_TX_PORTS,
	SILO_PIN_STATS,		SILO_PIN_ROUTE_CACHE,	SILO_PIN_HEARTBEAT,
	SILO_PIN_DAEMON,	SILO_PIN_FILL_LOG,	SILO_PIN_SERVICES,
	SILO_PIN_SERVICE_NODES, SILO_PIN_SERVICE_STATS, SILO_PIN_QUEUE_CPU,
	SILO_PIN_CPUMAP,	SILO_PIN_PMTU_MARKS,	SILO_PIN_PMTU_UNSEEN,
	SILO_PIN_ROUTE_MTUS,	SILO_PIN_SRC_CHECKED,	SILO_PIN_LOCAL_BITS,
	SILO_PIN_DIRECT_SKIP,	SILO_PIN_CSUM_STATS,	SILO_PIN_CT_STATS,
	SILO_PIN_CT_ASK,
};
/* Each program's own: per-CPU state, or node 0's cache (pinned as
 * SILO_PIN_ROUTE_CACHE_NODE "0" by libsilo, which makes the others). */
static const char *const xdp_own[] = {
	"admit",    "scratch",	 "steer_scratch",
	"fwd_bufs", "route_hot", "route_cache_n0"
};

static const char *const rp_pins[] = {
	SILO_PIN_CPU_NODE,	    SILO_PIN_REUSEPORT_GROUPS,
	SILO_PIN_REUSEPORT_SOCKETS, SILO_PIN_REUSEPORT_NODES,
	SILO_PIN_REUSEPORT_STATS,   SILO_PIN_REUSEPORT_QUEUES,
};
/* The templates of a group's maps, pinned as SILO_PIN_GROUP_SOCKETS and
 * SILO_PIN_GROUP_SLOTS under reuseport/<name>/. */
static const char *const rp_own[] = { "group_sockets", "group_slots" };

static int in(const char *name, const char *const *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(name, list[i]))
			return 1;
	return 0;
}

static void check_object(struct bpf_object *obj, const char *const *pins,
			 size_t nr_pins, const char *const *own, size_t nr_own)
{
	struct bpf_map *map;
	size_t i;

	for (i = 0; i < nr_pins; i++)
		CHECK(bpf_object__find_map_by_name(obj, pins[i]),
		      "%s: no map '%s' (a SILO_PIN_* macro)",
		      bpf_object__name(obj), pins[i]);
	bpf_object__for_each_map(map, obj)
	{
		const char *name = bpf_map__name(map);

		if (strchr(name, '.')) /* .rodata, .bss: the knobs */
			continue;
		CHECK(in(name, pins, nr_pins) || in(name, own, nr_own),
		      "%s: map '%s' is neither a pin of abi/pins.h nor the "
		      "object's own",
		      bpf_object__name(obj), name);
	}
}

static void test_xdp_maps_are_pins(void)
{
	struct silo_xdp *skel = silo_xdp__open();

	REQUIRE(skel, "cannot open silo_xdp's object");
	check_object(skel->obj, xdp_pins,
		     (sizeof(xdp_pins) / sizeof(xdp_pins[0])), xdp_own,
		     (sizeof(xdp_own) / sizeof(xdp_own[0])));
	silo_xdp__destroy(skel);
}

static void test_reuseport_maps_are_pins(void)
{
	struct silo_reuseport *skel = silo_reuseport__open();

	REQUIRE(skel, "cannot open silo_reuseport's object");
	check_object(skel->obj, rp_pins, (sizeof(rp_pins) / sizeof(rp_pins[0])),
		     rp_own, (sizeof(rp_own) / sizeof(rp_own[0])));
	silo_reuseport__destroy(skel);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(quiet_print);
	RUN(test_xdp_maps_are_pins);
	RUN(test_reuseport_maps_are_pins);
	return 0;
}
