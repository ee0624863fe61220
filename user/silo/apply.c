// SPDX-License-Identifier: GPL-2.0
/*
 * silo apply [FILE]: brings every namespace the file has a part for (with
 * --netns, that one) to it; silo show --config: what runs, as such a file.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

struct apply_cfg {
	bool dry_run;
	const char *state_dir;
};

static const struct opt apply_opts[] = {
	OPTION_FLAG("dry-run", apply_cfg, dry_run,
		    "print the plan and change nothing"),
	OPTION_STR(
		"state-dir", apply_cfg, state_dir, "DIR",
		"where apply keeps what it made (default\n" SILO_STATE_DIR_DEFAULT
		")"),
	{ NULL },
};

/* One namespace's changes: printed as text, or added to arr (-j). */
static void report(const char *netns, const struct silo_change *ch, size_t n,
		   json_object *arr)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct silo_change *c = &ch[i];
		json_object *o;

		if (!arr) {
			printf("%s%s%s%s %s %s: %s", netns ? "netns " : "",
			       netns ?: "", netns ? ": " : "",
			       silo_change_op_name(c->op), c->object, c->name,
			       c->detail);
			if (c->line)
				printf(" (line %d)", c->line);
			if (c->err)
				printf(": FAILED: %s", strerror(-c->err));
			printf("\n");
			continue;
		}
		o = fmt_change_json(c);
		json_object_object_add(o, "netns",
				       netns ? json_object_new_string(netns) :
					       NULL);
		json_object_array_add(arr, o);
	}
}

/* Applies the part for netns (NULL: where silo runs, or --netns). */
static int apply_one(const struct apply_cfg *c, struct silo_config *cfg,
		     const char *netns, json_object *arr, size_t *total)
{
	struct silo_apply_opts o = {
		.netns = netns,
		.state_dir = c->state_dir,
		.dry_run = c->dry_run,
	};
	struct silo_opts so = { .netns = netns, .pin_root = cli.pin_root };
	struct silo_change *ch;
	struct silo *s;
	size_t n;
	int err;

	err = silo_open(&s, &so);
	if (err) {
		cli_error("cannot open %s%s: %s\n",
			  netns ? "network namespace " : "this namespace",
			  netns ?: "", strerror(-err));
		return 1;
	}
	/* Its return says whether a change failed (the first one's errno). */
	err = silo_apply(s, cfg, &o, &ch, &n);
	report(netns, ch, n, arr);
	if (err) {
		if (!n)
			cli_error("apply%s%s: %s\n", netns ? " in " : "",
				  netns ?: "", strerror(-err));
		err = 1;
	}
	*total += n;
	free(ch);
	silo_close(s);
	return err;
}

static int apply_run(void *parsed, int argc, char **argv)
{
	struct apply_cfg *c = parsed;
	const char *path = argc ? argv[0] : SILO_CONFIG_DEFAULT;
	json_object *arr = cli.json ? json_object_new_array() : NULL;
	struct silo_config *cfg;
	int home, rc = 0;
	bool none = false;
	size_t i, total = 0;
	char err[512];

	if (silo_config_read(path, &cfg, err, sizeof(err))) {
		cli_error("%s: nothing was changed\n", err);
		json_object_put(arr);
		return 1;
	}
	home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (cli.netns) {
		for (i = 0; i < silo_config_nr_netns(cfg); i++)
			if (!strcmp(silo_config_netns(cfg, i), cli.netns))
				break;
		/* Nothing declared there: what apply made there goes. */
		none = i == silo_config_nr_netns(cfg);
		if (none && !cli.json)
			printf("%s declares nothing for network namespace %s (its top level is for the namespace silo runs in)\n",
			       path, cli.netns);
		rc |= apply_one(c, cfg, cli.netns, arr, &total);
	} else {
		rc |= apply_one(c, cfg, NULL, arr, &total);
		for (i = 0; i < silo_config_nr_netns(cfg); i++) {
			/* silo_open entered the last one: back home first */
			if (home >= 0)
				setns(home, CLONE_NEWNET);
			rc |= apply_one(c, cfg, silo_config_netns(cfg, i), arr,
					&total);
		}
	}
	if (home >= 0)
		close(home);
	silo_config_free(cfg);
	if (arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "dry_run",
				       json_object_new_boolean(c->dry_run));
		json_object_object_add(o, "changes", arr);
		json_print(o);
	} else if (!total && none) {
		printf("nothing to change: nothing of apply's runs there\n");
	} else if (!total) {
		printf("nothing to change: what runs is what %s declares\n",
		       path);
	} else if (c->dry_run) {
		printf("dry run: nothing was changed\n");
	}
	return rc;
}

static const struct cmd_spec apply_spec = {
	.name = "apply",
	.fn = apply_run,
	.args = "[FILE]",
	.max_args = 1,
	.opts = apply_opts,
	.help = "bring what runs to FILE (default " SILO_CONFIG_DEFAULT
		", '-':\n"
		"stdin; silo.conf(5)): load the devices it declares, add its\n"
		"services, groups and queue maps, change what differs, and\n"
		"remove what an earlier apply made and FILE no longer\n"
		"declares. What apply did not make is never removed; what is\n"
		"there already as declared is adopted. A second apply changes\n"
		"nothing. A bad file changes nothing and names the line.\n"
		"Every namespace FILE has a part for; with --netns, that one.\n"
		"Exits 1 when a change failed (the others are still made).",
	.cfg_size = sizeof(struct apply_cfg),
};

const struct cmd_object apply_object = {
	.name = "apply",
	.summary = "bring what runs to a silo.conf(5) file",
	.self = &apply_spec,
};

struct show_cfg {
	bool config;
};

static const struct opt show_opts[] = {
	{ .name = "config",
	  .type = OPT_FLAG,
	  .off = offsetof(struct show_cfg, config),
	  .help = "as a silo.conf(5) that 'silo apply' takes back",
	  .required = true },
	{ NULL },
};

static int show_run(void *parsed, int argc __maybe_unused,
		    char **argv __maybe_unused)
{
	struct show_cfg *c = parsed;
	struct silo *s;

	if (!c->config)
		return usage_error(
			"show needs --config: see '%s show --help'\n",
			prog_name);
	s = open_silo();
	if (!s)
		return 1;
	return silo_config_write(s, cli.netns, stdout) ? 1 : 0;
}

static const struct cmd_spec show_spec = {
	.name = "show",
	.fn = show_run,
	.opts = show_opts,
	.help = "what runs in this namespace (devices, services, reuseport\n"
		"groups, queue maps) as a file: 'silo show --config | silo\n"
		"apply -' changes nothing. A group's processes are named by the\n"
		"executable of a socket's owner: edit it to a unit or pid file\n"
		"where that fits better.",
	.cfg_size = sizeof(struct show_cfg),
};

const struct cmd_object show_object = {
	.name = "show",
	.summary = "what runs, as a silo.conf(5) file (--config)",
	.self = &show_spec,
};
