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
[[ $(wc -l <"$TMP/out") == 1 ]] && ok "route show, nothing loaded: the error alone" ||
	not_ok "route show, nothing loaded: the error alone" "$(cat "$TMP/out")"
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

# Counters written into the stats map (bpftool puts one value on every
# CPU): nothing forwards here (no silod), so the cache counters move only
# as written. stats_add NAME=N...: every CPU's counters become the
# greatest any CPU had (none goes back), plus N for each NAME.
STATS="$DIR/stats"
stats_add() {
	local add='{}' kv bytes
	for kv in "$@"; do
		add=$(jq -c --arg k "${kv%=*}" --argjson n "${kv#*=}" \
			'.[$k] = $n' <<<"$add")
	done
	read -ra bytes < <(bpftool -j map dump pinned "$STATS" | jq -r --argjson add "$add" '
		.[0].formatted.values | map(.value) as $v | $v[0] | keys_unsorted |
		map(. as $k | ([$v[][$k]] | max) + ($add[$k] // 0) |
		    . as $n | [range(8)] | map(($n / pow(2; 8 * .) | floor) % 256)) |
		flatten | map(tostring) | join(" ")')
	bpftool map update pinned "$STATS" key 0 0 0 0 value "${bytes[@]}"
}
# The hit rate is hits over the lookups that could have hit: hits, misses,
# stale entries and races. Two intervals: none in the first (no rate), 5
# hits, a miss, a stale entry and a race on each CPU in the second: 62.5 %.
if stats_add; then
	silo --netns "$N" -j stats --interval 1 --count 2 --per-cpu \
		>"$TMP/rate.json" 2>&1 &
	json_pid=$!
	silo --netns "$N" stats --interval 1 --count 2 >"$TMP/rate.txt" 2>&1 &
	text_pid=$!
	for _ in $(seq 100); do # until both printed their first interval
		[[ -s $TMP/rate.json ]] && grep -q '^$' "$TMP/rate.txt" && break
		sleep 0.05
	done
	stats_add cache_hit=5 cache_miss=1 cache_stale=1 cache_race=1
	wait "$json_pid" "$text_pid"
	jq -se 'length == 2 and .[0].cache_hit_rate == null and
		.[1].cache_hit_rate == 0.625' "$TMP/rate.json" >/dev/null 2>&1 &&
		ok "stats --interval -j: hit rate with misses" ||
		not_ok "stats --interval -j: hit rate with misses" \
			"want null, then 0.625: $(jq -c .cache_hit_rate "$TMP/rate.json" 2>&1 | tr '\n' ' ')"
	jq -se 'all(.[]; keys == ["cache_hit_rate", "cpus", "interval_s", "rates"])' \
		"$TMP/rate.json" >/dev/null 2>&1 &&
		ok "stats --interval -j --per-cpu: its keys" ||
		not_ok "stats --interval -j --per-cpu: its keys" \
			"$(jq -c keys "$TMP/rate.json" 2>&1 | head -c 300)"
	rates=$(grep 'hit rate' "$TMP/rate.txt")
	[[ $rates == '  route cache hit rate 62.5 %' ]] &&
		ok "stats --interval: hit rate with misses" ||
		not_ok "stats --interval: hit rate with misses" \
			"want one '  route cache hit rate 62.5 %', got '$rates'"
else
	not_ok "stats: write the counters" "bpftool map update $STATS failed"
fi
# -j --per-cpu: the total and each possible CPU's counters, named as the
# fields of struct silo_stats (the map's BTF).
silo --netns "$N" -j stats --per-cpu >"$TMP/pc" 2>&1
bpftool -j map dump pinned "$STATS" >"$TMP/dump"
jq -e --slurpfile d "$TMP/dump" '
	($d[0][0].formatted.values) as $v | ($v[0].value | keys) as $names |
	keys == ["conntrack", "cpus", "total"] and (.total | keys) == $names and
	(.cpus | length) == ($v | length) and
	all(.cpus[]; keys == $names) and
	([.cpus[].cache_hit] == [$v[].value.cache_hit]) and
	.total.cache_hit == ([$v[].value.cache_hit] | add) and
	.total.cache_hit > 0' "$TMP/pc" >/dev/null 2>&1 &&
	ok "stats -j --per-cpu: total and cpus, counters by name" ||
	not_ok "stats -j --per-cpu: total and cpus, counters by name" \
		"$(jq -c '{keys: keys, total: (.total // {} | keys | length),
			cpus: [(.cpus // [])[] | keys | length]}' "$TMP/pc" 2>&1 | head -c 300)"
check "json after the command" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' xdp status -j | jq -e '.devices[0].device == \"v0\"'"
g=$(silo --netns "$N" -j genid show | jq .genid)
expect "genid bump" 0 "genid $((g + 1))\$" silo --netns "$N" genid bump

# Bad input is refused before any work, saying what a good value is.
before=$(state)
expect "--pin-root empty" 2 "bad --pin-root '': an absolute path" \
	"$SILO" --pin-root "" --netns "$N" xdp status
expect "--pin-root relative" 2 "bad --pin-root 'pins'" \
	"$SILO" --pin-root pins --netns "$N" xdp status
expect "--pin-root too long" 2 "at most 256 characters" \
	"$SILO" --pin-root "/sys/fs/bpf/$(printf '%0300d' 0)" --netns "$N" xdp status
json_error "json error: --pin-root" 2 "bad --pin-root" \
	"$SILO" -j --pin-root pins --netns "$N" xdp status
expect "--cache-size over the limit" 2 "from 1 to 4194304" \
	silo --netns "$N" xdp load v1 --cache-size 4194305
expect "--tos over 255" 2 "bad --tos '256' for route lookup: 0 to 255" \
	silo --netns "$N" route lookup 10.0.0.1 --tos 256
# Each numeric option takes the least and the greatest value its help
# names, and refuses one past the greatest with that range. A value taken
# gets the command past its options: it then fails (1) on the namespace
# that does not exist, not (2) on the value.
GONE="nosuch-$NS"
edges() { # NAME OPT MIN MAX PAST RANGE CMD...
	local name=$1 opt=$2 min=$3 max=$4 past=$5 range=$6 v
	shift 6
	for v in "$min" "$max"; do
		expect "$name --$opt $v taken" 1 "no network namespace '$GONE'" \
			silo --netns "$GONE" "$@" "--$opt" "$v"
	done
	expect "$name --$opt $past refused" 2 "bad --$opt '$past' for $name: $range\$" \
		silo --netns "$GONE" "$@" "--$opt" "$past"
}
edges "xdp load" cache-size 1 4194304 4194305 "a whole number from 1 to 4194304" \
	xdp load v1
edges "service add" port 1 65535 65536 "a whole number from 1 to 65535" \
	service add --proto udp --cpus 0
edges "service add" queue-size 1 16384 16385 "a whole number from 1 to 16384" \
	service add --proto udp --port 9 --cpus 0
edges "service del" port 1 65535 65536 "a whole number from 1 to 65535" \
	service del --proto udp
edges "reuseport attach" port 1 65535 65536 "a whole number from 1 to 65535" \
	reuseport attach --pid 1
edges "route lookup" tos 0 255 256 "0 to 255" route lookup 10.0.0.1
edges "stats show" interval 0.1 3600 3600.001 "seconds, 0.1 to 3600" stats
edges "stats show" count 1 4294967295 4294967296 \
	"a whole number from 1 to 4294967295" stats --interval 1
# reuseport attach takes at most 64 --pid.
pids=()
for _ in $(seq 64); do pids+=(--pid 1); done
expect "reuseport attach: 64 --pid taken" 1 "no network namespace '$GONE'" \
	silo --netns "$GONE" reuseport attach --port 9 "${pids[@]}"
expect "reuseport attach: a 65th --pid refused" 2 \
	"bad --pid '1' for reuseport attach: a process id \\(at most 64 of them\\)" \
	silo --netns "$GONE" reuseport attach --port 9 "${pids[@]}" --pid 1
expect "a missing argument" 2 "route lookup needs ADDR" silo --netns "$N" route lookup
expect "an argument too many" 2 "unexpected argument 'x'" silo --netns "$N" genid show x
[[ $(state) == "$before" ]] && ok "refused input changes nothing" ||
	not_ok "refused input changes nothing" "$(state)"
# show has list as its alias on every object, as in bpftool.
expect "xdp list" 0 "DEVICE +IFINDEX" silo --netns "$N" xdp list
expect "route list" 0 "NODE +IIF" silo --netns "$N" route list
expect "genid list" 0 "^genid [0-9]+" silo --netns "$N" genid list
expect "daemon show" 0 "silod" silo --netns "$N" daemon show
expect "prefix: ambiguous alias" 2 "ambiguous command 'l' for xdp: load, list" \
	silo --netns "$N" xdp l
# A pin root that is itself a bpffs mount.
mkdir -p "$TMP/bpffs" && mount -t bpf bpf "$TMP/bpffs" || exit 1
expect "pin root on its own bpffs mount" 0 "pins in $TMP/bpffs" \
	"$SILO" --pin-root "$TMP/bpffs" --netns "$N" xdp load v1
expect "  and unloaded from it" 0 "silo unloaded from v1" \
	"$SILO" --pin-root "$TMP/bpffs" --netns "$N" xdp unload v1
left=$(find "$TMP/bpffs" -mindepth 1 -not -name '*.debug')
[[ -z $left ]] && ok "  leaving nothing" || not_ok "  leaving nothing" "$left"
umount "$TMP/bpffs"

expect "unload" 0 "silo unloaded from v0" silo --netns "$N" xdp unload v0
[[ -z $(state) ]] && ok "unload leaves nothing" ||
	not_ok "unload leaves nothing" "$(state)"
ip netns del "$N"
