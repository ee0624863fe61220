/* SPDX-License-Identifier: GPL-2.0 */
/*
 * VLAN tags the driver holds beside the frame (XDP RX metadata).
 */
#ifndef SILO_BPF_LIB_VLAN_H
#define SILO_BPF_LIB_VLAN_H

#include "common.h"

extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
					__be16 *vlan_proto,
					__u16 *vlan_tci) __ksym __weak;

/*
 * A NIC with rx-vlan-offload takes the outer tag off the frame and gives it
 * to the stack beside the bytes; veth does the same with a tag its peer put
 * beside them. XDP sees an untagged frame, the stack sees VLAN N (or drops
 * the frame as PACKET_OTHERHOST when no device has that VLAN): a verdict of
 * ours made on the bytes alone, forward or steer, would not be the kernel's.
 * Only the driver knows, through this kfunc, and only a program bound to
 * the device may call it (the verifier refuses it anywhere else, even in
 * dead code: hence two programs below). A driver that cannot tell answers
 * -EOPNOTSUPP; what silo does on such devices is the loader's and doctor's
 * business.
 */
static __noinline bool hidden_tag(struct xdp_md *ctx)
{
	__be16 proto;
	__u16 tci;

	if (!bpf_ksym_exists(bpf_xdp_metadata_rx_vlan_tag))
		return false;
	return bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci) == 0;
}

#endif /* SILO_BPF_LIB_VLAN_H */
