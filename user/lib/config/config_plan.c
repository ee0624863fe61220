// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The list of changes an apply makes or, dry, would make. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "config.h"
#include "../maps.h"
#include "../pins.h"

struct silo_change *plan_add(struct plan *p, enum silo_change_op op,
			     const char *object, int line, const char *fmt, ...)
{
	static struct silo_change spare; /* when out of memory */
	struct silo_change *c;
	va_list ap;

	if (p->nr == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;

		c = realloc(p->changes, cap * sizeof(*c));
		if (!c) {
			p->err = p->err ?: -ENOMEM;
			return memset(&spare, 0, sizeof(spare));
		}
		p->changes = c;
		p->cap = cap;
	}
	c = &p->changes[p->nr++];
	memset(c, 0, sizeof(*c));
	c->op = op;
	c->object = object;
	c->line = line;
	va_start(ap, fmt);
	vsnprintf(c->name, sizeof(c->name), fmt, ap);
	va_end(ap);
	return c;
}

void plan_done(struct plan *p, struct silo_change *c, int err)
{
	c->err = err;
	if (err && !p->err)
		p->err = err;
}

bool cfg_loaded(struct silo *s)
{
	struct silo_maps m;

	if (silo_maps_open(s, &m))
		return false;
	silo_maps_close(&m);
	return true;
}

int cfg_maps_view(struct silo *s, struct cfg_maps_view *v)
{
	struct silo_genid g;
	struct silo_maps m;
	__u32 zero = 0;
	int err;

	memset(v, 0, sizeof(*v));
	err = silo_maps_open(s, &m);
	if (err)
		return err;
	err = silo_maps_cache_size(&m, &v->cache_size);
	if (!err && bpf_map_lookup_elem(m.fd[SILO_MAP_GENID], &zero, &g))
		err = -errno;
	if (!err) {
		v->bypass = g.override != 0;
		v->established = g.ct_optin != 0;
	}
	silo_maps_close(&m);
	return err;
}

void cfg_cpus_str(char *buf, size_t len, const __u64 *cpus)
{
	size_t i, l;

	buf[0] = '\0';
	for (i = 0; i < SILO_CPU_WORDS * 64; i++) {
		if (!(cpus[i / 64] & (1ULL << (i % 64))))
			continue;
		l = strlen(buf);
		snprintf(buf + l, len - l, "%s%zu", l ? "," : "", i);
	}
}

/* Tests only: SILO_TEST_FAIL_REMOVE="OBJECT NAME" makes that removal fail
 * (-EIO), as one the kernel refuses would. */
static int removal(struct plan *p, const char *object, const char *name,
		   plan_remove_fn fn, void *ctx)
{
	const char *fail = getenv("SILO_TEST_FAIL_REMOVE");
	size_t l = strlen(object);

	if (fail && !strncmp(fail, object, l) && fail[l] == ' ' &&
	    !strcmp(fail + l + 1, name))
		return -EIO;
	return fn(p, name, true, ctx);
}

void plan_remove_unclaimed(struct plan *p, enum cfg_kind kind,
			   const char *object, const char *detail,
			   plan_remove_fn fn, void *ctx)
{
	struct silo_change *c;
	const char *name;
	size_t i;

	for (i = 0; i < p->old.nr[kind]; i++) {
		name = p->old.names[kind][i];
		if (cfg_owned_has(&p->now, kind, name) ||
		    fn(p, name, false, ctx) <= 0)
			continue;
		c = plan_add(p, SILO_CHANGE_REMOVE, object, 0, "%s", name);
		snprintf(c->detail, sizeof(c->detail), "%s", detail);
		if (!p->opts->dry_run)
			plan_done(p, c, removal(p, object, name, fn, ctx));
		/* Not removed: still apply's, tried again at the next. */
		if (c->err)
			cfg_owned_add(&p->now, kind, name);
	}
}
