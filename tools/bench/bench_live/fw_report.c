// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's firewall lines (forward_live_firewall): kernel_fw and
 * silo_fw (firewall.c) against each other and against kernel and silo
 * without the firewall, and the check that they measured what they say.
 */
#include "live.h"
#include "../bench.h"

/* Of n, at least num / den: the check's share. */
static bool most(__u64 v, __u64 n, int num, int den)
{
	return v >= n / den * num;
}

/*
 * The flood's: each packet of either variant a new connection's, which
 * the chain's rule for them accepted, the table never full (nothing
 * dropped nor evicted for room), no packet invalid, every one forwarded
 * by the stack and back at the sink; silo_fw's passed by silo because
 * conntrack held no entry for them (one found, even unreplied, would be
 * pass_new or pass_state: not a new connection's packet).
 */
static const char *fw_check_flood(const struct cell *k, const struct cell *s)
{
	const struct cell *both[] = { k, s };
	const struct fw_counts *f;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		f = &both[i]->fw;
		if (!most(both[i]->stack_fwd, both[i]->all_pkts, 9, 10) ||
		    !most(f->new_conn, both[i]->all_pkts, 99, 100))
			return "the stack forwarded, or the rule for new connections accepted, too few of the packets";
		if (f->drop || f->early_drop || f->insert_failed)
			return "conntrack's table was full (drop, early_drop or insert_failed)";
		if (f->invalid || both[i]->lost)
			return "packets invalid, or lost";
	}
	/* Looked up and not found, or past the budget of misses not looked
	 * up (a storm of new connections: pass_storm). */
	if (!most(s->ct.pass_none + s->ct.pass_storm, s->pkts, 99, 100) ||
	    s->d.redirect > s->pkts / 100)
		return "silo_fw: silo did not pass the packets for want of a conntrack entry";
	return NULL;
}

/*
 * What a firewall variant's rate would not show: kernel_fw's packets not
 * forwarded by the stack, or accepted as new connections (the flows were
 * not established); silo_fw's not forwarded under conntrack's verdict.
 * The flood's, fw_check_flood(). c: each variant's cell of route set
 * set, traffic t.
 */
int fw_check(const struct cell *const c[NR_VARIANTS], int set, int t)
{
	const struct cell *k = c[KERNEL_FW], *s = c[SILO_FW];
	const char *why = NULL;

	if (t == FLOOD)
		why = fw_check_flood(k, s);
	else if (!most(k->stack_fwd, k->all_pkts, 9, 10))
		why = "kernel_fw: the stack forwarded too few of the packets";
	else if (k->fw.invalid + k->fw.new_conn > k->all_pkts / 100 ||
		 s->fw.invalid + s->fw.new_conn > s->all_pkts / 100)
		why = "the ruleset's rules after the first matched packets: not an established connection's";
	else if (!most(s->ct.forwarded, s->pkts, 9, 10) ||
		 !most(s->d.redirect, s->pkts, 9, 10))
		why = "silo_fw: XDP forwarded too few of the packets under conntrack's verdict";
	if (!why)
		return 0;
	fprintf(stderr,
		"bench_live: %s, %s: %s (kernel_fw: %llu of %llu by the stack, %llu new; silo_fw: %llu of %llu by conntrack's verdict, %llu passed for no entry, %llu new; later rules: %llu, %llu; full: %llu, %llu)\n",
		set_name[set], traffic[t].name, why,
		(unsigned long long)k->stack_fwd,
		(unsigned long long)k->all_pkts,
		(unsigned long long)k->fw.new_conn,
		(unsigned long long)s->ct.forwarded,
		(unsigned long long)s->pkts,
		(unsigned long long)(s->ct.pass_none + s->ct.pass_storm),
		(unsigned long long)s->fw.new_conn,
		(unsigned long long)(k->fw.invalid + k->fw.new_conn),
		(unsigned long long)(s->fw.invalid + s->fw.new_conn),
		(unsigned long long)(k->fw.drop + k->fw.early_drop +
				     k->fw.insert_failed),
		(unsigned long long)(s->fw.drop + s->fw.early_drop +
				     s->fw.insert_failed));
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
 * What the firewall counted under each variant, warm-ups included: the
 * chain's rules after the first (new connections accepted, invalid
 * packets dropped), packets conntrack dropped or entries it evicted for a
 * full table, the most entries it held.
 */
static void fw_print_conntrack(const struct cell *k, const struct cell *s)
{
	const struct cell *both[] = { k, s };
	const struct fw_counts *f;
	int i;

	printf(",\"ct_udp_timeout_s\":%d,\"firewall_counters\":{",
	       FW_FLOOD_UDP_TIMEOUT);
	for (i = 0; i < 2; i++) {
		f = &both[i]->fw;
		printf("%s\"%s\":{\"sink_pkts_all\":%llu,\"stack_forwarded\":%llu,\"new_accepted\":%llu,\"invalid_dropped\":%llu,\"ct_drop\":%llu,\"ct_early_drop\":%llu,\"ct_insert_failed\":%llu,\"ct_entries_max\":%llu}",
		       i ? "," : "", variant_name[i ? SILO_FW : KERNEL_FW],
		       (unsigned long long)both[i]->all_pkts,
		       (unsigned long long)both[i]->stack_fwd,
		       (unsigned long long)f->new_conn,
		       (unsigned long long)f->invalid,
		       (unsigned long long)f->drop,
		       (unsigned long long)f->early_drop,
		       (unsigned long long)f->insert_failed,
		       (unsigned long long)f->entries);
	}
	printf("}");
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
	       set_name[set], traffic[t].name, fw_sources(t, traffic[t].nsrc),
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
	fw_print_conntrack(k, s);
	printf(",\"silo_fw_counters\":{\"sink_pkts\":%llu,\"redirect\":%llu,\"pass\":%llu,\"ct_forwarded\":%llu,\"ct_pass_none\":%llu,\"ct_pass_storm\":%llu,\"ct_pass_new\":%llu,\"ct_pass_state\":%llu,\"ct_pass_csum\":%llu,\"ct_refreshed\":%llu},\"kernel_fw_sink_pkts_all\":%llu,\"kernel_fw_stack_forwarded\":%llu,\"ruleset_later_rules_pkts\":%llu,\"ring_lost\":%llu}\n",
	       (unsigned long long)s->pkts, (unsigned long long)s->d.redirect,
	       (unsigned long long)s->d.pass,
	       (unsigned long long)s->ct.forwarded,
	       (unsigned long long)s->ct.pass_none,
	       (unsigned long long)s->ct.pass_storm,
	       (unsigned long long)s->ct.pass_new,
	       (unsigned long long)s->ct.pass_state,
	       (unsigned long long)s->ct.pass_csum,
	       (unsigned long long)s->ct.refreshed,
	       (unsigned long long)k->all_pkts,
	       (unsigned long long)k->stack_fwd,
	       (unsigned long long)(k->fw.invalid + k->fw.new_conn +
				    s->fw.invalid + s->fw.new_conn),
	       (unsigned long long)(k->lost + s->lost));
}

/*
 * The turns' checks, the flood's of the rounds (fw_check_flood()) over
 * each variant's slices, and that the swaps took: silo_fw's slices passed
 * by silo for want of an entry, kernel_fw's never seen by it.
 */
int fw_turns_check(const struct turns *tu, int set)
{
	const struct cell *k = &tu->c[0], *s = &tu->c[1];
	const char *why = fw_check_flood(k, s);

	if (!why && (k->d.rx || k->ct.pass_none + k->ct.pass_storm))
		why = "kernel_fw's slices went through silo's program: the programs were not swapped";
	if (!why)
		return 0;
	fprintf(stderr,
		"bench_live: %s, %s in turns: %s (kernel_fw: %llu of %llu by the stack, %llu new, %llu seen by silo; silo_fw: %llu of %llu passed for no entry)\n",
		set_name[set], traffic[FLOOD].name, why,
		(unsigned long long)k->stack_fwd,
		(unsigned long long)k->all_pkts,
		(unsigned long long)k->fw.new_conn, (unsigned long long)k->d.rx,
		(unsigned long long)(s->ct.pass_none + s->ct.pass_storm),
		(unsigned long long)s->pkts);
	return -1;
}

/*
 * The turns' line: per variant the median slice's ns per packet, and the
 * median over pairs of silo_fw's ns over the floor to kernel_fw's (the
 * floor: the rounds' median for the flood), with its quartiles and the
 * median of the pairs' differences in ns. Returns that median ratio.
 */
double fw_turns_print(const struct turns *tu,
		      const struct cell *const c[NR_VARIANTS], int rounds,
		      int set)
{
	double q[MAX_TURNS], d[MAX_TURNS], k[MAX_TURNS], s[MAX_TURNS];
	double fl, tmp[MAX_ROUNDS], med;
	int i, n = tu->pairs;

	memcpy(tmp, c[FLOOR]->pps, sizeof(tmp));
	fl = 1e9 / bench_median(tmp, rounds);
	for (i = 0; i < n; i++) {
		k[i] = 1e9 / tu->pps[0][i];
		s[i] = 1e9 / tu->pps[1][i];
		q[i] = (s[i] - fl) / (k[i] - fl);
		d[i] = s[i] - k[i];
	}
	med = bench_median(q, n);
	bench_line("forward_live_firewall_turns", source_shape_name(L.shape));
	printf(",\"route_set\":\"%s\",\"traffic\":\"%s\",\"pairs\":%d,\"slice_secs\":%.2f,\"settle_secs\":%.2f,\"order\":\"kernel_fw silo_fw silo_fw kernel_fw ...\",\"floor_ns\":%.1f,\"ns_per_pkt\":{\"kernel_fw\":%.1f,\"silo_fw\":%.1f},\"silo_fw_less_kernel_fw_ns\":%.1f,\"silo_fw_vs_kernel_fw_ns_over_floor\":%.3f,\"quartiles\":[%.3f,%.3f],\"silo_fw_counters\":{\"sink_pkts\":%llu,\"ct_pass_none\":%llu,\"ct_pass_storm\":%llu}}\n",
	       set_name[set], traffic[FLOOD].name, n, tu->slice, tu->settle, fl,
	       bench_median(k, n), bench_median(s, n), bench_median(d, n), med,
	       q[n / 4], q[(3 * n) / 4], (unsigned long long)tu->c[1].pkts,
	       (unsigned long long)tu->c[1].ct.pass_none,
	       (unsigned long long)tu->c[1].ct.pass_storm);
	return med;
}

/*
 * The firewall's targets (the issue's), silo_fw's ns over the floor to
 * kernel_fw's: for the flood within 5 %, from the turns when there are
 * (turns: their median, else < 0), else the median of the rounds'; for
 * established flows (steady traffic) at most a third, the rounds'.
 */
void fw_target(const struct cell *const c[NR_VARIANTS], int rounds, int set,
	       int t, double turns)
{
	double val, max = t == FLOOD ? 1.05 : 1.0 / 3;
	bool in_turns = t == FLOOD && turns >= 0;

	val = in_turns ? turns :
			 fw_median(c, rounds, SILO_FW, KERNEL_FW, true, false);
	bench_line("forward_live_target", source_shape_name(L.shape));
	printf(",\"route_set\":\"%s\",\"traffic\":\"%s\",\"what\":\"silo_fw_vs_kernel_fw_ns_over_floor%s\",\"value\":%.3f,\"target\":\"%s\",\"met\":%s}\n",
	       set_name[set], traffic[t].name, in_turns ? ", in turns" : "",
	       val, t == FLOOD ? "<= 1.05" : "<= 1/3",
	       val <= max ? "true" : "false");
}
