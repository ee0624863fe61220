/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One table per command: its options (name, short form, type, where the
 * value goes, help) and its arguments. The same table drives parsing,
 * validation, the command's --help and its object's help, so the three
 * cannot drift apart.
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

/* A command: what the dispatcher runs, and how its help is written. */
struct cmd_spec {
	const char *name;
	/* Runs with cfg as the options left it and argv[0 .. argc-1] the
	 * positional arguments; returns the exit code. */
	int (*fn)(void *cfg, int argc, char **argv);
	const char *args; /* positional arguments in the synopsis, or NULL */
	int min_args, max_args; /* of them */
	const char *help; /* what the command does */
	const struct opt *opts; /* NULL or ends with a NULL name */
	const char *const *aliases; /* other names, NULL-terminated */
	size_t cfg_size; /* of the struct that opts fill in; 0: none */
	const void *cfg_init; /* its defaults, or NULL: all zero */
};

/*
 * An object of 'silo OBJECT COMMAND': its line in 'silo --help' and its
 * commands, or (doctor, version) the one command it is.
 */
struct cmd_object {
	const char *name;
	const char *summary; /* one line in 'silo --help' */
	const struct cmd_spec *const *cmds; /* NULL-terminated, or NULL */
	const struct cmd_spec *self; /* no commands: 'silo OBJECT [ARGS]' */
	/* Runs when no command is named, or an option comes first. */
	const struct cmd_spec *dflt;
	const char *notes; /* after the commands in 'silo OBJECT help' */
	void (*done)(void); /* after a command of the object succeeded */
};

/* The whole command line: the objects, and the global options' help. */
struct cmd_tree {
	const struct cmd_object *const *objects; /* NULL-terminated */
	const struct opt *global_opts; /* for 'silo --help' only */
};

#define OPTS_HELP (-1) /* opts_parse printed the command's help */

/*
 * Parses argv (argv[0] is the command's name) into cfg by spec, together
 * with the common options (-j, -p, -h). On success returns 0 and the
 * positional arguments in argv[*first .. argc-1]. Returns OPTS_HELP after
 * printing help, or EXIT_USAGE after saying what is wrong.
 */
int opts_parse(const struct cmd_spec *spec, void *cfg, int argc, char **argv,
	       int *first);

/* The help of one command, of an object (all its commands), and of all. */
void cmd_help(const char *object, const struct cmd_spec *spec);
int object_help(const struct cmd_object *obj);
int tree_help(const struct cmd_tree *tree);

/*
 * Runs 'OBJECT COMMAND ...' (argv[0] the object): an exact name or alias,
 * else a prefix of exactly one, for objects and commands alike; help for
 * "help", "-h" or "--help".
 */
int cmd_dispatch(const struct cmd_tree *tree, int argc, char **argv);

#endif /* SILO_OPTS_H */
