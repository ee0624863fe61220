// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The devices of a plan: load where declared and missing, load again
 * (--replace: maps kept, no packet lost) where forward or cache differ,
 * unload what an earlier apply loaded and the file no longer declares.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "config.h"

static void load_str(char *buf, size_t len, const struct silo_xdp_load_opts *o)
{
	snprintf(buf, len, "%s%s%s%s%s",
		 o->mode == SILO_XDP_SKB ? "skb" : "native",
		 o->forward ? ", forward" : "",
		 o->allow_firewall_bypass ? ", firewall bypass" : "",
		 o->forward_established ? ", established connections" : "",
		 o->no_cache ? ", no cache" : "");
}

static const struct silo_xdp_dev *running(const struct silo_xdp_dev *devs,
					  size_t n, const char *ifname)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (devs[i].attached && !strcmp(devs[i].ifname, ifname))
			return &devs[i];
	return NULL;
}

/* What the maps hold here, read once a plan (zero where unreadable). */
static const struct cfg_maps_view *running_maps(struct plan *p)
{
	if (!p->maps_read) {
		p->maps_read = true;
		cfg_maps_view(p->s, &p->maps);
	}
	return &p->maps;
}

/* A change the maps cannot take while any device runs silo: said, failed,
 * the device still the file's. */
static void refused(struct plan *p, const struct cfg_device *d,
		    const char *ifname, const char *why)
{
	struct silo_change *c;

	c = plan_add(p, SILO_CHANGE_UPDATE, "device", d->line, "%s", ifname);
	snprintf(c->detail, sizeof(c->detail), "%s", why);
	plan_done(p, c, -EBUSY);
	cfg_owned_add(&p->now, CFG_DEVICE, ifname);
}

static void one_device(struct plan *p, const struct cfg_device *d,
		       const char *ifname, const struct silo_xdp_dev *r)
{
	struct silo_xdp_load_opts o = d->load;
	enum silo_change_op op = SILO_CHANGE_ADD;
	struct silo_change *c;
	char what[96], why[192];
	__u32 size;

	load_str(what, sizeof(what), &o);
	/* A declared cache-size is the caches' (load's --cache-size): one
	 * that differs from what runs is refused, as the load refuses it. */
	size = r && o.cache_size ? running_maps(p)->cache_size : 0;
	if (size && size != o.cache_size) {
		snprintf(
			why, sizeof(why),
			"cache-size %u: the route caches hold %u entries per node; unload silo from every device to change that",
			o.cache_size, size);
		refused(p, d, ifname, why);
		return;
	}
	if (r && r->mode == o.mode && r->forward == o.forward &&
	    r->cache == !o.no_cache &&
	    (!o.forward ||
	     (running_maps(p)->bypass == o.allow_firewall_bypass &&
	      p->maps.established == o.forward_established))) {
		if (!cfg_owned_has(&p->old, CFG_DEVICE, ifname)) {
			c = plan_add(p, SILO_CHANGE_ADOPT, "device", d->line,
				     "%s", ifname);
			snprintf(c->detail, sizeof(c->detail), "%s", what);
		}
		cfg_owned_add(&p->now, CFG_DEVICE, ifname);
		return;
	}
	if (r && r->mode != o.mode) {
		snprintf(
			why, sizeof(why),
			"%s: a mode is changed by 'silo xdp unload %s' and apply again",
			what, ifname);
		refused(p, d, ifname, why);
		return;
	}
	if (r) {
		op = SILO_CHANGE_UPDATE;
		o.replace = true;
	}
	c = plan_add(p, op, "device", d->line, "%s", ifname);
	snprintf(c->detail, sizeof(c->detail), "%s", what);
	if (!p->opts->dry_run)
		plan_done(p, c, silo_xdp_load(p->s, ifname, &o));
	/* A forwarding load sets the namespace's bypass: the next device
	 * compares with what this one made (or, dry, would make). */
	if (!c->err && o.forward) {
		running_maps(p);
		p->maps.bypass = o.allow_firewall_bypass;
		p->maps.established = o.forward_established;
	}
	/* A failed change leaves the device as it ran: still the file's if
	 * it was. */
	if (!c->err || (r && cfg_owned_has(&p->old, CFG_DEVICE, ifname)))
		cfg_owned_add(&p->now, CFG_DEVICE, ifname);
}

/* A declared device by name that is not there: silod loads it when it
 * comes. An earlier apply's stays its own. */
static void absent(struct plan *p, const struct cfg_device *d)
{
	struct silo_change *c;

	c = plan_add(p, SILO_CHANGE_WAIT, "device", d->line, "%s", d->name);
	snprintf(c->detail, sizeof(c->detail),
		 "no such device: silod loads it when it appears");
	if (cfg_owned_has(&p->old, CFG_DEVICE, d->name))
		cfg_owned_add(&p->now, CFG_DEVICE, d->name);
}

static void make_devices(struct plan *p, const struct silo_xdp_dev *devs,
			 size_t n)
{
	struct if_nameindex *links = if_nameindex(), *l;
	const struct cfg_device *d;
	size_t i;

	for (i = 0; i < p->ns->nr_devs; i++) {
		d = &p->ns->devs[i];
		if (d->name[0]) {
			if (if_nametoindex(d->name))
				one_device(p, d, d->name,
					   running(devs, n, d->name));
			else
				absent(p, d);
			continue;
		}
		for (l = links; l && l->if_index; l++)
			if (!fnmatch(d->match, l->if_name, 0) &&
			    !cfg_owned_has(&p->now, CFG_DEVICE, l->if_name))
				one_device(p, d, l->if_name,
					   running(devs, n, l->if_name));
	}
	if (links)
		if_freenameindex(links);
}

struct dev_list {
	const struct silo_xdp_dev *devs;
	size_t n;
};

/* An earlier apply's device that the file no longer declares: unloaded
 * when it is there and silo's. */
static int remove_device(struct plan *p, const char *name, bool undo, void *ctx)
{
	const struct dev_list *l = ctx;

	if (undo)
		return silo_xdp_unload(p->s, name);
	return running(l->devs, l->n, name) != NULL;
}

int plan_devices(struct plan *p, bool remove)
{
	struct silo_xdp_dev *devs = NULL;
	size_t n = 0;
	int err;

	err = silo_xdp_list(p->s, &devs, &n);
	if (err && err != -ENOENT)
		return err;
	if (remove)
		plan_remove_unclaimed(p, CFG_DEVICE, "device", "unload",
				      remove_device,
				      &(struct dev_list){ devs, n });
	else
		make_devices(p, devs, n);
	free(devs);
	return 0;
}
