/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Shared by the reuseport files of libsilo: reuseport.c (the life cycle of a
 * group: create, open, fill, attach, detach, show), reuseport_sock.c (what a
 * socket is as a group key), reuseport_shared.c (opening what every group
 * shares, and the lock on group changes), reuseport_pid.c (attaching by pid)
 * and reuseport_pidfd.c (taking another process's fds). Their pins are pins.c's.
 */
#ifndef SILO_REUSEPORT_H
#define SILO_REUSEPORT_H

#include "../pins.h"

struct silo_group {
	struct silo *s;
	int fd[SILO_RP_COUNT];
	int cpu_node_fd;
	int sockets_fd; /* this group's REUSEPORT_SOCKARRAY */
	int slots_fd; /* who placed what */
	struct silo_reuseport_key key;
	struct silo_reuseport_group val;
	bool detached;
};

/* Reuseport policy queue (reuseport_queue.c): the group's RSS table map and
 * id under the group lock; the lock to pass to silo_group_unlock, or -errno. */
int silo_group_lock_queues(struct silo_group *g, int *queues_fd, __u32 *id);
void silo_group_unlock(int lock);
/* Reuseport groups (reuseport.c, reuseport_pid.c). */
/* What socket fd is as a group key; why says what does not fit. */
int silo_reuseport_sock_key(const struct silo *s, int fd,
			    struct silo_reuseport_key *key, char *why,
			    size_t len);
int silo_socket_cookie(int fd, __u64 *cookie);
/* silo_group_set, recording owner (of another process) for show/detach;
 * only_free: -EEXIST, nothing changed, when the slot holds a socket. */
int silo_group_place(struct silo_group *g, __u32 slot, int fd,
		     const struct silo_reuseport_slot *owner, bool only_free);
/* The group of the kernel group key: -ENOENT (quietly) when there is none. */
int silo_group_open_key(struct silo *s, const struct silo_reuseport_key *key,
			struct silo_group **out);

/* reuseport.c, for reuseport_create.c */
/* A group with nothing open, of s. */
void silo_rp_group_init(struct silo_group *g, struct silo *s);
/* -EINVAL, said why, for a name silo_group_name_valid refuses. */
int silo_rp_check_name(const char *name);
/* Removes group id's node lists, of every node. */
void silo_rp_delete_node_lists(int nodes_fd, __u32 id);

/* reuseport_sock.c */
/* Why socket key got does not belong to group want; NULL when it does. */
const char *silo_rp_key_mismatch(const struct silo_reuseport_key *want,
				 const struct silo_reuseport_key *got);
/* fd must be a socket of g's kernel group; what: the verb for the error. */
int silo_rp_check_member(const struct silo_group *g, int fd, const char *what);
/* "udp4_9000", "tcp6_80_fe80::1_if2"; bpffs takes no '.' in a name. */
void silo_rp_default_name(const struct silo_reuseport_key *key, char *name);

/* reuseport_shared.c */
/*
 * Takes the lock on group changes (see reuseport_shared.c): an fd to pass to
 * silo_rp_unlock, or -errno. create: make the pin directory when missing.
 */
int silo_rp_lock(const struct silo *s, bool create);
void silo_rp_unlock(int lock_fd);
/* Whether lock_fd still locks the pin directory its path names. */
bool silo_rp_lock_holds(const struct silo *s, int lock_fd);
/* Opens the shared objects into g->fd and g->cpu_node_fd: -ENOENT when
 * there are none, -ESTALE when incomplete or of another layout. */
int silo_rp_shared_open(struct silo_group *g);

/* reuseport_pidfd.c: -errno on failure */
int silo_pidfd_open(int pid);
/* Our copy of fd number fd of pidfd's process (pidfd_getfd). */
int silo_pidfd_copy(int pidfd, int fd);
int silo_pidfd_alive(int pidfd);
/* A copy of fd number fd of process pid (pidfd_getfd), or -errno. */
int silo_pidfd_getfd(int pid, int fd);
/* -ESRCH, said which, when a process of procs (pidfds[i] open, -1: none)
 * exited since its pidfd was opened: what was read of /proc may be of
 * another process that took its pid. */
int silo_pidfds_check(const int *procs, const int *parents, const int *pidfds,
		      int nr);
void silo_pidfds_close(int *pidfds, int nr);

#endif /* SILO_REUSEPORT_H */
