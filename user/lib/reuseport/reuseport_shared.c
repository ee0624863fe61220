// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* What every reuseport group shares: the pins PIN_DIR/reuseport_* and the
 * lock that makes group changes of several processes take turns. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include "reuseport.h"

/* How long a group change waits for another process's to finish. */
#define RP_LOCK_TIMEOUT_MS 5000 /* whole seconds */
#define RP_LOCK_POLL_MS 10

/* Whether lock_fd still locks the pin directory: once the directory holds
 * something of ours, only a holder of the lock removes it. */
bool silo_rp_lock_holds(const struct silo *s, int lock_fd)
{
	struct stat locked, named;

	return !fstat(lock_fd, &locked) && !stat(s->pin_dir, &named) &&
	       locked.st_dev == named.st_dev && locked.st_ino == named.st_ino;
}

/*
 * Group changes from several processes take turns: a lock on the pin
 * directory itself. bpffs holds no regular files, and a directory lock is
 * one only those who can open it can take: the directory is checked to be
 * root's and 0700 (silo_pin_dirs_check), so no other user can block silo
 * by holding it. The directory goes when the last user leaves (under this
 * lock, or empty), so the lock taken counts only while the path still
 * names the directory locked; otherwise lock the new one. create: make the
 * pin directory when missing (else -ENOENT: there is no group to change).
 * Gives up after RP_LOCK_TIMEOUT_MS with -ETIMEDOUT.
 */
int silo_rp_lock(const struct silo *s, bool create)
{
	__u64 until = silo_clock_ns(CLOCK_MONOTONIC) +
		      RP_LOCK_TIMEOUT_MS * 1000000ULL;
	int fd, err;

	for (;;) {
		err = create ? silo_pin_dir_make(s) : silo_pin_dirs_check(s);
		if (err)
			return err;
		fd = open(s->pin_dir,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			if (err == -ENOENT && create)
				continue; /* removed meanwhile: again */
			if (err != -ENOENT)
				pr_err("cannot open %s: %s\n", s->pin_dir,
				       strerror(-err));
			return err;
		}
		while (flock(fd, LOCK_EX | LOCK_NB)) {
			err = -errno;
			if (err == -EINTR)
				continue;
			if (err != -EWOULDBLOCK) {
				pr_err("cannot lock %s: %s\n", s->pin_dir,
				       strerror(-err));
				close(fd);
				return err;
			}
			if (silo_clock_ns(CLOCK_MONOTONIC) >= until) {
				pr_err("%s stayed locked for %u s: another silo process is changing reuseport groups, or hangs holding the lock (see 'fuser -v %s'); try again\n",
				       s->pin_dir, RP_LOCK_TIMEOUT_MS / 1000,
				       s->pin_dir);
				close(fd);
				return -ETIMEDOUT;
			}
			usleep(RP_LOCK_POLL_MS * 1000);
		}
		if (silo_rp_lock_holds(s, fd))
			return fd;
		close(fd); /* removed (and maybe made again) meanwhile */
	}
}

void silo_rp_unlock(int lock_fd)
{
	close(lock_fd); /* drops the flock */
}

static bool map_has_sizes(int fd, __u32 key_size, __u32 value_size)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return !bpf_obj_get_info_by_fd(fd, &info, &len) &&
	       info.key_size == key_size && info.value_size == value_size;
}

/* The shared objects: -ENOENT when there are none, -ESTALE when they are
 * incomplete or of another layout. */
int silo_rp_shared_open(struct silo_group *g)
{
	int err = silo_rp_pins_open(g->s, g->fd, &g->cpu_node_fd);

	if (err)
		return err;
	if (!map_has_sizes(g->fd[SILO_RP_GROUPS],
			   sizeof(struct silo_reuseport_key),
			   sizeof(struct silo_reuseport_group)) ||
	    !map_has_sizes(g->fd[SILO_RP_NODES],
			   sizeof(struct silo_reuseport_node_key),
			   sizeof(struct silo_reuseport_node)) ||
	    !map_has_sizes(g->fd[SILO_RP_STATS], sizeof(__u32),
			   sizeof(struct silo_reuseport_stats)) ||
	    !map_has_sizes(g->fd[SILO_RP_QUEUES], sizeof(__u32),
			   sizeof(struct silo_reuseport_queues)))
		return -ESTALE;
	return 0;
}
