/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* libsilo's internals, shared by its files and by silod. */
#ifndef SILO_INTERNAL_H
#define SILO_INTERNAL_H

#include <limits.h>
#include <stdint.h>
#include <time.h>
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

/* Shared maps, by their names in the BPF object (pin names too). */
enum silo_map {
	SILO_MAP_META,
	SILO_MAP_LOCAL_ADDRS,
	SILO_MAP_GENID,
	SILO_MAP_CPU_NODE,
	SILO_MAP_DEVICES,
	SILO_MAP_TX_PORTS,
	SILO_MAP_STATS,
	SILO_MAP_ROUTE_CACHE,
	SILO_MAP_HEARTBEAT,
	SILO_MAP_DAEMON,
	SILO_MAP_FILL_LOG,
	/* Services and CPU steering (service.c). */
	SILO_MAP_SERVICES,
	SILO_MAP_SERVICE_NODES,
	SILO_MAP_SERVICE_STATS,
	SILO_MAP_QUEUE_CPU,
	SILO_MAP_CPUMAP,
	SILO_MAP_COUNT
};

/* fds of the pinned maps, opened by silo_maps_open(); -1 when closed. */
struct silo_maps {
	int fd[SILO_MAP_COUNT];
	int node_fd[SILO_MAX_NODES];
	__u32 nr_nodes;
};

void silo_maps_init(struct silo_maps *m);
void silo_maps_close(struct silo_maps *m);
/*
 * Opens the shared maps, or makes them: loads silo's XDP object (libbpf makes
 * every map, with BTF), fills them from the kernel and pins them, without
 * attaching anything. cache_size 0: whatever exists, or the default; another
 * size than the existing one is refused. *created says which happened.
 */
int silo_maps_ensure(struct silo *s, struct silo_maps *m, __u32 cache_size,
		     enum silo_cache_kind kind, bool *created);
struct bpf_object;
/* Points every map of obj named like a shared map at the shared one. */
int silo_maps_reuse(const struct silo_maps *m, struct bpf_object *obj);
/* Entries per node of the route caches. */
int silo_maps_cache_size(const struct silo_maps *m, __u32 *size);
/*
 * Reads what is asked and writes genid's flags (the cache key's fields and
 * why) and MTU floors; bumps genid when they changed. The multipath hash
 * policies are read every time: the key needs each family's.
 */
#define SILO_SYNC_RULES (1U << 0) /* policy rules */
#define SILO_SYNC_SYSCTLS (1U << 1) /* min_pmtu */
#define SILO_SYNC_ROUTE_MTU (1U << 2) /* the least unlocked route MTUs */
#define SILO_SYNC_ROUTES (1U << 3) /* multipath and "from" routes */
#define SILO_SYNC_ALL 15
/* The genid flags SILO_SYNC_ROUTES decides. */
#define SILO_GENID_ROUTES_BITS \
	(SILO_GENID_MPATH_V4 | SILO_GENID_MPATH_V6 | SILO_GENID_SRC_ROUTES_V6)
int silo_sync_genid(int genid_fd, unsigned int what);
/*
 * Removes the link pins whose link attaches to nothing (its device deleted,
 * or detached by hand) with their device entries; with the last user gone,
 * the shared maps, as an unload does (not in silod, which keeps them while
 * it runs). Returns how many it removed, or -errno.
 */
int silo_xdp_prune(struct silo *s);
/* Makes (and pins) route caches up to nr_nodes, like node 0's; updates
 * meta. Never removes caches. */
int silo_maps_set_nodes(struct silo *s, struct silo_maps *m, __u32 nr_nodes);

int silo_mkdir_p(const char *path, mode_t mode);
/*
 * Checks every existing directory from the bpffs mount down to the pin
 * directory: a directory, not a link, owned by root (or us), not writable
 * by group or others. -EPERM or -ELOOP (said why and what to do) when not.
 */
int silo_pin_dirs_check(const struct silo *s);
/* Makes the pin directory (0700) and checks the path, before and after. */
int silo_pin_dir_make(const struct silo *s);

/*
 * A namespace's pins (pins.c): the only place that knows which pins exist.
 * It makes and adopts them, counts their users (XDP links, reuseport
 * groups, silod) and removes them with the last user.
 */
/* The shared maps' names in the BPF object, which are their pin names. */
extern const char *const silo_map_names[SILO_MAP_COUNT];
int silo_pin_path(const struct silo *s, char *buf, size_t len,
		  const char *name);
int silo_link_pin_path(const struct silo *s, char *buf, size_t len,
		       __u32 ifindex);
/* A device's XDP link pin: an fd of it (-ENOENT: none), pinning it (over
 * the one there with replace), removing it. */
int silo_link_pin_get(const struct silo *s, __u32 ifindex);
int silo_link_pin(const struct silo *s, __u32 ifindex, int link_fd,
		  bool replace);
void silo_link_unpin(const struct silo *s, __u32 ifindex);
/* An fd of the object pinned as name in the pin directory, or -errno. */
int silo_obj_get(const struct silo *s, const char *name);
/* Opens every pinned map after checking meta: -ENOENT when silo is not
 * loaded here, -ESTALE when the pins are of another layout or namespace. */
int silo_maps_open(struct silo *s, struct silo_maps *m);
/* Pins every map of m (meta last); on failure removes what it pinned. */
int silo_maps_pin(struct silo *s, const struct silo_maps *m);
/* Removes the map pins, meta first. */
void silo_maps_unpin(struct silo *s);
/* Pins node's route cache; one pinned already is fine. */
int silo_pin_node_cache(const struct silo *s, __u32 node, int fd);
/* Calls fn for each device's link pin in the namespace's directory. */
int silo_for_each_link_pin(struct silo *s,
			   int (*fn)(struct silo *s, __u32 ifindex, void *ctx),
			   void *ctx);
/* The pid of a live silod serving this namespace's pins, or 0. */
int silo_daemon_pid(struct silo *s);
/* starttime (field 22 of /proc/PID/stat, clock ticks since boot); pid 0:
 * this process. Tells a process from a later one that reused its pid. */
int silo_proc_start_ticks(int pid, __u64 *ticks);
/* True while an XDP link, a reuseport group or silod uses the shared maps. */
bool silo_maps_in_use(struct silo *s);
/* Removes the shared pins and empty directories, unless still in use. */
void silo_maps_release(struct silo *s);
/* Removes the pin directory and its parents up to the pin root, each
 * only when empty. */
void silo_pin_dirs_remove_empty(const struct silo *s);

/* What every reuseport group shares, pinned as PIN_DIR/reuseport_*. */
enum silo_rp_pin {
	SILO_RP_GROUPS,
	SILO_RP_SOCKETS,
	SILO_RP_NODES,
	SILO_RP_STATS,
	SILO_RP_QUEUES,
	SILO_RP_SELECT, /* programs from here on */
	SILO_RP_MIGRATE,
	SILO_RP_COUNT
};
/* An fd of one of them, or -errno. */
int silo_rp_pin_get(const struct silo *s, enum silo_rp_pin which);
/* Opens them all and the cpu_node map (fds stored as opened): -ENOENT when
 * there are none, -ESTALE when some are missing. */
int silo_rp_pins_open(const struct silo *s, int fd[SILO_RP_COUNT],
		      int *cpu_node_fd);
/* Pins them all; on failure removes what it pinned. */
int silo_rp_pins_pin(const struct silo *s, const int fd[SILO_RP_COUNT]);
/* With the last group gone, the shared objects go, then the shared maps
 * unless XDP or silod still uses them. */
void silo_rp_pins_release(struct silo *s);
/* Removes the shared objects and every group's pins but keep's: they were
 * left when the shared maps had to be made anew. */
void silo_rp_pins_remove_orphans(struct silo *s, const char *keep);
/* A group's own pins, in PIN_DIR/reuseport/NAME/. Claiming the name makes
 * the directory (under the group lock): -EEXIST when taken, -ENOENT when
 * the pin directory went meanwhile (try again). */
int silo_group_pins_claim(const struct silo *s, const char *name);
int silo_group_pins_pin(const struct silo *s, const char *name, int sockets_fd,
			int slots_fd);
/* -ESTALE when either is missing; fds stored as opened (-1 when not). */
int silo_group_pins_open(const struct silo *s, const char *name,
			 int *sockets_fd, int *slots_fd);
void silo_group_pins_remove(const struct silo *s, const char *name);
/* Reuseport policy queue (reuseport_queue.c): the group's RSS table map and
 * id under the group lock; the lock to pass to silo_group_unlock, or -errno. */
struct silo_group;
int silo_group_lock_queues(struct silo_group *g, int *queues_fd, __u32 *id);
void silo_group_unlock(int lock);
/* cpus[q] (q < n): the first CPU of the affinity of RX queue q's IRQ
 * (under root: "" or a fake tree), SILO_SERVICE_NO_CPU when unknown.
 * Returns the queues found; -ENOENT when the device has no MSI IRQs. */
int silo_irq_queue_cpus(const char *ifname, const char *root, __u32 *cpus,
			__u32 n);

/* Reads a small file; returns bytes read or -errno. */
int silo_read_file(const char *path, char *buf, size_t len);
int silo_read_sysctl_int(const char *path, int *val);
/* Parses "0-3,8,10-11" into a bitmap of len bits; -EINVAL on bad input,
 * -ERANGE for a CPU of len or more. A newline ends it. */
int silo_parse_cpulist(const char *s, unsigned char *bits, size_t len);
/* One element of a CPU list, "N" or "N-M" (N <= M), at s: *end is set past
 * it. -EINVAL when s does not start with one. */
int silo_parse_cpu_range(const char *s, char **end, unsigned long *first,
			 unsigned long *last);
/* cpu -> node, from sysfs; node 0 for every CPU when there is no NUMA. */
int silo_read_cpu_nodes(__u32 *node_of, int nr_cpus, __u32 *nr_nodes);
bool silo_numa_node_online(__u32 node);

/* Netlink (libmnl). */
struct nlmsghdr;
/* Sends req on a netlink socket of protocol (NETLINK_ROUTE, ...) and runs cb
 * on every answer; an interrupted dump is run again. */
int silo_nl_request(int protocol, struct nlmsghdr *req,
		    int (*cb)(const struct nlmsghdr *nlh, void *data),
		    void *data);
struct silo_nl_addr {
	int family;
	__u32 ifindex;
	__u8 prefixlen;
	__u8 scope;
	__u8 addr[16];
};
typedef int (*silo_nl_addr_fn)(const struct silo_nl_addr *a, void *ctx);
int silo_nl_dump_addrs(silo_nl_addr_fn fn, void *ctx);
/* Dumps run again because they came back with NLM_F_DUMP_INTR. */
extern unsigned long silo_nl_dumps_retried;
struct silo_nl_link {
	__u8 mac[6];
	bool has_mac;
	__u32 master; /* IFLA_MASTER, 0: none */
	char slave_kind[16]; /* IFLA_INFO_SLAVE_KIND: bridge, bond, vrf... */
};
/* A device's MAC (-EOPNOTSUPP without one), master and port kind. */
int silo_nl_link(__u32 ifindex, struct silo_nl_link *l);
/* One walk of the IPv4 and IPv6 routes of every table. */
struct silo_nl_routes {
	__u32 mtu_min[2]; /* [SILO_FAM_*]: the least unlocked MTU, 0: none */
	__u32 flags; /* SILO_GENID_MPATH_V4, _MPATH_V6, _SRC_ROUTES_V6 */
};
int silo_nl_routes_scan(struct silo_nl_routes *r);
/* 1 when a nexthop group exists, else 0. */
int silo_nl_nexthop_groups(void);
/* What the policy rules select on: SILO_GENID_RULES_L4 (ipproto, ports),
 * SILO_GENID_RULES_SRC_V4 and _V6 (a source prefix). */
int silo_nl_rules_keys(__u32 *flags);

/*
 * RSS_GET came with Linux 6.3; older headers (Debian 12's) lack it. The
 * numbers are uapi, fixed: the message follows PSE_SET and its reply
 * PSE_GET_REPLY in their enums (linux/ethtool_netlink.h).
 */
#define SILO_ETHTOOL_MSG_RSS_GET (ETHTOOL_MSG_PSE_SET + 1)
#define SILO_ETHTOOL_MSG_RSS_GET_REPLY (ETHTOOL_MSG_PSE_GET_REPLY + 1)
enum {
	SILO_ETHTOOL_A_RSS_HEADER = 1, /* nest: ETHTOOL_A_HEADER_* */
	SILO_ETHTOOL_A_RSS_CONTEXT, /* u32 */
	SILO_ETHTOOL_A_RSS_HFUNC, /* u32: SILO_RSS_HASH_* */
	SILO_ETHTOOL_A_RSS_INDIR, /* binary: u32 per entry */
	SILO_ETHTOOL_A_RSS_HKEY, /* binary */
};

/*
 * ethtool netlink (ethtool.c): each reply's attributes into *out, apart
 * from the socket so that tests can feed crafted messages. -EPROTO for a
 * malformed one, -E2BIG for a table or key silo_rss cannot hold.
 */
int silo_ethtool_parse_family(const struct nlmsghdr *nlh, __u16 *id);
int silo_ethtool_parse_rss(const struct nlmsghdr *nlh, struct silo_rss *out);
int silo_ethtool_parse_channels(const struct nlmsghdr *nlh,
				struct silo_rss *out);

/*
 * Whether XDP on a device can see VLAN tags: a device that strips them
 * (rx-vlan-hw-parse or rx-vlan-stag-hw-parse active) hands XDP the frame
 * without its outer tag, and only a driver that reports the tag as XDP RX
 * metadata (netdev netlink: xdp-rx-metadata-features vlan-tag) tells a
 * program bound to the device (bpf_xdp_metadata_rx_vlan_tag). veth reports
 * both: a tag its peer put beside the bytes is stripped in this sense.
 */
struct silo_vlan_view {
	bool strips; /* a stripping feature is active */
	bool meta; /* the driver tells bound XDP programs the tag */
};
/* -EOPNOTSUPP without ethtool netlink; a kernel without netdev netlink
 * (before 6.3) leaves meta false. */
int silo_vlan_view_get(const char *ifname, __u32 ifindex,
		       struct silo_vlan_view *v);
/* Replies: ETHTOOL_MSG_FEATURES_GET_REPLY (verbose bitsets) and netdev's
 * NETDEV_CMD_DEV_GET, parsed into *v as above. */
int silo_ethtool_parse_features(const struct nlmsghdr *nlh,
				struct silo_vlan_view *v);
int silo_netdev_parse_dev(const struct nlmsghdr *nlh, struct silo_vlan_view *v);
/* netdev netlink (linux/netdev.h, 6.3; the header came after Debian 12's) */
#define SILO_NETDEV_CMD_DEV_GET 1
#define SILO_NETDEV_A_DEV_IFINDEX 1
#define SILO_NETDEV_A_DEV_XDP_RX_METADATA_FEATURES 5 /* u64 */
#define SILO_NETDEV_XDP_RX_METADATA_VLAN_TAG 4

/*
 * The offload envelope (envelope.c): which SILO_ENV_* conditions hold in
 * the current network namespace, per family, and a line that names the
 * first one found (e.g. "nftables chain inet filter forward").
 */
struct silo_envelope {
	__u32 holds[2]; /* [SILO_FAM_V4], [SILO_FAM_V6]: SILO_ENV_* bits */
	char detail[256];
};
/* Evaluates every condition; on a failure to read one, sets UNKNOWN. */
int silo_envelope_eval(struct silo_envelope *env);
/*
 * Writes env less genid.override into genid.outside (override: the
 * SILO_ENV_OVERRIDABLE bits to keep, or -1 to keep the map's), bumping
 * genid when outside changed. Returns 0 or -errno.
 */
int silo_envelope_apply(int genid_fd, const struct silo_envelope *env,
			int override);
/* Fill the maps from the kernel's state. */
int silo_fill_local_addrs(int map_fd);
int silo_fill_cpu_node(int map_fd, __u32 *nr_nodes);
int silo_write_cpu_node(int map_fd, const __u32 *node_of, int nr_cpus);
/* Writes ifindex's record; bumps genid (unless genid_fd < 0) when an
 * existing record changed, since cached answers depend on it. */
int silo_fill_device(int map_fd, int genid_fd, __u32 ifindex);
/* genid + n; past the top it wraps to 1, never 0 (0 marks an entry being
 * rewritten). For a bump written together with other fields of genid. */
static inline void silo_genid_advance(struct silo_genid *g, unsigned int n)
{
	g->genid += n;
	if (g->genid < n)
		g->genid = 1;
}

/* genid + n in the map (one writer at a time: the caller's to ensure). */
int silo_genid_bump_fd(int genid_fd, unsigned int n);

/* The current network namespace's cookie (SO_NETNS_COOKIE). */
int silo_netns_cookie(__u64 *cookie);

/* Services (service.c): rebuilds a slot table over cpus from the old one,
 * moving as few slots as an even share allows; returns the CPU count. */
int silo_service_slots_build(__u16 *slots, const __u64 *cpus);
/* silo_service_sync, or -EAGAIN at once while another process holds the
 * lock (silod: its loop must not wait). */
int silo_service_sync_try(struct silo *s);

/* Reuseport groups (reuseport.c, reuseport_pid.c). */
/* What socket fd is as a group key; why says what does not fit. */
int silo_reuseport_sock_key(const struct silo *s, int fd,
			    struct silo_reuseport_key *key, char *why,
			    size_t len);
int silo_socket_cookie(int fd, __u64 *cookie);
/* silo_group_set, recording owner (of another process) for show/detach;
 * only_free: -EEXIST, nothing changed, when the slot holds a socket. */
int silo_group_place(struct silo_group *g, __u32 slot, int fd,
		     const struct silo_reuseport_slot *owner, bool only_free);
/* The group of the kernel group key: -ENOENT (quietly) when there is none. */
int silo_group_open_key(struct silo *s, const struct silo_reuseport_key *key,
			struct silo_group **out);

#endif /* SILO_INTERNAL_H */
