// SPDX-License-Identifier: GPL-2.0
/*
 * frames: the differential harness's traffic (tests/differential.sh).
 *
 *   frames list
 *   frames tuples [udp|tcp]
 *   frames ct-liberal
 *   frames ct-assure
 *   frames run --rmac MAC --cmac MAC --tx NS:DEV --cap LABEL=NS:DEV...
 *              [--passes N] [--gap-us N] [--idle-ms N] [--wait-ms N]
 *              [--only SUBSTRING] [--offload] [--between CMD]
 *   frames too-big --tx NS:DEV --dmac MAC --smac MAC --src ADDR --dst ADDR
 *                  --qsrc ADDR --qdst ADDR --mtu N
 *
 * "run" opens a raw packet socket on every capture device (each in its own
 * namespace), sends the corpus (tests/lib/frames.h) N times from the client's
 * device, exact bytes, and collects what arrives until the ports have been
 * quiet for --idle-ms (and at least --wait-ms after the last frame sent).
 * It prints one line per captured frame: "LABEL NAME#PASS HEX", NAME being
 * the corpus frame the marker names ("-" for none), host noise (ARP, ND,
 * MLD) left out and the kernel's random IPv4 IDs zeroed. --offload adds the
 * plain TCP and UDP frames again, sent as a sender on the host leaves them
 * (a virtio_net_hdr asking for the checksum: CHECKSUM_PARTIAL); a captured
 * frame whose checksum the kernel has still to finish is printed finished,
 * as a device would send it on the wire. --between runs CMD (sh -c, the
 * pass just sent in $FRAMES_PASS) after each pass but the last, before the
 * next: a change of the router's configuration under the corpus's traffic.
 *
 * "tuples" prints each UDP (or TCP) flow of the corpus once, "FAMILY SRC
 * DST SPORT DPORT" (FAMILY 4 or 6), for a configuration that puts them in
 * conntrack. "ct-liberal" makes every TCP connection in this namespace's
 * conntrack table liberal (IP_CT_TCP_FLAG_BE_LIBERAL both ways), as silod
 * does for one XDP forwards: conntrack -I cannot, and the kernel's run must
 * track the corpus's connections as silo's does. "ct-assure" marks every
 * UDP connection in it seen replied and assured, NAT kept: connections the
 * corpus opened through masquerade, established as if they had replies.
 *
 * "too-big" sends one ICMP "fragmentation needed" (IPv4) or ICMPv6 "packet
 * too big" from --src to --dst announcing MTU N for a packet from --qsrc to
 * --qdst (frame_too_big() in tests/lib/frames.h): what teaches a router a
 * path MTU exception.
 */
#include <endian.h>
#include <poll.h>
#include <time.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/virtio_net.h>
#include <sys/wait.h>
#include "frames.h"

#define MAX_CAPS 8

struct cap {
	char label[32];
	int fd;
};

static struct corpus corpus;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ull + ts.tv_nsec / 1000000;
}

static int split(char *arg, char sep, char **a, char **b)
{
	char *p = strchr(arg, sep);

	if (!p)
		return -EINVAL;
	*p = '\0';
	*a = arg;
	*b = p + 1;
	return 0;
}

static void print_frame(const char *label, uint8_t *b, size_t len)
{
	int pass = 0, idx;
	size_t i;

	frame_normalize(b, len);
	idx = frame_marker(b, len, &pass);
	if (idx >= 0 && idx < corpus.n) {
		printf("%s\t%s#%d\t", label, corpus.f[idx].name, pass);
	} else if ((idx = frame_fragment_of(b, len, &pass)) >= 0 &&
		   idx < corpus.n) {
		printf("%s\t%s#%d fragment\t", label, corpus.f[idx].name, pass);
	} else
		printf("%s\t-\t", label);
	for (i = 0; i < len; i++)
		printf("%02x", b[i]);
	putchar('\n');
}

static int usage(void)
{
	fprintf(stderr,
		"usage: frames list\n"
		"       frames tuples [udp|tcp]\n"
		"       frames ct-liberal\n"
		"       frames ct-assure\n"
		"       frames run --rmac MAC --cmac MAC --tx NS:DEV "
		"--cap LABEL=NS:DEV... [--passes N] [--gap-us N] "
		"[--idle-ms N] [--wait-ms N] [--only SUBSTRING] [--offload] "
		"[--between CMD]\n"
		"       frames too-big --tx NS:DEV --dmac MAC --smac MAC "
		"--src ADDR --dst ADDR --qsrc ADDR --qdst ADDR --mtu N\n");
	return 2;
}

static int bad_arg(const char *opt, const char *v)
{
	fprintf(stderr, "frames: bad %s %s\n", opt, v);
	return 2;
}

/* too-big: one ICMP error announcing an MTU, sent once. */
static int cmd_too_big(int argc, char **argv)
{
	const char *src = NULL, *dst = NULL, *qsrc = NULL, *qdst = NULL;
	char *ns = NULL, *dev = NULL, *end;
	uint8_t dmac[6], smac[6];
	unsigned long mtu = 0;
	int i, fd, err, have = 0;
	struct frame f;
	ssize_t n;

	for (i = 0; i + 1 < argc; i += 2) {
		const char *o = argv[i];
		char *v = argv[i + 1];

		if (!strcmp(o, "--tx")) {
			if (split(v, ':', &ns, &dev))
				return bad_arg(o, v);
			have |= 1;
		} else if (!strcmp(o, "--dmac")) {
			if (parse_mac(v, dmac))
				return bad_arg(o, v);
			have |= 2;
		} else if (!strcmp(o, "--smac")) {
			if (parse_mac(v, smac))
				return bad_arg(o, v);
			have |= 4;
		} else if (!strcmp(o, "--src")) {
			src = v;
		} else if (!strcmp(o, "--dst")) {
			dst = v;
		} else if (!strcmp(o, "--qsrc")) {
			qsrc = v;
		} else if (!strcmp(o, "--qdst")) {
			qdst = v;
		} else if (!strcmp(o, "--mtu")) {
			errno = 0;
			mtu = strtoul(v, &end, 10);
			if (errno || *end || !*v || mtu > UINT32_MAX)
				return bad_arg(o, v);
			have |= 8;
		} else {
			return usage();
		}
	}
	if (i != argc || have != 15 || !src || !dst || !qsrc || !qdst)
		return usage();
	err = frame_too_big(&f, dmac, smac, src, dst, qsrc, qdst, mtu);
	if (err == -ERANGE) {
		fprintf(stderr, "frames: --mtu %lu: IPv4 has 16 bits\n", mtu);
		return 2;
	} else if (err) {
		fprintf(stderr,
			"frames: --src %s --dst %s --qsrc %s --qdst %s: "
			"not four addresses of one family\n",
			src, dst, qsrc, qdst);
		return 2;
	}
	fd = packet_socket(ns, dev, PACKET_SEND);
	if (fd < 0) {
		fprintf(stderr, "frames: tx socket on %s:%s: %s\n", ns, dev,
			strerror(-fd));
		return 1;
	}
	n = send(fd, f.b, f.len, 0);
	err = errno;
	close(fd);
	if (n != f.len) {
		fprintf(stderr, "frames: cannot send %s: %s\n", f.name,
			n < 0 ? strerror(err) : "short send");
		return 1;
	}
	return 0;
}

/*
 * Sends f: as it is, or (f->offload, on a PACKET_SEND_VNET socket) with a
 * virtio_net_hdr that leaves its TCP or UDP checksum to offload, as a
 * guest's virtio-net or a local socket's skb has it (CHECKSUM_PARTIAL).
 */
static ssize_t send_frame(int fd, const struct frame *f)
{
	struct virtio_net_hdr h = { .gso_type = VIRTIO_NET_HDR_GSO_NONE };
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)f->b, f->len } };
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = 2 };
	size_t l4, l4len;
	uint8_t proto;
	ssize_t n;

	if (!f->offload)
		return send(fd, f->b, f->len, 0);
	if (frame_l4(f->b, f->len, &l4, &l4len, &proto)) {
		errno = EINVAL;
		return -1;
	}
	h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h.csum_start = htole16(l4);
	h.csum_offset = htole16(proto == 6 ? 16 : 6);
	n = sendmsg(fd, &msg, 0);
	return n < 0 ? n : n - (ssize_t)sizeof(h);
}

/* One captured frame into buf, finished where the kernel has not yet
 * computed its checksum (a CHECKSUM_PARTIAL skb): its length, or -1. */
static ssize_t capture(int fd, uint8_t *buf, size_t size,
		       struct sockaddr_ll *sll)
{
	char ctl[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	struct iovec iov = { buf, size };
	struct msghdr msg = { .msg_name = sll,
			      .msg_namelen = sizeof(*sll),
			      .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	struct tpacket_auxdata aux;
	struct cmsghdr *c;
	ssize_t len;

	len = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (len < 0)
		return len;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_PACKET ||
		    c->cmsg_type != PACKET_AUXDATA)
			continue;
		memcpy(&aux, CMSG_DATA(c), sizeof(aux));
		if (aux.tp_status & TP_STATUS_CSUMNOTREADY)
			frame_l4_csum_device(buf, len);
	}
	return len;
}

/* --between: CMD after pass p; non-zero (said) when it fails. */
static int run_between(const char *cmd, int p)
{
	char v[16];
	int status;
	pid_t pid;

	snprintf(v, sizeof(v), "%d", p);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("frames: fork");
		return 1;
	}
	if (!pid) {
		setenv("FRAMES_PASS", v, 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "frames: --between after pass %d failed\n", p);
		return 1;
	}
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	struct corpus_env env = {};
	struct pollfd pfd[MAX_CAPS];
	struct cap caps[MAX_CAPS];
	int ncaps = 0, passes = 2, gap_us = 100, idle_ms = 300, wait_ms = 0;
	int tx = -1, txv = -1, i, p, sent = 0, failed = 0, got = 0;
	int have_mac = 0, offload = 0;
	const char *only = NULL, *between = NULL;
	uint64_t last, end;
	static uint8_t buf[65536];

	for (i = 0; i < argc; i++) {
		const char *o = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL, *a, *b, *ns;

		if (!strcmp(o, "--offload")) {
			offload = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(o, "--rmac")) {
			if (parse_mac(v, env.rmac))
				return usage();
			have_mac |= 1;
		} else if (!strcmp(o, "--cmac")) {
			if (parse_mac(v, env.cmac))
				return usage();
			have_mac |= 2;
		} else if (!strcmp(o, "--tx")) {
			if (split(v, ':', &a, &b))
				return usage();
			tx = packet_socket(a, b, PACKET_SEND);
			txv = packet_socket(a, b, PACKET_SEND_VNET);
			if (tx < 0 || txv < 0) {
				fprintf(stderr,
					"frames: tx socket on %s:%s: %s\n", a,
					b, strerror(-(tx < 0 ? tx : txv)));
				return 1;
			}
		} else if (!strcmp(o, "--cap")) {
			if (ncaps == MAX_CAPS || split(v, '=', &a, &ns) ||
			    split(ns, ':', &ns, &b))
				return usage();
			snprintf(caps[ncaps].label, sizeof(caps[ncaps].label),
				 "%s", a);
			caps[ncaps].fd = packet_socket(ns, b, PACKET_CAPTURE);
			if (caps[ncaps].fd < 0) {
				fprintf(stderr,
					"frames: capture socket on %s:%s: %s\n",
					ns, b, strerror(-caps[ncaps].fd));
				return 1;
			}
			ncaps++;
		} else if (!strcmp(o, "--passes")) {
			passes = atoi(v);
		} else if (!strcmp(o, "--gap-us")) {
			gap_us = atoi(v);
		} else if (!strcmp(o, "--idle-ms")) {
			idle_ms = atoi(v);
		} else if (!strcmp(o, "--wait-ms")) {
			wait_ms = atoi(v);
		} else if (!strcmp(o, "--only")) {
			only = v;
		} else if (!strcmp(o, "--between")) {
			between = v;
		} else {
			return usage();
		}
	}
	env.offload = offload;
	if (tx < 0 || !ncaps || have_mac != 3)
		return usage();

	/* Whatever the hosts said while the topology came up is not ours. */
	for (i = 0; i < ncaps; i++)
		packet_drain(caps[i].fd);
	for (p = 0; p < passes; p++) {
		env.pass = p;
		corpus_build(&corpus, &env);
		for (i = 0; i < corpus.n; i++) {
			const struct frame *f = &corpus.f[i];

			if (only && !strstr(f->name, only))
				continue;
			if (send_frame(f->offload ? txv : tx, f) != f->len) {
				if (!p)
					fprintf(stderr,
						"frames: cannot send %s (%u "
						"bytes): %s\n",
						f->name, f->len,
						strerror(errno));
				failed++;
			} else {
				sent++;
			}
			/* veth's XDP ring holds 256 frames: pace. */
			if (gap_us)
				usleep(gap_us);
		}
		if (between && p + 1 < passes && run_between(between, p))
			return 1;
	}

	last = now_ms();
	end = last + (wait_ms > idle_ms ? wait_ms : idle_ms);
	for (i = 0; i < ncaps; i++) {
		pfd[i].fd = caps[i].fd;
		pfd[i].events = POLLIN;
	}
	for (;;) {
		uint64_t t = now_ms(), until = last + idle_ms;
		int n;

		if (until < end)
			until = end;
		if (t >= until)
			break;
		n = poll(pfd, ncaps, until - t);
		if (n < 0 && errno != EINTR) {
			perror("frames: poll");
			return 1;
		}
		for (i = 0; n > 0 && i < ncaps; i++) {
			struct sockaddr_ll sll;
			ssize_t len;

			if (!(pfd[i].revents & POLLIN))
				continue;
			while ((len = capture(caps[i].fd, buf, sizeof(buf),
					      &sll)) >= 0) {
				if (sll.sll_pkttype == PACKET_OUTGOING)
					continue;
				last = now_ms();
				if (frame_is_noise(buf, len))
					continue;
				print_frame(caps[i].label, buf, len);
				got++;
			}
		}
	}
	fprintf(stderr, "frames: sent %d, unsendable %d, captured %d\n", sent,
		failed, got);
	return 0;
}

/* The corpus's UDP or TCP flows (plain frames: frame_l4()), each once. */
static int cmd_tuples(int want)
{
	struct corpus_env env = {};
	static char seen[CORPUS_MAX][2 * INET6_ADDRSTRLEN + 16];
	char line[2 * INET6_ADDRSTRLEN + 16], s[INET6_ADDRSTRLEN],
		d[INET6_ADDRSTRLEN];
	int i, j, n = 0;

	corpus_build(&corpus, &env);
	for (i = 0; i < corpus.n; i++) {
		const uint8_t *b = corpus.f[i].b, *ip = b + 14;
		size_t l4, l4len;
		uint8_t proto;
		int v6;

		if (frame_l4(b, corpus.f[i].len, &l4, &l4len, &proto) ||
		    proto != want)
			continue;
		v6 = get16(b + 12) == ETH_P_IPV6;
		inet_ntop(v6 ? AF_INET6 : AF_INET, ip + (v6 ? 8 : 12), s,
			  sizeof(s));
		inet_ntop(v6 ? AF_INET6 : AF_INET, ip + (v6 ? 24 : 16), d,
			  sizeof(d));
		snprintf(line, sizeof(line), "%d %s %s %u %u", v6 ? 6 : 4, s, d,
			 get16(b + l4), get16(b + l4 + 2));
		for (j = 0; j < n && strcmp(seen[j], line); j++)
			;
		if (j < n)
			continue;
		memcpy(seen[n++], line, sizeof(line));
		printf("%s\n", line);
	}
	return 0;
}

#define CONNS_MAX 4096

static struct nf_conntrack *conns[CONNS_MAX];
static uint32_t conn_status[CONNS_MAX];
static int nr_conns;

/* Each connection of protocol *data: its original tuple alone (an update
 * with the rest, NAT or status, would be refused or change more than
 * asked) and its status. */
static int keep_conn(enum nf_conntrack_msg_type type, struct nf_conntrack *ct,
		     void *data)
{
	(void)type;
	struct nf_conntrack *t;

	if (nfct_get_attr_u8(ct, ATTR_L4PROTO) != *(uint8_t *)data ||
	    nr_conns == CONNS_MAX)
		return NFCT_CB_CONTINUE;
	t = nfct_new();
	if (!t)
		return NFCT_CB_CONTINUE;
	nfct_copy(t, ct, NFCT_CP_ORIG);
	conn_status[nr_conns] = nfct_get_attr_u32(ct, ATTR_STATUS);
	conns[nr_conns++] = t;
	return NFCT_CB_CONTINUE;
}

/*
 * ct-liberal: every TCP connection's window tracking made liberal.
 * ct-assure: every UDP connection seen replied and assured, as a stream
 * is two seconds after its first reply (conntrack -U cannot: it sends the
 * NAT too, which ctnetlink refuses to change); its other status bits, NAT
 * and all, kept.
 */
static int cmd_ct_update(uint8_t proto)
{
	struct nfct_handle *h = nfct_open(CONNTRACK, 0);
	uint32_t family = AF_UNSPEC;
	int i, made = 0, err = 0;

	if (!h) {
		perror("frames: ctnetlink");
		return 1;
	}
	nfct_callback_register(h, NFCT_T_ALL, keep_conn, &proto);
	if (nfct_query(h, NFCT_Q_DUMP, &family)) {
		perror("frames: conntrack dump");
		err = 1;
	}
	for (i = 0; i < nr_conns; i++) {
		struct nf_conntrack *ct = conns[i];

		if (proto == IPPROTO_TCP) {
			nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG,
					 IP_CT_TCP_FLAG_BE_LIBERAL);
			nfct_set_attr_u8(ct, ATTR_TCP_MASK_ORIG,
					 IP_CT_TCP_FLAG_BE_LIBERAL);
			nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL,
					 IP_CT_TCP_FLAG_BE_LIBERAL);
			nfct_set_attr_u8(ct, ATTR_TCP_MASK_REPL,
					 IP_CT_TCP_FLAG_BE_LIBERAL);
		} else {
			nfct_set_attr_u32(ct, ATTR_STATUS,
					  conn_status[i] | IPS_SEEN_REPLY |
						  IPS_ASSURED);
		}
		if (nfct_query(h, NFCT_Q_UPDATE, ct)) {
			perror("frames: conntrack update");
			err = 1;
		} else {
			made++;
		}
		nfct_destroy(ct);
	}
	nfct_close(h);
	fprintf(stderr, "frames: %d %s connections %s\n", made,
		proto == IPPROTO_TCP ? "TCP" : "UDP",
		proto == IPPROTO_TCP ? "made liberal" : "assured");
	return err;
}

int main(int argc, char **argv)
{
	struct corpus_env env = {};
	int i;

	if (argc < 2)
		return usage();
	if (!strcmp(argv[1], "list")) {
		corpus_build(&corpus, &env);
		for (i = 0; i < corpus.n; i++)
			printf("%d\t%u\t%s\n", i, corpus.f[i].len,
			       corpus.f[i].name);
		return 0;
	}
	if (!strcmp(argv[1], "tuples"))
		return argc < 3 || !strcmp(argv[2], "udp") ? cmd_tuples(17) :
		       !strcmp(argv[2], "tcp")		   ? cmd_tuples(6) :
							     usage();
	if (!strcmp(argv[1], "ct-liberal"))
		return cmd_ct_update(IPPROTO_TCP);
	if (!strcmp(argv[1], "ct-assure"))
		return cmd_ct_update(IPPROTO_UDP);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "too-big"))
		return cmd_too_big(argc - 2, argv + 2);
	return usage();
}
