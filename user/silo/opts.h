/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsing (opts.c): a command's options by its table (opt_table.h) into
 * its config, and the values.
 */
#ifndef SILO_OPTS_H
#define SILO_OPTS_H

#include <stdbool.h>
#include <linux/types.h>
#include "opt_table.h"

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
