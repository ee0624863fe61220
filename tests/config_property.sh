# SPDX-License-Identifier: GPL-2.0
# A property of silo apply: random valid silo.conf files (devices with
# every field, the namespace's bypass and forward-established, services
# with every field, queue maps of silo's devices; two named namespaces)
# applied in rounds, each the last with objects removed, added and fields
# changed or removed (back to their defaults). After each apply what runs
# is what the file says (xdp status, service list, queue maps), the state
# file owns exactly the file's objects, show --config writes a file that
# applies as no change, and the file applied again changes nothing.
# SILO_TEST_SEED reruns a seed; PROP_ROUNDS.
. "$TESTS_DIR/lib.sh"

NSS="${NS}pa,${NS}pb"
cleanup() {
	local n
	for n in ${NSS//,/ }; do
		silo --netns "$n" xdp unload v0 >/dev/null 2>&1
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
command -v python3 >/dev/null || {
	echo "skip - config property: no python3"
	exit 0
}
for n in ${NSS//,/ }; do
	ip netns add "$n" || { not_ok "setup" "cannot make $n"; exit 1; }
	for i in 0 1 2 3 4 5; do
		ip -n "$n" link add "v$i" type veth peer name "p$i" &&
			ip -n "$n" link set "v$i" up && ip -n "$n" link set "p$i" up ||
			{ not_ok "setup" "veths in $n"; exit 1; }
	done
done
python3 "$TESTS_DIR/lib/config_property.py" "$SILO" "$PIN_ROOT" "$TMP" \
	"${SILO_TEST_SEED:-$RANDOM}" "$NSS"
