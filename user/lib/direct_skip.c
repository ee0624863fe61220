// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * direct_skip (include/silo/abi/route.h): the prefixes whose packets take
 * the rules' walk, written from a walk of the routes and the rules
 * (silo_sync_genid). The routes of a table that rules look every packet up
 * in may be many: they go in as a cover, at most SILO_DIRECT_COVER
 * prefixes a family that hold every one of them. A prefix that holds more
 * than the table's routes only sends more packets through the rules' walk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "maps.h"
#include "nl.h"
#include "util.h"

static unsigned int plen(const struct silo_direct_key *k)
{
	return k->prefixlen - 8;
}

/* Does prefix a hold prefix b (of one kind)? */
static bool holds(const struct silo_direct_key *a,
		  const struct silo_direct_key *b)
{
	unsigned int len = plen(a), bytes = len / 8, bits = len % 8;

	if (len > plen(b) || memcmp(a->addr, b->addr, bytes))
		return false;
	return !bits || !((a->addr[bytes] ^ b->addr[bytes]) & (0xFF00 >> bits));
}

/* Are a and b the two halves of one prefix? */
static bool halves(const struct silo_direct_key *a,
		   const struct silo_direct_key *b)
{
	struct silo_direct_key up = *a;

	if (!plen(a) || plen(a) != plen(b))
		return false;
	up.prefixlen--;
	return holds(&up, b);
}

static void shorten(struct silo_direct_key *k, unsigned int len)
{
	k->prefixlen = 8 + len;
	silo_prefix_clear(k->addr, 128, len);
}

/*
 * in (n prefixes of one kind, sorted by address, then length) cut to at
 * most level bits, into out: none held by another, two halves made one,
 * sorted. Each is held by one of out. Returns how many.
 */
static size_t cover_at(const struct silo_direct_key *in, size_t n,
		       unsigned int level, struct silo_direct_key *out)
{
	struct silo_direct_key e;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		e = in[i];
		if (plen(&e) > level)
			shorten(&e, level);
		if (k && holds(&out[k - 1], &e))
			continue;
		/* Cut short, it may hold those before it (in order). */
		while (k && holds(&e, &out[k - 1]))
			k--;
		out[k++] = e;
		while (k >= 2 && halves(&out[k - 2], &out[k - 1])) {
			k--;
			shorten(&out[k - 1], plen(&out[k - 1]) - 1);
		}
	}
	return k;
}

static int by_prefix(const void *pa, const void *pb)
{
	const struct silo_direct_key *a = pa, *b = pb;
	int c = memcmp(a->addr, b->addr, sizeof(a->addr));

	if (c)
		return c;
	return (int)a->prefixlen - (int)b->prefixlen;
}

/* The cover of in's prefixes of kind, into r's direct. */
static int cover_kind(struct silo_nl_routes *r, struct silo_direct_key *in,
		      __u8 kind)
{
	struct silo_direct_key *out;
	unsigned int level = 0, lo = 0, mid;
	size_t i, n = 0, k;

	for (i = 0; i < r->nr_cover; i++)
		if (r->cover[i].kind == kind) {
			in[n] = r->cover[i];
			silo_prefix_clear(in[n].addr, 128, plen(&in[n]));
			if (plen(&in[n]) > level)
				level = plen(&in[n]);
			n++;
		}
	if (!n)
		return 0;
	out = malloc(n * sizeof(*out));
	if (!out)
		return -ENOMEM;
	qsort(in, n, sizeof(*in), by_prefix);
	/* The longest cut that fits, by halves (one level shorter is never
	 * more; at level 0 there is one): a pass reads every route. The
	 * longest is made once where it fits, as it mostly does. */
	k = cover_at(in, n, level, out);
	if (k > SILO_DIRECT_COVER) {
		while (level - lo > 1) {
			mid = lo + (level - lo) / 2;
			if (cover_at(in, n, mid, out) > SILO_DIRECT_COVER)
				level = mid;
			else
				lo = mid;
		}
		k = cover_at(in, n, lo, out);
	}
	for (i = 0; i < k; i++)
		silo_nl_direct_add(r, kind, out[i].addr, plen(&out[i]));
	free(out);
	return 0;
}

int silo_direct_cover(struct silo_nl_routes *r)
{
	struct silo_direct_key *in;
	int err;

	if (!r->nr_cover)
		return 0;
	in = malloc(r->nr_cover * sizeof(*in));
	if (!in)
		return -ENOMEM;
	err = cover_kind(r, in, SILO_DIRECT_DST_V4);
	if (!err)
		err = cover_kind(r, in, SILO_DIRECT_DST_V6);
	free(in);
	return err;
}

int silo_direct_skip_write(int fd, struct silo_nl_routes *r)
{
	size_t i;

	/* The bits past the prefix cleared (prefixlen counts the kind's
	 * 8): one key per prefix. */
	for (i = 0; i < r->nr_direct; i++)
		silo_prefix_clear(r->direct[i].addr, 128,
				  r->direct[i].prefixlen - 8);
	return silo_map_write_set(fd, r->direct, &r->nr_direct,
				  sizeof(*r->direct));
}
