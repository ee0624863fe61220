// SPDX-License-Identifier: GPL-2.0
/*
 * The sysfs of the network namespace a command serves. Under --netns the
 * process has entered the namespace (open_silo()), but its mounts still
 * show the sysfs of the namespace it came from, whose devices of the same
 * name are others. A sysfs mounted now, in a mount namespace of this
 * process's own, shows the right ones. And what is read there: CPU masks.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>
#include "netns_sysfs.h"

void netns_sysfs_mount(char *dir, size_t len)
{
	snprintf(dir, len, "/tmp/silo-sysfs-XXXXXX");
	if (!mkdtemp(dir)) {
		dir[0] = '\0';
		return;
	}
	if (unshare(CLONE_NEWNS) ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("sysfs", dir, "sysfs", MS_RDONLY, NULL)) {
		rmdir(dir);
		dir[0] = '\0';
	}
}

void netns_sysfs_umount(const char *dir)
{
	if (!dir[0])
		return;
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

bool sysfs_mask_any(const char *mask)
{
	while (*mask == '0' || *mask == ',')
		mask++;
	return *mask && *mask != '\n';
}
