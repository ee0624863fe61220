/* SPDX-License-Identifier: GPL-2.0 */
/* Small statistics shared by silo's benchmarks. */
#ifndef SILO_BENCH_H
#define SILO_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include "silo/silo.h"

/* Monotonic time in seconds, for measuring intervals. */
static inline double bench_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The records below are their counters and nothing else. */
_Static_assert(sizeof(struct silo_stats) == SILO_STAT_MAX * sizeof(__u64),
	       "struct silo_stats: SILO_STAT_MAX counters");
_Static_assert(sizeof(struct silo_service_stats) ==
		       SILO_SSTAT_MAX * sizeof(__u64),
	       "struct silo_service_stats: SILO_SSTAT_MAX counters");

/* Per-CPU records of n counters each, summed into sum (n counters). */
static inline void bench_sum_cpus(__u64 *sum, const __u64 *per_cpu, int ncpus,
				  unsigned int n)
{
	unsigned int i;
	int cpu;

	memset(sum, 0, n * sizeof(*sum));
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < n; i++)
			sum[i] += per_cpu[(size_t)cpu * n + i];
}

/* silo's counters summed over the CPUs, into *t: 0 or -errno. */
static inline int bench_silo_stats(struct silo *s, struct silo_stats *t)
{
	int ncpus = silo_nr_cpus(), err;
	struct silo_stats *pc = calloc(ncpus, sizeof(*pc));

	memset(t, 0, sizeof(*t));
	if (!pc)
		return -ENOMEM;
	err = silo_stats_read(s, pc);
	if (!err)
		bench_sum_cpus((__u64 *)t, (__u64 *)pc, ncpus, SILO_STAT_MAX);
	free(pc);
	return err;
}

/* A service's counters summed over the CPUs, into *t: 0 or -errno. */
static inline int bench_service_stats(struct silo *s, __u32 id,
				      struct silo_service_stats *t)
{
	int ncpus = silo_nr_cpus(), err;
	struct silo_service_stats *pc = calloc(ncpus, sizeof(*pc));

	memset(t, 0, sizeof(*t));
	if (!pc)
		return -ENOMEM;
	err = silo_service_stats(s, id, pc);
	if (!err)
		bench_sum_cpus((__u64 *)t, (__u64 *)pc, ncpus, SILO_SSTAT_MAX);
	free(pc);
	return err;
}

/* Pins the calling thread to cpu: 0 or -errno. */
static inline int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* The highest CPU this thread may run on (0 when it cannot tell). */
static inline int bench_last_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = CPU_SETSIZE - 1; cpu > 0; cpu--)
		if (CPU_ISSET(cpu, &set))
			return cpu;
	return 0;
}

/* Pins the calling thread to every CPU it may run on but cpu (to cpu
 * alone where that is all): 0 or -errno. Threads and children it makes
 * afterwards inherit it. */
static inline int bench_pin_other_cpus(int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -errno;
	if (CPU_COUNT(&set) > 1)
		CPU_CLR(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * Seconds cpu has been busy (/proc/stat: user, nice, system, irq and
 * softirq time; not idle, I/O wait or what the hypervisor stole), and of
 * those in softirqs (*softirq, may be NULL; ksoftirqd's included where
 * the kernel accounts IRQ time), in USER_HZ ticks: 0 or -errno.
 */
static inline int bench_cpu_busy(int cpu, double *busy, double *softirq)
{
	unsigned long long v[8];
	char line[512], name[32];
	size_t len;
	FILE *f = fopen("/proc/stat", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	len = snprintf(name, sizeof(name), "cpu%d ", cpu);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) &&
		    sscanf(line + len,
			   "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
			   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7]) == 8) {
			*busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) /
				sysconf(_SC_CLK_TCK);
			if (softirq)
				*softirq = (double)v[6] / sysconf(_SC_CLK_TCK);
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

/* The running kernel's release, for every benchmark line. */
static inline const char *bench_kernel(void)
{
	static struct utsname u;

	if (!u.release[0] && uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	return u.release;
}

/* Every benchmark line's start: what it measures, what drove it (the
 * traffic source) and the kernel; the caller's fields follow (",..."). */
static inline void bench_line(const char *bench, const char *source)
{
	printf("{\"bench\":\"%s\",\"source\":\"%s\",\"kernel\":\"%s\"", bench,
	       source, bench_kernel());
}

/* An fd of ip netns NAME, and entering one: 0 or -errno, said as prog. */
static inline int bench_open_ns(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

static inline int bench_enter(const char *prog, int ns_fd)
{
	if (setns(ns_fd, CLONE_NEWNET)) {
		int err = -errno;

		fprintf(stderr, "%s: setns: %s\n", prog, strerror(-err));
		return err;
	}
	return 0;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of v[0..n-1], n > 0; sorts v. */
static inline double bench_quantile(double *v, int n, double q)
{
	int i = (int)(q * n);

	qsort(v, n, sizeof(*v), bench_cmp_double);
	return v[i < n ? i : n - 1];
}

/* The median of v[0..n-1], n > 0; sorts v. */
static inline double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The benchmarks' routing table, through "ip IP_ARGS -batch": rules policy
 * rules (pref 100+i lookup 100+i) whose tables hold 90 % of the routes, none
 * of them the benchmark's destination; the rest in main, the last of them
 * the benchmark's own route (last). route() writes route n of rule i's
 * table (i < 0: of main) as a batch line. With rule_from, rule_from(f, i)
 * writes rule i instead (one that matches sources, say, that consults its
 * table for none of the benchmark's packets) and every route is in main.
 * Needs sh() (tests/lib/test.h).
 */
static inline int
bench_routes(const char *ip_args, int routes, int rules,
	     void (*route)(FILE *f, int i, int n, int per_table),
	     void (*rule_from)(FILE *f, int i), const char *last)
{
	int per_table = rules && !rule_from ? routes * 9 / 10 / rules : 0;
	int main_routes = routes - per_table * rules, i, n, rc;
	char path[] = "/tmp/silo-bench-XXXXXX";
	FILE *f;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(path);
		return -1;
	}
	for (i = 0; i < rules; i++) {
		if (rule_from)
			rule_from(f, i);
		else
			fprintf(f, "rule add pref %d lookup %d\n", 100 + i,
				100 + i);
		for (n = 0; n < per_table; n++)
			route(f, i, n, per_table);
	}
	for (n = 0; n < main_routes - 1; n++)
		route(f, -1, n, per_table);
	fprintf(f, "%s\n", last);
	fclose(f);
	rc = sh("ip %s -batch %s", ip_args, path);
	unlink(path);
	return rc;
}

#endif /* SILO_BENCH_H */
