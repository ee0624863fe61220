/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* XDP links (xdp_link.c), below xdp.c's load and unload. */
#ifndef SILO_LIB_XDP_H
#define SILO_LIB_XDP_H

#include "../pins.h"

/* What the pinned link of a device says. */
struct xdp_link {
	int fd; /* -1: no pin */
	__u32 prog_id;
	__u32 link_id;
	bool defunct; /* its device is gone */
};

/* The XDP link pinned for ifindex, into *l: l->fd -1 when none; -EINVAL
 * when the pin is not an XDP link. */
int silo_xdp_link_open(struct silo *s, __u32 ifindex, struct xdp_link *l);
/* Forgets a device: its link pin and its entries in the shared maps. */
void silo_xdp_forget_device(struct silo *s, __u32 ifindex);

/* What explains a failed attach (xdp_why.c): the device as it is. */
struct silo_xdp_dev_state {
	char kind[16]; /* "veth", ...; "" for a NIC */
	__u32 mtu;
	__u32 rx_queues;
	bool known; /* its XDP features were read (netdev netlink) */
	__u64 xdp_features; /* SILO_NETDEV_XDP_ACT_* */
};
int silo_xdp_dev_state_get(__u32 ifindex, struct silo_xdp_dev_state *st);
/* The cause of err, attaching to dev in native mode or not, and the fix,
 * as one sentence into buf. */
void silo_xdp_why(const char *dev, bool native, int err,
		  const struct silo_xdp_dev_state *st, char *buf, size_t len);

/* Says why attaching to dev failed with err (silo_xdp_why()); returns
 * err. */
int silo_xdp_attach_error(const char *dev, __u32 ifindex, bool native, int err);
/* After a replace in place on a veth: warns when its peer keeps the MTU
 * cap of a program that took frames of one page only (an earlier
 * release's), and says how to lift it. */
void silo_xdp_peer_cap(const char *dev, __u32 ifindex);

#endif /* SILO_LIB_XDP_H */
