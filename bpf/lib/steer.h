/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Steering: a local packet of a registered service goes to its CPU
 * through the cpumap, by the service's policy (cpu, queue, flow, node).
 */
#ifndef SILO_BPF_LIB_STEER_H
#define SILO_BPF_LIB_STEER_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"
#include "csum.h"

/*
 * The local branch's state, off the stack: the forward path inlined in
 * silo_xdp() leaves local_steer() few of the 512 bytes.
 */
struct steer_scratch {
	struct silo_service_key svc;
	struct silo_service_node_key node;
	struct silo_queue_key queue;
	__u32 cpu;
	__u32 id;
	__u32 slot;
	__u32 target; /* the CPU it goes to: kept here over the sum's calls */
	struct l4_csum csum; /* the L4 checksum's */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct steer_scratch);
} steer_scratch SEC(".maps");

/* local_pick()'s answer when the target is another CPU: the sum next. */
#define STEER_SUM (-1)

/*
 * Which CPU a packet for a local address runs on: XDP_PASS when here (no
 * service, this CPU, or none to go to), STEER_SUM with sc->target set when
 * another. Not inlined, and with few values live, so the forward path
 * keeps its stack and its cost.
 */
static __noinline int local_pick(struct xdp_md *ctx, const struct pkt *p,
				 bool may_steer)
{
	const struct silo_service_node *sn;
	const struct silo_service *svc;
	struct silo_service_stats *ss;
	struct steer_scratch *sc;
	const __u16 *slots;
	__u32 zero = 0, *v;

	sc = bpf_map_lookup_elem(&steer_scratch, &zero);
	if (!sc)
		return XDP_PASS;
	/* The exact address first, then any. */
	sc->svc.family = p->family;
	sc->svc.protocol = p->l4_proto;
	sc->svc.port = p->dport;
	__builtin_memcpy(sc->svc.addr, p->dst, sizeof(sc->svc.addr));
	svc = bpf_map_lookup_elem(&services, &sc->svc);
	if (!svc) {
		__builtin_memset(sc->svc.addr, 0, sizeof(sc->svc.addr));
		svc = bpf_map_lookup_elem(&services, &sc->svc);
		if (!svc)
			return XDP_PASS;
	}
	sc->id = svc->id;
	ss = bpf_map_lookup_elem(&service_stats, &sc->id);
	scount(ss, SILO_SSTAT_RX);
	if (!may_steer) {
		scount(ss, SILO_SSTAT_PASS_SKB_MODE);
		return XDP_PASS;
	}
	sc->cpu = bpf_get_smp_processor_id();
	if (svc->mode == SILO_SERVICE_QUEUE) {
		sc->queue.ifindex = ctx->ingress_ifindex;
		sc->queue.queue = ctx->rx_queue_index;
		v = bpf_map_lookup_elem(&queue_cpu, &sc->queue);
		if (!v) {
			scount(ss, SILO_SSTAT_PASS_NO_QUEUE);
			return XDP_PASS;
		}
		sc->target = *v;
	} else {
		/* Hashed only here: a packet of no service, most of a
		 * host's, pays for the lookups alone. */
		sc->slot = silo_flow_hash(p->src, p->dst, p->sport, p->dport,
					  p->l4_proto) &
			   (SILO_SERVICE_SLOTS - 1);
		slots = svc->slots;
		if (svc->mode == SILO_SERVICE_NODE) {
			v = bpf_map_lookup_elem(&cpu_node, &sc->cpu);
			sc->node.id = sc->id;
			sc->node.node = v ? *v : 0;
			sn = bpf_map_lookup_elem(&service_nodes, &sc->node);
			if (sn && sn->nr_cpus)
				slots = sn->slots;
			else
				scount(ss, SILO_SSTAT_NODE_REMOTE);
		}
		sc->target = slots[sc->slot & (SILO_SERVICE_SLOTS - 1)];
		if (sc->target == SILO_SERVICE_NO_CPU) {
			scount(ss, SILO_SSTAT_PASS_NO_CPU);
			return XDP_PASS;
		}
	}
	if (sc->target == sc->cpu) {
		scount(ss, SILO_SSTAT_LOCAL);
		return XDP_PASS;
	}
	return STEER_SUM;
}

/*
 * The packet local_pick() sent elsewhere: its L4 sum checked over the
 * whole frame (finished first where a sender on this host left it to
 * offload and the frame leaves as bytes: the cpumap's skb carries no such
 * state), then redirected through the cpumap; else XDP_PASS, here. A call
 * of its own beside local_pick(), not inside it: the sum's helper calls
 * keep values on a stack the forward path leaves 32 bytes of.
 */
static __noinline int local_redirect(struct xdp_md *ctx, const struct pkt *p,
				     bool finish)
{
	const struct silo_device *dev;
	struct silo_service_stats *ss;
	struct steer_scratch *sc;
	__u32 zero = 0, ifindex = ctx->ingress_ifindex;
	int ok = 0, left = 0;

	sc = bpf_map_lookup_elem(&steer_scratch, &zero);
	if (!sc)
		return XDP_PASS;
	ss = bpf_map_lookup_elem(&service_stats, &sc->id);
	/* Only records the target; a missing entry returns XDP_PASS. First:
	 * a checksum finished below then always leaves as bytes. */
	if (bpf_redirect_map(&cpumap, sc->target, XDP_PASS) != XDP_REDIRECT) {
		scount(ss, SILO_SSTAT_PASS_NO_CPUMAP);
		return XDP_PASS;
	}
	dev = bpf_map_lookup_elem(&devices, &ifindex);
	if (dev && (dev->flags & SILO_DEV_F_LOCAL_TX)) {
		sc->csum.ifindex = ifindex;
		left = l4_csum_finish(ctx, p, &sc->csum, finish);
		if (left)
			csum_count(&sc->csum.ifindex,
				   left > 0 ? SILO_CSUM_STAT_FINISHED :
					      SILO_CSUM_STAT_PASSED);
		ok = left > 0;
	}
	if (!ok && !left)
		ok = l4_csum_ok(ctx, p, &sc->csum);
	if (!ok) {
		scount(ss, SILO_SSTAT_PASS_CSUM);
		return XDP_PASS;
	}
	scount(ss, SILO_SSTAT_STEERED);
	return XDP_REDIRECT;
}

/*
 * Where a packet for a local address runs: XDP_REDIRECT when it goes to
 * its service's CPU (through the cpumap), else XDP_PASS, here. Never a
 * drop: whatever cannot be steered is passed where it is.
 */
static __always_inline int local_steer(struct xdp_md *ctx, const struct pkt *p,
				       bool may_steer, bool csum_finish)
{
	if (local_pick(ctx, p, may_steer) != STEER_SUM)
		return XDP_PASS;
	return local_redirect(ctx, p, csum_finish);
}

#endif /* SILO_BPF_LIB_STEER_H */
