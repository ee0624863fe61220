/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_live's parts (tools/bench/bench_live.c says what it measures): the
 * lab (namespaces, route sets, the variants on the router's ingress) in
 * lab.c, the traffic source's frames and the measurement in traffic.c, the
 * stateful firewall of the _fw variants in firewall.c and their lines in
 * fw_report.c.
 */
#ifndef SILO_BENCH_LIVE_H
#define SILO_BENCH_LIVE_H

#include <signal.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "pkt.h"
#include "source.h"
#include "silo_test.skel.h"

#define NS_CLIENT "silo-bl-client"
#define NS_ROUTER "silo-bl-router"
#define PIN_ROOT "/sys/fs/bpf/silo-bl"
#define DEV_CLIENT "blc0" /* the source's entry: its peer is blr-in */
#define DEV_IN "blr-in"
#define DEV_OUT "blr-out"
#define DEV_SINK "bls0" /* the source's back: its peer is blr-out */

#define HOP_LIMIT 255
#define SRC_BASE 0x01000000U /* sources fd01::100:0 + k */
#define UDP_SPORT 4000 /* the frames' ports (pkt_build()'s defaults) */
#define UDP_DPORT 5000
#define FW_MAX_FLOWS 1024 /* the firewall's, each made established by hand */
/* The router's nf_conntrack_udp_timeout under it, in seconds (the flood's
 * entries expire as they are made: firewall.c, fw_prepare()). */
#define FW_FLOOD_UDP_TIMEOUT 0
#define MAX_ROUNDS 32
#define MAX_TURNS 200 /* pairs of the flood's turns (fw_turns()) */
/* On the wire a frame takes its FCS, preamble and SFD, and the gap. */
#define WIRE_EXTRA (4 + 8 + 12)

/* The forward_live variants (NR_BASE), then the firewall's: the router's
 * forward chain stateful, the ring's flows established in conntrack. */
enum { KERNEL, SILO, REF, FLOOR, KERNEL_FW, SILO_FW, NR_VARIANTS };
#define NR_BASE KERNEL_FW
#define VARIANT_FW(v) ((v) >= KERNEL_FW)
enum {
	STEADY_64,
	STEADY_1514,
	IMIX,
	FLOOD,
	OFFLOAD_64,
	OFFLOAD_1514,
	NR_TRAFFIC
};
enum { SET_LOOKUP, SET_FROM, NR_SETS };
enum { SIZE_64, SIZE_590, SIZE_1514, NR_SIZES };

extern const char *const variant_name[NR_VARIANTS];
extern const char *const set_name[NR_SETS];
extern const size_t size_bytes[NR_SIZES];

/* A kind of traffic: its sources and the sizes of its frames, in turn;
 * partial: their UDP checksums left to offload (source.h), the same
 * traffic's steady one (base) else. */
struct traffic {
	const char *name;
	__u32 nsrc;
	int npat;
	__u8 pat[12];
	bool partial;
	int base;
};

extern struct traffic traffic[NR_TRAFFIC];

/* What bench_live made, for cleanup on every path. */
struct live {
	int ns_orig, ns_client, ns_router;
	struct silo *s;
	struct silo_test *skel;
	struct source *src;
	enum source_shape shape; /* SOURCE_RING, or SOURCE_PACKET */
	int cpu; /* the path's */
	int variant; /* on the router's ingress now, or -1 */
	bool cannot_run; /* the source cannot run here (source.h) */
	pid_t silod;
	__u32 in_ifindex, out_ifindex;
	bool in_silo, in_prog, out_silo;
	bool fw; /* the firewall's ruleset on the router (firewall.c) */
	__u32 fw_flood_max; /* the flood's sources under it, at most */
	/* silo loaded with --forward-established, every time: the firewall's
	 * variants are measured (firewall.c) */
	bool ct_optin;
	int ct_fd; /* silo's pinned ct_stats, once opened (or -1) */
	/* The frame of each size, for source SRC_BASE (k = 0). */
	uint8_t frame[NR_SIZES][PKT_MAX];
	uint8_t sink_mac[6];
};

extern struct live L;
extern volatile sig_atomic_t stopping;
extern bool verbose;

/*
 * What the firewall (firewall.c) counted: packets its rules after the
 * first matched (invalid: dropped, new: accepted as a new connection),
 * and conntrack's statistics of the router's namespace (conntrack -S):
 * packets dropped because the table was full (drop, early_drop: an entry
 * evicted for room, insert_failed); entries: the most conntrack held at a
 * measurement's end (conntrack -C).
 */
struct fw_counts {
	__u64 invalid, new_conn;
	__u64 drop, early_drop, insert_failed;
	__u64 entries;
};

/* One measurement of a variant under a traffic, over the rounds. */
struct cell {
	double pps[MAX_ROUNDS]; /* per second of the path's time on its CPU */
	double share[MAX_ROUNDS]; /* of wall time that was */
	__u64 pkts; /* at the sink, over the measured intervals */
	__u64 all_pkts; /* at the sink, warm-ups included */
	__u64 stack_fwd; /* the router's stack forwarded, warm-ups included */
	__u64 lost; /* ring frames that never came back */
	struct silo_stats d; /* silo's counters over the measured intervals */
	struct silo_ct_stats ct; /* its conntrack counters, likewise */
	struct fw_counts fw; /* the firewall's, warm-ups included */
};

/*
 * The flood under the firewall in turns (fw_turns()): kernel_fw and
 * silo_fw a slice each, pair by pair, on one running ring. pps: by
 * variant (0 kernel_fw, 1 silo_fw) and pair; c: each variant's counts
 * over its slices (pps unused).
 */
struct turns {
	int pairs;
	double settle, slice;
	double pps[2][MAX_TURNS];
	struct cell c[2];
};

/* What to run: the command line's (args.c). */
struct run {
	int rounds, routes, rules, cpu;
	int turns; /* pairs of the flood's turns under the firewall */
	double secs, warmup;
	bool set_on[NR_SETS], traffic_on[NR_TRAFFIC];
	bool fw_on[NR_TRAFFIC]; /* kernel_fw and silo_fw: on route set fw_set */
	int fw_set;
};

/* args.c: -1 to go on, else the exit status (said). */
int parse_args(int argc, char **argv, struct run *run);

/* lab.c */
void lab_down(void);
int lab_up(void);
int lab_routes(int set, int routes, int rules);
int lab_endpoints(void);
int set_variant(int v);
int ref_check(void);
__u64 sink_count(__u64 *other);
void lab_cleanup(void);

/* traffic.c */
extern bool wall_time; /* --wall: rates per second of wall time */
extern int softirq_measures;

void frames_build(const struct pkt_spec *sp);
int source_up(void);
int traffic_check(int t);
int measure(struct cell *c, int t, int round, double warmup, double secs);
double traffic_frame_bytes(int t);
int fw_turns(struct turns *tu, double warmup);

/* firewall.c */
int fw_tools(void);
int fw_up(void);
int fw_down(void);
int fw_prepare(int t, __u32 nsrc);
__u32 fw_sources(int t, __u32 nsrc);
int fw_read(struct fw_counts *f);
void fw_add(struct fw_counts *sum, const struct fw_counts *before,
	    const struct fw_counts *after);
int fw_ct_read(struct silo_ct_stats *sum);

/* fw_report.c */
int fw_check(const struct cell *const c[NR_VARIANTS], int set, int t);
void fw_target(const struct cell *const c[NR_VARIANTS], int rounds, int set,
	       int t, double turns);
void fw_print(const struct cell *const c[NR_VARIANTS], int rounds, int set,
	      int t);
double fw_turns_print(const struct turns *tu,
		      const struct cell *const c[NR_VARIANTS], int rounds,
		      int set);
int fw_turns_check(const struct turns *tu, int set);

#endif /* SILO_BENCH_LIVE_H */
