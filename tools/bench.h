/* SPDX-License-Identifier: GPL-2.0 */
/* Small statistics shared by silo's benchmarks. */
#ifndef SILO_BENCH_H
#define SILO_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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
 * table (i < 0: of main) as a batch line. Needs sh() (tests/test.h).
 */
static inline int bench_routes(const char *ip_args, int routes, int rules,
			       void (*route)(FILE *f, int i, int n,
					     int per_table),
			       const char *last)
{
	int per_table = rules ? routes * 9 / 10 / rules : 0;
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
		fprintf(f, "rule add pref %d lookup %d\n", 100 + i, 100 + i);
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
