/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* The metrics (metrics.c) and their parts: the format's lines
 * (metrics_prom.c) and the reuseport selector's (metrics_reuseport.c). */
#ifndef SILO_LIB_METRICS_H
#define SILO_LIB_METRICS_H

#include <stdio.h>
#include "internal.h"

/* The exposition format (metrics_prom.c). */
/* # HELP and # TYPE of name; help escaped. */
void silo_prom_help(FILE *f, const char *name, const char *type,
		    const char *help);
void silo_prom_label_value(FILE *f, const char *v);
void silo_prom_sample(FILE *f, const char *name, const char *label,
		      const char *value, unsigned long long v);

/* A family of samples: its name, HELP and the label that tells them apart. */
struct family {
	const char *name;
	const char *help;
	const char *label; /* NULL: one sample, no label */
};

/* The reuseport selector's counters of every group (ncpus: per-CPU
 * values), summed over CPUs. */
int silo_metrics_put_group_stats(FILE *f, struct silo *s, int ncpus);

#endif /* SILO_LIB_METRICS_H */
