/* SPDX-License-Identifier: GPL-2.0 */
/* Builds test packets byte by byte: Ethernet, VLAN, IPv4/IPv6, TCP/UDP. */
#ifndef SILO_TEST_PKT_H
#define SILO_TEST_PKT_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>

/* A jumbo frame (MTU 9000) and some: more than a page, multi-buffer. */
#define PKT_MAX 9216

struct pkt_spec {
	uint8_t dmac[6];
	uint8_t smac[6];
	int nr_vlans; /* outer 802.1ad, inner 802.1Q */
	uint16_t ethertype; /* 0: from family */
	int family; /* AF_INET, AF_INET6 */
	uint8_t src[16];
	uint8_t dst[16];
	uint8_t ttl; /* 0: 64 */
	uint8_t tos;
	uint32_t flowlabel; /* IPv6, 20 bits */
	uint8_t proto; /* IPPROTO_UDP (default), IPPROTO_TCP, IPPROTO_ICMP */
	uint16_t sport, dport;
	size_t payload;
	int ip_opt_words; /* IPv4 options, in 4-byte NOP words */
	uint16_t frag_off; /* IPv4 flags/offset, host order */
	int nr_exthdrs; /* IPv6 extension headers before L4 */
	uint8_t exthdr[10];
};

static inline uint16_t pkt_csum(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return htons(~sum & 0xFFFF);
}

static inline void pkt_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xFF;
}

/* Writes the packet into buf (PKT_MAX bytes); returns its length. */
static inline size_t pkt_build(uint8_t *buf, const struct pkt_spec *s)
{
	uint8_t proto = s->proto ? s->proto : IPPROTO_UDP;
	size_t l4len, off = 0, l3, i;
	uint16_t ethertype;
	uint8_t *l4;

	memset(buf, 0, PKT_MAX);
	memcpy(buf, s->dmac, 6);
	memcpy(buf + 6, s->smac, 6);
	off = 12;
	for (i = 0; i < (size_t)s->nr_vlans; i++) {
		pkt_put16(buf + off, i == 0 && s->nr_vlans > 1 ? ETH_P_8021AD :
								 ETH_P_8021Q);
		pkt_put16(buf + off + 2, 100 + i); /* TCI: VLAN id */
		off += 4;
	}
	ethertype = s->ethertype	  ? s->ethertype :
		    s->family == AF_INET6 ? ETH_P_IPV6 :
					    ETH_P_IP;
	pkt_put16(buf + off, ethertype);
	off += 2;
	l3 = off;

	l4len = proto == IPPROTO_TCP ? 20 : 8;
	l4len += s->payload;
	if (s->family == AF_INET6) {
		uint8_t next = proto;
		size_t ext = 8 * s->nr_exthdrs;

		buf[l3] = 0x60 | (s->tos >> 4);
		buf[l3 + 1] = (s->tos & 0xF) << 4 | (s->flowlabel >> 16 & 0xF);
		pkt_put16(buf + l3 + 2, s->flowlabel & 0xFFFF);
		pkt_put16(buf + l3 + 4, ext + l4len);
		buf[l3 + 6] = s->nr_exthdrs ? s->exthdr[0] : proto;
		buf[l3 + 7] = s->ttl ? s->ttl : 64;
		memcpy(buf + l3 + 8, s->src, 16);
		memcpy(buf + l3 + 24, s->dst, 16);
		off = l3 + 40;
		for (i = 0; i < (size_t)s->nr_exthdrs; i++) {
			next = i + 1 < (size_t)s->nr_exthdrs ?
				       s->exthdr[i + 1] :
				       proto;
			buf[off] = next;
			buf[off + 1] = 0; /* 8 bytes */
			off += 8;
		}
	} else {
		size_t ihl = 20 + 4 * s->ip_opt_words;

		buf[l3] = 0x40 | (ihl / 4);
		buf[l3 + 1] = s->tos;
		pkt_put16(buf + l3 + 2, ihl + l4len);
		pkt_put16(buf + l3 + 4, 0x1234);
		pkt_put16(buf + l3 + 6, s->frag_off);
		buf[l3 + 8] = s->ttl ? s->ttl : 64;
		buf[l3 + 9] = proto;
		memcpy(buf + l3 + 12, s->src, 4);
		memcpy(buf + l3 + 16, s->dst, 4);
		memset(buf + l3 + 20, 1, ihl - 20); /* NOP options */
		memcpy(buf + l3 + 10, (uint16_t[]){ pkt_csum(buf + l3, ihl) },
		       2);
		off = l3 + ihl;
	}
	l4 = buf + off;
	pkt_put16(l4, s->sport ? s->sport : 4000);
	pkt_put16(l4 + 2, s->dport ? s->dport : 5000);
	if (proto == IPPROTO_UDP)
		pkt_put16(l4 + 4, l4len);
	else if (proto == IPPROTO_TCP)
		l4[12] = 5 << 4;
	off += l4len;
	for (i = 0; i < s->payload; i++)
		buf[off - s->payload + i] = i & 0xFF;
	return off;
}

/* Offset of the IP header: after Ethernet and any VLAN tags. */
static inline size_t pkt_l3_off(const struct pkt_spec *s)
{
	return 14 + 4 * s->nr_vlans;
}

/*
 * The TCP or UDP header's offset in a packet pkt_build made, its length to
 * the end, and the sum of its pseudo header (addresses, length, protocol),
 * folded to 16 bits: 0, or -1 for neither TCP nor UDP.
 */
static inline int pkt_l4_pseudo(size_t len, const struct pkt_spec *s,
				size_t *l4, size_t *l4len, uint32_t *sum)
{
	uint8_t proto = s->proto ? s->proto : IPPROTO_UDP, ph[40];
	size_t l3 = pkt_l3_off(s), plen, i;

	if (proto != IPPROTO_UDP && proto != IPPROTO_TCP)
		return -1;
	memset(ph, 0, sizeof(ph));
	if (s->family == AF_INET6) {
		*l4 = l3 + 40 + 8 * s->nr_exthdrs;
		*l4len = len - *l4;
		memcpy(ph, s->src, 16);
		memcpy(ph + 16, s->dst, 16);
		ph[34] = *l4len >> 8;
		ph[35] = *l4len & 0xFF;
		ph[39] = proto;
		plen = 40;
	} else {
		*l4 = l3 + 20 + 4 * s->ip_opt_words;
		*l4len = len - *l4;
		memcpy(ph, s->src, 4);
		memcpy(ph + 4, s->dst, 4);
		ph[9] = proto;
		ph[10] = *l4len >> 8;
		ph[11] = *l4len & 0xFF;
		plen = 12;
	}
	*sum = 0;
	for (i = 0; i < plen; i += 2)
		*sum += ph[i] << 8 | ph[i + 1];
	while (*sum >> 16)
		*sum = (*sum & 0xFFFF) + (*sum >> 16);
	return 0;
}

/* Where the checksum is in the L4 header. */
static inline size_t pkt_l4_check_off(const struct pkt_spec *s)
{
	return (s->proto ? s->proto : IPPROTO_UDP) == IPPROTO_UDP ? 6 : 16;
}

/* sum plus the L4 bytes at buf + l4, folded to 16 bits. */
static inline uint32_t pkt_l4_sum(const uint8_t *buf, size_t l4, size_t l4len,
				  uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < l4len; i += 2)
		sum += buf[l4 + i] << 8 | buf[l4 + i + 1];
	if (l4len & 1)
		sum += buf[l4 + l4len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return sum;
}

/* Fills in the TCP or UDP checksum of a packet pkt_build made (which
 * leaves it 0), as a sender that computes it in full would. */
static inline void pkt_l4_csum(uint8_t *buf, size_t len,
			       const struct pkt_spec *s)
{
	uint8_t proto = s->proto ? s->proto : IPPROTO_UDP;
	size_t l4, l4len, at;
	uint32_t sum;
	uint16_t c;

	if (pkt_l4_pseudo(len, s, &l4, &l4len, &sum))
		return;
	at = l4 + pkt_l4_check_off(s);
	memset(buf + at, 0, 2);
	c = ~pkt_l4_sum(buf, l4, l4len, sum) & 0xFFFF;
	if (!c && proto == IPPROTO_UDP)
		c = 0xFFFF;
	pkt_put16(buf + at, c);
}

/* The checksum as a sender on this host leaves it to offload
 * (CHECKSUM_PARTIAL): the pseudo header's folded sum, which the device
 * that sends the packet finishes. */
static inline void pkt_l4_csum_partial(uint8_t *buf, size_t len,
				       const struct pkt_spec *s)
{
	size_t l4, l4len;
	uint32_t sum;

	if (!pkt_l4_pseudo(len, s, &l4, &l4len, &sum))
		pkt_put16(buf + l4 + pkt_l4_check_off(s), sum);
}

/* A checksum left to offload finished as the device that sends the packet
 * does (skb_checksum_help(), a NIC): the TCP or UDP packet summed with the
 * field as it is, complemented, 0 sent as all ones. A field finished
 * already comes out wrong, as on the wire. */
static inline void pkt_l4_csum_device(uint8_t *buf, size_t len,
				      const struct pkt_spec *s)
{
	size_t l4, l4len;
	uint32_t sum;
	uint16_t c;

	if (pkt_l4_pseudo(len, s, &l4, &l4len, &sum))
		return;
	c = ~pkt_l4_sum(buf, l4, l4len, 0) & 0xFFFF;
	pkt_put16(buf + l4 + pkt_l4_check_off(s), c ? c : 0xFFFF);
}

/* Is the TCP or UDP checksum of a packet of s's shape right? (IPv4 UDP's
 * 0, none, is.) */
static inline int pkt_l4_csum_ok(const uint8_t *buf, size_t len,
				 const struct pkt_spec *s)
{
	uint8_t proto = s->proto ? s->proto : IPPROTO_UDP;
	size_t l4, l4len;
	uint32_t sum;

	if (pkt_l4_pseudo(len, s, &l4, &l4len, &sum))
		return 0;
	if (s->family == AF_INET && proto == IPPROTO_UDP && !buf[l4 + 6] &&
	    !buf[l4 + 7])
		return 1;
	return pkt_l4_sum(buf, l4, l4len, sum) == 0xFFFF;
}

#endif /* SILO_TEST_PKT_H */
