// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's lab: the three namespaces and their veths, the router's route
 * sets, the programs at both ends, and each variant on the router's ingress.
 */
#include <fcntl.h>
#include <linux/if_link.h>
#include "live.h"
#include "../bench.h"
#include "silod_child.h"

const char *const variant_name[NR_VARIANTS] = {
	"kernel", "silo", "ref", "floor", "kernel_fw", "silo_fw"
};
const char *const set_name[NR_SETS] = { "lookup_tables", "from_rules" };

/* Removes the namespaces (their veths and XDP attachments) and the pins. */
void lab_down(void)
{
	sh("for n in %s %s; do ip netns del $n 2>/dev/null; done; rm -rf %s; true",
	   NS_CLIENT, NS_ROUTER, PIN_ROOT);
}

/*
 * The namespaces, veths and addresses; routes come with lab_routes(). The
 * client holds both ends of the source: blc0, whose peer is the router's
 * ingress, and bls0, the peer of its egress.
 */
int lab_up(void)
{
	return sh(
		"set -e\n"
		"for n in %1$s %2$s; do ip netns add $n; ip -n $n link set lo up; done\n"
		/* The client stays silent: no IPv6 (MLD, DAD, RS). */
		"ip netns exec %1$s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1\n"
		"ip netns exec %2$s sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.forwarding=1\n"
		"ip -n %1$s link add %3$s type veth peer name %4$s netns %2$s\n"
		"ip -n %1$s link add %6$s type veth peer name %5$s netns %2$s\n"
		"ip -n %2$s addr add fd01::1/64 dev %4$s nodad\n"
		"ip -n %2$s addr add fd02::1/64 dev %5$s nodad\n"
		/* GRO off (veth's default, made sure of): see bench_live.c. */
		"ip netns exec %1$s ethtool -K %3$s gro off\n"
		"ip netns exec %2$s ethtool -K %4$s gro off\n"
		"ip netns exec %2$s ethtool -K %5$s gro off\n"
		"ip netns exec %1$s ethtool -K %6$s gro off\n"
		"ip -n %1$s link set %3$s up\n"
		"ip -n %2$s link set %4$s up\n"
		"ip -n %2$s link set %5$s up\n"
		"ip -n %1$s link set %6$s up\n",
		NS_CLIENT, NS_ROUTER, DEV_CLIENT, DEV_IN, DEV_OUT, DEV_SINK);
}

/*
 * Route set lookup_tables: bench_routes() of bench.h, 90 % of the routes in
 * the tables that rules pref 100+i consult first (fd11:TABLE:N::/48), none
 * holding the destination; the rest in main (fd12:N::/48) with the
 * benchmark's route, fd20::/16. Route set from_rules: every route in main
 * and rules pref 100+i from fd99:i::/32, a prefix none of the generator's
 * sources (fd01::/64) is in: the lookup is main's, but silo's key holds the
 * source.
 */
static void route6(FILE *f, int i, int n, int per_table)
{
	(void)per_table;
	if (i >= 0)
		fprintf(f, "route add fd11:%x:%x::/48 via fd02::2 table %d\n",
			i, n, 100 + i);
	else
		fprintf(f, "route add fd12:%x:%x::/48 via fd02::2\n", n >> 16,
			n & 0xFFFF);
}

static void rule_from(FILE *f, int i)
{
	fprintf(f, "rule add pref %d from fd99:%x::/32 lookup %d\n", 100 + i, i,
		100 + i);
}

/* Replaces the router's routes and rules with route set set. */
int lab_routes(int set, int routes, int rules)
{
	if (sh("for i in $(seq 100 1099); do ip -n %1$s -6 rule del pref $i 2>/dev/null || break; done\n"
	       "for i in $(seq 100 %2$d); do ip -n %1$s -6 route flush table $i 2>/dev/null; done\n"
	       "ip -n %1$s -6 route flush proto boot\n",
	       NS_ROUTER, 99 + (rules > 0 ? rules : 1)))
		return -1;
	return bench_routes("-n " NS_ROUTER " -6", routes, rules, route6,
			    set == SET_FROM ? rule_from : NULL,
			    "route add fd20::/16 via fd02::2");
}

/*
 * The source at both ends (traffic.c), the reference forwarder's devmap
 * holding the router's egress, silo loaded on blr-out for good and silod
 * (on the other CPUs than the path's, as this thread is from here on).
 * Returns in the router's namespace.
 */
int lab_endpoints(void)
{
	struct silo_opts sopts = { .netns = NS_ROUTER, .pin_root = PIN_ROOT };
	struct silo_xdp_load_opts fwd = { .forward = true,
					  .forward_established = L.ct_optin };
	struct pkt_spec sp = { .family = AF_INET6, .ttl = HOP_LIMIT };
	int fd;

	if (bench_pin_other_cpus(L.cpu))
		return -1;
	L.skel = silo_test__open_and_load();
	if (!L.skel || bench_enter("bench_live", L.ns_client) ||
	    read_mac(DEV_CLIENT, sp.smac) || read_mac(DEV_SINK, L.sink_mac))
		return -1;
	if (bench_enter("bench_live", L.ns_router) ||
	    read_mac(DEV_IN, sp.dmac) ||
	    sh("ip neigh add fd02::2 lladdr %02x:%02x:%02x:%02x:%02x:%02x dev %s nud permanent",
	       L.sink_mac[0], L.sink_mac[1], L.sink_mac[2], L.sink_mac[3],
	       L.sink_mac[4], L.sink_mac[5], DEV_OUT))
		return -1;
	L.in_ifindex = if_nametoindex(DEV_IN);
	L.out_ifindex = if_nametoindex(DEV_OUT);
	L.skel->bss->bounce_ifindex = L.out_ifindex;
	/* A devmap resolves its ifindex in the namespace of the update. */
	fd = bpf_map__fd(L.skel->maps.ref_tx);
	if (bpf_map_update_elem(fd, &L.out_ifindex, &L.out_ifindex, BPF_ANY)) {
		fprintf(stderr, "bench_live: ref_tx: %s\n", strerror(errno));
		return -1;
	}
	inet_pton(AF_INET6, "fd01::100:0", sp.src);
	inet_pton(AF_INET6, "fd20::1", sp.dst);
	frames_build(&sp);
	if (source_up())
		return -1;
	if (bench_enter("bench_live", L.ns_orig) || silo_open(&L.s, &sopts) ||
	    silo_xdp_load(L.s, DEV_OUT, &fwd))
		return -1;
	L.out_silo = true;
	L.silod = silod_child_start(L.s, PIN_ROOT);
	if (L.silod < 0)
		return -1;
	return bench_enter("bench_live", L.ns_router);
}

/*
 * The reference forwarder must forward the benchmark's frames itself: a
 * baseline that passed them would measure the kernel. Each size through
 * BPF_PROG_TEST_RUN on the router's ingress: XDP_REDIRECT, the hop limit
 * down by one, the sink's MAC. (bench_live also checks, per measurement,
 * that the router's stack forwarded next to nothing meanwhile.)
 */
int ref_check(void)
{
	uint8_t out[PKT_MAX];
	struct xdp_md ctx = { .ingress_ifindex = L.in_ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_out = out, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);
	int z, fd = bpf_program__fd(L.skel->progs.xdp_ref_fwd);

	for (z = 0; z < NR_SIZES; z++) {
		o.data_in = L.frame[z];
		o.data_size_in = ctx.data_end = size_bytes[z];
		o.data_size_out = sizeof(out);
		if (bpf_prog_test_run_opts(fd, &o) ||
		    o.retval != XDP_REDIRECT ||
		    o.data_size_out != size_bytes[z] ||
		    out[14 + 7] != HOP_LIMIT - 1 ||
		    memcmp(out, L.sink_mac, 6)) {
			fprintf(stderr,
				"bench_live: the reference forwarder does not forward the %zu-byte frame (verdict %u): the baseline would be wrong\n",
				size_bytes[z], o.retval);
			return -1;
		}
	}
	return 0;
}

/* Takes silo or a program off the router's ingress. */
static int ingress_clear(void)
{
	int err;

	L.variant = -1;
	if (L.in_silo) {
		err = silo_xdp_unload(L.s, DEV_IN);
		if (err)
			return err;
		L.in_silo = false;
	}
	if (L.in_prog) {
		err = bpf_xdp_detach(L.in_ifindex, XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			return err;
		L.in_prog = false;
	}
	return 0;
}

/*
 * silo forwards only while silod beats and trusts the cache, and serves a
 * frame above the smallest MTU from the cache only once silod watches
 * IPv6's PMTU errors, which it does again each time silo is back on every
 * device; until then such a frame takes bpf_fib_lookup() (cache_big), and
 * a full-size measurement right after the load measured that.
 */
static int silod_ready(void)
{
	struct silo_daemon_info di;
	int i;

	for (i = 0; i < 150; i++) {
		if (!silo_daemon_info(L.s, &di) && di.running &&
		    di.cache_trusted &&
		    (di.heartbeat.pmtu_watch & (1U << SILO_FAM_V6)))
			return 0;
		usleep(20000);
	}
	fprintf(stderr,
		"bench_live: silod is not running, or does not watch IPv6 PMTU errors\n");
	return -ESRCH;
}

/*
 * Puts the variant's program on the router's ingress (in its namespace),
 * the firewall's ruleset on the router for kernel_fw and silo_fw only.
 */
int set_variant(int v)
{
	struct silo_xdp_load_opts o = { .forward = true,
					.forward_established = L.ct_optin };
	struct bpf_program *p;
	int err;

	if (v == L.variant)
		return 0;
	err = ingress_clear() ?: (VARIANT_FW(v) ? fw_up() : fw_down());
	if (err)
		return err;
	if (v != SILO && v != SILO_FW) {
		p = v == KERNEL || v == KERNEL_FW ? L.skel->progs.xdp_pass :
		    v == REF			  ? L.skel->progs.xdp_ref_fwd :
						    L.skel->progs.xdp_bounce;
		err = bpf_xdp_attach(L.in_ifindex, bpf_program__fd(p),
				     XDP_FLAGS_DRV_MODE, NULL);
		L.in_prog = !err;
		L.variant = err ? -1 : v;
		return err;
	}
	err = silo_xdp_load(L.s, DEV_IN, &o);
	if (err)
		return err;
	L.in_silo = true;
	err = silod_ready();
	if (!err)
		L.variant = v;
	return err;
}

void lab_cleanup(void)
{
	if (L.ct_fd >= 0)
		close(L.ct_fd);
	L.ct_fd = -1;
	silod_child_stop(L.silod);
	L.silod = -1;
	source_close(L.src);
	L.src = NULL;
	if (L.s) {
		if (L.ns_router >= 0)
			bench_enter("bench_live", L.ns_router);
		if (L.in_silo)
			silo_xdp_unload(L.s, DEV_IN);
		if (L.out_silo)
			silo_xdp_unload(L.s, DEV_OUT);
		silo_close(L.s);
		L.s = NULL;
	}
	silo_test__destroy(L.skel);
	L.skel = NULL;
	if (L.ns_orig >= 0)
		bench_enter("bench_live", L.ns_orig);
	if (L.ns_client >= 0)
		close(L.ns_client);
	if (L.ns_router >= 0)
		close(L.ns_router);
	if (L.ns_orig >= 0)
		close(L.ns_orig);
	lab_down();
}
