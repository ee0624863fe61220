/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets on loopback for the reuseport tests and benchmark, in the manner
 * of the kernel's reuseport_bpf_cpu selftest: the sender pins itself to a
 * CPU, so the softirq that runs the selection runs on that CPU too.
 */
#ifndef SILO_REUSEPORT_UTIL_H
#define SILO_REUSEPORT_UTIL_H

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "silo/silo.h"

#define RP_MAX_SOCKS 64

static inline int rp_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static inline int rp_unpin(void)
{
	cpu_set_t set;
	int cpu;

	CPU_ZERO(&set);
	for (cpu = 0; cpu < libbpf_num_possible_cpus(); cpu++)
		CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Loopback address of family, port. */
static inline socklen_t rp_addr(int family, int port,
				struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*sin);
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = in6addr_loopback;
	return sizeof(*sin6);
}

/* A non-blocking socket on loopback:port (SOCK_DGRAM, or SOCK_STREAM
 * listening); port 0: unbound. -errno on failure. */
static inline int rp_socket(int family, int type, int port, bool reuseport)
{
	struct sockaddr_storage ss;
	socklen_t len = rp_addr(family, port, &ss);
	int fd, one = 1, err;

	fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if ((reuseport &&
	     setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) ||
	    (family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))))
		goto err;
	if (port && bind(fd, (struct sockaddr *)&ss, len))
		goto err;
	if (port && type == SOCK_STREAM && listen(fd, 128))
		goto err;
	return fd;
err:
	err = -errno;
	close(fd);
	return err;
}

static inline int rp_cookie(int fd, __u64 *cookie)
{
	socklen_t len = sizeof(*cookie);

	return getsockopt(fd, SOL_SOCKET, SO_COOKIE, cookie, &len) ? -errno : 0;
}

/* One datagram to loopback:port from socket fd. */
static inline int rp_send(int fd, int family, int port, const void *buf,
			  size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = rp_addr(family, port, &ss);

	return sendto(fd, buf, len, 0, (struct sockaddr *)&ss, sl) ==
			       (ssize_t)len ?
		       0 :
		       -errno;
}

/* A connection to loopback:port, left open; -errno on failure. */
static inline int rp_connect(int family, int port)
{
	struct sockaddr_storage ss;
	socklen_t sl = rp_addr(family, port, &ss);
	int fd, err;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&ss, sl)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Which of socks got the datagram (read, its payload into buf) or the
 * connection (accepted, into *conn, or closed when conn is NULL): the index,
 * or -1 when none did within timeout_ms.
 */
static inline int rp_which(const int *socks, int n, int timeout_ms, void *buf,
			   size_t len, int *conn)
{
	struct pollfd pfd[RP_MAX_SOCKS];
	int i, type;
	socklen_t tl = sizeof(type);

	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = socks[i], .events = POLLIN };
	if (poll(pfd, n, timeout_ms) <= 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (!(pfd[i].revents & POLLIN))
			continue;
		getsockopt(socks[i], SOL_SOCKET, SO_TYPE, &type, &tl);
		if (type == SOCK_DGRAM) {
			char scratch[64];

			if (recv(socks[i], buf ? buf : scratch,
				 buf ? len : sizeof(scratch), 0) < 0)
				return -1;
		} else {
			int c = accept4(socks[i], NULL, NULL, SOCK_CLOEXEC);

			if (c < 0)
				return -1;
			if (conn)
				*conn = c;
			else
				close(c);
		}
		return i;
	}
	return -1;
}

/* Counters of g summed over CPUs, and *on_cpu those of one CPU. */
static inline int rp_stats(struct silo_group *g, int cpu,
			   struct silo_reuseport_stats *total,
			   struct silo_reuseport_stats *on_cpu)
{
	int nr = libbpf_num_possible_cpus(), c, err;
	struct silo_reuseport_stats *per_cpu = calloc(nr, sizeof(*per_cpu));
	unsigned int i;

	if (!per_cpu)
		return -ENOMEM;
	err = silo_group_stats(g, per_cpu);
	memset(total, 0, sizeof(*total));
	for (c = 0; c < nr && !err; c++)
		for (i = 0; i < SILO_RSTAT_MAX; i++)
			((__u64 *)total)[i] += ((__u64 *)&per_cpu[c])[i];
	if (!err && on_cpu)
		*on_cpu = per_cpu[cpu < nr ? cpu : 0];
	free(per_cpu);
	return err;
}

/* Fakes the CPU -> node map: node_of(cpu) for every CPU. */
static inline int rp_fake_nodes(struct silo *s, int (*node_of)(int cpu))
{
	char path[PATH_MAX];
	__u32 cpu, node;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/cpu_node", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	for (cpu = 0; cpu < (__u32)libbpf_num_possible_cpus() && !err; cpu++) {
		node = node_of(cpu);
		if (bpf_map_update_elem(fd, &cpu, &node, BPF_ANY))
			err = -errno;
	}
	close(fd);
	return err;
}

static inline void rp_close_all(int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

#endif /* SILO_REUSEPORT_UTIL_H */
