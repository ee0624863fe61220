/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* Pins: the pin directory (core.c) and what is pinned in it (pins.c). */
#ifndef SILO_LIB_PINS_H
#define SILO_LIB_PINS_H

#include "silod.h"

/*
 * Checks every existing directory from the bpffs mount down to the pin
 * directory: a directory, not a link, owned by root (or us), not writable
 * by group or others. -EPERM or -ELOOP (said why and what to do) when not.
 */
int silo_pin_dirs_check(const struct silo *s);
/* Makes the pin directory (0700) and checks the path, before and after. */
int silo_pin_dir_make(const struct silo *s);

/*
 * A namespace's pins (pins.c): the only place that knows which pins exist.
 * It makes and adopts them, counts their users (XDP links, reuseport
 * groups, silod) and removes them with the last user.
 */
/* The shared maps' names in the BPF object, which are their pin names. */
extern const char *const silo_map_names[SILO_MAP_COUNT];
int silo_pin_path(const struct silo *s, char *buf, size_t len,
		  const char *name);
int silo_link_pin_path(const struct silo *s, char *buf, size_t len,
		       __u32 ifindex);
/* A device's XDP link pin: an fd of it (-ENOENT: none), pinning it (over
 * the one there with replace), removing it. */
int silo_link_pin_get(const struct silo *s, __u32 ifindex);
int silo_link_pin(const struct silo *s, __u32 ifindex, int link_fd,
		  bool replace);
void silo_link_unpin(const struct silo *s, __u32 ifindex);
/* An fd of the object pinned as name in the pin directory, or -errno. */
int silo_obj_get(const struct silo *s, const char *name);
/* Opens every pinned map after checking meta: -ENOENT when silo is not
 * loaded here, -ESTALE when the pins are of another layout or namespace. */
int silo_maps_open(struct silo *s, struct silo_maps *m);
/* Pins every map of m (meta last); on failure removes what it pinned. */
int silo_maps_pin(struct silo *s, const struct silo_maps *m);
/* Removes the map pins, meta first. */
void silo_maps_unpin(struct silo *s);
/* Pins node's route cache; one pinned already is fine. */
int silo_pin_node_cache(const struct silo *s, __u32 node, int fd);
/* True while an XDP link, a reuseport group or silod uses the shared maps. */
bool silo_maps_in_use(struct silo *s);
/* Removes the pin directory and its parents up to the pin root, each
 * only when empty. */
void silo_pin_dirs_remove_empty(const struct silo *s);

/* What every reuseport group shares, pinned as PIN_DIR/reuseport_*. */
enum silo_rp_pin {
	SILO_RP_GROUPS,
	SILO_RP_SOCKETS,
	SILO_RP_NODES,
	SILO_RP_STATS,
	SILO_RP_QUEUES,
	SILO_RP_SELECT, /* programs from here on */
	SILO_RP_MIGRATE,
	SILO_RP_COUNT
};
/* An fd of one of them, or -errno. */
int silo_rp_pin_get(const struct silo *s, enum silo_rp_pin which);
/* Opens them all and the cpu_node map (fds stored as opened): -ENOENT when
 * there are none, -ESTALE when some are missing. */
int silo_rp_pins_open(const struct silo *s, int fd[SILO_RP_COUNT],
		      int *cpu_node_fd);
/* Pins them all; on failure removes what it pinned. */
int silo_rp_pins_pin(const struct silo *s, const int fd[SILO_RP_COUNT]);
/* With the last group gone, the shared objects go, then the shared maps
 * unless XDP or silod still uses them. */
void silo_rp_pins_release(struct silo *s);
/* Removes the shared objects and every group's pins but keep's: they were
 * left when the shared maps had to be made anew. */
void silo_rp_pins_remove_orphans(struct silo *s, const char *keep);
/* A group's own pins, in PIN_DIR/reuseport/NAME/. Claiming the name makes
 * the directory (under the group lock): -EEXIST when taken, -ENOENT when
 * the pin directory went meanwhile (try again). */
int silo_group_pins_claim(const struct silo *s, const char *name);
int silo_group_pins_pin(const struct silo *s, const char *name, int sockets_fd,
			int slots_fd);
/* -ESTALE when either is missing; fds stored as opened (-1 when not). */
int silo_group_pins_open(const struct silo *s, const char *name,
			 int *sockets_fd, int *slots_fd);
void silo_group_pins_remove(const struct silo *s, const char *name);

#endif /* SILO_LIB_PINS_H */
