# SPDX-License-Identifier: GPL-2.0
# Prometheus metrics: silod --metrics serves GET /metrics (404 elsewhere, 405
# for other methods) on 127.0.0.1 from the host while it serves a lab's
# router with --netns; the exposition passes a strict parser
# (tests/prom_check.awk), agrees with 'silo -j stats' and 'silo xdp status'
# after traffic, and 'silo stats --format prometheus' prints the same series.
# Label names are silod(8)'s (METRICS); silo_daemon_up is 0 while silod's process
# lives with a stale heartbeat. Bad addresses are refused before silod
# starts; [::1]:PORT works.
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

P="${NS}met"
R="$P-router"
SILOD=
SERVER=
cleanup() {
	# A stopped silod takes SIGTERM only once it runs again.
	[[ -n $SILOD ]] && kill -CONT "$SILOD" 2>/dev/null
	[[ -n $SILOD ]] && kill "$SILOD" 2>/dev/null && wait "$SILOD" 2>/dev/null
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	lab_down "$P" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
CHECK="$TESTS_DIR/prom_check.awk"


expect "bad address refused" 2 "bad metrics address 'nohost:9'" \
	"$BUILD/silod" --pin-root "$PIN_ROOT" --metrics nohost:9
expect "bad port refused" 2 "bad metrics address '70000'" \
	"$BUILD/silod" --pin-root "$PIN_ROOT" --metrics 70000
expect "unbracketed IPv6 refused" 2 "bad metrics address '::1:9'" \
	"$BUILD/silod" --pin-root "$PIN_ROOT" --metrics ::1:9
echo "metrics = 1.2.3:9" >"$TMP/conf"
expect "bad address in the config refused" 2 "bad metrics address" \
	"$BUILD/silod" --pin-root "$PIN_ROOT" --config "$TMP/conf"
[[ ! -e $PIN_ROOT ]] && ok "refused before any work" ||
	not_ok "refused before any work" "$(ls -R "$PIN_ROOT")"

lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }
check "load r-c" silo --netns "$R" xdp load r-c --forward
check "load r-s" silo --netns "$R" xdp load r-s --forward

# A bare port: 127.0.0.1, in the namespace silod starts in (the host's).
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q --metrics "$PORT" &
SILOD=$!
dstat() { silo --netns "$R" -j daemon status 2>/dev/null | jq "$1"; }
for _ in $(seq 100); do [[ $(dstat .cache_trusted) == true ]] && break; sleep 0.05; done
for _ in $(seq 50); do curl -s -o /dev/null "$URL" && break; sleep 0.1; done

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[[ $(code "$URL") == 200 ]] && ok "GET /metrics: 200" ||
	not_ok "GET /metrics: 200" "$(code "$URL")"
ct=$(curl -s -o /dev/null -w '%{content_type}' "$URL")
[[ $ct == "text/plain; version=0.0.4; charset=utf-8" ]] &&
	ok "content type 0.0.4" || not_ok "content type 0.0.4" "$ct"
[[ $(code "http://127.0.0.1:$PORT/") == 404 ]] && ok "GET /: 404" ||
	not_ok "GET /: 404" "$(code "http://127.0.0.1:$PORT/")"
[[ $(code "$URL/x") == 404 ]] && ok "GET /metrics/x: 404" ||
	not_ok "GET /metrics/x: 404" "$(code "$URL/x")"
[[ $(code -X POST -d x "$URL") == 405 ]] && ok "POST: 405" ||
	not_ok "POST: 405" "$(code -X POST -d x "$URL")"
[[ $(code -X DELETE "$URL") == 405 ]] && ok "DELETE: 405" ||
	not_ok "DELETE: 405" "$(code -X DELETE "$URL")"
curl -s -D "$TMP/hdr" -o /dev/null -X PUT "$URL"
grep -qi '^Allow: GET, HEAD' "$TMP/hdr" && ok "405 says Allow" ||
	not_ok "405 says Allow" "$(tr -d '\r' <"$TMP/hdr" | tr '\n' ' ')"
# Not in the router's namespace: silod bound before entering it.
ip netns exec "$R" curl -s -m 2 -o /dev/null "$URL" &&
	not_ok "listens in the host namespace only" "reachable in $R" ||
	ok "listens in the host namespace only"

# Traffic through the router, and a reuseport group in it.
ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 2000 \
	--timeout 3 >/dev/null 2>&1 &
sink=$!
sleep 0.3
ip netns exec "$P-client" "$TRAFFIC" udp-send 10.2.0.2 7000 --count 2000 \
	--gap-us 100 >/dev/null
wait "$sink"
ip netns exec "$R" "$BUILD/examples/echo_server" --plain --port 7301 >"$TMP/server" &
SERVER=$!
for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
check "reuseport attach" silo --netns "$R" reuseport attach \
	--pid "$(jq -r .pid "$TMP/server")" --port 7301 --proto udp
check "service add" silo --netns "$R" service add --proto udp --port 7302 --cpus 0
# Datagrams for the group: its selector runs.
ip netns exec "$R" "$TRAFFIC" udp-send 127.0.0.1 7301 --count 300 \
	--gap-us 100 >/dev/null

# Counters still move (ND, ARP): take a scrape between two equal reads.
metric() { # metric FILE SERIES: the value of one series
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}
group_show() {
	silo --netns "$R" reuseport show -j udp4_7301 | jq '.groups[0] // .'
}
for _ in 1 2 3 4 5; do
	silo --netns "$R" -j stats >"$TMP/s1"
	group_show >"$TMP/g1"
	curl -s "$URL" >"$TMP/m"
	silo --netns "$R" -j stats >"$TMP/s2"
	group_show >"$TMP/g2"
	cmp -s "$TMP/s1" "$TMP/s2" && cmp -s "$TMP/g1" "$TMP/g2" && break
	sleep 0.2
done
if awk -f "$CHECK" "$TMP/m" >"$TMP/check"; then
	ok "exposition passes the strict parser ($(head -1 "$TMP/check"))"
else
	not_ok "exposition passes the strict parser" "$(head -c 600 "$TMP/check")"
fi
# Services: rx and every outcome, once per service (not per family).
sv='service="udp:7302"'
[[ $(metric "$TMP/m" "silo_service_rx_total{$sv}") =~ ^[0-9]+$ &&
	$(metric "$TMP/m" "silo_service_rx_total{service=\"none\"}") =~ ^[0-9]+$ &&
	$(grep -c "^silo_service_packets_total{$sv," "$TMP/m") == \
	$(($(silo --netns "$R" -j service show | jq '.unattributed | length') - 1)) ]] &&
	ok "service counters exported" ||
	not_ok "service counters exported" "$(grep '^silo_service' "$TMP/m" | head -5)"
# The label names, exactly as silod(8) documents each family's.
label_names() { # label_names FILE FAMILY: each distinct list, one a line
	awk -v f="$2" '
		{ n = $1; sub(/[{].*/, "", n) }
		n == f {
			l = $1; sub(/^[^{]*[{]?/, "", l); sub(/[}]$/, "", l)
			gsub(/="([^"\\]|\\.)*"/, "", l); print l
		}' "$1" | sort -u
}
bad=
for fl in silo_xdp_packets_total:verdict silo_xdp_passed_total:reason \
	silo_fib_lookups_total:result silo_route_cache_lookups_total:result \
	silo_route_cache_entries:node silo_reuseport_slots:group \
	silo_reuseport_selections_total:group,outcome \
	silo_service_rx_total:service \
	silo_service_packets_total:service,outcome silo_daemon_up: \
	silo_offload_csum_info:device,kind,action \
	silo_offload_csum_packets_total:device,outcome \
	silo_conntrack_forwarding:family silo_conntrack_packets_total:outcome \
	silo_conntrack_timeouts_refreshed_total:; do
	got=$(label_names "$TMP/m" "${fl%%:*}")
	[[ $got == "${fl#*:}" ]] || bad+=" ${fl%%:*}{${got//$'\n'/|}}"
done
[[ -z $bad ]] && ok "label names as documented" ||
	not_ok "label names as documented" "$bad"
# The lab's veths: their senders' checksums left to offload, finished,
# and counted as silo xdp status counts them.
csum() { silo --netns "$R" -j xdp status | jq ".devices[] | select(.device == \"$1\") | .offload_csum.$2"; }
[[ $(metric "$TMP/m" 'silo_offload_csum_info{device="r-c",kind="veth",action="finish"}') == 1 &&
	$(metric "$TMP/m" 'silo_offload_csum_packets_total{device="r-c",outcome="finished"}') == "$(csum r-c finished)" &&
	$(metric "$TMP/m" 'silo_offload_csum_packets_total{device="r-s",outcome="passed"}') == "$(csum r-s passed)" ]] &&
	ok "checksums left to offload exported" ||
	not_ok "checksums left to offload exported" "$(grep '^silo_offload' "$TMP/m"; silo --netns "$R" -j xdp status | jq -c '.devices[].offload_csum')"
[[ $(tail -c 1 "$TMP/m" | od -An -c | tr -d ' ') == '\n' ]] &&
	ok "ends with a newline" || not_ok "ends with a newline" "no"

bad=
for s in rx:silo_xdp_rx_packets_total \
	redirect:'silo_xdp_packets_total{verdict="redirect"}' \
	pass:'silo_xdp_packets_total{verdict="pass"}' \
	drop:'silo_xdp_packets_total{verdict="drop"}' \
	pass_local:'silo_xdp_passed_total{reason="local"}' \
	pass_not_ip:'silo_xdp_passed_total{reason="not_ip"}' \
	fib_success:'silo_fib_lookups_total{result="success"}' \
	cache_hit:'silo_route_cache_lookups_total{result="hit"}' \
	cache_miss:'silo_route_cache_lookups_total{result="miss"}'; do
	want=$(jq ".${s%%:*}" "$TMP/s1") got=$(metric "$TMP/m" "${s#*:}")
	[[ $want == "$got" ]] || bad+=" ${s#*:}=$got (stats ${s%%:*}=$want)"
done
redirect=$(jq .redirect "$TMP/s1")
[[ -z $bad && $redirect -ge 1900 ]] && ok "counters equal silo -j stats after traffic" ||
	not_ok "counters equal silo -j stats after traffic" "redirect $redirect;$bad"

# Every XDP counter is in the exposition: their sum equals the stats'.
sum_m=$(awk '/^silo_xdp_|^silo_fib_|^silo_route_cache_(lookups|source_checks|inserts|evictions|insert_failures|refused)_total/ { s += $2 } END { print s }' "$TMP/m")
sum_s=$(jq '[.[] | numbers] | add' "$TMP/s1")
[[ $sum_m == "$sum_s" ]] && ok "every XDP counter exported once" ||
	not_ok "every XDP counter exported once" "metrics sum $sum_m, stats sum $sum_s"

# Map pressure: per node, as 'silo xdp status' shows it. One entry at
# least, the flow's route (under rp_filter 0 its source needs no entry).
silo --netns "$R" -j xdp status >"$TMP/status"
entries=$(metric "$TMP/m" 'silo_route_cache_entries{node="0"}')
cap=$(metric "$TMP/m" 'silo_route_cache_capacity{node="0"}')
ins=$(metric "$TMP/m" 'silo_route_cache_inserts_total{node="0"}')
s_entries=$(jq '.route_cache[0].entries' "$TMP/status")
s_cap=$(jq '.route_cache[0].capacity' "$TMP/status")
nodes=$(jq '.route_cache | length' "$TMP/status")
[[ $entries -ge 1 && $entries == "$s_entries" && $cap == "$s_cap" &&
	$cap == $(jq .cache_size "$TMP/status") && $nodes == $(jq .nodes "$TMP/status") ]] &&
	ok "cache entries and capacity as xdp status says" ||
	not_ok "cache entries and capacity as xdp status says" \
		"metrics $entries/$cap, status $(jq -c .route_cache "$TMP/status")"
# Inserts over the nodes add up to the data path's cache_insert.
sum_ins=$(awk '/^silo_route_cache_inserts_total/ { s += $2 } END { print s }' "$TMP/m")
[[ $sum_ins == $(jq .cache_insert "$TMP/s1") && $ins -ge 1 ]] &&
	ok "inserts per node add up to cache_insert" ||
	not_ok "inserts per node add up to cache_insert" "$sum_ins, stats $(jq .cache_insert "$TMP/s1")"
n=$(silo --netns "$R" route show -j | jq '.entries | length')
[[ $entries == "$n" ]] && ok "entries: the keys route show lists" ||
	not_ok "entries: the keys route show lists" "$entries, route show $n"
expect "xdp status: one line per node" 0 \
	"route cache node 0: $s_entries/$s_cap entries, inserts [0-9]+, evictions [0-9]+, insert failures [0-9]+, refused [0-9]+" \
	silo --netns "$R" xdp status

[[ $(metric "$TMP/m" silo_daemon_up) == 1 ]] && ok "silo_daemon_up 1" ||
	not_ok "silo_daemon_up 1" "$(metric "$TMP/m" silo_daemon_up)"
[[ $(metric "$TMP/m" silo_genid) == $(jq .genid "$TMP/status") ]] &&
	ok "silo_genid" || not_ok "silo_genid" "$(metric "$TMP/m" silo_genid)"
d=$(dstat .counters.resyncs) got=$(metric "$TMP/m" silo_daemon_resyncs_total)
[[ $d -ge 1 && $got -ge 1 ]] && ok "daemon counters" ||
	not_ok "daemon counters" "resyncs $got, daemon status $d"
slots=$(metric "$TMP/m" 'silo_reuseport_slots{group="udp4_7301"}')
occ=$(metric "$TMP/m" 'silo_reuseport_slots_occupied{group="udp4_7301"}')
silo --netns "$R" reuseport show -j udp4_7301 | jq '.groups[0] // .' >"$TMP/group"
want=$(jq '[.slots[] | select(.cookie != null)] | length' "$TMP/group")
want_slots=$(jq '.slots | length' "$TMP/group")
[[ $occ -ge 1 && $occ == "$want" && $slots == "$want_slots" ]] &&
	ok "reuseport occupancy" ||
	not_ok "reuseport occupancy" "$occ/$slots, show says $want/$want_slots"

# The selector's counters, summed over CPUs, as reuseport show has them.
G='group="udp4_7301"'
bad='' n=0 sum_s=0
while read -r k v; do
	case $k in
	runs) series="silo_reuseport_runs_total{$G}" ;;
	migrate) series="silo_reuseport_migrations_total{$G}" ;;
	sel_* | hash_* | no_group | no_map)
		series="silo_reuseport_selections_total{$G,outcome=\"$k\"}" ;;
	queue_* | cpu_miss | node_empty | node_miss)
		series="silo_reuseport_select_misses_total{$G,step=\"$k\"}" ;;
	err_*) series="silo_reuseport_select_errors_total{$G,error=\"${k#err_}\"}" ;;
	*) series="silo_reuseport_events_total{$G,event=\"$k\"}" ;;
	esac
	got=$(metric "$TMP/m" "$series")
	[[ $got == "$v" ]] || bad+=" $series=$got (show $k=$v)"
	((n++, sum_s += v))
done < <(jq -r '.stats | to_entries[] | "\(.key) \(.value)"' "$TMP/g1")
runs=$(jq .stats.runs "$TMP/g1")
[[ -z $bad && $n -ge 16 && $runs -ge 300 ]] &&
	ok "reuseport selection counters equal reuseport show after traffic ($n)" ||
	not_ok "reuseport selection counters equal reuseport show after traffic" \
		"runs $runs, $n counters;$bad"
# Each counter once: the group's series add up to show's, and no more.
sum_m=$(grep -F "$G" "$TMP/m" | awk '/^silo_reuseport_[a-z_]+_total\{/ { s += $2; c++ } END { print s + 0, c + 0 }')
[[ $sum_m == "$sum_s $n" ]] && ok "every selection counter exported once" ||
	not_ok "every selection counter exported once" "metrics sum/count $sum_m, show $sum_s $n"
outcomes=$(awk -v g="$G" 'index($1, "silo_reuseport_selections_total{" g ",") == 1 { s += $2 } END { print s + 0 }' "$TMP/m")
[[ $outcomes == "$(metric "$TMP/m" "silo_reuseport_runs_total{$G}")" ]] &&
	ok "outcomes add up to runs" || not_ok "outcomes add up to runs" "$outcomes"
expect "HELP from abi.h's descriptions" 0 \
	"^# HELP silo_reuseport_selections_total .*sel_cpu: selected: the socket in this CPU's slot;" \
	cat "$TMP/m"

# The CLI prints the same series, and passes the same parser.
silo --netns "$R" stats --format prometheus >"$TMP/cli"
if awk -f "$CHECK" "$TMP/cli" >"$TMP/check"; then
	ok "stats --format prometheus passes the parser"
else
	not_ok "stats --format prometheus passes the parser" "$(head -c 600 "$TMP/check")"
fi
series() { grep -v '^#' "$1" | sed 's/ [^ ]*$//' | sort; }
diff <(series "$TMP/m") <(series "$TMP/cli") >"$TMP/diff" &&
	ok "same series as silod serves" ||
	not_ok "same series as silod serves" "$(head -c 400 "$TMP/diff")"
diff <(grep '^#' "$TMP/m") <(grep '^#' "$TMP/cli") >/dev/null &&
	ok "same HELP and TYPE lines" || not_ok "same HELP and TYPE lines" "differ"
# shellcheck disable=SC2153 # SILO: from tests/lib.sh
check "stats --format json is -j" bash -c \
	"diff <('$SILO' --pin-root '$PIN_ROOT' --netns '$R' stats --format json | jq -S keys) \
	      <('$SILO' --pin-root '$PIN_ROOT' --netns '$R' -j stats | jq -S keys)"
expect "--format bad refused" 2 "bad --format 'xml'" silo stats --format xml
expect "--format prometheus with --interval refused" 2 "goes with no" \
	silo stats --format prometheus --interval 1

# A silod whose heartbeat stops (stopped past its 1 s timeout) is not up
# though its process lives: the data path no longer uses the cache. Its
# server stops with it; the CLI prints the same exposition.
kill -STOP "$SILOD"
sleep 1.3
silo --netns "$R" stats --format prometheus >"$TMP/stale"
running=$(dstat .running)
kill -CONT "$SILOD"
[[ $running == true && $(metric "$TMP/stale" silo_daemon_up) == 0 ]] &&
	ok "silo_daemon_up 0 while silod runs with a stale heartbeat" ||
	not_ok "silo_daemon_up 0 while silod runs with a stale heartbeat" \
		"running $running, silo_daemon_up $(metric "$TMP/stale" silo_daemon_up)"
for _ in $(seq 100); do [[ $(dstat .cache_trusted) == true ]] && break; sleep 0.05; done
curl -s "$URL" >"$TMP/m"
[[ $(metric "$TMP/m" silo_daemon_up) == 1 ]] &&
	ok "silo_daemon_up 1 again once it beats" ||
	not_ok "silo_daemon_up 1 again once it beats" "$(metric "$TMP/m" silo_daemon_up)"

kill -TERM "$SILOD"
wait "$SILOD"
rc=$?
SILOD=
[[ $rc == 0 ]] && ok "silod exits cleanly" || not_ok "silod exits cleanly" "status $rc"
curl -s -m 2 -o /dev/null "$URL" && not_ok "server stops with silod" "still answers" ||
	ok "server stops with silod"

# IPv6, from the config file.
PORT=$(free_port)
echo "metrics = [::1]:$PORT" >"$TMP/conf"
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q --config "$TMP/conf" &
SILOD=$!
for _ in $(seq 50); do curl -s -o /dev/null "http://[::1]:$PORT/metrics" && break; sleep 0.1; done
curl -s "http://[::1]:$PORT/metrics" >"$TMP/m6"
awk -f "$CHECK" "$TMP/m6" >/dev/null && grep -q '^silo_daemon_up ' "$TMP/m6" &&
	ok "[::1]:PORT from silod.conf" ||
	not_ok "[::1]:PORT from silod.conf" "$(head -c 200 "$TMP/m6")"
kill -TERM "$SILOD"
wait "$SILOD"
SILOD=
