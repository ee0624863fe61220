# SPDX-License-Identifier: GPL-2.0
# A load that the device refuses says why and what to do, from the device's
# state (user/lib/xdp/xdp_why.c), in text and under -j, and leaves nothing
# behind: a veth with fewer RX queues than its peer has TX queues. (The
# other causes need a NIC driver: tests/xdp_why.c fakes them.)
. "$TESTS_DIR/lib.sh"

N="${NS}why"
ip netns add "$N" || { not_ok "netns" "ip netns add failed"; exit 1; }
trap 'ip netns del "$N" 2>/dev/null' EXIT
ip -n "$N" link add wy0 numrxqueues 1 numtxqueues 1 type veth peer name wy1 \
	numrxqueues 2 numtxqueues 2 && ip -n "$N" link set wy0 up &&
	ip -n "$N" link set wy1 up || { not_ok "veth" "ip link add failed"; exit 1; }

want='wy0 has 1 RX queues, fewer than its veth peer has TX queues'
expect "load on a veth short of RX queues: cause and fix" 1 "$want" \
	silo --netns "$N" xdp load wy0 --forward
silo --netns "$N" -j xdp load wy0 >"$TMP/out" 2>/dev/null
rc=$?
((rc == 1)) && jq -e --arg w "$want" '.error | startswith($w) and contains("--mode skb")' \
	"$TMP/out" >/dev/null && ok "-j: the same in .error" ||
	not_ok "-j: the same in .error" "exit $rc: $(head -c 300 "$TMP/out")"
[[ ! -e $PIN_ROOT/netns/$N ]] && ok "nothing pinned" ||
	not_ok "nothing pinned" "$(find "$PIN_ROOT/netns/$N" | head -5 | tr '\n' ' ')"
n=$(ip -n "$N" link show wy0 | grep -c 'xdp')
((n == 0)) && ok "nothing attached" || not_ok "nothing attached" "$(ip -n "$N" link show wy0)"
check "--mode skb loads" silo --netns "$N" xdp load wy0 --mode skb
check "unload" silo --netns "$N" xdp unload wy0
