/* SPDX-License-Identifier: GPL-2.0 */
/* The silo CLI's printing helpers (fmt.c). */
#ifndef SILO_FMT_H
#define SILO_FMT_H

#include <stddef.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <json-c/json.h>
#include <linux/types.h>
#include "silo/silo.h"

/* Prints obj as JSON on stdout (-p: indented) and frees it. */
void json_print(json_object *obj);

void fmt_addr(char *buf, size_t len, int family, const __u8 *addr);
void fmt_mac(char *buf, size_t len, const __u8 *mac);
const char *fmt_ifname(char *buf, __u32 ifindex);
const char *fib_ret_name(int rc);

/* The route cache key's fields and why, from genid's flags: a line of
 * text ("destination, source (IPv4: ...)"), and JSON fields added to o. */
void route_key_str(char *buf, size_t len, __u32 genid_flags);
void route_key_json(json_object *o, __u32 genid_flags);
/* How a route cache miss is looked up, per family: through the policy
 * rules, or where no rule's prefix holds the packet the main table
 * directly (direct_v4, direct_v6 in route_key_json()). */
void route_lookup_str(char *buf, size_t len, __u32 genid_flags);

/* One change of silo.conf's apply: op, object, name, detail, line,
 * error (null when it did not fail). */
json_object *fmt_change_json(const struct silo_change *c);

/* A CPU bitmap (SILO_CPU_WORDS words) as "0-3,8"; "none" when empty. */
void fmt_cpus(char *buf, size_t len, const __u64 *cpus);

/* What silo does on dev with the checksums its senders leave to offload
 * (silo_xdp_csum()): "finish (N)", "pass (N)", "-" or "?"; as JSON, NULL
 * when unreadable or the device is gone. */
void fmt_xdp_csum(struct silo *s, const struct silo_xdp_dev *dev, char *buf,
		  size_t len);
json_object *fmt_xdp_csum_json(struct silo *s, const struct silo_xdp_dev *dev);

/* The envelope and established connections (fmt_envelope.c): JSON, and
 * the lines of "silo xdp status" (daemon: silod runs; live: it beats). */
json_object *fmt_envelope_json(const struct silo_envelope_info *e,
			       const struct silo_conntrack_info *ct);
void fmt_envelope_print(const struct silo_envelope_info *e,
			const struct silo_conntrack_info *ct, bool daemon,
			bool live);

#endif /* SILO_FMT_H */
