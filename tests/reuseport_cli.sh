# SPDX-License-Identifier: GPL-2.0
# silo reuseport from the command line: help, bad usage (exit 2), failures
# (exit 1) that change nothing, JSON, and attach/show/policy/detach with
# --netns on a server that 'ip netns exec' started.
. "$TESTS_DIR/lib.sh"

N="${NS}rp"
ip netns add "$N" || exit 1
ip -n "$N" link set lo up
DIR="$PIN_ROOT/netns/$N"
SERVER=
cleanup() {
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

expect "help" 0 "reuseport attach --pid PID \\[--pid PID\\]... --port PORT" silo reuseport help
expect "attach --help" 0 "--no-migrate" silo reuseport attach --help
expect "no command" 2 "Usage" silo reuseport
expect "unknown command" 2 "unknown command 'frob'" silo reuseport frob
expect "attach without --port" 2 "attach needs --port PORT" silo reuseport attach --pid 1
expect "bad policy" 2 "bad policy 'rr'" silo reuseport policy g rr
expect "show takes one group" 2 "unexpected argument 'b'" silo reuseport show a b
expect "detach takes a group" 2 "detach needs GROUP" silo reuseport detach
expect "show, nothing here" 0 "no reuseport groups" silo --netns "$N" reuseport show
check "show -j, nothing here" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show -j | jq -e '.groups == []'"
expect "detach unknown" 1 "no reuseport group 'nosuch'" \
	silo --netns "$N" reuseport detach nosuch
expect "policy unknown" 1 "no reuseport group 'nosuch'" \
	silo --netns "$N" reuseport policy nosuch cpu
expect "show unknown" 1 "no reuseport group 'nosuch'" \
	silo --netns "$N" reuseport show nosuch
[[ ! -e $DIR ]] && ok "failures leave no pins" ||
	not_ok "failures leave no pins" "$(ls -R "$DIR")"

# An unmodified server in the namespace, attached from the host.
ip netns exec "$N" "$BUILD/examples/echo_server" --plain --port 7301 >"$TMP/server" &
SERVER=$!
for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
PID=$(jq -r .pid "$TMP/server")
expect "attach --netns" 0 "attached 2 groups" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7301 --policy node
# Attaching again adds nothing twice: each socket stays in its slot.
expect "attach again" 0 "group udp4_7301 \\(in the group already\\)" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7301 --proto udp
check "attach again: no socket twice" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show udp4_7301 -j |
	 jq -e '[.groups[0].slots[].cookie] | (length == (unique | length)) and all(. != null and . != 0)'"
check "show -j" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show -j |
	 jq -e '[.groups[].name] == [\"tcp4_7301\", \"udp4_7301\"] or [.groups[].name] == [\"udp4_7301\", \"tcp4_7301\"]'"
check "show -j: policy, slots, owner" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show udp4_7301 -j |
	 jq -e '.groups[0].policy == \"node\" and ([.groups[0].slots[].pid] | all(. == $PID))'"
expect "show --per-cpu" 0 "total, then per CPU" \
	silo --netns "$N" reuseport show udp4_7301 --per-cpu
expect "policy" 0 "group udp4_7301: policy hash" \
	silo --netns "$N" reuseport policy udp4_7301 hash
check "policy shows" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show udp4_7301 -j | jq -e '.groups[0].policy == \"hash\"'"
expect "detach udp" 0 "group udp4_7301 detached" \
	silo --netns "$N" reuseport detach udp4_7301
expect "detach tcp -j" 0 '"detached": ?true' \
	silo --netns "$N" reuseport detach tcp4_7301 -j
[[ ! -e $DIR ]] && ok "detach leaves no pins" ||
	not_ok "detach leaves no pins" "$(ls -R "$DIR")"
expect "--name with two groups" 1 "--name names one group" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7301 --name web
expect "attach --name" 0 "group web" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7301 --proto tcp --name web
expect "detach --name" 0 "group web detached" silo --netns "$N" reuseport detach web
[[ ! -e $DIR ]] && ok "no pins at the end" || not_ok "no pins at the end" "$(ls -R "$DIR")"
