/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The contract between silo's BPF programs and user space: every map key and
 * value, counter index, enum and limit, defined once. Included by the BPF
 * side (after vmlinux.h) and by user space (after <linux/types.h>).
 *
 * Changing any struct here changes the pinned maps' layout: bump
 * SILO_LAYOUT_VERSION so that an old pin is reported and replaced, never
 * silently reused with the wrong layout.
 */
#ifndef SILO_ABI_H
#define SILO_ABI_H

/* The public contracts, one header each. Private layouts (fill log,
 * admission) are in silo/abi/internal.h, which is not installed. */
#include "silo/abi/common.h"
#include "silo/abi/pins.h"
#include "silo/abi/envelope.h"
#include "silo/abi/route.h"
#include "silo/abi/stats.h"
#include "silo/abi/daemon.h"
#include "silo/abi/reuseport.h"
#include "silo/abi/service.h"

#endif /* SILO_ABI_H */
