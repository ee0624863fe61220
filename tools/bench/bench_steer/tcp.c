// SPDX-License-Identifier: GPL-2.0
/*
 * bench_steer's TCP stream (the case one_tcp): one connection from the
 * client namespace to [fd03::2]:TCP_PORT, its sender a thread pinned to
 * the generator's CPU writing TCP_CHUNK bytes a call, its reader a thread
 * pinned to the reader's CPU. bsc0 checksums in software (tx offload
 * off), so the stream crosses the veth as MTU-sized segments with full
 * sums, as a NIC receives it, each one packet for XDP and RPS. The socket
 * filter counts segments: share is per segment, not per byte.
 *
 * Unlike the UDP cases, both ends are this host's: the server's ACKs
 * reach the client's stack on the CPU that sent them, so with the
 * receiving stack on the reader's CPU (rps, rfs, steering) part of the
 * sender's work (ACK processing, and the sends it triggers) moves there
 * too. A stream from another host would leave that on the other host.
 */
#include <netinet/tcp.h>
#include "steer.h"

#define TCP_PORT 7600
#define TCP_CHUNK (64 << 10)
#define TCP_READ (256 << 10)

static struct {
	int client;
	bool started;
	pthread_t thread;
	atomic_bool stop;
} T = { .client = -1 };

static void *sender(void *arg)
{
	static char buf[TCP_CHUNK];

	(void)arg;
	while (!atomic_load_explicit(&T.stop, memory_order_relaxed))
		send(T.client, buf, sizeof(buf), 0);
	return NULL;
}

static void *tcp_reader(void *arg)
{
	struct svc *c = arg;
	static char buf[TCP_READ];
	ssize_t n;

	atomic_store(&c->tid, gettid());
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		n = recv(c->sock, buf, sizeof(buf), 0);
		if (n > 0)
			atomic_fetch_add_explicit(&c->nr_read, n,
						  memory_order_release);
	}
	return NULL;
}

static int start(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return -err;
}

/* The listener (server's namespace), the client's connection to it. */
static int tcp_connect(struct svc *c, int *lfd)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(TCP_PORT) };
	struct timeval tv = { .tv_usec = 50000 };
	int one = 1;

	if (bench_enter("bench_steer", L.ns_server))
		return -1;
	*lfd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*lfd < 0 ||
	    setsockopt(*lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(*lfd, SOL_SOCKET, SO_ATTACH_BPF, &c->filter_prog,
		       sizeof(c->filter_prog)) ||
	    bind(*lfd, (struct sockaddr *)&a, sizeof(a)) || listen(*lfd, 1))
		return -1;
	if (bench_enter("bench_steer", L.ns_client))
		return -1;
	memcpy(&a.sin6_addr, L.spec.dst, 16);
	T.client = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (T.client < 0 ||
	    setsockopt(T.client, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(T.client, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	c->sock = accept4(*lfd, NULL, NULL, SOCK_CLOEXEC);
	if (c->sock < 0 ||
	    setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)))
		return -1;
	return bench_enter("bench_steer", L.ns_server);
}

/*
 * The case's one service: the connection, its reader on cpu, its sender
 * on the generator's CPU, and a silo service on TCP_PORT naming cpu.
 */
int tcp_open(struct svc *c, int cpu)
{
	int lfd = -1, err;

	memset(c, 0, sizeof(*c));
	c->sock = -1;
	c->proto = IPPROTO_TCP;
	c->port = TCP_PORT;
	c->cpu = cpu;
	c->steered = true;
	c->connected = true;
	atomic_store(&T.stop, false);
	c->filter_prog = filter_prog(0);
	err = c->filter_prog < 0 ? -1 : tcp_connect(c, &lfd);
	if (lfd >= 0)
		close(lfd);
	if (err) {
		fprintf(stderr, "bench_steer: TCP connection: %s\n",
			strerror(errno));
		return -1;
	}
	err = start(&c->thread, cpu, tcp_reader, c);
	if (!err) {
		c->started = true;
		err = start(&T.thread, GEN_CPU, sender, NULL);
	}
	if (err) {
		fprintf(stderr, "bench_steer: TCP threads: %s\n",
			strerror(-err));
		return -1;
	}
	T.started = true;
	return svc_steer(c, false);
}

void tcp_close(struct svc *c)
{
	if (T.started) {
		atomic_store(&T.stop, true);
		pthread_join(T.thread, NULL);
		T.started = false;
	}
	if (T.client >= 0)
		close(T.client);
	T.client = -1;
	svc_close(c);
}

/* One interval: bytes read, segments by CPU, the CPUs' time. */
int tcp_measure(struct cell *c, int v, int round, double warmup, double secs)
{
	struct svc *s = &L.svc[0];
	__u64 on0, all0, on1, all1, b0[2], n0[2], b1[2], n1[2], r0, r1;
	struct timespec w = { .tv_sec = (time_t)warmup,
			      .tv_nsec =
				      (long)((warmup - (time_t)warmup) * 1e9) };
	struct timespec d = { .tv_sec = (time_t)secs,
			      .tv_nsec = (long)((secs - (time_t)secs) * 1e9) };
	double t0, t1;
	int i;

	nanosleep(&w, NULL);
	if (filter_count(0, &on0, &all0) ||
	    cpu_times(GEN_CPU, &b0[0], &n0[0]) ||
	    cpu_times(s->cpu, &b0[1], &n0[1]))
		return -1;
	r0 = atomic_load(&s->nr_read);
	t0 = bench_mono();
	nanosleep(&d, NULL);
	t1 = bench_mono();
	r1 = atomic_load(&s->nr_read);
	if (filter_count(0, &on1, &all1) ||
	    cpu_times(GEN_CPU, &b1[0], &n1[0]) ||
	    cpu_times(s->cpu, &b1[1], &n1[1]) || stopping)
		return -1;
	if (r1 == r0) {
		fprintf(stderr, "bench_steer: one_tcp, %s: nothing read\n",
			variant_name[v]);
		return -1;
	}
	c->rate[round] = (r1 - r0) / (t1 - t0);
	c->read += r1 - r0;
	c->on_reader[0] += on1 - on0;
	c->filtered[0] += all1 - all0;
	c->secs += t1 - t0;
	for (i = 0; i < 2; i++) {
		c->busy[i] += b1[i] - b0[i];
		c->total[i] += n1[i] - n0[i];
	}
	return 0;
}

void tcp_print(int v, const struct cell *c, double rate)
{
	double hz = sysconf(_SC_CLK_TCK);
	int i;

	/* The stream is its own source: a TCP socket's sends. */
	bench_line("steer", "tcp_socket");
	printf(",\"case\":\"one_tcp\",\"variant\":\"%s\",\"bytes_per_sec\":%.0f,\"gbit_per_sec\":%.2f,\"read\":%llu,\"segments\":%llu,\"share_on_reader_cpu\":%.4f,\"cpus\":[",
	       variant_name[v], rate, rate * 8 / 1e9,
	       (unsigned long long)c->read, (unsigned long long)c->filtered[0],
	       cell_share(c, 0));
	for (i = 0; i < 2; i++)
		printf("%s{\"cpu\":%d,\"role\":\"%s\",\"busy\":%.2f,\"ns_per_kib\":%.0f}",
		       i ? "," : "", i ? L.svc[0].cpu : GEN_CPU,
		       i ? "reader" : "sender",
		       c->total[i] ? (double)c->busy[i] / c->total[i] : 0,
		       c->read ? c->busy[i] / hz * 1e9 / (c->read / 1024.0) :
				 0);
	printf("]}\n");
}
