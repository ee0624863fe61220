// SPDX-License-Identifier: GPL-2.0
/* silo daemon status: what silod is doing in this namespace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int daemon_status(void *cfg, int argc, char **argv);

struct status_cfg {
	bool alive;
};

static const struct opt status_opts[] = {
	OPTION_FLAG("alive", status_cfg, alive,
		    "exit 1 unless silod runs and its heartbeat is live\n"
		    "(a liveness probe: systemd, Kubernetes)"),
	{ NULL },
};

static const struct cmd_spec daemon_status_spec = {
	.name = "status",
	.fn = daemon_status,
	.opts = status_opts,
	.cfg_size = sizeof(struct status_cfg),
	.aliases = (const char *const[]){ "show", "list", NULL },
	.help = "whether silod runs for this namespace, the age of its\n"
		"heartbeat (the data path uses the route cache only while\n"
		"silod beats; without silod, or with too old a heartbeat,\n"
		"it bypasses it), the genid, and its counters: events by\n"
		"type, scoped and global invalidations, resyncs, overruns,\n"
		"coalesced bursts. Start silod with 'silod' (see\n"
		"'silod --help') or its systemd unit.",
};

static const struct cmd_spec *const daemon_specs[] = {
	&daemon_status_spec,
	NULL,
};

/* The heartbeat's age (-1: none) and silod's uptime, in seconds. */
/* Is a family's PMTU watch on (the heartbeat's word, while trusted)? */
static bool pmtu_on(const struct silo_daemon_info *di, int fam)
{
	return di->cache_trusted && (di->heartbeat.pmtu_watch & (1U << fam));
}

static const char *pmtu_word(const struct silo_daemon_info *di, int fam)
{
	return pmtu_on(di, fam) ? "on" : "off";
}

static json_object *pmtu_json(const struct silo_daemon_info *di)
{
	json_object *o = json_object_new_object();

	json_object_object_add(
		o, "ipv4", json_object_new_boolean(pmtu_on(di, SILO_FAM_V4)));
	json_object_object_add(
		o, "ipv6", json_object_new_boolean(pmtu_on(di, SILO_FAM_V6)));
	return o;
}

static void daemon_json(const struct silo_daemon_info *di, double age,
			double up)
{
	const __u64 *counters = &di->state.events_route;
	json_object *o = json_object_new_object();
	json_object *c = json_object_new_object();
	unsigned int i;

	json_object_object_add(o, "running",
			       json_object_new_boolean(di->running));
	json_object_object_add(
		o, "pid", json_object_new_int(di->running ? di->state.pid : 0));
	json_object_object_add(o, "uptime_s", json_object_new_double(up));
	json_object_object_add(o, "heartbeat_age_s",
			       age < 0 ? NULL : json_object_new_double(age));
	json_object_object_add(
		o, "heartbeat_timeout_s",
		json_object_new_double(di->heartbeat.timeout_ns / 1e9));
	json_object_object_add(o, "cache_trusted",
			       json_object_new_boolean(di->cache_trusted));
	json_object_object_add(o, "genid", json_object_new_uint64(di->genid));
	json_object_object_add(o, "pmtu_watch", pmtu_json(di));
	for (i = 0; i < SILO_DSTAT_MAX; i++)
		json_object_object_add(c, silo_daemon_stat_name(i),
				       json_object_new_uint64(counters[i]));
	json_object_object_add(o, "counters", c);
	json_print(o);
}

static void daemon_print(const struct silo_daemon_info *di, double age,
			 double up)
{
	const __u64 *counters = &di->state.events_route;
	unsigned int i;

	if (di->running)
		printf("silod: running, pid %u, up %.1f s\n", di->state.pid,
		       up);
	else
		printf("silod: not running\n");
	if (age < 0)
		printf("heartbeat: none: silo does not forward (every packet goes to the stack) until silod runs\n"
		       "  start it with 'silod --netns NAME' or 'systemctl start silod@NAME'\n"
		       "  ('silod' or 'systemctl start silod' for the initial namespace)\n");
	else
		printf("heartbeat: %.3f s ago (timeout %.3f s): %s\n", age,
		       di->heartbeat.timeout_ns / 1e9,
		       di->cache_trusted ?
			       "forwarding and route cache live" :
			       "stale: silo does not forward (every packet goes to the stack)");
	printf("genid: %llu\n", (unsigned long long)di->genid);
	printf("pmtu watch: IPv4 %s, IPv6 %s%s\n", pmtu_word(di, SILO_FAM_V4),
	       pmtu_word(di, SILO_FAM_V6),
	       pmtu_on(di, SILO_FAM_V4) && pmtu_on(di, SILO_FAM_V6) ?
		       "" :
		       " (off: larger packets take a FIB lookup each; every device but lo needs silo, no tunnel: docs/ENVELOPE.md, Path MTU)");
	for (i = 0; i < SILO_DSTAT_MAX; i++)
		printf("  %-16s %12llu  %s\n", silo_daemon_stat_name(i),
		       (unsigned long long)counters[i],
		       silo_daemon_stat_desc(i));
}

static int daemon_status(void *parsed, int argc __maybe_unused,
			 char **argv __maybe_unused)
{
	struct status_cfg *c = parsed;
	struct silo_daemon_info di;
	struct silo *s;
	double age, up;
	int err;

	s = open_silo();
	if (!s)
		return 1;
	err = silo_daemon_info(s, &di);
	if (err == -ENOENT) {
		fprintf(stderr,
			"%s: error: silo is not loaded in this network namespace, and silod has not run here\n",
			prog_name);
		return 1;
	}
	if (err)
		return 1;
	age = di.heartbeat.last_ns ?
		      (double)(__s64)(silo_clock_ns(CLOCK_MONOTONIC_COARSE) -
				      di.heartbeat.last_ns) /
			      1e9 :
		      -1;
	up = di.running ? (double)(silo_clock_ns(CLOCK_MONOTONIC) -
				   di.state.started_ns) /
				  1e9 :
			  0;
	if (cli.json)
		daemon_json(&di, age, up);
	else
		daemon_print(&di, age, up);
	return c->alive && !(di.running && di.cache_trusted) ? 1 : 0;
}

const struct cmd_object daemon_object = {
	.name = "daemon",
	.summary = "silod's state",
	.cmds = daemon_specs,
};
