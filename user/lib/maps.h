/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* The shared maps (maps.c): making them, filling them; genid's advance
 * (maps_genid.h). */
#ifndef SILO_LIB_MAPS_H
#define SILO_LIB_MAPS_H

#include "silod.h"
#include "maps_genid.h"

struct bpf_object;
struct silo_nl_routes;
/* route_mtus from a walk of the routes (route_mtus.c); *changed when the
 * map held anything else. */
int silo_route_mtus_write(int fd, const struct silo_nl_routes *r,
			  bool *changed);
/* src_checked from a walk of the routes and this host's addresses
 * (src_checked.c); *whole when it holds every prefix (sorts r's). */
int silo_src_checked_write(int fd, struct silo_nl_routes *r, bool *whole);
/* direct_skip from a walk of the routes and the rules (direct_skip.c;
 * sorts r's). */
int silo_direct_skip_write(int fd, struct silo_nl_routes *r);
/* r's cover (every route of the rules' tables) into r's direct as at most
 * SILO_DIRECT_COVER prefixes a family that hold them all; 0 or -ENOMEM. */
int silo_direct_cover(struct silo_nl_routes *r);
/* Points every map of obj named like a shared map at the shared one. */
int silo_maps_reuse(const struct silo_maps *m, struct bpf_object *obj);
/* Makes the pinned maps that hold redirect targets take this release's
 * multi-buffer program, made again where an earlier release's refuses it
 * (maps_frags.c). Before any program is loaded over the pins. */
int silo_maps_frags(struct silo *s, struct silo_maps *m);
/* Entries per node of the route caches. */
int silo_maps_cache_size(const struct silo_maps *m, __u32 *size);
int silo_fill_cpu_node(int map_fd, __u32 *nr_nodes);

#endif /* SILO_LIB_MAPS_H */
