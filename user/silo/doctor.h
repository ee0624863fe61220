/* SPDX-License-Identifier: GPL-2.0 */
/* silo doctor: what its runner (doctor.c) and its checks share. */
#ifndef SILO_DOCTOR_H
#define SILO_DOCTOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>
#include "silo/silo.h"

enum level { OK, WARN, FAIL, INFO };

struct doctor {
	const char *root; /* prefix of /proc and /sys: tests' fake trees */
	struct silo *s; /* NULL: silo cannot be opened here */
	char sys[64]; /* sysfs of --netns NAME's namespace, when mounted */
	json_object *checks, *map, *rss;
	int counts[4];
	/* irq_cpu[q]: the one CPU queue q's IRQ runs on, -1: unknown */
	int irq_cpu[256];
	/* rss_entries[q]: RSS table entries naming queue q, -1: no table */
	int rss_entries[256];
};

/* A set of CPUs or queues, as a bitmap. */
#define SET_MAX 4096
struct set {
	unsigned char b[SET_MAX / 8];
};

/* doctor_util.c: a result (its fix or NULL), counted and printed. */
void report(struct doctor *d, enum level lvl, const char *check,
	    const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Where rel ("/proc/...", "/sys/...") is read from, and its first line. */
void path_of(const struct doctor *d, const char *rel, char *path, size_t len);
int read_line(const struct doctor *d, const char *rel, char *buf, size_t len);
int single_cpu(const char *list);
bool cpu_in_list(int cpu, const char *list);
void set_add(struct set *s, unsigned int n);
bool set_has(const struct set *s, unsigned int n);
bool set_empty(const struct set *s);
int set_parse_mask(struct set *s, const char *mask);
int set_parse_list(struct set *s, const char *list);
void set_list(const struct set *s, char *buf, size_t len);
void set_mask(const struct set *s, char *buf, size_t len);

/* The checks, each in its file. */
void check_irqbalance(struct doctor *d);
void check_irqs(struct doctor *d, const char *dev, int node,
		const char *node_cpus);
int check_queues(struct doctor *d, const char *dev);
void check_rss(struct doctor *d, const char *dev, int node,
	       const char *node_cpus, int rx_sysfs);
void check_xps(struct doctor *d, const char *dev);
void check_vlan(struct doctor *d, const char *dev);
void check_csum(struct doctor *d, const char *dev);
int check_group(struct silo_group *g, void *ctx);
void check_silo(struct doctor *d, struct silo *s);

#endif /* SILO_DOCTOR_H */
