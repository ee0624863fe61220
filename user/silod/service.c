// SPDX-License-Identifier: GPL-2.0
/*
 * Services that follow a reuseport group: their CPU sets are the group's
 * occupied slots, which change as sockets come and go without telling
 * silod (a socket that closes leaves its slot by itself). Re-read with the
 * config poll, every second.
 */
#include <errno.h>
#include <string.h>
#include "silod.h"

void service_poll(struct silod *d)
{
	int n = silo_service_sync_try(d->silo);

	if (n > 0)
		pr_info("%d service%s now steer%s to their group's CPUs\n", n,
			n == 1 ? "" : "s", n == 1 ? "s" : "");
	else if (n < 0 && n != -EAGAIN) /* taken: the next poll */
		pr_debug("services not synced: %s\n", strerror(-n));
}
