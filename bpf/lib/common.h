/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every header of bpf/lib/ builds on: the kernel's types (vmlinux.h,
 * for CO-RE), libbpf's helpers, silo's ABI, and the compiler barriers of
 * the route cache's lock-free protocol. Each lib header includes it, so
 * that a program or a unit test (bpf/tests/) can include one header alone.
 */
#ifndef SILO_BPF_LIB_COMMON_H
#define SILO_BPF_LIB_COMMON_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "silo/abi.h"
#include "silo/abi/internal.h"

#ifndef barrier
#define barrier() asm volatile("" ::: "memory")
#endif
#ifndef READ_ONCE
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, v) (*(volatile typeof(x) *)&(x) = (v))
#endif

#ifndef bpf_ksym_exists /* libbpf before 1.2 */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

#endif /* SILO_BPF_LIB_COMMON_H */
