// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* CPU lists ("0-3,8,10-11"), as sysfs writes them and users give them,
 * and which node each CPU is on. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../silod.h"
#include "../util.h"

int silo_parse_cpu_range(const char *s, char **end, unsigned long *first,
			 unsigned long *last)
{
	unsigned long a, b;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	a = strtoul(s, end, 10);
	if (errno)
		return -EINVAL;
	b = a;
	if (**end == '-') {
		s = *end + 1;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		b = strtoul(s, end, 10);
		if (errno || b < a)
			return -EINVAL;
	}
	*first = a;
	*last = b;
	return 0;
}

int silo_parse_cpulist(const char *s, unsigned char *bits, size_t len)
{
	unsigned long a, b;
	char *end;
	int err;

	memset(bits, 0, (len + 7) / 8);
	while (*s && *s != '\n') {
		err = silo_parse_cpu_range(s, &end, &a, &b);
		if (err)
			return err;
		if (b >= len)
			return -ERANGE;
		for (; a <= b; a++)
			bits[a / 8] |= 1 << (a % 8);
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

bool silo_numa_node_online(__u32 node)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%u", node);
	return access(path, F_OK) == 0;
}

int silo_read_cpu_nodes(__u32 *node_of, int nr_cpus, __u32 *nr_nodes)
{
	unsigned char bits[SILO_MAX_CPUS / 8];
	char path[64], buf[4096];
	__u32 node, max_node = 0;
	int cpu, err;

	for (cpu = 0; cpu < nr_cpus; cpu++)
		node_of[cpu] = 0;
	for (node = 0; node < SILO_MAX_NODES; node++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/node/node%u/cpulist", node);
		err = silo_read_file(path, buf, sizeof(buf));
		if (err == -ENOENT)
			continue;
		if (err < 0)
			return err;
		err = silo_parse_cpulist(buf, bits, SILO_MAX_CPUS);
		if (err)
			return err;
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			if (bits[cpu / 8] & (1 << (cpu % 8))) {
				node_of[cpu] = node;
				if (node > max_node)
					max_node = node;
			}
		}
	}
	*nr_nodes = max_node + 1;
	return 0;
}

int silo_cpulist_parse(const char *list, __u64 *cpus)
{
	unsigned long a, b;
	char *end;

	memset(cpus, 0, SILO_CPU_WORDS * sizeof(*cpus));
	while (*list) {
		if (silo_parse_cpu_range(list, &end, &a, &b) ||
		    b >= SILO_MAX_CPUS)
			return -EINVAL;
		for (; a <= b; a++)
			cpus[a / 64] |= 1ULL << (a % 64);
		list = end;
		/* a list ends after a CPU: "0," is not one */
		if (*list == ',' && list[1])
			list++;
		else if (*list)
			return -EINVAL;
	}
	return 0;
}
