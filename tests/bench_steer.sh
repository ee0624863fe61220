# SPDX-License-Identifier: GPL-2.0
# bench_steer runs on the traffic source's pump (no live frames) and
# reports what docs/BENCHMARKS.md says it does, in one short round of two
# of its cases (no figure is judged here: make bench measures): every
# variant of each, a summary with its targets, the source named, and
# with steering every datagram of a steered service processed on its
# reader's CPU and every TCP segment on the reader's. It leaves nothing:
# no namespace, no pin, the host's rps_sock_flow_entries as it was, also
# when interrupted. A --variant that no case has is refused.
. "$TESTS_DIR/lib.sh"

if (($(nproc) < 2)); then
	echo "skip - bench_steer: needs two CPUs"
	exit 0
fi
BENCH="$BUILD/tools/bench_steer"
RFS=/proc/sys/net/core/rps_sock_flow_entries
rfs_was=$(cat "$RFS")
trap 'echo "$rfs_was" >"$RFS"; rm -rf "$TMP"' EXIT

# left WHY: nothing of bench_steer's is left.
left() {
	local ns pins rfs
	ns=$(ip netns list | grep -c '^silo-bs-')
	pins=$([[ -e /sys/fs/bpf/silo-bs ]] && echo yes || echo no)
	rfs=$(cat "$RFS")
	[[ $ns == 0 && $pins == no && $rfs == "$rfs_was" ]] &&
		ok "$1: nothing left" ||
		not_ok "$1: nothing left" "namespaces $ns, pins $pins, rps_sock_flow_entries $rfs (was $rfs_was)"
}

expect "a variant no case has" 2 "services has no variant reuseport" \
	"$BENCH" --case services --variant reuseport

short=(--rounds 1 --secs 0.2 --warmup 0.1)
for c in services one_tcp; do
	"$BENCH" --case "$c" "${short[@]}" >"$TMP/$c.json" 2>"$TMP/$c.err"
	rc=$?
	if ((rc == 3)); then
		# The source cannot run on this kernel or under this policy.
		echo "skip - $c: runs: $(head -2 "$TMP/$c.err" | tr '\n' ' ')"
		rm -f "$TMP/$c.json"
		left "$c"
		continue
	elif ((rc == 0)); then
		ok "$c: runs"
	else
		not_ok "$c: runs" "$(tail -3 "$TMP/$c.err")"
		continue
	fi
	v=$(jq -rs 'map(select(.bench == "steer") | .variant) | join(",")' "$TMP/$c.json")
	[[ $v == no_silo,rps,rfs,steering ]] && ok "$c: every variant" ||
		not_ok "$c: every variant" "$v"
	want_src=pump
	[[ $c == one_tcp ]] && want_src=tcp_socket
	jq -se --arg s "$want_src" --arg k "$(uname -r)" \
		'all(.source == $s and .kernel == $k)' "$TMP/$c.json" >/dev/null &&
		ok "$c: every line names the source ($want_src) and the kernel" ||
		not_ok "$c: every line names the source ($want_src) and the kernel" \
			"$(head -c 300 "$TMP/$c.json")"
	jq -se 'map(select(.bench == "steer_summary")) | length == 1 and
		(.[0].met | has("share") and has("vs_best_kernel"))' \
		"$TMP/$c.json" >/dev/null && ok "$c: a summary with its targets" ||
		not_ok "$c: a summary with its targets" "$(grep summary "$TMP/$c.json")"
	left "$c"
done

# services: B (port 7501, on CPU 1) steered; each datagram it read was
# processed on CPU 1, and its service counted them.
if [[ -s $TMP/services.json && -s $TMP/one_tcp.json ]]; then
	jq -se '.[] | select(.bench == "steer" and .variant == "steering") |
		.services[1] | .share_on_reader_cpu == 1 and .service.steered > 0' \
		"$TMP/services.json" >/dev/null &&
		ok "services: steering, every datagram of B on its reader's CPU" ||
		not_ok "services: steering, every datagram of B on its reader's CPU" \
			"$(jq -c 'select(.variant == "steering") | .services' "$TMP/services.json")"
	jq -se '.[] | select(.bench == "steer" and .variant == "no_silo") |
		.services[1].share_on_reader_cpu < 0.5' "$TMP/services.json" >/dev/null &&
		ok "services: without silo, B's stack runs on CPU 0" ||
		not_ok "services: without silo, B's stack runs on CPU 0" \
			"$(jq -c 'select(.variant == "no_silo") | .services' "$TMP/services.json")"
	jq -se '.[] | select(.bench == "steer" and .variant == "steering") |
		.share_on_reader_cpu == 1' "$TMP/one_tcp.json" >/dev/null &&
		ok "one_tcp: steering, every segment on the reader's CPU" ||
		not_ok "one_tcp: steering, every segment on the reader's CPU" \
			"$(grep steering "$TMP/one_tcp.json")"
fi

# Interrupted in its RFS rounds (the host's sysctl changed): put back.
# (Where it ran: elsewhere it ends before it is interrupted.)
if [[ -s $TMP/services.json ]]; then
	"$BENCH" --case one_connected --variant rfs --rounds 20 >/dev/null 2>"$TMP/int.err" &
	pid=$!
	for _ in $(seq 50); do
		[[ $(cat "$RFS") != "$rfs_was" ]] && break
		sleep 0.1
	done
	interrupt "$pid" "$TMP/int.err"
	left "SIGINT"
fi
