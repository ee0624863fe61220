/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* libsilo's internals for every file of it: the handle and the messages.
 * What its modules share is in their headers (maps.h, pins.h, ...); what
 * silod uses, in silod.h. */
#ifndef SILO_INTERNAL_H
#define SILO_INTERNAL_H

#include <limits.h>
#include <stdint.h>
#include "silo/silo.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

void silo_log(enum silo_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pr_err(...) silo_log(SILO_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...) silo_log(SILO_LOG_WARN, __VA_ARGS__)
#define pr_info(...) silo_log(SILO_LOG_INFO, __VA_ARGS__)
#define pr_debug(...) silo_log(SILO_LOG_DEBUG, __VA_ARGS__)

/* Routes libbpf's messages through silo_log. */
void silo_libbpf_print_init(void);

struct silo {
	char pin_dir[PATH_MAX];
	char pin_root[PATH_MAX];
	__u64 netns_cookie;
	int netns_fd; /* the namespace entered, -1 when none */
};

#endif /* SILO_INTERNAL_H */
