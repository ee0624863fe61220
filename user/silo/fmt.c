// SPDX-License-Identifier: GPL-2.0
/* Printing: JSON out, and addresses, names and flags as text. */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "fmt.h"

void json_print(json_object *obj)
{
	int flags = cli.pretty ?
			    JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED :
			    JSON_C_TO_STRING_PLAIN;

	printf("%s\n", json_object_to_json_string_ext(obj, flags));
	cli.printed = true;
	json_object_put(obj);
}

void fmt_addr(char *buf, size_t len, int family, const __u8 *addr)
{
	if (!inet_ntop(family == SILO_AF_INET ? AF_INET : AF_INET6, addr, buf,
		       len))
		snprintf(buf, len, "?");
}

void fmt_mac(char *buf, size_t len, const __u8 *mac)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1],
		 mac[2], mac[3], mac[4], mac[5]);
}

const char *fmt_ifname(char *buf, __u32 ifindex)
{
	if (!if_indextoname(ifindex, buf))
		snprintf(buf, IF_NAMESIZE, "if%u", ifindex);
	return buf;
}

const char *fib_ret_name(int rc)
{
	static const char *const names[] = {
		"success",     "blackhole",    "unreachable", "prohibit",
		"not_fwded",   "fwd_disabled", "unsupp_lwt",  "no_neigh",
		"frag_needed", "no_src_addr",
	};

	if (rc >= 0 && rc < (int)(sizeof(names) / sizeof(names[0])))
		return names[rc];
	return "error";
}

static bool has_cpu(const __u64 *cpus, __u32 cpu)
{
	return (cpus[cpu / 64] >> (cpu % 64)) & 1;
}

/* A CPU bitmap as "0-3,8"; "none" when empty. */
void fmt_cpus(char *buf, size_t len, const __u64 *cpus)
{
	size_t off = 0;
	__u32 cpu, end;

	buf[0] = '\0';
	for (cpu = 0; cpu < SILO_MAX_CPUS; cpu++) {
		if (!has_cpu(cpus, cpu))
			continue;
		for (end = cpu;
		     end + 1 < SILO_MAX_CPUS && has_cpu(cpus, end + 1); end++)
			;
		if (off < len)
			off += snprintf(buf + off, len - off, "%s%u",
					off ? "," : "", cpu);
		if (end > cpu && off < len)
			off += snprintf(buf + off, len - off, "-%u", end);
		cpu = end;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}

/* Why a field is in the route cache key (genid flags): a name for JSON, a
 * text for the line that already names the field and family. */
static const struct {
	__u32 bit;
	const char *name;
	const char *text;
} key_why[] = {
	{ SILO_GENID_RULES_SRC_V4, "rules_src_v4", "rule from a prefix" },
	{ SILO_GENID_MPATH_V4, "mpath_v4", "multipath route" },
	{ SILO_GENID_RULES_SRC_V6, "rules_src_v6", "rule from a prefix" },
	{ SILO_GENID_MPATH_V6, "mpath_v6", "multipath route" },
	{ SILO_GENID_SRC_ROUTES_V6, "src_routes_v6", "route from a prefix" },
	{ SILO_GENID_RULES_L4, "rules_l4", "rule on them" },
	{ SILO_GENID_HASH_L4, "hash_l4", "multipath hash" },
	{ SILO_GENID_HASH_FLOWLABEL, "hash_flowlabel", "IPv6 multipath hash" },
};

static void appendf(char *buf, size_t len, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* snprintf at *n, which stays within buf. */
static void appendf(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= len - 1)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = *n + r < len ? *n + r : len - 1;
}

/* The reasons among mask that flags hold, joined by " / ". */
static void key_reasons(char *buf, size_t len, size_t *n, __u32 flags,
			__u32 mask)
{
	const char *sep = "";
	unsigned int i;

	for (i = 0; i < sizeof(key_why) / sizeof(key_why[0]); i++) {
		if (!(flags & mask & key_why[i].bit))
			continue;
		appendf(buf, len, n, "%s%s", sep, key_why[i].text);
		sep = " / ";
	}
}

void route_key_str(char *buf, size_t len, __u32 flags)
{
	const __u32 src = SILO_GENID_KEY_SRC_V4 | SILO_GENID_KEY_SRC_V6;
	const __u32 mpath = SILO_GENID_MPATH_V4 | SILO_GENID_MPATH_V6;
	size_t n = 0;

	buf[0] = '\0';
	appendf(buf, len, &n, "destination");
	if (flags & src)
		appendf(buf, len, &n, ", source (");
	if (flags & SILO_GENID_KEY_SRC_V4) {
		appendf(buf, len, &n, "IPv4: ");
		key_reasons(buf, len, &n, flags,
			    SILO_GENID_RULES_SRC_V4 | SILO_GENID_MPATH_V4);
	}
	if ((flags & src) == src)
		appendf(buf, len, &n, "; ");
	if (flags & SILO_GENID_KEY_SRC_V6) {
		appendf(buf, len, &n, "IPv6: ");
		key_reasons(buf, len, &n, flags,
			    SILO_GENID_RULES_SRC_V6 | SILO_GENID_MPATH_V6 |
				    SILO_GENID_SRC_ROUTES_V6);
	}
	if (flags & src)
		appendf(buf, len, &n, ")");
	if (flags & SILO_GENID_KEY_L4) {
		appendf(buf, len, &n, ", protocol and ports (");
		/* The hash counts only where a multipath route exists. */
		key_reasons(buf, len, &n, flags,
			    SILO_GENID_RULES_L4 |
				    (flags & mpath ? SILO_GENID_HASH_L4 : 0));
		appendf(buf, len, &n, ")");
	}
	if (flags & SILO_GENID_KEY_FLOWLABEL)
		appendf(buf, len, &n, ", flow label (IPv6 multipath hash)");
}

/* A JSON boolean of route_key_json(): one genid flag. */
struct flag_bool {
	const char *name;
	__u32 bit;
};

static const struct flag_bool key_bools[] = {
	{ "key_l4", SILO_GENID_KEY_L4 },
	{ "key_src_v4", SILO_GENID_KEY_SRC_V4 },
	{ "key_src_v6", SILO_GENID_KEY_SRC_V6 },
	{ "key_flowlabel", SILO_GENID_KEY_FLOWLABEL },
};

/* Misses looked up in the main table alone (route.h, direct_skip). */
static const struct flag_bool lookup_bools[] = {
	{ "direct_v4", SILO_GENID_DIRECT_V4 },
	{ "direct_v6", SILO_GENID_DIRECT_V6 },
};

static void add_flag_bools(json_object *o, const struct flag_bool *b, size_t n,
			   __u32 flags)
{
	size_t i;

	for (i = 0; i < n; i++)
		json_object_object_add(
			o, b[i].name,
			json_object_new_boolean(flags & b[i].bit));
}

void route_key_json(json_object *o, __u32 flags)
{
	json_object *why = json_object_new_array();
	unsigned int i;

	add_flag_bools(o, key_bools, sizeof(key_bools) / sizeof(key_bools[0]),
		       flags);
	for (i = 0; i < sizeof(key_why) / sizeof(key_why[0]); i++)
		if (flags & key_why[i].bit)
			json_object_array_add(
				why, json_object_new_string(key_why[i].name));
	json_object_object_add(o, "why", why);
	add_flag_bools(o, lookup_bools,
		       sizeof(lookup_bools) / sizeof(lookup_bools[0]), flags);
}

void route_lookup_str(char *buf, size_t len, __u32 flags)
{
	static const char *const how[] = { "through the rules",
					   "main table directly" };

	snprintf(buf, len, "IPv4 %s, IPv6 %s",
		 how[!!(flags & SILO_GENID_DIRECT_V4)],
		 how[!!(flags & SILO_GENID_DIRECT_V6)]);
}

json_object *fmt_change_json(const struct silo_change *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(
		o, "op", json_object_new_string(silo_change_op_name(c->op)));
	json_object_object_add(o, "object", json_object_new_string(c->object));
	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "detail", json_object_new_string(c->detail));
	json_object_object_add(o, "line", json_object_new_int(c->line));
	json_object_object_add(
		o, "error",
		c->err ? json_object_new_string(strerror(-c->err)) : NULL);
	return o;
}

/* What silo does with checksums left to offload (silo_xdp_csum()). */
static const char *const csum_what[] = {
	[SILO_XDP_CSUM_NONE] = "none",
	[SILO_XDP_CSUM_FINISH] = "finish",
	[SILO_XDP_CSUM_PASS] = "pass",
};

/* What the device does with checksums its senders leave to offload. */
json_object *fmt_xdp_csum_json(struct silo *s, const struct silo_xdp_dev *dev)
{
	struct silo_xdp_csum_info c;
	json_object *o;

	if (!dev->attached || silo_xdp_csum(s, dev->ifname, &c))
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "kind", json_object_new_string(c.kind));
	json_object_object_add(o, "action",
			       json_object_new_string(csum_what[c.what]));
	json_object_object_add(o, "finished",
			       json_object_new_uint64(c.finished));
	json_object_object_add(o, "passed", json_object_new_uint64(c.passed));
	return o;
}

void fmt_xdp_csum(struct silo *s, const struct silo_xdp_dev *dev, char *buf,
		  size_t len)
{
	struct silo_xdp_csum_info c;

	if (silo_xdp_csum(s, dev->ifname, &c))
		snprintf(buf, len, "?");
	else if (c.what == SILO_XDP_CSUM_NONE)
		snprintf(buf, len, "-");
	else if (c.what == SILO_XDP_CSUM_FINISH)
		snprintf(buf, len, "finish (%llu)",
			 (unsigned long long)c.finished);
	else
		snprintf(buf, len, "pass (%llu)", (unsigned long long)c.passed);
}
