// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The envelope as libsilo shows it: each condition's name, description and
 * what to do about it, and this namespace's evaluation beside what the data
 * path was told (envelope.c evaluates). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "../pins.h"

static const struct {
	const char *name, *desc, *todo;
} conditions[SILO_ENV_BIT_MAX] = {
#define SILO_X(name, field, desc, todo) \
	[SILO_ENV_BIT_##name] = { #field, desc, todo },
	SILO_ENVELOPE(SILO_X)
#undef SILO_X
};

const char *silo_envelope_name(unsigned int bit)
{
	return bit < SILO_ENV_BIT_MAX ? conditions[bit].name : NULL;
}

const char *silo_envelope_desc(unsigned int bit)
{
	return bit < SILO_ENV_BIT_MAX ? conditions[bit].desc : NULL;
}

const char *silo_envelope_todo(unsigned int bit)
{
	return bit < SILO_ENV_BIT_MAX ? conditions[bit].todo : NULL;
}

int silo_envelope_info(struct silo *s, struct silo_envelope_info *info)
{
	struct silo_envelope env;
	struct silo_maps m;
	struct silo_genid g;
	__u32 zero = 0;
	int err = 0;

	memset(info, 0, sizeof(*info));
	/* A failure to read shows as UNKNOWN, named in detail. */
	silo_envelope_eval(&env);
	memcpy(info->holds, env.holds, sizeof(info->holds));
	snprintf(info->detail, sizeof(info->detail), "%s", env.detail);
	/* No pins, or pins of another layout: no view of the data path. */
	if (silo_maps_open(s, &m))
		return 0;
	if (bpf_map_lookup_elem(m.fd[SILO_MAP_GENID], &zero, &g)) {
		err = -errno;
		goto out;
	}
	info->loaded = true;
	info->override = g.override;
	memcpy(info->outside, g.outside, sizeof(info->outside));
out:
	silo_maps_close(&m);
	return err;
}
