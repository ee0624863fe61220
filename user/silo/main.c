// SPDX-License-Identifier: GPL-2.0
/* silo [OPTIONS] OBJECT COMMAND [ARGS]: the command-line front of libsilo. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "opts.h"

struct cli cli;
const char *prog_name = "silo";

/* Under -j an error is kept for one JSON object on stdout at the end. */
static void error_keep(const char *fmt, va_list ap)
{
	size_t len = strlen(cli.error);
	char *nl;

	if (len && len + 2 < sizeof(cli.error)) {
		strcpy(cli.error + len, "; ");
		len += 2;
	}
	vsnprintf(cli.error + len, sizeof(cli.error) - len, fmt, ap);
	while ((nl = strchr(cli.error, '\n')))
		memmove(nl, nl + 1, strlen(nl));
}

static void cli_print(enum silo_log_level level, const char *fmt, va_list ap)
{
	static const char *const prefix[] = {
		[SILO_LOG_ERROR] = "error: ",
		[SILO_LOG_WARN] = "warning: ",
		[SILO_LOG_INFO] = "",
		[SILO_LOG_DEBUG] = "debug: ",
	};

	if (level == SILO_LOG_DEBUG && !cli.debug)
		return;
	if (level == SILO_LOG_INFO && cli.json)
		return;
	if (level == SILO_LOG_ERROR && cli.json) {
		error_keep(fmt, ap);
		return;
	}
	fprintf(stderr, "%s: %s", prog_name, prefix[level]);
	vfprintf(stderr, fmt, ap);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (cli.json) {
		error_keep(fmt, ap);
	} else {
		fprintf(stderr, "%s: error: ", prog_name);
		vfprintf(stderr, fmt, ap);
	}
	va_end(ap);
	return EXIT_USAGE;
}

bool is_prefix(const char *arg, const char *word)
{
	return *arg && !strncmp(arg, word, strlen(arg));
}

struct silo *open_silo(void)
{
	struct silo_opts opts = {
		.netns = cli.netns,
		.pin_root = cli.pin_root,
	};

	if (!cli.silo && silo_open(&cli.silo, &opts))
		return NULL;
	return cli.silo;
}

void json_print(json_object *obj)
{
	int flags = cli.pretty ?
			    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			    JSON_C_TO_STRING_PLAIN;

	printf("%s\n", json_object_to_json_string_ext(obj, flags));
	cli.printed = true;
	json_object_put(obj);
}

void fmt_addr(char *buf, size_t len, int family, const __u8 *addr)
{
	if (!inet_ntop(family == SILO_AF_INET ? AF_INET : AF_INET6, addr, buf,
		       len))
		snprintf(buf, len, "?");
}

void fmt_mac(char *buf, size_t len, const __u8 *mac)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
}

const char *fmt_ifname(char *buf, __u32 ifindex)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

int parse_addr(const char *s, int *family, __u8 addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = SILO_AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = SILO_AF_INET6;
		return 0;
	}
	return -EINVAL;
}

int parse_u32(const char *s, __u32 *val)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xFFFFFFFFUL || s[0] == '-')
		return -EINVAL;
	*val = v;
	return 0;
}

const char *fib_ret_name(int rc)
{
	static const char *const names[] = {
		"success",     "blackhole",    "unreachable", "prohibit",
		"not_fwded",   "fwd_disabled", "unsupp_lwt",  "no_neigh",
		"frag_needed", "no_src_addr",
	};

	if (rc >= 0 && rc < (int)(sizeof(names) / sizeof(names[0])))
		return names[rc];
	return "error";
}

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
	&xdp_object,	&route_object,	   &genid_object,
	&stats_object,	&reuseport_object, &service_object,
	&daemon_object, &doctor_object,	   &version_object,
	NULL,
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
		case 'j':
			cli.json = true;
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
