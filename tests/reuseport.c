// SPDX-License-Identifier: GPL-2.0
/*
 * Reuseport groups through libsilo, with real sockets on loopback: which
 * socket gets each datagram and connection sent from each CPU under each
 * policy, the fallbacks and their counters, TCP migration, the pins, and the
 * calls libsilo refuses.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "test.h"
#include "reuseport_util.h"

#define FLOWS 64 /* UDP flows (source ports) per CPU */
#define CONNS 16 /* TCP connections per CPU */

static struct silo *s;
static int nr_cpus;

/* A kernel reuseport group of n sockets on loopback:port, and its senders. */
struct fx {
	int family, type, port, n;
	int socks[RP_MAX_SOCKS];
	int senders[FLOWS];
	struct silo_group *g;
};

static int fx_open(struct fx *f, int family, int type, int port, int n)
{
	int i;

	memset(f, 0, sizeof(*f));
	f->family = family;
	f->type = type;
	f->port = port;
	f->n = n;
	for (i = 0; i < RP_MAX_SOCKS; i++)
		f->socks[i] = -1;
	for (i = 0; i < FLOWS; i++)
		f->senders[i] = -1;
	for (i = 0; i < n; i++) {
		f->socks[i] = rp_socket(family, type, port, true);
		if (f->socks[i] < 0)
			return f->socks[i];
	}
	for (i = 0; type == SOCK_DGRAM && i < FLOWS; i++) {
		f->senders[i] = rp_socket(family, SOCK_DGRAM, 0, false);
		if (f->senders[i] < 0)
			return f->senders[i];
	}
	return 0;
}

/* A group of the sockets, socket i in slot i for i < slots; attached. */
static int fx_group(struct fx *f, enum silo_reuseport_policy policy, int slots,
		    bool migrate)
{
	struct silo_group_opts o = { .policy = policy, .no_migrate = !migrate };
	int i, err;

	err = silo_group_create(s, f->socks[0], &o, &f->g);
	for (i = 0; i < slots && !err; i++)
		err = silo_group_set(f->g, i, f->socks[i]);
	if (!err)
		err = silo_group_attach(f->g, f->socks[0]);
	return err;
}

static void fx_close(struct fx *f)
{
	int i, member = -1;

	for (i = 0; i < f->n && member < 0; i++)
		member = f->socks[i];
	if (f->g) {
		silo_group_detach(f->g, member);
		silo_group_close(f->g);
		f->g = NULL;
	}
	rp_close_all(f->socks, RP_MAX_SOCKS);
	rp_close_all(f->senders, FLOWS);
}

/* Sends flow's datagram (or makes a connection) from this CPU: the index
 * of the socket that got it, -1 when none did. */
static int deliver(struct fx *f, int flow)
{
	int c, idx;
	__u32 seq = flow;

	if (f->type == SOCK_DGRAM) {
		if (rp_send(f->senders[flow], f->family, f->port, &seq,
			    sizeof(seq)))
			return -1;
		return rp_which(f->socks, f->n, 1000, NULL, 0, NULL);
	}
	c = rp_connect(f->family, f->port);
	if (c < 0)
		return -1;
	idx = rp_which(f->socks, f->n, 1000, NULL, 0, NULL);
	close(c);
	return idx;
}

static __u64 st(const struct silo_reuseport_stats *a,
		enum silo_reuseport_stat i)
{
	return ((const __u64 *)a)[i];
}

/* Counters of cpu since *before, which becomes now. */
static struct silo_reuseport_stats delta(struct silo_group *g, int cpu,
					 struct silo_reuseport_stats *before)
{
	struct silo_reuseport_stats total, now, d;
	unsigned int i;

	memset(&now, 0, sizeof(now));
	rp_stats(g, cpu, &total, &now);
	for (i = 0; i < SILO_RSTAT_MAX; i++)
		((__u64 *)&d)[i] = st(&now, i) - st(before, i);
	*before = now;
	return d;
}

static int two_nodes(int cpu)
{
	return cpu % 2;
}

static int one_node(int cpu)
{
	(void)cpu;
	return 0;
}

static int last_cpu_alone(int cpu)
{
	return cpu == nr_cpus - 1;
}

static int cpu1_alone(int cpu)
{
	return cpu == 1;
}

/*
 * Policy cpu: every datagram or connection sent from CPU k reaches the
 * socket in slot k. First without silo, to show the kernel's hash alone
 * does not: the test can tell.
 */
static void cpu_policy(int family, int type, int port)
{
	struct silo_reuseport_stats total, cpu_st;
	int flows = type == SOCK_DGRAM ? FLOWS : CONNS;
	int k, flow, idx, lost = 0, elsewhere = 0;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, family, type, port, nr_cpus) == 0, "sockets");
	for (k = 0; k < nr_cpus; k++) {
		REQUIRE(rp_pin_cpu(k) == 0, "pin to CPU %d", k);
		for (flow = 0; flow < flows; flow++) {
			idx = deliver(&f, flow);
			lost += idx < 0;
			elsewhere += idx >= 0 && idx != k;
		}
	}
	CHECK_EQ(lost, 0);
	CHECK(elsewhere > 0,
	      "the kernel's hash alone sent everything to the sender's CPU: this test could not tell");

	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, nr_cpus, true) == 0, "group");
	for (k = 0; k < nr_cpus; k++) {
		int wrong = 0;

		REQUIRE(rp_pin_cpu(k) == 0, "pin to CPU %d", k);
		for (flow = 0; flow < flows; flow++) {
			idx = deliver(&f, flow);
			wrong += idx != k;
		}
		CHECK(wrong == 0, "from CPU %d: %d of %d went elsewhere", k,
		      wrong, flows);
		REQUIRE(rp_stats(f.g, k, &total, &cpu_st) == 0, "stats");
		CHECK_EQ(cpu_st.sel_cpu, flows);
		CHECK_EQ(cpu_st.runs, flows);
	}
	CHECK_EQ(total.sel_cpu, flows * nr_cpus);
	CHECK_EQ(total.hash_fallback + total.sel_node + total.cpu_miss, 0);
	rp_unpin();
	fx_close(&f);
}

static void test_udp4_cpu(void)
{
	cpu_policy(AF_INET, SOCK_DGRAM, 7101);
}

static void test_udp6_cpu(void)
{
	cpu_policy(AF_INET6, SOCK_DGRAM, 7102);
}

static void test_tcp4_cpu(void)
{
	cpu_policy(AF_INET, SOCK_STREAM, 7103);
}

static void test_tcp6_cpu(void)
{
	cpu_policy(AF_INET6, SOCK_STREAM, 7104);
}

/*
 * Policy hash is the kernel's own choice: each flow reaches the socket it
 * reaches with no program, from every CPU. Switching to cpu and back at run
 * time changes the choice at once.
 */
static void test_hash_like_kernel(void)
{
	struct silo_reuseport_stats total;
	int kernel_choice[FLOWS], per_sock[RP_MAX_SOCKS] = {};
	int k, flow, differ = 0, wrong = 0, i;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7105, nr_cpus) == 0,
		"sockets");
	REQUIRE(rp_pin_cpu(0) == 0, "pin");
	for (flow = 0; flow < FLOWS; flow++) {
		kernel_choice[flow] = deliver(&f, flow);
		REQUIRE(kernel_choice[flow] >= 0, "flow %d lost", flow);
		per_sock[kernel_choice[flow]]++;
	}
	for (i = 0; i < 2; i++)
		CHECK(per_sock[i] > 0, "the kernel sent no flow to socket %d",
		      i);

	REQUIRE(fx_group(&f, SILO_REUSEPORT_HASH, nr_cpus, true) == 0, "group");
	for (k = 0; k < nr_cpus; k++) {
		REQUIRE(rp_pin_cpu(k) == 0, "pin");
		for (flow = 0; flow < FLOWS; flow++)
			differ += deliver(&f, flow) != kernel_choice[flow];
	}
	CHECK(differ == 0,
	      "%d of %d flows went elsewhere than the kernel's hash sends them",
	      differ, FLOWS * nr_cpus);
	REQUIRE(rp_stats(f.g, 0, &total, NULL) == 0, "stats");
	CHECK_EQ(total.hash_policy, FLOWS * nr_cpus);
	CHECK_EQ(total.runs, FLOWS * nr_cpus);

	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_CPU) == 0, "to cpu");
	for (k = 0; k < nr_cpus; k++) {
		REQUIRE(rp_pin_cpu(k) == 0, "pin");
		for (flow = 0; flow < FLOWS; flow++)
			wrong += deliver(&f, flow) != k;
	}
	CHECK(wrong == 0, "policy cpu at run time: %d went elsewhere", wrong);
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_HASH) == 0,
		"back to hash");
	REQUIRE(rp_pin_cpu(1) == 0, "pin");
	differ = 0;
	for (flow = 0; flow < FLOWS; flow++)
		differ += deliver(&f, flow) != kernel_choice[flow];
	CHECK_EQ(differ, 0);
	rp_unpin();
	fx_close(&f);
}

/*
 * Policy node with a faked topology. Two nodes: what CPU k sends reaches a
 * socket on k's node. One node: a flow reaches the same socket from every
 * CPU (its hash picks among the node's sockets), and never a socket of the
 * kernel group that is in no slot.
 */
static void test_node_policy(void)
{
	struct silo_reuseport_stats total;
	int first[FLOWS], per_sock[RP_MAX_SOCKS] = {};
	int k, flow, idx, wrong = 0, unplaced;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	/* One more socket than slots: in the kernel's group only. */
	unplaced = nr_cpus;
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7106, nr_cpus + 1) == 0,
		"sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_NODE, nr_cpus, true) == 0, "group");
	REQUIRE(rp_fake_nodes(s, two_nodes) == 0, "fake two nodes");
	/* The node lists follow cpu_node when the policy is set. */
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_NODE) == 0, "policy");
	for (k = 0; k < nr_cpus; k++) {
		REQUIRE(rp_pin_cpu(k) == 0, "pin");
		for (flow = 0; flow < FLOWS; flow++) {
			idx = deliver(&f, flow);
			wrong += idx < 0 || idx == unplaced ||
				 two_nodes(idx) != two_nodes(k);
		}
	}
	CHECK(wrong == 0, "two nodes: %d datagrams reached another node",
	      wrong);
	REQUIRE(rp_stats(f.g, 0, &total, NULL) == 0, "stats");
	CHECK_EQ(total.sel_node, FLOWS * nr_cpus);

	REQUIRE(rp_fake_nodes(s, one_node) == 0, "fake one node");
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_NODE) == 0, "policy");
	wrong = 0;
	for (k = 0; k < nr_cpus; k++) {
		REQUIRE(rp_pin_cpu(k) == 0, "pin");
		for (flow = 0; flow < FLOWS; flow++) {
			idx = deliver(&f, flow);
			if (k == 0) {
				first[flow] = idx;
				if (idx >= 0)
					per_sock[idx]++;
			}
			wrong += idx < 0 || idx == unplaced ||
				 idx != first[flow];
		}
	}
	CHECK(wrong == 0,
	      "one node: %d datagrams lost, on the unplaced socket, or on another socket than from CPU 0",
	      wrong);
	CHECK(per_sock[0] > 0 && per_sock[1] > 0,
	      "one node: not spread (%d, %d)", per_sock[0], per_sock[1]);
	CHECK_EQ(per_sock[unplaced], 0);
	REQUIRE(rp_fake_nodes(s, one_node) == 0, "restore");
	rp_unpin();
	fx_close(&f);
}

/*
 * An empty slot: this CPU's datagrams fall to a socket on its node, or,
 * with none there, to the kernel's hash; none is lost, and the counters say
 * which step failed and why.
 */
static void test_empty_slot(void)
{
	struct silo_reuseport_stats before = {}, d;
	int empty = nr_cpus - 1, flow, idx, lost = 0, wrong = 0;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	/* Socket 'empty' is in the kernel's group but in no slot. */
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7107, nr_cpus) == 0,
		"sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, empty, true) == 0, "group");
	REQUIRE(rp_fake_nodes(s, last_cpu_alone) == 0, "fake nodes");
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_CPU) == 0, "policy");
	REQUIRE(rp_pin_cpu(empty) == 0, "pin");
	delta(f.g, empty, &before);
	for (flow = 0; flow < FLOWS; flow++)
		lost += deliver(&f, flow) < 0;
	CHECK_EQ(lost, 0);
	d = delta(f.g, empty, &before);
	CHECK_EQ(d.runs, FLOWS);
	CHECK_EQ(d.cpu_miss, FLOWS);
	CHECK_EQ(d.err_enoent, FLOWS);
	CHECK_EQ(d.node_empty, FLOWS);
	CHECK_EQ(d.hash_fallback, FLOWS);
	CHECK_EQ(d.sel_cpu + d.sel_node, 0);

	/* Same node as the others: a socket of the node takes them. */
	REQUIRE(rp_fake_nodes(s, one_node) == 0, "fake one node");
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_CPU) == 0, "policy");
	for (flow = 0; flow < FLOWS; flow++) {
		idx = deliver(&f, flow);
		wrong += idx < 0 || idx == empty;
	}
	CHECK(wrong == 0, "%d datagrams lost or on the socket in no slot",
	      wrong);
	d = delta(f.g, empty, &before);
	CHECK_EQ(d.cpu_miss, FLOWS);
	CHECK_EQ(d.err_enoent, FLOWS);
	CHECK_EQ(d.sel_node, FLOWS);
	CHECK_EQ(d.hash_fallback, 0);
	rp_unpin();
	fx_close(&f);
}

/*
 * A socket that closes leaves its slot by itself: what its CPU sends next
 * falls back (here to the kernel's hash: its node had no other socket),
 * nothing is lost, and show says the slot's socket closed.
 */
static void test_closed_socket(void)
{
	struct silo_reuseport_stats before = {}, d;
	struct silo_group_slot *slots;
	int flow, idx, wrong = 0;
	__u64 cookie;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7108, nr_cpus) == 0,
		"sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, nr_cpus, true) == 0, "group");
	REQUIRE(rp_fake_nodes(s, cpu1_alone) == 0, "fake nodes");
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_CPU) == 0, "policy");
	REQUIRE(rp_pin_cpu(1) == 0, "pin");
	for (flow = 0; flow < FLOWS; flow++)
		wrong += deliver(&f, flow) != 1;
	CHECK_EQ(wrong, 0);
	REQUIRE(rp_cookie(f.socks[1], &cookie) == 0, "cookie");
	close(f.socks[1]);
	f.socks[1] = -1;
	delta(f.g, 1, &before);
	for (flow = 0; flow < FLOWS; flow++) {
		idx = deliver(&f, flow);
		wrong += idx < 0;
	}
	CHECK(wrong == 0, "%d datagrams lost after the close", wrong);
	d = delta(f.g, 1, &before);
	CHECK_EQ(d.cpu_miss, FLOWS);
	/* The node list still names the closed socket's slot: tried, and
	 * failed the same way, before the kernel's hash. */
	CHECK_EQ(d.node_miss, FLOWS);
	CHECK_EQ(d.err_enoent, 2 * FLOWS);
	CHECK_EQ(d.hash_fallback, FLOWS);
	slots = calloc(nr_cpus, sizeof(*slots));
	REQUIRE(slots && silo_group_slots(f.g, slots) == 0, "slots");
	CHECK_EQ(slots[1].cookie, 0);
	CHECK_EQ(slots[1].placed.cookie, cookie);
	CHECK(slots[0].cookie != 0, "slot 0 emptied");
	free(slots);
	rp_unpin();
	fx_close(&f);
}

/*
 * A socket leaving its slot in the middle of a run, while senders send as
 * fast as the receivers read: every datagram arrives exactly once.
 *
 * remove: every CPU sends; the reader of slot 1 removes its socket from the
 * slot, drains it, and from then on must get nothing (the socket stays in
 * the kernel's group until the end).
 * close: CPU 1 sends; the reader of slot 1 drains its socket and closes it.
 * Only CPU 1 sends, because a lookup on another CPU can find the closing
 * socket itself in the kernel's UDP hash before any selection runs, and the
 * kernel then loses that datagram, with or without silo. The reader runs
 * SCHED_FIFO, so no send on its CPU comes between its last read and close.
 */
#define MID_PER_CPU 20000
#define MID_WINDOW 256

enum mid_mode { MID_REMOVE, MID_CLOSE };

static struct mid_run {
	struct fx *f;
	enum mid_mode mode;
	atomic_uchar *seen;
	atomic_long sent, received, dups, late;
	atomic_int left, stop;
	int leave_err;
} mid;

static void *mid_sender(void *arg)
{
	int cpu = (long)arg, i;
	__u32 seq;

	rp_pin_cpu(cpu);
	for (i = 0; i < MID_PER_CPU; i++) {
		while (atomic_load(&mid.sent) - atomic_load(&mid.received) >
		       MID_WINDOW)
			sched_yield();
		seq = cpu * MID_PER_CPU + i;
		if (rp_send(mid.f->senders[i % FLOWS], AF_INET, mid.f->port,
			    &seq, sizeof(seq)) == 0)
			atomic_fetch_add(&mid.sent, 1);
	}
	return NULL;
}

static long mid_take(int fd)
{
	long n = 0;
	__u32 seq;

	while (recv(fd, &seq, sizeof(seq), MSG_DONTWAIT) == sizeof(seq)) {
		if (seq < (__u32)(nr_cpus * MID_PER_CPU) &&
		    atomic_fetch_add(&mid.seen[seq], 1))
			atomic_fetch_add(&mid.dups, 1);
		atomic_fetch_add(&mid.received, 1);
		n++;
	}
	return n;
}

/* Slot 1's socket leaves its slot: by removal, or by closing. */
static void mid_leave(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (mid.mode == MID_CLOSE) {
		mid_take(fd);
		close(fd);
		mid.f->socks[1] = -1;
		return;
	}
	mid.leave_err = silo_group_remove(mid.f->g, 1);
	/* What was selected before the removal. */
	while (poll(&pfd, 1, 50) > 0)
		mid_take(fd);
}

static void *mid_receiver(void *arg)
{
	struct sched_param fifo = { .sched_priority = 1 };
	int slot = (long)arg, fd = mid.f->socks[slot];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long n;

	rp_pin_cpu(slot);
	if (slot == 1 && mid.mode == MID_CLOSE &&
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo))
		mid.leave_err = -EPERM;
	while (!atomic_load(&mid.stop)) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		n = mid_take(fd);
		if (slot == 1 && atomic_load(&mid.left))
			atomic_fetch_add(&mid.late, n);
		if (slot == 1 && !atomic_load(&mid.left) &&
		    atomic_load(&mid.sent) > MID_PER_CPU / 2) {
			mid_leave(fd);
			atomic_store(&mid.left, 1);
			if (mid.mode == MID_CLOSE)
				return NULL;
		}
	}
	return NULL;
}

static void mid_run(enum mid_mode mode, int port)
{
	pthread_t senders[RP_MAX_SOCKS], receivers[RP_MAX_SOCKS];
	struct silo_reuseport_stats before = {}, d;
	long total = (long)nr_cpus * MID_PER_CPU, i;
	int rcvbuf = 4 << 20, waited, nr_senders = 0;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, port, nr_cpus) == 0,
		"sockets");
	for (i = 0; i < nr_cpus; i++)
		setsockopt(f.socks[i], SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf,
			   sizeof(rcvbuf));
	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, nr_cpus, true) == 0, "group");
	REQUIRE(rp_fake_nodes(s, one_node) == 0, "one node");
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_CPU) == 0, "policy");
	delta(f.g, 1, &before);
	memset(&mid, 0, sizeof(mid));
	mid.f = &f;
	mid.mode = mode;
	mid.seen = calloc(total, sizeof(*mid.seen));
	REQUIRE(mid.seen, "memory");
	for (i = 0; i < nr_cpus; i++)
		pthread_create(&receivers[i], NULL, mid_receiver, (void *)i);
	for (i = 0; i < nr_cpus; i++) {
		if (mode == MID_CLOSE && i != 1)
			continue;
		pthread_create(&senders[nr_senders++], NULL, mid_sender,
			       (void *)i);
	}
	for (i = 0; i < nr_senders; i++)
		pthread_join(senders[i], NULL);
	for (waited = 0; waited < 200 &&
			 atomic_load(&mid.received) < atomic_load(&mid.sent);
	     waited++)
		usleep(10000);
	atomic_store(&mid.stop, 1);
	for (i = 0; i < nr_cpus; i++)
		pthread_join(receivers[i], NULL);

	CHECK_EQ(mid.leave_err, 0);
	CHECK(atomic_load(&mid.left), "slot 1 never left");
	CHECK_EQ(atomic_load(&mid.sent), (long)nr_senders * MID_PER_CPU);
	CHECK_EQ(atomic_load(&mid.received), atomic_load(&mid.sent));
	CHECK_EQ(atomic_load(&mid.dups), 0);
	CHECK_EQ(atomic_load(&mid.late), 0);
	d = delta(f.g, 1, &before);
	CHECK(d.sel_cpu > 0 && d.cpu_miss > 0 && d.err_enoent > 0 &&
		      d.sel_node > 0,
	      "CPU 1: sel_cpu %llu cpu_miss %llu err_enoent %llu sel_node %llu",
	      (unsigned long long)d.sel_cpu, (unsigned long long)d.cpu_miss,
	      (unsigned long long)d.err_enoent, (unsigned long long)d.sel_node);
	CHECK_EQ(d.hash_fallback, 0);
	free(mid.seen);
	fx_close(&f);
}

static void test_remove_mid_run(void)
{
	mid_run(MID_REMOVE, 7109);
}

static void test_close_mid_run(void)
{
	mid_run(MID_CLOSE, 7121);
}

/*
 * A socket of another kernel group in a slot (put there past libsilo's
 * checks): bpf_sk_select_reuseport refuses it, each way counted by its
 * code, and the datagrams fall back.
 */
static void test_error_codes(void)
{
	static const struct {
		int family, type, port_off;
		enum silo_reuseport_stat err;
		const char *what;
	} foreign[] = {
		{ AF_INET, SOCK_STREAM, 0, SILO_RSTAT_ERR_EPROTOTYPE, "TCP" },
		{ AF_INET6, SOCK_DGRAM, 0, SILO_RSTAT_ERR_EAFNOSUPPORT,
		  "IPv6" },
		{ AF_INET, SOCK_DGRAM, 1, SILO_RSTAT_ERR_EBADFD, "port+1" },
	};
	struct silo_reuseport_stats before = {}, d;
	char path[PATH_MAX];
	int map_fd, flow, i, lost;
	__u32 slot = 1;
	__u64 fd64;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7110, 1) == 0, "sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, 1, true) == 0, "group");
	REQUIRE(rp_fake_nodes(s, cpu1_alone) == 0, "fake nodes");
	REQUIRE(silo_group_set_policy(f.g, SILO_REUSEPORT_CPU) == 0, "policy");
	snprintf(path, sizeof(path), "%s/reuseport/%s/sockets", silo_pin_dir(s),
		 silo_group_name(f.g));
	map_fd = bpf_obj_get(path);
	REQUIRE(map_fd >= 0, "open %s", path);
	REQUIRE(rp_pin_cpu(1) == 0, "pin");
	for (i = 0; i < (int)(sizeof(foreign) / sizeof(foreign[0])); i++) {
		int x = rp_socket(foreign[i].family, foreign[i].type,
				  f.port + foreign[i].port_off, true);

		REQUIRE(x >= 0, "%s socket", foreign[i].what);
		fd64 = x;
		REQUIRE(bpf_map_update_elem(map_fd, &slot, &fd64, BPF_ANY) == 0,
			"put the %s socket in slot 1: %s", foreign[i].what,
			strerror(errno));
		delta(f.g, 1, &before);
		lost = 0;
		for (flow = 0; flow < FLOWS; flow++)
			lost += deliver(&f, flow) != 0;
		d = delta(f.g, 1, &before);
		CHECK(lost == 0, "%s: %d datagrams lost", foreign[i].what,
		      lost);
		CHECK(st(&d, foreign[i].err) == FLOWS, "%s: %s %llu, want %d",
		      foreign[i].what, silo_reuseport_stat_name(foreign[i].err),
		      (unsigned long long)st(&d, foreign[i].err), FLOWS);
		CHECK_EQ(d.cpu_miss, FLOWS);
		CHECK_EQ(d.hash_fallback, FLOWS);
		CHECK_EQ(d.err_enoent + d.err_other, 0);
		bpf_map_delete_elem(map_fd, &slot);
		close(x);
	}
	close(map_fd);
	rp_unpin();
	fx_close(&f);
}

/*
 * Connections queued on a listener that closes: with migration (the
 * default for TCP groups) they move to a live listener, and no client is
 * reset; without, the kernel resets them, as the control shows.
 */
static void tcp_close_queued(bool migrate, int port, int *accepted, int *reset,
			     __u64 *migrations)
{
	struct silo_reuseport_stats total;
	int clients[8], conn = -1, i, queued = 0;
	struct pollfd pfd;
	char c;
	struct fx f;

	*accepted = *reset = 0;
	*migrations = 0;
	if (fx_open(&f, AF_INET, SOCK_STREAM, port, nr_cpus) ||
	    fx_group(&f, SILO_REUSEPORT_CPU, nr_cpus, migrate) ||
	    rp_pin_cpu(1)) {
		t_fail(__FILE__, __LINE__, "setup");
		fx_close(&f);
		return;
	}
	for (i = 0; i < 8; i++)
		clients[i] = rp_connect(AF_INET, port);
	pfd = (struct pollfd){ .fd = f.socks[1], .events = POLLIN };
	queued = poll(&pfd, 1, 1000) == 1;
	CHECK(queued, "no connection queued on the listener of CPU 1");
	close(f.socks[1]);
	f.socks[1] = -1;
	while (rp_which(f.socks, f.n, 500, NULL, 0, &conn) >= 0) {
		if (write(conn, "x", 1) == 1)
			(*accepted)++;
		close(conn);
	}
	for (i = 0; i < 8; i++) {
		pfd = (struct pollfd){ .fd = clients[i], .events = POLLIN };
		if (clients[i] >= 0 && poll(&pfd, 1, 1000) == 1 &&
		    recv(clients[i], &c, 1, 0) < 0 && errno == ECONNRESET)
			(*reset)++;
		if (clients[i] >= 0)
			close(clients[i]);
	}
	if (!rp_stats(f.g, 0, &total, NULL))
		*migrations = total.migrate;
	rp_unpin();
	fx_close(&f);
}

static void test_tcp_migrate_no_reset(void)
{
	int accepted, reset;
	__u64 migrations;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	tcp_close_queued(true, 7111, &accepted, &reset, &migrations);
	CHECK_EQ(accepted, 8);
	CHECK_EQ(reset, 0);
	CHECK_EQ(migrations, 8);
}

static void test_tcp_no_migrate_resets(void)
{
	int accepted, reset;
	__u64 migrations;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	tcp_close_queued(false, 7112, &accepted, &reset, &migrations);
	CHECK(reset > 0,
	      "no client was reset without migration: the test could not tell");
	CHECK_EQ(accepted + reset, 8);
	CHECK_EQ(migrations, 0);
}

static bool pinned_exists(const char *name)
{
	char path[PATH_MAX];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", silo_pin_dir(s), name);
	return stat(path, &sb) == 0;
}

static bool pin_dir_exists(void)
{
	struct stat sb;

	return stat(silo_pin_dir(s), &sb) == 0;
}

/* What a group looks like: info and the cookie of each slot. */
struct snapshot {
	struct silo_group_info info;
	__u64 cookies[RP_MAX_SOCKS];
};

static int snap(struct silo_group *g, struct snapshot *sn)
{
	struct silo_group_slot slots[RP_MAX_SOCKS];
	int i, err;

	memset(sn, 0, sizeof(*sn));
	err = silo_group_info(g, &sn->info);
	if (!err)
		err = silo_group_slots(g, slots);
	for (i = 0; !err && i < nr_cpus; i++)
		sn->cookies[i] = slots[i].cookie;
	return err;
}

/* Every call libsilo refuses: the documented errno, and no change. */
static void test_bad_calls(void)
{
	struct silo_group_opts bad_policy = { .policy = 7 };
	struct silo_group_opts dotted = { .name = "udp4.x" };
	struct silo_group_opts named = { .name = "other" };
	struct silo_group *g = NULL, *g2 = NULL;
	struct snapshot before, after;
	int plain, unbound, tcp_idle, other_port, v6, tcp, devnull;
	int a, b;

	a = rp_socket(AF_INET, SOCK_DGRAM, 7113, true);
	b = rp_socket(AF_INET, SOCK_DGRAM, 7113, true);
	plain = rp_socket(AF_INET, SOCK_DGRAM, 7114, false);
	unbound = rp_socket(AF_INET, SOCK_DGRAM, 0, true);
	tcp_idle = socket(AF_INET, SOCK_STREAM, 0);
	other_port = rp_socket(AF_INET, SOCK_DGRAM, 7115, true);
	v6 = rp_socket(AF_INET6, SOCK_DGRAM, 7113, true);
	tcp = rp_socket(AF_INET, SOCK_STREAM, 7113, true);
	devnull = open("/dev/null", O_RDONLY);
	REQUIRE(a >= 0 && b >= 0 && plain >= 0 && unbound >= 0 &&
			tcp_idle >= 0 && other_port >= 0 && v6 >= 0 &&
			tcp >= 0 && devnull >= 0,
		"sockets");
	setsockopt(tcp_idle, SOL_SOCKET, SO_REUSEPORT, &(int){ 1 },
		   sizeof(int));

	CHECK_EQ(silo_group_create(s, -1, NULL, &g), -EBADF);
	CHECK_EQ(silo_group_create(s, devnull, NULL, &g), -ENOTSOCK);
	CHECK_EQ(silo_group_create(s, plain, NULL, &g), -EINVAL);
	CHECK_EQ(silo_group_create(s, unbound, NULL, &g), -EINVAL);
	CHECK_EQ(silo_group_create(s, tcp_idle, NULL, &g), -EINVAL);
	CHECK_EQ(silo_group_create(s, a, &bad_policy, &g), -EINVAL);
	CHECK_EQ(silo_group_create(s, a, &dotted, &g), -EINVAL);
	CHECK(g == NULL, "a refused create returned a group");
	CHECK(!pin_dir_exists(), "a refused create left pins");
	CHECK_EQ(silo_group_open(s, "nosuch", &g), -ENOENT);

	REQUIRE(silo_group_create(s, a, NULL, &g) == 0, "create");
	REQUIRE(silo_group_set(g, 0, a) == 0, "set");
	REQUIRE(snap(g, &before) == 0, "snapshot");
	CHECK_EQ(silo_group_create(s, b, NULL, &g2), -EEXIST);
	CHECK_EQ(silo_group_create(s, b, &named, &g2), -EEXIST);
	named.name = silo_group_name(g);
	CHECK_EQ(silo_group_create(s, other_port, &named, &g2), -EEXIST);
	CHECK(g2 == NULL, "a refused create returned a group");
	CHECK_EQ(silo_group_set(g, nr_cpus, b), -ERANGE);
	CHECK_EQ(silo_group_set(g, 1 % nr_cpus, other_port), -EINVAL);
	CHECK_EQ(silo_group_set(g, 1 % nr_cpus, v6), -EINVAL);
	CHECK_EQ(silo_group_set(g, 1 % nr_cpus, tcp), -EINVAL);
	CHECK_EQ(silo_group_set(g, 1 % nr_cpus, plain), -EINVAL);
	CHECK_EQ(silo_group_set(g, 1 % nr_cpus, devnull), -ENOTSOCK);
	CHECK_EQ(silo_group_set(g, 1 % nr_cpus, -1), -EBADF);
	if (nr_cpus > 1)
		CHECK_EQ(silo_group_set(g, 1, a), -EBUSY);
	if (nr_cpus > 1)
		CHECK_EQ(silo_group_remove(g, 1), -ENOENT);
	CHECK_EQ(silo_group_remove(g, nr_cpus), -ERANGE);
	CHECK_EQ(silo_group_set_policy(g, SILO_REUSEPORT_POLICY_MAX), -EINVAL);
	CHECK_EQ(silo_group_attach(g, other_port), -EINVAL);
	CHECK_EQ(silo_group_detach(g, v6), -EINVAL);
	REQUIRE(snap(g, &after) == 0, "snapshot");
	CHECK(!memcmp(&before, &after, sizeof(before)),
	      "a refused call changed the group");
	CHECK(!(after.info.group.flags & SILO_REUSEPORT_F_ATTACHED),
	      "a refused attach attached");

	CHECK_EQ(silo_group_detach(g, a), 0);
	CHECK_EQ(silo_group_set(g, 0, a), -ENOENT);
	CHECK_EQ(silo_group_detach(g, a), -ENOENT);
	silo_group_close(g);
	CHECK(!pin_dir_exists(), "pins left after the last detach");
	close(a);
	close(b);
	close(plain);
	close(unbound);
	close(tcp_idle);
	close(other_port);
	close(v6);
	close(tcp);
	close(devnull);
}

/*
 * A group is pinned with BTF (bpftool prints names), another process opens
 * it by name and sees what the owner sees, and detaching the last group
 * removes every pin.
 */
static void test_pins_and_another_process(void)
{
	struct silo_group_slot slots[RP_MAX_SOCKS];
	struct silo_group_info info;
	char cmd[PATH_MAX + 128];
	struct fx f;
	pid_t child;
	int status, i;

	REQUIRE(fx_open(&f, AF_INET6, SOCK_DGRAM, 7116, nr_cpus) == 0,
		"sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_NODE, nr_cpus, true) == 0, "group");
	CHECK(pinned_exists("reuseport_groups") &&
		      pinned_exists("reuseport_sockets") &&
		      pinned_exists("reuseport_stats") &&
		      pinned_exists("reuseport_select") &&
		      pinned_exists("reuseport/udp6_7116_::1/sockets") &&
		      pinned_exists("reuseport/udp6_7116_::1/slots"),
	      "pins missing");
	snprintf(
		cmd, sizeof(cmd),
		"bpftool map dump pinned %s/reuseport_groups | grep -q '\"name\": \"udp6_7116_::1\"' && "
		"bpftool map dump pinned %s/reuseport/udp6_7116_::1/slots | grep -q '\"cookie\"' && "
		"bpftool map dump pinned %s/reuseport_stats | grep -q '\"sel_cpu\"'",
		silo_pin_dir(s), silo_pin_dir(s), silo_pin_dir(s));
	CHECK(sh("%s", cmd) == 0, "bpftool does not print the maps by name");
	REQUIRE(silo_group_slots(f.g, slots) == 0, "slots");

	child = fork();
	if (child == 0) {
		struct silo_group_slot theirs[RP_MAX_SOCKS];
		struct silo_opts o = { .pin_root = test_pin_root() };
		struct silo *s2;
		struct silo_group *g2;

		if (silo_open(&s2, &o) ||
		    silo_group_open(s2, "udp6_7116_::1", &g2) ||
		    silo_group_info(g2, &info) || silo_group_slots(g2, theirs))
			_exit(1);
		if (info.group.policy != SILO_REUSEPORT_NODE ||
		    info.key.port != 7116 || info.key.family != SILO_AF_INET6 ||
		    memcmp(theirs, slots, nr_cpus * sizeof(slots[0])))
			_exit(2);
		if (silo_group_set_policy(g2, SILO_REUSEPORT_HASH))
			_exit(3);
		silo_group_close(g2);
		silo_close(s2);
		_exit(0);
	}
	REQUIRE(child > 0, "fork");
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the other process: status %d", status);
	REQUIRE(silo_group_info(f.g, &info) == 0, "info");
	CHECK_EQ(info.group.policy, SILO_REUSEPORT_HASH);
	for (i = 0; i < nr_cpus; i++) {
		__u64 cookie;

		CHECK(rp_cookie(f.socks[i], &cookie) == 0 &&
			      slots[i].cookie == cookie &&
			      slots[i].placed.pid == (__u32)getpid(),
		      "slot %d: cookie or owner wrong", i);
	}
	fx_close(&f);
	CHECK(!pin_dir_exists(), "pins left after the last detach");
}

/* Runs of the program for sockets of no group, from reuseport_stats[0]. */
static __u64 no_group_runs(void)
{
	struct silo_reuseport_stats *per_cpu;
	char path[PATH_MAX];
	__u32 zero = 0;
	__u64 sum = 0;
	int fd, cpu;

	snprintf(path, sizeof(path), "%s/reuseport_stats", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	per_cpu = calloc(nr_cpus, sizeof(*per_cpu));
	if (fd >= 0 && per_cpu && !bpf_map_lookup_elem(fd, &zero, per_cpu))
		for (cpu = 0; cpu < nr_cpus; cpu++)
			sum += per_cpu[cpu].no_group;
	free(per_cpu);
	if (fd >= 0)
		close(fd);
	return sum;
}

/*
 * Detach takes the program off the sockets, even with no socket given (it
 * takes one from the slot's owner, here this process): the program no
 * longer runs for them. The control shows it would be seen: a group
 * removed behind silo's back leaves the program running, counted as runs
 * for no group.
 */
static void test_detach_takes_program_off(void)
{
	struct silo_reuseport_group val;
	struct silo_reuseport_key key;
	struct fx keep, off, stays;
	char path[PATH_MAX];
	int flow, fd;
	__u64 before;

	REQUIRE(fx_open(&keep, AF_INET, SOCK_DGRAM, 7118, 1) == 0 &&
			fx_open(&off, AF_INET, SOCK_DGRAM, 7119, 1) == 0 &&
			fx_open(&stays, AF_INET, SOCK_DGRAM, 7120, 1) == 0,
		"sockets");
	/* keep holds the shared pins while the others go. */
	REQUIRE(fx_group(&keep, SILO_REUSEPORT_CPU, 1, true) == 0 &&
			fx_group(&off, SILO_REUSEPORT_CPU, 1, true) == 0 &&
			fx_group(&stays, SILO_REUSEPORT_CPU, 1, true) == 0,
		"groups");
	REQUIRE(silo_group_detach(off.g, -1) == 0, "detach");
	silo_group_close(off.g);
	off.g = NULL;
	before = no_group_runs();
	for (flow = 0; flow < FLOWS; flow++)
		CHECK(deliver(&off, flow) == 0, "flow %d lost", flow);
	CHECK_EQ(no_group_runs() - before, 0);

	snprintf(path, sizeof(path), "%s/reuseport_groups", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	REQUIRE(fd >= 0, "groups map");
	key = (struct silo_reuseport_key){ .family = SILO_AF_INET,
					   .protocol = IPPROTO_UDP,
					   .port = 7120 };
	key.addr[0] = 127, key.addr[3] = 1;
	REQUIRE(bpf_map_lookup_elem(fd, &key, &val) == 0, "the group entry");
	REQUIRE(bpf_map_delete_elem(fd, &key) == 0, "remove the group entry");
	before = no_group_runs();
	for (flow = 0; flow < FLOWS; flow++)
		CHECK(deliver(&stays, flow) == 0, "flow %d lost", flow);
	CHECK_EQ(no_group_runs() - before, FLOWS);
	CHECK(bpf_map_update_elem(fd, &key, &val, BPF_NOEXIST) == 0,
	      "put the group entry back");
	close(fd);
	fx_close(&stays);
	fx_close(&off);
	fx_close(&keep);
	CHECK(!pin_dir_exists(), "pins left after the last detach");
}

/* The shared maps stay while XDP uses them, and go with the last user. */
static void test_shared_with_xdp(void)
{
	struct silo_xdp_load_opts xo = { .mode = SILO_XDP_SKB };
	struct fx f;

	REQUIRE(sh("ip link add rp0 type veth peer name rp0p && ip link set rp0 up && ip link set rp0p up") ==
			0,
		"veth");
	REQUIRE(silo_xdp_load(s, "rp0", &xo) == 0, "xdp load");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7117, 1) == 0, "sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, 1, true) == 0, "group");
	fx_close(&f);
	CHECK(pinned_exists("meta") && pinned_exists("cpu_node"),
	      "detaching the group removed maps XDP uses");
	CHECK(!pinned_exists("reuseport_groups") && !pinned_exists("reuseport"),
	      "reuseport pins left");

	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7117, 1) == 0, "sockets");
	REQUIRE(fx_group(&f, SILO_REUSEPORT_CPU, 1, true) == 0, "group");
	CHECK(silo_xdp_unload(s, "rp0") == 0, "xdp unload");
	CHECK(pinned_exists("meta") && pinned_exists("reuseport_groups"),
	      "unloading XDP removed maps the group uses");
	fx_close(&f);
	CHECK(!pin_dir_exists(), "pins left after the last user");
	sh("ip link del rp0");
}

int main(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };

	if (test_init())
		return 1;
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus > RP_MAX_SOCKS - 1 ||
	    nr_cpus != sysconf(_SC_NPROCESSORS_ONLN)) {
		printf("skip - reuseport: %d possible CPUs, %ld online\n",
		       nr_cpus, sysconf(_SC_NPROCESSORS_ONLN));
		return 0;
	}
	if (silo_open(&s, &opts)) {
		printf("not ok - setup: silo_open\n");
		return 1;
	}
	RUN(test_udp4_cpu);
	RUN(test_udp6_cpu);
	RUN(test_tcp4_cpu);
	RUN(test_tcp6_cpu);
	RUN(test_hash_like_kernel);
	RUN(test_node_policy);
	RUN(test_empty_slot);
	RUN(test_closed_socket);
	RUN(test_remove_mid_run);
	RUN(test_close_mid_run);
	RUN(test_error_codes);
	RUN(test_tcp_migrate_no_reset);
	RUN(test_tcp_no_migrate_resets);
	RUN(test_bad_calls);
	RUN(test_pins_and_another_process);
	RUN(test_detach_takes_program_off);
	RUN(test_shared_with_xdp);
	silo_close(s);
	return 0;
}
