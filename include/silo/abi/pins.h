/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The names of silo's pins, relative to a namespace's pin directory
 * (/sys/fs/bpf/silo/<netns>/): one macro per map, program and link, used
 * by the BPF objects' map names and by user space alike. A pin name is
 * part of the upgrade contract: it moves only with SILO_LAYOUT_VERSION.
 */
#ifndef SILO_ABI_PINS_H
#define SILO_ABI_PINS_H

/* The XDP object's shared maps: each is pinned under its map's name. */
#define SILO_PIN_META "meta"
#define SILO_PIN_LOCAL_ADDRS "local_addrs"
#define SILO_PIN_LOCAL_BITS "local_bits"
#define SILO_PIN_GENID "genid"
#define SILO_PIN_CPU_NODE "cpu_node" /* every object's */
#define SILO_PIN_DEVICES "devices"
#define SILO_PIN_TX_PORTS "tx_ports"
#define SILO_PIN_STATS "stats"
#define SILO_PIN_ROUTE_CACHE "route_cache"
#define SILO_PIN_HEARTBEAT "heartbeat"
#define SILO_PIN_DAEMON "daemon"
#define SILO_PIN_FILL_LOG "fill_log"
#define SILO_PIN_PMTU_MARKS "pmtu_marks"
#define SILO_PIN_PMTU_UNSEEN "pmtu_unseen"
#define SILO_PIN_ROUTE_MTUS "route_mtus"
#define SILO_PIN_SRC_CHECKED "src_checked"
#define SILO_PIN_DIRECT_SKIP "direct_skip"
#define SILO_PIN_CSUM_STATS "csum_stats"
#define SILO_PIN_CT_STATS "ct_stats"
#define SILO_PIN_CT_ASK "ct_ask"
#define SILO_PIN_ROUTE_CACHE_NODE "route_cache_n" /* + node number */
#define SILO_PIN_XDP_LINK "xdp_link_" /* + ifindex */
#define SILO_PIN_REUSEPORT_DIR "reuseport" /* one entry per group */

#define SILO_PIN_REUSEPORT_GROUPS "reuseport_groups"
#define SILO_PIN_REUSEPORT_SOCKETS "reuseport_sockets"
#define SILO_PIN_REUSEPORT_NODES "reuseport_nodes"
#define SILO_PIN_REUSEPORT_STATS "reuseport_stats"
#define SILO_PIN_REUSEPORT_QUEUES "reuseport_queues"
#define SILO_PIN_REUSEPORT_SELECT "reuseport_select" /* program */
#define SILO_PIN_REUSEPORT_MIGRATE "reuseport_migrate" /* program */
#define SILO_PIN_GROUP_SOCKETS "sockets" /* in reuseport/<name>/ */
#define SILO_PIN_GROUP_SLOTS "slots"

#define SILO_PIN_SERVICES "services"
#define SILO_PIN_SERVICE_NODES "service_nodes"
#define SILO_PIN_SERVICE_STATS "service_stats"
#define SILO_PIN_QUEUE_CPU "queue_cpu"
#define SILO_PIN_CPUMAP "cpumap"

#endif /* SILO_ABI_PINS_H */
