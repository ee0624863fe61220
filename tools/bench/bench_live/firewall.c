// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's stateful firewall, for the variants kernel_fw and silo_fw:
 * the router's forward chain as a real router's begins (policy drop,
 * established connections accepted first, invalid packets dropped, new
 * connections from the ring's ingress accepted), and the ring's flows
 * made established in conntrack beforehand. The ring is one-way UDP, so
 * no reply would ever make its flows established: each is inserted
 * through ctnetlink (conntrack -I) as an assured entry that has seen its
 * reply, as a UDP stream is two seconds after its first reply (an entry
 * inserted so has its stream's start, stream_ts, long past). The
 * kernel then accepts each packet by the chain's first rule, and silo
 * (--forward-established) forwards it with conntrack's verdict. The later
 * rules count what they match: a packet that reached them was not one of
 * an established connection, and the variant measured something else.
 *
 * silo is loaded --forward-established in every variant then (silo on
 * the egress too, silo the variant): the opt-in is the namespace's, and
 * a forwarding load without it would clear it. Without the ruleset the
 * opt-in changes nothing (no family is outside, the program is the same),
 * so silo and silo_fw differ by the ruleset alone; and silod, seeing the
 * ruleset come, does not warn that forwarded traffic goes to the stack.
 * Called in the router's namespace.
 */
#include <stdio.h>
#include "live.h"

#define FW_TABLE "silo_bl_fw"

/* The ruleset on the router. */
int fw_up(void)
{
	if (L.fw)
		return 0;
	if (sh("nft 'table inet %1$s { chain forward { type filter hook forward priority filter; policy drop; ct state established,related accept; ct state invalid counter drop; iifname \"%2$s\" counter accept; }; }'",
	       FW_TABLE, DEV_IN))
		return -1;
	L.fw = true;
	return 0;
}

int fw_down(void)
{
	if (!L.fw)
		return 0;
	if (sh("nft delete table inet %s", FW_TABLE))
		return -1;
	L.fw = false;
	return 0;
}

/* The sum of the numbers cmd prints after "packets " (nft's counters), or
 * with count, the lines it prints; -1 if it fails. */
static long long out_sum(const char *cmd, bool count)
{
	long long n = 0, v;
	char line[512], *p;
	FILE *f = popen(cmd, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (count)
			n++;
		else if ((p = strstr(line, "packets ")) &&
			 sscanf(p, "packets %lld", &v) == 1)
			n += v;
	}
	return pclose(f) ? -1 : n;
}

/* Whether nft(8) and conntrack(8) are there: 0, or -1 (said). */
int fw_tools(void)
{
	if (out_sum("command -v nft; command -v conntrack", true) == 2)
		return 0;
	fprintf(stderr,
		"bench_live: kernel_fw and silo_fw need nft(8) and conntrack(8) (apt-get install nftables conntrack); --firewall none leaves them out\n");
	return -1;
}

/* Packets the chain's rules after the first matched, since fw_up(). */
__u64 fw_other(void)
{
	long long n =
		out_sum("nft list chain inet " FW_TABLE " forward", false);

	return n > 0 ? n : 0;
}

/*
 * The ring's flows (sources SRC_BASE + k, k < nsrc, to fd20::1, ports
 * UDP_SPORT to UDP_DPORT) anew in conntrack, assured and replied, with the
 * timeout the kernel's refresh gives a UDP stream (so that silo refreshes
 * it as it would a real one's), and checked there: every one listed,
 * assured.
 */
int fw_conns(__u32 nsrc)
{
	char cmd[160];
	long long n;

	if (sh("conntrack -D -f ipv6 -p udp --orig-port-dst %1$d >/dev/null 2>&1\n"
	       "t=$(sysctl -n net.netfilter.nf_conntrack_udp_timeout_stream) || exit 1\n"
	       "k=0; while [ $k -lt %2$u ]; do\n"
	       "  w=$((%3$u + k))\n"
	       "  conntrack -I -p udp -s $(printf 'fd01::%%x:%%x' $((w >> 16)) $((w & 65535))) -d fd20::1 --sport %4$d --dport %1$d -t $t -u SEEN_REPLY,ASSURED 2>/dev/null || exit 1\n"
	       "  k=$((k + 1))\n"
	       "done",
	       UDP_DPORT, nsrc, SRC_BASE, UDP_SPORT))
		return -1;
	snprintf(
		cmd, sizeof(cmd),
		"conntrack -L -f ipv6 -p udp --orig-port-dst %d 2>/dev/null | grep ASSURED",
		UDP_DPORT);
	n = out_sum(cmd, true);
	if (n != nsrc) {
		fprintf(stderr,
			"bench_live: conntrack lists %lld of the ring's %u flows as assured\n",
			n, nsrc);
		return -1;
	}
	return 0;
}

/* silo's conntrack counters (ct_stats, per CPU) summed. */
int fw_ct_read(struct silo_ct_stats *sum)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	__u64 v[ncpus > 0 ? ncpus : 1][SILO_CT_STAT_MAX];
	char path[PATH_MAX];
	__u32 zero = 0, i;

	if (L.ct_fd < 0) {
		snprintf(path, sizeof(path), "%s/%s", silo_pin_dir(L.s),
			 SILO_PIN_CT_STATS);
		L.ct_fd = bpf_obj_get(path);
		if (L.ct_fd < 0) {
			fprintf(stderr, "bench_live: %s: %s\n", path,
				strerror(errno));
			return -1;
		}
	}
	if (bpf_map_lookup_elem(L.ct_fd, &zero, v))
		return -1;
	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_CT_STAT_MAX; i++)
			((__u64 *)sum)[i] += v[cpu][i];
	return 0;
}
