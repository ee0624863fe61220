// SPDX-License-Identifier: GPL-2.0
/* silo [OPTIONS] OBJECT COMMAND [ARGS]: the command-line front of libsilo. */
#include <getopt.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int version(void *cfg, int argc, char **argv);

static const struct cmd_spec version_spec = {
	.name = "version",
	.fn = version,
	.help = "silo's version and the layout of its maps",
};

static int version(void *parsed __maybe_unused, int argc __maybe_unused,
		   char **argv __maybe_unused)
{
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "version",
				       json_object_new_string(SILO_VERSION));
		json_object_object_add(
			o, "layout", json_object_new_int(SILO_LAYOUT_VERSION));
		json_print(o);
	} else {
		printf("silo %s (layout %d)\n", SILO_VERSION,
		       SILO_LAYOUT_VERSION);
	}
	return 0;
}

/* -j or -p anywhere before "--": errors are JSON from the first one. */
static void json_early(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json") ||
		    !strcmp(argv[i], "-p") || !strcmp(argv[i], "--pretty"))
			cli.json = true;
}

static const struct cmd_object version_object = {
	.name = "version",
	.summary = "silo's version and its maps' layout",
	.self = &version_spec,
};

static const struct cmd_object *const objects[] = {
	&xdp_object,	   &route_object,   &genid_object,   &stats_object,
	&reuseport_object, &service_object, &daemon_object,  &doctor_object,
	&apply_object,	   &show_object,    &version_object, NULL,
};

/* For 'silo --help': getopt_long in main parses them. */
static const struct opt global_opts[] = {
	{ .name = "json",
	  .short_name = 'j',
	  .help = "JSON output (also after the command)" },
	{ .name = "pretty",
	  .short_name = 'p',
	  .help = "indented JSON output (implies -j)" },
	{ .name = "netns",
	  .short_name = 'n',
	  .arg = "NAME",
	  .help = "work in network namespace NAME (ip netns);\n"
		  "the pins stay in the host's bpffs under\n"
		  "PIN_ROOT/netns/NAME" },
	{ .name = "pin-root",
	  .arg = "DIR",
	  .help = "where the pins go (default " SILO_PIN_ROOT_DEFAULT ")" },
	{ .name = "debug",
	  .short_name = 'd',
	  .help = "show libbpf's and the verifier's messages" },
	{ .name = "version", .short_name = 'V', .help = "print the version" },
	{ .name = "help", .short_name = 'h', .help = "this help" },
	OPTION_END,
};

static const struct cmd_tree tree = {
	.objects = objects,
	.global_opts = global_opts,
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "netns", required_argument, NULL, 'n' },
		{ "pin-root", required_argument, NULL, 'R' },
		{ "debug", no_argument, NULL, 'd' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(cli_print);
	json_early(argc, argv);
	/* '+': stop at OBJECT; commands parse their own options. */
	while ((c = getopt_long(argc, argv, "+jpn:dVh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': /* json_early() has set cli.json */
			break;
		case 'p':
			cli.json = cli.pretty = true;
			break;
		case 'n':
			cli.netns = optarg;
			break;
		case 'R':
			if (optarg[0] != '/' ||
			    strlen(optarg) > SILO_PIN_ROOT_MAX) {
				ret = usage_error(
					"bad --pin-root '%s': an absolute path of at most %d characters on a bpffs mount\n",
					optarg, SILO_PIN_ROOT_MAX);
				goto out;
			}
			cli.pin_root = optarg;
			break;
		case 'd':
			cli.debug = true;
			break;
		case 'V':
			return version(NULL, 0, NULL);
		case 'h':
			return tree_help(&tree);
		default:
			if (cli.json)
				printf("{\"error\":\"bad global option: see '%s --help'\"}\n",
				       prog_name);
			else
				fprintf(stderr, "Try '%s --help'.\n",
					prog_name);
			return EXIT_USAGE;
		}
	}
	argc -= optind;
	argv += optind;
	ret = cmd_dispatch(&tree, argc, argv);
	silo_close(cli.silo);
out:
	if (ret && cli.json && !cli.printed) {
		json_object *o = json_object_new_object();

		json_object_object_add(
			o, "error",
			json_object_new_string(cli.error[0] ? cli.error :
							      "failed"));
		json_print(o);
	}
	return ret;
}
