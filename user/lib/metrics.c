// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Map pressure and the Prometheus text exposition format (0.0.4): what
 * "silo stats --format prometheus" prints and silod's /metrics serves.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "metrics.h"
#include "pins.h"

/* Keys in a map, walked with get_next_key (a deleted key restarts the
 * walk, so a map that churns may count some twice: capped at max). */
static __u32 count_keys(int fd, __u32 max)
{
	struct silo_route_key key, next;
	bool has_key = false;
	__u32 n = 0;

	while (n < max &&
	       !bpf_map_get_next_key(fd, has_key ? &key : NULL, &next)) {
		key = next;
		has_key = true;
		n++;
	}
	return n;
}

int silo_cache_pressure(struct silo *s, struct silo_cache_pressure *p)
{
	struct silo_stats *per_cpu = NULL;
	struct silo_maps m;
	int err, ncpus, cpu;
	__u32 node;

	memset(p, 0, sizeof(*p));
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	err = silo_maps_open(s, &m);
	if (err)
		return err;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu) {
		err = -ENOMEM;
		goto out_maps;
	}
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_STATS], &(__u32){ 0 }, per_cpu)) {
		err = -errno;
		goto out_free;
	}
	p->nr_nodes = m.nr_nodes;
	for (node = 0; node < m.nr_nodes; node++) {
		struct bpf_map_info mi = {};
		__u32 len = sizeof(mi);

		if (bpf_obj_get_info_by_fd(m.node_fd[node], &mi, &len)) {
			err = -errno;
			goto out_free;
		}
		p->node[node].capacity = mi.max_entries;
		p->node[node].entries =
			count_keys(m.node_fd[node], mi.max_entries);
	}
	/* The data path counts on the CPU it runs on, into that CPU's node's
	 * cache: a CPU of no cache (node beyond nr_nodes) inserts nothing. */
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct silo_stats *st = &per_cpu[cpu];
		struct silo_cache_node *cn;

		if (bpf_map_lookup_elem(m.fd[SILO_MAP_CPU_NODE],
					&(__u32){ cpu }, &node) ||
		    node >= m.nr_nodes)
			continue;
		cn = &p->node[node];
		cn->inserts += st->cache_insert;
		cn->evictions += st->cache_evict;
		cn->insert_failures += st->cache_insert_fail;
		cn->refused += st->cache_refused;
	}
out_free:
	free(per_cpu);
out_maps:
	silo_maps_close(&m);
	return err;
}

int silo_group_occupancy(struct silo_group *g, __u32 *occupied, __u32 *slots)
{
	struct silo_group_slot *sl;
	struct silo_group_info info;
	__u32 i;
	int err;

	err = silo_group_info(g, &info);
	if (err)
		return err;
	sl = calloc(info.group.nr_slots ? info.group.nr_slots : 1, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	err = silo_group_slots(g, sl);
	if (!err) {
		*slots = info.group.nr_slots;
		*occupied = 0;
		for (i = 0; i < info.group.nr_slots; i++)
			*occupied += sl[i].cookie != 0;
	}
	free(sl);
	return err;
}

/*
 * Where each XDP counter goes: a family and the label value it takes
 * there. A counter of no rule (one added to abi.h later) still shows, in
 * silo_xdp_events_total{event="NAME"}.
 */

static const struct family xdp_families[] = {
	{ "silo_xdp_rx_packets_total", "Packets seen by silo's XDP program.",
	  NULL },
	{ "silo_xdp_packets_total", "Packets by XDP verdict.", "verdict" },
	{ "silo_xdp_passed_total",
	  "Packets passed to the kernel's stack, by reason (silo stats).",
	  "reason" },
	{ "silo_fib_lookups_total", "bpf_fib_lookup calls by return code.",
	  "result" },
	{ "silo_route_cache_lookups_total",
	  "Route cache lookups by result (a race: the entry changed meanwhile).",
	  "result" },
	{ "silo_route_cache_source_checks_total",
	  "Source (reverse path) checks, answered from the cache or looked up.",
	  "result" },
	{ "silo_xdp_events_total",
	  "Other data path counters, by their name in 'silo stats'.", "event" },
};

enum { F_RX, F_VERDICT, F_PASSED, F_FIB, F_LOOKUP, F_SRC, F_EVENT, F_NONE };

/* The family of counter idx and its label value; F_NONE: shown per node. */
static int family_of(unsigned int idx, const char **value)
{
	const char *name = silo_stat_name(idx);

	*value = name;
	switch (idx) {
	case SILO_STAT_RX:
		return F_RX;
	case SILO_STAT_PASS:
	case SILO_STAT_REDIRECT:
	case SILO_STAT_DROP:
		return F_VERDICT;
	case SILO_STAT_CACHE_HIT:
	case SILO_STAT_CACHE_MISS:
	case SILO_STAT_CACHE_STALE:
	case SILO_STAT_CACHE_RACE:
		*value = name + strlen("cache_");
		return F_LOOKUP;
	case SILO_STAT_SRC_HIT:
	case SILO_STAT_SRC_MISS:
		*value = name + strlen("src_");
		return F_SRC;
	case SILO_STAT_CACHE_INSERT:
	case SILO_STAT_CACHE_EVICT:
	case SILO_STAT_CACHE_INSERT_FAIL:
	case SILO_STAT_CACHE_REFUSED:
		return F_NONE;
	}
	if (!strncmp(name, "pass_", 5)) {
		*value = name + 5;
		return F_PASSED;
	}
	if (!strncmp(name, "fib_", 4)) {
		*value = name + 4;
		return F_FIB;
	}
	return F_EVENT;
}

static void put_xdp(FILE *f, const struct silo_stats *total)
{
	unsigned int fam, i;
	const char *value;

	for (fam = 0; fam < ARRAY_SIZE(xdp_families); fam++) {
		const struct family *fm = &xdp_families[fam];

		silo_prom_help(f, fm->name, "counter", fm->help);
		for (i = 0; i < SILO_STAT_MAX; i++)
			if (family_of(i, &value) == (int)fam)
				silo_prom_sample(f, fm->name, fm->label, value,
						 ((const __u64 *)total)[i]);
	}
}

static void put_node_family(FILE *f, const struct silo_cache_pressure *p,
			    const char *name, const char *type,
			    const char *help, size_t off, bool wide)
{
	char node[16];
	__u32 n;

	silo_prom_help(f, name, type, help);
	for (n = 0; n < p->nr_nodes; n++) {
		const char *base = (const char *)&p->node[n] + off;

		snprintf(node, sizeof(node), "%u", n);
		silo_prom_sample(f, name, "node", node,
				 wide ? *(const __u64 *)base :
					*(const __u32 *)base);
	}
}

static void put_caches(FILE *f, const struct silo_cache_pressure *p)
{
#define NODE(name, type, help, field, wide)     \
	put_node_family(f, p, name, type, help, \
			offsetof(struct silo_cache_node, field), wide)
	NODE("silo_route_cache_entries", "gauge",
	     "Entries in the node's route cache.", entries, false);
	NODE("silo_route_cache_capacity", "gauge",
	     "Entries the node's route cache holds at most.", capacity, false);
	NODE("silo_route_cache_inserts_total", "counter",
	     "Entries added to the node's route cache.", inserts, true);
	NODE("silo_route_cache_evictions_total", "counter",
	     "Entries evicted from the node's route cache to make room.",
	     evictions, true);
	NODE("silo_route_cache_insert_failures_total", "counter",
	     "Entries that could not be added to the node's route cache.",
	     insert_failures, true);
	NODE("silo_route_cache_refused_total", "counter",
	     "Misses not cached on the node: not admitted.", refused, true);
#undef NODE
}

static const char *const daemon_names[] = {
#define SILO_X(name, field, desc) "silo_daemon_" #field "_total",
	SILO_DAEMON_STATS(SILO_X)
#undef SILO_X
};

static const char *const daemon_descs[] = {
#define SILO_X(name, field, desc) "silod: " desc ".",
	SILO_DAEMON_STATS(SILO_X)
#undef SILO_X
};

static void put_daemon(FILE *f, const struct silo_daemon_info *di)
{
	const __u64 *c = &di->state.events_route;
	unsigned int i;

	silo_prom_help(
		f, "silo_daemon_up", "gauge",
		"1 while a live silod serves this namespace and its heartbeat is fresh (the data path uses the route cache).");
	silo_prom_sample(f, "silo_daemon_up", NULL, NULL,
			 di->running && di->cache_trusted);
	/* The counters as silod last published them (every heartbeat). */
	for (i = 0; i < SILO_DSTAT_MAX; i++) {
		silo_prom_help(f, daemon_names[i], "counter", daemon_descs[i]);
		silo_prom_sample(f, daemon_names[i], NULL, NULL, c[i]);
	}
}

struct groups {
	FILE *f; /* samples of one family */
	bool occupied; /* which */
};

static int put_group(struct silo_group *g, void *ctx)
{
	struct groups *gs = ctx;
	__u32 occupied, slots;
	int err;

	err = silo_group_occupancy(g, &occupied, &slots);
	if (err)
		return 0; /* gone meanwhile: the others still count */
	silo_prom_sample(gs->f,
			 gs->occupied ? "silo_reuseport_slots_occupied" :
					"silo_reuseport_slots",
			 "group", silo_group_name(g),
			 gs->occupied ? occupied : slots);
	return 0;
}

static int put_groups(FILE *f, struct silo *s)
{
	struct groups gs = { .f = f };
	int err;

	silo_prom_help(f, "silo_reuseport_slots", "gauge",
		       "Slots (one per possible CPU) of the reuseport group.");
	err = silo_group_foreach(s, put_group, &gs);
	if (err < 0)
		return err;
	silo_prom_help(f, "silo_reuseport_slots_occupied", "gauge",
		       "Slots of the reuseport group with a socket in them.");
	gs.occupied = true;
	err = silo_group_foreach(s, put_group, &gs);
	return err < 0 ? err : 0;
}

/*
 * Services (XDP steering): per service, summed over CPUs, what steering did
 * with its packets: silo_service_packets_total{service,outcome}, and rx
 * (the packets it saw) apart. service is "udp:PORT" for any
 * address, else "udp:ADDR:PORT" ("udp:[ADDR]:PORT" for IPv6), once per
 * service though it has an IPv4 and an IPv6 key; "none" holds the local
 * packets of no service (fragments, ICMP, ...).
 */
struct svc_names {
	__u32 id[SILO_MAX_SERVICES];
	char name[SILO_MAX_SERVICES][64];
	__u32 n;
};

static int svc_name_cb(const struct silo_service_key *k,
		       const struct silo_service *svc, void *ctx)
{
	static const __u8 any[16];
	struct svc_names *sn = ctx;
	char addr[INET6_ADDRSTRLEN];
	const char *proto = k->protocol == IPPROTO_TCP ? "tcp" : "udp";
	__u32 i;

	for (i = 0; i < sn->n; i++)
		if (sn->id[i] == svc->id)
			return 0; /* its other family */
	if (sn->n == SILO_MAX_SERVICES)
		return 0;
	sn->id[sn->n] = svc->id;
	if (!memcmp(k->addr, any, sizeof(any)))
		snprintf(sn->name[sn->n], sizeof(sn->name[0]), "%s:%u", proto,
			 ntohs(k->port));
	else if (k->family == SILO_AF_INET &&
		 inet_ntop(AF_INET, k->addr, addr, sizeof(addr)))
		snprintf(sn->name[sn->n], sizeof(sn->name[0]), "%s:%s:%u",
			 proto, addr, ntohs(k->port));
	else if (inet_ntop(AF_INET6, k->addr, addr, sizeof(addr)))
		snprintf(sn->name[sn->n], sizeof(sn->name[0]), "%s:[%s]:%u",
			 proto, addr, ntohs(k->port));
	else
		return 0;
	sn->n++;
	return 0;
}

static int put_services(FILE *f, struct silo *s, int ncpus)
{
	struct silo_service_stats *pc, sum;
	struct svc_names *sn;
	__u32 i, j;
	int err, cpu, fam;

	sn = calloc(1, sizeof(*sn));
	pc = calloc(ncpus, sizeof(*pc));
	if (!sn || !pc) {
		err = -ENOMEM;
		goto out;
	}
	sn->id[0] = 0; /* local packets of no service */
	snprintf(sn->name[0], sizeof(sn->name[0]), "none");
	sn->n = 1;
	err = silo_service_foreach(s, svc_name_cb, sn);
	if (err == -ENOENT) { /* maps of an older silo: none to show */
		err = 0;
		goto out;
	}
	if (err)
		goto out;
	for (fam = 0; fam < 2; fam++) {
		if (fam == 0) {
			silo_prom_help(
				f, "silo_service_rx_total", "counter",
				"Packets for a local address and a service's port (service none: for a local address and no service).");
		} else {
			fputs("# HELP silo_service_packets_total What XDP steering did with a service's packets (",
			      f);
			for (j = 1; j < SILO_SSTAT_MAX; j++)
				fprintf(f, "%s%s: %s", j > 1 ? "; " : "",
					silo_service_stat_name(j),
					silo_service_stat_desc(j));
			fputs(").\n# TYPE silo_service_packets_total counter\n",
			      f);
		}
		for (i = 0; i < sn->n; i++) {
			memset(&sum, 0, sizeof(sum));
			if (silo_service_stats(s, sn->id[i], pc))
				continue;
			for (cpu = 0; cpu < ncpus; cpu++)
				for (j = 0; j < SILO_SSTAT_MAX; j++)
					((__u64 *)&sum)[j] +=
						((__u64 *)&pc[cpu])[j];
			if (fam == 0) {
				silo_prom_sample(f, "silo_service_rx_total",
						 "service", sn->name[i],
						 sum.rx);
				continue;
			}
			for (j = 1; j < SILO_SSTAT_MAX; j++) {
				fputs("silo_service_packets_total{service=", f);
				silo_prom_label_value(f, sn->name[i]);
				fprintf(f, ",outcome=\"%s\"} %llu\n",
					silo_service_stat_name(j),
					(unsigned long long)((__u64 *)&sum)[j]);
			}
		}
	}
out:
	free(pc);
	free(sn);
	return err;
}

/*
 * Devices whose senders are on this host (silo_xdp_csum): which, what silo
 * does with the checksums they leave to offload, and the packets so:
 * silo_offload_csum_info{device,kind,action} 1 and
 * silo_offload_csum_packets_total{device,outcome}.
 */
static int put_csum(FILE *f, struct silo *s)
{
	static const char *const action[] = {
		[SILO_XDP_CSUM_NONE] = "none",
		[SILO_XDP_CSUM_FINISH] = "finish",
		[SILO_XDP_CSUM_PASS] = "pass",
	};
	struct silo_xdp_csum_info *c = NULL;
	struct silo_xdp_dev *devs;
	size_t n, i;
	int err, fam;

	err = silo_xdp_list(s, &devs, &n);
	if (err)
		return err;
	c = calloc(n ? n : 1, sizeof(*c));
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		if (!devs[i].attached ||
		    silo_xdp_csum(s, devs[i].ifname, &c[i]))
			c[i].what = SILO_XDP_CSUM_NONE; /* gone meanwhile */
	silo_prom_help(
		f, "silo_offload_csum_info", "gauge",
		"A device whose senders are on this host may carry TCP and UDP checksums left to offload: silo finishes them in XDP (action finish) or passes them to the stack (pass).");
	for (i = 0; i < n; i++) {
		if (c[i].what == SILO_XDP_CSUM_NONE)
			continue;
		fputs("silo_offload_csum_info{device=", f);
		silo_prom_label_value(f, devs[i].ifname);
		fputs(",kind=", f);
		silo_prom_label_value(f, c[i].kind);
		fprintf(f, ",action=\"%s\"} 1\n", action[c[i].what]);
	}
	silo_prom_help(
		f, "silo_offload_csum_packets_total", "counter",
		"Packets whose TCP or UDP checksum a sender on this host left to offload, by outcome: finished in XDP, or passed to the stack.");
	for (fam = 0; fam < 2; fam++)
		for (i = 0; i < n; i++) {
			if (c[i].what == SILO_XDP_CSUM_NONE)
				continue;
			fputs("silo_offload_csum_packets_total{device=", f);
			silo_prom_label_value(f, devs[i].ifname);
			fprintf(f, ",outcome=\"%s\"} %llu\n",
				fam ? "passed" : "finished",
				(unsigned long long)(fam ? c[i].passed :
							   c[i].finished));
		}
out:
	free(c);
	free(devs);
	return err;
}

/*
 * Established connections under a stateful firewall: the families XDP
 * forwards them for, silo_conntrack_forwarding{family} 0 or 1, and its
 * packets by outcome, silo_conntrack_packets_total{outcome} (forwarded, or
 * why passed: ct_stats).
 */
static int put_conntrack(FILE *f, struct silo *s)
{
	static const char *const fam[] = { "ipv4", "ipv6" };
	struct silo_ct_stats ct;
	struct silo_genid g;
	struct silo_maps m;
	unsigned int i;
	int err;

	err = silo_maps_open(s, &m);
	if (err)
		return err;
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_GENID], &(__u32){ 0 }, &g))
		err = -errno;
	if (!err)
		err = silo_ct_stats_sum(m.fd[SILO_MAP_CT_STATS], &ct);
	silo_maps_close(&m);
	if (err)
		return err;
	silo_prom_help(
		f, "silo_conntrack_forwarding", "gauge",
		"1 where XDP forwards the established connections of a stateful firewall with conntrack's verdict (--forward-established, the ruleset's shape proven).");
	for (i = 0; i < 2; i++)
		silo_prom_sample(f, "silo_conntrack_forwarding", "family",
				 fam[i], !!(g.ct_fams & (1U << i)));
	silo_prom_help(
		f, "silo_conntrack_packets_total", "counter",
		"Packets of a family whose established connections XDP forwards: forwarded, or why conntrack's view sent them to the stack.");
	for (i = 0; i < SILO_CT_STAT_MAX; i++)
		if (i != SILO_CT_STAT_REFRESHED)
			silo_prom_sample(f, "silo_conntrack_packets_total",
					 "outcome", silo_ct_stat_name(i),
					 ((__u64 *)&ct)[i]);
	silo_prom_help(
		f, "silo_conntrack_timeouts_refreshed_total", "counter",
		"Conntrack timeouts XDP wrote for the packets it forwarded.");
	silo_prom_sample(f, "silo_conntrack_timeouts_refreshed_total", NULL,
			 NULL, ct.refreshed);
	return 0;
}

int silo_metrics_write(struct silo *s, FILE *f)
{
	struct silo_stats *per_cpu, total = {};
	struct silo_cache_pressure *p;
	struct silo_daemon_info di;
	struct silo_info info;
	char *buf = NULL;
	size_t len = 0;
	int err, ncpus, cpu;
	unsigned int i;
	FILE *m;

	ncpus = silo_nr_cpus();
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	p = malloc(sizeof(*p));
	if (!per_cpu || !p) {
		err = -ENOMEM;
		goto out_free;
	}
	err = silo_stats_read(s, per_cpu);
	if (!err)
		err = silo_cache_pressure(s, p);
	if (!err)
		err = silo_info(s, &info);
	if (!err)
		err = silo_daemon_info(s, &di);
	if (err)
		goto out_free;
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_STAT_MAX; i++)
			((__u64 *)&total)[i] += ((__u64 *)&per_cpu[cpu])[i];

	/* Whole or nothing: written to f only once it is complete. */
	m = open_memstream(&buf, &len);
	if (!m) {
		err = -errno;
		goto out_free;
	}
	put_xdp(m, &total);
	put_caches(m, p);
	silo_prom_help(
		m, "silo_genid", "gauge",
		"Route cache generation: an entry of an older one is stale.");
	silo_prom_sample(m, "silo_genid", NULL, NULL, info.genid);
	put_daemon(m, &di);
	err = put_groups(m, s);
	if (!err)
		err = silo_metrics_put_group_stats(m, s, ncpus);
	if (!err)
		err = put_services(m, s, ncpus);
	if (!err)
		err = put_csum(m, s);
	if (!err)
		err = put_conntrack(m, s);
	if (fclose(m) && !err)
		err = -ENOMEM;
	if (!err && fwrite(buf, 1, len, f) != len)
		err = -EIO;
	free(buf);
out_free:
	free(p);
	free(per_cpu);
	return err;
}
