#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/mutate.sh BUILD_DIR [ID...]        ("make mutate [M=ID]")
#
# Mutation testing: proves the tests fail when the code is wrong. Each entry
# of tools/mutations.txt is a deliberate single-line bug and the tests that
# must catch it. For each (or only the IDs given): the tree (git ls-files,
# tracked and untracked-not-ignored) is copied to a scratch directory, the
# bug is applied there, the copy is built with sanitizers and the named
# tests run against it. Verdicts:
#
#   caught   a named test failed (or crashed, or timed out)
#   missed   every named test passed: the bug went unnoticed
#   invalid  the mutation cannot be judged: its text does not occur exactly
#            once, the mutant does not build, or a named test already fails
#            without it (checked once per test, first; a test that fails
#            once and then passes is reported FLAKY and used)
#
# The last line is "N caught, N missed, N invalid"; the exit status is
# non-zero if any was missed or invalid. BUILD_DIR is a sanitizer build of
# the unmutated tree ("make mutate" makes it): the baseline runs against it,
# and each mutant's build starts as a copy of it, so only what the mutation
# touches is rebuilt. Scratch directories are removed (MUTATE_KEEP=1 keeps
# them, for a look at a mutant). Needs root, as tests/run.sh does.
set -u

BUILD=${1:?usage: tools/mutate.sh BUILD_DIR [ID...]}
BUILD=$(cd "$BUILD" && pwd) || exit 2
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST=${MUTATIONS:-$ROOT/tools/mutations.txt}
JOBS=${MUTATE_JOBS:-2}

ids=() files=() finds=() repls=() tests=() timeouts=() envs=()

# Reads the list into the arrays; a malformed entry stops everything.
parse() {
	local line key val cur=-1 last='' n=0
	while IFS= read -r line || [[ -n $line ]]; do
		((++n))
		if [[ $line == '|'* ]]; then
			if ((cur < 0)) || [[ -z $last ]]; then
				echo "$LIST:$n: continuation outside a value" >&2
				return 1
			fi
			case $last in
			find) finds[cur]+=$'\n'"${line:1}" ;;
			replace) repls[cur]+=$'\n'"${line:1}" ;;
			esac
			continue
		fi
		[[ -z ${line//[[:space:]]/} || $line == '#'* ]] && {
			last=''
			continue
		}
		if [[ ! $line =~ ^([a-z]+):\ ?(.*)$ ]]; then
			echo "$LIST:$n: not 'key: value': $line" >&2
			return 1
		fi
		key=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]}
		case $key in
		id)
			cur=${#ids[@]}
			ids[cur]=$val files[cur]='' finds[cur]='' repls[cur]=''
			tests[cur]='' timeouts[cur]='' envs[cur]=''
			;;
		file | find | replace | tests | timeout | env | why)
			if ((cur < 0)); then
				echo "$LIST:$n: '$key' before any 'id'" >&2
				return 1
			fi
			case $key in
			file) files[cur]=$val ;;
			find) finds[cur]=$val ;;
			replace) repls[cur]=$val ;;
			tests) tests[cur]=$val ;;
			timeout) timeouts[cur]=$val ;;
			env)
				if [[ ! $val =~ ^([A-Z_][A-Z0-9_]*=[^[:space:]]*( +|$))+$ ]]; then
					echo "$LIST:$n: env: NAME=VALUE words, not '$val'" >&2
					return 1
				fi
				envs[cur]=$val
				;;
			esac
			;;
		*)
			echo "$LIST:$n: unknown key '$key'" >&2
			return 1
			;;
		esac
		last=$key
	done <"$LIST"
	for ((i = 0; i < ${#ids[@]}; i++)); do
		if [[ -z ${files[i]} || -z ${finds[i]} || -z ${tests[i]} ]]; then
			echo "$LIST: ${ids[i]}: needs file, find and tests" >&2
			return 1
		fi
	done
}

# count_in TEXT NEEDLE: how many times NEEDLE occurs (not overlapping).
count_in() {
	local rest=$1 n=0
	while [[ $rest == *"$2"* ]]; do
		rest=${rest#*"$2"}
		((n++))
	done
	echo "$n"
}

# Copies the tree (mtimes kept) and the generated vmlinux.h to $1/src, and
# BUILD to $1/build with its dependency files pointed at the new place.
copy_tree() {
	local dst=$1 f
	mkdir -p "$dst/src" || return 1
	(cd "$ROOT" && git ls-files -z -co --exclude-standard) |
		while IFS= read -r -d '' f; do
			[[ -e $ROOT/$f ]] && printf '%s\0' "$f"
		done | (cd "$ROOT" && xargs -0 -r cp -p --parents -t "$dst/src") ||
		return 1
	if [[ -f $ROOT/vmlinux/vmlinux.h ]]; then
		cp -p "$ROOT/vmlinux/vmlinux.h" "$dst/src/vmlinux/" || return 1
	fi
	cp -a "$BUILD" "$dst/build" || return 1
	find "$dst/build" -name '*.d' -exec sed -i "s|$BUILD|$dst/build|g" {} +
}

# run_tests BUILD_DIR SRC_DIR TIMEOUT ENV LOG TEST...: 0 if all pass, run
# with ENV's NAME=VALUE words. The copy is no git repository:
# tests/upgrade.sh takes the previous release from the one it was copied
# from.
run_tests() {
	local build=$1 src=$2 timeout=$3 env=$4 log=$5
	shift 5
	# shellcheck disable=SC2086 # env is a list of words
	(cd "$src" && env $env SILO_UPGRADE_REPO=${SILO_UPGRADE_REPO:-$ROOT} \
		SILO_TEST_TIMEOUT=$timeout tests/run.sh "$build" "$@") >"$log" 2>&1
}

# First failure of a run, for the report.
first_failure() {
	grep -m1 '^not ok - ' "$1" | cut -c1-150
}

parse || exit 2
if [[ ! -s $LIST ]] || ((${#ids[@]} == 0)); then
	echo "no mutations in $LIST" >&2
	exit 2
fi
if [[ $(id -u) != 0 ]]; then
	echo "mutation testing runs the tests: it needs root (sudo make mutate)" >&2
	exit 1
fi

# Which entries: all, or the IDs asked for.
sel=()
if (($#)); then
	for want in "$@"; do
		for ((i = 0; i < ${#ids[@]}; i++)); do
			[[ ${ids[i]} == "$want" ]] && sel+=("$i") && continue 2
		done
		echo "no mutation '$want' in $LIST (ids: ${ids[*]})" >&2
		exit 2
	done
else
	for ((i = 0; i < ${#ids[@]}; i++)); do sel+=("$i"); done
fi

SCRATCH=$(mktemp -d /tmp/silo-mutate.XXXXXX) || exit 1
cleanup() { [[ ${MUTATE_KEEP:-0} == 1 ]] || rm -rf "$SCRATCH"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# Baseline: each named test must pass on the unmutated tree, with the
# entry's env, or a mutant "caught" by it would prove nothing.
declare -A base_ok=()
for i in "${sel[@]}"; do
	for t in ${tests[i]}; do
		b="$t${envs[i]:+ ${envs[i]}}"
		[[ -n ${base_ok[$b]+x} ]] && continue
		log="$SCRATCH/base-${b//[^A-Za-z0-9_.-]/_}.log"
		if run_tests "$BUILD" "$ROOT" "${timeouts[i]:-600}" "${envs[i]}" \
			"$log" "$t"; then
			base_ok[$b]=1
			echo "baseline ok      $b"
		elif f=$(first_failure "$log") &&
			run_tests "$BUILD" "$ROOT" "${timeouts[i]:-600}" \
				"${envs[i]}" "$log" "$t"; then
			# Its catches are worth less: say so.
			base_ok[$b]=1
			echo "baseline FLAKY   $b: passed on a second run after: $f"
		else
			base_ok[$b]=0
			echo "baseline FAILS   $b: $(first_failure "$log")"
		fi
	done
done

caught=0 missed=0 invalid=0
report=()
verdict() { # verdict KIND ID DETAIL
	printf '%-8s %-34s %s\n' "$1" "$2" "$3"
	report+=("$(printf '%-8s %-34s %s' "$1" "$2" "$3")")
	case $1 in
	caught) ((caught++)) ;;
	missed) ((missed++)) ;;
	*) ((invalid++)) ;;
	esac
}

for i in "${sel[@]}"; do
	id=${ids[i]} file=${files[i]} find=${finds[i]} repl=${repls[i]}
	dir="$SCRATCH/$id"
	bad=
	for t in ${tests[i]}; do
		[[ ${base_ok[$t${envs[i]:+ ${envs[i]}}]} == 1 ]] || bad+=" $t"
	done
	if [[ -n $bad ]]; then
		verdict invalid "$id" "fails without the mutation:$bad"
		continue
	fi
	if [[ ! -f $ROOT/$file ]]; then
		verdict invalid "$id" "no file $file"
		continue
	fi
	# The whole file, trailing newlines kept (read stops at EOF: no NUL).
	IFS= read -r -d '' text <"$ROOT/$file"
	n=$(count_in "$text" "$find")
	if ((n != 1)); then
		verdict invalid "$id" "the text to replace occurs $n times in $file (must be once): update $LIST"
		continue
	fi
	if [[ $find == "$repl" ]]; then
		verdict invalid "$id" "replace equals find"
		continue
	fi
	if ! copy_tree "$dir"; then
		verdict invalid "$id" "cannot copy the tree to $dir"
		continue
	fi
	printf '%s' "${text%%"$find"*}$repl${text#*"$find"}" >"$dir/src/$file"
	if ! (cd "$dir/src" && make --no-print-directory -j"$JOBS" \
		OUTPUT="$dir/build" SANITIZE=1 all) >"$dir/build.log" 2>&1; then
		verdict invalid "$id" "does not build: $(grep -m1 -E 'error|Error' "$dir/build.log" | cut -c1-120)"
		[[ ${MUTATE_KEEP:-0} == 1 ]] || rm -rf "$dir"
		continue
	fi
	# shellcheck disable=SC2086 # tests is a list of names
	if run_tests "$dir/build" "$dir/src" "${timeouts[i]:-600}" \
		"${envs[i]}" "$dir/test.log" ${tests[i]}; then
		verdict missed "$id" "${tests[i]} passed with the bug"
	else
		verdict caught "$id" "$(first_failure "$dir/test.log")"
	fi
	[[ ${MUTATE_KEEP:-0} == 1 ]] || rm -rf "$dir"
done

echo
echo "# summary"
printf '%s\n' "${report[@]}"
echo "$caught caught, $missed missed, $invalid invalid"
((missed == 0 && invalid == 0))
