// SPDX-License-Identifier: GPL-2.0
/* silo stats [show] [--per-cpu] */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static int stats_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: %s stats [show] [--per-cpu]\n"
	       "\n"
	       "Packets per verdict, why packets went to the stack, bpf_fib_lookup\n"
	       "return codes, and route cache hits, misses and stale entries,\n"
	       "summed over CPUs (each CPU counts in its own memory).\n"
	       "  --per-cpu   one column per CPU\n"
	       "\n"
	       "Options of every command: -j/--json, -p/--pretty, -h/--help\n",
	       prog_name);
	return 0;
}

static __u64 stat_of(const struct silo_stats *st, unsigned int idx)
{
	return ((const __u64 *)st)[idx];
}

static json_object *stats_json(const struct silo_stats *st)
{
	json_object *o = json_object_new_object();
	unsigned int i;

	for (i = 0; i < SILO_STAT_MAX; i++)
		json_object_object_add(o, silo_stat_name(i),
				       json_object_new_uint64(stat_of(st, i)));
	return o;
}

/* Headings before the first counter of each group. */
static const char *group_of(unsigned int idx)
{
	switch (idx) {
	case SILO_STAT_RX:
		return "verdicts";
	case SILO_STAT_PASS_NOT_IP:
		return "passed to the stack because";
	case SILO_STAT_FIB_SUCCESS:
		return "bpf_fib_lookup";
	case SILO_STAT_CACHE_HIT:
		return "route cache";
	}
	return NULL;
}

int do_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "per-cpu", no_argument, NULL, 'c' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct silo_stats *per_cpu, total = {};
	bool by_cpu = false;
	int c, ncpus, cpu;
	unsigned int i;
	struct silo *s;

	/* "stats" alone, or "stats show" */
	if (argc > 1 && !strcmp(argv[1], "show")) {
		argc--;
		argv++;
	} else if (argc > 1 && !strcmp(argv[1], "help")) {
		return stats_help(0, NULL);
	}
	optind = 0;
	while ((c = getopt_long(argc, argv, COMMON_SHORTOPTS, opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'c':
			by_cpu = true;
			break;
		case 'h':
			return stats_help(0, NULL);
		default:
			if (common_opt(c))
				break;
			return usage_error("see '%s stats help'\n", prog_name);
		}
	}
	if (optind != argc)
		return usage_error(
			"unknown argument '%s': see '%s stats help'\n",
			argv[optind], prog_name);
	s = open_silo();
	if (!s)
		return 1;
	ncpus = silo_nr_cpus();
	if (ncpus <= 0)
		return 1;
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return 1;
	if (silo_stats_read(s, per_cpu)) {
		free(per_cpu);
		return 1;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_STAT_MAX; i++)
			((__u64 *)&total)[i] += stat_of(&per_cpu[cpu], i);

	if (cli.json) {
		json_object *o = stats_json(&total);

		if (by_cpu) {
			json_object *arr = json_object_new_array();
			json_object *tot = o;

			for (cpu = 0; cpu < ncpus; cpu++)
				json_object_array_add(
					arr, stats_json(&per_cpu[cpu]));
			o = json_object_new_object();
			json_object_object_add(o, "total", tot);
			json_object_object_add(o, "cpus", arr);
		}
		json_print(o);
		free(per_cpu);
		return 0;
	}
	for (i = 0; i < SILO_STAT_MAX; i++) {
		const char *group = group_of(i);

		if (group)
			printf("%s%s:\n", i ? "\n" : "", group);
		printf("  %-20s %12llu", silo_stat_name(i),
		       (unsigned long long)stat_of(&total, i));
		if (by_cpu)
			for (cpu = 0; cpu < ncpus; cpu++)
				printf(" %12llu", (unsigned long long)stat_of(
							  &per_cpu[cpu], i));
		printf("  %s\n", silo_stat_desc(i));
	}
	free(per_cpu);
	return 0;
}
