/* SPDX-License-Identifier: GPL-2.0 */
/* The silo CLI: its state, and the helpers every command file uses. */
#ifndef SILO_CLI_H
#define SILO_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include "silo/silo.h"

/* A number macro as a string literal, for help texts. */
#define SILO_STR_(x) #x
#define SILO_STR(x) SILO_STR_(x)

/* A parameter a function of a table takes but does not need. */
#define __maybe_unused __attribute__((unused))

/* Exit codes: 0 done, 1 failed, 2 bad usage. */
#define EXIT_USAGE 2

struct cli {
	bool json;
	bool pretty;
	bool debug;
	const char *netns;
	const char *pin_root;
	struct silo *silo; /* opened on first use */
	/* Under -j, the error messages, for {"error": ...} on stdout. */
	char error[1024];
	bool printed; /* a JSON result went out: a failure adds no error */
};

extern struct cli cli;
extern const char *prog_name;

/* Says what is wrong with the command line; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A command's error: "silo: error: ..." on stderr, or under -j kept for
 * the JSON object's "error". */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* libsilo's messages (silo_set_print): to stderr, or kept under -j. */
void cli_print(enum silo_log_level level, const char *fmt, va_list ap);
/* Opens the namespace's state (--netns, --pin-root); NULL on failure. */
struct silo *open_silo(void);

#endif /* SILO_CLI_H */
