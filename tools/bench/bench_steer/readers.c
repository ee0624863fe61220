// SPDX-License-Identifier: GPL-2.0
/* bench_steer's services: sockets, reader threads, groups, counters. */
#include <fcntl.h>
#include "steer.h"

/* The per-CPU counts of the socket filters, one entry per service. */
int filter_setup(void)
{
	L.filter_map = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "bs_cpu", 4, 8,
				      MAX_SVC, NULL);
	return L.filter_map < 0 ? -errno : 0;
}

/*
 * Service i's socket filter: counts each datagram in entry i of the
 * per-CPU array, on the CPU that queues it to the socket, and keeps it
 * whole.
 */
int filter_prog(int i)
{
	struct bpf_insn insns[] = {
		/* *(u32 *)(r10 - 4) = i; r2 = r10 - 4 */
		{ .code = BPF_ST | BPF_MEM | BPF_W,
		  .dst_reg = BPF_REG_10,
		  .off = -4,
		  .imm = i },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X,
		  .dst_reg = BPF_REG_2,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K,
		  .dst_reg = BPF_REG_2,
		  .imm = -4 },
		/* r1 = the map; r0 = bpf_map_lookup_elem(r1, r2) */
		{ .code = BPF_LD | BPF_DW | BPF_IMM,
		  .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD,
		  .imm = L.filter_map },
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
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bs_cpu", "GPL",
			       insns, sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		fprintf(stderr, "bench_steer: socket filter: %s\n",
			strerror(errno));
	return fd;
}

/* Datagrams service i's filter counted: on its reader's CPU, and on all. */
int filter_count(int i, __u64 *on_reader, __u64 *all)
{
	int ncpus = libbpf_num_possible_cpus(), cpu;
	__u64 v[ncpus > 0 ? ncpus : 1];
	__u32 k = i;

	if (ncpus <= 0 || bpf_map_lookup_elem(L.filter_map, &k, v))
		return -1;
	*on_reader = v[L.svc[i].cpu];
	for (*all = 0, cpu = 0; cpu < ncpus; cpu++)
		*all += v[cpu];
	return 0;
}

/* UdpRcvbufErrors of the server's namespace (IPv4 and IPv6 alike). */
__u64 rcvbuf_errors(void)
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

/*
 * CPU cpu's busy and total time so far (/proc/stat, in ticks). The
 * generator sleeps while it waits for the readers, so a CPU's idle time
 * is its own: busy is what the generator, stack and readers took.
 */
int cpu_times(int cpu, __u64 *busy, __u64 *total)
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

/* A reader thread's context switches so far (voluntary + not). */
__u64 reader_switches(struct svc *c)
{
	char path[64], buf[4096], *p;
	unsigned long long v, sum = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status",
		 atomic_load(&c->tid));
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

/* Answers each request among msgs: its bytes back to the generator's
 * first flow, where the prober waits (latency.c). */
static void answer(struct svc *c, struct mmsghdr *msgs, char (*bufs)[READ_BUF],
		   int n)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6,
				   .sin6_port = htons(SPORT) };
	__u64 magic;
	int i;

	memcpy(&to.sin6_addr, L.spec.src, 16);
	to.sin6_addr.s6_addr32[3] = htonl(SRC_BASE);
	for (i = 0; i < n; i++) {
		memcpy(&magic, bufs[i], sizeof(magic));
		if (msgs[i].msg_len >= 16 && magic == PROBE_MAGIC)
			sendto(c->sock, bufs[i], msgs[i].msg_len, MSG_DONTWAIT,
			       (struct sockaddr *)&to, sizeof(to));
	}
}

static void *reader(void *arg)
{
	struct svc *c = arg;
	struct mmsghdr msgs[READ_BATCH];
	struct iovec iov[READ_BATCH];
	char bufs[READ_BATCH][READ_BUF];
	int i, n;

	atomic_store(&c->tid, gettid());
	for (i = 0; i < READ_BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i],
							 .msg_iovlen = 1 } };
	}
	while (!atomic_load_explicit(&c->stop, memory_order_relaxed)) {
		/* Blocks for the first (SO_RCVTIMEO bounds it). */
		n = recvmmsg(c->sock, msgs, READ_BATCH,
			     L.poll_reader ? MSG_DONTWAIT : MSG_WAITFORONE,
			     NULL);
		if (n <= 0)
			continue;
		atomic_fetch_add_explicit(&c->nr_read, n, memory_order_release);
		if (atomic_load_explicit(&L.answer, memory_order_relaxed))
			answer(c, msgs, bufs, n);
	}
	return NULL;
}

static int find_service(const struct silo_service_key *key,
			const struct silo_service *svc, void *ctx)
{
	struct svc *c = ctx;

	if (key->protocol == c->proto && ntohs(key->port) == c->port)
		c->service_id = svc->id;
	return 0;
}

/*
 * A service not on the generator's CPU, steered to its reader's CPU by a
 * silo service on its port: with silo on the veth, XDP redirects its
 * datagrams through a cpumap to that CPU. With group, the service follows
 * a silo group of the socket's own, policy cpu, the socket in the slot of
 * its reader's CPU (silo service add --proto udp --port P --group G);
 * without, it names the CPU (--cpus N): a socket that connects leaves its
 * kernel reuseport group (udp_lib_rehash()), and the group's slot with it.
 */
int svc_steer(struct svc *c, bool group)
{
	char name[32];
	struct silo_group_opts go = { .name = name,
				      .policy = SILO_REUSEPORT_CPU };
	struct silo_service_opts so = { .protocol = c->proto,
					.port = c->port,
					.qsize = QSIZE };
	int err = 0;

	snprintf(name, sizeof(name), "bench_steer_%d", c->port);
	if (group) {
		so.group = name;
		err = silo_group_create(L.s, c->sock, &go, &c->g);
		if (!err)
			err = silo_group_set(c->g, c->cpu, c->sock);
	} else {
		so.cpus[c->cpu / 64] = 1ULL << (c->cpu % 64);
	}
	if (!err)
		err = silo_service_add(L.s, &so);
	if (!err)
		err = silo_service_foreach(L.s, find_service, c);
	if (!err && !c->service_id)
		err = -ENOENT;
	if (err)
		fprintf(stderr, "bench_steer: %s of port %d: %s\n",
			group ? "group and service" : "service", c->port,
			strerror(-err));
	return err;
}

/* Undoes svc_steer: the service, then the group (and the program). */
int svc_unsteer(struct svc *c)
{
	struct silo_service_opts so = { .protocol = c->proto, .port = c->port };
	int err = 0;

	if (c->service_id) {
		err = silo_service_del(L.s, &so);
		c->service_id = 0;
	}
	if (c->g) {
		silo_group_detach(c->g, c->sock);
		silo_group_close(c->g);
		c->g = NULL;
	}
	return err;
}

/*
 * Service i's socket ([::]:PORT + i, in the server's namespace; a 32 MiB
 * buffer, its filter; connected to the generator's one flow when
 * connected), its reader thread, pinned to cpu, and its steering
 * (svc_steer) when cpu is not the generator's.
 */
int svc_open(struct svc *c, int i, int cpu, bool group, bool connected)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6,
				  .sin6_port = htons(PORT + i) };
	struct sockaddr_in6 peer = { .sin6_family = AF_INET6,
				     .sin6_port = htons(SPORT) };
	struct timeval tv = { .tv_usec = 50000 };
	int one = 1, buf = RCVBUF;
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	memset(c, 0, sizeof(*c));
	c->idx = i;
	c->proto = IPPROTO_UDP;
	c->port = PORT + i;
	c->cpu = cpu;
	c->steered = cpu != GEN_CPU;
	c->group = group;
	c->connected = connected;
	memcpy(&peer.sin6_addr, L.spec.src, 16);
	peer.sin6_addr.s6_addr32[3] = htonl(SRC_BASE);
	c->filter_prog = filter_prog(i);
	c->sock = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->filter_prog < 0 || c->sock < 0 ||
	    setsockopt(c->sock, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    setsockopt(c->sock, SOL_SOCKET, SO_RCVBUFFORCE, &buf,
		       sizeof(buf)) ||
	    setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(c->sock, SOL_SOCKET, SO_ATTACH_BPF, &c->filter_prog,
		       sizeof(c->filter_prog)) ||
	    bind(c->sock, (struct sockaddr *)&a, sizeof(a)) ||
	    (connected &&
	     connect(c->sock, (struct sockaddr *)&peer, sizeof(peer)))) {
		fprintf(stderr, "bench_steer: socket of port %d: %s\n", c->port,
			strerror(errno));
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(&c->thread, &attr, reader, c);
	pthread_attr_destroy(&attr);
	if (err) {
		fprintf(stderr, "bench_steer: reader thread: %s\n",
			strerror(err));
		return -1;
	}
	c->started = true;
	return c->steered ? svc_steer(c, group) : 0;
}

/* Stops the reader, undoes the rest. */
void svc_close(struct svc *c)
{
	if (c->started) {
		atomic_store(&c->stop, true);
		pthread_join(c->thread, NULL);
		c->started = false;
	}
	svc_unsteer(c);
	if (c->sock > 0)
		close(c->sock);
	if (c->filter_prog > 0)
		close(c->filter_prog);
	c->sock = c->filter_prog = -1;
}

/*
 * The service with its socket connected to the generator's one flow, or
 * not: a new socket (and reader) when that changes. Disconnecting does
 * not do: an IPv6 UDP socket connected once and disconnected (connect()
 * with AF_UNSPEC) got no datagram from any source here after.
 */
int svc_connect(struct svc *c, bool on)
{
	if (c->connected == on)
		return 0;
	svc_close(c);
	return svc_open(c, c->idx, c->cpu, c->group, on);
}
