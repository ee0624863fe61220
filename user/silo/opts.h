/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One table per command: its options (name, short form, type, where the
 * value goes, help) and its arguments. The same table drives parsing,
 * validation, the command's --help and its object's help (help.c), so the
 * three cannot drift apart.
 */
#ifndef SILO_OPTS_H
#define SILO_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum opt_type {
	OPT_FLAG, /* bool, set to true */
	OPT_STR, /* const char *: the argument as given (non-empty) */
	OPT_U32, /* __u32 in [min, max] */
	OPT_CHOICE, /* int: the val of the choice named */
	OPT_FN, /* parse(cfg, arg): 0 or a negative errno */
};

struct opt_choice {
	const char *name;
	int val;
};

struct opt {
	const char *name; /* --name */
	char short_name; /* -x; 0: none */
	enum opt_type type;
	size_t off; /* of the value in the command's config struct */
	const char *arg; /* the value's name in help ("N"); NULL: a flag */
	const char *help; /* lines after the first are indented */
	const struct opt_choice
		*choices; /* OPT_CHOICE, ends with a NULL name */
	__u32 min, max; /* OPT_U32 */
	int (*parse)(void *cfg, const char *arg); /* OPT_FN */
	const char *expect; /* OPT_FN and OPT_STR: what a good value is */
	bool required; /* shown without [ ]; checked here for OPT_STR */
	bool many; /* may be given more than once */
};

/* Table entries: a struct cfg (the command's) has each destination. */
#define OPTION_FLAG(n, cfg, field, h)                         \
	{                                                     \
		.name = n, .type = OPT_FLAG,                  \
		.off = offsetof(struct cfg, field), .help = h \
	}
#define OPTION_STR(n, cfg, field, a, h)                                 \
	{                                                               \
		.name = n, .type = OPT_STR,                             \
		.off = offsetof(struct cfg, field), .arg = a, .help = h \
	}
#define OPTION_U32(n, cfg, field, a, lo, hi, h)                          \
	{                                                                \
		.name = n, .type = OPT_U32,                              \
		.off = offsetof(struct cfg, field), .arg = a, .min = lo, \
		.max = hi, .help = h                                     \
	}
#define OPTION_CHOICE(n, cfg, field, a, c, h)                               \
	{                                                                   \
		.name = n, .type = OPT_CHOICE,                              \
		.off = offsetof(struct cfg, field), .arg = a, .choices = c, \
		.help = h                                                   \
	}
#define OPTION_FN(n, fn, a, what, h)                              \
	{                                                         \
		.name = n, .type = OPT_FN, .parse = fn, .arg = a, \
		.expect = what, .help = h                         \
	}
#define OPTION_END           \
	{                    \
		.name = NULL \
	}

/* n options, up to the NULL name that ends them. */
static inline size_t opts_count(const struct opt *o)
{
	size_t n = 0;

	while (o && o[n].name)
		n++;
	return n;
}

struct cmd_spec;

#define OPTS_HELP (-1) /* opts_parse printed the command's help */

/*
 * Parses argv (argv[0] is the command's name) into cfg by spec, together
 * with the common options (-j, -p, -h). On success returns 0 and the
 * positional arguments in argv[*first .. argc-1]. Returns OPTS_HELP after
 * printing help, or EXIT_USAGE after saying what is wrong.
 */
int opts_parse(const struct cmd_spec *spec, void *cfg, int argc, char **argv,
	       int *first);

/* Values: 0 or -EINVAL. */
int parse_addr(const char *s, int *family, __u8 addr[16]);
int parse_u32(const char *s, __u32 *val);
/* arg is a non-empty prefix of word (or word itself). */
bool is_prefix(const char *arg, const char *word);

#endif /* SILO_OPTS_H */
