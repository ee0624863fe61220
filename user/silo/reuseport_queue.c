// SPDX-License-Identifier: GPL-2.0
/*
 * silo reuseport queue-map GROUP [...]: show or set the RSS table of a group
 * (policy queue). Set by hand, faked for a device without RSS (veth), or
 * read from a device with --dev (ethtool netlink's RSS key and indirection
 * table, the queues' IRQ affinity), which silod then keeps current.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

/* The key of Microsoft's RSS verification data: the default of a faked
 * table (a real NIC's comes with it). */
static const char default_key[] =
	"6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa";

static const struct {
	const char *name;
	__u32 bit;
} port_flows[] = {
	{ "udp4", SILO_RSS_PORTS_UDP4 },
	{ "udp6", SILO_RSS_PORTS_UDP6 },
	{ "tcp4", SILO_RSS_PORTS_TCP4 },
	{ "tcp6", SILO_RSS_PORTS_TCP6 },
};

#define NR_PORT_FLOWS (sizeof(port_flows) / sizeof(port_flows[0]))

/* "6d:5a:..." or "6d5a..." */
static int parse_key(const char *s, struct silo_reuseport_queues *q)
{
	__u32 n = 0;
	int hi, lo;

	while (*s) {
		if (*s == ':' && n) {
			s++;
			continue;
		}
		if (!isxdigit((unsigned char)s[0]) ||
		    !isxdigit((unsigned char)s[1]) || n == SILO_RSS_KEY_MAX)
			return -EINVAL;
		hi = isdigit((unsigned char)s[0]) ? s[0] - '0' :
						    tolower(s[0]) - 'a' + 10;
		lo = isdigit((unsigned char)s[1]) ? s[1] - '0' :
						    tolower(s[1]) - 'a' + 10;
		q->key[n++] = hi << 4 | lo;
		s += 2;
	}
	if (n < SILO_RSS_KEY_MIN)
		return -EINVAL;
	q->key_size = n;
	return 0;
}

/* "0,1,0,1": queue of each entry. */
static int parse_indir(const char *s, struct silo_reuseport_queues *q)
{
	char *copy = strdup(s), *tok, *save = NULL;
	__u32 n = 0, queue;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == SILO_RSS_INDIR_MAX || parse_u32(tok, &queue) ||
		    queue >= SILO_RSS_QUEUES_MAX)
			err = -EINVAL;
		else
			q->indir[n++] = queue;
	}
	free(copy);
	if (!err && !n)
		err = -EINVAL;
	if (!err)
		q->indir_size = n;
	return err;
}

#define UNSET 0xfffffffeU /* --queue-cpu did not name this queue */

/* "0=2,1=3": queue 0 on CPU 2, queue 1 on CPU 3; CPU "-": none. */
static int parse_queue_cpu(const char *s, __u32 *queue_cpu, __u32 *max_queue)
{
	char *copy = strdup(s), *tok, *save = NULL, *eq;
	__u32 queue, cpu;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq) {
			err = -EINVAL;
			break;
		}
		*eq = '\0';
		if (parse_u32(tok, &queue) || queue >= SILO_RSS_QUEUES_MAX)
			err = -EINVAL;
		else if (!strcmp(eq + 1, "-"))
			cpu = SILO_RSS_NO_CPU;
		else if (parse_u32(eq + 1, &cpu) || cpu >= UNSET)
			err = -EINVAL;
		if (!err) {
			queue_cpu[queue] = cpu;
			if (queue > *max_queue || *max_queue == SILO_RSS_NO_CPU)
				*max_queue = queue;
		}
	}
	free(copy);
	return err;
}

/* "udp4,tcp4" or "none" */
static int parse_ports(const char *s, __u32 *bits)
{
	char *copy, *tok, *save = NULL;
	int err = 0;
	size_t i;

	*bits = 0;
	if (!strcmp(s, "none"))
		return 0;
	copy = strdup(s);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < NR_PORT_FLOWS; i++)
			if (!strcmp(tok, port_flows[i].name))
				break;
		if (i == NR_PORT_FLOWS)
			err = -EINVAL;
		else
			*bits |= port_flows[i].bit;
	}
	free(copy);
	return err;
}

static void key_hex(const struct silo_reuseport_queues *q, char *buf)
{
	__u32 i;

	for (i = 0; i < q->key_size && i < SILO_RSS_KEY_MAX; i++)
		sprintf(buf + 2 * i, "%02x", q->key[i]);
	buf[2 * i] = '\0';
}

static void show_json(const char *name, const struct silo_reuseport_queues *q)
{
	json_object *o = json_object_new_object(), *arr;
	char key[2 * SILO_RSS_KEY_MAX + 1];
	size_t f;
	__u32 i;

	json_object_object_add(o, "group", json_object_new_string(name));
	if (!q) {
		json_object_object_add(o, "table", NULL);
		json_print(o);
		return;
	}
	if (q->ifindex) {
		char dev[IF_NAMESIZE];

		json_object_object_add(
			o, "device",
			json_object_new_string(fmt_ifname(dev, q->ifindex)));
	}
	key_hex(q, key);
	json_object_object_add(o, "key", json_object_new_string(key));
	arr = json_object_new_array();
	for (i = 0; i < q->indir_size; i++)
		json_object_array_add(arr, json_object_new_int64(q->indir[i]));
	json_object_object_add(o, "indir", arr);
	arr = json_object_new_array();
	for (i = 0; i < q->nr_queues; i++)
		json_object_array_add(
			arr, q->queue_cpu[i] == SILO_RSS_NO_CPU ?
				     NULL :
				     json_object_new_int64(q->queue_cpu[i]));
	json_object_object_add(o, "queue_cpu", arr);
	arr = json_object_new_array();
	for (f = 0; f < NR_PORT_FLOWS; f++)
		if (q->hash_ports & port_flows[f].bit)
			json_object_array_add(arr, json_object_new_string(
							   port_flows[f].name));
	json_object_object_add(o, "hash_ports", arr);
	json_print(o);
}

static void show_text(const char *name, const struct silo_reuseport_queues *q)
{
	char key[2 * SILO_RSS_KEY_MAX + 1], dev[IF_NAMESIZE];
	const char *sep = "";
	size_t f;
	__u32 i;

	if (!q) {
		printf("group %s: no RSS table: policy queue falls back to this CPU's node (set one with --indir)\n",
		       name);
		return;
	}
	key_hex(q, key);
	printf("group %s\n", name);
	if (q->ifindex)
		printf("  device      %s (kept current by silod)\n",
		       fmt_ifname(dev, q->ifindex));
	printf("  key         %s\n  hash ports  ", key);
	for (f = 0; f < NR_PORT_FLOWS; f++) {
		if (q->hash_ports & port_flows[f].bit) {
			printf("%s%s", sep, port_flows[f].name);
			sep = ",";
		}
	}
	printf("%s\n  queue -> CPU", *sep ? "" : "none (addresses only)");
	for (i = 0; i < q->nr_queues; i++) {
		if (q->queue_cpu[i] == SILO_RSS_NO_CPU)
			printf(" %u=-", i);
		else
			printf(" %u=%u", i, q->queue_cpu[i]);
	}
	printf("\n  indirection (%u entries):", q->indir_size);
	for (i = 0; i < q->indir_size; i++)
		printf("%s%u", i % 16 ? " " : "\n    ", q->indir[i]);
	printf("\n");
}

/*
 * A table from the group's (when it has one) or the defaults (the
 * verification key, ports hashed for TCP, queue q on CPU q), with the
 * options given on top; nr_queues from the indirection table and the
 * queues named.
 */
struct qmap_cfg {
	const char *key, *indir, *qcpu, *ports, *dev;
	bool clear;
};

static const struct opt qmap_opts[] = {
	OPTION_STR("key", qmap_cfg, key, "HEX",
		   "the RSS key, " SILO_STR(SILO_RSS_KEY_MIN) " to " SILO_STR(
			   SILO_RSS_KEY_MAX) " bytes (default: Microsoft's\n"
					     "RSS verification key)"),
	OPTION_STR("indir", qmap_cfg, indir, "LIST",
		   "the indirection table: a queue per entry, \"0,1,0,1\""),
	OPTION_STR("queue-cpu", qmap_cfg, qcpu, "Q=CPU,...",
		   "the CPU that serves queue Q (Q=- for none;\n"
		   "default: queue q on CPU q)"),
	OPTION_STR("hash-ports", qmap_cfg, ports, "LIST",
		   "the flows whose hash takes the ports: udp4, udp6,\n"
		   "tcp4, tcp6, or none (default tcp4,tcp6)"),
	OPTION_STR("dev", qmap_cfg, dev, "DEV",
		   "read the table from DEV's RSS: its Toeplitz key\n"
		   "and indirection table (ethtool), the flows whose\n"
		   "hash takes the ports, each queue's IRQ CPU;\n"
		   "silod keeps it current (a hand edit stops that)"),
	OPTION_FLAG("clear", qmap_cfg, clear,
		    "remove the table: policy queue falls back"),
	OPTION_END,
};

static int reuseport_queue_map(void *cfg, int argc, char **argv);

const struct cmd_spec reuseport_queue_map_spec = {
	.name = "queue-map",
	.fn = reuseport_queue_map,
	.args = "GROUP",
	.min_args = 1,
	.max_args = 1,
	.opts = qmap_opts,
	.help = "show, or set, the group's RSS table for policy queue (on a\n"
		"device without RSS, such as veth, a faked one); a change keeps\n"
		"what is not given; the first needs --indir",
	.cfg_size = sizeof(struct qmap_cfg),
};

/* The options' values into q, given and *bits; checked before any work. */
static int qmap_parse(const struct qmap_cfg *cfg,
		      struct silo_reuseport_queues *q, __u32 *given,
		      __u32 *max_queue, __u32 *bits)
{
	const char *key = cfg->key, *indir = cfg->indir, *qcpu = cfg->qcpu,
		   *ports = cfg->ports;
	__u32 i;

	if (cfg->clear && (key || indir || qcpu || ports || cfg->dev))
		return usage_error(
			"--clear takes no other option: it removes the table\n");
	if (cfg->dev && (key || indir || qcpu || ports))
		return usage_error(
			"--dev takes the whole table from the device: give it alone\n");
	for (i = 0; i < SILO_RSS_QUEUES_MAX; i++)
		given[i] = UNSET;
	/* Checked before any work. */
	if (key && parse_key(key, q))
		return usage_error(
			"bad --key '%s': %d to %d bytes in hex (\"6d5a...\" or \"6d:5a:...\")\n",
			key, SILO_RSS_KEY_MIN, SILO_RSS_KEY_MAX);
	if (indir && parse_indir(indir, q))
		return usage_error(
			"bad --indir '%s': 1 to %d queue numbers (below %d), comma-separated\n",
			indir, SILO_RSS_INDIR_MAX, SILO_RSS_QUEUES_MAX);
	if (qcpu && parse_queue_cpu(qcpu, given, max_queue))
		return usage_error(
			"bad --queue-cpu '%s': QUEUE=CPU (or QUEUE=- for none), comma-separated\n",
			qcpu);
	if (ports && parse_ports(ports, bits))
		return usage_error(
			"bad --hash-ports '%s': udp4, udp6, tcp4, tcp6, comma-separated, or none\n",
			ports);
	return 0;
}

/* --clear: the group's table goes; none is no error. */
static int qmap_clear(struct silo_group *g, const char *name)
{
	int err = silo_group_clear_queues(g);

	if (err && err != -ENOENT) {
		fprintf(stderr,
			"%s: error: cannot remove the RSS table of group '%s': %s\n",
			prog_name, name, strerror(-err));
		return 1;
	}
	if (cli.json)
		show_json(name, NULL);
	else
		printf("group %s: RSS table removed\n", name);
	return 0;
}

/* No change: show the table (after --dev, what it set). */
static int qmap_show(struct silo_group *g, struct silo_reuseport_queues *q,
		     const char *name)
{
	int err = silo_group_queues(g, q);

	if (err && err != -ENOENT) {
		fprintf(stderr,
			"%s: error: cannot read the RSS table of group '%s': %s\n",
			prog_name, name, strerror(-err));
		return 1;
	}
	if (cli.json)
		show_json(name, err ? NULL : q);
	else
		show_text(name, err ? NULL : q);
	return 0;
}

/*
 * What is not given comes from the group's table (or the defaults):
 * into q, with *have_queues the table's queues (0: none). 0, or -ENOENT
 * (no table and no --indir: said here), -ENOMEM.
 */
static int qmap_merge(struct silo_group *g, const struct qmap_cfg *cfg,
		      struct silo_reuseport_queues *q, const __u32 *given,
		      __u32 bits, __u32 *have_queues, const char *name)
{
	const char *key = cfg->key, *indir = cfg->indir, *ports = cfg->ports;
	struct silo_reuseport_queues *cur = calloc(1, sizeof(*cur));
	int nr_cpus;
	bool have;
	__u32 i;

	if (!cur)
		return -ENOMEM;
	have = !silo_group_queues(g, cur);
	if (!have && !indir) {
		fprintf(stderr,
			"%s: error: group '%s' has no RSS table yet: give --indir\n",
			prog_name, name);
		free(cur);
		return -ENOENT;
	}
	if (!key) {
		if (have) {
			memcpy(q->key, cur->key, sizeof(q->key));
			q->key_size = cur->key_size;
		} else {
			parse_key(default_key, q);
		}
	}
	if (!indir) {
		memcpy(q->indir, cur->indir, sizeof(q->indir));
		q->indir_size = cur->indir_size;
	}
	/* Queue q on CPU q unless the table or --queue-cpu says. */
	nr_cpus = libbpf_num_possible_cpus();
	for (i = 0; i < SILO_RSS_QUEUES_MAX; i++) {
		if (given[i] != UNSET)
			q->queue_cpu[i] = given[i];
		else if (have && i < cur->nr_queues)
			q->queue_cpu[i] = cur->queue_cpu[i];
		else
			q->queue_cpu[i] =
				i < (__u32)nr_cpus ? i : SILO_RSS_NO_CPU;
	}
	*have_queues = have ? cur->nr_queues : 0;
	q->hash_ports = ports ? bits :
			have  ? cur->hash_ports :
				SILO_RSS_PORTS_TCP4 | SILO_RSS_PORTS_TCP6;
	free(cur);
	return 0;
}

/* A change: merged with the table, then written. */
static int qmap_set(struct silo_group *g, const struct qmap_cfg *cfg,
		    struct silo_reuseport_queues *q, const __u32 *given,
		    __u32 max_queue, __u32 bits, const char *name)
{
	__u32 have_queues = 0, i;

	if (qmap_merge(g, cfg, q, given, bits, &have_queues, name))
		return 1;
	/* Queues: every one the indirection table or --queue-cpu names. */
	q->nr_queues = max_queue == SILO_RSS_NO_CPU ? 0 : max_queue + 1;
	for (i = 0; i < q->indir_size; i++)
		if (q->indir[i] + 1 > q->nr_queues)
			q->nr_queues = q->indir[i] + 1;
	if (have_queues > q->nr_queues && !cfg->indir)
		q->nr_queues = have_queues; /* keep the table's queues */
	if (silo_group_set_queues(g, q))
		return 1;
	if (cli.json)
		show_json(name, q);
	else
		show_text(name, q);
	return 0;
}

static int reuseport_queue_map(void *parsed, int argc __maybe_unused,
			       char **argv)
{
	struct qmap_cfg *cfg = parsed;
	__u32 given[SILO_RSS_QUEUES_MAX], max_queue = SILO_RSS_NO_CPU;
	struct silo_reuseport_queues *q;
	__u32 bits = 0;
	struct silo_group *g;
	struct silo *s;
	int ret;

	q = calloc(1, sizeof(*q));
	if (!q)
		return 1;
	ret = qmap_parse(cfg, q, given, &max_queue, &bits);
	if (ret)
		goto out;
	ret = 1;
	s = open_silo();
	if (!s || silo_group_open(s, argv[0], &g))
		goto out;
	if (cfg->clear)
		ret = qmap_clear(g, argv[0]);
	else if (cfg->dev && silo_group_queues_from_dev(g, cfg->dev))
		ret = 1;
	else if (!cfg->key && !cfg->indir && !cfg->qcpu && !cfg->ports)
		ret = qmap_show(g, q, argv[0]);
	else
		ret = qmap_set(g, cfg, q, given, max_queue, bits, argv[0]);
	silo_group_close(g);
out:
	free(q);
	return ret;
}
