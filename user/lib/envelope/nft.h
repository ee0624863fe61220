/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/* nftables as the envelope sees it (nft.c reads, envelope.c decides). */
#ifndef SILO_ENVELOPE_NFT_H
#define SILO_ENVELOPE_NFT_H

#include <stddef.h>
#include "silo/abi/route.h"

#define FAM_V4 (1U << SILO_FAM_V4)
#define FAM_V6 (1U << SILO_FAM_V6)
#define FAM_BOTH (FAM_V4 | FAM_V6)

struct nft_view {
	unsigned int outside; /* FAM_*: a chain on the forward path */
	char detail[256]; /* the first such chain, and why it counts */
};

/*
 * Reads this namespace's ruleset, bracketed by its generation, and says
 * which families have a chain on the forward path that is not proven to
 * change nothing. 0, or -errno (-EAGAIN: the ruleset kept changing).
 */
int nft_view_read(struct nft_view *v);

#endif /* SILO_ENVELOPE_NFT_H */
