// SPDX-License-Identifier: GPL-2.0
/*
 * Reuseport policy queue, live on loopback (which has no RSS: the table is
 * faked, as for veth). The table sends some flows to queue 0 (CPU 0) and
 * the others to queue 1 (CPU 1), or crossed (queue 0 on CPU 1, queue 1 on
 * CPU 0); which source ports go where is computed with libsilo's own
 * Toeplitz code. Each flow's datagrams and connections must reach the
 * socket in the slot of its queue's CPU whatever CPU sends them; without a
 * table, with a queue of no CPU or an empty slot, they fall back, counted,
 * and none is lost.
 */
#include <signal.h>
#include <net/if.h>
#include <sys/wait.h>
#include "test.h"
#include "reuseport_util.h"

#define FLOWS 32
#define MS_KEY \
	"6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa"

static struct silo *s;
static int nr_cpus;

struct fx {
	int family, type, port;
	int socks[RP_MAX_SOCKS];
	int senders[FLOWS]; /* UDP: bound to an ephemeral port */
	__u16 sport[FLOWS];
	int want[FLOWS]; /* the CPU (= socket) of the flow's queue */
	struct silo_group *g;
};

static void fake_table(struct silo_reuseport_queues *q, __u32 hash_ports)
{
	unsigned int b;
	const char *hex = MS_KEY;

	memset(q, 0, sizeof(*q));
	for (q->key_size = 0; hex[0]; hex += 2) {
		sscanf(hex, "%2x", &b);
		q->key[q->key_size++] = b;
	}
	/* As libsilo keeps it: queues past nr_queues have no CPU. */
	memset(q->queue_cpu, 0xff, sizeof(q->queue_cpu));
	q->indir_size = 2; /* hash even: queue 0; odd: queue 1 */
	q->indir[0] = 0;
	q->indir[1] = 1;
	q->nr_queues = 2;
	q->queue_cpu[0] = 0;
	q->queue_cpu[1] = 1;
	q->hash_ports = hash_ports;
	silo_rss_toeplitz_table(q->key, q->key_size, q->toeplitz);
}

/*
 * A table where queue N is not on CPU N: entries 0 and 1 on queue 1,
 * entries 2 and 3 on queue 0; queue 0 on CPU 1, queue 1 on CPU 0. Taking
 * a queue's number for its CPU sends every flow to the other socket.
 */
static void crossed_table(struct silo_reuseport_queues *q, __u32 hash_ports)
{
	fake_table(q, hash_ports);
	q->indir_size = 4;
	q->indir[0] = 1;
	q->indir[1] = 1;
	q->indir[2] = 0;
	q->indir[3] = 0;
	q->queue_cpu[0] = 1;
	q->queue_cpu[1] = 0;
}

static __u16 port_of(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	return ntohs(ss.ss_family == AF_INET ?
			     ((struct sockaddr_in *)&ss)->sin_port :
			     ((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* Which CPU each flow's queue is on, for table q. */
static int expect(struct fx *f, const struct silo_reuseport_queues *q)
{
	struct sockaddr_storage lo;
	const void *a;
	int i, queue;

	rp_addr(f->family, 0, &lo);
	a = f->family == AF_INET ?
		    (const void *)&((struct sockaddr_in *)&lo)->sin_addr :
		    (const void *)&((struct sockaddr_in6 *)&lo)->sin6_addr;
	for (i = 0; i < FLOWS; i++) {
		queue = silo_rss_queue(q, f->family,
				       f->type == SOCK_DGRAM ? IPPROTO_UDP :
							       IPPROTO_TCP,
				       a, a, f->sport[i], f->port, NULL);
		if (queue < 0)
			return queue;
		f->want[i] = q->queue_cpu[queue];
	}
	return 0;
}

static int fx_open(struct fx *f, int family, int type, int port,
		   enum silo_reuseport_policy policy)
{
	struct silo_group_opts o = { .policy = policy };
	int i, err;

	memset(f, 0, sizeof(*f));
	f->family = family;
	f->type = type;
	f->port = port;
	for (i = 0; i < RP_MAX_SOCKS; i++)
		f->socks[i] = -1;
	for (i = 0; i < FLOWS; i++) {
		f->senders[i] = -1;
		/* TCP clients bind these before connecting. */
		f->sport[i] = port + 1000 + i;
	}
	for (i = 0; i < nr_cpus; i++) {
		f->socks[i] = rp_socket(family, type, port, true);
		if (f->socks[i] < 0)
			return f->socks[i];
	}
	for (i = 0; type == SOCK_DGRAM && i < FLOWS; i++) {
		struct sockaddr_storage ss;
		socklen_t len = rp_addr(family, 0, &ss);

		f->senders[i] = rp_socket(family, SOCK_DGRAM, 0, false);
		if (f->senders[i] < 0)
			return f->senders[i];
		/* An ephemeral port, known before the first send. */
		if (bind(f->senders[i], (struct sockaddr *)&ss, len))
			return -errno;
		f->sport[i] = port_of(f->senders[i]);
	}
	err = silo_group_create(s, f->socks[0], &o, &f->g);
	for (i = 0; i < nr_cpus && !err; i++)
		err = silo_group_set(f->g, i, f->socks[i]);
	if (!err)
		err = silo_group_attach(f->g, f->socks[0]);
	return err;
}

static void fx_close(struct fx *f)
{
	int i, member = -1;

	for (i = 0; i < nr_cpus && member < 0; i++)
		member = f->socks[i];
	if (f->g) {
		silo_group_detach(f->g, member);
		silo_group_close(f->g);
		f->g = NULL;
	}
	rp_close_all(f->socks, RP_MAX_SOCKS);
	rp_close_all(f->senders, FLOWS);
}

/* A TCP connection from loopback:sport to loopback:port; -errno. */
static int connect_from(int family, __u16 sport, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = rp_addr(family, sport, &ss);
	int fd, one = 1, err;

	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len))
		goto err;
	len = rp_addr(family, port, &ss);
	if (connect(fd, (struct sockaddr *)&ss, len))
		goto err;
	return fd;
err:
	err = -errno;
	close(fd);
	return err;
}

/* Sends flow's datagram (or connects) from this CPU: the index of the
 * socket that got it, -1 when none did. */
static int deliver(struct fx *f, int flow)
{
	int c, idx;
	__u32 seq = flow;

	if (f->type == SOCK_DGRAM) {
		if (rp_send(f->senders[flow], f->family, f->port, &seq,
			    sizeof(seq)))
			return -1;
		return rp_which(f->socks, nr_cpus, 1000, NULL, 0, NULL);
	}
	c = connect_from(f->family, f->sport[flow], f->port);
	if (c < 0)
		return -1;
	idx = rp_which(f->socks, nr_cpus, 1000, NULL, 0, NULL);
	/* RST, not TIME_WAIT: the port is bound again from the next CPU. */
	setsockopt(c, SOL_SOCKET, SO_LINGER,
		   &(struct linger){ .l_onoff = 1, .l_linger = 0 },
		   sizeof(struct linger));
	close(c);
	return idx;
}

/* Every flow from every CPU; how many went elsewhere than want, or were
 * lost (in *lost). */
static int send_all(struct fx *f, int *lost)
{
	int k, flow, idx, wrong = 0;

	*lost = 0;
	for (k = 0; k < nr_cpus; k++) {
		if (rp_pin_cpu(k))
			return -1;
		for (flow = 0; flow < FLOWS; flow++) {
			idx = deliver(f, flow);
			*lost += idx < 0;
			wrong += idx >= 0 && idx != f->want[flow];
		}
	}
	rp_unpin();
	return wrong;
}

static void queue_policy(int family, int type, int port, __u32 hash_ports,
			 void (*table)(struct silo_reuseport_queues *, __u32))
{
	struct silo_reuseport_queues q, back;
	struct silo_reuseport_stats total;
	int flow, per_cpu[2] = {}, wrong, lost;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, family, type, port, SILO_REUSEPORT_QUEUE) == 0,
		"group");
	table(&q, hash_ports);
	REQUIRE(silo_group_set_queues(f.g, &q) == 0, "set the table");
	REQUIRE(silo_group_queues(f.g, &back) == 0, "read the table");
	CHECK(memcmp(&q, &back, sizeof(q)) == 0,
	      "the table read back differs from the one set");
	REQUIRE(expect(&f, &q) == 0, "expected queues");
	for (flow = 0; flow < FLOWS; flow++)
		per_cpu[f.want[flow]]++;
	/* Else the test could not tell the queue from the sender's CPU. */
	REQUIRE(per_cpu[0] && per_cpu[1],
		"all %d flows hash to one queue: pick other ports", FLOWS);

	wrong = send_all(&f, &lost);
	CHECK_EQ(lost, 0);
	CHECK(wrong == 0,
	      "%d of %d went elsewhere than the socket of their queue's CPU",
	      wrong, FLOWS * nr_cpus);
	REQUIRE(rp_stats(f.g, 0, &total, NULL) == 0, "stats");
	CHECK_EQ(total.runs, FLOWS * nr_cpus);
	CHECK_EQ(total.sel_queue, FLOWS * nr_cpus);
	CHECK_EQ(total.sel_cpu + total.sel_node + total.hash_fallback, 0);
	fx_close(&f);
}

static void test_udp4_queue(void)
{
	queue_policy(AF_INET, SOCK_DGRAM, 7201, SILO_RSS_PORTS_UDP4,
		     fake_table);
}

static void test_udp6_queue(void)
{
	queue_policy(AF_INET6, SOCK_DGRAM, 7202, SILO_RSS_PORTS_UDP6,
		     fake_table);
}

static void test_tcp4_queue(void)
{
	queue_policy(AF_INET, SOCK_STREAM, 7203, SILO_RSS_PORTS_TCP4,
		     fake_table);
}

static void test_tcp6_queue(void)
{
	queue_policy(AF_INET6, SOCK_STREAM, 7204, SILO_RSS_PORTS_TCP6,
		     fake_table);
}

/*
 * Queue N not on CPU N (crossed_table): each flow must reach the socket of
 * the CPU the table gives its queue, not the slot of the queue's number.
 */
static void test_udp4_crossed(void)
{
	queue_policy(AF_INET, SOCK_DGRAM, 7210, SILO_RSS_PORTS_UDP4,
		     crossed_table);
}

static void test_tcp6_crossed(void)
{
	queue_policy(AF_INET6, SOCK_STREAM, 7211, SILO_RSS_PORTS_TCP6,
		     crossed_table);
}

/*
 * A NIC that hashes UDP on the addresses alone: every flow between the same
 * two addresses is on one queue, whatever its ports, so on one socket.
 */
static void test_addresses_only(void)
{
	struct silo_reuseport_queues q;
	int flow, wrong, lost;
	struct fx f;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7205, SILO_REUSEPORT_QUEUE) ==
			0,
		"group");
	/* Ports hashed for everything but UDP over IPv4. */
	fake_table(&q, SILO_RSS_PORTS_ALL & ~SILO_RSS_PORTS_UDP4);
	REQUIRE(silo_group_set_queues(f.g, &q) == 0, "set the table");
	REQUIRE(expect(&f, &q) == 0, "expected queues");
	for (flow = 1; flow < FLOWS; flow++)
		REQUIRE(f.want[flow] == f.want[0],
			"flows on other queues with the addresses alone");
	wrong = send_all(&f, &lost);
	CHECK_EQ(lost, 0);
	CHECK_EQ(wrong, 0);
	fx_close(&f);
}

/*
 * The fallbacks: no table from the start, a table removed at run time, a
 * queue of no CPU, the slot of the queue's CPU empty. Each goes on to this
 * CPU's node (then the kernel's hash), counted, and loses nothing.
 */
static void test_fallbacks(void)
{
	struct silo_reuseport_queues q;
	struct silo_reuseport_stats before = {}, now, d;
	int lost, n = FLOWS * nr_cpus, flow, to_q1 = 0;
	struct fx f;
	unsigned int i;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7206, SILO_REUSEPORT_QUEUE) ==
			0,
		"group");
	CHECK_EQ(silo_group_queues(f.g, &q), -ENOENT);

	/* No table from the start. */
	send_all(&f, &lost);
	CHECK_EQ(lost, 0);
	REQUIRE(rp_stats(f.g, 0, &now, NULL) == 0, "stats");
	CHECK_EQ(now.runs, n);
	CHECK_EQ(now.queue_no_table, n);
	CHECK_EQ(now.sel_queue, 0);
	CHECK_EQ(now.sel_node + now.hash_fallback, n);
	before = now;

	/* A table, then removed. */
	fake_table(&q, SILO_RSS_PORTS_UDP4);
	REQUIRE(silo_group_set_queues(f.g, &q) == 0, "set the table");
	REQUIRE(expect(&f, &q) == 0, "expected queues");
	CHECK_EQ(send_all(&f, &lost), 0);
	REQUIRE(silo_group_clear_queues(f.g) == 0, "clear the table");
	CHECK_EQ(silo_group_clear_queues(f.g), -ENOENT);
	send_all(&f, &lost);
	CHECK_EQ(lost, 0);
	REQUIRE(rp_stats(f.g, 0, &now, NULL) == 0, "stats");
	for (i = 0; i < SILO_RSTAT_MAX; i++)
		((__u64 *)&d)[i] = ((__u64 *)&now)[i] - ((__u64 *)&before)[i];
	CHECK_EQ(d.sel_queue, n);
	CHECK_EQ(d.queue_no_table, n);
	CHECK_EQ(d.sel_node + d.hash_fallback, n);
	before = now;

	/* Queue 1 has no CPU: its flows fall back, queue 0's do not. */
	for (flow = 0; flow < FLOWS; flow++)
		to_q1 += f.want[flow] == 1;
	q.queue_cpu[1] = SILO_RSS_NO_CPU;
	REQUIRE(silo_group_set_queues(f.g, &q) == 0, "set the table");
	send_all(&f, &lost);
	CHECK_EQ(lost, 0);
	REQUIRE(rp_stats(f.g, 0, &now, NULL) == 0, "stats");
	for (i = 0; i < SILO_RSTAT_MAX; i++)
		((__u64 *)&d)[i] = ((__u64 *)&now)[i] - ((__u64 *)&before)[i];
	CHECK_EQ(d.queue_no_cpu, to_q1 * nr_cpus);
	CHECK_EQ(d.sel_queue, (FLOWS - to_q1) * nr_cpus);
	before = now;

	/* Queue 1 on CPU 1 again, but slot 1 empty: a miss, counted. */
	q.queue_cpu[1] = 1;
	REQUIRE(silo_group_set_queues(f.g, &q) == 0, "set the table");
	REQUIRE(silo_group_remove(f.g, 1) == 0, "empty slot 1");
	send_all(&f, &lost);
	CHECK_EQ(lost, 0);
	REQUIRE(rp_stats(f.g, 0, &now, NULL) == 0, "stats");
	for (i = 0; i < SILO_RSTAT_MAX; i++)
		((__u64 *)&d)[i] = ((__u64 *)&now)[i] - ((__u64 *)&before)[i];
	CHECK_EQ(d.queue_miss, to_q1 * nr_cpus);
	CHECK(d.err_enoent >= (__u64)to_q1 * nr_cpus,
	      "err_enoent %llu: the empty slot's misses not counted",
	      (unsigned long long)d.err_enoent);
	CHECK_EQ(d.sel_queue, (FLOWS - to_q1) * nr_cpus);
	fx_close(&f);
}

/*
 * The same through a veth of two queues from another namespace (veth has
 * no RSS either: the table is faked): a datagram from peer 10.77.0.2 is
 * processed on the CPU that sent it, and must reach the socket of its
 * flow's queue's CPU. The peer sends every flow from every CPU, each
 * datagram naming its flow and CPU; then the sockets are drained.
 */
#define VETH_PORT 7208
#define VETH_SPORT 20000

struct veth_msg {
	__u32 flow, cpu;
};

/* In the peer's namespace: every flow from every CPU. */
static int veth_peer(int go_fd)
{
	struct sockaddr_in dst = { .sin_family = AF_INET,
				   .sin_port = htons(VETH_PORT) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct veth_msg m;
	int fd, one = 1, k, flow;
	char c;

	if (read(go_fd, &c, 1) != 1)
		return 1;
	if (system("ip link set lo up && ip addr add 10.77.0.2/24 dev rq0p && "
		   "ip link set rq0p up"))
		return 1;
	inet_pton(AF_INET, "10.77.0.1", &dst.sin_addr);
	inet_pton(AF_INET, "10.77.0.2", &src.sin_addr);
	for (k = 0; k < nr_cpus; k++) {
		if (rp_pin_cpu(k))
			return 1;
		for (flow = 0; flow < FLOWS; flow++) {
			fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
			if (fd < 0)
				return 1;
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				   sizeof(one));
			src.sin_port = htons(VETH_SPORT + flow);
			m = (struct veth_msg){ .flow = flow, .cpu = k };
			if (bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
			    sendto(fd, &m, sizeof(m), 0,
				   (struct sockaddr *)&dst,
				   sizeof(dst)) != sizeof(m))
				return 1;
			close(fd);
		}
		/* The first waits for the neighbour: let it resolve. */
		if (k == 0)
			usleep(200 * 1000);
	}
	return 0;
}

static void test_veth_udp4(void)
{
	struct silo_group_opts o = { .policy = SILO_REUSEPORT_QUEUE };
	struct sockaddr_in any = { .sin_family = AF_INET,
				   .sin_port = htons(VETH_PORT) };
	int socks[RP_MAX_SOCKS], want[FLOWS], go[2], i, one = 1, status;
	int got = 0, wrong = 0, per_cpu[2] = {}, idx;
	struct silo_reuseport_queues q;
	struct silo_reuseport_stats total;
	struct silo_group *g = NULL;
	struct in_addr peer, local;
	struct veth_msg m;
	pid_t pid = -1;
	char c;

	if (nr_cpus < 2)
		SKIP("needs 2 CPUs");
	for (i = 0; i < RP_MAX_SOCKS; i++)
		socks[i] = -1;
	go[0] = go[1] = -1;
	REQUIRE(sh("ip link add rq0 numtxqueues 2 numrxqueues 2 type veth peer name rq0p numtxqueues 2 numrxqueues 2 && "
		   "ip addr add 10.77.0.1/24 dev rq0 && ip link set rq0 up") ==
			0,
		"veth");
	for (i = 0; i < nr_cpus; i++) {
		socks[i] = socket(AF_INET,
				  SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (socks[i] < 0 ||
		    setsockopt(socks[i], SOL_SOCKET, SO_REUSEPORT, &one,
			       sizeof(one)) ||
		    bind(socks[i], (struct sockaddr *)&any, sizeof(any)))
			break;
	}
	if (i < nr_cpus) {
		t_fail(__FILE__, __LINE__, "sockets: %s", strerror(errno));
		goto out;
	}
	if (silo_group_create(s, socks[0], &o, &g))
		goto fail;
	for (i = 0; i < nr_cpus; i++)
		if (silo_group_set(g, i, socks[i]))
			goto fail;
	if (silo_group_attach(g, socks[0]))
		goto fail;
	fake_table(&q, SILO_RSS_PORTS_UDP4);
	if (silo_group_set_queues(g, &q))
		goto fail;
	inet_pton(AF_INET, "10.77.0.2", &peer);
	inet_pton(AF_INET, "10.77.0.1", &local);
	for (i = 0; i < FLOWS; i++) {
		want[i] = q.queue_cpu[silo_rss_queue(
			&q, AF_INET, IPPROTO_UDP, &peer, &local, VETH_SPORT + i,
			VETH_PORT, NULL)];
		per_cpu[want[i]]++;
	}
	if (!per_cpu[0] || !per_cpu[1]) {
		t_fail(__FILE__, __LINE__, "all flows hash to one queue");
		goto out;
	}

	/* The peer: a namespace of its own, which rq0p then moves to. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go))
		goto fail;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (unshare(CLONE_NEWNET) || write(go[0], "r", 1) != 1)
			_exit(1);
		_exit(veth_peer(go[0]));
	}
	if (pid < 0)
		goto fail;
	close(go[0]);
	go[0] = -1;
	/* The child says when it has its namespace. */
	if (read(go[1], &c, 1) != 1 || sh("ip link set rq0p netns %d", pid) ||
	    write(go[1], "g", 1) != 1)
		goto fail;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		pid = -1;
		t_fail(__FILE__, __LINE__, "the peer failed to send");
		goto out;
	}
	pid = -1;
	while (got < FLOWS * nr_cpus) {
		idx = rp_which(socks, nr_cpus, 1000, &m, sizeof(m), NULL);
		if (idx < 0)
			break;
		got++;
		if (m.flow >= FLOWS || idx != want[m.flow]) {
			if (!wrong++)
				printf("# flow %u from CPU %u: socket %d, want %d\n",
				       m.flow, m.cpu, idx,
				       m.flow < FLOWS ? want[m.flow] : -1);
		}
	}
	CHECK_EQ(got, FLOWS * nr_cpus);
	CHECK(wrong == 0, "%d of %d went elsewhere than their queue's CPU",
	      wrong, got);
	if (rp_stats(g, 0, &total, NULL) == 0)
		CHECK_EQ(total.sel_queue, FLOWS * nr_cpus);
	goto out;
fail:
	t_fail(__FILE__, __LINE__, "setup: %s", strerror(errno));
out:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (g) {
		silo_group_detach(g, socks[0]);
		silo_group_close(g);
	}
	rp_close_all(socks, RP_MAX_SOCKS);
	sh("ip link del rq0 2>/dev/null || true");
}

/* Bad tables are refused and change nothing; a detached group's table goes
 * with it. */
static void test_bad_tables(void)
{
	struct silo_reuseport_queues q, back;
	struct fx f;

	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7207, SILO_REUSEPORT_QUEUE) ==
			0,
		"group");
	fake_table(&q, 0);
	q.queue_cpu[1] = nr_cpus > 1 ? 1 : 0;
	REQUIRE(silo_group_set_queues(f.g, &q) == 0, "set the table");
	q.indir[1] = 2; /* only 2 queues */
	CHECK_EQ(silo_group_set_queues(f.g, &q), -EINVAL);
	q.indir[1] = 1;
	q.queue_cpu[0] = nr_cpus;
	CHECK_EQ(silo_group_set_queues(f.g, &q), -EINVAL);
	q.queue_cpu[0] = 0;
	q.key_size = SILO_RSS_KEY_MIN - 1;
	CHECK_EQ(silo_group_set_queues(f.g, &q), -EINVAL);
	q.key_size = SILO_RSS_KEY_MIN;
	q.indir_size = SILO_RSS_INDIR_MAX + 1;
	CHECK_EQ(silo_group_set_queues(f.g, &q), -EINVAL);
	q.indir_size = 2;
	q.nr_queues = 0;
	CHECK_EQ(silo_group_set_queues(f.g, &q), -EINVAL);
	q.nr_queues = 2;
	q.hash_ports = 0x10;
	CHECK_EQ(silo_group_set_queues(f.g, &q), -EINVAL);
	q.hash_ports = 0;
	REQUIRE(silo_group_queues(f.g, &back) == 0, "read");
	CHECK(memcmp(&q, &back, sizeof(q)) == 0, "a refused table changed it");
	fx_close(&f);

	/* The same id again: no table left from the detached group. */
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7207, SILO_REUSEPORT_QUEUE) ==
			0,
		"group again");
	CHECK_EQ(silo_group_queues(f.g, &back), -ENOENT);
	fx_close(&f);
}

/*
 * silod keeps a table read from a device as the device has it. One it can
 * no longer read (here a veth, which has no Toeplitz table; the same path
 * as a device that is gone) it removes, so that the policy falls back
 * rather than pick by a table that is wrong; a hand table (ifindex 0) it
 * leaves alone.
 */
static void test_silod_refresh(void)
{
	struct silo_reuseport_queues q, back;
	struct fx f, h;
	int i, gone = 0;
	pid_t pid;

	REQUIRE(sh("ip link add rqd0 type veth peer name rqd1") == 0, "veth");
	REQUIRE(fx_open(&f, AF_INET, SOCK_DGRAM, 7208, SILO_REUSEPORT_QUEUE) ==
			0,
		"group");
	REQUIRE(fx_open(&h, AF_INET, SOCK_DGRAM, 7209, SILO_REUSEPORT_QUEUE) ==
			0,
		"hand group");
	fake_table(&q, 0);
	REQUIRE(silo_group_set_queues(h.g, &q) == 0, "hand table");
	q.ifindex = if_nametoindex("rqd0");
	REQUIRE(q.ifindex && silo_group_set_queues(f.g, &q) == 0,
		"device table");
	REQUIRE(silo_group_queues(f.g, &back) == 0 && back.ifindex == q.ifindex,
		"the table keeps its device");
	pid = test_silod_spawn("--config /dev/null", NULL, NULL);
	REQUIRE(pid > 0, "silod");
	/* silod polls every second. */
	for (i = 0; i < 50 && !gone; i++) {
		usleep(100000);
		gone = silo_group_queues(f.g, &back) == -ENOENT;
	}
	CHECK(gone, "silod left a device table it cannot read again");
	CHECK_EQ(silo_group_queues(h.g, &back), 0);
	CHECK(memcmp(&q.key, &back.key, sizeof(q.key)) == 0 && !back.ifindex,
	      "silod changed a hand table");
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	fx_close(&h);
	fx_close(&f);
	sh("ip link del rqd0");
}

int main(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };

	if (test_init())
		return 1;
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus > RP_MAX_SOCKS - 1 ||
	    nr_cpus != sysconf(_SC_NPROCESSORS_ONLN)) {
		printf("skip - reuseport_queue: %d possible CPUs, %ld online\n",
		       nr_cpus, sysconf(_SC_NPROCESSORS_ONLN));
		return 0;
	}
	if (silo_open(&s, &opts)) {
		printf("not ok - setup: silo_open\n");
		return 1;
	}
	RUN(test_udp4_queue);
	RUN(test_udp6_queue);
	RUN(test_tcp4_queue);
	RUN(test_tcp6_queue);
	RUN(test_udp4_crossed);
	RUN(test_tcp6_crossed);
	RUN(test_addresses_only);
	RUN(test_veth_udp4);
	RUN(test_fallbacks);
	RUN(test_bad_tables);
	RUN(test_silod_refresh);
	silo_close(s);
	return 0;
}
