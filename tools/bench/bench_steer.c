// SPDX-License-Identifier: GPL-2.0
/*
 * bench_steer: a UDP service whose one reader thread runs on another CPU
 * than the one that receives its packets, four ways side by side in one
 * run:
 *
 *   no_silo    the kernel alone (the receiving veth runs XDP_PASS, see
 *              below): the stack runs where the packet arrived, the
 *              reader takes the datagram from another CPU's cache
 *   rps        the kernel's own software steering: no_silo with RPS on
 *              the receiving queue to the reader's CPU (rps_cpus), so
 *              the stack runs there; RFS adds nothing for an unconnected
 *              UDP socket (it records no flow), and veth has no ntuple
 *              filters or accelerated RFS (the hardware's answer)
 *   reuseport  the reader's socket in a silo reuseport group, policy cpu,
 *              in the slot of the reader's CPU: nothing moves, the slot
 *              of the receiving CPU is empty and selection falls back
 *   steering   silo in native mode on the receiving veth and a service on
 *              the port that follows the group (silo service add --proto
 *              udp --port P --group G): XDP redirects each datagram
 *              through a cpumap, so the stack runs on the reader's CPU
 *
 *   silo-bs-c                        silo-bs-s
 *     bsc0 ------------------------- bss0 fd03::2, UDP [::]:7500
 *     generator, pinned to CPU 0       reader thread, pinned to the last CPU
 *
 * The generator is bench_live's: xdp_gen of bpf/tests/silo_test.bpf.c run with
 * BPF_PROG_RUN and BPF_F_TEST_XDP_LIVE_FRAMES in the client namespace, on
 * CPU 0, 80-byte IPv6/UDP frames with full checksums (as a NIC receives
 * them; silo steers only those) out of bsc0, 16 sources. veth runs what it
 * receives in a NAPI poll on the sending CPU, as a NIC queue whose IRQ is
 * on CPU 0 would; it takes redirected frames only with an XDP program on
 * the receiving end, hence XDP_PASS when silo is not there. silo stays
 * loaded on a device that stays down (bsh0) in every variant, so its pins,
 * the group and the service live through the rounds; only the receiving
 * veth's program changes.
 *
 * The generator keeps the reader busy without flooding the socket: it
 * sends 1,024 frames a call and holds at most --window (2,048) datagrams
 * sent and not yet read, below what the socket buffer (32 MiB forced) or
 * the service's cpumap queue (4,096) holds, so the reader always finds
 * datagrams waiting and nothing is dropped for want of room; what is
 * measured is what the slower of the two CPUs can carry. Drops are
 * reported anyway: lost (sent, never read) and the namespace's
 * UdpRcvbufErrors. (Each live-frame call makes and destroys a page pool:
 * at 64 frames a call that cost, not the path, limited CPU 0.)
 *
 * Where a datagram was processed: SO_INCOMING_CPU is kept only for
 * connected UDP sockets, and a connected socket bypasses the reuseport
 * program, so the reader's socket is unconnected and carries a socket
 * filter (SO_ATTACH_BPF, a few instructions built here) that counts, in a
 * per-CPU array, every datagram on the CPU that queues it to the socket:
 * share is the count on the reader's CPU over all, per datagram, not per
 * batch or sample. The reader reads with recvmmsg, 64 at most a call,
 * blocking for the first (MSG_WAITFORONE); --poll makes it spin instead
 * (MSG_DONTWAIT), which shows whether wake-ups are what costs.
 * reader_switches_per_1k: the reader thread's context switches per 1,000
 * datagrams read; cpu_busy: how busy CPU 0 and the reader's CPU were
 * (/proc/stat, all that ran there; CPU 0 is always busy: the generator
 * spins while the window is full), and gen_waiting, the share of the time
 * the generator waited for the window (near 0: CPU 0 is what limits the
 * rate; near 1: the reader's side is), which say what limits each variant.
 *
 * Variants alternate in rounds (each round in another order); per variant
 * a warm-up, then datagrams read per second of wall time over a fixed
 * interval. Rates are the median round; the ratio steering / no_silo the
 * median of the rounds' ratios. Targets: share >= 0.99 with steering,
 * steering >= 1.2x no_silo in datagrams read per second, and steering >=
 * 1.0x the better of no_silo and rps, round by round. On two CPUs the
 * second target is the hard one: steering moves the stack onto the
 * reader's CPU, which then carries stack and reader both while CPU 0 keeps
 * only the generator and XDP; see docs/BENCHMARKS.md, "bench_steer".
 *
 * Output, one JSON object per line: per variant its rate, share, the
 * datagrams sent, read and lost, UdpRcvbufErrors and (steering) the
 * service's counters; then a summary with the targets and "met" for each.
 * A target not met is "met":false; the tool fails (exit 1) only when it
 * cannot measure. Everything it makes (namespaces, pins under
 * /sys/fs/bpf/silo-bs) goes on exit, on failure and on SIGINT, SIGTERM or
 * SIGHUP; leftovers of a run that was killed go at the next start.
 *
 *   bench_steer [--rounds N] [--secs S] [--warmup S] [--reader-cpu N]
 *               [--window N] [--poll] [--verbose]
 */
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "test.h"
#include "pkt.h"
#include "silo_test.skel.h"
#include "bench.h"

#define NS_CLIENT "silo-bs-c"
#define NS_SERVER "silo-bs-s"
#define PIN_ROOT "/sys/fs/bpf/silo-bs"
#define DEV_CLIENT "bsc0"
#define DEV_SERVER "bss0"
#define DEV_KEEP "bsk0" /* client: holds xdp_gen in the XDP dispatcher */
#define DEV_HOLD "bsh0" /* server: holds silo's pins between rounds */
#define GROUP "bench_steer"

#define PORT 7500
#define PAYLOAD 18 /* 80-byte frames */
#define SOURCES 16
#define SRC_BASE 0x01000000U /* sources fd03::100:0 + k */
#define FRAMES_PER_CALL 1024
#define READ_BATCH 64
#define RCVBUF (32 << 20)
#define QSIZE 4096 /* the service's cpumap queue */
#define WINDOW_MAX 3600
#define MAX_ROUNDS 32

#define SHARE_TARGET 0.99
#define RATE_TARGET 1.2
#define BEST_KERNEL_TARGET 1.0 /* of the best of no_silo and rps */

enum { NO_SILO, RPS, REUSEPORT, STEERING, NR_VARIANTS };

static const char *const variant_name[] = { "no_silo", "rps", "reuseport",
					    "steering" };

/* What bench_steer made, for cleanup on every path. */
static struct {
	int ns_orig, ns_client, ns_server;
	struct silo *s;
	struct silo_group *g;
	struct silo_test *skel;
	int sock, filter_map, filter_prog;
	__u32 service_id;
	__u32 server_ifindex;
	bool server_silo, server_pass, hold_silo, reader_started;
	pthread_t reader;
	int reader_cpu;
	uint8_t frame[PKT_MAX];
	size_t frame_len;
} L = { .ns_orig = -1,
	.ns_client = -1,
	.ns_server = -1,
	.sock = -1,
	.filter_map = -1,
	.filter_prog = -1 };

static volatile sig_atomic_t stopping;
static atomic_bool reader_stop;
/* Datagrams the reader has read; its own cache line. */
static _Alignas(64) atomic_ulong nr_read;
static _Alignas(64) unsigned long nr_sent;
static double gen_waited; /* seconds the generator waited for the window */
static bool verbose;
static bool poll_reader; /* --poll: the reader spins, never sleeps */
static _Alignas(64) atomic_int reader_tid;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void print_stderr(enum silo_log_level level, const char *fmt, va_list ap)
{
	if (level > SILO_LOG_WARN)
		return;
	fprintf(stderr, "bench_steer: silo: ");
	vfprintf(stderr, fmt, ap);
}

/* Removes the namespaces (their veths and XDP attachments) and the pins. */
static void lab_down(void)
{
	sh("for n in %s %s; do ip netns del $n 2>/dev/null; done; rm -rf %s; true",
	   NS_CLIENT, NS_SERVER, PIN_ROOT);
}

static int lab_up(void)
{
	return sh(
		"set -e\n"
		"for n in %1$s %2$s; do ip netns add $n; ip -n $n link set lo up; done\n"
		/* The client stays silent: no IPv6 (MLD, DAD, RS). */
		"ip netns exec %1$s sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1\n"
		"ip netns exec %2$s sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0\n"
		"ip -n %1$s link add %3$s type veth peer name %4$s netns %2$s\n"
		"ip -n %1$s link add %5$s type veth peer name %5$sp\n"
		"ip -n %2$s link add %6$s type veth peer name %6$sp\n"
		"ip -n %2$s addr add fd03::2/64 dev %4$s nodad\n"
		"ip netns exec %1$s ethtool -K %3$s gro off\n"
		"ip netns exec %2$s ethtool -K %4$s gro off\n"
		"ip -n %1$s link set %3$s up\n"
		"ip -n %2$s link set %4$s up\n",
		NS_CLIENT, NS_SERVER, DEV_CLIENT, DEV_SERVER, DEV_KEEP,
		DEV_HOLD);
}

/*
 * The template for xdp_gen, then a check through BPF_PROG_TEST_RUN without
 * live frames that it writes exactly the frame it should over junk.
 */
static int gen_setup(void)
{
	struct silo_test__bss *bss = L.skel->bss;
	uint8_t in[PKT_MAX], out[PKT_MAX], want[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out,
		    .data_size_in = L.frame_len, .data_size_out = sizeof(out),
		    .repeat = 1);
	const __u32 src = SRC_BASE + 5;

	bench_gen_frame(L.frame, L.frame, L.frame_len, SRC_BASE);
	memcpy(bss->gen_tmpl[0], L.frame, BENCH_GEN_HDR);
	bss->gen_src = src;
	bss->gen_csum[0] = bench_gen_csum(L.frame);
	bss->gen_nsrc = 1;
	memset(in, 0xA5, BENCH_GEN_HDR);
	memcpy(in + BENCH_GEN_HDR, L.frame + BENCH_GEN_HDR,
	       L.frame_len - BENCH_GEN_HDR);
	bench_gen_frame(want, L.frame, L.frame_len, src);
	if (bpf_prog_test_run_opts(bpf_program__fd(L.skel->progs.xdp_gen),
				   &o) ||
	    o.retval != XDP_REDIRECT || o.data_size_out != L.frame_len ||
	    memcmp(out, want, L.frame_len)) {
		fprintf(stderr,
			"bench_steer: xdp_gen does not write the frame it should\n");
		return -1;
	}
	bss->gen_src = SRC_BASE;
	bss->gen_nsrc = SOURCES;
	return 0;
}

/*
 * The socket filter: counts each datagram in a per-CPU array on the CPU
 * that queues it to the socket, and keeps it whole.
 */
static int filter_setup(void)
{
	struct bpf_insn insns[] = {
		/* *(u32 *)(r10 - 4) = 0; r2 = r10 - 4 */
		{ .code = BPF_ST | BPF_MEM | BPF_W,
		  .dst_reg = BPF_REG_10,
		  .off = -4 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X,
		  .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K,
		  .dst_reg = BPF_REG_2,
		  .imm = -4 },
		/* r1 = the map; r0 = bpf_map_lookup_elem(r1, r2) */
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		/* if (r0) (*(u64 *)r0)++ */
		{ .code = BPF_JMP | BPF_JEQ | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .off = 3 },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_REG_0 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K,
		  .dst_reg = BPF_REG_1,
		  .imm = 1 },
		{ .code = BPF_STX | BPF_MEM | BPF_DW,
		  .dst_reg = BPF_REG_0,
		  .src_reg = BPF_REG_1 },
		/* return ~0: keep every byte */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K,
		  .dst_reg = BPF_REG_0,
		  .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	L.filter_map = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "bs_cpu", 4, 8,
				      1, NULL);
	if (L.filter_map < 0)
		return -errno;
	insns[3].imm = L.filter_map;
	L.filter_prog =
		bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bs_cpu", "GPL",
			      insns, sizeof(insns) / sizeof(insns[0]), NULL);
	if (L.filter_prog < 0) {
		fprintf(stderr, "bench_steer: socket filter: %s\n",
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* Datagrams the filter counted: on the reader's CPU, and on all. */
static int filter_count(__u64 *on_reader, __u64 *all)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	__u64 v[ncpus > 0 ? ncpus : 1];
	__u32 k = 0;

	if (ncpus <= 0 || bpf_map_lookup_elem(L.filter_map, &k, v))
		return -1;
	*on_reader = v[L.reader_cpu];
	for (*all = 0, cpu = 0; cpu < ncpus; cpu++)
		*all += v[cpu];
	return 0;
}

/* UdpRcvbufErrors of the server's namespace (IPv4 and IPv6 alike). */
static __u64 rcvbuf_errors(void)
{
	static const char *const files[] = { "/proc/thread-self/net/snmp",
					     "/proc/thread-self/net/snmp6" };
	char buf[16384], *p, *q;
	unsigned long long v, sum = 0;
	unsigned int f;
	ssize_t n;
	int fd;

	for (f = 0; f < 2; f++) {
		fd = open(files[f], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		if (f == 1) {
			p = strstr(buf, "Udp6RcvbufErrors");
			if (p && sscanf(p, "Udp6RcvbufErrors %llu", &v) == 1)
				sum += v;
			continue;
		}
		/* "Udp: names...\nUdp: values...": the column of the name. */
		p = strstr(buf, "\nUdp: ");
		q = p ? strstr(p + 1, "\nUdp: ") : NULL;
		if (p && q) {
			int col = 0, i;
			char *name = p + 6, *val = q + 6;

			while (name && strncmp(name, "RcvbufErrors", 12)) {
				name = strchr(name, ' ');
				name = name && name < q ? name + 1 : NULL;
				col++;
			}
			for (i = 0; name && val && i < col; i++) {
				val = strchr(val, ' ');
				val = val ? val + 1 : NULL;
			}
			if (name && val && sscanf(val, "%llu", &v) == 1)
				sum += v;
		}
	}
	return sum;
}

/* CPU cpu's busy and total time so far (/proc/stat, in ticks). */
static int cpu_times(int cpu, __u64 *busy, __u64 *total)
{
	unsigned long long v[10] = {};
	char want[16], line[256];
	FILE *f = fopen("/proc/stat", "re");
	int i, found = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	while (found && fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)) &&
		    sscanf(line + strlen(want),
			   "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
			   &v[7], &v[8], &v[9]) >= 8)
			found = 0;
	fclose(f);
	/* user nice system idle iowait irq softirq steal (guest in user) */
	for (*total = 0, i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];
	return found;
}

/* The reader thread's context switches so far (voluntary + not). */
static __u64 reader_switches(void)
{
	char path[64], buf[4096], *p;
	unsigned long long v, sum = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status",
		 atomic_load(&reader_tid));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, "ctxt_switches:")); p++)
		if (sscanf(p, "ctxt_switches: %llu", &v) == 1)
			sum += v;
	return sum;
}

static void *reader(void *arg)
{
	struct mmsghdr msgs[READ_BATCH];
	struct iovec iov[READ_BATCH];
	static char bufs[READ_BATCH][64];
	int i, n;

	(void)arg;
	atomic_store(&reader_tid, gettid());
	for (i = 0; i < READ_BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
							 .msg_iovlen = 1 } };
	}
	while (!atomic_load_explicit(&reader_stop, memory_order_relaxed)) {
		/* Blocks for the first (SO_RCVTIMEO bounds it). */
		n = recvmmsg(L.sock, msgs, READ_BATCH,
			     poll_reader ? MSG_DONTWAIT : MSG_WAITFORONE, NULL);
		if (n > 0)
			atomic_fetch_add_explicit(&nr_read, n,
						  memory_order_release);
	}
	return NULL;
}

/* The reader's socket, in the server's namespace; the reader thread. */
static int reader_setup(void)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(PORT) };
	struct timeval tv = { .tv_usec = 50000 };
	int one = 1, buf = RCVBUF;
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	L.sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (L.sock < 0 ||
	    setsockopt(L.sock, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    setsockopt(L.sock, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(L.sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(L.sock, SOL_SOCKET, SO_ATTACH_BPF, &L.filter_prog,
		       sizeof(L.filter_prog)) ||
	    bind(L.sock, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "bench_steer: reader socket: %s\n",
			strerror(errno));
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(L.reader_cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(&L.reader, &attr, reader, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		fprintf(stderr, "bench_steer: reader thread: %s\n",
			strerror(err));
		return -1;
	}
	L.reader_started = true;
	return 0;
}

static int find_service(const struct silo_service_key *key,
			const struct silo_service *svc, void *ctx)
{
	(void)ctx;
	if (key->protocol == IPPROTO_UDP && ntohs(key->port) == PORT)
		L.service_id = svc->id;
	return 0;
}

/* The reader's socket in a group of its own, slot of the reader's CPU. */
static int group_setup(void)
{
	struct silo_group_opts go = { .name = GROUP,
				      .policy = SILO_REUSEPORT_CPU };
	struct silo_service_opts so = { .protocol = IPPROTO_UDP,
					.port = PORT,
					.group = GROUP,
					.qsize = QSIZE };
	int err;

	err = silo_group_create(L.s, L.sock, &go, &L.g);
	if (!err)
		err = silo_group_set(L.g, L.reader_cpu, L.sock);
	if (!err)
		err = silo_service_add(L.s, &so);
	if (!err)
		err = silo_service_foreach(L.s, find_service, NULL);
	if (!err && !L.service_id)
		err = -ENOENT;
	if (err)
		fprintf(stderr, "bench_steer: group and service: %s\n",
			strerror(-err));
	return err;
}

/*
 * RPS on the receiving veth's queue to the reader's CPU (the kernel's own
 * software steering: an unconnected UDP socket records no flow, so RFS
 * would add nothing), or off (mask 0). Written through the server's own
 * sysfs: this process's shows another namespace's devices.
 */
static int set_rps(bool on)
{
	return sh("ip netns exec %s sh -c 'echo %x > /sys/class/net/%s/queues/rx-0/rps_cpus'",
		  NS_SERVER, on ? 1U << L.reader_cpu : 0, DEV_SERVER) ?
		       -EIO :
		       0;
}

/*
 * The variant's programs, in the server's namespace: the receiving veth's
 * (XDP_PASS or silo) and the reuseport group's (off without silo), and
 * RPS (on for its variant only).
 */
static int set_variant(int v)
{
	struct silo_xdp_load_opts o = { .mode = SILO_XDP_NATIVE };
	int err, unused = 0;

	err = set_rps(v == RPS);
	if (err)
		return err;
	if (L.server_silo && v != STEERING) {
		err = silo_xdp_unload(L.s, DEV_SERVER);
		if (err)
			return err;
		L.server_silo = false;
	}
	if (L.server_pass && v == STEERING) {
		err = bpf_xdp_detach(L.server_ifindex, XDP_FLAGS_DRV_MODE,
				     NULL);
		if (err)
			return err;
		L.server_pass = false;
	}
	if (v == STEERING && !L.server_silo) {
		err = silo_xdp_load(L.s, DEV_SERVER, &o);
		if (err)
			return err;
		L.server_silo = true;
	}
	if (v != STEERING && !L.server_pass) {
		err = bpf_xdp_attach(L.server_ifindex,
				     bpf_program__fd(L.skel->progs.xdp_pass),
				     XDP_FLAGS_DRV_MODE, NULL);
		if (err)
			return err;
		L.server_pass = true;
	}
	if (v == NO_SILO || v == RPS) {
		/* No program on the group: the kernel's own selection. */
		if (setsockopt(L.sock, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF,
			       &unused, sizeof(unused)) &&
		    errno != ENOENT)
			return -errno;
		return 0;
	}
	err = silo_group_attach(L.g, L.sock);
	if (!err && v == STEERING)
		err = silo_service_sync(L.s) < 0 ? -EIO : 0;
	return err;
}

static int service_stats(struct silo_service_stats *sum)
{
	int ncpus = silo_nr_cpus(), cpu, err;
	struct silo_service_stats *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	if (!per_cpu)
		return -ENOMEM;
	err = silo_service_stats(L.s, L.service_id, per_cpu);
	for (cpu = 0; !err && cpu < ncpus; cpu++)
		for (i = 0; i < SILO_SSTAT_MAX; i++)
			((__u64 *)sum)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
	return err;
}

/*
 * Sends for secs, never more than window datagrams ahead of the reader.
 * A reader that makes no progress for 100 ms while the window is full has
 * lost datagrams on the way: they are written off (*stalls counts it).
 */
static int send_for(double secs, unsigned long window, unsigned long *off,
		    unsigned long *stalls)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = L.frame,
		    .data_size_in = L.frame_len,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .repeat = FRAMES_PER_CALL);
	int fd = bpf_program__fd(L.skel->progs.xdp_gen);
	double t0 = bench_mono(), now = t0, since, w0;
	unsigned long seen, r;

	while (!stopping && now - t0 < secs) {
		r = atomic_load_explicit(&nr_read, memory_order_acquire);
		seen = r;
		since = now;
		/* Signed: datagrams written off may turn up after all. */
		w0 = now;
		while ((long)(nr_sent - r - *off) + FRAMES_PER_CALL >
		       (long)window) {
			now = bench_mono();
			r = atomic_load_explicit(&nr_read,
						 memory_order_acquire);
			if (r != seen) {
				seen = r;
				since = now;
			} else if (now - since > 0.1) {
				*off = nr_sent - r;
				(*stalls)++;
			}
			if (stopping)
				return -1;
		}
		gen_waited += now - w0;
		if (bpf_prog_test_run_opts(fd, &o) && errno != EINTR) {
			fprintf(stderr, "bench_steer: live frames: %s\n",
				strerror(errno));
			return -1;
		}
		nr_sent += FRAMES_PER_CALL;
		now = bench_mono();
	}
	return stopping ? -1 : 0;
}

/* Waits until the reader has read all it will (200 ms without progress). */
static void drain(unsigned long off)
{
	unsigned long r = atomic_load(&nr_read), seen = r;
	double since = bench_mono();

	while ((long)(nr_sent - r - off) > 0 && bench_mono() - since < 0.2) {
		usleep(100);
		r = atomic_load(&nr_read);
		if (r != seen) {
			seen = r;
			since = bench_mono();
		}
	}
}

struct cell {
	double rate[MAX_ROUNDS]; /* datagrams read per second */
	__u64 sent, read, lost, on_reader, filtered, rcvbuf, stalls, switches;
	__u64 busy[2], total[2]; /* CPU 0's and the reader's, /proc/stat */
	double waited, secs; /* the generator's wait for the window, of secs */
	struct silo_service_stats svc; /* over the measured intervals */
};

static int measure(struct cell *c, int v, int round, double warmup, double secs,
		   unsigned long window)
{
	struct silo_service_stats s0 = {}, s1 = {};
	__u64 on0, all0, on1, all1, e0, e1, x0, x1, b0[2], n0[2], b1[2], n1[2];
	unsigned long off = 0, stalls = 0, sent0, read0, read1, base_sent,
		      base_read;
	double t0, t1;
	unsigned int i;

	base_sent = nr_sent;
	base_read = atomic_load(&nr_read);
	/* nr_sent - nr_read counts this measurement's datagrams only. */
	off = base_sent - base_read;
	if (bench_enter("bench_steer", L.ns_client) ||
	    send_for(warmup, window, &off, &stalls))
		return -1;
	if (bench_enter("bench_steer", L.ns_server))
		return -1;
	e0 = rcvbuf_errors();
	if (filter_count(&on0, &all0) || (v == STEERING && service_stats(&s0)))
		return -1;
	if (bench_enter("bench_steer", L.ns_client))
		return -1;
	sent0 = nr_sent;
	read0 = atomic_load(&nr_read);
	x0 = reader_switches();
	gen_waited = 0;
	if (cpu_times(0, &b0[0], &n0[0]) ||
	    cpu_times(L.reader_cpu, &b0[1], &n0[1]))
		return -1;
	t0 = bench_mono();
	if (send_for(secs, window, &off, &stalls))
		return -1;
	t1 = bench_mono();
	read1 = atomic_load(&nr_read);
	x1 = reader_switches();
	if (cpu_times(0, &b1[0], &n1[0]) ||
	    cpu_times(L.reader_cpu, &b1[1], &n1[1]))
		return -1;
	if (bench_enter("bench_steer", L.ns_server) ||
	    filter_count(&on1, &all1) || (v == STEERING && service_stats(&s1)))
		return -1;
	e1 = rcvbuf_errors();
	drain(off);
	c->rate[round] = (read1 - read0) / (t1 - t0);
	c->sent += nr_sent - sent0;
	c->read += read1 - read0;
	c->on_reader += on1 - on0;
	c->filtered += all1 - all0;
	c->rcvbuf += e1 - e0;
	c->stalls += stalls;
	c->switches += x1 - x0;
	c->waited += gen_waited;
	c->secs += t1 - t0;
	for (i = 0; i < 2; i++) {
		c->busy[i] += b1[i] - b0[i];
		c->total[i] += n1[i] - n0[i];
	}
	/* Everything this measurement sent that was never read. */
	base_sent = nr_sent - base_sent;
	base_read = atomic_load(&nr_read) - base_read;
	c->lost += base_sent > base_read ? base_sent - base_read : 0;
	for (i = 0; i < SILO_SSTAT_MAX; i++)
		((__u64 *)&c->svc)[i] += ((__u64 *)&s1)[i] - ((__u64 *)&s0)[i];
	if (verbose)
		fprintf(stderr,
			"bench_steer: round %d, %s: %.0f datagrams/s, share %.3f\n",
			round, variant_name[v], c->rate[round],
			all1 > all0 ? (double)(on1 - on0) / (all1 - all0) : 0);
	if (read1 == read0) {
		fprintf(stderr, "bench_steer: %s: the reader read nothing\n",
			variant_name[v]);
		return -1;
	}
	return 0;
}

static void print_variant(int v, const struct cell *c, double rate,
			  double share)
{
	unsigned int i;

	printf("{\"bench\":\"steer\",\"variant\":\"%s\",\"reads_per_sec\":%.0f,\"share_on_reader_cpu\":%.4f,\"sent\":%llu,\"read\":%llu,\"lost\":%llu,\"udp_rcvbuf_errors\":%llu,\"window_stalls\":%llu,\"reader_switches_per_1k\":%.1f,\"cpu_busy\":{\"gen\":%.2f,\"reader\":%.2f},\"gen_waiting\":%.2f",
	       variant_name[v], rate, share, (unsigned long long)c->sent,
	       (unsigned long long)c->read, (unsigned long long)c->lost,
	       (unsigned long long)c->rcvbuf, (unsigned long long)c->stalls,
	       c->read ? 1000.0 * c->switches / c->read : 0,
	       c->total[0] ? (double)c->busy[0] / c->total[0] : 0,
	       c->total[1] ? (double)c->busy[1] / c->total[1] : 0,
	       c->secs ? c->waited / c->secs : 0);
	if (v == STEERING) {
		printf(",\"service\":{");
		for (i = 0; i < SILO_SSTAT_MAX; i++)
			printf("%s\"%s\":%llu", i ? "," : "",
			       silo_service_stat_name(i),
			       (unsigned long long)((__u64 *)&c->svc)[i]);
		printf("}");
	}
	printf("}\n");
}

static void cleanup(void)
{
	if (L.reader_started) {
		atomic_store(&reader_stop, true);
		pthread_join(L.reader, NULL);
		L.reader_started = false;
	}
	if (L.s) {
		if (L.ns_server >= 0)
			bench_enter("bench_steer", L.ns_server);
		if (L.g) {
			silo_group_detach(L.g, L.sock);
			silo_group_close(L.g);
			L.g = NULL;
		}
		if (L.server_silo)
			silo_xdp_unload(L.s, DEV_SERVER);
		if (L.hold_silo)
			silo_xdp_unload(L.s, DEV_HOLD);
		silo_close(L.s);
		L.s = NULL;
	}
	if (L.sock >= 0)
		close(L.sock);
	if (L.filter_prog >= 0)
		close(L.filter_prog);
	if (L.filter_map >= 0)
		close(L.filter_map);
	silo_test__destroy(L.skel);
	L.skel = NULL;
	if (L.ns_orig >= 0)
		bench_enter("bench_steer", L.ns_orig);
	if (L.ns_client >= 0)
		close(L.ns_client);
	if (L.ns_server >= 0)
		close(L.ns_server);
	if (L.ns_orig >= 0)
		close(L.ns_orig);
	lab_down();
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "secs", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "reader-cpu", required_argument, NULL, 'c' },
		{ "window", required_argument, NULL, 'W' },
		{ "poll", no_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct silo_opts sopts = { .netns = NS_SERVER, .pin_root = PIN_ROOT };
	struct silo_xdp_load_opts hold = { .mode = SILO_XDP_NATIVE };
	struct pkt_spec sp = { .family = AF_INET6,
			       .payload = PAYLOAD,
			       .sport = 4000,
			       .dport = PORT };
	struct sigaction sa = { .sa_handler = on_signal };
	static struct cell cells[NR_VARIANTS];
	double rate[NR_VARIANTS], share[NR_VARIANTS], q[MAX_ROUNDS], ratio,
		best;
	int rounds = 5, c, r, i, v, err, ret = 1;
	double secs = 1.0, warmup = 0.3;
	unsigned long window = 2048;

	L.reader_cpu = -1;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			secs = atof(optarg);
			break;
		case 'w':
			warmup = atof(optarg);
			break;
		case 'c':
			L.reader_cpu = atoi(optarg);
			break;
		case 'W':
			window = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			poll_reader = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr,
				"usage: bench_steer [--rounds N] [--secs S] [--warmup S]\n"
				"                   [--reader-cpu N] [--window N] [--poll] [--verbose]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (L.reader_cpu < 0)
		L.reader_cpu = bench_last_cpu();
	if (rounds < 1 || rounds > MAX_ROUNDS || secs <= 0 || warmup < 0 ||
	    window < 2 * FRAMES_PER_CALL || window > WINDOW_MAX ||
	    L.reader_cpu >= libbpf_num_possible_cpus()) {
		fprintf(stderr, "bench_steer: bad arguments\n");
		return 2;
	}
	if (L.reader_cpu == 0) {
		fprintf(stderr,
			"bench_steer: needs two CPUs (the sender runs on CPU 0)\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(print_stderr);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	L.ns_orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (L.ns_orig < 0)
		return 1;
	lab_down(); /* what an earlier run left, if it was killed */
	if (lab_up())
		goto out;
	L.ns_client = bench_open_ns(NS_CLIENT);
	L.ns_server = bench_open_ns(NS_SERVER);
	if (L.ns_client < 0 || L.ns_server < 0)
		goto out;

	/* The generator, its frame from fd03::100:0 + k to fd03::2. */
	L.skel = silo_test__open();
	if (!L.skel || bench_enter("bench_steer", L.ns_client) ||
	    read_mac(DEV_CLIENT, sp.smac))
		goto out;
	L.skel->rodata->tx_ifindex = if_nametoindex(DEV_CLIENT);
	if (bench_enter("bench_steer", L.ns_server) ||
	    read_mac(DEV_SERVER, sp.dmac))
		goto out;
	L.server_ifindex = if_nametoindex(DEV_SERVER);
	if (silo_test__load(L.skel))
		goto out;
	inet_pton(AF_INET6, "fd03::", sp.src);
	inet_pton(AF_INET6, "fd03::2", sp.dst);
	L.frame_len = pkt_build(L.frame, &sp);
	if (gen_setup())
		goto out;
	/* Kept in the XDP dispatcher: see bench_live. */
	if (bench_enter("bench_steer", L.ns_client) ||
	    bpf_xdp_attach(if_nametoindex(DEV_KEEP),
			   bpf_program__fd(L.skel->progs.xdp_gen),
			   XDP_FLAGS_DRV_MODE, NULL))
		goto out;

	/* silo (on the holder), the reader, its group and the service. */
	if (bench_enter("bench_steer", L.ns_orig) || silo_open(&L.s, &sopts))
		goto out;
	if (silo_xdp_load(L.s, DEV_HOLD, &hold)) {
		fprintf(stderr, "bench_steer: cannot load silo on %s\n",
			DEV_HOLD);
		goto out;
	}
	L.hold_silo = true;
	if (bench_enter("bench_steer", L.ns_server) || filter_setup() ||
	    reader_setup() || group_setup())
		goto out;
	err = bench_pin_cpu(0);
	if (err) {
		fprintf(stderr, "bench_steer: CPU 0: %s\n", strerror(-err));
		goto out;
	}

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < NR_VARIANTS; i++) {
			v = (r + i) % NR_VARIANTS;
			err = stopping				      ? -EINTR :
			      bench_enter("bench_steer", L.ns_server) ?:
					 set_variant(v);
			if (err) {
				fprintf(stderr,
					"bench_steer: cannot set up %s: %s\n",
					variant_name[v], strerror(-err));
				goto out;
			}
			if (measure(&cells[v], v, r, warmup, secs, window))
				goto out;
		}
	}
	for (v = 0; v < NR_VARIANTS; v++) {
		share[v] = cells[v].filtered ? (double)cells[v].on_reader /
						       cells[v].filtered :
					       0;
		/* bench_median sorts: the ratios take the rates first. */
		memcpy(q, cells[v].rate, sizeof(q));
		rate[v] = bench_median(q, rounds);
		print_variant(v, &cells[v], rate[v], share[v]);
	}
	for (r = 0; r < rounds; r++)
		q[r] = cells[STEERING].rate[r] / cells[NO_SILO].rate[r];
	ratio = bench_median(q, rounds);
	/* The kernel's best: without steering, or with RPS, per round. */
	for (r = 0; r < rounds; r++)
		q[r] = cells[STEERING].rate[r] /
		       (cells[RPS].rate[r] > cells[NO_SILO].rate[r] ?
				cells[RPS].rate[r] :
				cells[NO_SILO].rate[r]);
	best = bench_median(q, rounds);
	printf("{\"bench\":\"steer_summary\",\"gen_cpu\":0,\"reader_cpu\":%d,\"rounds\":%d,\"secs\":%.2f,\"warmup_secs\":%.2f,\"frame_bytes\":%zu,\"window\":%lu,\"reader\":\"%s\",\"share_by\":\"socket filter, per datagram\",\"steering_share\":%.4f,\"steering_vs_no_silo\":%.2f,\"steering_vs_rps\":%.2f,\"steering_vs_best_kernel\":%.2f,\"reuseport_vs_no_silo\":%.2f,\"targets\":{\"share\":%.2f,\"vs_no_silo\":%.1f,\"vs_best_kernel\":%.1f},\"met\":{\"share\":%s,\"vs_no_silo\":%s,\"vs_best_kernel\":%s}}\n",
	       L.reader_cpu, rounds, secs, warmup, L.frame_len, window,
	       poll_reader ? "poll" : "block", share[STEERING], ratio,
	       rate[STEERING] / rate[RPS], best,
	       rate[REUSEPORT] / rate[NO_SILO], SHARE_TARGET, RATE_TARGET,
	       BEST_KERNEL_TARGET,
	       share[STEERING] >= SHARE_TARGET ? "true" : "false",
	       ratio >= RATE_TARGET ? "true" : "false",
	       best >= BEST_KERNEL_TARGET ? "true" : "false");
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "bench_steer: failed%s\n",
			stopping ? " (interrupted)" : "");
	cleanup();
	return ret;
}
