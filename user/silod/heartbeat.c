// SPDX-License-Identifier: GPL-2.0
/*
 * The heartbeat and the daemon map: what the data path and the CLI read of
 * silod. Below every other file of silod, so that either thread, wherever
 * it fails, can expire the heartbeat (invalidation_lost).
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "silod.h"

/* The data path stops using the cache now, not after the timeout. */
void heartbeat_expire(struct silod *d)
{
	struct silo_heartbeat hb = {
		.last_ns = 0, /* no silod */
		.timeout_ns = (__u64)d->cfg.timeout_ms * 1000000,
	};
	__u32 zero = 0;

	if (bpf_map_update_elem(d->maps.fd[SILO_MAP_HEARTBEAT], &zero, &hb,
				BPF_ANY))
		pr_err("cannot expire the heartbeat: %s\n", strerror(errno));
}

/*
 * An invalidation may have been lost (a failed refresh, sweep or bump): the
 * cache is not to be trusted until a resync succeeds. Either thread.
 */
void invalidation_lost(struct silod *d)
{
	pthread_mutex_lock(&d->lock);
	__atomic_add_fetch(&d->lost, 1, __ATOMIC_SEQ_CST);
	heartbeat_expire(d);
	pthread_mutex_unlock(&d->lock);
}

bool synced(struct silod *d)
{
	return __atomic_load_n(&d->lost, __ATOMIC_SEQ_CST) == d->synced;
}

/* Only while synced; under d->lock, so that a beat never lands just after
 * invalidation_lost() expired the heartbeat. True when it was written. */
bool beat(struct silod *d)
{
	struct silo_heartbeat hb = {
		.last_ns = coarse_ns(),
		.timeout_ns = (__u64)d->cfg.timeout_ms * 1000000,
		.pmtu_watch = d->pmtu.watch | SILO_HB_ROUTE_MTUS |
			      SILO_HB_SRCS | SILO_HB_LOCAL_BITS |
			      SILO_HB_SWEEPS | SILO_HB_DIRECT |
			      SILO_HB_DIRECT_TABLES,
	};
	bool written = false;
	__u32 zero = 0;

	if (!hb.last_ns)
		hb.last_ns = 1; /* 0 means "no daemon" */
	pthread_mutex_lock(&d->lock);
	if (synced(d)) {
		written = !bpf_map_update_elem(d->maps.fd[SILO_MAP_HEARTBEAT],
					       &zero, &hb, BPF_ANY);
		if (!written)
			pr_err("cannot write the heartbeat: %s\n",
			       strerror(errno));
	}
	pthread_mutex_unlock(&d->lock);
	return written;
}

void publish(struct silod *d)
{
	struct silo_daemon state;
	__u32 zero = 0;

	pthread_mutex_lock(&d->lock);
	d->state.dumps_retried =
		__atomic_load_n(&silo_nl_dumps_retried, __ATOMIC_RELAXED);
	state = d->state;
	pthread_mutex_unlock(&d->lock);
	bpf_map_update_elem(d->maps.fd[SILO_MAP_DAEMON], &zero, &state,
			    BPF_ANY);
}
