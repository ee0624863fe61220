# SPDX-License-Identifier: GPL-2.0
# Bad silo.conf files, as a new user writes them: a key given twice in one
# mapping (YAML keys are unique; the last would win unseen), a device name
# no interface can have, an object declared twice (the first the file
# meets is named, with both lines), each refused with its line and nothing
# changed; a file with no part for the namespace --netns names says so; the
# plan grows as n log n at most: 100,000 devices against 25,000; and the
# state file survives a crash before its rename and a full state folder;
# cache-size and allow-firewall-bypass are compared with what runs and
# written back; a service's fields, both halves, each field removed.
. "$TESTS_DIR/lib.sh"

N="${NS}cf"
ST="$TMP/state"
cleanup() {
	mountpoint -q "$TMP/full" && umount "$TMP/full"
	silo --netns "$N" xdp unload c0 >/dev/null 2>&1
	ip netns del "$N" 2>/dev/null
	ip netns del "${NS}cfx" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$N" || {
	not_ok "setup" "cannot make $N"
	exit 1
}

apply() { silo apply --state-dir "$ST" "$@"; }
F="$TMP/f.conf"
# bad NAME LINE_AND_MESSAGE: the file F is refused with it.
bad() {
	expect "$1" 1 "f.conf:$2.*: nothing was changed$" apply --dry-run "$F"
}

printf 'devices:\n  - name: eth0\n    name: eth1\n' >"$F"
bad "a key twice in a device" "3: key 'name' twice in a device \\(first at line 2\\): a key is given once"
printf 'devices:\n  - name: eth0\nservices:\ndevices:\n  - name: eth1\n' >"$F"
bad "a key twice at the top" "4: key 'devices' twice in the file \\(first at line 1\\)"
printf 'netns:\n  a:\n    devices: []\n  b: {}\n  a: {}\n' >"$F"
bad "a namespace twice" "5: key 'a' twice in netns \\(first at line 2\\)"
printf 'devices:\n  - name: eth0\n    mode: skb\n    name: eth1\n    mode: native\n' >"$F"
bad "the first twice the file meets is named" "4: key 'name' twice in a device \\(first at line 2\\)"

for name in ../../etc 'a b' a/b a:1 . .. 0123456789abcdef; do
	printf 'devices:\n  - name: "%s"\n' "$name" >"$F"
	bad "device name '$name' refused" "2: name: '${name//./\\.}' is (not an interface name|too long)"
done
printf 'queue-maps:\n  - device: "x y"\n    queues: {0: 0}\n' >"$F"
bad "a queue map's device name refused" "2: device: 'x y' is not an interface name"
printf 'devices:\n  - match: "veth:*"\n' >"$F"
bad "a match with ':' refused" "2: match: a device name pattern has no '/', ':' or space"
printf 'devices:\n  - match: "a/b*"\n' >"$F"
bad "a match with '/' refused" "2: match: a device name pattern has no '/', ':' or space"

# Each entry's own checks: what cannot work, or says two things.
printf 'queue-maps:\n  - device: eth0\n    queues: {0: 0, 00: 1}\n' >"$F"
bad "a queue twice (0 and 00) refused" "3: queues: queue 0 twice"
printf 'queue-maps:\n  - device: eth0\n    queues: {4096: 0}\n' >"$F"
bad "a queue past the last refused" "3: queues: '4096' is not an RX queue \\(0 to 4095\\)"
printf 'queue-maps:\n  - device: eth0\n    queues: {4095: 0}\n' >"$F"
expect "the last queue taken" 0 "" apply --dry-run "$F"
printf 'queue-maps:\n  - device: eth0\n    queues: {0: %d}\n' "$(nproc)" >"$F"
bad "a CPU past the last refused" "3: queues: '$(nproc)' is not a number from 0 to $(($(nproc) - 1))"
printf 'queue-maps:\n  - device: eth0\n    queues: {}\n' >"$F"
bad "a queue map without queues refused" "2: a queue map needs a device and its queues"
printf 'devices:\n  - name: eth0\n    forward-established: true\n' >"$F"
bad "forward-established without forward refused" "2: forward-established needs forward: true"
printf 'reuseport:\n  - name: g\n    port: 7000\n    proto: udp\n    processes:\n      exe: bin/x\n' >"$F"
bad "a relative exe refused" "2: processes: exe is an absolute path"
printf 'services:\n  - proto: udp\n    port: 53\n    cpus: 0\n    group: g\n' >"$F"
bad "a service with cpus and a group refused" "2: a service needs cpus or group, one of them"
printf 'services:\n  - proto: udp\n    port: 53\n' >"$F"
bad "a service with neither refused" "2: a service needs cpus or group, one of them"

printf 'devices:\n  - name: eth0\n' >"$F"
expect "a name an interface can have is taken" 0 "" \
	silo --netns "$N" apply --dry-run --state-dir "$ST" "$F"

# Declared twice: the first the file meets, with both its lines.
printf 'devices:\n  - name: b\n  - name: a\n  - name: c\n  - name: a\n  - name: b\n' >"$F"
bad "a device twice: the first met" "5: device a is declared at line 3 already"
printf 'devices:\n  - match: "v*"\n  - name: v\n  - match: "v*"\n' >"$F"
bad "a match twice" "4: device v\\* is declared at line 2 already"
cat >"$F" <<EOF
services:
  - proto: udp
    port: 53
    cpus: 0
  - proto: tcp
    port: 53
    cpus: 0
  - proto: udp
    port: 53
    cpus: 0
EOF
bad "a service twice" "8: service udp 53 any is declared at line 2 already"
cat >"$F" <<EOF
reuseport:
  - port: 7000
    processes: {exe: /usr/bin/a}
  - name: g
    port: 7000
    processes: {exe: /usr/bin/a}
  - port: 7000
    processes: {exe: /usr/bin/a}
  - name: g
    port: 7001
    processes: {exe: /usr/bin/b}
EOF
bad "a named group twice (unnamed ones never)" "9: reuseport group g is declared at line 4 already"
cat >"$F" <<EOF
queue-maps:
  - device: eth0
    queues: {0: 0}
  - device: eth1
    queues: {0: 0}
  - device: eth0
    queues: {1: 0}
EOF
bad "a queue map twice" "6: queue map of eth0 is declared at line 2 already"
# A named namespace is checked as the top level is.
printf 'netns:\n  a:\n    devices:\n      - name: x\n      - name: x\n' >"$F"
bad "a device twice in a named namespace" "5: device x is declared at line 4 already"
printf 'netns:\n  a/b:\n    devices: []\n' >"$F"
bad "a namespace name with '/' refused" "3: netns: 'a/b' is not a namespace name"
printf 'netns:\n  a:\n    netns:\n      b: {}\n' >"$F"
bad "a netns inside a named namespace refused" "3: unknown key 'netns' in a namespace"
[[ ! -e $ST ]] && ok "bad files change nothing" ||
	not_ok "bad files change nothing" "$(ls -R "$ST")"

# --netns with no part for it: said, and nothing of apply's runs there.
printf 'devices:\n  - name: eth0\n' >"$F"
expect "no part for the namespace: said" 0 \
	"f.conf declares nothing for network namespace $N" \
	silo --netns "$N" apply --dry-run --state-dir "$ST" "$F"
grep -q "nothing to change: nothing of apply's runs there" "$TMP/out" &&
	ok "and nothing of apply's runs there" ||
	not_ok "and nothing of apply's runs there" "$(cat "$TMP/out")"
printf 'netns:\n  %s:\n    devices:\n      - name: eth0\n' "$N" >"$F"
expect "a part for it: not said" 0 "" \
	silo --netns "$N" apply --dry-run --state-dir "$ST" "$F"
grep -q "declares nothing" "$TMP/out" &&
	not_ok "a part for it: not said" "$(cat "$TMP/out")" ||
	ok "a part for it: the plan, no note"

# The plan's growth: 100,000 devices (none there yet: each waits) take
# less than 8 times 25,000's (n log n: some 4.5; a comparison of every pair,
# as before: 16). The best of three runs each, in this order.
devices() { # N: a part for $N with that many devices
	printf 'netns:\n  %s:\n    devices:\n' "$N"
	seq -f '      - name: d%.0f' 1 "$1"
}
devices 25000 >"$TMP/small.conf"
devices 100000 >"$TMP/big.conf"
plan_ms() { # FILE: the least of three dry runs, in ms
	local best='' t0 t1 _
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		silo --netns "$N" apply --dry-run --state-dir "$ST" "$1" \
			>/dev/null 2>&1 || return 1
		t1=$(date +%s%N)
		t1=$(((t1 - t0) / 1000000))
		[[ -z $best ]] || ((t1 < best)) && best=$t1
	done
	echo "$best"
}
small=$(plan_ms "$TMP/small.conf") && big=$(plan_ms "$TMP/big.conf") &&
	((big < 8 * small)) &&
	ok "100,000 devices plan in ${big} ms, 25,000 in ${small} ms (less than 8x)" ||
	not_ok "the plan grows n log n at most" "100,000 devices: ${big:-failed} ms, 25,000: ${small:-failed} ms"

# The state file is replaced whole or not at all: a crash between its
# write and its rename, or a full state folder, leaves the old one.
part() { # DEVICE: a part for $N with that one device (none there: it waits)
	printf 'netns:\n  %s:\n    devices:\n      - name: %s\n' "$N" "$1"
}
SF="$ST/netns/$N.json"
part d1 >"$F"
check "apply: the state written" silo --netns "$N" apply --state-dir "$ST" "$F"
cp "$SF" "$TMP/old.json"
part d2 >"$F"
SILO_TEST_STATE_CRASH=1 silo --netns "$N" apply --state-dir "$ST" "$F" \
	>"$TMP/out" 2>&1
rc=$?
((rc == 137)) && cmp -s "$SF" "$TMP/old.json" &&
	ok "a crash before the rename: the old state whole" ||
	not_ok "a crash before the rename: the old state whole" "exit $rc: $(diff "$TMP/old.json" "$SF")"
check "the next apply writes it" silo --netns "$N" apply --state-dir "$ST" "$F"
jq -e '.pending | tostring | test("d2")' "$SF" >/dev/null &&
	[[ ! -e $SF.new ]] && ok "its state is the new file's, nothing stale left" ||
	not_ok "its state is the new file's, nothing stale left" "$(cat "$SF"; ls "$ST/netns")"

FULL="$TMP/full"
mkdir -p "$FULL"
if mount -t tmpfs -o size=64k tmpfs "$FULL"; then
	part d1 >"$F"
	check "apply on a small state folder" \
		silo --netns "$N" apply --state-dir "$FULL" "$F"
	cp "$FULL/netns/$N.json" "$TMP/old.json"
	dd if=/dev/zero of="$FULL/fill" bs=4k 2>/dev/null
	part d2 >"$F"
	expect "a full state folder: apply fails, says why" 1 \
		"cannot write apply's state .*No space left on device" \
		silo --netns "$N" apply --state-dir "$FULL" "$F"
	cmp -s "$FULL/netns/$N.json" "$TMP/old.json" &&
		[[ ! -e $FULL/netns/$N.json.new ]] &&
		ok "a full state folder: the old state whole, nothing left" ||
		not_ok "a full state folder: the old state whole, nothing left" "$(ls -la "$FULL/netns")"
	umount "$FULL"
else
	echo "skip - a full state folder: cannot mount a tmpfs"
fi

# cache-size: the route caches' size, every device's. show --config writes
# it where not the default; a file that asks for another while silo runs
# is refused as the load refuses it; one that does not say takes what runs.
ip -n "$N" link add c0 type veth peer name c1 &&
	ip -n "$N" link set c0 up && ip -n "$N" link set c1 up
c0() { # [KEY: VALUE]...: a part for $N with device c0 and these keys
	printf 'netns:\n  %s:\n    devices:\n      - name: c0\n' "$N"
	for kv; do printf '        %s\n' "$kv"; done
}
none() { printf 'netns:\n  %s: {}\n' "$N"; } # nothing for $N
napply() { silo --netns "$N" apply --state-dir "$ST" "$@"; }
is() { [[ $2 == "$3" ]] && ok "$1" || not_ok "$1" "got '$2', want '$3'"; }
# shown WHAT LINE: show --config writes LINE, and its file applies as a no-op.
shown() {
	silo --netns "$N" show --config >"$TMP/shown.conf"
	grep -q "$2" "$TMP/shown.conf" && ok "show --config writes $1" ||
		not_ok "show --config writes $1" "$(cat "$TMP/shown.conf")"
	expect "show --config round-trips $1" 0 "^nothing to change" \
		silo apply --state-dir "$ST" "$TMP/shown.conf"
}
c0 "cache-size: 4096" >"$F"
check "apply: cache-size 4096" napply "$F"
is "the caches hold 4096" "$(silo --netns "$N" -j xdp show | jq .cache_size)" 4096
shown cache-size "cache-size: 4096"
c0 "cache-size: 8192" >"$F"
expect "another cache-size while silo runs: refused, says how" 1 \
	"cache-size 8192: the route caches hold 4096 entries per node; unload silo from every device" \
	napply "$F"
is "the caches still hold 4096" "$(silo --netns "$N" -j xdp show | jq .cache_size)" 4096
c0 >"$F"
expect "no cache-size: what runs is taken" 0 "^nothing to change" \
	napply "$F"
none >"$F"
check "the device dropped: unloaded" napply "$F"
c0 >"$F"
check "loaded again, the default size" napply "$F"
silo --netns "$N" show --config | grep -q cache-size &&
	not_ok "the default size is not written" "$(silo --netns "$N" show --config)" ||
	ok "the default size is not written"
none >"$F"
check "unloaded" napply "$F"

# allow-firewall-bypass: the namespace's override, set by every forwarding
# load. A file's is compared with what runs, and show --config writes it.
override() { silo --netns "$N" -j xdp status | jq -c '.envelope.override'; }
c0 "forward: true" "allow-firewall-bypass: true" >"$F"
check "apply: forward with the bypass" napply "$F"
is "the override is on" "$(override)" '["nftables","iptables_legacy","tc"]'
shown "the bypass" "allow-firewall-bypass: true"
c0 "forward: true" >"$F"
expect "the bypass removed from the file: the device loaded again" 0 \
	"change device c0: native, forward" \
	napply "$F"
is "the override is off" "$(override)" '[]'
expect "and then nothing to change" 0 "^nothing to change" \
	napply "$F"
printf 'netns:\n  %s:\n    devices:\n      - name: c0\n        forward: true\n        allow-firewall-bypass: true\n      - name: c1\n        forward: true\n' "$N" >"$F"
bad "forwarding devices that disagree on the bypass" "7: allow-firewall-bypass is the namespace's: every forwarding device says the same \\(line 4 says true\\)"
printf 'devices:\n  - name: c0\n    allow-firewall-bypass: true\n' >"$F"
bad "the bypass without forward" "2: allow-firewall-bypass needs forward: true"
none >"$F"
check "unloaded once more" napply "$F"

# A service's fields, each compared with what runs, both halves of an
# any-family one: a half changed by hand is changed back; a field removed
# from the file goes back to its default.
svc() { # [KEY: VALUE]...: a part for $N with c0 and the service udp 7300
	printf 'netns:\n  %s:\n    devices:\n      - name: c0\n' "$N"
	printf '    services:\n      - proto: udp\n        port: 7300\n'
	for kv; do printf '        %s\n' "$kv"; done
}
halves() { # the running service's halves: family, CPUs, mode, queue size
	silo --netns "$N" -j service show |
		jq -r '[.services[] | "\(.service) \(.cpus) \(.mode) \(.queue_size)"] | join(", ")'
}
svc 'cpus: "0"' "queue-size: 1024" "mode: node" >"$F"
check "apply: a service, every field" napply "$F"
is "both halves as declared" "$(halves)" \
	"udp4 0.0.0.0:7300 0 node 1024, udp6 [::]:7300 0 node 1024"
silo --netns "$N" service add --proto udp --port 7300 --addr :: --cpus 1 \
	--replace >/dev/null 2>&1
expect "the IPv6 half changed by hand: changed back" 0 \
	"change service udp 7300 any" napply "$F"
is "both halves as declared again" "$(halves)" \
	"udp4 0.0.0.0:7300 0 node 1024, udp6 [::]:7300 0 node 1024"
svc 'cpus: "0"' "mode: node" >"$F"
expect "queue-size removed: changed" 0 "change service udp 7300 any" \
	napply "$F"
is "both halves' queue size back to the default" "$(halves)" \
	"udp4 0.0.0.0:7300 0 node 2048, udp6 [::]:7300 0 node 2048"
svc 'cpus: "0"' >"$F"
expect "mode removed: changed" 0 "change service udp 7300 any" \
	napply "$F"
is "both halves' mode back to flow" "$(halves)" \
	"udp4 0.0.0.0:7300 0 flow 2048, udp6 [::]:7300 0 flow 2048"
# Dropped from the file: removed in the reverse order of making, the
# service before the device whose unload takes every pin with it.
none >"$F"
expect "service and device removed, both said" 0 \
	"remove service udp 7300 any" napply "$F"
is "service and device removed: nothing runs" \
	"$(silo --netns "$N" -j xdp show 2>/dev/null | jq -r '[.devices[]?.device] | join(",")')" ""
# One removed by hand first: nothing left for apply to remove.
svc 'cpus: "0"' >"$F"
check "apply: the service again" napply "$F"
check "the service deleted by hand" silo --netns "$N" service del --proto udp --port 7300
check "both halves" bash -c "! silo --netns '$N' service del --proto udp --port 7300 --addr ::"
c0 >"$F"
expect "dropped from the file, gone already: nothing to change" 0 \
	"^nothing to change" napply "$F"
# Its IPv4 half deleted by hand: the IPv6 half still the file's to remove.
svc 'cpus: "0"' >"$F"
check "apply: the service once more" napply "$F"
check "its IPv4 half deleted by hand" \
	silo --netns "$N" service del --proto udp --port 7300 --addr 0.0.0.0
c0 >"$F"
expect "dropped from the file, one half left: removed" 0 \
	"remove service udp 7300 any" napply "$F"
is "no half left" "$(halves)" ""
none >"$F"
check "the device removed" napply "$F"

# A removal that fails (the kernel refuses it: a test hook here) keeps the
# object apply's: the state file still owns it, xdp status shows the
# failure pending, and the next apply tries it again.
c0 >"$F"
check "apply: c0 again" napply "$F"
none >"$F"
SILO_TEST_FAIL_REMOVE="device c0" expect "a removal that fails: said, exit 1" 1 \
	"remove device c0: .*Input/output error" napply "$F"
is "a failed removal: the state file still owns c0" \
	"$(jq -c .devices "$ST/netns/$N.json")" '["c0"]'
is "a failed removal: pending in xdp status" \
	"$(silo --netns "$N" xdp status --state-dir "$ST" -j | jq -r '[.apply_pending[] | "\(.op) \(.name)"] | join(",")')" \
	"remove c0"
is "a failed removal: c0 still loaded" \
	"$(silo --netns "$N" -j xdp show | jq -r '[.devices[].device] | join(",")')" "c0"
expect "the next apply tries it again" 0 "remove device c0" napply "$F"
is "tried again: c0 gone from the state file" \
	"$(jq -c .devices "$ST/netns/$N.json")" '[]'
is "tried again: c0 unloaded" \
	"$(silo --netns "$N" -j xdp show | jq -r '[.devices[].device] | join(",")')" ""

# Queue maps, owned queue by queue: a queue the file never names keeps
# what the operator set by hand; while the device is away (moved to
# another namespace, its ifindex and queue map kept) the queues apply set
# stay apply's, and dropped from the file they are set to none when it is
# back.
X="${NS}cfx"
ip netns add "$X" &&
	ip -n "$N" link add q0 numrxqueues 4 type veth peer name q1 numrxqueues 4 &&
	ip -n "$N" link set q0 up && ip -n "$N" link set q1 up ||
	not_ok "queue maps: setup" "cannot make q0"
qm() { # QUEUES: c0, and a queue map of q0 with these queues ("1: 1")
	printf 'netns:\n  %s:\n    devices:\n      - name: c0\n' "$N"
	printf '    queue-maps:\n      - device: q0\n        queues: {%s}\n' "$1"
}
c0 >"$F"
check "queue maps: c0 loaded" napply "$F"
c0 "mode: skb" >"$F"
expect "a mode changed in the file: refused, says how" 1 \
	"a mode is changed by 'silo xdp unload c0' and apply again" napply "$F"
# Named and matched by a pattern too: loaded once, with the name's keys.
printf 'netns:\n  %s:\n    devices:\n      - name: c0\n        forward: true\n      - match: "c*"\n' "$N" >"$F"
check "named and matched: applied" napply "$F"
is "named and matched: the name's keys" \
	"$(silo --netns "$N" -j xdp status | jq -c '[.devices[] | [.device, .forward]] | sort')" \
	'[["c0",true],["c1",false]]'
expect "named and matched: again, nothing to change" 0 "^nothing to change" \
	napply "$F"
c0 >"$F"
check "queue maps: c0 alone" napply "$F"
check "queue 0 set by hand" silo --netns "$N" service queue-map q0 0=0
qm "1: 1" >"$F"
expect "apply: queue 1 set" 0 "change queue-map q0 1: CPU 1" napply "$F"
expect "queue maps: again, nothing to change" 0 "^nothing to change" napply "$F"
is "the queue set by hand kept, the file's set" \
	"$(silo --netns "$N" -j service queue-map q0 | jq -c .queue_cpu)" \
	'[0,1,null,null]'
ip -n "$N" link set q0 netns "$X"
expect "the device away: the queue map waits" 0 "wait queue-map q0: no such device" \
	napply "$F"
is "the device away: the state file still owns its queue" \
	"$(jq -c '."queue-maps"' "$ST/netns/$N.json")" '["q0 1"]'
ip -n "$X" link set q0 netns "$N" && ip -n "$N" link set q0 up
c0 >"$F"
expect "back, dropped from the file: set to none" 0 \
	"remove queue-map q0 1: none" napply "$F"
is "back, dropped from the file: only the hand's queue left" \
	"$(silo --netns "$N" -j service queue-map q0 | jq -c .queue_cpu)" \
	'[0,null,null,null]'
none >"$F"
check "queue maps: unloaded" napply "$F"
ip netns del "$X"
