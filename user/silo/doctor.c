// SPDX-License-Identifier: GPL-2.0
/*
 * silo doctor [DEV] [--root DIR]: do the CPUs line up? silo keeps a flow on
 * one CPU from the queue to the reader; an IRQ on another CPU, RPS, a
 * reader pinned elsewhere or irqbalance undo that. Each check prints ok,
 * warn or fail and the command that fixes it; then the queue -> IRQ CPU ->
 * socket -> reader CPU map. RSS (through ethtool netlink) and XPS decide
 * which queue, and so which CPU, a flow meets first.
 */
#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

enum level { OK, WARN, FAIL, INFO };
static const char *const level_names[] = { "ok", "warn", "fail", "info" };

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

struct doctor_cfg {
	const char *root;
};

static const struct opt doctor_opts[] = {
	OPTION_STR("root", doctor_cfg, root, "DIR",
		   "read /proc and /sys under DIR (a copy, for tests),\n"
		   "and DEV's RSS from DIR/ethtool/DEV/rss: lines\n"
		   "'combined N', 'rx N', 'tx N', 'hfunc toeplitz',\n"
		   "'key 6d:5a:..', 'indir 0 1 2 3 ..', or 'unsupported'"),
	OPTION_END,
};

static void report(struct doctor *d, enum level lvl, const char *check,
		   const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void report(struct doctor *d, enum level lvl, const char *check,
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
static void path_of(const struct doctor *d, const char *rel, char *path,
		    size_t len)
{
	if (d->sys[0] && !strncmp(rel, "/sys/", 5))
		snprintf(path, len, "%s%s", d->sys, rel + 4);
	else
		snprintf(path, len, "%s%s", d->root, rel);
}

/*
 * /sys shows the devices of the namespace that mounted it: for --netns,
 * a sysfs of that namespace (the process is in it now), mounted in a
 * mount namespace of this process alone, on a directory of its own.
 */
static void mount_netns_sysfs(struct doctor *d)
{
	snprintf(d->sys, sizeof(d->sys), "/tmp/silo-doctor-XXXXXX");
	if (!mkdtemp(d->sys)) {
		d->sys[0] = '\0';
		return;
	}
	if (unshare(CLONE_NEWNS) ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("sysfs", d->sys, "sysfs", MS_RDONLY, NULL)) {
		rmdir(d->sys);
		d->sys[0] = '\0';
	}
}

static void umount_netns_sysfs(struct doctor *d)
{
	if (!d->sys[0])
		return;
	umount2(d->sys, MNT_DETACH);
	rmdir(d->sys);
}

/* The first line of ROOT/rel into buf, without its newline; -errno. */
static int read_line(const struct doctor *d, const char *rel, char *buf,
		     size_t len)
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
static int single_cpu(const char *list)
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
static bool cpu_in_list(int cpu, const char *list)
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

static void check_irqbalance(struct doctor *d)
{
	char path[PATH_MAX], comm[64], rel[64];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/proc", d->root);
	dir = opendir(path);
	if (!dir) {
		report(d, INFO, "irqbalance", NULL, "cannot read %s", path);
		return;
	}
	while ((e = readdir(dir))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(rel, sizeof(rel), "/proc/%.20s/comm", e->d_name);
		if (read_line(d, rel, comm, sizeof(comm)) ||
		    strcmp(comm, "irqbalance"))
			continue;
		/* d_name lives in dir: report before closing it. */
		report(d, WARN, "irqbalance",
		       "systemctl disable --now irqbalance",
		       "irqbalance runs (pid %s): it moves queue IRQs to other CPUs",
		       e->d_name);
		closedir(dir);
		return;
	}
	closedir(dir);
	report(d, OK, "irqbalance", NULL, "not running");
}

/* The queue number at the end of an IRQ's name ("eth0-TxRx-3"), or -1. */
static int queue_of(const char *name)
{
	size_t n = strlen(name);

	while (n && isdigit((unsigned char)name[n - 1]))
		n--;
	return name[n] ? atoi(name + n) : -1;
}

/* Each IRQ /proc/interrupts names after dev: on one CPU, on its node. */
static void check_irqs(struct doctor *d, const char *dev, int node,
		       const char *node_cpus)
{
	char path[PATH_MAX], line[4096], rel[64], aff[256], fix[256];
	int irqs = 0, cpu, q;
	char *name;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/interrupts", d->root);
	f = fopen(path, "r");
	if (!f) {
		report(d, INFO, "irq", NULL, "cannot read %s", path);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned int irq;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, " %u:", &irq) != 1)
			continue;
		name = strrchr(line, ' ');
		if (!name || strncmp(name + 1, dev, strlen(dev)) ||
		    (name[1 + strlen(dev)] != '-' &&
		     name[1 + strlen(dev)] != '\0'))
			continue;
		name++;
		irqs++;
		snprintf(rel, sizeof(rel), "/proc/irq/%u/smp_affinity_list",
			 irq);
		if (read_line(d, rel, aff, sizeof(aff))) {
			report(d, INFO, "irq", NULL,
			       "%s: IRQ %u: cannot read %s", name, irq, rel);
			continue;
		}
		cpu = single_cpu(aff);
		q = queue_of(name);
		if (q >= 0 && q < 256)
			d->irq_cpu[q] = cpu;
		if (cpu < 0) {
			snprintf(fix, sizeof(fix),
				 "echo %d > /proc/irq/%u/smp_affinity_list",
				 q >= 0 ? q : 0, irq);
			report(d, WARN, "irq", fix,
			       "%s: IRQ %u may run on CPUs %s: one CPU keeps its flows on one CPU",
			       name, irq, aff);
		} else if (node >= 0 && node_cpus[0] &&
			   !cpu_in_list(cpu, node_cpus)) {
			snprintf(
				fix, sizeof(fix),
				"echo <a CPU of %s> > /proc/irq/%u/smp_affinity_list",
				node_cpus, irq);
			report(d, WARN, "irq", fix,
			       "%s: IRQ %u on CPU %d, off the device's NUMA node %d (CPUs %s)",
			       name, irq, cpu, node, node_cpus);
		} else {
			report(d, OK, "irq", NULL, "%s: IRQ %u on CPU %d", name,
			       irq, cpu);
		}
	}
	fclose(f);
	if (!irqs)
		report(d, INFO, "irq", NULL,
		       "%s: no IRQs (a virtual device: packets are processed on the CPU that sends them)",
		       dev);
}

/* RPS moves packets off the queue's CPU. */
static int check_queues(struct doctor *d, const char *dev)
{
	char path[PATH_MAX], rel[PATH_MAX], mask[256], fix[PATH_MAX + 64];
	int rx = 0, q;
	struct dirent *e;
	DIR *dir;
	char *p;

	snprintf(rel, sizeof(rel), "/sys/class/net/%s/queues", dev);
	path_of(d, rel, path, sizeof(path));
	dir = opendir(path);
	if (!dir) {
		report(d, INFO, "rps", NULL, "%s: cannot read %s", dev, path);
		return 0;
	}
	while ((e = readdir(dir))) {
		if (strncmp(e->d_name, "rx-", 3))
			continue;
		rx++;
		q = atoi(e->d_name + 3);
		snprintf(rel, sizeof(rel),
			 "/sys/class/net/%s/queues/%s/rps_cpus", dev,
			 e->d_name);
		if (read_line(d, rel, mask, sizeof(mask)))
			continue;
		for (p = mask; *p == '0' || *p == ','; p++)
			;
		if (!*p) {
			report(d, OK, "rps", NULL, "%s rx-%d: RPS off", dev, q);
			continue;
		}
		snprintf(fix, sizeof(fix), "echo 0 > %s", rel);
		report(d, WARN, "rps", fix,
		       "%s rx-%d: RPS sends packets to CPUs %s, off the queue's CPU",
		       dev, q, mask);
	}
	closedir(dir);
	return rx;
}

/* A set of CPUs or queues, as a bitmap. */
#define SET_MAX 4096
struct set {
	unsigned char b[SET_MAX / 8];
};

static void set_add(struct set *s, unsigned int n)
{
	if (n < SET_MAX)
		s->b[n / 8] |= 1U << (n % 8);
}

static bool set_has(const struct set *s, unsigned int n)
{
	return n < SET_MAX && (s->b[n / 8] & (1U << (n % 8)));
}

static bool set_empty(const struct set *s)
{
	unsigned int i;

	for (i = 0; i < sizeof(s->b); i++)
		if (s->b[i])
			return false;
	return true;
}

/* A sysfs mask ("00000000,0000000f"): hex digits, commas between words. */
static int set_parse_mask(struct set *s, const char *mask)
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
static int set_parse_list(struct set *s, const char *list)
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
static void set_list(const struct set *s, char *buf, size_t len)
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
static void set_mask(const struct set *s, char *buf, size_t len)
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

/*
 * Which queues the RSS table spreads over, against where their IRQs run:
 * a queue left out of the table idles its CPU; one in the table whose IRQ
 * is on another node takes flows across the interconnect.
 */
static void check_rss(struct doctor *d, const char *dev, int node,
		      const char *node_cpus, int rx_sysfs)
{
	char table[384], list[256], fix[1024],
		key[SILO_RSS_DEV_KEY_MAX * 3 + 1];
	struct set in_table = {}, left_out = {}, off_in = {}, node_set = {};
	unsigned int nq, q, i, weights = 0;
	struct silo_rss *r;
	size_t used;
	int err, cpu;

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
	nq = r->rx_queues ? r->rx_queues : (unsigned int)rx_sysfs;
	for (i = 0; i < r->indir_size; i++)
		if (r->indir[i] >= nq)
			nq = r->indir[i] + 1;
	for (q = 0; q < 256; q++)
		d->rss_entries[q] = q < nq ? 0 : -1;
	for (i = 0; i < r->indir_size; i++) {
		set_add(&in_table, r->indir[i]);
		if (r->indir[i] < 256)
			d->rss_entries[r->indir[i]]++;
	}
	if (node >= 0 && node_cpus[0])
		set_parse_list(&node_set, node_cpus);
	/* Weights for "ethtool -X": 1 for a queue on the node (or of
	 * unknown place), 0 for one off it. */
	used = snprintf(fix, sizeof(fix), "ethtool -X %s weight", dev);
	for (q = 0; q < nq && q < SET_MAX; q++) {
		bool on, off;

		cpu = q < 256 ? d->irq_cpu[q] : -1;
		off = node >= 0 && cpu >= 0 && !set_has(&node_set, cpu);
		on = node < 0 || (cpu >= 0 && set_has(&node_set, cpu));
		if (on && !set_has(&in_table, q))
			set_add(&left_out, q);
		if (off && set_has(&in_table, q))
			set_add(&off_in, q);
		weights += !off;
		if (used < sizeof(fix))
			used += snprintf(fix + used, sizeof(fix) - used, " %d",
					 !off);
	}
	if (weights == nq)
		snprintf(fix, sizeof(fix), "ethtool -X %s equal %u", dev, nq);
	else if (!weights)
		snprintf(
			fix, sizeof(fix),
			"move the queues' IRQs onto node %d first (the irq checks)",
			node);
	indir_str(r, table, sizeof(table));
	if (!r->indir_size)
		report(d, INFO, "rss", NULL, "%s: no RSS indirection table",
		       dev);
	if (r->indir_size && !set_empty(&left_out) && nq > 1) {
		set_list(&left_out, list, sizeof(list));
		report(d, WARN, "rss", fix,
		       "%s: the RSS table leaves out queues %s%s: their CPUs get no flows (table of %u: %s)",
		       dev, list,
		       node >= 0 ? ", whose IRQs are on the device's node" : "",
		       r->indir_size, table);
	}
	if (r->indir_size && !set_empty(&off_in)) {
		set_list(&off_in, list, sizeof(list));
		report(d, WARN, "rss", fix,
		       "%s: the RSS table spreads flows over queues %s, whose IRQs are off the device's NUMA node %d (CPUs %s) (table of %u: %s)",
		       dev, list, node, node_cpus, r->indir_size, table);
	}
	if (r->indir_size && (set_empty(&left_out) || nq <= 1) &&
	    set_empty(&off_in)) {
		set_list(&in_table, list, sizeof(list));
		report(d, OK, "rss", NULL,
		       "%s: the RSS table spreads over queues %s of %u (table of %u: %s)",
		       dev, list, nq, r->indir_size, table);
	}
	if (nq == 1) {
		unsigned int max =
			r->combined_max ? r->combined_max : r->rx_max;
		unsigned int want = node_cpu_count(d, node_cpus);

		snprintf(fix, sizeof(fix), "ethtool -L %s %s %u", dev,
			 r->combined_max || !r->rx_max ? "combined" : "rx",
			 max && max < want ? max : want);
		report(d, WARN, "rss-key", fix,
		       "%s has one RX queue: RSS cannot spread its flows, all land on one CPU",
		       dev);
	}
	key[0] = '\0';
	for (i = 0, used = 0; i < r->key_size; i++)
		used += snprintf(key + used, sizeof(key) - used, "%s%02x",
				 i ? ":" : "", r->key[i]);
	for (i = 0; i < r->key_size && !r->key[i]; i++)
		;
	if (!r->key_size) {
		report(d, INFO, "rss-key", NULL, "%s: no RSS hash key reported",
		       dev);
	} else if (i == r->key_size) {
		snprintf(
			fix, sizeof(fix),
			"ethtool -X %s hkey $(od -An -vtx1 -N%u /dev/urandom | tr -d ' \\n' | sed 's/../&:/g; s/:$//')",
			dev, r->key_size);
		report(d, WARN, "rss-key", fix,
		       "%s: the RSS hash key is all zero: every flow hashes alike, onto one queue",
		       dev);
	} else {
		report(d, OK, "rss-key", NULL, "%s: %s hash, key %s", dev,
		       silo_rss_hfunc_name(r->hfunc) ?: "unknown", key);
	}
	if (cli.json) {
		json_object *o = json_object_new_object(), *a;

		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		json_object_object_add(o, "rx_queues", json_object_new_int(nq));
		a = json_object_new_array();
		for (i = 0; i < r->indir_size; i++)
			json_object_array_add(a,
					      json_object_new_int(r->indir[i]));
		json_object_object_add(o, "indir", a);
		json_object_object_add(o, "key", json_object_new_string(key));
		json_object_object_add(
			o, "hfunc",
			silo_rss_hfunc_name(r->hfunc) ?
				json_object_new_string(
					silo_rss_hfunc_name(r->hfunc)) :
				NULL);
		json_object_array_add(d->rss, o);
	}
out:
	free(r);
}

/* The TX queue for a CPU in a fix: the one whose RX IRQ runs there. */
static unsigned int txq_of_cpu(const struct doctor *d, unsigned int cpu,
			       unsigned int ntx)
{
	unsigned int q;

	for (q = 0; q < ntx && q < 256; q++)
		if (d->irq_cpu[q] == (int)cpu)
			return q;
	return cpu % ntx;
}

/* Commands that write each changed queue's xps_cpus, into fix. */
static void xps_fix(const char *dir, const struct set *old,
		    const struct set *new, unsigned int ntx, char *fix,
		    size_t len)
{
	char mask[1200];
	size_t used = 0;
	unsigned int q;

	fix[0] = '\0';
	for (q = 0; q < ntx; q++) {
		if (!memcmp(&old[q], &new[q], sizeof(*old)))
			continue;
		set_mask(&new[q], mask, sizeof(mask));
		if (used + strlen(dir) + strlen(mask) + 40 >= len) {
			snprintf(fix + used, len - used, "; ...");
			return;
		}
		used += snprintf(fix + used, len - used,
				 "%secho %s > %s/tx-%u/xps_cpus",
				 used ? "; " : "", mask, dir, q);
	}
}

/*
 * XPS: with several TX queues, a CPU should send on a queue of its own
 * (the one whose completions it handles), else queues are shared and
 * picked by hash.
 */
static void check_xps(struct doctor *d, const char *dev)
{
	char path[PATH_MAX], dir[PATH_MAX], rel[PATH_MAX + 32], buf[1200];
	char fix[2048], list[256];
	struct set *cpus = NULL, *want = NULL, all = {}, online = {}, missing;
	unsigned int ntx = 0, q, c;
	bool rxqs = false, have_online;
	struct dirent *e;
	DIR *dd;

	snprintf(dir, sizeof(dir), "/sys/class/net/%s/queues", dev);
	path_of(d, dir, path, sizeof(path));
	dd = opendir(path);
	if (!dd) {
		report(d, INFO, "xps", NULL, "%s: cannot read %s", dev, path);
		return;
	}
	while ((e = readdir(dd)))
		if (!strncmp(e->d_name, "tx-", 3) &&
		    (unsigned int)atoi(e->d_name + 3) + 1 > ntx)
			ntx = atoi(e->d_name + 3) + 1;
	closedir(dd);
	if (ntx <= 1) {
		report(d, INFO, "xps", NULL, "%s: one TX queue, no XPS to map",
		       dev);
		return;
	}
	cpus = calloc(ntx, sizeof(*cpus));
	want = calloc(ntx, sizeof(*want));
	if (!cpus || !want)
		goto out;
	for (q = 0; q < ntx; q++) {
		snprintf(rel, sizeof(rel), "%s/tx-%u/xps_cpus", dir, q);
		if (read_line(d, rel, buf, sizeof(buf)) ||
		    set_parse_mask(&cpus[q], buf)) {
			report(d, INFO, "xps", NULL, "%s: cannot read %s", dev,
			       rel);
			goto out;
		}
		for (c = 0; c < sizeof(all.b); c++)
			all.b[c] |= cpus[q].b[c];
		snprintf(rel, sizeof(rel), "%s/tx-%u/xps_rxqs", dir, q);
		if (!read_line(d, rel, buf, sizeof(buf)) &&
		    !set_parse_mask(&missing, buf) && !set_empty(&missing))
			rxqs = true;
	}
	have_online = !read_line(d, "/sys/devices/system/cpu/online", buf,
				 sizeof(buf)) &&
		      !set_parse_list(&online, buf) && !set_empty(&online);
	memcpy(want, cpus, ntx * sizeof(*cpus));
	memset(&missing, 0, sizeof(missing));
	for (c = 0; have_online && c < SET_MAX; c++) {
		if (!set_has(&online, c) || set_has(&all, c))
			continue;
		set_add(&missing, c);
		set_add(&want[txq_of_cpu(d, c, ntx)], c);
	}
	xps_fix(dir, cpus, want, ntx, fix, sizeof(fix));
	if (set_empty(&all) && rxqs) {
		report(d, OK, "xps", NULL,
		       "%s: XPS by RX queue (xps_rxqs) over %u TX queues", dev,
		       ntx);
	} else if (set_empty(&all)) {
		report(d, WARN, "xps", have_online ? fix : NULL,
		       "%s has %u TX queues and no XPS map: a CPU picks its queue by hash, and CPUs share queues",
		       dev, ntx);
	} else if (!set_empty(&missing)) {
		set_list(&missing, list, sizeof(list));
		report(d, WARN, "xps", fix,
		       "%s: CPUs %s are in no TX queue's XPS map: they pick queues by hash",
		       dev, list);
	} else {
		report(d, OK, "xps", NULL,
		       "%s: XPS maps every CPU to a TX queue (%u queues)", dev,
		       ntx);
	}
	for (q = 0; q < ntx; q++) {
		json_object *o;

		if (set_empty(&cpus[q]))
			continue;
		set_list(&cpus[q], list, sizeof(list));
		if (!cli.json) {
			printf("map   %s tx-%u <- XPS CPUs %s\n", dev, q, list);
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		json_object_object_add(o, "tx_queue", json_object_new_int(q));
		json_object_object_add(o, "xps_cpus",
				       json_object_new_string(list));
		json_object_array_add(d->map, o);
	}
out:
	free(cpus);
	free(want);
}

/* Whether silo's program sees the VLAN tags DEV strips (silo_xdp_vlan). */
static void check_vlan(struct doctor *d, const char *dev)
{
	char fix[128];
	int v;

	if (!d->s || d->root[0])
		return; /* a fake tree has no devices to ask */
	v = silo_xdp_vlan(d->s, dev);
	if (v == -ENOENT) /* silo does not run on dev */
		return;
	if (v < 0) {
		report(d, INFO, "vlan", NULL,
		       "%s: cannot read its VLAN offloads: %s", dev,
		       strerror(-v));
		return;
	}
	if (v == SILO_XDP_VLAN_IN_FRAME) {
		report(d, OK, "vlan", NULL,
		       "%s leaves VLAN tags in the frame: silo sees them", dev);
	} else if (v == SILO_XDP_VLAN_TOLD) {
		report(d, OK, "vlan", NULL,
		       "%s strips VLAN tags and its driver tells silo's program, which passes tagged frames to the stack",
		       dev);
	} else {
		snprintf(fix, sizeof(fix),
			 "ethtool -K %s rxvlan off rx-vlan-stag-hw-parse off",
			 dev);
		report(d, WARN, "vlan", fix,
		       "%s strips VLAN tags and silo cannot tell (generic XDP, or a driver that does not report them): a tagged frame would be forwarded or steered as untagged",
		       dev);
	}
}

static void check_device(struct doctor *d, const char *dev)
{
	char rel[PATH_MAX], buf[64], cpus[256] = "";
	int node = -1, rx, q;

	snprintf(rel, sizeof(rel), "/sys/class/net/%s/device/numa_node", dev);
	if (!read_line(d, rel, buf, sizeof(buf)))
		node = atoi(buf);
	if (node >= 0) {
		snprintf(rel, sizeof(rel),
			 "/sys/devices/system/node/node%d/cpulist", node);
		read_line(d, rel, cpus, sizeof(cpus));
		report(d, OK, "numa", NULL, "%s: on NUMA node %d (CPUs %s)",
		       dev, node, cpus);
	} else {
		report(d, INFO, "numa", NULL,
		       "%s: no NUMA node (virtual, or one node)", dev);
	}
	memset(d->irq_cpu, 0xff, sizeof(d->irq_cpu));
	check_irqs(d, dev, node, cpus);
	rx = check_queues(d, dev);
	check_rss(d, dev, node, cpus, rx);
	check_vlan(d, dev);
	for (q = 0; q < rx && q < 256; q++) {
		json_object *o;

		if (!cli.json) {
			if (d->irq_cpu[q] < 0 && d->rss_entries[q] < 0)
				continue;
			printf("map   %s rx-%d -> IRQ CPU ", dev, q);
			if (d->irq_cpu[q] >= 0)
				printf("%d", d->irq_cpu[q]);
			else
				printf("?");
			if (d->rss_entries[q] >= 0)
				printf(", %d RSS entries", d->rss_entries[q]);
			printf("\n");
			continue;
		}
		o = json_object_new_object();
		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		json_object_object_add(o, "queue", json_object_new_int(q));
		json_object_object_add(
			o, "irq_cpu",
			d->irq_cpu[q] >= 0 ?
				json_object_new_int(d->irq_cpu[q]) :
				NULL);
		json_object_object_add(
			o, "rss_entries",
			d->rss_entries[q] >= 0 ?
				json_object_new_int(d->rss_entries[q]) :
				NULL);
		json_object_array_add(d->map, o);
	}
	check_xps(d, dev);
}

/* Each occupied slot's reader may run only on the slot's CPU. */
static int check_group(struct silo_group *g, void *ctx)
{
	struct doctor *d = ctx;
	struct silo_group_info info;
	struct silo_group_slot *slots;
	char rel[128], line[256], fix[128];
	unsigned int i;
	FILE *f;

	if (silo_group_info(g, &info))
		return 0;
	slots = calloc(info.group.nr_slots, sizeof(*slots));
	if (!slots || silo_group_slots(g, slots)) {
		free(slots);
		return 0;
	}
	for (i = 0; i < info.group.nr_slots; i++) {
		const struct silo_reuseport_slot *p = &slots[i].placed;
		char path[PATH_MAX], allowed[256] = "";
		__u32 tid = p->tid ? p->tid : p->pid;

		if (!slots[i].cookie || !p->pid)
			continue;
		snprintf(rel, sizeof(rel), "/proc/%u/task/%u/status", p->pid,
			 tid);
		snprintf(path, sizeof(path), "%s%s", d->root, rel);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "Cpus_allowed_list:", 18))
				sscanf(line + 18, " %255s", allowed);
		if (f)
			fclose(f);
		if (cli.json) {
			json_object *o = json_object_new_object();

			json_object_object_add(
				o, "group",
				json_object_new_string(info.group.name));
			json_object_object_add(o, "slot_cpu",
					       json_object_new_int(i));
			json_object_object_add(o, "reader_tid",
					       json_object_new_int(tid));
			json_object_object_add(o, "reader_cpus",
					       json_object_new_string(allowed));
			json_object_array_add(d->map, o);
		} else {
			printf("map   socket slot %u (group %s) -> reader %u on CPUs %s\n",
			       i, info.group.name, tid,
			       allowed[0] ? allowed : "?");
		}
		if (!allowed[0]) {
			report(d, INFO, "reader", NULL,
			       "group %s slot %u: reader %u is gone",
			       info.group.name, i, tid);
		} else if (single_cpu(allowed) == (int)i) {
			report(d, OK, "reader", NULL,
			       "group %s slot %u: reader %u pinned to CPU %u",
			       info.group.name, i, tid, i);
		} else {
			snprintf(fix, sizeof(fix), "taskset -pc %u %u", i, tid);
			report(d, WARN, "reader", fix,
			       "group %s slot %u: reader %u may run on CPUs %s, not only on CPU %u",
			       info.group.name, i, tid, allowed, i);
		}
	}
	free(slots);
	return 0;
}

static void check_silo(struct doctor *d, struct silo *s)
{
	struct silo_envelope_info env;
	struct silo_daemon_info di;
	unsigned int f, bit;
	char why[256];

	if (silo_daemon_info(s, &di)) {
		report(d, FAIL, "silod",
		       "silo xdp load DEV (see 'silo xdp help')",
		       "silo is not loaded in this network namespace");
		return;
	}
	if (di.running && di.cache_trusted)
		report(d, OK, "silod", NULL, "running (pid %u), heartbeat live",
		       di.state.pid);
	else
		report(d, FAIL, "silod",
		       cli.netns ?
			       "silod --netns NAME, or systemctl start silod@NAME" :
			       "silod, or systemctl start silod",
		       "%s: the data path stands aside (every packet to the stack)",
		       di.running ? "silod runs but its heartbeat is not live" :
				    "silod is not running");
	if (silo_envelope_info(s, &env) || !env.loaded)
		return;
	for (f = 0; f < 2; f++) {
		why[0] = '\0';
		for (bit = 0; bit < SILO_ENV_BIT_MAX; bit++)
			if (env.outside[f] & (1U << bit))
				snprintf(why + strlen(why),
					 sizeof(why) - strlen(why), "%s%s",
					 why[0] ? ", " : "",
					 silo_envelope_name(bit));
		if (why[0])
			report(d, WARN, "envelope", "silo xdp status",
			       "IPv%d outside the envelope (%s): its forwarded traffic goes to the stack",
			       f ? 6 : 4, why);
		else
			report(d, OK, "envelope", NULL,
			       "IPv%d inside the envelope", f ? 6 : 4);
	}
}

static int doctor_run(void *parsed, int argc, char **argv)
{
	struct doctor_cfg *cfg = parsed;
	struct doctor d = {};
	struct silo_xdp_dev *devs = NULL;
	struct silo *s = NULL;
	const char *dev = NULL;
	size_t n = 0, i;

	d.root = cfg->root;
	if (argc > 0)
		dev = argv[0];
	if (dev && !d.root[0] && !if_nametoindex(dev) && !cli.netns)
		return usage_error("no device '%s': see 'ip link show'\n", dev);
	if (cli.json) {
		d.checks = json_object_new_array();
		d.map = json_object_new_array();
		d.rss = json_object_new_array();
	}
	s = open_silo();
	d.s = s;
	if (s && cli.netns && !d.root[0])
		mount_netns_sysfs(&d);
	if (s)
		check_silo(&d, s);
	else
		report(&d, FAIL, "silod", "silo xdp load DEV",
		       "cannot open silo here");
	check_irqbalance(&d);
	if (dev) {
		check_device(&d, dev);
	} else if (s && !silo_xdp_list(s, &devs, &n)) {
		for (i = 0; i < n; i++)
			if (devs[i].ifname[0])
				check_device(&d, devs[i].ifname);
		if (!n)
			report(&d, INFO, "devices", NULL,
			       "silo runs on no device: name one");
		free(devs);
	}
	if (s)
		silo_group_foreach(s, check_group, &d);
	umount_netns_sysfs(&d);
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "checks", d.checks);
		json_object_object_add(o, "map", d.map);
		json_object_object_add(o, "rss", d.rss);
		json_object_object_add(o, "ok",
				       json_object_new_int(d.counts[OK]));
		json_object_object_add(o, "warn",
				       json_object_new_int(d.counts[WARN]));
		json_object_object_add(o, "fail",
				       json_object_new_int(d.counts[FAIL]));
		json_print(o);
	} else {
		printf("%d ok, %d warn, %d fail\n", d.counts[OK],
		       d.counts[WARN], d.counts[FAIL]);
	}
	return d.counts[FAIL] ? 1 : 0;
}

static const struct cmd_spec doctor_spec = {
	.name = "doctor",
	.fn = doctor_run,
	.args = "[DEV]",
	.max_args = 1,
	.opts = doctor_opts,
	.help = "checks that the CPUs line up for DEV (default: every device\n"
		"silo runs on): irqbalance not running, each RX queue's IRQ on\n"
		"one CPU (/proc/irq/N/smp_affinity_list) and on the device's\n"
		"NUMA node, no RPS, the RSS table over the queues whose IRQs\n"
		"are on the node (ethtool netlink), a non-zero hash key and\n"
		"more than one queue, every CPU in a TX queue's XPS map, each\n"
		"reuseport slot's reader pinned to the slot's CPU, silod\n"
		"running with a live heartbeat, the forwarding envelope,\n"
		"and that silo sees the VLAN tags DEV strips (a program\n"
		"bound to DEV that asks its driver).\n"
		"Prints ok, warn or fail and the command that fixes it, then\n"
		"the map queue -> IRQ CPU (RSS entries) -> socket -> reader\n"
		"CPU, and each TX queue's XPS CPUs. Exits 1 when a check fails.",
	.cfg_size = sizeof(struct doctor_cfg),
	.cfg_init = &(const struct doctor_cfg){ .root = "" },
};

const struct cmd_object doctor_object = {
	.name = "doctor",
	.summary = "do the CPUs line up: IRQs, RPS, readers, silod",
	.self = &doctor_spec,
};
