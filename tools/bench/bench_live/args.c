// SPDX-License-Identifier: GPL-2.0
/*
 * bench_live's command line (tools/bench/bench_live.c says what each
 * option does).
 */
#include <getopt.h>
#include <sched.h>
#include "live.h"

/* A comma-separated list of names into on[]: 0, or -1 for a bad name. */
static int parse_list(char *arg, const char *(*name)(int), int n, bool *on)
{
	char *tok, *save = NULL;
	int i;

	memset(on, 0, n * sizeof(*on));
	for (tok = strtok_r(arg, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n && strcmp(tok, name(i)); i++)
			;
		if (i == n)
			return -1;
		on[i] = true;
	}
	return 0;
}

static const char *traffic_key(int t)
{
	static const char *const keys[NR_TRAFFIC] = {
		"steady_64", "steady_1514", "imix",
		"flood",     "offload_64",  "offload_1514"
	};

	return keys[t];
}

static const char *set_key(int s)
{
	static const char *const keys[NR_SETS] = { "lookup", "from" };

	return keys[s];
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_live [--rounds N] [--secs S] [--warmup S] [--cpu N]\n"
		"                  [--routes N] [--rules N] [--flows N] [--sources N]\n"
		"                  [--traffic steady_64,steady_1514,imix,flood,\n"
		"                             offload_64,offload_1514]\n"
		"                  [--sets lookup,from]  (route sets)\n"
		"                  [--firewall steady_64,steady_1514,imix,flood|none]\n"
		"                  [--firewall-set lookup|from]  (kernel_fw, silo_fw)\n"
		"                  [--source ring|af_packet]  (ring: the default)\n"
		"                  [--turns N]  (pairs of the flood's turns; 0: none)\n"
		"                  [--wall] [--verbose]  (each measurement to stderr)\n"
		"  a quick check: --rounds 1 --secs 0.3 --warmup 0.1 --routes 10000\n");
}

/* Option c (getopt_long()'s) into run: 0, or 1 for a bad value. */
static int parse_opt(int c, struct run *run)
{
	int t;

	switch (c) {
	case 'r':
		run->rounds = atoi(optarg);
		return 0;
	case 's':
		run->secs = atof(optarg);
		return 0;
	case 'w':
		run->warmup = atof(optarg);
		return 0;
	case 'c':
		run->cpu = atoi(optarg);
		return 0;
	case 'R':
		run->routes = atoi(optarg);
		return 0;
	case 'u':
		run->rules = atoi(optarg);
		return 0;
	case 'f':
		for (t = 0; t < NR_TRAFFIC; t++)
			if (t != FLOOD)
				traffic[t].nsrc = atoi(optarg);
		return 0;
	case 'S':
		traffic[FLOOD].nsrc = atoi(optarg);
		return 0;
	case 't':
		return !!parse_list(optarg, traffic_key, NR_TRAFFIC,
				    run->traffic_on);
	case 'e':
		return !!parse_list(optarg, set_key, NR_SETS, run->set_on);
	case 'F':
		memset(run->fw_on, 0, sizeof(run->fw_on));
		return strcmp(optarg, "none") &&
		       parse_list(optarg, traffic_key, NR_TRAFFIC, run->fw_on);
	case 'E':
		for (t = 0; t < NR_SETS && strcmp(optarg, set_key(t)); t++)
			;
		run->fw_set = t;
		return t == NR_SETS;
	case 'o':
		if (!strcmp(optarg, "ring"))
			L.shape = SOURCE_RING;
		else if (!strcmp(optarg, "af_packet"))
			L.shape = SOURCE_PACKET;
		else
			return 1;
		return 0;
	case 'T':
		run->turns = atoi(optarg);
		return 0;
	case 'W':
		wall_time = true;
		return 0;
	case 'v':
		verbose = true;
		return 0;
	}
	return 1;
}

/* The command line into run: -1 to go on, else the exit status. */
int parse_args(int argc, char **argv, struct run *run)
{
	static const struct option lopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "routes", required_argument, NULL, 'R' },
		{ "rules", required_argument, NULL, 'u' },
		{ "flows", required_argument, NULL, 'f' },
		{ "sources", required_argument, NULL, 'S' },
		{ "traffic", required_argument, NULL, 't' },
		{ "sets", required_argument, NULL, 'e' },
		{ "source", required_argument, NULL, 'o' },
		{ "firewall", required_argument, NULL, 'F' },
		{ "firewall-set", required_argument, NULL, 'E' },
		{ "turns", required_argument, NULL, 'T' },
		{ "wall", no_argument, NULL, 'W' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, t, bad = 0;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (c == 'h' || c == '?') {
			usage();
			return c == 'h' ? 0 : 2;
		}
		bad |= parse_opt(c, run);
	}
	for (t = 0; t < NR_TRAFFIC; t++)
		bad |= !traffic[t].nsrc || traffic[t].nsrc > 1U << 24 ||
		       (run->fw_on[t] &&
			(traffic[t].partial ||
			 (t != FLOOD && traffic[t].nsrc > FW_MAX_FLOWS)));
	if (bad || run->rounds < 1 || run->rounds > MAX_ROUNDS ||
	    run->secs <= 0 || run->warmup < 0 || run->routes < 1 ||
	    run->turns < 0 || run->turns > MAX_TURNS || run->rules < 0 ||
	    run->rules > 1000 || run->cpu >= CPU_SETSIZE ||
	    run->cpu >= sysconf(_SC_NPROCESSORS_ONLN)) {
		fprintf(stderr, "bench_live: bad arguments\n");
		return 2;
	}
	return -1;
}
