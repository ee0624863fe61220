# SPDX-License-Identifier: GPL-2.0
# dist/grafana/silo.json, the Grafana dashboard of silod's metrics: valid
# JSON, a Prometheus datasource variable and an instance variable, every
# panel with a title and the datasource; and every metric its PromQL names
# (panels' targets and the templating's queries) is a family a running
# lab's silod serves (--metrics, with a silo.conf applied: the apply
# gauges; 'silo stats --format prometheus' serves its families too), with
# every label the dashboard selects, groups or matches on. DASHBOARD=FILE
# checks another file (a broken copy must fail).
. "$TESTS_DIR/lib.sh"
. "$TESTS_DIR/../tools/lab/lab.sh"

D=${DASHBOARD:-$TESTS_DIR/../dist/grafana/silo.json}
P="${NS}db"
R="$P-router"
SILOD=
SERVER=
SINK=
cleanup() {
	[[ -n $SINK ]] && kill "$SINK" 2>/dev/null && wait "$SINK" 2>/dev/null
	[[ -n $SILOD ]] && kill "$SILOD" 2>/dev/null && wait "$SILOD" 2>/dev/null
	[[ -n $SERVER ]] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
	lab_down "$P" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
# Labels every series may carry: the target's, and the histograms' le.
BUILTIN=" instance job le __name__ "

# The file itself.
if ! jq -e 'type == "object"' "$D" >/dev/null 2>"$TMP/jq"; then
	not_ok "dashboard is valid JSON" "$D: $(head -c 300 "$TMP/jq")"
	exit 1
fi
ok "dashboard is valid JSON"
check "schemaVersion 36 or later, a title and a uid" jq -e \
	'.schemaVersion >= 36 and (.title | length > 0) and (.uid | length > 0)' "$D"
# The uid every panel and query names: the datasource variable.
# shellcheck disable=SC2016 # a Grafana variable, not the shell's
DS='${DS_PROMETHEUS}'
check "a Prometheus datasource variable, DS_PROMETHEUS" jq -e \
	'[.templating.list[] | select(.type == "datasource" and .name == "DS_PROMETHEUS" and .query == "prometheus")] | length == 1' "$D"
check "an instance variable" jq -e \
	'[.templating.list[] | select(.type == "query" and .name == "instance")] | length == 1' "$D"

# Every panel, those inside collapsed rows too.
PANELS='[.panels[] | ., (.panels // [])[]]'
bad=$(jq -r --arg ds "$DS" "$PANELS"' | .[] | select(.type != "row") |
	select((.title // "" | length) == 0 or
		(.datasource.uid // "") != $ds or
		(.targets // [] | length) == 0 or
		any(.targets[]; (.expr // "" | length) == 0 or
			(.datasource.uid // $ds) != $ds)) |
	"panel \(.id) \"\(.title // "")\""' "$D")
n=$(jq "$PANELS"' | map(select(.type != "row")) | length' "$D")
[[ -z $bad && $n -ge 1 ]] &&
	ok "every panel has a title, the datasource and queries ($n panels)" ||
	not_ok "every panel has a title, the datasource and queries" "${bad//$'\n'/, }"
check "panel ids unique" jq -e "$PANELS"' | map(.id) | length == (unique | length)' "$D"
# shellcheck disable=SC2016 # jq's $ds
check "every query variable uses the datasource" jq -e --arg ds "$DS" \
	'all(.templating.list[] | select(.type == "query"); .datasource.uid == $ds)' "$D"

# The PromQL: "PANEL<TAB>EXPR", one a line.
jq -r "$PANELS"' | .[] | select(.type != "row") | .title as $t |
	.targets[]? | "\($t)\t\(.expr // "" | gsub("[\n\t]"; " "))"' "$D" >"$TMP/exprs"
jq -r '.templating.list[] | select(.type == "query") |
	"variable \(.name)\t\(.query | if type == "object" then .query else . end |
		gsub("[\n\t]"; " "))"' "$D" >>"$TMP/exprs"

# What each expression names: "M<TAB>PANEL<TAB>METRIC",
# "L<TAB>PANEL<TAB>METRIC<TAB>LABEL" (a label of a selector, of by/without
# for the metrics aggregated, of on/ignoring/group_* for every metric of
# the expression, of label_values for its metric) and "E<TAB>PANEL<TAB>WHY".
# Strings, ranges, durations and $variables are dropped first.
# shellcheck disable=SC2016 # awk's $ fields
awk -F'\t' '
function tokens(e,    n, m) {
	gsub(/"([^"\\]|\\.)*"|'"'"'([^'"'"'\\]|\\.)*'"'"'|`[^`]*`/, "\"\"", e)
	gsub(/\[[^]]*\]/, "", e)
	gsub(/\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*/, "", e)
	n = 0
	while (length(e)) {
		if (match(e, /^[ ]+/)) { e = substr(e, RLENGTH + 1); continue }
		if (match(e, /^\{[^}]*\}/)) k = "{"
		else if (match(e, /^[A-Za-z_:][A-Za-z0-9_:]*/)) k = "id"
		else if (match(e, /^[0-9.][0-9A-Za-z_.]*/)) k = "num"
		else { match(e, /^./); k = substr(e, 1, 1) }
		tk[++n] = k; tv[n] = substr(e, 1, RLENGTH)
		e = substr(e, RLENGTH + 1)
	}
	return n
}
# The index of the parenthesis that closes the one at i (0: none).
function closing(i, n,    d) {
	for (d = 0; i <= n; i++) {
		if (tk[i] == "(") d++
		else if (tk[i] == ")" && --d == 0) return i
	}
	return 0
}
function opening(i,    d) {
	for (d = 0; i >= 1; i--) {
		if (tk[i] == ")") d++
		else if (tk[i] == "(" && --d == 0) return i
	}
	return 0
}
# The labels of a selector {a="", b=~""}.
function selector(panel, metric, s,    l) {
	while (match(s, /[A-Za-z_][A-Za-z0-9_]*[ ]*(=~|!~|!=|=)/)) {
		l = substr(s, RSTART, RLENGTH); sub(/[ ]*[=!~]+$/, "", l)
		print "L\t" panel "\t" metric "\t" l
		s = substr(s, RSTART + RLENGTH)
	}
}
# LABELS(i): the labels listed in the parentheses at i; their end in END.
function labels(i, n,    j, s) {
	s = ""
	for (j = i + 1; j <= n && tk[j] != ")"; j++)
		if (tk[j] == "id") s = s " " tv[j]
		else if (tk[j] != ",") bad = "a label list that is not one"
	END_ = j
	return s
}
# Each label of list for each metric from lo to hi.
function scoped(panel, list, lo, hi,    a, k, i, any) {
	split(list, a, " ")
	any = 0
	for (i = lo; i <= hi; i++) {
		if (!(i in metric)) continue
		any = 1
		for (k in a) print "L\t" panel "\t" tv[i] "\t" a[k]
	}
	if (!any && list != "") bad = "labels of no metric:" list
}
BEGIN {
	split("by without on ignoring group_left group_right", x, " ")
	for (k in x) clause[x[k]] = 1
	split("bool and or unless offset atan2 inf nan start end", x, " ")
	for (k in x) keyword[x[k]] = 1
}
{
	panel = $1; delete tk; delete tv; delete metric; delete used; bad = ""
	n = tokens($2)
	if (!n) { print "E\t" panel "\tan empty expression"; next }
	# The label lists of the clauses and of label_values: no metrics.
	for (i = 1; i <= n; i++) {
		if (tk[i] != "id") continue
		w = tolower(tv[i])
		if ((w in clause) && tk[i + 1] == "(") {
			labels(i + 1, n)
			for (j = i; j <= END_; j++) used[j] = 1
		} else if (tv[i] == "label_values" && tk[i + 1] == "(") {
			hi = closing(i + 1, n)
			for (j = i + 2; j < hi && tk[j] != ","; j++) ;
			for (; j < hi; j++) used[j] = 1
		}
	}
	for (i = 1; i <= n; i++) {
		if (tk[i] == "{" && (i == 1 || tk[i - 1] != "id"))
			bad = "a selector without a metric name"
		if (tk[i] != "id" || (i in used) || tk[i + 1] == "(" ||
		    (tk[i + 1] == "id" && (tolower(tv[i + 1]) in clause)) ||
		    ((tolower(tv[i]) in keyword) || (tolower(tv[i]) in clause)))
			continue
		metric[i] = 1
		print "M\t" panel "\t" tv[i]
		if (tk[i + 1] == "{") selector(panel, tv[i], tv[i + 1])
	}
	for (i = 1; i <= n; i++) {
		if (tk[i] != "id") continue
		w = tolower(tv[i])
		if ((w in clause) && tk[i + 1] == "(") {
			list = labels(i + 1, n)
			if (w == "by" || w == "without") {
				if (tk[i - 1] == ")") { lo = opening(i - 1); hi = i - 1 }
				else { lo = END_ + 1; hi = tk[lo] == "(" ? closing(lo, n) : 0 }
				if (!lo || !hi) { bad = "an aggregation without its argument"; continue }
			} else { lo = 1; hi = n }
			scoped(panel, list, lo, hi)
		} else if (tv[i] == "label_values" && tk[i + 1] == "(") {
			hi = closing(i + 1, n)
			for (j = i + 2; j < hi && tk[j] != ","; j++) ;
			if (j < hi) scoped(panel, labels(j, hi - 1), i + 2, j - 1)
		}
	}
	if (bad != "") print "E\t" panel "\t" bad
}' "$TMP/exprs" >"$TMP/uses.raw" 2>"$TMP/awk" ||
	{ not_ok "the PromQL parsed" "$(head -c 300 "$TMP/awk")"; exit 1; }
sort -u "$TMP/uses.raw" >"$TMP/uses"
nm=$(awk -F'\t' '$1 == "M"' "$TMP/uses" | cut -f3 | sort -u | wc -l)
[[ $nm -ge 1 ]] && ok "the dashboard's PromQL names metrics ($nm)" ||
	not_ok "the dashboard's PromQL names metrics" "none found in $D"
while IFS=$'\t' read -r _ panel why; do
	not_ok "panel \"$panel\": PromQL understood" "$why"
done < <(awk -F'\t' '$1 == "E"' "$TMP/uses")

# A lab router silod serves, applying a silo.conf: the devices forward,
# a service is steered to CPU 0, an echo server's sockets fill a group,
# and a device that is not there waits.
lab_up "$P" || { not_ok "lab" "could not build the lab"; exit 1; }
ECHO=$(readlink -f "$BUILD/examples/echo_server")
cat >"$TMP/silo.conf" <<CONF
netns:
  $R:
    devices:
      - name: r-c
        forward: true
      - name: r-s
        forward: true
      - name: later0
    services:
      - proto: udp
        port: 7302
        cpus: "0"
    reuseport:
      - name: echo
        port: 7301
        proto: udp
        processes:
          exe: $ECHO
CONF
ip netns exec "$R" "$ECHO" --plain --port 7301 >"$TMP/server" &
SERVER=$!
PORT=$(free_port)
URL="http://127.0.0.1:$PORT/metrics"
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$R" -q --apply "$TMP/silo.conf" \
	--state-dir "$TMP/state" --metrics "$PORT" 2>"$TMP/silod.log" &
SILOD=$!
# Served once the cache is trusted, the devices loaded and the group full.
for _ in $(seq 100); do
	curl -s "$URL" >"$TMP/m" 2>/dev/null &&
		grep -q '^silo_daemon_up 1$' "$TMP/m" &&
		grep -q '^silo_offload_csum_info{device="r-s"' "$TMP/m" &&
		grep -q '^silo_reuseport_slots_occupied{group="echo"} [1-9]' "$TMP/m" &&
		break
	sleep 0.1
done
# A little traffic: forwarded, passed, steered, selected.
ip netns exec "$P-server" "$TRAFFIC" udp-sink 7000 --count 200 \
	--timeout 2 >/dev/null 2>&1 &
SINK=$!
sleep 0.3
ip netns exec "$P-client" "$TRAFFIC" udp-send 10.2.0.2 7000 --count 200 \
	--gap-us 100 >/dev/null
wait "$SINK"
SINK=
ip netns exec "$P-client" "$TRAFFIC" udp-send 10.1.0.1 7302 --count 100 \
	--gap-us 100 >/dev/null
ip netns exec "$R" "$TRAFFIC" udp-send 127.0.0.1 7301 --count 100 \
	--gap-us 100 >/dev/null

curl -s "$URL" >"$TMP/m"
silo --netns "$R" stats --format prometheus >"$TMP/cli"
metric() { awk -v s="$2" '$1 == s { print $2 }' "$1"; }
[[ $(metric "$TMP/m" 'silo_xdp_packets_total{verdict="redirect"}') -ge 100 &&
	$(metric "$TMP/m" 'silo_service_rx_total{service="udp:7302"}') -ge 1 &&
	$(metric "$TMP/m" 'silo_reuseport_runs_total{group="echo"}') -ge 1 &&
	-n $(metric "$TMP/m" silo_apply_waiting) ]] &&
	ok "silod serves the lab's traffic" ||
	not_ok "silod serves the lab's traffic" "$(grep -v '^#' "$TMP/m" | head -c 600; tail -3 "$TMP/silod.log")"
for f in m cli; do
	awk -f "$TESTS_DIR/prom_check.awk" "$TMP/$f" >"$TMP/check" ||
		not_ok "$f: the exposition passes the strict parser" "$(head -c 300 "$TMP/check")"
done

# What is served: "F FAMILY TYPE" and "L FAMILY LABEL", from both.
served() {
	awk '
	/^# TYPE / { type[$3] = $4; print "F", $3, $4; next }
	/^#/ || NF == 0 { next }
	{
		s = $0; sub(/ [^ ]+( -?[0-9]+)?$/, "", s)
		n = s; sub(/[{].*/, "", n)
		f = n
		if (!(f in type)) { f = n; sub(/_(bucket|sum|count)$/, "", f) }
		if (!(f in type)) f = n
		if (s !~ /[{]/) next
		l = s; sub(/^[^{]*[{]/, "", l); sub(/[}]$/, "", l)
		gsub(/="([^"\\]|\\.)*"/, "", l)
		k = split(l, a, ",")
		for (i = 1; i <= k; i++) if (a[i] != "") print "L", f, a[i]
	}' "$@" | sort -u
}
served "$TMP/m" >"$TMP/served.silod"
served "$TMP/cli" >"$TMP/served.cli"
sort -u "$TMP/served.silod" "$TMP/served.cli" >"$TMP/served"
extra=$(comm -13 "$TMP/served.silod" "$TMP/served.cli")
[[ -z $extra ]] && ok "silo stats --format prometheus serves silod's families" ||
	not_ok "silo stats --format prometheus serves silod's families" "${extra//$'\n'/, }"

# known METRIC: a family served, or a histogram's or summary's series.
known() {
	local base=${1%_bucket}
	base=${base%_sum} base=${base%_count}
	grep -q "^F $1 " "$TMP/served" ||
		{ [[ $base != "$1" ]] && grep -Eq "^F $base (histogram|summary)$" "$TMP/served"; }
}
family() { # the family of a known METRIC
	grep -q "^F $1 " "$TMP/served" && { echo "$1"; return; }
	local base=${1%_bucket}
	base=${base%_sum} base=${base%_count}
	echo "$base"
}
bad=0
while IFS=$'\t' read -r _ panel m; do
	known "$m" || { not_ok "panel \"$panel\": metric $m served" "no such family in silod's /metrics nor silo stats --format prometheus"; ((bad++)); }
done < <(awk -F'\t' '$1 == "M"' "$TMP/uses")
((bad == 0)) && ok "every metric the dashboard names is served ($nm)"
bad=0 nl=0
while IFS=$'\t' read -r _ panel m l; do
	((nl++))
	[[ $BUILTIN == *" $l "* ]] && continue
	known "$m" || continue # said above
	grep -q "^L $(family "$m") $l$" "$TMP/served" || {
		not_ok "panel \"$panel\": label $l of $m served" \
			"$m has $(awk -v f="$(family "$m")" '$1 == "L" && $2 == f { printf "%s ", $3 }' "$TMP/served")"
		((bad++))
	}
done < <(awk -F'\t' '$1 == "L"' "$TMP/uses")
((bad == 0)) && ok "every label the dashboard uses is served ($nl uses)"
# Only silod: the gauges of its apply (silo stats has no silod to ask).
only=$(awk -F'\t' '$1 == "M" { print $3 }' "$TMP/uses" | sort -u | while read -r m; do
	grep -q "^F $m " "$TMP/served.silod" && ! grep -q "^F $m " "$TMP/served.cli" &&
		echo "$m"
done | tr '\n' ' ')
echo "# served by silod only: ${only:-none}"
# What silod serves that no panel shows (not an error).
unused=$(awk '$1 == "F" { print $2 }' "$TMP/served" | while read -r f; do
	awk -F'\t' -v f="$f" '$1 == "M" && $3 == f { x = 1 } END { exit !x }' "$TMP/uses" || echo "$f"
done | tr '\n' ' ')
echo "# served, on no panel: ${unused:-none}"
