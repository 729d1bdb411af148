#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# calls.sh - no two files of one src/ folder call into each other in a circle (issue 27), computed
# from the object files the build made, not from includes: file A calls into file B when A's
# object uses (nm: undefined) a symbol B's object defines.  A circle of two or more files of one
# folder (A -> B -> ... -> A) fails, with each of its calls and one symbol that makes it.
# Between folders the include rule of layers.sh holds.  KNOWN below lists the circles that exist
# outside src/consumer/ today, each with its reason: they are reported, not failed; any other
# circle, or a known one that changed, fails (and a known one that is gone asks to be removed).
# Usage: tests/lint/calls.sh [BUILD_DIR]   (default $TB_BUILD, set by ctest; the build must exist)
set -uo pipefail
B=${1:-${TB_BUILD:-}}
[ -n "$B" ] && [ -d "$B" ] || { echo "calls: no build directory (give it, or set TB_BUILD)"; exit 2; }
command -v nm > /dev/null || { echo "SKIP: nm not installed (binutils)"; exit 77; }
PY=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
# folder: the files of the circle, exactly -- why it is not broken yet
KNOWN='
profile: prof_unwind.c profile.c -- profile.c interposes dlopen() (the sampler must see every library loaded), which prof_unwind.c calls like any caller
reader: index.c reader.c -- the stream index (index.c) builds the merge heap of reader.c, which reports through index.c diagnostics; not split yet (not the relay work of issue 27)
'
KNOWN="$KNOWN" "$PY" - "$B" << 'EOF'
import os, re, subprocess, sys
build = sys.argv[1]
known = {}
for line in os.environ.get("KNOWN", "").strip().splitlines():
    head, why = line.split(" -- ", 1)
    fold, files = head.split(":", 1)
    known[(fold.strip(), tuple(sorted(files.split())))] = why
objs = {}  # "src/folder/file.c" -> object path
for root, _, files in os.walk(build):
    for f in files:
        if not f.endswith(".c.o"):
            continue
        p = os.path.join(root, f)
        m = re.search(r"/src/([a-z_]+)/(?:CMakeFiles/[^/]+\.dir/)?([^/]+\.c)\.o$", p)
        if m:
            objs.setdefault(f"src/{m.group(1)}/{m.group(2)}", p)
if not objs:
    sys.exit(f"calls: no object file of src/ under {build}: build first")
defs, uses = {}, {}
for src, o in objs.items():
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    d, u = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("U", "w"):
            u.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRWVCGS":
            d.add(parts[2])
    defs[src], uses[src] = d, u
owner = {}
for src, d in defs.items():
    for s in d:
        owner.setdefault(s, src)
folder = lambda f: f.split("/")[1]
edges = {}  # (a, b) -> a symbol
for a, u in uses.items():
    for s in sorted(u):
        b = owner.get(s)
        if b and b != a and folder(a) == folder(b):
            edges.setdefault((a, b), s)
graph = {}
for a, b in edges:
    graph.setdefault(a, []).append(b)
# strongly connected components (Tarjan)
index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1
    stack.append(v); on.add(v)
    for w in graph.get(v, []):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        c = []
        while True:
            w = stack.pop(); on.discard(w); c.append(w)
            if w == v:
                break
        sccs.append(sorted(c))
sys.setrecursionlimit(10000)
for v in sorted(objs):
    if v not in index:
        visit(v)
circles = [c for c in sccs if len(c) > 1]
bad = []
for c in circles:
    key = (folder(c[0]), tuple(os.path.basename(f) for f in c))
    if key in known:
        print(f"calls: known circle in src/{key[0]}/: {', '.join(key[1])} ({known.pop(key)})")
    else:
        bad.append(c)
for fold, files in known:
    if all(f"src/{fold}/{f}" in objs for f in files):  # (not built here: nothing to say)
        print(f"calls: the known circle {', '.join(files)} of src/{fold}/ is gone: remove it from KNOWN in calls.sh")
        bad.append(None)
for c in bad:
    if c is None:
        continue
    print(f"calls: a circle of {len(c)} files in src/{folder(c[0])}/: " + ", ".join(os.path.basename(f) for f in c))
    for (a, b), s in sorted(edges.items()):
        if a in c and b in c:
            print(f"  {os.path.basename(a)} -> {os.path.basename(b)} ({s})")
if bad:
    print("calls: break each circle (a file that calls back into one that calls it: move the shared part "
          "below both, or pass a function pointer through an interface)")
    sys.exit(1)
print(f"calls: {len(objs)} files, {len(edges)} calls between files of a folder, no circle")
EOF
