// SPDX-License-Identifier: GPL-2.0
/*
 * bench_steer's latency: request/response exchanges with the case's last
 * service while the generator offers a fixed load.
 *
 * A prober thread in the client namespace (pinned to the generator's CPU,
 * where a NIC queue's IRQ and the clients' traffic arrive) sends one
 * request at a time from the generator's first flow (fd03::100:0 port
 * SPORT, so a connected reader takes it too): PAYLOAD bytes starting with
 * PROBE_MAGIC and a sequence number. The reader answers what starts with
 * the magic (readers.c), the prober times the exchange (CLOCK_MONOTONIC).
 * The request takes the service's path (steered or not: bsc0 sends full
 * checksums, tx offload off, as a NIC delivers them); the answer comes
 * back through the kernel from the reader's CPU. Meanwhile the generator
 * sends PACE_BATCH frames a call at the case's fixed load, spread over
 * its services as in the throughput rounds.
 */
#include <netinet/in.h>
#include "steer.h"

#define PACE_BATCH 64
#define PROBE_GAP_NS 200000 /* one exchange every 200 us at most */
#define PROBE_TIMEOUT_US 20000

struct prober {
	struct lat *l;
	int port;
	atomic_bool stop;
	int err;
};

/* One exchange's time, kept: 0 or -ENOMEM. */
static int lat_add(struct lat *l, double us)
{
	size_t cap = l->cap ? 2 * l->cap : 4096;
	double *v;

	if (l->n == l->cap) {
		v = realloc(l->us, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->us = v;
		l->cap = cap;
	}
	l->us[l->n++] = us;
	return 0;
}

static void *prober(void *arg)
{
	struct prober *p = arg;
	struct sockaddr_in6 me = { .sin6_family = AF_INET6,
				   .sin6_port = htons(SPORT) };
	struct sockaddr_in6 to = { .sin6_family = AF_INET6,
				   .sin6_port = htons(p->port) };
	struct timeval tv = { .tv_usec = PROBE_TIMEOUT_US };
	__u64 req[(PAYLOAD + 7) / 8] = {}, ans[8];
	struct timespec next;
	double t0, t1;
	__u64 seq = 0;
	ssize_t n;
	int fd;

	p->err = bench_pin_cpu(GEN_CPU);
	if (p->err || (p->err = bench_enter("bench_steer", L.ns_client)))
		return NULL;
	memcpy(&me.sin6_addr, L.spec.src, 16);
	me.sin6_addr.s6_addr32[3] = htonl(SRC_BASE);
	memcpy(&to.sin6_addr, L.spec.dst, 16);
	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&me, sizeof(me)) ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to))) {
		p->err = -errno;
		fprintf(stderr, "bench_steer: prober's socket: %s\n",
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!atomic_load(&p->stop)) {
		req[0] = PROBE_MAGIC;
		req[1] = ++seq;
		t0 = bench_mono();
		if (send(fd, req, PAYLOAD, 0) != PAYLOAD) {
			p->err = -errno;
			break;
		}
		p->l->probes++;
		/* The answer to this request; earlier ones came too late. */
		do
			n = recv(fd, ans, sizeof(ans), 0);
		while (n >= 16 && ans[1] != seq);
		t1 = bench_mono();
		if (n < 16) {
			p->l->lost++;
		} else if (lat_add(p->l, (t1 - t0) * 1e6)) {
			p->err = -ENOMEM;
			break;
		}
		next.tv_nsec += PROBE_GAP_NS;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &next);
	}
	close(fd);
	return NULL;
}

/* Sends at rate frames a second for secs, PACE_BATCH frames a call. */
static int send_paced(double secs, double rate)
{
	double t0 = bench_mono(), at = t0, now;
	struct timespec ts;

	while (!stopping && at - t0 < secs) {
		if (gen_send(PACE_BATCH))
			return -1;
		at += PACE_BATCH / rate;
		now = bench_mono();
		if (at > now) {
			ts.tv_sec = (time_t)(at - now);
			ts.tv_nsec = (long)((at - now - ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
	}
	return stopping ? -1 : 0;
}

/*
 * One latency interval of variant v (set up already): the generator at
 * rate, the prober on the case's last service. Its p99 goes to
 * l->p99_round[round].
 */
int measure_latency(struct lat *l, int round, double rate, double warmup,
		    double secs)
{
	struct prober p = { .l = l, .port = L.svc[L.nsvc - 1].port };
	size_t n0 = l->n;
	pthread_t t;
	int err;

	err = bench_enter("bench_steer", L.ns_client);
	if (!err)
		err = send_paced(warmup, rate);
	if (err)
		return err;
	atomic_store(&L.answer, true);
	err = -pthread_create(&t, NULL, prober, &p);
	if (err) {
		atomic_store(&L.answer, false);
		return err;
	}
	err = send_paced(secs, rate);
	atomic_store(&p.stop, true);
	pthread_join(t, NULL);
	atomic_store(&L.answer, false);
	if (!err)
		err = p.err;
	if (!err && l->n == n0) {
		fprintf(stderr, "bench_steer: no request was answered\n");
		err = -ETIMEDOUT;
	}
	if (err)
		return err;
	/* Sorted where they are: the quantiles over all do not mind. */
	l->p99_round[round] = bench_quantile(l->us + n0, l->n - n0, 0.99);
	return 0;
}

void lat_sum(struct lat *l, int rounds)
{
	int r;

	l->p50 = l->n ? bench_quantile(l->us, l->n, 0.5) : 0;
	l->p99 = l->n ? bench_quantile(l->us, l->n, 0.99) : 0;
	for (l->worst_p99 = 0, r = 0; r < rounds; r++)
		if (l->p99_round[r] > l->worst_p99)
			l->worst_p99 = l->p99_round[r];
}

void lat_free(struct lat *l)
{
	free(l->us);
	l->us = NULL;
	l->n = l->cap = 0;
}
