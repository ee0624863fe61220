// SPDX-License-Identifier: GPL-2.0
/*
 * silod under systemd's Type=notify, with the test as the service manager:
 * NOTIFY_SOCKET names a datagram socket the test reads. READY=1 comes only
 * once a resync succeeded and the data path trusts the cache (the first
 * resyncs fail on purpose), STATUS= says why it is not ready meanwhile,
 * WATCHDOG=1 keeps coming at least every half WATCHDOG_USEC (more often
 * than the heartbeat here), STOPPING=1 at SIGTERM; with WATCHDOG_PID of
 * another process no WATCHDOG=1, and without NOTIFY_SOCKET silod runs as
 * before.
 */
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "test.h"

static struct silo *s;
static char dir[] = "/tmp/silod-notify-XXXXXX";
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int sock_fd = -1;

static __u64 mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000ULL + ts.tv_nsec / 1000000;
}

/*
 * silod with options extra (space-separated) and up to three environment
 * entries (NULL ends them); none of systemd's inherited from the test.
 */
static pid_t start(const char *extra, const char *e1, const char *e2,
		   const char *e3)
{
	static const char *const systemd[] = { "NOTIFY_SOCKET", "WATCHDOG_USEC",
					       "WATCHDOG_PID", NULL };
	const char *env[] = { e1, e2, e3, NULL };
	char args[512];

	snprintf(args, sizeof(args), "--config /dev/null %s", extra);
	return test_silod_spawn(args, env, systemd);
}

static int stop(pid_t pid)
{
	int status;

	if (pid <= 0)
		return -1;
	kill(pid, SIGTERM);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* The next notification (NUL-terminated in buf), or -1 after timeout_ms. */
static int next_msg(char *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = { .fd = sock_fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -1;
	n = recv(sock_fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static void drain(void)
{
	char buf[1024];

	while (!next_msg(buf, sizeof(buf), 0))
		;
}

/* A line of msg equals line. */
static bool has_line(const char *msg, const char *line)
{
	size_t n = strlen(line);
	const char *p = msg;

	while ((p = strstr(p, line))) {
		if ((p == msg || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
		p += n;
	}
	return false;
}

static void test_ready_watchdog_stopping(void)
{
	bool status_failed = false, status_serving = false;
	char buf[1024];
	__u64 deadline, last_wd = 0, gap, max_gap = 0, t;
	struct silo_daemon_info di;
	bool ready = false, stopping = false;
	int watchdogs = 0, rc;
	char env_sock[PATH_MAX + 16];
	pid_t pid;

	snprintf(env_sock, sizeof(env_sock), "NOTIFY_SOCKET=%s", sock_path);
	drain();
	/* Three resyncs fail first; heartbeat 1 s, watchdog 300 ms: the
	 * watchdog's half (150 ms) is the smaller, so it sets the pace. */
	pid = start(
		"--heartbeat-ms 1000 --timeout-ms 3000 --resync-interval-ms 50",
		env_sock, "WATCHDOG_USEC=300000", "SILOD_TEST_FAIL_RESYNC=3");
	REQUIRE(pid > 0, "fork");

	deadline = mono_ms() + 10000;
	while (!ready && mono_ms() < deadline) {
		if (next_msg(buf, sizeof(buf), 500))
			continue;
		if (strstr(buf, "STATUS=resync failed"))
			status_failed = true;
		/* READY=1: the cache is trusted right now. */
		if (has_line(buf, "READY=1")) {
			ready = true;
			CHECK(!silo_daemon_info(s, &di) && di.running &&
				      di.cache_trusted && di.state.resyncs >= 1,
			      "READY=1 before silod synced and beat");
		}
	}
	REQUIRE(ready, "no READY=1 within 10 s");
	CHECK(status_failed,
	      "no STATUS=resync failed while the resyncs failed");

	/* 1.5 s of WATCHDOG=1, never further apart than WATCHDOG_USEC. */
	deadline = mono_ms() + 1500;
	while ((t = mono_ms()) < deadline) {
		if (next_msg(buf, sizeof(buf), 100))
			continue;
		if (strstr(buf, "STATUS=serving "))
			status_serving = true;
		if (!has_line(buf, "WATCHDOG=1"))
			continue;
		t = mono_ms();
		gap = last_wd ? t - last_wd : 0;
		if (gap > max_gap)
			max_gap = gap;
		last_wd = t;
		watchdogs++;
	}
	CHECK(status_serving, "no STATUS=serving after READY=1");
	CHECK(watchdogs >= 5, "%d WATCHDOG=1 in 1.5 s, want ~10", watchdogs);
	CHECK(max_gap < 300, "WATCHDOG=1 %llu ms apart: systemd would kill it",
	      (unsigned long long)max_gap);

	kill(pid, SIGTERM);
	deadline = mono_ms() + 5000;
	while (!stopping && mono_ms() < deadline)
		if (!next_msg(buf, sizeof(buf), 500) &&
		    has_line(buf, "STOPPING=1"))
			stopping = true;
	CHECK(stopping, "no STOPPING=1 after SIGTERM");
	rc = stop(pid);
	CHECK_EQ(rc, 0);
}

/* WATCHDOG_PID names another process: the watchdog is not silod's. */
static void test_watchdog_of_another_pid(void)
{
	char env_sock[PATH_MAX + 16], buf[1024];
	bool ready = false, wd = false;
	__u64 deadline;
	pid_t pid;

	snprintf(env_sock, sizeof(env_sock), "NOTIFY_SOCKET=%s", sock_path);
	drain();
	pid = start("--heartbeat-ms 50 --timeout-ms 200", env_sock,
		    "WATCHDOG_USEC=100000", "WATCHDOG_PID=1");
	REQUIRE(pid > 0, "fork");
	deadline = mono_ms() + 10000;
	while (mono_ms() < deadline) {
		if (next_msg(buf, sizeof(buf), 100))
			continue;
		if (has_line(buf, "READY=1") && !ready) {
			ready = true;
			deadline = mono_ms() + 500; /* 5 watchdog periods */
		}
		if (has_line(buf, "WATCHDOG=1"))
			wd = true;
	}
	CHECK(ready, "no READY=1");
	CHECK(!wd, "WATCHDOG=1 although WATCHDOG_PID is another process");
	CHECK_EQ(stop(pid), 0);
}

/* Not under systemd: runs, serves, exits cleanly; nothing is sent. */
static void test_without_notify_socket(void)
{
	struct silo_daemon_info di = {};
	char buf[1024];
	pid_t pid;
	int i;

	drain();
	pid = start("--heartbeat-ms 50 --timeout-ms 200",
		    "WATCHDOG_USEC=100000", NULL, NULL);
	REQUIRE(pid > 0, "fork");
	for (i = 0; i < 500; i++) {
		if (!silo_daemon_info(s, &di) && di.running &&
		    di.cache_trusted && di.state.pid == (__u32)pid)
			break;
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			pid = 0;
			break;
		}
		usleep(10000);
	}
	CHECK(di.running && di.cache_trusted,
	      "silod without NOTIFY_SOCKET does not serve");
	CHECK(next_msg(buf, sizeof(buf), 200), "a notification arrived: %s",
	      buf);
	if (pid)
		CHECK_EQ(stop(pid), 0);
}

int main(void)
{
	struct silo_opts opts = { .pin_root = test_pin_root() };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (test_init())
		return 1;
	if (!mkdtemp(dir)) {
		printf("not ok - setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "%s/notify", dir);
	memcpy(sa.sun_path, sock_path, sizeof(sa.sun_path));
	sock_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sock_fd < 0 || bind(sock_fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    silo_open(&s, &opts)) {
		printf("not ok - setup: notify socket or silo_open: %s\n",
		       strerror(errno));
		goto out;
	}
	RUN(test_ready_watchdog_stopping);
	RUN(test_watchdog_of_another_pid);
	RUN(test_without_notify_socket);
	silo_close(s);
out:
	if (sock_fd >= 0)
		close(sock_fd);
	unlink(sock_path);
	rmdir(dir);
	return 0;
}
