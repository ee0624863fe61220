// SPDX-License-Identifier: GPL-2.0
/* silo reuseport { show | attach | policy | detach } */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cli.h"

static int reuseport_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: %s reuseport show [GROUP] [--per-cpu]\n"
	       "       %s reuseport attach --pid PID --port PORT [--proto udp|tcp]\n"
	       "                           [--policy cpu|node|hash] [--no-migrate]\n"
	       "                           [--name NAME]\n"
	       "       %s reuseport policy GROUP cpu|node|hash\n"
	       "       %s reuseport detach GROUP\n"
	       "\n"
	       "A group is a SO_REUSEPORT group whose sockets silo puts in slots, one\n"
	       "per CPU: a datagram or connection processed on CPU k goes to the socket\n"
	       "in slot k. Policies: cpu (this CPU's slot, else a socket on its NUMA\n"
	       "node, else the kernel's hash), node (a socket on this CPU's node, by\n"
	       "the packet's hash, else the kernel's hash), hash (the kernel's hash).\n"
	       "Nothing is dropped: an empty slot or a closed socket falls back.\n"
	       "\n"
	       "show    groups, their slots (socket cookie, owning pid) and counters\n"
	       "  --per-cpu          a column per CPU (JSON always has them)\n"
	       "attach  take the SO_REUSEPORT sockets on PORT of process PID and its\n"
	       "        children (pidfd_getfd), put each in the slot of the CPU its\n"
	       "        reader is pinned to (the thread blocked on it, else its\n"
	       "        process, else its SO_INCOMING_CPU) and attach; one group per\n"
	       "        protocol, family and address\n"
	       "  --proto udp|tcp    only these sockets (default both)\n"
	       "  --policy POLICY    default cpu\n"
	       "  --no-migrate       TCP: requests queued on a listener that closes\n"
	       "                     are reset, not moved to a live listener\n"
	       "  --name NAME        the group's name (default e.g. udp4_9000)\n"
	       "policy  change a group's policy; takes effect with the next packet,\n"
	       "        and re-reads the CPU -> node map\n"
	       "detach  remove a group: its sockets go back to the kernel's hash\n"
	       "\n"
	       "Options of every command: -j/--json, -p/--pretty, -h/--help\n",
	       prog_name, prog_name, prog_name, prog_name);
	return 0;
}

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

static int reuseport_show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "per-cpu", no_argument, NULL, 'c' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct show_ctx c = {};
	struct silo *s;
	int opt, err;

	optind = 0;
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS, opts, NULL)) !=
	       -1) {
		if (opt == 'c')
			c.per_cpu = true;
		else if (opt == 'h')
			return reuseport_help(0, NULL);
		else if (!common_opt(opt))
			return usage_error("see '%s reuseport help'\n",
					   prog_name);
	}
	if (argc - optind > 1)
		return usage_error(
			"usage: %s reuseport show [GROUP] [--per-cpu]\n",
			prog_name);
	c.only = argc - optind == 1 ? argv[optind] : NULL;
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

static json_object *placement_json(const struct silo_placement *p)
{
	json_object *o = json_object_new_object();
	char buf[96];

	silo_reuseport_key_str(&p->key, buf, sizeof(buf));
	json_object_object_add(o, "socket",
			       json_object_new_string(p->key.port ? buf : ""));
	json_object_object_add(o, "cookie", json_object_new_uint64(p->cookie));
	json_object_object_add(o, "pid", json_object_new_int64(p->pid));
	json_object_object_add(o, "tid",
			       p->tid ? json_object_new_int64(p->tid) : NULL);
	json_object_object_add(o, "fd", json_object_new_int(p->fd));
	json_object_object_add(
		o, "slot", p->slot >= 0 ? json_object_new_int(p->slot) : NULL);
	json_object_object_add(
		o, "placed_by",
		json_object_new_string(silo_placed_by_name(p->by)));
	json_object_object_add(o, "group",
			       p->group[0] ? json_object_new_string(p->group) :
					     NULL);
	if (p->why[0])
		json_object_object_add(o, "why",
				       json_object_new_string(p->why));
	return o;
}

static void print_placement(const struct silo_placement *p)
{
	char buf[96];

	silo_reuseport_key_str(&p->key, buf, sizeof(buf));
	printf("  %s fd %d of pid %u", p->key.port ? buf : "socket", p->fd,
	       p->pid);
	if (p->tid)
		printf(" (thread %u)", p->tid);
	if (p->slot >= 0 && p->group[0])
		printf(": slot %d by %s, group %s\n", p->slot,
		       silo_placed_by_name(p->by), p->group);
	else if (p->slot >= 0)
		printf(": would be slot %d by %s\n", p->slot,
		       silo_placed_by_name(p->by));
	else
		printf(": not placed: %s\n", p->why);
}

static int reuseport_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'P' },
		{ "port", required_argument, NULL, 'o' },
		{ "proto", required_argument, NULL, 't' },
		{ "policy", required_argument, NULL, 'y' },
		{ "no-migrate", no_argument, NULL, 'M' },
		{ "name", required_argument, NULL, 'N' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct silo_attach_pid_opts ao = {};
	struct silo_placement *placed = NULL;
	__u32 pid = 0, port = 0;
	size_t n = 0, i;
	struct silo *s;
	int opt, ret;

	optind = 0;
	while ((opt = getopt_long(argc, argv, COMMON_SHORTOPTS, opts, NULL)) !=
	       -1) {
		switch (opt) {
		case 'P':
			if (parse_u32(optarg, &pid) || !pid || pid > INT32_MAX)
				return usage_error(
					"bad --pid '%s': a process id\n",
					optarg);
			break;
		case 'o':
			if (parse_u32(optarg, &port) || !port || port > 65535)
				return usage_error(
					"bad --port '%s': 1 to 65535\n",
					optarg);
			break;
		case 't':
			if (!strcmp(optarg, "udp"))
				ao.protocol = IPPROTO_UDP;
			else if (!strcmp(optarg, "tcp"))
				ao.protocol = IPPROTO_TCP;
			else
				return usage_error(
					"bad --proto '%s': udp or tcp\n",
					optarg);
			break;
		case 'y':
			ret = silo_reuseport_policy_parse(optarg);
			if (ret < 0)
				return usage_error(
					"bad --policy '%s': cpu, node or hash\n",
					optarg);
			ao.policy = ret;
			break;
		case 'M':
			ao.no_migrate = true;
			break;
		case 'N':
			ao.name = optarg;
			break;
		case 'h':
			return reuseport_help(0, NULL);
		default:
			if (common_opt(opt))
				break;
			return usage_error("see '%s reuseport help'\n",
					   prog_name);
		}
	}
	if (optind != argc || !pid || !port)
		return usage_error(
			"usage: %s reuseport attach --pid PID --port PORT [--proto udp|tcp] [--policy cpu|node|hash]\n",
			prog_name);
	ao.port = port;
	s = open_silo();
	if (!s)
		return 1;
	ret = silo_group_attach_pid(s, pid, &ao, &placed, &n);
	if (cli.json) {
		json_object *o = json_object_new_object(), *arr;

		json_object_object_add(o, "pid", json_object_new_int64(pid));
		json_object_object_add(o, "port", json_object_new_int(port));
		json_object_object_add(o, "groups_attached",
				       json_object_new_int(ret > 0 ? ret : 0));
		arr = json_object_new_array();
		for (i = 0; i < n; i++)
			json_object_array_add(arr, placement_json(&placed[i]));
		json_object_object_add(o, "sockets", arr);
		if (ret < 0)
			json_object_object_add(
				o, "error",
				json_object_new_string(strerror(-ret)));
		json_print(o);
	} else if (n) {
		printf("pid %u: %zu socket%s on port %u\n", pid, n,
		       n == 1 ? "" : "s", port);
		for (i = 0; i < n; i++)
			print_placement(&placed[i]);
		if (ret > 0)
			printf("attached %d group%s: see '%s reuseport show'\n",
			       ret, ret == 1 ? "" : "s", prog_name);
	}
	free(placed);
	return ret > 0 ? 0 : 1;
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
static int on_group(int argc, char **argv, int nargs, const char *usage,
		    int (*op)(struct silo_group *g, const char *arg),
		    const char *what)
{
	const char *name, *arg;
	struct silo_group *g;
	int err;

	err = parse_plain(argc, argv, nargs, usage);
	if (err)
		return err < 0 ? reuseport_help(0, NULL) : err;
	name = argv[optind];
	arg = nargs > 1 ? argv[optind + 1] : NULL;
	if (arg && silo_reuseport_policy_parse(arg) < 0)
		return usage_error("bad policy '%s': cpu, node or hash\n", arg);
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

static int reuseport_policy(int argc, char **argv)
{
	return on_group(argc, argv, 2, "reuseport policy GROUP cpu|node|hash",
			policy_op, "policy");
}

static int reuseport_detach(int argc, char **argv)
{
	return on_group(argc, argv, 1, "reuseport detach GROUP", detach_op,
			"detached");
}

int do_reuseport(int argc, char **argv)
{
	static const struct cmd cmds[] = {
		{ "show", reuseport_show },	{ "list", reuseport_show },
		{ "attach", reuseport_attach }, { "policy", reuseport_policy },
		{ "detach", reuseport_detach }, { NULL, NULL },
	};

	int ret = cmd_select(cmds, argc - 1, argv + 1, reuseport_help);

	/* Services that follow a group steer to its slots' CPUs now. */
	if (!ret && cli.silo)
		silo_service_sync(cli.silo);
	return ret;
}
