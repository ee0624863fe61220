# SPDX-License-Identifier: GPL-2.0
# silo.conf(5) and silo apply, and silod applying it: a bad file and a dry
# run change nothing; apply makes what the file declares, a second apply
# changes nothing (the same program, link and map ids), show --config
# round-trips, what was made by hand stays, what the file drops goes. Then
# a "reboot" (pins, links and the server gone, the state file kept):
# silod brings every object back, a restarted server's sockets join the
# group within a second, each datagram is read on the CPU it is processed
# on, and a device created after silod starts gets silo.
. "$TESTS_DIR/lib.sh"

P="${NS}ap"
C="$P-c" S="$P-s"
ST="$TMP/state"
SERVER="" DAEMON=""
ip netns add "$C" && ip netns add "$S" &&
	ip link add ap-c netns "$C" type veth peer name ap-s netns "$S" &&
	ip -n "$C" addr add 10.78.0.1/24 dev ap-c &&
	ip -n "$S" addr add 10.78.0.2/24 dev ap-s &&
	for n in "$C" "$S"; do ip -n "$n" link set lo up; done &&
	ip -n "$C" link set ap-c up && ip -n "$S" link set ap-s up ||
	{
		not_ok "setup" "could not build the namespaces"
		exit 1
	}
RELOAD="" HOLDER=""
cleanup() {
	[[ -s $TMP/reload.pid ]] && kill "$(cat "$TMP/reload.pid")" 2>/dev/null
	[[ -n $HOLDER ]] && kill "$HOLDER" 2>/dev/null
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	ip netns del "$C" 2>/dev/null
	ip netns del "$S" 2>/dev/null
	[[ -n ${CG:-} ]] && rmdir "$CG/inner" "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ECHO="$BUILD/examples/echo_server"
server() { # a plain server with a worker per CPU, on port 7302
	ip netns exec "$S" "$ECHO" --plain --tag --port 7302 >"$TMP/server" &
	SERVER=$!
	for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
}
server

CONF="$TMP/silo.conf"
cat >"$CONF" <<CONF
# the server's namespace
netns:
  $S:
    devices:
      - name: ap-s
        mode: native
    services:
      - proto: udp
        port: 7302
        group: echo
    reuseport:
      - name: echo
        port: 7302
        proto: udp
        policy: cpu
        processes:
          exe: $(readlink -f "$ECHO")
    queue-maps:
      - device: ap-s
        queues:
          0: 1
CONF
apply() { silo apply --state-dir "$ST" "$@"; }
DIR="$PIN_ROOT/netns/$S"

# A bad file: the line and what is wrong, and nothing changed.
sed 's/policy: cpu/policy: fastest/' "$CONF" >"$TMP/bad.conf"
expect "bad value names its line" 1 "bad.conf:15: policy: 'fastest' is not one of cpu, node, queue, hash: nothing was changed" \
	apply "$TMP/bad.conf"
sed 's/proto: udp/protocol: udp/' "$CONF" >"$TMP/bad.conf"
expect "unknown key names its line" 1 "bad.conf:8: unknown key 'protocol' in a service" apply "$TMP/bad.conf"
printf 'devices:\n  - name: x\n   mode: [\n' >"$TMP/bad.conf"
expect "not YAML names its line" 1 "bad.conf:3: " apply "$TMP/bad.conf"
expect "a pid is no declaration" 1 "never a pid" apply - <<<"reuseport: [{name: g, port: 1, processes: {pid: 4}}]"
expect "missing file" 1 "nosuch.conf: No such file" apply "$TMP/nosuch.conf"
[[ ! -e $DIR && ! -e $ST ]] && ok "bad files change nothing" ||
	not_ok "bad files change nothing" "$(ls -R "$DIR" "$ST" 2>&1)"

expect "dry run: the plan" 0 "add device ap-s: native \\(line 5\\)" apply --dry-run "$CONF"
check "dry run -j" bash -c "'$SILO' --pin-root '$PIN_ROOT' apply --state-dir '$ST' --dry-run -j '$CONF' |
	jq -e '.dry_run and ([.changes[] | .op + \" \" + .object] ==
	[\"add device\", \"add reuseport\", \"add service\", \"change queue-map\"])'"
[[ ! -e $DIR && ! -e $ST ]] && ok "dry run changes nothing" ||
	not_ok "dry run changes nothing" "$(ls -R "$DIR" "$ST" 2>&1)"

expect "apply" 0 "add service udp 7302 any: group echo, mode flow" apply "$CONF"
check "device loaded" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp show -j | jq -e '.devices[0].device == \"ap-s\"'"
check "group filled" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' reuseport show echo -j |
	jq -e '[.groups[0].slots[] | select(.cookie != 0)] | length == $(nproc)'"
check "service follows the group" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' service show -j |
	jq -e '[.services[] | select((.service | endswith(\":7302\")) and .group == \"echo\")] | length == 2'"
expect "queue map" 0 "ap-s: 0=1" silo -n "$S" service queue-map ap-s

ids() { # what a no-op must keep: program, link and map ids
	local p
	{
		silo -n "$S" xdp show -j | jq -c '[.devices[] | .prog_id, .link_id]'
		# The maps pinned under the pin root (not the host's: other
		# BPF users make and free theirs meanwhile).
		for p in $(find "$PIN_ROOT" -type f | sort); do
			bpftool -j map show pinned "$p" 2>/dev/null | jq '.id // empty'
		done | jq -sc .
		silo -n "$S" reuseport show echo -j | jq -c '[.groups[0].slots[].cookie]'
		silo -n "$S" service show -j | jq -c '[.services[] | .cpus]'
	} 2>&1
}
before=$(ids)
[[ $(head -1 <<<"$before") =~ ^\[[0-9]+,[0-9]+\]$ &&
	$(sed -n 2p <<<"$before") =~ ^\[[0-9]+(,[0-9]+)+\]$ ]] || not_ok "ids read" "$before"
expect "again: nothing to change" 0 "^nothing to change" apply "$CONF"
[[ $(ids) == "$before" ]] && ok "again: the same ids" || not_ok "again: the same ids" "$before / $(ids)"
sed 's/port: 7302/port: 0/' "$CONF" >"$TMP/bad.conf"
expect "a bad file over a running state" 1 "bad.conf:9: port: '0' is not a number from 1 to 65535" apply "$TMP/bad.conf"
[[ $(ids) == "$before" ]] && ok "a bad file leaves everything as it was" ||
	not_ok "a bad file leaves everything as it was" "$before / $(ids)"
silo -n "$S" show --config >"$TMP/shown.conf"
expect "show --config round-trips" 0 "^nothing to change" apply "$TMP/shown.conf"
expect "what runs, declared, is adopted" 0 "adopt service udp 7302 any: group echo" \
	silo apply --state-dir "$TMP/state2" "$TMP/shown.conf"
expect "show --config | apply -" 0 "^nothing to change" \
	bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' show --config | '$SILO' --pin-root '$PIN_ROOT' apply --state-dir '$ST' -"

# A group's policy changed in the file: changed in place, the sockets kept.
sed 's/policy: cpu/policy: hash/' "$CONF" >"$TMP/hash.conf"
expect "a group's policy changed" 0 "change reuseport echo: policy hash" apply "$TMP/hash.conf"
check "the group's policy is the file's" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' reuseport show echo -j |
	jq -e '.groups[0].policy == \"hash\"'"
expect "the policy back" 0 "change reuseport echo: policy cpu" apply "$CONF"

# A change that fails (forwarding refused while an nftables chain sees
# forwarded packets) leaves the device as it ran, and still the file's.
sed 's/        mode: native/        mode: native\n        forward: true/' "$CONF" >"$TMP/fwd.conf"
ip netns exec "$S" nft add table inet aptest
ip netns exec "$S" nft add chain inet aptest fchain '{ type filter hook forward priority 0; }'
ip netns exec "$S" nft add rule inet aptest fchain counter
expect "a refused change fails" 1 "change device ap-s: native, forward \\(line 5\\): FAILED" apply "$TMP/fwd.conf"
check "a refused change: still the file's" jq -e '.devices | index("ap-s")' "$ST/netns/$S.json"
[[ $(ids) == "$before" ]] && ok "a refused change: as it ran" || not_ok "a refused change: as it ran" "$before / $(ids)"
ip netns exec "$S" nft delete table inet aptest

# By hand: kept. Dropped from the file: removed.
check "a service by hand" silo -n "$S" service add --proto tcp --port 80 --cpus 0
sed '/queue-maps:/,$d' "$CONF" >"$TMP/less.conf"
expect "dropped from the file, a dry run: the removal planned" 0 "remove queue-map ap-s 0: none" \
	apply --dry-run "$TMP/less.conf"
expect "a dry run removes nothing" 0 "ap-s: 0=1" silo -n "$S" service queue-map ap-s
expect "dropped from the file: removed" 0 "remove queue-map ap-s 0: none" apply "$TMP/less.conf"
expect "made by hand: kept" 0 "tcp4 0.0.0.0:80 " silo -n "$S" service show
expect "again: nothing to change" 0 "^nothing to change" apply "$TMP/less.conf"

# The "reboot": the server and every pin gone, the state file kept.
kill "$SERVER" && wait "$SERVER" 2>/dev/null
SERVER=""
silo -n "$S" xdp unload ap-s >/dev/null 2>&1
rm -rf "$DIR"
[[ ! -e $DIR ]] && silo -n "$S" xdp show 2>&1 | grep -q "no device\|not loaded\|^$" &&
	ok "reboot: nothing left" || not_ok "reboot: nothing left" "$(ls -R "$DIR" 2>&1)"
# Before its server starts, the group an earlier apply made waits and stays
# apply's (the state file keeps it), and so does the service that follows
# it (the library takes no service of a group it cannot find).
svc_cpus() { # the CPUs of the services of port 7302, both families
	silo -n "$S" service show -j |
		jq -r '[.services[] | select(.service | endswith(":7302")) | .cpus] | unique | join(" ")'
}
expect "after the reboot, no server yet: the group waits" 0 "wait reuseport echo: no process" apply "$CONF"
grep -q "wait service udp 7302 any: no reuseport group echo yet" "$TMP/out" &&
	ok "after the reboot, no server yet: the service waits for its group" ||
	not_ok "after the reboot, no server yet: the service waits for its group" "$(head -c 600 "$TMP/out")"
check "after the reboot, no server yet: both stay apply's" jq -e \
	'(.reuseport | index("echo")) and (.services | index("udp 7302 any"))' "$ST/netns/$S.json"
# The server up, applied again: the group is made, then the service.
server
all=0
(($(nproc) > 1)) && all="0-$(($(nproc) - 1))"
expect "the server up: the group made" 0 "add reuseport echo" apply "$CONF"
[[ $(svc_cpus) == "$all" ]] && ok "the server up: the service on the group's CPUs" ||
	not_ok "the server up: the service on the group's CPUs" "$(svc_cpus), want $all"
# The group detached by hand leaves the service no CPU; the apply that
# makes it again gives them back (the service itself unchanged).
silo -n "$S" reuseport detach echo >/dev/null
[[ $(svc_cpus) == none ]] && ok "the group detached by hand: the service has no CPU" ||
	not_ok "the group detached by hand: the service has no CPU" "$(svc_cpus)"
expect "the group made again" 0 "add reuseport echo" apply "$CONF"
[[ $(svc_cpus) == "$all" ]] && ok "the group made again: the service on its CPUs" ||
	not_ok "the group made again: the service on its CPUs" "$(svc_cpus), want $all"
# The reboot again.
kill "$SERVER" && wait "$SERVER" 2>/dev/null
SERVER=""
silo -n "$S" xdp unload ap-s >/dev/null 2>&1
rm -rf "$DIR"
sed 's/      - name: ap-s/      - name: ap-s\n      - match: "dyn*"/' "$CONF" >"$TMP/boot.conf"
server
MPORT=$(free_port)
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$S" --apply "$TMP/boot.conf" \
	--state-dir "$ST" -q --metrics "$MPORT" 2>"$TMP/silod.log" &
DAEMON=$!
# reconcile_metrics WHAT FAILED WAITING: silod's apply gauges say so
# (within 3 s: a reload applies as silod's loop gets to it).
reconcile_metrics() {
	local got i
	for i in $(seq 30); do
		got=$(curl -s "http://127.0.0.1:$MPORT/metrics" |
			awk '$1 == "silo_apply_failed" { f = $2 } $1 == "silo_apply_waiting" { w = $2 } END { print f + 0, w + 0 }')
		[[ $got == "$2 $3" ]] && break
		sleep 0.1
	done
	[[ $got == "$2 $3" ]] && ok "metrics, $1: failed $2, waiting $3" ||
		not_ok "metrics, $1: failed $2, waiting $3" "got $got"
}
# up_to SECONDS CMD...: CMD succeeds within SECONDS.
up_to() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS >= end)) && return 1
		sleep 0.1
	done
}
group_pids() { # the group's sockets all belong to pid $1
	silo -n "$S" reuseport show echo -j |
		jq -e "[.groups[0].slots[] | select(.cookie != 0) | .pid] as \$p | (\$p | length) == $(nproc) and (\$p | all(. == $1))"
}
pid=$(jq .pid "$TMP/server")
up_to 5 group_pids "$pid" && ok "silod: the group is back" ||
	not_ok "silod: the group is back" "$(silo -n "$S" reuseport show echo 2>&1; cat "$TMP/silod.log")"
check "silod: the device is back" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp show -j | jq -e '[.devices[].device] == [\"ap-s\"]'"
check "silod: the service is back" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' service show -j |
	jq -e '[.services[] | select(.service | endswith(\":7302\"))] | length == 2'"
# silod's group polls (four a second) apply the groups alone: what they do
# not cover stays owned, so that a reload can still remove it.
sleep 1.2
check "silod's group polls keep owning the rest" jq -e \
	'(.devices | index("ap-s")) and (.services | index("udp 7302 any")) and (.reuseport | index("echo"))' \
	"$ST/netns/$S.json"

# datagrams N: sent from the client one flow each; every one read on the
# CPU it was processed on (the group picked its CPU's socket).
# (to port $2 and group $3: default 7302, echo)
datagrams() {
	local i
	for i in $(seq "$1"); do
		ip netns exec "$C" bash -c "echo d$i >/dev/udp/10.78.0.2/${2:-7302}"
	done
	sleep 0.3
	silo -n "$S" reuseport show "${3:-echo}" -j | jq -c '.groups[0].stats'
}
stats=$(datagrams 20)
jq -e '.sel_cpu >= 20 and .hash_fallback == 0 and .hash_policy == 0' <<<"$stats" >/dev/null &&
	ok "after the reboot: each datagram to its CPU's socket" ||
	not_ok "after the reboot: each datagram to its CPU's socket" "$stats"

# A stopped server: silod's polls find none of its processes, and the
# group waits; nothing failed. While no process on the host execs, silod
# looks only at the pids it knew (procwatch.c): from before the kill to
# 1.2 s after it this test runs nothing (bash's own read, kill and wait),
# then reads the state file without a process either.
mkfifo "$TMP/never"
exec {never}<>"$TMP/never"
read -rt 0.4 -u "$never" # a poll after mkfifo's exec: the last full look
kill "$SERVER" && wait "$SERVER" 2>/dev/null
read -rt 1.2 -u "$never"
state=$(<"$ST/netns/$S.json")
exec {never}>&-
[[ $state == *"no process of exe"* ]] &&
	ok "a stopped server, no exec since: its group waits" ||
	not_ok "a stopped server, no exec since: its group waits" "$state"
reconcile_metrics "a stopped server: its group waits" 0 1
# A restarted server: its new sockets in the group within a second.
server
pid=$(jq .pid "$TMP/server")
start=$(date +%s%N)
up_to 3 group_pids "$pid"
took=$((($(date +%s%N) - start) / 1000000))
((took <= 1000)) && group_pids "$pid" >/dev/null && ok "restart: new sockets in the group within a second (${took} ms)" ||
	not_ok "restart: new sockets in the group within a second" "$took ms: $(silo -n "$S" reuseport show echo 2>&1)"
before=$(silo -n "$S" reuseport show echo -j | jq '.groups[0].stats.sel_cpu')
stats=$(datagrams 20)
jq -e ".sel_cpu >= $before + 20 and .hash_fallback == 0" <<<"$stats" >/dev/null &&
	ok "restart: each datagram to its CPU's socket" ||
	not_ok "restart: each datagram to its CPU's socket" "$before, $stats"

# silod up before the server (a boot's order): the group is made by its
# polls once the server runs, and the service that waited for it then.
# Here both removed by hand while the server is stopped.
kill "$SERVER" && wait "$SERVER" 2>/dev/null
silo -n "$S" reuseport detach echo >/dev/null
silo -n "$S" service del --proto udp --port 7302 >/dev/null
sleep 0.5 # two polls: the group waits, the service with it
server
pid=$(jq .pid "$TMP/server")
start=$(date +%s%N)
for _ in $(seq 30); do [[ $(svc_cpus) == "$all" ]] && break; sleep 0.1; done
took=$((($(date +%s%N) - start) / 1000000))
[[ $(svc_cpus) == "$all" ]] && group_pids "$pid" >/dev/null &&
	ok "silod first, then the server: the group, then its service (${took} ms)" ||
	not_ok "silod first, then the server: the group, then its service" \
		"cpus '$(svc_cpus)': $(silo -n "$S" reuseport show echo 2>&1 | head -3; tail -3 "$TMP/silod.log")"

# A graceful reload (nginx's SIGHUP): a new process takes over the same
# sockets and rewrites the pid file, the old one exits. The sockets and
# their kernel group do not change, so selection never stops: no window.
ip netns exec "$S" /usr/bin/python3 "$TESTS_DIR/lib/reload_server.py" 7304 "$TMP/reload.pid" &
for _ in $(seq 50); do [[ -s $TMP/reload.pid ]] && break; sleep 0.1; done
RELOAD=$(cat "$TMP/reload.pid")
sed -i "/^    queue-maps:/i \      - name: graceful\n        port: 7304\n        proto: udp\n        processes:\n          pidfile: $TMP/reload.pid" "$TMP/boot.conf"
kill -HUP "$DAEMON"
graceful_full() {
	silo -n "$S" reuseport show graceful -j |
		jq -e "[.groups[0].slots[] | select(.cookie != 0)] | length == $(nproc)"
}
up_to 3 graceful_full && ok "reload: the group by pid file" ||
	not_ok "reload: the group by pid file" "$(silo -n "$S" reuseport show graceful 2>&1; tail -5 "$TMP/silod.log")"
kill -HUP "$RELOAD"
for _ in $(seq 50); do [[ $(cat "$TMP/reload.pid") != "$RELOAD" ]] && break; sleep 0.02; done
old=$RELOAD RELOAD=$(cat "$TMP/reload.pid")
for _ in $(seq 50); do kill -0 "$old" 2>/dev/null || break; sleep 0.02; done
before=$(silo -n "$S" reuseport show graceful -j | jq '.groups[0].stats.sel_cpu')
stats=$(datagrams 20 7304 graceful)
[[ $RELOAD != "$old" ]] && ! kill -0 "$old" 2>/dev/null &&
	jq -e ".sel_cpu >= $before + 20 and .hash_fallback == 0 and .hash_policy == 0" <<<"$stats" >/dev/null &&
	ok "reload: each datagram to its CPU's socket at once" ||
	not_ok "reload: each datagram to its CPU's socket at once" "pid $old -> $RELOAD, $before, $stats"
sleep 0.6
! grep -q "warning: apply.*graceful" "$TMP/silod.log" && graceful_full >/dev/null &&
	ok "reload: silod finds nothing to change" ||
	not_ok "reload: silod finds nothing to change" "$(grep graceful "$TMP/silod.log")"
kill "$RELOAD"
for _ in $(seq 100); do kill -0 "$RELOAD" 2>/dev/null || break; sleep 0.02; done

# Socket activation: the sockets exist before the service (systemd holds
# them) and its process reads them; the group is made from the service's
# process within a second of its start.
ip netns exec "$S" /usr/bin/python3 "$TESTS_DIR/lib/reload_server.py" 7304 "$TMP/reload.pid.act" --activated &
HOLDER=$!
start=$(date +%s%N)
for _ in $(seq 50); do [[ -s $TMP/reload.pid.act ]] && break; sleep 0.02; done
mv "$TMP/reload.pid.act" "$TMP/reload.pid"
graceful_pid() { # every slot's socket read by pid $1
	silo -n "$S" reuseport show graceful -j |
		jq -e "[.groups[0].slots[] | select(.cookie != 0) | .pid] as \$p | (\$p | length) == $(nproc) and (\$p | all(. == $1))"
}
up_to 3 graceful_pid "$(cat "$TMP/reload.pid")"
took=$((($(date +%s%N) - start) / 1000000))
((took <= 1000)) && graceful_pid "$(cat "$TMP/reload.pid")" >/dev/null &&
	ok "socket activation: the group within a second (${took} ms)" ||
	not_ok "socket activation: the group within a second" "$took ms: $(silo -n "$S" reuseport show graceful 2>&1)"
before=$(silo -n "$S" reuseport show graceful -j | jq '.groups[0].stats.sel_cpu')
stats=$(datagrams 20 7304 graceful)
jq -e ".sel_cpu >= $before + 20 and .hash_fallback == 0" <<<"$stats" >/dev/null &&
	ok "socket activation: each datagram to its CPU's socket" ||
	not_ok "socket activation: each datagram to its CPU's socket" "$before, $stats"
kill "$(cat "$TMP/reload.pid")" "$HOLDER"
wait "$HOLDER" 2>/dev/null
HOLDER=""
sed -i '/- name: graceful/,+4d' "$TMP/boot.conf"

# Processes by cgroup (a unit's, or socket activation's: the sockets are
# the service's processes'): the server moved into a cgroup below one of
# its own is found from the one named (a unit's workers may sit in cgroups
# of their own under it).
CG=""
for root in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[[ -w $root/cgroup.procs ]] && mkdir "$root/$P" 2>/dev/null && CG="$root/$P" && break
done
if [[ -z $CG ]]; then
	echo "skip - processes by cgroup: no writable cgroup tree"
elif ! mkdir "$CG/inner" || ! echo "$pid" >"$CG/inner/cgroup.procs"; then
	not_ok "processes by cgroup" "cannot move the server ($pid) to $CG/inner"
else
	cat >"$TMP/cg.conf" <<CONF
netns:
  $S:
    reuseport:
      - name: bycg
        port: 7302
        proto: udp
        processes:
          cgroup: $P
CONF
	expect "processes by cgroup" 0 "add reuseport bycg: port 7302, policy cpu, the sockets of cgroup $P" \
		apply --dry-run "$TMP/cg.conf"
	sed -i "s/cgroup: $P/cgroup: $P-none/" "$TMP/cg.conf"
	expect "an empty cgroup waits" 0 "wait reuseport bycg: no process of cgroup $P-none" \
		apply --dry-run "$TMP/cg.conf"
	echo "$pid" >"$(dirname "$CG")/cgroup.procs"
	rmdir "$CG/inner" "$CG"
fi

# What is declared and cannot be made yet: in xdp status, from silod. A
# queue map on the device too: the link event that brings the device
# applies it.
sed -i 's/      - match: "dyn\*"/      - match: "dyn*"\n      - name: later0/' "$TMP/boot.conf"
sed -i 's/^    queue-maps:/    queue-maps:\n      - device: later0\n        queues:\n          0: 1/' "$TMP/boot.conf"
kill -HUP "$DAEMON"
up_to 3 bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp status --state-dir '$ST' | grep -q 'wait device later0: no such device'" &&
	ok "xdp status: what waits" || not_ok "xdp status: what waits" "$(silo -n "$S" xdp status --state-dir "$ST" 2>&1 | tail -3)"
expect "dropped from silod's file: the group detached" 1 "no reuseport group 'graceful'" \
	silo -n "$S" reuseport show graceful
check "xdp status -j: what waits" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp status --state-dir '$ST' -j |
	jq -e '[.apply_pending[] | .op + \" \" + .object + \" \" + .name] | sort == [\"wait device later0\", \"wait queue-map later0\"]'"
reconcile_metrics "a device declared and absent, its queue map" 0 2

# A device made after silod started: loaded as it appears.
ip -n "$S" link add dyn0 type veth peer name dyn1 && ip -n "$S" link set dyn0 up
up_to 3 bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp show -j | jq -e '[.devices[].device] | index(\"dyn0\") and index(\"dyn1\")'" &&
	ok "a new device gets silo" || not_ok "a new device gets silo" "$(silo -n "$S" xdp show 2>&1; cat "$TMP/silod.log")"
ip -n "$S" link add later0 type veth peer name later1
ip -n "$S" link set later0 up
up_to 3 bash -c "! '$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp status --state-dir '$ST' | grep -q 'not applied'" &&
	ok "xdp status: nothing waits once it came" ||
	not_ok "xdp status: nothing waits once it came" "$(silo -n "$S" xdp status --state-dir "$ST" 2>&1 | tail -3)"
reconcile_metrics "the device came (a link event applied)" 0 0
expect "the device came: its queue map applied" 0 "later0: 0=1" silo -n "$S" service queue-map later0

# A group that cannot be made (its sockets are in echo's slots): silod
# says so once, tries again only when the processes' sockets change (each
# try loads a program), and the failure stays in xdp status meanwhile.
sed -i "/^    queue-maps:/i \      - name: echo2\n        port: 7302\n        proto: udp\n        processes:\n          exe: $(readlink -f "$ECHO")" "$TMP/boot.conf"
kill -HUP "$DAEMON"
sleep 1.5 # six polls of the groups
n=$(grep -c "warning: apply: add reuseport echo2" "$TMP/silod.log")
[[ $n == 1 ]] && ok "a group that cannot be made: said once" ||
	not_ok "a group that cannot be made: said once" "$n times: $(grep echo2 "$TMP/silod.log" | head -3)"
check "a group that cannot be made: pending after the polls" bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp status --state-dir '$ST' -j |
	jq -e '[.apply_pending[] | select(.name == \"echo2\" and .error != 0)] | length == 1'"
reconcile_metrics "a group that cannot be made" 1 0
sed -i '/- name: echo2/,/exe: /d' "$TMP/boot.conf"
kill -HUP "$DAEMON"
up_to 3 bash -c "! '$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp status --state-dir '$ST' | grep -q echo2" &&
	ok "dropped from the file: no longer pending" ||
	not_ok "dropped from the file: no longer pending" "$(silo -n "$S" xdp status --state-dir "$ST" 2>&1 | tail -3)"
reconcile_metrics "the group dropped from the file" 0 0

# SIGHUP with a bad file: what was applied stays.
cp "$TMP/bad.conf" "$TMP/boot.conf"
kill -HUP "$DAEMON"
sleep 0.5
grep -qE "boot.conf:9: port: .0. is not a number.*keeping what was applied" "$TMP/silod.log" &&
	ok "SIGHUP, a bad file: kept" || not_ok "SIGHUP, a bad file: kept" "$(cat "$TMP/silod.log")"
reconcile_metrics "a bad file (what was applied kept)" 0 0
# Kept, not only said: a link event still applies the file read before.
ip -n "$S" link add dyn2 type veth peer name dyn3 && ip -n "$S" link set dyn2 up
up_to 3 bash -c "'$SILO' --pin-root '$PIN_ROOT' -n '$S' xdp show -j | jq -e '[.devices[].device] | index(\"dyn2\")'" &&
	ok "SIGHUP, a bad file: a new device still gets silo" ||
	not_ok "SIGHUP, a bad file: a new device still gets silo" "$(silo -n "$S" xdp show 2>&1; tail -3 "$TMP/silod.log")"
kill "$DAEMON" && wait "$DAEMON"
rc=$? DAEMON=""
[[ $rc == 0 ]] && ok "silod exits cleanly" || not_ok "silod exits cleanly" "status $rc: $(cat "$TMP/silod.log")"
# An --apply file that is not there is said (only the default file may be
# absent unsaid: no file, nothing declared), and silod serves on.
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$S" --apply "$TMP/nosuch.conf" \
	--state-dir "$ST" 2>"$TMP/silod.log" &
DAEMON=$!
up_to 3 grep -q "nosuch.conf: No such file or directory: applying nothing" "$TMP/silod.log" &&
	kill -0 "$DAEMON" && ok "silod --apply, no such file: said" ||
	not_ok "silod --apply, no such file: said" "$(cat "$TMP/silod.log")"
kill "$DAEMON" && wait "$DAEMON"
DAEMON=""
for d in ap-s dyn0 dyn1 dyn2 dyn3 later0; do silo -n "$S" xdp unload "$d" >/dev/null 2>&1; done
silo -n "$S" reuseport detach echo >/dev/null 2>&1
true
