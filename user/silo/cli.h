/* SPDX-License-Identifier: GPL-2.0 */
/* The silo CLI: shared helpers of its command files. */
#ifndef SILO_CLI_H
#define SILO_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <arpa/inet.h>
#include <json-c/json.h>
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

int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* arg is a non-empty prefix of word (or word itself). */
bool is_prefix(const char *arg, const char *word);
/* Opens the namespace's state (--netns, --pin-root); NULL on failure. */
struct silo *open_silo(void);
/* Prints obj as JSON on stdout and frees it. */
void json_print(json_object *obj);

/* Formatting. */
void fmt_addr(char *buf, size_t len, int family, const __u8 *addr);
void fmt_mac(char *buf, size_t len, const __u8 *mac);
const char *fmt_ifname(char *buf, __u32 ifindex);
int parse_addr(const char *s, int *family, __u8 addr[16]);
int parse_u32(const char *s, __u32 *val);
const char *fib_ret_name(int rc);

/* The route cache key's fields and why, from genid's flags: a line of
 * text ("destination, source (IPv4: ...)"), and JSON fields added to o. */
void route_key_str(char *buf, size_t len, __u32 genid_flags);
void route_key_json(json_object *o, __u32 genid_flags);

/* The objects, each in its file. */
struct cmd_object;
extern const struct cmd_object xdp_object;
extern const struct cmd_object route_object;
extern const struct cmd_object genid_object;
extern const struct cmd_object stats_object;
extern const struct cmd_object reuseport_object;
extern const struct cmd_object service_object;
extern const struct cmd_object daemon_object;
extern const struct cmd_object doctor_object;
/* silo reuseport queue-map (reuseport_queue.c) */
struct cmd_spec;
extern const struct cmd_spec reuseport_queue_map_spec;
int reuseport_queue_map(void *cfg, int argc, char **argv);

#endif /* SILO_CLI_H */
