// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Reading silo.conf's YAML nodes: values of a type, and errors that name
 * the line. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>
#include "config_yaml.h"

int y_bad(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	size_t l;
	va_list ap;

	l = snprintf(c->err, c->len, "%s:%zu: ", c->file,
		     n ? n->start_mark.line + 1 : 1);
	if (l < c->len) {
		va_start(ap, fmt);
		vsnprintf(c->err + l, c->len - l, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int y_line(const yaml_node_t *n)
{
	return n->start_mark.line + 1;
}

yaml_node_t *y_node(struct pctx *c, int id)
{
	return yaml_document_get_node(&c->doc, id);
}

const char *y_scalar(struct pctx *c, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE) {
		y_bad(c, n, "%s: a value, not a list or mapping", key);
		return NULL;
	}
	return (const char *)n->data.scalar.value;
}

int y_str(struct pctx *c, const yaml_node_t *n, const char *key, char *buf,
	  size_t len)
{
	const char *v = y_scalar(c, n, key);

	if (!v)
		return -EINVAL;
	if (!v[0] || strlen(v) >= len)
		return y_bad(c, n, "%s: '%s' is %s", key, v,
			     v[0] ? "too long" : "empty");
	strcpy(buf, v);
	return 0;
}

int y_ifname(struct pctx *c, const yaml_node_t *n, const char *key, char *buf,
	     size_t len)
{
	int err = y_str(c, n, key, buf, len);

	if (err)
		return err;
	/* What the kernel takes as a name (dev_valid_name()). */
	if (strlen(buf) >= IF_NAMESIZE || !strcmp(buf, ".") ||
	    !strcmp(buf, "..") || strpbrk(buf, "/: \t\n\v\f\r"))
		return y_bad(
			c, n,
			"%s: '%s' is not an interface name (at most %d characters, "
			"no '/', ':' or space, not '.' or '..')",
			key, buf, IF_NAMESIZE - 1);
	return 0;
}

int y_bool(struct pctx *c, const yaml_node_t *n, const char *key, bool *val)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off" };
	const char *v = y_scalar(c, n, key);
	size_t i;

	if (!v)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(yes); i++) {
		if (!strcasecmp(v, yes[i]) || !strcasecmp(v, no[i])) {
			*val = !strcasecmp(v, yes[i]);
			return 0;
		}
	}
	return y_bad(c, n, "%s: '%s' is not true or false", key, v);
}

int y_u32(struct pctx *c, const yaml_node_t *n, const char *key, __u32 lo,
	  __u32 hi, __u32 *val)
{
	const char *v = y_scalar(c, n, key);
	unsigned long long x;
	char *end;

	if (!v)
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (!v[0] || *end || errno || v[0] == '-' || x < lo || x > hi)
		return y_bad(c, n, "%s: '%s' is not a number from %u to %u",
			     key, v, lo, hi);
	*val = x;
	return 0;
}

/* One of names (ends with NULL); its index in *val. */
int y_choice(struct pctx *c, const yaml_node_t *n, const char *key,
	     const char *const *names, int *val)
{
	const char *v = y_scalar(c, n, key);
	char all[128] = "";
	int i;

	if (!v)
		return -EINVAL;
	for (i = 0; names[i]; i++) {
		if (!strcmp(v, names[i])) {
			*val = i;
			return 0;
		}
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s",
			 i ? ", " : "", names[i]);
	}
	return y_bad(c, n, "%s: '%s' is not one of %s", key, v, all);
}

int y_proto(struct pctx *c, const yaml_node_t *n, int *proto)
{
	static const char *const names[] = { "udp", "tcp", NULL };
	int i, err;

	err = y_choice(c, n, "proto", names, &i);
	if (!err)
		*proto = i ? IPPROTO_TCP : IPPROTO_UDP;
	return err;
}

struct key_node {
	const char *key;
	const yaml_node_t *n;
};

static int key_node_cmp(const void *x, const void *y)
{
	const struct key_node *p = x, *q = y;
	int d = strcmp(p->key, q->key);

	return d ?: y_line(p->n) - y_line(q->n);
}

/* A key given twice in one mapping (YAML says keys are unique, and the
 * last would win unseen): the one the file meets first is named. Sorted:
 * a mapping of many namespaces costs n log n. */
static int keys_unique(struct pctx *c, yaml_node_t *n, const char *what)
{
	size_t i, nr = 0, best = 0;
	struct key_node *k;
	yaml_node_pair_t *pr;
	int err = 0;

	k = calloc(n->data.mapping.pairs.top - n->data.mapping.pairs.start + 1,
		   sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		const yaml_node_t *kn = y_node(c, pr->key);

		/* Keys that are not scalars fail in y_each, with their line. */
		if (kn && kn->type == YAML_SCALAR_NODE)
			k[nr++] = (struct key_node){
				(const char *)kn->data.scalar.value, kn
			};
	}
	qsort(k, nr, sizeof(*k), key_node_cmp);
	for (i = 1; i < nr; i++)
		if (!strcmp(k[i].key, k[i - 1].key) &&
		    (i < 2 || strcmp(k[i - 1].key, k[i - 2].key)) &&
		    (!best || y_line(k[i].n) < y_line(k[best].n)))
			best = i;
	if (best)
		err = y_bad(
			c, k[best].n,
			"key '%s' twice in %s (first at line %d): a key is given once",
			k[best].key, what, y_line(k[best - 1].n));
	free(k);
	return err;
}

int y_each(struct pctx *c, yaml_node_t *n, const char *what, field_fn fn,
	   void *obj)
{
	yaml_node_pair_t *pr;
	int err;

	if (n->type != YAML_MAPPING_NODE)
		return y_bad(c, n, "%s: a mapping of keys and values", what);
	err = keys_unique(c, n, what);
	if (err)
		return err;
	for (pr = n->data.mapping.pairs.start; pr < n->data.mapping.pairs.top;
	     pr++) {
		yaml_node_t *k = y_node(c, pr->key);
		const char *key = y_scalar(c, k, what);

		if (!key)
			return -EINVAL;
		err = fn(c, key, y_node(c, pr->value), obj);
		if (err == -ENOENT)
			return y_bad(c, k,
				     "unknown key '%s' in %s: see silo.conf(5)",
				     key, what);
		if (err)
			return err;
	}
	return 0;
}
