/* SPDX-License-Identifier: GPL-2.0 */
/*
 * silod under test, for tests that include fwd.h: start it with options and
 * test hooks, wait until it is ready or has handled what was asked, stop it;
 * and the packets that prime and check its cache.
 */
#ifndef SILO_TEST_SILOD_UTIL_H
#define SILO_TEST_SILOD_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "fwd.h"

static pid_t silod_pid;
static char config_path[] = "/tmp/silod-test-XXXXXX";

/*
 * Starts silod with extra arguments; hook_fd >= 0 arms the test hook; env,
 * if not NULL, is one more "NAME=VALUE" for it (a SILOD_TEST_* hook).
 */
static inline pid_t silod_start_env(const char *extra, int hook_fd,
				    const char *env)
{
	char args[512], fd[64];
	const char *envs[3] = {};
	int n = 0;

	snprintf(
		args, sizeof(args),
		"--config %s --heartbeat-ms 20 --timeout-ms 200 --min-sweep-us 200 %s",
		config_path, extra);
	if (hook_fd >= 0) {
		snprintf(fd, sizeof(fd), "SILOD_TEST_HOOK_FD=%d", hook_fd);
		envs[n++] = fd;
	}
	if (env)
		envs[n++] = env;
	return test_silod_spawn(args, envs, NULL);
}

static inline pid_t silod_start(const char *extra, int hook_fd)
{
	return silod_start_env(extra, hook_fd, NULL);
}

/* Ready: silod published its pid and beats. */
static inline int silod_wait_ready(pid_t pid)
{
	struct silo_daemon_info di;
	int i;

	for (i = 0; i < 500; i++) {
		if (!silo_daemon_info(s, &di) && di.running &&
		    di.state.pid == (__u32)pid && di.state.resyncs &&
		    di.heartbeat.last_ns)
			return 0;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(10000);
	}
	return -1;
}

static inline int silod_stop(pid_t pid, int sig)
{
	int status;

	if (pid <= 0)
		return -1;
	kill(pid, sig);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* The config file made, silod started and ready; else said, nothing left
 * running, and -1. */
static inline int silod_boot(void)
{
	int fd = mkstemp(config_path);

	if (fd < 0) {
		printf("not ok - setup: %s: %s\n", config_path,
		       strerror(errno));
		return -1;
	}
	close(fd);
	silod_pid = silod_start("", -1);
	if (silod_wait_ready(silod_pid)) {
		printf("not ok - setup: silod did not start\n");
		silod_stop(silod_pid, SIGKILL);
		unlink(config_path);
		return -1;
	}
	return 0;
}

static inline int silod_restart(const char *extra, int hook_fd)
{
	silod_stop(silod_pid, SIGTERM);
	silod_pid = silod_start(extra, hook_fd);
	return silod_wait_ready(silod_pid);
}

static inline struct silo_daemon daemon_counters(void)
{
	struct silo_daemon_info di;

	silo_daemon_info(s, &di);
	return di.state;
}

/*
 * Waits until silod has handled a change: a first sweep after prev, and no
 * second sweep still to come (which would remove entries primed meanwhile).
 */
static inline void wait_settled(__u64 prev_sweeps)
{
	struct silo_daemon d;
	int i;

	for (i = 0; i < 400; i++) {
		d = daemon_counters();
		if (d.sweeps > prev_sweeps && !d.pending)
			return;
		usleep(5000);
	}
}

/* Waits until the entry for sp is gone (1) or the time is up (0). */
static inline int wait_gone(const struct pkt_spec *sp)
{
	struct silo_route_entry e;
	int i;

	for (i = 0; i < 400; i++) {
		if (cache_entry(sp, &e) == 0)
			return 1;
		usleep(5000);
	}
	return 0;
}

/* Caches sp's route (a miss or a hit) through dmac. */
static inline void prime(const struct pkt_spec *sp, const uint8_t *dmac)
{
	forward_through(sp, dmac);
}

static inline void expect_hit(const struct pkt_spec *sp, const uint8_t *dmac)
{
	CHECK_EQ(forward_through(sp, dmac).cache_hit, 1);
}

/*
 * Waits until silod has handled everything the kernel told it so far: no
 * second sweep pending and its counters unchanged across three beats of its
 * own loop (a burst is handled within the loop turn that reads it).
 */
static inline void silod_quiet(void)
{
	struct silo_daemon_info a, b;
	int tries, beats, i;
	__u64 last;

	for (tries = 0; tries < 20; tries++) {
		if (silo_daemon_info(s, &a))
			return;
		last = a.heartbeat.last_ns;
		b = a;
		/* three beats, at most 2 s */
		for (beats = 0, i = 0; beats < 3 && i < 200; i++) {
			usleep(10000);
			if (silo_daemon_info(s, &b))
				return;
			if (b.heartbeat.last_ns != last) {
				last = b.heartbeat.last_ns;
				beats++;
			}
		}
		if (!b.state.pending &&
		    !memcmp(&b.state.events_route, &a.state.events_route,
			    sizeof(__u64) * SILO_DSTAT_MAX))
			return;
	}
}

#endif /* SILO_TEST_SILOD_UTIL_H */
