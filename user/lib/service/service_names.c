// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The names of the service modes and of the services' counters. */
#include <errno.h>
#include <string.h>
#include "../internal.h"

static const char *const mode_names[SILO_SERVICE_MODE_MAX] = {
	[SILO_SERVICE_FLOW] = "flow",
	[SILO_SERVICE_QUEUE] = "queue",
	[SILO_SERVICE_NODE] = "node",
};

const char *silo_service_mode_name(enum silo_service_mode mode)
{
	return (unsigned int)mode < SILO_SERVICE_MODE_MAX ? mode_names[mode] :
							    "?";
}

int silo_service_mode_parse(const char *name)
{
	unsigned int i;

	for (i = 0; i < SILO_SERVICE_MODE_MAX; i++)
		if (!strcmp(name, mode_names[i]))
			return i;
	return -EINVAL;
}

static const char *const sstat_names[] = {
#define SILO_X(name, field, desc) #field,
	SILO_SERVICE_STATS(SILO_X)
#undef SILO_X
};

static const char *const sstat_descs[] = {
#define SILO_X(name, field, desc) desc,
	SILO_SERVICE_STATS(SILO_X)
#undef SILO_X
};

const char *silo_service_stat_name(unsigned int idx)
{
	return idx < SILO_SSTAT_MAX ? sstat_names[idx] : NULL;
}

const char *silo_service_stat_desc(unsigned int idx)
{
	return idx < SILO_SSTAT_MAX ? sstat_descs[idx] : NULL;
}
