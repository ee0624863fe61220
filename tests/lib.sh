# SPDX-License-Identifier: GPL-2.0
# Helpers for silo's shell tests; tests/run.sh sets SILO, BUILD, TESTS_DIR,
# SILO_TEST_NS (a namespace prefix) and SILO_TEST_PIN_ROOT, and removes the
# namespaces and pins afterwards even when a test dies.

SILO=${SILO:?run through tests/run.sh}
NS=${SILO_TEST_NS:?run through tests/run.sh}
PIN_ROOT=${SILO_TEST_PIN_ROOT:?run through tests/run.sh}
TRAFFIC="$BUILD/tools/traffic"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# silo with the test's pin root.
silo() { "$SILO" --pin-root "$PIN_ROOT" "$@"; }

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; }

# expect NAME RC PATTERN CMD...: CMD exits with RC and prints PATTERN
# (grep -E, on stdout and stderr together; empty: anything).
expect() {
	local name=$1 want_rc=$2 pattern=$3 rc
	shift 3
	"$@" >"$TMP/out" 2>&1
	rc=$?
	if ((rc != want_rc)); then
		not_ok "$name" "exit $rc, want $want_rc: $(head -c 300 "$TMP/out")"
	elif [[ -n $pattern ]] && ! grep -Eq -- "$pattern" "$TMP/out"; then
		not_ok "$name" "output lacks /$pattern/: $(head -c 300 "$TMP/out")"
	else
		ok "$name"
	fi
}

# check NAME CMD...: CMD succeeds.
check() {
	local name=$1
	shift
	if "$@" >"$TMP/out" 2>&1; then
		ok "$name"
	else
		not_ok "$name" "$(head -c 300 "$TMP/out")"
	fi
}
