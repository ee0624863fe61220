// SPDX-License-Identifier: GPL-2.0
/* silo doctor: silod, the envelope, the VLAN tags silo sees and the
 * checksums its devices' senders leave to offload. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "cli.h"
#include "cmd.h"
#include "fmt.h"
#include "doctor.h"

/* Whether silo's program sees the VLAN tags DEV strips (silo_xdp_vlan). */
void check_vlan(struct doctor *d, const char *dev)
{
	char fix[128];
	int v;

	if (!d->s || d->root[0])
		return; /* a fake tree has no devices to ask */
	v = silo_xdp_vlan(d->s, dev);
	if (v == -ENOENT) /* silo does not run on dev */
		return;
	if (v < 0) {
		report(d, INFO, "vlan", NULL,
		       "%s: cannot read its VLAN offloads: %s", dev,
		       strerror(-v));
		return;
	}
	if (v == SILO_XDP_VLAN_IN_FRAME) {
		report(d, OK, "vlan", NULL,
		       "%s leaves VLAN tags in the frame: silo sees them", dev);
	} else if (v == SILO_XDP_VLAN_TOLD) {
		report(d, OK, "vlan", NULL,
		       "%s strips VLAN tags and its driver tells silo's program, which passes tagged frames to the stack",
		       dev);
	} else {
		snprintf(fix, sizeof(fix),
			 "ethtool -K %s rxvlan off rx-vlan-stag-hw-parse off",
			 dev);
		report(d, WARN, "vlan", fix,
		       "%s strips VLAN tags and silo cannot tell (generic XDP, or a driver that does not report them): a tagged frame would be forwarded or steered as untagged",
		       dev);
	}
}

/*
 * Checksums a sender on this host leaves to offload (silo_xdp_csum,
 * docs/ENVELOPE.md): finished in XDP (a cost per packet), or passed to the
 * stack where XDP cannot finish them (a tap, generic XDP). Either is exact;
 * a sender that computes its checksums itself is faster through silo.
 */
void check_csum(struct doctor *d, const char *dev)
{
	struct silo_xdp_csum_info c;
	char fix[160];
	int err;

	if (!d->s || d->root[0])
		return;
	err = silo_xdp_csum(d->s, dev, &c);
	if (err == -ENOENT)
		return;
	if (err) {
		report(d, INFO, "csum", NULL,
		       "%s: cannot read what silo does with checksums left to offload: %s",
		       dev, strerror(-err));
		return;
	}
	if (c.what == SILO_XDP_CSUM_NONE) {
		report(d, OK, "csum", NULL,
		       "%s: its senders are not on this host: their checksums come complete",
		       dev);
		return;
	}
	if (!strcmp(c.kind, "veth"))
		snprintf(
			fix, sizeof(fix),
			"ethtool -K PEER tx off, where PEER is %s's veth peer (in its namespace)",
			dev);
	else if (!strcmp(c.kind, "tun"))
		snprintf(
			fix, sizeof(fix),
			"in the guest behind %s: ethtool -K <its interface> tx off",
			dev);
	else
		snprintf(fix, sizeof(fix), "ethtool -K <the sender> tx off");
	if (c.what == SILO_XDP_CSUM_FINISH) {
		report(d, c.finished ? INFO : OK, "csum",
		       c.finished ? fix : NULL,
		       "%s (%s): checksums its senders leave to offload are finished in XDP (%llu so far): exact, at a cost per packet",
		       dev, c.kind, (unsigned long long)c.finished);
		return;
	}
	if (!strcmp(c.kind, "veth"))
		snprintf(
			fix, sizeof(fix),
			"silo xdp unload %s, then silo xdp load %s in native mode (the default): XDP finishes them there",
			dev, dev);
	report(d, c.passed ? WARN : INFO, "csum", fix,
	       "%s (%s%s): checksums its senders leave to offload cannot be finished in XDP here and go to the stack (%llu so far): exact, not accelerated",
	       dev, c.kind[0] ? c.kind : "?",
	       !strcmp(c.kind, "veth") ? ", generic XDP" : "",
	       (unsigned long long)c.passed);
}

/*
 * The PMTU watch (silod, docs/ENVELOPE.md "Path MTU"): packets above the
 * least path MTU come from the cache only where every device but lo
 * carries silo and none is a tunnel. Names the devices without silo.
 */
static bool runs_silo(const struct silo_xdp_dev *devs, size_t n,
		      unsigned int ifindex)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (devs[i].ifindex == ifindex && devs[i].attached)
			return true;
	return false;
}

static void check_pmtu(struct doctor *d, struct silo *s,
		       const struct silo_daemon_info *di)
{
	unsigned int w = di->heartbeat.pmtu_watch;
	struct silo_xdp_dev *devs;
	struct if_nameindex *ifs, *i;
	size_t n;
	char missing[200] = "";
	bool v4 = w & (1U << SILO_FAM_V4), v6 = w & (1U << SILO_FAM_V6);

	if (v4 && v6) {
		report(d, OK, "pmtu", NULL,
		       "PMTU watch on: packets above the least path MTU come from the cache");
		return;
	}
	if (!d->root[0] && !silo_xdp_list(s, &devs, &n)) {
		ifs = if_nameindex();
		for (i = ifs; i && i->if_index; i++)
			if (strcmp(i->if_name, "lo") &&
			    !runs_silo(devs, n, i->if_index))
				snprintf(missing + strlen(missing),
					 sizeof(missing) - strlen(missing),
					 "%s%s", missing[0] ? " " : "",
					 i->if_name);
		if (ifs)
			if_freenameindex(ifs);
		free(devs);
	}
	report(d, WARN, "pmtu",
	       missing[0] ?
		       "silo xdp load DEV on each (without --forward is enough)" :
		       "docs/ENVELOPE.md, Path MTU",
	       "PMTU watch off for %s: packets above the least path MTU take a FIB lookup each; %s%s",
	       v4 ? "IPv6" :
	       v6 ? "IPv4" :
		    "IPv4 and IPv6",
	       missing[0] ? "without silo: " :
			    "a tunnel, or mtu_expires above 1000 s",
	       missing);
}

/* Established connections of a stateful firewall: whether XDP forwards
 * them, and what would let it. */
static void doctor_established(struct doctor *d, struct silo *s,
			       const struct silo_envelope_info *env)
{
	struct silo_conntrack_info ct;

	if (silo_conntrack_info(s, &ct) || !ct.loaded)
		return;
	if (ct.fams)
		report(d, OK, "established", NULL,
		       "established connections forwarded by XDP with conntrack's verdict (%s)",
		       ct.detail);
	else if (ct.shape && !ct.optin)
		report(d, INFO, "established",
		       "load with --forward --forward-established (silo.conf: forward-established: true) to let XDP forward them; their TCP window tracking is then made liberal, as nftables' flowtable makes it",
		       "%s", ct.detail);
	else if (((env->outside[0] | env->outside[1]) & SILO_ENV(NFTABLES)) &&
		 ct.detail[0])
		report(d, WARN, "established",
		       "begin each chain on the forward path with 'ct state established,related accept' and use conntrack for state and NAT only (docs/ENVELOPE.md, Stateful firewalls)",
		       "established connections not forwarded by XDP: %s",
		       ct.detail);
}

void check_silo(struct doctor *d, struct silo *s)
{
	struct silo_envelope_info env;
	struct silo_daemon_info di;
	unsigned int f, bit;
	char why[256];

	if (silo_daemon_info(s, &di)) {
		report(d, FAIL, "silod",
		       "silo xdp load DEV (see 'silo xdp help')",
		       "silo is not loaded in this network namespace");
		return;
	}
	if (di.running && di.cache_trusted) {
		report(d, OK, "silod", NULL, "running (pid %u), heartbeat live",
		       di.state.pid);
		check_pmtu(d, s, &di);
	} else
		report(d, FAIL, "silod",
		       cli.netns ?
			       "silod --netns NAME, or systemctl start silod@NAME" :
			       "silod, or systemctl start silod",
		       "%s: the data path stands aside (every packet to the stack)",
		       di.running ? "silod runs but its heartbeat is not live" :
				    "silod is not running");
	if (silo_envelope_info(s, &env) || !env.loaded)
		return;
	for (f = 0; f < 2; f++) {
		why[0] = '\0';
		for (bit = 0; bit < SILO_ENV_BIT_MAX; bit++)
			if (env.outside[f] & (1U << bit))
				snprintf(why + strlen(why),
					 sizeof(why) - strlen(why), "%s%s",
					 why[0] ? ", " : "",
					 silo_envelope_name(bit));
		if (why[0])
			report(d, WARN, "envelope", "silo xdp status",
			       "IPv%d outside the envelope (%s): its forwarded traffic goes to the stack",
			       f ? 6 : 4, why);
		else
			report(d, OK, "envelope", NULL,
			       "IPv%d inside the envelope", f ? 6 : 4);
	}
	/* What in the ruleset keeps silo out, and what would let it in. */
	if (((env.outside[0] | env.outside[1]) & SILO_ENV(NFTABLES)) &&
	    !strncmp(env.detail, "nftables", 8))
		report(d, WARN, "envelope",
		       "a chain on the forward path counts unless it holds no rule, its policy is accept and it keeps no counters; conntrack in use counts on its own (docs/ENVELOPE.md); or load with --allow-firewall-bypass where XDP may skip it",
		       "%s", env.detail);
	doctor_established(d, s, &env);
}
