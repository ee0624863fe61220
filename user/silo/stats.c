// SPDX-License-Identifier: GPL-2.0
/* silo stats [show] [--per-cpu] [--interval SEC [--count N]] [--format F] */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "../lib/internal.h"

static int stats_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: %s stats [show] [--per-cpu] [--interval SEC [--count N]]\n"
	       "                [--format text|json|prometheus]\n"
	       "\n"
	       "Packets per verdict, why packets went to the stack, bpf_fib_lookup\n"
	       "return codes, and route cache hits, misses and stale entries,\n"
	       "summed over CPUs (each CPU counts in its own memory).\n"
	       "  --per-cpu        one column per CPU\n"
	       "  --interval SEC   rates per second every SEC seconds (0.1 to 3600),\n"
	       "                   the counters that moved, and the cache hit rate\n"
	       "  --count N        stop after N intervals (default: until interrupted)\n"
	       "  --format F       text (default), json (as -j), or prometheus: the\n"
	       "                   text exposition format 0.0.4 that silod --metrics\n"
	       "                   serves, e.g. for node_exporter's textfile collector\n"
	       "                   (README \"Metrics\")\n"
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

static const char *cpu_label(int cpu)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "cpu%d", cpu);
	return buf;
}

/* The --per-cpu columns' header line. */
static void print_cpu_header(int ncpus)
{
	int cpu;

	printf("  %-20s %12s", "COUNTER", "TOTAL");
	for (cpu = 0; cpu < ncpus; cpu++)
		printf(" %12s", cpu_label(cpu));
	printf("\n");
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	return silo_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

static void sum_cpus(const struct silo_stats *per_cpu, int ncpus,
		     struct silo_stats *total)
{
	unsigned int i;
	int cpu;

	memset(total, 0, sizeof(*total));
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_STAT_MAX; i++)
			((__u64 *)total)[i] += stat_of(&per_cpu[cpu], i);
}

/* Route cache hits over lookups that could have hit; -1 without any. */
static double hit_rate(const struct silo_stats *d)
{
	double all = (double)d->cache_hit + d->cache_miss + d->cache_stale +
		     d->cache_race;

	return all > 0 ? d->cache_hit / all : -1;
}

/* b - a, per counter. */
static void delta(const struct silo_stats *a, const struct silo_stats *b,
		  struct silo_stats *d)
{
	unsigned int i;

	for (i = 0; i < SILO_STAT_MAX; i++)
		((__u64 *)d)[i] = stat_of(b, i) - stat_of(a, i);
}

static json_object *rates_json(const struct silo_stats *d, double secs)
{
	json_object *o = json_object_new_object();
	unsigned int i;

	for (i = 0; i < SILO_STAT_MAX; i++)
		json_object_object_add(
			o, silo_stat_name(i),
			json_object_new_uint64(
				(__u64)(stat_of(d, i) / secs + 0.5)));
	return o;
}

/*
 * One interval: rates per second of the counters that moved (rx, pass and
 * redirect always), as xdp-bench prints them, then the hit rate.
 */
static void print_interval(const struct silo_stats *d,
			   const struct silo_stats *d_cpu, int ncpus,
			   double secs, bool by_cpu)
{
	double hr = hit_rate(d);
	unsigned int i;
	int cpu;

	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "interval_s",
				       json_object_new_double(secs));
		json_object_object_add(o, "rates", rates_json(d, secs));
		json_object_object_add(o, "cache_hit_rate",
				       hr < 0 ? NULL :
						json_object_new_double(hr));
		if (by_cpu) {
			json_object *arr = json_object_new_array();

			for (cpu = 0; cpu < ncpus; cpu++)
				json_object_array_add(
					arr, rates_json(&d_cpu[cpu], secs));
			json_object_object_add(o, "cpus", arr);
		}
		/* One object a line: a stream for jq. */
		printf("%s\n", json_object_to_json_string_ext(
				       o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
		fflush(stdout);
		return;
	}
	printf("period %.3f s, per second:\n", secs);
	if (by_cpu)
		print_cpu_header(ncpus);
	for (i = 0; i < SILO_STAT_MAX; i++) {
		if (!stat_of(d, i) && i != SILO_STAT_RX &&
		    i != SILO_STAT_PASS && i != SILO_STAT_REDIRECT)
			continue;
		printf("  %-20s %12.0f", silo_stat_name(i),
		       stat_of(d, i) / secs);
		if (by_cpu)
			for (cpu = 0; cpu < ncpus; cpu++)
				printf(" %12.0f",
				       stat_of(&d_cpu[cpu], i) / secs);
		printf("  %s\n", silo_stat_desc(i));
	}
	if (hr >= 0)
		printf("  route cache hit rate %.1f %%\n", 100 * hr);
	printf("\n");
	fflush(stdout);
}

/* Rates every secs seconds, count times (0: until a signal). */
static int stats_watch(struct silo *s, int ncpus, double secs, long count,
		       bool by_cpu)
{
	struct silo_stats *prev, *cur, *d_cpu, t0, t1, d;
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec ts;
	double t_prev, t_cur;
	int err = 1, cpu;
	long n;

	prev = calloc(ncpus, sizeof(*prev));
	cur = calloc(ncpus, sizeof(*cur));
	d_cpu = calloc(ncpus, sizeof(*d_cpu));
	if (!prev || !cur || !d_cpu)
		goto out;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (silo_stats_read(s, prev))
		goto out;
	t_prev = now_s();
	for (n = 0; !stop && (!count || n < count); n++) {
		ts.tv_sec = (time_t)secs;
		ts.tv_nsec = (long)((secs - ts.tv_sec) * 1e9);
		/* A signal ends the wait early: print what it measured. */
		nanosleep(&ts, NULL);
		if (silo_stats_read(s, cur))
			goto out;
		t_cur = now_s();
		sum_cpus(prev, ncpus, &t0);
		sum_cpus(cur, ncpus, &t1);
		delta(&t0, &t1, &d);
		for (cpu = 0; cpu < ncpus; cpu++)
			delta(&prev[cpu], &cur[cpu], &d_cpu[cpu]);
		print_interval(&d, d_cpu, ncpus, t_cur - t_prev, by_cpu);
		memcpy(prev, cur, ncpus * sizeof(*prev));
		t_prev = t_cur;
	}
	err = 0;
out:
	free(prev);
	free(cur);
	free(d_cpu);
	return err;
}

int do_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "per-cpu", no_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "format", required_argument, NULL, 'f' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct silo_stats *per_cpu, total = {};
	double interval = 0;
	bool by_cpu = false, prometheus = false;
	long count = 0;
	int c, ncpus, cpu;
	char *end;
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
		case 'i':
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(interval >= 0.1) || interval > 3600)
				return usage_error(
					"bad --interval '%s': seconds, 0.1 to 3600\n",
					optarg);
			break;
		case 'n':
			errno = 0;
			count = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || count < 1)
				return usage_error(
					"bad --count '%s': a number of intervals, 1 or more\n",
					optarg);
			break;
		case 'f':
			if (!strcmp(optarg, "prometheus")) {
				prometheus = true;
			} else if (!strcmp(optarg, "json")) {
				cli.json = true;
			} else if (strcmp(optarg, "text")) {
				return usage_error(
					"bad --format '%s': text, json or prometheus\n",
					optarg);
			}
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
	if (count && !interval)
		return usage_error(
			"--count needs --interval: see '%s stats help'\n",
			prog_name);
	if (prometheus && (interval || by_cpu || cli.json))
		return usage_error(
			"--format prometheus goes with no --interval, --per-cpu or -j\n");
	s = open_silo();
	if (!s)
		return 1;
	if (prometheus) {
		c = silo_metrics_write(s, stdout);
		if (c)
			fprintf(stderr,
				"%s: error: cannot read the metrics: %s\n",
				prog_name, strerror(-c));
		return c ? 1 : 0;
	}
	ncpus = silo_nr_cpus();
	if (ncpus <= 0)
		return 1;
	if (interval)
		return stats_watch(s, ncpus, interval, count, by_cpu);
	per_cpu = calloc(ncpus, sizeof(*per_cpu));
	if (!per_cpu)
		return 1;
	if (silo_stats_read(s, per_cpu)) {
		free(per_cpu);
		return 1;
	}
	sum_cpus(per_cpu, ncpus, &total);

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
	if (by_cpu)
		print_cpu_header(ncpus);
	for (i = 0; i < SILO_STAT_MAX; i++) {
		const char *group = group_of(i);

		if (group)
			printf("%s%s:\n", i || by_cpu ? "\n" : "", group);
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
