// SPDX-License-Identifier: GPL-2.0
/* silo doctor: the RSS table against the queues' IRQs and the node. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"

/*
 * An RSS table as read from a fake tree, DIR/ethtool/DEV/rss: a line per
 * field, "rx N", "tx N", "combined N" (channels), "hfunc NAME", "key
 * XX:XX:..", "indir Q Q .." (lines add up), or "unsupported" (a veth).
 */
static int read_fake_rss(const struct doctor *d, const char *dev,
			 struct silo_rss *r)
{
	char path[PATH_MAX], line[4096], *p, *end;
	unsigned long v;
	FILE *f;
	int err = 0;

	memset(r, 0, sizeof(*r));
	snprintf(path, sizeof(path), "%s/ethtool/%s/rss", d->root, dev);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		p = line + strcspn(line, " ");
		if (*p)
			*p++ = '\0';
		if (!strcmp(line, "unsupported")) {
			err = -EOPNOTSUPP;
		} else if (!strcmp(line, "rx") || !strcmp(line, "tx") ||
			   !strcmp(line, "combined")) {
			v = strtoul(p, NULL, 10);
			if (line[0] == 'r')
				r->rx_count = v;
			else if (line[0] == 't')
				r->tx_count = v;
			else
				r->combined_count = v;
			r->has_channels = true;
		} else if (!strcmp(line, "hfunc")) {
			for (v = 1; v && v <= SILO_RSS_HASH_CRC32; v <<= 1)
				if (!strcmp(p, silo_rss_hfunc_name(v)))
					r->hfunc = v;
		} else if (!strcmp(line, "key")) {
			while (*p && r->key_size < SILO_RSS_DEV_KEY_MAX) {
				r->key[r->key_size++] = strtoul(p, &end, 16);
				if (end == p)
					break;
				p = *end == ':' ? end + 1 : end;
			}
		} else if (!strcmp(line, "indir")) {
			while (r->indir_size < SILO_RSS_DEV_INDIR_MAX) {
				v = strtoul(p, &end, 10);
				if (end == p)
					break;
				r->indir[r->indir_size++] = v;
				p = end;
			}
		}
	}
	fclose(f);
	r->rx_queues = r->combined_count + r->rx_count;
	return err;
}

/*
 * The table compactly: its shortest repeating part, with runs written
 * "0-3" (rising by one) and "5*8" (one queue), then how often it repeats:
 * "[0-3] x32" for 0 1 2 3 0 1 2 3 ...
 */
static void indir_str(const struct silo_rss *r, char *buf, size_t len)
{
	unsigned int p, i, j, n = r->indir_size;
	size_t used;

	for (p = 1; p < n; p++) {
		for (i = p; i < n && r->indir[i] == r->indir[i - p]; i++)
			;
		if (i == n)
			break;
	}
	used = snprintf(buf, len, "[");
	for (i = 0; i < p && i < n && used < len; i = j) {
		for (j = i + 1; j < p && r->indir[j] == r->indir[j - 1] + 1;
		     j++)
			;
		if (j - i > 1) {
			used += snprintf(buf + used, len - used, "%s%u-%u",
					 i ? " " : "", r->indir[i],
					 r->indir[j - 1]);
			continue;
		}
		for (j = i + 1; j < p && r->indir[j] == r->indir[i]; j++)
			;
		used += snprintf(buf + used, len - used,
				 j - i > 1 ? "%s%u*%u" : "%s%u", i ? " " : "",
				 r->indir[i], j - i);
	}
	if (used < len)
		used += snprintf(buf + used, len - used, "]");
	if (p < n && used < len)
		snprintf(buf + used, len - used, n % p ? " x%u+%u" : " x%u",
			 n / p, n % p);
}

/* The CPUs of the device's node (all when none), and how many. */
static unsigned int node_cpu_count(const struct doctor *d,
				   const char *node_cpus)
{
	char online[256];
	struct set s;
	unsigned int n = 0, i;

	if (!node_cpus[0] && !read_line(d, "/sys/devices/system/cpu/online",
					online, sizeof(online)))
		node_cpus = online;
	if (!node_cpus[0] || set_parse_list(&s, node_cpus))
		return 1;
	for (i = 0; i < SET_MAX; i++)
		n += set_has(&s, i);
	return n ? n : 1;
}

/* What check_rss finds out about a device's RSS table, step by step. */
struct rss_check {
	const char *dev;
	int node; /* -1: none */
	const char *node_cpus;
	unsigned int nq; /* RX queues */
	struct set in_table, left_out, off_in;
	char fix[1024];
	char key[SILO_RSS_DEV_KEY_MAX * 3 + 1];
};

/* The RX queues (the table may name more than the device says) and how
 * many table entries name each. */
static void rss_queues(struct doctor *d, const struct silo_rss *r, int rx_sysfs,
		       struct rss_check *c)
{
	unsigned int q, i;

	c->nq = r->rx_queues ? r->rx_queues : (unsigned int)rx_sysfs;
	for (i = 0; i < r->indir_size; i++)
		if (r->indir[i] >= c->nq)
			c->nq = r->indir[i] + 1;
	for (q = 0; q < 256; q++)
		d->rss_entries[q] = q < c->nq ? 0 : -1;
	for (i = 0; i < r->indir_size; i++) {
		set_add(&c->in_table, r->indir[i]);
		if (r->indir[i] < 256)
			d->rss_entries[r->indir[i]]++;
	}
}

/* The queues left out of the table and those in it off the node, and the
 * fix: "ethtool -X" weights. */
static void rss_place(const struct doctor *d, struct rss_check *c)
{
	struct set node_set = {};
	unsigned int q, weights = 0, nq = c->nq;
	int node = c->node, cpu;
	size_t used;

	if (node >= 0 && c->node_cpus[0])
		set_parse_list(&node_set, c->node_cpus);
	/* Weights for "ethtool -X": 1 for a queue on the node (or of
	 * unknown place), 0 for one off it. */
	used = snprintf(c->fix, sizeof(c->fix), "ethtool -X %s weight", c->dev);
	for (q = 0; q < nq && q < SET_MAX; q++) {
		bool on, off;

		cpu = q < 256 ? d->irq_cpu[q] : -1;
		off = node >= 0 && cpu >= 0 && !set_has(&node_set, cpu);
		on = node < 0 || (cpu >= 0 && set_has(&node_set, cpu));
		if (on && !set_has(&c->in_table, q))
			set_add(&c->left_out, q);
		if (off && set_has(&c->in_table, q))
			set_add(&c->off_in, q);
		weights += !off;
		if (used < sizeof(c->fix))
			used += snprintf(c->fix + used, sizeof(c->fix) - used,
					 " %d", !off);
	}
	if (weights == nq)
		snprintf(c->fix, sizeof(c->fix), "ethtool -X %s equal %u",
			 c->dev, nq);
	else if (!weights)
		snprintf(
			c->fix, sizeof(c->fix),
			"move the queues' IRQs onto node %d first (the irq checks)",
			node);
}

/* The table's reports: queues left out, queues off the node, or fine. */
static void rss_report_table(struct doctor *d, const struct silo_rss *r,
			     struct rss_check *c)
{
	const char *dev = c->dev;
	char table[384], list[256];

	indir_str(r, table, sizeof(table));
	if (!r->indir_size)
		report(d, INFO, "rss", NULL, "%s: no RSS indirection table",
		       dev);
	if (r->indir_size && !set_empty(&c->left_out) && c->nq > 1) {
		set_list(&c->left_out, list, sizeof(list));
		report(d, WARN, "rss", c->fix,
		       "%s: the RSS table leaves out queues %s%s: their CPUs get no flows (table of %u: %s)",
		       dev, list,
		       c->node >= 0 ? ", whose IRQs are on the device's node" :
				      "",
		       r->indir_size, table);
	}
	if (r->indir_size && !set_empty(&c->off_in)) {
		set_list(&c->off_in, list, sizeof(list));
		report(d, WARN, "rss", c->fix,
		       "%s: the RSS table spreads flows over queues %s, whose IRQs are off the device's NUMA node %d (CPUs %s) (table of %u: %s)",
		       dev, list, c->node, c->node_cpus, r->indir_size, table);
	}
	if (r->indir_size && (set_empty(&c->left_out) || c->nq <= 1) &&
	    set_empty(&c->off_in)) {
		set_list(&c->in_table, list, sizeof(list));
		report(d, OK, "rss", NULL,
		       "%s: the RSS table spreads over queues %s of %u (table of %u: %s)",
		       dev, list, c->nq, r->indir_size, table);
	}
}

/* One RX queue: RSS has nothing to spread over. */
static void rss_one_queue(struct doctor *d, const struct silo_rss *r,
			  struct rss_check *c)
{
	unsigned int max = r->combined_max ? r->combined_max : r->rx_max;
	unsigned int want = node_cpu_count(d, c->node_cpus);

	snprintf(c->fix, sizeof(c->fix), "ethtool -L %s %s %u", c->dev,
		 r->combined_max || !r->rx_max ? "combined" : "rx",
		 max && max < want ? max : want);
	report(d, WARN, "rss-key", c->fix,
	       "%s has one RX queue: RSS cannot spread its flows, all land on one CPU",
	       c->dev);
}

/* The hash key, as text into c->key: reported, and all zero is a warning. */
static void rss_key(struct doctor *d, const struct silo_rss *r,
		    struct rss_check *c)
{
	const char *dev = c->dev;
	unsigned int i;
	size_t used;

	c->key[0] = '\0';
	for (i = 0, used = 0; i < r->key_size; i++)
		used += snprintf(c->key + used, sizeof(c->key) - used, "%s%02x",
				 i ? ":" : "", r->key[i]);
	for (i = 0; i < r->key_size && !r->key[i]; i++)
		;
	if (!r->key_size) {
		report(d, INFO, "rss-key", NULL, "%s: no RSS hash key reported",
		       dev);
	} else if (i == r->key_size) {
		snprintf(
			c->fix, sizeof(c->fix),
			"ethtool -X %s hkey $(od -An -vtx1 -N%u /dev/urandom | tr -d ' \\n' | sed 's/../&:/g; s/:$//')",
			dev, r->key_size);
		report(d, WARN, "rss-key", c->fix,
		       "%s: the RSS hash key is all zero: every flow hashes alike, onto one queue",
		       dev);
	} else {
		report(d, OK, "rss-key", NULL, "%s: %s hash, key %s", dev,
		       silo_rss_hfunc_name(r->hfunc) ?: "unknown", c->key);
	}
}

static void rss_json(struct doctor *d, const struct silo_rss *r,
		     const struct rss_check *c)
{
	json_object *o = json_object_new_object(), *a;
	unsigned int i;

	json_object_object_add(o, "device", json_object_new_string(c->dev));
	json_object_object_add(o, "rx_queues", json_object_new_int(c->nq));
	a = json_object_new_array();
	for (i = 0; i < r->indir_size; i++)
		json_object_array_add(a, json_object_new_int(r->indir[i]));
	json_object_object_add(o, "indir", a);
	json_object_object_add(o, "key", json_object_new_string(c->key));
	json_object_object_add(
		o, "hfunc",
		silo_rss_hfunc_name(r->hfunc) ?
			json_object_new_string(silo_rss_hfunc_name(r->hfunc)) :
			NULL);
	json_object_array_add(d->rss, o);
}

/*
 * Which queues the RSS table spreads over, against where their IRQs run:
 * a queue left out of the table idles its CPU; one in the table whose IRQ
 * is on another node takes flows across the interconnect.
 */
void check_rss(struct doctor *d, const char *dev, int node,
	       const char *node_cpus, int rx_sysfs)
{
	struct rss_check c = {
		.dev = dev,
		.node = node,
		.node_cpus = node_cpus,
	};
	struct silo_rss *r;
	int err;

	memset(d->rss_entries, 0xff, sizeof(d->rss_entries));
	r = calloc(1, sizeof(*r));
	if (!r)
		return;
	err = d->root[0] ? read_fake_rss(d, dev, r) : silo_rss_get(dev, r);
	if (err == -EOPNOTSUPP) {
		report(d, INFO, "rss", NULL,
		       "%s: RSS not supported by %s (a virtual device, or one queue)",
		       dev, dev);
		goto out;
	}
	if (err) {
		report(d, INFO, "rss", NULL, "%s: cannot read RSS: %s", dev,
		       strerror(-err));
		goto out;
	}
	rss_queues(d, r, rx_sysfs, &c);
	rss_place(d, &c);
	rss_report_table(d, r, &c);
	if (c.nq == 1)
		rss_one_queue(d, r, &c);
	rss_key(d, r, &c);
	if (cli.json)
		rss_json(d, r, &c);
out:
	free(r);
}
