# SPDX-License-Identifier: GPL-2.0
# Steering, live: a client and a server namespace joined by veth, silo on
# the server's veth (native XDP), a sender pinned to CPU 0 (veth processes
# what it receives on the sending CPU). With a UDP service on CPU 1 every
# datagram is processed on CPU 1 (SO_INCOMING_CPU at the socket, the
# service's counters) and every one is delivered; without it, or with
# checksums left to offload, they stay on CPU 0. TCP through a service:
# whole bytes, every connection.
. "$TESTS_DIR/lib.sh"

if (($(nproc) < 2)); then
	echo "skip - service_live: needs two CPUs"
	exit 0
fi

P="${NS}svl"
C="$P-c" S="$P-s"
ip netns add "$C" && ip netns add "$S" &&
	ip link add svl-c netns "$C" type veth peer name svl-s netns "$S" &&
	ip -n "$C" addr add 10.77.0.1/24 dev svl-c &&
	ip -n "$S" addr add 10.77.0.2/24 dev svl-s &&
	ip -n "$C" addr add fd77::1/64 dev svl-c nodad &&
	ip -n "$S" addr add fd77::2/64 dev svl-s nodad &&
	for n in "$C" "$S"; do ip -n "$n" link set lo up; done &&
	ip -n "$C" link set svl-c up && ip -n "$S" link set svl-s up ||
	{
		not_ok "setup" "could not build the namespaces"
		exit 1
	}
trap 'ip netns del "$C" 2>/dev/null; ip netns del "$S" 2>/dev/null; rm -rf "$TMP"' EXIT

check "load" silo --netns "$S" xdp load svl-s

# udp NAME DST COUNT [SIZE]: sends from CPU 0; $cpus for the caller: the
# sink's datagrams after the first by SO_INCOMING_CPU.
udp() {
	ip netns exec "$S" "$TRAFFIC" udp-sink 7000 --count "$3" --connect \
		--timeout 3 >"$TMP/sink" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$C" taskset -c 0 "$TRAFFIC" udp-send "$2" 7000 \
		--count "$3" --gap-us 50 --size "${4:-64}" >"$TMP/send"
	wait "$sink"
	got=$(jq .datagrams "$TMP/sink") sent=$(jq .datagrams "$TMP/send")
	cpus=$(jq -c .incoming_cpu "$TMP/sink")
	[[ $got == "$sent" && $sent == "$3" ]] && ok "$1: every datagram delivered" ||
		not_ok "$1: every datagram delivered" "$got of $sent arrived ($3 asked)"
}

# only_on CPU MIN: every datagram counted was processed on CPU, and at least
# MIN were counted (a datagram queued before the sink connected is not).
only_on() {
	[[ $(jq -r 'keys | join(",")' <<<"$cpus") == "$1" &&
		$(jq -r ".\"$1\"" <<<"$cpus") -ge $2 ]]
}

sstat() { # sstat SERVICE_INDEX FIELD
	silo --netns "$S" -j service show | jq ".services[$1].stats.$2"
}

# Without a service: processed where they arrived.
udp "no service" 10.77.0.2 1000
[[ $(jq -r '."0" // 0' <<<"$cpus") -gt 900 ]] &&
	ok "no service: processed on the sending CPU" ||
	not_ok "no service: processed on the sending CPU" "$cpus"

check "service add" silo --netns "$S" service add --proto udp --port 7000 \
	--cpus 1
udp "service on CPU 1" 10.77.0.2 2000
only_on 1 1800 && ok "service: every datagram processed on CPU 1" ||
	not_ok "service: every datagram processed on CPU 1" "$cpus"
steered=$(sstat 0 steered) local_=$(sstat 0 local) rx=$(sstat 0 rx)
[[ $rx == 2000 && $((steered + local_)) == 2000 && $steered -gt 0 ]] &&
	ok "service counters: rx $rx, steered $steered, local $local_" ||
	not_ok "service counters" "rx $rx steered $steered local $local_"

udp "IPv6, the same service" fd77::2 1000
only_on 1 900 && ok "IPv6: every datagram processed on CPU 1" ||
	not_ok "IPv6: every datagram processed on CPU 1" "$cpus"

# The sender above left its checksums to offload (veth's default): the
# pseudo header's sum where the sum goes, which silo finishes before the
# cpumap (its skb carries no offload state) and the stack there checks.
# With the offload off the sums come finished: steered the same. Then
# turned on and off under traffic: every datagram arrives, and every one
# is processed on CPU 1.
ip netns exec "$C" ethtool -K svl-c tx off >/dev/null
csum0=$(sstat 0 pass_csum)
udp "checksum offload off" 10.77.0.2 1000
only_on 1 900 && ok "offload off: every datagram processed on CPU 1" ||
	not_ok "offload off: every datagram processed on CPU 1" "$cpus"
((($(sstat 0 pass_csum) - csum0) == 0)) &&
	ok "offload off: no checksum passed" ||
	not_ok "offload off: no checksum passed" "pass_csum $(($(sstat 0 pass_csum) - csum0))"
ip netns exec "$S" "$TRAFFIC" udp-sink 7000 --count 4000 --connect \
	--timeout 2 >"$TMP/toggle" 2>/dev/null &
sink=$!
sleep 0.3
ip netns exec "$C" taskset -c 0 "$TRAFFIC" udp-send 10.77.0.2 7000 \
	--count 4000 --gap-us 250 >/dev/null &
send=$!
for on in on off on off on; do
	sleep 0.15
	ip netns exec "$C" ethtool -K svl-c tx "$on" >/dev/null
done
wait "$send"
wait "$sink"
got=$(jq -r .datagrams "$TMP/toggle")
cpus=$(jq -c .incoming_cpu "$TMP/toggle")
[[ $got == 4000 ]] && ok "offload toggled under traffic: every datagram arrives" ||
	not_ok "offload toggled under traffic: every datagram arrives" "$got of 4000"
[[ $(jq -r 'del(."1") | length' <<<"$cpus") == 0 ]] &&
	ok "offload toggled under traffic: every one on CPU 1" ||
	not_ok "offload toggled under traffic: every one on CPU 1" "$cpus"
ip netns exec "$C" ethtool -K svl-c tx on >/dev/null

# Jumbo datagrams (the storage case): MTU 9000 on both ends of the veth,
# raised with silo attached; a datagram of 8,000 bytes reaches XDP in
# several buffers, its checksum is checked over all of them, and it is
# steered like any other.
check "MTU 9000, silo attached" bash -c \
	"ip -n '$S' link set svl-s mtu 9000 && ip -n '$C' link set svl-c mtu 9000"
udp "jumbo datagrams" 10.77.0.2 500 8000
only_on 1 450 && ok "jumbo: every datagram processed on CPU 1" ||
	not_ok "jumbo: every datagram processed on CPU 1" "$cpus"
check "MTU back to 1500" bash -c \
	"ip -n '$S' link set svl-s mtu 1500 && ip -n '$C' link set svl-c mtu 1500"

# Steering to the CPU where it arrives is a pass: still delivered there.
check "service replace: CPU 0" silo --netns "$S" service add --proto udp \
	--port 7000 --cpus 0 --replace
udp "service on CPU 0" 10.77.0.2 1000
only_on 0 900 && ok "service on CPU 0: processed there" ||
	not_ok "service on CPU 0: processed there" "$cpus"
check "service del" silo --netns "$S" service del --proto udp --port 7000

# RPS on the receiving queue undoes steering: the cpumap hands the stack
# its packets as packets of RX queue 0, and RPS there moves each again.
# Shown live, then refused by 'service add' with the fix.
rps() { ip netns exec "$S" sh -c "echo $1 > /sys/class/net/svl-s/queues/rx-0/rps_cpus"; }
check "service on CPU 1 again" silo --netns "$S" service add --proto udp \
	--port 7000 --cpus 1
rps 1
udp "RPS on rx-0 to CPU 0" 10.77.0.2 1000
only_on 0 900 && ok "RPS on rx-0: the steered datagrams moved back to CPU 0" ||
	not_ok "RPS on rx-0: the steered datagrams moved back to CPU 0" "$cpus"
check "service del" silo --netns "$S" service del --proto udp --port 7000
want="RPS on svl-s's RX queue 0 \(rps_cpus 0*1\) would move every packet silo steers again"
expect "service add refused while RPS is on rx-0" 1 "$want.*echo 0 > /sys/class/net/svl-s/queues/rx-0/rps_cpus" \
	silo --netns "$S" service add --proto udp --port 7000 --cpus 1
silo --netns "$S" -j service add --proto udp --port 7000 --cpus 1 >"$TMP/out" 2>/dev/null
rc=$?
((rc == 1)) && jq -e '.error | test("RPS on svl-s.s RX queue 0")' "$TMP/out" >/dev/null &&
	ok "-j: the same in .error" || not_ok "-j: the same in .error" "exit $rc: $(head -c 300 "$TMP/out")"
n=$(silo --netns "$S" -j service show | jq '.services | length')
[[ $n == 0 ]] && ok "nothing added" || not_ok "nothing added" "$n services"
rps 0
check "RPS off: service add" silo --netns "$S" service add --proto udp \
	--port 7000 --cpus 1
udp "RPS off again" 10.77.0.2 1000
only_on 1 900 && ok "RPS off: every datagram processed on CPU 1" ||
	not_ok "RPS off: every datagram processed on CPU 1" "$cpus"
check "service del" silo --netns "$S" service del --proto udp --port 7000

# RPS on another RX queue leaves steering alone: a second veth of two
# queues each way, XPS sending what CPU 0 sends on tx-1, so it arrives on
# svm-s's rx-1 (XDP counts it there). A cpumap's skbs are queue 0's, so RPS
# on rx-1 never moves a steered datagram, and service add takes it. (veth
# records no RX queue on its own skbs either: RPS of rx-1 moves nothing
# here, where a NIC's driver would have it move the unsteered ones.)
qsys() { ip netns exec "$1" sh -c "echo $2 > /sys/class/net/$3/queues/$4"; }
rxq1() { ip netns exec "$S" ethtool -S svm-s | awk '/rx_queue_1_xdp_packets/ { print $2 }'; }
if ip link add svm-c netns "$C" numtxqueues 2 numrxqueues 2 type veth \
	peer name svm-s netns "$S" numtxqueues 2 numrxqueues 2 &&
	ip -n "$C" addr add 10.78.0.1/24 dev svm-c &&
	ip -n "$S" addr add 10.78.0.2/24 dev svm-s &&
	ip -n "$C" link set svm-c up && ip -n "$S" link set svm-s up &&
	qsys "$C" 2 svm-c tx-0/xps_cpus && qsys "$C" 1 svm-c tx-1/xps_cpus; then
	check "load on the two-queue veth" silo --netns "$S" xdp load svm-s
	qsys "$S" 1 svm-s rx-1/rps_cpus
	check "RPS on rx-1 only: service add" silo --netns "$S" service add \
		--proto udp --port 7000 --cpus 1
	before=$(rxq1)
	udp "RPS on rx-1 to CPU 0, service on CPU 1" 10.78.0.2 1000
	after=$(rxq1)
	((after - before >= 1000)) && ok "sent from CPU 0: XDP saw them on rx-1" ||
		not_ok "sent from CPU 0: XDP saw them on rx-1" "rx_queue_1_xdp_packets $before, then $after"
	only_on 1 900 && ok "RPS on rx-1: steering holds, every datagram on CPU 1" ||
		not_ok "RPS on rx-1: steering holds, every datagram on CPU 1" "$cpus"
	check "service del" silo --netns "$S" service del --proto udp --port 7000
	check "unload the two-queue veth" silo --netns "$S" xdp unload svm-s
else
	not_ok "a veth of two queues" "could not make svm-c/svm-s"
fi

# TCP: SYN and segments steered alike; whole bytes on every connection.
check "tcp service" silo --netns "$S" service add --proto tcp --port 7001 \
	--cpus 1
ip netns exec "$S" "$TRAFFIC" tcp-sink 7001 --conns 4 --timeout 3 \
	>"$TMP/sink" 2>/dev/null &
sink=$!
sleep 0.3
ip netns exec "$C" taskset -c 0 "$TRAFFIC" tcp-send 10.77.0.2 7001 --conns 4 \
	--bytes 500000 >"$TMP/send"
wait "$sink"
got=$(jq .bytes "$TMP/sink") conns=$(jq .connections "$TMP/sink")
[[ $got == 2000000 && $conns == 4 ]] && ok "tcp: every byte of 4 connections" ||
	not_ok "tcp: every byte of 4 connections" "$got bytes, $conns connections"
steered=$(sstat 0 steered)
((steered > 0)) && ok "tcp: segments steered ($steered)" ||
	not_ok "tcp: segments steered" "$(silo --netns "$S" service show)"
check "unload" silo --netns "$S" xdp unload svl-s
