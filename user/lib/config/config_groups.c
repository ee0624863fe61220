// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The reuseport groups of a plan, and the processes that fill them: found
 * by pid file, executable, systemd unit or cgroup (never by a pid, which a
 * restart changes), their sockets taken with pidfd_getfd and placed as
 * 'silo reuseport attach --pid' does. A group that exists gets the sockets
 * it lacks (a restarted server's), its policy corrected; a dry run cannot
 * see sockets without taking them, and says only what it would make.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "config.h"
#include "../util.h"

#define MAX_PIDS 4096

static int add_pid(int **pids, size_t *n, int pid)
{
	int *p;
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*pids)[i] == pid)
			return 0;
	if (*n >= MAX_PIDS)
		return -E2BIG;
	p = realloc(*pids, (*n + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	p[(*n)++] = pid;
	*pids = p;
	return 0;
}

/* The processes of cgroup dir and the cgroups below it. */
static int cgroup_pids(const char *dir, int depth, int **pids, size_t *n)
{
	char path[PATH_MAX];
	struct dirent *e;
	int pid, err = 0;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!err && fscanf(f, "%d", &pid) == 1)
		err = add_pid(pids, n, pid);
	fclose(f);
	d = depth < 8 ? opendir(dir) : NULL;
	while (!err && d && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
		    (int)sizeof(path))
			continue;
		err = cgroup_pids(path, depth + 1, pids, n);
	}
	if (d)
		closedir(d);
	return err;
}

/* The cgroup trees to look in: the unified one, and where a hybrid layout
 * mounts it and systemd's own hierarchy. */
static const char *const cgroup_roots[] = { "/sys/fs/cgroup",
					    "/sys/fs/cgroup/unified",
					    "/sys/fs/cgroup/systemd" };

/* The first of ROOT/sub for each root that exists. */
static int cgroup_dir(const char *sub, char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cgroup_roots); i++)
		if ((size_t)snprintf(buf, len, "%s/%s", cgroup_roots[i], sub) <
			    len &&
		    !access(buf, F_OK))
			return 0;
	return -ENOENT;
}

/* A systemd unit's cgroup: in system.slice, or at the top. */
static int unit_dir(const char *unit, char *buf, size_t len)
{
	char sub[PATH_MAX];

	snprintf(sub, sizeof(sub), "system.slice/%.200s", unit);
	return cgroup_dir(sub, buf, len) ? cgroup_dir(unit, buf, len) : 0;
}

/* Whether process pid (a /proc name) runs exe. */
static bool runs(const char *pid, const char *exe)
{
	char path[64], target[PATH_MAX];
	ssize_t l;

	snprintf(path, sizeof(path), "/proc/%.20s/exe", pid);
	l = readlink(path, target, sizeof(target) - 1);
	if (l <= 0)
		return false;
	target[l] = '\0';
	return !strcmp(target, exe);
}

/* The processes running g's executable: every process looked at, or,
 * with known_ok after a look, the ones it found that still run it. */
static int exe_pids(struct cfg_group *g, bool known_ok, int **pids, size_t *n)
{
	char name[16];
	struct dirent *e;
	int err = 0;
	size_t i;
	DIR *d;

	if (known_ok && g->looked) {
		for (i = 0; !err && i < g->nr_known; i++) {
			snprintf(name, sizeof(name), "%d", g->known[i]);
			if (runs(name, g->what))
				err = add_pid(pids, n, g->known[i]);
		}
	} else {
		d = opendir("/proc");
		if (!d)
			return -errno;
		while (!err && (e = readdir(d)))
			if (e->d_name[0] >= '1' && e->d_name[0] <= '9' &&
			    runs(e->d_name, g->what))
				err = add_pid(pids, n, atoi(e->d_name));
		closedir(d);
	}
	if (err)
		return err;
	/* What this look found, for the next one. */
	free(g->known);
	g->known = NULL;
	g->nr_known = 0;
	g->looked = true;
	if (!*n)
		return 0;
	g->known = malloc(*n * sizeof(**pids));
	if (!g->known) {
		g->looked = false;
		return 0; /* the next look looks at every process */
	}
	memcpy(g->known, *pids, *n * sizeof(**pids));
	g->nr_known = *n;
	return 0;
}

int cfg_group_pids(struct cfg_group *g, bool known_ok, int **pids, size_t *n)
{
	char buf[PATH_MAX];
	int pid, err;

	*pids = NULL;
	*n = 0;
	switch (g->by) {
	case CFG_BY_PIDFILE:
		err = silo_read_file(g->what, buf, sizeof(buf));
		if (err < 0)
			return err == -ENOENT ? -ESRCH : err;
		pid = atoi(buf);
		snprintf(buf, sizeof(buf), "/proc/%d", pid);
		if (pid <= 0 || access(buf, F_OK))
			return -ESRCH;
		err = add_pid(pids, n, pid);
		break;
	case CFG_BY_EXE:
		err = exe_pids(g, known_ok, pids, n);
		break;
	case CFG_BY_UNIT:
		err = unit_dir(g->what, buf, sizeof(buf));
		if (!err)
			err = cgroup_pids(buf, 0, pids, n);
		break;
	default:
		err = cgroup_dir(g->what, buf, sizeof(buf));
		if (!err)
			err = cgroup_pids(buf, 0, pids, n);
		break;
	}
	if (err == -ENOENT || (!err && !*n))
		err = -ESRCH;
	if (err) {
		free(*pids);
		*pids = NULL;
		*n = 0;
	}
	return err;
}

/* x mixed (splitmix64's finalizer), so that a sum of them tells sets
 * apart whatever their order. */
static __u64 mix(__u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The sockets pid and its children hold: (pid, fd, inode) of each. */
static __u64 proc_sockets(int pid, int depth)
{
	char path[64], link[64];
	struct dirent *e;
	__u64 sum = mix(pid);
	unsigned long ino;
	FILE *f;
	DIR *d;
	ssize_t l;
	int child;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%.20s", pid,
			 e->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) == 1)
			sum += mix(((__u64)pid << 32) ^ atoi(e->d_name) ^
				   ((__u64)ino << 20));
	}
	if (d)
		closedir(d);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", pid, pid);
	f = depth < 4 ? fopen(path, "re") : NULL;
	while (f && fscanf(f, "%d", &child) == 1)
		sum += proc_sockets(child, depth + 1);
	if (f)
		fclose(f);
	return sum;
}

static __u64 sockets_sig(const int *pids, size_t n)
{
	__u64 sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += proc_sockets(pids[i], 0);
	return sum ?: 1;
}

static const char *const by_names[] = { "pidfile", "exe", "unit", "cgroup" };

static bool group_pinned(const struct plan *p, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/reuseport/%s", silo_pin_dir(p->s),
		 name);
	return !access(path, F_OK);
}

/* The group called name, or NULL without a message when there is none. */
static struct silo_group *group_open(struct plan *p, const char *name)
{
	struct silo_group *g;

	if (!group_pinned(p, name) || silo_group_open(p->s, name, &g))
		return NULL;
	return g;
}

bool plan_group_made(const struct plan *p, const char *name)
{
	size_t i;

	if (group_pinned(p, name))
		return true;
	for (i = 0; p->opts->dry_run && i < p->nr; i++)
		if (p->changes[i].op == SILO_CHANGE_ADD &&
		    !strcmp(p->changes[i].object, "reuseport") &&
		    !strcmp(p->changes[i].name, name))
			return true;
	return false;
}

/* Which sockets are in g's slots, summed: tells whether an attach placed
 * any. */
static __u64 slots_sum(struct silo_group *g)
{
	struct silo_group_info info;
	struct silo_group_slot *slots;
	__u64 sum = 0;
	__u32 i;

	if (silo_group_info(g, &info))
		return 0;
	slots = calloc(info.group.nr_slots, sizeof(*slots));
	if (slots && !silo_group_slots(g, slots))
		for (i = 0; i < info.group.nr_slots; i++)
			sum += slots[i].cookie * (i + 1);
	free(slots);
	return sum;
}

static void group_policy(struct plan *p, const struct cfg_group *cg,
			 struct silo_group *g)
{
	struct silo_group_info info;
	struct silo_change *c;

	if (silo_group_info(g, &info) || info.group.policy == cg->opts.policy)
		return;
	c = plan_add(p, SILO_CHANGE_UPDATE, "reuseport", cg->line, "%s",
		     cg->name);
	snprintf(c->detail, sizeof(c->detail), "policy %s",
		 silo_reuseport_policy_name(cg->opts.policy));
	if (!p->opts->dry_run)
		plan_done(p, c, silo_group_set_policy(g, cg->opts.policy));
}

/* Takes the processes' sockets into the group (made when missing). */
static void fill(struct plan *p, struct cfg_group *cg, struct silo_group *g,
		 const int *pids, size_t n)
{
	struct silo_placement *pl = NULL;
	struct silo_change *c = NULL;
	__u64 before, sig = sockets_sig(pids, n);
	size_t npl;
	int err;

	/* The same sockets as last time: nothing new to take (unless the
	 * group made then is gone), and a failure is neither tried nor said
	 * again; it stays pending (quiet). Each try of a group to make
	 * loads its program: four times a second, a CPU's fifth. */
	if (sig == cg->seen && (g || cg->seen_err) && !p->opts->dry_run) {
		cg->quiet = cg->seen_err != 0;
		return;
	}
	before = g ? slots_sum(g) : 0;
	if (!g) {
		c = plan_add(p, SILO_CHANGE_ADD, "reuseport", cg->line, "%s",
			     cg->name);
		snprintf(c->detail, sizeof(c->detail),
			 "port %u, policy %s, the sockets of %s %.100s",
			 cg->opts.port,
			 silo_reuseport_policy_name(cg->opts.policy),
			 by_names[cg->by], cg->what);
		if (p->opts->dry_run)
			return;
	} else if (p->opts->dry_run) {
		return;
	}
	err = silo_group_attach_pids(p->s, pids, n, &cg->opts, &pl, &npl);
	free(pl);
	if (err > 0)
		err = 0;
	cg->seen = sig;
	cg->seen_err = err;
	if (g && (err || slots_sum(g) != before)) {
		c = plan_add(p, SILO_CHANGE_UPDATE, "reuseport", cg->line, "%s",
			     cg->name);
		snprintf(c->detail, sizeof(c->detail),
			 "take the new sockets of %s %.120s", by_names[cg->by],
			 cg->what);
	}
	if (c)
		plan_done(p, c, err);
}

static void one_group(struct plan *p, struct cfg_group *cg)
{
	struct silo_group *g = group_open(p, cg->name);
	bool owned = cfg_owned_has(&p->old, CFG_GROUP, cg->name);
	struct silo_change *c;
	size_t n, before;
	int *pids, err;

	cg->quiet = false;
	if (g)
		group_policy(p, cg, g);
	err = cfg_group_pids(cg, p->opts->what & SILO_APPLY_GROUPS_KNOWN, &pids,
			     &n);
	if (err) {
		c = plan_add(p, SILO_CHANGE_WAIT, "reuseport", cg->line, "%s",
			     cg->name);
		snprintf(c->detail, sizeof(c->detail),
			 "no process of %s %.120s%s", by_names[cg->by],
			 cg->what, err == -ESRCH ? "" : ": cannot read it");
	} else {
		before = p->nr;
		fill(p, cg, g, pids, n);
		free(pids);
		if (g && !owned && p->nr == before) {
			c = plan_add(p, SILO_CHANGE_ADOPT, "reuseport",
				     cg->line, "%s", cg->name);
			snprintf(c->detail, sizeof(c->detail), "port %u",
				 cg->opts.port);
		}
	}
	/* The file's: a group there now (made by this apply or adopted), one
	 * an earlier apply made, or, dry, one this apply would make. */
	if (!g && !err && !p->opts->dry_run)
		g = group_open(p, cg->name);
	if (g || owned || (!err && p->opts->dry_run))
		cfg_owned_add(&p->now, CFG_GROUP, cg->name);
	if (g)
		silo_group_close(g);
}

/* An earlier apply's group the file no longer declares, when it exists. */
static int remove_group(struct plan *p, const char *name, bool undo,
			void *ctx __attribute__((unused)))
{
	struct silo_group *g = group_open(p, name);
	int err = g ? 1 : 0;

	if (g && undo)
		err = silo_group_detach(g, -1);
	if (g)
		silo_group_close(g);
	return err;
}

bool plan_group_quiet(void *ctx, const char *object, const char *name)
{
	const struct cfg_ns *ns = ctx;
	size_t i;

	if (strcmp(object, "reuseport"))
		return false;
	for (i = 0; i < ns->nr_groups; i++)
		if (ns->groups[i].quiet && !strcmp(ns->groups[i].name, name))
			return true;
	return false;
}

int plan_groups(struct plan *p, bool remove)
{
	size_t i;

	if (remove)
		plan_remove_unclaimed(p, CFG_GROUP, "reuseport", "detach",
				      remove_group, NULL);
	for (i = 0; !remove && i < p->ns->nr_groups; i++)
		one_group(p, &p->ns->groups[i]);
	return 0;
}
