# SPDX-License-Identifier: GPL-2.0
# silo doctor: on a fake /proc and /sys (--root) for what veth cannot show
# (IRQs, NUMA nodes, irqbalance), and live on veth with several queues.
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
	"$(jq -r '[.map[] | select(.device == "eth9") | .irq_cpu // ""] | join(",")' "$TMP/doc")"

# Live: veth with four queues, silo loaded, silod running.
N="${NS}doc"
ip netns add "$N" || exit 1
ip -n "$N" link add d0 numrxqueues 4 numtxqueues 4 type veth peer name d1 \
	numrxqueues 4 numtxqueues 4
ip -n "$N" link set d0 up && ip -n "$N" link set d1 up
check "load" silo --netns "$N" xdp load d0
silo --netns "$N" -j doctor >"$TMP/doc"
is "live, no silod: fails" fail "$(result silod .)"
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$N" -q &
silod=$!
for _ in $(seq 100); do
	silo --netns "$N" -j daemon status 2>/dev/null | jq -e .running >/dev/null && break
	sleep 0.05
done
silo --netns "$N" -j doctor >"$TMP/doc"
is "live: silod" ok "$(result silod .)"
is "live: RPS on each of the 4 queues" ok,ok,ok,ok "$(result rps 'd0 rx-')"
is "live: a veth has no IRQs" info "$(result irq 'no IRQs')"
ip netns exec "$N" sh -c 'echo 1 > /sys/class/net/d0/queues/rx-2/rps_cpus' 2>/dev/null ||
	ip netns exec "$N" sh -c 'mount -t sysfs sysfs /sys && echo 1 > /sys/class/net/d0/queues/rx-2/rps_cpus'
silo --netns "$N" -j doctor d0 >"$TMP/doc"
is "live: RPS set on rx-2" warn "$(result rps 'd0 rx-2')"
silo --netns "$N" doctor >"$TMP/text"
grep -Eq '^[0-9]+ ok, [0-9]+ warn, 0 fail$' "$TMP/text" && ok "live: text summary" ||
	not_ok "live: text summary" "$(tail -3 "$TMP/text")"
kill "$silod"
wait "$silod"
check "unload" silo --netns "$N" xdp unload d0
ip netns del "$N"
