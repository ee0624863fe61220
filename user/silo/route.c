// SPDX-License-Identifier: GPL-2.0
/* silo route { show | flush | lookup } */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"

static int route_show(void *cfg, int argc, char **argv);
static int route_flush(void *cfg, int argc, char **argv);
static int route_lookup(void *cfg, int argc, char **argv);

static const struct cmd_spec route_show_spec = {
	.name = "show",
	.fn = route_show,
	.aliases = (const char *const[]){ "list", NULL },
	.help = "every route cache entry, per NUMA node, and whether it is\n"
		"valid under the current genid",
};

static const struct cmd_spec route_flush_spec = {
	.name = "flush",
	.fn = route_flush,
	.help = "delete every route cache entry",
};

struct lookup_cfg {
	const char *from, *iif;
	__u32 tos;
	bool has_tos;
};

static int parse_tos(void *cfg, const char *arg)
{
	struct lookup_cfg *c = cfg;

	if (parse_u32(arg, &c->tos) || c->tos > 255)
		return -EINVAL;
	c->has_tos = true;
	return 0;
}

static const struct opt lookup_opts[] = {
	OPTION_STR("from", lookup_cfg, from, "SRC",
		   "the packet's source (default none)"),
	OPTION_STR("iif", lookup_cfg, iif, "DEV",
		   "the device it arrives on (default: the\n"
		   "first device silo runs on)"),
	OPTION_FN("tos", parse_tos, "TOS", "0 to 255",
		  "its TOS byte (default: any cached entry's)"),
	OPTION_END,
};

static const struct cmd_spec route_lookup_spec = {
	.name = "lookup",
	.fn = route_lookup,
	.args = "ADDR",
	.min_args = 1,
	.max_args = 1,
	.opts = lookup_opts,
	.aliases = (const char *const[]){ "get", NULL },
	.help = "what the cache holds for ADDR and what the kernel FIB\n"
		"(bpf_fib_lookup, as the data path calls it) says for the\n"
		"same key; without a cache entry, asks the FIB for a packet\n"
		"from SRC arriving on DEV",
	.cfg_size = sizeof(struct lookup_cfg),
};

static const struct cmd_spec *const route_specs[] = {
	&route_show_spec,
	&route_flush_spec,
	&route_lookup_spec,
	NULL,
};

static __u64 current_genid(struct silo *s)
{
	struct silo_info info;

	return silo_info(s, &info) ? 0 : info.genid;
}

static json_object *entry_json(const struct silo_route_entry *e)
{
	json_object *o = json_object_new_object();
	char buf[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];

	json_object_object_add(
		o, "egress",
		json_object_new_string(fmt_ifname(ifname, e->ifindex)));
	json_object_object_add(o, "egress_ifindex",
			       json_object_new_int64(e->ifindex));
	fmt_addr(buf, sizeof(buf), e->family, e->nexthop);
	json_object_object_add(o, "nexthop", json_object_new_string(buf));
	fmt_mac(buf, sizeof(buf), e->dmac);
	json_object_object_add(o, "dmac", json_object_new_string(buf));
	fmt_mac(buf, sizeof(buf), e->smac);
	json_object_object_add(o, "smac", json_object_new_string(buf));
	json_object_object_add(o, "mtu", json_object_new_int(e->mtu));
	return o;
}

/* A source entry always keys its source; a route entry always its
 * destination; the other one only under some rules and routes. */
static bool key_has_src(const struct silo_route_key *k)
{
	__u32 bit = k->family == SILO_AF_INET ? SILO_GENID_KEY_SRC_V4 :
						SILO_GENID_KEY_SRC_V6;

	return (k->format & SILO_KEY_SOURCE) || (k->format & bit);
}

static bool key_has_dst(const struct silo_route_key *k)
{
	static const __u8 zero[16];

	return !(k->format & SILO_KEY_SOURCE) || memcmp(k->dst, zero, 16);
}

static json_object *key_json(const struct silo_route_key *k)
{
	json_object *o = json_object_new_object();
	char buf[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];

	json_object_object_add(
		o, "kind",
		json_object_new_string(k->format & SILO_KEY_SOURCE ? "source" :
								     "route"));
	json_object_object_add(
		o, "iif",
		json_object_new_string(fmt_ifname(ifname, k->ifindex)));
	/* What the key leaves out is absent, not 0.0.0.0. */
	if (key_has_src(k)) {
		fmt_addr(buf, sizeof(buf), k->family, k->src);
		json_object_object_add(o, "src", json_object_new_string(buf));
	}
	if (key_has_dst(k)) {
		fmt_addr(buf, sizeof(buf), k->family, k->dst);
		json_object_object_add(o, "dst", json_object_new_string(buf));
	}
	json_object_object_add(o, "tos", json_object_new_int(k->tos));
	if (k->l4_proto) {
		json_object_object_add(o, "proto",
				       json_object_new_int(k->l4_proto));
		json_object_object_add(o, "sport",
				       json_object_new_int(ntohs(k->sport)));
		json_object_object_add(o, "dport",
				       json_object_new_int(ntohs(k->dport)));
	}
	return o;
}

struct show_ctx {
	__u64 genid;
	json_object *arr;
	size_t n;
};

/* Printed with the first entry, or after none, never before an error. */
static void show_header(struct show_ctx *c)
{
	if (c->arr || c->n)
		return;
	printf("%-4s %-10s %-18s %-18s %-4s %-10s %-18s %-17s %-5s %-6s %s\n",
	       "NODE", "IIF", "SRC", "DST", "TOS", "EGRESS", "NEXTHOP", "DMAC",
	       "MTU", "GENID", "VALID");
}

static int show_one(__u32 node, const struct silo_route_key *k,
		    const struct silo_route_entry *e, void *data)
{
	struct show_ctx *c = data;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	char nh[INET6_ADDRSTRLEN], dmac[18], iif[IF_NAMESIZE], oif[IF_NAMESIZE];
	bool valid = e->genid && e->genid == c->genid;

	show_header(c);
	c->n++;
	if (c->arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "node", json_object_new_int(node));
		json_object_object_add(o, "key", key_json(k));
		if (k->format & SILO_KEY_SOURCE)
			json_object_object_add(
				o, "source_check",
				json_object_new_string(
					e->verdict ?
						silo_stat_name(e->verdict) :
						"accept"));
		else
			json_object_object_add(o, "entry", entry_json(e));
		json_object_object_add(o, "genid",
				       json_object_new_uint64(e->genid));
		json_object_object_add(o, "valid",
				       json_object_new_boolean(valid));
		json_object_array_add(c->arr, o);
		return 0;
	}
	if (key_has_src(k))
		fmt_addr(src, sizeof(src), k->family, k->src);
	else
		strcpy(src, "*");
	if (key_has_dst(k))
		fmt_addr(dst, sizeof(dst), k->family, k->dst);
	else
		strcpy(dst, "*");
	if (k->format & SILO_KEY_SOURCE) {
		/* The source check's answer, in the egress columns. */
		printf("%-4u %-10s %-18s %-18s %-4u %-10s %-36s %-5s %-6llu %s\n",
		       node, fmt_ifname(iif, k->ifindex), src, dst, k->tos,
		       "(source)",
		       e->verdict ? silo_stat_name(e->verdict) : "accept", "-",
		       (unsigned long long)e->genid, valid ? "yes" : "no");
		return 0;
	}
	fmt_addr(nh, sizeof(nh), e->family, e->nexthop);
	fmt_mac(dmac, sizeof(dmac), e->dmac);
	printf("%-4u %-10s %-18s %-18s %-4u %-10s %-18s %-17s %-5u %-6llu %s\n",
	       node, fmt_ifname(iif, k->ifindex), src, dst, k->tos,
	       fmt_ifname(oif, e->ifindex), nh, dmac, e->mtu,
	       (unsigned long long)e->genid, valid ? "yes" : "no");
	return 0;
}

static int route_show(void *parsed __maybe_unused, int argc __maybe_unused,
		      char **argv __maybe_unused)
{
	struct show_ctx c = {};
	struct silo *s;
	int err;

	s = open_silo();
	if (!s)
		return 1;
	c.genid = current_genid(s);
	if (cli.json)
		c.arr = json_object_new_array();
	err = silo_route_foreach(s, show_one, &c);
	if (err) {
		json_object_put(c.arr);
		return 1;
	}
	show_header(&c);
	if (c.arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "genid",
				       json_object_new_uint64(c.genid));
		json_object_object_add(o, "entries", c.arr);
		json_print(o);
	}
	return 0;
}

static int route_flush(void *parsed __maybe_unused, int argc __maybe_unused,
		       char **argv __maybe_unused)
{
	struct silo *s;
	int n;

	s = open_silo();
	if (!s)
		return 1;
	n = silo_route_flush(s);
	if (n < 0)
		return 1;
	if (cli.json) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "flushed", json_object_new_int(n));
		json_print(o);
	} else {
		printf("flushed %d route cache entries\n", n);
	}
	return 0;
}

static bool same_answer(const struct silo_route_entry *a,
			const struct silo_route_entry *b)
{
	return a->ifindex == b->ifindex && !memcmp(a->dmac, b->dmac, 6) &&
	       !memcmp(a->smac, b->smac, 6) &&
	       !memcmp(a->nexthop, b->nexthop, 16) && a->mtu == b->mtu;
}

struct lookup_ctx {
	struct silo *s;
	struct silo_route_key want; /* dst set; src and ifindex optional */
	bool has_src, has_iif, has_tos;
	__u64 genid;
	json_object *arr;
	size_t n;
	int err;
};

static void print_answer(const char *what, const struct silo_route_entry *e,
			 const char *tail)
{
	char nh[INET6_ADDRSTRLEN], dmac[18], smac[18], oif[IF_NAMESIZE];

	if (!e->ifindex) { /* the FIB found no route to forward on */
		printf("  %-6s%s\n", what, tail);
		return;
	}
	fmt_addr(nh, sizeof(nh), e->family, e->nexthop);
	fmt_mac(dmac, sizeof(dmac), e->dmac);
	fmt_mac(smac, sizeof(smac), e->smac);
	printf("  %-6s via %s dev %s dmac %s smac %s mtu %u%s\n", what, nh,
	       fmt_ifname(oif, e->ifindex), dmac, smac, e->mtu, tail);
}

static int lookup_one(__u32 node, const struct silo_route_key *k,
		      const struct silo_route_entry *e, void *data)
{
	struct lookup_ctx *c = data;
	struct silo_route_entry fib;
	char src[INET6_ADDRSTRLEN], iif[IF_NAMESIZE], tail[64];
	bool valid = e->genid && e->genid == c->genid, agree;
	int rc;

	struct silo_route_key rk = *k;

	/* A route entry without the source serves every source. */
	if ((k->format & SILO_KEY_SOURCE) || k->family != c->want.family ||
	    memcmp(k->dst, c->want.dst, 16) ||
	    (c->has_src && key_has_src(k) && memcmp(k->src, c->want.src, 16)) ||
	    (c->has_iif && k->ifindex != c->want.ifindex) ||
	    (c->has_tos && k->tos != c->want.tos))
		return 0;
	c->n++;
	if (c->has_src && !key_has_src(k))
		memcpy(rk.src, c->want.src, 16);
	rc = silo_route_resolve(c->s, &rk, &fib);
	if (rc < 0) {
		c->err = rc;
		return rc;
	}
	agree = rc == 0 && same_answer(e, &fib);
	if (c->arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "node", json_object_new_int(node));
		json_object_object_add(o, "key", key_json(k));
		json_object_object_add(o, "cache", entry_json(e));
		json_object_object_add(o, "genid",
				       json_object_new_uint64(e->genid));
		json_object_object_add(o, "valid",
				       json_object_new_boolean(valid));
		json_object_object_add(
			o, "fib_result",
			json_object_new_string(fib_ret_name(rc)));
		json_object_object_add(o, "fib", entry_json(&fib));
		json_object_object_add(o, "agree",
				       json_object_new_boolean(agree));
		json_object_array_add(c->arr, o);
		return 0;
	}
	fmt_addr(src, sizeof(src), k->family, k->src);
	printf("node %u, from %s on %s, tos %u:\n", node, src,
	       fmt_ifname(iif, k->ifindex), k->tos);
	snprintf(tail, sizeof(tail), ", genid %llu (%s)",
		 (unsigned long long)e->genid, valid ? "valid" : "stale");
	print_answer("cache", e, tail);
	snprintf(tail, sizeof(tail), " (%s)%s", fib_ret_name(rc),
		 agree ? "" : "  <- differs");
	print_answer("fib", &fib, tail);
	return 0;
}

static int first_device(struct silo *s, __u32 *ifindex)
{
	struct silo_xdp_dev *devs;
	size_t n, i;
	int err;

	err = silo_xdp_list(s, &devs, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < n && err; i++) {
		if (devs[i].attached) {
			*ifindex = devs[i].ifindex;
			err = 0;
		}
	}
	free(devs);
	return err;
}

/* No cache entry: what would a miss resolve to? 0 or a negative errno. */
static int lookup_miss(struct lookup_ctx *c, const char *addr)
{
	struct silo_route_entry fib;
	int rc;

	if (!c->has_iif && first_device(c->s, &c->want.ifindex)) {
		fprintf(stderr,
			"%s: error: no cache entry for %s, and no device to ask the FIB for: give --iif DEV\n",
			prog_name, addr);
		return -ENODEV;
	}
	rc = silo_route_resolve(c->s, &c->want, &fib);
	if (rc < 0)
		return rc;
	if (c->arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "key", key_json(&c->want));
		json_object_object_add(o, "cache", NULL);
		json_object_object_add(
			o, "fib_result",
			json_object_new_string(fib_ret_name(rc)));
		json_object_object_add(o, "fib", entry_json(&fib));
		json_object_array_add(c->arr, o);
	} else {
		char ifname[IF_NAMESIZE], tail[32];

		printf("no cache entry for %s; on %s:\n", addr,
		       fmt_ifname(ifname, c->want.ifindex));
		snprintf(tail, sizeof(tail), " (%s)", fib_ret_name(rc));
		print_answer("fib", &fib, tail);
	}
	return 0;
}

static int route_lookup(void *parsed, int argc __maybe_unused, char **argv)
{
	struct lookup_cfg *cfg = parsed;
	struct lookup_ctx c = {};
	int family, err;
	const char *from, *iif;

	from = cfg->from;
	iif = cfg->iif;
	c.want.tos = cfg->tos;
	c.has_tos = cfg->has_tos;
	if (parse_addr(argv[0], &family, c.want.dst))
		return usage_error(
			"bad address '%s': give an IPv4 or IPv6 address\n",
			argv[0]);
	c.want.family = family;
	if (from) {
		if (parse_addr(from, &family, c.want.src) ||
		    family != c.want.family)
			return usage_error(
				"bad --from '%s': give an address of the same family as %s\n",
				from, argv[0]);
		c.has_src = true;
	}
	c.s = open_silo();
	if (!c.s)
		return 1;
	if (iif) {
		c.want.ifindex = if_nametoindex(iif);
		if (!c.want.ifindex) {
			fprintf(stderr,
				"%s: error: no device '%s' in this network namespace\n",
				prog_name, iif);
			return 1;
		}
		c.has_iif = true;
	}
	c.genid = current_genid(c.s);
	if (cli.json)
		c.arr = json_object_new_array();
	err = silo_route_foreach(c.s, lookup_one, &c);
	if (err) {
		json_object_put(c.arr);
		return 1;
	}
	if (!c.n && lookup_miss(&c, argv[0])) {
		json_object_put(c.arr);
		return 1;
	}
	if (c.arr) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "address",
				       json_object_new_string(argv[0]));
		json_object_object_add(o, "genid",
				       json_object_new_uint64(c.genid));
		json_object_object_add(o, "results", c.arr);
		json_print(o);
	}
	return 0;
}

const struct cmd_object route_object = {
	.name = "route",
	.summary = "show, flush and look up the route cache",
	.cmds = route_specs,
};
