// SPDX-License-Identifier: GPL-2.0
/* silo doctor: what every check uses: its report, ROOT's files, CPU sets. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"

static const char *const level_names[] = { "ok", "warn", "fail", "info" };

void report(struct doctor *d, enum level lvl, const char *check,
	    const char *fix, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	d->counts[lvl]++;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "check",
				       json_object_new_string(check));
		json_object_object_add(
			o, "result", json_object_new_string(level_names[lvl]));
		json_object_object_add(o, "detail",
				       json_object_new_string(what));
		if (fix)
			json_object_object_add(o, "fix",
					       json_object_new_string(fix));
		json_object_array_add(d->checks, o);
		return;
	}
	printf("%-4s  %-10s %s\n", level_names[lvl], check, what);
	if (fix)
		printf("      %-10s fix: %s\n", "", fix);
}

/* Where rel ("/proc/...", "/sys/...") is read from. */
void path_of(const struct doctor *d, const char *rel, char *path, size_t len)
{
	if (d->sys[0] && !strncmp(rel, "/sys/", 5))
		snprintf(path, len, "%s%s", d->sys, rel + 4);
	else
		snprintf(path, len, "%s%s", d->root, rel);
}

/* The first line of ROOT/rel into buf, without its newline; -errno. */
int read_line(const struct doctor *d, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	path_of(d, rel, path, sizeof(path));
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* A CPU list ("3", "0-3,8") naming exactly one CPU: that CPU, else -1. */
int single_cpu(const char *list)
{
	char *end;
	long cpu;

	while (isspace((unsigned char)*list))
		list++;
	cpu = strtol(list, &end, 10);
	if (end == list || (*end && !isspace((unsigned char)*end)))
		return -1;
	return cpu;
}

/* Is CPU in list? */
bool cpu_in_list(int cpu, const char *list)
{
	const char *p = list;
	long a, b;
	char *end;

	while (*p) {
		a = strtol(p, &end, 10);
		if (end == p)
			return false;
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (cpu >= a && cpu <= b)
			return true;
		p = *end == ',' ? end + 1 : end;
		if (*end != ',')
			break;
	}
	return false;
}

void set_add(struct set *s, unsigned int n)
{
	if (n < SET_MAX)
		s->b[n / 8] |= 1U << (n % 8);
}

bool set_has(const struct set *s, unsigned int n)
{
	return n < SET_MAX && (s->b[n / 8] & (1U << (n % 8)));
}

bool set_empty(const struct set *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(s->b); i++)
		if (s->b[i])
			return false;
	return true;
}

/* A sysfs mask ("00000000,0000000f"): hex digits, commas between words. */
int set_parse_mask(struct set *s, const char *mask)
{
	size_t n = strlen(mask);
	unsigned int bit = 0, v, i;

	memset(s, 0, sizeof(*s));
	while (n--) {
		if (mask[n] == ',')
			continue;
		if (!isxdigit((unsigned char)mask[n]))
			return -EINVAL;
		v = isdigit((unsigned char)mask[n]) ?
			    (unsigned int)(mask[n] - '0') :
			    (unsigned int)(tolower(mask[n]) - 'a' + 10);
		for (i = 0; i < 4; i++, bit++)
			if (v & (1U << i))
				set_add(s, bit);
	}
	return 0;
}

/* "0-3,8,10-11" into s. */
int set_parse_list(struct set *s, const char *list)
{
	const char *p = list;
	long a, b;
	char *end;

	memset(s, 0, sizeof(*s));
	while (*p) {
		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -EINVAL;
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b && a < SET_MAX; a++)
			set_add(s, a);
		if (*end != ',')
			break;
		p = end + 1;
	}
	return 0;
}

/* s as a list ("0-3,8"), in buf. */
void set_list(const struct set *s, char *buf, size_t len)
{
	unsigned int a, b;
	size_t used = 0;

	buf[0] = '\0';
	for (a = 0; a < SET_MAX; a = b + 1) {
		if (!set_has(s, a)) {
			b = a;
			continue;
		}
		for (b = a; b + 1 < SET_MAX && set_has(s, b + 1); b++)
			;
		if (used < len)
			used += snprintf(buf + used, len - used,
					 a == b ? "%s%u" : "%s%u-%u",
					 used ? "," : "", a, b);
	}
}

/* s as a sysfs mask ("f", "1,00000000"), what xps_cpus takes. */
void set_mask(const struct set *s, char *buf, size_t len)
{
	int word, top = 0, i;
	size_t used = 0;
	__u32 w;

	for (word = 0; word < SET_MAX / 32; word++)
		for (i = 0; i < 4; i++)
			if (s->b[word * 4 + i])
				top = word;
	buf[0] = '\0';
	for (word = top; word >= 0 && used < len; word--) {
		for (w = 0, i = 0; i < 4; i++)
			w |= (__u32)s->b[word * 4 + i] << (8 * i);
		used += snprintf(buf + used, len - used,
				 word == top ? "%x" : ",%08x", w);
	}
}
