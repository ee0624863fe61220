/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The traffic source of silo's tests, benchmarks and lab, on every kernel
 * (a kernel may refuse BPF_PROG_RUN's live frames, which they used): frames
 * seeded through an AF_PACKET socket, then kept going round between XDP
 * programs on veths (bpf/tests/test_source.bpf.c), so that they reach the
 * device under test as XDP frames, with no skb and no copy. Three shapes:
 *
 *   SOURCE_RING    for a forwarder: the frames go through it and come back.
 *                  It forwards out of a veth whose peer (back) runs
 *                  src_ring, which counts each frame, writes its headers
 *                  anew and sends it in again through entry (whose peer is
 *                  the forwarder's ingress). Seeded once, a ring turns on
 *                  the seeding CPU until source_drain(): each lap is one
 *                  packet forwarded, and the forwarder's work, the veths'
 *                  and the ring's own all run there.
 *   SOURCE_PUMP    for a device that keeps what it gets (a local socket):
 *                  a loop of two veths made here (LOOP-a, LOOP-b), in which
 *                  frames go round and each turn sends a copy out of entry,
 *                  while credit allows; source_credit() gives more, and
 *                  seeds the loop again where frames left it for want of
 *                  credit. It runs on the seeding CPU too.
 *   SOURCE_PACKET  no programs: source_send() sends frames straight out of
 *                  entry through the AF_PACKET socket (sendmmsg, qdisc
 *                  bypass). Each becomes an skb, which the receiving veth
 *                  copies into a page before its XDP program sees it.
 *
 * Frames are IPv6/UDP without VLAN tags (source_abi.h), of up to
 * SOURCE_CLASSES classes, one template each (a size, a port); the source
 * address's last 32 bits take base .. base + nsrc - 1 in turn, and a
 * sequence number may go into each frame (seq_off, counting the frames
 * sent from 0), the UDP checksum made to match. A ring takes a frame's
 * class from its length, so the classes' lengths differ; a pump and
 * source_send() take the pattern's classes in turn, and a pump's frames
 * change class as they go round, so its classes are of one length and
 * carry the same bytes past the template.
 *
 * The devices are those of the caller's namespace at source_open(), which
 * also makes a pump's loop there; source_close() detaches what it attached
 * and deletes the loop, from whatever namespace it is called. Functions
 * return 0 or a negative errno and say what went wrong on stderr.
 */
#ifndef SILO_SOURCE_H
#define SILO_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "source_abi.h"

enum source_shape { SOURCE_RING, SOURCE_PUMP, SOURCE_PACKET };

struct source_opts {
	enum source_shape shape;
	const char *entry; /* the veth whose peer receives the frames */
	const char *back; /* ring: the veth whose peer the forwarder sends to */
	__u8 back_hlim; /* ring: a frame's hop limit, forwarded once */
	const char *loop; /* pump: the loop's name, at most 12 characters */
	int frames; /* ring, pump: frames going round (0: 128, pump 32) */
	int cpu; /* where seeds and sends run (-1: the caller's CPU) */
	__u32 seq_off; /* even, >= SOURCE_SEQ_MIN: a sequence number; 0: none */
};

/* A class: its frame for source word base, sequence number 0; partial:
 * its UDP checksum left to offload, as a sender on this host leaves it
 * (the pseudo header's sum in the field). */
struct source_class {
	const uint8_t *frame;
	size_t len;
	bool partial;
};

struct source_counts {
	__u64 sent; /* frames sent out of entry (ring: forwarded ones again) */
	__u64 back; /* ring: frames that came back forwarded */
	__u64 other; /* frames that were not the source's, dropped */
	__u64 retired; /* frames that left the round */
	__u64 refused; /* frames sent that entry's peer did not take */
	__u64 seeded; /* frames put in through AF_PACKET (source_send's too) */
};

struct source;

int source_open(struct source **src, const struct source_opts *opts);
void source_close(struct source *src);
const char *source_shape_name(enum source_shape shape);

/*
 * The classes (n <= SOURCE_CLASSES; each frame at least SOURCE_HDR bytes,
 * the same first 16 bytes in all), the pattern of classes the frames take
 * in turn (npat <= SOURCE_PAT_MAX) and the sources. A ring or a pump
 * takes them at its next seeds; they reset where the frames are.
 */
int source_set_classes(struct source *src, const struct source_class *cls,
		       int n);
int source_set_pattern(struct source *src, const __u8 *pat, int npat,
		       __u32 base, __u32 nsrc);

/* The frame of class c, source word base + k, sequence number seq, as the
 * source sends it: its length, or 0 for no such class. */
size_t source_frame(const struct source *src, uint8_t *buf, int c, __u32 k,
		    __u32 seq);

/*
 * Through BPF_PROG_TEST_RUN (no live frames), that the programs write
 * exactly the frames they should for every class of the pattern, over junk
 * headers (-EPROTO where not), and that this kernel can run the shape
 * (-EOPNOTSUPP where not: a pump's broadcast). Leaves the source's state
 * as it was.
 */
int source_check(struct source *src);

/*
 * Whether an error of source_open() or source_check() says that the
 * source cannot run here at all (this kernel, or a policy that refuses
 * AF_PACKET or BPF), rather than that it is wrong: a test skips then, a
 * benchmark says so.
 */
static inline bool source_cannot_run(int err)
{
	return err == -EOPNOTSUPP || err == -EPERM || err == -EACCES;
}

/* Ring: puts its frames in (the pattern's classes, in turn). */
int source_seed(struct source *src);
/* Pump: n more copies may go out; the loop is seeded again where needed. */
int source_credit(struct source *src, __u64 n);
/* Packet: sends n frames of the pattern out of entry; the number sent. */
long source_send(struct source *src, long n);

/*
 * Ring, pump: stops the round and waits until every frame has left it (or
 * nothing moved for timeout_ms); *lost (may be NULL): frames that never
 * came back. The source may be seeded again afterwards.
 */
int source_drain(struct source *src, int timeout_ms, __u64 *lost);

void source_counts(const struct source *src, struct source_counts *c);

#endif /* SILO_SOURCE_H */
