// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The reuseport selector's counters in the exposition format. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"

/*
 * The reuseport selector's counters of each group, summed over CPUs. Where
 * each goes: every run counts runs and exactly one outcome (so the
 * outcomes add up to the runs), the steps that found no socket on the way,
 * and bpf_sk_select_reuseport's errors. A counter of no rule (one added to
 * abi.h later) still shows, in silo_reuseport_events_total{event="NAME"}.
 * HELP is made from abi.h's descriptions.
 */
static const struct family rp_families[] = {
	{ "silo_reuseport_runs_total", "Reuseport selector", NULL },
	{ "silo_reuseport_migrations_total", "Reuseport selector", NULL },
	{ "silo_reuseport_selections_total",
	  "Reuseport selector runs by outcome, exactly one per run",
	  "outcome" },
	{ "silo_reuseport_select_misses_total",
	  "Reuseport selection steps that found no socket", "step" },
	{ "silo_reuseport_select_errors_total",
	  "Failed bpf_sk_select_reuseport calls by error", "error" },
	{ "silo_reuseport_events_total", "Other reuseport selector counters",
	  "event" },
};

enum { RF_RUNS, RF_MIGRATE, RF_OUTCOME, RF_MISS, RF_ERROR, RF_EVENT };

/* The family of reuseport counter idx and its label value. */
static int rp_family_of(unsigned int idx, const char **value)
{
	const char *name = silo_reuseport_stat_name(idx);

	*value = name;
	switch (idx) {
	case SILO_RSTAT_RUNS:
		return RF_RUNS;
	case SILO_RSTAT_MIGRATE:
		return RF_MIGRATE;
	case SILO_RSTAT_SEL_QUEUE:
	case SILO_RSTAT_SEL_CPU:
	case SILO_RSTAT_SEL_NODE:
	case SILO_RSTAT_HASH_POLICY:
	case SILO_RSTAT_HASH_FALLBACK:
	case SILO_RSTAT_NO_GROUP:
	case SILO_RSTAT_NO_MAP:
		return RF_OUTCOME;
	case SILO_RSTAT_QUEUE_NO_TABLE:
	case SILO_RSTAT_QUEUE_NOT_IP:
	case SILO_RSTAT_QUEUE_NO_CPU:
	case SILO_RSTAT_QUEUE_MISS:
	case SILO_RSTAT_CPU_MISS:
	case SILO_RSTAT_NODE_EMPTY:
	case SILO_RSTAT_NODE_MISS:
		return RF_MISS;
	}
	if (!strncmp(name, "err_", 4)) {
		*value = name + 4;
		return RF_ERROR;
	}
	return RF_EVENT;
}

/* "HEAD: DESC." for one counter; "HEAD (VALUE: DESC; ...)." for a family
 * with a label. */
static void put_rp_help(FILE *f, int fam)
{
	const struct family *fm = &rp_families[fam];
	char *help = NULL;
	const char *value;
	size_t len = 0;
	unsigned int i;
	bool first = true;
	FILE *h;

	h = open_memstream(&help, &len);
	if (!h) {
		silo_prom_help(f, fm->name, "counter", fm->help);
		return;
	}
	fputs(fm->help, h);
	for (i = 0; i < SILO_RSTAT_MAX; i++) {
		if (rp_family_of(i, &value) != fam)
			continue;
		if (!fm->label)
			fprintf(h, ": %s", silo_reuseport_stat_desc(i));
		else
			fprintf(h, "%s%s: %s", first ? " (" : "; ", value,
				silo_reuseport_stat_desc(i));
		first = false;
	}
	fputs(fm->label && !first ? ")." : ".", h);
	if (fclose(h))
		silo_prom_help(f, fm->name, "counter", fm->help);
	else
		silo_prom_help(f, fm->name, "counter", help);
	free(help);
}

struct rp_group {
	char name[SILO_REUSEPORT_NAME_MAX];
	struct silo_reuseport_stats total;
};

struct rp_groups {
	struct rp_group *g;
	size_t n;
	struct silo_reuseport_stats *per_cpu;
	int ncpus;
	int err;
};

static int collect_group(struct silo_group *g, void *ctx)
{
	struct rp_groups *gs = ctx;
	struct rp_group *grown, *rg;
	int cpu;
	unsigned int i;

	if (silo_group_stats(g, gs->per_cpu))
		return 0; /* gone meanwhile: the others still count */
	grown = realloc(gs->g, (gs->n + 1) * sizeof(*gs->g));
	if (!grown) {
		gs->err = -ENOMEM;
		return 1;
	}
	gs->g = grown;
	rg = &gs->g[gs->n++];
	memset(rg, 0, sizeof(*rg));
	snprintf(rg->name, sizeof(rg->name), "%s", silo_group_name(g));
	for (cpu = 0; cpu < gs->ncpus; cpu++)
		for (i = 0; i < SILO_RSTAT_MAX; i++)
			((__u64 *)&rg->total)[i] +=
				((const __u64 *)&gs->per_cpu[cpu])[i];
	return 0;
}

int silo_metrics_put_group_stats(FILE *f, struct silo *s, int ncpus)
{
	struct rp_groups gs = { .ncpus = ncpus };
	unsigned int fam, i;
	const char *value;
	size_t g;
	int err;

	gs.per_cpu = calloc(ncpus, sizeof(*gs.per_cpu));
	if (!gs.per_cpu)
		return -ENOMEM;
	err = silo_group_foreach(s, collect_group, &gs);
	if (gs.err)
		err = gs.err;
	if (err < 0)
		goto out_free;
	err = 0;
	for (fam = 0; fam < ARRAY_SIZE(rp_families); fam++) {
		const struct family *fm = &rp_families[fam];

		/* events: only once abi.h has a counter of no rule. */
		for (i = 0; i < SILO_RSTAT_MAX; i++)
			if (rp_family_of(i, &value) == (int)fam)
				break;
		if (i == SILO_RSTAT_MAX)
			continue;
		put_rp_help(f, fam);
		for (g = 0; g < gs.n; g++) {
			const __u64 *c = (const __u64 *)&gs.g[g].total;

			for (i = 0; i < SILO_RSTAT_MAX; i++) {
				if (rp_family_of(i, &value) != (int)fam)
					continue;
				fprintf(f, "%s{group=", fm->name);
				silo_prom_label_value(f, gs.g[g].name);
				if (fm->label) {
					fprintf(f, ",%s=", fm->label);
					silo_prom_label_value(f, value);
				}
				fprintf(f, "} %llu\n",
					(unsigned long long)c[i]);
			}
		}
	}
out_free:
	free(gs.g);
	free(gs.per_cpu);
	return err;
}
