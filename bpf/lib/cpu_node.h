/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cpu_node: CPU -> NUMA node, one map shared by every silo program (the XDP
 * program picks its node's route cache, the reuseport program its node's
 * sockets). Each object declares it from here; libsilo points them all at
 * the pinned one, which user space fills (silod can fake a topology).
 */
#ifndef SILO_BPF_CPU_NODE_H
#define SILO_BPF_CPU_NODE_H

#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SILO_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} cpu_node SEC(".maps");

#endif /* SILO_BPF_CPU_NODE_H */
