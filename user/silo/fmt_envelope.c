// SPDX-License-Identifier: GPL-2.0
/*
 * The offload envelope as "silo xdp status" shows it: per family, inside
 * or outside and why, the operator's bypass, established connections
 * under a stateful firewall, and whether the data path's view is current.
 */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "fmt.h"

static const char *const fam_key[2] = { "ipv4", "ipv6" };
static const char *const fam_title[2] = { "IPv4", "IPv6" };

static json_object *env_bits_json(__u32 bits)
{
	json_object *a = json_object_new_array();
	unsigned int i;

	for (i = 0; i < SILO_ENV_BIT_MAX; i++)
		if (bits & (1U << i))
			json_object_array_add(
				a,
				json_object_new_string(silo_envelope_name(i)));
	return a;
}

static void env_bits_str(char *buf, size_t len, __u32 bits)
{
	size_t n = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < SILO_ENV_BIT_MAX && n < len; i++)
		if (bits & (1U << i))
			n += snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
				      silo_envelope_name(i));
}

/* The data path's view is current when it is the live one less override. */
static bool env_current(const struct silo_envelope_info *e, int f)
{
	return !e->loaded || e->outside[f] == (e->holds[f] & ~e->override);
}

static json_object *fams_json(unsigned int fams)
{
	json_object *a = json_object_new_array();
	int f;

	for (f = 0; f < 2; f++)
		if (fams & (1U << f))
			json_object_array_add(
				a, json_object_new_string(fam_key[f]));
	return a;
}

static void fams_str(char *buf, size_t len, unsigned int fams)
{
	snprintf(buf, len, "%s%s%s", fams & 1 ? fam_title[0] : "",
		 fams == 3 ? " and " : "", fams & 2 ? fam_title[1] : "");
}

static json_object *ct_json(const struct silo_conntrack_info *ct)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "proven", fams_json(ct->shape));
	json_object_object_add(o, "detail", json_object_new_string(ct->detail));
	json_object_object_add(o, "opted_in",
			       json_object_new_boolean(ct->optin));
	json_object_object_add(o, "forwarded", fams_json(ct->fams));
	return o;
}

/* Established connections: what XDP does with them, and why. */
static void ct_print(const struct silo_envelope_info *e,
		     const struct silo_conntrack_info *ct)
{
	char fams[24];

	if (ct->fams) {
		fams_str(fams, sizeof(fams), ct->fams);
		printf("          established connections (%s): forwarded by XDP with conntrack's verdict per packet (--forward-established): %s\n",
		       fams, ct->detail);
	} else if (ct->shape) {
		fams_str(fams, sizeof(fams), ct->shape);
		printf("          established connections (%s): %s; %s\n", fams,
		       ct->detail,
		       ct->optin ?
			       "forwarded once silod writes it" :
			       "--forward-established would let XDP forward them");
	} else if (((e->holds[0] | e->holds[1]) & SILO_ENV(NFTABLES)) &&
		   ct->detail[0]) {
		printf("          established connections: not forwarded by XDP: %s\n",
		       ct->detail);
	}
}

json_object *fmt_envelope_json(const struct silo_envelope_info *e,
			       const struct silo_conntrack_info *ct)
{
	json_object *o = json_object_new_object();
	int f;

	json_object_object_add(o, "established", ct_json(ct));
	json_object_object_add(o, "override", env_bits_json(e->override));
	json_object_object_add(o, "detail", json_object_new_string(e->detail));
	for (f = 0; f < 2; f++) {
		json_object *fo = json_object_new_object();

		/* Live: what the configuration is now. */
		json_object_object_add(
			fo, "inside",
			json_object_new_boolean(!(e->holds[f] & ~e->override)));
		json_object_object_add(fo, "holds", env_bits_json(e->holds[f]));
		/* What the data path acts on (genid.outside). */
		json_object_object_add(fo, "outside",
				       env_bits_json(e->outside[f]));
		json_object_object_add(
			fo, "current",
			json_object_new_boolean(env_current(e, f)));
		json_object_object_add(o, fam_key[f], fo);
	}
	return o;
}

void fmt_envelope_print(const struct silo_envelope_info *e,
			const struct silo_conntrack_info *ct, bool daemon,
			bool live)
{
	char bits[256];
	__u32 out;
	unsigned int i;
	int f;

	for (f = 0; f < 2; f++) {
		out = e->holds[f] & ~e->override;
		printf("%s %s %s", f ? "         " : "envelope:", fam_title[f],
		       out && (ct->fams & (1U << f)) ?
			       "outside but for established connections, which XDP forwards" :
		       out  ? "outside, forwarded traffic goes to the stack" :
		       live ? "inside, forwarded by XDP" :
			      "inside (forwarded by XDP once silod runs)");
		env_bits_str(bits, sizeof(bits), e->holds[f] & e->override);
		if (bits[0])
			printf(" (bypassing %s)", bits);
		printf("\n");
		for (i = 0; i < SILO_ENV_BIT_MAX; i++)
			if (out & (1U << i))
				printf("            %s: %s: %s\n",
				       silo_envelope_name(i),
				       silo_envelope_desc(i),
				       silo_envelope_todo(i));
	}
	if (e->detail[0])
		printf("          first found: %s\n", e->detail);
	ct_print(e, ct);
	if (e->override) {
		env_bits_str(bits, sizeof(bits), e->override);
		printf("warning: firewall bypass on (--allow-firewall-bypass): forwarded traffic skips %s\n",
		       bits);
	}
	for (f = 0; f < 2; f++) {
		if (env_current(e, f))
			continue;
		env_bits_str(bits, sizeof(bits), e->outside[f]);
		printf("note: the data path's %s view differs from the live one (outside: %s): %s\n",
		       fam_title[f], bits[0] ? bits : "none",
		       daemon ?
			       "silod updates it within a second" :
			       "silod is not running to update it: start silod");
	}
}

/* Each node's route cache: entries in use of its capacity, and the counts
 * of its CPUs. */
