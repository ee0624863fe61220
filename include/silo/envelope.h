/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The offload envelope and the established connections of a stateful
 * firewall, as the configuration is now and as the data path sees them
 * (docs/ENVELOPE.md). Included by silo.h.
 */
#ifndef SILO_ENVELOPE_H
#define SILO_ENVELOPE_H

#ifndef SILO_SILO_H
#error "include silo/silo.h"
#endif

/*
 * The offload envelope (abi.h, SILO_ENVELOPE): per family (SILO_FAM_V4,
 * SILO_FAM_V6), the conditions under which silo passes forwarded traffic to
 * the stack, as the configuration is now and as the data path sees them.
 */
struct silo_envelope_info {
	__u32 holds[2]; /* SILO_ENV_* bits that hold now, evaluated live */
	bool loaded; /* false: no pins; override and outside are 0 */
	__u32 override; /* genid.override: bits the operator bypasses */
	__u32 outside[2]; /* genid.outside: the data path's view */
	char detail[256]; /* the first condition found, e.g. a chain */
};

/* Evaluates the envelope in this namespace and reads the pinned view. */
int silo_envelope_info(struct silo *s, struct silo_envelope_info *info);

/*
 * Established connections under a stateful nftables ruleset
 * (docs/ENVELOPE.md): which families' rulesets are proven to accept them
 * first (live), whether the operator opted in (--forward-established),
 * which families XDP forwards them for now, and the counters.
 */
struct silo_conntrack_info {
	unsigned int shape; /* 1 << SILO_FAM_*: proven now, evaluated live */
	char detail[192]; /* what lets them in, or what keeps them out */
	bool loaded; /* false: no pins; optin, fams and stats are 0 */
	bool optin; /* genid.ct_optin */
	unsigned int fams; /* genid.ct_fams: forwarded by XDP now */
	struct silo_ct_stats stats; /* ct_stats, summed over the CPUs */
};

int silo_conntrack_info(struct silo *s, struct silo_conntrack_info *info);
/* The name and description of counter idx (enum silo_ct_stat). */
const char *silo_ct_stat_name(unsigned int idx);
const char *silo_ct_stat_desc(unsigned int idx);
/* A condition's name ("nftables"), what it is, and what to do about it;
 * NULL for bit >= SILO_ENV_BIT_MAX. */
const char *silo_envelope_name(unsigned int bit);
const char *silo_envelope_desc(unsigned int bit);
const char *silo_envelope_todo(unsigned int bit);

#endif /* SILO_ENVELOPE_H */
