// SPDX-License-Identifier: GPL-2.0
/*
 * What a burst of notifications asks for, done: side maps refreshed, then
 * a scoped invalidation (sweep.c) or a genid bump; or, after lost
 * messages or a failure, a resync with the kernel.
 */
#include <errno.h>
#include <string.h>
#include "silod.h"

/*
 * Everything from the kernel again. genid is bumped first, so no entry from
 * before is used whatever fails next, and last, so none filled from the
 * side maps while they were rewritten is. A failure leaves silod unsynced:
 * no heartbeat, and run() tries again every resync-interval-ms.
 */
int resync(struct silod *d)
{
	__u32 lost = __atomic_load_n(&d->lost, __ATOMIC_SEQ_CST);
	int err;

	d->last_resync_ns = now_ns();
	err = genid_bump(d);
	if (!err && d->fail_skip > 0)
		d->fail_skip--;
	else if (!err && d->fail_resyncs > 0) {
		d->fail_resyncs--;
		err = -EIO; /* SILOD_TEST_FAIL_RESYNC */
	}
	if (!err)
		err = silo_fill_local_addrs(d->maps.fd[SILO_MAP_LOCAL_ADDRS],
					    d->maps.fd[SILO_MAP_LOCAL_BITS]);
	if (!err)
		err = refresh_devices(d);
	if (!err) {
		nexthop_groups(d);
		err = sync_routes(d, SILO_SYNC_ALL);
	}
	if (!err)
		err = apply_topology(d);
	if (!err)
		err = envelope_update(d);
	/* Before the bump: mtu6 is read under it, the marks made again. */
	if (!err) {
		pmtu_reset(d);
		err = pmtu_poll(d);
	}
	if (!err) {
		neigh_seen_reset();
		err = index_rebuild(d);
	}
	if (!err)
		err = genid_bump(d);
	if (err) {
		/* Once a second is enough, however often it is retried. */
		if (d->last_resync_ns >= d->resync_warned + 1000000000ULL) {
			pr_err("resync failed (%s): the data path stands aside (every packet to the stack) until one succeeds; retrying every %d ms\n",
			       strerror(-err), d->cfg.resync_interval_ms);
			notify("STATUS=resync failed (%s): the data path stands aside until one succeeds; retrying every %d ms",
			       strerror(-err), d->cfg.resync_interval_ms);
			d->resync_warned = d->last_resync_ns;
		}
		invalidation_lost(d);
		return err;
	}
	if (d->resync_warned) {
		pr_info("resynced with the kernel: the route cache is used again\n");
		if (d->ready)
			notify_serving(d);
	}
	d->resync_warned = 0;
	d->synced = lost;
	DSTAT_ADD(d, resyncs, 1);
	pr_debug("resynced with the kernel\n");
	return 0;
}

/* Sweeps of more prefixes than this cost more than a global bump. */
#define MAX_SCOPED_PREFIXES 4096

/*
 * resync_due: the resync interval has passed. A resync still to come (after
 * lost messages or a failure) makes every burst a genid bump: nothing it
 * holds can be scoped, and its side maps wait for the resync.
 */
int process(struct silod *d, struct burst *b, bool resync_due)
{
	bool keep_resync = false;
	unsigned int what;
	int err = 0;

	if (b->resync && resync_due) {
		err = resync(d);
	} else if (b->resync) {
		err = genid_bump(d);
		if (err)
			invalidation_lost(d);
		keep_resync = true;
	} else {
		if (b->addrs)
			err = silo_fill_local_addrs(
				d->maps.fd[SILO_MAP_LOCAL_ADDRS],
				d->maps.fd[SILO_MAP_LOCAL_BITS]);
		if (!err && b->devices)
			silo_xdp_prune(d->silo); /* devices deleted: pins go */
		/* Addresses too: a device's source check depends on them. */
		if (!err && (b->devices || b->addrs))
			err = refresh_devices(d);
		/* A device without silo (or a tunnel) unwatches, now. */
		if (!err && b->devices)
			err = pmtu_poll(d);
		/* A rule may take a family out of the envelope (one
		 * bpf_fib_lookup cannot apply): now, not at the next poll. */
		if (!err && b->rules)
			err = envelope_update(d);
		/* The key first: the invalidation below is then made
		 * under the new one. */
		what = (b->rules ? SILO_SYNC_RULES : 0) |
		       (b->route_mtu ? SILO_SYNC_ROUTE_MTU : 0) |
		       (b->routes ? SILO_SYNC_ROUTES : 0) |
		       (b->srcs || b->addrs ? SILO_SYNC_SRCS : 0) |
		       (b->direct || b->addrs || b->rules ? SILO_SYNC_DIRECT :
							    0);
		if (!err && what)
			err = sync_routes(d, what);
		if (!err && b->route_bumps)
			err = genid_bump_by(d, b->route_bumps);
		if (!err &&
		    (b->bump || b->work.nr_prefixes > MAX_SCOPED_PREFIXES))
			err = genid_bump(d);
		else if (!err && (b->work.nr_prefixes || b->work.nr_neighs))
			err = invalidate(d, &b->work);
		if (err < 0) {
			/* Whatever failed, a bump keeps the cache honest, and
			 * a resync makes the side maps right again. */
			pr_err("invalidation failed (%s): bumping genid and resyncing\n",
			       strerror(-err));
			genid_bump(d);
			invalidation_lost(d);
		}
	}
	pthread_mutex_lock(&d->lock);
	d->state.bursts++;
	d->state.coalesced += b->messages > 1 ? b->messages - 1 : 0;
	pthread_mutex_unlock(&d->lock);
	work_reset(&b->work);
	b->messages = 0;
	b->route_bumps = 0;
	b->bump = b->addrs = b->devices = b->rules = b->route_mtu = false;
	b->routes = b->srcs = b->direct = false;
	b->resync = keep_resync;
	return err;
}
