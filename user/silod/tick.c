// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop's periodic work, around each ppoll: the heartbeat (with
 * the neighbour confirmation and the daemon map), systemd's watchdog, the
 * envelope and, once a second, what changes without a notification
 * (sysctls and route MTUs, the PMTU watch, services, policy queue tables).
 */
#include <poll.h>
#include "silod.h"

void tick_run(struct silod *d, struct tick *t, __u64 now)
{
	/* Not ready yet: beat as soon as a resync made it synced. */
	if (now >= t->next_beat || (!d->ready && synced(d))) {
		bool beating = beat(d);

		neigh_confirm(d);
		publish(d);
		t->next_beat = now + (__u64)d->cfg.heartbeat_ms * 1000000;
		/* The first beat: the data path trusts the cache. */
		if (beating && !d->ready) {
			d->ready = true;
			notify("READY=1");
			notify_serving(d);
		}
	}
	/* The loop turns: systemd's watchdog is fed. Also while a
	 * resync fails, which the loop retries itself. */
	t->watchdog = notify_watchdog_ns(d);
	if (t->watchdog && now >= t->next_watchdog) {
		notify("WATCHDOG=1");
		t->next_watchdog = now + t->watchdog;
	}
}

__u64 tick_wait(struct silod *d, const struct tick *t, __u64 now)
{
	__u64 wait = t->next_beat - now;

	if (t->watchdog && t->next_watchdog - now < wait)
		wait = t->next_watchdog - now;
	return envelope_wait(d, now, wait);
}

void tick_poll(struct silod *d, const struct pollfd *pfd, int n)
{
	/* The envelope's poll is the second's: the rest follows it. */
	if (envelope_poll(d, pfd, n)) {
		config_poll(d);
		if (pmtu_poll(d))
			invalidation_lost(d);
		service_poll(d);
		queues_poll(d);
	}
}
