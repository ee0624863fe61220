/* SPDX-License-Identifier: GPL-2.0 */
/* silod's configuration: defaults, /etc/silo/silod.conf, options (config.c). */
#ifndef SILOD_CONFIG_H
#define SILOD_CONFIG_H

#include <stdbool.h>
#include <linux/types.h>

struct silod_config;

#define DEFAULT_CONFIG "/etc/silo/silod.conf"

/* What only the command line says. */
struct silod_args {
	const char *netns;
	const char *pin_root;
	const char *config;
	int verbose; /* -v count minus -q count */
};

/* -s, set as soon as it is parsed (errors after it go to syslog); read
 * by main.c's logging. */
extern bool use_syslog;

/*
 * Defaults, then the config file (--config, or DEFAULT_CONFIG if present),
 * then the options, which win. Prints why on failure; exits for --help and
 * --version. Also on SIGHUP.
 */
int load_config(int argc, char **argv, struct silod_args *a,
		struct silod_config *c);
/* "0-3:0,4-7:1": CPU (or range) to node; CPUs not named stay on node 0. */
int parse_cpu_nodes(const char *s, __u32 *node_of, int nr_cpus,
		    __u32 *nr_nodes);

#endif /* SILOD_CONFIG_H */
