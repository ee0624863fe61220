// SPDX-License-Identifier: GPL-2.0
/* Option tables: parsing, validation and help from one declaration. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "opts.h"

#define MAX_OPTS 32
#define HELP_COL 22 /* where option help starts */
#define WIDTH 79

/* The options every command takes, after the command's own. */
static const struct opt common_opts[] = {
	{ .name = "json", .short_name = 'j', .help = "JSON output" },
	{ .name = "pretty", .short_name = 'p', .help = "indented JSON output" },
	{ .name = "help", .short_name = 'h', .help = "this help" },
	OPTION_END,
};

static size_t nopts(const struct opt *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

static void *dest(void *cfg, const struct opt *o)
{
	return (char *)cfg + o->off;
}

static int bad_value(const char *cmd, const struct opt *o, const char *arg)
{
	const struct opt_choice *c;
	char expect[256];
	size_t len = 0;

	switch (o->type) {
	case OPT_U32:
		snprintf(expect, sizeof(expect), "a whole number from %u to %u",
			 o->min, o->max);
		break;
	case OPT_CHOICE:
		for (c = o->choices; c->name && len < sizeof(expect); c++)
			len += snprintf(expect + len, sizeof(expect) - len,
					"%s%s", len ? ", " : "one of ",
					c->name);
		break;
	default:
		snprintf(expect, sizeof(expect), "%s",
			 o->expect ? o->expect : "a value");
	}
	return usage_error("bad --%s '%s' for %s: %s\n", o->name, arg, cmd,
			   expect);
}

static int set_value(const char *cmd, const struct opt *o, void *cfg,
		     const char *arg)
{
	const struct opt_choice *c;
	__u32 v;

	switch (o->type) {
	case OPT_FLAG:
		*(bool *)dest(cfg, o) = true;
		return 0;
	case OPT_STR:
		if (!*arg)
			return bad_value(cmd, o, arg);
		*(const char **)dest(cfg, o) = arg;
		return 0;
	case OPT_U32:
		if (parse_u32(arg, &v) || v < o->min || v > o->max)
			return bad_value(cmd, o, arg);
		*(__u32 *)dest(cfg, o) = v;
		return 0;
	case OPT_CHOICE:
		for (c = o->choices; c->name; c++) {
			if (!strcmp(c->name, arg)) {
				*(int *)dest(cfg, o) = c->val;
				return 0;
			}
		}
		return bad_value(cmd, o, arg);
	case OPT_FN:
		if (o->parse(cfg, arg))
			return bad_value(cmd, o, arg);
		return 0;
	}
	return bad_value(cmd, o, arg);
}

/* "xdp load" while a command of an object runs, for messages. */
static char cur_cmd[64];

static void cmd_running(const char *object, const struct cmd_spec *spec)
{
	snprintf(cur_cmd, sizeof(cur_cmd), "%s %s", object, spec->name);
}

static const char *cmd_name(const struct cmd_spec *spec)
{
	if (!cur_cmd[0])
		return spec->name;
	return cur_cmd;
}

int opts_parse(const struct cmd_spec *spec, void *cfg, int argc, char **argv,
	       int *first)
{
	struct option longopts[MAX_OPTS + 4] = {};
	const struct opt *all[MAX_OPTS + 4];
	char shortopts[2 * MAX_OPTS + 8];
	size_t n = 0, i, s = 0;
	int c, nargs, err;

	for (i = 0; i < nopts(spec->opts) && n < MAX_OPTS; i++)
		all[n++] = &spec->opts[i];
	for (i = 0; common_opts[i].name; i++)
		all[n++] = &common_opts[i];
	for (i = 0; i < n; i++) {
		longopts[i].name = all[i]->name;
		longopts[i].has_arg = all[i]->type == OPT_FLAG ?
					      no_argument :
					      required_argument;
		longopts[i].val = 256 + i;
		if (all[i]->short_name) {
			shortopts[s++] = all[i]->short_name;
			if (all[i]->type != OPT_FLAG)
				shortopts[s++] = ':';
		}
	}
	shortopts[s] = '\0';
	/* Options may come after the arguments too, as in ip and bpftool. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct opt *o = NULL;

		if (c >= 256)
			o = all[c - 256];
		for (i = 0; i < n && !o && c != '?'; i++)
			if (all[i]->short_name == c)
				o = all[i];
		if (!o)
			return usage_error(
				"%s: unknown option '%s', or it needs a value: see '%s %s --help'\n",
				cmd_name(spec), argv[optind - 1], prog_name,
				cmd_name(spec));
		if (o == &common_opts[0]) {
			cli.json = true;
		} else if (o == &common_opts[1]) {
			cli.json = cli.pretty = true;
		} else if (o == &common_opts[2]) {
			cmd_help(NULL, spec);
			return OPTS_HELP;
		} else {
			err = set_value(cmd_name(spec), o, cfg, optarg);
			if (err)
				return err;
		}
	}
	for (i = 0; i < nopts(spec->opts); i++) {
		const struct opt *o = &spec->opts[i];

		if (o->required && o->type == OPT_STR &&
		    !*(const char **)dest(cfg, o))
			return usage_error(
				"%s needs --%s %s: see '%s %s --help'\n",
				cmd_name(spec), o->name, o->arg, prog_name,
				cmd_name(spec));
	}
	nargs = argc - optind;
	if (nargs > spec->max_args)
		return usage_error(
			"%s: unexpected argument '%s': see '%s %s --help'\n",
			cmd_name(spec), argv[optind + spec->max_args],
			prog_name, cmd_name(spec));
	if (nargs < spec->min_args)
		return usage_error("%s needs %s: see '%s %s --help'\n",
				   cmd_name(spec), spec->args, prog_name,
				   cmd_name(spec));
	*first = optind;
	return 0;
}

/* Prints text from column col, its later lines indented to col too. */
static void print_indented(const char *text, int col)
{
	const char *nl;

	for (;;) {
		nl = strchr(text, '\n');
		if (!nl) {
			printf("%s\n", text);
			return;
		}
		printf("%.*s\n%*s", (int)(nl - text), text, col, "");
		text = nl + 1;
	}
}

/* "--mode native|skb", "-c, --cpus LIST" */
static void opt_label(char *buf, size_t len, const struct opt *o)
{
	char sh[8] = "";

	if (o->short_name)
		snprintf(sh, sizeof(sh), "-%c, ", o->short_name);
	snprintf(buf, len, "%s--%s%s%s", sh, o->name, o->arg ? " " : "",
		 o->arg ? o->arg : "");
}

/* "load" or "{ status | show | list }" */
static void cmd_names(char *buf, size_t len, const struct cmd_spec *spec)
{
	size_t i, n;

	if (!spec->aliases) {
		snprintf(buf, len, "%s", spec->name);
		return;
	}
	n = snprintf(buf, len, "{ %s", spec->name);
	for (i = 0; spec->aliases[i] && n < len; i++)
		n += snprintf(buf + n, len - n, " | %s", spec->aliases[i]);
	if (n < len)
		snprintf(buf + n, len - n, " }");
}

static void synopsis(const char *object, const struct cmd_spec *spec,
		     bool first)
{
	char head[160], item[96], names[96];
	int col, indent;
	size_t i;

	cmd_names(names, sizeof(names), spec);
	snprintf(head, sizeof(head), "%s %s%s%s", prog_name,
		 object ? object : "", object ? " " : "", names);
	printf("%s", first ? "Usage: " : "       ");
	indent = 7 + strlen(head) + 1;
	col = indent - 1;
	printf("%s", head);
	if (spec->args) {
		printf(" %s", spec->args);
		col += 1 + strlen(spec->args);
	}
	for (i = 0; i < nopts(spec->opts); i++) {
		const struct opt *o = &spec->opts[i];
		int l;

		l = snprintf(item, sizeof(item), "%s--%s%s%s%s",
			     o->required ? "" : "[", o->name, o->arg ? " " : "",
			     o->arg ? o->arg : "", o->required ? "" : "]");
		if (o->many)
			l += snprintf(item + l, sizeof(item) - l,
				      " [--%s %s]...", o->name, o->arg);
		if (col + 1 + l > WIDTH) {
			printf("\n%*s", indent, "");
			col = indent;
		} else {
			printf(" ");
			col++;
		}
		printf("%s", item);
		col += l;
	}
	printf("\n");
}

/* Each option on its line(s), its help from column HELP_COL. */
static void print_opts(const struct opt *opts)
{
	char label[96];
	size_t i;
	int l;

	for (i = 0; i < nopts(opts); i++) {
		const struct opt *o = &opts[i];

		opt_label(label, sizeof(label), o);
		l = printf("  %s", label);
		if (l + 2 > HELP_COL) {
			printf("\n%*s", HELP_COL, "");
		} else {
			printf("%*s", HELP_COL - l, "");
		}
		print_indented(o->help, HELP_COL);
	}
}

static void cmd_body(const struct cmd_spec *spec)
{
	int l;

	l = printf("%s", spec->name);
	if (l < 9)
		printf("%*s", 10 - l, "");
	else
		printf("\n%10s", "");
	print_indented(spec->help, 10);
	print_opts(spec->opts);
}

static const char common_line[] =
	"Options of every command: -j/--json, -p/--pretty, -h/--help\n";

void cmd_help(const char *object, const struct cmd_spec *spec)
{
	char obj[64];
	const char *sp;

	/* cur_cmd is "OBJECT COMMAND" while a command runs */
	if (!object && cur_cmd[0] && (sp = strchr(cur_cmd, ' '))) {
		snprintf(obj, sizeof(obj), "%.*s", (int)(sp - cur_cmd),
			 cur_cmd);
		object = obj;
	}
	synopsis(object, spec, true);
	printf("\n");
	cmd_body(spec);
	printf("\n%s", common_line);
}

int object_help(const struct cmd_object *obj)
{
	const struct cmd_spec *const *specs = obj->cmds;
	size_t i;

	if (!specs) {
		cmd_help(NULL, obj->self);
		return 0;
	}
	for (i = 0; specs[i]; i++)
		synopsis(obj->name, specs[i], i == 0);
	printf("\n");
	for (i = 0; specs[i]; i++)
		cmd_body(specs[i]);
	if (obj->notes)
		printf("\n%s", obj->notes);
	printf("\n%s", common_line);
	return 0;
}

int tree_help(const struct cmd_tree *tree)
{
	const struct cmd_object *const *obj;
	int col;

	printf("Usage: %s [OPTIONS] OBJECT COMMAND [ARGS]\n"
	       "       %s OBJECT help\n\nOBJECT := {",
	       prog_name, prog_name);
	col = 10;
	for (obj = tree->objects; *obj; obj++) {
		int l = strlen((*obj)->name) + 3;

		if (col + l > WIDTH - 8) {
			printf("\n           ");
			col = 11;
		}
		col += printf(" %s%s", (*obj)->name, obj[1] ? " |" : " }");
	}
	printf("\n");
	for (obj = tree->objects; *obj; obj++)
		printf("  %-10s %s\n", (*obj)->name, (*obj)->summary);
	printf("\nOPTIONS:\n");
	print_opts(tree->global_opts);
	return 0;
}

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
	for (; obj->cmds[n] && n < MAX_NAMES; n++)
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
	for (; tree->objects[n] && n < MAX_NAMES; n++)
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
