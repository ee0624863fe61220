// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * pidfds (Linux 5.6): taking another process's fds and telling whether it
 * is still there. Below both reuseport.c (detach takes a member back from
 * the process that placed it) and reuseport_pid.c (attach by pid).
 */
#include <errno.h>
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
