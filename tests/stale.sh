# SPDX-License-Identifier: GPL-2.0
# A device deleted while silo runs on it leaves a link that attaches to
# nothing: 'xdp status', 'xdp load' and 'xdp unload' remove its pins (and
# with the last device every map), 'xdp unload IFINDEX' names it, and silod
# removes them by itself when it sees the device go.
. "$TESTS_DIR/lib.sh"

N="${NS}stale"
DIR="$PIN_ROOT/netns/$N"
SILOD=
cleanup() {
	[[ -n $SILOD ]] && kill "$SILOD" 2>/dev/null && wait "$SILOD" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$N" || exit 1
ip -n "$N" link set lo up

veth() {
	ip -n "$N" link add "$1" type veth peer name "$1p" &&
		ip -n "$N" link set "$1" up && ip -n "$N" link set "$1p" up
}
ifindex() { ip -n "$N" -j link show "$1" | jq '.[0].ifindex'; }
listed() { silo --netns "$N" -j xdp status | jq "[.devices[].ifindex] | index($1) != null"; }

# The only device goes: status lists nothing and every pin is gone.
veth v0
i0=$(ifindex v0)
check "load v0" silo --netns "$N" xdp load v0 --mode skb
[[ -e $DIR/xdp_link_$i0 ]] && ok "v0's link pinned" || not_ok "v0's link pinned" "$(ls "$DIR")"
ip -n "$N" link del v0
[[ $(listed "$i0") == false ]] && ok "status does not list a deleted device" ||
	not_ok "status does not list a deleted device" "$(silo --netns "$N" xdp status)"
[[ ! -e $DIR ]] && ok "no pins after the only device went" ||
	not_ok "no pins after the only device went" "$(ls "$DIR")"

# One of two goes: unload by its ifindex, the other stays.
veth v1
veth v2
i1=$(ifindex v1)
check "load v1" silo --netns "$N" xdp load v1 --mode skb
check "load v2" silo --netns "$N" xdp load v2 --mode skb
ip -n "$N" link del v1
expect "unload IFINDEX of a deleted device" 0 "silo unloaded from $i1" \
	silo --netns "$N" xdp unload "$i1"
[[ ! -e $DIR/xdp_link_$i1 && -e $DIR/xdp_link_$(ifindex v2) && -e $DIR/meta ]] &&
	ok "its pin gone, v2's and the maps kept" ||
	not_ok "its pin gone, v2's and the maps kept" "$(ls "$DIR")"
expect "unload IFINDEX again" 1 "silo is not loaded on ifindex $i1" \
	silo --netns "$N" xdp unload "$i1"
expect "unload IFINDEX of no device" 1 "silo is not loaded on ifindex 99999" \
	silo --netns "$N" xdp unload 99999
expect "help says IFINDEX" 0 "xdp unload DEV\|IFINDEX" silo xdp help

# A load elsewhere removes the pins of a device that went.
veth v3
i3=$(ifindex v3)
check "load v3" silo --netns "$N" xdp load v3 --mode skb
ip -n "$N" link del v3
veth v4
check "load v4" silo --netns "$N" xdp load v4 --mode skb
[[ ! -e $DIR/xdp_link_$i3 ]] && ok "load removes a deleted device's pin" ||
	not_ok "load removes a deleted device's pin" "$(ls "$DIR")"
check "unload a live device by its ifindex" \
	silo --netns "$N" xdp unload "$(ifindex v4)"
check "unload v2" silo --netns "$N" xdp unload v2
[[ ! -e $DIR ]] && ok "no pins left" || not_ok "no pins left" "$(ls "$DIR")"

# silod sees the device go and removes its pins, no CLI needed.
veth v5
i5=$(ifindex v5)
check "load v5" silo --netns "$N" xdp load v5 --mode skb
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$N" -q &
SILOD=$!
running() { silo --netns "$N" -j daemon status 2>/dev/null | jq -e .running >/dev/null; }
for _ in $(seq 100); do running && break; sleep 0.05; done
running && ok "silod runs" || not_ok "silod runs" "not running"
ip -n "$N" link del v5
for _ in $(seq 100); do [[ -e $DIR/xdp_link_$i5 ]] || break; sleep 0.05; done
[[ ! -e $DIR/xdp_link_$i5 ]] && ok "silod removes a deleted device's pin" ||
	not_ok "silod removes a deleted device's pin" "$(ls "$DIR")"
[[ -e $DIR/meta ]] && ok "maps kept while silod runs" ||
	not_ok "maps kept while silod runs" "$(ls "$DIR" 2>&1)"
kill -TERM "$SILOD"
wait "$SILOD"
rc=$?
SILOD=
[[ $rc == 0 ]] && ok "silod exits cleanly" || not_ok "silod exits cleanly" "status $rc"
[[ ! -e $DIR ]] && ok "no pins once silod left" || not_ok "no pins once silod left" "$(ls "$DIR")"
