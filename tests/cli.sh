# SPDX-License-Identifier: GPL-2.0
# The CLI's answers to bad input: a clear message, a non-zero exit (2 for
# usage, 1 for a failure) and no change of state.
. "$TESTS_DIR/lib.sh"

N="${NS}cli"
ip netns add "$N" || exit 1
ip -n "$N" link add v0 type veth peer name v0p
ip -n "$N" link add v1 type veth peer name v1p
for d in v0 v0p v1 v1p; do ip -n "$N" link set "$d" up; done
DIR="$PIN_ROOT/netns/$N"

state() {
	ip -n "$N" -d link show | grep -o 'prog/xdp id [0-9]*'
	ls "$PIN_ROOT" "$DIR" 2>/dev/null
}

expect "help" 0 "Usage: .* OBJECT COMMAND" silo --help
expect "xdp help" 0 "xdp load DEV" silo xdp help
expect "xdp load --help" 0 "--replace" silo xdp load --help
expect "route help" 0 "route { lookup | get } ADDR" silo route --help
expect "no object" 2 "Usage" silo
expect "unknown object" 2 "unknown command 'frob'" silo frob
expect "unknown command" 2 "unknown command 'frob'" silo xdp frob
expect "unknown option" 2 "" silo xdp load v0 --bogus
expect "unknown global option" 2 "unrecognized option '--bogus'" \
	silo --bogus xdp status
expect "global option missing its argument" 2 "requires an argument" \
	silo --netns
expect "missing device" 2 "xdp load needs DEV" silo xdp load
expect "bad mode" 2 "bad --mode 'fast'" silo xdp load v0 --mode fast
expect "bad cache size" 2 "bad --cache-size" silo xdp load v0 --cache-size -3
expect "bad address" 2 "bad address '10.1.2'" silo --netns "$N" route lookup 10.1.2
expect "bad --from" 2 "bad --from" silo --netns "$N" route lookup 10.1.2.3 --from ::1
expect "unknown netns" 1 "no network namespace 'nosuch-$NS'" \
	silo --netns "nosuch-$NS" xdp status

before=$(state)
expect "unknown device" 1 "no device 'nosuch' in this network namespace" \
	silo --netns "$N" xdp load nosuch
expect "unload of nothing" 1 "silo is not loaded on v1" \
	silo --netns "$N" xdp unload v1
expect "route show, nothing loaded" 1 "silo is not loaded in this network namespace" \
	silo --netns "$N" route show
[[ $(state) == "$before" ]] && ok "failures leave no state" ||
	not_ok "failures leave no state" "$(state)"

expect "load" 0 "silo loaded on v0" silo --netns "$N" xdp load v0 --forward
before=$(state)
expect "double load" 1 "already loaded on v0 .*--replace" \
	silo --netns "$N" xdp load v0 --forward
expect "replace with another mode" 1 "cannot change the mode" \
	silo --netns "$N" xdp load v0 --replace --mode skb
[[ $(state) == "$before" ]] && ok "refused loads change nothing" ||
	not_ok "refused loads change nothing" "$(state)"
expect "replace" 0 "silo loaded on v0" \
	silo --netns "$N" xdp load v0 --replace
[[ $(state) != "$before" ]] && ok "replace swapped the program" ||
	not_ok "replace swapped the program" "same program id"

# Not root: no capabilities.
if id nobody >/dev/null 2>&1; then
	expect "not root" 1 "needs root" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$SILO" --pin-root "$PIN_ROOT" --netns "$N" xdp status
else
	echo "skip - not root: no user nobody"
fi

# ip netns exec gives a private /sys without bpffs: refuse, say --netns.
expect "ip netns exec without bpffs" 1 "silo --netns NAME" \
	ip netns exec "$N" "$SILO" xdp status

# JSON on every show.
for cmd in "xdp status" "stats" "route show" "genid show" "stats --per-cpu"; do
	check "json: $cmd" bash -c \
		"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' -j $cmd | jq -e . >/dev/null"
done
# Under -j an error is one JSON object on stdout, with the same exit status.
json_error() { # NAME RC PATTERN CMD...: stdout is {"error": "...PATTERN..."}
	local name=$1 want_rc=$2 pattern=$3 rc
	shift 3
	"$@" >"$TMP/out" 2>/dev/null
	rc=$?
	if ((rc != want_rc)); then
		not_ok "$name" "exit $rc, want $want_rc: $(head -c 300 "$TMP/out")"
	elif ! jq -se --arg p "$pattern" \
		'length == 1 and (.[0].error | test($p))' "$TMP/out" >/dev/null 2>&1; then
		not_ok "$name" "stdout is not one {\"error\"} matching /$pattern/: $(head -c 300 "$TMP/out")"
	else
		ok "$name"
	fi
}
json_error "json error: unknown object" 2 "unknown command 'frob'" silo -j frob
json_error "json error: unknown command, -j after it" 2 "unknown command 'frob'" \
	silo xdp frob -j
json_error "json error: a failure" 1 "no device 'nosuch'" \
	silo --netns "$N" -p xdp load nosuch
json_error "json error: a bad value" 2 "bad --interval" \
	silo --netns "$N" stats --interval 0 -j
expect "version" 0 "^silo [0-9][^ ]* \\(layout [0-9]+\\)$" silo version
check "json: version" bash -c \
	"'$SILO' -j version | jq -e '(.version | type) == \"string\" and .layout > 0' >/dev/null"
[[ $(silo version) == "$(silo --version)" ]] && ok "version == --version" ||
	not_ok "version == --version" "$(silo version) / $(silo --version)"
# Prefixes of objects and commands, as in bpftool: unique ones run the
# command, ambiguous ones list the candidates.
expect "prefix: x st" 0 "DEVICE +IFINDEX" silo --netns "$N" x st
expect "prefix: ambiguous object" 2 "ambiguous command 'r': route, reuseport" \
	silo --netns "$N" r show
expect "prefix: re sh" 0 "no reuseport groups" silo --netns "$N" re sh
expect "prefix: no such command" 2 "unknown command 'xyz'" silo --netns "$N" xdp xyz
expect "stats: bad interval" 2 "bad --interval '0'" silo --netns "$N" stats --interval 0
expect "stats: bad count" 2 "bad --count 'x'" silo --netns "$N" stats --interval 1 --count x
expect "stats: count without interval" 2 "needs --interval" silo --netns "$N" stats --count 2
check "stats --interval: a JSON object an interval" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' -j stats --interval 0.1 --count 2 --per-cpu |
	 jq -se 'length == 2 and all(.[]; (.rates.rx | type) == \"number\" and .interval_s > 0.05 and (.cpus | length) > 0)' >/dev/null"
expect "stats --per-cpu: columns with headers" 0 "COUNTER +TOTAL +cpu0" \
	silo --netns "$N" stats --per-cpu
check "json after the command" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' xdp status -j | jq -e '.devices[0].device == \"v0\"'"
g=$(silo --netns "$N" -j genid show | jq .genid)
expect "genid bump" 0 "genid $((g + 1))\$" silo --netns "$N" genid bump

expect "unload" 0 "silo unloaded from v0" silo --netns "$N" xdp unload v0
[[ -z $(state) ]] && ok "unload leaves nothing" ||
	not_ok "unload leaves nothing" "$(state)"
ip netns del "$N"
