// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * pidfds (Linux 5.6): taking another process's fds and telling whether it
 * is still there. Below both reuseport.c (detach takes a member back from
 * the process that placed it) and reuseport_pid.c (attach by pid).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "reuseport.h"

int silo_pidfd_open(int pid)
{
	int fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

int silo_pidfd_copy(int pidfd, int fd)
{
	int copy = syscall(SYS_pidfd_getfd, pidfd, fd, 0);

	return copy < 0 ? -errno : copy;
}

/* 0 while the process of pidfd is not yet reaped, -ESRCH after (-EPERM,
 * not ours to signal, still says it is there). */
int silo_pidfd_alive(int pidfd)
{
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) && errno == ESRCH)
		return -ESRCH;
	return 0;
}

int silo_pidfd_getfd(int pid, int fd)
{
	int pidfd = silo_pidfd_open(pid), copy;

	if (pidfd < 0)
		return pidfd;
	copy = silo_pidfd_copy(pidfd, fd);
	close(pidfd);
	return copy;
}

/*
 * Whether every /proc/PID read since pidfds[i] was opened was of that
 * process: a pid number is freed only when its process is reaped, and a
 * pidfd names the process, not the number, so once reaped it stays dead
 * (-ESRCH) even when the number is reused. So if the process is alive now,
 * its number was never freed meanwhile and /proc/PID was it all along. The
 * ppid check at open chains the descendants to pid: each was, when its
 * pidfd was open, the child of a process that is still the one we found.
 */
int silo_pidfds_check(const int *procs, const int *parents, const int *pidfds,
		      int nr)
{
	int i, root = 0;

	for (i = 0; i < nr; i++) {
		if (!parents[i])
			root = procs[i];
		if (pidfds[i] < 0 || !silo_pidfd_alive(pidfds[i]))
			continue;
		if (!parents[i])
			pr_err("process %d exited while silo read its sockets: nothing attached\n",
			       procs[i]);
		else
			pr_err("process %d (a descendant of %d) exited while silo read its sockets: nothing attached; run again\n",
			       procs[i], root);
		return -ESRCH;
	}
	return 0;
}

void silo_pidfds_close(int *pidfds, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (pidfds[i] >= 0)
			close(pidfds[i]);
}
