// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The RX queue maps of a plan (services in queue mode). Owned queue by
 * queue ("eth0 3"): a queue the file no longer names is set to none, one
 * it never named is left as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "config.h"

static void cpu_str(char *buf, size_t len, __u32 cpu)
{
	if (cpu == SILO_SERVICE_NO_CPU)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "CPU %u", cpu);
}

static void one_queue(struct plan *p, const struct cfg_queue_map *q,
		      __u32 ifindex, __u32 queue, __u32 now)
{
	struct silo_change *c;
	char name[CFG_NAME_MAX], want[32];

	snprintf(name, sizeof(name), "%s %u", q->dev, queue);
	cpu_str(want, sizeof(want), q->cpu[queue]);
	if (now != q->cpu[queue]) {
		c = plan_add(p, SILO_CHANGE_UPDATE, "queue-map", q->line, "%s",
			     name);
		snprintf(c->detail, sizeof(c->detail), "%s", want);
		if (!p->opts->dry_run)
			plan_done(p, c,
				  silo_queue_map_set(p->s, ifindex, queue,
						     q->cpu[queue]));
		if (c->err)
			return;
	} else if (!cfg_owned_has(&p->old, CFG_QUEUE, name)) {
		c = plan_add(p, SILO_CHANGE_ADOPT, "queue-map", q->line, "%s",
			     name);
		snprintf(c->detail, sizeof(c->detail), "%s", want);
	}
	cfg_owned_add(&p->now, CFG_QUEUE, name);
}

/* Whether name ("eth0 3") is a queue of dev. */
static bool of_device(const char *name, const char *dev)
{
	size_t l = strlen(dev);

	return !strncmp(name, dev, l) && name[l] == ' ';
}

static void make_queue_map(struct plan *p, const struct cfg_queue_map *q,
			   bool loaded)
{
	struct silo_change *c;
	__u32 ifindex, i;
	__u32 *now;
	int err;

	ifindex = if_nametoindex(q->dev);
	if (!ifindex) {
		c = plan_add(p, SILO_CHANGE_WAIT, "queue-map", q->line, "%s",
			     q->dev);
		snprintf(c->detail, sizeof(c->detail), "no such device");
		for (i = 0; i < p->old.nr[CFG_QUEUE]; i++)
			if (of_device(p->old.names[CFG_QUEUE][i], q->dev))
				cfg_owned_add(&p->now, CFG_QUEUE,
					      p->old.names[CFG_QUEUE][i]);
		return;
	}
	now = calloc(q->nr, sizeof(*now));
	if (!now) {
		p->err = p->err ?: -ENOMEM;
		return;
	}
	err = loaded ? silo_queue_map_get(p->s, ifindex, now, q->nr) : -ENOENT;
	for (i = 0; err && i < q->nr; i++)
		now[i] = SILO_SERVICE_NO_CPU; /* no maps yet */
	for (i = 0; i < q->nr; i++)
		if (q->set[i])
			one_queue(p, q, ifindex, i, now[i]);
	free(now);
}

/* An earlier apply's queue ("eth0 3") the file no longer names, when it
 * has a CPU: set to none. */
static int remove_queue(struct plan *p, const char *name, bool undo, void *ctx)
{
	const bool *loaded = ctx;
	__u32 ifindex, queue, *now;
	char dev[IF_NAMESIZE];
	bool set;

	if (sscanf(name, "%15s %u", dev, &queue) != 2 ||
	    queue >= SILO_MAX_QUEUES)
		return 0;
	ifindex = if_nametoindex(dev);
	if (undo)
		return silo_queue_map_set(p->s, ifindex, queue,
					  SILO_SERVICE_NO_CPU);
	now = calloc(queue + 1, sizeof(*now));
	set = ifindex && now && *loaded &&
	      !silo_queue_map_get(p->s, ifindex, now, queue + 1) &&
	      now[queue] != SILO_SERVICE_NO_CPU;
	free(now);
	return set;
}

int plan_queue_maps(struct plan *p, bool remove)
{
	/* Whether the maps are there, asked once: it opens every pin. */
	bool loaded = cfg_loaded(p->s);
	size_t i;

	if (remove)
		plan_remove_unclaimed(p, CFG_QUEUE, "queue-map", "none",
				      remove_queue, &loaded);
	for (i = 0; !remove && i < p->ns->nr_qmaps; i++)
		make_queue_map(p, &p->ns->qmaps[i], loaded);
	return 0;
}
