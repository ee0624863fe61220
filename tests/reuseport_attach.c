// SPDX-License-Identifier: GPL-2.0
/*
 * 'silo reuseport attach --pid' against processes silo did not start: the
 * example echo server run --plain (one pinned thread per CPU in epoll_wait),
 * a multi-process server whose master opened every socket and whose pinned
 * workers each watch one, servers that say their CPU only through process
 * affinity or SO_INCOMING_CPU, and the errors: no such process, no socket
 * on the port, sockets without SO_REUSEPORT, nothing placeable, not
 * permitted. After each attach, what is sent from CPU k must be answered by
 * the worker pinned to CPU k; after each failure nothing is left behind.
 * Also: the example server itself through libsilo, and the show, policy and
 * detach commands.
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <json-c/json.h>
#include "test.h"
#include "reuseport_util.h"

static int nr_cpus;
static const char *silo_bin, *build;
static char pin_dir[PATH_MAX];

/* The CLI with the test's pin root; its stdout parsed as JSON into *out
 * (when out is given). Returns its exit status. */
static int cli(json_object **out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int cli(json_object **out, const char *fmt, ...)
{
	char args[1024], cmd[2048], path[] = "/tmp/silo-rp-XXXXXX";
	va_list ap;
	int fd, rc;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s --pin-root %s %s >%s 2>%s.err", silo_bin,
		 test_pin_root(), args, path, path);
	rc = system(cmd);
	rc = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
	if (out)
		*out = json_object_from_file(path);
	snprintf(cmd, sizeof(cmd), "sed 's/^/# /' %s.err; rm -f %s %s.err",
		 path, path, path);
	if (system(cmd))
		return -1;
	return rc;
}

/* Runs cmd; its stdout into out. Returns its exit status. */
static int capture(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = f ? fread(out, 1, len - 1, f) : 0;
	int rc;

	out[n] = '\0';
	if (!f)
		return -1;
	rc = pclose(f);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* stderr of the CLI, for checking messages. */
static int cli_err(char *msg, size_t len, const char *args)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s --pin-root %s %s 2>&1 >/dev/null",
		 silo_bin, test_pin_root(), args);
	return capture(cmd, msg, len);
}

static bool pins_exist(void)
{
	struct stat sb;

	return stat(pin_dir, &sb) == 0;
}

/* ---- Servers silo did not start. ---- */

enum wait_how { WAIT_EPOLL, WAIT_POLL };

struct server {
	int port;
	bool procs; /* worker processes; else threads */
	bool master_opens; /* procs: the master opens every socket */
	enum wait_how wait;
	bool incoming_cpu; /* setsockopt SO_INCOMING_CPU = the worker's */
	bool one_cpu; /* one worker thread, of CPU cpu, and no other */
	int cpu;
};

/* Answers what arrives with "w<worker> c<cpu> ", like echo_server --tag. */
static void serve(int id, int udp, int tcp, enum wait_how how, int ready_fd)
{
	struct epoll_event ev = { .events = EPOLLIN }, evs[2];
	struct pollfd pfd[2] = { { .fd = udp, .events = POLLIN },
				 { .fd = tcp, .events = POLLIN } };
	int epfd = epoll_create1(EPOLL_CLOEXEC), n, i, c;
	char buf[64], out[96];
	pid_t ready[2] = { id, gettid() };
	struct sockaddr_storage peer;
	socklen_t plen;

	ev.data.fd = udp;
	epoll_ctl(epfd, EPOLL_CTL_ADD, udp, &ev);
	ev.data.fd = tcp;
	epoll_ctl(epfd, EPOLL_CTL_ADD, tcp, &ev);
	if (write(ready_fd, ready, sizeof(ready)) != sizeof(ready))
		_exit(1);
	for (;;) {
		if (how == WAIT_EPOLL) {
			n = epoll_wait(epfd, evs, 2, -1);
			for (i = 0; i < n; i++)
				pfd[evs[i].data.fd == udp ? 0 : 1].revents =
					POLLIN;
		} else if (poll(pfd, 2, -1) < 0) {
			continue;
		}
		if (pfd[0].revents & POLLIN) {
			plen = sizeof(peer);
			n = recvfrom(udp, buf, sizeof(buf), 0,
				     (struct sockaddr *)&peer, &plen);
			if (n >= 0) {
				n = snprintf(out, sizeof(out), "w%d c%d ", id,
					     sched_getcpu());
				sendto(udp, out, n, 0, (struct sockaddr *)&peer,
				       plen);
			}
		}
		if (pfd[1].revents & POLLIN) {
			c = accept4(tcp, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0 && read(c, buf, 1) == 1) {
				n = snprintf(out, sizeof(out), "w%d c%d ", id,
					     sched_getcpu());
				if (write(c, out, n) < 0)
					n = 0;
			}
			if (c >= 0)
				close(c);
		}
		pfd[0].revents = pfd[1].revents = 0;
	}
}

struct worker_arg {
	const struct server *srv;
	int id, udp, tcp, ready_fd;
};

static void open_sockets(const struct server *srv, int cpu, int *udp, int *tcp)
{
	*udp = rp_socket(AF_INET, SOCK_DGRAM, srv->port, true);
	*tcp = rp_socket(AF_INET, SOCK_STREAM, srv->port, true);
	if (*udp < 0 || *tcp < 0)
		_exit(1);
	if (srv->incoming_cpu) {
		setsockopt(*udp, SOL_SOCKET, SO_INCOMING_CPU, &cpu,
			   sizeof(cpu));
		setsockopt(*tcp, SOL_SOCKET, SO_INCOMING_CPU, &cpu,
			   sizeof(cpu));
	}
}

static void *worker_thread(void *arg)
{
	struct worker_arg *w = arg;

	rp_pin_cpu(w->id);
	if (w->udp < 0)
		open_sockets(w->srv, w->id, &w->udp, &w->tcp);
	serve(w->id, w->udp, w->tcp, w->srv->wait, w->ready_fd);
	return NULL;
}

/* The server's master: never returns. */
static void server_main(const struct server *srv, int ready_fd)
{
	struct worker_arg w[RP_MAX_SOCKS];
	pthread_t t;
	int i;

	if (srv->one_cpu) {
		w[0] = (struct worker_arg){ srv, srv->cpu, -1, -1, ready_fd };
		pthread_create(&t, NULL, worker_thread, &w[0]);
		for (;;)
			pause();
	}
	for (i = 0; i < nr_cpus; i++) {
		w[i] = (struct worker_arg){ srv, i, -1, -1, ready_fd };
		if (srv->master_opens)
			open_sockets(srv, i, &w[i].udp, &w[i].tcp);
	}
	for (i = 0; i < nr_cpus; i++) {
		if (!srv->procs) {
			pthread_create(&t, NULL, worker_thread, &w[i]);
			continue;
		}
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			worker_thread(&w[i]);
			_exit(0);
		}
	}
	for (;;)
		pause();
}

/* A running server: its pid (process group) and its workers' tids. */
struct running {
	pid_t pid;
	pid_t tids[RP_MAX_SOCKS];
	int nr;
};

/* Waits until every worker is asleep in its wait, as attach must see it. */
static int wait_asleep(struct running *r)
{
	char path[64], buf[256], *p;
	int i, tries;

	for (i = 0; i < r->nr; i++) {
		for (tries = 0; tries < 200; tries++) {
			snprintf(path, sizeof(path), "/proc/%d/stat",
				 r->tids[i]);
			FILE *f = fopen(path, "r");
			size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

			if (f)
				fclose(f);
			buf[n] = '\0';
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'S')
				break;
			usleep(10000);
		}
		if (tries == 200)
			return -1;
	}
	return 0;
}

/* A child in a process group of its own, and a pipe from it: 0 in the
 * child, its pid in the parent, -1 on failure. */
static pid_t fork_server(struct running *r, int pipefd[2])
{
	memset(r, 0, sizeof(*r));
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	r->pid = fork();
	if (r->pid == 0)
		setpgid(0, 0);
	else
		close(pipefd[1]);
	return r->pid;
}

static int start_server(const struct server *srv, struct running *r)
{
	pid_t ready[2], pid;
	int pipefd[2];

	pid = fork_server(r, pipefd);
	if (pid < 0)
		return -1;
	if (pid == 0)
		server_main(srv, pipefd[1]);
	if (srv->one_cpu) {
		if (read(pipefd[0], ready, sizeof(ready)) == sizeof(ready) &&
		    ready[0] == srv->cpu) {
			r->tids[0] = ready[1];
			r->nr = 1;
		}
		close(pipefd[0]);
		return r->nr == 1 ? wait_asleep(r) : -1;
	}
	/* Each worker says (its id, its tid). */
	while (r->nr < nr_cpus &&
	       read(pipefd[0], ready, sizeof(ready)) == sizeof(ready) &&
	       ready[0] >= 0 && ready[0] < nr_cpus) {
		r->tids[ready[0]] = ready[1];
		r->nr++;
	}
	close(pipefd[0]);
	return r->nr == nr_cpus ? wait_asleep(r) : -1;
}

/* The example server, run by argv (through setpriv, or not): its pid. */
static int start_echo_server(const char *const *argv, struct running *r)
{
	char line[512];
	int pipefd[2];
	pid_t pid;
	FILE *f;

	pid = fork_server(r, pipefd);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pipefd[1], 1);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	f = fdopen(pipefd[0], "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	return strstr(line, "\"pid\"") ? 0 : -1;
}

/* Stops a server: its exit status (-1 when killed by a signal). */
static int stop(struct running *r, int sig)
{
	int status = 0, other;

	if (r->pid <= 0)
		return -1;
	kill(-r->pid, sig);
	waitpid(r->pid, &status, 0);
	/* Orphaned workers come to us (a subreaper): reap them. */
	while (waitpid(-1, &other, WNOHANG) > 0)
		;
	r->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Which worker and CPU answered a datagram or connection sent from CPU k:
 * 0, or -1 when none answered. */
static int ask(int type, int port, int cpu, int *worker, int *on_cpu)
{
	struct pollfd pfd;
	char buf[96] = "";
	int fd, n;

	if (rp_pin_cpu(cpu))
		return -1;
	if (type == SOCK_DGRAM) {
		fd = rp_socket(AF_INET, SOCK_DGRAM, 0, false);
		if (fd < 0 || rp_send(fd, AF_INET, port, "?", 1))
			goto fail;
	} else {
		fd = rp_connect(AF_INET, port);
		if (fd < 0)
			return -1;
		if (write(fd, "?", 1) != 1)
			goto fail;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&pfd, 1, 1000) != 1)
		goto fail;
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return sscanf(buf, "w%d c%d", worker, on_cpu) == 2 ? 0 : -1;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Everything sent from CPU k is answered by the worker of CPU k, reading
 * on CPU k; and by the kernel's hash alone, not. */
static int answered_by_own_cpu(int port, int *elsewhere)
{
	int k, i, type, worker, on_cpu, wrong = 0;

	*elsewhere = 0;
	for (type = SOCK_STREAM; type <= SOCK_DGRAM; type++) {
		for (k = 0; k < nr_cpus; k++) {
			for (i = 0; i < 8; i++) {
				if (ask(type, port, k, &worker, &on_cpu)) {
					wrong++;
					continue;
				}
				wrong += worker != k || on_cpu != k;
				*elsewhere += worker != k;
			}
		}
	}
	rp_unpin();
	return wrong;
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ?
		       json_object_get_string(v) :
		       "";
}

static int jint(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ?
		       json_object_get_int(v) :
		       -1;
}

/*
 * Attaches to a running server and checks what attach says: every socket
 * placed in its worker's slot by how, two groups; then the traffic; then
 * show; then detaches both groups and checks no pin is left.
 */
static void attach_and_check(struct running *r, int port, const char *how,
			     bool kernel_silos_too)
{
	json_object *out = NULL, *socks, *sock, *groups;
	int rc, i, n, elsewhere, wrong;
	char udp[32], tcp[32];

	rc = cli(&out, "-j reuseport attach --pid %d --port %d", r->pid, port);
	REQUIRE(rc == 0 && out, "attach: exit %d", rc);
	CHECK_EQ(jint(out, "groups_attached"), 2);
	REQUIRE(json_object_object_get_ex(out, "sockets", &socks), "sockets");
	n = json_object_array_length(socks);
	CHECK_EQ(n, 2 * nr_cpus);
	for (i = 0; i < n; i++) {
		int slot, worker = -1, w;

		sock = json_object_array_get_idx(socks, i);
		slot = jint(sock, "slot");
		CHECK(!strcmp(jstr(sock, "placed_by"), how),
		      "socket %d placed by '%s', want '%s' (%s)", i,
		      jstr(sock, "placed_by"), how, jstr(sock, "why"));
		/* The worker pinned to CPU slot owns it. */
		for (w = 0; w < r->nr; w++)
			if (r->tids[w] == jint(sock, "tid") ||
			    (!strcmp(how, "process affinity") &&
			     r->tids[w] == jint(sock, "pid")))
				worker = w;
		if (strcmp(how, "SO_INCOMING_CPU"))
			CHECK(worker == slot,
			      "socket %d: slot %d, its reader is worker %d", i,
			      slot, worker);
		CHECK(slot >= 0 && slot < nr_cpus, "socket %d: slot %d", i,
		      slot);
	}
	json_object_put(out);

	wrong = answered_by_own_cpu(port, &elsewhere);
	CHECK(wrong == 0, "%d answers came from another worker or CPU", wrong);

	snprintf(udp, sizeof(udp), "udp4_%d_127-0-0-1", port);
	snprintf(tcp, sizeof(tcp), "tcp4_%d_127-0-0-1", port);
	rc = cli(&out, "-j reuseport show");
	REQUIRE(rc == 0 && out, "show: exit %d", rc);
	REQUIRE(json_object_object_get_ex(out, "groups", &groups), "groups");
	CHECK_EQ(json_object_array_length(groups), 2);
	for (i = 0; i < (int)json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i), *slots,
			    *stats;
		int s;

		CHECK(!strcmp(jstr(g, "name"), udp) ||
			      !strcmp(jstr(g, "name"), tcp),
		      "group %s", jstr(g, "name"));
		CHECK(!strcmp(jstr(g, "policy"), "cpu"), "policy");
		json_object_object_get_ex(g, "slots", &slots);
		for (s = 0; s < nr_cpus; s++) {
			json_object *sl = json_object_array_get_idx(slots, s);

			CHECK(jint(sl, "cookie") > 0, "slot %d empty", s);
			CHECK(jint(sl, "pid") > 0, "slot %d: no owner", s);
		}
		json_object_object_get_ex(g, "stats", &stats);
		CHECK_EQ(jint(stats, "sel_cpu"), 8 * nr_cpus);
		CHECK_EQ(jint(stats, "runs"), 8 * nr_cpus);
	}
	json_object_put(out);
	CHECK_EQ(cli(NULL, "reuseport detach %s", udp), 0);
	CHECK_EQ(cli(NULL, "reuseport detach %s", tcp), 0);
	CHECK(!pins_exist(), "pins left after detaching both groups");
	/* Back to the kernel's hash: the test could tell (unless the
	 * sockets set SO_INCOMING_CPU, which the kernel's hash follows). */
	answered_by_own_cpu(port, &elsewhere);
	CHECK(elsewhere > 0 || kernel_silos_too,
	      "with silo detached every answer still came from the sender's CPU: this test could not tell");
}

static void test_multithreaded_example_plain(void)
{
	char port[8];
	const char *argv[] = { NULL, "--plain", "--tag",     "--port",
			       port, "--addr",	"127.0.0.1", NULL };
	char bin[PATH_MAX];
	struct running r;
	int i;

	snprintf(bin, sizeof(bin), "%s/examples/echo_server", build);
	snprintf(port, sizeof(port), "7201");
	argv[0] = bin;
	REQUIRE(start_echo_server(argv, &r) == 0, "start echo_server");
	/* Its workers: the threads pinned to one CPU, worker i to CPU i. */
	for (i = 0; i < 100 && r.nr < nr_cpus; i++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		r.nr = 0;
		snprintf(path, sizeof(path), "/proc/%d/task", r.pid);
		d = opendir(path);
		while (d && (de = readdir(d))) {
			pid_t tid = atoi(de->d_name);
			cpu_set_t set;
			int cpu;

			if (tid <= 0 ||
			    sched_getaffinity(tid, sizeof(set), &set) ||
			    CPU_COUNT(&set) != 1)
				continue;
			for (cpu = 0; cpu < nr_cpus; cpu++)
				if (CPU_ISSET(cpu, &set))
					r.tids[cpu] = tid;
			r.nr++;
		}
		if (d)
			closedir(d);
		if (r.nr < nr_cpus)
			usleep(10000);
	}
	REQUIRE(r.nr == nr_cpus && wait_asleep(&r) == 0, "workers");
	attach_and_check(&r, 7201, "thread affinity", false);
	CHECK_EQ(stop(&r, SIGTERM), 0);
}

/* A server of the kind srv says, attached and checked, then stopped. */
static void server_case(const struct server *srv, const char *how,
			bool kernel_silos_too)
{
	struct running r;

	REQUIRE(start_server(srv, &r) == 0, "start server");
	attach_and_check(&r, srv->port, how, kernel_silos_too);
	stop(&r, SIGKILL);
}

/* The master opened every socket; each pinned worker epolls one. */
static void test_multiprocess_inherited(void)
{
	struct server srv = { .port = 7202,
			      .procs = true,
			      .master_opens = true,
			      .wait = WAIT_EPOLL };

	server_case(&srv, "thread affinity", false);
}

/* Each pinned worker opened its own sockets and waits in poll(). */
static void test_multiprocess_process_affinity(void)
{
	struct server srv = { .port = 7203, .procs = true, .wait = WAIT_POLL };

	server_case(&srv, "process affinity", false);
}

/* Threads in poll() that set SO_INCOMING_CPU on their sockets. */
static void test_incoming_cpu(void)
{
	struct server srv = { .port = 7204,
			      .wait = WAIT_POLL,
			      .incoming_cpu = true };

	server_case(&srv, "SO_INCOMING_CPU", true);
}

/* Each failure: exit 1, a message that says why, nothing left behind. */
static void expect_refused(const char *args, const char *msg)
{
	char err[2048];
	int rc;

	rc = cli_err(err, sizeof(err), args);
	CHECK(rc == 1, "'%s': exit %d, want 1: %s", args, rc, err);
	CHECK(strstr(err, msg), "'%s' says '%s', want '%s'", args, err, msg);
	CHECK(!pins_exist(), "'%s' left pins", args);
}

static void test_attach_errors(void)
{
	struct server unplaceable = { .port = 7205, .wait = WAIT_POLL };
	char args[256], msg[64];
	struct running r;
	pid_t gone;
	int plain;

	gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	snprintf(args, sizeof(args), "reuseport attach --pid %d --port 7205",
		 gone);
	expect_refused(args, "no process");

	REQUIRE(start_server(&unplaceable, &r) == 0, "start server");
	snprintf(args, sizeof(args), "reuseport attach --pid %d --port 7299",
		 r.pid);
	expect_refused(args, "have no TCP or UDP socket on port 7299");
	snprintf(args, sizeof(args),
		 "reuseport attach --pid %d --port 7205 --proto udp", r.pid);
	snprintf(msg, sizeof(msg), "none of the %d sockets", nr_cpus);
	expect_refused(args, msg);
	stop(&r, SIGKILL);

	/* This process's own socket, bound without SO_REUSEPORT. */
	plain = rp_socket(AF_INET, SOCK_DGRAM, 7206, false);
	REQUIRE(plain >= 0, "socket");
	snprintf(args, sizeof(args), "reuseport attach --pid %d --port 7206",
		 getpid());
	expect_refused(args, "no SO_REUSEPORT");
	close(plain);

	CHECK_EQ(cli(NULL, "reuseport attach --pid 1"), 2);
	CHECK_EQ(cli(NULL, "reuseport attach --pid x --port 1"), 2);
	CHECK_EQ(cli(NULL, "reuseport attach --pid 1 --port 70000"), 2);
	CHECK_EQ(cli(NULL, "reuseport attach --pid 1 --port 1 --proto sctp"),
		 2);
	CHECK_EQ(cli(NULL, "reuseport attach --pid 1 --port 1 --policy rr"), 2);
	CHECK(!pins_exist(), "usage errors left pins");
}

/* Not root, or root without CAP_SYS_PTRACE over another user's process. */
static void test_attach_not_permitted(void)
{
	char bin[PATH_MAX], args[512], err[2048];
	const char *argv[] = { "setpriv",
			       "--reuid=nobody",
			       "--regid=nogroup",
			       "--clear-groups",
			       NULL,
			       "--plain",
			       "--port",
			       "7207",
			       "--addr",
			       "127.0.0.1",
			       NULL };
	struct running r;
	int rc;

	if (sh("id nobody >/dev/null 2>&1 && getent group nogroup >/dev/null"))
		SKIP("no user nobody or group nogroup");
	snprintf(bin, sizeof(bin), "%s/examples/echo_server", build);
	argv[4] = bin;
	REQUIRE(start_echo_server(argv, &r) == 0,
		"start echo_server as nobody");
	snprintf(
		args, sizeof(args),
		"setpriv --bounding-set=-sys_ptrace %s --pin-root %s reuseport attach --pid %d --port 7207 2>&1",
		silo_bin, test_pin_root(), r.pid);
	rc = capture(args, err, sizeof(err));
	CHECK(rc == 1, "exit %d: %s", rc, err);
	CHECK(strstr(err, "not permitted to take the sockets of pid"), "%s",
	      err);
	CHECK(!pins_exist(), "left pins");

	snprintf(
		args, sizeof(args),
		"setpriv --reuid=nobody --regid=nogroup --clear-groups %s --pin-root %s reuseport attach --pid %d --port 7207 2>&1",
		silo_bin, test_pin_root(), r.pid);
	rc = capture(args, err, sizeof(err));
	CHECK(rc == 1, "exit %d: %s", rc, err);
	CHECK(strstr(err, "needs root"), "%s", err);
	CHECK_EQ(stop(&r, SIGTERM), 0);
}

/*
 * The example itself, through libsilo: its groups show with every slot
 * owned by its pid, each answer comes from the sender's CPU, policy hash
 * at run time spreads them, and on SIGTERM it detaches: no pin is left.
 */
static void test_example_server(void)
{
	char bin[PATH_MAX], root[PATH_MAX + 16];
	const char *argv[] = { NULL,	 "--tag",      "--port",
			       "7208",	 "--pin-root", NULL,
			       "--addr", "127.0.0.1",  NULL };
	json_object *out = NULL, *groups;
	int wrong, elsewhere;
	struct running r;

	snprintf(bin, sizeof(bin), "%s/examples/echo_server", build);
	snprintf(root, sizeof(root), "%s", test_pin_root());
	argv[0] = bin;
	argv[5] = root;
	REQUIRE(start_echo_server(argv, &r) == 0, "start echo_server");
	REQUIRE(cli(&out, "-j reuseport show") == 0 && out, "show");
	REQUIRE(json_object_object_get_ex(out, "groups", &groups), "groups");
	CHECK_EQ(json_object_array_length(groups), 2);
	json_object_put(out);
	wrong = answered_by_own_cpu(7208, &elsewhere);
	CHECK(wrong == 0, "%d answers from another worker or CPU", wrong);
	CHECK_EQ(cli(NULL, "reuseport policy udp4_7208_127-0-0-1 hash"), 0);
	CHECK_EQ(cli(NULL, "reuseport policy tcp4_7208_127-0-0-1 hash"), 0);
	answered_by_own_cpu(7208, &elsewhere);
	CHECK(elsewhere > 0, "policy hash: every answer from the sender's CPU");
	CHECK_EQ(cli(NULL, "reuseport policy udp4_7208_127-0-0-1 fast"), 2);
	CHECK_EQ(cli(NULL, "reuseport policy nosuch cpu"), 1);
	CHECK_EQ(stop(&r, SIGTERM), 0);
	CHECK(!pins_exist(), "the example left pins after SIGTERM");
}

/* The pid in each slot of group name (-1: none) into pids[nr_cpus], and
 * how many slots hold a socket; -1 when show fails. */
static int slot_pids(const char *name, int *pids)
{
	json_object *out = NULL, *groups, *slots;
	int s, full = 0;

	if (cli(&out, "-j reuseport show %s", name) || !out)
		return -1;
	if (!json_object_object_get_ex(out, "groups", &groups) ||
	    !json_object_object_get_ex(json_object_array_get_idx(groups, 0),
				       "slots", &slots)) {
		json_object_put(out);
		return -1;
	}
	for (s = 0; s < nr_cpus; s++) {
		json_object *sl = json_object_array_get_idx(slots, s);

		pids[s] = jint(sl, "pid");
		full += jint(sl, "cookie") > 0;
	}
	json_object_put(out);
	return full;
}

/* Both groups of port have in slot k the socket of server k (k < upto). */
static void check_slots(const struct running *r, int upto, const char *udp,
			const char *tcp)
{
	const char *names[] = { udp, tcp };
	int pids[RP_MAX_SOCKS], g, k;

	for (g = 0; g < 2; g++) {
		CHECK_EQ(slot_pids(names[g], pids), upto);
		for (k = 0; k < nr_cpus; k++)
			CHECK(pids[k] == (k < upto ? r[k].pid : -1),
			      "%s slot %d: pid %d, want %d", names[g], k,
			      pids[k], k < upto ? r[k].pid : -1);
	}
}

/*
 * Servers started as separate processes, one per CPU, each with one thread
 * pinned to its CPU: attached one after the other into the same groups,
 * each to its CPU's slot; then what is sent from CPU k is answered by
 * server k. Attaching one again adds nothing twice; a server whose CPU's
 * slot is taken is refused and nothing changes; several --pid at once.
 */
static void test_separate_processes(void)
{
	struct running r[RP_MAX_SOCKS], extra = { 0 };
	struct server srv[RP_MAX_SOCKS], xsrv;
	json_object *out = NULL, *socks;
	char udp[32], tcp[32], args[1024], msg[2048];
	int port = 7206, k, i, n, rc, started = 0, elsewhere;

	snprintf(udp, sizeof(udp), "udp4_%d_127-0-0-1", port);
	snprintf(tcp, sizeof(tcp), "tcp4_%d_127-0-0-1", port);
	for (k = 0; k < nr_cpus; k++) {
		srv[k] = (struct server){ .port = port,
					  .wait = WAIT_EPOLL,
					  .one_cpu = true,
					  .cpu = k };
		if (start_server(&srv[k], &r[k])) {
			t_fail(__FILE__, __LINE__, "start server %d", k);
			goto out;
		}
		started++;
	}
	for (k = 0; k < nr_cpus; k++) {
		rc = cli(&out, "-j reuseport attach --pid %d --port %d",
			 r[k].pid, port);
		CHECK(rc == 0 && out, "attach server %d: exit %d", k, rc);
		CHECK_EQ(jint(out, "groups_attached"), 2);
		n = json_object_object_get_ex(out, "sockets", &socks) ?
			    json_object_array_length(socks) :
			    0;
		CHECK_EQ(n, 2);
		for (i = 0; i < n; i++) {
			json_object *sock = json_object_array_get_idx(socks, i);

			CHECK_EQ(jint(sock, "slot"), k);
			CHECK_EQ(jint(sock, "pid"), r[k].pid);
		}
		json_object_put(out);
		out = NULL;
		check_slots(r, k + 1, udp, tcp);
	}
	n = answered_by_own_cpu(port, &elsewhere);
	CHECK(n == 0, "%d answers came from another server or CPU", n);

	/* Again: its sockets are in the groups already, and stay. */
	rc = cli(&out, "-j reuseport attach --pid %d --port %d", r[1].pid,
		 port);
	CHECK(rc == 0 && out, "attach server 1 again: exit %d", rc);
	n = out && json_object_object_get_ex(out, "sockets", &socks) ?
		    json_object_array_length(socks) :
		    0;
	CHECK_EQ(n, 2);
	for (i = 0; i < n; i++) {
		json_object *sock = json_object_array_get_idx(socks, i);

		CHECK_EQ(jint(sock, "slot"), 1);
		CHECK(!strcmp(jstr(sock, "why"), "in the group already"),
		      "why '%s'", jstr(sock, "why"));
	}
	json_object_put(out);
	out = NULL;
	check_slots(r, nr_cpus, udp, tcp);

	/* Another server on CPU 0, whose slot is taken: refused, no change. */
	xsrv = (struct server){
		.port = port, .wait = WAIT_EPOLL, .one_cpu = true, .cpu = 0
	};
	if (start_server(&xsrv, &extra) == 0) {
		snprintf(args, sizeof(args),
			 "reuseport attach --pid %d --port %d", extra.pid,
			 port);
		rc = cli_err(msg, sizeof(msg), args);
		CHECK_EQ(rc, 1);
		CHECK(strstr(msg, "no free slot") &&
			      strstr(msg, "slot 0 is taken by"),
		      "message: %s", msg);
		check_slots(r, nr_cpus, udp, tcp);
		n = answered_by_own_cpu(port, &elsewhere);
		CHECK(n == 0, "after the refusal %d answers came elsewhere", n);
		stop(&extra, SIGKILL);
	} else {
		t_fail(__FILE__, __LINE__, "start the extra server");
	}
	CHECK_EQ(cli(NULL, "reuseport detach %s", udp), 0);
	CHECK_EQ(cli(NULL, "reuseport detach %s", tcp), 0);
	CHECK(!pins_exist(), "pins left after detaching both groups");

	/* All of them in one command. */
	n = snprintf(args, sizeof(args), "-j reuseport attach --port %d", port);
	for (k = 0; k < nr_cpus; k++)
		n += snprintf(args + n, sizeof(args) - n, " --pid %d",
			      r[k].pid);
	rc = cli(&out, "%s", args);
	CHECK(rc == 0 && out, "attach every --pid: exit %d", rc);
	CHECK_EQ(jint(out, "groups_attached"), 2);
	json_object_put(out);
	out = NULL;
	check_slots(r, nr_cpus, udp, tcp);
	n = answered_by_own_cpu(port, &elsewhere);
	CHECK(n == 0, "%d answers came from another server or CPU", n);
	CHECK_EQ(cli(NULL, "reuseport detach %s", udp), 0);
	CHECK_EQ(cli(NULL, "reuseport detach %s", tcp), 0);
	CHECK(!pins_exist(), "pins left at the end");
out:
	while (started-- > 0)
		stop(&r[started], SIGKILL);
}

int main(void)
{
	if (test_init())
		return 1;
	silo_bin = getenv("SILO");
	build = getenv("BUILD");
	nr_cpus = libbpf_num_possible_cpus();
	if (!silo_bin || !build) {
		printf("not ok - setup: run through tests/run.sh\n");
		return 1;
	}
	if (nr_cpus < 2 || nr_cpus > RP_MAX_SOCKS ||
	    nr_cpus != sysconf(_SC_NPROCESSORS_ONLN)) {
		printf("skip - reuseport_attach: needs 2 or more CPUs, all online\n");
		return 0;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	{
		struct silo *s;
		struct silo_opts o = { .pin_root = test_pin_root() };

		if (silo_open(&s, &o))
			return 1;
		snprintf(pin_dir, sizeof(pin_dir), "%s", silo_pin_dir(s));
		silo_close(s);
	}
	RUN(test_multithreaded_example_plain);
	RUN(test_multiprocess_inherited);
	RUN(test_multiprocess_process_affinity);
	RUN(test_incoming_cpu);
	RUN(test_separate_processes);
	RUN(test_attach_errors);
	RUN(test_attach_not_permitted);
	RUN(test_example_server);
	return 0;
}
