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
 * The flood is the other way round: every packet a new connection's
 * (fw_prepare()), which the kernel accepts by the last rule, conntrack
 * making an entry for it, and which silo passes, finding none.
 *
 * silo is loaded --forward-established in every variant then (silo on
 * the egress too, silo the variant): the opt-in is the namespace's, and
 * a forwarding load without it would clear it. Without the ruleset the
 * opt-in changes nothing (no family is outside, the program is the same),
 * so silo and silo_fw differ by the ruleset alone; and silod, seeing the
 * ruleset come, does not warn that forwarded traffic goes to the stack.
 * Called in the router's namespace.
 */
#include <stddef.h>
#include <stdio.h>
#include "live.h"
#include "../../../user/lib/silod.h"

#define FW_TABLE "silo_bl_fw"

/* The ruleset on the router, its unreplied UDP timeout and the flood's
 * sources (fw_prepare()). */
int fw_up(void)
{
	int max = 0;
	FILE *f;

	if (L.fw)
		return 0;
	if (sh("nft 'table inet %1$s { chain forward { type filter hook forward priority filter; policy drop; ct state established,related accept; ct state invalid counter drop; iifname \"%2$s\" counter accept; }; }' && sysctl -qw net.netfilter.nf_conntrack_udp_timeout=%3$d",
	       FW_TABLE, DEV_IN, FW_FLOOD_UDP_TIMEOUT))
		return -1;
	L.fw = true;
	f = fopen("/proc/sys/net/netfilter/nf_conntrack_max", "re");
	if (!f || fscanf(f, "%d", &max) != 1 || max < 2)
		max = 0;
	if (f)
		fclose(f);
	if (!max)
		return -1;
	L.fw_flood_max = max / 2;
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

/* The lines cmd prints; -1 if it fails. */
static long long out_lines(const char *cmd)
{
	char line[512];
	long long n = 0;
	FILE *f = popen(cmd, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n++;
	return pclose(f) ? -1 : n;
}

/* Whether nft(8) and conntrack(8) are there: 0, or -1 (said). */
int fw_tools(void)
{
	if (out_lines("command -v nft; command -v conntrack") == 2)
		return 0;
	fprintf(stderr,
		"bench_live: kernel_fw and silo_fw need nft(8) and conntrack(8) (apt-get install nftables conntrack); --firewall none leaves them out\n");
	return -1;
}

/* The chain's counters: packets its invalid rule dropped, its new
 * connections' rule accepted, since fw_up(). */
static int fw_rules(struct fw_counts *f)
{
	FILE *file = popen("nft list chain inet " FW_TABLE " forward", "re");
	char line[512], *p;
	long long v;

	if (!file)
		return -1;
	while (fgets(line, sizeof(line), file)) {
		p = strstr(line, "packets ");
		if (!p || sscanf(p, "packets %lld", &v) != 1)
			continue;
		if (strstr(line, "invalid"))
			f->invalid += v;
		else
			f->new_conn += v;
	}
	return pclose(file) ? -1 : 0;
}

/* conntrack -S's counters (of this namespace), summed over the CPUs, and
 * conntrack -C's entries. */
static int fw_ct_kernel(struct fw_counts *f)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ " drop=", offsetof(struct fw_counts, drop) },
		{ " early_drop=", offsetof(struct fw_counts, early_drop) },
		{ " insert_failed=",
		  offsetof(struct fw_counts, insert_failed) },
	};
	__u64 *v;
	FILE *file = popen("conntrack -S; conntrack -C", "re");
	char line[512], *p;
	unsigned int i;

	if (!file)
		return -1;
	while (fgets(line, sizeof(line), file)) {
		if (line[0] >= '0' && line[0] <= '9')
			f->entries = strtoull(line, NULL, 10);
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			p = strstr(line, keys[i].key);
			v = (__u64 *)((char *)f + keys[i].off);
			if (p)
				*v += strtoull(p + strlen(keys[i].key), NULL,
					       10);
		}
	}
	return pclose(file) ? -1 : 0;
}

/* The firewall's counters now: 0, or -1 (said). */
int fw_read(struct fw_counts *f)
{
	memset(f, 0, sizeof(*f));
	if (!fw_rules(f) && !fw_ct_kernel(f))
		return 0;
	fprintf(stderr,
		"bench_live: cannot read the firewall's counters (nft, conntrack -S)\n");
	return -1;
}

/* Adds after - before to sum; the most entries of either. */
void fw_add(struct fw_counts *sum, const struct fw_counts *before,
	    const struct fw_counts *after)
{
	sum->invalid += after->invalid - before->invalid;
	sum->new_conn += after->new_conn - before->new_conn;
	sum->drop += after->drop - before->drop;
	sum->early_drop += after->early_drop - before->early_drop;
	sum->insert_failed += after->insert_failed - before->insert_failed;
	if (after->entries > sum->entries)
		sum->entries = after->entries;
}

/*
 * The ring's flows (sources SRC_BASE + k, k < nsrc, to fd20::1, ports
 * UDP_SPORT to UDP_DPORT) anew in conntrack (emptied first: it holds the
 * ring's entries alone), assured and replied, with the
 * timeout the kernel's refresh gives a UDP stream (so that silo refreshes
 * it as it would a real one's), and checked there: every one listed,
 * assured.
 */
static int fw_conns(__u32 nsrc)
{
	char cmd[160];
	long long n;

	if (sh("conntrack -F >/dev/null 2>&1\n"
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
	n = out_lines(cmd);
	if (n != nsrc) {
		fprintf(stderr,
			"bench_live: conntrack lists %lld of the ring's %u flows as assured\n",
			n, nsrc);
		return -1;
	}
	return 0;
}

/*
 * Conntrack made ready for traffic t: a steady traffic's flows
 * established (fw_conns()); for the flood, the table emptied, each of its
 * packets then a new connection's: the router's unreplied UDP entries
 * expire as they are confirmed (FW_FLOOD_UDP_TIMEOUT), so that a source
 * that comes back is new again. A timeout of a second, the least above,
 * would keep the entries of a second's packets, more than the table holds
 * (nf_conntrack_max) at this rate; each source has one entry at most (a
 * lookup removes an expired one), so fw_sources() of them never fill it.
 * The table is the router namespace's, which holds the ring's alone.
 */
int fw_prepare(int t, __u32 nsrc)
{
	if (t != FLOOD)
		return fw_conns(nsrc);
	return sh("conntrack -F >/dev/null 2>&1");
}

/* Traffic t's sources under the firewall, of nsrc: the flood's at most
 * half the table. */
__u32 fw_sources(int t, __u32 nsrc)
{
	return t == FLOOD && nsrc > L.fw_flood_max ? L.fw_flood_max : nsrc;
}

/* silo's conntrack counters (ct_stats, per CPU) summed. */
int fw_ct_read(struct silo_ct_stats *sum)
{
	char path[PATH_MAX];

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
	return silo_ct_stats_sum(L.ct_fd, sum) ? -1 : 0;
}
