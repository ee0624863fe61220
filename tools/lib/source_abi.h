/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The traffic source's frames, as its XDP programs
 * (bpf/tests/test_source.bpf.c) and tools/lib/source.c both see them:
 * IPv6/UDP without VLAN tags. Constants only, so that a BPF program and
 * user space can both include it.
 */
#ifndef SILO_SOURCE_ABI_H
#define SILO_SOURCE_ABI_H

/* Bytes written from a class's template into every frame sent: Ethernet,
 * IPv6 and UDP headers and the first 2 bytes of payload. */
#define SOURCE_HDR_WORDS 8
#define SOURCE_HDR (SOURCE_HDR_WORDS * 8)
#define SOURCE_CLASSES 16 /* templates */
#define SOURCE_PAT_MAX 16 /* the pump's classes in turn */

#define SOURCE_HLIM_OFF (14 + 7)
#define SOURCE_ADDR_OFF (14 + 8 + 12) /* the source address's last 32 bits */
#define SOURCE_CSUM_OFF (14 + 40 + 6) /* the UDP checksum */
#define SOURCE_SEQ_MIN SOURCE_HDR /* a sequence number goes past the template */
#define SOURCE_SEQ_MAX 1024

#endif
