# SPDX-License-Identifier: GPL-2.0
# Differential: silo judged against the kernel itself.
# run.sh: timeout 1200
#
#   client (eth0) --- (r-c) router (r-s) --- (eth0) server
#                              (r-t) --- (eth0) server2
#
# For each router configuration below, the corpus of tests/lib/frames.h (normal
# and malformed IPv4/IPv6 frames, exact bytes, twice) is sent from the
# client's veth and everything leaving the router towards the client, the
# server and server2 is captured on the far ends. Three runs: the kernel
# alone, silo without silod, silo with silod (loaded before the
# configuration is applied). Per configuration and silo run,
# the multiset of captured frames (per port, byte for byte, host noise such
# as ARP/ND/MLD left out, random IPv4 IDs of the router's own packets
# zeroed) must equal the kernel's:
#   ok - differential/CONFIG/MODE
#   not ok - differential/CONFIG/MODE: N frames differ (first ones follow)
# Each run gets a fresh router. The router differs from the defaults where
# the kernel's own answer would depend on timing: ICMP rate limits off,
# redirects off, IPv4 sources one per corpus frame (ip_error's fixed per
# source limit), static neighbours (the neigh-* configurations aside).
#
#   tests/differential.sh --list          the configurations
#   DIFF_CONFIGS="plain ecmp6" tests/run.sh build/san differential
#     (names apart by blanks or commas)
#   DIFF_SELFCHECK=1: also run the kernel twice and compare (determinism)
#   DIFF_ONLY=SUBSTRING: send only the corpus frames whose name has it
#   DIFF_KEEP=DIR: keep the captures in DIR (sorted "PORT NAME#PASS HEX")
#   DIFF_SHOW=N: show N differing frames per failure (default 8)
#   DIFF_XDP_MODE=skb: load silo in generic XDP mode (default native)

CONFIGS=(
	plain "routes via gateways, connected, no route"
	unreach "blackhole, unreachable and prohibit routes"
	route-src "routes with src (the source of ICMP errors and replies)"
	nexthop "nexthop objects and groups (weighted, blackhole)"
	vrf "ingress and server port in a VRF, server2 outside"
	neigh-failed "gateway neighbour FAILED (fast resolution timers)"
	neigh-incomplete "gateway neighbour INCOMPLETE"
	neigh-stale "gateway neighbour STALE"
	neigh-absent "gateway neighbour absent"
	link-down "egress to server2 administratively down"
	mtu-link "egress to server with MTU 1280"
	mtu-route "route MTUs: 1000 (IPv4), 1280 (IPv6), locked 1400"
	mtu-link-raise "egress to server at MTU 1280, raised to 1500 just before the corpus"
	mtu-link-raise-route "mtu-link-raise with route MTUs 1400 (IPv6's rises to 1500)"
	mtu6-sysctl "egress to server with net.ipv6.conf.r-s.mtu 1300 (sysctl alone)"
	jumbo "MTU 9000 from client to server (raised with silo attached), server2 at 1500"
	pmtu4-exc "IPv4 PMTU exception 1300 for 10.40.0.5, ip_forward_use_pmtu 0 (ignored)"
	pmtu4-exc-use "IPv4 PMTU exception 1300 for 10.40.0.5, ip_forward_use_pmtu 1"
	pmtu4-exc-low "IPv4 frag-needed MTU 400 for 10.40.0.5: exception locked at 552"
	pmtu4-exc-metric "IPv4 route MTU 1450, exception 1300 for 10.40.0.5, use_pmtu 1"
	pmtu4-exc-lock "IPv4 route MTU locked 1450, frag-needed 1300 (no exception), use_pmtu 1"
	pmtu6-exc "IPv6 PMTU exception 1300 for fd40::5"
	pmtu6-exc-metric "IPv6 route MTU 1400, exception 1300 for fd40::5"
	pmtu6-route "IPv6 route MTU 1400 for fd40::/48, 1300 in a table of a from rule"
	encap-seg6 "fd40::/48 encapsulated in SRv6 (seg6 encap to fd02::9)"
	encap-mpls "10.40.0.0/16 encapsulated in MPLS (label 100)"
	fwd4-off "net.ipv4.ip_forward 0"
	fwd4-dev "IPv4 forwarding off on the ingress device only"
	fwd6-off "net.ipv6.conf.all.forwarding 0"
	fwd6-dev "IPv6 all.forwarding 0, per-device forwarding 1"
	fwd6-force "IPv6 all.forwarding 0, force_forwarding 1 on the ingress"
	rpf1 "rp_filter 1 (strict)"
	rpf2 "rp_filter 2 (loose)"
	rpf1-rule "rp_filter 1 with ip rule iif r-c lookup 100"
	rpf2-rule "rp_filter 2 with ip rule iif r-c lookup 100"
	accept-local "accept_local 1 on the ingress (local sources)"
	local-src "accept_local 0, rp_filter 1 (local sources)"
	local-route-src "a local route (AnyIP) 10.60.0.0/16 in a table a rule reaches first"
	rules-direct "rules from and to prefixes before main's, holding some corpus frames; unicast routes in the local table"
	rules-tables "rules that look every packet up in a table before main's, one table with more routes than direct_skip takes"
	rules-src4 "a source rule in IPv4 only: one spoofed source to 10.20/16 via server2, IPv6 without rules"
	rules-src6 "a source rule in IPv6 only: one spoofed source to fd20::/64 via server2, IPv4 without rules"
	rules-suppress "lookup main suppress_prefixlength 0 before a rule for every packet, a default route in main"
	ecmp4-l3 "IPv4 ECMP, fib_multipath_hash_policy 0"
	ecmp4-l4 "IPv4 ECMP, fib_multipath_hash_policy 1"
	ecmp6 "IPv6 ECMP, default hash policy (flow label)"
	ecmp6-l4 "IPv6 ECMP, fib_multipath_hash_policy 1"
	nft "nftables forward chain dropping some destinations"
	nft-drop "nftables forward chain with policy drop"
	nft-debian "Debian's default nftables.conf (empty chains, policy accept): inside"
	nft-ct "Debian's ruleset and a ct rule in input: conntrack on, outside"
	nft-counters "iptables-nft's FORWARD chains (both families) with their policy counters"
	nft-stateful "a stateful forward chain (established accept, invalid drop, new from the client only, policy drop)"
	nft-stateful-est "nft-stateful, loaded with --forward-established: conntrack's verdict per packet"
	nft-conns-est "nft-stateful-est, the corpus's UDP flows established in conntrack (every other one begun by the server)"
	nft-conns-gone-est "nft-conns-est without new connections admitted, a third of the flows deleted from conntrack and a third expired"
	nft-tcp-est "nft-stateful-est, the corpus's TCP flows established and liberal in conntrack, closed by a FIN and an RST at each pass's end"
	nft-change-est "nft-conns-est over three passes: a drop rule put before the established accept after the first, taken out after the second"
	nft-masq-est "nft-stateful-est and masquerade out of r-s: the corpus's UDP flows masqueraded by the first pass and assured after it, the server's routes moved to r-t after the second"
	nft-dnat "DNAT of a UDP port to the server (ip nat prerouting)"
	nft-dnat-est "nft-dnat with established accepted first, --forward-established: NATed flows to the stack"
	nft-before-est "a drop rule before the established accept, --forward-established: not proven, aside"
	nft-counters-est "iptables-nft's FORWARD chains with counters, --forward-established: xt, aside"
	nft-pre "an inet prerouting filter chain dropping server2's IPv6 prefix"
	nft-count "a forward chain counting every packet (one counter rule, policy accept)"
	xfrm "xfrm policy dir fwd action block"
	bridge "ingress device enslaved to a bridge"
	vlan-hidden "VLAN tags beside the bytes, as a NIC that strips them gives them"
	vlan-hidden-second "the same on the corpus's second pass only: flows the front serves come tagged"
	tc-ingress "a tc filter on the ingress device dropping server2's prefixes"
	tc-egress "a tc filter on the egress to server2 dropping its prefixes"
	service "UDP and TCP services on the corpus's port, steered over every CPU"
)

if [[ ${1:-} == --list ]]; then
	for ((i = 0; i < ${#CONFIGS[@]}; i += 2)); do
		printf '%-18s %s\n' "${CONFIGS[i]}" "${CONFIGS[i + 1]}"
	done
	exit 0
fi

. "$TESTS_DIR/lib.sh"
export LC_ALL=C

FRAMES="$BUILD/tools/frames"
C="${NS}c" R="${NS}r" S="${NS}s" T="${NS}t"
CMAC=02:00:00:00:01:02 RCMAC=02:00:00:00:01:01
SMAC=02:00:00:00:02:02 RSMAC=02:00:00:00:02:01
TMAC=02:00:00:00:03:02 RTMAC=02:00:00:00:03:01
GW3MAC=02:00:00:00:02:03 # 10.2.0.3 / fd02::3, the neighbour-state gateway
silod_pid=

teardown() {
	if [[ -n $silod_pid ]]; then
		kill -TERM "$silod_pid" 2>/dev/null
		wait "$silod_pid" 2>/dev/null
		silod_pid=
	fi
	if ip netns list | grep -qw "$R"; then
		for d in r-c r-s r-t; do
			silo --netns "$R" xdp unload "$d" >/dev/null 2>&1
		done
	fi
	for n in "$C" "$R" "$S" "$T"; do
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$PIN_ROOT/netns/$R"
}
trap 'teardown; rm -rf "$TMP"' EXIT

r() { ip -n "$R" "$@"; }
rsys() { ip netns exec "$R" sysctl -qw "$@"; }

# The static neighbours every configuration starts from (ARP/ND stay quiet).
neighbours() {
	local dc=${1:-r-c}
	r neigh replace 10.1.0.2 lladdr $CMAC dev "$dc" nud permanent
	r neigh replace fd01::2 lladdr $CMAC dev "$dc" nud permanent
	r neigh replace 10.2.0.2 lladdr $SMAC dev r-s nud permanent
	r neigh replace fd02::2 lladdr $SMAC dev r-s nud permanent
	r neigh replace 10.2.0.3 lladdr $GW3MAC dev r-s nud permanent
	r neigh replace fd02::3 lladdr $GW3MAC dev r-s nud permanent
	r neigh replace 10.3.0.2 lladdr $TMAC dev r-t nud permanent
	r neigh replace fd03::2 lladdr $TMAC dev r-t nud permanent
	# Other on-link destinations of the corpus: resolved, since a failing
	# resolution takes seconds (the neigh-* configurations test that).
	r neigh replace 10.1.0.7 lladdr 02:00:00:00:01:07 dev "$dc" nud permanent
	r neigh replace fd01::7 lladdr 02:00:00:00:01:07 dev "$dc" nud permanent
	r neigh replace fe80::1 lladdr 02:00:00:00:01:08 dev "$dc" nud permanent
	r neigh replace 10.2.0.0 lladdr 02:00:00:00:02:09 dev r-s nud permanent
}

topo_up() {
	local n
	for n in "$C" "$R" "$S" "$T"; do
		ip netns add "$n" || return 1
		ip -n "$n" link set lo up
	done
	# The hosts have no addresses and no IPv6: they only capture, and
	# never answer or chatter.
	for n in "$C" "$S" "$T"; do
		ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 || return 1
	done
	rsys net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
		net.ipv6.conf.all.keep_addr_on_down=1 \
		net.ipv6.conf.default.accept_ra=0 \
		net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 \
		net.ipv4.icmp_msgs_burst=100000 net.ipv6.icmp.ratelimit=0 \
		net.ipv4.icmp_ratemask=0 \
		net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
		net.ipv4.conf.all.send_redirects=0 \
		net.ipv4.conf.default.send_redirects=0 || return 1
	# Redirects are off above: the kernel backs them off per source over
	# time, which no two runs would repeat. The ratemask is empty: an
	# error of a masked type goes through icmpv4_xrlim_allow(), which with
	# icmp_ratelimit=0 empties the source's inet_peer tokens, the very
	# ones ip_error() spends (1 a second, 5 at once) on an unroutable
	# packet: the second pass's errors would come only where a second had
	# passed since the first's. Unmasked, ip_error() alone spends them,
	# and no source sends more than 4 such packets (2 passes, 2 copies).
	ip -n "$C" link add name eth0 address $CMAC type veth peer name r-c \
		address $RCMAC netns "$R" &&
		ip -n "$S" link add name eth0 address $SMAC type veth peer \
			name r-s address $RSMAC netns "$R" &&
		ip -n "$T" link add name eth0 address $TMAC type veth peer \
			name r-t address $RTMAC netns "$R" || return 1
	for n in "$C" "$S" "$T"; do
		# Checksum offload at its defaults (on), as a container's
		# veth has it: the corpus's frames left to offload
		# (frames run --offload) arrive partial. GRO lets the veth
		# take frames redirected into it (NAPI), as in
		# tools/lab/lab.sh.
		ip netns exec "$n" ethtool -K eth0 gro on >/dev/null ||
			return 1
		ip -n "$n" link set eth0 up
	done
	for n in r-c r-s r-t; do
		# GRO on the router's side too, so that the kernel run sees the
		# same NAPI receive path as a run with XDP attached.
		ip netns exec "$R" ethtool -K "$n" gro on >/dev/null ||
			return 1
		rsys "net.ipv4.conf.$n.rp_filter=0"
		r link set "$n" up
	done
	r addr add 10.1.0.1/24 dev r-c
	r addr add fd01::1/64 dev r-c nodad
	r addr add 10.2.0.1/24 dev r-s
	r addr add fd02::1/64 dev r-s nodad
	r addr add 10.3.0.1/24 dev r-t
	r addr add fd03::1/64 dev r-t nodad
	neighbours
	# The corpus's IPv4 sources, one per frame (tests/lib/frames.h).
	r route add 10.10.0.0/16 via 10.1.0.2 &&
		r route add 10.20.0.0/16 via 10.2.0.2 &&
		r route add 10.40.0.0/16 via 10.2.0.2 &&
		r route add 10.30.0.0/16 via 10.3.0.2 &&
		r -6 route add fd20::/64 via fd02::2 &&
		r -6 route add fd40::/48 via fd02::2 &&
		r -6 route add fd30::/64 via fd03::2
}

# Configurations: cfg_NAME changes the router after topo_up (returns 77 when
# this machine cannot: a skip); pre_NAME, when defined, runs just before the
# corpus is sent, and fails the run when it fails.
cfg_plain() { :; }

cfg_unreach() {
	r route add blackhole 10.40.0.0/24 &&
		r route add unreachable 10.40.1.0/24 &&
		r route add prohibit 10.40.2.0/24 &&
		r -6 route add blackhole fd40::/64 &&
		r -6 route add unreachable fd40:0:0:1::/64 &&
		r -6 route add prohibit fd40:0:0:2::/64
}

cfg_route-src() {
	r route add 10.1.0.2/32 dev r-c src 10.3.0.1 &&
		r -6 route add fd01::2/128 dev r-c src fd03::1 &&
		r route replace 10.40.0.0/16 via 10.2.0.2 src 10.2.0.1 &&
		r -6 route replace fd40::/48 via fd02::2 src fd02::1
}

cfg_nexthop() {
	r nexthop add id 1 via 10.2.0.2 dev r-s &&
		r nexthop add id 2 via 10.3.0.2 dev r-t &&
		r nexthop add id 3 group 1/2 &&
		r nexthop add id 4 blackhole &&
		r nexthop add id 5 group 1,3/2 &&
		r nexthop add id 6 via fd02::2 dev r-s &&
		r nexthop add id 7 via fd03::2 dev r-t &&
		r nexthop add id 8 group 6/7 &&
		r -6 nexthop add id 9 blackhole &&
		r route replace 10.40.0.0/24 nhid 2 &&
		r route replace 10.40.1.0/24 nhid 4 &&
		r route replace 10.40.2.0/24 nhid 5 &&
		r route replace 10.40.3.0/24 nhid 3 &&
		r -6 route replace fd40::/64 nhid 7 &&
		r -6 route replace fd40:0:0:1::/64 nhid 9 &&
		r -6 route replace fd40:0:0:3::/64 nhid 8
}

cfg_vrf() {
	r link add vrf1 type vrf table 10 || return 77 # no VRF in this kernel
	r link set vrf1 up &&
		r link set r-c master vrf1 &&
		r link set r-s master vrf1 || return 1
	neighbours
	r route add 10.10.0.0/16 via 10.1.0.2 table 10 &&
		r route add 10.20.0.0/16 via 10.2.0.2 table 10 &&
		r route add 10.40.0.0/16 via 10.2.0.2 table 10 &&
		r -6 route add fd20::/64 via fd02::2 table 10 &&
		r -6 route add fd40::/48 via fd02::2 table 10
}

# The gateway 10.2.0.3 / fd02::3 for 10.40.0.0/24 and fd40::/64, resolved
# fast: one probe, 100 ms. The queue of packets waiting for it is large:
# what fits there depends on each skb's truesize, which differs with XDP
# attached (page-sized buffers), and those dropped get no ICMP error.
neigh_common() {
	rsys net.ipv4.neigh.r-s.mcast_solicit=1 net.ipv4.neigh.r-s.ucast_solicit=1 \
		net.ipv4.neigh.r-s.app_solicit=0 \
		net.ipv4.neigh.r-s.retrans_time_ms=100 \
		net.ipv6.neigh.r-s.mcast_solicit=1 net.ipv6.neigh.r-s.ucast_solicit=1 \
		net.ipv6.neigh.r-s.app_solicit=0 \
		net.ipv6.neigh.r-s.retrans_time_ms=100 \
		net.ipv4.neigh.r-s.unres_qlen_bytes=16777216 \
		net.ipv6.neigh.r-s.unres_qlen_bytes=16777216 &&
		r route replace 10.40.0.0/24 via 10.2.0.3 dev r-s &&
		r -6 route replace fd40::/64 via fd02::3 dev r-s
}
NEIGH_WAIT_MS=1500
cfg_neigh-failed() { neigh_common; }
pre_neigh-failed() {
	r neigh replace 10.2.0.3 dev r-s nud failed
	r neigh replace fd02::3 dev r-s nud failed
}
cfg_neigh-incomplete() { neigh_common; }
pre_neigh-incomplete() {
	r neigh replace 10.2.0.3 dev r-s nud incomplete
	r neigh replace fd02::3 dev r-s nud incomplete
}
cfg_neigh-stale() { neigh_common; }
pre_neigh-stale() {
	r neigh replace 10.2.0.3 lladdr $GW3MAC dev r-s nud stale
	r neigh replace fd02::3 lladdr $GW3MAC dev r-s nud stale
}
cfg_neigh-absent() { neigh_common; }
pre_neigh-absent() {
	r neigh del 10.2.0.3 dev r-s 2>/dev/null
	r neigh del fd02::3 dev r-s 2>/dev/null
	return 0
}

# With silod every router device carries silo: both families' PMTU watch
# is on and the larger frames come from the cache (docs/ENVELOPE.md, "Path
# MTU"); towards a destination an error named they go to the stack.
watched() {
	local st
	[[ -n $silod_pid ]] || return 0
	silo --netns "$R" -j daemon status |
		jq -e '.pmtu_watch.ipv4 and .pmtu_watch.ipv6' >/dev/null || {
		echo "PMTU watch not on: $(silo --netns "$R" -j daemon status | jq -c .pmtu_watch)"
		return 1
	}
	st=$(silo --netns "$R" -j stats)
	jq -e "$1" <<<"$st" >/dev/null ||
		{ echo "want $1: $(jq -c '{cache_big, cache_hit, pass_mtu}' <<<"$st")"; return 1; }
}
post_plain() { watched '.cache_big == 0 and .cache_hit > 0'; }
post_pmtu6-exc() { watched '.cache_big == 0 and .pass_mtu > 0'; }

cfg_link-down() { r link set r-t down; }
cfg_mtu-link() { r link set r-s mtu 1280; }
cfg_mtu-route() {
	r route replace 10.40.0.0/16 via 10.2.0.2 mtu 1000 &&
		r route replace 10.20.0.0/16 via 10.2.0.2 mtu lock 1400 &&
		r -6 route replace fd40::/48 via fd02::2 mtu 1280
}
# Lowered with silo loaded, raised again just before the corpus.
# Jumbo frames (the corpus's 4,000 to 9,000-byte packets): silo takes them
# in several buffers, forwards them to the server and leaves those for
# server2 (1500) to the stack, which fragments them or sends the error.
# The MTUs are raised with silo attached (a veth caps its peer's MTU while
# the program on it takes frames of one page only).
cfg_jumbo() {
	ip -n "$C" link set eth0 mtu 9000 && r link set r-c mtu 9000 &&
		r link set r-s mtu 9000 && ip -n "$S" link set eth0 mtu 9000
}
post_jumbo() {
	[[ $mode == silod ]] || return 0
	local st
	st=$(silo --netns "$R" -j stats)
	# 2 passes of 15 jumbo frames to the server, several buffers each,
	# and no egress refused them (tests/jumbo.sh counts them one by one).
	jq -e '.redirect >= 30 and .pass_no_tx_port == 0' <<<"$st" >/dev/null ||
		{ echo "want jumbo frames forwarded: $(jq -c '{redirect, pass_no_tx_port}' <<<"$st")"; return 1; }
}
cfg_mtu-link-raise() { r link set r-s mtu 1280; }
pre_mtu-link-raise() { r link set r-s mtu 1500; }
# The same under route MTUs of 1400: the lower takes the IPv6 route's to
# 1280 and the raise to 1500 (rt6_mtu_change(), no netlink message for the
# route); IPv4's stays at 1400.
cfg_mtu-link-raise-route() {
	r route replace 10.40.0.0/16 via 10.2.0.2 mtu 1400 &&
		r -6 route replace fd40::/48 via fd02::2 mtu 1400 &&
		cfg_mtu-link-raise
}
pre_mtu-link-raise-route() { pre_mtu-link-raise; }
# The device's IPv6 MTU alone: sysctl writes it, no netlink message says so.
cfg_mtu6-sysctl() { rsys net.ipv6.conf.r-s.mtu=1300; }

# Path MTU exceptions: the server (10.2.0.2, fd02::2) tells the router, on
# r-s, that the path to 10.40.0.5 / fd40::5 is narrower: an ICMP frag-needed
# or ICMPv6 packet too big quoting an echo reply of the router's own (frames
# too-big). That is done in pre_NAME, with silo and silod loaded, and no
# netlink message tells them; each pre_ checks the kernel learned what it
# should. IPv4 forwarding honours an exception only under
# ip_forward_use_pmtu or when it is locked (learned below min_pmtu, 552),
# and a route's MTU always; IPv6 honours both.

# too_big DST MTU: the server says so; returns once the router counted it.
too_big() {
	local dst=$1 mtu=$2 src=10.2.0.2 rtr=10.2.0.1 ctr=IcmpInDestUnreachs
	local before n _
	if [[ $dst == *:* ]]; then
		src=fd02::2 rtr=fd02::1 ctr=Icmp6InPktTooBigs
	fi
	before=$(snmp "$ctr")
	"$FRAMES" too-big --tx "$S:eth0" --dmac $RSMAC --smac $SMAC \
		--src $src --dst $rtr --qsrc $rtr --qdst "$dst" --mtu "$mtu" ||
		return 1
	for _ in $(seq 40); do
		n=$(snmp "$ctr")
		((n > before)) && return 0
		sleep 0.05
	done
	echo "the router did not count the ICMP error: $ctr $before, then $n"
	return 1
}

# snmp NAME: the router's counter NAME (nstat's names).
snmp() {
	ip netns exec "$R" nstat -asz "$1" | awk -v n="$1" '$1 == n { print $2 }'
}

# exception DST MTU: the router's route to DST has an exception of MTU
# ("lock 552" for a locked one) as ip route get shows it; says what it has
# when not.
exception() {
	local got re="expires [0-9]+sec mtu $2( |\$)"
	got=$(r route get "$1" 2>&1 | tr -s '\n ' ' ')
	[[ $got =~ $re ]] && return 0
	echo "no exception of mtu $2 for $1: ip route get $1: $got"
	return 1
}

cfg_pmtu4-exc() { rsys net.ipv4.ip_forward_use_pmtu=0; }
pre_pmtu4-exc() { too_big 10.40.0.5 1300 && exception 10.40.0.5 1300; }
cfg_pmtu4-exc-use() { rsys net.ipv4.ip_forward_use_pmtu=1; }
pre_pmtu4-exc-use() { pre_pmtu4-exc; }
cfg_pmtu4-exc-low() { rsys net.ipv4.ip_forward_use_pmtu=0; }
pre_pmtu4-exc-low() {
	too_big 10.40.0.5 400 && exception 10.40.0.5 "lock 552"
}
cfg_pmtu4-exc-metric() {
	rsys net.ipv4.ip_forward_use_pmtu=1 &&
		r route replace 10.40.0.0/16 via 10.2.0.2 mtu 1450
}
pre_pmtu4-exc-metric() { pre_pmtu4-exc; }
cfg_pmtu4-exc-lock() {
	rsys net.ipv4.ip_forward_use_pmtu=1 &&
		r route replace 10.40.0.0/16 via 10.2.0.2 mtu lock 1450
}
# Under a locked route MTU the kernel learns nothing (__ip_rt_update_pmtu).
pre_pmtu4-exc-lock() {
	local got
	too_big 10.40.0.5 1300 || return 1
	got=$(r route get 10.40.0.5 2>&1 | tr -s '\n ' ' ')
	[[ $got == *"mtu lock 1450"* && $got != *expires* ]] && return 0
	echo "an exception under a locked MTU: ip route get 10.40.0.5: $got"
	return 1
}

cfg_pmtu6-exc() { :; }
pre_pmtu6-exc() { too_big fd40::5 1300 && exception fd40::5 1300; }
cfg_pmtu6-exc-metric() { r -6 route replace fd40::/48 via fd02::2 mtu 1400; }
pre_pmtu6-exc-metric() { pre_pmtu6-exc; }

# Route MTUs of one prefix only (fd30::/64 keeps the device's), and of a
# table that a rule selects: the corpus's IPv6 source is fd01::2, so table
# 100's 1300 is what fd40::/48 gets, but for fd40:0:0:2::/64, thrown back to
# the main table's 1400.
cfg_pmtu6-route() {
	r -6 route replace fd40::/48 via fd02::2 mtu 1400 &&
		r -6 rule add from fd01::/64 lookup 100 pref 100 &&
		r -6 route add fd40::/48 via fd02::2 mtu 1300 table 100 &&
		r -6 route add throw fd40:0:0:2::/64 table 100
}

# Encapsulating routes (lightweight tunnels): the headroom comes off the MTU.
# 77 where this kernel has no such encapsulation.
lwt() {
	local out
	out=$("$@" 2>&1) && return 0
	echo "$out"
	[[ $out == *"not supported"* ]] && return 77
	return 1
}
cfg_encap-seg6() {
	r neigh replace fd02::9 lladdr $SMAC dev r-s nud permanent &&
		lwt r -6 route replace fd40::/48 encap seg6 mode encap \
			segs fd02::9 dev r-s
}
cfg_encap-mpls() {
	if [[ -e /proc/sys/net/mpls/platform_labels ]]; then
		rsys net.mpls.platform_labels=1000 || return 1
	fi
	lwt r route replace 10.40.0.0/16 encap mpls 100 via 10.2.0.2
}

cfg_fwd4-off() { rsys net.ipv4.ip_forward=0; }
cfg_fwd4-dev() { rsys net.ipv4.conf.r-c.forwarding=0; }
cfg_fwd6-off() { rsys net.ipv6.conf.all.forwarding=0; }
cfg_fwd6-dev() {
	rsys net.ipv6.conf.all.forwarding=0 &&
		rsys net.ipv6.conf.r-c.forwarding=1 net.ipv6.conf.r-s.forwarding=1 \
			net.ipv6.conf.r-t.forwarding=1
}
cfg_fwd6-force() {
	[[ -e /proc/sys/net/ipv6/conf/all/force_forwarding ]] || return 77
	rsys net.ipv6.conf.all.forwarding=0 &&
		rsys net.ipv6.conf.r-c.force_forwarding=1
}

cfg_rpf1() { rsys net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.r-c.rp_filter=1; }
cfg_rpf2() { rsys net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.r-c.rp_filter=2; }
rule100() {
	r rule add iif r-c lookup 100 pref 100 &&
		r route add 10.20.0.0/16 via 10.3.0.2 dev r-t table 100 &&
		r route add 10.30.0.0/16 via 10.2.0.2 dev r-s table 100 &&
		r -6 rule add iif r-c lookup 100 pref 100 &&
		r -6 route add fd20::/64 via fd03::2 dev r-t table 100
}
cfg_rpf1-rule() { cfg_rpf1 && rule100; }
cfg_rpf2-rule() { cfg_rpf2 && rule100; }
cfg_accept-local() {
	rsys net.ipv4.conf.all.accept_local=1 net.ipv4.conf.r-c.accept_local=1
}
cfg_local-src() {
	rsys net.ipv4.conf.r-c.accept_local=0 && cfg_rpf1
}
# rp_filter 0: its sources (src-anyip) are martians, whose route back is
# local; a source outside every such route needs no lookup back.
cfg_local-route-src() {
	r route add local 10.60.0.0/16 dev lo table 60 &&
		r rule add from all lookup 60 pref 60
}

# Rules that select on prefixes only: a packet outside them all (and
# outside the local table's routes) is looked up in main directly, the
# others through the rules, and each goes where the rules send it: the
# sources 10.10.0.16/28 (frames 16 to 31 of the corpus) to 10.20.0.5 via
# server2, 10.30.0.0/24 and fd30::/64 (a "to" rule) via the server, and
# 10.40.1.0/24 and fd40:0:0:1::/64, unicast routes of the local table, via
# server2 (main's routes say the other way each time).
cfg_rules-direct() {
	r rule add from 192.0.2.0/24 lookup 100 pref 100 &&
		r rule add from 10.10.0.16/28 lookup 101 pref 101 &&
		r route add 10.20.0.0/16 via 10.3.0.2 dev r-t table 101 &&
		r rule add to 10.30.0.0/24 lookup 102 pref 102 &&
		r route add 10.30.0.0/24 via 10.2.0.2 dev r-s table 102 &&
		r route add 10.40.1.0/24 via 10.3.0.2 dev r-t table local &&
		r -6 rule add from 2001:db8::/32 lookup 100 pref 100 &&
		r -6 rule add to fd30::/64 lookup 102 pref 102 &&
		r -6 route add fd30::/64 via fd02::2 dev r-s table 102 &&
		r -6 route add fd40:0:0:1::/64 via fd03::2 dev r-t table local
}
post_rules-direct() {
	[[ $mode == silod ]] || return 0
	silo --netns "$R" -j genid show | jq -e '.direct_v4 and .direct_v6' >/dev/null ||
		{ echo "want direct lookups: $(silo --netns "$R" -j genid show)"; return 1; }
}
# Source rules in one family only: that family's keys hold the source (the
# corpus's frame from 10.30.0.9 / fd30::9 goes to server2, the client's to
# the same destination to the server), the other's do not.
cfg_rules-src4() {
	r rule add from 10.30.0.9 lookup 101 pref 101 &&
		r route add 10.20.0.0/16 via 10.3.0.2 dev r-t table 101
}
cfg_rules-src6() {
	r -6 rule add from fd30::9 lookup 101 pref 101 &&
		r -6 route add fd20::/64 via fd03::2 dev r-t table 101
}

# Rules that look every packet up in a table: a destination outside the
# tables' routes is looked up in main directly, the others through the
# rules, each where the tables send it (main's routes say the other way):
# 10.30.0.0/24 via the server and fd20::/64 via server2 (table 103);
# 10.40.1.0/24 and fd40:0:0:2::/64 via server2 among 300 more routes of
# each family (table 104), which direct_skip takes as fewer, shorter
# prefixes.
cfg_rules-tables() {
	local i
	r rule add lookup 103 pref 103 &&
		r route add 10.30.0.0/24 via 10.2.0.2 dev r-s table 103 &&
		r -6 rule add lookup 103 pref 103 &&
		r -6 route add fd20::/64 via fd03::2 dev r-t table 103 &&
		r rule add lookup 104 pref 104 &&
		r -6 rule add lookup 104 pref 104 || return 1
	{
		echo "route add 10.40.1.0/24 via 10.3.0.2 dev r-t table 104"
		echo "route add fd40:0:0:2::/64 via fd03::2 dev r-t table 104"
		for ((i = 0; i < 300; i++)); do
			echo "route add 10.$((200 + i / 128)).$((i % 128 * 2)).0/24 via 10.3.0.2 dev r-t table 104"
			echo "route add fd60:$i::/64 via fd03::2 dev r-t table 104"
		done
	} | r -batch -
}
post_rules-tables() { post_rules-direct; }
# wg-quick's pair: main's routes but its default; the rest from table 100.
cfg_rules-suppress() {
	r route add default via 10.2.0.2 &&
		r -6 route add default via fd02::2 &&
		r rule add lookup main suppress_prefixlength 0 pref 50 &&
		r rule add lookup 100 pref 60 &&
		r route add default via 10.3.0.2 dev r-t table 100 &&
		r -6 rule add lookup main suppress_prefixlength 0 pref 50 &&
		r -6 rule add lookup 100 pref 60 &&
		r -6 route add default via fd03::2 dev r-t table 100
}

ecmp4() {
	rsys net.ipv4.fib_multipath_hash_policy="$1" &&
		r route replace 10.40.3.0/24 nexthop via 10.2.0.2 dev r-s \
			nexthop via 10.3.0.2 dev r-t
}
ecmp6() {
	rsys net.ipv6.fib_multipath_hash_policy="$1" &&
		r -6 route replace fd40:0:0:3::/64 nexthop via fd02::2 dev r-s \
			nexthop via fd03::2 dev r-t
}
cfg_ecmp4-l3() { ecmp4 0; }
cfg_ecmp4-l4() { ecmp4 1; }
cfg_ecmp6() { ecmp6 0; }
cfg_ecmp6-l4() { ecmp6 1; }

nft_fwd() {
	command -v nft >/dev/null || return 77
	ip netns exec "$R" nft -f - <<-EOF
		table inet difftest {
			chain forward {
				type filter hook forward priority 0; policy $1;
				ip daddr 10.30.0.0/16 drop
				ip6 daddr fd30::/64 drop
				udp dport 7003 drop
			}
		}
	EOF
}
cfg_nft() { nft_fwd accept; }
cfg_nft-drop() { nft_fwd drop; }

# Rulesets that change nothing stay inside: Debian's default one. Silo
# forwards under it. A conntrack user anywhere (here an input rule) makes
# its hooks track every forwarded packet: outside. So do chain counters.
nft_debian() {
	command -v nft >/dev/null || return 77
	ip netns exec "$R" nft -f - <<-EOF
		flush ruleset
		table inet filter {
			chain input { type filter hook input priority filter; }
			chain forward { type filter hook forward priority filter; }
			chain output { type filter hook output priority filter; }
		}
	EOF
}
cfg_nft-debian() { nft_debian; }
cfg_nft-ct() {
	nft_debian && ip netns exec "$R" nft add rule inet filter input \
		ct state established,related accept
}
cfg_nft-counters() {
	command -v iptables-nft >/dev/null || return 77
	ip netns exec "$R" iptables-nft -P FORWARD ACCEPT &&
		ip netns exec "$R" ip6tables-nft -P FORWARD ACCEPT
}
# envelope_post JQ: with silod, silo's counters say what the ruleset let it do.
envelope_post() {
	[[ -n $silod_pid ]] || return 0
	silo --netns "$R" -j stats | jq -e "$1" >/dev/null || {
		echo "want $1: $(silo --netns "$R" -j stats | jq -c '{redirect, pass_envelope}')"
		return 1
	}
}
post_nft-debian() { envelope_post '.redirect > 0 and .pass_envelope == 0'; }
post_nft-ct() { envelope_post '.redirect == 0 and .pass_envelope > 0'; }
post_nft-counters() { post_nft-ct; }

# Firewalls silo must stand aside for: the kernel's verdicts and NAT.
nft_rules() {
	command -v nft >/dev/null || return 77
	ip netns exec "$R" nft -f -
}
cfg_nft-stateful() {
	nft_rules <<-EOF
		table inet fw {
			chain forward {
				type filter hook forward priority filter; policy drop;
				ct state established,related accept
				ct state invalid drop
				iifname "r-c" accept
			}
		}
	EOF
}
cfg_nft-dnat() {
	nft_rules <<-EOF
		table ip nat {
			chain pre {
				type nat hook prerouting priority dstnat;
				udp dport 7003 dnat to 10.2.0.2
			}
		}
	EOF
}
cfg_nft-pre() {
	nft_rules <<-EOF
		table inet raw {
			chain pre {
				type filter hook prerouting priority raw;
				ip6 daddr fd30::/64 drop
			}
		}
	EOF
}
cfg_nft-count() {
	nft_rules <<-EOF
		table inet count {
			chain forward {
				type filter hook forward priority filter;
				counter
			}
		}
	EOF
}
post_nft-stateful() { post_nft-ct; }
# Loaded with --forward-established (load_flags): the corpus's flows are
# new to conntrack (one way, never assured), so conntrack's verdict sends
# them to the stack, each counted by why.
cfg_nft-stateful-est() { cfg_nft-stateful; }
post_nft-stateful-est() {
	envelope_post '.redirect == 0 and .pass_envelope > 0 and
		.conntrack.pass_new + .conntrack.pass_none + .conntrack.pass_flags > 0'
}
# The corpus's UDP flows established before it is sent, both ways: each put
# in conntrack (conntrack -I) as an assured UDP stream past its start, as
# one is two seconds after its first reply, every other one as begun by the
# server, so that the client's frames are its replies. The chain accepts
# them by its first rule, and silo forwards them with conntrack's verdict;
# what conntrack calls invalid (a wrong checksum) the chain drops, and what
# the stack must answer (TTL 1, options, oversize) goes to it as before.
cfg_nft-conns-est() {
	command -v conntrack >/dev/null || return 77
	cfg_nft-stateful
}
# ct_flows HOW [PROTO]: the corpus's UDP (or TCP) flows put in conntrack
# as assured streams (conntrack -I; TCP ESTABLISHED). HOW "both": every
# other one as begun by the server; "gone": every third deleted after, and
# every third from the second on with a timeout of 1 s. Some cannot be (a
# multicast or broadcast destination): most can.
ct_flows() {
	local how=$1 proto=${2:-udp} src dst sp dp k=0 n=0 t state=()
	ip netns exec "$R" conntrack -F >/dev/null 2>&1
	[[ $proto == tcp ]] && state=(--state ESTABLISHED)
	while read -r _ src dst sp dp; do
		if [[ $how == both ]] && ((k % 2)); then
			set -- -s "$dst" -d "$src" --sport "$dp" --dport "$sp"
		else
			set -- -s "$src" -d "$dst" --sport "$sp" --dport "$dp"
		fi
		t=300
		[[ $how == gone ]] && ((k % 3 == 2)) && t=1
		ip netns exec "$R" conntrack -I -p "$proto" "$@" "${state[@]}" \
			-t "$t" -u SEEN_REPLY,ASSURED >/dev/null 2>&1 &&
			n=$((n + 1))
		[[ $how == gone ]] && ((k % 3 == 1)) &&
			ip netns exec "$R" conntrack -D -p "$proto" "$@" \
				>/dev/null 2>&1
		k=$((k + 1))
	done < <("$FRAMES" tuples "$proto")
	((n > k / 2)) || { echo "conntrack took $n of $k flows"; return 1; }
}
pre_nft-conns-est() { ct_flows both; }
# The same flows, but a third deleted (conntrack -D) and a third expired
# (a timeout of 1 s, and 1.5 s gone) before the corpus comes, and a chain
# that admits no new connection: their frames are new, and dropped by the
# policy. conntrack stays the authority: XDP finds no entry for them
# either (an expired one is not returned) and forwards none of them.
cfg_nft-conns-gone-est() {
	command -v conntrack >/dev/null || return 77
	nft_rules <<-EOF
		table inet fw {
			chain forward {
				type filter hook forward priority filter; policy drop;
				ct state established,related accept
				ct state invalid drop
			}
		}
	EOF
}
pre_nft-conns-gone-est() { ct_flows gone && sleep 1.5; }
post_nft-conns-gone-est() { post_nft-conns-est; }
# The corpus's TCP flows as established connections (every other one begun
# by the server), their window tracking liberal, as silod makes a
# connection XDP forwards: conntrack -I cannot, so frames ct-liberal does,
# in the kernel's runs too. Each pass ends with a FIN on some and an RST on
# others: the next pass's frames of those meet a closing or closed
# connection, which the stack must judge.
cfg_nft-tcp-est() { cfg_nft-conns-est; }
pre_nft-tcp-est() {
	ct_flows both tcp && ip netns exec "$R" "$FRAMES" ct-liberal
}
post_nft-tcp-est() {
	envelope_post '.conntrack.forwarded > 10 and .conntrack.pass_flags > 0' ||
		{ silo --netns "$R" -j stats | jq -c .conntrack; return 1; }
}
# The ruleset changed under the corpus's traffic (frames run --between):
# after the first pass a rule before the established accept (the shape is
# no longer proven: silo stands aside), after the second it is gone again.
# silod hears of each change (NFNLGRP_NFTABLES); the between step waits
# for it, as a ruleset change races the frames in flight anyway. It waits
# 0.6 s: a source sends up to six unroutable frames over the three passes,
# one more than the kernel's ICMP error burst (ip_error(): 5, one more a
# second), so its sixth error must come over a second after its first in
# every run, or it is a matter of timing.
cfg_nft-change-est() { cfg_nft-conns-est; }
pre_nft-change-est() { ct_flows both; }
between_nft-change-est() {
	case $FRAMES_PASS in
	0) ip netns exec "$R" nft insert rule inet fw forward udp dport 7003 drop ;;
	1) ip netns exec "$R" nft delete rule inet fw forward handle "$(
		ip netns exec "$R" nft -a list chain inet fw forward |
			sed -n 's/.*dport 7003 drop # handle \([0-9]*\).*/\1/p')" ;;
	esac && sleep 0.6
}
post_nft-change-est() {
	envelope_post '.conntrack.forwarded > 100 and .pass_envelope > 100' ||
		{ silo --netns "$R" -j stats | jq -c '{pass_envelope, conntrack}'; return 1; }
}
post_nft-conns-est() {
	envelope_post '.conntrack.forwarded > 100 and .conntrack.pass_csum > 0' ||
		{ silo --netns "$R" -j stats | jq -c .conntrack; return 1; }
}
# Masquerade out of the server's port, under the stateful chain. The first
# pass opens the corpus's flows through it, as any client does: conntrack
# binds each to r-s (masq_index). Masquerade keeps a flow's source port
# unless another flow took it; the corpus's flows from port 4000 share
# destinations and ports (a source per frame), and the kernel would pick
# them random ports, different from run to run: they are not masqueraded.
# After the first pass every UDP connection is marked replied and assured
# (frames ct-assure, the NAT kept), as two seconds of replies would: the
# second pass's frames of masqueraded flows are forwarded in XDP, rewritten
# as the NAT hook would (two seconds after a flow's start: UDP's stream
# timeout applies from then on, udp_packet(), and XDP leaves it to the stack
# before). After the second pass the server's prefixes are
# routed out of r-t: the kernel drops a masqueraded packet whose device
# changed and ends its connection (nf_nat_oif_changed()), which XDP must
# leave to it; the flow's next packet opens a new one, masqueraded out of
# r-t. 0.6 s after each change, for the ICMP error burst (nft-change-est).
cfg_nft-masq-est() {
	command -v conntrack >/dev/null || return 77
	cfg_nft-stateful && nft_rules <<-EOF
		table inet masq {
			chain post {
				type nat hook postrouting priority srcnat;
				oifname "r-s" meta l4proto { tcp, udp } th sport != 4000 masquerade
			}
		}
	EOF
}
between_nft-masq-est() {
	case $FRAMES_PASS in
	0) ip netns exec "$R" "$FRAMES" ct-assure && sleep 2 ;;
	1) ip -n "$R" route replace 10.20.0.0/16 via 10.3.0.2 dev r-t &&
		ip -n "$R" -6 route replace fd20::/64 via fd03::2 dev r-t ;;
	esac && sleep 0.6
}
post_nft-masq-est() {
	envelope_post '.conntrack.forwarded > 50 and .conntrack.pass_nat > 10' ||
		{ silo --netns "$R" -j stats | jq -c .conntrack; return 1; }
}
cfg_nft-dnat-est() {
	cfg_nft-dnat && nft_rules <<-EOF
		table inet fw {
			chain forward {
				type filter hook forward priority filter;
				ct state established,related accept
			}
		}
	EOF
}
post_nft-dnat-est() { post_nft-stateful-est; }
# Not the established shape: silo stands aside as without the opt-in.
cfg_nft-before-est() {
	nft_rules <<-EOF
		table inet fw {
			chain forward {
				type filter hook forward priority filter; policy drop;
				ip6 daddr fd30::/64 drop
				ct state established,related accept
				iifname "r-c" accept
			}
		}
	EOF
}
post_nft-before-est() {
	envelope_post '.redirect == 0 and .pass_envelope > 0 and .conntrack.forwarded == 0'
}
cfg_nft-counters-est() { cfg_nft-counters; }
post_nft-counters-est() { post_nft-before-est; }
post_nft-dnat() { envelope_post '.pass_envelope > 0'; }
post_nft-pre() { post_nft-ct; }
post_nft-count() { post_nft-ct; }

# Steering the frames for the router's addresses (port 5000, the corpus's
# default) to another CPU must not change what the router answers: port
# unreachable, RST, echo replies. Only where silo is loaded: the kernel's
# runs have nothing to steer.
cfg_service() {
	[[ -e $PIN_ROOT/netns/$R/meta ]] || return 0
	local cpus="0-$(($(nproc) - 1))" p
	for p in udp tcp; do
		silo --netns "$R" service add --proto $p --port 5000 \
			--cpus "$cpus" || return 1
	done
}

post_service() {
	local steered
	steered=$(silo --netns "$R" -j service show |
		jq '[.services[].stats.steered] | add')
	((steered > 0)) || {
		echo "no frame was steered: $(silo --netns "$R" service show)"
		return 1
	}
}

cfg_xfrm() {
	r xfrm policy add dir fwd src 0.0.0.0/0 dst 10.30.0.0/16 action block &&
		r xfrm policy add dir fwd src ::/0 dst fd30::/64 action block
}

cfg_bridge() {
	r link add br0 address $RCMAC type bridge &&
		r addr del 10.1.0.1/24 dev r-c &&
		r addr del fd01::1/64 dev r-c &&
		r link set r-c master br0 &&
		r link set br0 up &&
		r addr add 10.1.0.1/24 dev br0 &&
		r addr add fd01::1/64 dev br0 nodad || return 1
	rsys net.ipv4.conf.br0.rp_filter=0
	neighbours br0
	r route replace 10.10.0.0/16 via 10.1.0.2 dev br0
}

# The client's egress puts a VLAN tag beside each frame's bytes
# (bpf/tests/test_vlan.bpf.c): the router's XDP program sees an untagged frame,
# its stack VLAN 100 (IPv4; no such device here: dropped) or a priority tag
# (VLAN 0, the others: untagged), as with a NIC that strips tags. Only a
# program bound to the device can ask the driver for the tag.
cfg_vlan-hidden() {
	ip netns exec "$C" tc qdisc add dev eth0 clsact &&
		ip netns exec "$C" tc filter add dev eth0 egress bpf \
			direct-action obj "$BUILD/bpf/test_vlan.bpf.o" sec tc
}

# The second pass tagged: the first's flows are the front's by then.
cfg_vlan-hidden-second() {
	ip netns exec "$C" tc qdisc add dev eth0 clsact &&
		ip netns exec "$C" tc filter add dev eth0 egress bpf \
			direct-action obj "$BUILD/bpf/test_vlan_second.bpf.o" sec tc
}
post_vlan-hidden-second() {
	[[ ${DIFF_XDP_MODE:-native} == native && -n $silod_pid ]] || return 0
	silo --netns "$R" -j stats |
		jq -e '.pass_vlan > 0 and .redirect > 0' \
			>/dev/null || {
		echo "want frames forwarded and the tagged ones passed: $(silo --netns "$R" -j stats | jq -c '{rx, pass_vlan, redirect}')"
		return 1
	}
}

# Every frame carried a tag beside it: in native mode, where the program
# is bound to the device and asks veth for the tag, each went to the stack.
post_vlan-hidden() {
	[[ ${DIFF_XDP_MODE:-native} == native ]] || return 0
	silo --netns "$R" -j stats | jq -e '.rx > 0 and .pass_vlan == .rx' \
		>/dev/null || {
		echo "not every frame was passed as tagged: $(silo --netns "$R" -j stats | jq -c '{rx, pass_vlan, redirect}')"
		return 1
	}
}

# A tc firewall: XDP forwarding would skip it, so silo stands aside (the
# envelope's tc condition) and the kernel drops what the filter drops.
tc_drop() { # DEV DIR
	ip netns exec "$R" tc qdisc add dev "$1" clsact &&
		ip netns exec "$R" tc filter add dev "$1" "$2" bpf direct-action \
			obj "$BUILD/bpf/test_tc_drop.bpf.o" sec tc
}
cfg_tc-ingress() { tc_drop r-c ingress; }
cfg_tc-egress() { tc_drop r-t egress; }

# The router's conntrack table, a line per entry ("conntrack - ENTRY"):
# each connection's tuples, state and flags, but its timeout (XDP refreshes
# it only when it would move by a second) and its reference count. A
# connection XDP forwards in silo's run must end as the kernel leaves it:
# closed by the FIN or RST the stack saw, assured, NATed the same.
ct_table() {
	command -v conntrack >/dev/null || return 0
	ip netns exec "$R" conntrack -L 2>/dev/null |
		sed -E 's/^([a-z0-9]+ +[0-9]+ +)[0-9]+ /\1/; s/ use=[0-9]+//; s/  +/ /g; s/^/conntrack\t-\t/'
}

# capture CFG MODE: sends the corpus, captures every port, sorted.
capture() {
	local cfg=$1 mode=$2 wait=0
	[[ $cfg == neigh-* ]] && wait=$NEIGH_WAIT_MS
	# pre_NAME, when defined, must do what it says: else the run fails.
	if declare -F "pre_$cfg" >/dev/null &&
		! "pre_$cfg" >"$TMP/pre" 2>&1; then
		echo "pre_$cfg failed: $(head -c 300 "$TMP/pre")" \
			>"$TMP/$cfg.$mode.err"
		return 1
	fi
	# between_NAME, when defined: run between passes (three of them).
	local between=()
	if declare -F "between_$cfg" >/dev/null; then
		{
			declare -p R FRAMES
			declare -f "between_$cfg"
			echo "between_$cfg"
		} >"$TMP/between.sh"
		between=(--passes 3 --between "bash $TMP/between.sh")
	fi
	"$FRAMES" run --rmac $RCMAC --cmac $CMAC --tx "$C:eth0" \
		--cap "client=$C:eth0" --cap "server=$S:eth0" \
		--cap "server2=$T:eth0" --wait-ms "$wait" --offload \
		"${between[@]}" ${DIFF_ONLY:+--only "$DIFF_ONLY"} \
		2>"$TMP/$cfg.$mode.err" | sort >"$TMP/$cfg.$mode"
	[[ ${PIPESTATUS[0]} == 0 ]] || return 1
	# Behind a firewall, conntrack's table as the corpus left it is
	# compared too (ct_table).
	if [[ $cfg == nft* ]]; then
		ct_table >>"$TMP/$cfg.$mode" &&
			sort -o "$TMP/$cfg.$mode" "$TMP/$cfg.$mode" || return 1
	fi
	# post_NAME, when defined, checks silo's runs did what CFG is about.
	if [[ $mode != kernel* ]] && declare -F "post_$cfg" >/dev/null; then
		"post_$cfg" >>"$TMP/$cfg.$mode.err" 2>&1 || return 1
	fi
}

# compare CFG MODE: the silo run against the kernel's.
compare() {
	local cfg=$1 mode=$2 k="$TMP/$1.kernel" s="$TMP/$1.$2" n
	comm -3 "$k" "$s" >"$TMP/diff"
	n=$(wc -l <"$TMP/diff")
	if ((n == 0)); then
		ok "differential/$cfg/$mode"
		return
	fi
	not_ok "differential/$cfg/$mode" "$n frames differ (captured: kernel $(wc -l <"$k"), silo $(wc -l <"$s"))"
	# comm: "kernel only" lines start in column 1, "silo only" after a
	# tab. Per port and frame: what each side sent, and where the bytes
	# part when both did.
	awk -F'\t' -v max="${DIFF_SHOW:-8}" '
		$1 == "" { key = $2 " " $3; s[key] = s[key] " " $4; ns[key]++ }
		$1 != "" { key = $1 " " $2; k[key] = k[key] " " $3; nk[key]++ }
		!(key in seen) { seen[key] = 1; order[n++] = key }
		END {
			for (i = 0; i < n && i < max; i++) {
				key = order[i]
				split(k[key], ka, " "); split(s[key], sa, " ")
				if (nk[key] && ns[key]) {
					a = ka[1]; b = sa[1]
					for (j = 1; j <= length(a) && substr(a, j, 2) == substr(b, j, 2); j += 2);
					from = j > 17 ? j - 16 : 1
					printf "#   %s: kernel %d, silo %d; first bytes differ at %d (lengths %d, %d)\n", key, nk[key], ns[key], (j - 1) / 2, length(a) / 2, length(b) / 2
					printf "#     kernel @%d: %s\n", (from - 1) / 2, substr(a, from, 64)
					printf "#     silo   @%d: %s\n", (from - 1) / 2, substr(b, from, 64)
				} else if (nk[key]) {
					printf "#   %s: kernel %d, silo 0: %s\n", key, nk[key], substr(ka[1], 1, 100)
				} else {
					printf "#   %s: kernel 0, silo %d: %s\n", key, ns[key], substr(sa[1], 1, 100)
				}
			}
			if (n > max)
				printf "#   ... %d more frames differ\n", n - max
		}
	' "$TMP/diff"
}

wait_silod() {
	local _
	for _ in $(seq 100); do
		silo --netns "$R" -j daemon status 2>/dev/null |
			jq -e '.running and .cache_trusted' >/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# topology CFG: a fresh, unconfigured router.
topology() {
	teardown
	if ! topo_up >"$TMP/setup" 2>&1; then
		not_ok "differential/$1" "topology: $(head -c 300 "$TMP/setup")"
		return 1
	fi
}

# configure CFG: the router configured as CFG; 77 when not supported here.
configure() {
	local cfg=$1 rc
	"cfg_$cfg" >"$TMP/setup" 2>&1
	rc=$?
	if ((rc == 77)); then
		echo "skip - differential/$cfg: not supported here: $(head -c 200 "$TMP/setup")"
		return 77
	elif ((rc != 0)); then
		not_ok "differential/$cfg" "setup: $(head -c 300 "$TMP/setup")"
		return 1
	fi
}

# Each run gets a router of its own: the kernel keeps state per source
# (ICMP error rate limits with fixed constants, inet_peer) and per neighbour
# that a run would leave to the next. silo is loaded (and silod started)
# on the bare router and the configuration applied after: silo must follow
# every change as it happens, firewall rules and sysctls included (silod
# polls what the kernel does not announce once a second). Without silod,
# silo stands aside and the router is the kernel alone.
kernel_run() {
	local cfg=$1
	topology "$cfg" && configure "$cfg" || return
	if ! capture "$cfg" kernel; then
		not_ok "differential/$cfg" "the kernel run: $(cat "$TMP/$cfg.kernel.err")"
		return 1
	elif [[ ! -s $TMP/$cfg.kernel ]]; then
		not_ok "differential/$cfg" "the kernel run captured nothing: $(cat "$TMP/$cfg.kernel.err")"
		return 1
	fi
}

# The load's flags a configuration asks for: -est, established connections.
load_flags() { [[ $1 == *-est ]] && echo --forward-established; }

# silo_run CFG MODE: a capture of MODE (kernel2, no-silod, silod).
silo_run() {
	local cfg=$1 mode=$2 m
	topology "$cfg" || return
	if [[ $mode != kernel2 ]]; then
		for m in r-c r-s r-t; do
			# shellcheck disable=SC2046 # a flag or none
			if ! silo --netns "$R" xdp load "$m" --forward $(load_flags "$cfg") ${DIFF_XDP_MODE:+--mode "$DIFF_XDP_MODE"} >"$TMP/load" 2>&1; then
				not_ok "differential/$cfg/$mode" "load on $m: $(head -c 300 "$TMP/load")"
				return 1
			fi
		done
	fi
	if [[ $mode == silod ]]; then
		# Changes between passes must be heard of, not polled.
		local poll=
		declare -F "between_$cfg" >/dev/null &&
			poll=SILOD_TEST_ENVELOPE_POLL_MS=600000
		env ${poll:+"$poll"} "$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q &
		silod_pid=$!
		if ! wait_silod; then
			not_ok "differential/$cfg/silod" "silod did not start: $(silo --netns "$R" daemon status 2>&1 | head -c 300)"
			return 1
		fi
	fi
	configure "$cfg" || return
	# silod's poll of what comes without notification
	[[ $mode == silod ]] && sleep 1.2
	if ! capture "$cfg" "$mode"; then
		not_ok "differential/$cfg/$mode" "$(cat "$TMP/$cfg.$mode.err")"
		return 1
	fi
}

# Each run gets a router of its own: the kernel keeps state per source
# (ICMP error rate limits with fixed constants, inet_peer) and per neighbour
# that a run would leave to the next. silo is loaded (and silod started)
# on the bare router and the configuration applied after: silo must follow
# every change as it happens, firewall rules and sysctls included (silod
# polls what the kernel does not announce once a second). Without silod,
# silo stands aside and the router is the kernel alone.
#
# A difference is run again, the kernel and silo both, and fails only when
# it is seen twice: on this loaded machine the kernel's own answers (ICMP
# errors, unresolved neighbour queues) can depend on timing, while every
# difference silo makes is made again. DIFF_SELFCHECK shows the kernel's
# variation against itself.
run_config() {
	local cfg=$1 mode modes=(no-silod silod)
	kernel_run "$cfg" || return
	[[ -n ${DIFF_SELFCHECK:-} ]] && modes=(kernel2 "${modes[@]}")
	for mode in "${modes[@]}"; do
		silo_run "$cfg" "$mode" || continue
		if [[ -n $(comm -3 "$TMP/$cfg.kernel" "$TMP/$cfg.$mode") ]]; then
			echo "# differential/$cfg/$mode: $(comm -3 "$TMP/$cfg.kernel" "$TMP/$cfg.$mode" | wc -l) frames differ: running both again"
			kernel_run "$cfg" && silo_run "$cfg" "$mode" || continue
		fi
		compare "$cfg" "$mode"
	done
	if [[ -n ${DIFF_KEEP:-} ]]; then
		mkdir -p "$DIFF_KEEP" && cp "$TMP/$cfg".* "$DIFF_KEEP/"
	fi
}

IFS=", " read -ra selected <<<"${DIFF_CONFIGS:-$*}"
if ((${#selected[@]} == 0)); then
	for ((i = 0; i < ${#CONFIGS[@]}; i += 2)); do
		selected+=("${CONFIGS[i]}")
	done
fi
for cfg in "${selected[@]}"; do
	if ! declare -F "cfg_$cfg" >/dev/null; then
		not_ok "differential/$cfg" "no such configuration (tests/differential.sh --list)"
		continue
	fi
	run_config "$cfg"
done
teardown
