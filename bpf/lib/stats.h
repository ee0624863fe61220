/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counting: per-CPU arrays of __u64 indexed by the X-macro lists of
 * include/silo/abi/stats.h. Nothing here writes a line another CPU reads.
 */
#ifndef SILO_BPF_LIB_STATS_H
#define SILO_BPF_LIB_STATS_H

#include "common.h"

/* Per-CPU: no other CPU writes these cache lines. */
static __always_inline void count(struct silo_stats *st, __u32 idx)
{
	if (idx < SILO_STAT_MAX)
		((__u64 *)st)[idx] += 1;
}

static __always_inline int pass(struct silo_stats *st, __u32 reason)
{
	count(st, reason);
	count(st, SILO_STAT_PASS);
	return XDP_PASS;
}

/* A local packet sent to its service's CPU: verdict XDP_REDIRECT. */
static __always_inline int steered(struct silo_stats *s)
{
	count(s, SILO_STAT_STEERED);
	count(s, SILO_STAT_REDIRECT);
	return XDP_REDIRECT;
}

static __always_inline void scount(struct silo_service_stats *ss, __u32 idx)
{
	if (ss && idx < SILO_SSTAT_MAX)
		((__u64 *)ss)[idx] += 1;
}

#endif /* SILO_BPF_LIB_STATS_H */
