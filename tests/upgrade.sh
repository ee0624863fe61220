# SPDX-License-Identifier: GPL-2.0
# Upgrades: the previous release (commit SILO_UPGRADE_FROM, 09c5efa by
# default, of this repository: built into $TMP) loads silo on the lab's
# router with forwarding, its silod fills the route cache, its CLI makes a
# reuseport group on an unmodified server and a service. Then this build
# takes over as a package upgrade would: its silod, then its program by
# 'xdp load --replace'. Every pin stays the object it was (same map,
# program and link ids; no layout complaint) but the cpumap, which the
# kernel tied to the old program's kind (no multi-buffer frames): it is
# made again with the same entries, once. The cache, the group and the
# service read as before, new traffic is forwarded by XDP from the cache
# and the group's datagrams reach the socket of the sender's CPU; the new
# CLI removes it all and leaves no pins.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

FROM=${SILO_UPGRADE_FROM:-09c5efa}
# tools/mutate.sh runs the tests in a copy that is no repository: it names
# the repository it copied.
REPO=${SILO_UPGRADE_REPO:-$(cd "$TESTS_DIR/.." && pwd)}
if ! git -C "$REPO" rev-parse -q --verify "$FROM^{commit}" >/dev/null 2>&1; then
	echo "skip - upgrade: no commit $FROM in $REPO (a tarball or a shallow clone?): set SILO_UPGRADE_REPO to a repository that has it, or SILO_UPGRADE_FROM"
	exit 0
fi

P="${NS}up"
R="$P-router"
DIR="$PIN_ROOT/netns/$R"
OLD="$TMP/old/build"
DAEMON='' SERVER=''
cleanup() {
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	lab_down "$P"
	rm -rf "$TMP"
}
trap cleanup EXIT

# The previous release: silo and silod only, without sanitizers, with this
# tree's vmlinux.h when there is one (the old Makefile would make the same).
mkdir -p "$TMP/old"
git -C "$REPO" archive "$FROM" | tar -x -C "$TMP/old" ||
	{ not_ok "build $FROM" "git archive failed"; exit 1; }
[[ -s $TESTS_DIR/../vmlinux/vmlinux.h ]] &&
	cp "$TESTS_DIR/../vmlinux/vmlinux.h" "$TMP/old/vmlinux/"
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$TMP/old" -j2 WERROR=0 \
	OUTPUT="$OLD" "$OLD/silo" "$OLD/silod" >"$TMP/build.log" 2>&1; then
	ok "build $FROM"
else
	not_ok "build $FROM" "make failed; its last lines:"
	tail -n 20 "$TMP/build.log" | sed 's/^/# /'
	exit 1
fi

# old ARGS / new ARGS: that release's silo, in the router, on the pins.
old() { "$OLD/silo" --pin-root "$PIN_ROOT" --netns "$R" "$@"; }
new() { silo --netns "$R" "$@"; }

lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }

# start_silod BIN CLI: silod for the router; running and trusted.
start_silod() {
	local i
	"$1" --pin-root "$PIN_ROOT" --netns "$R" -q &
	DAEMON=$!
	for i in $(seq 100); do
		"$2" -j daemon status 2>/dev/null >"$TMP/daemon" &&
			jq -e '.running and .cache_trusted' "$TMP/daemon" >/dev/null &&
			return 0
		((i < 100)) && sleep 0.05
	done
	return 1
}
stop_silod() {
	kill -TERM "$DAEMON"
	wait "$DAEMON"
	local rc=$?
	DAEMON=
	return "$rc"
}

# udp NAME DST: 300 datagrams from client to server, all arrived.
udp() {
	ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 300 \
		--timeout 3 >"$TMP/sink" 2>/dev/null &
	local sink=$! got sent
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" udp-send "$2" 7000 --count 300 \
		--gap-us 100 >"$TMP/send"
	wait "$sink"
	got=$(jq .datagrams "$TMP/sink") sent=$(jq .datagrams "$TMP/send")
	[[ $got == "$sent" && $sent == 300 ]] && ok "$1" ||
		not_ok "$1" "$got of $sent datagrams arrived (300 asked)"
}

# counters CLI: the router's rx, redirect and cache_hit, in one line.
counters() { "$1" -j stats | jq -r '"\(.rx) \(.redirect) \(.cache_hit)"'; }

# forwarded NAME CLI BEFORE: since BEFORE (counters), XDP redirected 95 %
# of what it saw and took 95 % of that from the route cache.
forwarded() {
	local rx0 red0 hit0 rx red hit
	read -r rx0 red0 hit0 <<<"$3"
	read -r rx red hit <<<"$(counters "$2")"
	((rx -= rx0, red -= red0, hit -= hit0))
	((red > 250 && red * 100 >= rx * 95 && hit * 100 >= red * 95)) &&
		ok "$1" || not_ok "$1" "$red of $rx packets redirected, $hit from the cache"
}

# The destinations of the route cache's entries (JQ selects which).
entries() { # CLI JQ
	"$1" -j route show |
		jq -c "[.entries[] | select(.key.kind == \"route\" $2) | .key.dst] | unique"
}
# The traffic goes one way: to the server, over IPv4 and IPv6.
DSTS='["10.2.0.2","fd02::2"]'

# Every pin under DIR with the id of the map, program or link it holds.
pin_ids() {
	local f kind id
	(cd "$DIR" && find . -type f | sort) | while read -r f; do
		for kind in map prog link; do
			id=$(bpftool -j "$kind" show pinned "$DIR/$f" 2>/dev/null |
				jq -r .id 2>/dev/null)
			[[ -n $id && $id != null ]] && break
		done
		echo "$f $kind ${id:-?}"
	done
}

# What the group shows, counters aside: name, policy, slots.
group() { # CLI
	"$1" -j reuseport show udp4_7301 |
		jq -c '.groups[0] | {name, policy, attached, migrate,
			slots: [.slots[] | {slot, cookie, pid, tid}]}'
}
runs() { "$1" -j reuseport show udp4_7301 | jq '.groups[0].stats.runs'; }
services() { "$1" -j service show | jq -c '[.services[] | {service, mode, cpus}]'; }

# asks: 4 datagrams to the group from each CPU, on lo; how many the worker
# of the sender's CPU answered on that CPU (echo_server --tag: "wN cN").
NCPU=$(getconf _NPROCESSORS_ONLN)
asks() {
	local k i n=0 r
	for ((k = 0; k < NCPU; k++)); do
		for i in 1 2 3 4; do
			r=$(ip netns exec "$R" taskset -c "$k" timeout 2 bash -c \
				'exec 3<>/dev/udp/127.0.0.1/7301 && printf hi >&3 &&
				 dd bs=256 count=1 status=none <&3' 2>/dev/null)
			[[ $r == "w$k c$k hi" ]] && ((n++))
		done
	done
	echo "$n"
}

# --- the previous release ---------------------------------------------------

# That release forwards a checksum its senders leave to offload unfinished
# (its silo-xdp(8) asked for tx checksumming off on them): the client
# computes its own until this build's program runs, then goes back to its
# default.
ip netns exec "$P-client" ethtool -K eth0 tx off >/dev/null ||
	not_ok "old: client's tx checksumming off" "ethtool failed"
check "old: load r-c" old xdp load r-c --forward
check "old: load r-s" old xdp load r-s --forward
start_silod "$OLD/silod" old && ok "old: silod running, cache trusted" ||
	not_ok "old: silod running, cache trusted" "$(cat "$TMP/daemon")"
before=$(counters old)
udp "old: udp over ipv4" 10.2.0.2
udp "old: udp over ipv6" fd02::2
forwarded "old: forwarded by XDP from the cache" old "$before"
n=$(entries old "and .valid")
[[ $n == "$DSTS" ]] && ok "old: valid cache entries to the server" ||
	not_ok "old: valid cache entries to the server" "$n"
check "old: service add" old service add --proto udp --port 7100 --cpus 0 \
	--mode node
svc_old=$(services old)

# An unmodified server in the router's namespace: one UDP socket per CPU,
# each read by a thread pinned to that CPU.
ip netns exec "$R" "$BUILD/examples/echo_server" --plain --tag --port 7301 \
	>"$TMP/server" &
SERVER=$!
for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
PID=$(jq -r .pid "$TMP/server")
# Attach places each socket by the thread blocked on it: wait for them.
for _ in $(seq 50); do
	(($(grep -lE "ep_poll|epoll_wait" /proc/"$PID"/task/*/wchan 2>/dev/null | wc -l) >= NCPU)) &&
		break
	sleep 0.1
done
expect "old: reuseport attach" 0 "attached 1 group" old reuseport attach \
	--pid "$PID" --port 7301 --proto udp --policy cpu
runs0=$(runs old)
n=$(asks)
((n == 4 * NCPU)) && ok "old: datagrams to the socket of their CPU" ||
	not_ok "old: datagrams to the socket of their CPU" "$n of $((4 * NCPU))"
group_old=$(group old)
jq -e "(.slots | length) == $NCPU and all(.slots[]; .cookie > 0 and .pid == $PID)" \
	<<<"$group_old" >/dev/null && ok "old: a slot per CPU, each a socket of $PID" ||
	not_ok "old: a slot per CPU, each a socket of $PID" "$group_old"
pins_old=$(pin_ids)
# The cpumap's entries (raw: a cpumap has no BTF), one per service CPU.
cpumap() { bpftool -j map dump pinned "$DIR/cpumap" | jq -c '[.[] | {key, value}]'; }
cpumap_old=$(cpumap)
xdp_old=$(old -j xdp status | jq -c '[.devices[] | {device, link_id, prog_id}]')

# --- this build takes over ----------------------------------------------------

stop_silod && ok "old silod exits cleanly" || not_ok "old silod exits cleanly" "status $?"
layout=$("$OLD/silo" -j version | jq .layout)
n=$(silo -j version | jq .layout)
[[ $n == "$layout" ]] && ok "the same layout version ($layout)" ||
	not_ok "the same layout version ($layout)" "this build's is $n"
# It reads the old pins as its own: no "another silo version".
new xdp status >"$TMP/status" 2>&1
rc=$?
((rc == 0)) && grep -q "layout $layout" "$TMP/status" &&
	! grep -Eqi 'error|warning|another silo version' "$TMP/status" &&
	ok "new: xdp status reads the old pins" ||
	not_ok "new: xdp status reads the old pins" "exit $rc: $(head -c 300 "$TMP/status")"
check "new: xdp status -j: loaded, both devices forwarding" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$R' -j xdp status |
	 jq -e '.loaded and .layout == $layout and
		([.devices[] | select(.attached and .forward)] | length) == 2'"
n=$(entries new)
[[ $n == "$DSTS" ]] && ok "new: the old cache entries read" ||
	not_ok "new: the old cache entries read" "$n"
n=$(group new)
[[ $n == "$group_old" ]] && ok "new: the group reads as before" ||
	not_ok "new: the group reads as before" "$n, was $group_old"
n=$(services new)
[[ $n == "$svc_old" && $n == *udp* ]] && ok "new: the service reads as before" ||
	not_ok "new: the service reads as before" "$n, was $svc_old"

# silod first (the package's unit restarts it), under the old program.
start_silod "$BUILD/silod" new && ok "new: silod running, cache trusted" ||
	not_ok "new: silod running, cache trusted" "$(cat "$TMP/daemon")"
before=$(counters new)
udp "new silod, old program: udp over ipv4" 10.2.0.2
forwarded "new silod, old program: forwarded by XDP" new "$before"

# Then the program, in place, over the same maps.
# The old program took frames of one page only: the veth peers keep the
# MTU cap it set, and each replace says so (the one warning expected).
capped=()
for dev in r-c r-s; do
	new xdp load "$dev" --forward --replace >"$TMP/load" 2>&1
	rc=$?
	((rc == 0)) && ! grep -v 'keeps the MTU cap' "$TMP/load" |
		grep -Eqi 'warning|another silo version|replac' &&
		ok "new: load $dev --replace over the old pins" ||
		not_ok "new: load $dev --replace over the old pins" \
			"exit $rc: $(head -c 300 "$TMP/load")"
	capped+=("$(grep -c "the peer of veth $dev keeps the MTU cap of [0-9]* .*'silo xdp unload $dev' and load again" "$TMP/load")")
done
[[ ${capped[*]} == "1 1" ]] && ok "each replace says its veth peer keeps the old MTU cap" ||
	not_ok "each replace says its veth peer keeps the old MTU cap" "said ${capped[*]}"
ip netns exec "$P-client" ethtool -K eth0 tx on >/dev/null ||
	not_ok "new: client's tx checksumming back on" "ethtool failed"

# Made again by the first of this release to open the pins (its silod).
n=$(cpumap)
[[ $n == "$cpumap_old" && $n == *key* ]] && ok "the new cpumap has the old one's entries" ||
	not_ok "the new cpumap has the old one's entries" "$n, was $cpumap_old"

# The maps added to the layout since (silo_map_added()) are made beside
# the old ones, when the old pins lack them; no other pin changes.
added='^\./(pmtu_marks|pmtu_unseen|route_mtus|src_checked|local_bits|direct_skip|csum_stats|ct_stats|ct_ask) map [0-9]+$'
pins_new=$(pin_ids)
if [[ $(grep -Ev "$added|^\./cpumap " <<<"$pins_new") == "$(grep -Ev "$added|^\./cpumap " <<<"$pins_old")" ]] &&
	[[ $(grep '^\./cpumap ' <<<"$pins_new") != "$(grep '^\./cpumap ' <<<"$pins_old")" ]]; then
	ok "every pin holds the object it held (map, program, link ids), but a new cpumap"
else
	not_ok "every pin holds the object it held (map, program, link ids), but a new cpumap" \
		"$(diff <(echo "$pins_old") <(echo "$pins_new") | grep '^[<>]' | head -8 | tr '\n' ' ')"
fi
n=$(grep -Ec "$added" <<<"$pins_new")
((n == 9)) && ok "the maps added since are pinned" ||
	not_ok "the maps added since are pinned" "$n of 9: $pins_new"
xdp_new=$(new -j xdp status | jq -c '[.devices[] | {device, link_id, prog_id}]')
jq -en --argjson a "$xdp_old" --argjson b "$xdp_new" \
	'($a | length) == 2 and ($a | map(.device, .link_id)) == ($b | map(.device, .link_id)) and
	 ([$a, $b] | transpose | all(.[0].prog_id != .[1].prog_id))' >/dev/null &&
	ok "new program in the old links" ||
	not_ok "new program in the old links" "before $xdp_old, after $xdp_new"
check "new: silod still trusts the cache" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$R' -j daemon status |
	 jq -e '.running and .cache_trusted'"
before=$(counters new)
udp "new: udp over ipv4" 10.2.0.2
udp "new: udp over ipv6" fd02::2
forwarded "new: forwarded by XDP from the cache" new "$before"
n=$(entries new "and .valid")
[[ $n == "$DSTS" ]] && ok "new: valid cache entries to the server" ||
	not_ok "new: valid cache entries to the server" "$n"

n=$(asks)
((n == 4 * NCPU)) && ok "new: datagrams to the socket of their CPU" ||
	not_ok "new: datagrams to the socket of their CPU" "$n of $((4 * NCPU))"
n=$(runs new)
((n - runs0 == 8 * NCPU)) && ok "new: the group's program chose every one" ||
	not_ok "new: the group's program chose every one" "$((n - runs0)) runs for $((8 * NCPU)) datagrams"
expect "new: attach again adds nothing" 0 "in the group already" \
	new reuseport attach --pid "$PID" --port 7301 --proto udp
n=$(group new)
[[ $n == "$group_old" ]] && ok "new: the slots stay" ||
	not_ok "new: the slots stay" "$n, was $group_old"
expect "new: policy" 0 "policy hash" new reuseport policy udp4_7301 hash
[[ $(group new | jq -r .policy) == hash ]] && ok "new: policy shows" ||
	not_ok "new: policy shows" "$(group new)"

# The cap holds until silo is loaded afresh; then jumbo MTUs go.
! ip -n "$P-client" link set eth0 mtu 9000 2>/dev/null &&
	ok "capped: the client's MTU stays at most a page" ||
	not_ok "capped: the client's MTU stays at most a page" "MTU 9000 taken"
check "r-c loaded afresh" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$R' xdp unload r-c &&
	 '$SILO' --pin-root '$PIN_ROOT' --netns '$R' xdp load r-c --forward"
ip -n "$P-client" link set eth0 mtu 9000 && ip -n "$R" link set r-c mtu 9000 &&
	ok "loaded afresh: MTU 9000 on both ends of r-c" ||
	not_ok "loaded afresh: MTU 9000 on both ends of r-c" "$(ip -n "$P-client" -d link show eth0 | grep -o 'maxmtu [0-9]*')"

# --- this build removes it all ----------------------------------------------

expect "new: service del" 0 "" new service del --proto udp --port 7100
expect "new: reuseport detach" 0 "detached" new reuseport detach udp4_7301
check "new: unload r-c" new xdp unload r-c
check "new: unload r-s" new xdp unload r-s
n=$(ip -n "$R" link show | grep -c 'prog/xdp')
[[ $n == 0 ]] && ok "devices clean" || not_ok "devices clean" "$n with XDP"
stop_silod && ok "new silod exits cleanly" || not_ok "new silod exits cleanly" "status $?"
[[ ! -e $DIR ]] && ok "no pins left" || not_ok "no pins left" "$(cd "$DIR" && find . | tr '\n' ' ')"
