// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's firewall lines (forward_live_firewall): kernel_fw and
 * silo_fw (firewall.c) against each other and against kernel and silo
 * without the firewall, and the check that they measured what they say.
 */
#include "live.h"
#include "../bench.h"

/*
 * What a firewall variant's rate would not show: kernel_fw's packets not
 * forwarded by the stack, or accepted as new connections (the flows were
 * not established); silo_fw's not forwarded under conntrack's verdict.
 * c: each variant's cell of route set set, traffic t.
 */
int fw_check(const struct cell *const c[NR_VARIANTS], int set, int t)
{
	const struct cell *k = c[KERNEL_FW], *s = c[SILO_FW];
	const char *why = NULL;

	if (k->stack_fwd < k->all_pkts / 10 * 9)
		why = "kernel_fw: the stack forwarded too few of the packets";
	else if (k->fw_other > k->all_pkts / 100 ||
		 s->fw_other > s->all_pkts / 100)
		why = "the ruleset's rules after the first matched packets: not an established connection's";
	else if (s->ct.forwarded < s->pkts / 10 * 9 ||
		 s->d.redirect < s->pkts / 10 * 9)
		why = "silo_fw: XDP forwarded too few of the packets under conntrack's verdict";
	if (!why)
		return 0;
	fprintf(stderr,
		"bench_live: %s, %s: %s (kernel_fw: %llu of %llu by the stack; silo_fw: %llu of %llu by conntrack's verdict, %llu passed by it; later rules: %llu, %llu)\n",
		set_name[set], traffic[t].name, why,
		(unsigned long long)k->stack_fwd,
		(unsigned long long)k->all_pkts,
		(unsigned long long)s->ct.forwarded,
		(unsigned long long)s->pkts,
		(unsigned long long)(s->ct.pass_none + s->ct.pass_new +
				     s->ct.pass_state + s->ct.pass_csum +
				     s->ct.pass_flags),
		(unsigned long long)k->fw_other,
		(unsigned long long)s->fw_other);
	return -1;
}

/* The median over rounds of f(variant a's ns per packet, b's), each less
 * the floor's when over. */
static double fw_median(const struct cell *const c[NR_VARIANTS], int rounds,
			int a, int b, bool over, bool diff)
{
	double q[MAX_ROUNDS], x, y, fl;
	int r;

	for (r = 0; r < rounds; r++) {
		fl = over ? 1e9 / c[FLOOR]->pps[r] : 0;
		x = 1e9 / c[a]->pps[r] - fl;
		y = 1e9 / c[b]->pps[r] - fl;
		q[r] = diff ? x - y : x / y;
	}
	return bench_median(q, rounds);
}

/*
 * One line per route set and traffic: each variant's rate and ns per
 * packet (the medians), over the floor; silo_fw against kernel_fw (the
 * medians of the rounds' ratios), and what the firewall costs each
 * forwarder over its own forwarding without it (conntrack_ns: the
 * medians of the rounds' differences); what shows the variants measured
 * what they say.
 */
void fw_print(const struct cell *const c[NR_VARIANTS], int rounds, int set,
	      int t)
{
	static const int show[] = { KERNEL_FW, SILO_FW, KERNEL, SILO, FLOOR };
#define NSHOW (sizeof(show) / sizeof(show[0]))
	const struct cell *k = c[KERNEL_FW], *s = c[SILO_FW];
	double ns[NR_VARIANTS], tmp[MAX_ROUNDS];
	unsigned int i;
	int v;

	for (i = 0; i < NSHOW; i++) {
		v = show[i];
		memcpy(tmp, c[v]->pps, sizeof(tmp));
		ns[v] = 1e9 / bench_median(tmp, rounds);
	}
	bench_line("forward_live_firewall", source_shape_name(L.shape));
	printf(",\"route_set\":\"%s\",\"traffic\":\"%s\",\"flows\":%u,\"frame_bytes\":%.1f,\"ruleset\":\"inet forward: policy drop; ct state established,related accept; ct state invalid drop; iifname %s accept\",\"mpps\":{",
	       set_name[set], traffic[t].name, traffic[t].nsrc,
	       traffic_frame_bytes(t), DEV_IN);
	for (i = 0; i < NSHOW; i++)
		printf("%s\"%s\":%.3f", i ? "," : "", variant_name[show[i]],
		       1e3 / ns[show[i]]);
	printf("},\"ns_per_pkt\":{");
	for (i = 0; i < NSHOW; i++)
		printf("%s\"%s\":%.1f", i ? "," : "", variant_name[show[i]],
		       ns[show[i]]);
	printf("},\"ns_over_floor\":{");
	for (i = 0; i + 1 < NSHOW; i++)
		printf("%s\"%s\":%.1f", i ? "," : "", variant_name[show[i]],
		       ns[show[i]] - ns[FLOOR]);
	printf("},\"silo_fw_vs_kernel_fw_ns\":%.3f,\"silo_fw_vs_kernel_fw_ns_over_floor\":%.3f,\"conntrack_ns\":{\"kernel\":%.1f,\"silo\":%.1f}",
	       fw_median(c, rounds, SILO_FW, KERNEL_FW, false, false),
	       fw_median(c, rounds, SILO_FW, KERNEL_FW, true, false),
	       fw_median(c, rounds, KERNEL_FW, KERNEL, false, true),
	       fw_median(c, rounds, SILO_FW, SILO, false, true));
	printf(",\"silo_fw_counters\":{\"sink_pkts\":%llu,\"redirect\":%llu,\"pass\":%llu,\"ct_forwarded\":%llu,\"ct_pass_none\":%llu,\"ct_pass_new\":%llu,\"ct_pass_state\":%llu,\"ct_pass_csum\":%llu,\"ct_refreshed\":%llu},\"kernel_fw_sink_pkts_all\":%llu,\"kernel_fw_stack_forwarded\":%llu,\"ruleset_later_rules_pkts\":%llu,\"ring_lost\":%llu}\n",
	       (unsigned long long)s->pkts, (unsigned long long)s->d.redirect,
	       (unsigned long long)s->d.pass,
	       (unsigned long long)s->ct.forwarded,
	       (unsigned long long)s->ct.pass_none,
	       (unsigned long long)s->ct.pass_new,
	       (unsigned long long)s->ct.pass_state,
	       (unsigned long long)s->ct.pass_csum,
	       (unsigned long long)s->ct.refreshed,
	       (unsigned long long)k->all_pkts,
	       (unsigned long long)k->stack_fwd,
	       (unsigned long long)(k->fw_other + s->fw_other),
	       (unsigned long long)(k->lost + s->lost));
}
