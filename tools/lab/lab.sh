#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/lab/lab.sh [BUILD_DIR]
#
# silo's built-in lab: three network namespaces joined by veth,
#
#   client (eth0) ---- (r-c) router (r-s) ---- (eth0) server
#   10.1.0.2/24         10.1.0.1   10.2.0.1         10.2.0.2/24
#   fd01::2/64          fd01::1    fd02::1          fd02::2/64
#
# Run as a script, it loads silo onto the router's veths with forwarding,
# starts silod for the router, sends UDP and TCP over IPv4 and IPv6 from
# client to server, changes a route to show silod's scoped invalidation,
# shows what silo did, steers the server's UDP service as silo.conf says
# (and again after a "reboot", by silod), runs one short round of
# bench_steer's services case (silo's steering beside RPS and RFS), puts
# a stateful, masquerading firewall on the router and sends TCP through it
# with silo forwarding established connections (--forward-established,
# rewritten as masquerade's NAT would), and takes
# everything down again. Sourced (by the tests), it
# only defines lab_up and lab_down.

# lab_up PREFIX: makes PREFIX-client, PREFIX-router and PREFIX-server.
lab_up() {
	local p=$1 n
	for n in client router server; do
		ip netns add "$p-$n" || return 1
		ip -n "$p-$n" link set lo up
		# No DAD: a tentative link-local address cannot send neighbour
		# solicitations, and the first second of IPv6 would be lost.
		ip netns exec "$p-$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0
	done
	ip -n "$p-client" link add eth0 type veth peer name r-c netns "$p-router" &&
	ip -n "$p-server" link add eth0 type veth peer name r-s netns "$p-router" ||
		return 1
	ip -n "$p-client" addr add 10.1.0.2/24 dev eth0
	ip -n "$p-client" addr add fd01::2/64 dev eth0 nodad
	ip -n "$p-server" addr add 10.2.0.2/24 dev eth0
	ip -n "$p-server" addr add fd02::2/64 dev eth0 nodad
	ip -n "$p-router" addr add 10.1.0.1/24 dev r-c
	ip -n "$p-router" addr add fd01::1/64 dev r-c nodad
	ip -n "$p-router" addr add 10.2.0.1/24 dev r-s
	ip -n "$p-router" addr add fd02::1/64 dev r-s nodad
	for n in client server; do
		# The senders' offloads as a container's veth has them (tx
		# checksumming on: silo finishes what they leave to offload).
		# GRO lets the veth take frames redirected into it (NAPI mode).
		ip netns exec "$p-$n" ethtool -K eth0 gro on >/dev/null ||
			return 1
		ip -n "$p-$n" link set eth0 up
	done
	ip -n "$p-router" link set r-c up
	ip -n "$p-router" link set r-s up
	ip -n "$p-client" route add default via 10.1.0.1
	ip -n "$p-client" -6 route add default via fd01::1
	ip -n "$p-server" route add default via 10.2.0.1
	ip -n "$p-server" -6 route add default via fd02::1
	ip netns exec "$p-router" sysctl -qw net.ipv4.ip_forward=1 \
		net.ipv6.conf.all.forwarding=1
}

# lab_down PREFIX: removes the namespaces (and with them veths and links).
lab_down() {
	local p=$1 n
	for n in client router server; do
		ip netns del "$p-$n" 2>/dev/null
	done
	return 0
}

# Stop here when sourced.
(return 0 2>/dev/null) && return 0

set -u
BUILD=$(cd "${1:-build}" && pwd)
SILO="$BUILD/silo"
SILOD="$BUILD/silod"
TRAFFIC="$BUILD/tools/traffic"
P=silo-lab

if [[ $(id -u) != 0 ]]; then
	echo "the lab needs root: sudo make lab" >&2
	exit 1
fi
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

silod_pid="" server_silod=""
LAB_DIR=$(mktemp -d)
cleanup() {
	[[ -n $silod_pid ]] && kill "$silod_pid" 2>/dev/null && wait "$silod_pid"
	[[ -n $server_silod ]] && kill "$server_silod" 2>/dev/null &&
		wait "$server_silod"
	rm -rf "$LAB_DIR"
	"$SILO" --netns "$P-router" xdp unload r-c >/dev/null 2>&1
	"$SILO" --netns "$P-router" xdp unload r-s >/dev/null 2>&1
	"$SILO" --netns "$P-server" xdp unload eth0 >/dev/null 2>&1
	lab_down "$P"
}
trap cleanup EXIT
lab_down "$P"

step() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }
# fail WHAT: the lab stops (and takes everything down): a step that did
# not do what it shows is no lab.
fail() {
	printf 'lab: %s\n' "$*" >&2
	exit 1
}

step "three namespaces: $P-client -- $P-router -- $P-server"
lab_up "$P" || fail "cannot build the namespaces"

step "load silo onto the router's veths, forwarding on"
run "$SILO" --netns "$P-router" xdp load r-c --forward || fail "cannot load silo on r-c"
run "$SILO" --netns "$P-router" xdp load r-s --forward || fail "cannot load silo on r-s"
run "$SILO" --netns "$P-router" xdp status || fail "xdp status failed"

step "start silod for the router: it keeps the route cache exact"
printf '$ %s &\n' "$SILOD --netns $P-router"
"$SILOD" --netns "$P-router" -q &
silod_pid=$!
# silod_up NETNS: waits until silod runs for NETNS (5 s at most).
silod_up() {
	local _
	for _ in $(seq 50); do
		"$SILO" --netns "$1" -j daemon status 2>/dev/null |
			jq -e .running >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
silod_up "$P-router" || fail "silod does not run for $P-router"
run "$SILO" --netns "$P-router" daemon status >"$LAB_DIR/status" ||
	fail "daemon status failed"
head -3 "$LAB_DIR/status"

# udp DST: 2000 datagrams from client to server; prints what arrived,
# and fails the lab unless all did.
udp() {
	ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 2000 \
		--timeout 2 >"$LAB_DIR/udp" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" udp-send "$1" 7000 --count 2000 \
		--gap-us 50 >/dev/null || fail "UDP to $1: the sender failed"
	wait "$sink"
	printf '  UDP to %-9s %s\n' "$1" "$(cat "$LAB_DIR/udp")"
	jq -e '.datagrams == 2000' "$LAB_DIR/udp" >/dev/null ||
		fail "UDP to $1: not every datagram arrived"
}

tcp() {
	ip netns exec "$P-server" "$TRAFFIC" tcp-sink 7001 --conns 4 \
		--timeout 3 >"$LAB_DIR/tcp" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" tcp-send "$1" 7001 --conns 4 \
		--bytes 4000000 >/dev/null || fail "TCP to $1: the sender failed"
	wait "$sink"
	printf '  TCP to %-9s %s\n' "$1" "$(cat "$LAB_DIR/tcp")"
	jq -e '.connections == 4 and .bytes == 16000000' "$LAB_DIR/tcp" \
		>/dev/null || fail "TCP to $1: not every byte arrived"
}

step "traffic from client to server"
udp 10.2.0.2
udp fd02::2
tcp 10.2.0.2
tcp fd02::2

step "the route cache the traffic filled"
run "$SILO" --netns "$P-router" route show || fail "route show failed"
run "$SILO" --netns "$P-router" route lookup 10.2.0.2 ||
	fail "route lookup failed"

step "a route change: silod removes exactly the entries it touches"
run ip -n "$P-router" route add 10.2.0.0/28 via 10.2.0.2 dev r-s ||
	fail "cannot add the route"
sleep 0.2
run "$SILO" --netns "$P-router" route show || fail "route show failed"
"$SILO" --netns "$P-router" -j daemon status | jq -er '.counters |
	"silod: \(.events_route) route change(s), \(.sweeps) sweep(s), " +
	"\(.invalidated) entr(y/ies) removed, \(.genid_bumps) global bump(s)"' ||
	fail "daemon status failed"
udp 10.2.0.2
run "$SILO" --netns "$P-router" route show || fail "route show failed"

step "what silo did on the router"
run "$SILO" --netns "$P-router" stats >"$LAB_DIR/stats" || fail "stats failed"
grep -v ' 0  ' "$LAB_DIR/stats"
"$SILO" --netns "$P-router" -j stats | jq -er '
	"\nsilo saw \(.rx) packets: forwarded \(.redirect) by XDP " +
	"(\(.cache_hit) from the route cache, \(.fib_success) resolved by " +
	"bpf_fib_lookup), passed \(.pass) to the stack."' || fail "stats failed"

# udp_cpus: 2000 datagrams from a sender on CPU 0 to the server; prints
# what arrived and on which CPUs the server processed them.
udp_cpus() {
	ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 2000 \
		--connect --timeout 2 >"$LAB_DIR/udp" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" taskset -c 0 "$TRAFFIC" udp-send 10.2.0.2 \
		7000 --count 2000 --gap-us 50 >/dev/null ||
		fail "UDP to 10.2.0.2: the sender failed"
	wait "$sink"
	jq -er '"  \(.datagrams) datagrams arrived; processed on CPU: " +
		(.incoming_cpu | to_entries | map("\(.key) (\(.value))") |
		join(", "))' "$LAB_DIR/udp" || fail "the sink said nothing"
	jq -e '.datagrams == 2000' "$LAB_DIR/udp" >/dev/null ||
		fail "UDP to 10.2.0.2: not every datagram arrived"
}

last_cpu=$(($(nproc) - 1))
if ((last_cpu > 0)); then
	step "steering, declared in silo.conf: the server's UDP service on CPU $last_cpu"
	cat >"$LAB_DIR/silo.conf" <<CONF
netns:
  $P-server:
    devices:
      - name: eth0
    services:
      - proto: udp
        port: 7000
        cpus: "$last_cpu"
CONF
	run cat "$LAB_DIR/silo.conf"
	echo "before: the datagrams are processed where they arrive (CPU 0)"
	udp_cpus
	apply() {
		run "$SILO" --netns "$P-server" apply \
			--state-dir "$LAB_DIR/state" "$@" || fail "apply failed"
	}
	apply --dry-run "$LAB_DIR/silo.conf"
	apply "$LAB_DIR/silo.conf"
	echo "after: XDP redirects each to CPU $last_cpu through a cpumap"
	udp_cpus
	jq -e ".incoming_cpu | keys == [\"$last_cpu\"]" "$LAB_DIR/udp" \
		>/dev/null || fail "steered datagrams were processed elsewhere than CPU $last_cpu"
	apply "$LAB_DIR/silo.conf"

	step "a reboot: the pins are gone; silod applies silo.conf and it is all back"
	run "$SILO" --netns "$P-server" xdp unload eth0 || fail "unload failed"
	printf '$ %s &\n' "$SILOD --netns $P-server --apply $LAB_DIR/silo.conf"
	"$SILOD" --netns "$P-server" --apply "$LAB_DIR/silo.conf" \
		--state-dir "$LAB_DIR/state" 2>"$LAB_DIR/silod.log" &
	server_silod=$!
	silod_up "$P-server" || fail "silod does not run for $P-server"
	sed 's/^/  /' "$LAB_DIR/silod.log"
	run "$SILO" --netns "$P-server" service show || fail "service show failed"
	udp_cpus
	jq -e ".incoming_cpu | keys == [\"$last_cpu\"]" "$LAB_DIR/udp" \
		>/dev/null || fail "after the reboot, datagrams were processed elsewhere than CPU $last_cpu"
	run kill -TERM "$server_silod"
	wait "$server_silod" || fail "silod for $P-server did not stop cleanly"
	server_silod=
	run "$SILO" --netns "$P-server" xdp unload eth0 || fail "unload failed"

	# bench_steer's lab of its own (two namespaces, the traffic
	# source's pump on CPU 0): one short round of its services case.
	step "steering against the kernel's own (RPS, RFS): one receiving queue on CPU 0, two services, readers on CPUs 0 and 1"
	echo "\$ $BUILD/tools/bench_steer --case services --rounds 1 --secs 0.5   (5 rounds of 1 s: docs/BENCHMARKS.md)"
	if ! "$BUILD/tools/bench_steer" --case services --rounds 1 --secs 0.5 \
		--warmup 0.2 >"$LAB_DIR/steer.json" 2>"$LAB_DIR/steer.err"; then
		sed 's/^/  /' "$LAB_DIR/steer.err"
		fail "bench_steer failed"
	fi
	jq -ers 'map(select(.case == "services")) |
		(map(select(.bench == "steer_summary")) | first) as $s |
		(map(select(.bench == "steer")) | INDEX(.variant)) as $v |
		"  best kernel (\($s.best_kernel)): \($v[$s.best_kernel].reads_per_sec) datagrams/s read",
		"  silo steering: \($v.steering.reads_per_sec) datagrams/s read (\($s.steering_vs_best_kernel.median)x), " +
		"\($v.steering.services[-1].share_on_reader_cpu * 100)% of the steered service'"'"'s datagrams processed on its reader'"'"'s CPU",
		"  (traffic: the source'"'"'s \($s.source), kernel \($s.kernel))"' \
		"$LAB_DIR/steer.json" || fail "bench_steer printed no summary"
fi

step "a stateful, masquerading firewall on the router: XDP forwards established connections with conntrack's verdict and NAT"
cat >"$LAB_DIR/fw.nft" <<'NFT'
table inet lab_fw {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		ct state invalid drop
		iifname "r-c" accept
	}
	chain post {
		type nat hook postrouting priority srcnat;
		oifname "r-s" masquerade
	}
}
NFT
# The opt-in first (each forwarding load restates it): silod, seeing the
# ruleset without it, would say that forwarded traffic goes to the stack.
for dev in r-c r-s; do
	run "$SILO" --netns "$P-router" xdp load "$dev" --replace --forward \
		--forward-established || fail "cannot load silo on $dev with --forward-established"
done
sed 's/^/  /' "$LAB_DIR/fw.nft"
run ip netns exec "$P-router" nft -f "$LAB_DIR/fw.nft" ||
	fail "nft refused the ruleset"
sleep 0.2 # silod sees the ruleset, and puts the families' packets to conntrack
"$SILO" --netns "$P-router" xdp status | grep 'established connections' ||
	fail "xdp status says nothing of established connections"
ct_fwd() { "$SILO" --netns "$P-router" -j stats | jq '.conntrack.forwarded // 0'; }
fwd0=$(ct_fwd)
tcp 10.2.0.2
fwd=$(($(ct_fwd) - fwd0))
echo "  .conntrack.forwarded: $fwd packets of established connections forwarded by XDP"
((fwd > 1000)) || fail "XDP forwarded next to no packet under conntrack's verdict"
# The server saw the router's address: conntrack's entries, masqueraded.
nat=$(ip netns exec "$P-router" conntrack -L -p tcp --dport 7001 --src-nat 2>/dev/null | grep -c "dst=10.2.0.1 ")
echo "  conntrack: $nat TCP connections to port 7001 masqueraded to 10.2.0.1"
((nat > 0)) || fail "no connection was masqueraded"

step "stop silod (the data path stays), unload"
run kill -TERM "$silod_pid"
wait "$silod_pid" || fail "silod for $P-router did not stop cleanly"
silod_pid=
run "$SILO" --netns "$P-router" xdp status || fail "xdp status failed"
run "$SILO" --netns "$P-router" xdp unload r-c || fail "unload failed"
run "$SILO" --netns "$P-router" xdp unload r-s || fail "unload failed"
left=$(ip -n "$P-router" link show | grep -c 'prog/xdp')
echo "XDP left on the router: $left"
((left == 0)) || fail "XDP is left on the router"
echo "lab: every step done"
