/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* attach --pid: what reuseport_pid.c finds and reuseport_pid_groups.c
 * places. */
#ifndef SILO_REUSEPORT_PID_H
#define SILO_REUSEPORT_PID_H

#include "reuseport.h"

/* One socket, however many fds of however many processes hold it. */
struct found_sock {
	struct silo_placement p; /* p.pid, p.fd: the first holder */
	int copy; /* our fd of it */
	int thread_cpu; /* -1: no reader seen; -2: readers on several CPUs */
	int thread_pid, thread_fd;
	int process_cpu; /* -1: no single-CPU holder; -2: several */
	int holders;
	int group; /* index into the groups made */
	bool in_group; /* in its silo group already (p.slot says where) */
	bool placed_now; /* placed by this attach */
};

/* An fd of a process that is one of the sockets. */
struct sock_fd {
	int pid, fd, sock;
};

struct scan {
	struct silo *s;
	const struct silo_attach_pid_opts *opts;
	struct found_sock *socks;
	size_t nr_socks;
	struct sock_fd *fds;
	size_t nr_fds;
	int nr_cpus;
	int denied; /* a process whose sockets we may not take */
};

/* reuseport_pid_groups.c: places each socket found (who: the pids, for
 * the messages), makes or fills the groups and attaches them, all or
 * nothing. Returns the groups used. */
int silo_rp_place(struct scan *sc, const char *who);

#endif /* SILO_REUSEPORT_PID_H */
