// SPDX-License-Identifier: GPL-2.0
/* silo service { add | del | show | sync } (queue-map: service_queue.c) */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "netns_sysfs.h"

static int service_add(void *cfg, int argc, char **argv);
static int service_del(void *cfg, int argc, char **argv);
static int service_show(void *cfg, int argc, char **argv);
static int service_sync(void *cfg, int argc, char **argv);
/* What the commands parse: add and del the service's key, add the rest. */
struct service_cfg {
	struct silo_service_opts o;
	int protocol;
	__u32 port;
	const char *addr, *cpus;
	int mode;
	__u32 qsize;
	bool replace;
	bool per_cpu; /* show */
};

static const struct opt_choice protos[] = {
	{ "udp", IPPROTO_UDP },
	{ "tcp", IPPROTO_TCP },
	{ NULL },
};

static const struct opt_choice modes[] = {
	{ "flow", SILO_SERVICE_FLOW },
	{ "queue", SILO_SERVICE_QUEUE },
	{ "node", SILO_SERVICE_NODE },
	{ NULL },
};

static int parse_group(void *cfg, const char *arg)
{
	struct service_cfg *c = cfg;

	c->o.group = arg;
	return silo_group_name_valid(arg) ? 0 : -EINVAL;
}

/* The service's key, for add and del. */
#define KEY_OPTIONS                                           \
	{ .name = "proto",                                    \
	  .type = OPT_CHOICE,                                 \
	  .off = offsetof(struct service_cfg, protocol),      \
	  .arg = "udp|tcp",                                   \
	  .choices = protos,                                  \
	  .help = "its protocol",                             \
	  .required = true },                                 \
		{ .name = "port",                             \
		  .type = OPT_U32,                            \
		  .off = offsetof(struct service_cfg, port),  \
		  .arg = "PORT",                              \
		  .min = 1,                                   \
		  .max = 65535,                               \
		  .help = "its local port",                   \
		  .required = true },                         \
		OPTION_STR("addr", service_cfg, addr, "ADDR", \
			   "one local address (default: any, IPv4 and IPv6)")

static const struct opt add_opts[] = {
	KEY_OPTIONS,
	OPTION_FN("group", parse_group, "NAME",
		  "1 to 31 letters, digits, '_', '-' or ':'",
		  "the CPUs are the occupied slots of reuseport\n"
		  "group NAME, kept current as sockets come and go\n"
		  "(by silod, and by 'service sync')"),
	OPTION_STR("cpus", service_cfg, cpus, "LIST", "the CPUs, e.g. 0-3,8"),
	OPTION_CHOICE("mode", service_cfg, mode, "flow|queue|node", modes,
		      "flow (default): a hash of the addresses and\n"
		      "ports picks one of 256 slots, each a CPU; a CPU\n"
		      "that joins or leaves moves only its share.\n"
		      "queue: the CPU set for the packet's RX queue with\n"
		      "'queue-map' (a NIC's unset queues get their IRQs'\n"
		      "affinity when the service is added). node: flow,\n"
		      "over the service's CPUs on the NUMA node of the\n"
		      "receiving CPU"),
	OPTION_U32(
		"queue-size", service_cfg, qsize, "N", 1, 16384,
		"frames the cpumap queues per target CPU (default\n" SILO_STR(
			SILO_CPUMAP_QSIZE_DEFAULT) "; more absorbs bursts, costs memory)"),
	OPTION_FLAG("replace", service_cfg, replace,
		    "change an existing service; its slots move\n"
		    "only as far as its new CPU set needs"),
	OPTION_END,
};

static const struct opt del_opts[] = {
	KEY_OPTIONS,
	OPTION_END,
};

static const struct opt show_opts[] = {
	OPTION_FLAG("per-cpu", service_cfg, per_cpu,
		    "the counters of each CPU too (JSON always)"),
	OPTION_END,
};

static const struct cmd_spec add_spec = {
	.name = "add",
	.fn = service_add,
	.opts = add_opts,
	.help = "steer a service's packets; give --group NAME or --cpus LIST",
	.cfg_size = sizeof(struct service_cfg),
	.cfg_init = &(const struct service_cfg){ .mode = SILO_SERVICE_FLOW },
};

static const struct cmd_spec del_spec = {
	.name = "del",
	.fn = service_del,
	.opts = del_opts,
	.help = "stop steering a service",
	.cfg_size = sizeof(struct service_cfg),
};

static const struct cmd_spec show_spec = {
	.name = "show",
	.fn = service_show,
	.aliases = (const char *const[]){ "list", NULL },
	.opts = show_opts,
	.help = "services, their CPUs, slots per CPU and counters",
	.cfg_size = sizeof(struct service_cfg),
};

static const struct cmd_spec sync_spec = {
	.name = "sync",
	.fn = service_sync,
	.help = "re-read the CPU sets of services that follow a group",
};

static const struct cmd_spec *const service_specs[] = {
	&add_spec, &del_spec, &show_spec, &sync_spec, &service_queue_map_spec,
	NULL,
};

static const char service_notes[] =
	"A service is a local protocol, port and address (or any) whose packets\n"
	"silo's XDP program processes on a CPU of the service's set: it\n"
	"redirects each through a cpumap to that CPU, where the stack (and the\n"
	"reuseport program, which picks the socket of that CPU) runs, or passes\n"
	"it at once when it is there already. What the stack delivers does not\n"
	"change, only where it runs. Fragments, ICMP and anything not fully\n"
	"parsed go to the stack where they arrive. Needs silo loaded in native\n"
	"mode on the receiving devices ('silo xdp load DEV').\n";

/* "0-3,8" into a CPU bitmap. */
static int parse_cpus(const char *s, __u64 *cpus)
{
	return silo_cpulist_parse(s, cpus);
}

/* The key of add and del, from what was parsed. */
static int key_check(struct service_cfg *c, const char *cmd)
{
	int family;

	c->o.protocol = c->protocol;
	c->o.port = c->port;
	if (!c->protocol || !c->port)
		return usage_error(
			"service %s needs --proto and --port: see '%s service %s --help'\n",
			cmd, prog_name, cmd);
	if (c->addr) {
		if (parse_addr(c->addr, &family, c->o.addr))
			return usage_error(
				"bad --addr '%s': an IPv4 or IPv6 address\n",
				c->addr);
		c->o.family = family;
	}
	return 0;
}

/* Whether RPS is on for dev's RX queue 0 (its mask into mask), read in
 * sys (the namespace's sysfs; "" for /sys). */
static bool rps_on(const char *sys, const char *dev, char *mask, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/class/net/%s/queues/rx-0/rps_cpus",
		 sys[0] ? sys : "/sys", dev);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(mask, len, f))
		mask[0] = '\0';
	fclose(f);
	mask[strcspn(mask, "\n")] = '\0';
	return sysfs_mask_any(mask);
}

/*
 * A cpumap hands the stack what silo steers as packets of its device's RX
 * queue 0, so RPS on that queue moves every one of them again, to RPS's
 * CPUs: steering cannot hold. Refused (1) while a device silo steers on
 * has it; the fix in the message.
 */
static int rps_undoes_steering(struct silo *s)
{
	struct silo_xdp_dev *devs;
	char sys[64] = "", mask[256];
	size_t n, i;
	int bad = 0;

	if (silo_xdp_list(s, &devs, &n))
		return 0;
	if (cli.netns)
		netns_sysfs_mount(sys, sizeof(sys));
	for (i = 0; i < n && !bad; i++) {
		if (!devs[i].attached || devs[i].mode != SILO_XDP_NATIVE ||
		    !rps_on(sys, devs[i].ifname, mask, sizeof(mask)))
			continue;
		bad = 1;
		cli_error(
			"RPS on %s's RX queue 0 (rps_cpus %s) would move every packet silo steers again, to those CPUs: the cpumap hands them to the stack as packets of queue 0. Turn it off first: echo 0 > /sys/class/net/%s/queues/rx-0/rps_cpus\n",
			devs[i].ifname, mask, devs[i].ifname);
	}
	netns_sysfs_umount(sys);
	free(devs);
	return bad;
}

static int service_add(void *parsed, int argc __maybe_unused,
		       char **argv __maybe_unused)
{
	struct service_cfg *c = parsed;
	struct silo *s;
	int err;

	err = key_check(c, "add");
	if (err)
		return err;
	if (!!c->o.group == !!c->cpus)
		return usage_error(
			"service add needs --group NAME or --cpus LIST, one of them\n");
	if (c->cpus && parse_cpus(c->cpus, c->o.cpus))
		return usage_error(
			"bad --cpus '%s': a list such as 0-3,8 (CPUs below %d)\n",
			c->cpus, SILO_MAX_CPUS);
	c->o.mode = c->mode;
	c->o.qsize = c->qsize;
	c->o.replace = c->replace;
	s = open_silo();
	if (!s || rps_undoes_steering(s))
		return 1;
	err = silo_service_add(s, &c->o);
	if (err)
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "added", json_object_new_boolean(1));
		json_print(o);
	}
	return 0;
}

static int service_del(void *parsed, int argc __maybe_unused,
		       char **argv __maybe_unused)
{
	struct service_cfg *c = parsed;
	struct silo *s;
	int err;

	err = key_check(c, "del");
	if (err)
		return err;
	s = open_silo();
	if (!s)
		return 1;
	if (silo_service_del(s, &c->o))
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "deleted",
				       json_object_new_boolean(1));
		json_print(o);
	}
	return 0;
}

struct show_ctx {
	struct silo *s;
	bool per_cpu;
	int nr_cpus;
	int shown;
	__u32 last_id; /* the service just shown: IPv4 and IPv6 of one */
	json_object *arr;
};

static const char *proto_name(__u8 proto)
{
	return proto == IPPROTO_UDP ? "udp" :
	       proto == IPPROTO_TCP ? "tcp" :
				      "?";
}

static void key_str(const struct silo_service_key *k, char *buf, size_t len)
{
	static const __u8 zero[16];
	char addr[INET6_ADDRSTRLEN];

	if (!memcmp(k->addr, zero, 16))
		snprintf(addr, sizeof(addr), "%s",
			 k->family == SILO_AF_INET ? "0.0.0.0" : "::");
	else
		fmt_addr(addr, sizeof(addr), k->family, k->addr);
	snprintf(buf, len, "%s%d %s%s%s:%u", proto_name(k->protocol),
		 k->family == SILO_AF_INET ? 4 : 6,
		 k->family == SILO_AF_INET6 ? "[" : "", addr,
		 k->family == SILO_AF_INET6 ? "]" : "", ntohs(k->port));
}

static json_object *stats_json(const struct silo_service_stats *st)
{
	json_object *o = json_object_new_object();
	unsigned int i;

	for (i = 0; i < SILO_SSTAT_MAX; i++)
		json_object_object_add(
			o, silo_service_stat_name(i),
			json_object_new_int64(((const __u64 *)st)[i]));
	return o;
}

/* Counters of id, total and per CPU; NULL when they cannot be read. */
static struct silo_service_stats *read_stats(struct show_ctx *c, __u32 id,
					     struct silo_service_stats *total)
{
	struct silo_service_stats *pc = calloc(c->nr_cpus, sizeof(*pc));
	unsigned int i;
	int cpu;

	memset(total, 0, sizeof(*total));
	if (!pc || silo_service_stats(c->s, id, pc)) {
		free(pc);
		return NULL;
	}
	for (cpu = 0; cpu < c->nr_cpus; cpu++)
		for (i = 0; i < SILO_SSTAT_MAX; i++)
			((__u64 *)total)[i] += ((__u64 *)&pc[cpu])[i];
	return pc;
}

static void print_stats(struct show_ctx *c,
			const struct silo_service_stats *total,
			const struct silo_service_stats *pc)
{
	unsigned int i;
	int cpu;

	for (i = 0; i < SILO_SSTAT_MAX; i++) {
		__u64 v = ((const __u64 *)total)[i];

		if (!v && !c->per_cpu)
			continue;
		printf("    %-16s %12llu", silo_service_stat_name(i),
		       (unsigned long long)v);
		if (c->per_cpu && pc)
			for (cpu = 0; cpu < c->nr_cpus; cpu++)
				printf(" %10llu",
				       (unsigned long long)((
					       const __u64 *)&pc[cpu])[i]);
		printf("\n");
	}
}

/* What show_one shows of one service, in JSON or as text. */
struct service_view {
	const struct silo_service *svc;
	const char *ks, *cpus;
	const unsigned int *slots_of; /* slots per CPU */
	const struct silo_service_stats *total, *pc; /* pc: NULL or per CPU */
};

static void service_json(struct show_ctx *c, const struct service_view *v)
{
	const struct silo_service *svc = v->svc;
	const struct silo_service_stats *pc = v->pc;
	const unsigned int *slots_of = v->slots_of;
	const char *ks = v->ks, *cpus = v->cpus;
	json_object *o = json_object_new_object(), *arr, *sl;
	int cpu;

	json_object_object_add(o, "id", json_object_new_int(svc->id));
	json_object_object_add(o, "service", json_object_new_string(ks));
	json_object_object_add(
		o, "mode",
		json_object_new_string(silo_service_mode_name(svc->mode)));
	json_object_object_add(o, "cpus", json_object_new_string(cpus));
	json_object_object_add(o, "group",
			       (svc->flags & SILO_SERVICE_F_GROUP) ?
				       json_object_new_string(svc->group) :
				       NULL);
	json_object_object_add(o, "queue_size",
			       json_object_new_int(svc->qsize));
	sl = json_object_new_object();
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		char n[16];

		if (!slots_of[cpu])
			continue;
		snprintf(n, sizeof(n), "%d", cpu);
		json_object_object_add(sl, n,
				       json_object_new_int(slots_of[cpu]));
	}
	json_object_object_add(o, "slots_per_cpu", sl);
	json_object_object_add(o, "stats", stats_json(v->total));
	arr = json_object_new_array();
	for (cpu = 0; pc && cpu < c->nr_cpus; cpu++)
		json_object_array_add(arr, stats_json(&pc[cpu]));
	json_object_object_add(o, "stats_per_cpu", arr);
	json_object_array_add(c->arr, o);
}

static void service_print(struct show_ctx *c, const struct service_view *v)
{
	const struct silo_service *svc = v->svc;
	const unsigned int *slots_of = v->slots_of;
	int cpu;

	printf("service %u: %s mode %s cpus %s", svc->id, v->ks,
	       silo_service_mode_name(svc->mode), v->cpus);
	if (svc->flags & SILO_SERVICE_F_GROUP)
		printf(" (group %s)", svc->group);
	printf(" queue-size %u\n", svc->qsize);
	if (svc->mode != SILO_SERVICE_QUEUE && svc->nr_cpus) {
		printf("  slots:");
		for (cpu = 0; cpu < c->nr_cpus; cpu++)
			if (slots_of[cpu])
				printf(" cpu%d %u", cpu, slots_of[cpu]);
		printf("\n");
	}
	if (c->per_cpu) {
		printf("    %-16s %12s", "", "total");
		for (cpu = 0; cpu < c->nr_cpus; cpu++)
			printf(" %9s%d", "cpu", cpu);
		printf("\n");
	}
	print_stats(c, v->total, v->pc);
}

static int show_one(const struct silo_service_key *key,
		    const struct silo_service *svc, void *ctx)
{
	struct show_ctx *c = ctx;
	struct silo_service_stats total, *pc;
	char ks[96], cpus[256];
	struct service_view v;
	unsigned int *slots_of;
	int i;

	key_str(key, ks, sizeof(ks));
	if (!cli.json && c->shown && svc->id == c->last_id) {
		printf("  and %s (the same service)\n", ks);
		return 0;
	}
	c->last_id = svc->id;
	fmt_cpus(cpus, sizeof(cpus), svc->cpus);
	slots_of = calloc(c->nr_cpus, sizeof(*slots_of));
	if (!slots_of)
		return -ENOMEM;
	for (i = 0; i < SILO_SERVICE_SLOTS; i++)
		if (svc->slots[i] < c->nr_cpus)
			slots_of[svc->slots[i]]++;
	pc = read_stats(c, svc->id, &total);
	c->shown++;
	v = (struct service_view){ svc, ks, cpus, slots_of, &total, pc };
	if (cli.json)
		service_json(c, &v);
	else
		service_print(c, &v);
	free(pc);
	free(slots_of);
	return 0;
}

static int service_show(void *parsed, int argc __maybe_unused,
			char **argv __maybe_unused)
{
	struct service_cfg *cfg = parsed;
	struct show_ctx c = { .nr_cpus = silo_nr_cpus() };
	struct silo_service_stats total, *pc;
	int err;

	c.per_cpu = cfg->per_cpu;
	c.s = open_silo();
	if (!c.s || c.nr_cpus <= 0)
		return 1;
	c.arr = json_object_new_array();
	err = silo_service_foreach(c.s, show_one, &c);
	if (err) {
		json_object_put(c.arr);
		return 1;
	}
	pc = read_stats(&c, 0, &total);
	if (cli.json) {
		json_object *o = json_object_new_object(), *arr;
		int cpu;

		json_object_object_add(o, "services", c.arr);
		json_object_object_add(o, "unattributed", stats_json(&total));
		arr = json_object_new_array();
		for (cpu = 0; pc && cpu < c.nr_cpus; cpu++)
			json_object_array_add(arr, stats_json(&pc[cpu]));
		json_object_object_add(o, "unattributed_per_cpu", arr);
		json_print(o);
	} else {
		json_object_put(c.arr);
		if (!c.shown)
			printf("no services: see '%s service add --help'\n",
			       prog_name);
		if (total.fragment || total.not_l4 || total.not_understood) {
			printf("local packets of no service (passed):\n");
			print_stats(&c, &total, pc);
		}
	}
	free(pc);
	return 0;
}

static int service_sync(void *parsed __maybe_unused, int argc __maybe_unused,
			char **argv __maybe_unused)
{
	struct silo *s;
	int err;

	s = open_silo();
	if (!s)
		return 1;
	err = silo_service_sync(s);
	if (err < 0)
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "changed", json_object_new_int(err));
		json_print(o);
	} else {
		printf("%d service%s changed\n", err, err == 1 ? "" : "s");
	}
	return 0;
}

const struct cmd_object service_object = {
	.name = "service",
	.summary = "steer a local service's packets to its CPUs in XDP",
	.cmds = service_specs,
	.notes = service_notes,
};
