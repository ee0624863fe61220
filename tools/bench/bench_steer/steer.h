/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_steer's parts (tools/bench/bench_steer.c says what it measures):
 * the lab, the generator and each variant's set-up in lab.c; the services'
 * sockets, readers and their counters in readers.c; one measured interval
 * in measure.c; the request/response latency in latency.c; the TCP stream
 * in tcp.c.
 */
#ifndef SILO_BENCH_STEER_H
#define SILO_BENCH_STEER_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "pkt.h"
#include "silo_test.skel.h"
#include "source.h"
#include "../bench.h"

#define NS_CLIENT "silo-bs-c"
#define NS_SERVER "silo-bs-s"
#define PIN_ROOT "/sys/fs/bpf/silo-bs"
#define DEV_CLIENT "bsc0"
#define DEV_SERVER "bss0"
#define LOOP "bsp" /* client: the source's loop, bsp-a and bsp-b */
#define DEV_HOLD "bsh0" /* server: holds silo's pins between rounds */

#define PORT 7500 /* service i listens on PORT + i */
#define SPORT 4000
#define PAYLOAD 18 /* 80-byte frames */
#define SOURCES 16 /* the unconnected variants' sources */
#define SRC_BASE 0x01000000U /* sources fd03::100:0 + k */
#define FRAMES_PER_CALL 1024
#define READ_BATCH 64
#define READ_BUF 64 /* bytes read of each datagram */
#define RCVBUF (32 << 20)
#define QSIZE 4096 /* each service's cpumap queue */
#define WINDOW_MAX 3600
#define MAX_ROUNDS 32
/* The source's classes and pattern: one per service. */
#define MAX_SVC 16
_Static_assert(MAX_SVC <= SOURCE_CLASSES && MAX_SVC <= SOURCE_PAT_MAX,
	       "a class of the source per service");
#define GEN_CPU 0
#define RFS_ENTRIES 32768 /* rps_sock_flow_entries, rps_flow_cnt */
#define PROBE_MAGIC 0x5EB0E57A51C0ULL /* a request: the reader answers */
#define LOAD_SHARE 0.2 /* the latency rounds' load, of the slowest rate */

enum { NO_SILO, RPS, RFS, REUSEPORT, STEERING, NR_VARIANTS };

extern const char *const variant_name[NR_VARIANTS];

/* One service: its port, its reader (a thread pinned to cpu). */
struct svc {
	int proto, port, cpu;
	int sock, filter_prog;
	bool steered; /* steering sends it to cpu (not on GEN_CPU) */
	bool started, connected, group;
	int idx;
	atomic_bool stop;
	pthread_t thread;
	struct silo_group *g;
	__u32 service_id;
	_Alignas(64) atomic_ulong nr_read;
	atomic_int tid;
};

/* A case: its services, and whether its variant connects the readers. */
struct steer_case {
	const char *name;
	int nsvc;
	bool connected; /* every variant's readers connected */
	bool no_summary; /* --variant: one variant only */
	bool tcp; /* one TCP stream (tcp.c), not the generator's UDP */
	int variants[NR_VARIANTS];
	int nvariants;
};

/* What bench_steer made, for cleanup on every path. */
struct steer {
	int ns_orig, ns_client, ns_server;
	struct silo *s;
	struct silo_test *skel; /* xdp_pass, where silo is not on bss0 */
	struct source *src; /* the pump, in the client's namespace */
	bool cannot_run; /* the source cannot run here (source.h) */
	int filter_map; /* per-CPU counts, one entry per service */
	__u32 server_ifindex;
	bool server_silo, server_pass, hold_silo;
	int rfs_saved; /* the host's rps_sock_flow_entries; -1: untouched */
	struct pkt_spec spec; /* service 0's frame */
	uint8_t frame[PKT_MAX];
	size_t frame_len;
	int nsvc;
	struct svc svc[MAX_SVC];
	bool poll_reader, verbose;
	unsigned long nr_sent; /* the source's credit: datagrams it will send */
	atomic_bool answer; /* readers answer requests (latency rounds) */
	double gen_waited; /* seconds the generator waited for the window */
};

extern struct steer L;
extern volatile sig_atomic_t stopping;

/* lab.c */
int lab_up(void);
void lab_down(void);
int gen_setup(void);
int gen_send(unsigned long n);
void gen_flows(bool connected);
int lab_neighbours(void);
int set_variant(int v, bool connected);
int rfs_restore(void);

/* readers.c */
int filter_setup(void);
int filter_prog(int i);
int svc_open(struct svc *c, int i, int cpu, bool group, bool connected);
void svc_close(struct svc *c);
int svc_connect(struct svc *c, bool on);
int svc_steer(struct svc *c, bool group);
int svc_unsteer(struct svc *c);
int filter_count(int i, __u64 *on_reader, __u64 *all);
__u64 rcvbuf_errors(void);
int cpu_times(int cpu, __u64 *busy, __u64 *total);
__u64 reader_switches(struct svc *c);

/* measure.c */
struct cell {
	double rate[MAX_ROUNDS]; /* datagrams read per second, all services */
	__u64 sent, read, lost, rcvbuf, stalls;
	__u64 read_svc[MAX_SVC], on_reader[MAX_SVC], filtered[MAX_SVC];
	__u64 switches[MAX_SVC];
	__u64 busy[MAX_SVC + 1], total[MAX_SVC + 1]; /* GEN_CPU, readers */
	double waited, secs; /* the generator's wait for the window, of secs */
	struct silo_service_stats svc[MAX_SVC]; /* steered services */
};

/* latency.c: request/response exchanges timed, in microseconds. */
struct lat {
	double *us; /* malloc'ed: lat_free() */
	size_t n, cap;
	__u64 probes, lost;
	double p99_round[MAX_ROUNDS];
	/* Over all rounds (lat_sum()): the quantiles, the worst round's p99. */
	double p50, p99, worst_p99;
};

int measure_latency(struct lat *l, int round, double rate, double warmup,
		    double secs);
void lat_sum(struct lat *l, int rounds);
void lat_free(struct lat *l);

int measure(struct cell *c, int v, int round, double warmup, double secs,
	    unsigned long window);
void print_variant(const struct steer_case *k, int v, const struct cell *c,
		   double rate, const struct lat *l, double load);
double cell_share(const struct cell *c, int i);

/* tcp.c */
int tcp_open(struct svc *c, int cpu);
void tcp_close(struct svc *c);
int tcp_measure(struct cell *c, int v, int round, double warmup, double secs);
void tcp_print(int v, const struct cell *c, double rate);

#endif
