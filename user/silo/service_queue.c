// SPDX-License-Identifier: GPL-2.0
/* silo service queue-map: the CPU each RX queue steers to (queue mode). */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

struct squeue_cfg {
	bool dflt;
};

static const struct opt qmap_opts[] = {
	OPTION_FLAG("default", squeue_cfg, dflt,
		    "from the queues' IRQ affinity\n"
		    "(/proc/irq/N/smp_affinity_list)"),
	OPTION_END,
};

static int service_queue_map(void *cfg, int argc, char **argv);

const struct cmd_spec service_queue_map_spec = {
	.name = "queue-map",
	.fn = service_queue_map,
	.args = "DEV [QUEUE=CPU|QUEUE=none ...]",
	.min_args = 1,
	.max_args = 1 + SILO_MAX_QUEUES,
	.opts = qmap_opts,
	.help = "show or set the CPU that DEV's RX queues steer to (queue\n"
		"mode); an unset queue is passed where it arrives",
	.cfg_size = sizeof(struct squeue_cfg),
};

/* RX queues of dev, from sysfs (queues/rx-N): at least 1. */
static __u32 rx_queues(const char *dev)
{
	char path[PATH_MAX];
	__u32 n;

	for (n = 0; n < SILO_MAX_QUEUES; n++) {
		snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u",
			 dev, n);
		if (access(path, F_OK))
			break;
	}
	return n ? n : 1;
}

/* QUEUE=CPU or QUEUE=none (*cpu SILO_SERVICE_NO_CPU): 0 or -EINVAL. */
static int pair_parse(const char *arg, __u32 *q, __u32 *cpu)
{
	const char *eq = strchr(arg, '=');
	char qs[16];

	if (!eq || eq - arg >= (long)sizeof(qs))
		return -EINVAL;
	memcpy(qs, arg, eq - arg);
	qs[eq - arg] = '\0';
	*cpu = SILO_SERVICE_NO_CPU;
	if (parse_u32(qs, q) || *q >= SILO_MAX_QUEUES ||
	    (strcmp(eq + 1, "none") && parse_u32(eq + 1, cpu)))
		return -EINVAL;
	return 0;
}

/* Each of argv[1 .. argc-1] a pair: EXIT_USAGE, said. */
static int pairs_check(int argc, char **argv)
{
	__u32 q, cpu;
	int i;

	for (i = 1; i < argc; i++)
		if (pair_parse(argv[i], &q, &cpu))
			return usage_error(
				"bad '%s': QUEUE=CPU or QUEUE=none\n", argv[i]);
	return 0;
}

/* dev's RX queues as the device says (ethtool channels, read in silo's
 * namespace); 0 when it does not say. */
static __u32 queue_count(const char *dev)
{
	struct silo_rss *rss = calloc(1, sizeof(*rss));
	__u32 n = 0;

	if (rss && silo_rss_get(dev, rss) != -ENODEV && rss->has_channels)
		n = rss->rx_queues;
	free(rss);
	return n;
}

/* Every QUEUE=CPU names one of dev's n RX queues: EXIT_USAGE, said. */
static int pairs_in_range(const char *dev, __u32 n, int argc, char **argv)
{
	__u32 q, cpu;
	int i;

	for (i = 1; n && i < argc; i++) {
		pair_parse(argv[i], &q, &cpu); /* pairs_check() took it */
		if (q >= n)
			return usage_error(
				"no RX queue %u on %s: it has %u (0 to %u): see 'ethtool -l %s'\n",
				q, dev, n, n - 1, dev);
	}
	return 0;
}

static void queue_cpus_print(const char *dev, const __u32 *cpus, __u32 n)
{
	__u32 q;

	if (cli.json) {
		json_object *o = json_object_new_object(), *arr;

		json_object_object_add(o, "device",
				       json_object_new_string(dev));
		arr = json_object_new_array();
		for (q = 0; q < n; q++)
			json_object_array_add(
				arr, cpus[q] == SILO_SERVICE_NO_CPU ?
					     NULL :
					     json_object_new_int(cpus[q]));
		json_object_object_add(o, "queue_cpu", arr);
		json_print(o);
	} else {
		printf("%s:", dev);
		for (q = 0; q < n; q++)
			if (cpus[q] == SILO_SERVICE_NO_CPU)
				printf(" %u=none", q);
			else
				printf(" %u=%u", q, cpus[q]);
		printf("\n");
	}
}

static int service_queue_map(void *parsed, int argc, char **argv)
{
	struct squeue_cfg *cfg = parsed;
	bool dflt;
	const char *dev;
	__u32 ifindex, n, q, cpu, *cpus;
	struct silo *s;
	int i, err;

	dflt = cfg->dflt;
	dev = argv[0];
	/* Check every pair before setting any. */
	if (pairs_check(argc, argv))
		return EXIT_USAGE;
	s = open_silo();
	if (!s)
		return 1;
	ifindex = if_nametoindex(dev);
	if (!ifindex) {
		usage_error("no device '%s': see 'ip link show'\n", dev);
		return 1;
	}
	/* sysfs is the caller's namespace's: the channels are silo's. */
	n = queue_count(dev);
	if (pairs_in_range(dev, n, argc, argv))
		return EXIT_USAGE;
	if (dflt && silo_queue_map_default(s, dev, NULL) < 0)
		return 1;
	for (i = 1; i < argc; i++) {
		pair_parse(argv[i], &q, &cpu);
		if (silo_queue_map_set(s, ifindex, q, cpu))
			return 1;
	}
	if (!n)
		n = rx_queues(dev);
	cpus = calloc(n, sizeof(*cpus));
	if (!cpus)
		return 1;
	err = silo_queue_map_get(s, ifindex, cpus, n);
	if (err) {
		free(cpus);
		return 1;
	}
	queue_cpus_print(dev, cpus, n);
	free(cpus);
	return 0;
}
