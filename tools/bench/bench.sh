#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tools/bench/bench.sh BUILD_DIR: silo's benchmarks, one JSON object per line.
# Each compares variants measured side by side in one run; see the header of
# each benchmark program for what it measures.
set -u
BUILD=$(cd "${1:-build}" && pwd)
export BUILD # bench_silod finds silod through it
if [[ $(id -u) != 0 ]]; then
	echo "benchmarks need root: sudo make bench" >&2
	exit 1
fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf
rc=0
"$BUILD/tools/bench_xdp" ${SILO_BENCH_CPUS:+--cpus "$SILO_BENCH_CPUS"} || rc=1
"$BUILD/tools/bench_reuseport" ${SILO_BENCH_CPUS:+--cpus "$SILO_BENCH_CPUS"} || rc=1
"$BUILD/tools/bench_silod" || rc=1
"$BUILD/tools/bench_silod" --scale || rc=1
"$BUILD/tools/bench_live" || rc=1
"$BUILD/tools/bench_jumbo" || rc=1
"$BUILD/tools/bench_steer" ${SILO_BENCH_CPUS:+--cpus "$SILO_BENCH_CPUS"} || rc=1
exit $rc
