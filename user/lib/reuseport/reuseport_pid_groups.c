// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * attach --pid, once the sockets are found (reuseport_pid.c): the slot of
 * each, and the groups made or filled with them, all or nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "reuseport_pid.h"

static void choose_slot(struct scan *sc, struct found_sock *fs)
{
	int cpu = -1;
	socklen_t len = sizeof(cpu);

	if (fs->p.why[0])
		return;
	if (fs->thread_cpu >= 0) {
		fs->p.slot = fs->thread_cpu;
		fs->p.by = SILO_PLACED_THREAD;
		fs->p.pid = fs->thread_pid;
		fs->p.fd = fs->thread_fd;
	} else if (fs->process_cpu >= 0 && fs->holders == 1) {
		fs->p.slot = fs->process_cpu;
		fs->p.by = SILO_PLACED_PROCESS;
	} else if (!getsockopt(fs->copy, SOL_SOCKET, SO_INCOMING_CPU, &cpu,
			       &len) &&
		   cpu >= 0) {
		fs->p.slot = cpu;
		fs->p.by = SILO_PLACED_INCOMING_CPU;
	}
	if (fs->p.slot >= sc->nr_cpus) {
		snprintf(fs->p.why, sizeof(fs->p.why),
			 "its CPU %d is beyond this machine's %d", fs->p.slot,
			 sc->nr_cpus);
		fs->p.slot = -1;
		fs->p.by = SILO_PLACED_NOT;
	}
	if (fs->p.slot < 0)
		snprintf(
			fs->p.why, sizeof(fs->p.why), "%s",
			fs->thread_cpu == -2 ?
				"read by threads that may run on several CPUs" :
			fs->holders > 1 ?
				"held by several processes, none seen reading it, and no SO_INCOMING_CPU" :
				"no thread or process pinned to one CPU reads it, and no SO_INCOMING_CPU");
}

/* Stronger placements first; a slot goes to the first socket that wants it. */
static void resolve_conflicts(struct scan *sc)
{
	enum silo_placed_by by;
	size_t i, j;

	for (by = SILO_PLACED_THREAD; by <= SILO_PLACED_INCOMING_CPU; by++) {
		for (i = 0; i < sc->nr_socks; i++) {
			struct found_sock *a = &sc->socks[i];

			if (a->p.by != by)
				continue;
			for (j = 0; j < sc->nr_socks; j++) {
				struct found_sock *b = &sc->socks[j];

				if (j == i || b->p.slot != a->p.slot ||
				    b->p.by == SILO_PLACED_NOT ||
				    b->p.by > by || (b->p.by == by && j > i) ||
				    memcmp(&a->p.key, &b->p.key,
					   sizeof(a->p.key)))
					continue;
				snprintf(a->p.why, sizeof(a->p.why),
					 "slot %d is taken by fd %d of pid %u",
					 a->p.slot, b->p.fd, b->p.pid);
				a->p.slot = -1;
				a->p.by = SILO_PLACED_NOT;
				break;
			}
		}
	}
}

/* The groups of one attach: one per kernel group that has a socket placed
 * or a silo group already. */
struct attach_group {
	struct silo_group *g;
	int fd; /* a socket of the kernel group (ours) */
	bool existing; /* a silo group before this attach */
};

/* Undoes what this attach did: groups it made go; in a group that was there
 * before, the slots it filled are emptied again. */
static void groups_rollback(struct scan *sc, struct attach_group *ag, int n)
{
	size_t j;

	while (n-- > 0) {
		if (!ag[n].g)
			continue;
		if (!ag[n].existing) {
			silo_group_detach(ag[n].g, ag[n].fd);
		} else {
			for (j = 0; j < sc->nr_socks; j++)
				if (sc->socks[j].group == n &&
				    sc->socks[j].placed_now)
					silo_group_remove(ag[n].g,
							  sc->socks[j].p.slot);
		}
		silo_group_close(ag[n].g);
		ag[n].g = NULL;
	}
}

/*
 * The sockets of group i against its silo group g that exists already:
 * those in it already stay where they are (not added twice); the others
 * need their slot free. Says what is taken, and fails, before any change.
 */
static int fit_existing(struct scan *sc, struct silo_group *g, int i)
{
	struct silo_group_slot *slots;
	struct silo_group_info info;
	int err, taken = 0;
	size_t j;
	__u32 k;

	err = silo_group_info(g, &info);
	if (err)
		return err;
	if (sc->opts->name && strcmp(sc->opts->name, info.group.name)) {
		pr_err("the sockets on port %u are in silo group '%s' already: leave out --name, or give --name %s\n",
		       sc->opts->port, info.group.name, info.group.name);
		return -EEXIST;
	}
	slots = calloc(info.group.nr_slots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	silo_group_slots(g, slots);
	for (j = 0; j < sc->nr_socks; j++) {
		struct found_sock *fs = &sc->socks[j];
		const struct silo_group_slot *sl;

		if (fs->group != i)
			continue;
		for (k = 0; k < info.group.nr_slots; k++)
			if (slots[k].cookie == fs->p.cookie)
				break;
		if (k < info.group.nr_slots) {
			fs->in_group = true;
			fs->p.slot = k;
			snprintf(fs->p.why, sizeof(fs->p.why),
				 "in the group already");
			continue;
		}
		if (fs->p.slot < 0 || (__u32)fs->p.slot >= info.group.nr_slots)
			continue;
		sl = &slots[fs->p.slot];
		if (!sl->cookie)
			continue;
		if (sl->placed.cookie == sl->cookie)
			snprintf(fs->p.why, sizeof(fs->p.why),
				 "slot %d is taken by fd %d of pid %u",
				 fs->p.slot, sl->placed.fd, sl->placed.pid);
		else
			snprintf(fs->p.why, sizeof(fs->p.why),
				 "slot %d is taken by another socket",
				 fs->p.slot);
		pr_err("no free slot for fd %d of pid %u in group '%s': %s; nothing attached (detach the socket there first, or pin this server to a CPU whose slot is free)\n",
		       fs->p.fd, fs->p.pid, info.group.name, fs->p.why);
		taken++;
	}
	free(slots);
	return taken ? -ENOSPC : 0;
}

/* One group per kernel group that has a socket placed, made or the one
 * there already; all or nothing. */
/* One attach_group per kernel group of the sockets that fit one; each
 * socket's group says which. Returns how many. */
static int kernel_groups(struct scan *sc, struct attach_group *ag)
{
	int n = 0;
	size_t j, k;

	for (j = 0; j < sc->nr_socks; j++) {
		struct found_sock *fs = &sc->socks[j];

		if (!fs->p.key.port || fs->group >= 0)
			continue;
		for (k = j; k < sc->nr_socks; k++)
			if (sc->socks[k].p.key.port &&
			    !memcmp(&sc->socks[k].p.key, &fs->p.key,
				    sizeof(fs->p.key)))
				sc->socks[k].group = n;
		ag[n++].fd = fs->copy;
	}
	return n;
}

/* Those with a silo group already: nothing changes until all fit. */
static int open_existing(struct scan *sc, struct attach_group *ag, int n)
{
	int err = 0, i;
	size_t j;

	for (i = 0; i < n && !err; i++) {
		for (j = 0; j < sc->nr_socks; j++)
			if (sc->socks[j].group == i) {
				err = silo_group_open_key(
					sc->s, &sc->socks[j].p.key, &ag[i].g);
				break;
			}
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		ag[i].existing = !err;
		if (!err)
			err = fit_existing(sc, ag[i].g, i);
	}
	return err;
}

/* A kernel group counts when a socket of it is placed or in its silo
 * group; the others are not made. Returns how many count. */
static int drop_unused(struct scan *sc, struct attach_group *ag, int n)
{
	int used = 0, i;
	size_t j;

	for (i = 0; i < n; i++) {
		bool counts = false;

		for (j = 0; j < sc->nr_socks; j++)
			if (sc->socks[j].group == i &&
			    (sc->socks[j].p.slot >= 0 || sc->socks[j].in_group))
				counts = true;
		if (!counts) {
			for (j = 0; j < sc->nr_socks; j++)
				if (sc->socks[j].group == i)
					sc->socks[j].group = -1;
			silo_group_close(ag[i].g);
			ag[i].g = NULL;
			ag[i].fd = -1;
			continue;
		}
		used++;
	}
	return used;
}

/* Group i made (or the existing one), its sockets placed, attached. */
static int fill_group(struct scan *sc, struct attach_group *ag, int i,
		      const struct silo_group_opts *gopts)
{
	struct silo_group_info info;
	bool placed = false;
	int err = 0;
	size_t j;

	if (ag[i].fd < 0)
		return 0;
	if (!ag[i].existing) {
		err = silo_group_create(sc->s, ag[i].fd, gopts, &ag[i].g);
		if (err)
			return err;
	}
	for (j = 0; j < sc->nr_socks && !err; j++) {
		struct found_sock *fs = &sc->socks[j];
		struct silo_reuseport_slot owner = {
			.pid = fs->p.pid,
			.tid = fs->p.tid,
			.fd = fs->p.fd,
		};

		if (fs->group != i || (fs->p.slot < 0 && !fs->in_group))
			continue;
		snprintf(fs->p.group, sizeof(fs->p.group), "%s",
			 silo_group_name(ag[i].g));
		if (fs->in_group)
			continue;
		err = silo_group_place(ag[i].g, fs->p.slot, fs->copy, &owner,
				       ag[i].existing);
		fs->placed_now = !err;
		placed |= !err;
	}
	/*
	 * A server that restarted has new sockets in a new kernel group,
	 * without the program: attach whenever a socket was placed (the
	 * same program again changes nothing for a kernel group that has
	 * it).
	 */
	if (!err && (!ag[i].existing || placed ||
		     (!silo_group_info(ag[i].g, &info) &&
		      !(info.group.flags & SILO_REUSEPORT_F_ATTACHED))))
		err = silo_group_attach(ag[i].g, ag[i].fd);
	return err;
}

static int make_groups(struct scan *sc)
{
	struct silo_group_opts gopts = {
		.policy = sc->opts->policy,
		.no_migrate = sc->opts->no_migrate,
	};
	struct attach_group *ag;
	int n, used, err, i;
	size_t j;

	ag = calloc(sc->nr_socks, sizeof(*ag));
	if (!ag)
		return -ENOMEM;
	n = kernel_groups(sc, ag);
	err = open_existing(sc, ag, n);
	if (err)
		goto err_rollback;
	used = drop_unused(sc, ag, n);
	if (used > 1 && sc->opts->name) {
		pr_err("--name names one group, and port %u has %d here: add --proto, or leave the names to silo\n",
		       sc->opts->port, used);
		err = -EINVAL;
		goto err_rollback;
	}
	gopts.name = sc->opts->name;
	for (i = 0; i < n && !err; i++)
		err = fill_group(sc, ag, i, &gopts);
	if (err)
		goto err_rollback;
	for (i = 0; i < n; i++)
		silo_group_close(ag[i].g);
	free(ag);
	return used;

err_rollback:
	groups_rollback(sc, ag, n);
	for (j = 0; j < sc->nr_socks; j++)
		sc->socks[j].p.group[0] = '\0';
	free(ag);
	return err;
}

int silo_rp_place(struct scan *sc, const char *who)
{
	const struct silo_attach_pid_opts *opts = sc->opts;
	int placed = 0, unfit = 0, err;
	size_t k;

	for (k = 0; k < sc->nr_socks; k++)
		choose_slot(sc, &sc->socks[k]);
	resolve_conflicts(sc);
	for (k = 0; k < sc->nr_socks; k++) {
		placed += sc->socks[k].p.slot >= 0;
		unfit += sc->socks[k].p.key.port == 0;
	}
	if (unfit == (int)sc->nr_socks) {
		pr_err("the sockets of %s on port %u cannot be a reuseport group: %s\n",
		       who, opts->port, sc->socks[0].p.why);
		return -EINVAL;
	}
	err = make_groups(sc);
	/* Nothing placed and nothing in a group already. */
	if (err == 0 && !placed) {
		pr_err("none of the %zu sockets of %s on port %u could be placed: pin the threads that read them to one CPU each (taskset, sched_setaffinity)\n",
		       sc->nr_socks, who, opts->port);
		err = -EINVAL;
	}
	return err;
}
