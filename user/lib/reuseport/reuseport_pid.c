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
#include "reuseport.h"
#include "../util.h"

#define MAX_PROCS 4096

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
static int make_groups(struct scan *sc)
{
	struct silo_group_opts gopts = {
		.policy = sc->opts->policy,
		.no_migrate = sc->opts->no_migrate,
	};
	struct attach_group *ag;
	int n = 0, used = 0, err = 0, i;
	size_t j, k;

	ag = calloc(sc->nr_socks, sizeof(*ag));
	if (!ag)
		return -ENOMEM;
	/* Every kernel group of a socket that fits one. */
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
	/* Those with a silo group already: nothing changes until all fit. */
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
	if (err)
		goto err_rollback;
	/* A kernel group counts when a socket of it is placed or in its
	 * silo group; the others are not made. */
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
	if (used > 1 && sc->opts->name) {
		pr_err("--name names one group, and port %u has %d here: add --proto, or leave the names to silo\n",
		       sc->opts->port, used);
		err = -EINVAL;
		goto err_rollback;
	}
	gopts.name = sc->opts->name;
	for (i = 0; i < n && !err; i++) {
		struct silo_group_info info;

		if (ag[i].fd < 0)
			continue;
		if (!ag[i].existing) {
			err = silo_group_create(sc->s, ag[i].fd, &gopts,
						&ag[i].g);
			if (err)
				break;
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
			err = silo_group_place(ag[i].g, fs->p.slot, fs->copy,
					       &owner, ag[i].existing);
			fs->placed_now = !err;
		}
		if (!err && (!ag[i].existing ||
			     (!silo_group_info(ag[i].g, &info) &&
			      !(info.group.flags & SILO_REUSEPORT_F_ATTACHED))))
			err = silo_group_attach(ag[i].g, ag[i].fd);
	}
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

/*
 * Whether every /proc/PID read since pidfds[i] was opened was of that
 * process: a pid number is freed only when its process is reaped, and a
 * pidfd names the process, not the number, so once reaped it stays dead
 * (-ESRCH) even when the number is reused. So if the process is alive now,
 * its number was never freed meanwhile and /proc/PID was it all along. The
 * ppid check at open chains the descendants to pid: each was, when its
 * pidfd was open, the child of a process that is still the one we found.
 */
static int check_still_there(const int *procs, const int *parents,
			     const int *pidfds, int nr)
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

static void close_pidfds(int *pidfds, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (pidfds[i] >= 0)
			close(pidfds[i]);
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

int silo_group_attach_pids(struct silo *s, const int *pids, size_t nr_pids,
			   const struct silo_attach_pid_opts *opts,
			   struct silo_placement **out, size_t *n)
{
	struct scan sc = { .s = s, .opts = opts };
	int nr_procs = 0, i, err = 0, placed = 0, unfit = 0;
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
	for (i = 0; i < nr_procs && !err; i++)
		if (pidfds[i] >= 0)
			err = scan_fds(&sc, procs[i], pidfds[i]);
	if (denied(err)) {
		pr_err("not permitted to take the sockets of pid %d: run silo as root with CAP_SYS_PTRACE, or as the user of the process\n",
		       sc.denied);
		err = -EPERM;
		goto out;
	} else if (err) {
		pr_err("cannot read the sockets of %s: %s\n", who,
		       strerror(-err));
		goto out;
	}
	if (!sc.nr_socks) {
		err = check_still_there(procs, parents, pidfds, nr_procs);
		if (err)
			goto out;
		pr_err("%s and %s children have no %s socket on port %u (a TCP listener, or an unconnected UDP socket)\n",
		       who, nr_pids > 1 ? "their" : "its",
		       !opts->protocol		     ? "TCP or UDP" :
		       opts->protocol == IPPROTO_TCP ? "TCP" :
						       "UDP",
		       opts->port);
		err = -ENOENT;
		goto out;
	}
	for (i = 0; i < nr_procs; i++) {
		if (pidfds[i] < 0)
			continue;
		scan_threads(&sc, procs[i]);
		scan_process_affinity(&sc, procs[i]);
	}
	/* Every read of /proc is done: were they all of the processes found? */
	err = check_still_there(procs, parents, pidfds, nr_procs);
	if (err)
		goto out;
	for (k = 0; k < sc.nr_socks; k++)
		choose_slot(&sc, &sc.socks[k]);
	resolve_conflicts(&sc);
	for (k = 0; k < sc.nr_socks; k++) {
		placed += sc.socks[k].p.slot >= 0;
		unfit += sc.socks[k].p.key.port == 0;
	}
	if (unfit == (int)sc.nr_socks) {
		pr_err("the sockets of %s on port %u cannot be a reuseport group: %s\n",
		       who, opts->port, sc.socks[0].p.why);
		err = -EINVAL;
	} else {
		err = make_groups(&sc);
		/* Nothing placed and nothing in a group already. */
		if (err == 0 && !placed) {
			pr_err("none of the %zu sockets of %s on port %u could be placed: pin the threads that read them to one CPU each (taskset, sched_setaffinity)\n",
			       sc.nr_socks, who, opts->port);
			err = -EINVAL;
		}
	}
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
		close_pidfds(pidfds, nr_procs);
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
