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
 * Only silod invalidates the cache and keeps the envelope current, so silo
 * forwards only while silod beats: not before it has run (0), not after it
 * has exited (0 again), not when the beat is too old, and not when it lies
 * in the future (a clock that is not ours: silod in another time
 * namespace). While it beats, *now is the time read (coarse) and *watch
 * the families whose PMTU exceptions silod watches (1 << SILO_FAM_*: every
 * ICMP error that can teach this host one passes through silo).
 */
static __always_inline int daemon_live(__u64 *now, __u32 *watch)
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
	*now = bpf_ktime_get_coarse_ns();
	age = (__s64)(*now - last);
	*watch = READ_ONCE(hb->pmtu_watch);
	return age >= 0 && age <= (__s64)READ_ONCE(hb->timeout_ns);
}

#endif /* SILO_BPF_LIB_DAEMON_H */
