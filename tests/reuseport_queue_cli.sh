# SPDX-License-Identifier: GPL-2.0
# silo reuseport queue-map and policy queue from the command line: a faked
# RSS table set, changed in part, shown (text and JSON), refused when bad
# (exit 2 before any work, exit 1 when the group or the machine says no,
# changing nothing), removed; on a server that 'ip netns exec' started.
. "$TESTS_DIR/lib.sh"

N="${NS}rq"
ip netns add "$N" || exit 1
ip -n "$N" link set lo up
DIR="$PIN_ROOT/netns/$N"
SERVER=''
cleanup() {
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

answer_cpu() { # the CPU of the worker that answers one datagram (--tag)
	ip netns exec "$N" bash -c 'exec 3<>/dev/udp/127.0.0.1/7311 &&
		printf ping >&3 && timeout 2 dd bs=512 count=1 status=none <&3' |
		sed -n 's/^w[0-9]* c\([0-9]*\) ping$/\1/p'
}

qjson() { # JQ: the group's table as JSON satisfies JQ
	"$SILO" --pin-root "$PIN_ROOT" --netns "$N" reuseport queue-map udp4_7311 -j |
		jq -e "$1"
}

expect "help" 0 "reuseport queue-map GROUP \[--key HEX\]" silo reuseport help
expect "queue-map --help" 0 "--hash-ports LIST" silo reuseport queue-map --help
expect "queue-map needs a group" 2 "queue-map needs GROUP" silo reuseport queue-map
expect "bad --key" 2 "bad --key 'abc'" silo reuseport queue-map g --key abc
expect "short --key" 2 "40 to 52 bytes" silo reuseport queue-map g --key 6d5a56da
expect "bad --indir" 2 "bad --indir '0,x'" silo reuseport queue-map g --indir 0,x
expect "bad --queue-cpu" 2 "bad --queue-cpu '0:1'" silo reuseport queue-map g --queue-cpu 0:1
expect "bad --hash-ports" 2 "bad --hash-ports 'sctp4'" \
	silo reuseport queue-map g --hash-ports sctp4
expect "--clear alone" 2 "--clear takes no other option" \
	silo reuseport queue-map g --clear --indir 0
expect "unknown group" 1 "no reuseport group 'nosuch'" \
	silo --netns "$N" reuseport queue-map nosuch --indir 0
[[ ! -e $DIR ]] && ok "failures leave no pins" ||
	not_ok "failures leave no pins" "$(ls -R "$DIR")"

ip netns exec "$N" "$BUILD/examples/echo_server" --plain --tag --port 7311 >"$TMP/server" &
SERVER=$!
for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
PID=$(jq -r .pid "$TMP/server")
expect "attach --policy queue" 0 "attached 1 group" \
	silo --netns "$N" reuseport attach --pid "$PID" --port 7311 --proto udp --policy queue
check "show: policy queue" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show udp4_7311 -j |
	 jq -e '.groups[0].policy == \"queue\" and .groups[0].stats.queue_no_table == 0'"
expect "no table yet" 0 "no RSS table" silo --netns "$N" reuseport queue-map udp4_7311
check "no table yet -j" qjson '.table == null'
expect "first change needs --indir" 1 "give --indir" \
	silo --netns "$N" reuseport queue-map udp4_7311 --hash-ports udp4
# Queue 0 on CPU 0 by default, queue 1 on CPU 0 as given (any machine).
expect "set" 0 "queue -> CPU 0=0 1=0" \
	silo --netns "$N" reuseport queue-map udp4_7311 --indir 0,1,1,0 --queue-cpu 1=0 \
	--hash-ports udp4,tcp4
check "set -j: defaults and what was given" qjson \
	'.key == "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa" and
	 .indir == [0,1,1,0] and .queue_cpu == [0,0] and .hash_ports == ["udp4","tcp4"]'
expect "change one queue's CPU" 0 "0=0 1=-" \
	silo --netns "$N" reuseport queue-map udp4_7311 --queue-cpu 1=-
check "the rest kept" qjson '.indir == [0,1,1,0] and .queue_cpu == [0,null] and .hash_ports == ["udp4","tcp4"]'
expect "a CPU that is not there" 1 "CPUs are 0 to" \
	silo --netns "$N" reuseport queue-map udp4_7311 --queue-cpu 0=100000
expect "513 entries" 2 "1 to 512 queue numbers" \
	silo --netns "$N" reuseport queue-map udp4_7311 --indir "$(printf '0,%.0s' $(seq 513))"
check "refused changes change nothing" qjson '.indir == [0,1,1,0] and .queue_cpu == [0,null]'
expect "key and no ports" 0 "hash ports  none" \
	silo --netns "$N" reuseport queue-map udp4_7311 --hash-ports none \
	--key 6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb:ae:7b:30:b4:77:cb:2d:a3:80:30:f2:0c:6a:42:b7:3b:be:ac:01:fa:00:00
check "key of 42 bytes" qjson '(.key | length) == 84 and .hash_ports == []'
# Queue 0 on CPU 1, queue 1 on CPU 0: a one-entry indirection table puts
# every flow on one queue, and the datagram goes to the worker of that
# queue's CPU, not of the CPU numbered as the queue. A change of something
# else keeps each queue's CPU.
if (($(jq -r .workers "$TMP/server") >= 2)); then
	expect "crossed: queue 1 on CPU 0" 0 "queue -> CPU 0=1 1=0" \
		silo --netns "$N" reuseport queue-map udp4_7311 --indir 1 \
		--queue-cpu 0=1,1=0
	got=$(answer_cpu)
	[[ $got == 0 ]] && ok "crossed: queue 1's datagram to CPU 0" ||
		not_ok "crossed: queue 1's datagram to CPU 0" "answered by CPU '$got'"
	expect "crossed: another change keeps the CPUs" 0 "queue -> CPU 0=1 1=0" \
		silo --netns "$N" reuseport queue-map udp4_7311 --hash-ports udp4
	check "crossed: kept -j" qjson '.indir == [1] and .queue_cpu == [1,0]'
	expect "crossed: queue 0" 0 "queue -> CPU 0=1$" \
		silo --netns "$N" reuseport queue-map udp4_7311 --indir 0
	got=$(answer_cpu)
	[[ $got == 1 ]] && ok "crossed: queue 0's datagram to CPU 1" ||
		not_ok "crossed: queue 0's datagram to CPU 1" "answered by CPU '$got'"
else
	echo "skip - crossed queues: needs 2 CPUs"
fi
expect "clear" 0 "RSS table removed" silo --netns "$N" reuseport queue-map udp4_7311 --clear
check "cleared" qjson '.table == null'
# --dev: the table as the device's NIC hashes; a veth has no RSS table.
expect "--dev with a table option refused" 2 "give it alone" \
	silo --netns "$N" reuseport queue-map udp4_7311 --dev rqv0 --indir 0,1
ip -n "$N" link add rqv0 type veth peer name rqv1
expect "--dev on a veth refused" 1 "rqv0 has no Toeplitz RSS table" \
	silo --netns "$N" reuseport queue-map udp4_7311 --dev rqv0
check "  leaving no table" qjson '.table == null'
expect "--dev of no device" 1 "no device 'nosuch'" \
	silo --netns "$N" reuseport queue-map udp4_7311 --dev nosuch
expect "policy back to cpu" 0 "policy cpu" silo --netns "$N" reuseport policy udp4_7311 cpu
expect "policy queue" 0 "policy queue" silo --netns "$N" reuseport policy udp4_7311 queue
expect "detach" 0 "detached" silo --netns "$N" reuseport detach udp4_7311
[[ ! -e $DIR ]] && ok "no pins at the end" || not_ok "no pins at the end" "$(ls -R "$DIR")"
