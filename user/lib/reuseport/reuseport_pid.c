// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Attaching to the SO_REUSEPORT sockets of a process silo did not start: find
 * them under /proc, take them with pidfd_getfd, place each in the slot of the
 * CPU that reads it, make the groups and attach.
 *
 * Which CPU reads a socket: the one CPU of the thread blocked on it (in a
 * read, recv or accept on its fd, or in epoll_wait on an epoll that watches
 * it: /proc/PID/task/TID/syscall names the fd, /proc/PID/fdinfo/EPFD lists
 * the watched fds as "tfd:"), else the one CPU of the process that holds it
 * (a socket inherited by several processes has no such owner), else the
 * socket's SO_INCOMING_CPU, the CPU that last received for it or that the
 * application set.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "reuseport_pid.h"
#include "../util.h"

#define MAX_PROCS 4096

const char *silo_placed_by_name(enum silo_placed_by by)
{
	switch (by) {
	case SILO_PLACED_THREAD:
		return "thread affinity";
	case SILO_PLACED_PROCESS:
		return "process affinity";
	case SILO_PLACED_INCOMING_CPU:
		return "SO_INCOMING_CPU";
	default:
		return "not placed";
	}
}

/* The one CPU a task may run on, or -1. */
static int single_cpu(int tid)
{
	cpu_set_t set;

	if (sched_getaffinity(tid, sizeof(set), &set) || CPU_COUNT(&set) != 1)
		return -1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return -1;
}

/* The ppid field of /proc/pid/stat, or -errno. */
static int read_ppid(int pid)
{
	char path[64], buf[512], *paren;
	int ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (silo_read_file(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	paren = strrchr(buf, ')');
	if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1)
		return -EINVAL;
	return ppid;
}

/* pid and every descendant, from the ppid field of /proc/N/stat;
 * parents[i]: the pid procs[i] was found a child of. */
static int process_tree(int pid, int *procs, int *parents, int max)
{
	char path[64], buf[512], *paren;
	int(*ppid_of)[2] = NULL, n = 0, cap = 0, nr = 1, i, j;
	struct dirent *de;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int child = atoi(de->d_name), ppid;

		if (child <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", child);
		if (silo_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		paren = strrchr(buf, ')');
		if (!paren || sscanf(paren + 1, " %*c %d", &ppid) != 1)
			continue;
		if (n == cap) {
			void *p = realloc(ppid_of,
					  (cap + 256) * sizeof(*ppid_of));

			if (!p) {
				closedir(d);
				free(ppid_of);
				return -ENOMEM;
			}
			ppid_of = p;
			cap += 256;
		}
		ppid_of[n][0] = child;
		ppid_of[n++][1] = ppid;
	}
	closedir(d);
	procs[0] = pid;
	parents[0] = 0;
	for (i = 0; i < nr; i++) {
		for (j = 0; j < n && nr < max; j++) {
			if (ppid_of[j][1] != procs[i])
				continue;
			parents[nr] = procs[i];
			procs[nr++] = ppid_of[j][0];
		}
	}
	free(ppid_of);
	return nr;
}

static int add_fd(struct scan *sc, int pid, int fd, int sock)
{
	void *p = realloc(sc->fds, (sc->nr_fds + 1) * sizeof(*sc->fds));

	if (!p)
		return -ENOMEM;
	sc->fds = p;
	sc->fds[sc->nr_fds++] = (struct sock_fd){ pid, fd, sock };
	return 0;
}

static int sock_of_fd(const struct scan *sc, int pid, int fd)
{
	size_t i;

	for (i = 0; i < sc->nr_fds; i++)
		if (sc->fds[i].pid == pid && sc->fds[i].fd == fd)
			return sc->fds[i].sock;
	return -1;
}

/*
 * A socket the caller asked for: bound to the port, of the protocol, a TCP
 * listener or an unconnected UDP socket. 1 yes, 0 no.
 */
static int wanted(const struct scan *sc, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int proto, listening;
	socklen_t ilen = sizeof(int);
	__u16 port;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return 0;
	port = ntohs(ss.ss_family == AF_INET ?
			     ((struct sockaddr_in *)&ss)->sin_port :
			     ((struct sockaddr_in6 *)&ss)->sin6_port);
	if (port != sc->opts->port ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &ilen) ||
	    (proto != IPPROTO_UDP && proto != IPPROTO_TCP) ||
	    (sc->opts->protocol && proto != sc->opts->protocol))
		return 0;
	if (proto == IPPROTO_TCP) {
		ilen = sizeof(int);
		return !getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening,
				   &ilen) &&
		       listening;
	}
	len = sizeof(ss);
	return getpeername(fd, (struct sockaddr *)&ss, &len) != 0;
}

static int add_sock(struct scan *sc, int pid, int fd, int copy)
{
	struct found_sock *fs;
	char why[160];
	__u64 cookie;
	size_t i;
	void *p;
	int err;

	err = silo_socket_cookie(copy, &cookie);
	if (err)
		return err;
	for (i = 0; i < sc->nr_socks; i++) {
		if (sc->socks[i].p.cookie != cookie)
			continue;
		if (sc->socks[i].p.pid != (__u32)pid)
			sc->socks[i].holders++;
		close(copy);
		return add_fd(sc, pid, fd, i);
	}
	p = realloc(sc->socks, (sc->nr_socks + 1) * sizeof(*sc->socks));
	if (!p)
		return -ENOMEM;
	sc->socks = p;
	fs = &sc->socks[sc->nr_socks];
	memset(fs, 0, sizeof(*fs));
	fs->copy = copy;
	fs->p.cookie = cookie;
	fs->p.pid = pid;
	fs->p.fd = fd;
	fs->p.slot = -1;
	fs->thread_cpu = fs->process_cpu = -1;
	fs->holders = 1;
	fs->group = -1;
	err = silo_reuseport_sock_key(sc->s, copy, &fs->p.key, why,
				      sizeof(why));
	if (err)
		snprintf(fs->p.why, sizeof(fs->p.why), "%s", why);
	sc->nr_socks++;
	return add_fd(sc, pid, fd, sc->nr_socks - 1);
}

static bool denied(int err)
{
	return err == -EPERM || err == -EACCES;
}

/* Takes a copy of every wanted socket among pid's fds. */
static int scan_fds(struct scan *sc, int pid, int pidfd)
{
	char path[64], link[64];
	struct dirent *de;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d) {
		err = -errno;
		goto out;
	}
	while (!err && (de = readdir(d))) {
		int fd = atoi(de->d_name), copy;
		char fdpath[PATH_MAX];
		ssize_t n;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, de->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n < 0) {
			if (denied(-errno))
				err = -errno;
			continue;
		}
		link[n] = '\0';
		if (strncmp(link, "socket:[", 8))
			continue;
		copy = silo_pidfd_copy(pidfd, fd);
		if (copy < 0) {
			if (denied(copy))
				err = copy;
			continue; /* closed meanwhile */
		}
		if (!wanted(sc, copy)) {
			close(copy);
			continue;
		}
		err = add_sock(sc, pid, fd, copy);
	}
	closedir(d);
out:
	if (denied(err))
		sc->denied = pid;
	return err;
}

/* The fds thread tid of pid waits on: its own, or those its epoll watches. */
static int waited_fds(int pid, int tid, int *fds, int max)
{
	char path[96], buf[4096], *line;
	long nr;
	unsigned long arg0;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", pid, tid);
	if (silo_read_file(path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%ld %lx", &nr, &arg0) != 2)
		return 0;
	switch (nr) {
	case SYS_read:
	case SYS_readv:
	case SYS_recvfrom:
	case SYS_recvmsg:
	case SYS_recvmmsg:
	case SYS_accept4:
#ifdef SYS_accept
	case SYS_accept:
#endif
		fds[0] = arg0;
		return 1;
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		break;
	default:
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%lu", pid, arg0);
	if (silo_read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	for (line = strstr(buf, "tfd:"); line && n < max;
	     line = strstr(line + 4, "tfd:"))
		if (sscanf(line, "tfd: %d", &fds[n]) == 1)
			n++;
	return n;
}

/* Which threads read which sockets, on which one CPU. */
static void scan_threads(struct scan *sc, int pid)
{
	char path[64];
	struct dirent *de;
	int fds[256], cpu, n, i, sock;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		n = waited_fds(pid, tid, fds, ARRAY_SIZE(fds));
		cpu = n ? single_cpu(tid) : -1;
		/* A thread that exited before single_cpu() may have left
		 * its tid to a task of another process, not under pid. */
		snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, tid);
		if (cpu >= 0 && access(path, F_OK))
			continue;
		for (i = 0; i < n; i++) {
			struct found_sock *fs;

			sock = sock_of_fd(sc, pid, fds[i]);
			if (sock < 0)
				continue;
			fs = &sc->socks[sock];
			if (cpu < 0 ||
			    (fs->thread_cpu >= 0 && fs->thread_cpu != cpu)) {
				fs->thread_cpu = -2;
				continue;
			}
			if (fs->thread_cpu == -2)
				continue;
			fs->thread_cpu = cpu;
			fs->p.tid = tid;
			fs->thread_pid = pid;
			fs->thread_fd = fds[i];
		}
	}
	closedir(d);
}

static void scan_process_affinity(struct scan *sc, int pid)
{
	int cpu = single_cpu(pid);
	size_t i;

	for (i = 0; i < sc->nr_fds; i++) {
		struct found_sock *fs = &sc->socks[sc->fds[i].sock];

		if (sc->fds[i].pid != pid)
			continue;
		if (cpu < 0 || (fs->process_cpu >= 0 && fs->process_cpu != cpu))
			fs->process_cpu = -2;
		else if (fs->process_cpu != -2)
			fs->process_cpu = cpu;
	}
}

static void scan_free(struct scan *sc)
{
	size_t i;

	for (i = 0; i < sc->nr_socks; i++)
		close(sc->socks[i].copy);
	free(sc->socks);
	free(sc->fds);
}

/*
 * Opens a pidfd for each process found, checking that the process it names
 * is the one found: after silo_pidfd_open(), its ppid is still the parent it was
 * found under. pidfds[i] -1: gone already (nothing to take from it).
 */
static int open_pidfds(const int *procs, const int *parents, int *pidfds,
		       int nr)
{
	int i;

	for (i = 1; i < nr; i++) {
		pidfds[i] = silo_pidfd_open(procs[i]);
		if (pidfds[i] == -ESRCH) {
			pidfds[i] = -1;
		} else if (pidfds[i] < 0) {
			pr_err("cannot open a pidfd of process %d: %s%s\n",
			       procs[i], strerror(-pidfds[i]),
			       pidfds[i] == -EMFILE ?
				       " (one per process of the tree: raise 'ulimit -n')" :
				       "");
			return pidfds[i];
		} else if (read_ppid(procs[i]) != parents[i]) {
			close(pidfds[i]);
			pidfds[i] = -1;
		}
	}
	return 0;
}

/* "pid 12" or "pids 12, 13 and 14", for messages. */
static void pids_str(char *buf, size_t len, const int *pids, size_t nr)
{
	size_t i, n;

	n = snprintf(buf, len, "pid%s", nr > 1 ? "s" : "");
	for (i = 0; i < nr && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%d",
			      i == 0	  ? " " :
			      i + 1 == nr ? " and " :
					    ", ",
			      pids[i]);
}

/*
 * Adds the process tree of pid to procs[*nr..]: those found already (pid
 * given twice, or a descendant of another given) are left out. The pidfd
 * of pid is held to the end: it says whether pid is still the process
 * asked for after every read of /proc/pid (check_still_there).
 */
static int add_tree(int pid, int *procs, int *parents, int *pidfds, int *nr)
{
	int *tp, *tpar, got, i, j, k, pidfd, err;

	for (i = 0; i < *nr; i++)
		if (procs[i] == pid)
			return 0;
	if (*nr >= MAX_PROCS) {
		pr_err("more than %d processes to read: attach fewer at once\n",
		       MAX_PROCS);
		return -E2BIG;
	}
	pidfd = silo_pidfd_open(pid);
	if (pidfd < 0) {
		pr_err("no process %d: %s\n", pid, strerror(-pidfd));
		return pidfd == -EINVAL ? -ESRCH : pidfd;
	}
	tp = calloc(MAX_PROCS, sizeof(*tp));
	tpar = calloc(MAX_PROCS, sizeof(*tpar));
	if (!tp || !tpar) {
		err = -ENOMEM;
		goto out;
	}
	got = process_tree(pid, tp, tpar, MAX_PROCS - *nr);
	if (got < 0) {
		err = got;
		pr_err("cannot read /proc: %s\n", strerror(-err));
		goto out;
	}
	k = *nr;
	for (i = 0; i < got; i++) {
		for (j = 0; j < *nr && procs[j] != tp[i]; j++)
			;
		if (j < *nr)
			continue;
		procs[k] = tp[i];
		parents[k] = tpar[i];
		pidfds[k] = i == 0 ? pidfd : -1;
		k++;
	}
	pidfd = -1; /* pidfds[*nr] now */
	/* open_pidfds skips the first: the root, opened above. */
	err = open_pidfds(procs + *nr, parents + *nr, pidfds + *nr, k - *nr);
	*nr = k;
out:
	if (pidfd >= 0)
		close(pidfd);
	free(tp);
	free(tpar);
	return err;
}

/* The sockets of the processes found, and who reads each: all read
 * while every process is still the one found. */
static int scan_all(struct scan *sc, int *procs, int *parents, int *pidfds,
		    int nr_procs, const char *who, size_t nr_pids)
{
	const struct silo_attach_pid_opts *opts = sc->opts;
	int i, err = 0;

	for (i = 0; i < nr_procs && !err; i++)
		if (pidfds[i] >= 0)
			err = scan_fds(sc, procs[i], pidfds[i]);
	if (denied(err)) {
		pr_err("not permitted to take the sockets of pid %d: run silo as root with CAP_SYS_PTRACE, or as the user of the process\n",
		       sc->denied);
		return -EPERM;
	} else if (err) {
		pr_err("cannot read the sockets of %s: %s\n", who,
		       strerror(-err));
		return err;
	}
	if (!sc->nr_socks) {
		err = silo_pidfds_check(procs, parents, pidfds, nr_procs);
		if (err)
			return err;
		pr_err("%s and %s children have no %s socket on port %u (a TCP listener, or an unconnected UDP socket)\n",
		       who, nr_pids > 1 ? "their" : "its",
		       !opts->protocol		     ? "TCP or UDP" :
		       opts->protocol == IPPROTO_TCP ? "TCP" :
						       "UDP",
		       opts->port);
		return -ENOENT;
	}
	for (i = 0; i < nr_procs; i++) {
		if (pidfds[i] < 0)
			continue;
		scan_threads(sc, procs[i]);
		scan_process_affinity(sc, procs[i]);
	}
	/* Every read of /proc is done: were they all of the processes found? */
	return silo_pidfds_check(procs, parents, pidfds, nr_procs);
}

int silo_group_attach_pids(struct silo *s, const int *pids, size_t nr_pids,
			   const struct silo_attach_pid_opts *opts,
			   struct silo_placement **out, size_t *n)
{
	struct scan sc = { .s = s, .opts = opts };
	int nr_procs = 0, err = 0;
	int *procs, *parents, *pidfds;
	char who[128];
	size_t k;

	*out = NULL;
	*n = 0;
	if (!nr_pids)
		return -EINVAL;
	pids_str(who, sizeof(who), pids, nr_pids);
	sc.nr_cpus = libbpf_num_possible_cpus();
	procs = calloc(MAX_PROCS, sizeof(*procs));
	parents = calloc(MAX_PROCS, sizeof(*parents));
	pidfds = calloc(MAX_PROCS, sizeof(*pidfds));
	if (!procs || !parents || !pidfds) {
		err = -ENOMEM;
		goto out;
	}
	for (k = 0; k < nr_pids && !err; k++)
		err = add_tree(pids[k], procs, parents, pidfds, &nr_procs);
	if (err)
		goto out;
	err = scan_all(&sc, procs, parents, pidfds, nr_procs, who, nr_pids);
	if (!err)
		err = silo_rp_place(&sc, who);
out:
	if (sc.nr_socks) {
		*out = calloc(sc.nr_socks, sizeof(**out));
		if (*out) {
			for (k = 0; k < sc.nr_socks; k++)
				(*out)[k] = sc.socks[k].p;
			*n = sc.nr_socks;
		}
	}
	scan_free(&sc);
	if (pidfds)
		silo_pidfds_close(pidfds, nr_procs);
	free(pidfds);
	free(parents);
	free(procs);
	return err;
}

int silo_group_attach_pid(struct silo *s, int pid,
			  const struct silo_attach_pid_opts *opts,
			  struct silo_placement **out, size_t *n)
{
	return silo_group_attach_pids(s, &pid, 1, opts, out, n);
}
