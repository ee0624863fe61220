// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Reuseport policy queue: the RSS table a group's program redoes the NIC's
 * choice of RX queue with (Toeplitz hash, indirection table, queue -> CPU).
 *
 * On a real NIC the table is the device's (silo_rss_table_read): its
 * Toeplitz key and indirection table through ethtool netlink (user/lib/
 * ethtool.c; any other hash function cannot be redone here, so such a
 * device gets no table and the policy falls back), the flows whose hash
 * takes the ports (ETHTOOL_GRXFH), and each queue's CPU from its IRQ's
 * affinity. The table keeps the device's ifindex, and silod reads it
 * again every second, rewriting it when ethtool or an IRQ's affinity
 * changed it. A device without RSS (veth, loopback) gets a faked table by
 * hand (silo reuseport queue-map), which silod leaves alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "reuseport.h"
#include "../service.h"

/* 32 bits of key from bit n on (bit 0: the first byte's top bit). */
static __u32 key_window(const __u8 *key, __u32 n)
{
	__u32 byte = n / 8, shift = n % 8;
	__u64 v = 0;
	int i;

	for (i = 0; i < 5; i++)
		v = v << 8 | key[byte + i];
	return (__u32)(v >> (8 - shift));
}

int silo_rss_toeplitz_table(const __u8 *key, __u32 key_size, __u32 *table)
{
	__u32 i, b, bit;

	if (key_size < SILO_RSS_KEY_MIN || key_size > SILO_RSS_KEY_MAX)
		return -EINVAL;
	for (i = 0; i < SILO_RSS_INPUT_MAX; i++) {
		__u32 *t = &table[i * 256];

		/* Each set bit of b adds the key window at its position. */
		for (b = 0; b < 256; b++) {
			t[b] = 0;
			for (bit = 0; bit < 8; bit++)
				if (b & (0x80 >> bit))
					t[b] ^= key_window(key, i * 8 + bit);
		}
	}
	return 0;
}

__u32 silo_rss_hash(const __u32 *table, const __u8 *in, __u32 len)
{
	__u32 hash = 0, i;

	for (i = 0; i < len && i < SILO_RSS_INPUT_MAX; i++)
		hash ^= table[i * 256 + in[i]];
	return hash;
}

int silo_rss_queue(const struct silo_reuseport_queues *q, int family,
		   int protocol, const void *saddr, const void *daddr,
		   __u16 sport, __u16 dport, __u32 *hash)
{
	__u8 in[SILO_RSS_INPUT_MAX];
	__u32 alen, ports, h;
	bool tcp = protocol == IPPROTO_TCP;

	if (family == AF_INET) {
		alen = 4;
		ports = tcp ? SILO_RSS_PORTS_TCP4 : SILO_RSS_PORTS_UDP4;
	} else if (family == AF_INET6) {
		alen = 16;
		ports = tcp ? SILO_RSS_PORTS_TCP6 : SILO_RSS_PORTS_UDP6;
	} else {
		return -EINVAL;
	}
	if (!q->indir_size || q->indir_size > SILO_RSS_INDIR_MAX)
		return -EINVAL;
	memcpy(in, saddr, alen);
	memcpy(in + alen, daddr, alen);
	in[2 * alen] = sport >> 8;
	in[2 * alen + 1] = sport & 0xff;
	in[2 * alen + 2] = dport >> 8;
	in[2 * alen + 3] = dport & 0xff;
	h = silo_rss_hash(q->toeplitz, in,
			  2 * alen + (q->hash_ports & ports ? 4 : 0));
	if (hash)
		*hash = h;
	return q->indir[h % q->indir_size];
}

/* Whether q is a table the program can use; says what is wrong if not. */
static int check_table(const struct silo_reuseport_queues *q)
{
	int nr_cpus = libbpf_num_possible_cpus();
	__u32 i;

	if (q->key_size < SILO_RSS_KEY_MIN || q->key_size > SILO_RSS_KEY_MAX) {
		pr_err("bad RSS key of %u bytes: %d to %d\n", q->key_size,
		       SILO_RSS_KEY_MIN, SILO_RSS_KEY_MAX);
		return -EINVAL;
	}
	if (!q->indir_size || q->indir_size > SILO_RSS_INDIR_MAX) {
		pr_err("bad indirection table of %u entries: 1 to %d\n",
		       q->indir_size, SILO_RSS_INDIR_MAX);
		return -EINVAL;
	}
	if (!q->nr_queues || q->nr_queues > SILO_RSS_QUEUES_MAX) {
		pr_err("bad number of queues %u: 1 to %d\n", q->nr_queues,
		       SILO_RSS_QUEUES_MAX);
		return -EINVAL;
	}
	for (i = 0; i < q->indir_size; i++) {
		if (q->indir[i] >= q->nr_queues) {
			pr_err("indirection entry %u is queue %u, but there are %u queues\n",
			       i, q->indir[i], q->nr_queues);
			return -EINVAL;
		}
	}
	for (i = 0; i < q->nr_queues; i++) {
		if (q->queue_cpu[i] != SILO_RSS_NO_CPU &&
		    q->queue_cpu[i] >= (__u32)nr_cpus) {
			pr_err("queue %u on CPU %u: CPUs are 0 to %d here\n", i,
			       q->queue_cpu[i], nr_cpus - 1);
			return -EINVAL;
		}
	}
	if (q->hash_ports & ~SILO_RSS_PORTS_ALL) {
		pr_err("bad hash_ports 0x%x: SILO_RSS_PORTS_* only\n",
		       q->hash_ports);
		return -EINVAL;
	}
	return 0;
}

int silo_group_set_queues(struct silo_group *g,
			  const struct silo_reuseport_queues *q)
{
	struct silo_reuseport_queues *t;
	int lock, fd, err;
	__u32 id, i;

	err = check_table(q);
	if (err)
		return err;
	t = malloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = *q;
	/* What the program never reads is zero: show and compare see it. */
	memset(t->key + t->key_size, 0, SILO_RSS_KEY_MAX - t->key_size);
	for (i = t->indir_size; i < SILO_RSS_INDIR_MAX; i++)
		t->indir[i] = 0;
	for (i = t->nr_queues; i < SILO_RSS_QUEUES_MAX; i++)
		t->queue_cpu[i] = SILO_RSS_NO_CPU;
	silo_rss_toeplitz_table(t->key, t->key_size, t->toeplitz);
	lock = silo_group_lock_queues(g, &fd, &id);
	if (lock < 0) {
		free(t);
		return lock;
	}
	/* One update: the program sees the old table or the new one. */
	if (bpf_map_update_elem(fd, &id, t, BPF_ANY)) {
		err = -errno;
		pr_err("cannot set the RSS table of group '%s': %s\n",
		       silo_group_name(g), strerror(-err));
	}
	silo_group_unlock(lock);
	free(t);
	return err;
}

int silo_group_queues(struct silo_group *g, struct silo_reuseport_queues *q)
{
	int lock, fd, err = 0;
	__u32 id;

	lock = silo_group_lock_queues(g, &fd, &id);
	if (lock < 0)
		return lock;
	if (bpf_map_lookup_elem(fd, &id, q))
		err = -errno;
	silo_group_unlock(lock);
	return err;
}

int silo_group_clear_queues(struct silo_group *g)
{
	int lock, fd, err = 0;
	__u32 id;

	lock = silo_group_lock_queues(g, &fd, &id);
	if (lock < 0)
		return lock;
	if (bpf_map_delete_elem(fd, &id))
		err = -errno;
	silo_group_unlock(lock);
	return err;
}

/* Whether the device's hash of a flow type takes the L4 ports; on no
 * answer, what most NICs do: TCP yes, UDP no. */
static bool hashes_ports(int sock, const char *ifname, __u32 flow_type)
{
	struct ethtool_rxnfc nfc = { .cmd = ETHTOOL_GRXFH,
				     .flow_type = flow_type };
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&nfc;
	if (sock < 0 || ioctl(sock, SIOCETHTOOL, &ifr))
		return flow_type == TCP_V4_FLOW || flow_type == TCP_V6_FLOW;
	return (nfc.data & (RXH_L4_B_0_1 | RXH_L4_B_2_3)) ==
	       (RXH_L4_B_0_1 | RXH_L4_B_2_3);
}

int silo_rss_table_read(const char *ifname, struct silo_reuseport_queues *q)
{
	static const struct {
		__u32 flow, bit;
	} flows[] = {
		{ UDP_V4_FLOW, SILO_RSS_PORTS_UDP4 },
		{ UDP_V6_FLOW, SILO_RSS_PORTS_UDP6 },
		{ TCP_V4_FLOW, SILO_RSS_PORTS_TCP4 },
		{ TCP_V6_FLOW, SILO_RSS_PORTS_TCP6 },
	};
	struct silo_rss *rss;
	__u32 i, *cpus = NULL;
	int err, sock, found;

	memset(q, 0, sizeof(*q));
	q->ifindex = if_nametoindex(ifname);
	if (!q->ifindex)
		return -ENODEV;
	rss = calloc(1, sizeof(*rss));
	cpus = calloc(SILO_RSS_QUEUES_MAX, sizeof(*cpus));
	if (!rss || !cpus) {
		err = -ENOMEM;
		goto out;
	}
	err = silo_rss_get(ifname, rss);
	if (err)
		goto out;
	/* Only the Toeplitz hash can be redone; nothing else is guessed. */
	if (rss->hfunc != SILO_RSS_HASH_TOP ||
	    rss->key_size < SILO_RSS_KEY_MIN ||
	    rss->key_size > SILO_RSS_KEY_MAX || !rss->indir_size) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (rss->indir_size > SILO_RSS_INDIR_MAX) {
		err = -E2BIG;
		goto out;
	}
	q->key_size = rss->key_size;
	memcpy(q->key, rss->key, rss->key_size);
	q->indir_size = rss->indir_size;
	for (i = 0; i < rss->indir_size; i++) {
		if (rss->indir[i] >= SILO_RSS_QUEUES_MAX) {
			err = -E2BIG;
			goto out;
		}
		q->indir[i] = rss->indir[i];
		if (q->indir[i] + 1 > q->nr_queues)
			q->nr_queues = q->indir[i] + 1;
	}
	found = silo_irq_queue_cpus(ifname, "", cpus, q->nr_queues);
	for (i = 0; i < SILO_RSS_QUEUES_MAX; i++)
		q->queue_cpu[i] =
			found > 0 && i < q->nr_queues &&
					cpus[i] != SILO_SERVICE_NO_CPU ?
				cpus[i] :
				SILO_RSS_NO_CPU;
	sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (i = 0; i < sizeof(flows) / sizeof(flows[0]); i++)
		if (hashes_ports(sock, ifname, flows[i].flow))
			q->hash_ports |= flows[i].bit;
	if (sock >= 0)
		close(sock);
	err = 0;
out:
	free(cpus);
	free(rss);
	return err;
}

int silo_group_queues_from_dev(struct silo_group *g, const char *ifname)
{
	struct silo_reuseport_queues *q = malloc(sizeof(*q));
	int err;

	if (!q)
		return -ENOMEM;
	err = silo_rss_table_read(ifname, q);
	switch (err) {
	case 0:
		err = silo_group_set_queues(g, q);
		break;
	case -ENODEV:
		pr_err("no device '%s' in this network namespace\n", ifname);
		break;
	case -EOPNOTSUPP:
		pr_err("%s has no Toeplitz RSS table that policy queue can redo (a veth has none, 'ethtool -x %s' shows what it has): give the table by hand with --indir\n",
		       ifname, ifname);
		break;
	case -E2BIG:
		pr_err("the RSS table of %s is larger than policy queue takes (%d entries, %d queues)\n",
		       ifname, SILO_RSS_INDIR_MAX, SILO_RSS_QUEUES_MAX);
		break;
	default:
		pr_err("cannot read the RSS table of %s: %s\n", ifname,
		       strerror(-err));
	}
	free(q);
	return err;
}
