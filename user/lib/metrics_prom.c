// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Lines of the Prometheus text exposition format (0.0.4), escaped. */
#include <stdio.h>
#include "metrics.h"

/* HELP text: backslash and newline escaped. */
void silo_prom_help(FILE *f, const char *name, const char *type,
		    const char *help)
{
	fprintf(f, "# HELP %s ", name);
	for (; *help; help++) {
		if (*help == '\\')
			fputs("\\\\", f);
		else if (*help == '\n')
			fputs("\\n", f);
		else
			fputc(*help, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

/* A label value: backslash, double quote and newline escaped. */
void silo_prom_label_value(FILE *f, const char *v)
{
	fputc('"', f);
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

/* name{label="value"} v, or name v without a label. */
void silo_prom_sample(FILE *f, const char *name, const char *label,
		      const char *value, unsigned long long v)
{
	fputs(name, f);
	if (label) {
		fprintf(f, "{%s=", label);
		silo_prom_label_value(f, value);
		fputc('}', f);
	}
	fprintf(f, " %llu\n", v);
}
