/* SPDX-License-Identifier: GPL-2.0 */
/* Small statistics shared by silo's benchmarks. */
#ifndef SILO_BENCH_H
#define SILO_BENCH_H

#include <stdlib.h>

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

#endif /* SILO_BENCH_H */
