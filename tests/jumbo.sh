# SPDX-License-Identifier: GPL-2.0
# Jumbo frames end to end: the lab (tools/lab/lab.sh) with MTU 9000 on every
# veth. UDP datagrams of 8,000 bytes, and TCP with TSO, GSO and GRO off on
# the client (so its full segments cross the router as 9,014-byte frames),
# arrive exactly as with the kernel alone (the sinks' digests of every byte
# read), and with silo loaded in native mode XDP forwards them: frames of
# several buffers, redirected. The client's veth takes no XDP frames with
# its GRO off, so the router's r-c is kept out of tx_ports and what goes
# back to the client (TCP's ACKs) goes through the stack, not lost.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

P="${NS}jb"
R="$P-router"
DIR="$PIN_ROOT/netns/$R"
DAEMON=''
cleanup() {
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
	lab_down "$P"
}
trap cleanup EXIT

lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }
for d in "$P-client eth0" "$P-server eth0" "$R r-c" "$R r-s"; do
	read -r ns dev <<<"$d"
	ip -n "$ns" link set "$dev" mtu 9000 || { not_ok "mtu 9000" "$d"; exit 1; }
done
ip netns exec "$P-client" ethtool -K eth0 tso off gso off gro off >/dev/null ||
	{ not_ok "client offloads off" "ethtool -K failed"; exit 1; }

# udp DST: 200 datagrams of 8,000 bytes; "datagrams bytes digest" read.
udp() {
	ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 200 \
		--timeout 3 >"$TMP/sink" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" udp-send "$1" 7000 --count 200 \
		--size 8000 --gap-us 300 >/dev/null
	wait "$sink"
	jq -r '"\(.datagrams) \(.bytes) \(.digest)"' "$TMP/sink"
}
# tcp DST: one connection of 4 MB; "bytes digest" read.
tcp() {
	ip netns exec "$P-server" "$TRAFFIC" tcp-sink 7001 --conns 1 \
		--timeout 3 >"$TMP/sink" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" tcp-send "$1" 7001 --conns 1 \
		--bytes 4000000 >/dev/null
	wait "$sink"
	jq -r '"\(.bytes) \(.digest)"' "$TMP/sink"
}

declare -A kernel
for dst in 10.2.0.2 fd02::2; do
	kernel[udp $dst]=$(udp "$dst")
	kernel[tcp $dst]=$(tcp "$dst")
done
[[ ${kernel[udp 10.2.0.2]} == "200 1600000 "* && ${kernel[tcp fd02::2]} == "4000000 "* ]] &&
	ok "kernel alone: every byte arrives" ||
	not_ok "kernel alone: every byte arrives" "udp ${kernel[udp 10.2.0.2]}, tcp ${kernel[tcp fd02::2]}"

check "load r-c (MTU 9000, native)" silo --netns "$R" xdp load r-c --forward
check "load r-s (MTU 9000, native)" silo --netns "$R" xdp load r-s --forward
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q &
DAEMON=$!
for _ in $(seq 100); do
	silo --netns "$R" -j daemon status 2>/dev/null | jq -e .cache_trusted >/dev/null && break
	sleep 0.05
done

stat() { silo --netns "$R" -j stats | jq ".$1"; }
# in_tx DEV: DEV's ifindex is a key of tx_ports (no BTF: a key in bytes).
in_tx() {
	local i
	i=$(ip netns exec "$R" cat "/sys/class/net/$1/ifindex")
	bpftool map lookup pinned "$DIR/tx_ports" key $((i & 255)) $((i >> 8 & 255)) 0 0 \
		>/dev/null 2>&1
}
# tx_ports: r-s (its peer has GRO), not r-c (its peer has neither GRO
# nor a program: the kernel would drop what XDP sends it).
in_tx r-s && ! in_tx r-c && ok "tx_ports holds r-s, not r-c" ||
	not_ok "tx_ports holds r-s, not r-c" "$(bpftool -j map dump pinned "$DIR/tx_ports")"

for dst in 10.2.0.2 fd02::2; do
	r0=$(stat redirect)
	got=$(udp "$dst")
	[[ $got == "${kernel[udp $dst]}" ]] && ok "udp to $dst: as the kernel alone" ||
		not_ok "udp to $dst: as the kernel alone" "$got, kernel ${kernel[udp $dst]}"
	n=$(($(stat redirect) - r0))
	((n >= 190)) && ok "udp to $dst: forwarded by XDP" ||
		not_ok "udp to $dst: forwarded by XDP" "$n of 200 redirected"
	r0=$(stat redirect) p0=$(stat pass_no_tx_port)
	got=$(tcp "$dst")
	[[ $got == "${kernel[tcp $dst]}" ]] && ok "tcp to $dst: as the kernel alone" ||
		not_ok "tcp to $dst: as the kernel alone" "$got, kernel ${kernel[tcp $dst]}"
	# 4 MB in segments of 8,948 (IPv6: 8,928) bytes: 448 at least.
	n=$(($(stat redirect) - r0)) p=$(($(stat pass_no_tx_port) - p0))
	((n >= 440)) && ok "tcp to $dst: full segments forwarded by XDP" ||
		not_ok "tcp to $dst: full segments forwarded by XDP" "$n redirected"
	((p > 0)) && ok "tcp to $dst: ACKs to r-c through the stack" ||
		not_ok "tcp to $dst: ACKs to r-c through the stack" "pass_no_tx_port +$p"
done

# GRO on the client: r-c takes XDP frames, and silod, told by the link
# event, puts it in tx_ports.
ip netns exec "$P-client" ethtool -K eth0 gro on >/dev/null
for _ in $(seq 40); do in_tx r-c && break; sleep 0.05; done
in_tx r-c && ok "silod adds r-c to tx_ports once it can send" ||
	not_ok "silod adds r-c to tx_ports once it can send" \
		"$(bpftool -j map dump pinned "$DIR/tx_ports")"
ip netns exec "$P-client" ethtool -K eth0 gro off >/dev/null
for _ in $(seq 40); do in_tx r-c || break; sleep 0.05; done
! in_tx r-c && ok "silod takes r-c out of tx_ports when it cannot" ||
	not_ok "silod takes r-c out of tx_ports when it cannot" \
		"$(bpftool -j map dump pinned "$DIR/tx_ports")"

check "unload r-c" silo --netns "$R" xdp unload r-c
check "unload r-s" silo --netns "$R" xdp unload r-s
