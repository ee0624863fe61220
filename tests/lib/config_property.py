# SPDX-License-Identifier: GPL-2.0
"""config_property.sh's generator and checker: random valid silo.conf files
(devices, services and queue maps, every field, named namespaces) driven
through
apply, show --config and apply again, each step checked against what runs
(xdp status, service list), the state file and the file itself. TAP lines
on stdout; the seed is printed for a rerun (SILO_TEST_SEED)."""
import json, os, random, subprocess, sys, time

SILO, PIN_ROOT, TMP, SEED = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
NSS = sys.argv[5].split(",")
DEVS = ["v%d" % i for i in range(6)]
ROUNDS = int(os.environ.get("PROP_ROUNDS", "5"))
rng = random.Random(SEED)
ST = os.path.join(TMP, "state")
passed = failed = 0


def tap(good, what, detail=""):
    global passed, failed
    if good:
        passed += 1
        print("ok - %s" % what)
    else:
        failed += 1
        print("not ok - %s: %s" % (what, detail[:600].replace("\n", " | ")))
    sys.stdout.flush()


def silo(ns, *args):
    return subprocess.run([SILO, "--pin-root", PIN_ROOT, "--netns", ns] + list(args),
                          capture_output=True, text=True)


def cpus_set(s):
    out = set()
    for part in str(s).split(","):
        if "-" in part:
            a, b = part.split("-")
            out |= set(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out


# --- the generator: a namespace's part, and the next one from it ---------
def new_dev(name):
    return {"name": name, "mode": rng.choice(["native", "skb"]),
            "forward": rng.choice([None, True, False]),
            "cache": rng.choice([None, True, False])}


def new_svc(key):
    proto, port, addr = key
    s = {"proto": proto, "port": port, "addr": addr,
         "cpus": rng.choice(["0", "1", "0-1", "0,1"]),
         "mode": rng.choice([None, "flow", "node"]),
         "queue-size": rng.choice([None, 64, 512, 2048, 4096])}
    return s


def svc_keys():
    return [(p, port, a) for p in ("udp", "tcp") for port in (53, 80, 443, 5353)
            for a in ("any", "10.9.9.9", "fd09::9")]


def new_cpu():
    return rng.randrange(os.cpu_count() or 1)


def first_part(cache_size):
    devs = {d: new_dev(d) for d in rng.sample(DEVS, rng.randint(1, 4))}
    svcs = {k: new_svc(k) for k in rng.sample(svc_keys(), rng.randint(0, 5))}
    # Queue maps of silo's devices (a veth has one RX queue: queue 0).
    qmaps = {d: new_cpu() for d in devs if rng.random() < 0.4}
    return {"devs": devs, "svcs": svcs, "qmaps": qmaps,
            "bypass": rng.random() < 0.3, "est": rng.random() < 0.3,
            "cache_size": cache_size}


def next_part(p):
    devs = {}
    for name, d in p["devs"].items():
        if rng.random() < 0.2:
            continue  # removed
        d = dict(d)
        for f in ("forward", "cache"):
            if rng.random() < 0.4:
                d[f] = rng.choice([None, True, False])  # None: the default
        devs[name] = d
    for name in DEVS:
        if name not in devs and name not in p["devs"] and rng.random() < 0.3:
            devs[name] = new_dev(name)
    if not devs:
        name = rng.choice(DEVS)
        devs[name] = p["devs"].get(name) or new_dev(name)
    svcs = {}
    for k, s in p["svcs"].items():
        if rng.random() < 0.2:
            continue
        s = dict(s)
        for f in ("mode", "queue-size"):
            if rng.random() < 0.4:
                s[f] = new_svc(k)[f]
        if rng.random() < 0.3:
            s["cpus"] = new_svc(k)["cpus"]
        svcs[k] = s
    for k in rng.sample(svc_keys(), 2):
        if k not in svcs and rng.random() < 0.5:
            svcs[k] = new_svc(k)
    qmaps = {}
    for d in devs:
        if d in p["qmaps"] and rng.random() < 0.7:
            qmaps[d] = p["qmaps"][d] if rng.random() < 0.6 else new_cpu()
        elif d not in p["qmaps"] and rng.random() < 0.3:
            qmaps[d] = new_cpu()
    return {"devs": devs, "svcs": svcs, "qmaps": qmaps,
            "bypass": p["bypass"] if rng.random() < 0.7 else not p["bypass"],
            "est": p["est"] if rng.random() < 0.7 else not p["est"],
            "cache_size": p["cache_size"]}


def forwarding(p):
    return any(d["forward"] for d in p["devs"].values())


def write(parts, path):
    lines = ["netns:"]
    for ns, p in parts.items():
        lines.append("  %s:" % ns)
        lines.append("    devices:" + ("" if p["devs"] else " []"))
        for d in p["devs"].values():
            lines.append("      - name: %s" % d["name"])
            lines.append("        mode: %s" % d["mode"])
            for f in ("forward", "cache"):
                if d[f] is not None:
                    lines.append("        %s: %s" % (f, str(d[f]).lower()))
            if d["forward"]:
                if p["bypass"]:
                    lines.append("        allow-firewall-bypass: true")
                if p["est"]:
                    lines.append("        forward-established: true")
            if p["cache_size"]:
                lines.append("        cache-size: %d" % p["cache_size"])
        lines.append("    services:" + ("" if p["svcs"] else " []"))
        for s in p["svcs"].values():
            lines.append("      - proto: %s" % s["proto"])
            lines.append("        port: %d" % s["port"])
            if s["addr"] != "any" or rng.random() < 0.5:
                lines.append('        addr: "%s"' % s["addr"])
            lines.append('        cpus: "%s"' % s["cpus"])
            for f in ("mode", "queue-size"):
                if s[f] is not None:
                    lines.append("        %s: %s" % (f, s[f]))
        if p["qmaps"]:
            lines.append("    queue-maps:")
        for d, cpu in p["qmaps"].items():
            lines.append("      - device: %s" % d)
            lines.append("        queues: {0: %d}" % cpu)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


# --- what runs, against the part ------------------------------------------
def check_running(step, ns, p):
    what = "%s: %s" % (step, ns)
    st = silo(ns, "-j", "xdp", "status")
    try:
        st = json.loads(st.stdout)
    except ValueError:
        tap(False, what + ": xdp status", st.stderr)
        return
    got = {d["device"]: d for d in st.get("devices", [])}
    bad = []
    for name, d in p["devs"].items():
        r = got.get(name)
        if not r:
            bad.append("%s not loaded" % name)
            continue
        want = (d["mode"], bool(d["forward"]), d["cache"] is not False)
        if (r["mode"], r["forward"], r["cache"]) != want:
            bad.append("%s runs %s, file %s" % (name, (r["mode"], r["forward"], r["cache"]), want))
    for name in got:
        if name not in p["devs"]:
            bad.append("%s still loaded" % name)
    if forwarding(p):
        env = st["envelope"]
        if bool(env["override"]) != p["bypass"]:
            bad.append("bypass %s, file %s" % (env["override"], p["bypass"]))
        if env["established"]["opted_in"] != p["est"]:
            bad.append("forward-established %s, file %s" % (env["established"]["opted_in"], p["est"]))
    if p["devs"] and st.get("cache_size") != (p["cache_size"] or 65536):
        bad.append("cache_size %s, file %s" % (st.get("cache_size"), p["cache_size"]))
    tap(not bad, what + ": devices run as the file says", "; ".join(bad))

    sl = silo(ns, "-j", "service", "list")
    svcs = json.loads(sl.stdout).get("services", []) if sl.returncode == 0 else []
    run = {}
    for s in svcs:
        proto_fam, addr_port = s["service"].split(" ")
        proto = proto_fam[:3]
        addr, port = addr_port.rsplit(":", 1)
        addr = addr.strip("[]")
        if addr in ("0.0.0.0", "::"):
            addr = "any"
        run.setdefault((proto, int(port), addr), []).append(s)
    bad = []
    for k, s in p["svcs"].items():
        halves = run.pop(k, [])
        want_n = 2 if k[2] == "any" else 1
        if len(halves) != want_n:
            bad.append("%s: %d halves" % (" ".join(map(str, k)), len(halves)))
        for h in halves:
            w = (h["mode"], cpus_set(h["cpus"]), h["queue_size"])
            f = (s["mode"] or "flow", cpus_set(s["cpus"]), s["queue-size"] or 2048)
            if w != f:
                bad.append("%s runs %s, file %s" % (" ".join(map(str, k)), w, f))
    for k in run:
        bad.append("%s still runs" % " ".join(map(str, k)))
    tap(not bad, what + ": services run as the file says", "; ".join(bad))

    bad = []
    for d in p["devs"]:
        q = silo(ns, "-j", "service", "queue-map", d)
        try:
            got = json.loads(q.stdout)["queue_cpu"][0]
        except (ValueError, KeyError, IndexError) as e:
            bad.append("%s: %s %s" % (d, e, q.stderr))
            continue
        if got != p["qmaps"].get(d):
            bad.append("%s queue 0 on %s, file %s" % (d, got, p["qmaps"].get(d)))
    tap(not bad, what + ": queue maps as the file says", "; ".join(bad))

    path = os.path.join(ST, "netns", ns + ".json")
    try:
        state = json.load(open(path))
        sd = sorted(state["devices"])
        ss = sorted(state["services"])
        sq = sorted(state.get("queue-maps", []))
    except (OSError, ValueError, KeyError) as e:
        tap(False, what + ": the state file", str(e))
        return
    want_s = sorted("%s %d %s" % k for k in p["svcs"])
    want_q = sorted("%s 0" % d for d in p["qmaps"])
    tap(sd == sorted(p["devs"]) and ss == want_s and sq == want_q and
        not state.get("pending"),
        what + ": the state file owns exactly the file's objects",
        "devices %s services %s queue maps %s pending %s" %
        (sd, ss, sq, state.get("pending")))


def apply(path, step, want_nothing=False):
    t0 = time.time()
    r = silo(NSS[0], "apply", "--state-dir", ST, path)
    outs = [r]
    for ns in NSS[1:]:
        outs.append(silo(ns, "apply", "--state-dir", ST, path))
    ok = all(o.returncode == 0 for o in outs)
    text = " ".join(o.stdout + o.stderr for o in outs)
    if want_nothing:
        ok = ok and text.count("nothing to change") == len(NSS)
    tap(ok, "%s: apply%s" % (step, " changes nothing" if want_nothing else ""), text)
    return time.time() - t0


def main():
    print("# seed %d (SILO_TEST_SEED=%d reruns it)" % (SEED, SEED))
    parts = {ns: first_part(rng.choice([None, 4096, 8192])) for ns in NSS}
    objects = 0
    for rnd in range(ROUNDS):
        step = "round %d" % rnd
        f = os.path.join(TMP, "r%d.conf" % rnd)
        write(parts, f)
        objects += sum(len(p["devs"]) + len(p["svcs"]) + len(p["qmaps"])
                       for p in parts.values())
        apply(f, step)
        for ns, p in parts.items():
            check_running(step, ns, p)
        # show --config writes what runs: it applies as no change.
        for ns in NSS:
            shown = os.path.join(TMP, "r%d.%s.shown" % (rnd, ns))
            r = silo(ns, "show", "--config")
            open(shown, "w").write(r.stdout)
            a = silo(ns, "apply", "--state-dir", ST, shown)
            tap(r.returncode == 0 and a.returncode == 0 and "nothing to change" in a.stdout,
                "%s: %s: show --config applies as no change" % (step, ns), a.stdout + a.stderr)
        apply(f, step + " again", want_nothing=True)
        parts = {ns: next_part(p) for ns, p in parts.items()}
    # Nothing declared: everything apply made goes.
    f = os.path.join(TMP, "none.conf")
    write({ns: {"devs": {}, "svcs": {}, "qmaps": {}, "bypass": False, "est": False,
                "cache_size": None} for ns in NSS}, f)
    apply(f, "the end")
    for ns in NSS:
        check_running("the end", ns, {"devs": {}, "svcs": {}, "qmaps": {}, "bypass": False,
                                      "est": False, "cache_size": None})
    print("# %d rounds, %d namespaces, %d objects declared in all" % (ROUNDS, len(NSS), objects))


main()
sys.exit(1 if failed else 0)
