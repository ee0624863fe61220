// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * One walk of the IPv4 and IPv6 routes of every table (silo_sync_genid):
 * the unlocked route MTUs (route_mtus), the prefixes whose sources the
 * source check may refuse (src_checked), the local table's routes and
 * those of the tables rules look every packet up in (direct_skip), and
 * which cache key fields the routes make matter (multipath, IPv6 "from").
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include "../nl.h"
#include "../util.h"

/* What one walk of the routes collects. */
struct route_walk {
	struct silo_nl_routes *r;
	const struct silo_nl_tables *tables; /* whose routes go to cover */
	__u32 nh_ids; /* families with a route through a nexthop object */
	__u32 mtu, lock, table; /* of the route being read */
	const void *dst; /* RTA_DST, NULL: the default route */
	bool mpath, nh_id;
};

static int metrics_cb(const struct nlattr *attr, void *data)
{
	struct route_walk *w = data;

	if (mnl_attr_get_payload_len(attr) < sizeof(__u32))
		return MNL_CB_OK;
	if (mnl_attr_get_type(attr) == RTAX_MTU)
		w->mtu = mnl_attr_get_u32(attr);
	else if (mnl_attr_get_type(attr) == RTAX_LOCK)
		w->lock = mnl_attr_get_u32(attr);
	return MNL_CB_OK;
}

static int route_attr_cb(const struct nlattr *attr, void *data)
{
	struct route_walk *w = data;

	switch (mnl_attr_get_type(attr)) {
	case RTA_METRICS:
		mnl_attr_parse_nested(attr, metrics_cb, data);
		break;
	case RTA_MULTIPATH:
		w->mpath = true;
		break;
	case RTA_NH_ID:
		w->nh_id = true;
		break;
	case RTA_DST:
		if (mnl_attr_get_payload_len(attr) >= 4)
			w->dst = mnl_attr_get_payload(attr);
		break;
	case RTA_TABLE: /* past 255, rtm_table says RT_TABLE_COMPAT */
		if (mnl_attr_get_payload_len(attr) >= sizeof(__u32))
			w->table = mnl_attr_get_u32(attr);
		break;
	}
	return MNL_CB_OK;
}

/*
 * arr (n elements of size, at most max) with room for one more: the same
 * or a larger copy (doubling), or NULL with *lost set, past max or out of
 * memory; arr stays the caller's to free either way.
 */
static void *grow(void *arr, size_t n, size_t size, size_t max, bool *lost)
{
	void *m = arr;

	if (*lost || n == max) {
		*lost = true;
		return NULL;
	}
	if (!(n & (n + 1)) || !arr) {
		m = realloc(arr, 2 * (n + 1) * size);
		if (!m)
			*lost = true;
	}
	return m;
}

/* An unlocked route MTU's prefix, for route_mtus (not an exception's). */
static void keep_mtu(struct route_walk *w, const struct rtmsg *rtm)
{
	struct silo_nl_routes *r = w->r;
	struct silo_nl_route_mtu *m;
	size_t alen = rtm->rtm_family == AF_INET ? 4 : 16;

	if (rtm->rtm_flags & RTM_F_CLONED)
		return;
	m = grow(r->mtus, r->nr_mtus, sizeof(*m), SILO_ROUTE_MTUS_MAX,
		 &r->mtus_lost);
	if (!m)
		return;
	r->mtus = m;
	m = &r->mtus[r->nr_mtus++];
	memset(m, 0, sizeof(*m));
	m->family = rtm->rtm_family;
	m->len = rtm->rtm_dst_len;
	m->mtu = w->mtu;
	if (w->dst && rtm->rtm_dst_len)
		memcpy(m->addr, w->dst, alen);
}

void silo_nl_srcs_add(struct silo_nl_routes *r, const struct silo_src_key *k)
{
	struct silo_src_key *m;

	m = grow(r->srcs, r->nr_srcs, sizeof(*m), SILO_SRC_CHECKED_MAX,
		 &r->srcs_lost);
	if (!m)
		return;
	r->srcs = m;
	r->srcs[r->nr_srcs++] = *k;
}

/* A prefix of kind added to keys (*n of them, at most max). */
static void direct_key_add(struct silo_direct_key **keys, size_t *n, size_t max,
			   bool *lost, __u8 kind, const void *addr, __u8 len)
{
	size_t alen = kind == SILO_DIRECT_SRC_V4 || kind == SILO_DIRECT_DST_V4 ?
			      4 :
			      16;
	struct silo_direct_key *m;

	m = grow(*keys, *n, sizeof(*m), max, lost);
	if (!m)
		return;
	*keys = m;
	m = &m[(*n)++];
	memset(m, 0, sizeof(*m));
	m->prefixlen = 8 + (len > alen * 8 ? alen * 8 : len);
	m->kind = kind;
	if (addr && len)
		memcpy(m->addr, addr, alen);
}

void silo_nl_direct_add(struct silo_nl_routes *r, __u8 kind, const void *addr,
			__u8 len)
{
	direct_key_add(&r->direct, &r->nr_direct, SILO_DIRECT_MAX,
		       &r->direct_lost, kind, addr, len);
}

void silo_nl_cover_add(struct silo_nl_routes *r, __u8 kind, const void *addr,
		       __u8 len)
{
	direct_key_add(&r->cover, &r->nr_cover, SILO_NL_COVER_MAX,
		       &r->direct_lost, kind, addr, len);
}

void silo_nl_routes_free(struct silo_nl_routes *r)
{
	free(r->mtus);
	free(r->srcs);
	free(r->direct);
	free(r->cover);
	r->mtus = NULL;
	r->srcs = NULL;
	r->direct = NULL;
	r->cover = NULL;
}

/*
 * An IPv4 route whose type makes the source check refuse the sources it
 * holds (fib_validate_source(): a route back that is neither unicast nor
 * an error; throw goes on to another rule's table, whose routes are
 * walked too): its prefix, for src_checked.
 */
bool silo_nl_route_refuses_srcs(unsigned char rtm_type)
{
	switch (rtm_type) {
	case RTN_UNICAST:
	case RTN_THROW:
	case RTN_BLACKHOLE:
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
		return false;
	}
	return true;
}

static void keep_src(struct route_walk *w, const struct rtmsg *rtm)
{
	struct silo_src_key k = { .prefixlen = rtm->rtm_dst_len };

	if (!silo_nl_route_refuses_srcs(rtm->rtm_type))
		return;
	if (w->dst && rtm->rtm_dst_len)
		memcpy(k.addr, w->dst, sizeof(k.addr));
	silo_nl_srcs_add(w->r, &k);
}

bool silo_nl_tables_has(const struct silo_nl_tables *tables, int f, __u32 table)
{
	unsigned int i;

	for (i = 0; tables && i < tables->nr[f]; i++)
		if (tables->id[f][i] == table)
			return true;
	return false;
}

/* The local table, which the kernel's rules look in first, and the
 * tables rules before main's look every packet up in (cover). */
static void keep_direct(struct route_walk *w, const struct rtmsg *rtm)
{
	int f = rtm->rtm_family == AF_INET ? SILO_FAM_V4 : SILO_FAM_V6;
	__u8 kind = f == SILO_FAM_V4 ? SILO_DIRECT_DST_V4 : SILO_DIRECT_DST_V6;
	struct silo_nl_routes *r = w->r;

	if (w->table == RT_TABLE_LOCAL)
		silo_nl_direct_add(r, kind, w->dst, rtm->rtm_dst_len);
	else if (silo_nl_tables_has(w->tables, f, w->table))
		silo_nl_cover_add(r, kind, w->dst, rtm->rtm_dst_len);
}

/* A locked MTU bpf_fib_lookup applies itself: only the others count. */
static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
	struct route_walk *w = data;
	__u32 *min, mpath;
	bool unlocked;

	if (nlh->nlmsg_type != RTM_NEWROUTE)
		return MNL_CB_OK;
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return MNL_CB_OK;
	w->mtu = w->lock = 0;
	w->table = rtm->rtm_table;
	w->dst = NULL;
	w->mpath = w->nh_id = false;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr_cb, w);
	min = &w->r->mtu_min[rtm->rtm_family == AF_INET ? SILO_FAM_V4 :
							  SILO_FAM_V6];
	unlocked = w->mtu && !(w->lock & (1U << RTAX_MTU));
	if (unlocked && (!*min || w->mtu < *min))
		*min = w->mtu;
	if (unlocked)
		keep_mtu(w, rtm);
	if (rtm->rtm_family == AF_INET)
		keep_src(w, rtm);
	if (!(rtm->rtm_flags & RTM_F_CLONED))
		keep_direct(w, rtm);
	mpath = rtm->rtm_family == AF_INET ? SILO_GENID_MPATH_V4 :
					     SILO_GENID_MPATH_V6;
	if (w->mpath)
		w->r->flags |= mpath;
	if (w->nh_id)
		w->nh_ids |= mpath;
	/* Source-specific routing ("from"): IPv6 only. */
	if (rtm->rtm_family == AF_INET6 && rtm->rtm_src_len)
		w->r->flags |= SILO_GENID_SRC_ROUTES_V6;
	return MNL_CB_OK;
}

int silo_nl_routes_scan(struct silo_nl_routes *r,
			const struct silo_nl_tables *tables)
{
	static const int families[] = { AF_INET, AF_INET6 };
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct route_walk w = { .r = r, .tables = tables };
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	unsigned int i;
	int err;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < ARRAY_SIZE(families); i++) {
		nlh = mnl_nlmsg_put_header(buf);
		nlh->nlmsg_type = RTM_GETROUTE;
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
		rtm->rtm_family = families[i];
		err = silo_nl_request(NETLINK_ROUTE, nlh, route_cb, &w);
		if (err)
			return err;
	}
	/* A route through a nexthop object is multipath when the object is
	 * a group; any group at all will do (few, and conservative). */
	if (w.nh_ids & ~r->flags) {
		err = silo_nl_nexthop_groups();
		if (err < 0)
			return err;
		if (err)
			r->flags |= w.nh_ids;
	}
	return 0;
}
