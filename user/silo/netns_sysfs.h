/* SPDX-License-Identifier: GPL-2.0 */
/* The sysfs of the namespace a command serves (netns_sysfs.c). */
#ifndef SILO_CLI_NETNS_SYSFS_H
#define SILO_CLI_NETNS_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

/* A private sysfs of this process's network namespace, mounted on a new
 * directory whose path goes into dir; "" when it could not be. */
void netns_sysfs_mount(char *dir, size_t len);
/* Unmounts and removes what netns_sysfs_mount() made; "" is nothing. */
void netns_sysfs_umount(const char *dir);

/* Whether a sysfs CPU mask ("0", "00000000,00000004") has a CPU in it:
 * RPS's rps_cpus is off when it has none. */
bool sysfs_mask_any(const char *mask);

#endif /* SILO_CLI_NETNS_SYSFS_H */
