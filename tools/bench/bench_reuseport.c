// SPDX-License-Identifier: GPL-2.0
/*
 * bench_reuseport: a UDP flood on loopback, one sender thread pinned to each
 * CPU, into a SO_REUSEPORT group of one receiving thread per CPU (pinned,
 * each reading its own socket), side by side in one run:
 *
 *   reuseport_kernel  no program: the kernel's hash picks the socket
 *   reuseport_hash    silo attached, policy hash (the program runs, picks
 *                     nothing: the kernel's hash plus the program's cost)
 *   reuseport_cpu     silo attached, policy cpu: the socket of the CPU the
 *                     datagram is processed on
 *   reuseport_queue   silo attached, policy queue, with a faked RSS table
 *                     whose indirection puts each flow on its sender's CPU
 *                     (loopback has no RSS): the same choice as cpu, plus
 *                     the cost of redoing the Toeplitz hash per datagram
 *
 * Per variant: datagrams read per second over all receivers, and the share
 * read by the thread of the CPU that processed them (on loopback the
 * sender's: each datagram carries its sender's CPU). Variants take turns in
 * rounds, switched at run time (policy change, or the program taken off
 * and put back); the median round is reported, one JSON object per line.
 * Target: share 1.0 and a ratio cpu/kernel of at least 1.0.
 *
 *   bench_reuseport [--cpus N] [--rounds N] [--seconds S] [--size BYTES]
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include "test.h"
#include "reuseport_util.h"
#include "bench.h"

#define PORT 7400
#define BATCH 32
#define FLOWS_PER_CPU 16
#define TARGET_RATIO 1.0
#define NR_VARIANTS 4

enum phase { PAUSE, RUN, STOP };

/* One cache line each: receivers never write another's counters. */
struct receiver {
	pthread_t thread;
	int cpu, fd;
	atomic_ulong got, local;
} __attribute__((aligned(64)));

struct sender {
	pthread_t thread;
	int cpu, fds[FLOWS_PER_CPU];
	atomic_ulong sent;
} __attribute__((aligned(64)));

static atomic_int phase = PAUSE;
static int size = 64;

static void *receive(void *arg)
{
	struct receiver *r = arg;
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	char bufs[BATCH][64];
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	int i, n, local;

	rp_pin_cpu(r->cpu);
	for (i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
							 .msg_iovlen = 1 } };
	}
	while (atomic_load_explicit(&phase, memory_order_relaxed) != STOP) {
		n = recvmmsg(r->fd, msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			poll(&pfd, 1, 10);
			continue;
		}
		if (atomic_load_explicit(&phase, memory_order_relaxed) != RUN)
			continue;
		for (i = 0, local = 0; i < n; i++)
			local += *(__u32 *)bufs[i] == (__u32)r->cpu;
		atomic_fetch_add_explicit(&r->got, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->local, local,
					  memory_order_relaxed);
	}
	return NULL;
}

static void *send_flood(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_storage dst;
	socklen_t dlen = rp_addr(AF_INET, PORT, &dst);
	struct mmsghdr msgs[BATCH];
	struct iovec iov;
	char *buf = calloc(1, size);
	int i, n, flow = 0;

	rp_pin_cpu(s->cpu);
	*(__u32 *)buf = s->cpu;
	iov = (struct iovec){ buf, size };
	for (i = 0; i < BATCH; i++)
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &dst,
							 .msg_namelen = dlen,
							 .msg_iov = &iov,
							 .msg_iovlen = 1 } };
	while ((n = atomic_load_explicit(&phase, memory_order_relaxed)) !=
	       STOP) {
		if (n == PAUSE) {
			usleep(1000);
			continue;
		}
		/* Flows take turns: the kernel's hash sees many. */
		n = sendmmsg(s->fds[flow], msgs, BATCH, 0);
		flow = (flow + 1) % FLOWS_PER_CPU;
		if (n > 0)
			atomic_fetch_add_explicit(&s->sent, n,
						  memory_order_relaxed);
	}
	free(buf);
	return NULL;
}

struct result {
	double rate[64], share[64], loss[64];
};

/* Puts the group in variant v: no program, policy hash, cpu or queue. */
static int set_variant(struct silo_group *g, int fd, int v)
{
	int unused = 0;

	if (v == 0)
		return setsockopt(fd, SOL_SOCKET, SO_DETACH_REUSEPORT_BPF,
				  &unused, sizeof(unused)) &&
				       errno != ENOENT ?
			       -errno :
			       0;
	return silo_group_set_policy(g, v == 1 ? SILO_REUSEPORT_HASH :
				     v == 2 ? SILO_REUSEPORT_CPU :
					      SILO_REUSEPORT_QUEUE) ?:
		       silo_group_attach(g, fd);
}

/*
 * A faked RSS table for policy queue: queue q on CPU q, and each flow's
 * indirection entry its sender's queue. Returns how many flows share an
 * entry with another CPU's flow (those go to the other CPU), or -errno.
 */
static int fake_table(struct silo_group *g, const struct sender *senders,
		      int cpus)
{
	static const __u8 key[SILO_RSS_KEY_MIN] = {
		0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
		0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
		0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
		0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
	};
	struct silo_reuseport_queues *q = calloc(1, sizeof(*q));
	int owner[SILO_RSS_INDIR_MAX], i, f, err, shared = 0;
	struct sockaddr_in sin;
	socklen_t len;
	__u32 lo = htonl(INADDR_LOOPBACK), hash, b;

	if (!q)
		return -ENOMEM;
	memcpy(q->key, key, sizeof(key));
	q->key_size = sizeof(key);
	q->indir_size = SILO_RSS_INDIR_MAX;
	q->nr_queues = cpus;
	q->hash_ports = SILO_RSS_PORTS_UDP4;
	for (i = 0; i < cpus; i++)
		q->queue_cpu[i] = i;
	for (b = 0; b < SILO_RSS_INDIR_MAX; b++) {
		q->indir[b] = b % cpus;
		owner[b] = -1;
	}
	silo_rss_toeplitz_table(q->key, q->key_size, q->toeplitz);
	for (i = 0; i < cpus; i++) {
		for (f = 0; f < FLOWS_PER_CPU; f++) {
			len = sizeof(sin);
			if (getsockname(senders[i].fds[f],
					(struct sockaddr *)&sin, &len)) {
				free(q);
				return -errno;
			}
			silo_rss_queue(q, AF_INET, IPPROTO_UDP, &lo, &lo,
				       ntohs(sin.sin_port), PORT, &hash);
			b = hash % SILO_RSS_INDIR_MAX;
			if (owner[b] >= 0 && owner[b] != i)
				shared++;
			owner[b] = i;
			q->indir[b] = i;
		}
	}
	err = silo_group_set_queues(g, q);
	free(q);
	return err ? err : shared;
}

int main(int argc, char **argv)
{
	static const char *const names[NR_VARIANTS] = { "reuseport_kernel",
							"reuseport_hash",
							"reuseport_cpu",
							"reuseport_queue" };
	static const struct option lopts[] = {
		{ "cpus", required_argument, NULL, 'c' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct silo_opts opts = { .pin_root = "/sys/fs/bpf/silo-bench-rp" };
	int cpus = sysconf(_SC_NPROCESSORS_ONLN), rounds = 5, c, r, v, i, f;
	int rcvbuf = 8 << 20, ret = 1, shared;
	struct receiver *receivers = NULL;
	struct sender *senders = NULL;
	struct result res[NR_VARIANTS];
	struct silo_group *g = NULL;
	struct silo *s = NULL;
	double seconds = 1, rate[NR_VARIANTS], share[NR_VARIANTS];
	double loss[NR_VARIANTS];

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cpus = atoi(optarg);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'z':
			size = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: bench_reuseport [--cpus N] [--rounds N] [--seconds S] [--size BYTES]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (cpus < 1 || cpus > sysconf(_SC_NPROCESSORS_ONLN) ||
	    cpus > RP_MAX_SOCKS || rounds < 1 || rounds > 64 || seconds <= 0 ||
	    size < 4 || size > 1400) {
		fprintf(stderr,
			"bench_reuseport: bad arguments (--cpus 1 to %ld)\n",
			sysconf(_SC_NPROCESSORS_ONLN));
		return 2;
	}
	if (test_init())
		return 1;
	sh("rm -rf %s", opts.pin_root);
	receivers = calloc(cpus, sizeof(*receivers));
	senders = calloc(cpus, sizeof(*senders));
	if (!receivers || !senders || silo_open(&s, &opts))
		goto out;
	for (i = 0; i < cpus; i++) {
		receivers[i].fd = -1;
		for (f = 0; f < FLOWS_PER_CPU; f++)
			senders[i].fds[f] = -1;
	}
	for (i = 0; i < cpus; i++) {
		receivers[i].cpu = senders[i].cpu = i;
		receivers[i].fd = rp_socket(AF_INET, SOCK_DGRAM, PORT, true);
		if (receivers[i].fd < 0)
			goto out;
		setsockopt(receivers[i].fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
			   sizeof(rcvbuf));
		for (f = 0; f < FLOWS_PER_CPU; f++) {
			struct sockaddr_storage lo;
			socklen_t lolen = rp_addr(AF_INET, 0, &lo);

			senders[i].fds[f] =
				rp_socket(AF_INET, SOCK_DGRAM, 0, false);
			if (senders[i].fds[f] < 0)
				goto out;
			/* Its port now: the faked RSS table needs it. */
			if (bind(senders[i].fds[f], (struct sockaddr *)&lo,
				 lolen))
				goto out;
			/* Blocking: a full device queue waits, not fails. */
			fcntl(senders[i].fds[f], F_SETFL, 0);
		}
	}
	if (silo_group_create(s, receivers[0].fd, NULL, &g))
		goto out;
	for (i = 0; i < cpus; i++)
		if (silo_group_set(g, i, receivers[i].fd))
			goto out;
	shared = fake_table(g, senders, cpus);
	if (shared < 0)
		goto out;
	for (i = 0; i < cpus; i++) {
		pthread_create(&receivers[i].thread, NULL, receive,
			       &receivers[i]);
		pthread_create(&senders[i].thread, NULL, send_flood,
			       &senders[i]);
	}
	for (r = 0; r < rounds; r++) {
		for (v = 0; v < NR_VARIANTS; v++) {
			unsigned long got = 0, local = 0, sent = 0;
			double t0;

			if (set_variant(g, receivers[0].fd, v))
				goto stop;
			/* Warm up, then count from zero. */
			atomic_store(&phase, RUN);
			usleep(200000);
			for (i = 0; i < cpus; i++) {
				atomic_store(&receivers[i].got, 0);
				atomic_store(&receivers[i].local, 0);
				atomic_store(&senders[i].sent, 0);
			}
			t0 = bench_mono();
			usleep(seconds * 1e6);
			for (i = 0; i < cpus; i++) {
				got += atomic_load(&receivers[i].got);
				local += atomic_load(&receivers[i].local);
				sent += atomic_load(&senders[i].sent);
			}
			res[v].rate[r] = got / (bench_mono() - t0);
			res[v].share[r] = got ? (double)local / got : 0;
			/* Datagrams in flight at the start count as read. */
			res[v].loss[r] =
				sent && got < sent ? 1 - (double)got / sent : 0;
			/* Let the queues drain before the next variant. */
			atomic_store(&phase, PAUSE);
			usleep(100000);
		}
	}
	ret = 0;
stop:
	atomic_store(&phase, STOP);
	for (i = 0; i < cpus; i++) {
		pthread_join(senders[i].thread, NULL);
		pthread_join(receivers[i].thread, NULL);
	}
	if (ret) {
		fprintf(stderr, "bench_reuseport: cannot switch variants\n");
		goto out;
	}
	for (v = 0; v < NR_VARIANTS; v++) {
		rate[v] = bench_median(res[v].rate, rounds);
		share[v] = bench_median(res[v].share, rounds);
		loss[v] = bench_median(res[v].loss, rounds);
	}
	bench_line("reuseport_setup", "udp_socket");
	printf(",\"cpus\":%d,\"rounds\":%d,\"seconds\":%.1f,\"size\":%d,\"flows_per_cpu\":%d}\n",
	       cpus, rounds, seconds, size, FLOWS_PER_CPU);
	bench_line(names[0], "udp_socket");
	printf(",\"dgrams_per_s\":%.0f,\"local_share\":%.3f,\"lost_share\":%.3f}\n",
	       rate[0], share[0], loss[0]);
	bench_line(names[1], "udp_socket");
	printf(",\"dgrams_per_s\":%.0f,\"local_share\":%.3f,\"lost_share\":%.3f,\"vs\":\"%s\",\"ratio\":%.3f}\n",
	       rate[1], share[1], loss[1], names[0], rate[1] / rate[0]);
	bench_line(names[2], "udp_socket");
	printf(",\"dgrams_per_s\":%.0f,\"local_share\":%.3f,\"lost_share\":%.3f,\"vs\":\"%s\",\"ratio\":%.3f,\"ratio_vs_hash\":%.3f,\"target_ratio\":%.1f,\"target_share\":1.0,\"met\":%s}\n",
	       rate[2], share[2], loss[2], names[0], rate[2] / rate[0],
	       rate[2] / rate[1], TARGET_RATIO,
	       rate[2] / rate[0] >= TARGET_RATIO && share[2] >= 0.9995 ?
		       "true" :
		       "false");
	/* No target: what redoing the NIC's hash costs, next to cpu. */
	bench_line(names[3], "udp_socket");
	printf(",\"dgrams_per_s\":%.0f,\"local_share\":%.3f,\"lost_share\":%.3f,\"vs\":\"%s\",\"ratio\":%.3f,\"ratio_vs_cpu\":%.3f,\"flows_on_another_cpu\":%d}\n",
	       rate[3], share[3], loss[3], names[0], rate[3] / rate[0],
	       rate[3] / rate[2], shared);
out:
	if (g) {
		silo_group_detach(g, receivers[0].fd);
		silo_group_close(g);
	}
	for (i = 0; receivers && senders && i < cpus; i++) {
		if (receivers[i].fd >= 0)
			close(receivers[i].fd);
		rp_close_all(senders[i].fds, FLOWS_PER_CPU);
	}
	free(receivers);
	free(senders);
	silo_close(s);
	rmdir(opts.pin_root);
	return ret;
}
