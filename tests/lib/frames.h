/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differential harness's frames: a corpus of normal and malformed
 * Ethernet frames for a client -- router -- {server, server2} topology, raw
 * AF_PACKET sockets opened inside named network namespaces, and the
 * normalisation that makes two captures comparable byte for byte. Shared by
 * tools/lab/frames.c (tests/differential.sh) and tools/fuzz/fuzz_xdp.c
 * (make fuzz).
 *
 * Addresses (tests/differential.sh builds the same):
 *   client  10.1.0.2  fd01::2   router r-c 10.1.0.1 fd01::1
 *   server  10.2.0.2  fd02::2   router r-s 10.2.0.1 fd02::1
 *   server2 10.3.0.2  fd03::2   router r-t 10.3.0.1 fd03::1
 * and routed prefixes 10.20/16, 10.40/16 (server), 10.30/16 (server2), the
 * same under fd20::/64, fd40::/48 and fd30::/64.
 *
 * Every corpus frame carries an 8-byte marker at the start of its payload
 * (FRAME_MAGIC, the pass, the frame's index), so a captured frame, or an
 * ICMP error quoting it, names the frame it came from.
 */
#ifndef SILO_TEST_FRAMES_H
#define SILO_TEST_FRAMES_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

/* A jumbo frame (MTU 9000: 9,014 bytes) and some. */
#define FRAME_MAX 9216
#define FRAME_MAGIC0 0x53
#define FRAME_MAGIC1 0x4c
#define FRAME_MAGIC2 0xa5

struct frame {
	char name[64];
	uint16_t len;
	/* Sent as a sender on the host leaves it (CHECKSUM_PARTIAL): the
	 * pseudo header's sum where the TCP or UDP checksum goes. */
	uint8_t offload;
	uint8_t b[FRAME_MAX];
};

/* Where a frame's marker (FRAME_MAGIC0..2, pass, index) is; NULL for none. */
static inline const uint8_t *frame_marker_at(const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i + 8 <= len; i++)
		if (b[i] == FRAME_MAGIC0 && b[i + 1] == FRAME_MAGIC1 &&
		    b[i + 2] == FRAME_MAGIC2)
			return b + i;
	return NULL;
}

static inline uint32_t csum_add(uint32_t sum, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	return sum;
}

static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (p[0] << 8) | p[1];
}

static inline int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int m[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++)
		mac[i] = m[i];
	return 0;
}

/* What one corpus frame is; zero fields take the defaults noted. */
enum frame_mut {
	M_NONE,
	M_BADCSUM, /* IPv4 header checksum off by one */
	M_TRUNC, /* cut the frame to arg bytes after the L3 header starts */
	M_TRAIL, /* arg bytes of trailer after the IP packet */
	M_LONG, /* IP length field claims arg bytes more than the frame has */
	M_IHL, /* IPv4 IHL set to arg (checksum recomputed) */
	M_VER, /* IP version nibble set to arg */
	M_SHORTLEN, /* IP length field set to arg (checksum recomputed) */
};

struct fspec {
	int v6;
	const char *src, *dst; /* NULL: the client, 10.20.0.5 / fd20::5 */
	uint8_t proto; /* 0: UDP; 6 TCP SYN; 1/58 echo request; other: raw */
	uint8_t ttl; /* 0: 64; 255 means 0 */
	uint8_t tos;
	int df;
	int len; /* IP packet length; 0: 100 */
	uint16_t sport, dport; /* 0: 4000, 5000 */
	uint32_t flowlabel;
	const uint8_t *dmac; /* NULL: the router's ingress MAC */
	int vlans; /* 1: 802.1Q, 2: 802.1ad + 802.1Q */
	const uint8_t *opt; /* IPv4 options, optlen a multiple of 4 */
	int optlen;
	uint16_t frag; /* IPv4 MF and offset (8-byte units) */
	uint8_t ext[4]; /* IPv6 extension headers, in order */
	int next;
	uint16_t frag6; /* IPv6 fragment header: offset << 3 | M */
	int rh_segs; /* addresses in a type 0 routing header (segleft) */
	uint8_t tcpflags; /* 0: SYN */
	int mut;
	int arg;
};

struct corpus_env {
	uint8_t rmac[6]; /* the router's ingress (r-c) MAC */
	uint8_t cmac[6]; /* the client's MAC */
	int pass;
	/* Plain TCP and UDP frames again, left to offload (frame.offload). */
	int offload;
};

static inline int addr_of(int v6, const char *s, uint8_t *a)
{
	memset(a, 0, 16);
	return inet_pton(v6 ? AF_INET6 : AF_INET, s, a) == 1 ? 0 : -EINVAL;
}

static inline uint32_t pseudo_sum(int v6, const uint8_t *src,
				  const uint8_t *dst, uint8_t proto,
				  uint32_t len)
{
	uint8_t tail[8] = { 0, 0, len >> 8, len, 0, 0, 0, proto };
	uint32_t sum = 0;

	sum = csum_add(sum, src, v6 ? 16 : 4);
	sum = csum_add(sum, dst, v6 ? 16 : 4);
	if (v6) {
		uint8_t l[4] = { len >> 24, len >> 16, len >> 8, len };

		sum = csum_add(sum, l, 4);
		return csum_add(sum, tail + 4, 4);
	}
	return csum_add(sum, tail + 2, 2) + proto;
}

/*
 * A plain TCP or UDP packet's L4 header (IPv4 unfragmented, IPv6 without
 * extension headers, no VLAN tag), its length to the end of the IP packet
 * and its protocol: 0, or -1 for any other frame.
 */
static inline int frame_l4(const uint8_t *b, size_t len, size_t *l4,
			   size_t *l4len, uint8_t *proto)
{
	const uint8_t *ip = b + 14;
	size_t iplen;

	if (len < 14 + 40)
		return -1;
	if (get16(b + 12) == ETH_P_IP && (ip[0] >> 4) == 4) {
		if (get16(ip + 6) & 0x3fff)
			return -1;
		*proto = ip[9];
		*l4 = 14 + 4 * (ip[0] & 0xf);
		iplen = get16(ip + 2);
	} else if (get16(b + 12) == ETH_P_IPV6 && (ip[0] >> 4) == 6) {
		*proto = ip[6];
		*l4 = 14 + 40;
		iplen = 40 + get16(ip + 4);
	} else {
		return -1;
	}
	if ((*proto != 6 && *proto != 17) || 14 + iplen > len ||
	    14 + iplen < *l4 + (*proto == 6 ? 20 : 8))
		return -1;
	*l4len = 14 + iplen - *l4;
	return 0;
}

/*
 * The TCP or UDP checksum of a plain packet (frame_l4()) written as a
 * sender that leaves it to offload writes it: the pseudo header's folded
 * sum, which the sending device finishes. 0, or -1 for any other frame.
 */
static inline int frame_l4_csum_partial(uint8_t *b, size_t len)
{
	size_t l4, l4len;
	uint8_t proto;
	uint32_t sum;
	int v6;

	if (frame_l4(b, len, &l4, &l4len, &proto))
		return -1;
	v6 = get16(b + 12) == ETH_P_IPV6;
	sum = pseudo_sum(v6, b + 14 + (v6 ? 8 : 12), b + 14 + (v6 ? 24 : 16),
			 proto, l4len);
	put16(b + l4 + (proto == 6 ? 16 : 6), ~csum_fold(sum) & 0xffff);
	return 0;
}

/*
 * A checksum left to offload (CHECKSUM_PARTIAL) finished as the device
 * that sends the frame finishes it (skb_checksum_help(), or a NIC): the
 * TCP or UDP packet summed with the field as it is, where the stack put
 * the pseudo header's sum, and complemented; 0 sent as all ones. A field
 * finished already comes out wrong, as it would on the wire. 0, or -1 for
 * any other frame.
 */
static inline int frame_l4_csum_device(uint8_t *b, size_t len)
{
	size_t l4, l4len;
	uint8_t proto;
	uint16_t c;

	if (frame_l4(b, len, &l4, &l4len, &proto))
		return -1;
	c = csum_fold(csum_add(0, b + l4, l4len));
	put16(b + l4 + (proto == 6 ? 16 : 6), c ? c : 0xffff);
	return 0;
}

/* Builds f from sp; idx and env->pass go into the marker. */
static inline int frame_build(struct frame *f, const char *name,
			      const struct fspec *sp,
			      const struct corpus_env *env, uint32_t idx)
{
	uint8_t src[16], dst[16], *b = f->b, *ip, *l4;
	uint8_t proto = sp->proto ? sp->proto : 17, last;
	int iplen = sp->len ? sp->len : 100, off, hl, l4len, i, first = 1;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%.63s", name);
	/*
	 * IPv4 sources are one per frame, behind the client (10.10/16): the
	 * kernel limits the ICMP errors it sends for unroutable packets per
	 * source with fixed constants (5 at once, 1 a second), so a shared
	 * source would make the errors a matter of timing.
	 */
	if (!sp->src && !sp->v6) {
		char s4[20];

		snprintf(s4, sizeof(s4), "10.10.%u.%u", (idx >> 8) & 0xff,
			 idx & 0xff);
		addr_of(0, s4, src);
	} else if (addr_of(sp->v6, sp->src ? sp->src : "fd01::2", src)) {
		return -EINVAL;
	}
	if (addr_of(sp->v6,
		    sp->dst ? sp->dst :
		    sp->v6  ? "fd20::5" :
			      "10.20.0.5",
		    dst))
		return -EINVAL;
	memcpy(b, sp->dmac ? sp->dmac : env->rmac, 6);
	memcpy(b + 6, env->cmac, 6);
	off = 12;
	for (i = 0; i < sp->vlans; i++) {
		put16(b + off, i == 0 && sp->vlans > 1 ? 0x88a8 : 0x8100);
		put16(b + off + 2, 100 + i);
		off += 4;
	}
	put16(b + off, sp->v6 ? ETH_P_IPV6 : ETH_P_IP);
	off += 2;
	ip = b + off;
	if (off + iplen > FRAME_MAX - 64)
		return -E2BIG;

	if (sp->v6) {
		uint32_t w = 6u << 28 | (uint32_t)sp->tos << 20 |
			     (sp->flowlabel & 0xfffff);

		ip[0] = w >> 24;
		ip[1] = w >> 16;
		ip[2] = w >> 8;
		ip[3] = w;
		put16(ip + 4, iplen - 40);
		ip[7] = sp->ttl == 255 ? 0 : sp->ttl ? sp->ttl : 64;
		memcpy(ip + 8, src, 16);
		memcpy(ip + 24, dst, 16);
		hl = 40;
		last = 6; /* where the next header field is */
		for (i = 0; i < sp->next; i++) {
			uint8_t *e = ip + hl;

			ip[last] = sp->ext[i];
			if (sp->ext[i] == 44) { /* fragment */
				put16(e + 2, sp->frag6);
				e[4] = 0x12;
				e[7] = idx;
				if (sp->frag6 & 0xfff8)
					first = 0;
				last = hl;
				hl += 8;
			} else if (sp->ext[i] == 43) { /* routing type 0 */
				e[1] = 2 * sp->rh_segs;
				e[3] = sp->rh_segs;
				for (int k = 0; k < sp->rh_segs; k++)
					addr_of(1, "fd30::7", e + 8 + 16 * k);
				last = hl;
				hl += 8 + 16 * sp->rh_segs;
			} else { /* hop-by-hop, destination options: PadN */
				e[2] = 1;
				e[3] = 4;
				last = hl;
				hl += 8;
			}
		}
		ip[last] = proto;
	} else {
		hl = 20 + sp->optlen;
		ip[0] = 0x40 | hl / 4;
		ip[1] = sp->tos;
		put16(ip + 2, iplen);
		/* The ID names the frame too: fragments the router makes
		 * carry no marker after the first. */
		put16(ip + 4, 0x1000 * (env->pass + 1) + idx);
		put16(ip + 6, (sp->df ? 0x4000 : 0) | sp->frag);
		ip[8] = sp->ttl == 255 ? 0 : sp->ttl ? sp->ttl : 64;
		ip[9] = proto;
		memcpy(ip + 12, src, 4);
		memcpy(ip + 16, dst, 4);
		if (sp->optlen)
			memcpy(ip + 20, sp->opt, sp->optlen);
		if (sp->frag & 0x1fff)
			first = 0;
	}
	if (iplen < hl + 16)
		return -EINVAL;
	l4 = ip + hl;
	l4len = iplen - hl;
	/* Payload: the marker, then a counting pattern. */
	{
		int ph = !first					  ? 0 :
			 proto == 6				  ? 20 :
			 proto == 17 || proto == 1 || proto == 58 ? 8 :
								    0;
		uint8_t *p = l4 + ph;

		p[0] = FRAME_MAGIC0;
		p[1] = FRAME_MAGIC1;
		p[2] = FRAME_MAGIC2;
		p[3] = env->pass;
		p[4] = idx >> 24;
		p[5] = idx >> 16;
		p[6] = idx >> 8;
		p[7] = idx;
		for (i = 8; i < l4len - ph; i++)
			p[i] = i;
	}
	if (first) {
		uint32_t sum;

		switch (proto) {
		case 17:
			put16(l4, sp->sport ? sp->sport : 4000);
			put16(l4 + 2, sp->dport ? sp->dport : 5000);
			put16(l4 + 4, l4len);
			break;
		case 6:
			put16(l4, sp->sport ? sp->sport : 4000);
			put16(l4 + 2, sp->dport ? sp->dport : 5000);
			l4[4] = env->pass; /* seq: passes never adjoin */
			l4[7] = idx;
			l4[12] = 5 << 4;
			l4[13] = sp->tcpflags ? sp->tcpflags : 0x02;
			put16(l4 + 14, 65535);
			break;
		case 1:
		case 58:
			l4[0] = proto == 1 ? 8 : 128;
			put16(l4 + 4, 0x5100 + (idx & 0xff));
			put16(l4 + 6, env->pass);
			break;
		}
		if (proto == 17 || proto == 6 || proto == 58) {
			sum = pseudo_sum(sp->v6, src, dst, proto, l4len);
			sum = csum_add(sum, l4, l4len);
			put16(l4 + (proto == 6	? 16 :
				    proto == 58 ? 2 :
						  6),
			      csum_fold(sum) ?: (proto == 17 ? 0xffff : 0));
		} else if (proto == 1) {
			put16(l4 + 2, csum_fold(csum_add(0, l4, l4len)));
		}
	}
	if (!sp->v6)
		put16(ip + 10, csum_fold(csum_add(0, ip, hl)));
	f->len = off + iplen;

	switch (sp->mut) {
	case M_BADCSUM:
		put16(ip + 10, get16(ip + 10) + 1);
		break;
	case M_TRUNC:
		f->len = off + sp->arg;
		break;
	case M_TRAIL:
		for (i = 0; i < sp->arg; i++)
			b[f->len + i] = 0xee;
		f->len += sp->arg;
		break;
	case M_LONG:
	case M_SHORTLEN:
		if (sp->v6)
			put16(ip + 4, sp->mut == M_LONG ? iplen - 40 + sp->arg :
							  sp->arg);
		else
			put16(ip + 2,
			      sp->mut == M_LONG ? iplen + sp->arg : sp->arg);
		break;
	case M_IHL:
		ip[0] = 0x40 | sp->arg;
		break;
	case M_VER:
		ip[0] = (ip[0] & 0xf) | sp->arg << 4;
		break;
	}
	if (!sp->v6 &&
	    (sp->mut == M_LONG || sp->mut == M_SHORTLEN || sp->mut == M_IHL)) {
		put16(ip + 10, 0);
		put16(ip + 10, csum_fold(csum_add(0, ip, hl)));
	}
	return 0;
}

/*
 * An ICMP "fragmentation needed" (IPv4: type 3 code 4) or ICMPv6 "packet too
 * big" (type 2) from src to dst announcing mtu, as a router on the path
 * would send it for a packet from qsrc to qdst. The quoted packet is an
 * ICMP echo reply (what the kernel takes a PMTU from when it is addressed
 * to it: icmp_err(), icmpv6_err()): its IP header (IPv4: DF, total length
 * 1428, IPv6: payload length 1400) and its first 8 bytes, whose checksum is
 * right for a payload of zeros. The family is the addresses'; all four must
 * be of one. Returns 0, -EINVAL (addresses) or -ERANGE (an IPv4 mtu over
 * 16 bits).
 */
static inline int frame_too_big(struct frame *f, const uint8_t dmac[6],
				const uint8_t smac[6], const char *src,
				const char *dst, const char *qsrc,
				const char *qdst, uint32_t mtu)
{
	uint8_t a[4][16], *ip = f->b + 14, *icmp, *q, *echo;
	const char *s[4] = { src, dst, qsrc, qdst };
	int v6 = !!strchr(src, ':'), i, hl = v6 ? 40 : 20;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "too-big %s mtu %u", qdst, mtu);
	for (i = 0; i < 4; i++)
		if (!!strchr(s[i], ':') != v6 || addr_of(v6, s[i], a[i]))
			return -EINVAL;
	if (!v6 && mtu > 0xffff)
		return -ERANGE;
	memcpy(f->b, dmac, 6);
	memcpy(f->b + 6, smac, 6);
	put16(f->b + 12, v6 ? ETH_P_IPV6 : ETH_P_IP);
	icmp = ip + hl;
	q = icmp + 8;
	echo = q + hl;
	f->len = 14 + 2 * hl + 16;

	if (v6) {
		ip[0] = 0x60;
		put16(ip + 4, hl + 16);
		ip[6] = 58;
		ip[7] = 64;
		memcpy(ip + 8, a[0], 16);
		memcpy(ip + 24, a[1], 16);
		icmp[0] = 2;
		put16(icmp + 4, mtu >> 16);
		put16(icmp + 6, mtu);
		q[0] = 0x60;
		put16(q + 4, 1400);
		q[6] = 58;
		q[7] = 64;
		memcpy(q + 8, a[2], 16);
		memcpy(q + 24, a[3], 16);
		echo[0] = 129;
		put16(echo + 4, 0x5eed);
		put16(echo + 6, 1);
		put16(echo + 2,
		      csum_fold(csum_add(pseudo_sum(1, a[2], a[3], 58, 1400),
					 echo, 8)));
		put16(icmp + 2,
		      csum_fold(csum_add(pseudo_sum(1, a[0], a[1], 58, hl + 16),
					 icmp, hl + 16)));
		return 0;
	}
	ip[0] = 0x45;
	ip[1] = 0xc0;
	put16(ip + 2, 2 * hl + 16);
	ip[8] = 64;
	ip[9] = 1;
	memcpy(ip + 12, a[0], 4);
	memcpy(ip + 16, a[1], 4);
	put16(ip + 10, csum_fold(csum_add(0, ip, hl)));
	icmp[0] = 3;
	icmp[1] = 4;
	put16(icmp + 6, mtu);
	q[0] = 0x45;
	put16(q + 2, 1428);
	put16(q + 6, 0x4000);
	q[8] = 64;
	q[9] = 1;
	memcpy(q + 12, a[2], 4);
	memcpy(q + 16, a[3], 4);
	put16(q + 10, csum_fold(csum_add(0, q, hl)));
	put16(echo + 4, 0x5eed);
	put16(echo + 6, 1);
	put16(echo + 2, csum_fold(csum_add(0, echo, 8)));
	put16(icmp + 2, csum_fold(csum_add(0, icmp, hl + 16)));
	return 0;
}

#define CORPUS_MAX 1024

struct corpus {
	struct frame f[CORPUS_MAX];
	int n;
};

static inline void corpus_add(struct corpus *c, const struct corpus_env *env,
			      const struct fspec *sp, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline void corpus_add(struct corpus *c, const struct corpus_env *env,
			      const struct fspec *sp, const char *fmt, ...)
{
	char name[64];
	va_list ap;

	if (c->n >= CORPUS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (frame_build(&c->f[c->n], name, sp, env, c->n) == 0)
		c->n++;
	else
		fprintf(stderr, "frames: cannot build %s\n", name);
}

#define ADD(...)                                      \
	do {                                          \
		struct fspec _s = { __VA_ARGS__ };    \
		corpus_add(c, env, &_s, "%s", fname); \
	} while (0)

/*
 * The plain TCP and UDP frames to every destination (the first of each
 * kind, and the largest UDP and TCP ones) once more, left to offload: as a
 * container's or a guest's sender hands them to its veth or tap, with
 * checksumming at its defaults. Each its own marker.
 */
static inline void corpus_offload(struct corpus *c)
{
	static const char *const kinds[] = { "udp4 ",	   "udp6 ",
					     "tcp4 ",	   "tcp6 ",
					     "tcp-ack4 ",  "tcp-ack6 ",
					     "udp4-1500 ", "udp6-1500 ",
					     "tcp4-1400 ", "tcp6-1400 " };
	int n0 = c->n, i, k;
	struct frame *f;
	uint8_t *m;

	for (i = 0; i < n0 && c->n < CORPUS_MAX; i++) {
		for (k = 0; k < (int)(sizeof(kinds) / sizeof(kinds[0])); k++)
			if (!strncmp(c->f[i].name, kinds[k], strlen(kinds[k])))
				break;
		if (k == (int)(sizeof(kinds) / sizeof(kinds[0])))
			continue;
		f = &c->f[c->n];
		*f = c->f[i];
		snprintf(f->name, sizeof(f->name), "%.54s offload",
			 c->f[i].name);
		f->offload = 1;
		/* The marker names the copy. */
		m = (uint8_t *)frame_marker_at(f->b, f->len);
		if (m) {
			m[4] = c->n >> 24;
			m[5] = c->n >> 16;
			m[6] = c->n >> 8;
			m[7] = c->n;
		}
		if (!frame_l4_csum_partial(f->b, f->len))
			c->n++;
	}
}

/* The differential corpus, built for env (MACs, pass). */
/* The source of the corpus frame named name (IPv4: one per frame), in buf;
 * NULL for IPv6's shared one or no such frame. */
static inline const char *corpus_src(const struct corpus *c, const char *name,
				     char *buf, size_t len)
{
	int i;

	for (i = 0; i < c->n; i++) {
		if (strcmp(c->f[i].name, name))
			continue;
		if (get16(c->f[i].b + 12) != ETH_P_IP)
			return NULL;
		snprintf(buf, len, "%u.%u.%u.%u", c->f[i].b[26], c->f[i].b[27],
			 c->f[i].b[28], c->f[i].b[29]);
		return buf;
	}
	return NULL;
}

static inline void corpus_build(struct corpus *c, const struct corpus_env *env)
{
	static const char *const d4[] = { "10.2.0.2",  "10.20.0.5", "10.30.0.5",
					  "10.40.0.5", "10.40.1.5", "10.40.2.5",
					  "10.50.0.5" };
	static const char *const d6[] = { "fd02::2",	   "fd20::5",
					  "fd30::5",	   "fd40::5",
					  "fd40:0:0:1::5", "fd40:0:0:2::5",
					  "fd50::5" };
	static const uint8_t foreign[6] = { 2, 0, 0, 0, 0x99, 0x99 },
			     bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
			     mcast4[6] = { 1, 0, 0x5e, 0, 0, 5 },
			     mcast6[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	static const uint8_t nop4[4] = { 1, 1, 1, 1 },
			     rr[8] = { 7, 7, 4, 0, 0, 0, 0, 0 },
			     ts[12] = { 68, 12, 5, 0 },
			     ra[4] = { 148, 4, 0, 0 },
			     lsrr[8] = { 131, 7, 4, 10, 20, 0, 9, 0 },
			     badopt[4] = { 7, 40, 4, 0 };
	/*
	 * IP lengths, UDP: the smallest frame (64 bytes on the wire for IPv4;
	 * IPv6 has no room for the marker below 56), the IPv4 datagram every
	 * host takes, IPv6's minimum MTU, and the 1500- and 1514-byte frames
	 * around the usual link MTU.
	 */
	static const int sizes4[] = { 46, 576, 1000, 1280, 1400, 1486, 1500 };
	static const int sizes6[] = { 56,   576,  1000, 1280,
				      1281, 1400, 1486, 1500 };
	const int nsizes4 = sizeof(sizes4) / sizeof(sizes4[0]),
		  nsizes6 = sizeof(sizes6) / sizeof(sizes6[0]);
	char fname[64];
	int i, j, v6;

	c->n = 0;
	/* Plain traffic to every destination the configurations route. */
	for (v6 = 0; v6 < 2; v6++) {
		const char *const *d = v6 ? d6 : d4;
		const char *f = v6 ? "6" : "4";

		for (i = 0; i < 7; i++) {
			snprintf(fname, sizeof(fname), "udp%s %s", f, d[i]);
			ADD(.v6 = v6, .dst = d[i]);
			snprintf(fname, sizeof(fname), "tcp%s %s", f, d[i]);
			ADD(.v6 = v6, .dst = d[i], .proto = 6);
			snprintf(fname, sizeof(fname), "tcp-ack%s %s", f, d[i]);
			ADD(.v6 = v6, .dst = d[i], .proto = 6, .tcpflags = 0x18,
			    .len = 300);
			snprintf(fname, sizeof(fname), "echo%s %s", f, d[i]);
			ADD(.v6 = v6, .dst = d[i], .proto = v6 ? 58 : 1);
			for (j = 0; j < (v6 ? nsizes6 : nsizes4); j++) {
				int sz = v6 ? sizes6[j] : sizes4[j];

				snprintf(fname, sizeof(fname), "udp%s-%d %s", f,
					 sz, d[i]);
				ADD(.v6 = v6, .dst = d[i], .len = sz,
				    .sport = 4100 + j);
				if (v6)
					continue;
				snprintf(fname, sizeof(fname), "udp4-%d-df %s",
					 sz, d[i]);
				ADD(.dst = d[i], .len = sz, .df = 1,
				    .sport = 4200 + j);
			}
			snprintf(fname, sizeof(fname), "tcp%s-1400 %s", f,
				 d[i]);
			ADD(.v6 = v6, .dst = d[i], .proto = 6, .len = 1400,
			    .df = 1, .tcpflags = 0x10, .sport = 4300);
		}
		/* Jumbo frames (the jumbo configuration's MTU 9000; elsewhere
		 * the client's veth does not send them), to the server and to
		 * server2 behind a 1500-byte link, DF set and not for IPv4. */
		for (i = 1; i < 3; i++) {
			static const int jumbo[] = { 4000, 8192, 9000 };

			for (j = 0; j < 3; j++) {
				snprintf(fname, sizeof(fname), "udp%s-%d %s", f,
					 jumbo[j], d[i]);
				ADD(.v6 = v6, .dst = d[i], .len = jumbo[j],
				    .sport = 4400 + j);
				snprintf(fname, sizeof(fname), "tcp%s-%d %s", f,
					 jumbo[j], d[i]);
				ADD(.v6 = v6, .dst = d[i], .proto = 6,
				    .len = jumbo[j], .df = 1, .tcpflags = 0x10,
				    .sport = 4500 + j);
				if (v6)
					continue;
				snprintf(fname, sizeof(fname), "udp4-%d-df %s",
					 jumbo[j], d[i]);
				ADD(.dst = d[i], .len = jumbo[j], .df = 1,
				    .sport = 4600 + j);
			}
		}
		for (i = 0; i < 2; i++) {
			const char *dst = d[i];

			snprintf(fname, sizeof(fname), "ttl0-%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .ttl = 255);
			snprintf(fname, sizeof(fname), "ttl1-%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .ttl = 1);
			snprintf(fname, sizeof(fname), "ttl2-%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .ttl = 2);
			snprintf(fname, sizeof(fname), "ttl1-tcp%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .ttl = 1, .proto = 6);
			snprintf(fname, sizeof(fname), "ttl1-big%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .ttl = 1, .len = 1400);
		}
	}

	/* ECMP: many flows. IPv4: 8 destinations x 8 ports; IPv6 as many
	 * and 16 more that differ only in the flow label. */
	for (i = 0; i < 8; i++)
		for (j = 0; j < 8; j++) {
			char dst[32];

			snprintf(dst, sizeof(dst), "10.40.3.%d", i + 1);
			snprintf(fname, sizeof(fname), "ecmp4 %s:%d", dst,
				 6000 + j);
			ADD(.dst = dst, .sport = 6000 + j, .dport = 7000 + i,
			    .proto = j & 1 ? 6 : 17);
			snprintf(dst, sizeof(dst), "fd40:0:0:3::%d", i + 1);
			snprintf(fname, sizeof(fname), "ecmp6 %s:%d", dst,
				 6000 + j);
			ADD(.v6 = 1, .dst = dst, .sport = 6000 + j,
			    .dport = 7000 + i, .proto = j & 1 ? 6 : 17,
			    .flowlabel = 0x10000 + 16 * i + j);
		}
	for (i = 0; i < 16; i++) {
		snprintf(fname, sizeof(fname), "ecmp6-fl %x", 0x20000 + i * 7);
		ADD(.v6 = 1, .dst = "fd40:0:0:3::99",
		    .flowlabel = 0x20000 + i * 7);
	}

	/* IPv4 specials, to 10.20.0.5 unless noted. */
#define A4(n, ...)                                          \
	do {                                                \
		snprintf(fname, sizeof(fname), "v4 %s", n); \
		ADD(__VA_ARGS__);                           \
	} while (0)
	A4("opt-nop", .opt = nop4, .optlen = 4);
	A4("opt-rr", .opt = rr, .optlen = 8);
	A4("opt-ts", .opt = ts, .optlen = 12);
	A4("opt-ra", .opt = ra, .optlen = 4);
	A4("opt-lsrr", .opt = lsrr, .optlen = 8);
	A4("opt-bad", .opt = badopt, .optlen = 4);
	A4("opt-nop-1400-df", .opt = nop4, .optlen = 4, .len = 1400, .df = 1,
	   .dst = "10.40.0.5");
	A4("frag-first", .frag = 0x2000, .len = 200);
	A4("frag-mid", .frag = 0x2000 | 22, .len = 200);
	A4("frag-last", .frag = 44, .len = 200);
	A4("frag-first-1500", .frag = 0x2000, .len = 1500, .dst = "10.40.0.5");
	A4("frag-last-1500-df", .frag = 100, .len = 1500, .df = 1,
	   .dst = "10.40.0.5");
	A4("vlan", .vlans = 1);
	A4("qinq", .vlans = 2);
	A4("foreign-mac", .dmac = foreign);
	A4("bcast-mac", .dmac = bcast);
	A4("mcast-mac", .dmac = mcast4);
	A4("bad-csum", .mut = M_BADCSUM);
	A4("bad-csum-ttl1", .mut = M_BADCSUM, .ttl = 1);
	A4("trunc-ip10", .mut = M_TRUNC, .arg = 10);
	A4("trunc-ip20", .mut = M_TRUNC, .arg = 20);
	A4("trunc-udp4", .mut = M_TRUNC, .arg = 24);
	A4("trunc-tcp10", .proto = 6, .mut = M_TRUNC, .arg = 30);
	A4("len-udp4", .mut = M_SHORTLEN, .arg = 24);
	A4("len-lt-ihl", .mut = M_SHORTLEN, .arg = 16);
	A4("ihl4", .mut = M_IHL, .arg = 4);
	A4("ihl15", .mut = M_IHL, .arg = 15, .len = 40);
	A4("ver6", .mut = M_VER, .arg = 6);
	A4("trail20", .mut = M_TRAIL, .arg = 20);
	A4("trail1", .mut = M_TRAIL, .arg = 1);
	A4("trail-tcp", .proto = 6, .mut = M_TRAIL, .arg = 12);
	A4("short-len", .mut = M_SHORTLEN, .arg = 60);
	A4("long-len", .mut = M_LONG, .arg = 20);
	A4("tos10", .tos = 0x10);
	A4("ecn-ce", .tos = 0x03);
	A4("gre", .proto = 47);
	A4("proto253", .proto = 253);
	A4("src-local-rc", .src = "10.1.0.1");
	A4("src-local-rs", .src = "10.2.0.1");
	A4("src-local-rs-tcp", .src = "10.2.0.1", .proto = 6);
	A4("src-spoof-30", .src = "10.30.0.9");
	A4("src-spoof-99", .src = "10.99.0.9");
	A4("src-127", .src = "127.0.0.1");
	A4("src-0", .src = "0.0.0.0");
	A4("src-mcast", .src = "224.0.0.5");
	A4("src-bcast", .src = "255.255.255.255");
	A4("src-classe", .src = "240.0.0.1");
	A4("src-ll", .src = "169.254.1.1");
	A4("src-dirbcast", .src = "10.2.0.255"); /* a broadcast route back */
	A4("src-anyip", .src = "10.60.0.9"); /* local-route-src's AnyIP */
	A4("dst-127", .dst = "127.0.0.1");
	A4("dst-0", .dst = "0.0.0.1");
	A4("dst-mcast", .dst = "224.0.0.5");
	A4("dst-mcast-glob", .dst = "239.1.1.1");
	A4("dst-bcast", .dst = "255.255.255.255");
	A4("dst-dirbcast", .dst = "10.2.0.255");
	A4("dst-net", .dst = "10.2.0.0");
	A4("dst-classe", .dst = "240.0.0.1");
	A4("dst-ll", .dst = "169.254.1.1");
	A4("to-router-rc", .dst = "10.1.0.1");
	A4("to-router-rs", .dst = "10.2.0.1");
	A4("echo-router", .dst = "10.1.0.1", .proto = 1);
	A4("tcp-router", .dst = "10.1.0.1", .proto = 6);
	A4("to-client", .dst = "10.1.0.2");
	A4("to-client-net", .dst = "10.1.0.7");

	/* IPv6 specials, to fd20::5 unless noted. */
#define A6(n, ...)                                          \
	do {                                                \
		snprintf(fname, sizeof(fname), "v6 %s", n); \
		ADD(.v6 = 1, __VA_ARGS__);                  \
	} while (0)
	A6("hbh", .ext = { 0 }, .next = 1);
	A6("dstopt", .ext = { 60 }, .next = 1);
	A6("rh0-0", .ext = { 43 }, .next = 1);
	A6("rh0-1", .ext = { 43 }, .next = 1, .rh_segs = 1);
	A6("frag-first", .ext = { 44 }, .next = 1, .frag6 = 1, .len = 200);
	A6("frag-last", .ext = { 44 }, .next = 1, .frag6 = 20 << 3, .len = 200);
	A6("frag-atomic", .ext = { 44 }, .next = 1, .frag6 = 0);
	A6("hbh-dst-frag", .ext = { 0, 60, 44 }, .next = 3, .frag6 = 1);
	A6("dst-dst", .ext = { 60, 60 }, .next = 2);
	A6("hbh-1400", .ext = { 0 }, .next = 1, .len = 1400, .dst = "fd40::5");
	A6("vlan", .vlans = 1);
	A6("qinq", .vlans = 2);
	A6("foreign-mac", .dmac = foreign);
	A6("bcast-mac", .dmac = bcast);
	A6("mcast-mac", .dmac = mcast6);
	A6("trunc-ip30", .mut = M_TRUNC, .arg = 30);
	A6("trunc-ip40", .mut = M_TRUNC, .arg = 40);
	A6("trunc-udp4", .mut = M_TRUNC, .arg = 44);
	A6("trunc-tcp10", .proto = 6, .mut = M_TRUNC, .arg = 50);
	A6("trunc-ext", .ext = { 60 }, .next = 1, .mut = M_TRUNC, .arg = 44);
	A6("plen-udp4", .mut = M_SHORTLEN, .arg = 4);
	A6("plen0", .mut = M_SHORTLEN, .arg = 0);
	A6("ver4", .mut = M_VER, .arg = 4);
	A6("trail20", .mut = M_TRAIL, .arg = 20);
	A6("trail1", .mut = M_TRAIL, .arg = 1);
	A6("short-len", .mut = M_SHORTLEN, .arg = 40);
	A6("long-len", .mut = M_LONG, .arg = 20);
	A6("tclass10", .tos = 0x10);
	A6("flowlabel", .flowlabel = 0xabcde);
	A6("nonext", .proto = 59);
	A6("proto253", .proto = 253);
	A6("src-local-rc", .src = "fd01::1");
	A6("src-local-rs", .src = "fd02::1");
	A6("src-spoof-30", .src = "fd30::9");
	A6("src-spoof-99", .src = "fd99::9");
	A6("src-lo", .src = "::1");
	A6("src-any", .src = "::");
	A6("src-mcast", .src = "ff02::1");
	A6("src-ll", .src = "fe80::1");
	A6("src-ll-tcp", .src = "fe80::1", .proto = 6);
	A6("src-mapped", .src = "::ffff:10.1.0.2");
	A6("dst-lo", .dst = "::1");
	A6("dst-any", .dst = "::");
	A6("dst-ll", .dst = "fe80::1");
	A6("dst-mcast-ll", .dst = "ff02::1");
	A6("dst-mcast-glob", .dst = "ff0e::1");
	A6("dst-anycast", .dst = "fd02::");
	A6("dst-mapped", .dst = "::ffff:10.2.0.2");
	A6("dst-site", .dst = "fec0::1");
	A6("to-router-rc", .dst = "fd01::1");
	A6("to-router-rs", .dst = "fd02::1");
	A6("echo-router", .dst = "fd01::1", .proto = 58);
	A6("to-client", .dst = "fd01::2");
	A6("to-client-net", .dst = "fd01::7");
#undef A4
#undef A6
	if (env->offload)
		corpus_offload(c);
	/* Last, plain TCP flows to the server and behind it closed: a FIN on
	 * tcp-ack's flow (IPv6: the SYN's too), an RST on tcp-1400's. What
	 * follows them (the next pass) meets a connection closing or closed. */
	for (v6 = 0; v6 < 2; v6++) {
		for (i = 0; i < 2; i++) {
			const char *dst = v6 ? d6[i] : d4[i];
			const char *f = v6 ? "6" : "4";
			const char *from;
			char src[20];

			/* The flows' own sources (IPv4: one per frame). */
			snprintf(fname, sizeof(fname), "tcp-ack%s %s", f, dst);
			from = corpus_src(c, fname, src, sizeof(src));
			snprintf(fname, sizeof(fname), "tcp-fin%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .src = from, .proto = 6,
			    .tcpflags = 0x11);
			snprintf(fname, sizeof(fname), "tcp%s-1400 %s", f, dst);
			from = corpus_src(c, fname, src, sizeof(src));
			snprintf(fname, sizeof(fname), "tcp-rst%s %s", f, dst);
			ADD(.v6 = v6, .dst = dst, .src = from, .proto = 6,
			    .tcpflags = 0x14, .sport = 4300);
		}
	}
}

#undef ADD

/* The corpus frame whose IPv4 fragment this is, by its ID; -1 if none. */
static inline int frame_fragment_of(const uint8_t *b, size_t len, int *pass)
{
	const uint8_t *ip = b + 14;
	int id;

	if (len < 14 + 20 || get16(b + 12) != ETH_P_IP ||
	    !(get16(ip + 6) & 0x1fff))
		return -1;
	id = get16(ip + 4);
	*pass = id / 0x1000 - 1;
	return *pass >= 0 && *pass < 8 ? id % 0x1000 : -1;
}

/* The frame a marker names: its pass and index; -1 when none. */
static inline int frame_marker(const uint8_t *b, size_t len, int *pass)
{
	const uint8_t *m = frame_marker_at(b, len);

	if (!m)
		return -1;
	*pass = m[3];
	return m[4] << 24 | m[5] << 16 | m[6] << 8 | m[7];
}

static inline int is_router_v4(const uint8_t *a)
{
	return a[0] == 10 && a[1] >= 1 && a[1] <= 3 && a[2] == 0 && a[3] == 1;
}

/*
 * Frames the hosts make on their own (ARP, neighbour discovery, MLD, router
 * solicitations): not part of the comparison. Returns 1 for those.
 */
static inline int frame_is_noise(const uint8_t *b, size_t len)
{
	uint16_t type;
	size_t off = 12;

	if (len < 14)
		return 0;
	type = get16(b + 12);
	if (type == 0x0806)
		return 1;
	if (type == ETH_P_IP && len >= 14 + 20 && b[14 + 9] == 2) /* IGMP */
		return 1;
	if (type != ETH_P_IPV6 || len < off + 2 + 40 + 4)
		return 0;
	off += 2;
	{
		uint8_t nh = b[off + 6];
		size_t l4 = off + 40;

		if (nh == 0 && len >= l4 + 8) { /* MLD rides hop-by-hop */
			nh = b[l4];
			l4 += 8 * (b[l4 + 1] + 1);
		}
		if (nh != 58 || len < l4 + 1)
			return 0;
		return (b[l4] >= 130 && b[l4] <= 137) || b[l4] == 143;
	}
}

/*
 * Zeroes what the kernel picks at random in the packets it makes itself:
 * the IPv4 ID (and so the header checksum) of ICMP errors and replies and
 * of anything the router sends from its own addresses.
 */
static inline void frame_normalize(uint8_t *b, size_t len)
{
	uint8_t *ip = b + 14;
	size_t hl, o;

	if (len < 14 + 20 || get16(b + 12) != ETH_P_IP || (ip[0] >> 4) != 4)
		return;
	hl = 4 * (ip[0] & 0xf);
	/* The timestamp option holds the router's clock. */
	for (o = 20; o + 2 <= hl && 14 + hl <= len && ip[o];
	     o += ip[o] == 1 ? 1 : ip[o + 1]) {
		if (ip[o] == 1)
			continue;
		if (ip[o + 1] < 2)
			break;
		if (ip[o] == 68 && o + ip[o + 1] <= hl) {
			memset(ip + o + 4, 0, ip[o + 1] - 4);
			put16(ip + 10, 0);
		}
	}
	if ((ip[9] == 1 && len >= 14 + hl + 1 && ip[hl] != 8) ||
	    is_router_v4(ip + 12)) {
		put16(ip + 4, 0);
		put16(ip + 10, 0);
	}
}

/* Enters namespace name ("" or "-": stays); returns 0 or -errno. */
static inline int netns_enter(const char *name)
{
	char path[256];
	int fd, err = 0;

	if (!name[0] || !strcmp(name, "-"))
		return 0;
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		err = -errno;
	close(fd);
	return err;
}

#define PACKET_SEND 0
#define PACKET_CAPTURE 1
#define PACKET_SEND_VNET 2 /* each frame after a struct virtio_net_hdr */

/*
 * A raw packet socket on dev inside namespace ns (the caller's namespace is
 * restored); for capture it sees every frame received, none sent, and tells
 * (PACKET_AUXDATA) which have a checksum still to finish.
 */
static inline int packet_socket(const char *ns, const char *dev, int capture)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int self, fd = -1, one = 1, buf = 16 << 20, err;

	self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (self < 0)
		return -errno;
	err = netns_enter(ns);
	if (err) {
		fprintf(stderr, "frames: cannot enter netns %s: %s\n", ns,
			strerror(-err));
		goto close_self;
	}
	sll.sll_ifindex = if_nametoindex(dev);
	sll.sll_protocol = htons(capture == PACKET_CAPTURE ? ETH_P_ALL : 0);
	if (!sll.sll_ifindex) {
		err = -ENODEV;
		fprintf(stderr, "frames: no device %s in netns %s\n", dev, ns);
		goto restore;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC,
		    capture == PACKET_CAPTURE ? htons(ETH_P_ALL) : 0);
	if (fd < 0) {
		err = -errno;
		goto restore;
	}
	if (capture == PACKET_CAPTURE &&
	    (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
			sizeof(one)) ||
	     setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) ||
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))) {
		err = -errno;
		goto close_fd;
	}
	if (capture == PACKET_SEND_VNET &&
	    setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one))) {
		err = -errno;
		goto close_fd;
	}
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		goto close_fd;
	}
	goto restore;
close_fd:
	close(fd);
	fd = -1;
restore:
	if (setns(self, CLONE_NEWNET) && !err)
		err = -errno;
close_self:
	close(self);
	return err ? err : fd;
}

/* Reads and discards whatever waits on a capture socket. */
static inline void packet_drain(int fd)
{
	uint8_t buf[FRAME_MAX];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		;
}

#endif /* SILO_TEST_FRAMES_H */
