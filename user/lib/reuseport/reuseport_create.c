// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Making a group (silo_group_create): its kernel group checked, its name
 * claimed under the lock, silo's reuseport object loaded over the shared
 * maps (the first group makes the programs and the shared objects), an id,
 * its pins, and last its entry, from which on the program selects for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../maps.h"
#include "reuseport.h"
#include "silo_reuseport.skel.h"

/*
 * Loads silo's reuseport object: the first time, it makes the programs and
 * the shared maps; later, it reuses the pinned ones and loads no program.
 * Either way libbpf makes a fresh group_sockets and group_slots, with BTF:
 * the new group's maps.
 */
static int load_object(struct silo_group *g, const struct silo_maps *maps,
		       bool *made_shared)
{
	struct silo_reuseport *skel;
	struct bpf_map *shared[SILO_RP_SELECT];
	int nr_cpus = libbpf_num_possible_cpus(), err;
	unsigned int i;

	*made_shared = false;
	skel = silo_reuseport__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open silo's reuseport object: %s\n",
		       strerror(-err));
		return err;
	}
	shared[SILO_RP_GROUPS] = skel->maps.reuseport_groups;
	shared[SILO_RP_SOCKETS] = skel->maps.reuseport_sockets;
	shared[SILO_RP_NODES] = skel->maps.reuseport_nodes;
	shared[SILO_RP_STATS] = skel->maps.reuseport_stats;
	shared[SILO_RP_QUEUES] = skel->maps.reuseport_queues;
	bpf_map__set_max_entries(skel->maps.group_sockets, nr_cpus);
	bpf_map__set_max_entries(skel->maps.group_slots, nr_cpus);
	err = silo_maps_reuse(maps, skel->obj);
	if (err)
		goto out;
	if (g->fd[SILO_RP_GROUPS] >= 0) {
		for (i = 0; i < SILO_RP_SELECT && !err; i++)
			err = bpf_map__reuse_fd(shared[i], g->fd[i]);
		bpf_program__set_autoload(skel->progs.silo_select, false);
		bpf_program__set_autoload(skel->progs.silo_select_or_migrate,
					  false);
		if (err)
			goto out;
	}
	err = silo_reuseport__load(skel);
	if (err) {
		pr_err("the kernel refused silo's reuseport program or maps (%s): 'silo -d' shows libbpf's log and the verifier's\n",
		       strerror(-err));
		goto out;
	}
	if (g->fd[SILO_RP_GROUPS] < 0) {
		for (i = 0; i < SILO_RP_SELECT; i++)
			g->fd[i] = dup(bpf_map__fd(shared[i]));
		g->fd[SILO_RP_SELECT] =
			dup(bpf_program__fd(skel->progs.silo_select));
		g->fd[SILO_RP_MIGRATE] = dup(
			bpf_program__fd(skel->progs.silo_select_or_migrate));
		*made_shared = true;
	}
	g->sockets_fd = dup(bpf_map__fd(skel->maps.group_sockets));
	g->slots_fd = dup(bpf_map__fd(skel->maps.group_slots));
	for (i = 0; i < SILO_RP_COUNT; i++)
		if (g->fd[i] < 0)
			err = -EMFILE;
	if (g->sockets_fd < 0 || g->slots_fd < 0)
		err = -EMFILE;
out:
	silo_reuseport__destroy(skel);
	return err;
}

static int alloc_id(int groups_fd, __u32 *id)
{
	unsigned char used[SILO_REUSEPORT_MAX_GROUPS] = {};
	struct silo_reuseport_key key, next;
	struct silo_reuseport_group val;
	bool has_key = false;
	__u32 i;

	while (!bpf_map_get_next_key(groups_fd, has_key ? &key : NULL, &next)) {
		key = next;
		has_key = true;
		if (!bpf_map_lookup_elem(groups_fd, &key, &val) &&
		    val.id < SILO_REUSEPORT_MAX_GROUPS)
			used[val.id] = 1;
	}
	for (i = 1; i < SILO_REUSEPORT_MAX_GROUPS; i++) {
		if (!used[i]) {
			*id = i;
			return 0;
		}
	}
	pr_err("there are %d reuseport groups here, the most silo keeps: detach one first\n",
	       SILO_REUSEPORT_MAX_GROUPS - 1);
	return -ENOSPC;
}

static int zero_stats(const struct silo_group *g)
{
	int nr_cpus = libbpf_num_possible_cpus(), err = 0;
	void *zeros = calloc(nr_cpus, sizeof(struct silo_reuseport_stats));

	if (!zeros)
		return -ENOMEM;
	if (bpf_map_update_elem(g->fd[SILO_RP_STATS], &g->val.id, zeros,
				BPF_ANY))
		err = -errno;
	free(zeros);
	return err;
}

/* -EEXIST when key's kernel group is a silo group already. */
static int kernel_group_taken(const struct silo *s,
			      const struct silo_reuseport_key *key, int fd,
			      const char *desc)
{
	struct silo_reuseport_group other;
	int groups_fd, err = 0;

	groups_fd = silo_rp_pin_get(s, SILO_RP_GROUPS);
	if (groups_fd < 0)
		return 0;
	if (!bpf_map_lookup_elem(groups_fd, key, &other)) {
		pr_err("the kernel group of fd %d (%s) is silo group '%s' already: 'silo reuseport detach %s' first\n",
		       fd, desc, other.name, other.name);
		err = -EEXIST;
	}
	close(groups_fd);
	return err;
}

/* A new group of fd's kernel group, as opts asks, not yet made. */
static int group_new(struct silo *s, int fd, const struct silo_group_opts *opts,
		     struct silo_group **out, char *desc, size_t desc_len)
{
	struct silo_group *g;
	char why[160];
	int err;

	if ((unsigned int)opts->policy >= SILO_REUSEPORT_POLICY_MAX) {
		pr_err("bad policy %d: cpu, node, queue or hash\n",
		       opts->policy);
		return -EINVAL;
	}
	if (opts->name && silo_rp_check_name(opts->name))
		return -EINVAL;
	g = malloc(sizeof(*g));
	if (!g)
		return -ENOMEM;
	silo_rp_group_init(g, s);
	err = silo_reuseport_sock_key(s, fd, &g->key, why, sizeof(why));
	if (err) {
		pr_err("cannot make a reuseport group of fd %d: %s\n", fd, why);
		free(g);
		return err;
	}
	silo_reuseport_key_str(&g->key, desc, desc_len);
	if (opts->name)
		snprintf(g->val.name, sizeof(g->val.name), "%s", opts->name);
	else
		silo_rp_default_name(&g->key, g->val.name);
	g->val.policy = opts->policy;
	g->val.nr_slots = libbpf_num_possible_cpus();
	if (g->key.protocol == IPPROTO_TCP && !opts->no_migrate)
		g->val.flags |= SILO_REUSEPORT_F_MIGRATE;
	*out = g;
	return 0;
}

/* Takes the lock and claims g's name (its pin directory): the lock, or
 * -errno with nothing held. */
static int group_claim(struct silo_group *g, int fd, const char *desc)
{
	struct silo *s = g->s;
	int lock, err, retries = 0;

again:
	lock = silo_rp_lock(s, true);
	if (lock < 0)
		return lock;
	err = kernel_group_taken(s, &g->key, fd, desc);
	if (!err)
		err = silo_group_pins_claim(s, g->val.name);
	if (!err && !silo_rp_lock_holds(s, lock)) {
		/* An unload removed the empty pin directory before we made
		 * the group's in it: the lock was on the old one. */
		silo_group_pins_remove(s, g->val.name);
		err = -ENOENT;
	}
	if (err == -ENOENT && retries++ < 3) {
		silo_rp_unlock(lock);
		goto again;
	}
	if (err == -ENOENT)
		pr_err("%s keeps disappearing (silo unloading meanwhile): try again\n",
		       s->pin_dir);
	if (err) {
		silo_pin_dirs_remove_empty(s); /* silo_rp_lock made them? */
		silo_rp_unlock(lock);
		return err;
	}
	return lock;
}

/* What a claimed group needs, made or opened: the shared maps and objects,
 * its id, its sockets in the outer map (*in_outer), its pins. */
static int group_make(struct silo_group *g, struct silo_maps *maps,
		      bool *in_outer)
{
	struct silo *s = g->s;
	bool created, made_shared;
	int err;

	err = silo_maps_ensure(s, maps, 0, SILO_CACHE_DEFAULT, &created);
	if (err)
		return err;
	if (created)
		silo_rp_pins_remove_orphans(s, g->val.name);
	err = silo_rp_shared_open(g);
	if (err == -ESTALE) {
		pr_err("the reuseport pins in %s are incomplete or of another silo version: detach every group, or remove %s/reuseport_*\n",
		       s->pin_dir, s->pin_dir);
		return err;
	} else if (err && err != -ENOENT) {
		pr_err("cannot open the reuseport pins in %s: %s\n", s->pin_dir,
		       strerror(-err));
		return err;
	}
	err = load_object(g, maps, &made_shared);
	if (!err && made_shared)
		err = silo_rp_pins_pin(s, g->fd);
	if (err)
		return err;
	if (g->cpu_node_fd < 0)
		g->cpu_node_fd = dup(maps->fd[SILO_MAP_CPU_NODE]);
	err = alloc_id(g->fd[SILO_RP_GROUPS], &g->val.id);
	if (err)
		return err;
	if (bpf_map_update_elem(g->fd[SILO_RP_SOCKETS], &g->val.id,
				&g->sockets_fd, BPF_ANY)) {
		err = -errno;
		pr_err("cannot add the sockets map of group '%s': %s\n",
		       g->val.name, strerror(-err));
		return err;
	}
	*in_outer = true;
	silo_rp_delete_node_lists(g->fd[SILO_RP_NODES], g->val.id);
	bpf_map_delete_elem(g->fd[SILO_RP_QUEUES],
			    &g->val.id); /* a reused id's */
	err = zero_stats(g);
	if (!err)
		err = silo_group_pins_pin(s, g->val.name, g->sockets_fd,
					  g->slots_fd);
	return err;
}

int silo_group_create(struct silo *s, int fd,
		      const struct silo_group_opts *opts,
		      struct silo_group **out)
{
	static const struct silo_group_opts defaults;
	struct silo_maps maps;
	struct silo_group *g;
	bool in_outer = false;
	char desc[96];
	int lock, err;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	err = group_new(s, fd, opts, &g, desc, sizeof(desc));
	if (err)
		return err;
	silo_maps_init(&maps);
	lock = group_claim(g, fd, desc);
	if (lock < 0) {
		free(g);
		return lock;
	}
	err = group_make(g, &maps, &in_outer);
	if (err)
		goto err_undo;
	/* Last: from here on the program selects for this group. */
	if (bpf_map_update_elem(g->fd[SILO_RP_GROUPS], &g->key, &g->val,
				BPF_NOEXIST)) {
		err = -errno;
		pr_err("cannot add group '%s': %s\n", g->val.name,
		       strerror(-err));
		goto err_undo;
	}
	silo_rp_unlock(lock);
	silo_maps_close(&maps);
	pr_debug("group '%s' made for %s, policy %s\n", g->val.name, desc,
		 silo_reuseport_policy_name(g->val.policy));
	*out = g;
	return 0;

err_undo:
	if (in_outer)
		bpf_map_delete_elem(g->fd[SILO_RP_SOCKETS], &g->val.id);
	silo_group_pins_remove(s, g->val.name);
	silo_rp_pins_release(s);
	silo_rp_unlock(lock);
	silo_maps_close(&maps);
	silo_group_close(g);
	return err;
}
