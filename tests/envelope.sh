# SPDX-License-Identifier: GPL-2.0
# The offload envelope: a forwarding load is refused while an nftables chain
# sees forwarded packets (and nothing is left behind), accepted with
# --allow-firewall-bypass (a warning, the override in status); tc filters and
# shaping qdiscs count; with silod running, nftables chains, xfrm policies,
# tc filters, IPv6 forwarding off, a multipath hash on inner headers and
# iptables-legacy tables set genid.outside for
# their family and clearing them clears it; and end to end, an nftables drop
# rule added after the load wins over XDP forwarding. A ruleset that changes
# nothing (Debian's default: empty chains, policy accept) stays inside; a
# rule, a drop policy, chain counters or conntrack in use (an input rule's
# `ct`, a nat chain, a ct helper, a `ct count` in a set update) do not.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

A="${NS}env"
ADIR="$PIN_ROOT/netns/$A"
silod_pid=
cleanup() {
	[[ -n $silod_pid ]] && kill "$silod_pid" 2>/dev/null &&
		wait "$silod_pid" 2>/dev/null
	silod_pid=
	silo --netns "$A" xdp unload a0 >/dev/null 2>&1
	silo --netns "$A" xdp unload a1 >/dev/null 2>&1
	ip netns del "$A" 2>/dev/null
	lab_down "${NS}enl"
}
trap 'cleanup; rm -rf "$TMP"' EXIT

if ! command -v nft >/dev/null; then
	echo "skip - envelope: nft is not installed (tools/setup.sh installs nftables)"
	exit 0
fi

ip netns add "$A" || { not_ok "namespace" "cannot make $A"; exit 1; }
ip -n "$A" link add a0 type veth peer name a1
ip -n "$A" link set a0 up
ip -n "$A" link set a1 up
in_a() { ip netns exec "$A" "$@"; }
in_a sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1

# envq FAMILY FIELD: the names in .envelope.FAMILY.FIELD, space separated.
envq() {
	silo --netns "$A" -j xdp status 2>/dev/null |
		jq -r ".envelope.$1.$2 | join(\" \")"
}
# envd: the condition named in detail.
envd() { silo --netns "$A" -j xdp status 2>/dev/null | jq -r .envelope.detail; }
# wait_env FAMILY FIELD WANT: until envq says WANT (5 s at most: a loaded
# machine); prints what it last saw.
wait_env() {
	local got
	for _ in $(seq 50); do
		got=$(envq "$1" "$2")
		[[ $got == "$3" ]] && break
		sleep 0.1
	done
	echo "$got"
}
# is NAME GOT WANT
is() { [[ $2 == "$3" ]] && ok "$1" || not_ok "$1" "got '$2', want '$3'"; }
genid() { silo --netns "$A" -j xdp status | jq .genid; }

# Refused, with nothing left behind.
in_a nft add table inet filter
in_a nft add chain inet filter forward '{ type filter hook forward priority 0; }'
in_a nft add rule inet filter forward counter
expect "forwarding load refused by an nft forward chain" 1 \
	"error: nftables: IPv4 and IPv6: .*--allow-firewall-bypass" \
	silo --netns "$A" xdp load a0 --forward --mode skb
[[ ! -e $ADIR ]] && ok "a refused load leaves no pins" ||
	not_ok "a refused load leaves no pins" "$(ls "$ADIR")"
n=$(ip -n "$A" link show | grep -c 'prog/xdp')
[[ $n == 0 ]] && ok "a refused load attaches nothing" ||
	not_ok "a refused load attaches nothing" "$n devices with XDP"
is "status evaluates live without pins" "$(envq ipv4 holds)" nftables

# Input chains never see forwarded packets.
in_a nft flush ruleset
in_a nft add table ip filter
in_a nft add chain ip filter input '{ type filter hook input priority 0; }'
is "an input chain does not count" "$(envq ipv4 holds)" ""
in_a nft add chain ip filter post '{ type nat hook postrouting priority 100; }'
is "an ip postrouting chain: IPv4 only" "$(envq ipv4 holds)/$(envq ipv6 holds)" \
	"nftables/"
in_a nft flush ruleset
in_a nft add table netdev t
in_a nft add chain netdev t in '{ type filter hook ingress device a0 priority 0; }'
in_a nft add rule netdev t in counter
is "a netdev chain: both families" "$(envq ipv4 holds)/$(envq ipv6 holds)" \
	"nftables/nftables"
in_a nft flush ruleset

# Prerouting sees forwarded packets before the route: a DNAT (ip), a drop
# (ip6), a mark (inet), each on its own.
in_a nft add table ip nat
in_a nft add chain ip nat pre '{ type nat hook prerouting priority -100; }'
in_a nft add rule ip nat pre tcp dport 80 dnat to 10.9.9.9
is "an ip prerouting DNAT: IPv4 only" "$(envq ipv4 holds)/$(envq ipv6 holds)" \
	"nftables/"
in_a nft flush ruleset
in_a nft add table ip6 raw
in_a nft add chain ip6 raw pre '{ type filter hook prerouting priority -300; }'
in_a nft add rule ip6 raw pre udp dport 7000 drop
is "an ip6 prerouting drop: IPv6 only" "$(envq ipv4 holds)/$(envq ipv6 holds)" \
	"/nftables"
in_a nft flush ruleset
in_a nft add table inet mangle
in_a nft add chain inet mangle pre '{ type filter hook prerouting priority -150; }'
in_a nft add rule inet mangle pre meta mark set 1
is "an inet prerouting mark: both families" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/nftables"
in_a nft flush ruleset
is "prerouting chains gone: nothing holds" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "/"

# A chain that provably changes nothing stays inside: no rule, policy
# accept, no counters, not nat. Conntrack used by anything in the namespace
# puts its family outside on its own. Debian's /etc/nftables.conf first.
in_a nft -f - <<'EOF'
#!/usr/sbin/nft -f

flush ruleset

table inet filter {
	chain input {
		type filter hook input priority filter;
	}
	chain forward {
		type filter hook forward priority filter;
	}
	chain output {
		type filter hook output priority filter;
	}
}
EOF
is "Debian's default ruleset: inside" "$(envq ipv4 holds)/$(envq ipv6 holds)" "/"
in_a nft add chain inet filter pre '{ type filter hook prerouting priority -300; }'
in_a nft add table netdev t
in_a nft add chain netdev t in '{ type filter hook ingress device a0 priority 0; }'
is "empty prerouting and netdev chains: inside" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "/"
in_a nft delete table netdev t
in_a nft delete chain inet filter pre
in_a nft add rule inet filter input ct state established,related accept
is "conntrack registered by an input rule: both outside" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/nftables"
is "status names the rule that registered conntrack" "$(envd)" \
	"nftables uses conntrack ('ct' in 'inet filter', chain input), whose hooks see every forwarded packet"
in_a nft delete chain inet filter forward
is "conntrack without a forward chain: still outside" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/nftables"
in_a nft add chain inet filter forward '{ type filter hook forward priority 0; }'
in_a nft flush chain inet filter input
is "the input rule gone: inside" "$(envq ipv4 holds)/$(envq ipv6 holds)" "/"
in_a nft add table ip nat
in_a nft add chain ip nat out '{ type nat hook output priority -100; }'
is "an ip nat chain (output): conntrack for IPv4 only" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/"
in_a nft delete table ip nat
in_a nft add ct helper inet filter ftp '{ type "ftp" protocol tcp; }'
is "a ct helper object: both outside" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/nftables"
in_a nft delete ct helper inet filter ftp
in_a nft add chain inet filter jumped
in_a nft add rule inet filter jumped ct mark set 1
is "a ct rule in a regular chain: both outside" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/nftables"
in_a nft delete chain inet filter jumped
in_a nft add set inet filter seen '{ type ipv4_addr; flags dynamic; }'
in_a nft add rule inet filter input update @seen '{ ip saddr ct count over 2 }'
is "ct count in a set update (input): both outside" \
	"$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/nftables"
in_a nft flush chain inet filter input
in_a nft delete set inet filter seen
is "inside again" "$(envq ipv4 holds)/$(envq ipv6 holds)" "/"
in_a nft add rule inet filter forward accept
is "one rule in the forward chain: outside, named" "$(envd)" \
	"nftables chain 'inet filter forward' (hook forward): 1 rule"
in_a nft flush chain inet filter forward
in_a nft chain inet filter forward '{ policy drop; }'
is "policy drop: outside, named" "$(envd)" \
	"nftables chain 'inet filter forward' (hook forward): policy drop"
in_a nft flush ruleset
in_a iptables-nft -P FORWARD ACCEPT
is "iptables-nft's FORWARD with its counters: outside" "$(envd)" \
	"nftables chain 'ip filter FORWARD' (hook forward): keeps counters"
is "iptables-nft's FORWARD: IPv4 only" "$(envq ipv4 holds)/$(envq ipv6 holds)" "nftables/"
in_a nft flush ruleset

# tc: XDP forwarding skips it. A filter on any device, or a qdisc that
# shapes, puts both families outside.
TC_DROP="$BUILD/bpf/test_tc_drop.bpf.o"
in_a tc qdisc add dev a0 clsact
is "a clsact qdisc without filters does not count" "$(envq ipv4 holds)" ""
in_a tc filter add dev a0 ingress bpf direct-action obj "$TC_DROP" sec tc
is "a tc filter: both families" "$(envq ipv4 holds)/$(envq ipv6 holds)" \
	"tc/tc"
expect "forwarding load refused by a tc filter" 1 \
	"error: tc: IPv4 and IPv6: .*--allow-firewall-bypass" \
	silo --netns "$A" xdp load a0 --forward --mode skb
in_a tc qdisc del dev a0 clsact
in_a tc qdisc add dev a1 root tbf rate 1mbit burst 10k latency 10ms
is "a shaping qdisc: both families" "$(envq ipv4 holds)/$(envq ipv6 holds)" \
	"tc/tc"
in_a tc qdisc del dev a1 root
is "tc gone: nothing holds" "$(envq ipv4 holds)/$(envq ipv6 holds)" "/"

# Accepted with the bypass: a warning, and the override shown.
in_a nft add table inet filter
in_a nft add chain inet filter forward '{ type filter hook forward priority 0; }'
in_a nft add rule inet filter forward counter
expect "--allow-firewall-bypass loads, with a warning" 0 \
	"warning: .*allow-firewall-bypass.*skips nftables" \
	silo --netns "$A" xdp load a0 --forward --mode skb --allow-firewall-bypass
is "status: override" "$(silo --netns "$A" -j xdp status |
	jq -r '.envelope.override | join(" ")')" "nftables iptables_legacy tc"
is "status: bypassed, so inside" "$(envq ipv4 outside)/$(envq ipv4 holds)" \
	"/nftables"
expect "status warns of the bypass" 0 "warning: firewall bypass on" \
	silo --netns "$A" xdp status
expect "a replace without the flag is refused" 1 "nftables" \
	silo --netns "$A" xdp load a0 --forward --mode skb --replace
is "a refused replace keeps the override" "$(silo --netns "$A" -j xdp status |
	jq -r '.envelope.override | join(" ")')" "nftables iptables_legacy tc"
expect "the bypass needs --forward" 2 "add --forward" \
	silo --netns "$A" xdp load a0 --mode skb --allow-firewall-bypass
check "unload" silo --netns "$A" xdp unload a0
in_a nft flush ruleset

# start_silod [ENV=VALUE...]: silod for $A, waited for.
start_silod() {
	env "$@" "$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$A" -q \
		2>>"$TMP/silod.log" &
	silod_pid=$!
	for _ in $(seq 100); do
		silo --netns "$A" -j daemon status 2>/dev/null |
			jq -e .running >/dev/null && break
		sleep 0.05
	done
}
stop_silod() {
	kill "$silod_pid"
	wait "$silod_pid"
	silod_pid=
}

# silod keeps it current. nftables and xfrm by their notifications alone:
# its poll is made to wait ten minutes here.
check "load --forward, nothing outside" silo --netns "$A" xdp load a0 \
	--forward --mode skb
start_silod SILOD_TEST_ENVELOPE_POLL_MS=600000
is "inside at start" "$(envq ipv4 outside)/$(envq ipv6 outside)" "/"

in_a nft add table inet filter
in_a nft add chain inet filter forward '{ type filter hook forward priority 0; }'
in_a nft add rule inet filter forward counter
is "an nft forward chain added after the load: outside" \
	"$(wait_env ipv4 outside nftables)/$(envq ipv6 outside)" "nftables/nftables"
v=$(bpftool -j map dump pinned "$ADIR/genid" |
	jq -c '.[0].formatted.value.outside')
is "the pinned genid says it" "$v" "[1,1]"
in_a nft delete table inet filter
is "the chain removed: inside" "$(wait_env ipv4 outside "")/$(envq ipv6 outside)" "/"
in_a nft add table inet filter
in_a nft add chain inet filter forward '{ type filter hook forward priority 0; }'
sleep 0.3
is "an empty forward chain: still inside" \
	"$(envq ipv4 outside)/$(envq ipv6 outside)" "/"
in_a nft add rule inet filter forward ip6 daddr fd09::/16 drop
is "a rule added to it: outside (its notification alone)" \
	"$(wait_env ipv4 outside nftables)/$(envq ipv6 outside)" "nftables/nftables"
in_a nft delete table inet filter
is "the table removed: inside" "$(wait_env ipv4 outside "")/$(envq ipv6 outside)" "/"

in_a ip xfrm policy add dir fwd action block src 10.0.0.0/8 dst 10.9.0.0/16
is "xfrm fwd policy: IPv4 outside" \
	"$(wait_env ipv4 outside xfrm)/$(envq ipv6 outside)" "xfrm/"
in_a ip xfrm policy flush
is "xfrm policies flushed: inside" "$(wait_env ipv4 outside "")" ""
in_a ip xfrm policy add dir out action block src ::/0 dst fd09::/16
is "xfrm out policy: IPv6 outside" \
	"$(wait_env ipv6 outside xfrm)/$(envq ipv4 outside)" "xfrm/"
in_a ip xfrm policy flush
is "xfrm policies flushed again: inside" "$(wait_env ipv6 outside "")" ""
# bpf_fib_lookup's IPv6 rule walk does not suppress (its IPv4 one does).
in_a ip -6 rule add lookup main suppress_prefixlength 0 pref 50
is "an IPv6 rule suppressing results: IPv6 outside" \
	"$(wait_env ipv6 outside rule_suppress)/$(envq ipv4 outside)" "rule_suppress/"
in_a ip -6 rule del pref 50
is "the rule removed: inside" "$(wait_env ipv6 outside "")" ""
in_a ip rule add lookup main suppress_prefixlength 0 pref 50
sleep 0.3
is "an IPv4 rule suppressing results: inside" "$(envq ipv4 outside)" ""
in_a ip rule del pref 50
in_a tc qdisc add dev a1 clsact
in_a tc filter add dev a1 egress bpf direct-action obj "$TC_DROP" sec tc
is "a tc filter added after the load: outside" \
	"$(wait_env ipv4 outside tc)/$(envq ipv6 outside)" "tc/tc"
in_a tc qdisc del dev a1 clsact
is "the filter removed: inside" \
	"$(wait_env ipv4 outside "")/$(envq ipv6 outside)" "/"
in_a sysctl -qw net.ipv6.conf.all.forwarding=0
sleep 1.5
is "without the poll, a sysctl change is not seen" "$(envq ipv6 outside)" ""
in_a sysctl -qw net.ipv6.conf.all.forwarding=1
stop_silod

# The rest notifies nothing: the one-second poll.
start_silod

in_a sysctl -qw net.ipv6.conf.all.forwarding=0
is "IPv6 forwarding off: IPv6 outside only (polled)" \
	"$(wait_env ipv6 outside forwarding_off)/$(envq ipv4 outside)" \
	"forwarding_off/"
in_a sysctl -qw net.ipv6.conf.all.forwarding=1
is "IPv6 forwarding on again: inside" "$(wait_env ipv6 outside "")" ""

if in_a sysctl -qw net.ipv4.fib_multipath_hash_policy=3 \
	net.ipv4.fib_multipath_hash_fields=0x0037 2>/dev/null; then
	sleep 1.5
	is "custom multipath hash on outer fields: inside" \
		"$(envq ipv4 outside)" ""
	in_a sysctl -qw net.ipv4.fib_multipath_hash_fields=0x0043
	is "custom multipath hash on inner fields: IPv4 outside" \
		"$(wait_env ipv4 outside mpath_hash)/$(envq ipv6 outside)" \
		"mpath_hash/"
	in_a sysctl -qw net.ipv4.fib_multipath_hash_policy=0
	is "multipath hash policy 0: inside" "$(wait_env ipv4 outside "")" ""
else
	echo "skip - multipath hash: no net.ipv4.fib_multipath_hash_fields"
fi

# Without silod, status still says what is live, and that the map lags.
stop_silod
in_a nft add table ip filter
in_a nft add chain ip filter forward '{ type filter hook forward priority 0; }'
in_a nft add rule ip filter forward counter
expect "without silod, status says the data path's view lags" 0 \
	"IPv4 view differs.*silod is not running" silo --netns "$A" xdp status
is "json: not current" "$(silo --netns "$A" -j xdp status |
	jq -c '[.envelope.ipv4.current, .envelope.ipv6.current]')" "[false,true]"
# Any load writes the envelope, and a change of outside bumps genid.
g0=$(genid)
check "a load without --forward is not refused" silo --netns "$A" xdp load a1 \
	--mode skb
is "it wrote outside" "$(envq ipv4 outside)/$(silo --netns "$A" -j xdp status |
	jq .envelope.ipv4.current)" "nftables/true"
(($(genid) > g0)) && ok "genid bumped when outside changed" ||
	not_ok "genid bumped when outside changed" "$g0 -> $(genid)"
check "unload a1" silo --netns "$A" xdp unload a1
in_a nft flush ruleset

# iptables-legacy last: its table stays registered once made.
if command -v iptables-legacy >/dev/null; then
	start_silod
	in_a iptables-legacy -A FORWARD -j ACCEPT
	is "an iptables-legacy table: IPv4 outside (polled)" \
		"$(wait_env ipv4 outside iptables_legacy)/$(envq ipv6 outside)" \
		"iptables_legacy/"
else
	echo "skip - iptables-legacy: not installed (tools/setup.sh installs iptables)"
fi
cleanup

# End to end, through the data path's envelope check (genid.outside != 0:
# XDP_PASS, counted as pass_envelope): without it XDP forwards past the rule.
P="${NS}enl"
R="$P-router"
lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }
rsilo() { silo --netns "$R" "$@"; }
check "lab: load r-c --forward" rsilo xdp load r-c --forward
check "lab: load r-s --forward" rsilo xdp load r-s --forward
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q 2>>"$TMP/silod.log" &
silod_pid=$!

udp() { # udp COUNT: prints how many datagrams arrived
	ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count "$1" \
		--timeout 2 >"$TMP/sink" 2>/dev/null &
	local sink=$!
	sleep 0.3
	ip netns exec "$P-client" "$TRAFFIC" udp-send 10.2.0.2 7000 \
		--count "$1" --gap-us 100 >/dev/null
	wait "$sink"
	jq .datagrams "$TMP/sink"
}
rstat() { rsilo -j stats | jq ".$1"; }
is "lab: forwarded before the rule" "$(udp 200)" 200
ip netns exec "$R" nft add table inet f
ip netns exec "$R" nft add chain inet f fw \
	'{ type filter hook forward priority 0; policy accept; }'
ip netns exec "$R" nft add rule inet f fw udp dport 7000 drop
for _ in $(seq 50); do
	[[ $(rsilo -j xdp status | jq -r '.envelope.ipv4.outside | join(" ")') == nftables ]] &&
		break
	sleep 0.1
done
before=$(rstat pass_envelope)
got=$(udp 200)
is "lab: an nft drop rule added after the load wins" \
	"$got" 0
((${got:-0} == 0 && $(rstat pass_envelope) - before >= 200)) &&
	ok "lab: pass_envelope counts them" ||
	not_ok "lab: pass_envelope counts them" \
		"$(($(rstat pass_envelope) - before)) of 200"
ip netns exec "$R" nft delete table inet f
for _ in $(seq 50); do
	[[ $(rsilo -j xdp status | jq -r '.envelope.ipv4.outside | join(" ")') == "" ]] &&
		break
	sleep 0.1
done
is "lab: forwarded again once the rule is gone" "$(udp 200)" 200
kill "$silod_pid"
wait "$silod_pid"
silod_pid=
rsilo xdp unload r-c >/dev/null
rsilo xdp unload r-s >/dev/null
if grep -q 'error' "$TMP/silod.log"; then
	not_ok "silod logged no error" "$(head -c 300 "$TMP/silod.log")"
else
	ok "silod logged no error"
fi
