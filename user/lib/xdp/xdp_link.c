// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* silo's XDP links: a device's pinned link, opened and checked, and what
 * runs where with which knobs (silo xdp status); the pins of links that
 * attach to nothing any more go; unload detaches a device's link. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "xdp.h"
#include "silo_xdp.skel.h"

int silo_xdp_link_open(struct silo *s, __u32 ifindex, struct xdp_link *l)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int err;

	l->fd = -1;
	silo_link_pin_path(s, path, sizeof(path), ifindex);
	l->fd = silo_link_pin_get(s, ifindex);
	if (l->fd < 0)
		return l->fd == -ENOENT ? 0 : l->fd;
	if (bpf_obj_get_info_by_fd(l->fd, &info, &len)) {
		err = -errno;
		goto err_close;
	}
	if (info.type != BPF_LINK_TYPE_XDP) {
		pr_err("%s is not an XDP link: remove it\n", path);
		err = -EINVAL;
		goto err_close;
	}
	l->prog_id = info.prog_id;
	l->link_id = info.id;
	l->defunct = info.xdp.ifindex != ifindex;
	return 0;

err_close:
	close(l->fd);
	l->fd = -1;
	return err;
}

int silo_xdp_link_live(struct silo *s, __u32 ifindex, struct xdp_link *l)
{
	int err = silo_xdp_link_open(s, ifindex, l);

	if (err)
		return err;
	if (l->fd < 0)
		return -ENOENT;
	close(l->fd);
	l->fd = -1;
	return l->defunct ? -ENOENT : 0;
}

/* Forgets a device: its link pin and its entries in the shared maps. */
void silo_xdp_forget_device(struct silo *s, __u32 ifindex)
{
	struct silo_maps maps;

	silo_link_unpin(s, ifindex);
	if (!silo_maps_open(s, &maps)) {
		bpf_map_delete_elem(maps.fd[SILO_MAP_DEVICES], &ifindex);
		bpf_map_delete_elem(maps.fd[SILO_MAP_TX_PORTS], &ifindex);
		bpf_map_delete_elem(maps.fd[SILO_MAP_CSUM_STATS], &ifindex);
		silo_maps_close(&maps);
	}
}

/*
 * A link pin is left over when its link attaches to nothing any more: the
 * kernel detached it because the device was deleted (or moved to another
 * namespace), or someone ran 'bpftool link detach'. Its link info then says
 * ifindex 0.
 */
static int prune_link(struct silo *s, __u32 ifindex, void *ctx)
{
	struct xdp_link l;

	if (silo_xdp_link_open(s, ifindex, &l) || l.fd < 0)
		return 0;
	close(l.fd);
	if (!l.defunct)
		return 0;
	silo_xdp_forget_device(s, ifindex);
	pr_info("removed the pins of ifindex %u: its device is gone or its link detached\n",
		ifindex);
	++*(int *)ctx;
	return 0;
}

int silo_xdp_prune(struct silo *s)
{
	int n = 0, err;

	err = silo_for_each_link_pin(s, prune_link, &n);
	if (err)
		return err;
	/* Like an unload of the last device; silod keeps the maps while it
	 * runs and releases them when it exits. */
	if (n && silo_daemon_pid(s) != getpid())
		silo_maps_release(s);
	return n;
}

int silo_xdp_prog_rodata(__u32 prog_id, struct silo_xdp__rodata *ro)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), map_ids[32], i, zero = 0;
	int prog_fd, fd, err = -ENOENT;

	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0)
		return -errno;
	info.nr_map_ids = ARRAY_SIZE(map_ids);
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	for (i = 0; i < info.nr_map_ids && i < ARRAY_SIZE(map_ids); i++) {
		struct bpf_map_info mi = {};
		__u32 mlen = sizeof(mi);

		fd = bpf_map_get_fd_by_id(map_ids[i]);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mlen) &&
		    strstr(mi.name, ".rodata") &&
		    mi.value_size == sizeof(*ro) &&
		    !bpf_map_lookup_elem(fd, &zero, ro))
			err = 0;
		close(fd);
		if (!err)
			break;
	}
out:
	close(prog_fd);
	return err;
}

struct dev_list {
	struct silo_xdp_dev *devs;
	size_t n;
};

static int list_link(struct silo *s, __u32 ifindex, void *ctx)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct dev_list *list = ctx;
	struct silo_xdp__rodata ro;
	struct silo_xdp_dev *d;
	struct xdp_link l;
	void *p;
	int err;

	err = silo_xdp_link_open(s, ifindex, &l);
	if (err || l.fd < 0)
		return err;
	close(l.fd);
	p = realloc(list->devs, (list->n + 1) * sizeof(*list->devs));
	if (!p)
		return -ENOMEM;
	list->devs = p;
	d = &list->devs[list->n++];
	memset(d, 0, sizeof(*d));
	d->ifindex = ifindex;
	d->link_id = l.link_id;
	d->prog_id = l.prog_id;
	d->attached = !l.defunct;
	if (d->attached && !if_indextoname(ifindex, d->ifname))
		d->ifname[0] = '\0';
	if (d->attached && !bpf_xdp_query(ifindex, 0, &q))
		d->mode = q.attach_mode == XDP_ATTACHED_SKB ? SILO_XDP_SKB :
							      SILO_XDP_NATIVE;
	if (!silo_xdp_prog_rodata(l.prog_id, &ro)) {
		d->forward = ro.forward;
		d->cache = ro.cache_enabled;
	}
	return 0;
}

int silo_xdp_list(struct silo *s, struct silo_xdp_dev **devs, size_t *n)
{
	struct dev_list list = {};
	int err;

	silo_xdp_prune(s); /* what is gone is not listed, nor kept */
	err = silo_for_each_link_pin(s, list_link, &list);
	if (err) {
		free(list.devs);
		return err;
	}
	*devs = list.devs;
	*n = list.n;
	return 0;
}

/* A device by name, else by ifindex (a number no device is named). */
static __u32 unload_ifindex(const char *ifname, bool *by_index)
{
	unsigned long v;
	char *end;

	*by_index = false;
	if (if_nametoindex(ifname))
		return if_nametoindex(ifname);
	errno = 0;
	v = strtoul(ifname, &end, 10);
	if (errno || end == ifname || *end || !v || v > UINT32_MAX ||
	    ifname[0] == '-' || ifname[0] == '+')
		return 0;
	*by_index = true;
	return v;
}

int silo_xdp_unload(struct silo *s, const char *ifname)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct xdp_link l;
	bool by_index;
	__u32 ifindex;
	int err;

	ifindex = unload_ifindex(ifname, &by_index);
	if (!ifindex) {
		pr_err("no device '%s' in this network namespace: see 'ip link show', or 'silo xdp status' for the ifindex of a device that is gone\n",
		       ifname);
		return -ENODEV;
	}
	err = silo_xdp_link_open(s, ifindex, &l);
	if (err)
		return err;
	if (l.fd >= 0 && l.defunct) {
		/* Left over: its device is gone, or the link was detached. */
		close(l.fd);
		silo_xdp_forget_device(s, ifindex);
		silo_xdp_prune(s);
		silo_maps_release(s);
		return 0;
	}
	if (l.fd < 0) {
		if (by_index)
			pr_err("silo is not loaded on ifindex %s: see 'silo xdp status'\n",
			       ifname);
		else if (!bpf_xdp_query(ifindex, 0, &q) && q.prog_id)
			pr_err("silo is not loaded on %s; its XDP program %u is not silo's\n",
			       ifname, q.prog_id);
		else
			pr_err("silo is not loaded on %s\n", ifname);
		return -ENOENT;
	}
	/* Detach even if another process holds the link open. */
	if (bpf_link_detach(l.fd) && errno != EINVAL) {
		err = -errno;
		pr_err("cannot detach silo from %s: %s\n", ifname,
		       strerror(-err));
		close(l.fd);
		return err;
	}
	close(l.fd);
	silo_xdp_forget_device(s, ifindex);
	silo_xdp_prune(s);
	silo_maps_release(s);
	return 0;
}
