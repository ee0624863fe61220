/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The offload envelope's conditions (genid.outside[]). Public.
 */
#ifndef SILO_ABI_ENVELOPE_H
#define SILO_ABI_ENVELOPE_H

#include "silo/abi/common.h"

/*
 * The offload envelope: the configurations in which XDP forwarding is equal
 * to the kernel's. Each condition below puts a family's forwarded traffic
 * outside it: the data path then passes that traffic to the stack (counted
 * as pass_envelope) and "silo xdp status" names the condition and what to do.
 * Written by the loader and re-evaluated by silod as the configuration
 * changes. The list makes the bits and the names, X(NAME, name); what each
 * means and what to do about it are libsilo's words (silo_envelope_desc(),
 * silo_envelope_todo()), not the contract's.
 */
#define SILO_ENVELOPE(X)                    \
	X(NFTABLES, nftables)               \
	X(IPTABLES_LEGACY, iptables_legacy) \
	X(XFRM, xfrm)                       \
	X(FORWARDING_OFF, forwarding_off)   \
	X(MPATH_HASH, mpath_hash)           \
	X(UNKNOWN, unknown)                 \
	X(TC, tc)                           \
	X(RULE_SUPPRESS, rule_suppress)

enum silo_envelope_bit {
#define SILO_X(name, field) SILO_ENV_BIT_##name,
	SILO_ENVELOPE(SILO_X)
#undef SILO_X
		SILO_ENV_BIT_MAX
};

#define SILO_ENV(name) (1U << SILO_ENV_BIT_##name)
/* What an operator may choose to bypass (xdp load --allow-firewall-bypass). */
#define SILO_ENV_OVERRIDABLE \
	(SILO_ENV(NFTABLES) | SILO_ENV(IPTABLES_LEGACY) | SILO_ENV(TC))

#endif /* SILO_ABI_ENVELOPE_H */
