// SPDX-License-Identifier: GPL-2.0
/*
 * Neighbour confirmation: keep the neighbours silo forwards to alive, the
 * way the stack would.
 *
 * A packet the stack forwards goes through the neighbour's output, which
 * marks the neighbour used (neigh_event_send()): a STALE entry goes to
 * DELAY and is probed, so a gateway replaced by another host with the same
 * address is found within seconds. Packets XDP forwards never do: the
 * gateway's entry goes STALE and stays STALE, bpf_fib_lookup() keeps
 * answering with its MAC (STALE is a valid state), and the traffic goes to
 * a MAC no one has any more, for ever.
 *
 * So once a period silod sends RTM_NEWNEIGH with NTF_USE for every distinct
 * (egress device, family, nexthop) of the valid entries in the route
 * caches. The kernel's neigh_add() then calls neigh_event_send() and
 * changes nothing else: the same as one packet through the stack.
 *
 * Trade-off: an XDP cache hit records nothing, so silod cannot tell a used
 * entry from an idle one. It confirms every entry that exists; an idle one
 * keeps its neighbour probed until the LRU drops it or a change sweeps it.
 * The stack marks a neighbour used on every packet, so this errs only on
 * the side of probing a neighbour a little longer than needed.
 *
 * NTF_USE comes with the administrative update flag: the kernel would also
 * drop a PERMANENT state (a static entry becomes INCOMPLETE) and clear the
 * externally learned and managed flags it is not given. Each neighbour is
 * read first and only ordinary dynamic entries, the ones the kernel
 * resolves itself, are confirmed.
 *
 * The scan reads every cache entry once a period. Its cost grows with the
 * size of the caches (about a quarter of a second of CPU for a million
 * entries), so it runs in a thread of its own, never holding up the event
 * loop, in slices of NEIGH_SLICE entries paced to spend at most a
 * twentieth of a core: a pass takes a second up to some 200,000 entries,
 * and longer in proportion beyond (about 5 seconds at a million).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include "silod.h"

#define NEIGH_CONFIRM_NS 1000000000ULL /* least time between passes */
#define NEIGH_SLICE 4096 /* entries read at a time */
#define NEIGH_PACE 19 /* idle this many times a slice's time after it */

struct nkey {
	__u32 ifindex;
	__u8 family; /* SILO_AF_* */
	__u8 pad[3];
	__u8 addr[16];
};

/* Distinct neighbours of one scan: open addressing, grown at half full. */
struct nset {
	struct nkey *slots;
	size_t cap, n;
};

static struct {
	struct mnl_socket *nl;
	unsigned int portid, seq;
	__u64 next_ns;
	bool failed; /* said once that the socket cannot be opened */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, stop;
} nc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t nkey_hash(const struct nkey *k)
{
	const __u8 *p = (const __u8 *)k;
	size_t h = 14695981039346656037ULL, i;

	for (i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

/* An empty slot has ifindex 0: no device has it. */
static void nset_put(struct nkey *slots, size_t cap, const struct nkey *k,
		     size_t *n)
{
	size_t i = nkey_hash(k) & (cap - 1);

	while (slots[i].ifindex) {
		if (!memcmp(&slots[i], k, sizeof(*k)))
			return;
		i = (i + 1) & (cap - 1);
	}
	slots[i] = *k;
	++*n;
}

static int nset_add(struct nset *s, const struct nkey *k)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64, i, n = 0;
		struct nkey *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < s->cap; i++)
			if (s->slots[i].ifindex)
				nset_put(slots, cap, &s->slots[i], &n);
		free(s->slots);
		s->slots = slots;
		s->cap = cap;
	}
	nset_put(s->slots, s->cap, k, &s->n);
	return 0;
}

struct scan_ctx {
	__u64 genid;
	struct nset *set;
};

/* Collects the nexthop of an entry the data path would use. */
static int scan_one(int fd, const struct silo_route_key *key,
		    const struct silo_route_entry *e, void *ctx)
{
	struct scan_ctx *c = ctx;
	struct nkey k = { .ifindex = e->ifindex, .family = e->family };

	(void)fd;
	/* Stale, being rewritten, or another key's. */
	if (e->genid != c->genid || !e->ifindex ||
	    (e->family != SILO_AF_INET && e->family != SILO_AF_INET6) ||
	    memcmp(&e->key, key, sizeof(e->key)))
		return 0;
	memcpy(k.addr, e->nexthop, e->family == SILO_AF_INET ? 4 : 16);
	return nset_add(c->set, &k);
}

/* Sleeps ns unless told to stop: false when told. */
static bool idle(__u64 ns)
{
	struct timespec ts;
	__u64 t;
	bool stop;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = ts.tv_sec * 1000000000ULL + ts.tv_nsec + ns;
	ts.tv_sec = t / 1000000000ULL;
	ts.tv_nsec = t % 1000000000ULL;
	pthread_mutex_lock(&nc.lock);
	while (!nc.stop &&
	       pthread_cond_timedwait(&nc.cond, &nc.lock, &ts) != ETIMEDOUT)
		;
	stop = nc.stop;
	pthread_mutex_unlock(&nc.lock);
	return !stop;
}

/* A pass over the caches, in paced slices. */
static int scan(struct silod *d, struct nset *s)
{
	struct scan_ctx c = { .set = s };
	struct cache_cursor cur = {};
	struct silo_genid g;
	__u32 zero = 0;
	__u64 t0, dt;
	int err;

	do {
		if (bpf_map_lookup_elem(d->maps.fd[SILO_MAP_GENID], &zero, &g))
			return -errno;
		c.genid = g.genid;
		t0 = now_ns();
		err = cache_walk_slice(d, &cur, NEIGH_SLICE, scan_one, &c);
		dt = now_ns() - t0;
		if (!err && !idle(dt * NEIGH_PACE < NEIGH_CONFIRM_NS ?
					  dt * NEIGH_PACE :
					  NEIGH_CONFIRM_NS))
			return -ECANCELED;
	} while (!err);
	return err < 0 ? err : 0;
}

static int nl_open(void)
{
	struct timeval tv = { .tv_sec = 1 };

	nc.nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nc.nl)
		return -errno;
	/* The kernel answers at once; never let the event loop hang. */
	if (setsockopt(mnl_socket_get_fd(nc.nl), SOL_SOCKET, SO_RCVTIMEO, &tv,
		       sizeof(tv)) ||
	    mnl_socket_bind(nc.nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = -errno;

		mnl_socket_close(nc.nl);
		nc.nl = NULL;
		return err;
	}
	nc.portid = mnl_socket_get_portid(nc.nl);
	return 0;
}

/* One request, its answers to cb, until the ack: 0 or -errno. */
static int nl_call(struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int ret;

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++nc.seq;
	if (mnl_socket_sendto(nc.nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		ret = mnl_socket_recvfrom(nc.nl, buf, sizeof(buf));
		if (ret < 0)
			return -errno;
		ret = mnl_cb_run(buf, ret, nc.seq, nc.portid, cb, data);
		/* The late answer of an earlier, timed out request. */
		if (ret < 0 && errno == ESRCH)
			ret = 1;
	} while (ret > 0);
	return ret < 0 ? -errno : 0;
}

struct nstate {
	__u8 state;
	__u8 flags;
	__u32 flags_ext;
};

static int get_cb(const struct nlmsghdr *nlh, void *data)
{
	struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
	struct nstate *st = data;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWNEIGH)
		return MNL_CB_OK;
	st->state = ndm->ndm_state;
	st->flags = ndm->ndm_flags;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm))
	{
		if (mnl_attr_get_type(attr) == NDA_FLAGS_EXT &&
		    mnl_attr_get_payload_len(attr) >= sizeof(__u32))
			st->flags_ext = mnl_attr_get_u32(attr);
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *neigh_msg(char *buf, __u16 type, const struct nkey *k,
				  __u8 flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = k->family == SILO_AF_INET ? AF_INET : AF_INET6;
	ndm->ndm_ifindex = k->ifindex;
	ndm->ndm_flags = flags;
	mnl_attr_put(nlh, NDA_DST, k->family == SILO_AF_INET ? 4 : 16, k->addr);
	return nlh;
}

/* 1: confirmed; 0: not one to confirm (or gone); or -errno. */
static int confirm(const struct nkey *k)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nstate st = {};
	int err;

	err = nl_call(neigh_msg(buf, RTM_GETNEIGH, k, 0), get_cb, &st);
	if (err == -ENOENT)
		return 0; /* gone: its deletion sweeps the entries */
	if (err)
		return err;
	if ((st.state & (NUD_PERMANENT | NUD_NOARP)) ||
	    (st.flags & NTF_EXT_LEARNED) || st.flags_ext)
		return 0;
	/* No NLM_F_CREATE: a neighbour gone meanwhile stays gone. */
	err = nl_call(neigh_msg(buf, RTM_NEWNEIGH, k, NTF_USE), NULL, NULL);
	if (err == -ENOENT)
		return 0;
	return err ? err : 1;
}

static void confirm_pass(struct silod *d)
{
	struct nset s = {};
	int err, done = 0;
	size_t i;

	if (!nc.nl) {
		err = nl_open();
		if (err) {
			if (!nc.failed)
				pr_err("cannot open a netlink socket to confirm neighbours: %s\n",
				       strerror(-err));
			nc.failed = true;
			return;
		}
	}
	err = scan(d, &s);
	if (err == -ECANCELED) /* silod is stopping */
		goto out_free;
	if (err) {
		pr_warn("cannot read the route cache to confirm neighbours: %s\n",
			strerror(-err));
		goto out_free;
	}
	for (i = 0; i < s.cap; i++) {
		if (!s.slots[i].ifindex)
			continue;
		err = confirm(&s.slots[i]);
		if (err > 0)
			done++;
		else if (err < 0)
			pr_debug(
				"cannot confirm a neighbour on ifindex %u: %s\n",
				s.slots[i].ifindex, strerror(-err));
	}
	if (done)
		DSTAT_ADD(d, neigh_use, done);
out_free:
	free(s.slots);
}

static void *confirm_main(void *arg)
{
	struct silod *d = arg;
	__u64 now;

	for (;;) {
		now = now_ns();
		if (now < nc.next_ns && !idle(nc.next_ns - now))
			break;
		nc.next_ns = now_ns() + NEIGH_CONFIRM_NS;
		confirm_pass(d);
		pthread_mutex_lock(&nc.lock);
		if (nc.stop) {
			pthread_mutex_unlock(&nc.lock);
			break;
		}
		pthread_mutex_unlock(&nc.lock);
	}
	return NULL;
}

/* Starts the confirming thread on the first call. */
void neigh_confirm(struct silod *d)
{
	int err;

	pthread_condattr_t attr;

	if (nc.started)
		return;
	/* idle() counts in CLOCK_MONOTONIC */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&nc.cond, &attr);
	pthread_condattr_destroy(&attr);
	err = pthread_create(&nc.thread, NULL, confirm_main, d);
	if (err) {
		pthread_cond_destroy(&nc.cond);
		if (!nc.failed)
			pr_err("cannot start the neighbour confirmation: %s\n",
			       strerror(err));
		nc.failed = true;
		return;
	}
	nc.started = true;
}

void neigh_confirm_stop(void)
{
	if (nc.started) {
		pthread_mutex_lock(&nc.lock);
		nc.stop = true;
		pthread_cond_signal(&nc.cond);
		pthread_mutex_unlock(&nc.lock);
		pthread_join(nc.thread, NULL);
		pthread_cond_destroy(&nc.cond);
		nc.started = false;
	}
	if (nc.nl)
		mnl_socket_close(nc.nl);
	nc.nl = NULL;
}
