/* SPDX-License-Identifier: GPL-2.0 */
/*
 * silod as a child of a tool that runs silo in a namespace of its own:
 * silo forwards only while silod beats. Every tool's binary is in
 * $(OUTPUT)/tools/, whatever its folder of tools/; silod is in $(OUTPUT).
 */
#ifndef SILO_TEST_SILOD_CHILD_H
#define SILO_TEST_SILOD_CHILD_H

#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "silo/silo.h"

/* Starts silod for s's namespace and pin root; waits until it beats. */
static inline pid_t silod_child_start(struct silo *s, const char *pin_root)
{
	char exe[PATH_MAX], silod[PATH_MAX + 16];
	struct silo_daemon_info di;
	pid_t pid, parent;
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = '\0';
	snprintf(silod, sizeof(silod), "%s/../silod", dirname(exe));
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		/* Goes with the tool, even one that was killed. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) || getppid() != parent)
			_exit(127);
		execl(silod, "silod", "-q", "--pin-root", pin_root, NULL);
		_exit(127);
	}
	for (i = 0; pid > 0 && i < 100; i++) {
		if (!silo_daemon_info(s, &di) && di.running && di.cache_trusted)
			return pid;
		usleep(50000);
	}
	fprintf(stderr, "%s did not start\n", silod);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

static inline void silod_child_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

#endif /* SILO_TEST_SILOD_CHILD_H */
