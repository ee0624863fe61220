// SPDX-License-Identifier: GPL-2.0
/* bench_steer's measurement: the generator's window, one interval. */
#include "steer.h"

/* Datagrams all readers have read. */
static unsigned long nr_read(void)
{
	unsigned long n = 0;
	int i;

	for (i = 0; i < L.nsvc; i++)
		n += atomic_load_explicit(&L.svc[i].nr_read,
					  memory_order_acquire);
	return n;
}

/*
 * Sends for secs, never more than window datagrams ahead of the readers,
 * sleeping while it waits (a reader may share its CPU, and the CPU's idle
 * time is then its own). Readers that make no progress for 100 ms while
 * the window is full have lost datagrams on the way: they are written off
 * (*stalls counts it).
 */
static int send_for(double secs, unsigned long window, unsigned long *off,
		    unsigned long *stalls)
{
	const struct timespec nap = { .tv_nsec = 20000 };
	double t0 = bench_mono(), now = t0, since, w0;
	unsigned long seen, r;

	while (!stopping && now - t0 < secs) {
		r = nr_read();
		seen = r;
		since = now;
		w0 = now;
		/* Signed: datagrams written off may turn up after all. */
		while ((long)(L.nr_sent - r - *off) + FRAMES_PER_CALL >
		       (long)window) {
			nanosleep(&nap, NULL);
			now = bench_mono();
			r = nr_read();
			if (r != seen) {
				seen = r;
				since = now;
			} else if (now - since > 0.1) {
				*off = L.nr_sent - r;
				(*stalls)++;
			}
			if (stopping)
				return -1;
		}
		L.gen_waited += now - w0;
		if (gen_send(FRAMES_PER_CALL))
			return -1;
		now = bench_mono();
	}
	return stopping ? -1 : 0;
}

/* Waits until the readers have read all they will (200 ms without
 * progress). */
static void drain(unsigned long off)
{
	unsigned long r = nr_read(), seen = r;
	double since = bench_mono();

	while ((long)(L.nr_sent - r - off) > 0 && bench_mono() - since < 0.2) {
		usleep(100);
		r = nr_read();
		if (r != seen) {
			seen = r;
			since = bench_mono();
		}
	}
}

/* The counters one interval reads at its start and end. */
struct snap {
	__u64 on[MAX_SVC], all[MAX_SVC], read[MAX_SVC], switches[MAX_SVC];
	__u64 busy[MAX_SVC + 1], total[MAX_SVC + 1];
	__u64 rcvbuf;
	struct silo_service_stats svc[MAX_SVC];
};

/* The server's counters (enters its namespace), then the CPUs'. */
static int snap(struct snap *s)
{
	int i, err = bench_enter("bench_steer", L.ns_server);

	if (err)
		return err;
	s->rcvbuf = rcvbuf_errors();
	for (i = 0; i < L.nsvc; i++) {
		struct svc *c = &L.svc[i];

		if (filter_count(i, &s->on[i], &s->all[i]) ||
		    (c->service_id &&
		     bench_service_stats(L.s, c->service_id, &s->svc[i])))
			return -1;
		s->read[i] = atomic_load(&c->nr_read);
		s->switches[i] = reader_switches(c);
	}
	if (cpu_times(GEN_CPU, &s->busy[0], &s->total[0]))
		return -1;
	for (i = 0; i < L.nsvc; i++)
		if (cpu_times(L.svc[i].cpu, &s->busy[i + 1], &s->total[i + 1]))
			return -1;
	return bench_enter("bench_steer", L.ns_client);
}

int measure(struct cell *c, int v, int round, double warmup, double secs,
	    unsigned long window)
{
	struct snap a = {}, b = {};
	unsigned long off, stalls = 0, sent0, read0, read1, base_sent,
			   base_read;
	double t0, t1;
	unsigned int i, j;

	base_sent = L.nr_sent;
	base_read = nr_read();
	/* nr_sent - nr_read counts this measurement's datagrams only. */
	off = base_sent - base_read;
	if (bench_enter("bench_steer", L.ns_client) ||
	    send_for(warmup, window, &off, &stalls) || snap(&a))
		return -1;
	sent0 = L.nr_sent;
	read0 = nr_read();
	L.gen_waited = 0;
	t0 = bench_mono();
	if (send_for(secs, window, &off, &stalls))
		return -1;
	t1 = bench_mono();
	read1 = nr_read();
	if (snap(&b))
		return -1;
	drain(off);
	c->rate[round] = (read1 - read0) / (t1 - t0);
	c->sent += L.nr_sent - sent0;
	c->read += read1 - read0;
	c->rcvbuf += b.rcvbuf - a.rcvbuf;
	c->stalls += stalls;
	c->waited += L.gen_waited;
	c->secs += t1 - t0;
	for (i = 0; i < (unsigned int)L.nsvc; i++) {
		c->read_svc[i] += b.read[i] - a.read[i];
		c->on_reader[i] += b.on[i] - a.on[i];
		c->filtered[i] += b.all[i] - a.all[i];
		c->switches[i] += b.switches[i] - a.switches[i];
		for (j = 0; j < SILO_SSTAT_MAX; j++)
			((__u64 *)&c->svc[i])[j] += ((__u64 *)&b.svc[i])[j] -
						    ((__u64 *)&a.svc[i])[j];
	}
	for (i = 0; i <= (unsigned int)L.nsvc; i++) {
		c->busy[i] += b.busy[i] - a.busy[i];
		c->total[i] += b.total[i] - a.total[i];
	}
	/* Everything this measurement sent that was never read. */
	base_sent = L.nr_sent - base_sent;
	base_read = nr_read() - base_read;
	c->lost += base_sent > base_read ? base_sent - base_read : 0;
	if (L.verbose)
		fprintf(stderr,
			"bench_steer: round %d, %s: %.0f datagrams/s, share %.3f\n",
			round, variant_name[v], c->rate[round],
			b.all[L.nsvc - 1] > a.all[L.nsvc - 1] ?
				(double)(b.on[L.nsvc - 1] - a.on[L.nsvc - 1]) /
					(b.all[L.nsvc - 1] -
					 a.all[L.nsvc - 1]) :
				0);
	for (i = 0; i < (unsigned int)L.nsvc; i++)
		if (b.read[i] == a.read[i]) {
			fprintf(stderr,
				"bench_steer: %s: the reader of port %d read nothing\n",
				variant_name[v], L.svc[i].port);
			return -1;
		}
	return 0;
}

/* Service i's share of datagrams processed on its reader's CPU. */
double cell_share(const struct cell *c, int i)
{
	return c->filtered[i] ? (double)c->on_reader[i] / c->filtered[i] : 0;
}

/* CPU time a datagram read took on CPU slot i (0: the generator's). */
static double ns_per_read(const struct cell *c, int i)
{
	double hz = sysconf(_SC_CLK_TCK);

	return c->read && c->total[i] ? c->busy[i] / hz * 1e9 / c->read : 0;
}

void print_variant(const struct steer_case *k, int v, const struct cell *c,
		   double rate, const struct lat *l, double load)
{
	unsigned int i, j;

	bench_line("steer", source_shape_name(SOURCE_PUMP));
	printf(",\"case\":\"%s\",\"variant\":\"%s\",\"reads_per_sec\":%.0f,\"sent\":%llu,\"read\":%llu,\"lost\":%llu,\"udp_rcvbuf_errors\":%llu,\"window_stalls\":%llu,\"gen_waiting\":%.2f,\"cpus\":[{\"cpu\":%d,\"role\":\"generator\",\"busy\":%.2f,\"ns_per_read\":%.0f}",
	       k->name, variant_name[v], rate, (unsigned long long)c->sent,
	       (unsigned long long)c->read, (unsigned long long)c->lost,
	       (unsigned long long)c->rcvbuf, (unsigned long long)c->stalls,
	       c->secs ? c->waited / c->secs : 0, GEN_CPU,
	       c->total[0] ? (double)c->busy[0] / c->total[0] : 0,
	       ns_per_read(c, 0));
	for (i = 0; i < (unsigned int)L.nsvc; i++)
		if (L.svc[i].cpu != GEN_CPU)
			printf(",{\"cpu\":%d,\"role\":\"reader of port %d\",\"busy\":%.2f,\"ns_per_read\":%.0f}",
			       L.svc[i].cpu, L.svc[i].port,
			       c->total[i + 1] ? (double)c->busy[i + 1] /
							 c->total[i + 1] :
						 0,
			       ns_per_read(c, i + 1));
	printf("],\"services\":[");
	for (i = 0; i < (unsigned int)L.nsvc; i++) {
		const struct svc *s = &L.svc[i];

		printf("%s{\"port\":%d,\"reader_cpu\":%d,\"read\":%llu,\"share_on_reader_cpu\":%.4f,\"reader_switches_per_1k\":%.1f",
		       i ? "," : "", s->port, s->cpu,
		       (unsigned long long)c->read_svc[i], cell_share(c, i),
		       c->read_svc[i] ?
			       1000.0 * c->switches[i] / c->read_svc[i] :
			       0);
		if (v == STEERING && s->service_id) {
			printf(",\"service\":{");
			for (j = 0; j < SILO_SSTAT_MAX; j++)
				printf("%s\"%s\":%llu", j ? "," : "",
				       silo_service_stat_name(j),
				       (unsigned long long)((__u64 *)&c->svc[i])
					       [j]);
			printf("}");
		}
		printf("}");
	}
	printf("],\"latency_us\":{\"load_per_sec\":%.0f,\"p50\":%.1f,\"p99\":%.1f,\"worst_round_p99\":%.1f,\"exchanges\":%zu,\"unanswered\":%llu}}\n",
	       load, l->p50, l->p99, l->worst_p99, l->n,
	       (unsigned long long)l->lost);
}
