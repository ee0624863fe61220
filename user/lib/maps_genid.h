/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* genid's advance, for what writes genid: maps_genid.c's bumps and syncs,
 * the envelope (maps.h includes this header for the library's files). */
#ifndef SILO_LIB_MAPS_GENID_H
#define SILO_LIB_MAPS_GENID_H

#include "silod.h"

/* genid + n; past the top it wraps to 1, never 0 (0 marks an entry being
 * rewritten). For a bump written together with other fields of genid. */
static inline void silo_genid_advance(struct silo_genid *g, unsigned int n)
{
	g->genid += n;
	if (g->genid < n)
		g->genid = 1;
}

#endif /* SILO_LIB_MAPS_GENID_H */
