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
#include <stdio.h>
#include <time.h>
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
/* Longest pin root: room is left for netns/NAME/reuseport/GROUP/... */
#define SILO_PIN_ROOT_MAX 256

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

/*
 * The route caches' map type, chosen when the caches are made: an LRU
 * hash with one LRU list (the default; docs/BENCHMARKS.md, "Route cache
 * kinds", gives the measurements behind it), an LRU hash with a list per
 * CPU (BPF_F_NO_COMMON_LRU), or a plain hash, which never evicts (inserts
 * fail once it is full, until silod's sweeps or a flush make room).
 */
enum silo_cache_kind {
	SILO_CACHE_DEFAULT, /* LRU when made; whatever exists otherwise */
	SILO_CACHE_LRU,
	SILO_CACHE_LRU_PERCPU,
	SILO_CACHE_HASH,
};

struct silo_xdp_load_opts {
	enum silo_xdp_mode mode;
	bool forward; /* forward from the route cache */
	bool replace; /* silo already runs there: swap the program in place */
	bool force; /* replace another program (not attached by a link) */
	bool no_cache; /* bpf_fib_lookup every packet: the benchmark baseline */
	__u32 cache_size; /* entries per node, when the caches are made; 0: default */
	enum silo_cache_kind cache_kind; /* when the caches are made */
	/*
	 * With forward: forward even though an nftables chain or an
	 * iptables-legacy table sees forwarded packets (SILO_ENV_OVERRIDABLE):
	 * XDP then skips them. A security decision; without it such a load
	 * is refused (-EPERM). Every forwarding load restates it.
	 */
	bool allow_firewall_bypass;
	/*
	 * Native mode: load the program not bound to the device. The kernel
	 * runs only unbound programs with BPF_PROG_TEST_RUN (tests, benchmarks,
	 * bpftool prog run); an unbound program cannot ask the driver for a
	 * VLAN tag it stripped (silo_xdp_vlan).
	 */
	bool unbound;
	/*
	 * With forward, where a stateful nftables ruleset accepts an
	 * established connection's packets first (docs/ENVELOPE.md): XDP
	 * forwards those, with conntrack's verdict per packet, and makes
	 * the connection's TCP window tracking liberal first, as nftables'
	 * flowtable does. The namespace's, as allow_firewall_bypass is.
	 * (In the struct's tail padding: its size is the 0.1 ABI's.)
	 */
	bool forward_established;
};

/*
 * Loads silo onto a device: pins its maps (or re-opens the pinned ones) and
 * attaches through a pinned bpf_link, so the program stays after the caller
 * exits. With opts->replace on a device silo already runs on, the link is
 * updated to the new program: the maps are kept and no packet is lost.
 * On failure nothing it made is left behind.
 *
 * It evaluates the offload envelope first and writes it to genid.outside.
 * With opts->forward, a condition that holds and is not bypassed (see
 * allow_firewall_bypass) refuses the load with -EPERM, naming it, except
 * IPv6 forwarding off: the kernel does not forward IPv6 either.
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

/*
 * What silo's program on a device sees of VLAN tags. A device that strips
 * them (ethtool: rx-vlan-offload, rx-vlan-stag-hw-parse; veth: a tag its
 * peer put beside the bytes) gives XDP the frame without its outer tag.
 * In native mode, with a driver that reports the tag as XDP RX metadata,
 * silo's program is bound to the device, asks the driver for the tag and
 * passes a tagged frame to the stack; in generic mode, or with a driver
 * that does not report it, a tagged frame looks untagged and silo would forward or steer it where the kernel
 * delivers it to a VLAN device or drops it.
 */
enum silo_xdp_vlan {
	SILO_XDP_VLAN_IN_FRAME, /* not stripped: silo sees the tag */
	SILO_XDP_VLAN_TOLD, /* stripped, and the driver tells silo */
	SILO_XDP_VLAN_HIDDEN, /* stripped, and silo cannot tell */
};
/* One of the above for a device silo runs on; -ENOENT when it does not,
 * -ENODEV when there is no such device. */
int silo_xdp_vlan(struct silo *s, const char *ifname);

/*
 * TCP and UDP checksums that a sender on this host leaves to offload (a
 * container behind a veth, a guest behind a tap: CHECKSUM_PARTIAL, the
 * field holding the pseudo header's sum), and what silo's program on a
 * device does with them (docs/ENVELOPE.md). The kernel keeps that state
 * with the skb; a frame redirected by XDP leaves as bytes, unfinished.
 */
enum silo_xdp_csum {
	SILO_XDP_CSUM_NONE, /* the device's senders are not on this host */
	SILO_XDP_CSUM_FINISH, /* finished in XDP, then forwarded or steered */
	SILO_XDP_CSUM_PASS, /* passed to the stack, which finishes them */
};

struct silo_xdp_csum_info {
	enum silo_xdp_csum what;
	char kind[16]; /* the device's kind: veth, tun...; "" for a NIC */
	__u64 finished; /* packets so, since the device's load */
	__u64 passed;
};

/* What silo does on a device it runs on; -ENOENT when it does not,
 * -ENODEV when there is no such device. */
int silo_xdp_csum(struct silo *s, const char *ifname,
		  struct silo_xdp_csum_info *info);

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

/*
 * What a miss on key would resolve to now: the same request the data path
 * makes, answered into *entry (genid 0; ifindex 0 unless the answer says
 * where the packet goes). Returns the BPF_FIB_LKUP_RET_* code, or -errno.
 */
int silo_route_resolve(struct silo *s, const struct silo_route_key *key,
		       struct silo_route_entry *entry);

struct silo_daemon_info {
	bool running; /* a live silod serves this namespace */
	bool cache_trusted; /* the data path uses the route cache now */
	struct silo_daemon state; /* as silod last published it */
	struct silo_heartbeat heartbeat;
	__u64 genid;
};

/* silod's state here; -ENOENT when there are no pins. */
int silo_daemon_info(struct silo *s, struct silo_daemon_info *info);

/* The name and description of silod's counter idx (enum silo_daemon_stat). */
const char *silo_daemon_stat_name(unsigned int idx);
const char *silo_daemon_stat_desc(unsigned int idx);

/* Number of possible CPUs: the length of the array silo_stats_read fills. */
int silo_nr_cpus(void);
/*
 * "0-3,8" into cpus[SILO_CPU_WORDS], a CPU set like silo_service_opts'
 * (each CPU below SILO_MAX_CPUS); "" is the empty set. -EINVAL on
 * anything else.
 */
int silo_cpulist_parse(const char *list, __u64 *cpus);
/* clock in ns: CLOCK_MONOTONIC (silod's started_ns), or
 * CLOCK_MONOTONIC_COARSE, the clock of the data path's timestamps
 * (bpf_ktime_get_coarse_ns: the heartbeat's last_ns). */
__u64 silo_clock_ns(clockid_t clock);

/* Reads the per-CPU counters into stats[0 .. silo_nr_cpus() - 1]. */
int silo_stats_read(struct silo *s, struct silo_stats *stats);

/* The name and description of counter idx (enum silo_stat). */
const char *silo_stat_name(unsigned int idx);
const char *silo_stat_desc(unsigned int idx);

/* One node's route cache: how full it is and how it got there. */
struct silo_cache_node {
	__u32 entries; /* keys in its map now (a walk: inexact while it churns) */
	__u32 capacity; /* max_entries */
	/* Counted by the data path on the node's CPUs (cpu_node). */
	__u64 inserts; /* cache_insert */
	__u64 evictions; /* cache_evict */
	__u64 insert_failures; /* cache_insert_fail */
	__u64 refused; /* cache_refused */
};

struct silo_cache_pressure {
	__u32 nr_nodes;
	struct silo_cache_node node[SILO_MAX_NODES];
};

/* Map pressure of every node's route cache; -ENOENT without pins. */
int silo_cache_pressure(struct silo *s, struct silo_cache_pressure *p);

/*
 * Prometheus text exposition format 0.0.4 of this namespace's counters,
 * route cache pressure, genid, silod's counters and the reuseport groups'
 * occupancy (silod(8), METRICS, lists the names). Writes nothing on failure.
 */
int silo_metrics_write(struct silo *s, FILE *f);

/*
 * Reuseport groups: socket[CPU] selection for a SO_REUSEPORT group.
 *
 * An application that owns sockets bound with SO_REUSEPORT to one address
 * and port creates a group from any of them, puts each socket in the slot of
 * the CPU whose thread reads it, and attaches silo's sk_reuseport program to
 * the sockets. A datagram or connection processed on CPU k then goes to the
 * socket in slot k (policy cpu), or to a socket on CPU k's NUMA node (policy
 * node), or where the kernel's hash sends it (policy hash); when the chosen
 * slot is empty or its socket closed, selection falls back to the node, then
 * to the kernel's hash: it never drops. A socket that closes leaves its slot
 * by itself. Groups are pinned under PIN_DIR/reuseport/NAME/ with the shared
 * objects as PIN_DIR/reuseport_*; any process can open a group by name.
 *
 * A handle keeps no socket open. Errors: -EBADF (fd not open), -ENOTSOCK,
 * -EINVAL (a socket that does not fit: not TCP or UDP, no SO_REUSEPORT, not
 * bound, TCP not listening, another protocol, family, address, port or
 * device than the group's, another network namespace; a bad name or
 * policy), -ERANGE (a slot at or beyond the number of possible CPUs),
 * -EEXIST (the name, or the socket's kernel group, is a group already),
 * -EBUSY (the socket is in a slot already), -ENOENT (no such group, or an
 * empty slot), -ENOSPC (SILO_REUSEPORT_MAX_GROUPS - 1 groups exist). A
 * refused call changes nothing.
 */
struct silo_group;

struct silo_group_opts {
	const char *name; /* NULL: from the socket, e.g. "udp4_9000" */
	enum silo_reuseport_policy policy; /* 0: SILO_REUSEPORT_CPU */
	/* TCP: a listener that closes gets its queued requests reset (unless
	 * net.ipv4.tcp_migrate_req) instead of moved to a live listener. */
	bool no_migrate;
};

/* Makes a group for the kernel group of socket fd (fd is not kept). */
int silo_group_create(struct silo *s, int fd,
		      const struct silo_group_opts *opts,
		      struct silo_group **g);
/* Opens the group called name, made by this or another process. */
int silo_group_open(struct silo *s, const char *name, struct silo_group **g);
/* Frees the handle; the group stays (silo_group_detach removes it). */
void silo_group_close(struct silo_group *g);
const char *silo_group_name(const struct silo_group *g);
/* Puts socket fd in slot (its CPU), replacing any socket there. */
int silo_group_set(struct silo_group *g, __u32 slot, int fd);
/* Empties slot. */
int silo_group_remove(struct silo_group *g, __u32 slot);
/* Attaches the program to fd's kernel group (fd: any of its sockets). */
int silo_group_attach(struct silo_group *g, int fd);
/* Takes effect with the next packet; also re-reads cpu_node for the nodes. */
int silo_group_set_policy(struct silo_group *g,
			  enum silo_reuseport_policy policy);
/*
 * Removes the group and its pins; with the last group, the shared objects
 * too. Selection for its sockets becomes the kernel's hash at once. The
 * program comes off the sockets through fd (any socket of the group), or
 * with fd -1 through a socket taken from a slot's owner (pidfd_getfd); when
 * neither works it stays on them, passing every packet to the kernel's hash,
 * until they close. The handle only closes afterwards.
 */
int silo_group_detach(struct silo_group *g, int fd);

struct silo_group_info {
	struct silo_reuseport_key key;
	struct silo_reuseport_group group; /* name, id, policy, flags, slots */
};

int silo_group_info(struct silo_group *g, struct silo_group_info *info);

struct silo_group_slot {
	__u64 cookie; /* the socket in the slot now; 0: empty */
	__u32 node; /* the slot's CPU's node (cpu_node) */
	struct silo_reuseport_slot placed; /* who put which socket there */
};

/* slots[0 .. info.group.nr_slots - 1]. */
int silo_group_slots(struct silo_group *g, struct silo_group_slot *slots);
/* Slots with a socket in them, and slots in all. */
int silo_group_occupancy(struct silo_group *g, __u32 *occupied, __u32 *slots);
/* Per-CPU counters into stats[0 .. silo_nr_cpus() - 1]. */
int silo_group_stats(struct silo_group *g, struct silo_reuseport_stats *stats);
/* Calls fn with each group's handle (closed after fn returns); stops when
 * fn returns non-zero and returns that. 0 when there is none. */
int silo_group_foreach(struct silo *s,
		       int (*fn)(struct silo_group *g, void *ctx), void *ctx);

/* A group name: 1 to SILO_REUSEPORT_NAME_MAX - 1 letters, digits, '_', '-'
 * or ':'. */
bool silo_group_name_valid(const char *name);
const char *silo_reuseport_policy_name(enum silo_reuseport_policy policy);
/* The policy called name, or -EINVAL. */
int silo_reuseport_policy_parse(const char *name);
/* The name and description of counter idx (enum silo_reuseport_stat). */
const char *silo_reuseport_stat_name(unsigned int idx);
const char *silo_reuseport_stat_desc(unsigned int idx);
/* "udp4 127.0.0.1:9000", "tcp6 [::]:80%eth0" */
void silo_reuseport_key_str(const struct silo_reuseport_key *key, char *buf,
			    size_t len);

/*
 * Policy queue: the socket of the CPU that serves the RX queue a packet came
 * in on. The program redoes the NIC's RSS: the Toeplitz hash of (source
 * address, destination address[, source port, destination port]) with the
 * device's key, then indir[hash % indir_size] is the queue, and
 * queue_cpu[queue] the slot. Fill key, key_size, indir, indir_size,
 * nr_queues, queue_cpu (SILO_RSS_NO_CPU: none) and hash_ports; libsilo
 * computes toeplitz. Without a table the policy falls back (counted).
 * silo_group_set_queues returns -EINVAL (a bad table, said why), -ENOENT
 * (the group was detached); silo_group_queues and silo_group_clear_queues
 * -ENOENT when the group has no table.
 */
int silo_group_set_queues(struct silo_group *g,
			  const struct silo_reuseport_queues *q);
int silo_group_queues(struct silo_group *g, struct silo_reuseport_queues *q);
int silo_group_clear_queues(struct silo_group *g);
/*
 * The table of device ifname, as its NIC hashes: Toeplitz key and
 * indirection table (ethtool netlink), the flows whose hash takes the ports
 * (ETHTOOL_GRXFH), each queue's CPU from its IRQ's affinity; q->ifindex is
 * the device's. -EOPNOTSUPP when the device has no Toeplitz table (veth),
 * -ENODEV, -E2BIG (larger than the program takes). The group's table is set
 * from it by silo_group_queues_from_dev, and silod keeps such a table
 * current.
 */
int silo_rss_table_read(const char *ifname, struct silo_reuseport_queues *q);
int silo_group_queues_from_dev(struct silo_group *g, const char *ifname);
/* table[SILO_RSS_INPUT_MAX * 256]: what byte b at input position i adds to
 * the hash, from a key of key_size (>= SILO_RSS_KEY_MIN) bytes. */
int silo_rss_toeplitz_table(const __u8 *key, __u32 key_size, __u32 *table);
/* The Toeplitz hash of in[0 .. len - 1] (len <= SILO_RSS_INPUT_MAX). */
__u32 silo_rss_hash(const __u32 *table, const __u8 *in, __u32 len);
/* The queue q sends a packet of family (AF_INET, AF_INET6) and protocol
 * to, from saddr:sport to daddr:dport (addresses in network order, ports
 * in host order), as the program computes it; -EINVAL for a bad family. */
int silo_rss_queue(const struct silo_reuseport_queues *q, int family,
		   int protocol, const void *saddr, const void *daddr,
		   __u16 sport, __u16 dport, __u32 *hash);

/*
 * Attaching to the sockets of a process silo did not start: every socket of
 * process pid and its descendants bound with SO_REUSEPORT to port (TCP
 * listeners, unconnected UDP) is taken with pidfd_getfd and placed in the
 * slot of the one CPU that the thread reading it is pinned to (a thread
 * blocked on it in a read, accept or epoll_wait), else the one CPU its
 * process is pinned to, else its SO_INCOMING_CPU. Each kernel group found
 * becomes a silo group, attached when it has a socket placed.
 */
enum silo_placed_by {
	SILO_PLACED_NOT,
	SILO_PLACED_THREAD, /* affinity of the thread that reads it */
	SILO_PLACED_PROCESS, /* affinity of the process that holds it */
	SILO_PLACED_INCOMING_CPU, /* SO_INCOMING_CPU */
};

struct silo_placement {
	struct silo_reuseport_key key;
	__u64 cookie;
	__u32 pid; /* owner */
	__u32 tid; /* the thread that reads it, when known */
	int fd; /* in the owner */
	int slot; /* -1: not placed */
	enum silo_placed_by by;
	char group[SILO_REUSEPORT_NAME_MAX]; /* empty: no group made */
	char why[160]; /* not placed, or its group not made: why */
};

struct silo_attach_pid_opts {
	__u16 port;
	int protocol; /* IPPROTO_UDP, IPPROTO_TCP; 0: both */
	enum silo_reuseport_policy policy;
	bool no_migrate;
	const char *name; /* for the group, when there is one */
};

/*
 * *out (malloc'ed, free() it) lists every socket found, placed or not.
 * Returns the number of groups attached (> 0), or -ESRCH (no such process),
 * -EPERM (not allowed to take its sockets), -ENOENT (no such socket),
 * -EINVAL (none could be placed), -ENOSPC (a socket's slot is taken in its
 * group), or another negative errno; on failure nothing is left behind.
 *
 * A kernel group that is a silo group already gets the new sockets in its
 * free slots (its name, policy and other sockets stay): servers started as
 * separate processes can be attached one by one. A socket in the group
 * already stays where it is (its placement says "in the group already").
 */
int silo_group_attach_pid(struct silo *s, int pid,
			  const struct silo_attach_pid_opts *opts,
			  struct silo_placement **out, size_t *n);
/* The same for the process trees of several pids at once, all or nothing. */
int silo_group_attach_pids(struct silo *s, const int *pids, size_t nr_pids,
			   const struct silo_attach_pid_opts *opts,
			   struct silo_placement **out, size_t *n);
const char *silo_placed_by_name(enum silo_placed_by by);

/*
 * A device's receive side scaling, read through ethtool's netlink (what
 * "ethtool -x DEV" and "ethtool -l DEV" show): the indirection table maps a
 * packet's RX hash to an RX queue, indir[hash % indir_size].
 */
#define SILO_RSS_DEV_INDIR_MAX 4096
#define SILO_RSS_DEV_KEY_MAX 256
/* Hash functions: the kernel's ETH_RSS_HASH_* bits (not in its uapi). */
#define SILO_RSS_HASH_TOP (1U << 0) /* toeplitz */
#define SILO_RSS_HASH_XOR (1U << 1)
#define SILO_RSS_HASH_CRC32 (1U << 2)
struct silo_rss {
	__u32 indir_size; /* entries in indir; 0: the device has no table */
	__u32 indir[SILO_RSS_DEV_INDIR_MAX]; /* RX queue numbers */
	__u32 key_size; /* bytes of key; 0: no key reported */
	__u8 key[SILO_RSS_DEV_KEY_MAX];
	__u32 hfunc; /* SILO_RSS_HASH_*, 0: not reported */
	/* Channels ("ethtool -l"); an RX queue is an rx or combined one. */
	__u32 rx_queues; /* combined_count + rx_count */
	__u32 combined_count, rx_count, tx_count;
	__u32 combined_max, rx_max, tx_max;
	bool has_channels; /* the counts above were reported */
};

/*
 * Fills *out for device ifname (in the current network namespace). Returns
 * 0, or -EOPNOTSUPP when the device has no RSS (veth; the channel counts
 * are still filled when it reports them: has_channels), -ENODEV (no such
 * device), -E2BIG (a table or key larger than silo_rss holds), or another
 * negative errno.
 */
int silo_rss_get(const char *ifname, struct silo_rss *out);
/* "toeplitz", "xor", "crc32" for one SILO_RSS_HASH_* bit; else NULL. */
const char *silo_rss_hfunc_name(__u32 hfunc);

/*
 * Services: early demux and CPU steering in XDP (abi.h, struct
 * silo_service). A packet for a local address and a service's port is
 * processed by the stack on the CPU the service picks: by flow (a slot
 * table over its CPUs), by RX queue (queue_cpu) or by flow over its CPUs
 * on the receiving CPU's node. Needs silo loaded (silo_xdp_load) in native
 * mode on the receiving devices. Errors: -EINVAL (bad field), -EEXIST (a
 * service on that key, without replace), -ENOENT (no such service, or no
 * such reuseport group), -ENOSPC (SILO_MAX_SERVICES - 1 services exist).
 */
struct silo_service_opts {
	/* SILO_AF_INET or SILO_AF_INET6; 0 with addr all zero: both. */
	__u8 family;
	__u8 protocol; /* IPPROTO_UDP, IPPROTO_TCP */
	__u16 port; /* host order */
	__u8 addr[16]; /* network order; all zero: any local address */
	enum silo_service_mode mode;
	/* The CPU set follows the occupied slots of this reuseport group
	 * (silo_service_sync); NULL: cpus. */
	const char *group;
	__u64 cpus[SILO_CPU_WORDS];
	__u32 qsize; /* cpumap queue of its CPUs; 0: the default */
	bool replace; /* a service on this key: replace it, slots kept */
};

int silo_service_add(struct silo *s, const struct silo_service_opts *opts);
/* The service of opts' family (0: both), protocol, port and address. */
int silo_service_del(struct silo *s, const struct silo_service_opts *opts);
typedef int (*silo_service_fn)(const struct silo_service_key *key,
			       const struct silo_service *svc, void *ctx);
/* Calls fn for each service key, ordered by id, family and address. */
int silo_service_foreach(struct silo *s, silo_service_fn fn, void *ctx);
/* Per-CPU counters of service id (0: unattributed local packets) into
 * stats[0 .. silo_nr_cpus() - 1]. */
int silo_service_stats(struct silo *s, __u32 id,
		       struct silo_service_stats *stats);
/*
 * Re-reads the CPU sets of the services that follow a reuseport group
 * (moving only the slots of CPUs that came or went) and keeps the cpumap
 * entries to the CPUs of some service. Returns how many services changed.
 */
int silo_service_sync(struct silo *s);
/* queue_cpu: cpu SILO_SERVICE_NO_CPU removes the entry. */
int silo_queue_map_set(struct silo *s, __u32 ifindex, __u32 queue, __u32 cpu);
/* cpus[q] for q < n: the CPU of RX queue q of ifindex, or
 * SILO_SERVICE_NO_CPU. */
int silo_queue_map_get(struct silo *s, __u32 ifindex, __u32 *cpus, __u32 n);
/*
 * Sets the queues of ifname to the CPU their IRQ's affinity names (the
 * first CPU of /proc/irq/N/smp_affinity_list, the queue from the IRQ's
 * name in /proc/interrupts); root: "" or a fake tree for tests. Returns the
 * number of queues set; -ENOENT when the device has no MSI IRQs (veth).
 */
int silo_queue_map_default(struct silo *s, const char *ifname,
			   const char *root);
const char *silo_service_mode_name(enum silo_service_mode mode);
int silo_service_mode_parse(const char *name);
const char *silo_service_stat_name(unsigned int idx);
const char *silo_service_stat_desc(unsigned int idx);

#include "silo/envelope.h"
#include "silo/apply.h"

#ifdef __cplusplus
}
#endif
#endif /* SILO_SILO_H */
