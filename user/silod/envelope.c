// SPDX-License-Identifier: GPL-2.0
/*
 * The offload envelope, kept current: nftables, xfrm and tc (qdiscs and
 * filters) changes arrive as notifications and are acted on at once;
 * iptables-legacy tables, tcx programs and the forwarding and multipath
 * sysctls notify nothing, so every second the whole envelope is evaluated
 * again. A change is written to genid.outside at
 * once: a firewall chain added an hour after the load makes the data path
 * pass that family's forwarded traffic from the next packet on.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/xfrm.h>
#include "silod.h"

#define ENVELOPE_RCVBUF (1 << 20)

/* A notification socket of protocol joined to groups; -errno on failure. */
static int notify_open(int protocol, const unsigned int *groups, size_t n)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK };
	int fd, err, rcvbuf = ENVELOPE_RCVBUF;
	size_t i;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    protocol);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)))
		goto err_close;
	for (i = 0; i < n; i++)
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
			       &groups[i], sizeof(groups[i])))
			goto err_close;
	return fd;

err_close:
	err = -errno;
	close(fd);
	return err;
}

void envelope_init(struct silod *d)
{
	const char *poll_ms = getenv("SILOD_TEST_ENVELOPE_POLL_MS");

	memset(&d->env, 0, sizeof(d->env));
	d->env.nft_fd = d->env.xfrm_fd = d->env.tc_fd = -1;
	d->env.poll_ms = SILOD_ENVELOPE_POLL_MS;
	/* Tests only: a long period shows the notifications alone work. */
	if (poll_ms && atoi(poll_ms) > 0)
		d->env.poll_ms = atoi(poll_ms);
}

int envelope_open(struct silod *d)
{
	static const unsigned int nft_groups[] = { NFNLGRP_NFTABLES };
	static const unsigned int xfrm_groups[] = { XFRMNLGRP_POLICY,
						    XFRMNLGRP_SA };
	static const unsigned int tc_groups[] = { RTNLGRP_TC };
	int fd;

	/* Without notifications the one-second poll still sees changes. */
	fd = notify_open(NETLINK_NETFILTER, nft_groups, ARRAY_SIZE(nft_groups));
	if (fd < 0 && fd != -EPROTONOSUPPORT)
		pr_warn("cannot listen to nftables changes (%s): seeing them within %d ms\n",
			strerror(-fd), d->env.poll_ms);
	d->env.nft_fd = fd;
	fd = notify_open(NETLINK_XFRM, xfrm_groups, ARRAY_SIZE(xfrm_groups));
	if (fd < 0 && fd != -EPROTONOSUPPORT)
		pr_warn("cannot listen to xfrm changes (%s): seeing them within %d ms\n",
			strerror(-fd), d->env.poll_ms);
	d->env.xfrm_fd = fd;
	fd = notify_open(NETLINK_ROUTE, tc_groups, ARRAY_SIZE(tc_groups));
	if (fd < 0)
		pr_warn("cannot listen to tc changes (%s): seeing them within %d ms\n",
			strerror(-fd), d->env.poll_ms);
	d->env.tc_fd = fd;
	return 0;
}

void envelope_close(struct silod *d)
{
	if (d->env.nft_fd >= 0)
		close(d->env.nft_fd);
	if (d->env.xfrm_fd >= 0)
		close(d->env.xfrm_fd);
	if (d->env.tc_fd >= 0)
		close(d->env.tc_fd);
	d->env.nft_fd = d->env.xfrm_fd = d->env.tc_fd = -1;
}

static void log_change(const struct silo_envelope *env, const __u32 *old,
		       __u32 override, unsigned int ct_fams)
{
	static const char *const fam[] = { "IPv4", "IPv6" };
	unsigned int f, i;

	for (f = 0; f < 2; f++) {
		__u32 now = env->holds[f] & ~override;

		if (now == (old[f] & ~override))
			continue;
		if (!now) {
			pr_info("%s: inside the offload envelope again: XDP forwards\n",
				fam[f]);
			continue;
		}
		if (ct_fams & (1U << f)) {
			pr_info("%s: established connections forwarded by XDP with conntrack's verdict, the rest by the stack (%s)\n",
				fam[f], env->ct_detail);
			continue;
		}
		/* IPv6 forwarding off is the kernel's own choice: no alarm. */
		for (i = 0; i < SILO_ENV_BIT_MAX; i++)
			if (now & (1U << i))
				silo_log(
					i == SILO_ENV_BIT_FORWARDING_OFF ?
						SILO_LOG_INFO :
						SILO_LOG_WARN,
					"%s: forwarded traffic goes to the stack: %s (%s): %s\n",
					fam[f], silo_envelope_desc(i),
					env->detail, silo_envelope_todo(i));
	}
}

int envelope_update(struct silod *d)
{
	struct silo_envelope env;
	struct silo_genid g;
	__u32 zero = 0;
	int err;

	d->env.next_poll_ns = now_ns() + d->env.poll_ms * 1000000ULL;
	/* What cannot be read comes back as UNKNOWN: the data path passes. */
	silo_envelope_eval(&env);
	/* The regrace thread bumps genid too: one writer at a time. */
	pthread_mutex_lock(&d->genid_lock);
	err = silo_envelope_apply(d->maps.fd[SILO_MAP_GENID], &env, -1, -1);
	pthread_mutex_unlock(&d->genid_lock);
	if (err) {
		pr_err("cannot write the envelope to genid: %s\n",
		       strerror(-err));
		return err;
	}
	if (bpf_map_lookup_elem(d->maps.fd[SILO_MAP_GENID], &zero, &g))
		memset(&g, 0, sizeof(g));
	log_change(&env, d->env.known ? d->env.holds : (__u32[2]){ 0, 0 },
		   g.override, g.ct_fams);
	memcpy(d->env.holds, env.holds, sizeof(d->env.holds));
	d->env.known = true;
	return 0;
}

int envelope_pollfds(struct silod *d, struct pollfd *pfd)
{
	int n = 0;

	if (d->env.nft_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = d->env.nft_fd,
					    .events = POLLIN };
	if (d->env.xfrm_fd >= 0)
		pfd[n++] = (struct pollfd){ .fd = d->env.xfrm_fd,
					    .events = POLLIN };
	if (d->env.tc_fd >= 0)
		pfd[n++] =
			(struct pollfd){ .fd = d->env.tc_fd, .events = POLLIN };
	return n;
}

__u64 envelope_wait(struct silod *d, __u64 now, __u64 wait)
{
	if (now >= d->env.next_poll_ns)
		return 0;
	return d->env.next_poll_ns - now < wait ? d->env.next_poll_ns - now :
						  wait;
}

/* Empties a notification socket; what the messages say does not matter,
 * only that something changed (an overrun too). */
static bool drain_socket(int fd)
{
	char buf[8192];
	bool any = false;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			any = true;
			continue;
		}
		if (n <= 0)
			return any;
		any = true;
	}
}

bool envelope_poll(struct silod *d, const struct pollfd *pfd, int n)
{
	bool changed = false, due = now_ns() >= d->env.next_poll_ns;
	int i;

	for (i = 0; i < n; i++)
		if (pfd[i].revents && drain_socket(pfd[i].fd))
			changed = true;
	if (changed || due)
		envelope_update(d);
	return due;
}
