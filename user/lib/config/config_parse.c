// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * silo.conf(5): YAML, read with libyaml's document loader (every node
 * keeps its line, so that an error names it), checked whole before apply
 * looks at it: a bad file changes nothing.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config_yaml.h"

/* A list of k's entries into *arr (calloc'ed), *nr of them. */
static int read_list(struct pctx *c, yaml_node_t *n, const char *key,
		     const struct kind *k, void **arr, size_t *nr)
{
	yaml_node_item_t *it;
	size_t i = 0;
	char *a;
	int err;

	if (n->type == YAML_SCALAR_NODE && !n->data.scalar.length)
		return 0; /* "devices:" with nothing after it */
	if (n->type != YAML_SEQUENCE_NODE)
		return y_bad(c, n, "%s: a list (entries start with '- ')", key);
	a = calloc(n->data.sequence.items.top - n->data.sequence.items.start,
		   k->size);
	if (!a)
		return -ENOMEM;
	*arr = a;
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++, i++) {
		yaml_node_t *e = y_node(c, *it);
		void *obj = a + i * k->size;

		*nr = i + 1;
		*(int *)((char *)obj + k->line_off) = y_line(e);
		if (k->init)
			k->init(obj);
		err = y_each(c, e, k->what, k->field, obj);
		if (!err)
			err = k->check(c, e, obj);
		if (err)
			return err;
	}
	return 0;
}

/* The same object declared twice: at line b, first at line a. */
static int twice(struct pctx *c, const char *what, const char *name, int a,
		 int b)
{
	snprintf(c->err, c->len, "%s:%d: %s %s is declared at line %d already",
		 c->file, b, what, name, a);
	return -EINVAL;
}

/* An object's key for the duplicate check, and where it is declared. */
struct key_line {
	const char *a, *b; /* the key: a then b */
	int line;
};

static int key_cmp(const void *x, const void *y)
{
	const struct key_line *p = x, *q = y;
	int d = strcmp(p->a, q->a);

	if (!d)
		d = strcmp(p->b, q->b);
	return d ?: p->line - q->line;
}

static bool same_key(const struct key_line *p, const struct key_line *q)
{
	return !strcmp(p->a, q->a) && !strcmp(p->b, q->b);
}

/*
 * The object declared twice that the file's order meets first (the least
 * second line; both lines named), found sorted: n log n for a file of
 * 100,000 devices, not a comparison of every pair. 0, or twice()'s error.
 */
static int no_twice(struct pctx *c, const char *what, struct key_line *k,
		    size_t n)
{
	size_t i, best = 0;

	qsort(k, n, sizeof(*k), key_cmp);
	/* k[i] is the second of its key where k[i - 1] is the first. */
	for (i = 1; i < n; i++)
		if (same_key(&k[i], &k[i - 1]) &&
		    (i < 2 || !same_key(&k[i - 1], &k[i - 2])) &&
		    (!best || k[i].line < k[best].line))
			best = i;
	if (!best)
		return 0;
	return twice(c, what, k[best].a[0] ? k[best].a : k[best].b,
		     k[best - 1].line, k[best].line);
}

/* A load option at offset off of struct silo_xdp_load_opts. */
static bool load_flag(const struct cfg_device *d, size_t off)
{
	return *(const bool *)((const char *)&d->load + off);
}

/* The firewall bypass (genid.override) and forwarding established
 * connections (genid.ct_optin) are the namespace's, set by every
 * forwarding load: its forwarding devices say the same, or each apply
 * would undo the last one's. */
static int ns_flag_agrees(struct pctx *c, const struct cfg_ns *ns,
			  const char *key, size_t off)
{
	const struct cfg_device *first = NULL, *d;
	size_t i;

	for (i = 0; i < ns->nr_devs; i++) {
		d = &ns->devs[i];
		if (!d->load.forward)
			continue;
		if (!first) {
			first = d;
		} else if (load_flag(d, off) != load_flag(first, off)) {
			snprintf(
				c->err, c->len,
				"%s:%d: %s is the namespace's: every forwarding device says the same (line %d says %s)",
				c->file, d->line, key, first->line,
				load_flag(first, off) ? "true" : "false");
			return -EINVAL;
		}
	}
	return 0;
}

static int bypass_agrees(struct pctx *c, const struct cfg_ns *ns)
{
	int err = ns_flag_agrees(
		c, ns, "allow-firewall-bypass",
		offsetof(struct silo_xdp_load_opts, allow_firewall_bypass));

	return err ? err :
		     ns_flag_agrees(c, ns, "forward-established",
				    offsetof(struct silo_xdp_load_opts,
					     forward_established));
}

static int unique(struct pctx *c, const struct cfg_ns *ns)
{
	size_t i, n, max = ns->nr_devs;
	struct key_line *k;
	char *names;
	int err;

	max = max > ns->nr_svcs ? max : ns->nr_svcs;
	max = max > ns->nr_groups ? max : ns->nr_groups;
	max = max > ns->nr_qmaps ? max : ns->nr_qmaps;
	if (!max)
		return 0;
	k = calloc(max, sizeof(*k));
	names = calloc(ns->nr_svcs ?: 1, CFG_NAME_MAX);
	if (!k || !names) {
		err = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < ns->nr_devs; i++)
		k[i] = (struct key_line){ ns->devs[i].name, ns->devs[i].match,
					  ns->devs[i].line };
	err = no_twice(c, "device", k, ns->nr_devs);
	for (i = 0; !err && i < ns->nr_svcs; i++) {
		cfg_service_name(names + i * CFG_NAME_MAX, CFG_NAME_MAX,
				 &ns->svcs[i].opts);
		k[i] = (struct key_line){ names + i * CFG_NAME_MAX, "",
					  ns->svcs[i].line };
	}
	if (!err)
		err = no_twice(c, "service", k, ns->nr_svcs);
	/* A group without a name gets one of silo's: never the same. */
	for (i = n = 0; !err && i < ns->nr_groups; i++)
		if (ns->groups[i].name[0])
			k[n++] = (struct key_line){ ns->groups[i].name, "",
						    ns->groups[i].line };
	if (!err)
		err = no_twice(c, "reuseport group", k, n);
	for (i = 0; !err && i < ns->nr_qmaps; i++)
		k[i] = (struct key_line){ ns->qmaps[i].dev, "",
					  ns->qmaps[i].line };
	if (!err)
		err = no_twice(c, "queue map of", k, ns->nr_qmaps);
out_free:
	free(names);
	free(k);
	return err;
}

struct ns_ctx {
	struct silo_config *cfg;
	size_t idx; /* cfg->ns moves as namespaces are added */
};

static int netns_field(struct pctx *c, const char *key, yaml_node_t *v,
		       void *obj);

static int ns_field(struct pctx *c, const char *key, yaml_node_t *v, void *obj)
{
	struct ns_ctx *x = obj;
	struct cfg_ns *ns = &x->cfg->ns[x->idx];

	if (!strcmp(key, "devices"))
		return read_list(c, v, key, &cfg_kind_devices,
				 (void **)&ns->devs, &ns->nr_devs);
	if (!strcmp(key, "services"))
		return read_list(c, v, key, &cfg_kind_services,
				 (void **)&ns->svcs, &ns->nr_svcs);
	if (!strcmp(key, "reuseport"))
		return read_list(c, v, key, &cfg_kind_groups,
				 (void **)&ns->groups, &ns->nr_groups);
	if (!strcmp(key, "queue-maps"))
		return read_list(c, v, key, &cfg_kind_qmaps,
				 (void **)&ns->qmaps, &ns->nr_qmaps);
	if (!strcmp(key, "netns") && !ns->name)
		return y_each(c, v, "netns", netns_field, x->cfg);
	return -ENOENT;
}

/* One named namespace: "NAME: {devices: ...}". */
static int netns_field(struct pctx *c, const char *key, yaml_node_t *v,
		       void *obj)
{
	struct silo_config *cfg = obj;
	struct ns_ctx x = { .cfg = cfg };
	struct cfg_ns *ns;
	size_t i;
	int err;

	if (!key[0] || strchr(key, '/') || strlen(key) >= NAME_MAX)
		return y_bad(c, v, "netns: '%s' is not a namespace name", key);
	for (i = 1; i < cfg->nr_ns; i++)
		if (!strcmp(cfg->ns[i].name, key))
			return y_bad(c, v, "netns: %s twice", key);
	ns = realloc(cfg->ns, (cfg->nr_ns + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	cfg->ns = ns;
	ns = &cfg->ns[cfg->nr_ns++];
	memset(ns, 0, sizeof(*ns));
	ns->name = strdup(key);
	if (!ns->name)
		return -ENOMEM;
	x.idx = cfg->nr_ns - 1;
	if (v->type == YAML_SCALAR_NODE && !v->data.scalar.length)
		return 0;
	err = y_each(c, v, "a namespace", ns_field, &x);
	if (!err)
		err = unique(c, ns);
	return err ? err : bypass_agrees(c, ns);
}

static int parse_doc(struct pctx *c, struct silo_config *cfg)
{
	yaml_node_t *root = yaml_document_get_root_node(&c->doc);
	struct ns_ctx x = { .cfg = cfg, .idx = 0 };
	int err;

	if (!root ||
	    (root->type == YAML_SCALAR_NODE && !root->data.scalar.length))
		return 0; /* an empty file: nothing declared */
	err = y_each(c, root, "the file", ns_field, &x);
	if (!err)
		err = unique(c, &cfg->ns[0]);
	return err ? err : bypass_agrees(c, &cfg->ns[0]);
}

static int load(struct pctx *c, FILE *f, struct silo_config *cfg)
{
	yaml_parser_t parser;
	int err = 0;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &c->doc)) {
		snprintf(c->err, c->len, "%s:%zu: %s%s%s", c->file,
			 parser.problem_mark.line + 1,
			 parser.context ? parser.context : "",
			 parser.context ? ": " : "",
			 parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	err = parse_doc(c, cfg);
	yaml_document_delete(&c->doc);
	yaml_parser_delete(&parser);
	return err;
}

int silo_config_read(const char *path, struct silo_config **out, char *err,
		     size_t len)
{
	struct pctx c = { .file = path, .err = err, .len = len };
	struct silo_config *cfg;
	FILE *f = stdin;
	int ret;

	*out = NULL;
	err[0] = '\0';
	if (strcmp(path, "-")) {
		f = fopen(path, "re");
		if (!f) {
			ret = -errno;
			snprintf(err, len, "%s: %s", path, strerror(-ret));
			return ret;
		}
	} else {
		c.file = "<stdin>";
	}
	cfg = calloc(1, sizeof(*cfg));
	if (cfg)
		cfg->ns = calloc(1, sizeof(*cfg->ns));
	if (!cfg || !cfg->ns) {
		ret = -ENOMEM;
		goto out;
	}
	cfg->nr_ns = 1;
	ret = load(&c, f, cfg);
out:
	if (f != stdin)
		fclose(f);
	if (ret) {
		silo_config_free(cfg);
		return ret;
	}
	*out = cfg;
	return 0;
}

void silo_config_free(struct silo_config *cfg)
{
	size_t i, j;

	if (!cfg)
		return;
	for (i = 0; i < cfg->nr_ns; i++) {
		free(cfg->ns[i].name);
		free(cfg->ns[i].devs);
		free(cfg->ns[i].svcs);
		for (j = 0; j < cfg->ns[i].nr_groups; j++)
			free(cfg->ns[i].groups[j].known);
		free(cfg->ns[i].groups);
		free(cfg->ns[i].qmaps);
	}
	free(cfg->ns);
	free(cfg);
}

struct cfg_ns *cfg_ns_find(const struct silo_config *cfg, const char *netns)
{
	size_t i;

	if (!netns)
		return &cfg->ns[0];
	for (i = 1; i < cfg->nr_ns; i++)
		if (!strcmp(cfg->ns[i].name, netns))
			return &cfg->ns[i];
	return NULL;
}

size_t silo_config_nr_netns(const struct silo_config *cfg)
{
	return cfg->nr_ns - 1;
}

const char *silo_config_netns(const struct silo_config *cfg, size_t i)
{
	return i + 1 < cfg->nr_ns ? cfg->ns[i + 1].name : NULL;
}

bool silo_config_has_groups(const struct silo_config *cfg, const char *netns)
{
	const struct cfg_ns *ns = cfg_ns_find(cfg, netns);

	return ns && ns->nr_groups;
}

bool silo_config_has_device(const struct silo_config *cfg, const char *netns,
			    const char *ifname)
{
	const struct cfg_ns *ns = cfg_ns_find(cfg, netns);
	size_t i;

	for (i = 0; ns && i < ns->nr_devs; i++)
		if (!strcmp(ns->devs[i].name, ifname) ||
		    (ns->devs[i].match[0] &&
		     !fnmatch(ns->devs[i].match, ifname, 0)))
			return true;
	return false;
}
