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
 * changes. The list makes the bits, the names and the texts: one definition.
 */
#define SILO_ENVELOPE(X)                                                       \
	X(NFTABLES, nftables,                                                  \
	  "an nftables chain sees forwarded packets (hook prerouting, "        \
	  "forward or postrouting, or a netdev chain)",                        \
	  "delete the chain, or load with --allow-firewall-bypass if XDP "     \
	  "may skip it")                                                       \
	X(IPTABLES_LEGACY, iptables_legacy,                                    \
	  "iptables-legacy tables are loaded (/proc/net/ip*_tables_names)",    \
	  "flush and unload them (or use nftables), or load with "             \
	  "--allow-firewall-bypass if XDP may skip them")                      \
	X(XFRM, xfrm, "IPsec (xfrm) policies for forwarded or output traffic", \
	  "forwarded traffic must go through xfrm: silo stands aside")         \
	X(FORWARDING_OFF, forwarding_off,                                      \
	  "IPv6 forwarding is off (net.ipv6.conf.all.forwarding 0)",           \
	  "the kernel does not forward IPv6: neither does silo")               \
	X(MPATH_HASH, mpath_hash,                                              \
	  "a multipath hash policy bpf_fib_lookup cannot reproduce",           \
	  "use fib_multipath_hash_policy 0, 1 or 2")                           \
	X(UNKNOWN, unknown, "the configuration could not be read",             \
	  "see silod's log; silo stands aside until it can")                   \
	X(TC, tc,                                                              \
	  "tc filters or BPF programs, or a shaping qdisc, on a device "       \
	  "(forwarding in XDP skips them)",                                    \
	  "remove them, or load with --allow-firewall-bypass if XDP may "      \
	  "skip them")

enum silo_envelope_bit {
#define SILO_X(name, field, desc, todo) SILO_ENV_BIT_##name,
	SILO_ENVELOPE(SILO_X)
#undef SILO_X
		SILO_ENV_BIT_MAX
};

#define SILO_ENV(name) (1U << SILO_ENV_BIT_##name)
/* What an operator may choose to bypass (xdp load --allow-firewall-bypass). */
#define SILO_ENV_OVERRIDABLE \
	(SILO_ENV(NFTABLES) | SILO_ENV(IPTABLES_LEGACY) | SILO_ENV(TC))

#endif /* SILO_ABI_ENVELOPE_H */
