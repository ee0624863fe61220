// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * silo_apply(): one namespace brought to its part of the file. Makes and
 * changes first, in the order things depend on each other (devices, then
 * groups, then the services that follow them, then queue maps), and
 * removes last, in the reverse order: unloading the last device removes
 * every pin, so nothing is removed before what still needs it is made.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"

static int (*const steps[])(struct plan *p, bool remove) = {
	plan_devices,
	plan_groups,
	plan_services,
	plan_queue_maps,
};
static const unsigned int step_bits[] = {
	SILO_APPLY_DEVICES,
	SILO_APPLY_GROUPS,
	SILO_APPLY_SERVICES,
	SILO_APPLY_QUEUES,
};

/* What this apply does not cover stays owned as it was. */
static void keep_others(struct plan *p, unsigned int what)
{
	static const enum cfg_kind kinds[] = { CFG_DEVICE, CFG_GROUP,
					       CFG_SERVICE, CFG_QUEUE };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		for (j = 0; !(what & step_bits[i]) && j < p->old.nr[kinds[i]];
		     j++)
			cfg_owned_add(&p->now, kinds[i],
				      p->old.names[kinds[i]][j]);
}

static bool changed(const struct plan *p, const char *object)
{
	size_t i;

	for (i = 0; i < p->nr; i++)
		if (!strcmp(p->changes[i].object, object) &&
		    p->changes[i].op != SILO_CHANGE_WAIT &&
		    p->changes[i].op != SILO_CHANGE_ADOPT)
			return true;
	return false;
}

int silo_apply(struct silo *s, struct silo_config *cfg,
	       const struct silo_apply_opts *opts, struct silo_change **changes,
	       size_t *n)
{
	struct plan p = { .s = s, .opts = opts };
	unsigned int what = opts->what ?: SILO_APPLY_ALL;
	struct cfg_ns empty = { 0 };
	char path[PATH_MAX];
	int err, i;

	*changes = NULL;
	*n = 0;
	p.ns = cfg_ns_find(cfg, opts->netns) ?: &empty;
	err = cfg_state_path(path, sizeof(path),
			     opts->state_dir ?: SILO_STATE_DIR_DEFAULT,
			     opts->netns);
	if (!err)
		err = cfg_state_read(path, &p.old);
	if (err)
		return err;
	keep_others(&p, what);
	for (i = 0; i < (int)ARRAY_SIZE(steps) && !err; i++) {
		/* A group made by an apply of the groups alone (silod's
		 * poll): the services that waited for it are added now. */
		if (step_bits[i] == SILO_APPLY_SERVICES &&
		    (what & SILO_APPLY_GROUPS) && changed(&p, "reuseport"))
			what |= SILO_APPLY_SERVICES;
		if (what & step_bits[i])
			err = steps[i](&p, false);
	}
	for (i = ARRAY_SIZE(steps) - 1; i >= 0 && !err; i--)
		if (what & step_bits[i])
			err = steps[i](&p, true);
	if (!err && !opts->dry_run && changed(&p, "reuseport"))
		silo_service_sync(s);
	if (!err && !opts->dry_run)
		err = cfg_pending_update(&p.now, &p.old, p.changes, p.nr, what,
					 plan_group_quiet, p.ns);
	/* silod applies the groups four times a second: write on change. */
	if (!err && !opts->dry_run && !cfg_owned_equal(&p.old, &p.now))
		err = cfg_state_write(path, &p.now);
	cfg_owned_free(&p.old);
	cfg_owned_free(&p.now);
	*changes = p.changes;
	*n = p.nr;
	return err ?: p.err;
}
