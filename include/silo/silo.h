/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libsilo: load silo's XDP program onto devices and read and manage the state
 * it keeps pinned under /sys/fs/bpf/silo/ (one directory per network
 * namespace).
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; the reason, with what to do about it, goes to the print callback.
 */
#ifndef SILO_SILO_H
#define SILO_SILO_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>
#include "silo/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

enum silo_log_level {
	SILO_LOG_ERROR,
	SILO_LOG_WARN,
	SILO_LOG_INFO,
	SILO_LOG_DEBUG,
};

typedef void (*silo_print_fn)(enum silo_log_level level, const char *fmt,
			      va_list ap);

/* Where messages go; NULL restores the default (errors and warnings to
 * stderr). Also receives libbpf's messages at SILO_LOG_DEBUG. */
void silo_set_print(silo_print_fn fn);

#define SILO_PIN_ROOT_DEFAULT "/sys/fs/bpf/silo"

struct silo_opts {
	/* A named network namespace (ip netns add NAME), entered with
	 * setns() by the calling thread; NULL: the current one. */
	const char *netns;
	/* NULL: SILO_PIN_ROOT_DEFAULT. Must be on a bpffs mount. */
	const char *pin_root;
};

struct silo;

/*
 * A handle on one network namespace's silo state. Enters opts->netns,
 * mounts bpffs at /sys/fs/bpf when nothing is mounted there, and refuses
 * (-EPERM) without CAP_BPF and CAP_NET_ADMIN.
 */
int silo_open(struct silo **s, const struct silo_opts *opts);
void silo_close(struct silo *s);
/* The directory that holds this namespace's pins. */
const char *silo_pin_dir(const struct silo *s);

enum silo_xdp_mode {
	SILO_XDP_NATIVE,
	SILO_XDP_SKB,
};

struct silo_xdp_load_opts {
	enum silo_xdp_mode mode;
	bool forward; /* forward from the route cache */
	bool replace; /* silo already runs there: swap the program in place */
	bool force; /* replace another program (not attached by a link) */
	bool no_cache; /* bpf_fib_lookup every packet: the benchmark baseline */
	__u32 cache_size; /* entries per node, when the caches are made; 0: default */
};

/*
 * Loads silo onto a device: pins its maps (or re-opens the pinned ones) and
 * attaches through a pinned bpf_link, so the program stays after the caller
 * exits. With opts->replace on a device silo already runs on, the link is
 * updated to the new program: the maps are kept and no packet is lost.
 * On failure nothing it made is left behind.
 */
int silo_xdp_load(struct silo *s, const char *ifname,
		  const struct silo_xdp_load_opts *opts);

/* Detaches silo from a device; with the last device, removes every pin. */
int silo_xdp_unload(struct silo *s, const char *ifname);

struct silo_xdp_dev {
	char ifname[IF_NAMESIZE]; /* empty when the device is gone */
	__u32 ifindex;
	__u32 link_id;
	__u32 prog_id;
	enum silo_xdp_mode mode;
	bool attached; /* false: the link outlived its device */
	bool forward;
	bool cache;
};

/* The devices silo runs on here; *devs is malloc'ed, free() it. */
int silo_xdp_list(struct silo *s, struct silo_xdp_dev **devs, size_t *n);

struct silo_info {
	__u32 layout_version;
	__u32 nr_nodes;
	__u32 cache_size; /* entries per node */
	__u32 local_addrs;
	__u64 genid;
	__u32 genid_flags;
};

/* -ENOENT when silo is not loaded in this namespace. */
int silo_info(struct silo *s, struct silo_info *info);

/* Invalidates every cached route; returns the new genid in *genid. */
int silo_genid_bump(struct silo *s, __u64 *genid);

typedef int (*silo_route_fn)(__u32 node, const struct silo_route_key *key,
			     const struct silo_route_entry *entry, void *ctx);

/* Calls fn for every cache entry of every node; stops when fn returns
 * non-zero and returns that. */
int silo_route_foreach(struct silo *s, silo_route_fn fn, void *ctx);

/* Deletes every cache entry; returns how many. */
int silo_route_flush(struct silo *s);

/*
 * Runs bpf_fib_lookup, the helper the data path calls on a miss, for the
 * request in probe->params with probe->flags, in this namespace; the answer
 * replaces the request and probe->rc holds the BPF_FIB_LKUP_RET_* code.
 */
int silo_fib_lookup(struct silo *s, struct silo_fib_probe *probe);

/* Number of possible CPUs: the length of the array silo_stats_read fills. */
int silo_nr_cpus(void);

/* Reads the per-CPU counters into stats[0 .. silo_nr_cpus() - 1]. */
int silo_stats_read(struct silo *s, struct silo_stats *stats);

/* The name and description of counter idx (enum silo_stat). */
const char *silo_stat_name(unsigned int idx);
const char *silo_stat_desc(unsigned int idx);

#ifdef __cplusplus
}
#endif
#endif /* SILO_SILO_H */
