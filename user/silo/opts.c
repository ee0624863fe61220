// SPDX-License-Identifier: GPL-2.0
/* Parsing: option tables into a command's config, and the values. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"

#define MAX_OPTS 32

bool is_prefix(const char *arg, const char *word)
{
	return *arg && !strncmp(arg, word, strlen(arg));
}

int parse_addr(const char *s, int *family, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = SILO_AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = SILO_AF_INET6;
		return 0;
	}
	return -EINVAL;
}

int parse_u32(const char *s, __u32 *val)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xFFFFFFFFUL || s[0] == '-')
		return -EINVAL;
	*val = v;
	return 0;
}

/* The options every command takes, after the command's own. */
static const struct opt common_opts[] = {
	{ .name = "json", .short_name = 'j', .help = "JSON output" },
	{ .name = "pretty", .short_name = 'p', .help = "indented JSON output" },
	{ .name = "help", .short_name = 'h', .help = "this help" },
	OPTION_END,
};

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

int opts_parse(const struct cmd_spec *spec, void *cfg, int argc, char **argv,
	       int *first)
{
	struct option longopts[MAX_OPTS + 4] = {};
	const struct opt *all[MAX_OPTS + 4];
	char shortopts[2 * MAX_OPTS + 8];
	size_t n = 0, i, s = 0;
	int c, nargs, err;

	for (i = 0; i < opts_count(spec->opts) && n < MAX_OPTS; i++)
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
	for (i = 0; i < opts_count(spec->opts); i++) {
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
