/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* silo.conf: the parsed file (config_parse.c), what apply owns
 * (config_state.c), and the plan's steps (config_apply*.c). */
#ifndef SILO_CONFIG_H
#define SILO_CONFIG_H

#include <limits.h>
#include "../internal.h"

#define CFG_NAME_MAX 64

struct cfg_device {
	char name[IF_NAMESIZE]; /* or: */
	char match[CFG_NAME_MAX]; /* an fnmatch(3) pattern */
	struct silo_xdp_load_opts load;
	int line;
};

struct cfg_service {
	struct silo_service_opts opts; /* opts.group points at group */
	char group[SILO_REUSEPORT_NAME_MAX];
	int line;
};

enum cfg_by { CFG_BY_PIDFILE, CFG_BY_EXE, CFG_BY_UNIT, CFG_BY_CGROUP };

struct cfg_group {
	char name[SILO_REUSEPORT_NAME_MAX]; /* empty: silo names it */
	struct silo_attach_pid_opts opts; /* opts.name points at name */
	enum cfg_by by;
	char what[PATH_MAX]; /* the pid file, executable, unit or cgroup */
	int line;
	__u64 seen; /* its processes' sockets when last taken; 0: never */
	int seen_err; /* how taking those went: 0 or -errno */
	bool quiet; /* this apply skipped it, its failure as it was */
	int *known; /* exe: the processes the last look found */
	size_t nr_known;
	bool looked; /* exe: known holds a look's */
};

struct cfg_queue_map {
	char dev[IF_NAMESIZE];
	__u32 nr; /* queues 0 .. nr-1 are in cpu[] */
	__u32 cpu[SILO_MAX_QUEUES]; /* SILO_SERVICE_NO_CPU: none */
	bool set[SILO_MAX_QUEUES]; /* declared */
	int line;
};

struct cfg_ns {
	char *name; /* NULL: the top level */
	struct cfg_device *devs;
	struct cfg_service *svcs;
	struct cfg_group *groups;
	struct cfg_queue_map *qmaps;
	size_t nr_devs, nr_svcs, nr_groups, nr_qmaps;
};

struct silo_config {
	struct cfg_ns *ns; /* ns[0]: the top level */
	size_t nr_ns;
};

struct cfg_ns *cfg_ns_find(const struct silo_config *cfg, const char *netns);

/* What earlier applies made in a namespace: names per kind. */
enum cfg_kind { CFG_DEVICE, CFG_SERVICE, CFG_GROUP, CFG_QUEUE, CFG_KINDS };

struct json_object;

struct cfg_owned {
	char (*names[CFG_KINDS])[CFG_NAME_MAX];
	size_t nr[CFG_KINDS];
	/* What could not be made yet or failed, as a JSON array of
	 * changes: for 'silo xdp status' (silo_apply_pending()). */
	struct json_object *pending;
};

int cfg_state_read(const char *path, struct cfg_owned *own);
int cfg_state_write(const char *path, const struct cfg_owned *own);
int cfg_owned_add(struct cfg_owned *own, enum cfg_kind kind, const char *name);
bool cfg_owned_has(const struct cfg_owned *own, enum cfg_kind kind,
		   const char *name);
bool cfg_owned_equal(const struct cfg_owned *a, const struct cfg_owned *b);
/* now's pending: old's, but for the objects of the kinds this apply
 * covered (SILO_APPLY_*), which are ch[]'s that wait or failed, and old's
 * that keep(ctx, object, name) says this apply left as they were. */
typedef bool (*cfg_keep_fn)(void *ctx, const char *object, const char *name);
int cfg_pending_update(struct cfg_owned *now, const struct cfg_owned *old,
		       const struct silo_change *ch, size_t n,
		       unsigned int what, cfg_keep_fn keep, void *ctx);
void cfg_owned_free(struct cfg_owned *own);
/* STATE_DIR/host.json, STATE_DIR/netns/NAME.json */
int cfg_state_path(char *buf, size_t len, const char *dir, const char *netns);

/* A plan being made and carried out (config_apply.c). */
/* What silo's maps here hold that a file's devices are compared with:
 * every device's, not one's. */
struct cfg_maps_view {
	__u32 cache_size; /* the route caches' entries per node */
	bool bypass; /* genid.override: the firewall bypass is on */
	bool established; /* genid.ct_optin: forward-established */
};
/* Reads it, once for both: 0 or -errno (-ENOENT: silo is not loaded). */
int cfg_maps_view(struct silo *s, struct cfg_maps_view *v);

struct plan {
	struct silo *s;
	struct cfg_ns *ns;
	const struct silo_apply_opts *opts;
	struct cfg_owned old, now; /* owned before; owned after */
	struct silo_change *changes;
	size_t nr, cap;
	int err; /* the first failure */
	struct cfg_maps_view maps; /* what runs, read once (maps_read) */
	bool maps_read;
};

/* Adds a change (op, object, line, name) and returns it to be filled. */
struct silo_change *plan_add(struct plan *p, enum silo_change_op op,
			     const char *object, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Whether silo's maps are pinned here (asked without a message). */
bool cfg_loaded(struct silo *s);
/* A CPU bitmap (SILO_CPU_WORDS words) as "0,1,5". */
void cfg_cpus_str(char *buf, size_t len, const __u64 *cpus);
/* Records the outcome of a change tried. */
void plan_done(struct plan *p, struct silo_change *c, int err);
/*
 * An object of kind an earlier apply made and this one did not claim:
 * without undo, > 0 when it is still there (0: nothing to remove); with
 * undo, removes it: 0 or -errno.
 */
typedef int (*plan_remove_fn)(struct plan *p, const char *name, bool undo,
			      void *ctx);
/* Removes each such object (detail: what removing it does); one whose
 * removal fails stays the file's. */
void plan_remove_unclaimed(struct plan *p, enum cfg_kind kind,
			   const char *object, const char *detail,
			   plan_remove_fn fn, void *ctx);

/* Each kind of object (config_devices.c, config_services.c,
 * config_groups.c). */
int plan_devices(struct plan *p, bool remove);
int plan_services(struct plan *p, bool remove);
int plan_queue_maps(struct plan *p, bool remove);
int plan_groups(struct plan *p, bool remove);
/* A cfg_keep_fn over ctx's (a struct cfg_ns) groups: a group this apply
 * skipped, its last try's failure as it was. */
bool plan_group_quiet(void *ctx, const char *object, const char *name);
/* Whether group name is made (pinned); or, in a dry run, this plan makes
 * it. */
bool plan_group_made(const struct plan *p, const char *name);
/* A service's key as the state file names it: "udp 5300 any". */
void cfg_service_name(char *buf, size_t len, const struct silo_service_opts *o);
/* The pids of g's processes; -ESRCH when there are none. exe: with
 * known_ok, those of the last look that still run it, when there was
 * one. */
int cfg_group_pids(struct cfg_group *g, bool known_ok, int **pids, size_t *n);

#endif /* SILO_CONFIG_H */
