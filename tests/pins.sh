# SPDX-License-Identifier: GPL-2.0
# Pin directories no other user can write: fresh ones are 0700; a pin root,
# netns or namespace directory that is group/other-writable, another user's
# or a symbolic link is refused with a message naming it; the reuseport lock
# (on the pin directory) gives up after a while with a clear error.
. "$TESTS_DIR/lib.sh"

N="${NS}pins"
DIR="$PIN_ROOT/netns/$N"
SERVER='' HOLDER=''
cleanup() {
	[[ -n $HOLDER ]] && kill "$HOLDER" 2>/dev/null && wait "$HOLDER" 2>/dev/null
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$N" || exit 1
ip -n "$N" link set lo up
ip -n "$N" link add v0 type veth peer name v0p
ip -n "$N" link set v0 up
ip -n "$N" link set v0p up

attached() { ip -n "$N" -d link show v0 | grep -q 'prog/xdp'; }
modes() { stat -c '%a' "$PIN_ROOT" "$PIN_ROOT/netns" "$DIR" 2>&1 | tr '\n' ' '; }

# A fresh load makes every directory 0700.
check "fresh load" silo --netns "$N" xdp load v0 --mode skb
[[ $(modes) == "700 700 700 " ]] && ok "fresh directories are 0700" ||
	not_ok "fresh directories are 0700" "$(modes)"
check "unload" silo --netns "$N" xdp unload v0
[[ ! -e $PIN_ROOT ]] && ok "unload removes the directories" ||
	not_ok "unload removes the directories" "$(ls -R "$PIN_ROOT")"

# refused NAME PATTERN: a load is refused saying PATTERN, attaches nothing.
refused() {
	expect "$1" 1 "$2" silo --netns "$N" xdp load v0 --mode skb
	attached && not_ok "$1: nothing attached" "attached" ||
		ok "$1: nothing attached"
	silo --netns "$N" xdp unload v0 >/dev/null 2>&1
}

# Made first by someone else, open to all.
mkdir -p "$DIR"
chmod 0777 "$PIN_ROOT"
refused "pin root mode 0777" \
	"$PIN_ROOT is writable by group or others \(mode 0777\).*rm -r $PIN_ROOT"
chmod 0700 "$PIN_ROOT"
chmod 0775 "$PIN_ROOT/netns"
refused "netns directory mode 0775" "$PIN_ROOT/netns is writable by group"
chmod 0700 "$PIN_ROOT/netns"
chmod 1777 "$DIR"
refused "namespace directory mode 1777" "$DIR is writable by group"
chmod 0700 "$DIR"

# Owned by another user (nobody), even when not writable by others.
chown 65534 "$DIR"
refused "namespace directory of uid 65534" \
	"$DIR is owned by uid 65534, not root.*rm -r $DIR"
expect "status refuses it too" 1 "owned by uid 65534" silo --netns "$N" xdp status
chown 0 "$DIR"
chown 65534 "$PIN_ROOT"
refused "pin root of uid 65534" "$PIN_ROOT is owned by uid 65534"
chown 0 "$PIN_ROOT"

# A symbolic link anywhere below the bpffs mount.
rm -rf "$PIN_ROOT/netns"
mkdir -m 0700 "$PIN_ROOT/elsewhere"
ln -s "$PIN_ROOT/elsewhere" "$PIN_ROOT/netns"
refused "netns directory a symbolic link" \
	"$PIN_ROOT/netns is a symbolic link.*rm $PIN_ROOT/netns"
[[ -z $(ls -A "$PIN_ROOT/elsewhere") ]] && ok "nothing made through the link" ||
	not_ok "nothing made through the link" "$(ls -R "$PIN_ROOT/elsewhere")"
rm -rf "$PIN_ROOT"

# Safe directories made beforehand by root are used.
# shellcheck disable=SC2174 # the mode matters for $DIR alone
mkdir -p -m 0755 "$DIR"
chmod 0755 "$PIN_ROOT" "$PIN_ROOT/netns"
check "root's 0755 directories are used" silo --netns "$N" xdp load v0 --mode skb
check "unload" silo --netns "$N" xdp unload v0
rm -rf "$PIN_ROOT"

# Pins of another layout: xdp status says so (it read as "not loaded"
# with the device's pins line missing), and a load replaces them.
check "load for the layout check" silo --netns "$N" xdp load v0 --mode skb
meta=$(bpftool -j map lookup pinned "$DIR/meta" key 0 0 0 0 |
	jq -r '.value | map(.) | join(" ")')
read -r -a bytes <<<"$meta"
bytes[0]=0x63 bytes[1]=0 bytes[2]=0 bytes[3]=0 # layout_version 99
bpftool map update pinned "$DIR/meta" key 0 0 0 0 value "${bytes[@]}"
expect "status: pins of another layout said" 0 \
	"pins in $DIR are of another silo version.*load silo again" \
	silo --netns "$N" xdp status
[[ $(silo --netns "$N" -j xdp status | jq -c '[.loaded, .stale_pins]') == \
	'[false,true]' ]] && ok "status -j: stale_pins" ||
	not_ok "status -j: stale_pins" "$(silo --netns "$N" -j xdp status | head -c 200)"
check "a load replaces them" silo --netns "$N" xdp load v0 --mode skb --replace
[[ $(silo --netns "$N" -j xdp status | jq -c '[.loaded, .stale_pins]') == \
	'[true,false]' ]] && ok "status -j: loaded again" ||
	not_ok "status -j: loaded again" "$(silo --netns "$N" -j xdp status | head -c 200)"
check "unload after the layout check" silo --netns "$N" xdp unload v0
rm -rf "$PIN_ROOT"

# The reuseport lock: held by another process, a group change gives up.
ip netns exec "$N" "$BUILD/examples/echo_server" --plain --port 7311 >"$TMP/server" &
SERVER=$!
for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
PID=$(jq -r .pid "$TMP/server")
# shellcheck disable=SC2174 # the mode matters for $DIR alone
mkdir -p -m 0700 "$DIR"
chmod 0700 "$PIN_ROOT" "$PIN_ROOT/netns"
# flock(1) on fd 9, then sleep holds it: killing HOLDER drops the lock.
bash -c 'exec 9<"$1" && flock 9 && exec sleep 60' _ "$DIR" &
HOLDER=$!
for _ in $(seq 50); do
	grep -q "FLOCK .*:$(stat -c %i "$DIR") " /proc/locks && break
	sleep 0.1
done
start=$(date +%s)
expect "a held lock times out" 1 "$DIR stayed locked for 5 s" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7311 --proto udp
took=$(($(date +%s) - start))
((took >= 4 && took <= 30)) && ok "it waited about 5 s" ||
	not_ok "it waited about 5 s" "${took} s"
kill "$HOLDER" && wait "$HOLDER" 2>/dev/null
HOLDER=
expect "attach once the lock is free" 0 "attached 1 group" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7311 --proto udp
expect "detach" 0 "detached" silo --netns "$N" reuseport detach udp4_7311
[[ ! -e $DIR ]] && ok "no pins at the end" || not_ok "no pins at the end" "$(ls -R "$DIR")"
