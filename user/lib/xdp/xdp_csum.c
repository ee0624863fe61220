// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * TCP and UDP checksums that a device's senders on this host leave to
 * offload (docs/ENVELOPE.md): the device's counters (csum_stats), what a
 * load says it does with them, and what silo_xdp_csum() reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "../nl.h"
#include "xdp.h"
#include "silo_xdp.skel.h"

/* Finished in XDP: native mode on a kind whose frames leave as bytes. */
static bool csum_finishes(const char *kind, enum silo_xdp_mode mode)
{
	return mode == SILO_XDP_NATIVE && silo_kind_csum_finish(kind);
}

bool silo_xdp_csum_kind(__u32 ifindex, enum silo_xdp_mode mode, char *kind)
{
	struct silo_nl_link link;

	/* Unreadable: nothing finished in XDP; the record's
	 * SILO_DEV_F_LOCAL_TX, which silo_fill_device() reads on its own,
	 * still has such packets passed. */
	kind[0] = '\0';
	if (!silo_nl_link(ifindex, &link))
		snprintf(kind, sizeof(link.kind), "%s", link.kind);
	return csum_finishes(kind, mode);
}

int silo_xdp_csum_make(int fd, __u32 ifindex, const char *ifname, bool *made)
{
	int nr = libbpf_num_possible_cpus(), err = 0;
	void *zero;

	*made = false;
	if (nr < 0)
		return nr;
	zero = calloc(nr, sizeof(struct silo_csum_stats));
	if (!zero)
		return -ENOMEM;
	if (!bpf_map_update_elem(fd, &ifindex, zero, BPF_NOEXIST))
		*made = true;
	else if (errno != EEXIST)
		err = -errno;
	free(zero);
	if (err)
		pr_err("cannot add %s to csum_stats: %s\n", ifname,
		       strerror(-err));
	return err;
}

void silo_xdp_csum_note(const char *ifname, const char *kind,
			enum silo_xdp_mode mode)
{
	if (!silo_kind_local_tx(kind))
		return;
	if (csum_finishes(kind, mode))
		pr_info("note: %s (%s) has senders on this host: the TCP and UDP checksums they leave to offload are finished in XDP before it forwards or steers them (silo xdp status counts them)\n",
			ifname, kind);
	else
		pr_info("note: %s (%s%s) has senders on this host: the TCP and UDP checksums they leave to offload cannot be finished in XDP here, and those packets go to the stack (silo xdp status counts them; 'silo doctor' says how to turn the offload off)\n",
			ifname, kind,
			mode == SILO_XDP_SKB ? ", generic XDP" : "");
}

int silo_xdp_csum(struct silo *s, const char *ifname,
		  struct silo_xdp_csum_info *info)
{
	struct silo_xdp__rodata ro = {};
	struct silo_csum_stats *per_cpu = NULL;
	struct silo_device dev;
	struct silo_nl_link link;
	struct silo_maps maps;
	struct xdp_link l;
	__u32 ifindex;
	int err, nr, i;

	memset(info, 0, sizeof(*info));
	ifindex = ifname ? if_nametoindex(ifname) : 0;
	if (!ifindex)
		return -ENODEV;
	err = silo_xdp_link_live(s, ifindex, &l);
	if (err)
		return err;
	if (!silo_nl_link(ifindex, &link))
		snprintf(info->kind, sizeof(info->kind), "%s", link.kind);
	err = silo_maps_open(s, &maps);
	if (err)
		return err;
	if (bpf_map_lookup_elem(maps.fd[SILO_MAP_DEVICES], &ifindex, &dev)) {
		err = -errno;
		goto out_maps;
	}
	if (dev.flags & SILO_DEV_F_LOCAL_TX)
		info->what = !silo_xdp_prog_rodata(l.prog_id, &ro) &&
					     ro.csum_finish ?
				     SILO_XDP_CSUM_FINISH :
				     SILO_XDP_CSUM_PASS;
	nr = libbpf_num_possible_cpus();
	per_cpu = nr > 0 ? calloc(nr, sizeof(*per_cpu)) : NULL;
	if (!per_cpu) {
		err = nr < 0 ? nr : -ENOMEM;
		goto out_maps;
	}
	/* No entry: pins of an earlier release, or nothing counted yet. */
	if (!bpf_map_lookup_elem(maps.fd[SILO_MAP_CSUM_STATS], &ifindex,
				 per_cpu)) {
		for (i = 0; i < nr; i++) {
			info->finished += per_cpu[i].finished;
			info->passed += per_cpu[i].passed;
		}
	}
	free(per_cpu);
out_maps:
	silo_maps_close(&maps);
	return err;
}
