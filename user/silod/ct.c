// SPDX-License-Identifier: GPL-2.0
/*
 * Established connections under a stateful firewall (bpf/lib/ct.h): the
 * data path forwards a TCP connection's packets only once conntrack's
 * window tracking is liberal for it, else the next packet the stack sees
 * (a FIN, one too large) would be judged against a window XDP's packets
 * left behind, and `ct state invalid drop` would drop it. The data path
 * asks through ct_ask; this sets IP_CT_TCP_FLAG_BE_LIBERAL on both
 * directions through ctnetlink, as nft_flow_offload_eval() does before it
 * offloads a connection. Only connections XDP is about to forward are
 * asked about: local ones and others keep the kernel's window checks.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <netinet/in.h>
#include "silod.h"

/* Sets the flag on both directions; the connection is found by the
 * packet's tuple, whichever direction it is. */
static int make_liberal(struct nfct_handle *h, const struct silo_ct_ask *a)
{
	struct nf_conntrack *ct = nfct_new();
	int err = 0;

	if (!ct)
		return -ENOMEM;
	if (a->family == SILO_AF_INET) {
		__u32 s, dst;

		memcpy(&s, a->src, 4);
		memcpy(&dst, a->dst, 4);
		nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, s);
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, dst);
	} else {
		nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET6);
		nfct_set_attr(ct, ATTR_IPV6_SRC, a->src);
		nfct_set_attr(ct, ATTR_IPV6_DST, a->dst);
	}
	nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, a->sport);
	nfct_set_attr_u16(ct, ATTR_PORT_DST, a->dport);
	nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG, IP_CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(ct, ATTR_TCP_MASK_ORIG, IP_CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL, IP_CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(ct, ATTR_TCP_MASK_REPL, IP_CT_TCP_FLAG_BE_LIBERAL);
	if (nfct_query(h, NFCT_Q_UPDATE, ct))
		err = -errno;
	nfct_destroy(ct);
	return err;
}

static int ask_cb(void *ctx, void *data, size_t len)
{
	struct silod *d = ctx;
	const struct silo_ct_ask *a = data;
	int err;

	if (len < sizeof(*a) || a->l4_proto != IPPROTO_TCP ||
	    (a->family != SILO_AF_INET && a->family != SILO_AF_INET6))
		return 0;
	/* Every packet of the connection asks until it is made liberal:
	 * those in a row are one question. */
	if (d->ct.have_last && !memcmp(a, &d->ct.last, sizeof(*a)))
		return 0;
	d->ct.last = *a;
	d->ct.have_last = true;
	err = make_liberal(d->ct.h, a);
	if (!err) {
		d->ct.made++;
		return 0;
	}
	/* Gone meanwhile (closed, expired, deleted): nothing to do. */
	d->ct.failed++;
	if (err != -ENOENT)
		pr_debug("cannot make a connection's tracking liberal: %s\n",
			 strerror(-err));
	return 0;
}

int ct_open(struct silod *d)
{
	int fd = d->maps.fd[SILO_MAP_CT_ASK], err;

	d->ct.rb = NULL;
	d->ct.h = NULL;
	if (fd < 0)
		return 0;
	d->ct.h = nfct_open(CONNTRACK, 0);
	if (!d->ct.h) {
		err = -errno;
		pr_warn("cannot open ctnetlink (%s): established connections stay with the stack\n",
			strerror(-err));
		return err;
	}
	d->ct.rb = ring_buffer__new(fd, ask_cb, d, NULL);
	if (!d->ct.rb) {
		err = -errno;
		pr_warn("cannot read the ct_ask ring buffer (%s): established connections stay with the stack\n",
			strerror(-err));
		nfct_close(d->ct.h);
		d->ct.h = NULL;
		return err;
	}
	return 0;
}

void ct_close(struct silod *d)
{
	ring_buffer__free(d->ct.rb);
	d->ct.rb = NULL;
	if (d->ct.h)
		nfct_close(d->ct.h);
	d->ct.h = NULL;
}

int ct_pollfds(struct silod *d, struct pollfd *pfd)
{
	if (!d->ct.rb)
		return 0;
	pfd->fd = ring_buffer__epoll_fd(d->ct.rb);
	pfd->events = POLLIN;
	return 1;
}

void ct_poll(struct silod *d)
{
	if (d->ct.rb)
		ring_buffer__consume(d->ct.rb);
}
