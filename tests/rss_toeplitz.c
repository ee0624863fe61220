// SPDX-License-Identifier: GPL-2.0
/*
 * The Toeplitz table libsilo builds for reuseport policy queue, against the
 * verification vectors Microsoft publishes for RSS ("Verifying the RSS Hash
 * Calculation"): IPv4 and IPv6, with and without the ports. Also the queue
 * silo_rss_queue picks: which fields it hashes, and the indirection.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include "test.h"

static const char *const ms_key =
	"6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa";

struct vector {
	const char *src, *dst;
	__u16 sport, dport;
	__u32 addrs_only, with_ports;
};

static const struct vector v4[] = {
	{ "66.9.149.187", "161.142.100.80", 2794, 1766, 0x323e8fc2,
	  0x51ccc178 },
	{ "199.92.111.2", "65.69.140.83", 14230, 4739, 0xd718262a, 0xc626b0ea },
	{ "24.19.198.95", "12.22.207.184", 12898, 38024, 0xd2d0a5de,
	  0x5c2b394a },
	{ "38.27.205.30", "209.142.163.6", 48228, 2217, 0x82989176,
	  0xafc7327f },
	{ "153.39.163.191", "202.188.127.2", 44251, 1303, 0x5d1809c5,
	  0x10e828a2 },
};

static const struct vector v6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x2cc18cd5,
	  0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0x0f0c461c,
	  0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf",
	  44251, 38024, 0x4b61e985, 0x02d1feef },
};

static struct silo_reuseport_queues q;

static void parse_key(const char *hex, __u8 *key, __u32 *len)
{
	unsigned int b;

	for (*len = 0; hex[0] && hex[1]; hex += 2) {
		sscanf(hex, "%2x", &b);
		key[(*len)++] = b;
	}
}

/* Input bytes: src, dst (alen each), then the ports in network order. */
static __u32 hash_of(int family, const struct vector *v, bool ports)
{
	__u8 in[SILO_RSS_INPUT_MAX];
	__u32 alen = family == AF_INET ? 4 : 16;

	inet_pton(family, v->src, in);
	inet_pton(family, v->dst, in + alen);
	in[2 * alen] = v->sport >> 8;
	in[2 * alen + 1] = v->sport & 0xff;
	in[2 * alen + 2] = v->dport >> 8;
	in[2 * alen + 3] = v->dport & 0xff;
	return silo_rss_hash(q.toeplitz, in, 2 * alen + (ports ? 4 : 0));
}

static void check_vectors(int family, const struct vector *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		__u32 a = hash_of(family, &v[i], false);
		__u32 p = hash_of(family, &v[i], true);

		CHECK(a == v[i].addrs_only, "%s -> %s: 0x%08x, want 0x%08x",
		      v[i].src, v[i].dst, a, v[i].addrs_only);
		CHECK(p == v[i].with_ports,
		      "%s:%u -> %s:%u: 0x%08x, want 0x%08x", v[i].src,
		      v[i].sport, v[i].dst, v[i].dport, p, v[i].with_ports);
	}
}

static void test_ipv4_vectors(void)
{
	check_vectors(AF_INET, v4, sizeof(v4) / sizeof(v4[0]));
}

static void test_ipv6_vectors(void)
{
	check_vectors(AF_INET6, v6, sizeof(v6) / sizeof(v6[0]));
}

/* A longer key (52 bytes, as some NICs have) hashes the same: the input
 * never reaches past byte 40. A short one is refused. */
static void test_key_sizes(void)
{
	static __u32 t52[SILO_RSS_INPUT_MAX * 256];
	__u8 key[SILO_RSS_KEY_MAX] = {};

	memcpy(key, q.key, q.key_size);
	memset(key + q.key_size, 0xa5, sizeof(key) - q.key_size);
	REQUIRE(silo_rss_toeplitz_table(key, SILO_RSS_KEY_MAX, t52) == 0,
		"52-byte key");
	CHECK(memcmp(t52, q.toeplitz, sizeof(t52)) == 0,
	      "bytes past the 40th of the key changed the table");
	CHECK_EQ(silo_rss_toeplitz_table(key, SILO_RSS_KEY_MIN - 1, t52),
		 -EINVAL);
	CHECK_EQ(silo_rss_toeplitz_table(key, SILO_RSS_KEY_MAX + 1, t52),
		 -EINVAL);
}

/* silo_rss_queue: the ports count only for the flow types hash_ports says;
 * the queue is indir[hash % indir_size]. */
static void test_queue_choice(void)
{
	struct in_addr s4, d4;
	struct in6_addr s6, d6;
	__u32 hash;
	int queue, i;

	q.indir_size = 128;
	q.nr_queues = 4;
	for (i = 0; i < 128; i++)
		q.indir[i] = (i * 7) % 4;
	inet_pton(AF_INET, v4[0].src, &s4);
	inet_pton(AF_INET, v4[0].dst, &d4);
	inet_pton(AF_INET6, v6[0].src, &s6);
	inet_pton(AF_INET6, v6[0].dst, &d6);

	q.hash_ports = SILO_RSS_PORTS_TCP4;
	queue = silo_rss_queue(&q, AF_INET, IPPROTO_TCP, &s4, &d4, 2794, 1766,
			       &hash);
	CHECK_EQ(hash, v4[0].with_ports);
	CHECK_EQ(queue, q.indir[v4[0].with_ports % 128]);
	queue = silo_rss_queue(&q, AF_INET, IPPROTO_UDP, &s4, &d4, 2794, 1766,
			       &hash);
	CHECK_EQ(hash, v4[0].addrs_only);
	CHECK_EQ(queue, q.indir[v4[0].addrs_only % 128]);

	q.hash_ports = SILO_RSS_PORTS_UDP6;
	silo_rss_queue(&q, AF_INET6, IPPROTO_UDP, &s6, &d6, 2794, 1766, &hash);
	CHECK_EQ(hash, v6[0].with_ports);
	silo_rss_queue(&q, AF_INET6, IPPROTO_TCP, &s6, &d6, 2794, 1766, &hash);
	CHECK_EQ(hash, v6[0].addrs_only);
	CHECK_EQ(silo_rss_queue(&q, AF_UNIX, IPPROTO_UDP, &s4, &d4, 1, 2, NULL),
		 -EINVAL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_key(ms_key, q.key, &q.key_size);
	if (q.key_size != 40 ||
	    silo_rss_toeplitz_table(q.key, q.key_size, q.toeplitz)) {
		printf("not ok - setup: the verification key\n");
		return 1;
	}
	RUN(test_ipv4_vectors);
	RUN(test_ipv6_vectors);
	RUN(test_key_sizes);
	RUN(test_queue_choice);
	return 0;
}
