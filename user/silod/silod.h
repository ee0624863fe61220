/* SPDX-License-Identifier: GPL-2.0 */
/* silod: keeps silo's route cache exact while routes change. */
#ifndef SILOD_H
#define SILOD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "silo/abi/internal.h"
#include "../lib/silod.h"

/* Configuration, from options and the config file (SIGHUP re-reads it). */
struct silod_config {
	char cpu_nodes[256]; /* "CPU[-CPU]:NODE,...", empty: from sysfs */
	int rcvbuf; /* netlink receive buffer, bytes */
	int heartbeat_ms;
	int timeout_ms; /* the data path's trust in a silent daemon */
	int min_sweep_us; /* least time between two sweeps: coalescing */
	int resync_interval_ms; /* least time between two resyncs */
	bool global; /* bump genid per route change (the baseline) */
	bool no_second_sweep; /* tests only: show the race is caught */
	int log_level; /* enum silo_log_level */
	char metrics[128]; /* --metrics ADDR:PORT; empty: no HTTP server */
	char apply[256]; /* silo.conf to apply; empty: the default if there,
			  * "none": nothing */
	char state_dir[256]; /* empty: SILO_STATE_DIR_DEFAULT */
};

/* What silod applies of silo.conf(5), and when (reconcile.c). */
struct silod_reconcile {
	struct silo_config *decl; /* NULL: nothing declared */
	const char *netns; /* the part of the file: silod's --netns */
	bool links; /* a link came or changed: devices again */
	__u64 next_groups_ns; /* look for restarted servers */
	unsigned int failed, waiting; /* pending after the last apply */
	int proc_fd; /* the kernel's process events; -1: none */
	bool execs; /* an exec since the last look (or events lost) */
	__u64 next_full_ns; /* look at every process by then anyway */
};

/* How often silod looks for a declared group's new sockets. */
#define SILOD_GROUPS_POLL_MS 250
/* With process events: how often it looks at every process anyway. */
#define PROCWATCH_FULL_MS 10000

/* Routes and neighbours whose cache entries must go. */
struct prefix {
	__u8 family;
	__u8 len;
	__u8 addr[16];
};

struct neigh {
	__u32 ifindex;
	__u8 family;
	__u8 usable; /* NUD_VALID: lladdr may be used */
	__u8 lladdr[6];
	__u8 addr[16];
};

struct sweep_work {
	struct prefix *prefixes;
	size_t nr_prefixes, cap_prefixes;
	struct neigh *neighs;
	size_t nr_neighs, cap_neighs;
};

/* What a burst of netlink messages asks for. */
struct burst {
	struct sweep_work work;
	bool bump; /* global invalidation */
	unsigned int route_bumps; /* --invalidation global: one per route */
	bool addrs; /* refresh local_addrs */
	bool devices; /* refresh devices (MAC, rp_filter) */
	bool rules; /* refresh the cache key flags */
	bool route_mtu; /* a route with an MTU: the least one again */
	bool routes; /* a route may make a key field matter: recount now */
	bool srcs; /* an address, or an IPv4 route not unicast: src_checked */
	bool direct; /* a route of the local table: direct_skip */
	bool resync; /* everything: after an overrun */
	unsigned int messages;
};

/* The offload envelope (envelope.c). Evaluated again at least this often,
 * for what sends no notification (iptables-legacy, sysctls, tcx). */
#define SILOD_ENVELOPE_POLL_MS 1000

struct silod_envelope {
	int nft_fd; /* NFNLGRP_NFTABLES; -1: none */
	int xfrm_fd; /* XFRMNLGRP_POLICY, XFRMNLGRP_SA; -1: none */
	int tc_fd; /* RTNLGRP_TC: qdiscs and filters; -1: none */
	__u64 next_poll_ns; /* CLOCK_MONOTONIC */
	unsigned int poll_ms; /* SILOD_ENVELOPE_POLL_MS but in tests */
	__u32 holds[2]; /* as last evaluated, to log changes */
	bool known;
};

struct ring_buffer;
struct nfct_handle;
/* Connections the data path asks to be made liberal (ct.c). */
struct silod_ct {
	struct ring_buffer *rb; /* ct_ask's; NULL: none */
	struct nfct_handle *h; /* ctnetlink */
	struct silo_ct_ask last; /* the last one asked about */
	bool have_last;
	__u64 made, failed; /* connections made liberal, or not found */
};

/* The PMTU watch (pmtu.c). */
struct silod_pmtu {
	__u32 watch; /* 1 << SILO_FAM_*, as the heartbeat says */
	__u64 emptied_epoch; /* the last epoch whose slot was emptied */
	bool mtu6_known;
	size_t nr_mtu6;
	struct {
		__u32 ifindex;
		int mtu6;
	} mtu6[SILO_MAX_DEVICES];
};

struct MHD_Daemon;

struct silod {
	struct silo *silo;
	struct silo_maps maps;
	struct silod_config cfg;
	const char *config_path;
	struct MHD_Daemon *metrics; /* --metrics: the HTTP server */
	int nl_fd;
	/* Daemon counters, published to the daemon map. */
	pthread_mutex_t lock;
	struct silo_daemon state;
	/* The second sweeps (after a grace period) run in their own thread. */
	pthread_t regrace;
	pthread_cond_t regrace_cond;
	struct sweep_work regrace_work;
	__u64 regrace_fills; /* fill count seen before the first sweeps */
	bool regrace_pending;
	bool stopping;
	__u64 last_resync_ns;
	struct silod_envelope env;
	/* Serializes genid's read-modify-writes: both threads bump it. */
	pthread_mutex_t genid_lock;
	/* An invalidation may have been lost while lost != synced: no
	 * heartbeat (the data path bypasses the cache) until a resync
	 * succeeds. */
	__u32 lost; /* invalidations lost (atomic: both threads) */
	__u32 synced; /* lost when the last good resync began */
	__u64 resync_warned; /* when a failed resync was last logged */
	int device_err; /* refresh_device's */
	int fail_resyncs; /* tests: resyncs still to fail */
	int fail_skip; /* tests: good resyncs before those */
	/* A change may have made a key field stop mattering: the routes are
	 * recounted at the next config_poll (the key keeps the field until
	 * then, which is only slower). */
	bool routes_lazy;
	/* The tables whose routes direct_skip holds besides the local
	 * table's, as the last sync of it read them (events.c); unknown
	 * (< 0): every table but main's. */
	__u32 dtables[SILO_DIRECT_TABLES_MAX];
	int nr_dtables;
	bool nh_lazy; /* a nexthop went: nh_groups again too */
	bool nh_groups; /* a nexthop group may exist */
	void *rx_buf; /* netlink notifications */
	size_t rx_len;
	/* systemd (notify.c): WatchdogSec= in us, 0: none; READY=1 sent. */
	__u64 watchdog_usec;
	bool ready;
	struct cache_index *index; /* the caches' keys by address (index.c) */
	struct silod_pmtu pmtu;
	struct silod_reconcile rec;
	struct silod_ct ct;
};

#define DSTAT_ADD(d, field, n)                    \
	do {                                      \
		pthread_mutex_lock(&(d)->lock);   \
		(d)->state.field += (n);          \
		pthread_mutex_unlock(&(d)->lock); \
	} while (0)

static inline __u64 now_ns(void)
{
	return silo_clock_ns(CLOCK_MONOTONIC);
}

/* The data path's clock. */
static inline __u64 coarse_ns(void)
{
	return silo_clock_ns(CLOCK_MONOTONIC_COARSE);
}

/*
 * Who calls whom: one way, down this list (no file of silod calls one
 * above it; what a lower one finds for an upper one, it returns).
 *
 *   main.c       startup, the event loop, signals, SIGHUP's reload
 *   tick.c       the loop's periodic work: heartbeat, watchdog, envelope,
 *                the once-a-second polls (sync.c, service.c)
 *   burst.c      what a burst of notifications asks for; resync
 *   events.c     rtnetlink notifications into a burst
 *   sync.c       the side maps: topology, devices, genid's counted fields
 *   pmtu.c       the PMTU watch: which families' larger packets use the
 *                cache, the marks of the kernel's exceptions, mtu6
 *   sweep.c      scoped invalidation, the regrace thread, genid bumps
 *   index.c      the caches' keys by address
 *   neigh.c      neighbour confirmation (its own thread)
 *   cache.c      walks of the route caches, their fill count
 *   heartbeat.c  the heartbeat and the daemon map
 *
 * envelope.c, service.c, config.c, metrics.c and notify.c call none of
 * these; libsilo is below them all.
 */

/* tick.c: the periodic work, from run()'s loop. */
struct pollfd;
struct tick {
	__u64 next_beat;
	__u64 next_watchdog;
	__u64 watchdog; /* notify_watchdog_ns(), this turn; 0: none */
};
/* Before the wait: beats when due (or as soon as synced, not ready yet),
 * feeds the watchdog. */
void tick_run(struct silod *d, struct tick *t, __u64 now);
/* How long the loop may wait for the next periodic work. */
__u64 tick_wait(struct silod *d, const struct tick *t, __u64 now);
/* After ppoll: the envelope's sockets (pfd, n) and the polls when due. */
void tick_poll(struct silod *d, const struct pollfd *pfd, int n);

/* burst.c */
/*
 * Everything from the kernel again; a failure leaves silod unsynced (no
 * heartbeat) until one succeeds.
 */
int resync(struct silod *d);
/* Acts on b and empties it; resync_due: a resync may run now. */
int process(struct silod *d, struct burst *b, bool resync_due);

/* events.c */
int nl_events_open(int rcvbuf);
/* Reads every pending message into b; -ENOBUFS after an overrun or a
 * truncated or unreadable message (b->resync is then set and reading goes
 * on). */
int nl_events_drain(struct silod *d, struct burst *b);
/* Forgets the neighbours' last states: each next message sweeps. */
void neigh_seen_reset(void);

/* sync.c: cpu_node from the configuration or sysfs, one cache per node. */
int apply_topology(struct silod *d);
/* Every device's entry again; a changed one bumps genid. */
int refresh_devices(struct silod *d);
/* Whether a nexthop group may exist (d->nh_groups). */
void nexthop_groups(struct silod *d);
/* silo_sync_genid's what (SILO_SYNC_*), routes counted with their MTUs. */
int sync_routes(struct silod *d, unsigned int what);
/* Every tick's poll: what changes without a notification
 * (sysctls: multipath hash, min_pmtu, accept_local, rp_filter; the least
 * route MTU while one exists, since a route that loses its MTU says
 * nothing of the one it had; the key's route flags after a deletion). */
void config_poll(struct silod *d);

/* pmtu.c: once a second and at each resync. Says in the heartbeat which
 * families are watched, marks what the kernel holds, covers what the data
 * path could not read, empties the next epoch's slot; an mtu6 changed
 * since the last call bumps genid. */
int pmtu_poll(struct silod *d);
/* Every family unwatched: the next poll marks them all again. */
void pmtu_reset(struct silod *d);

/* sweep.c */
void work_reset(struct sweep_work *w);
void work_free(struct sweep_work *w);
int work_add_prefix(struct sweep_work *w, const struct prefix *p);
int work_add_neigh(struct sweep_work *w, const struct neigh *n);
int work_merge(struct sweep_work *dst, const struct sweep_work *src);
/* Removes the entries w names from every node cache; returns how many. */
int sweep(struct silod *d, const struct sweep_work *w);
/* Scoped invalidation, exact under races (see sweep.c). */
int invalidate(struct silod *d, const struct sweep_work *w);
int regrace_start(struct silod *d);
void regrace_stop(struct silod *d);
int genid_bump(struct silod *d);
int genid_bump_by(struct silod *d, unsigned int n);
int genid_sweeps(struct silod *d);

/*
 * index.c: the route caches' keys by address, fed by the data path's fill
 * log. index_sweep() deletes the entries w's prefixes hold (returns how
 * many, or -errno); it and index_drain() take in the log first.
 * index_rebuild() builds it again from a walk of the caches.
 */
struct cache_index;
int index_open(struct silod *d);
void index_close(struct silod *d);
int index_pollfd(struct silod *d);
int index_drain(struct silod *d);
int index_rebuild(struct silod *d);
int index_sweep(struct silod *d, const struct sweep_work *w);
/* Does p hold address a of family? */
bool in_prefix(const struct prefix *p, __u8 family, const __u8 *a);

/* envelope.c */
void envelope_init(struct silod *d); /* no sockets yet */
/* Listens to nftables, xfrm and tc changes (in the served namespace). */
int envelope_open(struct silod *d);
void envelope_close(struct silod *d);
/* Evaluates the envelope and writes it to genid.outside (override kept). */
int envelope_update(struct silod *d);
/* Puts its sockets in pfd (room for 3); returns how many. */
int envelope_pollfds(struct silod *d, struct pollfd *pfd);
/* wait, or less when the next poll is due sooner. */
__u64 envelope_wait(struct silod *d, __u64 now, __u64 wait);
/* After ppoll: on a notification, or when the poll is due, updates. True
 * when the poll was due: the caller's once-a-second polls follow it. */
bool envelope_poll(struct silod *d, const struct pollfd *pfd, int n);

/* ct.c: the ct_ask ring buffer, after the maps are open. */
int ct_open(struct silod *d);
void ct_close(struct silod *d);
int ct_pollfds(struct silod *d, struct pollfd *pfd); /* room for 1 */
void ct_poll(struct silod *d);

/* neigh.c: once a second, NTF_USE for the neighbours the caches send to. */
void neigh_confirm(struct silod *d);
void neigh_confirm_stop(void);
/* service.c: services that follow a group get its slots' CPUs. */
void service_poll(struct silod *d);
/* Policy queue tables read from a device, kept as the device has them. */
void queues_poll(struct silod *d);

/* reconcile.c: silo.conf(5). Reads the file (keeping the old one when the
 * new one is bad), applies what of it (SILO_APPLY_*), and after each
 * loop's events, what a link event or the groups' poll calls for. */
int reconcile_load(struct silod *d);
void reconcile_apply(struct silod *d, unsigned int what);
void reconcile_poll(struct silod *d, __u64 now);
void reconcile_free(struct silod *d);

/* procwatch.c: the kernel's process events, for the groups' look. Opened
 * before silod enters --netns; never fails (none: every look looks at
 * every process). */
void procwatch_open(struct silod *d);
/* Takes the events queued since the last look: d->rec.execs. */
void procwatch_read(struct silod *d);
void procwatch_close(struct silod *d);

/* cache.c */
/* Sum over CPUs of the data path's cache fills (inserts, refreshes). */
__u64 cache_fills(struct silod *d);
/*
 * Calls fn for every entry of every node cache (fd: its node's map), read
 * in batches, as the map holds them: stale, being rewritten or another
 * key's included. fn returning non-zero stops the walk with that value.
 */
typedef int (*cache_entry_fn)(int fd, const struct silo_route_key *k,
			      const struct silo_route_entry *e, void *ctx);
int cache_for_each(struct silod *d, cache_entry_fn fn, void *ctx);
/* The same walk in slices of about max entries from *c (zeroed to start):
 * 1 when it has gone round every node, 0 when there is more, or -errno. */
struct cache_cursor {
	__u32 node, in, out;
	bool started;
};
int cache_walk_slice(struct silod *d, struct cache_cursor *c, __u32 max,
		     cache_entry_fn fn, void *ctx);

/* heartbeat.c: the heartbeat and the daemon map. The data path stops
 * using the cache now, not after the timeout. */
void heartbeat_expire(struct silod *d);
/* The cache must not be trusted until a resync succeeds. */
void invalidation_lost(struct silod *d);
/* No invalidation lost since the last good resync began. */
bool synced(struct silod *d);
/* Only while synced: true when the heartbeat was written. */
bool beat(struct silod *d);
/* The daemon counters to the daemon map. */
void publish(struct silod *d);

/* metrics.c: --metrics. 0 when spec is an address silod can listen on. */
int metrics_check(const char *spec);
/* A socket listening on spec, or -errno (said why). */
int metrics_listen(const char *spec);
/* Serves GET /metrics on fd (taken, closed on failure) in a thread. */
int metrics_start(struct silod *d, int fd);
void metrics_stop(struct silod *d);

/* notify.c: systemd's sd_notify; nothing without NOTIFY_SOCKET. */
void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void notify_init(struct silod *d);
/* How often the main loop sends WATCHDOG=1; 0: never. */
__u64 notify_watchdog_ns(const struct silod *d);
/* STATUS=serving ...: what silod does while synced. */
void notify_serving(const struct silod *d);

#endif /* SILOD_H */
