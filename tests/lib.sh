# SPDX-License-Identifier: GPL-2.0
# Helpers for silo's shell tests; tests/run.sh sets SILO, BUILD, TESTS_DIR,
# SILO_TEST_NS (a namespace prefix) and SILO_TEST_PIN_ROOT, and removes the
# namespaces and pins afterwards even when a test dies.

SILO=${SILO:?run through tests/run.sh}
# NS and TRAFFIC: for the tests that source this file.
# shellcheck disable=SC2034
NS=${SILO_TEST_NS:?run through tests/run.sh}
PIN_ROOT=${SILO_TEST_PIN_ROOT:?run through tests/run.sh}
# shellcheck disable=SC2034
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

# interrupt PID ERRFILE: SIGINT to a benchmark in the background, which
# must stop with exit 1 and say on stderr (ERRFILE) that it was
# interrupted.
interrupt() {
	local rc
	kill -INT "$1"
	wait "$1"
	rc=$?
	((rc == 1)) && grep -q "interrupted" "$2" &&
		ok "SIGINT: stops, says so" ||
		not_ok "SIGINT: stops, says so" "exit $rc: $(tail -2 "$2")"
}

# A TCP port nothing listens on (tests run side by side).
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
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

# The objects, commands and options silo's help and its bash completion
# name (tests/completion.sh and tests/manpages.sh compare them).
COMPLETION="$TESTS_DIR/../completion/silo"

# The objects of 'silo --help'.
help_objects() {
	"$SILO" --help | tr '\n' ' ' |
		sed -n 's/.*OBJECT := {\([^}]*\)}.*/\1/p' | tr -d '|'
}

# The global options of 'silo --help'.
help_global_opts() {
	"$SILO" --help | sed -n '/^OPTIONS:/,$p' |
		grep -oE -- '(^|[ ,])--?[a-zA-Z][a-z-]*' | tr -d ' ,'
}

# help_usage OBJ: the usage lines of 'silo OBJ help', "silo OBJ CMD ..."
# and their continuations.
help_usage() {
	"$SILO" "$1" help | sed -n '1,/^$/p' | sed 's/^Usage: *//; s/^ *//'
}

# usage_cmds OBJ <USAGE: the commands of usage lines, every name of
# "silo OBJ { show | list }" ("silo stats [show]" counts too).
usage_cmds() {
	awk -v o="silo $1 " '
		index($0, o) == 1 {
			rest = substr($0, length(o) + 1)
			if (substr(rest, 1, 1) == "{") {
				sub(/^\{ */, "", rest); sub(/ *\}.*/, "", rest)
				gsub(/ *\| */, "\n", rest); print rest
			} else if (match(rest, /^\[?[a-z][a-z-]*/)) {
				w = substr(rest, RSTART, RLENGTH); sub(/^\[/, "", w); print w
			}
		}'
}

# usage_opts OBJ CMD <USAGE: the long options of CMD's usage lines (CMD
# any of its names) and the lines below them up to the next command.
usage_opts() {
	awk -v c="$2" -v o="silo $1 " '
		index($0, o) == 1 {
			names = substr($0, length(o) + 1)
			if (substr(names, 1, 1) == "{") {
				sub(/^\{ */, "", names); sub(/ *\}.*/, "", names)
				gsub(/ *\| */, " ", names)
			} else {
				sub(/^\[/, "", names); sub(/[] ].*/, "", names)
			}
			n = split(names, a, " "); on = 0
			for (i = 1; i <= n; i++) if (a[i] == c) on = 1
		}
		on' | grep -oE -- '--[a-z][a-z-]*'
}

# The completion's words for a command line ending in a word being typed.
complete_line() { # LINE
	bash -c '
		. "$1"
		read -ra COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_silo
		printf "%s\n" "${COMPREPLY[@]}"
	' _ "$COMPLETION" "$1" | sort -u | grep -v '^$'
}
