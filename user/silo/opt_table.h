/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One table per command: its options (name, short form, type, where the
 * value goes, help) and its arguments. The same table drives parsing,
 * validation (opts.c), the command's --help and its object's help
 * (help.c), so the three cannot drift apart.
 */
#ifndef SILO_OPT_TABLE_H
#define SILO_OPT_TABLE_H

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

#endif /* SILO_OPT_TABLE_H */
