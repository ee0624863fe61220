// SPDX-License-Identifier: GPL-2.0
/* silo reuseport { show | policy | detach }; attach is in
 * reuseport_attach.c, queue-map in reuseport_queue.c */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int reuseport_show(void *cfg, int argc, char **argv);
static int reuseport_policy(void *cfg, int argc, char **argv);
static int reuseport_detach(void *cfg, int argc, char **argv);

struct rshow_cfg {
	bool per_cpu;
};

static const struct opt show_opts[] = {
	OPTION_FLAG("per-cpu", rshow_cfg, per_cpu,
		    "a column per CPU (JSON always has them)"),
	OPTION_END,
};

static const struct cmd_spec show_spec = {
	.name = "show",
	.fn = reuseport_show,
	.aliases = (const char *const[]){ "list", NULL },
	.args = "[GROUP]",
	.max_args = 1,
	.opts = show_opts,
	.help = "groups, their slots (socket cookie, owning pid) and counters",
	.cfg_size = sizeof(struct rshow_cfg),
};

static const struct cmd_spec policy_spec = {
	.name = "policy",
	.fn = reuseport_policy,
	.args = "GROUP cpu|node|queue|hash",
	.min_args = 2,
	.max_args = 2,
	.help = "change a group's policy; takes effect with the next packet,\n"
		"and re-reads the CPU -> node map",
};

static const struct cmd_spec detach_spec = {
	.name = "detach",
	.fn = reuseport_detach,
	.args = "GROUP",
	.min_args = 1,
	.max_args = 1,
	.help = "remove a group: its sockets go back to the kernel's hash",
};

static const struct cmd_spec *const reuseport_specs[] = {
	&show_spec,   &reuseport_attach_spec,	 &policy_spec,
	&detach_spec, &reuseport_queue_map_spec, NULL,
};

static const char reuseport_notes[] =
	"A group is a SO_REUSEPORT group whose sockets silo puts in slots, one\n"
	"per CPU: a datagram or connection processed on CPU k goes to the socket\n"
	"in slot k. Policies: cpu (this CPU's slot, else a socket on its NUMA\n"
	"node, else the kernel's hash), node (a socket on this CPU's node, by\n"
	"the packet's hash, else the kernel's hash), queue (the slot of the CPU\n"
	"that serves the packet's RX queue, found by redoing the NIC's RSS hash\n"
	"with the group's queue-map, else as node), hash (the kernel's hash).\n"
	"Nothing is dropped: an empty slot or a closed socket falls back.\n";

struct show_ctx {
	const char *only;
	bool per_cpu;
	int nr_cpus;
	int shown;
	json_object *groups;
};

static __u64 stat_of(const struct silo_reuseport_stats *st, unsigned int idx)
{
	return ((const __u64 *)st)[idx];
}

static json_object *stats_json(const struct silo_reuseport_stats *st)
{
	json_object *o = json_object_new_object();
	unsigned int i;

	for (i = 0; i < SILO_RSTAT_MAX; i++)
		json_object_object_add(o, silo_reuseport_stat_name(i),
				       json_object_new_uint64(stat_of(st, i)));
	return o;
}

static json_object *slot_json(__u32 slot, const struct silo_group_slot *sl)
{
	json_object *o = json_object_new_object();
	bool same = sl->cookie && sl->placed.cookie == sl->cookie;

	json_object_object_add(o, "slot", json_object_new_int64(slot));
	json_object_object_add(o, "node", json_object_new_int64(sl->node));
	json_object_object_add(o, "cookie",
			       sl->cookie ? json_object_new_uint64(sl->cookie) :
					    NULL);
	json_object_object_add(
		o, "pid", same ? json_object_new_int64(sl->placed.pid) : NULL);
	json_object_object_add(o, "tid",
			       same && sl->placed.tid ?
				       json_object_new_int64(sl->placed.tid) :
				       NULL);
	json_object_object_add(
		o, "fd", same ? json_object_new_int(sl->placed.fd) : NULL);
	/* What was placed there and has closed since. */
	if (!sl->cookie && sl->placed.cookie) {
		json_object_object_add(
			o, "closed_cookie",
			json_object_new_uint64(sl->placed.cookie));
		json_object_object_add(o, "closed_pid",
				       json_object_new_int64(sl->placed.pid));
	}
	return o;
}

static const char *proto_name(__u8 protocol)
{
	return protocol == IPPROTO_TCP ? "tcp" : "udp";
}

static json_object *group_json(const struct silo_group_info *info,
			       const struct silo_group_slot *slots,
			       const struct silo_reuseport_stats *per_cpu,
			       const struct silo_reuseport_stats *total,
			       int nr_cpus)
{
	json_object *o = json_object_new_object(), *arr;
	char buf[96];
	__u32 i;

	json_object_object_add(o, "name",
			       json_object_new_string(info->group.name));
	json_object_object_add(o, "id", json_object_new_int64(info->group.id));
	silo_reuseport_key_str(&info->key, buf, sizeof(buf));
	json_object_object_add(o, "sockets", json_object_new_string(buf));
	json_object_object_add(
		o, "protocol",
		json_object_new_string(proto_name(info->key.protocol)));
	json_object_object_add(
		o, "family",
		json_object_new_int(info->key.family == SILO_AF_INET6 ? 6 : 4));
	fmt_addr(buf, sizeof(buf), info->key.family, info->key.addr);
	json_object_object_add(o, "address", json_object_new_string(buf));
	json_object_object_add(o, "port", json_object_new_int(info->key.port));
	json_object_object_add(o, "device_ifindex",
			       json_object_new_int64(info->key.bound_dev_if));
	json_object_object_add(
		o, "policy",
		json_object_new_string(
			silo_reuseport_policy_name(info->group.policy)));
	json_object_object_add(
		o, "attached",
		json_object_new_boolean(info->group.flags &
					SILO_REUSEPORT_F_ATTACHED));
	json_object_object_add(
		o, "migrate",
		json_object_new_boolean(info->group.flags &
					SILO_REUSEPORT_F_MIGRATE));
	arr = json_object_new_array();
	for (i = 0; i < info->group.nr_slots; i++)
		json_object_array_add(arr, slot_json(i, &slots[i]));
	json_object_object_add(o, "slots", arr);
	json_object_object_add(o, "stats", stats_json(total));
	arr = json_object_new_array();
	for (i = 0; i < (__u32)nr_cpus; i++)
		json_object_array_add(arr, stats_json(&per_cpu[i]));
	json_object_object_add(o, "stats_per_cpu", arr);
	return o;
}

static void print_slot(__u32 slot, const struct silo_group_slot *sl)
{
	printf("  %-5u %-5u ", slot, sl->node);
	if (sl->cookie && sl->placed.cookie == sl->cookie) {
		printf("%-10llu %-8u", (unsigned long long)sl->cookie,
		       sl->placed.pid);
		if (sl->placed.tid)
			printf(" %-8u", sl->placed.tid);
		else
			printf(" %-8s", "-");
		printf(" %d\n", sl->placed.fd);
	} else if (sl->cookie) {
		printf("%-10llu (placed by another tool)\n",
		       (unsigned long long)sl->cookie);
	} else if (sl->placed.cookie) {
		printf("empty: the socket placed here (cookie %llu, pid %u) closed\n",
		       (unsigned long long)sl->placed.cookie, sl->placed.pid);
	} else {
		printf("empty\n");
	}
}

static void print_group(const struct show_ctx *c,
			const struct silo_group_info *info,
			const struct silo_group_slot *slots,
			const struct silo_reuseport_stats *per_cpu,
			const struct silo_reuseport_stats *total)
{
	char key[96];
	unsigned int i;
	__u32 slot;
	int cpu;

	silo_reuseport_key_str(&info->key, key, sizeof(key));
	printf("%sgroup %s  %s  policy %s  id %u%s%s\n", c->shown ? "\n" : "",
	       info->group.name, key,
	       silo_reuseport_policy_name(info->group.policy), info->group.id,
	       info->group.flags & SILO_REUSEPORT_F_ATTACHED ? "  attached" :
							       "  not attached",
	       info->group.flags & SILO_REUSEPORT_F_MIGRATE ? "  migrate" : "");
	printf("  %-5s %-5s %-10s %-8s %-8s %s\n", "SLOT", "NODE", "COOKIE",
	       "PID", "TID", "FD");
	for (slot = 0; slot < info->group.nr_slots; slot++)
		print_slot(slot, &slots[slot]);
	printf("  counters%s:\n", c->per_cpu ? " (total, then per CPU)" : "");
	for (i = 0; i < SILO_RSTAT_MAX; i++) {
		printf("    %-17s %12llu", silo_reuseport_stat_name(i),
		       (unsigned long long)stat_of(total, i));
		if (c->per_cpu)
			for (cpu = 0; cpu < c->nr_cpus; cpu++)
				printf(" %10llu", (unsigned long long)stat_of(
							  &per_cpu[cpu], i));
		printf("  %s\n", silo_reuseport_stat_desc(i));
	}
}

static int show_group(struct silo_group *g, void *ctx)
{
	struct silo_reuseport_stats *per_cpu = NULL, total = {};
	struct show_ctx *c = ctx;
	struct silo_group_slot *slots = NULL;
	struct silo_group_info info;
	unsigned int i;
	int cpu, err;

	err = silo_group_info(g, &info);
	if (err)
		return err;
	if (c->only && strcmp(c->only, info.group.name))
		return 0;
	slots = calloc(info.group.nr_slots, sizeof(*slots));
	per_cpu = calloc(c->nr_cpus, sizeof(*per_cpu));
	if (!slots || !per_cpu) {
		err = -ENOMEM;
		goto out;
	}
	err = silo_group_slots(g, slots);
	if (!err)
		err = silo_group_stats(g, per_cpu);
	if (err)
		goto out;
	for (cpu = 0; cpu < c->nr_cpus; cpu++)
		for (i = 0; i < SILO_RSTAT_MAX; i++)
			((__u64 *)&total)[i] += stat_of(&per_cpu[cpu], i);
	if (cli.json)
		json_object_array_add(
			c->groups,
			group_json(&info, slots, per_cpu, &total, c->nr_cpus));
	else
		print_group(c, &info, slots, per_cpu, &total);
	c->shown++;
out:
	free(slots);
	free(per_cpu);
	return err;
}

static int reuseport_show(void *parsed, int argc, char **argv)
{
	struct rshow_cfg *cfg = parsed;
	struct show_ctx c = {};
	struct silo *s;
	int err;

	c.per_cpu = cfg->per_cpu;
	c.only = argc > 0 ? argv[0] : NULL;
	s = open_silo();
	if (!s)
		return 1;
	c.nr_cpus = silo_nr_cpus();
	if (c.nr_cpus <= 0)
		return 1;
	c.groups = json_object_new_array();
	err = silo_group_foreach(s, show_group, &c);
	if (err) {
		fprintf(stderr,
			"%s: error: cannot read the reuseport groups: %s\n",
			prog_name, strerror(-err));
		json_object_put(c.groups);
		return 1;
	}
	if (c.only && !c.shown) {
		fprintf(stderr,
			"%s: error: no reuseport group '%s': see '%s reuseport show'\n",
			prog_name, c.only, prog_name);
		json_object_put(c.groups);
		return 1;
	}
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "pin_dir",
				       json_object_new_string(silo_pin_dir(s)));
		json_object_object_add(o, "groups", c.groups);
		json_print(o);
		return 0;
	}
	json_object_put(c.groups);
	if (!c.shown)
		printf("no reuseport groups in this network namespace (pins: %s)\n",
		       silo_pin_dir(s));
	return 0;
}

static struct silo_group *open_group(const char *name)
{
	struct silo_group *g;
	struct silo *s;

	s = open_silo();
	if (!s || silo_group_open(s, name, &g))
		return NULL;
	return g;
}

static int policy_op(struct silo_group *g, const char *policy)
{
	return silo_group_set_policy(g, silo_reuseport_policy_parse(policy));
}

static int detach_op(struct silo_group *g, const char *unused)
{
	(void)unused;
	return silo_group_detach(g, -1);
}

/* policy and detach: open GROUP, do op with the argument after it (or
 * NULL), and say what was done: "group G: what ARG", or "group G what". */
static int on_group(int argc, char **argv,
		    int (*op)(struct silo_group *g, const char *arg),
		    const char *what)
{
	const char *name, *arg;
	struct silo_group *g;
	int err;

	name = argv[0];
	arg = argc > 1 ? argv[1] : NULL;
	if (arg && silo_reuseport_policy_parse(arg) < 0)
		return usage_error(
			"bad policy '%s': cpu, node, queue or hash\n", arg);
	if (!silo_group_name_valid(name))
		return usage_error(
			"bad group name '%s': 1 to %d letters, digits, '_', '-' or ':'\n",
			name, SILO_REUSEPORT_NAME_MAX - 1);
	g = open_group(name);
	if (!g)
		return 1;
	err = op(g, arg);
	silo_group_close(g);
	if (err)
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "group",
				       json_object_new_string(name));
		json_object_object_add(o, what,
				       arg ? json_object_new_string(arg) :
					     json_object_new_boolean(1));
		json_print(o);
	} else if (arg) {
		printf("group %s: %s %s\n", name, what, arg);
	} else {
		printf("group %s %s\n", name, what);
	}
	return 0;
}

static int reuseport_policy(void *unused __maybe_unused, int argc, char **argv)
{
	return on_group(argc, argv, policy_op, "policy");
}

static int reuseport_detach(void *unused __maybe_unused, int argc, char **argv)
{
	return on_group(argc, argv, detach_op, "detached");
}

/* Services that follow a group steer to its slots' CPUs now. */
static void reuseport_done(void)
{
	if (cli.silo)
		silo_service_sync(cli.silo);
}

const struct cmd_object reuseport_object = {
	.name = "reuseport",
	.summary = "SO_REUSEPORT groups: socket[CPU] selection",
	.cmds = reuseport_specs,
	.notes = reuseport_notes,
	.done = reuseport_done,
};
