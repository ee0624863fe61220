// SPDX-License-Identifier: GPL-2.0
/* The CLI's state (the global options), its messages and its libsilo. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"

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

void cli_print(enum silo_log_level level, const char *fmt, va_list ap)
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

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_print(SILO_LOG_ERROR, fmt, ap);
	va_end(ap);
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
