# SPDX-License-Identifier: GPL-2.0
# dist/kubernetes/silod.yaml, the DaemonSet that runs silod on every node:
# it parses, and every flag, path, port and capability it names is one
# silod, silo and silod.service agree with; its silo.conf is a good file.
. "$TESTS_DIR/lib.sh"

Y="$TESTS_DIR/../dist/kubernetes/silod.yaml"
PY=/usr/bin/python3
if ! "$PY" -c 'import yaml' 2>/dev/null; then
	echo "skip - dist: no python3-yaml (tools/setup.sh installs it)"
	exit 0
fi

# field NAME: one fact of the manifest, one per line.
"$PY" - "$Y" >"$TMP/facts" <<'PY' || { not_ok "manifest parses" "$(cat "$TMP/facts")"; exit 0; }
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
kinds = {d["kind"]: d for d in docs}
cm, ds = kinds["ConfigMap"], kinds["DaemonSet"]
spec = ds["spec"]["template"]["spec"]
c = spec["containers"][0]
print("kinds", " ".join(sorted(kinds)))
print("hostNetwork", spec.get("hostNetwork"))
print("hostPID", spec.get("hostPID"))
print("selector", ds["spec"]["selector"]["matchLabels"] == ds["spec"]["template"]["metadata"]["labels"])
print("command", " ".join(c["command"]))
print("liveness", " ".join(c["livenessProbe"]["exec"]["command"]))
print("ports", " ".join(str(p["containerPort"]) for p in c["ports"]))
print("caps", " ".join(sorted(c["securityContext"]["capabilities"]["add"])))
print("drop", " ".join(c["securityContext"]["capabilities"]["drop"]))
print("privileged", c["securityContext"].get("privileged"))
vols = {v["name"]: v for v in spec["volumes"]}
for m in c["volumeMounts"]:
    v = vols[m["name"]]
    src = v["hostPath"]["path"] if "hostPath" in v else "configmap:" + v["configMap"]["name"]
    print("mount", m["mountPath"], src)
print("configmap", cm["metadata"]["name"], " ".join(cm["data"]))
PY
ok "manifest parses"
"$PY" -c 'import sys, yaml; d = [x for x in yaml.safe_load_all(open(sys.argv[1])) if x["kind"] == "ConfigMap"][0]; print(d["data"]["silo.conf"], end="")' "$Y" >"$TMP/silo.conf"
fact() { sed -n "s/^$1 //p" "$TMP/facts"; }

[[ $(fact kinds) == "ConfigMap DaemonSet" ]] && ok "a ConfigMap and a DaemonSet" ||
	not_ok "a ConfigMap and a DaemonSet" "$(fact kinds)"
[[ $(fact hostNetwork) == True && $(fact hostPID) == True && $(fact selector) == True ]] &&
	ok "hostNetwork, hostPID, selector" ||
	not_ok "hostNetwork, hostPID, selector" "$(grep -E '^(host|selector)' "$TMP/facts")"

# silod's flags: each one silod --help lists.
read -r -a cmd <<<"$(fact command)"
[[ ${cmd[0]} == /usr/sbin/silod ]] && ok "runs /usr/sbin/silod" || not_ok "runs /usr/sbin/silod" "${cmd[0]}"
help=$("$BUILD/silod" --help)
bad=
for w in "${cmd[@]:1}"; do
	[[ $w == --* ]] && ! grep -q -- "$w " <<<"$help" && bad+="$w "
done
[[ -z $bad ]] && ok "silod knows every flag" || not_ok "silod knows every flag" "$bad"
arg() { # the value after flag $1
	local i
	for ((i = 1; i < ${#cmd[@]}; i++)); do
		[[ ${cmd[i]} == "$1" ]] && echo "${cmd[i + 1]}"
	done
}

# The probe: silo takes it, and it fails while no silod beats.
read -r -a probe <<<"$(fact liveness)"
[[ ${probe[0]} == /usr/sbin/silo ]] && ok "probe runs /usr/sbin/silo" ||
	not_ok "probe runs /usr/sbin/silo" "${probe[0]}"
N="${NS}dist"
ip netns add "$N" || exit 1
daemon=""
trap '[[ -n $daemon ]] && kill "$daemon" 2>/dev/null && wait "$daemon"
	ip netns del "$N" 2>/dev/null; rm -rf "$TMP"' EXIT
expect "probe fails where silo never ran" 1 "" silo --netns "$N" "${probe[@]:1}"
ip -n "$N" link add d0 type veth peer name d1
check "load" silo --netns "$N" xdp load d0
expect "probe fails without silod" 1 "silod: not running" silo --netns "$N" "${probe[@]:1}"
"$BUILD/silod" --pin-root "$PIN_ROOT" --netns "$N" -q &
daemon=$!
for _ in $(seq 50); do
	silo --netns "$N" "${probe[@]:1}" >/dev/null 2>&1 && break
	sleep 0.1
done
expect "probe passes while silod beats" 0 "silod: running" silo --netns "$N" "${probe[@]:1}"
kill "$daemon" && wait "$daemon"
daemon=""
expect "probe fails once silod stopped" 1 "" silo --netns "$N" "${probe[@]:1}"
check "unload" silo --netns "$N" xdp unload d0

# The metrics port is the one silod listens on.
port=$(arg --metrics)
[[ ${port##*:} == "$(fact ports)" ]] && ok "metrics port" ||
	not_ok "metrics port" "--metrics $port, containerPort $(fact ports)"

# Capabilities: exactly the unit's bounding set, all others dropped.
unit=$(sed -n 's/^CapabilityBoundingSet=//p' "$TESTS_DIR/../dist/silod.service.in" |
	tr ' ' '\n' | sed 's/^CAP_//' | sort | tr '\n' ' ')
[[ "$(fact caps) " == "$unit" && $(fact drop) == ALL && $(fact privileged) == False ]] &&
	ok "capabilities are silod.service's" ||
	not_ok "capabilities are silod.service's" "pod: $(fact caps), unit: $unit, drop $(fact drop)"

# Paths: the pins, the state and the file where silod looks for them.
mounts=$(fact mount)
grep -qx "/sys/fs/bpf /sys/fs/bpf" <<<"$mounts" &&
	"$SILO" --help | grep -q "default /sys/fs/bpf/silo" &&
	ok "bpffs mounted where the pins are" || not_ok "bpffs mounted where the pins are" "$mounts"
[[ $(arg --state-dir) == /var/lib/silo ]] && grep -qx "/var/lib/silo /var/lib/silo" <<<"$mounts" &&
	grep -q "default /var/lib/silo" <<<"$help" &&
	ok "state on the host" || not_ok "state on the host" "$(arg --state-dir): $mounts"
conf=$(arg --apply)
grep -qx "$(dirname "$conf") configmap:silo-conf" <<<"$mounts" &&
	[[ $(fact configmap) == "silo-conf $(basename "$conf")" ]] &&
	ok "silo.conf from the ConfigMap" || not_ok "silo.conf from the ConfigMap" "$conf: $mounts / $(fact configmap)"

# Its silo.conf is a good file (checked whole; this namespace's part is
# empty, so nothing is planned).
expect "its silo.conf is good" 0 "nothing to change" \
	silo --netns "$N" apply --dry-run --state-dir "$TMP/state" "$TMP/silo.conf"
