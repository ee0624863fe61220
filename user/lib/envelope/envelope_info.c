// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The envelope as libsilo shows it: each condition's name, description and
 * what to do about it, and this namespace's evaluation beside what the data
 * path was told (envelope.c evaluates). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "../pins.h"

static const char *const names[SILO_ENV_BIT_MAX] = {
#define SILO_X(name, field) [SILO_ENV_BIT_##name] = #field,
	SILO_ENVELOPE(SILO_X)
#undef SILO_X
};

/* What each condition is, and what to do about it (tests/lib_unit.c checks
 * that every bit has both). */
static const struct {
	const char *desc, *todo;
} texts[SILO_ENV_BIT_MAX] = {
	[SILO_ENV_BIT_NFTABLES] = { "an nftables chain sees forwarded packets (hook prerouting, "
				    "forward or postrouting, or a netdev chain) and is not proven "
				    "to change nothing (no rule, policy accept, no counters, no "
				    "conntrack in use)",
				    "delete the chain or its rules, or load with "
				    "--allow-firewall-bypass if XDP may skip it" },
	[SILO_ENV_BIT_IPTABLES_LEGACY] = { "iptables-legacy tables are loaded (/proc/net/ip*_tables_names)",
					   "flush and unload them (or use nftables), or load with "
					   "--allow-firewall-bypass if XDP may skip them" },
	[SILO_ENV_BIT_XFRM] = { "IPsec (xfrm) policies for forwarded or output traffic",
				"forwarded traffic must go through xfrm: silo stands aside" },
	[SILO_ENV_BIT_FORWARDING_OFF] = { "IPv6 forwarding is off (net.ipv6.conf.all.forwarding 0)",
					  "the kernel does not forward IPv6: neither does silo" },
	[SILO_ENV_BIT_MPATH_HASH] = { "a multipath hash policy bpf_fib_lookup cannot reproduce",
				      "use fib_multipath_hash_policy 0, 1 or 2" },
	[SILO_ENV_BIT_UNKNOWN] = { "the configuration could not be read",
				   "see silod's log; silo stands aside until it can" },
	[SILO_ENV_BIT_TC] = { "tc filters or BPF programs, or a shaping qdisc, on a device "
			      "(forwarding in XDP skips them)",
			      "remove them, or load with --allow-firewall-bypass if XDP may "
			      "skip them" },
	[SILO_ENV_BIT_RULE_SUPPRESS] = { "an IPv6 policy rule with suppress_prefixlength or "
					 "suppress_ifgroup, which bpf_fib_lookup does not apply",
					 "silo stands aside for IPv6 while such a rule exists" },
};

const char *silo_envelope_name(unsigned int bit)
{
	return bit < SILO_ENV_BIT_MAX ? names[bit] : NULL;
}

const char *silo_envelope_desc(unsigned int bit)
{
	return bit < SILO_ENV_BIT_MAX ? texts[bit].desc : NULL;
}

const char *silo_envelope_todo(unsigned int bit)
{
	return bit < SILO_ENV_BIT_MAX ? texts[bit].todo : NULL;
}

/* genid from the pins, m left open: 0; 1 without pins (or pins of another
 * layout: no view of the data path); -errno. */
static int pinned_genid(struct silo *s, struct silo_maps *m,
			struct silo_genid *g)
{
	int err;

	if (silo_maps_open(s, m))
		return 1;
	if (!bpf_map_lookup_elem(m->fd[SILO_MAP_GENID], &(__u32){ 0 }, g))
		return 0;
	err = -errno;
	silo_maps_close(m);
	return err;
}

int silo_envelope_info(struct silo *s, struct silo_envelope_info *info)
{
	struct silo_envelope env;
	struct silo_maps m;
	struct silo_genid g;
	int err;

	memset(info, 0, sizeof(*info));
	/* A failure to read shows as UNKNOWN, named in detail. */
	silo_envelope_eval(&env);
	memcpy(info->holds, env.holds, sizeof(info->holds));
	snprintf(info->detail, sizeof(info->detail), "%s", env.detail);
	err = pinned_genid(s, &m, &g);
	if (err)
		return err > 0 ? 0 : err;
	info->loaded = true;
	info->override = g.override;
	memcpy(info->outside, g.outside, sizeof(info->outside));
	silo_maps_close(&m);
	return 0;
}

int silo_ct_stats_sum(int fd, struct silo_ct_stats *total)
{
	int ncpus = silo_nr_cpus(), cpu;
	struct silo_ct_stats *per_cpu;
	unsigned int i;
	__u32 zero = 0;

	memset(total, 0, sizeof(*total));
	if (fd < 0)
		return 0;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, per_cpu)) {
		free(per_cpu);
		return -errno;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_CT_STAT_MAX; i++)
			((__u64 *)total)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
	return 0;
}

int silo_conntrack_info(struct silo *s, struct silo_conntrack_info *info)
{
	struct silo_envelope env;
	struct silo_maps m;
	struct silo_genid g;
	int err;

	memset(info, 0, sizeof(*info));
	silo_envelope_eval_ct(&env);
	info->shape = env.ct_shape;
	snprintf(info->detail, sizeof(info->detail), "%s", env.ct_detail);
	err = pinned_genid(s, &m, &g);
	if (err)
		return err > 0 ? 0 : err;
	info->loaded = true;
	info->optin = g.ct_optin;
	info->fams = g.ct_fams;
	err = silo_ct_stats_sum(m.fd[SILO_MAP_CT_STATS], &info->stats);
	silo_maps_close(&m);
	return err;
}
