# SPDX-License-Identifier: GPL-2.0
# bench_live runs on the traffic source's ring (no live frames) and reports
# what docs/BENCHMARKS.md says it does, in one short round (no figure is
# judged here: make bench measures): every variant forwards, the ring
# loses no frame, silo forwards every packet itself (the checksums left
# to offload finished, what that costs reported), the targets are
# there, every line names its source and the kernel; behind the stateful
# firewall the kernel forwards established flows and silo forwards them
# with conntrack's verdict; AF_PACKET's source runs too. It leaves nothing: no namespace, no pin, also when
# interrupted.
. "$TESTS_DIR/lib.sh"

BENCH="$BUILD/tools/bench_live"
trap 'rm -rf "$TMP"' EXIT

# left WHY: nothing of bench_live's is left.
left() {
	local ns pins
	ns=$(ip netns list | grep -c '^silo-bl-')
	pins=$([[ -e /sys/fs/bpf/silo-bl ]] && echo yes || echo no)
	[[ $ns == 0 && $pins == no ]] && ok "$1: nothing left" ||
		not_ok "$1: nothing left" "namespaces $ns, pins $pins"
}

short=(--rounds 1 --secs 0.2 --warmup 0.1 --routes 1000)
# The firewall's variants need nft(8) and conntrack(8).
fw=(--firewall steady_64)
if ! command -v conntrack >/dev/null || ! command -v nft >/dev/null; then
	echo "skip - the firewall's variants: no nft(8) or conntrack(8)"
	fw=(--firewall none)
fi
for src in ring af_packet; do
	"$BENCH" "${short[@]}" --source "$src" --sets from "${fw[@]}" \
		--traffic steady_64,flood,offload_64 >"$TMP/$src.json" \
		2>"$TMP/$src.err"
	rc=$?
	if ((rc == 3)); then
		# The source cannot run on this kernel or under this policy.
		echo "skip - $src: runs: $(head -2 "$TMP/$src.err" | tr '\n' ' ')"
		rm -f "$TMP/$src.json"
		continue
	elif ((rc == 0)); then
		ok "$src: runs"
	else
		not_ok "$src: runs" "$(tail -3 "$TMP/$src.err")"
		continue
	fi
	jq -se --arg s "$src" --arg k "$(uname -r)" \
		'length > 0 and all(.source == $s and .kernel == $k)' \
		"$TMP/$src.json" >/dev/null &&
		ok "$src: every line names the source and the kernel" ||
		not_ok "$src: every line names the source and the kernel" \
			"$(head -c 300 "$TMP/$src.json")"
	jq -se 'map(select(.bench == "forward_live")) | length == 3 and
		all(.mpps | .kernel > 0 and .silo > 0 and .ref > 0 and .floor > 0)' \
		"$TMP/$src.json" >/dev/null &&
		ok "$src: every variant forwards" ||
		not_ok "$src: every variant forwards" \
			"$(jq -c 'select(.bench == "forward_live") | .mpps' "$TMP/$src.json")"
	left "$src"
done

# The ring: no frame lost, silo forwarded what the sink counted.
if [[ -s $TMP/ring.json ]]; then
	jq -se 'map(select(.bench == "forward_live")) | all(.ring_lost == 0 and
		.silo_counters.redirect >= .silo_counters.sink_pkts * 0.99)' \
		"$TMP/ring.json" >/dev/null &&
		ok "ring: no frame lost, every packet forwarded by silo" ||
		not_ok "ring: no frame lost, every packet forwarded by silo" \
			"$(jq -c 'select(.bench == "forward_live") | {traffic, ring_lost, silo_counters}' "$TMP/ring.json")"
	# Three of silo's, and one behind the firewall (established flows)
	# where it was measured.
	nfw=$([[ ${fw[1]} == none ]] && echo 0 || echo 1)
	jq -se --argjson nfw "$nfw" 'map(select(.bench == "forward_live_target")) |
		length == 3 + $nfw and all(.met | type == "boolean") and
		(map(select(.what == "silo_fw_vs_kernel_fw_ns_over_floor" and
			.target == "<= 1/3")) | length == $nfw)' \
		"$TMP/ring.json" >/dev/null &&
		ok "ring: the targets, each met or not" ||
		not_ok "ring: the targets, each met or not" \
			"$(grep target "$TMP/ring.json")"
	jq -se 'map(select(.bench == "forward_live_offload_csum")) | length == 1 and
		all(.frame_bytes == 64 and (.finish_ns | type == "number") and
		    .silo_ns_over_floor.offload_64 > 0)' "$TMP/ring.json" >/dev/null &&
		ok "ring: what finishing a checksum costs, at 64 bytes" ||
		not_ok "ring: what finishing a checksum costs, at 64 bytes" \
			"$(grep offload_csum "$TMP/ring.json")"
	if [[ ${fw[1]} != none ]]; then
		jq -se 'map(select(.bench == "forward_live_firewall")) |
			length == 1 and all(.traffic == "steady_64" and
			(.mpps | .kernel_fw > 0 and .silo_fw > 0) and
			(.silo_fw_vs_kernel_fw_ns | type == "number") and
			.silo_fw_counters.ct_forwarded >=
				.silo_fw_counters.sink_pkts * 0.99 and
			.kernel_fw_stack_forwarded >=
				.kernel_fw_sink_pkts_all * 0.99 and
			.ruleset_later_rules_pkts == 0 and .ring_lost == 0)' \
			"$TMP/ring.json" >/dev/null &&
			ok "ring: behind the firewall, the kernel and silo (conntrack's verdict) forward established flows" ||
			not_ok "ring: behind the firewall, the kernel and silo (conntrack's verdict) forward established flows" \
				"$(grep firewall "$TMP/ring.json")"
	fi
	jq -se 'map(select(.bench == "forward_live_setup")) | length == 1 and
		.[0].cpu_share > 0.5' "$TMP/ring.json" >/dev/null &&
		ok "ring: the path's CPU was the ring's" ||
		not_ok "ring: the path's CPU was the ring's" \
			"$(grep setup "$TMP/ring.json")"
fi

# The flood behind the firewall in turns (--turns): the programs swapped
# pair by pair, the checks passed, the flood's target read from the turns;
# --turns 0 leaves it to the rounds.
if [[ -s $TMP/ring.json && ${fw[1]} != none ]]; then
	for n in 2 0; do
		"$BENCH" "${short[@]}" --sets from --traffic flood \
			--firewall flood --turns "$n" >"$TMP/turns$n.json" \
			2>"$TMP/turns$n.err" ||
			not_ok "flood in $n turns: runs" "$(tail -3 "$TMP/turns$n.err")"
	done
	jq -se 'map(select(.bench == "forward_live_firewall_turns")) |
		length == 1 and all(.pairs == 2 and
		(.ns_per_pkt | .kernel_fw > 0 and .silo_fw > 0) and
		(.silo_fw_vs_kernel_fw_ns_over_floor | type == "number") and
		.silo_fw_counters.ct_pass_none + .silo_fw_counters.ct_pass_storm >=
			.silo_fw_counters.sink_pkts * 0.99)' \
		"$TMP/turns2.json" >/dev/null &&
		ok "flood in turns: kernel_fw and silo_fw, silo passing every packet of its slices" ||
		not_ok "flood in turns: kernel_fw and silo_fw, silo passing every packet of its slices" \
			"$(grep turns "$TMP/turns2.json") $(tail -2 "$TMP/turns2.err")"
	for n in 2 0; do
		want=$( ((n)) && echo ", in turns")
		what=$( ((n)) && echo "the turns" || echo "the rounds")
		jq -se --arg w "silo_fw_vs_kernel_fw_ns_over_floor$want" \
			'map(select(.bench == "forward_live_target" and
			.target == "<= 1.05")) | length == 1 and .[0].what == $w and
			(.[0].met | type == "boolean")' "$TMP/turns$n.json" >/dev/null &&
			ok "flood in $n turns: the target reads $what" ||
			not_ok "flood in $n turns: the target reads $what" \
				"$(grep target "$TMP/turns$n.json")"
	done
	jq -se 'map(select(.bench == "forward_live_firewall_turns")) | length == 0' \
		"$TMP/turns0.json" >/dev/null &&
		ok "flood in 0 turns: no turns measured" ||
		not_ok "flood in 0 turns: no turns measured" "$(grep turns "$TMP/turns0.json")"
	left "turns"
fi
expect "turns out of range" 2 "bad arguments" "$BENCH" --turns -1

expect "a source it does not know" 2 "bad arguments" \
	"$BENCH" --source live

# Interrupted while it measures: stops, says so, leaves nothing.
# (Where the ring ran: elsewhere it ends before it is interrupted.)
if [[ -s $TMP/ring.json ]]; then
	"$BENCH" --rounds 20 --routes 1000 --sets from >/dev/null 2>"$TMP/int.err" &
	pid=$!
	for _ in $(seq 100); do
		ip netns list | grep -q '^silo-bl-router' && break
		sleep 0.1
	done
	sleep 3
	interrupt "$pid" "$TMP/int.err"
	left "SIGINT"
fi
