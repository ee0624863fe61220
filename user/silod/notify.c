// SPDX-License-Identifier: GPL-2.0
/*
 * systemd's notification protocol (Type=notify, sd_notify(3)): READY=1 once
 * the first resync is done and the heartbeat written, so that units ordered
 * after silod find a route cache the data path may trust; STATUS= lines
 * saying what silod does; WATCHDOG=1 from the main loop; STOPPING=1 on the
 * way out. Without NOTIFY_SOCKET (not started by systemd) sd_notify does
 * nothing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include "silod.h"

void notify(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A lost notification is systemd's to notice (start timeout,
	 * watchdog); silod serves the data path either way. */
	sd_notify(0, msg);
}

/* WatchdogSec= of the unit (WATCHDOG_USEC for this pid), or 0. */
void notify_init(struct silod *d)
{
	uint64_t usec = 0;
	int r;

	d->watchdog_usec = 0;
	r = sd_watchdog_enabled(0, &usec);
	if (r < 0)
		pr_warn("ignoring WATCHDOG_USEC: %s\n", strerror(-r));
	else if (r > 0 && usec)
		d->watchdog_usec = usec;
}

/* Half the watchdog interval, or the heartbeat when that is shorter: the
 * loop wakes for the heartbeat anyway. 0: no watchdog. */
__u64 notify_watchdog_ns(const struct silod *d)
{
	__u64 half = d->watchdog_usec * 1000 / 2;
	__u64 beat = (__u64)d->cfg.heartbeat_ms * 1000000;

	if (!d->watchdog_usec)
		return 0;
	if (!half)
		half = 1;
	return half < beat ? half : beat;
}

void notify_serving(const struct silod *d)
{
	notify("STATUS=serving %s: %s invalidation, heartbeat %d ms, timeout %d ms",
	       silo_pin_dir(d->silo), d->cfg.global ? "global" : "scoped",
	       d->cfg.heartbeat_ms, d->cfg.timeout_ms);
}
