// SPDX-License-Identifier: GPL-2.0
/*
 * bench_xdp's reference forwarder: xdp_ref_fwd, what a plain XDP router
 * does for every packet (bpf_fib_lookup, TTL, MACs, a devmap redirect), the
 * baseline silo's miss storms and frame sizes are compared with.
 * BPF_PROG_TEST_RUN without live frames performs no redirect, for silo as
 * for the reference: both are timed up to their verdict.
 */
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "test.h"
#include "../bench.h"
#include "ref.h"

int attach_in(const char *ns, const char *dev, int prog_fd)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int other = bench_open_ns(ns), err = -1;

	if (self >= 0 && other >= 0 && !bench_enter("bench_xdp", other)) {
		unsigned int ifindex = if_nametoindex(dev);

		err = ifindex ? bpf_xdp_attach(ifindex, prog_fd,
					       XDP_FLAGS_DRV_MODE, NULL) :
				-1;
		if (bench_enter("bench_xdp", self))
			err = -1;
	}
	if (self >= 0)
		close(self);
	if (other >= 0)
		close(other);
	return err;
}

/*
 * The devmap holds out_dev; the program is attached to keep_dev (a veth
 * that stays down), so that it stays in the kernel's XDP dispatcher (see
 * bench_xdp.c). Returns the program's fd or -1.
 */
int ref_setup(struct silo_test *skel, const char *out_dev, const char *keep_dev,
	      const char *keep_ns)
{
	int fd = bpf_program__fd(skel->progs.xdp_ref_fwd);
	__u32 out = if_nametoindex(out_dev);
	int keep;

	if (!out || bpf_map_update_elem(bpf_map__fd(skel->maps.ref_tx), &out,
					&out, BPF_ANY)) {
		fprintf(stderr, "bench_xdp: ref_tx: %s\n", strerror(errno));
		return -1;
	}
	keep = attach_in(keep_ns, keep_dev, fd);
	if (keep) {
		fprintf(stderr, "bench_xdp: attaching xdp_ref_fwd: %s\n",
			strerror(errno));
		return -1;
	}
	return fd;
}

/* base's IPv4/UDP frame made bytes long (no FCS). */
size_t ref_frame(uint8_t *pkt, const struct pkt_spec *base, size_t bytes)
{
	struct pkt_spec sp = *base;

	sp.payload = bytes - 14 - 20 - 8;
	return pkt_build(pkt, &sp);
}

static int ref_run(int fd, __u32 ifindex, const uint8_t *pkt, size_t len,
		   uint8_t *out)
{
	struct xdp_md ctx = { .data_end = len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = len,
		    .data_out = out, .data_size_out = PKT_MAX, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	if (bpf_prog_test_run_opts(fd, &o))
		return -1;
	return o.retval;
}

/*
 * Frames the reference must hand to the stack, and the benchmark's own,
 * which it must forward: a baseline that passed them would be timed doing
 * nothing. base->ttl is 255.
 */
static const struct ref_case {
	const char *what;
	int verdict;
	uint8_t ttl;
	int opt_words, vlans;
	uint16_t frag_off;
	size_t bytes; /* 0: the benchmark's */
	bool group_mac, no_route;
} ref_cases[] = {
	{ "the benchmark's frame", XDP_REDIRECT, .bytes = 0 },
	{ "a full-size frame (IP length 1500)", XDP_REDIRECT, .bytes = 1514 },
	{ "a first fragment", XDP_REDIRECT, .frag_off = 0x2000 },
	{ "TTL 1", XDP_PASS, .ttl = 1 },
	{ "IPv4 options", XDP_PASS, .opt_words = 1 },
	{ "a VLAN tag", XDP_PASS, .vlans = 1 },
	{ "a multicast MAC", XDP_PASS, .group_mac = true },
	{ "IP length 1501, over the MTU", XDP_PASS, .bytes = 1515 },
	{ "no route", XDP_PASS, .no_route = true },
};

/* The forwarded frame: TTL down by one, a valid checksum, the MACs. */
static int ref_rewrite_ok(const uint8_t *out, const uint8_t *in,
			  const uint8_t nh_mac[6], const uint8_t smac[6])
{
	return out[14 + 8] == in[14 + 8] - 1 && pkt_csum(out + 14, 20) == 0 &&
	       !memcmp(out, nh_mac, 6) && !memcmp(out + 6, smac, 6) &&
	       !memcmp(out + 12, in + 12, 2);
}

int ref_check(int fd, __u32 ifindex, const struct pkt_spec *base,
	      const char *out_dev, const uint8_t nh_mac[6])
{
	uint8_t pkt[PKT_MAX], out[PKT_MAX], smac[6];
	const struct ref_case *c;
	struct pkt_spec sp;
	unsigned int i;
	size_t len;
	int verdict;

	if (read_mac(out_dev, smac))
		return -1;
	for (i = 0; i < sizeof(ref_cases) / sizeof(ref_cases[0]); i++) {
		c = &ref_cases[i];
		sp = *base;
		sp.ttl = c->ttl ? c->ttl : sp.ttl;
		sp.ip_opt_words = c->opt_words;
		sp.nr_vlans = c->vlans;
		sp.frag_off = c->frag_off;
		if (c->group_mac)
			memcpy(sp.dmac, "\x01\x00\x5e\x00\x00\x01", 6);
		if (c->no_route)
			sp.dst[0] = 203;
		len = c->bytes ? ref_frame(pkt, &sp, c->bytes) :
				 pkt_build(pkt, &sp);
		verdict = ref_run(fd, ifindex, pkt, len, out);
		if (verdict != c->verdict ||
		    (verdict == XDP_REDIRECT &&
		     !ref_rewrite_ok(out, pkt, nh_mac, smac))) {
			fprintf(stderr,
				"bench_xdp: the reference forwarder is wrong for %s (verdict %d, want %d): its figures would not be a baseline\n",
				c->what, verdict, c->verdict);
			return -1;
		}
	}
	return 0;
}

/* The reference's rows; sz: SZ_*, st: the storms measured beside it. */
void ref_print(double ref_ns, double fib_ns, double hit_ns, const double *sz,
	       double size_ratio, const struct ref_storm *st, int nr_st)
{
	int i, d;
	double r;

	bench_line("ref_fwd", "prog_test_run");
	printf(",\"ns_per_pkt\":%.1f,\"vs\":\"fwd_fib_every_pkt\",\"ratio\":%.3f,\"cache_hit_vs_ref\":%.3f}\n",
	       ref_ns, ref_ns / fib_ns, hit_ns / ref_ns);
	bench_line("fwd_cache_hit_size", "prog_test_run");
	printf(",\"frame_bytes\":1514,\"ip_len\":1500,\"ns_per_pkt\":%.1f,\"vs\":\"frame_bytes 64\",\"ns_per_pkt_64\":%.1f,\"ratio\":%.3f,\"target\":%.2f,\"met\":%s,\"ref_ns_per_pkt_64\":%.1f,\"ref_ns_per_pkt_1514\":%.1f}\n",
	       sz[SZ_HIT_1514], sz[SZ_HIT_64], size_ratio, SIZE_TARGET,
	       size_ratio <= SIZE_TARGET ? "true" : "false", sz[SZ_REF_64],
	       sz[SZ_REF_1514]);
	for (i = 0; i < nr_st; i++)
		for (d = 0; st[i].packets && d < 2; d++) {
			r = st[i].ns[d][0] / st[i].ns[d][2];
			bench_line("miss_storm_vs_ref", "prog_test_run");
			printf(",\"distinct\":\"%s\",\"key\":\"%s\",\"packets\":%d,\"cpus\":%d,\"ns_per_pkt\":%.1f,\"vs\":\"ref_fwd\",\"ref_ns_per_pkt\":%.1f,\"ratio\":%.3f,\"target\":%.2f,\"met\":%s}\n",
			       d ? "destinations" : "sources", st[i].key,
			       st[i].packets, st[i].cpus, st[i].ns[d][0],
			       st[i].ns[d][2], r, REF_STORM_TARGET,
			       r <= REF_STORM_TARGET ? "true" : "false");
		}
}
