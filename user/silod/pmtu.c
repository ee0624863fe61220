// SPDX-License-Identifier: GPL-2.0
/*
 * The PMTU watch (include/silo/abi/route.h): larger packets are served
 * from the cache only for the families whose every PMTU exception silo
 * knows of. That holds when every device of the namespace but loopback
 * carries silo's XDP program (it marks the destination of each ICMP error
 * for this host before the stack learns from it) and none is a tunnel
 * (which learns exceptions from its own path, with no ICMP), an exception
 * lives no longer than a mark (mtu_expires), and every exception the
 * kernel held before is marked. Also: the errors the program could not
 * read, covered once the stack has learned from them; the next epoch's
 * slot emptied; and mtu6, which a sysctl write changes silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include "silod.h"

/* Long enough for the stack to have learned from an error the program saw:
 * it does within the same softirq, or at the end of its NAPI poll (GRO). */
#define PMTU_GRACE_NS 1000000000ULL
#define PMTU_EPOCH_NS (1ULL << SILO_PMTU_EPOCH_SHIFT)

/* Device kinds that learn no exception of their own: the rest are tunnels
 * (ip_tunnel_xmit, vxlan, geneve, wireguard...) or unknown. */
static const char *const plain_kinds[] = {
	"",	"veth", "macvlan", "macvtap", "ipvlan", "ipvtap", "vlan",
	"bond", "team", "bridge",  "dummy",   "vrf",	"netkit", "ifb",
};

static bool plain_kind(const char *kind)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(plain_kinds); i++)
		if (!strcmp(kind, plain_kinds[i]))
			return true;
	return false;
}

struct dev_scan {
	struct silod *d;
	__u32 *pinned;
	size_t nr_pinned, cap_pinned;
	bool complete;
	bool mtu6_changed;
};

static int pinned_one(struct silo *s, __u32 ifindex, void *ctx)
{
	struct dev_scan *sc = ctx;
	__u32 *n;

	(void)s;
	if (sc->nr_pinned == sc->cap_pinned) {
		sc->cap_pinned = sc->cap_pinned ? 2 * sc->cap_pinned : 16;
		n = realloc(sc->pinned, sc->cap_pinned * sizeof(*n));
		if (!n)
			return -ENOMEM;
		sc->pinned = n;
	}
	sc->pinned[sc->nr_pinned++] = ifindex;
	return 0;
}

static bool is_pinned(const struct dev_scan *sc, __u32 ifindex)
{
	size_t i;

	for (i = 0; i < sc->nr_pinned; i++)
		if (sc->pinned[i] == ifindex)
			return true;
	return false;
}

/* mtu6 changes with no notification (a sysctl write): an entry carries
 * the one it was filled under. A change bumps genid (pmtu_poll). */
static void mtu6_check(struct silod *d, struct dev_scan *sc,
		       const struct silo_nl_dev *dev)
{
	struct silod_pmtu *p = &d->pmtu;
	int mtu6;
	size_t i;

	if (silo_dev_mtu6(dev->name, &mtu6))
		mtu6 = 0; /* no IPv6 on the device */
	for (i = 0; i < p->nr_mtu6; i++)
		if (p->mtu6[i].ifindex == dev->ifindex)
			break;
	if (i == p->nr_mtu6) {
		if (i == ARRAY_SIZE(p->mtu6)) {
			sc->mtu6_changed = true; /* not kept: assume changed */
			return;
		}
		p->nr_mtu6++;
		p->mtu6[i].ifindex = dev->ifindex;
		p->mtu6[i].mtu6 = mtu6;
		return;
	}
	if (p->mtu6[i].mtu6 != mtu6) {
		p->mtu6[i].mtu6 = mtu6;
		sc->mtu6_changed = true;
	}
}

static int dev_one(const struct silo_nl_dev *dev, void *ctx)
{
	struct dev_scan *sc = ctx;

	mtu6_check(sc->d, sc, dev);
	if (dev->flags & IFF_LOOPBACK)
		return 0;
	if (!plain_kind(dev->kind) || !is_pinned(sc, dev->ifindex)) {
		if (sc->complete)
			pr_debug("PMTU watch: %s (%s) has no silo\n", dev->name,
				 dev->kind[0] ? dev->kind : "device");
		sc->complete = false;
	}
	return 0;
}

/* Marks dst in this epoch's slot (never the one being emptied), then
 * says when (the data path looks marks up only after one). */
static int mark_one(const struct silo_addr *dst, void *ctx)
{
	struct silod *d = ctx;
	struct silo_pmtu_mark m = { .seen_ns = coarse_ns() };
	struct silo_pmtu_key k = { .family = dst->family };
	__u32 i = SILO_PMTU_MARKED_SILOD +
		  (dst->family == AF_INET ? SILO_FAM_V4 : SILO_FAM_V6);

	k.slot = (m.seen_ns >> SILO_PMTU_EPOCH_SHIFT) % SILO_PMTU_SLOTS;
	memcpy(k.addr, dst->addr, sizeof(k.addr));
	if (bpf_map_update_elem(d->maps.fd[SILO_MAP_PMTU_MARKS], &k, &m,
				BPF_ANY) ||
	    bpf_map_update_elem(d->maps.fd[SILO_MAP_PMTU_UNSEEN], &i,
				&m.seen_ns, BPF_ANY))
		return -errno;
	return 0;
}

static int fam_af(__u32 fam)
{
	return fam == SILO_FAM_V4 ? AF_INET : AF_INET6;
}

/*
 * Every exception of family fam (SILO_FAM_*) the kernel holds, marked;
 * then sweeps moved: the data path's route_hot copies carry the marks'
 * verdict for larger frames, made before these marks (a failed dump may
 * have written some).
 */
static int mark_exceptions(struct silod *d, __u32 fam)
{
	int family = fam_af(fam);
	int err = silo_nl_dump_exceptions(family, mark_one, d);
	int moved = genid_sweeps(d);

	if (!err)
		err = moved;
	if (err)
		pr_warn("PMTU watch: cannot mark the %s exceptions: %s\n",
			family == AF_INET ? "IPv4" : "IPv6", strerror(-err));
	return err;
}

/* Which families may be watched now (bits 1 << SILO_FAM_*). */
static __u32 watchable(struct silod *d, struct dev_scan *sc)
{
	__u32 fams = 0;
	int f;

	sc->d = d;
	sc->complete = true;
	if (silo_for_each_link_pin(d->silo, pinned_one, sc) ||
	    silo_nl_dump_devs(dev_one, sc))
		return 0;
	if (!sc->complete)
		return 0;
	for (f = 0; f < 2; f++)
		if (silo_pmtu_expires_ok(fam_af(f)))
			fams |= 1U << f;
	return fams;
}

/*
 * Errors the program could not read: once the stack has learned from the
 * last one, mark what it learned and cover that one. The program only
 * writes the seen time, silod only the covered one: an error seen after
 * the read stays uncovered.
 */
static void cover_unseen(struct silod *d, __u64 now)
{
	int fd = d->maps.fd[SILO_MAP_PMTU_UNSEEN];
	__u32 f, c;
	__u64 seen, covered;

	for (f = 0; f < 2; f++) {
		c = SILO_PMTU_COVERED + f;
		/* seen may be later than now: written since now was read. */
		if (bpf_map_lookup_elem(fd, &f, &seen) ||
		    bpf_map_lookup_elem(fd, &c, &covered) || seen <= covered ||
		    seen > now || now - seen < PMTU_GRACE_NS)
			continue;
		if (mark_exceptions(d, f))
			continue;
		if (bpf_map_update_elem(fd, &c, &seen, BPF_ANY))
			pr_warn("PMTU watch: cannot cover an unseen error: %s\n",
				strerror(errno));
	}
}

/* In the first half of epoch e, nothing writes slot (e + 1) % 3: the
 * marks of epoch e - 2, which count no more. Tests move the clock this
 * decision reads (SILOD_TEST_PMTU_EMPTY_NS, ns added): an epoch is some 18
 * minutes, and a test must see both halves whenever it runs. */
static void empty_next_slot(struct silod *d, __u64 now)
{
	const char *test_ns = getenv("SILOD_TEST_PMTU_EMPTY_NS");
	int fd = d->maps.fd[SILO_MAP_PMTU_MARKS];
	struct silo_pmtu_key k, next;
	__u64 epoch;
	bool more;
	__u8 slot;

	if (test_ns)
		now += strtoull(test_ns, NULL, 10);
	epoch = now >> SILO_PMTU_EPOCH_SHIFT;
	slot = (epoch + 1) % SILO_PMTU_SLOTS;

	if (d->pmtu.emptied_epoch == epoch + 1 ||
	    now - (epoch << SILO_PMTU_EPOCH_SHIFT) > PMTU_EPOCH_NS / 2)
		return;
	more = !bpf_map_get_next_key(fd, NULL, &k);
	while (more) {
		more = !bpf_map_get_next_key(fd, &k, &next);
		if (k.slot == slot)
			bpf_map_delete_elem(fd, &k);
		k = next;
	}
	d->pmtu.emptied_epoch = epoch + 1;
}

int pmtu_poll(struct silod *d)
{
	struct silod_pmtu *p = &d->pmtu;
	struct dev_scan sc = {};
	__u32 fams, f, newly;
	__u64 now = coarse_ns();
	int err = 0;

	fams = watchable(d, &sc);
	free(sc.pinned);
	/* Newly watched: what the kernel holds is marked first. */
	newly = fams & ~p->watch;
	for (f = 0; f < 2; f++)
		if ((newly & (1U << f)) && mark_exceptions(d, f))
			fams &= ~(1U << f);
	if (fams != p->watch) {
		pr_info("PMTU watch: IPv4 %s, IPv6 %s\n",
			fams & (1U << SILO_FAM_V4) ? "on" : "off",
			fams & (1U << SILO_FAM_V6) ? "on" : "off");
		p->watch = fams;
		beat(d); /* now, not at the next beat */
	}
	cover_unseen(d, now);
	empty_next_slot(d, now);
	if (sc.mtu6_changed && p->mtu6_known)
		err = genid_bump(d);
	p->mtu6_known = true;
	return err;
}

void pmtu_reset(struct silod *d)
{
	memset(&d->pmtu, 0, sizeof(d->pmtu));
}
