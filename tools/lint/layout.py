#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/lint/layout.py [ROOT]  ("make lint")

Keeps the tree's shape: what docs/ARCHITECTURE.md ("Reading the code") says,
checked on every change.

  size     no C file in bpf/, include/ or user/ over MAX_FILE lines, no
           function over MAX_FUNC lines
  wall     a quoted #include stays inside its folder or names a public
           header: the CLI (user/silo/) and examples/ include only
           silo/silo.h of libsilo; silod (user/silod/) only what user/lib/
           gives it (user/lib/silod.h); a module of libsilo in its own
           folder (user/lib/MODULE/) keeps its private header there, the
           rest of the library sees user/lib/*.h; BPF programs only
           bpf/lib/ and include/silo/; tests and tools may include a
           module's private header (a unit test tests one module), and
           name the harness they share (tests/lib/, -Itests/lib) only by
           its file name
  circle   the .c files of one folder depend on each other one way: no
           two files (or more, in a ring) call each other's functions or
           use each other's global variables. A file uses B.c when it
           calls or takes the address of a function B.c defines (not
           static), or a static inline function of B's header B.h, or
           names a global variable of B.c; comments, strings, members
           (".f", "->f") and a file's own names (its statics, variables,
           parameters) are no use. Each ring is printed with what makes
           its edges ("a.c -> b.c: f(), n")

What does not hold yet is listed in tools/lint/layout.allow, one line
each, with the size it has now: an entry may shrink or go, never grow, and
one that no longer applies must be removed (the list stays exact). Exits 1
with one line per finding.
"""
import os
import re
import subprocess
import sys

MAX_FILE = 600
MAX_FUNC = 80

# Folder -> the headers outside it a file there may include ("quoted").
WALLS = {
    "bpf": ("bpf/lib/", "include/silo/"),
    "bpf/lib": ("include/silo/",),
    "bpf/tests": ("bpf/lib/", "include/silo/"),
    "include/silo": ("include/silo/",),
    "include/silo/abi": ("include/silo/",),
    "user/silo": ("include/silo/silo.h",),
    "examples": ("include/silo/silo.h",),
    "user/silod": ("include/silo/", "user/lib/silod.h"),
}
# The harness of tests and tools, included by file name only.
TESTLIB = "tests/lib"
# Inside user/lib/ a module's folder may use its parent's headers, and
# only its own folder sees its private header.
LIB = "user/lib"

FUNC_START = re.compile(r"^[A-Za-z_][^;=]*\b([A-Za-z_]\w*)\s*\([^;]*$")
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
# A global variable's definition, in column 0: "struct live L = {",
# "bool use_syslog;", "const char *const names[] = {" (not static, extern
# or a declaration of a function).
GLOBAL = re.compile(r"^(?!static\b|extern\b|typedef\b|return\b)"
                    r"[A-Za-z_][\w\s\*]*?[\s\*]([A-Za-z_]\w*)\s*"
                    r"(?:\[[^\]]*\]\s*)*(?:=|;)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def tracked(root):
    out = subprocess.run(
        ["git", "-C", root, "ls-files", "-co", "--exclude-standard"],
        capture_output=True, text=True, check=True).stdout.split()
    return sorted(f for f in out if f.endswith((".c", ".h")) and
                  os.path.exists(os.path.join(root, f)))


def functions(lines):
    """(name, first line, length) of each function: kernel style, the body
    opens with '{' in column 0 and closes with '}' in column 0."""
    found, head = [], None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FUNC_START.match(line)
        if m and not line.startswith(("#", "typedef", "struct {")):
            # the first name called: "int f(int (*cb)(void))" is f
            names = [n for n in CALL.findall(line)
                     if not n.startswith("__attribute")]
            head = (names[0] if names else m.group(1), i)
        if line.startswith("{") and head and i - head[1] < 8:
            j = i + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            found.append((head[0], head[1] + 1, j - head[1] + 1))
            head = None
            i = j
        i += 1
    return found


def resolve(root, src, inc):
    """The tree path an include names, or None (a system or build header)."""
    here = os.path.dirname(src)
    for base in (here, "include", "bpf", os.path.join(root, "build")):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.exists(os.path.join(root, cand)):
            return cand
    return None


def wall_ok(src, target):
    folder = os.path.dirname(src)
    tfolder = os.path.dirname(target)
    if tfolder == folder:
        return True
    if folder.startswith(("tests", "tools")):
        return True
    if folder.startswith(LIB) and target.startswith(LIB):
        # a module's files see user/lib's headers and their own folder's;
        # a module's folder (user/lib/MODULE/) keeps its private header:
        # the rest of the library sees the module's user/lib/MODULE.h.
        return tfolder == LIB
    allowed = WALLS.get(folder)
    if allowed is None:
        allowed = WALLS.get(folder.split("/")[0], ("include/silo/",))
    return any(target == a or (a.endswith("/") and target.startswith(a))
               for a in allowed)


def strip_c(text):
    """text with its comments, strings and character constants blanked
    (newlines kept, so lines stay where they were): a name in them is no
    use of anything."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
            continue
        else:
            j = i + 1
            while j < n and text[j] not in "/\"'":
                j += 1
            out.append(text[i:j])
            i = j
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


# A name, and what tells its use: a member (".name", "->name") or a tag
# ("struct name") is no use of a function or a global; "name(" is a call.
USE = re.compile(r"(\.|->|\b(?:struct|union|enum)\s+)?\b([A-Za-z_]\w*)\b"
                 r"(\s*\()?")
# A variable or a parameter the file declares ("__u64 beat =", "int *n)"):
# where the name is not called it is the file's own, not a function's
# address or another file's global.
DECL = re.compile(r"\b([A-Za-z_]\w*)\s*\**\s*\b([A-Za-z_]\w*)\s*(?=[=;,)\[])")
NOT_TYPE = {"return", "case", "goto", "sizeof", "else", "do", "extern"}


def definitions(lines):
    """(name, line, static) of each function the lines define."""
    out = []
    for name, first, _ in functions(lines):
        head = lines[first - 1]
        head = head[:head.find(name)] if name in head else head
        out.append((name, first, "static" in head.split()))
    return out


def module_names(root, srcs):
    """What each .c file of a folder gives the others: its functions and
    global variables (not static), and the static inline functions of its
    header (X.h beside X.c): calling one is calling the module X."""
    text, give, own, local, fns = {}, {}, {}, {}, set()
    for f in srcs:
        lines = strip_c(open(os.path.join(root, f)).read()).split("\n")
        text[f] = lines
        give[f], own[f] = set(), set()
        local[f] = set(name for line in lines if not re.match(
            r"\s*(#|extern\b)", line) for typ, name in DECL.findall(line)
            if typ not in NOT_TYPE)
        for name, _, static in definitions(lines):
            own[f].add(name)
            if not static:
                give[f].add(name)
                fns.add(name)
        for line in lines:
            m = GLOBAL.match(line)
            if m:
                own[f].add(m.group(1))
                give[f].add(m.group(1))
        header = os.path.join(root, f[:-2] + ".h")
        if os.path.exists(header):
            hl = strip_c(open(header).read()).split("\n")
            for name, _, static in definitions(hl):
                if static:
                    own[f].add(name)
                    give[f].add(name)
                    fns.add(name)
    return text, give, own, local, fns


def circles(root, files):
    """Rings of .c files of one folder that call one another (a function a
    file defines, or a static inline one of its header, called or its
    address taken), or use one another's global variables. Each ring with
    what makes its edges: {ring: ["a.c -> b.c: f(), g", ...]}."""
    by_folder = {}
    for f in files:
        if f.endswith(".c"):
            by_folder.setdefault(os.path.dirname(f), []).append(f)
    rings = {}
    for folder, srcs in sorted(by_folder.items()):
        text, give, own, local, fns = module_names(root, srcs)
        where = {}
        for f in srcs:
            for name in give[f]:
                where.setdefault(name, set()).add(f)
        # Two files that each have a main() are two programs: they are
        # never linked together, whatever names they share.
        mains = set(f for f in srcs if "main" in own[f])
        calls = {f: {} for f in srcs}
        for f in srcs:
            for line in text[f]:
                if re.match(r"\s*#\s*(include|if|ifdef|ifndef|elif|undef)\b",
                            line):
                    continue
                for member, name, call in USE.findall(line):
                    # A name the file defines itself is its own.
                    if member or name in own[f] or (
                            not call and name in local[f]):
                        continue
                    for g in where.get(name, ()):
                        if g != f and not (f in mains and g in mains):
                            calls[f].setdefault(g, set()).add(name)
        # Tarjan's strongly connected components.
        index, low, stack, on, out = {}, {}, [], set(), []

        def visit(v, n=[0]):
            index[v] = low[v] = n[0]
            n[0] += 1
            stack.append(v)
            on.add(v)
            for w in sorted(calls[v]):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))

        for v in sorted(srcs):
            if v not in index:
                visit(v)
        for comp in out:
            why = []
            for a in comp:
                for b in comp:
                    if b in calls[a]:
                        why.append("%s -> %s: %s" % (
                            os.path.basename(a), os.path.basename(b),
                            ", ".join(n + "()" if n in fns else n
                                      for n in sorted(calls[a][b]))))
            ring = "%s %s" % (folder, " ".join(os.path.basename(c)
                                                 for c in comp))
            rings[ring] = why
    return rings


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    allow_path = os.path.join(root, "tools/lint/layout.allow")
    allow = {}
    for line in open(allow_path):
        line = line.split("#")[0].strip()
        if line:
            kind, rest = line.split(None, 1)
            if kind in ("file", "func"):
                what, n = rest.rsplit(None, 1)
                allow[(kind, what)] = int(n)
            else:
                allow[(kind, rest)] = 0
    files = tracked(root)
    found = {}
    for f in files:
        if not f.startswith(("bpf/", "include/", "user/")):
            continue
        lines = open(os.path.join(root, f)).read().split("\n")
        if len(lines) - 1 > MAX_FILE:
            found[("file", f)] = len(lines) - 1
        for name, first, n in functions(lines):
            if n > MAX_FUNC:
                found[("func", "%s:%s" % (f, name))] = n
    for f in files:
        if not f.startswith(("bpf/", "include/", "user/", "examples/")):
            continue
        for line in open(os.path.join(root, f)):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = resolve(root, f, m.group(1))
            if target and not wall_ok(f, target):
                found[("include", "%s %s" % (f, target))] = 0
    for f in files:
        if not f.startswith(("tests/", "tools/")):
            continue
        for line in open(os.path.join(root, f)):
            m = INCLUDE.match(line)
            if not m or "/" not in m.group(1):
                continue
            target = resolve(root, f, m.group(1))
            if target and target.startswith(TESTLIB + "/"):
                found[("include", "%s %s" % (f, target))] = 0
    rings = circles(root, files)
    for ring in rings:
        found[("circle", ring)] = 0

    bad, why = [], []
    for key, n in sorted(found.items()):
        kind, what = key
        if key not in allow:
            limit = {"file": MAX_FILE, "func": MAX_FUNC}.get(kind)
            bad.append("%s %s%s" % (kind, what,
                                    " %d lines (at most %d)" % (n, limit)
                                    if limit else ""))
            # what makes the ring: each edge and the names it uses
            why += [(len(bad) - 1, "  " + w)
                    for w in rings.get(what, ()) if kind == "circle"]
        elif n > allow[key]:
            bad.append("%s %s grew to %d lines (layout.allow: %d)" %
                       (kind, what, n, allow[key]))
    for key in sorted(set(allow) - set(found)):
        bad.append("%s %s: holds now, remove it from tools/lint/layout.allow"
                   % key)
    for i, b in enumerate(bad):
        print("layout: " + b)
        for _, w in (x for x in why if x[0] == i):
            print("layout: " + w)
    if bad:
        print("layout: %d findings: keep files under %d lines, functions "
              "under %d, includes inside their walls, calls one way "
              "(docs/ARCHITECTURE.md)" % (len(bad), MAX_FILE, MAX_FUNC))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
