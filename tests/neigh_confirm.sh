# SPDX-License-Identifier: GPL-2.0
# A gateway replaced by another host with its address is found: silod marks
# the neighbours the route cache sends to as used (NTF_USE), so the kernel
# probes the stale entry, finds the old MAC gone and resolves the new one.
# Without it, traffic forwarded by XDP never touches the neighbour, which
# stays STALE with the old MAC for ever.
#
#   client (eth0) -- (r-c) router (r-s) -- (sw0) switch: bridge br0
#   10.1.0.2/24      10.1.0.1   10.0.2.1              |-- (sw1) -- gw  (eth0)
#                                                     '-- (sw2) -- gw2 (eth0)
#   router: 10.9.0.0/24 via 10.0.2.2; gw and gw2 both 10.0.2.2/24, 10.9.0.1
#   on lo, different MACs; gw2's link is down until gw's goes down.
#   A static neighbour 10.0.2.3 (route 10.8.0.0/24) in use must stay static.
. "$TESTS_DIR/lib.sh"

P="${NS}nc"
R="$P-r"
GW_MAC=02:00:00:00:02:01
GW2_MAC=02:00:00:00:02:02
silod=
stream=

cleanup() {
	[[ -n $stream ]] && kill "$stream" 2>/dev/null && wait "$stream"
	[[ -n $silod ]] && kill "$silod" 2>/dev/null && wait "$silod"
	silo --netns "$R" xdp unload r-c >/dev/null 2>&1
	silo --netns "$R" xdp unload r-s >/dev/null 2>&1
	for n in c r sw gw gw2; do ip netns del "$P-$n" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

up() {
	local n
	for n in c r sw gw gw2; do
		ip netns add "$P-$n" || return 1
		ip -n "$P-$n" link set lo up
		ip netns exec "$P-$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
	done
	ip -n "$P-c" link add eth0 type veth peer name r-c netns "$R" &&
		ip -n "$R" link add r-s type veth peer name sw0 netns "$P-sw" &&
		ip -n "$P-gw" link add eth0 address $GW_MAC type veth \
			peer name sw1 netns "$P-sw" &&
		ip -n "$P-gw2" link add eth0 address $GW2_MAC type veth \
			peer name sw2 netns "$P-sw" || return 1
	ip -n "$P-sw" link add br0 type bridge stp_state 0 || return 1
	for n in sw0 sw1 sw2; do
		ip -n "$P-sw" link set "$n" master br0 up || return 1
	done
	ip -n "$P-sw" link set br0 up
	# The sender's offloads as they are by default (silo finishes a
	# checksum left to offload); GRO lets the veth peers take frames
	# redirected into r-s (NAPI mode).
	ip netns exec "$P-sw" ethtool -K sw0 gro on >/dev/null || return 1
	ip -n "$P-c" addr add 10.1.0.2/24 dev eth0
	ip -n "$P-c" link set eth0 up
	ip -n "$P-c" route add default via 10.1.0.1
	# The router's neighbour timers, short: reachable for 1.25-3.75 s
	# (longer than the delay, or an entry confirmed by a probe would go
	# from reachable to DELAY again, never STALE), an entry used while
	# stale is probed after 1 s, three probes 0.1 s apart.
	ip netns exec "$R" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv4.neigh.r-s.base_reachable_time_ms=2500 \
		net.ipv4.neigh.r-s.delay_first_probe_time=1 \
		net.ipv4.neigh.r-s.retrans_time_ms=100 \
		net.ipv4.neigh.r-s.ucast_solicit=3 \
		net.ipv4.neigh.r-s.mcast_solicit=3 || return 1
	ip -n "$R" addr add 10.1.0.1/24 dev r-c
	ip -n "$R" addr add 10.0.2.1/24 dev r-s
	ip -n "$R" link set r-c up
	ip -n "$R" link set r-s up
	ip -n "$R" route add 10.9.0.0/24 via 10.0.2.2 dev r-s
	# A static neighbour: NTF_USE would make it INCOMPLETE.
	ip -n "$R" neigh add 10.0.2.3 lladdr 02:00:00:00:02:03 dev r-s \
		nud permanent &&
		ip -n "$R" route add 10.8.0.0/24 via 10.0.2.3 dev r-s || return 1
	# The gateways never send to the router (no route back, no listener
	# to answer): an ARP request from gw2 would teach the router its MAC
	# and hide the bug. rp_filter off: they take what they cannot answer.
	for n in gw gw2; do
		ip -n "$P-$n" addr add 10.0.2.2/24 dev eth0
		ip -n "$P-$n" addr add 10.9.0.1/32 dev lo
		ip netns exec "$P-$n" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.eth0.rp_filter=0 \
			net.ipv4.conf.lo.rp_filter=0 || return 1
	done
	ip -n "$P-gw" link set eth0 up
}

# UDP datagrams a namespace took in (to a socket or to no port).
udp_in() {
	# shellcheck disable=SC2016 # an awk program: its $2 is awk's
	ip netns exec "$P-$1" awk '/^Udp: [0-9]/ { print $2 + $3; exit }' \
		/proc/net/snmp
}
stat() { silo --netns "$R" -j stats | jq ".$1"; }
neigh() { ip -n "$R" neigh show 10.0.2.2 dev r-s; }

up || { not_ok "topology" "could not build it"; exit 1; }
check "load r-c" silo --netns "$R" xdp load r-c --forward
check "load r-s" silo --netns "$R" xdp load r-s --forward
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q &
silod=$!
dstat() { silo --netns "$R" -j daemon status 2>/dev/null | jq "$1"; }
for _ in $(seq 100); do [[ $(dstat .cache_trusted) == true ]] && break; sleep 0.05; done
[[ $(dstat .cache_trusted) == true ]] && ok "silod runs, cache trusted" ||
	not_ok "silod runs, cache trusted" "$(dstat -c .)"

# A stream to gw, forwarded by XDP from the cache. The stack sent only
# its first packets: nothing else marks the router's entry for gw used,
# but silod. Without silod's NTF_USE it goes STALE within 3.75 s and
# stays so; with it, it is probed instead and mostly never STALE: wait
# for STALE, or 6 s.
ip netns exec "$P-c" "$TRAFFIC" udp-send 10.8.0.1 7000 --count 20 >/dev/null
before=$(stat redirect)
ip netns exec "$P-c" "$TRAFFIC" udp-send 10.9.0.1 7000 --count 100000 \
	--gap-us 1000 >/dev/null &
stream=$!
for _ in $(seq 30); do
	sleep 0.2
	neigh | grep -q STALE && break
done
got=$(udp_in gw) redirected=$(($(stat redirect) - before))
((got >= 500)) && ok "gw receives" || not_ok "gw receives" "$got datagrams"
((redirected * 10 >= got * 9)) && ok "forwarded by XDP" ||
	not_ok "forwarded by XDP" "$redirected redirected, $got received"
neigh | grep -q "lladdr $GW_MAC" && ok "router knows gw's MAC" ||
	not_ok "router knows gw's MAC" "$(neigh)"

# gw goes away, gw2 takes its address; the stream goes on.
ip -n "$P-gw" link set eth0 down
ip -n "$P-gw2" link set eth0 up
found=
for _ in $(seq 40); do
	neigh | grep -q "lladdr $GW2_MAC" && found=1 && break
	sleep 0.2
done
[[ -n $found ]] && ok "the router finds gw2's MAC within 8 s" ||
	not_ok "the router finds gw2's MAC within 8 s" "$(neigh)"
# Once resolved, the stream reaches gw2, through XDP again.
sleep 0.5
c1=$(udp_in gw2) r1=$(stat redirect)
sleep 1
c2=$(udp_in gw2) r2=$(stat redirect)
kill "$stream" 2>/dev/null
wait "$stream"
stream=
((c2 - c1 >= 50)) && ok "gw2 receives" ||
	not_ok "gw2 receives" "$((c2 - c1)) datagrams in 1 s ($c2 in all)"
((r2 - r1 >= 50)) && ok "forwarded by XDP after the change" ||
	not_ok "forwarded by XDP after the change" "$((r2 - r1)) redirected in 1 s"
n=$(silo --netns "$R" -j route show | jq '[.entries[] | select(.valid and
	.key.dst == "10.8.0.1")] | length')
s=$(ip -n "$R" neigh show 10.0.2.3 dev r-s)
[[ $n -ge 1 && $s == *PERMANENT* ]] &&
	ok "a static neighbour in use stays static" ||
	not_ok "a static neighbour in use stays static" "$n entries, '$s'"
n=$(dstat .counters.neigh_use)
((n >= 1)) && ok "silod counts confirmations" ||
	not_ok "silod counts confirmations" "neigh_use $n"

kill -TERM "$silod"
wait "$silod"
rc=$?
silod=
[[ $rc == 0 ]] && ok "silod exits cleanly" || not_ok "silod exits cleanly" "status $rc"
