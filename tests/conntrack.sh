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
	echo "skip - conntrack: no conntrack(8): apt-get install conntrack"
	exit 0
fi
lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }

# What is proven to let established connections in, and what is not:
# silo xdp status, before any load, names the families and why.
proven() { silo --netns "$R" -j xdp status | jq -r '.envelope.established.proven | join(",")'; }
shape() { # shape WHAT WANT RULESET [DETAIL]: proven families, and the line's words
	ip netns exec "$R" nft flush ruleset
	if ! ip netns exec "$R" nft -f - <<<"$3"; then
		not_ok "shape: $1" "nft refused the ruleset"
		return
	fi
	local got detail
	got=$(proven)
	detail=$(silo --netns "$R" -j xdp status | jq -r .envelope.established.detail)
	[[ $got == "$2" && $detail == *"$4"* ]] && ok "shape: $1" ||
		not_ok "shape: $1" "proven '$got', want '$2': $(silo --netns "$R" -j xdp status | jq -c .envelope.established)"
}
est='ct state established,related accept'
shape "established accepted first" "ipv4,ipv6" "table inet f { chain fw { type filter hook forward priority 0; policy drop; $est; ct state invalid drop; iifname r-c accept; }; }" "accepted first by 'inet f fw'"
shape "with a counter, in ip only" "ipv4" "table ip f { chain fw { type filter hook forward priority 0; policy drop; ct state established counter accept; }; }"
shape "a rule before it" "" "table inet f { chain fw { type filter hook forward priority 0; iifname r-s drop; $est; }; }" "does not accept established connections first"
shape "a set of states" "" "table inet f { chain fw { type filter hook forward priority 0; ct state { established, related } accept; }; }"
shape "invalid alone" "" "table inet f { chain fw { type filter hook forward priority 0; ct state invalid accept; }; }"
shape "a drop verdict" "" "table inet f { chain fw { type filter hook forward priority 0; ct state established drop; }; }"
shape "a chain before conntrack" "" "table inet f { chain raw { type filter hook prerouting priority -300; iifname r-s counter; }; chain fw { type filter hook forward priority 0; $est; }; }"
shape "postrouting too, and nat aside" "ipv4,ipv6" "table inet f { chain fw { type filter hook forward priority 0; $est; }; chain post { type filter hook postrouting priority 0; $est; udp dport 9 drop; }; chain masq { type nat hook postrouting priority 100; oifname r-s masquerade; }; }"
shape "an empty chain that drops" "" "table inet f { chain fw { type filter hook forward priority 0; policy drop; }; chain in { type filter hook input priority 0; $est; }; }"
shape "a helper" "" "table inet f { ct helper ftp { type \"ftp\" protocol tcp; }; chain fw { type filter hook forward priority 0; $est; tcp dport 21 ct helper set \"ftp\"; }; }" "conntrack used beyond state and NAT"
shape "notrack in output" "" "table inet f { chain fw { type filter hook forward priority 0; $est; }; chain out { type filter hook output priority -300; notrack; }; }"
shape "a netdev ingress chain" "" "table netdev n { chain in { type filter hook ingress device r-c priority 0; counter; }; }; table inet f { chain fw { type filter hook forward priority 0; $est; }; }" "sees packets before conntrack"
ip netns exec "$R" nft flush ruleset

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

# silo doctor says so.
doc() { silo --netns "$R" -j doctor | jq -r '[.checks[] | select(.check == "established") | .result] | join(",")'; }
[[ $(doc) == ok ]] && ok "doctor: established connections forwarded" ||
	not_ok "doctor: established connections forwarded" "$(silo --netns "$R" -j doctor | jq -c '.checks[] | select(.check == "established")')"

# A TCP transfer from the inside, each family: whole, mostly by XDP.
for dst in 10.2.0.2 fd02::2; do
	fwd0=$(ctstat forwarded)
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

# Each connection closed by its FINs, which the stack saw and accepted
# (the window tracking made liberal first, else they were invalid).
out=$(ip netns exec "$R" conntrack -L -p tcp --dport 7001 2>/dev/null)
n=$(grep -cE 'TIME_WAIT|CLOSE' <<<"$out")
((n == 2)) && ! grep -q ESTABLISHED <<<"$out" &&
	ok "both connections closed as conntrack saw it (FINs accepted)" ||
	not_ok "both connections closed as conntrack saw it (FINs accepted)" "$out"

# A connection that lives a while, each family: a timeout cut short by
# hand is refreshed by the packets XDP forwards; deleted from conntrack,
# the connection's next packet goes to the stack.
cat >"$TMP/long.py" <<'PY'
import socket, sys, time
mode, host, port, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
fam = socket.AF_INET6 if ":" in host else socket.AF_INET
if mode == "tcp-server":
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port)); s.listen(1); print("listening", flush=True)
    c, peer = s.accept(); n = 0
    print("peer", peer[0], flush=True)
    while True:
        b = c.recv(65536)
        if not b: break
        n += len(b)
    print(n, flush=True)
elif mode == "tcp-client":
    s = socket.create_connection((host, port)); n = 0; end = time.time() + secs
    while time.time() < end:
        s.sendall(b"x" * 100); n += 100; time.sleep(0.02)
    s.close(); print(n, flush=True)
elif mode == "udp-server":
    # Echoes until SECS of silence (or, with a 5th argument, only for that
    # many seconds from the start, then takes without echoing).
    s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((host, port))
    print("listening", flush=True); s.settimeout(secs)
    quiet = time.time() + float(sys.argv[5]) if sys.argv[5:] else None
    n = 0; t0 = time.time()
    try:
        while True:
            b, a = s.recvfrom(2048); n += 1
            if quiet is None or time.time() < quiet: s.sendto(b, a)
    except socket.timeout:
        pass
    print("took", n, "for", round(time.time() - t0, 2), flush=True)
elif mode == "udp-storm":
    # A stream (echoed) for 2.6 s, assured and past its start by then;
    # then, saying "storm", SECS more of it, unechoed, among new
    # connections from the same thread, one to each port in turn, 40,000
    # a second and evenly: four times the budget's refill, which comes a
    # tick of the coarse clock at a time (40 every 4 ms at HZ=250), so
    # that a datagram of the stream finds the budget spent 3 times in 4.
    # Prints the stream's datagrams sent in the storm and the storm's.
    st = socket.socket(fam, socket.SOCK_DGRAM); st.settimeout(0.1)
    st.connect((host, port)); end = time.time() + 2.6
    while time.time() < end:
        st.send(b"y" * 64)
        try: st.recv(2048)
        except socket.timeout: pass
        time.sleep(0.02)
    print("storm", flush=True)
    s = socket.socket(fam, socket.SOCK_DGRAM); n = k = 0
    t0 = time.time(); end = t0 + secs; nxt = t0
    while True:
        now = time.time()
        if now >= end: break
        while n < (now - t0) * 40000:
            s.sendto(b"z", (host, 1024 + n % 60000)); n += 1
        if now >= nxt:
            st.send(b"y" * 64); k += 1; nxt += 0.02
    print(k, n, flush=True)
elif mode == "udp-bad":
    # One datagram of the stream from SPORT, its checksum wrong (and not
    # the pseudo header's, which a sender leaving it to offload writes).
    import struct
    u = socket.socket(fam, socket.SOCK_DGRAM); u.connect((host, port))
    src = socket.inet_pton(fam, u.getsockname()[0]); u.close()
    dst = socket.inet_pton(fam, host); data = b"bad!" * 20
    ulen = 8 + len(data)
    def fold(b):
        if len(b) % 2: b += b"\0"
        t = sum(struct.unpack("!%dH" % (len(b) // 2), b))
        while t >> 16: t = (t & 0xFFFF) + (t >> 16)
        return t
    pseudo = src + dst + struct.pack("!HH", 17, ulen)
    hdr = struct.pack("!HHHH", int(sys.argv[5]), port, ulen, 0)
    good = ~fold(pseudo + hdr + data) & 0xFFFF
    bad = good ^ 0x0101
    assert bad not in (0, good, fold(pseudo))
    r = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_UDP)
    r.sendto(struct.pack("!HHHH", int(sys.argv[5]), port, ulen, bad) + data,
             (host, 0))
else:
    s = socket.socket(fam, socket.SOCK_DGRAM); s.settimeout(1)
    if sys.argv[5:] == ["nocheck"]:
        s.setsockopt(socket.SOL_SOCKET, 11, 1)  # SO_NO_CHECK: IPv4 UDP sum 0
    s.connect((host, port)); sent = got = 0; end = time.time() + secs
    while time.time() < end:
        s.send(b"y" * 64); sent += 1
        try:
            s.recv(2048); got += 1
        except socket.timeout:
            pass
        time.sleep(0.02)
    print(sent, got, s.getsockname()[1], flush=True)
PY
py() { ip netns exec "$1" timeout 15 python3 "$TMP/long.py" "${@:2}"; }
# cut PORT SECS: the connection to PORT's timeout set (conntrack -U takes
# a whole tuple: with a port alone it says "Operation not supported").
cut() {
	local t
	t=$(ip netns exec "$R" conntrack -L -p tcp --dport "$1" 2>/dev/null |
		awk '/ESTABLISHED/ { for (i = 5; i <= 8; i++) printf "%s ", $i; exit }')
	[[ -n $t ]] || return 1
	# src=A dst=B sport=S dport=D
	# shellcheck disable=SC2086 # the four fields, split
	set -- "$1" "$2" $t
	ip netns exec "$R" conntrack -U -s "${3#src=}" -d "${4#dst=}" -p tcp \
		--sport "${5#sport=}" --dport "${6#dport=}" --timeout "$2" \
		2>&1 | grep -q '1 flow entries have been updated'
}
ctval() { # ctval PORT FIELD: conntrack -L's FIELD (timeout: the 3rd)
	ip netns exec "$R" conntrack -L -p tcp --dport "$1" 2>/dev/null |
		awk -v f="$2" '/ESTABLISHED/ { print (f == "timeout" ? $3 : $4); exit }'
}
for dst in 10.2.0.2 fd02::2; do
	srv=${dst/fd02::2/::}
	srv=${srv/10.2.0.2/0.0.0.0}
	py "$P-server" tcp-server "$srv" 7002 0 >"$TMP/srv" &
	server=$!
	for _ in $(seq 50); do grep -q listening "$TMP/srv" 2>/dev/null && break; sleep 0.05; done
	py "$P-client" tcp-client "$dst" 7002 4 >"$TMP/cli" &
	client=$!
	sleep 1
	cut 7002 40 || not_ok "$dst: the timeout cut to 40 s" "conntrack -U failed"
	sleep 1.5
	t=$(ctval 7002 timeout)
	((t > 500)) && ok "$dst: a timeout cut to 40 s is refreshed by XDP's packets" ||
		not_ok "$dst: a timeout cut to 40 s is refreshed by XDP's packets" "timeout ${t:-none}"
	none0=$(ctstat pass_none)
	ip netns exec "$R" conntrack -D -p tcp --dport 7002 >/dev/null 2>&1
	sleep 0.5
	(($(ctstat pass_none) > none0)) &&
		ok "$dst: deleted from conntrack, its next packet goes to the stack" ||
		not_ok "$dst: deleted from conntrack, its next packet goes to the stack" \
			"pass_none $none0 -> $(ctstat pass_none)"
	wait "$client"
	wait "$server"
	[[ $(tail -1 "$TMP/srv") == "$(cat "$TMP/cli")" ]] &&
		ok "$dst: the long connection's bytes all arrive" ||
		not_ok "$dst: the long connection's bytes all arrive" \
			"sent $(cat "$TMP/cli"), got $(tail -1 "$TMP/srv")"
done

# UDP both ways for 3 s: assured after the reply and 2 s (the stream
# timeout's start), then forwarded by XDP; every datagram echoed.
for dst in 10.2.0.2 fd02::2; do
	srv=${dst/fd02::2/::}
	srv=${srv/10.2.0.2/0.0.0.0}
	fwd0=$(ctstat forwarded)
	py "$P-server" udp-server "$srv" 7003 2 >"$TMP/srv" &
	server=$!
	for _ in $(seq 50); do grep -q listening "$TMP/srv" 2>/dev/null && break; sleep 0.05; done
	read -r sent got sport < <(py "$P-client" udp-client "$dst" 7003 3.5)
	wait "$server"
	((sent > 0 && sent == got)) && ok "udp to $dst: every datagram echoed" ||
		not_ok "udp to $dst: every datagram echoed" "$got of $sent"
	fwd=$(($(ctstat forwarded) - fwd0))
	((fwd > 40)) && ok "udp to $dst: the assured stream forwarded by XDP" ||
		not_ok "udp to $dst: the assured stream forwarded by XDP" \
			"$fwd forwarded; $(silo --netns "$R" -j stats | jq -c .conntrack)"
	# A datagram of the assured stream with a wrong checksum: conntrack
	# calls it invalid and the firewall drops it; XDP leaves it to the
	# stack, and the server's port never sees it.
	csum0=$(ctstat pass_csum)
	ip netns exec "$P-server" nft flush ruleset
	ip netns exec "$P-server" nft 'table inet t { chain in { type filter hook prerouting priority -500; udp length 88 counter; }; }'
	py "$P-client" udp-bad "$dst" 7003 0 "$sport"
	sleep 0.3
	rx=$(ip netns exec "$P-server" nft list ruleset | awk '/udp length 88/ { print $(NF - 2) }')
	(($(ctstat pass_csum) == csum0 + 1 && rx == 0)) &&
		ok "udp to $dst: a wrong checksum in an assured stream goes to the stack, which drops it" ||
		not_ok "udp to $dst: a wrong checksum in an assured stream goes to the stack, which drops it" \
			"pass_csum $csum0 -> $(ctstat pass_csum), reached the server: ${rx:-?}"
	ip netns exec "$P-server" nft flush ruleset
done

# A storm of new connections (thousands a second, past the budget of
# lookups that find nothing): XDP stops looking up flows conntrack did
# not hold (pass_storm), and the established stream among them goes on
# forwarded by XDP. One thread sends both: the budget is per CPU, and
# veth's NAPI runs on the sender's.
storm0=$(ctstat pass_storm)
# Echoes for 2.9 s (past the storm's start), then takes the stream
# silently.
py "$P-server" udp-server 0.0.0.0 7008 2 2.9 >"$TMP/srv" &
server=$!
for _ in $(seq 50); do grep -q listening "$TMP/srv" 2>/dev/null && break; sleep 0.05; done
py "$P-client" udp-storm 10.2.0.2 7008 1.5 >"$TMP/cli" 2>"$TMP/cli.err" &
client=$!
for _ in $(seq 100); do grep -q storm "$TMP/cli" 2>/dev/null && break; sleep 0.05; done
fwd0=$(ctstat forwarded)
wait "$client"
fwd=$(($(ctstat forwarded) - fwd0)) storm=$(($(ctstat pass_storm) - storm0))
wait "$server"
read -r k n < <(tail -1 "$TMP/cli")
# The stream's datagrams in the storm, forwarded by XDP: all but those
# sent before fwd0 was read (some 5 of 75).
want=$((k * 4 / 5))
((storm > 0 && k > 40 && fwd >= want)) &&
	ok "a storm of $n new connections: not looked up; the established stream's $k datagrams forwarded by XDP ($fwd)" ||
	not_ok "a storm of $n new connections: not looked up; the established stream forwarded by XDP" \
		"pass_storm $storm; of the stream's $k datagrams $fwd forwarded, want $want $(tail -c 400 "$TMP/cli.err" | tr "\n" " ") $(tr "\n" " " <"$TMP/srv")"
ip netns exec "$R" conntrack -D -p udp >/dev/null 2>&1

# Masqueraded on the outside port, and a port of the router's DNATed to
# the server: XDP rewrites each packet as the NAT hooks would (addresses,
# ports, checksums), both ways: the replies to the router's address too.
cat >"$TMP/nat.nft" <<'NFT'
table ip nat {
	chain pre {
		type nat hook prerouting priority dstnat;
		tcp dport 8080 dnat to 10.2.0.2:7005
	}
	chain post {
		type nat hook postrouting priority srcnat;
		oifname "r-s" masquerade
	}
}
table ip6 nat {
	chain post {
		type nat hook postrouting priority srcnat;
		oifname "r-s" masquerade
	}
}
NFT
ip netns exec "$R" nft -f "$TMP/nat.nft"
for _ in $(seq 40); do [[ $(proven) == ipv4,ipv6 ]] && break; sleep 0.05; done
# nat DST CONNECT_TO PEER WHAT [PORT]: a long connection through NAT;
# with XDP (ALONE empty) forwarded by it.
nat() {
	local fwd0
	fwd0=$(ctstat forwarded)
	py "$P-server" tcp-server "$1" 7005 0 >"$TMP/srv" &
	server=$!
	for _ in $(seq 50); do grep -q listening "$TMP/srv" 2>/dev/null && break; sleep 0.05; done
	py "$P-client" tcp-client "$2" "${5:-7005}" 2 >"$TMP/cli"
	wait "$server"
	[[ $(tail -1 "$TMP/srv") == "$(cat "$TMP/cli")" && $(sed -n 2p "$TMP/srv") == "peer $3" ]] &&
		ok "$4${ALONE:+, the kernel alone}: the bytes all arrive, from $3" ||
		not_ok "$4${ALONE:+, the kernel alone}: the bytes all arrive, from $3" \
			"sent $(cat "$TMP/cli"), server: $(tr '\n' ' ' <"$TMP/srv")"
	[[ -n ${ALONE:-} ]] && return
	fwd=$(($(ctstat forwarded) - fwd0))
	((fwd > 100)) && ok "$4: forwarded by XDP, rewritten" ||
		not_ok "$4: forwarded by XDP, rewritten" \
			"$fwd; $(silo --netns "$R" -j stats | jq -c .conntrack)"
}
# udp_nat [nocheck]: a UDP exchange through masquerade; nocheck: IPv4's
# 0 (no checksum), kept 0: a sum made up for it would be wrong, and the
# server would drop it.
udp_nat() {
	local fwd0 sent got via=", forwarded by XDP"
	[[ -n ${ALONE:-} ]] && via=
	fwd0=$(ctstat forwarded)
	py "$P-server" udp-server 0.0.0.0 7006 2 >"$TMP/srv" &
	server=$!
	for _ in $(seq 50); do grep -q listening "$TMP/srv" 2>/dev/null && break; sleep 0.05; done
	read -r sent got _ < <(py "$P-client" udp-client 10.2.0.2 7006 3.5 "$@")
	wait "$server"
	fwd=$(($(ctstat forwarded) - fwd0))
	[[ -n ${ALONE:-} ]] && fwd=41
	((sent > 0 && sent == got && fwd > 40)) &&
		ok "UDP masqueraded${1:+, no checksum}${ALONE:+, the kernel alone}: every datagram echoed$via" ||
		not_ok "UDP masqueraded${1:+, no checksum}${ALONE:+, the kernel alone}: every datagram echoed$via" \
			"$got of $sent echoed, $fwd forwarded"
}
# conntrack's entries of the NAT runs, as a kernel alone would leave them:
# the timeouts and the client's ephemeral ports (and masquerade's, which
# keeps them) left out.
ct_entries() {
	{
		ip netns exec "$R" conntrack -L -f ipv4 2>/dev/null
		ip netns exec "$R" conntrack -L -f ipv6 2>/dev/null
	} | grep -E 'port=(7005|7006|8080) ' |
		sed -E 's/^(\S+ +\S+) +[0-9]+ /\1 /; s/(port=)[0-9]{5}/\1E/g' | sort
}
nat_all() {
	ip netns exec "$R" conntrack -F >/dev/null 2>&1
	nat 0.0.0.0 10.2.0.2 10.2.0.1 "masquerade"
	nat :: fd02::2 fd02::1 "IPv6 masquerade"
	nat 0.0.0.0 10.1.0.1 10.2.0.1 "DNAT to the server, masqueraded" 8080
	udp_nat
	udp_nat nocheck
}
nat_all
ct_entries >"$TMP/ct.silo"
out=$(grep tcp "$TMP/ct.silo")
n=$(grep -cE 'TIME_WAIT|CLOSE' <<<"$out")
((n == 3)) && ! grep -q ESTABLISHED <<<"$out" &&
	ok "NATed connections closed as conntrack saw it" ||
	not_ok "NATed connections closed as conntrack saw it" "$out"
# masq_move DST SRC: a UDP stream masqueraded out of r-s, its route moved
# to r-s2 under traffic. The kernel drops the next packet and kills the
# entry (nf_nat_oif_changed()): the masquerade's address belongs to the old
# device. XDP leaves it to the stack: nothing from that address reaches
# the server by the new link.
masq_move() {
	local nat0 n fam=ip gw=10.12.0.2 len=32 srv=0.0.0.0
	[[ $1 == *:* ]] && fam=ip6 gw=fd12::2 len=128 srv=::
	nat0=$(ctstat pass_nat)
	ip netns exec "$P-server" nft flush ruleset
	ip netns exec "$P-server" nft "table inet t { chain in { type filter hook prerouting priority -500; iifname eth1 meta l4proto udp th dport 7007 $fam saddr $2 counter; }; }"
	py "$P-server" udp-server "$srv" 7007 2 >"$TMP/srv" &
	server=$!
	for _ in $(seq 50); do grep -q listening "$TMP/srv" 2>/dev/null && break; sleep 0.05; done
	py "$P-client" udp-client "$1" 7007 5 >/dev/null &
	client=$!
	sleep 3.5
	# The new gateway known first, else the first packet would wait for
	# the neighbour (the stack's anyway).
	ip -n "$R" neigh replace "$gw" dev r-s2 nud permanent lladdr \
		"$(ip -n "$P-server" -j link show eth1 | jq -r '.[0].address')"
	ip -n "$R" route replace "$1/$len" via "$gw" dev r-s2
	wait "$client" "$server"
	n=$(ip netns exec "$P-server" nft list ruleset | awk '/counter/ { print $(NF - 2) }')
	[[ -n $n ]] && (($(ctstat pass_nat) > nat0 && n == 0)) &&
		ok "$1: masquerade's route moved to another device: the stack drops the packets, not XDP" ||
		not_ok "$1: masquerade's route moved to another device: the stack drops the packets, not XDP" \
			"pass_nat $nat0 -> $(ctstat pass_nat), from $2 by the new link: ${n:-?}; $(silo --netns "$R" -j stats | jq -c "del(.cpus) | with_entries(select(.value != 0))")"
	ip -n "$R" route del "$1/$len"
	ip netns exec "$P-server" nft flush ruleset
}
ip -n "$P-server" link add eth1 type veth peer name r-s2 netns "$R" &&
	ip -n "$P-server" addr add 10.12.0.2/24 dev eth1 &&
	ip -n "$P-server" addr add fd12::2/64 dev eth1 nodad &&
	ip -n "$R" addr add 10.12.0.1/24 dev r-s2 &&
	ip -n "$R" addr add fd12::1/64 dev r-s2 nodad &&
	ip netns exec "$P-server" ethtool -K eth1 gro on >/dev/null &&
	ip -n "$P-server" link set eth1 up && ip -n "$R" link set r-s2 up ||
	not_ok "a second link to the server" "ip failed"
check "load r-s2" silo --netns "$R" xdp load r-s2 --forward --forward-established
masq_move 10.2.0.2 10.2.0.1
masq_move fd02::2 fd02::1
check "unload r-s2" silo --netns "$R" xdp unload r-s2
ip -n "$R" link del r-s2
ip netns exec "$R" nft delete table ip nat
ip netns exec "$R" nft delete table ip6 nat

# A rule put before the established accept: silod sees the ruleset change
# and XDP forwards no established connection's packet from then on.
ip netns exec "$R" nft insert rule inet filter forward udp dport 9 drop
for _ in $(seq 40); do [[ $(proven) == "" ]] && break; sleep 0.05; done
fwd0=$(ctstat forwarded) env0=$(stat pass_envelope)
ip netns exec "$P-server" "$TRAFFIC" tcp-sink 7001 --conns 1 --timeout 5 \
	>"$TMP/sink" 2>/dev/null &
sink=$!
sleep 0.3
ip netns exec "$P-client" "$TRAFFIC" tcp-send 10.2.0.2 7001 --conns 1 \
	--bytes 2000000 >/dev/null
wait "$sink"
fwd=$(($(ctstat forwarded) - fwd0)) env=$(($(stat pass_envelope) - env0))
jq -e '.bytes == 2000000' "$TMP/sink" >/dev/null && ((fwd == 0 && env > 500)) &&
	ok "a rule before the established accept: all to the stack" ||
	not_ok "a rule before the established accept: all to the stack" \
		"$fwd forwarded, $env passed; $(cat "$TMP/sink")"
ip netns exec "$R" nft delete rule inet filter forward \
	handle "$(ip netns exec "$R" nft -a list chain inet filter forward |
		awk '/udp dport 9 drop/ { print $NF }')"

# What the firewall drops, XDP does not forward: a connection from the
# outside is refused by the stack's policy as before.
ip netns exec "$P-client" timeout 3 python3 -c '
import socket; s = socket.socket(); s.bind(("0.0.0.0", 7004)); s.listen(1); s.accept()' &
listener=$!
sleep 0.3
if ip netns exec "$P-server" timeout 2 bash -c 'exec 3<>/dev/tcp/10.1.0.2/7004' 2>/dev/null; then
	not_ok "a connection from the outside is dropped, as the policy says" "it connected"
else
	ok "a connection from the outside is dropped, as the policy says"
fi
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null

kill "$SILOD" && wait "$SILOD" 2>/dev/null
SILOD=
check "unload r-c" silo --netns "$R" xdp unload r-c
check "unload r-s" silo --netns "$R" xdp unload r-s

# The same NAT runs with the kernel alone: conntrack holds the same
# entries, states and NAT tuples as it did with XDP forwarding.
ip netns exec "$R" nft -f "$TMP/nat.nft"
ALONE=1 nat_all
ct_entries >"$TMP/ct.kernel"
echo "# conntrack's entries, XDP forwarding:"
sed 's/^/#   /' "$TMP/ct.silo"
cmp -s "$TMP/ct.kernel" "$TMP/ct.silo" && (($(wc -l <"$TMP/ct.kernel") == 5)) &&
	ok "conntrack -L: the kernel alone's entries, states and NAT tuples" ||
	not_ok "conntrack -L: the kernel alone's entries, states and NAT tuples" \
		"$(diff "$TMP/ct.kernel" "$TMP/ct.silo" | tr '\n' ' ')"
ip netns exec "$R" nft delete table ip nat
ip netns exec "$R" nft delete table ip6 nat

# silo.conf: forward-established, the namespace's like the bypass.
ST="$TMP/state"
conf() { # conf R-C R-S: forward-established of each device
	printf 'netns:\n  %s:\n    devices:\n      - name: r-c\n        forward: true\n        forward-established: %s\n      - name: r-s\n        forward: true\n        forward-established: %s\n' "$R" "$1" "$2"
}
conf true false >"$TMP/mixed.conf"
out=$(silo --netns "$R" apply --state-dir "$ST" "$TMP/mixed.conf" 2>&1)
[[ $? != 0 && $out == *"forward-established is the namespace's"* ]] &&
	ok "silo.conf: forward-established on one forwarding device only is refused" ||
	not_ok "silo.conf: forward-established on one forwarding device only is refused" "$out"
conf true true >"$TMP/est.conf"
check "silo.conf: forward-established applied" \
	silo --netns "$R" apply --state-dir "$ST" "$TMP/est.conf"
[[ $(silo --netns "$R" -j xdp status | jq -c '.envelope.established | [.opted_in, .forwarded]') == '[true,["ipv4","ipv6"]]' ]] &&
	ok "silo.conf: opted in, both families forwarded" ||
	not_ok "silo.conf: opted in, both families forwarded" \
		"$(silo --netns "$R" -j xdp status | jq -c .envelope.established)"
n=$(silo --netns "$R" show --config | grep -c 'forward-established: true')
((n == 2)) && ok "show --config writes forward-established on both devices" ||
	not_ok "show --config writes forward-established on both devices" "$n"
printf 'netns:\n  %s:\n    devices: []\n' "$R" >"$TMP/none.conf"
check "silo.conf: nothing declared, both unloaded" \
	silo --netns "$R" apply --state-dir "$ST" "$TMP/none.conf"
