// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The names and descriptions of the counters, from abi.h's X-macro tables:
 * one copy for the CLI, silod and the library. */
#include <stddef.h>
#include "internal.h"

#define X_FIELD(name, field, desc) #field,
#define X_DESC(name, field, desc) desc,

static const char *const xdp_names[] = { SILO_XDP_STATS(X_FIELD) };
static const char *const xdp_descs[] = { SILO_XDP_STATS(X_DESC) };
static const char *const rp_names[] = { SILO_REUSEPORT_STATS(X_FIELD) };
static const char *const rp_descs[] = { SILO_REUSEPORT_STATS(X_DESC) };
static const char *const daemon_names[] = { SILO_DAEMON_STATS(X_FIELD) };
static const char *const daemon_descs[] = { SILO_DAEMON_STATS(X_DESC) };
static const char *const ct_names[] = { SILO_CT_STATS(X_FIELD) };
static const char *const ct_descs[] = { SILO_CT_STATS(X_DESC) };

_Static_assert(ARRAY_SIZE(xdp_names) == SILO_STAT_MAX, "xdp counters");
_Static_assert(ARRAY_SIZE(rp_names) == SILO_RSTAT_MAX, "reuseport counters");
_Static_assert(ARRAY_SIZE(daemon_names) == SILO_DSTAT_MAX, "silod counters");

const char *silo_stat_name(unsigned int idx)
{
	return idx < SILO_STAT_MAX ? xdp_names[idx] : NULL;
}

const char *silo_stat_desc(unsigned int idx)
{
	return idx < SILO_STAT_MAX ? xdp_descs[idx] : NULL;
}

const char *silo_reuseport_stat_name(unsigned int idx)
{
	return idx < SILO_RSTAT_MAX ? rp_names[idx] : NULL;
}

const char *silo_reuseport_stat_desc(unsigned int idx)
{
	return idx < SILO_RSTAT_MAX ? rp_descs[idx] : NULL;
}

const char *silo_daemon_stat_name(unsigned int idx)
{
	return idx < SILO_DSTAT_MAX ? daemon_names[idx] : NULL;
}

const char *silo_daemon_stat_desc(unsigned int idx)
{
	return idx < SILO_DSTAT_MAX ? daemon_descs[idx] : NULL;
}

const char *silo_ct_stat_name(unsigned int idx)
{
	return idx < SILO_CT_STAT_MAX ? ct_names[idx] : NULL;
}

const char *silo_ct_stat_desc(unsigned int idx)
{
	return idx < SILO_CT_STAT_MAX ? ct_descs[idx] : NULL;
}
