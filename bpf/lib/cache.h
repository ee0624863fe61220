/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The route cache: one LRU map per NUMA node (maps.h), its keys, and
 * entries read and written without a lock under the genid protocol.
 */
#ifndef SILO_BPF_LIB_CACHE_H
#define SILO_BPF_LIB_CACHE_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"

/* Entries in a hash map, summed over CPUs (Linux 6.6): counts evictions. */
extern __s64 bpf_map_sum_elem_count(const struct bpf_map *map) __ksym __weak;

static __always_inline void *node_cache(__u32 *n)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u32 *node = bpf_map_lookup_elem(&cpu_node, &cpu);

	*n = node ? *node : 0;
	return bpf_map_lookup_elem(&route_cache, n);
}

/*
 * A route key holds what the forward lookup's answer depends on under
 * genid's flags, and nothing more: a field left out is zero. The flags
 * themselves are part of the key, so a key made under other flags never
 * matches one made under these.
 */
static __always_inline void fill_key(struct silo_route_key *key,
				     struct xdp_md *ctx, const struct pkt *p,
				     __u32 flags)
{
	__u32 src_bit = p->family == SILO_AF_INET ? SILO_GENID_KEY_SRC_V4 :
						    SILO_GENID_KEY_SRC_V6;
	__u64 w0, w1, s0 = 0, s1 = 0, d0, d1, *w = (__u64 *)key;
	__u64 l4 = 0, sport = 0, dport = 0, label = 0;

	/* Made in registers and stored by words, as the hash and the
	 * compares read it: a word load over two half stores waits for
	 * them. The words, little-endian, as the struct lays them out: */
	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "LE");
	_Static_assert(
		__builtin_offsetof(struct silo_route_key, family) == 4 &&
			__builtin_offsetof(struct silo_route_key, tos) == 5 &&
			__builtin_offsetof(struct silo_route_key, l4_proto) ==
				6 &&
			__builtin_offsetof(struct silo_route_key, format) ==
				7 &&
			__builtin_offsetof(struct silo_route_key, dport) ==
				10 &&
			__builtin_offsetof(struct silo_route_key, flowlabel) ==
				12 &&
			__builtin_offsetof(struct silo_route_key, src) == 16 &&
			__builtin_offsetof(struct silo_route_key, dst) == 32,
		"struct silo_route_key's words");
	if (flags & SILO_GENID_KEY_L4) {
		l4 = p->l4_proto;
		sport = p->sport;
		dport = p->dport;
	}
	if (p->family == SILO_AF_INET6 && (flags & SILO_GENID_KEY_FLOWLABEL)) {
		/* The IPv6 L3 hash takes the next header with the label. */
		l4 = p->l4_proto;
		label = p->flowinfo & bpf_htonl(0x000FFFFF);
	}
	w0 = (__u64)ctx->ingress_ifindex | (__u64)p->family << 32 |
	     (__u64)p->tos << 40 | l4 << 48 |
	     (__u64)(flags & SILO_GENID_KEY_MASK) << 56;
	w1 = sport | dport << 16 | label << 32;
	if (flags & src_bit) {
		__builtin_memcpy(&s0, p->src, sizeof(s0));
		__builtin_memcpy(&s1, p->src + 8, sizeof(s1));
	}
	__builtin_memcpy(&d0, p->dst, sizeof(d0));
	__builtin_memcpy(&d1, p->dst + 8, sizeof(d1));
	w[0] = w0;
	w[1] = w1;
	w[2] = s0;
	w[3] = s1;
	w[4] = d0;
	w[5] = d1;
}

static __always_inline int key_equal(const struct silo_route_key *a,
				     const struct silo_route_key *b)
{
	const __u64 *x = (const __u64 *)a, *y = (const __u64 *)b;
	__u64 diff = 0;
	int i;

	for (i = 0; i < (int)(sizeof(*a) / sizeof(__u64)); i++)
		diff |= x[i] ^ y[i];
	return diff == 0;
}

/*
 * Entries are read and rewritten without a lock (a lock would be a write
 * shared by every CPU of the node on every packet). The writer zeroes genid,
 * writes the fields, then stores genid; a reader copies the fields between
 * two reads of genid and trusts the copy only if both equal the current
 * genid and the copy names our key: an element evicted and reused by
 * another key between our lookup and our copy holds that key, and is
 * refused. Ordering relies on the JIT's plain loads and stores keeping
 * program order, which holds on x86 (TSO); compiler barriers keep clang
 * from moving them.
 */
static __always_inline int entry_read(struct silo_route_entry *e,
				      struct silo_route_entry *out,
				      const struct silo_route_key *key,
				      __u64 gen)
{
	if (READ_ONCE(e->genid) != gen)
		return -1;
	barrier();
	__builtin_memcpy(out, e, sizeof(*out));
	barrier();
	if (READ_ONCE(e->genid) != gen || !key_equal(&out->key, key))
		return -2;
	return 0;
}

/*
 * A preallocated LRU map may hand an element to another key (eviction or a
 * delete, then an insert) while we hold a pointer to it. So the writer
 * publishes the new genid only if the key still maps to this element; if
 * not, it leaves genid 0 so the element's new owner re-resolves rather than
 * using our fields. Returns 0, or -1 when the element was taken over.
 */
static __always_inline int entry_write(void *cache,
				       const struct silo_route_key *key,
				       struct silo_route_entry *e,
				       const struct silo_route_entry *n)
{
	WRITE_ONCE(e->genid, 0);
	barrier();
	e->ifindex = n->ifindex;
	e->mtu = n->mtu;
	e->family = n->family;
	e->verdict = n->verdict;
	__builtin_memcpy(e->smac, n->smac, sizeof(e->smac));
	__builtin_memcpy(e->dmac, n->dmac, sizeof(e->dmac));
	__builtin_memcpy(e->nexthop, n->nexthop, sizeof(e->nexthop));
	__builtin_memcpy(&e->key, key, sizeof(e->key));
	barrier();
	if (bpf_map_lookup_elem(cache, key) != e) {
		WRITE_ONCE(e->genid, 0);
		return -1;
	}
	WRITE_ONCE(e->genid, n->genid);
	return 0;
}

/*
 * Stores a new answer: in place over e, an element of this key found stale
 * (an update on a full LRU map takes a new element and may evict another
 * live entry), or as a new element (the caller has admitted it). Counts
 * what it did; an insert that shrinks the map below its size plus one
 * evicted the rest.
 *
 * An insert is logged in fill_log for silod's index: the record reserved
 * first (no room: not cached), submitted after the update and before the
 * fill is counted, as the second sweep's proof needs (user/silod/sweep.c).
 * silod drains the log at least every heartbeat: it is woken only when
 * the log is a quarter full.
 */
static __always_inline void cache_fill(void *cache, __u32 node,
				       const struct silo_route_key *key,
				       struct silo_route_entry *e,
				       const struct silo_route_entry *n,
				       struct silo_stats *st)
{
	struct silo_fill_rec *rec;
	__s64 before = 0, after;
	__u64 wake;

	if (e) {
		if (entry_write(cache, key, e, n))
			count(st, SILO_STAT_CACHE_RACE);
		else
			count(st, SILO_STAT_CACHE_REFRESH);
		return;
	}
	rec = bpf_ringbuf_reserve(&fill_log, sizeof(*rec), 0);
	if (!rec) {
		count(st, SILO_STAT_CACHE_NO_LOG);
		return;
	}
	rec->node = node;
	rec->pad = 0;
	__builtin_memcpy(&rec->key, key, sizeof(rec->key));
	if (bpf_ksym_exists(bpf_map_sum_elem_count))
		before = bpf_map_sum_elem_count(cache);
	/* NOEXIST: another CPU's insert of this key meanwhile stays. */
	if (bpf_map_update_elem(cache, key, n, BPF_NOEXIST)) {
		bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
		count(st, SILO_STAT_CACHE_INSERT_FAIL);
		return;
	}
	wake = bpf_ringbuf_query(&fill_log, BPF_RB_AVAIL_DATA) >
			       SILO_FILL_LOG_BYTES / 4 ?
		       BPF_RB_FORCE_WAKEUP :
		       BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(rec, wake);
	count(st, SILO_STAT_CACHE_INSERT);
	if (!bpf_ksym_exists(bpf_map_sum_elem_count))
		return;
	after = bpf_map_sum_elem_count(cache);
	if (after <= before)
		st->cache_evict += before + 1 - after;
}

#endif /* SILO_BPF_LIB_CACHE_H */
