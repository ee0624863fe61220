// SPDX-License-Identifier: GPL-2.0
/*
 * silo doctor [DEV] [--root DIR]: do the CPUs line up? silo keeps a flow on
 * one CPU from the queue to the reader; an IRQ on another CPU, RPS, a
 * reader pinned elsewhere or irqbalance undo that. Each check prints ok,
 * warn or fail and the command that fixes it; then the queue -> IRQ CPU ->
 * socket -> reader CPU map.
 */
#include <ctype.h>
#include <sched.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/mount.h>
#include <unistd.h>
#include "cli.h"

enum level { OK, WARN, FAIL, INFO };
static const char *const level_names[] = { "ok", "warn", "fail", "info" };

struct doctor {
	const char *root; /* prefix of /proc and /sys: tests' fake trees */
	char sys[64]; /* sysfs of --netns NAME's namespace, when mounted */
	json_object *checks, *map;
	int counts[4];
	/* irq_cpu[q]: the one CPU queue q's IRQ runs on, -1: unknown */
	int irq_cpu[256];
};

static int doctor_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("Usage: %s doctor [DEV] [--root DIR]\n"
	       "\n"
	       "Checks that the CPUs line up for DEV (default: every device silo\n"
	       "runs on): irqbalance not running, each RX queue's IRQ on one CPU\n"
	       "(/proc/irq/N/smp_affinity_list) and on the device's NUMA node, no\n"
	       "RPS, each reuseport slot's reader pinned to the slot's CPU, silod\n"
	       "running with a live heartbeat, the forwarding envelope. Prints ok,\n"
	       "warn or fail and the command that fixes it, then the map queue ->\n"
	       "IRQ CPU -> socket -> reader CPU. Exits 1 when a check fails.\n"
	       "  --root DIR   read /proc and /sys under DIR (a copy, for tests)\n"
	       "\n"
	       "Options of every command: -j/--json, -p/--pretty, -h/--help\n",
	       prog_name);
	return 0;
}

static void report(struct doctor *d, enum level lvl, const char *check,
		   const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void report(struct doctor *d, enum level lvl, const char *check,
		   const char *fix, const char *fmt, ...)
{
	char what[512];
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
	for (q = 0; q < rx && q < 256; q++) {
		json_object *o;

		if (!cli.json) {
			if (d->irq_cpu[q] >= 0)
				printf("map   %s rx-%d -> IRQ CPU %d\n", dev, q,
				       d->irq_cpu[q]);
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
		json_object_array_add(d->map, o);
	}
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

int do_doctor(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct doctor d = { .root = "" };
	struct silo_xdp_dev *devs = NULL;
	struct silo *s = NULL;
	const char *dev = NULL;
	size_t n = 0, i;
	int c;

	if (argc > 1 && !strcmp(argv[1], "help"))
		return doctor_help(0, NULL);
	optind = 0;
	while ((c = getopt_long(argc, argv, COMMON_SHORTOPTS, opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'r':
			d.root = optarg;
			break;
		case 'h':
			return doctor_help(0, NULL);
		default:
			if (common_opt(c))
				break;
			return usage_error("see '%s doctor --help'\n",
					   prog_name);
		}
	}
	if (argc - optind > 1)
		return usage_error("usage: %s doctor [DEV] [--root DIR]\n",
				   prog_name);
	if (argc - optind == 1)
		dev = argv[optind];
	if (dev && !d.root[0] && !if_nametoindex(dev) && !cli.netns)
		return usage_error("no device '%s': see 'ip link show'\n", dev);
	if (cli.json) {
		d.checks = json_object_new_array();
		d.map = json_object_new_array();
	}
	s = open_silo();
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
