# SPDX-License-Identifier: GPL-2.0
# End to end: client -- router -- server in three namespaces (tools/lab/lab.sh),
# silo loaded on the router's veths by the CLI with --netns, UDP and TCP over
# IPv4 and IPv6 arrive whole, the router's counters say XDP forwarded them
# from the route cache, every pinned map reads with bpftool, and unload
# leaves the devices and bpffs clean.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

P="${NS}e2e"
R="$P-router"
lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }
DIR="$PIN_ROOT/netns/$R"
# Loose rp_filter: every IPv4 source takes the source check, whose answer
# is cached in a source entry (under rp_filter 0 most need none), and the
# route change below sweeps those inside it.
ip netns exec "$R" sysctl -qw net.ipv4.conf.all.rp_filter=2

check "load r-c" silo --netns "$R" xdp load r-c --forward
check "load r-s" silo --netns "$R" xdp load r-s --forward
# The CLI has exited: only the pinned links keep the program there.
n=$(ip -n "$R" link show | grep -c 'prog/xdp')
[[ $n == 2 ]] && ok "attached after the CLI exits" ||
	not_ok "attached after the CLI exits" "$n devices with XDP"

# silod for the router, as the lab runs it: silo forwards only while
# silod beats.
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q &
silod=$!
dstat() { silo --netns "$R" -j daemon status 2>/dev/null | jq "$1"; }
for _ in $(seq 100); do [[ $(dstat .running) == true ]] && break; sleep 0.05; done
[[ $(dstat .running) == true && $(dstat .cache_trusted) == true ]] &&
	ok "daemon status: running, cache trusted" ||
	not_ok "daemon status: running, cache trusted" "$(dstat -c .)"

# What the receiver got against what the sender says it sent (and what was
# asked): a loss anywhere on the path shows here.
udp() { # udp NAME DST COUNT
	ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count "$3" \
		--timeout 3 >"$TMP/sink" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" udp-send "$2" 7000 --count "$3" \
		--gap-us 100 >"$TMP/send"
	wait "$sink"
	got=$(jq .datagrams "$TMP/sink") sent=$(jq .datagrams "$TMP/send")
	[[ $got == "$sent" && $sent == "$3" ]] && ok "$1" ||
		not_ok "$1" "$got of $sent datagrams arrived ($3 asked)"
}

# TCP retransmits what is lost, so whole bytes prove delivery, not that
# nothing was dropped: "nothing dropped" below checks that.
tcp() { # tcp NAME DST
	ip netns exec "$P-server" "$TRAFFIC" tcp-sink 7001 --conns 2 \
		--timeout 3 >"$TMP/sink" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" tcp-send "$2" 7001 --conns 2 \
		--bytes 2000000 >"$TMP/send"
	wait "$sink"
	got=$(jq .bytes "$TMP/sink") sent=$(jq .bytes "$TMP/send")
	[[ $got == "$sent" && $sent == 4000000 ]] && ok "$1" ||
		not_ok "$1" "$got of $sent bytes arrived (4000000 asked)"
}

stat() { silo --netns "$R" -j stats | jq ".$1"; }

udp "udp over ipv4" 10.2.0.2 1000
udp "udp over ipv6" fd02::2 1000
before=$(stat redirect)
tcp "tcp over ipv4" 10.2.0.2
tcp "tcp over ipv6" fd02::2

rx=$(stat rx) redirect=$(stat redirect) hit=$(stat cache_hit) big=$(stat cache_big)
# Everything but ARP/ND and the first packet of each flow.
((redirect * 100 >= rx * 95)) && ok "forwarded by XDP" ||
	not_ok "forwarded by XDP" "$redirect of $rx packets redirected"
# silo is on every router device but lo: silod watches PMTU exceptions in
# both families, and packets above the least path MTU (TCP's full segments)
# come from the cache like the rest (docs/ENVELOPE.md, "Path MTU").
check "PMTU watch on, both families" bash -c \
	"silo --netns '$R' -j daemon status | jq -e '.pmtu_watch.ipv4 and .pmtu_watch.ipv6'"
((big == 0)) && ok "full segments from the cache, not resolved" ||
	not_ok "full segments from the cache, not resolved" "cache_big $big"
((hit * 100 >= redirect * 99)) && ok "forwarded from the cache" ||
	not_ok "forwarded from the cache" "$hit cache hits for $redirect redirects"
((redirect - before > 1000)) && ok "tcp forwarded by XDP" ||
	not_ok "tcp forwarded by XDP" "$((redirect - before)) packets"
# silo never drops: every packet its program saw left with a verdict it
# counted, XDP_PASS or XDP_REDIRECT. A drop, counted or not (a bare
# XDP_DROP, an abort), leaves rx above the sum. One snapshot at a time;
# a packet in flight during one is settled in the next.
balanced() {
	silo --netns "$R" -j stats >"$TMP/stats" || return 1
	jq -e '.drop == 0 and .rx == .pass + .redirect' "$TMP/stats" >/dev/null
}
for _ in 1 2 3 4 5; do balanced && break; sleep 0.2; done
balanced && ok "nothing dropped" || not_ok "nothing dropped" \
	"$(jq -c '{rx, pass, redirect, drop}' "$TMP/stats") (rx != pass + redirect)"

# Rates while traffic flows: 3,000 datagrams inside a watch of six 0.5 s
# intervals, sent in the last five (at 100 us apart they take 0.3 s, some
# 1 s on a loaded machine). Rate times period, summed, is exactly what the
# counter moved by between two snapshots around the watch (rates are
# rounded to one a second: a few of slack); and some interval saw a
# thousand a second or more (3,000 spread over five intervals leave at
# least 600 in one), from the cache. The sender's speed decides nothing.
ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 3000 \
	--timeout 5 >/dev/null 2>&1 &
sink=$!
silo --netns "$R" -j stats >"$TMP/rates_before"
silo --netns "$R" -j stats --interval 0.5 --count 6 >"$TMP/rates" &
watch=$!
# The sender starts once the first interval is out: the watch's first read
# was before any of its datagrams, however slowly silo started.
for _ in $(seq 50); do [[ -s $TMP/rates ]] && break; sleep 0.1; done
ip netns exec "$P-client" "$TRAFFIC" udp-send 10.2.0.2 7000 --count 3000 \
	--gap-us 100 >/dev/null
# Still watching: every datagram was counted inside the window.
in_window=0
kill -0 "$watch" 2>/dev/null && in_window=1
wait "$watch" "$sink"
silo --netns "$R" -j stats >"$TMP/rates_after"
moved=$(($(jq .redirect "$TMP/rates_after") - $(jq .redirect "$TMP/rates_before")))
((in_window)) &&
	[[ $(wc -l <"$TMP/rates") == 6 ]] &&
	((moved >= 3000)) &&
	jq -se --argjson m "$moved" \
		'map(.rates.redirect * .interval_s) | add | . > $m - 4 and . < $m + 4' \
		"$TMP/rates" >/dev/null &&
	jq -se 'map(.rates.redirect) | max > 900' "$TMP/rates" >/dev/null &&
	jq -se 'map(select(.rates.redirect > 900) | .cache_hit_rate) | min > 0.99' \
		"$TMP/rates" >/dev/null &&
	ok "stats --interval: rates while traffic flows" ||
	not_ok "stats --interval: rates while traffic flows" \
		"in window $in_window, redirect moved $moved, $(jq -c \
			'{r: .rates.redirect, s: .interval_s, h: .cache_hit_rate}' \
			"$TMP/rates" | tr '\n' ' ')"

# Both directions of both families; IPv6 flows with their flow labels.
n=$(silo --netns "$R" -j route show |
	jq -c '[.entries[] | select(.valid and .key.kind == "route") | .key.dst] | unique')
[[ $n == '["10.1.0.2","10.2.0.2","fd01::2","fd02::2"]' ]] &&
	ok "valid cache entries for both directions" ||
	not_ok "valid cache entries for both directions" "$n"
check "lookup agrees with the FIB" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$R' -j route lookup 10.2.0.2 |
	 jq -e '.results | length == 1 and .[0].agree and .[0].valid'"

# A service and a queue map, so that their maps have entries to print.
check "service add" silo --netns "$R" service add --proto udp --port 7100 \
	--cpus 0 --mode node
check "service queue-map" silo --netns "$R" service queue-map r-c 0=0
expect "service queue-map: a queue r-c lacks is refused" 2 \
	"no RX queue 5 on r-c: it has 1 \\(0 to 0\\)" \
	silo --netns "$R" service queue-map r-c 5=0

# Every pinned map reads with bpftool; maps with BTF print named fields
# (devmaps, cpumaps and arrays of maps cannot carry BTF: the kernel
# refuses it).
for pin in "$DIR"/*; do
	name=$(basename "$pin")
	[[ $name == xdp_link_* ]] && continue
	# A ringbuf has no entries to dump: bpftool shows what it is.
	if [[ $name == fill_log || $name == ct_ask ]]; then
		check "bpftool show $name" bash -c \
			"bpftool -j map show pinned '$pin' | jq -e '.type == \"ringbuf\"'"
		continue
	fi
	if ! bpftool -j map dump pinned "$pin" >"$TMP/dump" 2>&1; then
		not_ok "bpftool dump $name" "$(head -c 200 "$TMP/dump")"
		continue
	fi
	case $name in
	tx_ports | route_cache | cpumap) ok "bpftool dump $name" ;;
	pmtu_marks | route_mtus)
		# Empty here (no PMTU error, no route MTU): their BTF is there.
		check "bpftool dump $name" bash -c \
			"bpftool -j map show pinned '$pin' | jq -e '.btf_id > 0'"
		;;
	*)
		if jq -e 'length > 0 and (.[0] | has("formatted"))' \
			"$TMP/dump" >/dev/null; then
			ok "bpftool dump $name"
		else
			not_ok "bpftool dump $name" "no BTF-formatted entries"
		fi
		;;
	esac
done

ip -n "$R" route add 10.2.0.0/28 via 10.2.0.2 dev r-s
for _ in $(seq 100); do [[ $(dstat .counters.invalidated) -ge 2 ]] && break; sleep 0.05; done
[[ $(dstat .counters.events_route) -ge 1 && $(dstat .counters.invalidated) -ge 2 ]] &&
	ok "a route change removes the entries inside it" ||
	not_ok "a route change removes the entries inside it" "$(dstat -c .counters)"
# Route entries by destination (the one back to 10.1.0.2 does not depend
# on routes to 10.2.0.0/28); source entries by source.
n=$(silo --netns "$R" -j route show |
	jq '[.entries[] | select(.key.kind == "route") | .key.dst] | unique | join(" ")')
[[ $n == '"10.1.0.2 fd01::2 fd02::2"' ]] && ok "entries outside it stay" ||
	not_ok "entries outside it stay" "$n"
n=$(silo --netns "$R" -j route show |
	jq '[.entries[] | select(.key.kind == "source") | .key.src] | unique | join(" ")')
[[ $n == '"10.1.0.2"' ]] && ok "source entries inside it go, others stay" ||
	not_ok "source entries inside it go, others stay" "$n"

check "unload r-c" silo --netns "$R" xdp unload r-c
check "unload r-s" silo --netns "$R" xdp unload r-s
n=$(ip -n "$R" link show | grep -c 'prog/xdp')
[[ $n == 0 ]] && ok "devices clean" || not_ok "devices clean" "$n with XDP"
[[ -e $DIR/genid ]] && ok "pins kept while silod runs" ||
	not_ok "pins kept while silod runs" "gone"
kill -TERM "$silod"
wait "$silod"
rc=$?
[[ $rc == 0 ]] && ok "silod exits cleanly" || not_ok "silod exits cleanly" "status $rc"
[[ ! -e $DIR ]] && ok "pins removed" || not_ok "pins removed" "$(ls "$DIR")"
lab_down "$P"
