// SPDX-License-Identifier: GPL-2.0
/*
 * echo_server: a UDP and TCP echo server with one thread per CPU, each
 * pinned to its CPU and owning one UDP socket and one TCP listener bound
 * with SO_REUSEPORT to the same port. Through libsilo each thread puts its
 * sockets in its CPU's slot, so what arrives on CPU k is read by thread k:
 * the smallest real user of silo's reuseport groups.
 *
 *   echo_server --port N [--workers N] [--addr ADDR] [--policy cpu|node|hash]
 *               [--tag] [--plain] [--netns NAME] [--pin-root DIR]
 *
 * --plain uses no silo at all (a server to try 'silo reuseport attach --pid'
 * on). --netns NAME serves in network namespace NAME (ip netns), with the
 * pins in the host's bpffs, as 'silo --netns' does: 'ip netns exec' hides
 * bpffs. --tag prefixes each reply with "w<worker> c<cpu> ": which thread read
 * it, and on which CPU. It prints one JSON line when it serves, and on
 * SIGINT or SIGTERM detaches its groups and exits.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include "silo/silo.h"

struct worker {
	pthread_t thread;
	int id, cpu;
	int udp, tcp, epfd;
};

static struct {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool tag, plain;
	int nr_workers;
	struct silo_group *udp, *tcp;
	struct worker *workers; /* they run until the process exits */
	pthread_mutex_t lock; /* one silo call at a time */
	pthread_barrier_t ready;
	int err;
} srv = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int bound_socket(int type)
{
	int fd, one = 1;

	fd = socket(srv.addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&srv.addr, srv.addr_len) ||
	    (type == SOCK_STREAM && listen(fd, 1024))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reply with what came, behind "w<worker> c<cpu> " with --tag. */
static size_t reply(const struct worker *w, char *out, size_t cap,
		    const char *in, size_t len)
{
	size_t n = 0;

	if (srv.tag)
		n = snprintf(out, cap, "w%d c%d ", w->id, sched_getcpu());
	if (len > cap - n)
		len = cap - n;
	memcpy(out + n, in, len);
	return n + len;
}

static void serve_udp(const struct worker *w)
{
	struct sockaddr_storage peer;
	char in[2048], out[2100];
	socklen_t plen = sizeof(peer);
	ssize_t n;

	while ((n = recvfrom(w->udp, in, sizeof(in), 0,
			     (struct sockaddr *)&peer, &plen)) >= 0) {
		sendto(w->udp, out, reply(w, out, sizeof(out), in, n), 0,
		       (struct sockaddr *)&peer, plen);
		plen = sizeof(peer);
	}
}

static void serve_conn(const struct worker *w, int fd)
{
	char in[2048], out[2100];
	ssize_t n;

	n = read(fd, in, sizeof(in));
	if (n <= 0) {
		close(fd); /* leaves the epoll set */
		return;
	}
	if (write(fd, out, reply(w, out, sizeof(out), in, n)) < 0)
		close(fd);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct epoll_event ev = { .events = EPOLLIN }, evs[64];
	cpu_set_t set;
	int n, i, c, err;

	CPU_ZERO(&set);
	CPU_SET(w->cpu, &set);
	err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	w->udp = bound_socket(SOCK_DGRAM);
	w->tcp = bound_socket(SOCK_STREAM);
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!err && (w->udp < 0 || w->tcp < 0 || w->epfd < 0))
		err = errno;
	pthread_mutex_lock(&srv.lock);
	if (err && !srv.err)
		srv.err = -err;
	pthread_mutex_unlock(&srv.lock);
	pthread_barrier_wait(&srv.ready); /* main makes the groups */
	pthread_barrier_wait(&srv.ready);
	/* This thread reads these sockets: their slot is its CPU. */
	pthread_mutex_lock(&srv.lock);
	if (!srv.err && !srv.plain)
		srv.err = silo_group_set(srv.udp, w->cpu, w->udp) ?:
				  silo_group_set(srv.tcp, w->cpu, w->tcp);
	pthread_mutex_unlock(&srv.lock);
	ev.data.fd = w->udp;
	epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->udp, &ev);
	ev.data.fd = w->tcp;
	epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->tcp, &ev);
	pthread_barrier_wait(&srv.ready);
	for (;;) {
		n = epoll_wait(w->epfd, evs, 64, -1);
		for (i = 0; i < n; i++) {
			if (evs[i].data.fd == w->udp) {
				serve_udp(w);
			} else if (evs[i].data.fd == w->tcp) {
				while ((c = accept4(w->tcp, NULL, NULL,
						    SOCK_NONBLOCK |
							    SOCK_CLOEXEC)) >=
				       0) {
					ev.data.fd = c;
					epoll_ctl(w->epfd, EPOLL_CTL_ADD, c,
						  &ev);
				}
			} else {
				serve_conn(w, evs[i].data.fd);
			}
		}
	}
	return NULL;
}

static int parse_addr(const char *s, int port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&srv.addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&srv.addr;

	memset(&srv.addr, 0, sizeof(srv.addr));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		srv.addr_len = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		srv.addr_len = sizeof(*sin6);
		return 0;
	}
	return -EINVAL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: echo_server --port N [--workers N] [--addr ADDR] [--policy cpu|node|hash]\n"
		"                   [--tag] [--plain] [--netns NAME] [--pin-root DIR]\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "port", required_argument, NULL, 'P' },
		{ "workers", required_argument, NULL, 'w' },
		{ "addr", required_argument, NULL, 'a' },
		{ "policy", required_argument, NULL, 'y' },
		{ "tag", no_argument, NULL, 't' },
		{ "plain", no_argument, NULL, 'n' },
		{ "pin-root", required_argument, NULL, 'R' },
		{ "netns", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct silo_opts so = {};
	struct silo_group_opts go = { .policy = SILO_REUSEPORT_CPU };
	const char *addr = "0.0.0.0";
	struct worker *workers;
	struct silo *s = NULL;
	int port = 0, c, i, sig, ret = 1;
	int nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	sigset_t sigs;

	srv.nr_workers = nr_cpus;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			port = atoi(optarg);
			break;
		case 'w':
			srv.nr_workers = atoi(optarg);
			break;
		case 'a':
			addr = optarg;
			break;
		case 'y':
			c = silo_reuseport_policy_parse(optarg);
			if (c < 0) {
				usage();
				return 2;
			}
			go.policy = c;
			break;
		case 't':
			srv.tag = true;
			break;
		case 'n':
			srv.plain = true;
			break;
		case 'R':
			so.pin_root = optarg;
			break;
		case 'N':
			so.netns = optarg;
			break;
		default:
			usage();
			return c == 'h' ? 0 : 2;
		}
	}
	if (port <= 0 || port > 65535 || srv.nr_workers < 1 ||
	    srv.nr_workers > 1024 || parse_addr(addr, port)) {
		usage();
		return 2;
	}
	/* Only the main thread takes these: it detaches before exiting. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	workers = srv.workers = calloc(srv.nr_workers, sizeof(*workers));
	/* silo_open enters --netns: the workers are made in it. */
	if (!workers || ((!srv.plain || so.netns) && silo_open(&s, &so)))
		goto out;
	pthread_barrier_init(&srv.ready, NULL, srv.nr_workers + 1);
	for (i = 0; i < srv.nr_workers; i++) {
		workers[i].id = i;
		workers[i].cpu = i % nr_cpus;
		pthread_create(&workers[i].thread, NULL, worker_main,
			       &workers[i]);
	}
	/* Sockets bound: one of each kind makes its group. */
	pthread_barrier_wait(&srv.ready);
	if (!srv.err && !srv.plain)
		srv.err = silo_group_create(s, workers[0].udp, &go, &srv.udp) ?:
				  silo_group_create(s, workers[0].tcp, &go,
						    &srv.tcp);
	/* Slots filled: the program goes on the sockets. */
	pthread_barrier_wait(&srv.ready);
	pthread_barrier_wait(&srv.ready);
	if (!srv.err && !srv.plain)
		srv.err = silo_group_attach(srv.udp, workers[0].udp) ?:
				  silo_group_attach(srv.tcp, workers[0].tcp);
	if (srv.err) {
		fprintf(stderr, "echo_server: %s\n", strerror(-srv.err));
		goto out;
	}
	printf("{\"pid\":%d,\"port\":%d,\"workers\":%d,\"silo\":%s,\"udp_group\":\"%s\",\"tcp_group\":\"%s\"}\n",
	       getpid(), port, srv.nr_workers, srv.plain ? "false" : "true",
	       srv.udp ? silo_group_name(srv.udp) : "",
	       srv.tcp ? silo_group_name(srv.tcp) : "");
	fflush(stdout);
	sigwait(&sigs, &sig);
	ret = 0;
out:
	/* The groups go; the sockets close with the process. */
	if (srv.udp)
		silo_group_detach(srv.udp, workers[0].udp);
	if (srv.tcp)
		silo_group_detach(srv.tcp, workers[0].tcp);
	silo_group_close(srv.udp);
	silo_group_close(srv.tcp);
	silo_close(s);
	return ret;
}
