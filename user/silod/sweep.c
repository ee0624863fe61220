// SPDX-License-Identifier: GPL-2.0
/*
 * Scoped invalidation: remove exactly the cache entries a route or neighbour
 * change touched, and nothing else.
 *
 * Why it is exact. The data path stores an entry after bpf_fib_lookup; an
 * entry is wrong after a change at time T only if its lookup ran before T.
 * silod hears of the change at T' > T, then:
 *
 *   1. reads the sum of the data path's cache fills (inserts and in-place
 *      refreshes, per-CPU counters bumped after each fill): F0;
 *   2. sweeps: deletes every entry the change touches (a route change:
 *      the entries its prefix holds, found through the index of the caches
 *      by address, index.c, which first takes in the data path's fill log;
 *      a neighbour change: a walk of the caches);
 *   3. waits for an RCU grace period that starts after the sweep started
 *      (an update of the route_cache array of maps waits for one: the kernel
 *      calls synchronize_rcu() so no program still sees the old inner map);
 *   4. reads the fill count again: F1; if F1 != F0, sweeps again.
 *
 * A program that looked the route up before T started before T' (XDP runs
 * inside an RCU read-side section, from before its lookup until after its
 * store). If its store came before the first sweep reached the entry, the
 * first sweep deletes it. If it came later, the program was still running
 * when the first sweep started, so the grace period waits for it to finish;
 * it counted its fill before finishing, so F1 > F0 and the second sweep
 * deletes the entry. Through the index, "reached" means "found in the log
 * the sweep drained first": an insert logs its key after its store and
 * before it counts the fill, so a store whose record missed the first
 * drain is one whose program still ran when the first sweep started, and
 * its record is in the log before F1 is read, so the second drain has it.
 * (A refresh in place logs nothing: its key is in the index already, see
 * index.c.) Every program that starts after the grace period began
 * looks up after T and stores the new answer. When F1 == F0 no program
 * stored anything in between and the second sweep has nothing to find.
 *
 * The grace period takes milliseconds, so steps 3 and 4 run in their own
 * thread ("regrace"), which folds the work of several first sweeps into one
 * grace period; the event loop goes on meanwhile. Entries are deleted, not
 * stamped: a missing entry is a miss, which resolves the new answer.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include "silod.h"

void work_reset(struct sweep_work *w)
{
	w->nr_prefixes = 0;
	w->nr_neighs = 0;
}

void work_free(struct sweep_work *w)
{
	free(w->prefixes);
	free(w->neighs);
	memset(w, 0, sizeof(*w));
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

int work_add_prefix(struct sweep_work *w, const struct prefix *p)
{
	size_t i;

	for (i = 0; i < w->nr_prefixes; i++)
		if (!memcmp(&w->prefixes[i], p, sizeof(*p)))
			return 0;
	if (grow((void **)&w->prefixes, &w->cap_prefixes, w->nr_prefixes,
		 sizeof(*p)))
		return -ENOMEM;
	w->prefixes[w->nr_prefixes++] = *p;
	return 0;
}

int work_add_neigh(struct sweep_work *w, const struct neigh *n)
{
	size_t i;

	/* The latest state of a neighbour is the one that counts. */
	for (i = 0; i < w->nr_neighs; i++) {
		struct neigh *o = &w->neighs[i];

		if (o->ifindex == n->ifindex && o->family == n->family &&
		    !memcmp(o->addr, n->addr, 16)) {
			*o = *n;
			return 0;
		}
	}
	if (grow((void **)&w->neighs, &w->cap_neighs, w->nr_neighs, sizeof(*n)))
		return -ENOMEM;
	w->neighs[w->nr_neighs++] = *n;
	return 0;
}

int work_merge(struct sweep_work *dst, const struct sweep_work *src)
{
	size_t i;
	int err = 0;

	for (i = 0; i < src->nr_prefixes && !err; i++)
		err = work_add_prefix(dst, &src->prefixes[i]);
	for (i = 0; i < src->nr_neighs && !err; i++)
		err = work_add_neigh(dst, &src->neighs[i]);
	return err;
}

/*
 * A route entry is touched by a change of the neighbour it sends to that
 * leaves it unusable or with another MAC. (Route changes: index_sweep().)
 */
static bool neigh_touched(const struct sweep_work *w,
			  const struct silo_route_key *k,
			  const struct silo_route_entry *e)
{
	size_t i;

	if (k->format & SILO_KEY_SOURCE)
		return false;
	for (i = 0; i < w->nr_neighs; i++) {
		const struct neigh *n = &w->neighs[i];

		if (n->ifindex == e->ifindex && n->family == e->family &&
		    !memcmp(n->addr, e->nexthop, 16) &&
		    (!n->usable || memcmp(n->lladdr, e->dmac, 6)))
			return true;
	}
	return false;
}

struct sweep_ctx {
	const struct sweep_work *w;
	int deleted;
};

static int sweep_one(int fd, const struct silo_route_key *k,
		     const struct silo_route_entry *e, void *ctx)
{
	struct sweep_ctx *c = ctx;

	/* Gone already (evicted, or a concurrent sweep): fine. */
	if (neigh_touched(c->w, k, e) && !bpf_map_delete_elem(fd, k))
		c->deleted++;
	return 0;
}

/*
 * Route changes through the index: what their prefixes hold. Neighbour
 * changes select by nexthop, which the index does not know: a walk.
 */
int sweep(struct silod *d, const struct sweep_work *w)
{
	struct sweep_ctx c = { .w = w };
	int err = 0;

	if (w->nr_prefixes) {
		err = index_sweep(d, w);
		if (err > 0)
			c.deleted = err;
		err = err < 0 ? err : 0;
	}
	if (!err && w->nr_neighs)
		err = cache_for_each(d, sweep_one, &c);
	/* After the deletes, whatever they found: a copy in route_hot may
	 * outlive an entry the LRU evicted before the change. */
	if (!err)
		err = genid_sweeps(d);
	if (err) {
		pr_err("sweeping the route cache failed: %s\n", strerror(-err));
		return err;
	}
	DSTAT_ADD(d, invalidated, c.deleted);
	return c.deleted;
}

/* n bumps written as one: the same to the data path, one syscall. */
int genid_bump_by(struct silod *d, unsigned int n)
{
	int err;

	pthread_mutex_lock(&d->genid_lock);
	err = silo_genid_bump_fd(d->maps.fd[SILO_MAP_GENID], n);
	pthread_mutex_unlock(&d->genid_lock);
	if (err) {
		pr_err("cannot bump genid: %s\n", strerror(-err));
		return err;
	}
	DSTAT_ADD(d, genid_bumps, n);
	return 0;
}

/* Every sweep ends with one (sweep()): both threads sweep. */
int genid_sweeps(struct silod *d)
{
	int err;

	pthread_mutex_lock(&d->genid_lock);
	err = silo_genid_sweeps_fd(d->maps.fd[SILO_MAP_GENID]);
	pthread_mutex_unlock(&d->genid_lock);
	if (err)
		pr_err("cannot move genid's sweeps forward: %s\n",
		       strerror(-err));
	return err;
}

int genid_bump(struct silod *d)
{
	return genid_bump_by(d, 1);
}

/*
 * Tests only: with SILOD_TEST_HOOK_FD set, silod writes a byte to that fd
 * after each first sweep and waits for one back, so a test can store an
 * entry resolved before the change exactly in the window the second sweep
 * exists for.
 */
static void test_hook(void)
{
	static int fd = -2;
	struct pollfd pfd;
	char c = 'S';

	if (fd == -2) {
		const char *env = getenv("SILOD_TEST_HOOK_FD");

		fd = env ? atoi(env) : -1;
	}
	if (fd < 0)
		return;
	pfd.fd = fd;
	pfd.events = POLLIN;
	/* Never hang for a test that went away (nor die of SIGPIPE). */
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1 || poll(&pfd, 1, 5000) != 1 ||
	    read(fd, &c, 1) != 1)
		fd = -1;
}

/* Steps 1-2 here; 3-4 queued for the regrace thread. */
int invalidate(struct silod *d, const struct sweep_work *w)
{
	__u64 fills = cache_fills(d);
	int err;

	err = sweep(d, w);
	if (err < 0)
		return err;
	DSTAT_ADD(d, sweeps, 1);
	test_hook();
	if (d->cfg.no_second_sweep)
		return 0;
	pthread_mutex_lock(&d->lock);
	err = work_merge(&d->regrace_work, w);
	if (!d->regrace_pending || fills < d->regrace_fills)
		d->regrace_fills = fills;
	d->regrace_pending = true;
	d->state.pending++;
	pthread_cond_signal(&d->regrace_cond);
	pthread_mutex_unlock(&d->lock);
	return err;
}

/* A grace period: the kernel waits for one on every array-of-maps update. */
static int grace_period(struct silod *d)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(d->maps.fd[SILO_MAP_ROUTE_CACHE], &zero,
				&d->maps.node_fd[0], BPF_ANY))
		return -errno;
	return 0;
}

static void *regrace_main(void *arg)
{
	struct silod *d = arg;
	struct sweep_work w = {};
	__u64 fills, now;
	__u32 taken;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->regrace_pending && !d->stopping)
			pthread_cond_wait(&d->regrace_cond, &d->lock);
		if (d->stopping && !d->regrace_pending)
			break;
		/* Take everything queued: one grace period serves it all. */
		work_reset(&w);
		if (work_merge(&w, &d->regrace_work)) {
			/* No second sweep: a bump covers what it would. */
			pr_err("out of memory: bumping genid instead of sweeping again\n");
			work_reset(&d->regrace_work);
			d->regrace_pending = false;
			d->state.pending = 0;
			pthread_mutex_unlock(&d->lock);
			if (genid_bump(d))
				invalidation_lost(d);
			pthread_mutex_lock(&d->lock);
			continue;
		}
		work_reset(&d->regrace_work);
		fills = d->regrace_fills;
		taken = d->state.pending;
		d->regrace_pending = false;
		pthread_mutex_unlock(&d->lock);

		if (grace_period(d)) {
			/* A sweep now could miss a late store: only a bump
			 * is sure to cover it. */
			pr_err("cannot wait for a grace period (%s): bumping genid\n",
			       strerror(errno));
			if (genid_bump(d))
				invalidation_lost(d);
		} else {
			now = cache_fills(d);
			/* ~0: the count could not be read; sweep to be sure. */
			if (now != fills || now == ~0ULL) {
				if (sweep(d, &w) < 0 && genid_bump(d))
					invalidation_lost(d);
				DSTAT_ADD(d, sweeps_again, 1);
			}
		}
		pthread_mutex_lock(&d->lock);
		d->state.pending -= taken;
	}
	pthread_mutex_unlock(&d->lock);
	work_free(&w);
	return NULL;
}

int regrace_start(struct silod *d)
{
	int err;

	pthread_cond_init(&d->regrace_cond, NULL);
	err = pthread_create(&d->regrace, NULL, regrace_main, d);
	return -err;
}

void regrace_stop(struct silod *d)
{
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	pthread_cond_signal(&d->regrace_cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->regrace, NULL);
	pthread_cond_destroy(&d->regrace_cond);
	work_free(&d->regrace_work);
}
