#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/run.sh BUILD_DIR [TEST...]
#
# Runs silo's tests against the binaries in BUILD_DIR (a sanitizer build when
# called by "make test"). Each test is a C binary from tests/*.c or a script
# tests/*.sh; each prints "ok - NAME", "not ok - NAME: WHY" or "skip - NAME:
# WHY" lines. A test that exits non-zero (a crash, a sanitizer report) counts
# as one more failure. Pins go under a private directory and namespaces get
# a private prefix; both are removed after every test, even a failed one.
# The last line is "N passed, N failed, N skipped".
set -u

BUILD=${1:?usage: tests/run.sh BUILD_DIR [TEST...]}
BUILD=$(cd "$BUILD" && pwd)
shift
TESTS_DIR=$(cd "$(dirname "$0")" && pwd)
TIMEOUT=${SILO_TEST_TIMEOUT:-600}

if [[ $(id -u) != 0 ]]; then
	echo "tests need root: sudo make test" >&2
	exit 1
fi
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf || exit 1
fi

export SILO="$BUILD/silo" BUILD TESTS_DIR
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=66}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

tests=()
if (($#)); then
	for t in "$@"; do
		t=${t%.c}
		t=${t%.sh}
		tests+=("$(basename "$t")")
	done
else
	for f in "$TESTS_DIR"/*.c "$TESTS_DIR"/*.sh; do
		name=$(basename "$f")
		[[ $name == lib.sh || $name == run.sh ]] && continue
		tests+=("${name%.*}")
	done
fi

passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

cleanup() {
	local prefix=$1 pins=$2 ns
	for ns in $(ip netns list | awk '{print $1}'); do
		[[ $ns == "$prefix"* ]] && ip netns del "$ns" 2>/dev/null
	done
	rm -rf "$pins"
}

for t in "${tests[@]}"; do
	if [[ -x $BUILD/tests/$t ]]; then
		cmd=("$BUILD/tests/$t")
	elif [[ -f $TESTS_DIR/$t.sh ]]; then
		cmd=(bash "$TESTS_DIR/$t.sh")
	else
		echo "not ok - $t: no such test"
		((failed++))
		continue
	fi
	export SILO_TEST_NS="st$$${t:0:3}-"
	export SILO_TEST_PIN_ROOT="/sys/fs/bpf/silo-test-$$-$t"
	echo "# $t"
	# A test may ask for more time in its header ("# run.sh: timeout N"),
	# where SILO_TEST_TIMEOUT is not set.
	tmo=$TIMEOUT
	if [[ -z ${SILO_TEST_TIMEOUT:-} && -f $TESTS_DIR/$t.sh ]]; then
		n=$(sed -n 's/^# run\.sh: timeout \([0-9]\+\)$/\1/p' "$TESTS_DIR/$t.sh" | head -1)
		[[ -n $n ]] && tmo=$n
	fi
	timeout --kill-after=10 "$tmo" "${cmd[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	cleanup "$SILO_TEST_NS" "$SILO_TEST_PIN_ROOT"
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	s=$(grep -c '^skip - ' "$log")
	if ((rc != 0)); then
		echo "not ok - $t: exited with status $rc"
		((f++))
	elif ((p + f + s == 0)); then
		echo "not ok - $t: reported no result"
		((f++))
	fi
	((passed += p, failed += f, skipped += s))
done

echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
