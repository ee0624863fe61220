// SPDX-License-Identifier: GPL-2.0
/*
 * silod's configuration: "key = value" lines of silod.conf and the options
 * that set the same keys (options win), --help, and the CPU to node map's
 * syntax. SIGHUP runs it all again (main.c: reload()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "silod.h"

bool use_syslog;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: silod [OPTIONS]\n"
		"\n"
		"Keeps silo's route cache exact while routes change: listens to\n"
		"rtnetlink, removes exactly the entries a route or neighbour\n"
		"change touched, bumps the generation id for what cannot be\n"
		"scoped, and beats a heartbeat without which the data path stops\n"
		"trusting the cache. Once a second it tells the kernel that the\n"
		"neighbours the cache sends to are in use (NTF_USE), as packets\n"
		"forwarded by the stack would, so they are probed again when\n"
		"stale. One silod per network namespace.\n"
		"\n"
		"  -n, --netns NAME         serve network namespace NAME (ip netns)\n"
		"      --pin-root DIR       where silo's pins are (default %s)\n"
		"  -c, --config FILE        configuration (default %s if present);\n"
		"                           SIGHUP reads it again\n"
		"      --cpu-nodes LIST     CPU to node map, e.g. 0-3:0,4-7:1\n"
		"                           (default: from sysfs)\n"
		"      --rcvbuf BYTES       netlink receive buffer (default 32 MiB)\n"
		"      --heartbeat-ms N     heartbeat period (default 100)\n"
		"      --timeout-ms N       with a heartbeat older than this the data\n"
		"                           path sends every packet to the stack\n"
		"                           (default 1000)\n"
		"      --min-sweep-us N     least time between sweeps (default 2000)\n"
		"      --resync-interval-ms N  least time between resyncs (default 100)\n"
		"      --metrics [ADDR:]PORT  serve Prometheus metrics at\n"
		"                           http://ADDR:PORT/metrics (ADDR default\n"
		"                           127.0.0.1; [::1]:PORT for IPv6), bound\n"
		"                           in the namespace silod starts in\n"
		"      --invalidation scoped|global\n"
		"                           global: bump genid on every route change\n"
		"                           (a baseline for benchmarks)\n"
		"      --apply FILE|none    the silo.conf(5) to apply at start, on\n"
		"                           SIGHUP, to devices as they appear and\n"
		"                           to servers as they restart (default\n"
		"                           %s if present)\n"
		"      --state-dir DIR      what apply made (default %s)\n"
		"  -s, --syslog             log to syslog instead of stderr\n"
		"  -v, --verbose            more messages (-vv: libbpf's too)\n"
		"  -q, --quiet              errors and warnings only\n"
		"  -V, --version\n"
		"  -h, --help\n"
		"\n"
		"The offload envelope (where XDP forwarding equals the kernel's) is\n"
		"kept in genid.outside: nftables and xfrm changes take effect at\n"
		"once; iptables-legacy tables and the forwarding and multipath\n"
		"sysctls, which notify nothing, are polled every second (%d ms).\n"
		"\n"
		"Signals: SIGTERM/SIGINT exit and leave the data path attached,\n"
		"standing aside (every packet to the stack) until silod runs\n"
		"again; SIGHUP reads the configuration again.\n",
		SILO_PIN_ROOT_DEFAULT, DEFAULT_CONFIG, SILO_CONFIG_DEFAULT,
		SILO_STATE_DIR_DEFAULT, SILOD_ENVELOPE_POLL_MS);
}

static void config_defaults(struct silod_config *c)
{
	memset(c, 0, sizeof(*c));
	c->rcvbuf = 32 << 20;
	c->heartbeat_ms = 100;
	c->timeout_ms = 1000;
	c->min_sweep_us = 2000;
	c->resync_interval_ms = 100;
	c->log_level = SILO_LOG_INFO;
}

static int parse_int(const char *key, const char *val, int min, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || end == val || *end || v < min || v > 1 << 30) {
		pr_err("bad %s '%s': a number, at least %d\n", key, val, min);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* One setting, from an option or a config line. */
static int config_set(struct silod_config *c, const char *key, const char *val)
{
	if (!strcmp(key, "cpu-nodes")) {
		if (strlen(val) >= sizeof(c->cpu_nodes))
			return -EINVAL;
		snprintf(c->cpu_nodes, sizeof(c->cpu_nodes), "%s", val);
		return 0;
	}
	if (!strcmp(key, "rcvbuf"))
		return parse_int(key, val, 4096, &c->rcvbuf);
	if (!strcmp(key, "heartbeat-ms"))
		return parse_int(key, val, 1, &c->heartbeat_ms);
	if (!strcmp(key, "timeout-ms"))
		return parse_int(key, val, 1, &c->timeout_ms);
	if (!strcmp(key, "min-sweep-us"))
		return parse_int(key, val, 0, &c->min_sweep_us);
	if (!strcmp(key, "resync-interval-ms"))
		return parse_int(key, val, 0, &c->resync_interval_ms);
	if (!strcmp(key, "invalidation")) {
		if (strcmp(val, "scoped") && strcmp(val, "global")) {
			pr_err("bad invalidation '%s': scoped or global\n",
			       val);
			return -EINVAL;
		}
		c->global = !strcmp(val, "global");
		return 0;
	}
	if (!strcmp(key, "metrics")) {
		if (strlen(val) >= sizeof(c->metrics) || metrics_check(val))
			return -EINVAL;
		snprintf(c->metrics, sizeof(c->metrics), "%s", val);
		return 0;
	}
	if (!strcmp(key, "apply") || !strcmp(key, "state-dir")) {
		char *dst = key[0] == 'a' ? c->apply : c->state_dir;

		if (!val[0] || strlen(val) >= sizeof(c->apply)) {
			pr_err("bad %s '%s': a path\n", key, val);
			return -EINVAL;
		}
		snprintf(dst, sizeof(c->apply), "%s", val);
		return 0;
	}
	if (!strcmp(key, "log-level")) {
		static const char *const levels[] = { "error", "warning",
						      "info", "debug" };
		unsigned int i;

		for (i = 0; i < ARRAY_SIZE(levels); i++) {
			if (!strcmp(val, levels[i])) {
				c->log_level = i;
				return 0;
			}
		}
		pr_err("bad log-level '%s': error, warning, info or debug\n",
		       val);
		return -EINVAL;
	}
	pr_err("unknown setting '%s'\n", key);
	return -EINVAL;
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* "key = value" lines; '#' starts a comment. */
static int config_read(struct silod_config *c, const char *path, bool must)
{
	char line[512];
	int err = 0, n = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (!must && errno == ENOENT)
			return 0;
		pr_err("cannot read %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *key = line, *eq, *hash = strchr(line, '#');

		n++;
		if (hash)
			*hash = '\0';
		key = trim(key);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			pr_err("%s:%d: expected 'key = value'\n", path, n);
			err = -EINVAL;
			break;
		}
		*eq = '\0';
		err = config_set(c, trim(key), trim(eq + 1));
		if (err)
			pr_err("%s:%d: see 'silod --help'\n", path, n);
	}
	fclose(f);
	return err;
}

static const struct option long_opts[] = {
	{ "netns", required_argument, NULL, 'n' },
	{ "pin-root", required_argument, NULL, 'R' },
	{ "config", required_argument, NULL, 'c' },
	{ "cpu-nodes", required_argument, NULL, 'N' },
	{ "rcvbuf", required_argument, NULL, 'B' },
	{ "heartbeat-ms", required_argument, NULL, 'H' },
	{ "timeout-ms", required_argument, NULL, 'T' },
	{ "min-sweep-us", required_argument, NULL, 'W' },
	{ "resync-interval-ms", required_argument, NULL, 'I' },
	{ "invalidation", required_argument, NULL, 'i' },
	{ "metrics", required_argument, NULL, 'M' },
	{ "apply", required_argument, NULL, 'A' },
	{ "state-dir", required_argument, NULL, 'S' },
	{ "test-no-second-sweep", no_argument, NULL, 'X' },
	{ "syslog", no_argument, NULL, 's' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Options win over the config file: read the file first, then apply the
 * options again over it (also on SIGHUP).
 */
static int parse_options(int argc, char **argv, struct silod_args *a,
			 struct silod_config *c)
{
	int opt, err = 0;

	optind = 0;
	while (!err && (opt = getopt_long(argc, argv, "n:c:svqVh", long_opts,
					  NULL)) != -1) {
		switch (opt) {
		case 'n':
			a->netns = optarg;
			break;
		case 'R':
			a->pin_root = optarg;
			break;
		case 'c':
			a->config = optarg;
			break;
		case 'N':
			err = config_set(c, "cpu-nodes", optarg);
			break;
		case 'B':
			err = config_set(c, "rcvbuf", optarg);
			break;
		case 'H':
			err = config_set(c, "heartbeat-ms", optarg);
			break;
		case 'T':
			err = config_set(c, "timeout-ms", optarg);
			break;
		case 'W':
			err = config_set(c, "min-sweep-us", optarg);
			break;
		case 'I':
			err = config_set(c, "resync-interval-ms", optarg);
			break;
		case 'i':
			err = config_set(c, "invalidation", optarg);
			break;
		case 'M':
			err = config_set(c, "metrics", optarg);
			break;
		case 'A':
			err = config_set(c, "apply", optarg);
			break;
		case 'S':
			err = config_set(c, "state-dir", optarg);
			break;
		case 'X':
			c->no_second_sweep = true;
			break;
		case 's':
			use_syslog = true;
			break;
		case 'v':
			a->verbose++;
			break;
		case 'q':
			a->verbose--;
			break;
		case 'V':
			printf("silod %s (layout %d)\n", SILO_VERSION,
			       SILO_LAYOUT_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'silod --help'.\n");
			return -EINVAL;
		}
	}
	if (!err && optind != argc) {
		pr_err("unexpected argument '%s': see 'silod --help'\n",
		       argv[optind]);
		err = -EINVAL;
	}
	return err;
}

/* Defaults, then the config file, then the options. */
int load_config(int argc, char **argv, struct silod_args *a,
		struct silod_config *c)
{
	struct silod_args first = {};
	int err;

	config_defaults(c);
	/* A first pass only to learn --config. */
	err = parse_options(argc, argv, &first, c);
	if (err)
		return err;
	config_defaults(c);
	err = config_read(c, first.config ? first.config : DEFAULT_CONFIG,
			  first.config != NULL);
	if (err)
		return err;
	memset(a, 0, sizeof(*a));
	err = parse_options(argc, argv, a, c);
	if (err)
		return err;
	c->log_level += a->verbose;
	if (c->log_level < SILO_LOG_WARN)
		c->log_level = SILO_LOG_WARN;
	if (c->log_level > SILO_LOG_DEBUG)
		c->log_level = SILO_LOG_DEBUG;
	if (c->timeout_ms < 2 * c->heartbeat_ms) {
		pr_err("timeout-ms %d must be at least twice heartbeat-ms %d\n",
		       c->timeout_ms, c->heartbeat_ms);
		return -EINVAL;
	}
	return 0;
}

/* "0-3:0,4-7:1": CPU (or range) to node; CPUs not named stay on node 0. */
int parse_cpu_nodes(const char *s, __u32 *node_of, int nr_cpus, __u32 *nr_nodes)
{
	unsigned long a, b, node;
	char *end;

	*nr_nodes = 1;
	while (*s) {
		if (silo_parse_cpu_range(s, &end, &a, &b) || *end != ':')
			goto bad;
		s = end + 1;
		errno = 0;
		node = strtoul(s, &end, 10);
		if (errno || end == s || node >= SILO_MAX_NODES)
			goto bad;
		if (b >= (unsigned long)nr_cpus) {
			pr_err("cpu-nodes names CPU %lu; this machine has %d\n",
			       b, nr_cpus);
			return -ERANGE;
		}
		for (; a <= b; a++)
			node_of[a] = node;
		if (node + 1 > *nr_nodes)
			*nr_nodes = node + 1;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			goto bad;
	}
	return 0;
bad:
	pr_err("bad cpu-nodes '%s': CPU[-CPU]:NODE,... e.g. 0-3:0,4-7:1\n", s);
	return -EINVAL;
}
