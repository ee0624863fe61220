// SPDX-License-Identifier: GPL-2.0
/* The dispatcher: 'silo OBJECT COMMAND', found by name or prefix, run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"

/* A name and its aliases, the same for objects and commands. */
struct names {
	const char *name;
	const char *const *aliases;
};

static bool match_exact(const struct names *n, const char *arg)
{
	size_t i;

	if (!strcmp(n->name, arg))
		return true;
	for (i = 0; n->aliases && n->aliases[i]; i++)
		if (!strcmp(n->aliases[i], arg))
			return true;
	return false;
}

/* The first of n's names that arg is a prefix of, or NULL. */
static const char *prefixed(const struct names *n, const char *arg)
{
	size_t i;

	if (is_prefix(arg, n->name))
		return n->name;
	for (i = 0; n->aliases && n->aliases[i]; i++)
		if (is_prefix(arg, n->aliases[i]))
			return n->aliases[i];
	return NULL;
}

#define SELECT_NONE (-1)
#define SELECT_AMBIGUOUS (-2)

/*
 * The entry of tbl[0..n-1] that arg names: an exact name or alias first,
 * then a prefix of exactly one (as in bpftool and ip). On SELECT_AMBIGUOUS
 * the names it is a prefix of are in names.
 */
static int select_name(const struct names *tbl, size_t n, const char *arg,
		       char *names, size_t len)
{
	int match = SELECT_NONE;
	size_t i, l;

	for (i = 0; i < n; i++)
		if (match_exact(&tbl[i], arg))
			return i;
	names[0] = '\0';
	for (i = 0; i < n; i++) {
		const char *name = prefixed(&tbl[i], arg);

		if (!name)
			continue;
		l = strlen(names);
		snprintf(names + l, len - l, "%s%s", l ? ", " : "", name);
		match = match == SELECT_NONE ? (int)i : SELECT_AMBIGUOUS;
	}
	return match;
}

#define MAX_NAMES 32

static bool is_help(const char *arg)
{
	return !strcmp(arg, "help") || !strcmp(arg, "-h") ||
	       !strcmp(arg, "--help");
}

/*
 * Parses the options of spec into a config of its own, then runs it.
 * argv[0] is the command's name, argv[1..] its options and arguments.
 */
static int cmd_run(const struct cmd_object *obj, const struct cmd_spec *spec,
		   int argc, char **argv)
{
	void *cfg = NULL;
	int ret, first;

	if (obj->cmds)
		cmd_running(obj->name, spec);
	if (spec->cfg_size) {
		cfg = calloc(1, spec->cfg_size);
		if (!cfg) {
			fprintf(stderr, "%s: error: out of memory\n",
				prog_name);
			return 1;
		}
		if (spec->cfg_init)
			memcpy(cfg, spec->cfg_init, spec->cfg_size);
	}
	ret = opts_parse(spec, cfg, argc, argv, &first);
	if (!ret)
		ret = spec->fn(cfg, argc - first, argv + first);
	else if (ret == OPTS_HELP)
		ret = 0;
	free(cfg);
	return ret;
}

/* 'OBJECT COMMAND ...' once OBJECT is found (argv[0]). */
static int object_run(const struct cmd_object *obj, int argc, char **argv)
{
	struct names tbl[MAX_NAMES];
	char names[256];
	size_t n = 0;
	int i;

	if (obj->self) {
		if (argc > 1 && !strcmp(argv[1], "help"))
			return object_help(obj);
		return cmd_run(obj, obj->self, argc, argv);
	}
	/* 'silo stats' alone, or with options, is 'silo stats show'. */
	if (obj->dflt && (argc < 2 || argv[1][0] == '-'))
		return cmd_run(obj, obj->dflt, argc, argv);
	argc--;
	argv++;
	if (argc < 1) {
		object_help(obj);
		return EXIT_USAGE;
	}
	if (is_help(argv[0]))
		return object_help(obj);
	for (; n < MAX_NAMES && obj->cmds[n]; n++)
		tbl[n] = (struct names){ obj->cmds[n]->name,
					 obj->cmds[n]->aliases };
	i = select_name(tbl, n, argv[0], names, sizeof(names));
	if (i == SELECT_AMBIGUOUS)
		return usage_error("ambiguous command '%s' for %s: %s\n",
				   argv[0], obj->name, names);
	if (i == SELECT_NONE) {
		usage_error("unknown command '%s' for %s\n", argv[0],
			    obj->name);
		if (!cli.json) /* the JSON is the error alone */
			object_help(obj);
		return EXIT_USAGE;
	}
	return cmd_run(obj, obj->cmds[i], argc, argv);
}

int cmd_dispatch(const struct cmd_tree *tree, int argc, char **argv)
{
	const struct cmd_object *obj;
	struct names tbl[MAX_NAMES];
	char names[256];
	size_t n = 0;
	int i, ret;

	if (argc < 1) {
		tree_help(tree);
		return EXIT_USAGE;
	}
	if (is_help(argv[0]))
		return tree_help(tree);
	for (; n < MAX_NAMES && tree->objects[n]; n++)
		tbl[n] = (struct names){ tree->objects[n]->name, NULL };
	i = select_name(tbl, n, argv[0], names, sizeof(names));
	if (i == SELECT_AMBIGUOUS)
		return usage_error("ambiguous command '%s': %s\n", argv[0],
				   names);
	if (i == SELECT_NONE) {
		usage_error("unknown command '%s'\n", argv[0]);
		if (!cli.json) /* the JSON is the error alone */
			tree_help(tree);
		return EXIT_USAGE;
	}
	obj = tree->objects[i];
	ret = object_run(obj, argc, argv);
	if (!ret && obj->done)
		obj->done();
	return ret;
}
