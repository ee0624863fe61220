// SPDX-License-Identifier: GPL-2.0
/*
 * The index of the route caches by address: a sweep for prefix P visits only
 * the keys whose address (destination of a route entry, source of a source
 * entry) may lie in P, so it costs what the change touches, not what the
 * caches hold.
 *
 * Keys are bucketed by node, family, kind and address prefix (/24 for IPv4,
 * /64 for IPv6). A sweep of a prefix at least as long as a bucket's looks in
 * one bucket; a shorter one looks up each bucket it covers, or walks the
 * bucket table when that is smaller.
 *
 * Complete by construction: the data path logs every insert in fill_log
 * before it counts the fill, and caches nothing it could not log (abi.h).
 * The index takes in the log (drain) before every sweep, so it holds every
 * key whose fill was counted before the sweep began; the second sweep's
 * proof in sweep.c holds as it did for a walk of the whole cache. A refresh
 * in place logs nothing: its key was logged when it was inserted, and a
 * key leaves the index only when the cache does not hold it (a delete that
 * worked or said ENOENT), under the lock that drains, so a later insert's
 * record is taken in after the key went.
 *
 * Stale keys: the LRU evicts without telling, and a key inserted twice is
 * listed twice. A sweep drops what its delete does not find; past twice
 * the caches' capacity the index is built again from one walk of the
 * caches (amortised: at least a capacity's worth of records in between),
 * and so it is at startup and after each resync.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "silod.h"
#include "silo/abi/internal.h"

struct bucket {
	__u8 tag[8]; /* the address's first 3 (IPv4) or 8 (IPv6) bytes */
	__u32 node;
	__u8 family;
	__u8 source; /* source entries, indexed by source */
	__u8 used;
	__u32 n, cap;
	struct silo_route_key *keys;
};

struct cache_index {
	pthread_mutex_t lock;
	struct bucket *tab; /* open addressing, grown at half full */
	size_t cap, used;
	size_t nkeys, limit;
	struct ring_buffer *rb;
	struct silod *d;
	bool broken; /* a record was lost (no memory): build again */
	int err;
};

static size_t tag_len(__u8 family)
{
	return family == SILO_AF_INET ? 3 : 8;
}

static size_t bucket_hash(__u32 node, __u8 family, __u8 source, const __u8 *tag)
{
	size_t h = 14695981039346656037ULL ^ (node * 4 + source * 2 + family);
	unsigned int i;

	for (i = 0; i < 8; i++)
		h = (h ^ tag[i]) * 1099511628211ULL;
	return h ^ h >> 29;
}

static struct bucket *slot_of(struct bucket *tab, size_t cap, __u32 node,
			      __u8 family, __u8 source, const __u8 *tag)
{
	size_t i = bucket_hash(node, family, source, tag) & (cap - 1);

	for (;; i = (i + 1) & (cap - 1)) {
		struct bucket *b = &tab[i];

		if (!b->used ||
		    (b->node == node && b->family == family &&
		     b->source == source && !memcmp(b->tag, tag, 8)))
			return b;
	}
}

static struct bucket *find(struct cache_index *ix, __u32 node, __u8 family,
			   __u8 source, const __u8 *tag)
{
	struct bucket *b;

	if (!ix->cap)
		return NULL;
	b = slot_of(ix->tab, ix->cap, node, family, source, tag);
	return b->used ? b : NULL;
}

static int grow_table(struct cache_index *ix)
{
	size_t cap = ix->cap ? ix->cap * 2 : 1024, i;
	struct bucket *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (i = 0; i < ix->cap; i++) {
		struct bucket *o = &ix->tab[i];

		if (o->used)
			*slot_of(tab, cap, o->node, o->family, o->source,
				 o->tag) = *o;
	}
	free(ix->tab);
	ix->tab = tab;
	ix->cap = cap;
	return 0;
}

static int index_add(struct cache_index *ix, __u32 node,
		     const struct silo_route_key *k)
{
	__u8 source = !!(k->format & SILO_KEY_SOURCE), tag[8] = {};
	const __u8 *a = source ? k->src : k->dst;
	struct bucket *b;

	if (k->family != SILO_AF_INET && k->family != SILO_AF_INET6)
		return 0; /* never cached */
	memcpy(tag, a, tag_len(k->family));
	if ((ix->used + 1) * 2 > ix->cap && grow_table(ix))
		return -ENOMEM;
	b = slot_of(ix->tab, ix->cap, node, k->family, source, tag);
	if (!b->used) {
		memcpy(b->tag, tag, 8);
		b->node = node;
		b->family = k->family;
		b->source = source;
		b->used = 1;
		ix->used++;
	}
	if (b->n == b->cap) {
		__u32 cap = b->cap ? b->cap * 2 : 4;
		void *p = realloc(b->keys, cap * sizeof(*b->keys));

		if (!p)
			return -ENOMEM;
		b->keys = p;
		b->cap = cap;
	}
	b->keys[b->n++] = *k;
	ix->nkeys++;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	const struct silo_fill_rec *r = data;
	struct cache_index *ix = ctx;

	if (size < sizeof(*r))
		return 0;
	/* No room: the key may be in a cache unlisted; build again. */
	if (index_add(ix, r->node, &r->key))
		ix->broken = true;
	return 0;
}

static void index_clear(struct cache_index *ix)
{
	size_t i;

	for (i = 0; i < ix->cap; i++)
		free(ix->tab[i].keys);
	free(ix->tab);
	ix->tab = NULL;
	ix->cap = ix->used = ix->nkeys = 0;
}

static int rebuild_one(int fd, const struct silo_route_key *k,
		       const struct silo_route_entry *e, void *ctx)
{
	struct cache_index *ix = ctx;
	__u32 node;

	(void)e;
	for (node = 0; node < ix->d->maps.nr_nodes; node++)
		if (ix->d->maps.node_fd[node] == fd)
			return index_add(ix, node, k);
	return 0;
}

/* Index held. The limit follows the caches' capacity (nodes are added). */
static int rebuild(struct silod *d, struct cache_index *ix)
{
	struct bpf_map_info info;
	__u32 node, len;
	size_t cap = 0;
	int err;

	for (node = 0; node < d->maps.nr_nodes; node++) {
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (!bpf_obj_get_info_by_fd(d->maps.node_fd[node], &info, &len))
			cap += info.max_entries;
	}
	if (getenv("SILOD_TEST_INDEX_LIMIT")) /* tests: a small limit */
		cap = strtoul(getenv("SILOD_TEST_INDEX_LIMIT"), NULL, 10) / 2;
	ix->limit = cap * 2;
	index_clear(ix);
	ix->broken = false;
	/* Keys logged meanwhile come in with the next drain. */
	err = cache_for_each(d, rebuild_one, ix);
	if (err) {
		ix->broken = true;
		pr_err("cannot index the route cache: %s\n", strerror(-err));
		return err;
	}
	DSTAT_ADD(d, index_rebuilds, 1);
	pr_debug("route cache index built: %zu keys in %zu buckets\n",
		 ix->nkeys, ix->used);
	return 0;
}

/* Index held: takes in the log; builds again when it must. */
static int drain(struct silod *d, struct cache_index *ix)
{
	int n = ring_buffer__consume(ix->rb);

	if (n < 0)
		pr_warn("cannot read the fill log: %s\n", strerror(-n));
	if (n < 0 || ix->broken || ix->nkeys > ix->limit)
		return rebuild(d, ix);
	return 0;
}

int index_open(struct silod *d)
{
	struct cache_index *ix = calloc(1, sizeof(*ix));
	int err;

	if (!ix)
		return -ENOMEM;
	ix->d = d;
	ix->broken = true; /* built by the first resync */
	pthread_mutex_init(&ix->lock, NULL);
	ix->rb = ring_buffer__new(d->maps.fd[SILO_MAP_FILL_LOG], on_record, ix,
				  NULL);
	if (!ix->rb) {
		err = -errno;
		pr_err("cannot read the fill log: %s\n", strerror(-err));
		pthread_mutex_destroy(&ix->lock);
		free(ix);
		return err;
	}
	d->index = ix;
	return 0;
}

void index_close(struct silod *d)
{
	struct cache_index *ix = d->index;

	if (!ix)
		return;
	ring_buffer__free(ix->rb);
	index_clear(ix);
	pthread_mutex_destroy(&ix->lock);
	free(ix);
	d->index = NULL;
}

int index_pollfd(struct silod *d)
{
	return ring_buffer__epoll_fd(d->index->rb);
}

int index_drain(struct silod *d)
{
	struct cache_index *ix = d->index;
	int err;

	pthread_mutex_lock(&ix->lock);
	err = drain(d, ix);
	pthread_mutex_unlock(&ix->lock);
	return err;
}

int index_rebuild(struct silod *d)
{
	struct cache_index *ix = d->index;
	int err;

	pthread_mutex_lock(&ix->lock);
	err = rebuild(d, ix);
	if (!err)
		err = drain(d, ix);
	pthread_mutex_unlock(&ix->lock);
	return err;
}

bool in_prefix(const struct prefix *p, __u8 family, const __u8 *a)
{
	unsigned int full = p->len / 8, rest = p->len % 8;

	if (p->family != family)
		return false;
	if (memcmp(p->addr, a, full))
		return false;
	return !rest || !((p->addr[full] ^ a[full]) & (0xFF << (8 - rest)));
}

/* Deletes the keys of b inside p; drops the ones the cache lacks. */
static int visit(struct silod *d, struct cache_index *ix, struct bucket *b,
		 const struct prefix *p, int *deleted)
{
	__u32 i = 0;
	int fd;

	/* A node silod has not added yet (or a record of no cache). */
	if (b->node >= d->maps.nr_nodes)
		return 0;
	fd = d->maps.node_fd[b->node];
	while (i < b->n) {
		const struct silo_route_key *k = &b->keys[i];

		if (!in_prefix(p, k->family, b->source ? k->src : k->dst)) {
			i++;
			continue;
		}
		if (!bpf_map_delete_elem(fd, k))
			++*deleted;
		else if (errno != ENOENT)
			return -errno;
		b->keys[i] = b->keys[--b->n];
		ix->nkeys--;
	}
	return 0;
}

/* The bucket tag of v, the first bits bits of an address. */
static void tag_set(__u8 *tag, __u64 v, unsigned int bits)
{
	unsigned int i;

	memset(tag, 0, 8);
	for (i = 0; i < bits / 8; i++)
		tag[i] = v >> (bits - 8 * (i + 1));
}

static __u64 tag_get(const __u8 *tag, unsigned int bits)
{
	__u64 v = 0;
	unsigned int i;

	for (i = 0; i < bits / 8; i++)
		v = v << 8 | tag[i];
	return v;
}

static int sweep_prefix(struct silod *d, struct cache_index *ix,
			const struct prefix *p, int *deleted)
{
	unsigned int bits = tag_len(p->family) * 8, span, node, src;
	__u8 tag[8] = {}, a[16] = {};
	struct bucket *b;
	__u64 base, i;
	size_t j;
	int err;

	span = p->len >= bits ? 0 : bits - p->len;
	if (span < 32 && (1ULL << span) * d->maps.nr_nodes * 2 <= ix->cap) {
		/* Fewer buckets to look up than to walk. */
		memcpy(tag, p->addr, bits / 8);
		base = tag_get(tag, bits) & ~((1ULL << span) - 1);
		for (i = 0; i < 1ULL << span; i++) {
			tag_set(tag, base + i, bits);
			for (node = 0; node < d->maps.nr_nodes; node++)
				for (src = 0; src < 2; src++) {
					b = find(ix, node, p->family, src, tag);
					err = b ? visit(d, ix, b, p, deleted) :
						  0;
					if (err)
						return err;
				}
		}
		return 0;
	}
	for (j = 0; j < ix->cap; j++) {
		b = &ix->tab[j];
		if (!b->used || b->family != p->family)
			continue;
		memcpy(a, b->tag, 8);
		/* The bucket's addresses share bits bits: one test. */
		if (p->len <= bits && !in_prefix(p, b->family, a))
			continue;
		err = visit(d, ix, b, p, deleted);
		if (err)
			return err;
	}
	return 0;
}

int index_sweep(struct silod *d, const struct sweep_work *w)
{
	struct cache_index *ix = d->index;
	int err, deleted = 0;
	size_t i;

	pthread_mutex_lock(&ix->lock);
	/* Every key whose fill was counted before now is in the index. */
	err = drain(d, ix);
	for (i = 0; i < w->nr_prefixes && !err; i++)
		err = sweep_prefix(d, ix, &w->prefixes[i], &deleted);
	pthread_mutex_unlock(&ix->lock);
	return err ? err : deleted;
}
