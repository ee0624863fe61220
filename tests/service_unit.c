// SPDX-License-Identifier: GPL-2.0
/*
 * Services through BPF_PROG_TEST_RUN: which CPU a local packet of a service
 * is steered to in each mode, and every way it is passed instead. The test
 * pins itself to a CPU before each run, so "this CPU" is known: a packet
 * for another CPU is XDP_REDIRECT (through the cpumap), one for this CPU
 * XDP_PASS. Steering never changes the packet, but to finish a checksum
 * a sender on this host left to offload (in0 is a veth).
 */
#include <linux/limits.h>
#include <netinet/in.h>
#include "fwd.h"
#include "../user/lib/service.h"

static int ncpus;

/* pkt_build with the L4 checksum in full, as on a wire: steering passes a
 * packet whose checksum is not (see l4_csum_ok). */
static size_t build(uint8_t *buf, const struct pkt_spec *sp)
{
	size_t len = pkt_build(buf, sp);

	pkt_l4_csum(buf, len, sp);
	return len;
}

static int pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int setup(void)
{
	ncpus = silo_nr_cpus();
	/* A second local address on in0, and an IPv6 one. */
	return fwd_setup("ip addr add 10.1.0.5/24 dev in0\n");
}

/* The per-CPU counters of service id, summed. */
static void sstats(__u32 id, struct silo_service_stats *sum)
{
	struct silo_service_stats *pc = calloc(ncpus, sizeof(*pc));
	int cpu;
	unsigned int i;

	memset(sum, 0, sizeof(*sum));
	if (!pc || silo_service_stats(s, id, pc)) {
		free(pc);
		return;
	}
	for (cpu = 0; cpu < ncpus; cpu++)
		for (i = 0; i < SILO_SSTAT_MAX; i++)
			((__u64 *)sum)[i] += ((__u64 *)&pc[cpu])[i];
	free(pc);
}

struct sresult {
	struct result r;
	struct silo_service_stats d; /* the service's deltas */
	struct silo_service_stats d0; /* service 0's */
};

/* Runs pkt on in0 from CPU cpu, which must come out as want; deltas of
 * service id's counters too. */
static void run_svc_want(int cpu, __u32 id, const uint8_t *pkt, size_t len,
			 const uint8_t *want, struct sresult *sr)
{
	struct silo_service_stats b, a, b0, a0;
	unsigned int i;

	pin_cpu(cpu);
	sstats(id, &b);
	sstats(0, &b0);
	run_pkt(pkt, len, &sr->r);
	sstats(id, &a);
	sstats(0, &a0);
	for (i = 0; i < SILO_SSTAT_MAX; i++) {
		((__u64 *)&sr->d)[i] = ((__u64 *)&a)[i] - ((__u64 *)&b)[i];
		((__u64 *)&sr->d0)[i] = ((__u64 *)&a0)[i] - ((__u64 *)&b0)[i];
	}
	CHECK(sr->r.len == len && !memcmp(sr->r.out, want, len),
	      "steering changed the packet");
	CHECK_EQ(sr->r.d.rx, 1);
}

/* The same, pkt to come out as it went in. */
static void run_svc(int cpu, __u32 id, const uint8_t *pkt, size_t len,
		    struct sresult *sr)
{
	run_svc_want(cpu, id, pkt, len, pkt, sr);
}

static void cpus_of(__u64 *cpus, int a, int b)
{
	memset(cpus, 0, SILO_CPU_WORDS * sizeof(*cpus));
	if (a >= 0)
		cpus[a / 64] |= 1ULL << (a % 64);
	if (b >= 0)
		cpus[b / 64] |= 1ULL << (b % 64);
}

static int add_udp(const char *addr, __u16 port, int mode, int a, int b)
{
	struct silo_service_opts o = { .protocol = IPPROTO_UDP,
				       .port = port,
				       .mode = mode };

	if (addr) {
		o.family = strchr(addr, ':') ? SILO_AF_INET6 : SILO_AF_INET;
		inet_pton(o.family == SILO_AF_INET ? AF_INET : AF_INET6, addr,
			  o.addr);
	}
	cpus_of(o.cpus, a, b);
	return silo_service_add(s, &o);
}

static int del_svc(const char *addr, __u8 proto, __u16 port)
{
	struct silo_service_opts o = { .protocol = proto, .port = port };

	if (addr) {
		o.family = strchr(addr, ':') ? SILO_AF_INET6 : SILO_AF_INET;
		inet_pton(o.family == SILO_AF_INET ? AF_INET : AF_INET6, addr,
			  o.addr);
	}
	return silo_service_del(s, &o);
}

struct find_svc {
	__u8 family;
	__u16 port;
	int exact;
	struct silo_service svc;
	int found;
};

static int find_svc_cb(const struct silo_service_key *k,
		       const struct silo_service *svc, void *ctx)
{
	static const __u8 zero[16];
	struct find_svc *f = ctx;

	if (k->family == f->family && ntohs(k->port) == f->port &&
	    !memcmp(k->addr, zero, 16) == !f->exact) {
		f->svc = *svc;
		f->found = 1;
	}
	return 0;
}

/* The service on (family, port), any address unless exact. */
static int svc_get(__u8 family, __u16 port, int exact, struct silo_service *svc)
{
	struct find_svc f = { .family = family, .port = port, .exact = exact };

	if (silo_service_foreach(s, find_svc_cb, &f) || !f.found)
		return -1;
	*svc = f.svc;
	return 0;
}

static int cpumap_fd(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", silo_pin_dir(s), SILO_PIN_CPUMAP);
	return bpf_obj_get(path);
}

static void test_no_service_passes(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	uint8_t pkt[PKT_MAX];
	size_t len = build(pkt, &sp);
	struct sresult sr;

	run_svc(0, 0, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.r.d.pass_local, 1);
	CHECK_EQ(sr.r.d.steered, 0);
}

/* flow mode over one CPU: another CPU's packet goes there, its own stays. */
static void test_flow_steers_to_the_service_cpu(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	size_t len = build(pkt, &sp);
	struct sresult sr;

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_FLOW, 1, -1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	CHECK_EQ(svc.nr_cpus, 1);
	CHECK_EQ(svc.slots[0], 1);
	CHECK_EQ(svc.slots[SILO_SERVICE_SLOTS - 1], 1);

	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_REDIRECT);
	CHECK_EQ(sr.r.d.redirect, 1);
	CHECK_EQ(sr.r.d.steered, 1);
	CHECK_EQ(sr.r.d.pass, 0);
	CHECK_EQ(sr.d.rx, 1);
	CHECK_EQ(sr.d.steered, 1);

	/* Target is this CPU: to the stack here. */
	run_svc(1, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.r.d.pass_local, 1);
	CHECK_EQ(sr.d.local, 1);
	CHECK_EQ(sr.d.steered, 0);

	/* IPv6: the service without an address covers both families. */
	sp = spec6("fd01::1");
	len = build(pkt, &sp);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_REDIRECT);
	CHECK_EQ(sr.d.steered, 1);

	/* Another port is no service. */
	sp = spec4("10.1.0.1");
	sp.dport = 5001;
	len = build(pkt, &sp);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.d.rx, 0);
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
}

static void test_missing_cpumap_entry_passes(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	struct bpf_cpumap_val v;
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	size_t len = build(pkt, &sp);
	struct sresult sr;
	__u32 one = 1, zero = 0;
	int fd;

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_FLOW, 1, -1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	fd = cpumap_fd();
	REQUIRE(fd >= 0, "no cpumap pin");
	/* Entries only for the CPUs of some service. */
	CHECK(!bpf_map_lookup_elem(fd, &one, &v), "no cpumap entry for CPU 1");
	CHECK_EQ(v.qsize, SILO_CPUMAP_QSIZE_DEFAULT);
	CHECK(bpf_map_lookup_elem(fd, &zero, &v), "a cpumap entry for CPU 0");
	REQUIRE(!bpf_map_delete_elem(fd, &one), "delete the entry");
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.r.d.pass_local, 1);
	CHECK_EQ(sr.d.pass_no_cpumap, 1);
	CHECK_EQ(sr.d.steered, 0);
	/* A sync puts it back. */
	CHECK(silo_service_sync(s) >= 0, "sync");
	CHECK(!bpf_map_lookup_elem(fd, &one, &v), "sync did not restore it");
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
	/* The last service gone: no entry left. */
	CHECK(bpf_map_lookup_elem(fd, &one, &v), "cpumap entry left");
	close(fd);
}

/* Fragments and ICMP for a service's address are passed, never steered. */
static void test_fragment_and_icmp_pass(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	size_t len;
	struct sresult sr;

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_FLOW, 1, -1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	sp.frag_off = 0x2000; /* MF: the first fragment, ports and all */
	len = build(pkt, &sp);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.r.d.pass_fragment, 1);
	CHECK_EQ(sr.d0.fragment, 1);
	CHECK_EQ(sr.d.rx, 0);

	sp = spec6("fd01::1");
	sp.nr_exthdrs = 1;
	sp.exthdr[0] = 44; /* fragment header */
	len = build(pkt, &sp);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.d0.fragment, 1);

	sp = spec4("10.1.0.1");
	sp.proto = IPPROTO_ICMP;
	len = build(pkt, &sp);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.r.d.pass_l4_proto, 1);
	CHECK_EQ(sr.d0.not_l4, 1);
	CHECK_EQ(sr.d.rx, 0);

	/* Not for a local address: not counted for services. */
	sp = spec4("10.99.0.1");
	sp.proto = IPPROTO_ICMP;
	len = build(pkt, &sp);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.d0.not_l4, 0);
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
}

/* The exact address first, then the service on any address. */
static void test_exact_before_wildcard(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	struct silo_service any, exact;
	uint8_t pkt[PKT_MAX];
	size_t len = build(pkt, &sp);
	struct sresult sr;

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_FLOW, 1, -1), "add any");
	REQUIRE(!add_udp("10.1.0.1", 5000, SILO_SERVICE_FLOW, 0, -1),
		"add exact");
	CHECK(add_udp("10.1.0.1", 5000, SILO_SERVICE_FLOW, 0, -1) == -EEXIST,
	      "a second add on one key is refused");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &any), "no any service");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 1, &exact), "no exact service");
	CHECK(any.id != exact.id, "one id for two services");

	run_svc(0, exact.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.d.local, 1);

	sp = spec4("10.1.0.5");
	len = build(pkt, &sp);
	run_svc(0, any.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_REDIRECT);
	CHECK_EQ(sr.d.steered, 1);
	CHECK(!del_svc("10.1.0.1", IPPROTO_UDP, 5000), "del exact");
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del any");
	CHECK(del_svc(NULL, IPPROTO_UDP, 5000) == -ENOENT, "del twice");
}

/* The verdict the slot table predicts for a flow run on CPU 0. */
static int predicted(const struct silo_service *svc, const struct pkt_spec *sp,
		     __u8 proto)
{
	__u32 h = silo_flow_hash(sp->src, sp->dst, htons(sp->sport),
				 htons(sp->dport), proto);

	return svc->slots[h & (SILO_SERVICE_SLOTS - 1)] == 0 ? XDP_PASS :
							       XDP_REDIRECT;
}

/* A TCP SYN and the segments after it land on one CPU, the one the slot
 * table says; over two CPUs, flows go to both. */
static void test_tcp_flow_stays_on_one_cpu(void)
{
	struct silo_service_opts o = { .protocol = IPPROTO_TCP,
				       .port = 80,
				       .mode = SILO_SERVICE_FLOW };
	struct silo_service svc;
	uint8_t syn[PKT_MAX], data[PKT_MAX];
	int i, seen[2] = { 0, 0 };
	struct sresult a, b;
	size_t l3, len;

	if (ncpus < 2)
		SKIP("one CPU");
	cpus_of(o.cpus, 0, 1);
	REQUIRE(!silo_service_add(s, &o), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 80, 0, &svc), "no service listed");
	CHECK_EQ(svc.nr_cpus, 2);
	for (i = 0; i < 32; i++) {
		struct pkt_spec sp = spec4("10.1.0.1");

		sp.proto = IPPROTO_TCP;
		sp.dport = 80;
		sp.sport = 30000 + i * 7;
		sp.payload = 0;
		len = build(syn, &sp);
		l3 = pkt_l3_off(&sp);
		syn[l3 + 20 + 13] = 0x02; /* SYN */
		pkt_l4_csum(syn, len, &sp);
		sp.payload = 100;
		build(data, &sp);
		data[l3 + 20 + 13] = 0x18; /* PSH ACK */
		pkt_l4_csum(data, len + 100, &sp);
		run_svc(0, svc.id, syn, len, &a);
		run_svc(0, svc.id, data, len + 100, &b);
		CHECK(a.r.verdict == b.r.verdict, "flow %d: SYN %d, data %d", i,
		      a.r.verdict, b.r.verdict);
		CHECK(a.r.verdict == predicted(&svc, &sp, IPPROTO_TCP),
		      "flow %d: verdict %d, the slot table says otherwise", i,
		      a.r.verdict);
		seen[a.r.verdict == XDP_REDIRECT]++;
	}
	CHECK(seen[0] && seen[1], "32 flows all on one CPU (%d here, %d not)",
	      seen[0], seen[1]);
	CHECK(!del_svc(NULL, IPPROTO_TCP, 80), "del");
}

static int nr_slots_of(const __u16 *slots, __u32 cpu)
{
	int i, n = 0;

	for (i = 0; i < SILO_SERVICE_SLOTS; i++)
		n += slots[i] == cpu;
	return n;
}

/* A CPU leaving moves only its slots; one joining takes only its share;
 * the shares stay even. Many CPUs: the table builder alone. */
static void test_slots_move_only_their_share(void)
{
	__u64 cpus[SILO_CPU_WORDS] = {};
	__u16 slots[SILO_SERVICE_SLOTS], old[SILO_SERVICE_SLOTS];
	int i, c, moved, min, max;

	for (i = 0; i < SILO_SERVICE_SLOTS; i++)
		slots[i] = SILO_SERVICE_NO_CPU;
	for (c = 0; c < 8; c++)
		cpus[0] |= 1ULL << c;
	cpus[1] |= 1ULL << 2; /* CPU 66 */
	REQUIRE(silo_service_slots_build(slots, cpus) == 9, "build");
	min = SILO_SERVICE_SLOTS;
	max = 0;
	for (c = 0; c < 67; c++) {
		int n = nr_slots_of(slots, c);

		if (!(cpus[c / 64] >> (c % 64) & 1))
			continue;
		min = n < min ? n : min;
		max = n > max ? n : max;
	}
	CHECK(max - min <= 1, "uneven shares: %d to %d", min, max);

	/* CPU 3 leaves. */
	memcpy(old, slots, sizeof(old));
	cpus[0] &= ~(1ULL << 3);
	REQUIRE(silo_service_slots_build(slots, cpus) == 8, "build");
	for (i = 0, moved = 0; i < SILO_SERVICE_SLOTS; i++) {
		CHECK(slots[i] != 3, "slot %d still on CPU 3", i);
		if (old[i] != 3)
			CHECK(slots[i] == old[i],
			      "slot %d moved from CPU %u to %u", i, old[i],
			      slots[i]);
	}
	for (c = 0; c < 67; c++)
		if (cpus[c / 64] >> (c % 64) & 1)
			CHECK_EQ(nr_slots_of(slots, c), 32);

	/* CPU 9 joins: it takes 28 or 29 slots, and nothing else moves. */
	memcpy(old, slots, sizeof(old));
	cpus[0] |= 1ULL << 9;
	REQUIRE(silo_service_slots_build(slots, cpus) == 9, "build");
	for (i = 0, moved = 0; i < SILO_SERVICE_SLOTS; i++) {
		if (slots[i] == old[i])
			continue;
		moved++;
		CHECK(slots[i] == 9, "slot %d moved to CPU %u, not the new one",
		      i, slots[i]);
	}
	CHECK(moved == 28 || moved == 29, "%d slots moved", moved);

	/* Through the maps: a service's CPU leaving keeps the other's. */
	if (ncpus < 2)
		return;
	{
		struct silo_service_opts o = { .protocol = IPPROTO_UDP,
					       .port = 6000,
					       .replace = true };
		struct silo_service a, b;

		cpus_of(o.cpus, 0, 1);
		REQUIRE(!silo_service_add(s, &o), "add");
		REQUIRE(!svc_get(SILO_AF_INET, 6000, 0, &a), "not listed");
		cpus_of(o.cpus, 0, -1);
		REQUIRE(!silo_service_add(s, &o), "replace");
		REQUIRE(!svc_get(SILO_AF_INET, 6000, 0, &b), "not listed");
		CHECK_EQ(a.id, b.id);
		for (i = 0; i < SILO_SERVICE_SLOTS; i++)
			if (a.slots[i] == 0)
				CHECK(b.slots[i] == 0, "slot %d left CPU 0", i);
		CHECK_EQ(nr_slots_of(b.slots, 0), SILO_SERVICE_SLOTS);
		CHECK(!del_svc(NULL, IPPROTO_UDP, 6000), "del");
	}
}

static void test_queue_mode(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	size_t len = build(pkt, &sp);
	struct sresult sr;
	__u32 got[2];

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_QUEUE, 0, 1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	/* No CPU for the queue: passed where it came. */
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.d.pass_no_queue, 1);

	REQUIRE(!silo_queue_map_set(s, in0, 0, 1), "queue-map");
	REQUIRE(!silo_queue_map_get(s, in0, got, 2), "queue-map get");
	CHECK_EQ(got[0], 1);
	CHECK_EQ(got[1], SILO_SERVICE_NO_CPU);
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_REDIRECT);
	CHECK_EQ(sr.d.steered, 1);
	run_svc(1, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.d.local, 1);
	/* Another device's queue 0 is not in0's. */
	REQUIRE(!silo_queue_map_set(s, in0, 0, SILO_SERVICE_NO_CPU), "unset");
	REQUIRE(!silo_queue_map_set(s, out0, 0, 1), "queue-map out0");
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.d.pass_no_queue, 1);
	silo_queue_map_set(s, out0, 0, SILO_SERVICE_NO_CPU);
	CHECK(silo_queue_map_default(s, "in0", NULL) == -ENOENT,
	      "veth has no IRQs: nothing to default from");
	/* A fake tree of what a NIC shows: each RX queue's IRQ, its name and
	 * its affinity; a transmit-only IRQ maps nothing. */
	{
		char root[] = "/tmp/silo-svc-XXXXXX";
		__u32 q3[3];

		REQUIRE(mkdtemp(root), "mkdtemp");
		REQUIRE(!sh("set -e; cd %s; d=sys/class/net/in0/device/msi_irqs; "
			    "mkdir -p $d proc/irq/40 proc/irq/41 proc/irq/42; "
			    "touch $d/40 $d/41 $d/42; "
			    "printf '           CPU0       CPU1\n"
			    "  40:  1  2  PCI-MSI 1-edge  in0-TxRx-0\n"
			    "  41:  1  2  PCI-MSI 2-edge  in0-TxRx-1\n"
			    "  42:  1  2  PCI-MSI 3-edge  in0-tx-2\n' > proc/interrupts; "
			    "echo 1 > proc/irq/40/smp_affinity_list; "
			    "echo 0-1 > proc/irq/41/smp_affinity_list; "
			    "echo 1 > proc/irq/42/smp_affinity_list",
			    root),
			"fake tree");
		CHECK_EQ(silo_queue_map_default(s, "in0", root), 2);
		REQUIRE(!silo_queue_map_get(s, in0, q3, 3), "get");
		CHECK_EQ(q3[0], 1);
		CHECK_EQ(q3[1], 0);
		CHECK_EQ(q3[2], SILO_SERVICE_NO_CPU);
		silo_queue_map_set(s, in0, 0, SILO_SERVICE_NO_CPU);
		silo_queue_map_set(s, in0, 1, SILO_SERVICE_NO_CPU);
		sh("rm -rf %s", root);
	}
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
}

static int set_node(int fd, __u32 cpu, __u32 node)
{
	return bpf_map_update_elem(fd, &cpu, &node, BPF_ANY);
}

/* node: flow over the service's CPUs on this CPU's node (a faked
 * topology: CPU 0 on node 0, CPU 1 on node 1). */
static void test_node_mode(void)
{
	char path[PATH_MAX];
	struct silo_service svc;
	int fd, i, seen[2] = { 0, 0 };
	struct sresult sr;

	if (ncpus < 2)
		SKIP("one CPU");
	snprintf(path, sizeof(path), "%s/cpu_node", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	REQUIRE(fd >= 0, "no cpu_node pin");
	REQUIRE(!set_node(fd, 1, 1), "fake node");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_NODE, 0, 1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	/* Every flow from CPU 0 stays on node 0's CPU: CPU 0. */
	for (i = 0; i < 16; i++) {
		struct pkt_spec sp = spec4("10.1.0.1");
		uint8_t pkt[PKT_MAX];
		size_t len;

		sp.dport = 5000;
		sp.sport = 20000 + i;
		len = build(pkt, &sp);
		run_svc(0, svc.id, pkt, len, &sr);
		CHECK_EQ(sr.r.verdict, XDP_PASS);
		CHECK_EQ(sr.d.local, 1);
		/* flow mode would send about half of them to CPU 1 */
		seen[predicted(&svc, &sp, IPPROTO_UDP) == XDP_REDIRECT]++;
	}
	CHECK(seen[1], "no flow that flow mode would move: a weak test");
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");

	/* No CPU of the service on this node: flow over all of them. */
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_NODE, 1, -1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	{
		struct pkt_spec sp = spec4("10.1.0.1");
		uint8_t pkt[PKT_MAX];
		size_t len = build(pkt, &sp);

		run_svc(0, svc.id, pkt, len, &sr);
		CHECK_EQ(sr.r.verdict, XDP_REDIRECT);
		CHECK_EQ(sr.d.node_remote, 1);
		CHECK_EQ(sr.d.steered, 1);
	}
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
	set_node(fd, 1, 0);
	close(fd);
}

/* The node table of service id for node, or -1 with none. */
static int node_table(__u32 id, __u32 node, struct silo_service_node *sn)
{
	struct silo_service_node_key k = { .id = id, .node = node };
	char path[PATH_MAX];
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", silo_pin_dir(s),
		 SILO_PIN_SERVICE_NODES);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	err = bpf_map_lookup_elem(fd, &k, sn);
	close(fd);
	return err ? -1 : 0;
}

/* node mode where no CPU's number is its node's (a faked topology: CPU 0
 * on node 1, CPU 1 on node 0): the slots are those of the node of the CPU
 * the packet runs on. */
static void node_not_cpu(void)
{
	struct silo_service_node sn;
	struct silo_service svc;
	struct sresult sr;
	int cpu, i;

	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_NODE, 0, 1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	/* Node 0 holds CPU 1 only, node 1 CPU 0 only. */
	REQUIRE(!node_table(svc.id, 0, &sn), "no table for node 0");
	CHECK_EQ(sn.nr_cpus, 1);
	CHECK_EQ(nr_slots_of(sn.slots, 1), SILO_SERVICE_SLOTS);
	REQUIRE(!node_table(svc.id, 1, &sn), "no table for node 1");
	CHECK_EQ(sn.nr_cpus, 1);
	CHECK_EQ(nr_slots_of(sn.slots, 0), SILO_SERVICE_SLOTS);
	/* Every flow stays on the CPU it came to, its node's only one; the
	 * table of the node numbered as the CPU would send it to the other. */
	for (cpu = 0; cpu < 2; cpu++)
		for (i = 0; i < 8; i++) {
			struct pkt_spec sp = spec4("10.1.0.1");
			uint8_t pkt[PKT_MAX];
			size_t len;

			sp.sport = 21000 + i;
			len = build(pkt, &sp);
			run_svc(cpu, svc.id, pkt, len, &sr);
			CHECK(sr.r.verdict == XDP_PASS && sr.d.local == 1,
			      "CPU %d, flow %d: verdict %d, steered %llu", cpu,
			      i, sr.r.verdict,
			      (unsigned long long)sr.d.steered);
			CHECK_EQ(sr.d.node_remote, 0);
		}
}

static void test_node_mode_node_is_not_the_cpu(void)
{
	__u32 cpu, node[2];
	char path[PATH_MAX];
	int fd;

	if (ncpus < 2)
		SKIP("one CPU");
	snprintf(path, sizeof(path), "%s/cpu_node", silo_pin_dir(s));
	fd = bpf_obj_get(path);
	REQUIRE(fd >= 0, "no cpu_node pin");
	for (cpu = 0; cpu < 2; cpu++)
		if (bpf_map_lookup_elem(fd, &cpu, &node[cpu]))
			node[cpu] = 0;
	if (!set_node(fd, 0, 1) && !set_node(fd, 1, 0))
		node_not_cpu();
	else
		CHECK(0, "fake nodes: %s", strerror(errno));
	del_svc(NULL, IPPROTO_UDP, 5000);
	for (cpu = 0; cpu < 2; cpu++)
		set_node(fd, cpu, node[cpu]);
	close(fd);
}

/* Generic XDP: the program passes, steering is off. */
static void test_skb_mode_does_not_steer(void)
{
	struct silo_xdp_load_opts skb = { .mode = SILO_XDP_SKB };
	struct pkt_spec sp = spec4("10.3.0.1");
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	size_t len;
	struct sresult sr;
	__u32 ifindex;
	int prog;

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!sh("ip link add out1 type veth peer name out1p && "
		    "ip link set out1 up && ip link set out1p up && "
		    "ip addr add 10.3.0.1/24 dev out1"),
		"veth");
	REQUIRE(!silo_xdp_load(s, "out1", &skb), "load skb");
	ifindex = if_nametoindex("out1");
	prog = prog_of(ifindex);
	REQUIRE(prog >= 0, "no program");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_FLOW, 1, -1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	len = build(pkt, &sp);
	pin_cpu(0);
	{
		struct silo_service_stats b, a;

		sstats(svc.id, &b);
		sr.r.verdict =
			run_on(prog, ifindex, pkt, len, sr.r.out, &sr.r.len);
		sstats(svc.id, &a);
		CHECK_EQ(sr.r.verdict, XDP_PASS);
		CHECK_EQ(a.pass_skb_mode - b.pass_skb_mode, 1);
	}
	close(prog);
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
	silo_xdp_unload(s, "out1");
	sh("ip link del out1");
}

static int reuseport_udp(__u16 port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* --group: the CPUs are the group's occupied slots, re-read on sync; a
 * socket leaving moves only its CPU's slots. */
static void test_group_cpus_follow_slots(void)
{
	struct silo_group_opts go = { .name = "svcgrp" };
	struct silo_service_opts o = { .protocol = IPPROTO_UDP,
				       .port = 7100,
				       .mode = SILO_SERVICE_FLOW,
				       .group = "svcgrp" };
	struct silo_service a, b;
	struct silo_group *g = NULL;
	int fd0, fd1, i;

	if (ncpus < 2)
		SKIP("one CPU");
	fd0 = reuseport_udp(7100);
	fd1 = reuseport_udp(7100);
	REQUIRE(fd0 >= 0 && fd1 >= 0, "sockets");
	REQUIRE(!silo_group_create(s, fd0, &go, &g), "group create");
	REQUIRE(!silo_group_set(g, 0, fd0) && !silo_group_set(g, 1, fd1),
		"group set");
	REQUIRE(!silo_service_add(s, &o), "add --group");
	REQUIRE(!svc_get(SILO_AF_INET, 7100, 0, &a), "not listed");
	CHECK_EQ(a.nr_cpus, 2);
	CHECK(a.flags & SILO_SERVICE_F_GROUP, "no group flag");
	CHECK(!strcmp(a.group, "svcgrp"), "group '%s'", a.group);
	CHECK_EQ(silo_service_sync(s), 0); /* nothing changed */

	REQUIRE(!silo_group_remove(g, 1), "group remove");
	CHECK(silo_service_sync(s) >= 1, "sync saw no change");
	REQUIRE(!svc_get(SILO_AF_INET, 7100, 0, &b), "not listed");
	CHECK_EQ(b.nr_cpus, 1);
	for (i = 0; i < SILO_SERVICE_SLOTS; i++)
		if (b.slots[i] != 0) {
			CHECK(0, "slot %d on CPU %u, was %u", i, b.slots[i],
			      a.slots[i]);
			break;
		}
	/* A socket closing leaves its slot by itself: the next sync. */
	REQUIRE(!silo_group_set(g, 1, fd1), "group set again");
	CHECK(silo_service_sync(s) >= 1, "sync saw no change");
	close(fd1);
	CHECK(silo_service_sync(s) >= 1, "sync missed the closed socket");
	REQUIRE(!svc_get(SILO_AF_INET, 7100, 0, &b), "not listed");
	CHECK_EQ(b.nr_cpus, 1);
	CHECK(!del_svc(NULL, IPPROTO_UDP, 7100), "del");
	silo_group_detach(g, fd0);
	silo_group_close(g);
	close(fd0);
}

/* A checksum wrong on the wire: passed, since the target CPU's stack
 * would check it again (and drop it here as there). IPv4 UDP without a
 * checksum is steered. */
static void test_incomplete_checksum_passes(void)
{
	struct pkt_spec sp = spec4("10.1.0.1");
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	size_t len;
	struct sresult sr;
	int odd;

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_FLOW, 1, -1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	len = pkt_build(pkt, &sp); /* checksum 0: none, for UDP over IPv4 */
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_REDIRECT);
	len = build(pkt, &sp);
	pkt[len - 1] ^= 1; /* a payload byte changed after the sum */
	run_svc(0, svc.id, pkt, len, &sr);
	CHECK_EQ(sr.r.verdict, XDP_PASS);
	CHECK_EQ(sr.d.pass_csum, 1);
	CHECK_EQ(sr.r.d.pass_local, 1);
	/* Payloads of every length to a jumbo's: the sum over the chunks and
	 * the odd tail agrees with a full computation. */
	for (odd = 0; odd < 9; odd++) {
		size_t sizes[] = { 0, 1, 2, 3, 5, 255, 257, 1451, 1452 };

		sp = spec6("fd01::1");
		sp.payload = sizes[odd];
		len = build(pkt, &sp);
		run_svc(0, svc.id, pkt, len, &sr);
		CHECK(sr.r.verdict == XDP_REDIRECT,
		      "IPv6 UDP payload %zu: verdict %d, pass_csum %llu",
		      sizes[odd], sr.r.verdict,
		      (unsigned long long)sr.d.pass_csum);
		pkt[len - 1] ^= 0x80;
		run_svc(0, svc.id, pkt, len, &sr);
		CHECK(sr.r.verdict == XDP_PASS && sr.d.pass_csum == 1,
		      "IPv6 UDP payload %zu, a bad sum: verdict %d", sizes[odd],
		      sr.r.verdict);
	}
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
}

/* A checksum a sender on this host left to offload (the pseudo header's
 * sum where it goes), from in0, a veth: finished as the device would, then
 * steered (the cpumap's skb carries no offload state, and the stack on the
 * target CPU checks the sum in full). Both families, UDP and TCP. */
static void test_checksum_left_to_offload_finished_and_steered(void)
{
	static const char *const dsts[] = { "10.1.0.1", "fd01::1" };
	static const __u8 protos[] = { IPPROTO_UDP, IPPROTO_TCP };
	uint8_t pkt[PKT_MAX], full[PKT_MAX];
	struct silo_service svc;
	struct sresult sr;
	unsigned int f, p;
	size_t len;

	if (ncpus < 2)
		SKIP("one CPU");
	for (p = 0; p < 2; p++) {
		struct silo_service_opts o = { .protocol = protos[p],
					       .port = 5100,
					       .mode = SILO_SERVICE_FLOW };

		cpus_of(o.cpus, 1, -1); /* family 0: both */
		REQUIRE(!silo_service_add(s, &o), "add");
		for (f = 0; f < 2; f++) {
			struct pkt_spec sp =
				f ? spec6(dsts[f]) : spec4(dsts[f]);

			sp.proto = protos[p];
			sp.dport = 5100;
			sp.payload = 33;
			REQUIRE(!svc_get(f ? SILO_AF_INET6 : SILO_AF_INET, 5100,
					 0, &svc),
				"no service listed");
			len = pkt_build(pkt, &sp);
			pkt_l4_csum_partial(pkt, len, &sp);
			memcpy(full, pkt, len);
			pkt_l4_csum(full, len, &sp);
			/* Out as the sender's device would have sent it. */
			run_svc_want(0, svc.id, pkt, len, full, &sr);
			CHECK(sr.r.verdict == XDP_REDIRECT && sr.d.steered == 1,
			      "family %d proto %d: verdict %d, pass_csum %llu",
			      sp.family, sp.proto, sr.r.verdict,
			      (unsigned long long)sr.d.pass_csum);
			CHECK(pkt_l4_csum_ok(sr.r.out, len, &sp),
			      "family %d proto %d: the sum is not right",
			      sp.family, sp.proto);
		}
		CHECK(!del_svc(NULL, protos[p], 5100), "del");
	}
}

/* IPv6 TCP: a segment whose sum is right is steered, one whose sum is
 * wrong passed (the pseudo header's next header is TCP's). */
static void test_tcp6_checksum_gates_steering(void)
{
	struct silo_service_opts o = { .family = SILO_AF_INET6,
				       .protocol = IPPROTO_TCP,
				       .port = 80,
				       .mode = SILO_SERVICE_FLOW };
	size_t sizes[] = { 0, 1, 3, 100, 1401 };
	struct silo_service svc;
	uint8_t pkt[PKT_MAX];
	struct sresult sr;
	unsigned int i;
	size_t len;

	if (ncpus < 2)
		SKIP("one CPU");
	inet_pton(AF_INET6, "fd01::1", o.addr);
	cpus_of(o.cpus, 1, -1);
	REQUIRE(!silo_service_add(s, &o), "add");
	if (svc_get(SILO_AF_INET6, 80, 1, &svc)) {
		CHECK(0, "no service listed");
		goto out;
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct pkt_spec sp = spec6("fd01::1");

		sp.proto = IPPROTO_TCP;
		sp.dport = 80;
		sp.sport = 31000 + i;
		sp.payload = sizes[i];
		len = build(pkt, &sp);
		run_svc(0, svc.id, pkt, len, &sr);
		CHECK(sr.r.verdict == XDP_REDIRECT && sr.d.steered == 1,
		      "IPv6 TCP payload %zu: verdict %d, pass_csum %llu",
		      sizes[i], sr.r.verdict,
		      (unsigned long long)sr.d.pass_csum);
		CHECK_EQ(sr.r.d.steered, 1);
		pkt[len - 1] ^= 0x40; /* a byte changed after the sum */
		run_svc(0, svc.id, pkt, len, &sr);
		CHECK(sr.r.verdict == XDP_PASS && sr.d.pass_csum == 1,
		      "IPv6 TCP payload %zu, a bad sum: verdict %d", sizes[i],
		      sr.r.verdict);
		CHECK_EQ(sr.d.steered, 0);
	}
	/* From the service's CPU: to the stack here. */
	{
		struct pkt_spec sp = spec6("fd01::1");

		sp.proto = IPPROTO_TCP;
		sp.dport = 80;
		len = build(pkt, &sp);
		run_svc(1, svc.id, pkt, len, &sr);
		CHECK_EQ(sr.r.verdict, XDP_PASS);
		CHECK_EQ(sr.d.local, 1);
	}
out:
	CHECK(!del_svc("fd01::1", IPPROTO_TCP, 80), "del");
}

/* queue mode on a veth with two RX queues: each queue to its CPU. */
static void test_queue_mode_two_queues(void)
{
	struct silo_xdp_load_opts native = { .unbound = true };
	struct pkt_spec sp;
	struct silo_service svc;
	struct silo_service_stats b, a;
	uint8_t pkt[PKT_MAX], out[PKT_MAX];
	__u32 ifindex, q;
	uint8_t mac[6];
	size_t len;
	int prog, verdict[2];

	if (ncpus < 2)
		SKIP("one CPU");
	REQUIRE(!sh("ip link add mq0 numrxqueues 2 numtxqueues 2 type veth "
		    "peer name mq0p numrxqueues 2 numtxqueues 2 && "
		    "ip link set mq0 up && ip link set mq0p up && "
		    "ip addr add 10.4.0.1/24 dev mq0"),
		"veth with two queues");
	REQUIRE(!silo_xdp_load(s, "mq0", &native), "load");
	ifindex = if_nametoindex("mq0");
	prog = prog_of(ifindex);
	REQUIRE(prog >= 0 && !read_mac("mq0", mac), "no program");
	REQUIRE(!add_udp(NULL, 5000, SILO_SERVICE_QUEUE, 0, 1), "add");
	REQUIRE(!svc_get(SILO_AF_INET, 5000, 0, &svc), "no service listed");
	REQUIRE(!silo_queue_map_set(s, ifindex, 0, 0) &&
			!silo_queue_map_set(s, ifindex, 1, 1),
		"queue-map");
	sp = spec4("10.4.0.1");
	memcpy(sp.dmac, mac, 6);
	len = build(pkt, &sp);
	pin_cpu(0);
	for (q = 0; q < 2; q++) {
		struct xdp_md ctx = { .data_end = len,
				      .ingress_ifindex = ifindex,
				      .rx_queue_index = q };
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = pkt,
			    .data_size_in = len, .data_out = out,
			    .data_size_out = PKT_MAX, .ctx_in = &ctx,
			    .ctx_size_in = sizeof(ctx), .repeat = 1);

		sstats(svc.id, &b);
		REQUIRE(!bpf_prog_test_run_opts(prog, &opts), "test run: %s",
			strerror(errno));
		sstats(svc.id, &a);
		verdict[q] = opts.retval;
		CHECK_EQ(a.rx - b.rx, 1);
	}
	/* From CPU 0: queue 0's CPU is this one, queue 1's is CPU 1. */
	CHECK_EQ(verdict[0], XDP_PASS);
	CHECK_EQ(verdict[1], XDP_REDIRECT);
	close(prog);
	silo_queue_map_set(s, ifindex, 0, SILO_SERVICE_NO_CPU);
	silo_queue_map_set(s, ifindex, 1, SILO_SERVICE_NO_CPU);
	CHECK(!del_svc(NULL, IPPROTO_UDP, 5000), "del");
	silo_xdp_unload(s, "mq0");
	sh("ip link del mq0");
}

int main(void)
{
	if (test_init())
		return 1;
	if (setup()) {
		printf("not ok - setup: could not build the test topology\n");
		return 1;
	}
	RUN(test_no_service_passes);
	RUN(test_flow_steers_to_the_service_cpu);
	RUN(test_missing_cpumap_entry_passes);
	RUN(test_fragment_and_icmp_pass);
	RUN(test_incomplete_checksum_passes);
	RUN(test_checksum_left_to_offload_finished_and_steered);
	RUN(test_tcp6_checksum_gates_steering);
	RUN(test_exact_before_wildcard);
	RUN(test_tcp_flow_stays_on_one_cpu);
	RUN(test_slots_move_only_their_share);
	RUN(test_queue_mode);
	RUN(test_queue_mode_two_queues);
	RUN(test_node_mode);
	RUN(test_node_mode_node_is_not_the_cpu);
	RUN(test_skb_mode_does_not_steer);
	RUN(test_group_cpus_follow_slots);
	fwd_teardown();
	return 0;
}
