// SPDX-License-Identifier: GPL-2.0
/* silo xdp { load | unload | status } */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int xdp_load(void *cfg, int argc, char **argv);
static int xdp_unload(void *cfg, int argc, char **argv);
static int xdp_status(void *cfg, int argc, char **argv);

static const struct opt_choice modes[] = {
	{ "native", SILO_XDP_NATIVE },
	{ "skb", SILO_XDP_SKB },
	{ "drv", SILO_XDP_NATIVE },
	{ "generic", SILO_XDP_SKB },
	{ NULL },
};

struct load_cfg {
	int mode;
	bool forward, replace, force, no_cache, bypass, established;
	__u32 cache_size;
};

static const struct opt load_opts[] = {
	OPTION_CHOICE("mode", load_cfg, mode, "native|skb", modes,
		      "driver (default) or generic XDP"),
	OPTION_FLAG("forward", load_cfg, forward,
		    "forward from the route cache (native mode\n"
		    "devices are also egress targets)"),
	OPTION_FLAG("replace", load_cfg, replace,
		    "silo already runs on DEV: swap in the new\n"
		    "program atomically, maps kept, no packet lost"),
	OPTION_FLAG("force", load_cfg, force,
		    "replace an XDP program that is not silo's"),
	OPTION_FLAG("no-cache", load_cfg, no_cache,
		    "bpf_fib_lookup on every packet (a baseline)"),
	OPTION_U32(
		"cache-size", load_cfg, cache_size, "N", 1,
		SILO_ROUTE_CACHE_MAX,
		"route cache entries per NUMA node, when the\n"
		"caches are created (default " SILO_STR(SILO_ROUTE_CACHE_DEFAULT) ", at most\n" SILO_STR(
			SILO_ROUTE_CACHE_MAX) ")"),
	OPTION_FLAG("allow-firewall-bypass", load_cfg, bypass,
		    "with --forward: forward even though nftables\n"
		    "chains, iptables-legacy tables or tc (filters,\n"
		    "shaping qdiscs) see forwarded traffic, now or\n"
		    "later. XDP then SKIPS NETFILTER AND TC for\n"
		    "forwarded packets: their rules (drop, NAT,\n"
		    "logging, shaping) do not apply. A security\n"
		    "decision; each forwarding load restates it"),
	OPTION_FLAG("forward-established", load_cfg, established,
		    "with --forward, where a stateful nftables\n"
		    "ruleset accepts established connections\n"
		    "first: XDP forwards their packets, asking\n"
		    "conntrack per packet, and makes their TCP\n"
		    "window tracking liberal (as nftables'\n"
		    "flowtable does). The namespace's; each\n"
		    "forwarding load restates it"),
	OPTION_END,
};

static const struct cmd_spec load_spec = {
	.name = "load",
	.fn = xdp_load,
	.args = "DEV",
	.min_args = 1,
	.max_args = 1,
	.opts = load_opts,
	.help = "attach silo's XDP program to DEV through a pinned link, so it\n"
		"stays after this command exits. Local traffic goes to the\n"
		"stack; with --forward, traffic for other hosts is forwarded\n"
		"from the route cache (bpf_fib_lookup on a miss), where\n"
		"that equals what the kernel does (the offload envelope):\n"
		"a family that an nftables or iptables chain on the forward\n"
		"path, a tc filter or shaping qdisc, an xfrm policy, IPv6\n"
		"forwarding off or a multipath hash on inner headers would\n"
		"treat otherwise goes to the stack instead. A forwarding\n"
		"load is refused while such a condition holds (IPv6\n"
		"forwarding off aside). Forwarding runs only while silod\n"
		"does (it keeps the route cache and the envelope current):\n"
		"without it, every packet goes to the stack.",
	.cfg_size = sizeof(struct load_cfg),
	.cfg_init = &(const struct load_cfg){ .mode = SILO_XDP_NATIVE },
};

static const struct cmd_spec unload_spec = {
	.name = "unload",
	.fn = xdp_unload,
	.args = "DEV|IFINDEX",
	.min_args = 1,
	.max_args = 1,
	.help = "detach silo from DEV; with the last device, remove its pins.\n"
		"A number no device is named is an ifindex: that of a\n"
		"device that is gone, as 'status' showed it",
};

struct status_cfg {
	const char *state_dir;
};

static const struct opt status_opts[] = {
	OPTION_STR("state-dir", status_cfg, state_dir, "DIR",
		   "where silo.conf's applies keep what they did\n"
		   "(default " SILO_STATE_DIR_DEFAULT ")"),
	{ NULL },
};

static const struct cmd_spec status_spec = {
	.name = "status",
	.fn = xdp_status,
	.aliases = (const char *const[]){ "show", "list", NULL },
	.opts = status_opts,
	.cfg_size = sizeof(struct status_cfg),
	.help = "devices silo runs on, the state it keeps, the offload\n"
		"envelope per family (evaluated now, and as the data path\n"
		"sees it), and what silo.conf declares that the last applies\n"
		"could not make (a device or process not there yet, a failure)",
};

static const struct cmd_spec *const xdp_specs[] = {
	&load_spec,
	&unload_spec,
	&status_spec,
	NULL,
};

static const char xdp_notes[] =
	"load, unload and status remove the pins of devices that are gone\n"
	"(deleted while silo ran on them), as silod does when it sees them go.\n";

/* How to start silod for the namespace this command serves. */
static void silod_hint(FILE *f)
{
	if (cli.netns)
		fprintf(f, "silod --netns %s (or: systemctl start silod@%s)",
			cli.netns, cli.netns);
	else
		fprintf(f, "silod (or: systemctl start silod)");
}

static int xdp_load(void *parsed, int argc __maybe_unused, char **argv)
{
	struct load_cfg *cfg = parsed;
	struct silo_xdp_load_opts lo = {};
	struct silo_daemon_info di;
	struct silo *s;
	const char *dev;

	if (cfg->bypass && !cfg->forward)
		return usage_error(
			"--allow-firewall-bypass is about forwarded traffic: add --forward\n");
	if (cfg->established && !cfg->forward)
		return usage_error(
			"--forward-established is about forwarded traffic: add --forward\n");
	lo.mode = cfg->mode;
	lo.forward = cfg->forward;
	lo.replace = cfg->replace;
	lo.force = cfg->force;
	lo.no_cache = cfg->no_cache;
	lo.cache_size = cfg->cache_size;
	lo.allow_firewall_bypass = cfg->bypass;
	lo.forward_established = cfg->established;
	dev = argv[0];
	s = open_silo();
	if (!s)
		return 1;
	if (silo_xdp_load(s, dev, &lo))
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		json_object_object_add(o, "loaded", json_object_new_boolean(1));
		json_object_object_add(
			o, "firewall_bypass",
			json_object_new_boolean(lo.allow_firewall_bypass));
		json_object_object_add(
			o, "forward_established",
			json_object_new_boolean(lo.forward_established));
		json_object_object_add(o, "pin_dir",
				       json_object_new_string(silo_pin_dir(s)));
		json_print(o);
	} else {
		printf("silo loaded on %s (%s mode%s%s), pins in %s\n", dev,
		       lo.mode == SILO_XDP_SKB ? "skb" : "native",
		       lo.forward ? ", forwarding" : "",
		       lo.no_cache ? ", no cache" : "", silo_pin_dir(s));
	}
	if (lo.forward &&
	    (silo_daemon_info(s, &di) || !di.running || !di.cache_trusted)) {
		fprintf(stderr,
			"%s: note: forwarding starts when silod runs for this namespace: ",
			prog_name);
		silod_hint(stderr);
		fprintf(stderr, "\n");
	}
	return 0;
}

static int xdp_unload(void *parsed __maybe_unused, int argc __maybe_unused,
		      char **argv)
{
	struct silo *s;

	s = open_silo();
	if (!s || silo_xdp_unload(s, argv[0]))
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "device",
				       json_object_new_string(argv[0]));
		json_object_object_add(o, "loaded", json_object_new_boolean(0));
		json_print(o);
	} else {
		printf("silo unloaded from %s\n", argv[0]);
	}
	return 0;
}

static json_object *pressure_json(const struct silo_cache_pressure *p)
{
	json_object *arr = json_object_new_array();
	__u32 n;

	for (n = 0; n < p->nr_nodes; n++) {
		const struct silo_cache_node *c = &p->node[n];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "node", json_object_new_int64(n));
		json_object_object_add(o, "entries",
				       json_object_new_int64(c->entries));
		json_object_object_add(o, "capacity",
				       json_object_new_int64(c->capacity));
		json_object_object_add(o, "inserts",
				       json_object_new_uint64(c->inserts));
		json_object_object_add(o, "evictions",
				       json_object_new_uint64(c->evictions));
		json_object_object_add(
			o, "insert_failures",
			json_object_new_uint64(c->insert_failures));
		json_object_object_add(o, "refused",
				       json_object_new_uint64(c->refused));
		json_object_array_add(arr, o);
	}
	return arr;
}

static void pressure_print(const struct silo_cache_pressure *p)
{
	__u32 n;

	for (n = 0; n < p->nr_nodes; n++) {
		const struct silo_cache_node *c = &p->node[n];

		printf("route cache node %u: %u/%u entries, inserts %llu, evictions %llu, insert failures %llu, refused %llu\n",
		       n, c->entries, c->capacity,
		       (unsigned long long)c->inserts,
		       (unsigned long long)c->evictions,
		       (unsigned long long)c->insert_failures,
		       (unsigned long long)c->refused);
	}
}

/* What xdp status shows, read before any of it is printed. */
struct status {
	struct silo *s;
	struct silo_xdp_dev *devs;
	size_t n;
	struct silo_envelope_info env;
	struct silo_conntrack_info ct;
	struct silo_daemon_info di;
	struct silo_cache_pressure *cp; /* NULL: not shown */
	struct silo_info info;
	bool loaded, daemon, live;
	bool stale; /* pins of another layout, or of a namespace that is gone */
	struct silo_change *pending; /* of silo.conf, not made yet or failed */
	size_t nr_pending;
};

/* What silo.conf declares and the last applies (silod's, or silo apply's
 * with the default state directory) could not make. */
static void pending_print(const struct status *st)
{
	const struct silo_change *c;
	size_t i;

	if (st->nr_pending)
		printf("silo.conf: %zu not applied:\n", st->nr_pending);
	for (i = 0; i < st->nr_pending; i++) {
		c = &st->pending[i];
		printf("  %s %s %s: %s%s%s (line %d)\n",
		       silo_change_op_name(c->op), c->object, c->name,
		       c->detail, c->err ? ": " : "",
		       c->err ? strerror(-c->err) : "", c->line);
	}
}

static json_object *pending_json(const struct status *st)
{
	json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < st->nr_pending; i++)
		json_object_array_add(arr, fmt_change_json(&st->pending[i]));
	return arr;
}

static int status_read(struct silo *s, struct status *st)
{
	int err;

	st->s = s;
	err = silo_xdp_list(s, &st->devs, &st->n);
	if (err) {
		fprintf(stderr, "%s: error: cannot list devices: %s\n",
			prog_name, strerror(-err));
		return err;
	}
	err = silo_info(s, &st->info);
	st->loaded = !err;
	st->stale = err == -ESTALE;
	st->cp = calloc(1, sizeof(*st->cp));
	/* Map pressure: nothing shown when it cannot be read. */
	if (st->cp && (!st->loaded || silo_cache_pressure(s, st->cp))) {
		free(st->cp);
		st->cp = NULL;
	}
	err = silo_envelope_info(s, &st->env);
	if (!err)
		err = silo_conntrack_info(s, &st->ct);
	if (err) {
		fprintf(stderr, "%s: error: cannot read the envelope: %s\n",
			prog_name, strerror(-err));
		return err;
	}
	st->daemon = st->env.loaded && !silo_daemon_info(s, &st->di) &&
		     st->di.running;
	/* The data path forwards only while silod's heartbeat is fresh. */
	st->live = st->daemon && st->di.cache_trusted;
	return 0;
}

static json_object *dev_json(struct silo *s, const struct silo_xdp_dev *dev)
{
	json_object *d = json_object_new_object();

	json_object_object_add(d, "device",
			       json_object_new_string(dev->ifname));
	json_object_object_add(d, "ifindex",
			       json_object_new_int64(dev->ifindex));
	json_object_object_add(d, "attached",
			       json_object_new_boolean(dev->attached));
	json_object_object_add(
		d, "mode",
		json_object_new_string(dev->mode == SILO_XDP_SKB ? "skb" :
								   "native"));
	json_object_object_add(d, "prog_id",
			       json_object_new_int64(dev->prog_id));
	json_object_object_add(d, "link_id",
			       json_object_new_int64(dev->link_id));
	json_object_object_add(d, "forward",
			       json_object_new_boolean(dev->forward));
	json_object_object_add(d, "cache", json_object_new_boolean(dev->cache));
	/* Checksums left to offload by senders on this host (null: not
	 * readable, or the device is gone). */
	json_object_object_add(d, "offload_csum", fmt_xdp_csum_json(s, dev));
	return d;
}

static void status_json(const struct status *st)
{
	const struct silo_info *info = &st->info;
	json_object *o = json_object_new_object();
	json_object *arr = json_object_new_array(), *rk;
	size_t i;

	json_object_object_add(o, "pin_dir",
			       json_object_new_string(silo_pin_dir(st->s)));
	json_object_object_add(o, "loaded",
			       json_object_new_boolean(st->loaded));
	json_object_object_add(o, "stale_pins",
			       json_object_new_boolean(st->stale));
	if (st->loaded) {
		json_object_object_add(
			o, "layout", json_object_new_int(info->layout_version));
		json_object_object_add(o, "genid",
				       json_object_new_uint64(info->genid));
		json_object_object_add(o, "nodes",
				       json_object_new_int(info->nr_nodes));
		json_object_object_add(o, "cache_size",
				       json_object_new_int64(info->cache_size));
		json_object_object_add(o, "local_addrs",
				       json_object_new_int(info->local_addrs));
		rk = json_object_new_object();
		route_key_json(rk, info->genid_flags);
		json_object_object_add(o, "route_key", rk);
	}
	if (st->cp)
		json_object_object_add(o, "route_cache", pressure_json(st->cp));
	for (i = 0; i < st->n; i++)
		json_object_array_add(arr, dev_json(st->s, &st->devs[i]));
	json_object_object_add(o, "devices", arr);
	json_object_object_add(o, "silod", json_object_new_boolean(st->daemon));
	json_object_object_add(o, "forwarding_live",
			       json_object_new_boolean(st->live));
	json_object_object_add(o, "envelope",
			       fmt_envelope_json(&st->env, &st->ct));
	json_object_object_add(o, "apply_pending", pending_json(st));
	json_print(o);
}

static void devs_print(struct silo *s, const struct silo_xdp_dev *devs,
		       size_t n)
{
	char csum[48];
	size_t i;

	printf("%-16s %-8s %-7s %-8s %-8s %-8s %-6s %s\n", "DEVICE", "IFINDEX",
	       "MODE", "PROG", "LINK", "FORWARD", "CACHE", "OFFLOAD-CSUM");
	for (i = 0; i < n; i++) {
		if (!devs[i].attached) {
			printf("%-16s %-8u (device gone: link %u left over)\n",
			       "-", devs[i].ifindex, devs[i].link_id);
			continue;
		}
		fmt_xdp_csum(s, &devs[i], csum, sizeof(csum));
		printf("%-16s %-8u %-7s %-8u %-8u %-8s %-6s %s\n",
		       devs[i].ifname, devs[i].ifindex,
		       devs[i].mode == SILO_XDP_SKB ? "skb" : "native",
		       devs[i].prog_id, devs[i].link_id,
		       devs[i].forward ? "yes" : "no",
		       devs[i].cache ? "on" : "off", csum);
	}
}

static void status_print(const struct status *st)
{
	const struct silo_info *info = &st->info;
	char key[256];

	/* Said, or the status would read as silo not loaded at all. */
	if (st->stale)
		printf("pins in %s are of another silo version or a namespace that is gone: load silo again to replace them\n",
		       silo_pin_dir(st->s));
	if (!st->loaded && !st->n && !st->stale) {
		printf("silo is not loaded in this network namespace (pins: %s)\n",
		       silo_pin_dir(st->s));
		fmt_envelope_print(&st->env, &st->ct, false, false);
		return;
	}
	if (st->loaded) {
		printf("pins %s  layout %u  genid %llu  nodes %u  cache %u/node  local addresses %u\n",
		       silo_pin_dir(st->s), info->layout_version,
		       (unsigned long long)info->genid, info->nr_nodes,
		       info->cache_size, info->local_addrs);
		route_key_str(key, sizeof(key), info->genid_flags);
		printf("route cache key: %s\n", key);
	}
	if (st->cp)
		pressure_print(st->cp);
	devs_print(st->s, st->devs, st->n);
	if (st->live) {
		printf("silod: running (pid %u): forwarding and the route cache are live\n",
		       st->di.state.pid);
	} else {
		printf("silod: %s: forwarding stands aside (every packet to the stack) until it runs: ",
		       st->daemon ? "heartbeat stale" : "not running");
		silod_hint(stdout);
		printf("\n");
	}
	fmt_envelope_print(&st->env, &st->ct, st->daemon, st->live);
}

static int xdp_status(void *parsed, int argc __maybe_unused,
		      char **argv __maybe_unused)
{
	struct status_cfg *c = parsed;
	struct status st = {};
	struct silo *s;
	int err;

	s = open_silo();
	if (!s)
		return 1;
	err = status_read(s, &st);
	if (!err)
		silo_apply_pending(c->state_dir, cli.netns, &st.pending,
				   &st.nr_pending);
	if (!err && cli.json) {
		status_json(&st);
	} else if (!err) {
		status_print(&st);
		pending_print(&st);
	}
	free(st.pending);
	free(st.cp);
	free(st.devs);
	return err ? 1 : 0;
}

const struct cmd_object xdp_object = {
	.name = "xdp",
	.summary = "load, unload and show silo's XDP program on devices",
	.cmds = xdp_specs,
	.notes = xdp_notes,
};
