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
/* The XDP link silo attached to ifindex, its fd closed: 0, or -ENOENT
 * where there is none or its device is gone. */
int silo_xdp_link_live(struct silo *s, __u32 ifindex, struct xdp_link *l);
/* Forgets a device: its link pin and its entries in the shared maps. */
void silo_xdp_forget_device(struct silo *s, __u32 ifindex);

/* The knobs a loaded program was built with, from its .rodata map. */
struct silo_xdp__rodata;
int silo_xdp_prog_rodata(__u32 prog_id, struct silo_xdp__rodata *ro);

/* Checksums left to offload (xdp_csum.c): the device's kind (16 bytes
 * into kind) and whether its program in that mode finishes them (the knob
 * csum_finish); its zeroed entry in csum_stats (fd), unless it has one (a
 * replace keeps it), *made when this made it; what the load of a device
 * of that kind, in that mode, does with them, said. */
bool silo_xdp_csum_kind(__u32 ifindex, enum silo_xdp_mode mode, char *kind);
int silo_xdp_csum_make(int fd, __u32 ifindex, const char *ifname, bool *made);
void silo_xdp_csum_note(const char *ifname, const char *kind,
			enum silo_xdp_mode mode);

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
