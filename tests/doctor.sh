# SPDX-License-Identifier: GPL-2.0
# silo doctor: on a fake /proc and /sys (--root) for what veth cannot show
# (IRQs, NUMA nodes, irqbalance, RSS tables), and live on veth with several
# queues (RPS, XPS), the envelope as the data path sees it, and reuseport
# readers on their slots' CPUs.
. "$TESTS_DIR/lib.sh"

# result CHECK DETAIL_REGEX: the result of the check whose detail matches.
result() {
	jq -r --arg c "$1" --arg d "$2" \
		'[.checks[] | select(.check == $c and (.detail | test($d))) | .result] | join(",")' \
		"$TMP/doc"
}
is() { # NAME WANT GOT
	[[ $3 == "$2" ]] && ok "$1" || not_ok "$1" "got '$3', want '$2'"
}

F="$TMP/root"
mkdir -p "$F"/proc/irq/{40,41,43} "$F/proc/123" "$F/sys/class/net/eth9/device" \
	"$F"/sys/class/net/eth9/queues/{rx-0,rx-1,rx-2} \
	"$F/sys/devices/system/node/node1"
cat >"$F/proc/interrupts" <<'EOT'
           CPU0       CPU1
  40:        100          0  PCI-MSI 1  edge      eth9-TxRx-0
  41:          0        200  PCI-MSI 2  edge      eth9-TxRx-1
  42:          0        200  PCI-MSI 3  edge      eth90-TxRx-1
  43:          0        200  PCI-MSI 4  edge      eth9-TxRx-2
EOT
echo 2 >"$F/proc/irq/40/smp_affinity_list"   # one CPU, off the node
echo 4-7 >"$F/proc/irq/41/smp_affinity_list" # several CPUs
echo 5 >"$F/proc/irq/43/smp_affinity_list"   # right
echo irqbalance >"$F/proc/123/comm"
echo 1 >"$F/sys/class/net/eth9/device/numa_node"
echo 4-7 >"$F/sys/devices/system/node/node1/cpulist"
echo 0 >"$F/sys/class/net/eth9/queues/rx-0/rps_cpus"
echo 00000000,00000003 >"$F/sys/class/net/eth9/queues/rx-1/rps_cpus"
echo 00000000,00000000 >"$F/sys/class/net/eth9/queues/rx-2/rps_cpus"

# A tree or a device that is not there is said so, not checked as if it
# had none of the problems the checks look for.
expect "--root of no directory: said" 2 "no directory '/nonexistent' \\(--root\\)" \
	silo doctor --root /nonexistent
expect "a device not in --root's tree: said" 2 \
	"no device 'eth6' in $F/sys/class/net" silo doctor eth6 --root "$F"
expect "a device not in the namespace: said" 2 \
	"no device 'nodev0': see 'ip link show'" silo doctor nodev0
ip netns add "${NS}doc-nodev" || exit 1
expect "a device not in --netns's namespace: said" 2 \
	"\"error\":\"no device 'lo0' in network namespace '${NS}doc-nodev'" \
	silo --netns "${NS}doc-nodev" -j doctor lo0
ip netns del "${NS}doc-nodev"

silo -j doctor eth9 --root "$F" >"$TMP/doc"
rc=$?
is "fake: exits 1 (no silo here)" 1 "$rc"
is "fake: irqbalance" warn "$(result irqbalance .)"
is "fake: NUMA node" ok "$(result numa 'node 1 ')"
is "fake: IRQ off the node" warn "$(result irq 'IRQ 40 on CPU 2, off')"
is "fake: IRQ on several CPUs" warn "$(result irq 'IRQ 41 may run on CPUs 4-7')"
is "fake: IRQ right" ok "$(result irq 'IRQ 43 on CPU 5$')"
is "fake: another device's IRQ left out" "" "$(result irq 'eth90')"
is "fake: RPS on" warn "$(result rps 'rx-1: RPS sends')"
is "fake: RPS off" ok,ok "$(result rps 'RPS off')"
jq -e '.checks[] | select(.check == "irq" and .result == "warn") | .fix |
	test("/proc/irq/4[01]/smp_affinity_list")' "$TMP/doc" >/dev/null &&
	ok "fake: each warning says what fixes it" ||
	not_ok "fake: each warning says what fixes it" "$(jq -c .checks "$TMP/doc")"
is "fake: map queue -> IRQ CPU" "2,,5" \
	"$(jq -r '[.map[] | select(.device == "eth9" and .queue) | .irq_cpu // ""] | join(",")' "$TMP/doc")"

# RSS (DIR/ethtool/DEV/rss, as netlink would give it) and XPS. eth9's
# table leaves out queue 2 (IRQ on the node) and uses queue 0 (IRQ off it);
# its key is all zero; its 3 TX queues have no XPS map.
fix() { # CHECK DETAIL_REGEX: the fix of that check
	jq -r --arg c "$1" --arg d "$2" \
		'[.checks[] | select(.check == $c and (.detail | test($d))) | .fix] | join(",")' \
		"$TMP/doc"
}
# sh_fake FIX: runs a fix on the fake tree instead of /sys.
sh_fake() { sh -c "${1//\/sys\//$F/sys/}"; }
mkdir -p "$F"/ethtool/{eth9,eth8,eth7,eth5} "$F/sys/devices/system/cpu" \
	"$F"/sys/class/net/eth9/queues/tx-{0,1,2} \
	"$F"/sys/class/net/eth8/queues/{rx-0,rx-1,rx-2,rx-3,tx-0,tx-1} \
	"$F"/sys/class/net/eth7/queues/{rx-0,tx-0,tx-1} \
	"$F"/sys/class/net/eth5/queues/{rx-0,tx-0}
echo 0-7 >"$F/sys/devices/system/cpu/online"
for q in 0 1 2; do
	echo 00000000 >"$F/sys/class/net/eth9/queues/tx-$q/xps_cpus"
	echo 0 >"$F/sys/class/net/eth9/queues/tx-$q/xps_rxqs"
done
cat >"$F/ethtool/eth9/rss" <<'EOT'
combined 3
hfunc toeplitz
key 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00
indir 0 1 0 1 0 1 0 1
indir 0 1 0 1 0 1 0 1
EOT
silo -j doctor eth9 --root "$F" >"$TMP/doc"
is "fake rss: leaves out a queue on the node" warn "$(result rss 'leaves out queues 2, whose IRQs are on')"
is "fake rss: spreads over a queue off the node" warn "$(result rss 'over queues 0, whose IRQs are off the device.s NUMA node 1')"
is "fake rss: fix weighs the queues on the node" "ethtool -X eth9 weight 0 1 1" "$(fix rss 'leaves out')"
is "fake rss: the table, compactly" warn "$(result rss 'leaves out.*table of 16: \[0-1\] x8\)$')"
is "fake rss: JSON table" "3 16 0,1" \
	"$(jq -r '.rss[0] | "\(.rx_queues) \(.indir | length) \(.indir[:2] | join(","))"' "$TMP/doc")"
is "fake rss: map RSS entries per queue" "8,8,0" \
	"$(jq -r '[.map[] | select(.device == "eth9" and .queue) | .rss_entries] | join(",")' "$TMP/doc")"
is "fake rss-key: all zero" warn "$(result rss-key 'all zero')"
fix rss-key 'all zero' | grep -q '^ethtool -X eth9 hkey .*-N16 /dev/urandom' &&
	ok "fake rss-key: fix sets a random key of the key's size" ||
	not_ok "fake rss-key: fix sets a random key of the key's size" "$(fix rss-key 'all zero')"
is "fake xps: no map" warn "$(result xps 'has 3 TX queues and no XPS map')"
# CPU 2 goes with queue 0 (its RX IRQ), CPU 5 with queue 2; the others
# round robin.
is "fake xps: fix maps each CPU" \
	"echo 4d > /sys/class/net/eth9/queues/tx-0/xps_cpus; echo 92 > /sys/class/net/eth9/queues/tx-1/xps_cpus; echo 20 > /sys/class/net/eth9/queues/tx-2/xps_cpus" \
	"$(fix xps 'no XPS map')"
sh_fake "$(fix xps 'no XPS map')"
silo -j doctor eth9 --root "$F" >"$TMP/doc"
is "fake xps: the fix clears it" ok "$(result xps 'every CPU')"
is "fake xps: map tx queue <- CPUs" "0,2-3,6 1,4,7 5" \
	"$(jq -r '[.map[] | select(.device == "eth9" and .tx_queue != null) | .xps_cpus] | join(" ")' "$TMP/doc")"

# eth8: no NUMA node, an even table over its 4 queues, a real key; CPUs
# 2-7 in no TX queue's map.
cat >"$F/ethtool/eth8/rss" <<'EOT'
combined 4
hfunc toeplitz
key 6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb
EOT
{
	printf indir
	for i in $(seq 0 127); do printf ' %d' $((i % 4)); done
	echo
} >>"$F/ethtool/eth8/rss"
echo 1 >"$F/sys/class/net/eth8/queues/tx-0/xps_cpus"
echo 00000000,00000002 >"$F/sys/class/net/eth8/queues/tx-1/xps_cpus"
silo -j doctor eth8 --root "$F" >"$TMP/doc"
is "fake rss: even over every queue" ok "$(result rss 'spreads over queues 0-3 of 4 \(table of 128: \[0-3\] x32\)')"
is "fake rss-key: shown" ok "$(result rss-key '^eth8: toeplitz hash, key 6d:5a:56:da:25:5b:0e:c2:41:67:25:3d:43:a3:8f:b0:d0:ca:2b:cb$')"
is "fake xps: CPUs in no map" warn "$(result xps 'CPUs 2-7 are in no TX queue')"
is "fake xps: fix adds them" \
	"echo 55 > /sys/class/net/eth8/queues/tx-0/xps_cpus; echo aa > /sys/class/net/eth8/queues/tx-1/xps_cpus" \
	"$(fix xps 'CPUs 2-7')"
silo doctor eth8 --root "$F" >"$TMP/text"
grep -q '^map   eth8 rx-1 -> IRQ CPU ?, 32 RSS entries$' "$TMP/text" &&
	grep -q '^map   eth8 tx-1 <- XPS CPUs 1$' "$TMP/text" &&
	ok "fake: text map with RSS entries and XPS CPUs" ||
	not_ok "fake: text map with RSS entries and XPS CPUs" "$(grep map "$TMP/text")"

# eth7: one RX queue. eth5: no RSS, as a veth.
printf 'combined 1\nkey 01:02\nindir 0 0 0 0\n' >"$F/ethtool/eth7/rss"
echo 3 >"$F/sys/class/net/eth7/queues/tx-0/xps_cpus"
echo fc >"$F/sys/class/net/eth7/queues/tx-1/xps_cpus"
silo -j doctor eth7 --root "$F" >"$TMP/doc"
is "fake rss-key: one queue" warn "$(result rss-key 'one RX queue')"
is "fake rss-key: fix adds channels" "ethtool -L eth7 combined 8" "$(fix rss-key 'one RX queue')"
is "fake rss-key: a key of one queue, still shown" ok "$(result rss-key 'key 01:02$')"
is "fake xps: every CPU mapped" ok "$(result xps 'every CPU')"
echo unsupported >"$F/ethtool/eth5/rss"
silo -j doctor eth5 --root "$F" >"$TMP/doc"
is "fake rss: not supported is no failure" info "$(result rss 'not supported by eth5')"
is "fake xps: one TX queue" info "$(result xps 'one TX queue')"

# Live: veth with four queues, silo loaded, silod running.
N="${NS}doc"
silod='' SERVER=''
cleanup() {
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	[[ -n $silod ]] && kill "$silod" 2>/dev/null && wait "$silod" 2>/dev/null
	ip netns del "$N" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
ip netns add "$N" || exit 1
# Forwarding on: IPv6 is inside the envelope until a firewall says not.
ip netns exec "$N" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
ip -n "$N" link add d0 numrxqueues 4 numtxqueues 4 type veth peer name d1 \
	numrxqueues 4 numtxqueues 4
ip -n "$N" link set d0 up && ip -n "$N" link set d1 up
check "load" silo --netns "$N" xdp load d0
silo --netns "$N" -j doctor >"$TMP/doc"
is "live, no silod: fails" fail "$(result silod .)"
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$N" -q 2>>"$TMP/silod.log" &
silod=$!
for _ in $(seq 100); do
	silo --netns "$N" -j daemon status 2>/dev/null | jq -e .running >/dev/null && break
	sleep 0.05
done
silo --netns "$N" -j doctor >"$TMP/doc"
is "live: silod" ok "$(result silod .)"
# d1 has no silo: an error arriving there would go unseen, so larger
# packets are not served from the cache; with silo on d1 too they are.
is "live: PMTU watch off, d1 without silo" warn "$(result pmtu 'without silo: d1$')"
check "load d1" silo --netns "$N" xdp load d1
for _ in $(seq 30); do
	silo --netns "$N" -j doctor >"$TMP/doc"
	[[ $(result pmtu .) == ok ]] && break
	sleep 0.1
done
is "live: PMTU watch on, silo on every device" ok "$(result pmtu 'watch on')"
check "unload d1" silo --netns "$N" xdp unload d1
silo --netns "$N" -j doctor >"$TMP/doc" # what the checks below read
is "live: RPS on each of the 4 queues" ok,ok,ok,ok "$(result rps 'd0 rx-')"
is "live: a veth has no IRQs" info "$(result irq 'no IRQs')"
is "live: RSS not supported by a veth" info "$(result rss 'not supported by d0')"
is "live: 4 TX queues, no XPS map" warn "$(result xps 'd0 has 4 TX queues and no XPS map')"
# nsh CMD: runs CMD in the namespace, with its sysfs on /sys.
nsh() {
	ip netns exec "$N" sh -c "$1" 2>/dev/null ||
		ip netns exec "$N" sh -c "mount -t sysfs sysfs /sys && { $1; }"
}
nsh "$(fix xps 'no XPS map')"
silo --netns "$N" -j doctor d0 >"$TMP/doc"
is "live: the XPS fix maps every CPU" ok "$(result xps 'every CPU')"
if (($(nproc) > 1)); then
	nsh 'echo 0 > /sys/class/net/d0/queues/tx-1/xps_cpus'
	silo --netns "$N" -j doctor d0 >"$TMP/doc"
	is "live: CPU 1 in no XPS map" warn "$(result xps 'CPUs 1([,-][0-9,-]*)? are in no')"
else
	echo "skip - live: CPU 1 in no XPS map: one CPU"
fi
ip netns exec "$N" sh -c 'echo 1 > /sys/class/net/d0/queues/rx-2/rps_cpus' 2>/dev/null ||
	ip netns exec "$N" sh -c 'mount -t sysfs sysfs /sys && echo 1 > /sys/class/net/d0/queues/rx-2/rps_cpus'
silo --netns "$N" -j doctor d0 >"$TMP/doc"
is "live: RPS set on rx-2" warn "$(result rps 'd0 rx-2')"
silo --netns "$N" doctor >"$TMP/text"
grep -Eq '^[0-9]+ ok, [0-9]+ warn, 0 fail$' "$TMP/text" && ok "live: text summary" ||
	not_ok "live: text summary" "$(tail -3 "$TMP/text")"
# VLAN tags: a veth strips them (a tag its peer put beside the bytes), and
# tells a program bound to it; generic XDP cannot ask.
is "live vlan: native, the bound program is told" ok \
	"$(result vlan '^d0 strips VLAN tags and its driver tells')"

# The envelope, as the data path sees it (silod keeps it current): an
# nftables forward chain added while silo is loaded puts both families
# outside; removed, both are inside again.
# wait_outside WANT: until IPv4's outside names WANT (5 s at most).
wait_outside() {
	for _ in $(seq 50); do
		[[ $(silo --netns "$N" -j xdp status |
			jq -r '.envelope.ipv4.outside | join(" ")') == "$1" ]] && break
		sleep 0.1
	done
}
is "live envelope: inside" ok,ok "$(result envelope '^IPv[46] inside the envelope$')"
if command -v nft >/dev/null; then
	ip netns exec "$N" nft add table inet f
	ip netns exec "$N" nft add chain inet f fw \
		'{ type filter hook forward priority 0; }'
	ip netns exec "$N" nft add rule inet f fw counter
	wait_outside nftables
	silo --netns "$N" -j doctor d0 >"$TMP/doc"
	is "live envelope: an nft forward chain puts IPv4 outside" warn \
		"$(result envelope '^IPv4 outside the envelope \(nftables\)')"
	is "live envelope: and IPv6" warn \
		"$(result envelope '^IPv6 outside the envelope \(nftables\)')"
	is "live envelope: the fix says where to look" "silo xdp status" \
		"$(fix envelope '^IPv4 outside')"
	is "live envelope: the chain named, and why" warn \
		"$(result envelope "^nftables chain 'inet f fw' \\(hook forward\\): 1 rule$")"
	fix envelope '^nftables chain' | grep -q 'no rule, its policy is accept' &&
		ok "live envelope: what would let silo in" ||
		not_ok "live envelope: what would let silo in" "$(fix envelope '^nftables chain')"
	ip netns exec "$N" nft delete table inet f
	wait_outside ""
	silo --netns "$N" -j doctor d0 >"$TMP/doc"
	is "live envelope: the chain gone, inside again" ok,ok \
		"$(result envelope '^IPv[46] inside the envelope$')"
else
	echo "skip - live envelope: nft is not installed"
fi

# Reuseport readers: each slot's reader pinned to the slot's CPU, as
# echo_server's threads are; one moved to another CPU is named, with the
# taskset that moves it back.
if (($(nproc) > 1)); then
	ip netns exec "$N" "$BUILD/examples/echo_server" --plain --port 7401 \
		>"$TMP/server" &
	SERVER=$!
	for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
	check "live reader: attach" silo --netns "$N" reuseport attach \
		--pid "$(jq -r .pid "$TMP/server")" --port 7401 --proto udp
	silo --netns "$N" -j doctor d0 >"$TMP/doc"
	got=$(result reader '^group udp4_7401 slot ')
	[[ $got =~ ^ok(,ok)+$ ]] && ok "live reader: each slot's reader on its CPU" ||
		not_ok "live reader: each slot's reader on its CPU" "$got"
	tid=$(jq '.map[] | select(.group == "udp4_7401" and .slot_cpu == 0) |
		.reader_tid' "$TMP/doc")
	taskset -pc 1 "$tid" >/dev/null
	silo --netns "$N" -j doctor d0 >"$TMP/doc"
	is "live reader: slot 0's reader pinned to CPU 1" warn \
		"$(result reader "^group udp4_7401 slot 0: reader $tid may run on CPUs 1, not only on CPU 0$")"
	is "live reader: the fix pins it to CPU 0" "taskset -pc 0 $tid" \
		"$(fix reader "slot 0: reader $tid ")"
	is "live reader: slot 1 still right" ok \
		"$(result reader '^group udp4_7401 slot 1: reader [0-9]+ pinned to CPU 1$')"
	sh -c "$(fix reader "slot 0: reader $tid ")" >/dev/null
	silo --netns "$N" -j doctor d0 >"$TMP/doc"
	is "live reader: the fix clears it" ok \
		"$(result reader "^group udp4_7401 slot 0: reader $tid pinned to CPU 0$")"
	check "live reader: detach" silo --netns "$N" reuseport detach udp4_7401
	kill "$SERVER"
	wait "$SERVER"
	SERVER=
else
	echo "skip - live reader: one CPU, no other CPU to pin a reader to"
fi
kill "$silod"
wait "$silod"
silod=
check "unload" silo --netns "$N" xdp unload d0
silo --netns "$N" xdp load d0 --mode skb 2>"$TMP/load" >/dev/null
grep -q 'd0 takes VLAN tags off before XDP and generic XDP cannot ask' \
	"$TMP/load" && ok "live vlan: a generic load warns" ||
	not_ok "live vlan: a generic load warns" "$(cat "$TMP/load")"
silo --netns "$N" -j doctor d0 >"$TMP/doc"
is "live vlan: generic XDP cannot tell" warn \
	"$(result vlan '^d0 strips VLAN tags and silo cannot tell')"
nsh "$(fix vlan 'cannot tell')"
silo --netns "$N" -j doctor d0 >"$TMP/doc"
is "live vlan: the fix stops the stripping" ok \
	"$(result vlan '^d0 leaves VLAN tags in the frame')"
check "unload" silo --netns "$N" xdp unload d0
ip netns del "$N"
