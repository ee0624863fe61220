# SPDX-License-Identifier: GPL-2.0
# Every device at its defaults, as a container host has them: the senders'
# tx checksumming and segmentation on. The lab's router delivers with silo
# what it delivers alone: 200 UDP datagrams and a 5 MB TCP transfer in each
# family, the same bytes (the sinks' digests), no checksum error at the
# server. With silo, XDP forwards them and finishes the checksums that
# client and server leave to offload (silo xdp status counts them). A veth
# whose peer runs XDP has that peer's segmentation (TSO, USO) off, fixed:
# the sender segments in software, XDP sees segments of at most the MTU
# (none passed for its size), each still left to offload; unloaded, the
# sender's TSO is back. The sender's tx checksumming turned off and on
# under traffic loses nothing.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

P="${NS}off"
R="$P-router"
SILOD=
cleanup() {
	[[ -n $SILOD ]] && kill "$SILOD" 2>/dev/null && wait "$SILOD" 2>/dev/null
	lab_down "$P" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }

# The server's TCP and UDP checksum errors, both families.
csum_errors() {
	ip netns exec "$P-server" nstat -saz TcpInCsumErrors UdpInCsumErrors \
		Udp6InCsumErrors | awk '!/^#/ { s += $2 } END { print s + 0 }'
}
tso() { # tso NS: the state of eth0's tx-tcp-segmentation
	ip netns exec "$1" ethtool -k eth0 |
		awk -F': ' '$1 ~ /^[ \t]*tx-tcp-segmentation$/ { print $2 }'
}

# run TAG: UDP then TCP to the server in each family; each sink's digest
# in $TMP/TAG, one a line, or a failure said.
run() {
	local dst sink
	: >"$TMP/$1"
	for dst in 10.2.0.2 fd02::2; do
		ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 200 \
			--timeout 3 >"$TMP/sink" 2>/dev/null &
		sink=$!
		sleep 0.3
		ip netns exec "$P-client" "$TRAFFIC" udp-send "$dst" 7000 \
			--count 200 --gap-us 100 >/dev/null
		wait "$sink"
		jq -e '.datagrams == 200' "$TMP/sink" >/dev/null ||
			not_ok "$1: udp to $dst" "$(cat "$TMP/sink")"
		jq -r '"udp \(.datagrams) \(.digest)"' "$TMP/sink" >>"$TMP/$1"
		ip netns exec "$P-server" "$TRAFFIC" tcp-sink 7001 --conns 1 \
			--timeout 3 >"$TMP/sink" 2>/dev/null &
		sink=$!
		sleep 0.3
		ip netns exec "$P-client" "$TRAFFIC" tcp-send "$dst" 7001 \
			--conns 1 --bytes 5000000 >/dev/null
		wait "$sink"
		jq -e '.bytes == 5000000' "$TMP/sink" >/dev/null ||
			not_ok "$1: tcp to $dst" "$(cat "$TMP/sink")"
		jq -r '"tcp \(.bytes) \(.digest)"' "$TMP/sink" >>"$TMP/$1"
	done
}

[[ $(tso "$P-client") == on ]] && ok "the client's TSO on, its default" ||
	not_ok "the client's TSO on, its default" "$(tso "$P-client")"
err0=$(csum_errors)
run kernel
[[ $(wc -l <"$TMP/kernel") == 4 ]] && ok "the kernel alone delivers it all" ||
	not_ok "the kernel alone delivers it all" "$(cat "$TMP/kernel")"
(($(csum_errors) == err0)) && ok "the kernel alone: no checksum error" ||
	not_ok "the kernel alone: no checksum error" "$(($(csum_errors) - err0))"

check "load r-c" silo --netns "$R" xdp load r-c --forward
check "load r-s" silo --netns "$R" xdp load r-s --forward
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q &
SILOD=$!
dstat() { silo --netns "$R" -j daemon status 2>/dev/null | jq "$1"; }
for _ in $(seq 100); do [[ $(dstat .cache_trusted) == true ]] && break; sleep 0.05; done
[[ $(tso "$P-client") == "off [fixed]" ]] &&
	ok "the client's TSO off, fixed, while its peer runs XDP" ||
	not_ok "the client's TSO off, fixed, while its peer runs XDP" "$(tso "$P-client")"

stat() { silo --netns "$R" -j stats | jq ".$1"; }
csum() { # csum DEV FIELD
	silo --netns "$R" -j xdp status |
		jq ".devices[] | select(.device == \"$1\") | .offload_csum.$2"
}
red0=$(stat redirect) mtu0=$(stat pass_mtu) fin0=$(csum r-c finished)
err0=$(csum_errors)
run silo
cmp -s "$TMP/kernel" "$TMP/silo" && ok "silo delivers the kernel's bytes" ||
	not_ok "silo delivers the kernel's bytes" \
		"$(diff "$TMP/kernel" "$TMP/silo" | tr '\n' ' ')"
(($(csum_errors) == err0)) && ok "silo: no checksum error" ||
	not_ok "silo: no checksum error" "$(($(csum_errors) - err0))"
# 5 MB is some 3,500 segments a family; 400 datagrams.
red=$(($(stat redirect) - red0)) fin=$(($(csum r-c finished) - fin0))
((red > 7000)) && ok "forwarded by XDP" ||
	not_ok "forwarded by XDP" "$red packets redirected"
((fin > 7000)) && ok "the client's checksums finished in XDP" ||
	not_ok "the client's checksums finished in XDP" "$fin finished"
(($(csum r-c passed) == 0 && $(csum r-s passed) == 0)) &&
	ok "none passed for its checksum" ||
	not_ok "none passed for its checksum" "$(silo --netns "$R" -j xdp status | jq -c '[.devices[].offload_csum]')"
(($(stat pass_mtu) == mtu0)) && ok "no frame above the MTU reached XDP" ||
	not_ok "no frame above the MTU reached XDP" "pass_mtu $((mtu0)) -> $(stat pass_mtu)"

# The client's tx checksumming turned off and on under traffic: each
# datagram arrives, XDP forwards every one, finishing those left to
# offload and no other (silo decides per packet).
red0=$(stat redirect) fin0=$(csum r-c finished)
ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 4000 \
	--timeout 4 >"$TMP/sink" 2>/dev/null &
sink=$!
sleep 0.3
ip netns exec "$P-client" "$TRAFFIC" udp-send 10.2.0.2 7000 --count 4000 \
	--gap-us 250 >/dev/null &
send=$!
for _ in $(seq 10); do
	sleep 0.05
	ip netns exec "$P-client" ethtool -K eth0 tx off >/dev/null
	sleep 0.05
	ip netns exec "$P-client" ethtool -K eth0 tx on >/dev/null
done
wait "$send"
wait "$sink"
red=$(($(stat redirect) - red0)) fin=$(($(csum r-c finished) - fin0))
jq -e '.datagrams == 4000' "$TMP/sink" >/dev/null &&
	ok "tx checksumming toggled under traffic: every datagram arrives" ||
	not_ok "tx checksumming toggled under traffic: every datagram arrives" \
		"$(cat "$TMP/sink")"
((red >= 4000 && fin > 0 && fin < 4000)) &&
	ok "toggled: forwarded by XDP, those left to offload finished" ||
	not_ok "toggled: forwarded by XDP, those left to offload finished" \
		"$red redirected, $fin finished of 4000"

kill "$SILOD" && wait "$SILOD" 2>/dev/null
SILOD=
check "unload r-c" silo --netns "$R" xdp unload r-c
check "unload r-s" silo --netns "$R" xdp unload r-s
[[ $(tso "$P-client") == on ]] && ok "the client's TSO on again" ||
	not_ok "the client's TSO on again" "$(tso "$P-client")"
