// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Loading silo's XDP program onto devices (xdp_link.c takes it off). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "../ethtool.h"
#include "../maps.h"
#include "xdp.h"
#include "silo_xdp.skel.h"

#ifndef BPF_F_XDP_DEV_BOUND_ONLY /* uapi headers older than 6.3 */
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

static __u32 mode_flags(enum silo_xdp_mode mode)
{
	return mode == SILO_XDP_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

static const char *attach_mode_name(__u8 mode)
{
	switch (mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "skb";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "several";
	}
	return "no";
}

/* SILO_XDP_VLAN_* for a device seen as v, and whether the program is
 * bound to it. */
static int vlan_state(const struct silo_vlan_view *v, bool bound)
{
	if (!v->strips)
		return SILO_XDP_VLAN_IN_FRAME;
	return bound && v->meta ? SILO_XDP_VLAN_TOLD : SILO_XDP_VLAN_HIDDEN;
}

/*
 * A device that takes VLAN tags off before XDP, where the program cannot
 * ask the driver for them (generic XDP, or a driver without the metadata),
 * hands silo tagged frames that look untagged: forwarded or steered on the
 * bytes alone, where the kernel delivers them to a VLAN device or drops
 * them. silo cannot tell those frames apart; the operator can stop the
 * stripping. Only said: a port that never sees tagged frames is fine.
 */
static void warn_hidden_tags(const char *ifname, const struct silo_vlan_view *v,
			     bool bound, const struct silo_xdp_load_opts *opts)
{
	const char *why;

	if (vlan_state(v, bound) != SILO_XDP_VLAN_HIDDEN)
		return;
	if (opts->mode == SILO_XDP_SKB)
		why = "generic XDP cannot ask its driver for the tag";
	else if (opts->unbound)
		why = "the program is loaded unbound (it cannot ask the driver)";
	else
		why = "its driver does not tell XDP programs the tag";
	pr_warn("%s takes VLAN tags off before XDP and %s: a tagged frame looks untagged to silo, which %s it where the kernel would deliver it to a VLAN device or drop it. If tagged frames can reach %s: ethtool -K %s rxvlan off rx-vlan-stag-hw-parse off\n",
		ifname, why,
		opts->mode == SILO_XDP_SKB ? "forwards" : "forwards or steers",
		ifname, ifname);
}

/* Takes a program that is not silo's off the device (--force). */
static int detach_foreign(const char *ifname, __u32 ifindex,
			  const struct bpf_xdp_query_opts *q)
{
	static const struct {
		size_t id_off;
		__u32 flags;
	} modes[] = {
		{ offsetof(struct bpf_xdp_query_opts, drv_prog_id),
		  XDP_FLAGS_DRV_MODE },
		{ offsetof(struct bpf_xdp_query_opts, skb_prog_id),
		  XDP_FLAGS_SKB_MODE },
		{ offsetof(struct bpf_xdp_query_opts, hw_prog_id),
		  XDP_FLAGS_HW_MODE },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		__u32 id = *(const __u32 *)((const char *)q + modes[i].id_off);

		if (!id)
			continue;
		if (bpf_xdp_detach(ifindex, modes[i].flags, NULL)) {
			int err = -errno;

			if (err == -EBUSY)
				pr_err("XDP program %u on %s is held by a bpf_link that is not silo's: detach it with 'bpftool link detach id ID' (see 'bpftool link show')\n",
				       id, ifname);
			else
				pr_err("cannot detach XDP program %u from %s: %s\n",
				       id, ifname, strerror(-err));
			return err;
		}
		pr_info("detached XDP program %u from %s\n", id, ifname);
	}
	return 0;
}

static const char *fams_name(const struct silo_envelope *env, __u32 bit)
{
	bool v4 = env->holds[SILO_FAM_V4] & bit,
	     v6 = env->holds[SILO_FAM_V6] & bit;

	return v4 && v6 ? "IPv4 and IPv6" : v4 ? "IPv4" : "IPv6";
}

/* What blocks a forwarding load: conditions that hold, not bypassed. IPv6
 * forwarding off does not: the kernel does not forward it either; nor an
 * IPv6 rule that suppresses, a common router's (wg-quick's): silo passes
 * IPv6, which is exact, and forwards IPv4. */
#define ENV_REFUSE (~(SILO_ENV(FORWARDING_OFF) | SILO_ENV(RULE_SUPPRESS)))

/*
 * Evaluates the envelope for a load onto ifname; refuses a forwarding load
 * that a condition would keep from forwarding. *override: what to write to
 * genid.override (-1: keep); *ct_optin: to genid.ct_optin (-1: keep).
 */
static int envelope_check(const char *ifname,
			  const struct silo_xdp_load_opts *opts,
			  struct silo_envelope *env, int *override,
			  int *ct_optin)
{
	__u32 bypass = 0, refuse, bit;
	unsigned int i, ct;

	silo_envelope_eval(env);
	*override = -1;
	*ct_optin = -1;
	if (!opts->forward) {
		if ((env->holds[SILO_FAM_V4] | env->holds[SILO_FAM_V6]) &
		    SILO_ENV(UNKNOWN))
			pr_warn("%s: silo will pass forwarded traffic to the stack\n",
				env->detail);
		return 0;
	}
	if (opts->allow_firewall_bypass) {
		bypass = SILO_ENV_OVERRIDABLE;
		pr_warn("--allow-firewall-bypass: forwarded traffic on %s skips nftables and iptables-legacy, now and when rules are added later%s%s\n",
			ifname, env->detail[0] ? "; now: " : "", env->detail);
	}
	*override = bypass;
	*ct_optin = opts->forward_established;
	/* A family whose stateful firewall lets established connections
	 * in, opted in: XDP forwards those, conntrack's verdict per packet. */
	ct = bypass ? 0 : silo_envelope_ct_fams(env, opts->forward_established);
	refuse = 0;
	for (i = 0; i < 2; i++)
		if (!(ct & (1U << i)))
			refuse |= env->holds[i] & ENV_REFUSE & ~bypass;
	if (ct)
		pr_info("forwarding established connections on %s: %s\n",
			ifname, env->ct_detail);
	if (!refuse)
		return 0;
	pr_err("not forwarding on %s: it would not be what the kernel does (%s)\n",
	       ifname, env->detail);
	for (i = 0; i < SILO_ENV_BIT_MAX; i++) {
		bit = 1U << i;
		if (refuse & bit)
			pr_err("%s: %s: %s: %s\n", silo_envelope_name(i),
			       fams_name(env, bit), silo_envelope_desc(i),
			       silo_envelope_todo(i));
	}
	if ((refuse & SILO_ENV(NFTABLES)) && env->ct_detail[0])
		pr_err("nftables: %s%s\n", env->ct_detail,
		       env->ct_shape && !opts->forward_established ?
			       ": --forward-established lets XDP forward them, with conntrack's verdict per packet" :
			       "");
	return -EPERM;
}

/* A load in progress: what its steps make and its undo needs. */
struct xdp_load {
	struct silo *s;
	const char *ifname;
	const struct silo_xdp_load_opts *opts;
	const struct bpf_xdp_query_opts *q; /* what runs on the device now */
	__u32 ifindex;
	char link_path[PATH_MAX];
	struct xdp_link old;
	bool ours; /* old is silo's, live: a replace */
	struct silo_maps maps;
	bool created, applied;
	struct silo_envelope env;
	struct silo_genid genid; /* as it was, when not created */
	int override;
	int ct_optin;
	struct silo_xdp *skel;
	struct bpf_program *prog;
	struct silo_vlan_view vlan;
	bool had_tx;
	bool egress_was; /* the record's SILO_DEV_F_EGRESS before */
	bool no_xmit; /* an egress that sends no XDP frames now */
	char kind[16]; /* the device's: veth, ...; "" for a NIC */
	bool csum_made; /* its csum_stats entry, made by this load */
	__u32 tx_was;
	int link_fd;
};

/* What runs on the device already: silo's (a replace) or another's. */
static int load_check(struct xdp_load *l)
{
	const struct bpf_xdp_query_opts *q = l->q;
	const struct silo_xdp_load_opts *opts = l->opts;
	const char *ifname = l->ifname;

	l->ours = l->old.fd >= 0 && !l->old.defunct;
	if (l->ours && !opts->replace) {
		pr_err("silo is already loaded on %s (program %u): add --replace to swap in a new program in place (maps kept, no packet lost), or run 'silo xdp unload %s' first\n",
		       ifname, l->old.prog_id, ifname);
		return -EEXIST;
	}
	if (l->ours && (q->attach_mode == XDP_ATTACHED_SKB) !=
			       (opts->mode == SILO_XDP_SKB)) {
		pr_err("silo runs on %s in %s mode; a replace cannot change the mode: unload first\n",
		       ifname, attach_mode_name(q->attach_mode));
		return -EINVAL;
	}
	if (!l->ours && q->prog_id && !opts->force) {
		pr_err("%s runs XDP program %u (%s mode), which is not silo's: add --force to replace it\n",
		       ifname, q->prog_id, attach_mode_name(q->attach_mode));
		return -EBUSY;
	}
	return 0;
}

/* The shared maps, made or opened, with the envelope written to genid. */
static int load_maps(struct xdp_load *l)
{
	const struct silo_xdp_load_opts *opts = l->opts;
	struct silo_maps *maps = &l->maps;
	int err;

	/* Before anything is made: a refusal leaves nothing behind. */
	err = envelope_check(l->ifname, opts, &l->env, &l->override,
			     &l->ct_optin);
	if (err)
		return err;
	err = silo_maps_ensure(l->s, maps, opts->cache_size, opts->cache_kind,
			       &l->created);
	if (err)
		return err;
	if (!l->created && bpf_map_lookup_elem(maps->fd[SILO_MAP_GENID],
					       &(__u32){ 0 }, &l->genid))
		return -errno;
	/* Before the program sees a packet. */
	err = silo_envelope_apply(maps->fd[SILO_MAP_GENID], &l->env,
				  l->override, l->ct_optin);
	if (err) {
		pr_err("cannot write the envelope to genid: %s\n",
		       strerror(-err));
		return err;
	}
	l->applied = true;
	if (!l->created) {
		/* The device's program sees the addresses and rules of now. */
		err = silo_fill_local_addrs(maps->fd[SILO_MAP_LOCAL_ADDRS],
					    maps->fd[SILO_MAP_LOCAL_BITS]);
		if (!err)
			err = silo_sync_genid(maps->fd[SILO_MAP_GENID],
					      maps->fd[SILO_MAP_ROUTE_MTUS],
					      maps->fd[SILO_MAP_SRC_CHECKED],
					      maps->fd[SILO_MAP_DIRECT_SKIP],
					      SILO_SYNC_ALL);
	}
	return err;
}

/* silo's XDP object, set up for this device and loaded over the maps. */
static int load_prog(struct xdp_load *l)
{
	const struct silo_xdp_load_opts *opts = l->opts;
	struct silo_xdp *skel;
	struct bpf_program *prog;
	__u32 cache_size;
	int err;

	skel = l->skel = silo_xdp__open();
	if (!skel) {
		err = -errno;
		pr_err("cannot open silo's XDP object: %s\n", strerror(-err));
		return err;
	}
	skel->rodata->forward = opts->forward;
	skel->rodata->cache_enabled = !opts->no_cache;
	skel->rodata->steer = opts->mode == SILO_XDP_NATIVE;
	skel->rodata->csum_finish =
		silo_xdp_csum_kind(l->ifindex, opts->mode, l->kind);
	prog = l->prog = skel->progs.silo_xdp;
	/* Unreadable: nothing to bind for, nothing to warn of. */
	if (silo_vlan_view_get(l->ifname, l->ifindex, &l->vlan))
		memset(&l->vlan, 0, sizeof(l->vlan));
	if (opts->mode == SILO_XDP_NATIVE && !opts->unbound && l->vlan.meta) {
		/* Bound to the device, the program may ask its driver for a
		 * VLAN tag taken off before XDP (bpf/silo_xdp.bpf.c). Only
		 * where the driver tells (netdev netlink's XDP RX metadata,
		 * Linux 6.8 and later): elsewhere the kfunc would answer
		 * -EOPNOTSUPP for nothing, and a device that propagates its
		 * program (a bond) keeps the unbound one it always had. */
		bpf_program__set_autoload(prog, false);
		prog = l->prog = skel->progs.silo_xdp_dev;
		bpf_program__set_autoload(prog, true);
		bpf_program__set_ifindex(prog, l->ifindex);
		bpf_program__set_flags(prog, bpf_program__flags(prog) |
						     BPF_F_XDP_DEV_BOUND_ONLY);
	}
	if (!silo_maps_cache_size(&l->maps, &cache_size))
		skel->rodata->cache_size = cache_size;
	err = silo_maps_reuse(&l->maps, skel->obj);
	if (err)
		return err;
	err = silo_xdp__load(skel);
	if (err)
		pr_err("the kernel refused silo's XDP program (%s): 'silo -d' shows libbpf's log and the verifier's\n",
		       strerror(-err));
	return err;
}

/* The device record's EGRESS flag set or cleared: -errno on failure. */
static int device_egress(int devs, __u32 ifindex, bool on, bool *was,
			 struct silo_device *dev)
{
	if (bpf_map_lookup_elem(devs, &ifindex, dev))
		return -errno;
	if (was)
		*was = dev->flags & SILO_DEV_F_EGRESS;
	dev->flags &= ~SILO_DEV_F_EGRESS;
	if (on)
		dev->flags |= SILO_DEV_F_EGRESS;
	return bpf_map_update_elem(devs, &ifindex, dev, BPF_ANY) ? -errno : 0;
}

/*
 * The device's tx_ports entry, the old one (and the record's EGRESS) kept
 * in l for the undo: native only (a driver that runs XDP natively is the
 * one that may transmit it), and only while the device sends XDP frames at
 * all (silo_sync_tx_port).
 */
static int load_tx(struct xdp_load *l)
{
	int fd = l->maps.fd[SILO_MAP_TX_PORTS],
	    devs = l->maps.fd[SILO_MAP_DEVICES], err;
	bool egress = l->opts->forward && l->opts->mode == SILO_XDP_NATIVE;
	struct silo_device dev;

	l->had_tx = !bpf_map_lookup_elem(fd, &l->ifindex, &l->tx_was);
	err = device_egress(devs, l->ifindex, egress, &l->egress_was, &dev);
	if (!err)
		err = silo_sync_tx_port(devs, fd, l->ifindex);
	if (err) {
		pr_err("cannot update tx_ports: %s\n", strerror(-err));
		return err;
	}
	l->no_xmit = egress && !(dev.flags & SILO_DEV_F_XMIT);
	return 0;
}

/* The program onto the device: in place of silo's old one, or linked
 * (over another's with --force) and the link pinned. */
static int load_attach(struct xdp_load *l)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	const char *ifname = l->ifname;
	bool bound = l->prog == l->skel->progs.silo_xdp_dev;
	int err, prog_fd = bpf_program__fd(l->prog);

	if (l->ours) {
		/* Atomic: the old program runs until the new one does. */
		if (bpf_link_update(l->old.fd, prog_fd, NULL)) {
			err = -errno;
			pr_err("cannot replace silo's program on %s: %s\n",
			       ifname, strerror(-err));
			return err;
		}
		warn_hidden_tags(ifname, &l->vlan, bound, l->opts);
		silo_xdp_peer_cap(ifname, l->ifindex);
		return 0;
	}
	if (l->q->prog_id) {
		err = detach_foreign(ifname, l->ifindex, l->q);
		if (err)
			return err;
	}
	lopts.flags = mode_flags(l->opts->mode);
	l->link_fd = bpf_link_create(prog_fd, l->ifindex, BPF_XDP, &lopts);
	if (l->link_fd < 0)
		return silo_xdp_attach_error(ifname, l->ifindex,
					     l->opts->mode == SILO_XDP_NATIVE,
					     -errno);
	/* Over the link of a device that is gone, when there is one. */
	err = silo_link_pin(l->s, l->ifindex, l->link_fd, l->old.fd >= 0);
	if (err) {
		pr_err("cannot pin %s: %s\n", l->link_path, strerror(-err));
		return err;
	}
	warn_hidden_tags(ifname, &l->vlan, bound, l->opts);
	return 0;
}

/* The device's entries and the program on it; undone when it fails. */
static int load_device(struct xdp_load *l)
{
	struct silo_maps *maps = &l->maps;
	int err;

	/* Per-device entries first, so the program finds them at once. */
	err = silo_fill_device(maps->fd[SILO_MAP_DEVICES],
			       maps->fd[SILO_MAP_GENID], -1, l->ifindex);
	if (err)
		return err;
	err = silo_xdp_csum_make(maps->fd[SILO_MAP_CSUM_STATS], l->ifindex,
				 l->ifname, &l->csum_made);
	if (err)
		goto out_device;
	err = load_tx(l);
	if (err)
		goto out_csum;
	err = load_attach(l);
	if (err)
		goto out_tx;
	return 0;

out_tx:
	if (l->had_tx)
		bpf_map_update_elem(maps->fd[SILO_MAP_TX_PORTS], &l->ifindex,
				    &l->tx_was, BPF_ANY);
	else
		bpf_map_delete_elem(maps->fd[SILO_MAP_TX_PORTS], &l->ifindex);
	if (l->ours) /* the record stays: as it was an egress or not */
		device_egress(maps->fd[SILO_MAP_DEVICES], l->ifindex,
			      l->egress_was, NULL, &(struct silo_device){});
out_csum:
	if (l->csum_made)
		bpf_map_delete_elem(maps->fd[SILO_MAP_CSUM_STATS], &l->ifindex);
out_device:
	if (!l->ours)
		bpf_map_delete_elem(maps->fd[SILO_MAP_DEVICES], &l->ifindex);
	return err;
}

int silo_xdp_load(struct silo *s, const char *ifname,
		  const struct silo_xdp_load_opts *opts)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xdp_load l = { .s = s,
			      .ifname = ifname,
			      .opts = opts,
			      .q = &q,
			      .old = { .fd = -1 },
			      .override = -1,
			      .ct_optin = -1,
			      .link_fd = -1 };
	struct silo_maps *maps = &l.maps;
	int err;

	if (opts->cache_size > SILO_ROUTE_CACHE_MAX) {
		pr_err("a route cache of %u entries is too large: at most %u per node\n",
		       opts->cache_size, SILO_ROUTE_CACHE_MAX);
		return -E2BIG;
	}
	silo_maps_init(maps);
	silo_xdp_prune(s);
	l.ifindex = if_nametoindex(ifname);
	if (!l.ifindex) {
		pr_err("no device '%s' in this network namespace: see 'ip link show'\n",
		       ifname);
		return -ENODEV;
	}
	silo_link_pin_path(s, l.link_path, sizeof(l.link_path), l.ifindex);
	err = bpf_xdp_query(l.ifindex, 0, &q);
	if (err) {
		pr_err("cannot query XDP on %s: %s\n", ifname, strerror(-err));
		return err;
	}
	err = silo_xdp_link_open(s, l.ifindex, &l.old);
	if (err) {
		pr_err("cannot open %s: %s\n", l.link_path, strerror(-err));
		return err;
	}
	err = load_check(&l);
	if (!err)
		err = load_maps(&l);
	if (!err)
		err = load_prog(&l);
	if (!err)
		err = load_device(&l);
	if (!err)
		silo_xdp_csum_note(ifname, l.kind, opts->mode);
	if (!err && l.no_xmit)
		pr_info("note: %s sends no XDP frames now (a veth does while its peer runs an XDP program or has GRO on): traffic routed out of it goes to the stack until it does, which silod follows\n",
			ifname);

	/* A failed load does not change the operator's earlier decision. */
	if (err && l.applied && !l.created &&
	    ((l.override >= 0 && l.override != (int)l.genid.override) ||
	     (l.ct_optin >= 0 && l.ct_optin != l.genid.ct_optin)))
		silo_envelope_apply(maps->fd[SILO_MAP_GENID], &l.env,
				    l.genid.override, l.genid.ct_optin);
	if (err && l.created)
		silo_maps_release(s);
	if (l.link_fd >= 0)
		close(l.link_fd); /* the pin holds it, or closing detaches it */
	if (l.old.fd >= 0)
		close(l.old.fd);
	silo_maps_close(maps);
	silo_xdp__destroy(l.skel);
	return err;
}

int silo_xdp_vlan(struct silo *s, const char *ifname)
{
	struct silo_vlan_view vlan;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), ifindex;
	struct xdp_link l;
	int err, fd;

	if (!ifname)
		return -EINVAL;
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		return -ENODEV;
	err = silo_xdp_link_live(s, ifindex, &l);
	if (err)
		return err;
	fd = bpf_prog_get_fd_by_id(l.prog_id);
	if (fd < 0)
		return -errno;
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (err)
		return err;
	err = silo_vlan_view_get(ifname, ifindex, &vlan);
	if (err)
		return err;
	/* The program the loader binds to its device (silo_xdp_load). */
	return vlan_state(&vlan, !strcmp(info.name, "silo_xdp_dev"));
}
