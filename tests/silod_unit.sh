# SPDX-License-Identifier: GPL-2.0
# silod under its systemd unit: the units verify (systemd-analyze, where
# installed), and silod runs as the unit runs it, with only the capabilities
# its CapabilityBoundingSet grants; with fewer it says what it lacks.
. "$TESTS_DIR/lib.sh"

N="${NS}unit"
UNITS="$TESTS_DIR/../dist"
ip netns add "$N" || exit 1
ip -n "$N" link add v0 type veth peer name v0p
ip -n "$N" link set v0 up
ip -n "$N" link set v0p up
check "load" silo --netns "$N" xdp load v0 --forward

# The units, with ExecStart pointing at this build.
mkdir -p "$TMP/units"
for u in silod.service silod@.service; do
	sed "s|@SBINDIR@/silod|$BUILD/silod|" "$UNITS/$u.in" >"$TMP/units/$u"
done
# The man pages the units name (Documentation=) are the tree's, not
# installed where this runs: verify leaves them out (--man=no), and each
# is checked to be one of docs/man/ instead.
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify silod.service" \
		systemd-analyze verify --man=no "$TMP/units/silod.service"
	cp "$TMP/units/silod@.service" "$TMP/units/silod@$N.service"
	check "systemd-analyze verify silod@.service" \
		systemd-analyze verify --man=no "$TMP/units/silod@$N.service"
else
	echo "skip - systemd-analyze verify: systemd-analyze not installed"
fi
docs=()
for u in silod.service silod@.service; do
	# shellcheck disable=SC2013 # the key's value is a list of words
	for d in $(sed -n 's/^Documentation=//p' "$UNITS/$u.in"); do
		p=${d#man:}
		p=${p%)}
		[[ $d == man:*\(*\) && -f $TESTS_DIR/../docs/man/${p%(*}.${p#*(}.rst ]] ||
			docs+=("$u: $d")
	done
done
((${#docs[@]} == 0)) && ok "the units' Documentation= pages are silo's" ||
	not_ok "the units' Documentation= pages are silo's" "${docs[*]}"

# CAP_BPF CAP_NET_ADMIN ... -> -all,+bpf,+net_admin,...
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNITS/silod@.service.in" |
	tr '[:upper:]' '[:lower:]' | sed 's/cap_/+/g; s/ /,/g')
exec_start=$(sed -n "s|^ExecStart=||p" "$TMP/units/silod@.service" |
	sed "s|%i|$N|")
read -r -a cmd <<<"$exec_start"

running() {
	silo --netns "$N" -j daemon status 2>/dev/null | jq -e '.running' >/dev/null
}

# With a silo.conf that declares a group: taking a server's sockets is
# within the unit's capabilities too.
ip netns exec "$N" "$BUILD/examples/echo_server" --plain --port 7303 >"$TMP/server" &
server=$!
for _ in $(seq 50); do [[ -s $TMP/server ]] && break; sleep 0.1; done
cat >"$TMP/silo.conf" <<CONF
netns:
  $N:
    reuseport:
      - name: unit
        port: 7303
        proto: udp
        processes:
          pidfile: $TMP/server.pid
CONF
jq .pid "$TMP/server" >"$TMP/server.pid"
setpriv --bounding-set "-all,$caps" "${cmd[@]}" --pin-root "$PIN_ROOT" -q \
	--apply "$TMP/silo.conf" --state-dir "$TMP/state" &
pid=$!
for _ in $(seq 100); do running && break; sleep 0.05; done
running && ok "silod runs with the unit's capabilities ($caps)" ||
	not_ok "silod runs with the unit's capabilities ($caps)" "not running"
check "silo.conf's group made with them" bash -c \
	"'$SILO' --pin-root '$PIN_ROOT' --netns '$N' reuseport show unit -j | jq -e '[.groups[0].slots[] | select(.cookie != 0)] | length > 0'"
kill "$server" && wait "$server" 2>/dev/null
kill -TERM "$pid"
wait "$pid"
rc=$?
[[ $rc == 0 ]] && ok "SIGTERM: clean exit" || not_ok "SIGTERM: clean exit" "status $rc"

expect "without CAP_BPF it says so" 1 "needs root \(CAP_BPF and CAP_NET_ADMIN\)" \
	setpriv --bounding-set -all,+net_admin "${cmd[@]}" --pin-root "$PIN_ROOT"

check "unload" silo --netns "$N" xdp unload v0
ip netns del "$N"
