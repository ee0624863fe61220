// SPDX-License-Identifier: GPL-2.0
/* silo stats [show] [--per-cpu] [--interval SEC [--count N]] [--format F] */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int stats_show(void *cfg, int argc, char **argv);

struct stats_cfg {
	bool by_cpu;
	double interval;
	__u32 count;
	int format;
};

enum { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROMETHEUS };

static const struct opt_choice formats[] = {
	{ "text", FORMAT_TEXT },
	{ "json", FORMAT_JSON },
	{ "prometheus", FORMAT_PROMETHEUS },
	{ NULL },
};

static int parse_interval(void *cfg, const char *arg)
{
	struct stats_cfg *c = cfg;
	char *end;

	errno = 0;
	c->interval = strtod(arg, &end);
	if (errno || end == arg || *end || !(c->interval >= 0.1) ||
	    c->interval > 3600)
		return -EINVAL;
	return 0;
}

static const struct opt stats_opts[] = {
	OPTION_FLAG("per-cpu", stats_cfg, by_cpu, "one column per CPU"),
	OPTION_FN("interval", parse_interval, "SEC", "seconds, 0.1 to 3600",
		  "rates per second every SEC seconds (0.1 to 3600),\n"
		  "the counters that moved, and the cache hit rate"),
	OPTION_U32("count", stats_cfg, count, "N", 1, UINT32_MAX,
		   "stop after N intervals (default: until interrupted)"),
	OPTION_CHOICE("format", stats_cfg, format, "text|json|prometheus",
		      formats,
		      "text (default), json (as -j), or prometheus: the\n"
		      "text exposition format 0.0.4 that silod --metrics\n"
		      "serves, e.g. for node_exporter's textfile collector\n"
		      "(silod(8), METRICS)"),
	OPTION_END,
};

static const struct cmd_spec stats_show_spec = {
	.name = "show",
	.fn = stats_show,
	.aliases = (const char *const[]){ "list", NULL },
	.opts = stats_opts,
	.help = "packets per verdict, why packets went to the stack,\n"
		"bpf_fib_lookup return codes, and route cache hits, misses\n"
		"and stale entries, summed over CPUs (each CPU counts in\n"
		"its own memory). 'silo stats' alone is 'silo stats show'",
	.cfg_size = sizeof(struct stats_cfg),
};

static const struct cmd_spec *const stats_specs[] = {
	&stats_show_spec,
	NULL,
};

const struct cmd_object stats_object = {
	.name = "stats",
	.summary = "packet counters: verdicts, reasons, FIB codes, cache",
	.cmds = stats_specs,
	.dflt = &stats_show_spec,
};

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

/* Established connections' counters (ct_stats), totals only. */
static json_object *ct_json(const struct silo_conntrack_info *ct)
{
	json_object *o = json_object_new_object();
	unsigned int i;

	for (i = 0; i < SILO_CT_STAT_MAX; i++)
		json_object_object_add(
			o, silo_ct_stat_name(i),
			json_object_new_uint64(((const __u64 *)&ct->stats)[i]));
	return o;
}

static void ct_text(const struct silo_conntrack_info *ct)
{
	unsigned int i;

	printf("\nconntrack (established connections, --forward-established %s):\n",
	       ct->optin ? "on" : "off");
	for (i = 0; i < SILO_CT_STAT_MAX; i++)
		printf("  %-20s %12llu  %s\n", silo_ct_stat_name(i),
		       (unsigned long long)((const __u64 *)&ct->stats)[i],
		       silo_ct_stat_desc(i));
}

/* The totals, and with by_cpu each CPU's counters too. */
static void show_json(const struct silo_stats *total,
		      const struct silo_stats *per_cpu, int ncpus, bool by_cpu,
		      const struct silo_conntrack_info *ct)
{
	json_object *o = stats_json(total);
	int cpu;

	/* Beside the XDP counters (total's keys are struct silo_stats'). */
	if (by_cpu) {
		json_object *arr = json_object_new_array();
		json_object *tot = o;

		for (cpu = 0; cpu < ncpus; cpu++)
			json_object_array_add(arr, stats_json(&per_cpu[cpu]));
		o = json_object_new_object();
		json_object_object_add(o, "total", tot);
		json_object_object_add(o, "cpus", arr);
	}
	json_object_object_add(o, "conntrack", ct_json(ct));
	json_print(o);
}

static void show_text(const struct silo_stats *total,
		      const struct silo_stats *per_cpu, int ncpus, bool by_cpu,
		      const struct silo_conntrack_info *ct)
{
	unsigned int i;
	int cpu;

	if (by_cpu)
		print_cpu_header(ncpus);
	for (i = 0; i < SILO_STAT_MAX; i++) {
		const char *group = group_of(i);

		if (group)
			printf("%s%s:\n", i || by_cpu ? "\n" : "", group);
		printf("  %-20s %12llu", silo_stat_name(i),
		       (unsigned long long)stat_of(total, i));
		if (by_cpu)
			for (cpu = 0; cpu < ncpus; cpu++)
				printf(" %12llu", (unsigned long long)stat_of(
							  &per_cpu[cpu], i));
		printf("  %s\n", silo_stat_desc(i));
	}
	if (ct->optin || ct->stats.forwarded || ct->stats.pass_none)
		ct_text(ct);
}

static int stats_show(void *parsed, int argc __maybe_unused,
		      char **argv __maybe_unused)
{
	struct stats_cfg *cfg = parsed;
	struct silo_stats *per_cpu, total = {};
	struct silo_conntrack_info ct;
	bool by_cpu, prometheus;
	double interval;
	int c, ncpus;
	long count;
	struct silo *s;

	by_cpu = cfg->by_cpu;
	interval = cfg->interval;
	count = cfg->count;
	prometheus = cfg->format == FORMAT_PROMETHEUS;
	if (cfg->format == FORMAT_JSON)
		cli.json = true;
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
	if (silo_conntrack_info(s, &ct))
		memset(&ct, 0, sizeof(ct));

	if (cli.json)
		show_json(&total, per_cpu, ncpus, by_cpu, &ct);
	else
		show_text(&total, per_cpu, ncpus, by_cpu, &ct);
	free(per_cpu);
	return 0;
}
