// SPDX-License-Identifier: GPL-2.0
/*
 * Which programs start, from the kernel's process events (the proc
 * connector): a reuseport group declared by executable (exe: in
 * silo.conf) gets its processes from every process on the host, one
 * readlink each: four times a second, 4 % of a CPU with 2,000 processes
 * on the 2-CPU test VM (0.5 % with the events). A process starts running an executable only by
 * exec(); a fork runs its parent's, and a group's processes' children
 * are taken with them. So the groups' look reuses the processes it found
 * until an exec is announced (or a message lost), and looks at every
 * process again then, and every PROCWATCH_FULL_MS in any case.
 *
 * The events come only to a listener in the host's network namespace with
 * CAP_NET_ADMIN in the initial user namespace: the socket is made before
 * silod enters --netns, and the kernel's answer to the request tells.
 * Elsewhere (a container of its own), or when anything fails, there are
 * none and every look looks at every process.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <linux/cn_proc.h>
#include "silod.h"

/* The event a message carries, copied out: it sits after a cn_msg of 20
 * bytes, and holds 64-bit fields. false: too short for one. */
static bool event_of(const struct nlmsghdr *nh, struct proc_event *ev)
{
	const struct cn_msg *cn = NLMSG_DATA(nh);

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*cn) + sizeof(*ev)))
		return false;
	memcpy(ev, cn->data, sizeof(*ev));
	return true;
}

/* Asks for the events (PROC_CN_MCAST_LISTEN) or an end to them. */
static int procwatch_ctl(int fd, enum proc_cn_mcast_op op)
{
	struct {
		struct nlmsghdr nl;
		struct cn_msg cn;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg = {
		.nl = { .nlmsg_len = sizeof(msg),
			.nlmsg_type = NLMSG_DONE,
			.nlmsg_pid = 0 },
		.cn = { .id = { .idx = CN_IDX_PROC, .val = CN_VAL_PROC },
			.len = sizeof(enum proc_cn_mcast_op) },
		.op = op,
	};

	return send(fd, &msg, sizeof(msg), 0) == sizeof(msg) ? 0 : -errno;
}

/*
 * The kernel's answer to PROC_CN_MCAST_LISTEN (a PROC_EVENT_NONE that
 * carries its errno), within 200 ms: 0, or -errno. Without the right to
 * listen the kernel says EPERM; outside the host's network namespace the
 * request itself fails.
 */
static int procwatch_ack(int fd)
{
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	const struct nlmsghdr *nh;
	struct proc_event ev;
	ssize_t n;

	while (poll(&pfd, 1, 200) == 1) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		for (nh = (const struct nlmsghdr *)buf;
		     n > 0 && NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n))
			if (event_of(nh, &ev) && ev.what == PROC_EVENT_NONE)
				return -(int)ev.event_data.ack.err;
	}
	return -ETIMEDOUT;
}

void procwatch_open(struct silod *d)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = CN_IDX_PROC };
	int fd, err = 0;

	d->rec.proc_fd = -1;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    NETLINK_CONNECTOR);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	if (!err)
		err = procwatch_ctl(fd, PROC_CN_MCAST_LISTEN);
	if (!err)
		err = procwatch_ack(fd);
	if (err) {
		if (fd >= 0)
			close(fd);
		pr_info("process events: none (%s): a group by executable looks at every process at each look\n",
			err == -ECONNREFUSED ?
				"not the host's network namespace" :
			err == -EPERM ? "no CAP_NET_ADMIN over the host" :
					strerror(-err));
		return;
	}
	d->rec.proc_fd = fd;
	d->rec.execs = true; /* the first look looks at every process */
	pr_info("process events: from the kernel; a group by executable looks at every process only after an exec\n");
}

void procwatch_read(struct silod *d)
{
	char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlmsghdr *nh;
	struct proc_event ev;
	ssize_t n;

	for (;;) {
		n = recv(d->rec.proc_fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			/* ENOBUFS: events were lost, an exec among them
			 * maybe. */
			if (errno != EAGAIN)
				d->rec.execs = true;
			return;
		}
		for (nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_ERROR ||
			    nh->nlmsg_type == NLMSG_OVERRUN) {
				d->rec.execs = true;
				continue;
			}
			if (event_of(nh, &ev) && ev.what == PROC_EVENT_EXEC)
				d->rec.execs = true;
		}
	}
}

void procwatch_close(struct silod *d)
{
	if (d->rec.proc_fd < 0)
		return;
	procwatch_ctl(d->rec.proc_fd, PROC_CN_MCAST_IGNORE);
	close(d->rec.proc_fd);
	d->rec.proc_fd = -1;
}
