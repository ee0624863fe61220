/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Declarative configuration (silo.conf(5)): a YAML file that declares, for
 * the namespace silo runs in and for named network namespaces, the devices
 * silo is loaded on, the services it steers, the reuseport groups and the
 * processes that fill them, and the RX queue maps. silo_apply() brings one
 * namespace to its part of the file. Included by silo.h.
 */
#ifndef SILO_APPLY_H
#define SILO_APPLY_H

#ifndef SILO_SILO_H
#error "include silo/silo.h"
#endif

#define SILO_CONFIG_DEFAULT "/etc/silo/silo.conf"
/* Where apply keeps what it made, one file per namespace: it outlives the
 * pins (bpffs is empty after a reboot) so that a later apply removes only
 * what an earlier one made. */
#define SILO_STATE_DIR_DEFAULT "/var/lib/silo"

struct silo_config;

/*
 * Reads and checks a configuration file (path "-": standard input). A bad
 * file returns -EINVAL with err saying "FILE:LINE: what is wrong"; a file
 * that cannot be read, its errno.
 */
int silo_config_read(const char *path, struct silo_config **cfg, char *err,
		     size_t len);
void silo_config_free(struct silo_config *cfg);
/* The named namespaces the file has a part for: 0 .. n-1 (the namespace
 * silo runs in is always there, as NULL, and not counted). */
size_t silo_config_nr_netns(const struct silo_config *cfg);
const char *silo_config_netns(const struct silo_config *cfg, size_t i);
/* Whether the part for netns (NULL: the top level) declares any group
 * (silod then looks for restarted processes). */
bool silo_config_has_groups(const struct silo_config *cfg, const char *netns);
/* Whether ifname is a device the part for netns declares, by name or
 * match. */
bool silo_config_has_device(const struct silo_config *cfg, const char *netns,
			    const char *ifname);

enum silo_change_op {
	SILO_CHANGE_ADD, /* made */
	SILO_CHANGE_UPDATE, /* changed in place */
	SILO_CHANGE_REMOVE, /* made by an earlier apply, no longer declared */
	SILO_CHANGE_ADOPT, /* there already as declared: owned from now on */
	SILO_CHANGE_WAIT, /* cannot be made yet (no such device, process) */
};

struct silo_change {
	enum silo_change_op op;
	const char *object; /* "device", "service", "reuseport", "queue-map" */
	char name[64]; /* "eth0", "udp 5300 any", "dns", "eth0 queue 3" */
	char detail[192]; /* what it is or becomes; for WAIT, why */
	int line; /* its declaration in the file; 0: none (a removal) */
	int err; /* 0, or why it failed (not for a dry run) */
};

/* What an apply covers (silod looks for restarted servers often, and
 * applies the rest on events). */
#define SILO_APPLY_DEVICES (1U << 0)
#define SILO_APPLY_SERVICES (1U << 1)
#define SILO_APPLY_GROUPS (1U << 2)
#define SILO_APPLY_QUEUES (1U << 3)
#define SILO_APPLY_ALL 0xfU
/*
 * With SILO_APPLY_GROUPS: a group by executable takes the processes the
 * last apply with this cfg found (those still running it) instead of
 * looking at every process; for a caller that learns of each exec() (the
 * kernel's process events), as a new program only starts so. Without a
 * last apply's, it looks at every process.
 */
#define SILO_APPLY_GROUPS_KNOWN (1U << 4)

struct silo_apply_opts {
	const char *netns; /* the part of the file: NULL, the top level */
	const char *state_dir; /* NULL: SILO_STATE_DIR_DEFAULT */
	bool dry_run; /* changes nothing, the state file included */
	unsigned int what; /* SILO_APPLY_*; 0: all */
};

/*
 * Brings the namespace s has open to the part of cfg that opts->netns
 * names: makes what is declared and missing, changes what differs,
 * removes what an earlier apply made and the file no longer declares, and
 * never touches anything else (an object made by hand and declared is
 * adopted; one not declared is left alone). *changes (malloc'ed, free() it)
 * lists each change, tried or, with dry_run, planned; none: nothing to do.
 * Returns 0 when every change was made, else the first failure's errno
 * (the others were still tried). WAIT changes are not failures.
 *
 * cfg remembers which sockets each group's processes held when it last
 * took them, and how that went: a later apply with the same cfg (silod's,
 * four times a second) skips a group whose processes hold the same
 * sockets, made or failed (a failure stays pending, not tried again).
 */
int silo_apply(struct silo *s, struct silo_config *cfg,
	       const struct silo_apply_opts *opts, struct silo_change **changes,
	       size_t *n);
const char *silo_change_op_name(enum silo_change_op op);
/*
 * What the last applies in a namespace (netns: NULL, the top level) could
 * not make yet or failed to, from the state directory (NULL: the default):
 * *out malloc'ed, free() it; none: *n 0.
 */
int silo_apply_pending(const char *state_dir, const char *netns,
		       struct silo_change **out, size_t *n);

/*
 * Writes what runs in the namespace s has open as a silo.conf that apply
 * takes back: under "netns: NAME:" when netns is given, else at the top
 * level. A reuseport group's processes are written as the executable of
 * a socket's owner ("exe:"), or, when no owner runs, as a comment asking
 * which pid file, executable, unit or cgroup fills it.
 */
int silo_config_write(struct silo *s, const char *netns, FILE *f);

#endif /* SILO_APPLY_H */
