// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Reuseport groups: make, fill, attach, show and remove them. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../maps.h"
#include "reuseport.h"
#include "silo_reuseport.skel.h"

#ifndef SO_DETACH_REUSEPORT_BPF
#define SO_DETACH_REUSEPORT_BPF 68
#endif

static const char *const policy_names[SILO_REUSEPORT_POLICY_MAX] = {
	[SILO_REUSEPORT_CPU] = "cpu",
	[SILO_REUSEPORT_NODE] = "node",
	[SILO_REUSEPORT_HASH] = "hash",
	[SILO_REUSEPORT_QUEUE] = "queue",
};

const char *silo_reuseport_policy_name(enum silo_reuseport_policy policy)
{
	return (unsigned int)policy < SILO_REUSEPORT_POLICY_MAX ?
		       policy_names[policy] :
		       "?";
}

int silo_reuseport_policy_parse(const char *name)
{
	int i;

	for (i = 0; i < SILO_REUSEPORT_POLICY_MAX; i++)
		if (!strcmp(name, policy_names[i]))
			return i;
	return -EINVAL;
}

void silo_rp_group_init(struct silo_group *g, struct silo *s)
{
	unsigned int i;

	memset(g, 0, sizeof(*g));
	g->s = s;
	for (i = 0; i < SILO_RP_COUNT; i++)
		g->fd[i] = -1;
	g->cpu_node_fd = g->sockets_fd = g->slots_fd = -1;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void silo_group_close(struct silo_group *g)
{
	unsigned int i;

	if (!g)
		return;
	for (i = 0; i < SILO_RP_COUNT; i++)
		close_fd(&g->fd[i]);
	close_fd(&g->cpu_node_fd);
	close_fd(&g->sockets_fd);
	close_fd(&g->slots_fd);
	free(g);
}

const char *silo_group_name(const struct silo_group *g)
{
	return g->val.name;
}

bool silo_group_name_valid(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n >= SILO_REUSEPORT_NAME_MAX)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_-:", name[i]))
			return false;
	return true;
}

int silo_rp_check_name(const char *name)
{
	if (!silo_group_name_valid(name)) {
		pr_err("bad group name '%s': 1 to %d letters, digits, '_', '-' or ':'\n",
		       name, SILO_REUSEPORT_NAME_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

static int find_by_name(int groups_fd, const char *name,
			struct silo_reuseport_key *key,
			struct silo_reuseport_group *val)
{
	struct silo_reuseport_key k, next;
	bool has_key = false;

	while (!bpf_map_get_next_key(groups_fd, has_key ? &k : NULL, &next)) {
		k = next;
		has_key = true;
		if (!bpf_map_lookup_elem(groups_fd, &k, val) &&
		    !strncmp(val->name, name, sizeof(val->name))) {
			*key = k;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The occupied slots of each node, for the node step. Written whole per
 * node: a hash map update replaces the element at once, so the program
 * reads the old list or the new one. Nodes come from cpu_node as it is now.
 */
static int update_node_lists(const struct silo_group *g)
{
	struct silo_reuseport_node_key nk = { .group = g->val.id };
	struct silo_reuseport_node *lists;
	__u32 slot, node;
	__u64 cookie;
	int err = 0;

	lists = calloc(SILO_MAX_NODES, sizeof(*lists));
	if (!lists)
		return -ENOMEM;
	for (slot = 0; slot < g->val.nr_slots; slot++) {
		if (bpf_map_lookup_elem(g->sockets_fd, &slot, &cookie))
			continue;
		if (bpf_map_lookup_elem(g->cpu_node_fd, &slot, &node) ||
		    node >= SILO_MAX_NODES)
			node = 0;
		if (lists[node].nr < SILO_REUSEPORT_NODE_SLOTS)
			lists[node].slots[lists[node].nr++] = slot;
	}
	for (node = 0; node < SILO_MAX_NODES && !err; node++) {
		nk.node = node;
		if (lists[node].nr) {
			if (bpf_map_update_elem(g->fd[SILO_RP_NODES], &nk,
						&lists[node], BPF_ANY))
				err = -errno;
		} else if (bpf_map_delete_elem(g->fd[SILO_RP_NODES], &nk) &&
			   errno != ENOENT) {
			err = -errno;
		}
	}
	if (err)
		pr_err("cannot update the node lists of group '%s': %s\n",
		       g->val.name, strerror(-err));
	free(lists);
	return err;
}

void silo_rp_delete_node_lists(int nodes_fd, __u32 id)
{
	struct silo_reuseport_node_key nk = { .group = id };

	for (nk.node = 0; nk.node < SILO_MAX_NODES; nk.node++)
		bpf_map_delete_elem(nodes_fd, &nk);
}

static int open_group_maps(struct silo_group *g)
{
	struct bpf_map_info a = {}, b = {};
	__u32 len = sizeof(a), inner_id;
	int err;

	err = silo_group_pins_open(g->s, g->val.name, &g->sockets_fd,
				   &g->slots_fd);
	if (err)
		return err;
	/* The pinned map must be the one the program uses. */
	if (bpf_map_lookup_elem(g->fd[SILO_RP_SOCKETS], &g->val.id,
				&inner_id) ||
	    bpf_obj_get_info_by_fd(g->sockets_fd, &a, &len))
		return -ESTALE;
	len = sizeof(b);
	if (a.id != inner_id || bpf_obj_get_info_by_fd(g->slots_fd, &b, &len) ||
	    b.value_size != sizeof(struct silo_reuseport_slot))
		return -ESTALE;
	return 0;
}

int silo_group_open(struct silo *s, const char *name, struct silo_group **out)
{
	struct silo_group *g;
	int err;

	*out = NULL;
	g = malloc(sizeof(*g));
	if (!g)
		return -ENOMEM;
	silo_rp_group_init(g, s);
	err = silo_rp_shared_open(g);
	if (!err)
		err = find_by_name(g->fd[SILO_RP_GROUPS], name, &g->key,
				   &g->val);
	if (err == -ENOENT) {
		pr_err("no reuseport group '%s' in %s: see 'silo reuseport show'\n",
		       name, s->pin_dir);
		goto err_close;
	}
	if (!err)
		err = open_group_maps(g);
	if (err) {
		pr_err("the pins of reuseport group '%s' in %s are broken (%s): detach it and make it again\n",
		       name, s->pin_dir, strerror(-err));
		goto err_close;
	}
	*out = g;
	return 0;

err_close:
	silo_group_close(g);
	return err;
}

int silo_group_open_key(struct silo *s, const struct silo_reuseport_key *key,
			struct silo_group **out)
{
	struct silo_group *g;
	int err;

	*out = NULL;
	g = malloc(sizeof(*g));
	if (!g)
		return -ENOMEM;
	silo_rp_group_init(g, s);
	err = silo_rp_shared_open(g);
	if (!err && bpf_map_lookup_elem(g->fd[SILO_RP_GROUPS], key, &g->val))
		err = -ENOENT;
	if (err == -ENOENT)
		goto err_close;
	g->key = *key;
	if (!err)
		err = open_group_maps(g);
	if (err) {
		pr_err("the reuseport pins in %s are broken (%s): detach the group and make it again\n",
		       s->pin_dir, strerror(-err));
		goto err_close;
	}
	*out = g;
	return 0;

err_close:
	silo_group_close(g);
	return err;
}

/* The group as it is now, or -ENOENT when it was detached meanwhile. */
static int refresh(struct silo_group *g)
{
	struct silo_reuseport_group val;

	if (!g->detached &&
	    !bpf_map_lookup_elem(g->fd[SILO_RP_GROUPS], &g->key, &val) &&
	    val.id == g->val.id && !strcmp(val.name, g->val.name)) {
		g->val = val;
		return 0;
	}
	pr_err("reuseport group '%s' was detached\n", g->val.name);
	return -ENOENT;
}

/* Takes the lock and re-reads the group: the lock to drop, or -errno. */
static int lock_group(struct silo_group *g)
{
	int lock = silo_rp_lock(g->s, false), err;

	if (lock == -ENOENT)
		pr_err("reuseport group '%s' was detached\n", g->val.name);
	if (lock < 0)
		return lock;
	err = refresh(g);
	if (err) {
		silo_rp_unlock(lock);
		return err;
	}
	return lock;
}

static int check_slot(const struct silo_group *g, __u32 slot)
{
	if (slot < g->val.nr_slots)
		return 0;
	pr_err("slot %u of group '%s': slots are CPUs, 0 to %u here\n", slot,
	       g->val.name, g->val.nr_slots - 1);
	return -ERANGE;
}

int silo_group_place(struct silo_group *g, __u32 slot, int fd,
		     const struct silo_reuseport_slot *owner, bool only_free)
{
	struct silo_reuseport_slot placed = *owner;
	__u64 sock_fd = fd;
	int lock, err;

	err = check_slot(g, slot);
	if (!err)
		err = silo_rp_check_member(g, fd, "place");
	if (!err)
		err = silo_socket_cookie(fd, &placed.cookie);
	if (err)
		return err;
	lock = lock_group(g);
	if (lock < 0)
		return lock;
	/* BPF_NOEXIST: the kernel refuses a slot that holds a socket. */
	if (bpf_map_update_elem(g->sockets_fd, &slot, &sock_fd,
				only_free ? BPF_NOEXIST : BPF_ANY)) {
		err = -errno;
		if (err == -EEXIST)
			pr_err("slot %u of group '%s' holds another socket (placed meanwhile): nothing changed there; try again\n",
			       slot, g->val.name);
		else if (err == -EBUSY)
			pr_err("fd %d is in a slot already (a socket takes one slot of one group): remove it from there first\n",
			       fd);
		else
			pr_err("cannot put fd %d in slot %u of group '%s': %s\n",
			       fd, slot, g->val.name, strerror(-err));
		goto out;
	}
	bpf_map_update_elem(g->slots_fd, &slot, &placed, BPF_ANY);
	err = update_node_lists(g);
out:
	silo_rp_unlock(lock);
	return err;
}

int silo_group_set(struct silo_group *g, __u32 slot, int fd)
{
	struct silo_reuseport_slot owner = {
		.pid = getpid(),
		.tid = gettid(),
		.fd = fd,
	};

	return silo_group_place(g, slot, fd, &owner, false);
}

int silo_group_remove(struct silo_group *g, __u32 slot)
{
	struct silo_reuseport_slot none = { .fd = -1 };
	int lock, err;

	err = check_slot(g, slot);
	if (err)
		return err;
	lock = lock_group(g);
	if (lock < 0)
		return lock;
	if (bpf_map_delete_elem(g->sockets_fd, &slot)) {
		err = -errno;
		if (err == -ENOENT)
			pr_err("slot %u of group '%s' is empty\n", slot,
			       g->val.name);
		else
			pr_err("cannot empty slot %u of group '%s': %s\n", slot,
			       g->val.name, strerror(-err));
		goto out;
	}
	bpf_map_update_elem(g->slots_fd, &slot, &none, BPF_ANY);
	err = update_node_lists(g);
out:
	silo_rp_unlock(lock);
	return err;
}

static int update_group(struct silo_group *g, struct silo_reuseport_group *val)
{
	if (bpf_map_update_elem(g->fd[SILO_RP_GROUPS], &g->key, val,
				BPF_EXIST)) {
		int err = -errno;

		pr_err("cannot update group '%s': %s\n", g->val.name,
		       strerror(-err));
		return err;
	}
	g->val = *val;
	return 0;
}

int silo_group_attach(struct silo_group *g, int fd)
{
	struct silo_reuseport_group val;
	int lock, err, prog_fd;

	err = silo_rp_check_member(g, fd, "attach through");
	if (err)
		return err;
	lock = lock_group(g);
	if (lock < 0)
		return lock;
	prog_fd = g->val.flags & SILO_REUSEPORT_F_MIGRATE ?
			  g->fd[SILO_RP_MIGRATE] :
			  g->fd[SILO_RP_SELECT];
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_EBPF, &prog_fd,
		       sizeof(prog_fd))) {
		err = -errno;
		pr_err("cannot attach silo's program to the sockets of group '%s': %s\n",
		       g->val.name, strerror(-err));
		goto out;
	}
	val = g->val;
	val.flags |= SILO_REUSEPORT_F_ATTACHED;
	err = update_group(g, &val);
out:
	silo_rp_unlock(lock);
	return err;
}

int silo_group_set_policy(struct silo_group *g,
			  enum silo_reuseport_policy policy)
{
	struct silo_reuseport_group val;
	int lock, err;

	if ((unsigned int)policy >= SILO_REUSEPORT_POLICY_MAX) {
		pr_err("bad policy %d: cpu, node, queue or hash\n", policy);
		return -EINVAL;
	}
	lock = lock_group(g);
	if (lock < 0)
		return lock;
	/* Node lists first: the new policy finds them current. */
	err = update_node_lists(g);
	if (err)
		goto out;
	val = g->val;
	val.policy = policy;
	err = update_group(g, &val);
out:
	silo_rp_unlock(lock);
	return err;
}

static int detach_prog(int fd)
{
	int unused = 0; /* the kernel wants an int, and ignores it */

	if (setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF, &unused,
		       sizeof(unused)) &&
	    errno != ENOENT)
		return -errno;
	return 0;
}

/* A socket of the group, from the owner a slot records; -1 if none. */
static int take_member(const struct silo_group *g)
{
	struct silo_reuseport_slot owner;
	__u64 cookie, now;
	__u32 slot;
	int fd;

	for (slot = 0; slot < g->val.nr_slots; slot++) {
		if (bpf_map_lookup_elem(g->sockets_fd, &slot, &cookie) ||
		    bpf_map_lookup_elem(g->slots_fd, &slot, &owner) ||
		    owner.cookie != cookie || owner.fd < 0)
			continue;
		if (owner.pid == (__u32)getpid())
			fd = fcntl(owner.fd, F_DUPFD_CLOEXEC, 0);
		else
			fd = silo_pidfd_getfd(owner.pid, owner.fd);
		if (fd < 0)
			continue;
		if (!silo_socket_cookie(fd, &now) && now == cookie)
			return fd;
		close(fd);
	}
	return -1;
}

int silo_group_detach(struct silo_group *g, int fd)
{
	int lock, err, member = -1;

	if (fd >= 0) {
		err = silo_rp_check_member(g, fd, "detach through");
		if (err)
			return err;
	}
	lock = lock_group(g);
	if (lock < 0)
		return lock;
	if (g->val.flags & SILO_REUSEPORT_F_ATTACHED) {
		member = fd >= 0 ? fd : take_member(g);
		err = member >= 0 ? detach_prog(member) : -ENOENT;
		if (err)
			pr_warn("silo's program stays on the sockets of group '%s' (%s), passing every packet to the kernel's hash, until they close\n",
				g->val.name,
				err == -ENOENT ?
					"no socket of the group to take it off through" :
					strerror(-err));
		if (member >= 0 && member != fd)
			close(member);
	}
	/* The program finds no group from here on: the kernel's hash. */
	bpf_map_delete_elem(g->fd[SILO_RP_GROUPS], &g->key);
	bpf_map_delete_elem(g->fd[SILO_RP_SOCKETS], &g->val.id);
	silo_rp_delete_node_lists(g->fd[SILO_RP_NODES], g->val.id);
	bpf_map_delete_elem(g->fd[SILO_RP_QUEUES], &g->val.id);
	silo_group_pins_remove(g->s, g->val.name);
	g->detached = true;
	silo_rp_pins_release(g->s);
	silo_rp_unlock(lock);
	return 0;
}

int silo_group_info(struct silo_group *g, struct silo_group_info *info)
{
	int err = refresh(g);

	if (err)
		return err;
	info->key = g->key;
	info->group = g->val;
	return 0;
}

/* For reuseport_queue.c: the group's RSS table map and id, under the lock
 * (the group still exists); drop it with silo_group_unlock(). */
int silo_group_lock_queues(struct silo_group *g, int *queues_fd, __u32 *id)
{
	int lock = lock_group(g);

	if (lock < 0)
		return lock;
	*queues_fd = g->fd[SILO_RP_QUEUES];
	*id = g->val.id;
	return lock;
}

void silo_group_unlock(int lock)
{
	silo_rp_unlock(lock);
}
