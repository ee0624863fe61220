/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command tree: objects, their commands (each with its option table,
 * opt_table.h), the dispatcher that runs them and the help written from them.
 */
#ifndef SILO_CMD_H
#define SILO_CMD_H

#include <stddef.h>
#include "opts.h"

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

/* Names the command that runs ("xdp load"), for messages and its help. */
void cmd_running(const char *object, const struct cmd_spec *spec);
const char *cmd_name(const struct cmd_spec *spec);

/* The objects, each in its file. */
extern const struct cmd_object xdp_object;
extern const struct cmd_object route_object;
extern const struct cmd_object genid_object;
extern const struct cmd_object stats_object;
extern const struct cmd_object reuseport_object;
extern const struct cmd_object service_object;
extern const struct cmd_object daemon_object;
extern const struct cmd_object doctor_object;
extern const struct cmd_object apply_object;
extern const struct cmd_object show_object;
/* silo reuseport attach and queue-map (reuseport_attach.c, _queue.c) */
extern const struct cmd_spec reuseport_attach_spec;
extern const struct cmd_spec reuseport_queue_map_spec;
/* silo service queue-map (service_queue.c) */
extern const struct cmd_spec service_queue_map_spec;

#endif /* SILO_CMD_H */
