# SPDX-License-Identifier: GPL-2.0
# A router with a stateful firewall (established accepted first, invalid
# dropped, new connections only from the inside, policy drop), loaded with
# --forward-established: XDP forwards the packets of the connections
# conntrack holds established, with conntrack's verdict per packet, and the
# stack keeps the rest (handshakes, FINs, new connections, what the
# firewall drops). The transfers arrive whole; conntrack -L shows each
# connection's life as the kernel alone would (assured, its timeout
# refreshed by XDP's packets, closed by the FINs the stack saw); a
# connection deleted from conntrack is not forwarded by XDP again.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

P="${NS}ct"
R="$P-router"
SILOD=
cleanup() {
	[[ -n $SILOD ]] && kill "$SILOD" 2>/dev/null && wait "$SILOD" 2>/dev/null
	lab_down "$P" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! command -v conntrack >/dev/null; then
	skip "conntrack" "no conntrack(8): apt-get install conntrack"
	exit 0
fi
lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }

ip netns exec "$R" nft -f - <<'NFT'
table inet filter {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		ct state invalid drop
		iifname "r-c" accept
	}
}
NFT
# Short enough that a refresh shows: the kernel's established timeout.
ip netns exec "$R" sysctl -qw net.netfilter.nf_conntrack_tcp_timeout_established=600
ip netns exec "$R" sysctl -qw net.netfilter.nf_conntrack_udp_timeout_stream=100

stat() { silo --netns "$R" -j stats | jq ".$1"; }
ctstat() { silo --netns "$R" -j stats | jq ".conntrack.$1 // 0"; }

# Without the opt-in a forwarding load is refused, saying what would help.
out=$(silo --netns "$R" xdp load r-c --forward 2>&1)
[[ $? != 0 && $out == *"accepted first by 'inet filter forward'"* &&
	$out == *--forward-established* ]] &&
	ok "without --forward-established: refused, the shape named" ||
	not_ok "without --forward-established: refused, the shape named" "$out"

check "load r-c" silo --netns "$R" xdp load r-c --forward --forward-established
check "load r-s" silo --netns "$R" xdp load r-s --forward --forward-established
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q &
SILOD=$!
dstat() { silo --netns "$R" -j daemon status 2>/dev/null | jq "$1"; }
for _ in $(seq 100); do [[ $(dstat .cache_trusted) == true ]] && break; sleep 0.05; done

# A TCP transfer from the inside, each family: whole, mostly by XDP.
for dst in 10.2.0.2 fd02::2; do
	red0=$(stat redirect) fwd0=$(ctstat forwarded)
	ip netns exec "$P-server" "$TRAFFIC" tcp-sink 7001 --conns 1 \
		--timeout 5 >"$TMP/sink" 2>/dev/null &
	sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" tcp-send "$dst" 7001 \
		--conns 1 --bytes 5000000 >/dev/null
	wait "$sink"
	jq -e '.bytes == 5000000' "$TMP/sink" >/dev/null &&
		ok "tcp to $dst: every byte arrives" ||
		not_ok "tcp to $dst: every byte arrives" "$(cat "$TMP/sink")"
	fwd=$(($(ctstat forwarded) - fwd0))
	((fwd > 1000)) && ok "tcp to $dst: forwarded by XDP under conntrack" ||
		not_ok "tcp to $dst: forwarded by XDP under conntrack" \
			"$fwd forwarded; $(silo --netns "$R" -j stats | jq -c .conntrack)"
done
