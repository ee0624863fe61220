/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small harness for silo's C tests. Each test prints one line that
 * tests/run.sh counts: "ok - NAME", "not ok - NAME: WHY" or "skip - NAME:
 * WHY"; diagnostics start with "# ".
 */
#ifndef SILO_TEST_H
#define SILO_TEST_H

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include "silo/silo.h"

static int t_failures;
static int t_skipped;
static char t_why[512];

static inline void t_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void t_fail(const char *file, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("# %s:%d: %s\n", file, line, msg);
	if (!t_failures++)
		snprintf(t_why, sizeof(t_why), "%s:%d: %s", file, line, msg);
}

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond))                                     \
			t_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		long long _a = (long long)(a), _b = (long long)(b);            \
		if (_a != _b)                                                  \
			t_fail(__FILE__, __LINE__,                             \
			       "%s == %lld, want %s == %lld", #a, _a, #b, _b); \
	} while (0)

/* Stops the current test when it cannot go on. */
#define REQUIRE(cond, ...)                                       \
	do {                                                     \
		if (!(cond)) {                                   \
			t_fail(__FILE__, __LINE__, __VA_ARGS__); \
			return;                                  \
		}                                                \
	} while (0)

#define SKIP(...)                                            \
	do {                                                 \
		t_skipped = 1;                               \
		snprintf(t_why, sizeof(t_why), __VA_ARGS__); \
		return;                                      \
	} while (0)

static inline void t_run(const char *name, void (*fn)(void))
{
	t_failures = 0;
	t_skipped = 0;
	t_why[0] = '\0';
	fflush(stdout);
	fn();
	if (t_failures)
		printf("not ok - %s: %s\n", name, t_why);
	else if (t_skipped)
		printf("skip - %s: %s\n", name, t_why);
	else
		printf("ok - %s\n", name);
	fflush(stdout);
}

#define RUN(fn) t_run(#fn, fn)

/* Runs a shell command; returns its exit status. */
static inline int sh(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline int sh(const char *fmt, ...)
{
	char cmd[8192];
	int rc = -1, status;
	va_list ap;
	pid_t pid;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(stdout);
	fflush(stderr);
	/* Not system(): it ignores SIGINT while the command runs, so a
	 * benchmark interrupted then ran on, and its cleanup came late. */
	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	while (pid > 0) {
		if (waitpid(pid, &status, 0) == pid) {
			rc = status; /* as system()'s */
			break;
		}
		if (errno != EINTR)
			break;
	}
	if (rc)
		printf("# command failed (%d): %s\n", rc, cmd);
	return rc;
}

/*
 * Every test binary runs in a network namespace of its own (gone when it
 * exits, with its devices and XDP links) and pins under the directory that
 * tests/run.sh gives it, which run.sh removes afterwards.
 */
static inline const char *test_pin_root(void)
{
	const char *root = getenv("SILO_TEST_PIN_ROOT");

	return root ? root : "/sys/fs/bpf/silo-test";
}

/*
 * Starts $BUILD/silod with "-q --pin-root PIN_ROOT" and the space-separated
 * arguments args, the environment less the names in unset and plus the
 * "NAME=VALUE" entries of env (either list NULL-terminated, or NULL). It
 * dies with the test, whatever kills that. Returns its pid, or -1.
 */
static inline pid_t test_silod_spawn(const char *args, const char *const *env,
				     const char *const *unset)
{
	char line[1024], bin[PATH_MAX], *argv[32], *tok, *save;
	int argc = 0;
	pid_t pid;

	snprintf(bin, sizeof(bin), "%s/silod", getenv("BUILD"));
	snprintf(line, sizeof(line), "-q --pin-root %s %s", test_pin_root(),
		 args);
	argv[argc++] = bin;
	for (tok = strtok_r(line, " ", &save); tok && argc < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (; unset && *unset; unset++)
			unsetenv(*unset);
		for (; env && *env; env++)
			putenv((char *)*env);
		execv(bin, argv);
		_exit(127);
	}
	return pid;
}

static inline void quiet_print(enum silo_log_level level, const char *fmt,
			       va_list ap)
{
	if (level > SILO_LOG_WARN && !getenv("SILO_TEST_VERBOSE"))
		return;
	printf("# silo: ");
	vprintf(fmt, ap);
}

/* By ioctl: /sys/class/net shows the namespace sysfs was mounted in. */
static inline int read_mac(const char *dev, unsigned char mac[6])
{
	struct ifreq ifr = {};
	int fd, err = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		err = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return err;
}

/* The kernel id of the map pinned as dir/name; 0 when there is none. */
static inline __u32 pinned_map_id(const char *dir, const char *name)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	close(fd);
	return info.id;
}

/* IPv6 datagrams the stack of the caller's namespace forwarded
 * (Ip6OutForwDatagrams): a baseline that forwarded through it measures
 * the kernel. */
static inline __u64 ip6_forwarded(void)
{
	unsigned long long n = 0;
	char line[256];
	FILE *f = fopen("/proc/self/net/snmp6", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Ip6OutForwDatagrams %llu", &n) == 1)
			break;
	fclose(f);
	return n;
}

static inline int test_init(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	silo_set_print(quiet_print);
	if (unshare(CLONE_NEWNET)) {
		printf("not ok - setup: unshare(CLONE_NEWNET): %s\n",
		       strerror(errno));
		return -1;
	}
	if (sh("ip link set lo up"))
		return -1;
	return 0;
}

#endif /* SILO_TEST_H */
