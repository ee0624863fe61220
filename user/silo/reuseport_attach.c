// SPDX-License-Identifier: GPL-2.0
/* silo reuseport attach: a process's SO_REUSEPORT sockets into groups. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int reuseport_attach(void *cfg, int argc, char **argv);

#define MAX_PIDS 64

struct attach_cfg {
	int pids[MAX_PIDS];
	size_t nr_pids;
	__u32 port;
	int protocol;
	int policy;
	bool no_migrate;
	const char *name;
};

static int parse_pid(void *cfg, const char *arg)
{
	struct attach_cfg *c = cfg;
	__u32 pid;

	if (parse_u32(arg, &pid) || !pid || pid > INT32_MAX ||
	    c->nr_pids == MAX_PIDS)
		return -EINVAL;
	c->pids[c->nr_pids++] = pid;
	return 0;
}

static int parse_policy(void *cfg, const char *arg)
{
	struct attach_cfg *c = cfg;

	c->policy = silo_reuseport_policy_parse(arg);
	return c->policy < 0 ? -EINVAL : 0;
}

static int parse_name(void *cfg, const char *arg)
{
	struct attach_cfg *c = cfg;

	c->name = arg;
	return silo_group_name_valid(arg) ? 0 : -EINVAL;
}

static const struct opt_choice protos[] = {
	{ "udp", IPPROTO_UDP },
	{ "tcp", IPPROTO_TCP },
	{ NULL },
};

static const struct opt attach_opts[] = {
	{ .name = "pid",
	  .type = OPT_FN,
	  .parse = parse_pid,
	  .arg = "PID",
	  .expect = "a process id (at most " SILO_STR(MAX_PIDS) " of them)",
	  .help = "a process (with its children); more than one\n"
		  "--pid attaches them all, or none",
	  .required = true,
	  .many = true },
	{ .name = "port",
	  .type = OPT_U32,
	  .off = offsetof(struct attach_cfg, port),
	  .arg = "PORT",
	  .min = 1,
	  .max = 65535,
	  .help = "the port the sockets are bound to",
	  .required = true },
	OPTION_CHOICE("proto", attach_cfg, protocol, "udp|tcp", protos,
		      "only these sockets (default both)"),
	OPTION_FN("policy", parse_policy, "cpu|node|queue|hash",
		  "cpu, node, queue or hash", "default cpu"),
	OPTION_FLAG("no-migrate", attach_cfg, no_migrate,
		    "TCP: requests queued on a listener that closes\n"
		    "are reset, not moved to a live listener"),
	OPTION_FN("name", parse_name, "NAME",
		  "1 to 31 letters, digits, '_', '-' or ':'",
		  "the group's name (default e.g. udp4_9000)"),
	OPTION_END,
};

const struct cmd_spec reuseport_attach_spec = {
	.name = "attach",
	.fn = reuseport_attach,
	.opts = attach_opts,
	.help = "take the SO_REUSEPORT sockets on PORT of process PID and its\n"
		"children (pidfd_getfd), put each in the slot of the CPU its\n"
		"reader is pinned to (the thread blocked on it, else its\n"
		"process, else its SO_INCOMING_CPU) and attach; one group per\n"
		"protocol, family and address. A group that exists already\n"
		"gets the new sockets in their free slots (its name, policy\n"
		"and other sockets stay; one in it already is not added\n"
		"twice): servers started one by one are attached one by one.\n"
		"A socket whose slot is taken fails the whole attach",
	.cfg_size = sizeof(struct attach_cfg),
	.cfg_init = &(const struct attach_cfg){ .policy = SILO_REUSEPORT_CPU },
};

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
	if (p->slot >= 0 && p->group[0] && p->why[0])
		printf(": slot %d, group %s (%s)\n", p->slot, p->group, p->why);
	else if (p->slot >= 0 && p->group[0])
		printf(": slot %d by %s, group %s\n", p->slot,
		       silo_placed_by_name(p->by), p->group);
	else if (p->slot >= 0)
		printf(": would be slot %d by %s\n", p->slot,
		       silo_placed_by_name(p->by));
	else
		printf(": not placed: %s\n", p->why);
}

static int reuseport_attach(void *parsed, int argc __maybe_unused,
			    char **argv __maybe_unused)
{
	struct attach_cfg *cfg = parsed;
	struct silo_attach_pid_opts ao = {};
	struct silo_placement *placed = NULL;
	size_t n = 0, i, nr_pids;
	__u32 port;
	int *pids;
	struct silo *s;
	int ret;

	if (!cfg->nr_pids)
		return usage_error(
			"reuseport attach needs --pid PID: see '%s reuseport attach --help'\n",
			prog_name);
	if (!cfg->port)
		return usage_error(
			"reuseport attach needs --port PORT: see '%s reuseport attach --help'\n",
			prog_name);
	pids = cfg->pids;
	nr_pids = cfg->nr_pids;
	port = cfg->port;
	ao.port = port;
	ao.protocol = cfg->protocol;
	ao.policy = cfg->policy;
	ao.no_migrate = cfg->no_migrate;
	ao.name = cfg->name;
	s = open_silo();
	if (!s)
		return 1;
	ret = silo_group_attach_pids(s, pids, nr_pids, &ao, &placed, &n);
	if (cli.json) {
		json_object *o = json_object_new_object(), *arr;

		json_object_object_add(o, "pid",
				       json_object_new_int64(pids[0]));
		arr = json_object_new_array();
		for (i = 0; i < nr_pids; i++)
			json_object_array_add(arr,
					      json_object_new_int64(pids[i]));
		json_object_object_add(o, "pids", arr);
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
		printf("pid%s", nr_pids > 1 ? "s" : "");
		for (i = 0; i < nr_pids; i++)
			printf(" %d", pids[i]);
		printf(": %zu socket%s on port %u\n", n, n == 1 ? "" : "s",
		       port);
		for (i = 0; i < n; i++)
			print_placement(&placed[i]);
		if (ret > 0)
			printf("attached %d group%s: see '%s reuseport show'\n",
			       ret, ret == 1 ? "" : "s", prog_name);
	}
	free(placed);
	return ret > 0 ? 0 : 1;
}
