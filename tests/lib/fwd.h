/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A forwarding lab for tests that run silo's XDP program through
 * BPF_PROG_TEST_RUN: veths in0 (ingress) and out0 (egress) in the test's own
 * network namespace, silo loaded on both with forwarding, and helpers that
 * run a packet and report the verdict, the bytes out and the counters it
 * changed. The including test builds the routes and neighbours it needs.
 */
#ifndef SILO_TEST_FWD_H
#define SILO_TEST_FWD_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <time.h>
#include "test.h"
#include "pkt.h"

static struct silo *s;

/* An fd of pin name of s's namespace, or -errno. */
static inline int fwd_pin_get(const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", silo_pin_dir(s), name);
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

/* Makes map (of an object not loaded yet) the pinned map name of s. */
static inline int fwd_reuse_pin(struct bpf_map *map, const char *name)
{
	int fd = fwd_pin_get(name), err;

	if (fd < 0)
		return fd;
	err = bpf_map__reuse_fd(map, fd);
	close(fd);
	return err;
}

/* Does src_checked hold exactly the IPv4 prefix addr/len? */
static inline int fwd_src_checked(const char *addr, __u32 len)
{
	struct silo_src_key k = { .prefixlen = len };
	int fd = fwd_pin_get(SILO_PIN_SRC_CHECKED), found;
	__u32 v;

	if (fd < 0)
		return fd;
	inet_pton(AF_INET, addr, k.addr);
	found = !bpf_map_lookup_elem(fd, &k, &v);
	close(fd);
	return found;
}

/* direct_skip's key of the prefix addr/len of kind (SILO_DIRECT_*). */
static inline struct silo_direct_key fwd_direct_key(__u8 kind, const char *addr,
						    __u32 len)
{
	struct silo_direct_key k = { .prefixlen = 8 + len, .kind = kind };

	inet_pton(kind == SILO_DIRECT_SRC_V4 || kind == SILO_DIRECT_DST_V4 ?
			  AF_INET :
			  AF_INET6,
		  addr, k.addr);
	return k;
}

/* Does direct_skip hold the prefix addr/len of kind (SILO_DIRECT_*), this
 * key exactly? */
static inline int fwd_direct_skip(__u8 kind, const char *addr, __u32 len)
{
	struct silo_direct_key k = fwd_direct_key(kind, addr, len), n;
	int fd = fwd_pin_get(SILO_PIN_DIRECT_SKIP), found = 0;
	void *prev = NULL;

	if (fd < 0)
		return fd;
	while (!found && !bpf_map_get_next_key(fd, prev, &n)) {
		found = !memcmp(&n, &k, sizeof(k));
		prev = &n;
	}
	close(fd);
	return found;
}

/* route_mtus' value for an IPv4 host address: 0 when no prefix holds it,
 * ~0 without the map. */
static inline __u32 fwd_route_mtu_of(const char *addr)
{
	struct silo_route_mtu_key k = { .prefixlen = 8 + 32,
					.family = AF_INET };
	int fd = fwd_pin_get(SILO_PIN_ROUTE_MTUS);
	__u32 mtu = 0;

	inet_pton(AF_INET, addr, k.addr);
	if (fd < 0)
		return ~0U;
	if (bpf_map_lookup_elem(fd, &k, &mtu))
		mtu = 0;
	close(fd);
	return mtu;
}

/* CLOCK_MONOTONIC_COARSE: the heartbeat's clock, and the PMTU marks'. */
static inline __u64 fwd_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}
static __u32 in0, out0;
static int prog_in0;
static uint8_t mac_in0[6], mac_out0[6];
static const uint8_t __attribute__((unused))
mac_peer[6] = { 0x02, 0, 0, 0, 0x01, 0x02 };
static const uint8_t __attribute__((unused))
mac_gw[6] = { 0x02, 0, 0, 0, 0x02, 0x02 };
static const uint8_t __attribute__((unused))
mac_gw2[6] = { 0x02, 0, 0, 0, 0x02, 0x03 };
static inline int prog_of(__u32 ifindex)
{
	struct silo_xdp_dev *devs;
	size_t n, i;
	int fd = -1;

	if (silo_xdp_list(s, &devs, &n))
		return -1;
	for (i = 0; i < n; i++)
		if (devs[i].ifindex == ifindex)
			fd = bpf_prog_get_fd_by_id(devs[i].prog_id);
	free(devs);
	return fd;
}

/* Runs the caller on CPU 0 (route_hot's copies are per CPU), the CPUs it
 * ran on before in *was (sched_setaffinity() gives them back). */
static inline int fwd_run_on_cpu0(cpu_set_t *was)
{
	cpu_set_t one;

	if (sched_getaffinity(0, sizeof(*was), was))
		return -errno;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -errno : 0;
}

/* What fwd_heartbeat says silod watches and keeps (the heartbeat's
 * pmtu_watch: 1 << SILO_FAM_*, SILO_HB_ROUTE_MTUS). */
static __u32 fwd_pmtu_watch;
/* And what it always keeps, as this release's silod does (an earlier
 * release's does not). */
static __u32 fwd_hb_keeps = SILO_HB_LOCAL_BITS | SILO_HB_SWEEPS |
			    SILO_HB_DIRECT | SILO_HB_DIRECT_TABLES;

/*
 * Stands in for silod's heartbeat: the data path uses the route cache only
 * while one beats. live 0 writes "no silod", -1 a beat from the future.
 */
static inline int fwd_heartbeat(int live)
{
	struct silo_heartbeat hb = { .timeout_ns = 3600ULL * 1000000000,
				     .pmtu_watch =
					     fwd_pmtu_watch | fwd_hb_keeps };
	__u32 zero = 0;
	int fd, err;

	if (live)
		hb.last_ns = fwd_coarse_ns();
	if (live < 0)
		hb.last_ns += 60ULL * 1000000000;
	fd = fwd_pin_get(SILO_PIN_HEARTBEAT);
	if (fd < 0)
		return fd;
	err = bpf_map_update_elem(fd, &zero, &hb, BPF_ANY) ? -errno : 0;
	close(fd);
	return err;
}

/* Entries per route cache for fwd_setup to make; 0: the default. */
static __u32 fwd_cache_size;

/* in0 and out0 with their addresses, silo on both; then cmds (routes). */
static inline int fwd_setup(const char *cmds)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };
	/* unbound: the tests run the loaded program with BPF_PROG_TEST_RUN,
	 * which the kernel refuses to a program bound to its device. */
	struct silo_xdp_load_opts fwd = { .forward = true,
					  .cache_size = fwd_cache_size,
					  .unbound = true };

	if (sh("set -e\n"
	       "ip link add in0 type veth peer name in0p\n"
	       "ip link add out0 type veth peer name out0p\n"
	       /* The peers stay silent (no IPv6 autoconf, DAD or MLD), so
		* the counters change only for the packets a test runs. */
	       "sysctl -qw net.ipv6.conf.in0p.disable_ipv6=1 net.ipv6.conf.out0p.disable_ipv6=1\n"
	       /* A veth sends XDP frames only while its peer takes them
		* (GRO, or a program): else silo keeps it out of tx_ports. */
	       "ethtool -K in0p gro on >/dev/null\n"
	       "ethtool -K out0p gro on >/dev/null\n"
	       "for d in in0 in0p out0 out0p; do ip link set $d up; done\n"
	       "ip addr add 10.1.0.1/24 dev in0\n"
	       "ip addr add fd01::1/64 dev in0 nodad\n"
	       "ip addr add 10.2.0.1/24 dev out0\n"
	       "ip addr add fd02::1/64 dev out0 nodad\n"
	       "ip neigh add 10.2.0.2 lladdr 02:00:00:00:02:02 dev out0 nud permanent\n"
	       "ip neigh add 10.2.0.3 lladdr 02:00:00:00:02:03 dev out0 nud permanent\n"
	       "ip neigh add fd02::2 lladdr 02:00:00:00:02:02 dev out0 nud permanent\n"
	       "ip neigh add fd02::3 lladdr 02:00:00:00:02:03 dev out0 nud permanent\n"
	       "sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1\n"
	       "sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.in0.rp_filter=0\n"
	       "%s\n",
	       cmds ? cmds : ""))
		return -1;
	in0 = if_nametoindex("in0");
	out0 = if_nametoindex("out0");
	if (read_mac("in0", mac_in0) || read_mac("out0", mac_out0)) {
		printf("# cannot read MAC addresses\n");
		return -1;
	}
	if (silo_open(&s, &opts) || silo_xdp_load(s, "in0", &fwd) ||
	    silo_xdp_load(s, "out0", &fwd))
		return -1;
	prog_in0 = prog_of(in0);
	if (prog_in0 < 0) {
		printf("# cannot find the loaded program\n");
		return -1;
	}
	return fwd_heartbeat(1);
}

/*
 * Loads silo on in0 again over the pins, with o or (NULL) forwarding: a
 * replace, which syncs genid and the side maps as every load does.
 * prog_in0 then names the new program. 0, or silo_xdp_load()'s error.
 */
static inline int fwd_reload_in0(const struct silo_xdp_load_opts *o)
{
	struct silo_xdp_load_opts fwd = { .forward = true,
					  .replace = true,
					  .unbound = true };
	int err = silo_xdp_load(s, "in0", o ? o : &fwd);

	if (err)
		return err;
	close(prog_in0);
	prog_in0 = prog_of(in0);
	return 0;
}

static inline void fwd_teardown(void)
{
	silo_xdp_unload(s, "in0");
	silo_xdp_unload(s, "out0");
	close(prog_in0);
	silo_close(s);
}

static inline int run_on(int prog_fd, __u32 ifindex, const uint8_t *pkt,
			 size_t len, uint8_t *out, __u32 *out_len)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
		    .data_size_in = len, .data_out = out,
		    .data_size_out = PKT_MAX, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -errno;
	*out_len = opts.data_size_out;
	return opts.retval;
}

static inline void stats_total(struct silo_stats *total)
{
	int ncpus = silo_nr_cpus(), cpu;
	struct silo_stats *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	unsigned int i;

	memset(total, 0, sizeof(*total));
	if (!per_cpu || silo_stats_read(s, per_cpu)) {
		free(per_cpu);
		return;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_STAT_MAX; i++)
			((__u64 *)total)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
}

/* Runs pkt on in0 (or dev) and returns the counters it changed. */
struct result {
	int verdict;
	uint8_t out[PKT_MAX];
	__u32 len;
	struct silo_stats d; /* deltas */
};

static inline void run_pkt_dev(int prog_fd, __u32 ifindex, const uint8_t *pkt,
			       size_t len, struct result *r)
{
	struct silo_stats before, after;
	unsigned int i;

	stats_total(&before);
	r->verdict = run_on(prog_fd, ifindex, pkt, len, r->out, &r->len);
	stats_total(&after);
	for (i = 0; i < SILO_STAT_MAX; i++)
		((__u64 *)&r->d)[i] =
			((__u64 *)&after)[i] - ((__u64 *)&before)[i];
}

static inline void run_pkt(const uint8_t *pkt, size_t len, struct result *r)
{
	run_pkt_dev(prog_in0, in0, pkt, len, r);
}

static inline void v4(uint8_t a[16], const char *s)
{
	memset(a, 0, 16);
	inet_pton(AF_INET, s, a);
}

static inline void v6(uint8_t a[16], const char *s)
{
	inet_pton(AF_INET6, s, a);
}

/* A UDP packet from the client side (10.1.0.2) to dst, for in0. */
static inline struct pkt_spec spec4(const char *dst)
{
	struct pkt_spec sp = { .family = AF_INET, .payload = 32 };

	memcpy(sp.dmac, mac_in0, 6);
	memcpy(sp.smac, mac_peer, 6);
	v4(sp.src, "10.1.0.2");
	v4(sp.dst, dst);
	return sp;
}

static inline struct pkt_spec spec6(const char *dst)
{
	struct pkt_spec sp = { .family = AF_INET6, .payload = 32 };

	memcpy(sp.dmac, mac_in0, 6);
	memcpy(sp.smac, mac_peer, 6);
	v6(sp.src, "fd01::2");
	v6(sp.dst, dst);
	return sp;
}

/*
 * An ICMP error for this host (to in0's address) as a next router sends
 * it, e.g. IPv4 type 3 code 4 or IPv6 type 2, quoting a packet from this
 * host to quoted (an echo reply: the kernel's icmp_err learns the PMTU of
 * those). The ICMP checksums are left 0 (the XDP program does not read
 * them); fwd_icmp_csum() fills them in for the kernel.
 */
static inline size_t fwd_icmp_error(uint8_t *pkt, int family,
				    const char *quoted, uint8_t type,
				    uint8_t code)
{
	struct pkt_spec sp =
		family == AF_INET ? spec4("10.1.0.1") : spec6("fd01::1");
	size_t len, l4;
	uint8_t *q;

	sp.proto = family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	sp.payload = family == AF_INET ? 28 : 48;
	len = pkt_build(pkt, &sp);
	l4 = pkt_l3_off(&sp) + (family == AF_INET ? 20 : 40);
	memset(pkt + l4, 0, 8);
	pkt[l4] = type;
	pkt[l4 + 1] = code;
	q = pkt + l4 + 8;
	if (family == AF_INET) {
		q[0] = 0x45;
		q[9] = IPPROTO_ICMP;
		v4(q + 12, "10.1.0.1");
		inet_pton(AF_INET, quoted, q + 16);
	} else {
		q[0] = 0x60;
		q[6] = IPPROTO_ICMPV6;
		v6(q + 8, "fd01::1");
		v6(q + 24, quoted);
	}
	return len;
}

/* The ICMP (IPv6: with its pseudo header) checksum of fwd_icmp_error's. */
static inline void fwd_icmp_csum(uint8_t *pkt, size_t len, int family)
{
	size_t l3 = 14, l4 = l3 + (family == AF_INET ? 20 : 40);
	uint8_t buf[PKT_MAX + 40];
	size_t n = 0, l4len = len - l4;
	uint16_t c;

	memset(pkt + l4 + 2, 0, 2);
	if (family == AF_INET6) {
		memset(buf, 0, 40);
		memcpy(buf, pkt + l3 + 8, 32);
		buf[34] = l4len >> 8;
		buf[35] = l4len & 0xFF;
		buf[39] = IPPROTO_ICMPV6;
		n = 40;
	}
	memcpy(buf + n, pkt + l4, l4len);
	c = pkt_csum(buf, n + l4len);
	memcpy(pkt + l4 + 2, &c, 2);
}

/* Is dst marked in pmtu_marks (marks_fd), in slot (or, slot < 0, any)? */
static inline int fwd_pmtu_marked(int marks_fd, int family, const char *dst,
				  int slot)
{
	struct silo_pmtu_key k = { .family = family };
	struct silo_pmtu_mark m;
	int i;

	if (family == AF_INET)
		v4(k.addr, dst);
	else
		v6(k.addr, dst);
	for (i = 0; i < SILO_PMTU_SLOTS; i++) {
		k.slot = i;
		if ((slot < 0 || slot == i) &&
		    !bpf_map_lookup_elem(marks_fd, &k, &m))
			return 1;
	}
	return 0;
}

/* Every mark gone; unseen_fd >= 0: pmtu_unseen's times zeroed too. */
static inline void fwd_pmtu_forget(int marks_fd, int unseen_fd)
{
	struct silo_pmtu_key k;
	__u64 zero = 0;
	__u32 i;

	while (!bpf_map_get_next_key(marks_fd, NULL, &k))
		bpf_map_delete_elem(marks_fd, &k);
	for (i = 0; unseen_fd >= 0 && i < SILO_PMTU_UNSEEN_SLOTS; i++)
		bpf_map_update_elem(unseen_fd, &i, &zero, BPF_ANY);
}

struct find_ctx {
	struct silo_route_key key;
	struct silo_route_entry entry;
	__u32 node;
	int found;
};

static inline int find_cb(__u32 node, const struct silo_route_key *k,
			  const struct silo_route_entry *e, void *data)
{
	static const __u8 zero[16];
	struct find_ctx *f = data;

	/* A route key holds the source only where it matters. */
	if ((k->format & SILO_KEY_SOURCE) ==
		    (f->key.format & SILO_KEY_SOURCE) &&
	    k->ifindex == f->key.ifindex && k->family == f->key.family &&
	    (!memcmp(k->src, f->key.src, 16) || !memcmp(k->src, zero, 16)) &&
	    (!memcmp(k->dst, f->key.dst, 16) ||
	     ((k->format & SILO_KEY_SOURCE) && !memcmp(k->dst, zero, 16))) &&
	    k->sport == f->key.sport && k->dport == f->key.dport) {
		f->entry = *e;
		f->node = node;
		f->found++;
	}
	return 0;
}

/* The cache entry for sp's flow arriving on in0, if any. */
static inline int cache_entry(const struct pkt_spec *sp,
			      struct silo_route_entry *e)
{
	struct find_ctx f = {};

	f.key.ifindex = in0;
	f.key.family = sp->family == AF_INET6 ? SILO_AF_INET6 : SILO_AF_INET;
	memcpy(f.key.src, sp->src, 16);
	memcpy(f.key.dst, sp->dst, 16);
	if (silo_route_foreach(s, find_cb, &f))
		return -1;
	if (f.found)
		*e = f.entry;
	return f.found;
}

/* The source entry (the source check's answer) for sp arriving on in0. */
static inline int source_entry(const struct pkt_spec *sp,
			       struct silo_route_entry *e)
{
	struct find_ctx f = {};

	f.key.format = SILO_KEY_SOURCE;
	f.key.ifindex = in0;
	f.key.family = sp->family == AF_INET6 ? SILO_AF_INET6 : SILO_AF_INET;
	memcpy(f.key.src, sp->src, 16);
	memcpy(f.key.dst, sp->dst, 16);
	if (silo_route_foreach(s, find_cb, &f))
		return -1;
	if (f.found)
		*e = f.entry;
	return f.found;
}

/* What silod's sweeps end with (and its PMTU marks): genid.sweeps + 1. */
static inline void fwd_sweeps_forward(void)
{
	int fd = fwd_pin_get(SILO_PIN_GENID);
	struct silo_genid g;
	__u32 zero = 0;

	REQUIRE(fd >= 0 && !bpf_map_lookup_elem(fd, &zero, &g), "genid");
	g.sweeps++;
	CHECK(!bpf_map_update_elem(fd, &zero, &g, BPF_ANY), "sweeps + 1");
	close(fd);
}

static inline __u64 genid_now(void)
{
	struct silo_info info;

	return silo_info(s, &info) ? 0 : info.genid;
}

/* The packet the forward path must produce: new MACs, TTL - 1. */
static inline size_t expected_fwd(struct pkt_spec sp, const uint8_t *dmac,
				  uint8_t *buf)
{
	memcpy(sp.dmac, dmac, 6);
	memcpy(sp.smac, mac_out0, 6);
	sp.ttl = (sp.ttl ? sp.ttl : 64) - 1;
	return pkt_build(buf, &sp);
}

static inline void check_forwarded(const struct pkt_spec *sp,
				   const struct result *r, const uint8_t *dmac)
{
	uint8_t want[PKT_MAX];
	size_t len = expected_fwd(*sp, dmac, want);

	CHECK_EQ(r->verdict, XDP_REDIRECT);
	CHECK_EQ(r->len, len);
	CHECK(!memcmp(r->out, want, len),
	      "output bytes differ from the expected forwarded packet");
	CHECK_EQ(r->d.rx, 1);
	CHECK_EQ(r->d.redirect, 1);
	CHECK_EQ(r->d.pass, 0);
}

/* Forwards sp, checks it went out through dmac; returns its counters. */
static inline struct silo_stats forward_through(const struct pkt_spec *sp,
						const uint8_t *dmac)
{
	uint8_t pkt[PKT_MAX];
	struct result r;
	size_t len = pkt_build(pkt, sp);

	run_pkt(pkt, len, &r);
	check_forwarded(sp, &r, dmac);
	return r.d;
}

#endif /* SILO_TEST_FWD_H */
