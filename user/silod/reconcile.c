// SPDX-License-Identifier: GPL-2.0
/*
 * silod applies silo.conf(5) (its namespace's part): at start and on
 * SIGHUP all of it; when a link appears or changes, the devices and what
 * needs them (a device made after boot, a VF, a container's veth); and four
 * times a second the reuseport groups, which is how a restarted server's
 * sockets join: no event announces a new socket, and the kernel's hash
 * picks among them until they are in the group (at most this period plus
 * the time to take them). A group by executable looks at every process
 * only after an exec (procwatch.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "silod.h"

static const char *file_of(const struct silod *d)
{
	return d->cfg.apply[0] ? d->cfg.apply : SILO_CONFIG_DEFAULT;
}

int reconcile_load(struct silod *d)
{
	const char *path = file_of(d);
	struct silo_config *decl = NULL;
	char err[512];
	int ret;

	if (!strcmp(path, "none") || (!d->cfg.apply[0] && access(path, F_OK))) {
		silo_config_free(d->rec.decl);
		d->rec.decl = NULL;
		return 0;
	}
	ret = silo_config_read(path, &decl, err, sizeof(err));
	if (ret) {
		pr_err("%s: %s\n", err,
		       d->rec.decl ? "keeping what was applied" :
				     "applying nothing");
		return ret;
	}
	silo_config_free(d->rec.decl);
	d->rec.decl = decl;
	return 0;
}

/* One change, logged: failures always, waits only when all is applied
 * (the groups' poll would repeat them four times a second). */
static void log_change(const struct silo_change *c, bool quiet_waits)
{
	const char *op = silo_change_op_name(c->op);

	if (c->err)
		pr_warn("apply: %s %s %s: %s: %s\n", op, c->object, c->name,
			c->detail, strerror(-c->err));
	else if (c->op != SILO_CHANGE_WAIT)
		pr_info("apply: %s %s %s: %s\n", op, c->object, c->name,
			c->detail);
	else if (!quiet_waits)
		pr_info("apply: %s %s: %s\n", c->object, c->name, c->detail);
}

/*
 * The metrics' failures and waits: what the state file holds pending after
 * the apply, as 'silo xdp status' shows it. An apply that covers some kinds
 * (a link event's, the groups' poll) keeps the others' pending, and a
 * failure tried again only when something changes stays pending meanwhile.
 */
static void count_pending(struct silod *d)
{
	const char *dir = d->cfg.state_dir[0] ? d->cfg.state_dir : NULL;
	struct silo_change *p;
	size_t n, i;

	if (silo_apply_pending(dir, d->rec.netns, &p, &n))
		return; /* unread: the last counts stay */
	d->rec.failed = d->rec.waiting = 0;
	for (i = 0; i < n; i++) {
		d->rec.failed += p[i].err != 0;
		d->rec.waiting += p[i].op == SILO_CHANGE_WAIT && !p[i].err;
	}
	free(p);
}

void reconcile_apply(struct silod *d, unsigned int what)
{
	struct silo_apply_opts o = {
		.netns = d->rec.netns,
		.state_dir = d->cfg.state_dir[0] ? d->cfg.state_dir : NULL,
		.what = what,
	};
	struct silo_change *ch;
	size_t n, i;
	int err;

	if (!d->rec.decl)
		return;
	err = silo_apply(d->silo, d->rec.decl, &o, &ch, &n);
	for (i = 0; i < n; i++)
		log_change(&ch[i], what != SILO_APPLY_ALL);
	count_pending(d);
	if (err && !n)
		pr_warn("apply %s: %s\n", file_of(d), strerror(-err));
	free(ch);
}

void reconcile_poll(struct silod *d, __u64 now)
{
	unsigned int what;

	if (!d->rec.decl)
		return;
	if (d->rec.links) {
		d->rec.links = false;
		reconcile_apply(d, SILO_APPLY_DEVICES | SILO_APPLY_SERVICES |
					   SILO_APPLY_QUEUES);
	}
	if (now < d->rec.next_groups_ns ||
	    !silo_config_has_groups(d->rec.decl, d->rec.netns))
		return;
	d->rec.next_groups_ns = now + SILOD_GROUPS_POLL_MS * 1000000ULL;
	what = SILO_APPLY_GROUPS;
	/* No exec since the last look: a group by executable has the
	 * processes it had (procwatch.c). */
	if (d->rec.proc_fd >= 0) {
		procwatch_read(d);
		if (!d->rec.execs && now < d->rec.next_full_ns)
			what |= SILO_APPLY_GROUPS_KNOWN;
		else
			d->rec.next_full_ns =
				now + PROCWATCH_FULL_MS * 1000000ULL;
		d->rec.execs = false;
	}
	reconcile_apply(d, what);
}

void reconcile_free(struct silod *d)
{
	silo_config_free(d->rec.decl);
	d->rec.decl = NULL;
}
