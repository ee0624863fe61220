// SPDX-License-Identifier: GPL-2.0
/* silo genid { show | bump }: the route cache's generation id. */
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int genid_show(void *cfg, int argc, char **argv);
static int genid_bump(void *cfg, int argc, char **argv);

static const struct cmd_spec genid_show_spec = {
	.name = "show",
	.fn = genid_show,
	.aliases = (const char *const[]){ "list", NULL },
	.help = "the current route cache generation id, and which of the\n"
		"source, ports and flow label the cache key holds, and why",
};

static const struct cmd_spec genid_bump_spec = {
	.name = "bump",
	.fn = genid_bump,
	.help = "increment it: every cached route becomes stale and is\n"
		"resolved again by the next packet that uses it",
};

static const struct cmd_spec *const genid_specs[] = {
	&genid_show_spec,
	&genid_bump_spec,
	NULL,
};

static int genid_print(struct silo *s, __u64 genid)
{
	struct silo_info info;
	char key[256], how[96];

	if (silo_info(s, &info))
		info.genid_flags = 0;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "genid",
				       json_object_new_uint64(genid));
		route_key_json(o, info.genid_flags);
		json_print(o);
	} else {
		route_key_str(key, sizeof(key), info.genid_flags);
		route_lookup_str(how, sizeof(how), info.genid_flags);
		printf("genid %llu\nroute cache key: %s\nroute lookup: %s\n",
		       (unsigned long long)genid, key, how);
	}
	return 0;
}

static int genid_show(void *parsed __maybe_unused, int argc __maybe_unused,
		      char **argv __maybe_unused)
{
	struct silo_info info;
	struct silo *s;
	int err;

	s = open_silo();
	if (!s)
		return 1;
	err = silo_info(s, &info);
	if (err) {
		fprintf(stderr,
			"%s: error: silo is not loaded in this network namespace\n",
			prog_name);
		return 1;
	}
	return genid_print(s, info.genid);
}

static int genid_bump(void *parsed __maybe_unused, int argc __maybe_unused,
		      char **argv __maybe_unused)
{
	struct silo *s;
	__u64 genid;

	s = open_silo();
	if (!s || silo_genid_bump(s, &genid))
		return 1;
	return genid_print(s, genid);
}

const struct cmd_object genid_object = {
	.name = "genid",
	.summary = "show or bump the route cache generation id",
	.cmds = genid_specs,
};
