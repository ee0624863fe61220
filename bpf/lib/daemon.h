/* SPDX-License-Identifier: GPL-2.0 */
/*
 * silod's liveness, as the data path sees it: its heartbeat map.
 */
#ifndef SILO_BPF_LIB_DAEMON_H
#define SILO_BPF_LIB_DAEMON_H

#include "common.h"
#include "maps.h"
#include "parse.h"

/*
 * A CPU's coarse clock as it last read it, and the jiffies it read it at:
 * CLOCK_MONOTONIC_COARSE moves only on the tick, and bpf_jiffies64() is
 * one load where bpf_ktime_get_coarse_ns() is a call into a seqcount
 * loop. The tick moves jiffies before the clock, so a reading may be one
 * tick behind (10 ms at HZ 100, the least HZ; twice that for a margin):
 * only what may be late by that much takes it.
 */
#define COARSE_SLACK_NS (20ULL * 1000000)

struct coarse_clock {
	__u64 jiffies;
	__u64 ns;
};

static __always_inline __u64 coarse_ns(struct coarse_clock *c)
{
	__u64 j = bpf_jiffies64();

	if (c->jiffies != j) {
		c->jiffies = j;
		c->ns = bpf_ktime_get_coarse_ns();
	}
	return c->ns;
}

/*
 * Only silod invalidates the cache and keeps the envelope current, so silo
 * forwards only while silod beats: not before it has run (0), not after it
 * has exited (0 again), not when the beat is too old, and not when it lies
 * in the future (a clock that is not ours: silod in another time
 * namespace). While it beats, *now is the time read (coarse, from c: a
 * beat up to a tick late is still live) and *watch the families whose
 * PMTU exceptions silod watches (1 << SILO_FAM_*: every ICMP error that
 * can teach this host one passes through silo).
 */
static __always_inline int daemon_live(struct coarse_clock *c, __u64 *now,
				       __u32 *watch)
{
	const struct silo_heartbeat *hb;
	__u32 zero = 0;
	__u64 last;
	__s64 age;

	hb = bpf_map_lookup_elem(&heartbeat, &zero);
	if (!hb)
		return 0;
	last = READ_ONCE(hb->last_ns);
	if (!last)
		return 0;
	*now = coarse_ns(c);
	/* A beat after this CPU's reading: the future only by the clock. */
	if ((__s64)(*now - last) < 0) {
		c->ns = bpf_ktime_get_coarse_ns();
		*now = c->ns;
	}
	age = (__s64)(*now - last);
	*watch = READ_ONCE(hb->pmtu_watch);
	return age >= 0 && age <= (__s64)READ_ONCE(hb->timeout_ns);
}

#endif /* SILO_BPF_LIB_DAEMON_H */
