// SPDX-License-Identifier: GPL-2.0
/* Help texts, written from the tables: of a command, an object, and all. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"

#define HELP_COL 22 /* where option help starts */
#define WIDTH 79

/* "xdp load" while a command of an object runs, for messages. */
static char cur_cmd[64];

void cmd_running(const char *object, const struct cmd_spec *spec)
{
	snprintf(cur_cmd, sizeof(cur_cmd), "%s %s", object, spec->name);
}

const char *cmd_name(const struct cmd_spec *spec)
{
	if (!cur_cmd[0])
		return spec->name;
	return cur_cmd;
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
	for (i = 0; i < opts_count(spec->opts); i++) {
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

	for (i = 0; i < opts_count(opts); i++) {
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
