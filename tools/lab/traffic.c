// SPDX-License-Identifier: GPL-2.0
/*
 * traffic: small UDP/TCP senders and sinks for the lab, the tests and the
 * benchmarks. Every mode prints one JSON line with what it did.
 *
 *   traffic udp-sink PORT [--count N] [--timeout SEC]
 *     [--connect]: connect to the first datagram's source; then
 *     "incoming_cpu" counts the datagrams after it by the SO_INCOMING_CPU
 *     read after each (the CPU that processed it)
 *   traffic udp-send ADDR PORT [--count N] [--size BYTES] [--gap-us US]
 *   traffic tcp-sink PORT [--conns N] [--timeout SEC]
 *   traffic tcp-send ADDR PORT [--conns N] [--bytes BYTES]
 *
 * Senders write a pattern that differs byte to byte and datagram to
 * datagram; sinks print a "digest" of what they read (FNV-1a, 64 bits: a
 * datagram's each, added up, so their order does not count; a connection's
 * stream in order), so that two runs can be compared byte for byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

struct args {
	const char *addr;
	int port;
	long count;
	long size;
	long conns;
	long bytes;
	long gap_us;
	int timeout;
	int connect; /* udp-sink: connect to the first datagram's source */
};

static void usage(void)
{
	fprintf(stderr,
		"Usage: traffic udp-sink PORT [--count N] [--timeout SEC] [--connect]\n"
		"       traffic udp-send ADDR PORT [--count N] [--size BYTES] [--gap-us US]\n"
		"       traffic tcp-sink PORT [--conns N] [--timeout SEC]\n"
		"       traffic tcp-send ADDR PORT [--conns N] [--bytes BYTES]\n"
		"Sinks listen on every address (IPv4 and IPv6) and stop after\n"
		"--count datagrams / --conns connections or --timeout seconds of\n"
		"silence; each mode prints one JSON line.\n");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int resolve(const char *addr, int port, struct sockaddr_storage *ss,
		   socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
		return 0;
	}
	fprintf(stderr, "traffic: bad address '%s'\n", addr);
	return -EINVAL;
}

/* A dual-stack socket bound to [::]:port. */
static int bind_any(int type, int port)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd, zero = 0, one = 1, buf = 16 << 20;

	fd = socket(AF_INET6, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	if (bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) ||
	    (type == SOCK_STREAM && listen(fd, 128))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* FNV-1a, 64 bits, of n bytes, from h (14695981039346656037 to start). */
static unsigned long long fnv1a(unsigned long long h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--)
		h = (h ^ *b++) * 1099511628211ULL;
	return h;
}

#define FNV_START 14695981039346656037ULL

/* The senders' bytes: byte off of stream or datagram seq. */
static void pattern(char *buf, size_t n, long seq, long off)
{
	size_t i;

	for (i = 0; i < n; i++)
		buf[i] = (char)((off + (long)i) * 7 + seq * 13 +
				((off + i) >> 8));
}

/* Datagrams counted by SO_INCOMING_CPU after each read, CPUs below this. */
#define SINK_CPUS 1024

static int udp_sink(const struct args *a)
{
	char buf[65536];
	long got = 0, bytes = 0, on_cpu[SINK_CPUS] = { 0 };
	unsigned long long digest = 0;
	struct sockaddr_storage peer;
	socklen_t olen, peer_len;
	struct pollfd pfd;
	double t0 = 0;
	int fd, cpu, i;

	fd = bind_any(SOCK_DGRAM, a->port);
	if (fd < 0) {
		fprintf(stderr, "traffic: udp port %d: %s\n", a->port,
			strerror(-fd));
		return 1;
	}
	/* Ready: a parent waiting on our stdout may start sending. */
	fprintf(stderr, "listening\n");
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!a->count || got < a->count) {
		ssize_t n;

		if (poll(&pfd, 1, a->timeout * 1000) <= 0)
			break;
		peer_len = sizeof(peer);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer,
			     &peer_len);
		if (n < 0)
			break;
		/* The kernel keeps SO_INCOMING_CPU of connected sockets. */
		if (a->connect && !got &&
		    connect(fd, (struct sockaddr *)&peer, peer_len))
			break;
		if (!got)
			t0 = now();
		got++;
		bytes += n;
		digest += fnv1a(FNV_START, buf, n);
		/* The CPU that processed the last datagram in. */
		olen = sizeof(cpu);
		if (got > 1 &&
		    !getsockopt(fd, SOL_SOCKET, SO_INCOMING_CPU, &cpu, &olen) &&
		    cpu >= 0 && cpu < SINK_CPUS)
			on_cpu[cpu]++;
	}
	printf("{\"mode\":\"udp-sink\",\"datagrams\":%ld,\"bytes\":%ld,\"digest\":\"%016llx\",\"seconds\":%.3f,\"incoming_cpu\":{",
	       got, bytes, digest, got ? now() - t0 : 0.0);
	for (i = 0, cpu = 0; i < SINK_CPUS; i++)
		if (on_cpu[i])
			printf("%s\"%d\":%ld", cpu++ ? "," : "", i, on_cpu[i]);
	printf("}}\n");
	close(fd);
	return 0;
}

static int udp_send(const struct args *a)
{
	struct sockaddr_storage ss;
	char *buf;
	socklen_t len;
	long sent = 0, i;
	double t0;
	int fd;

	if (resolve(a->addr, a->port, &ss, &len))
		return 1;
	buf = calloc(1, a->size);
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (!buf || fd < 0) {
		perror("traffic");
		free(buf);
		return 1;
	}
	t0 = now();
	for (i = 0; i < a->count; i++) {
		pattern(buf, a->size, i, 0);
		snprintf(buf, a->size, "%ld", i);
		if (sendto(fd, buf, a->size, 0, (struct sockaddr *)&ss, len) ==
		    a->size)
			sent++;
		if (a->gap_us)
			usleep(a->gap_us);
	}
	printf("{\"mode\":\"udp-send\",\"datagrams\":%ld,\"seconds\":%.3f}\n",
	       sent, now() - t0);
	close(fd);
	free(buf);
	return sent == a->count ? 0 : 1;
}

static int tcp_sink(const struct args *a)
{
	char buf[65536];
	long conns = 0, bytes = 0;
	unsigned long long digest = 0;
	struct pollfd pfd;
	int fd;

	fd = bind_any(SOCK_STREAM, a->port);
	if (fd < 0) {
		fprintf(stderr, "traffic: tcp port %d: %s\n", a->port,
			strerror(-fd));
		return 1;
	}
	fprintf(stderr, "listening\n");
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (!a->conns || conns < a->conns) {
		unsigned long long h = FNV_START;
		struct pollfd cp;
		int c;

		if (poll(&pfd, 1, a->timeout * 1000) <= 0)
			break;
		c = accept(fd, NULL, NULL);
		if (c < 0)
			break;
		cp.fd = c;
		cp.events = POLLIN;
		for (;;) {
			ssize_t n;

			if (poll(&cp, 1, a->timeout * 1000) <= 0)
				break;
			n = recv(c, buf, sizeof(buf), 0);
			if (n <= 0)
				break;
			bytes += n;
			h = fnv1a(h, buf, n);
		}
		close(c);
		conns++;
		digest += h;
	}
	printf("{\"mode\":\"tcp-sink\",\"connections\":%ld,\"bytes\":%ld,\"digest\":\"%016llx\"}\n",
	       conns, bytes, digest);
	close(fd);
	return 0;
}

static int tcp_send(const struct args *a)
{
	struct sockaddr_storage ss;
	char buf[16384];
	long conns = 0, bytes = 0, i;
	socklen_t len;

	if (resolve(a->addr, a->port, &ss, &len))
		return 1;
	for (i = 0; i < a->conns; i++) {
		long left = a->bytes;
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len)) {
			perror("traffic: connect");
			if (fd >= 0)
				close(fd);
			continue;
		}
		while (left > 0) {
			long want = left < (long)sizeof(buf) ?
					    left :
					    (long)sizeof(buf);
			ssize_t n;

			pattern(buf, want, i, a->bytes - left);
			n = send(fd, buf, want, MSG_NOSIGNAL);
			if (n <= 0)
				break;
			left -= n;
			bytes += n;
		}
		close(fd);
		if (!left)
			conns++;
	}
	printf("{\"mode\":\"tcp-send\",\"connections\":%ld,\"bytes\":%ld}\n",
	       conns, bytes);
	return conns == a->conns ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "count", required_argument, NULL, 'c' },
		{ "size", required_argument, NULL, 's' },
		{ "conns", required_argument, NULL, 'n' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "gap-us", required_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 't' },
		{ "connect", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct args a = { .count = 10,
			  .size = 64,
			  .conns = 1,
			  .bytes = 1 << 20,
			  .timeout = 5 };
	const char *mode;
	int c, pos;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a.count = atol(optarg);
			break;
		case 's':
			a.size = atol(optarg);
			break;
		case 'n':
			a.conns = atol(optarg);
			break;
		case 'b':
			a.bytes = atol(optarg);
			break;
		case 'g':
			a.gap_us = atol(optarg);
			break;
		case 't':
			a.timeout = atoi(optarg);
			break;
		case 'C':
			a.connect = 1;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	pos = optind;
	if (argc - pos < 2) {
		usage();
		return 2;
	}
	mode = argv[pos++];
	if (!strcmp(mode, "udp-send") || !strcmp(mode, "tcp-send")) {
		if (argc - pos != 2) {
			usage();
			return 2;
		}
		a.addr = argv[pos++];
	} else if (argc - pos != 1) {
		usage();
		return 2;
	}
	a.port = atoi(argv[pos]);
	if (a.size < 16 || a.size > 65000)
		a.size = 64;
	if (!strcmp(mode, "udp-sink"))
		return udp_sink(&a);
	if (!strcmp(mode, "udp-send"))
		return udp_send(&a);
	if (!strcmp(mode, "tcp-sink"))
		return tcp_sink(&a);
	if (!strcmp(mode, "tcp-send"))
		return tcp_send(&a);
	usage();
	return 2;
}
