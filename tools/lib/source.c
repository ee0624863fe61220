// SPDX-License-Identifier: GPL-2.0
/* The traffic source of the tests, benchmarks and lab: see source.h. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "test.h"
#include "pkt.h"
#include "source.h"
#include "test_source.skel.h"

#define SEND_BATCH 64
#define RING_FRAMES 128 /* two NAPI batches: no veth ring (256) fills */
#define PUMP_FRAMES 32
#define LOOP_NAME_MAX 12 /* LOOP-a within IFNAMSIZ */

struct source {
	enum source_shape shape;
	struct test_source *skel;
	struct bpf_link *links[2];
	int ns; /* the namespace of the devices */
	int tx; /* AF_PACKET: seeds, source_send() */
	__u32 entry_ifindex;
	char entry[IFNAMSIZ];
	__u64 taken0; /* the entry's XDP transmits at open */
	int frames, cpu;
	__u32 seq_off;
	char loop[LOOP_NAME_MAX + 1];
	bool loop_made;
	/* The classes' frames (for source word base, sequence number 0),
	 * and the pattern, as user space keeps them. */
	int ncls;
	uint8_t *cls_frame[SOURCE_CLASSES];
	size_t cls_len[SOURCE_CLASSES];
	__u32 cls_sum[SOURCE_CLASSES]; /* frame_sum(), as the program's */
	bool cls_partial[SOURCE_CLASSES]; /* checksum left to offload */
	__u8 pat[SOURCE_PAT_MAX];
	int npat;
	__u32 base, nsrc;
	/* source_send()'s own turn through the pattern and the sources. */
	__u32 k, j;
	__u64 seq;
	__u64 seeded; /* frames put in, AF_PACKET's sends too */
	__u64 written_off; /* frames of a drained round that never came back */
	/* send_frames()' buffers, and the class each holds (-1: none). */
	uint8_t *buf;
	int buf_cls[SEND_BATCH];
};

static const char *const shape_names[] = { "ring", "pump", "af_packet" };

const char *source_shape_name(enum source_shape shape)
{
	return shape <= SOURCE_PACKET ? shape_names[shape] : "?";
}

/* The raw one's complement sum of a frame's UDP checksum, as the program
 * adds to it (16-bit words as memory holds them), its source word and
 * sequence number left out: the pseudo-header, the UDP header (its
 * checksum 0) and the payload; or (partial) the pseudo header's alone, the
 * field's value where the sender leaves the checksum to offload. */
static __u32 frame_sum(const uint8_t *frame, size_t len, __u32 seq_off,
		       bool partial)
{
	const uint8_t *ip6 = frame + ETH_HLEN, *udp = ip6 + 40;
	size_t ulen = len - ETH_HLEN - 40, i;
	__u32 sum = 0;
	__u16 w;

	for (i = 8; i < 40; i += 2) {
		if (ETH_HLEN + i >= SOURCE_ADDR_OFF &&
		    ETH_HLEN + i < SOURCE_ADDR_OFF + 4)
			continue;
		memcpy(&w, ip6 + i, 2);
		sum += w;
	}
	sum += htons(ulen) + htons(IPPROTO_UDP);
	for (i = 0; !partial && i < ulen; i += 2) {
		size_t off = ETH_HLEN + 40 + i;

		if (i == 6 || (seq_off && off >= seq_off && off < seq_off + 4))
			continue;
		w = 0;
		memcpy(&w, udp + i, i + 1 < ulen ? 2 : 1);
		sum += w;
	}
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return sum;
}

/* Class c's frame in buf gets its source word, number and checksum, from
 * the class's sum: a few stores, whatever the frame's size. */
static void stamp(const struct source *src, uint8_t *buf, int c, __u32 k,
		  __u32 seq)
{
	__u32 word = htonl(src->base + k), sum = src->cls_sum[c];
	__u16 csum;

	memcpy(buf + SOURCE_ADDR_OFF, &word, 4);
	sum += (word & 0xFFFF) + (word >> 16);
	if (src->seq_off) {
		seq = htonl(seq);
		memcpy(buf + src->seq_off, &seq, 4);
		sum += (seq & 0xFFFF) + (seq >> 16);
	}
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	/* Left to offload: the pseudo header's sum itself, the sequence
	 * number no part of it. */
	if (src->cls_partial[c]) {
		sum = src->cls_sum[c] + (word & 0xFFFF) + (word >> 16);
		while (sum >> 16)
			sum = (sum & 0xFFFF) + (sum >> 16);
		csum = sum;
	} else {
		csum = ~sum & 0xFFFF;
		if (!csum)
			csum = 0xFFFF;
	}
	memcpy(buf + SOURCE_CSUM_OFF, &csum, 2);
}

size_t source_frame(const struct source *src, uint8_t *buf, int c, __u32 k,
		    __u32 seq)
{
	if (c < 0 || c >= src->ncls)
		return 0;
	memcpy(buf, src->cls_frame[c], src->cls_len[c]);
	stamp(src, buf, c, k, seq);
	return src->cls_len[c];
}

/* Runs fn with the caller's thread on the source's CPU, then puts its
 * CPUs back. */
static long on_cpu(struct source *src, long (*fn)(struct source *, long),
		   long arg)
{
	cpu_set_t was, want;
	long ret;

	if (src->cpu < 0)
		return fn(src, arg);
	if (sched_getaffinity(0, sizeof(was), &was))
		return -errno;
	CPU_ZERO(&want);
	CPU_SET(src->cpu, &want);
	if (sched_setaffinity(0, sizeof(want), &want)) {
		ret = -errno;
		fprintf(stderr, "source: CPU %d: %s\n", src->cpu,
			strerror(-ret));
		return ret;
	}
	ret = fn(src, arg);
	sched_setaffinity(0, sizeof(was), &was);
	return ret;
}

/* Sends n frames of the pattern out of the socket's device, in batches;
 * the number sent, or -errno when none could be. */
static long send_frames(struct source *src, long n)
{
	struct mmsghdr msg[SEND_BATCH];
	struct iovec iov[SEND_BATCH];
	long sent = 0;
	int i, b, r, c;

	if (!src->buf) {
		src->buf = malloc(SEND_BATCH * (size_t)PKT_MAX);
		if (!src->buf)
			return -ENOMEM;
	}
	memset(msg, 0, sizeof(msg));
	while (sent < n) {
		b = n - sent < SEND_BATCH ? n - sent : SEND_BATCH;
		for (i = 0; i < b; i++) {
			uint8_t *buf = src->buf + i * (size_t)PKT_MAX;

			c = src->pat[src->j < (__u32)src->npat ? src->j : 0];
			src->j = (src->j + 1) % src->npat;
			/* The class's bytes once; then only the stamp. */
			if (src->buf_cls[i] != c) {
				memcpy(buf, src->cls_frame[c], src->cls_len[c]);
				src->buf_cls[i] = c;
			}
			stamp(src, buf, c, src->k, src->seq + i);
			src->k = (src->k + 1) % src->nsrc;
			iov[i].iov_base = buf;
			iov[i].iov_len = src->cls_len[c];
			msg[i].msg_hdr.msg_iov = &iov[i];
			msg[i].msg_hdr.msg_iovlen = 1;
		}
		r = sendmmsg(src->tx, msg, b, 0);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (sent)
				break;
			r = r < 0 ? -errno : -EIO;
			fprintf(stderr, "source: AF_PACKET send: %s\n",
				strerror(-r));
			return r;
		}
		sent += r;
		src->seq += r;
	}
	src->seeded += sent;
	return sent;
}

static int entry_taken(const struct source *src, __u64 *taken);

static int packet_socket(struct source *src, const char *dev)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int one = 1;

	sll.sll_ifindex = if_nametoindex(dev);
	if (!sll.sll_ifindex) {
		fprintf(stderr, "source: no device %s here\n", dev);
		return -ENODEV;
	}
	src->tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (src->tx < 0) {
		fprintf(stderr,
			"source: AF_PACKET socket: %s (it needs CAP_NET_RAW)\n",
			strerror(errno));
		return -errno;
	}
	/* Straight to the veth, as a NIC's queue would take it. */
	if (setsockopt(src->tx, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
		       sizeof(one)) ||
	    bind(src->tx, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, "source: AF_PACKET on %s: %s\n", dev,
			strerror(errno));
		return -errno;
	}
	return 0;
}

static int attach(struct source *src, int i, struct bpf_program *prog,
		  const char *dev)
{
	int ifindex = if_nametoindex(dev), err;

	if (!ifindex) {
		fprintf(stderr, "source: no device %s here\n", dev);
		return -ENODEV;
	}
	src->links[i] = bpf_program__attach_xdp(prog, ifindex);
	if (!src->links[i]) {
		err = -errno;
		fprintf(stderr, "source: XDP on %s: %s\n", dev, strerror(-err));
		return err;
	}
	return 0;
}

/* The pump's loop: LOOP-a (src_pump) and LOOP-b (src_bounce, the seeds'
 * way in), and the devmap its frames go out by: the loop and the entry. */
static int pump_up(struct source *src)
{
	int fd = bpf_map__fd(src->skel->maps.src_out), err;
	char a[IFNAMSIZ], b[IFNAMSIZ];
	__u32 k;

	snprintf(a, sizeof(a), "%s-a", src->loop);
	snprintf(b, sizeof(b), "%s-b", src->loop);
	/* No IPv6 on the loop: its own chatter would only be dropped. */
	if (sh("ip link del %1$s 2>/dev/null; ip link add %1$s type veth peer name %2$s && "
	       "for d in %1$s %2$s; do echo 1 >/proc/sys/net/ipv6/conf/$d/disable_ipv6 2>/dev/null; "
	       "ip link set $d up || exit 1; done",
	       a, b)) {
		fprintf(stderr, "source: cannot make the loop %s, %s\n", a, b);
		return -EIO;
	}
	src->loop_made = true;
	err = attach(src, 0, src->skel->progs.src_pump, a) ?:
		      attach(src, 1, src->skel->progs.src_bounce, b);
	if (err)
		return err;
	k = if_nametoindex(a);
	if (bpf_map_update_elem(fd, &k, &k, BPF_ANY) ||
	    bpf_map_update_elem(fd, &src->entry_ifindex, &src->entry_ifindex,
				BPF_ANY)) {
		err = -errno;
		fprintf(stderr, "source: the pump's devmap: %s\n",
			strerror(-err));
		return err;
	}
	return packet_socket(src, b);
}

static int open_shape(struct source *src, const struct source_opts *o)
{
	int err;

	src->entry_ifindex = if_nametoindex(o->entry);
	if (!src->entry_ifindex) {
		fprintf(stderr, "source: no device %s here\n", o->entry);
		return -ENODEV;
	}
	snprintf(src->entry, sizeof(src->entry), "%s", o->entry);
	if (o->shape == SOURCE_PACKET)
		return packet_socket(src, o->entry);
	src->skel = test_source__open();
	if (!src->skel)
		return -errno;
	err = test_source__load(src->skel);
	if (err) {
		fprintf(stderr, "source: cannot load its programs: %s\n",
			strerror(-err));
		return err;
	}
	src->skel->bss->src_entry_ifindex = src->entry_ifindex;
	src->skel->bss->src_seq_off = o->seq_off;
	if (o->shape == SOURCE_PUMP)
		return pump_up(src);
	src->skel->bss->src_back_hlim = o->back_hlim;
	return attach(src, 0, src->skel->progs.src_ring, o->back) ?:
		       packet_socket(src, o->entry);
}

int source_open(struct source **srcp, const struct source_opts *o)
{
	struct source *src;
	int err;

	*srcp = NULL;
	if (o->shape > SOURCE_PACKET || !o->entry ||
	    (o->shape == SOURCE_RING && (!o->back || !o->back_hlim)) ||
	    (o->shape == SOURCE_PUMP &&
	     (!o->loop || !*o->loop || strlen(o->loop) > LOOP_NAME_MAX)) ||
	    (o->seq_off && (o->seq_off < SOURCE_SEQ_MIN ||
			    o->seq_off > SOURCE_SEQ_MAX || (o->seq_off & 1))) ||
	    o->frames < 0 || o->frames > 256) {
		fprintf(stderr, "source: bad options\n");
		return -EINVAL;
	}
	src = calloc(1, sizeof(*src));
	if (!src)
		return -ENOMEM;
	src->shape = o->shape;
	src->tx = -1;
	src->cpu = o->cpu;
	src->seq_off = o->seq_off;
	src->frames = o->frames;
	if (!src->frames)
		src->frames =
			o->shape == SOURCE_PUMP ? PUMP_FRAMES : RING_FRAMES;
	if (o->loop)
		snprintf(src->loop, sizeof(src->loop), "%s", o->loop);
	src->ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (src->ns < 0) {
		err = -errno;
		free(src);
		return err;
	}
	err = open_shape(src, o);
	if (!err && src->skel && entry_taken(src, &src->taken0))
		fprintf(stderr,
			"source: %s's XDP transmit counters cannot be read: frames it refuses are not counted\n",
			src->entry);
	if (err) {
		source_close(src);
		return err;
	}
	*srcp = src;
	return 0;
}

void source_close(struct source *src)
{
	char a[IFNAMSIZ];
	int i, was;

	if (!src)
		return;
	for (i = 0; i < 2; i++)
		bpf_link__destroy(src->links[i]);
	if (src->loop_made) {
		/* In the loop's namespace, wherever the caller is now. */
		was = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		snprintf(a, sizeof(a), "%s-a", src->loop);
		if (was >= 0 && !setns(src->ns, CLONE_NEWNET)) {
			sh("ip link del %s 2>/dev/null || true", a);
			setns(was, CLONE_NEWNET);
		}
		if (was >= 0)
			close(was);
	}
	test_source__destroy(src->skel);
	if (src->tx >= 0)
		close(src->tx);
	close(src->ns);
	for (i = 0; i < src->ncls; i++)
		free(src->cls_frame[i]);
	free(src->buf);
	free(src);
}

/* The programs' state back to the first source, class and number. */
static void reset_turn(struct source *src)
{
	src->k = src->j = 0;
	src->seq = 0;
	if (src->skel) {
		src->skel->bss->src_k = 0;
		src->skel->bss->src_j = 0;
	}
}

/* A pump's frames take the classes in turn whatever they carried: every
 * class is of one length, the same bytes past the template (the sequence
 * number aside). */
static bool pump_alike(const struct source_class *c,
		       const struct source_class *c0)
{
	return c->len == c0->len &&
	       !memcmp(c->frame + SOURCE_HDR, c0->frame + SOURCE_HDR,
		       c->len - SOURCE_HDR);
}

int source_set_classes(struct source *src, const struct source_class *cls,
		       int n)
{
	int i;

	if (n < 1 || n > SOURCE_CLASSES)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		int c;

		for (c = 0; src->shape == SOURCE_RING && c < i; c++)
			if (cls[c].len == cls[i].len)
				break;
		if (cls[i].len < SOURCE_HDR || cls[i].len > PKT_MAX ||
		    (src->seq_off && cls[i].len < src->seq_off + 4) ||
		    memcmp(cls[i].frame, cls[0].frame, 16) ||
		    (src->shape == SOURCE_RING && c < i) ||
		    (src->shape == SOURCE_PUMP && !pump_alike(&cls[i], cls))) {
			fprintf(stderr,
				"source: class %d: %zu bytes, its first 16 unlike class 0's, the length of another (a ring), or unlike class 0's past the template (a pump)\n",
				i, cls[i].len);
			return -EINVAL;
		}
	}
	for (i = 0; i < src->ncls; i++)
		free(src->cls_frame[i]);
	src->ncls = 0;
	for (i = 0; i < n; i++) {
		src->cls_frame[i] = malloc(cls[i].len);
		if (!src->cls_frame[i])
			return -ENOMEM;
		memcpy(src->cls_frame[i], cls[i].frame, cls[i].len);
		src->cls_len[i] = cls[i].len;
		src->cls_partial[i] = cls[i].partial;
		src->cls_sum[i] = frame_sum(cls[i].frame, cls[i].len,
					    src->seq_off, cls[i].partial);
		src->ncls = i + 1;
	}
	for (i = 0; i < SEND_BATCH; i++)
		src->buf_cls[i] = -1;
	if (!src->skel)
		return 0;
	for (i = 0; i < n; i++) {
		struct test_source__bss *bss = src->skel->bss;

		memcpy(bss->src_tmpl[i], cls[i].frame, SOURCE_HDR);
		bss->src_csum[i] = src->cls_sum[i];
		bss->src_partial[i] = cls[i].partial;
		bss->src_len[i] = cls[i].len;
	}
	return 0;
}

int source_set_pattern(struct source *src, const __u8 *pat, int npat,
		       __u32 base, __u32 nsrc)
{
	int i;

	if (npat < 1 || npat > SOURCE_PAT_MAX || !nsrc)
		return -EINVAL;
	for (i = 0; i < npat; i++)
		if (pat[i] >= src->ncls)
			return -EINVAL;
	memcpy(src->pat, pat, npat);
	src->npat = npat;
	src->base = base;
	src->nsrc = nsrc;
	if (src->skel) {
		struct test_source__bss *bss = src->skel->bss;

		memcpy(bss->src_pat, pat, npat);
		bss->src_npat = npat;
		bss->src_base = base;
		bss->src_nsrc = nsrc;
	}
	reset_turn(src);
	return 0;
}

/* One frame through prog as BPF_PROG_TEST_RUN runs it: in is the frame
 * it gets, want what it should send, or NULL for a frame it should drop. */
static int check_one(struct bpf_program *prog, const uint8_t *in, size_t len,
		     const uint8_t *want)
{
	uint8_t out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	__u32 verdict = want ? XDP_REDIRECT : XDP_DROP;

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o))
		return -errno;
	/* A redirect the kernel refused to set up: it cannot run this. */
	if (want && o.retval == XDP_ABORTED)
		return -EOPNOTSUPP;
	if (o.retval != verdict)
		return -EPROTO;
	return want && (o.data_size_out != len || memcmp(out, want, len)) ?
		       -EPROTO :
		       0;
}

static int check_frames(struct source *src)
{
	struct test_source__bss *bss = src->skel->bss;
	struct bpf_program *prog = src->shape == SOURCE_RING ?
					   src->skel->progs.src_ring :
					   src->skel->progs.src_pump;
	static uint8_t in[PKT_MAX], want[PKT_MAX];
	__u32 k, seq;
	int j, c, err;
	size_t len;

	/* Two turns of the pattern, the sources wrapping round once. */
	for (j = 0; j < 2 * src->npat; j++) {
		c = src->pat[j % src->npat];
		k = j % src->nsrc;
		seq = bss->src_sent;
		len = source_frame(src, want, c, k, seq);
		memset(in, 0xA5, SOURCE_HDR);
		memcpy(in + SOURCE_HDR, src->cls_frame[c] + SOURCE_HDR,
		       len - SOURCE_HDR);
		if (src->shape == SOURCE_RING) {
			/* As it comes back: forwarded once. */
			in[12] = 0x86;
			in[13] = 0xDD;
			in[ETH_HLEN + 6] = IPPROTO_UDP;
			in[SOURCE_HLIM_OFF] = bss->src_back_hlim;
		} else {
			memcpy(in, src->cls_frame[0], 16);
		}
		err = check_one(prog, in, len, want);
		if (err == -EOPNOTSUPP) {
			fprintf(stderr,
				"source: this kernel cannot run a %s: its redirect is refused%s\n",
				source_shape_name(src->shape),
				src->shape == SOURCE_PUMP ?
					" (a pump needs a devmap broadcast, BPF_F_BROADCAST: Linux 5.15)" :
					"");
			return err;
		}
		if (err) {
			fprintf(stderr,
				"source: the %s does not write the frame it should (class %d, source word %#x): %s\n",
				source_shape_name(src->shape), c, src->base + k,
				strerror(-err));
			return err;
		}
	}
	/* Not the source's: dropped. */
	memset(in, 0, 64);
	return check_one(prog, in, 64, NULL) ? -EPROTO : 0;
}

int source_check(struct source *src)
{
	struct test_source__bss *bss, saved;
	int err;

	if (src->shape == SOURCE_PACKET)
		return 0;
	if (!src->ncls || !src->npat)
		return -EINVAL;
	bss = src->skel->bss;
	saved = *bss;
	bss->src_k = bss->src_j = 0;
	bss->src_stop = 0;
	bss->src_credit = ~0ULL;
	err = check_frames(src);
	/* The state as it was, the counters too. */
	*bss = saved;
	return err;
}

static long seed(struct source *src, long n)
{
	return send_frames(src, n);
}

int source_seed(struct source *src)
{
	int n = src->frames - src->frames % src->npat;
	long r;

	if (src->shape != SOURCE_RING || !src->npat)
		return -EINVAL;
	/* Whole turns of the pattern: a mix is exact by count. */
	n = n ? n : src->npat;
	src->skel->bss->src_stop = 0;
	r = on_cpu(src, seed, n);
	return r < 0 ? (int)r : r < n ? -EIO : 0;
}

int source_credit(struct source *src, __u64 n)
{
	struct test_source__bss *bss;
	long alive, r;

	if (src->shape != SOURCE_PUMP || !src->npat)
		return -EINVAL;
	bss = src->skel->bss;
	/* Credit first: a frame still going round takes it, and only those
	 * that left for want of it are seeded again. */
	__atomic_store_n(&bss->src_credit, bss->src_credit + n,
			 __ATOMIC_SEQ_CST);
	alive = (long)(src->seeded - src->written_off -
		       __atomic_load_n(&bss->src_retired, __ATOMIC_SEQ_CST));
	if (alive >= src->frames)
		return 0;
	r = on_cpu(src, seed, src->frames - alive);
	return r < 0 ? (int)r : 0;
}

long source_send(struct source *src, long n)
{
	if (src->shape != SOURCE_PACKET || !src->npat)
		return -EINVAL;
	return on_cpu(src, send_frames, n);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int source_drain(struct source *src, int timeout_ms, __u64 *lost)
{
	struct test_source__bss *bss;
	__u64 moved, last = ~0ULL, in_round;
	double since = now_ms();

	if (src->shape == SOURCE_PACKET)
		return -EINVAL;
	bss = src->skel->bss;
	__atomic_store_n(&bss->src_stop, 1, __ATOMIC_SEQ_CST);
	/* Every frame leaves at its next turn; one that has not come back
	 * once nothing moved for timeout_ms was lost on the way. */
	in_round = src->seeded - src->written_off;
	while (__atomic_load_n(&bss->src_retired, __ATOMIC_SEQ_CST) <
	       in_round) {
		moved = __atomic_load_n(&bss->src_sent, __ATOMIC_SEQ_CST) +
			__atomic_load_n(&bss->src_retired, __ATOMIC_SEQ_CST);
		if (moved != last) {
			last = moved;
			since = now_ms();
		} else if (now_ms() - since > timeout_ms) {
			break;
		}
		usleep(1000);
	}
	in_round -= __atomic_load_n(&bss->src_retired, __ATOMIC_SEQ_CST);
	if (lost)
		*lost = in_round;
	src->written_off += in_round;
	__atomic_store_n(&bss->src_stop, 0, __ATOMIC_SEQ_CST);
	reset_turn(src);
	return 0;
}

/*
 * Frames that entry's peer took from entry's XDP transmit (ndo_xdp_xmit),
 * all queues: veth's tx_queue_N_xdp_xmit, kept by the peer. A frame sent
 * and not taken was refused: a veth takes none while its peer has no NAPI
 * (no XDP program, no GRO), and redirects skip it, and it refuses those
 * that do not fit its ring. 0, or -errno where the stats cannot be read.
 */
static int entry_taken(const struct source *src, __u64 *taken)
{
	struct ethtool_sset_info *info;
	struct ethtool_gstrings *names = NULL;
	struct ethtool_stats *stats = NULL;
	struct ifreq ifr = {};
	__u32 n, i;
	int err = -ENOMEM;

	info = calloc(1, sizeof(*info) + sizeof(__u32));
	if (!info)
		return -ENOMEM;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", src->entry);
	info->cmd = ETHTOOL_GSSET_INFO;
	info->sset_mask = 1ULL << ETH_SS_STATS;
	ifr.ifr_data = (void *)info;
	if (ioctl(src->tx, SIOCETHTOOL, &ifr)) {
		err = -errno;
		goto free_info;
	}
	n = info->sset_mask ? info->data[0] : 0;
	names = calloc(1, sizeof(*names) + n * ETH_GSTRING_LEN);
	stats = calloc(1, sizeof(*stats) + n * sizeof(__u64));
	if (!names || !stats)
		goto free_all;
	names->cmd = ETHTOOL_GSTRINGS;
	names->string_set = ETH_SS_STATS;
	names->len = n;
	stats->cmd = ETHTOOL_GSTATS;
	stats->n_stats = n;
	ifr.ifr_data = (void *)names;
	if (ioctl(src->tx, SIOCETHTOOL, &ifr)) {
		err = -errno;
		goto free_all;
	}
	ifr.ifr_data = (void *)stats;
	if (ioctl(src->tx, SIOCETHTOOL, &ifr)) {
		err = -errno;
		goto free_all;
	}
	*taken = 0;
	for (i = 0; i < n && i < stats->n_stats; i++) {
		const char *name = (char *)names->data + i * ETH_GSTRING_LEN;
		size_t l = strnlen(name, ETH_GSTRING_LEN);

		if (!strncmp(name, "tx_queue_", 9) && l > 13 &&
		    !strncmp(name + l - 9, "_xdp_xmit", 9))
			*taken += stats->data[i];
	}
	err = 0;
free_all:
	free(names);
	free(stats);
free_info:
	free(info);
	return err;
}

void source_counts(const struct source *src, struct source_counts *c)
{
	__u64 taken;

	memset(c, 0, sizeof(*c));
	c->seeded = src->seeded;
	if (!src->skel)
		return;
	c->sent = __atomic_load_n(&src->skel->bss->src_sent, __ATOMIC_RELAXED);
	c->back = __atomic_load_n(&src->skel->bss->src_back, __ATOMIC_RELAXED);
	c->other =
		__atomic_load_n(&src->skel->bss->src_other, __ATOMIC_RELAXED);
	c->retired =
		__atomic_load_n(&src->skel->bss->src_retired, __ATOMIC_RELAXED);
	if (!entry_taken(src, &taken) && c->sent >= taken - src->taken0)
		c->refused = c->sent - (taken - src->taken0);
}
