#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_report_html_has_cpu_occupancy_lanes.sh - `report --html` of a trace recorded with --kernel
# (docs/CONVERT.md, docs/KERNEL.md) draws, on each CPU's lane, which thread ran there, from one
# sched_switch to the next. Checked at the data level (the page's tb-data JSON "cpus") against
# the trace as `tracebuf dump --format json` gives it, computed here on its own:
#   - every run lies on a CPU lane, runs of a lane are in time order and do not overlap;
#   - the runs are exactly, in order, each CPU's consecutive sched_switch pairs where the task
#     switched in by one is named as prev by the next (its tid, start and duration to the ns;
#     other pairs have switches of other processes left out between them), the idle task
#     (tid 0) left out, plus at most one run per CPU open at the trace's end;
#   - the two handoff threads ran (runs of their tids, named kh-a and kh-b);
#   - a trace without kernel events has "cpus": null;
#   - where node, Chromium and tests/browser/node_modules are (tests/browser/README.md), the
#     kernel page opens without an error, names the CPU occupancy in its summary and draws runs
#     (data-cpu-runs-drawn > 0); the other page draws none.
# Skips (77) with the reason when perf_event_open on tracepoints is not allowed here.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the page's data)"; exit 77; }
HO=${TB_KERNEL_HANDOFF:?}

if ! out=$("$CLI" record -q --kernel -o "$T/probe" -- true 2>&1); then
	case $out in
	*"refused"*|*"not mounted"*|*"not readable"*)
		echo "SKIP: --kernel is not available here: $out"; exit 77 ;;
	esac
	fail "record --kernel -- true: $out"
fi

"$CLI" record -q --kernel --kernel-pages 4096 -o "$T/h" -- "$HO" 300 > "$T/h.tids" 2> "$T/h.err" || { cat "$T/h.err"; fail "record the handoff"; }
"$CLI" report --html -q -o "$T/h.html" "$T/h" || fail "report --html"
"$CLI" dump --format json "$T/h" > "$T/h.jsonl" || fail "dump"
"$CLI" record -q -o "$T/u" -- "$HO" 10 > /dev/null 2> "$T/u.err" || { cat "$T/u.err"; fail "record without --kernel"; }
"$CLI" report --html -q -o "$T/u.html" "$T/u" || fail "report --html (no kernel)"

"$PY" - "$T/h.html" "$T/h.jsonl" "$T/h.tids" "$T/u.html" <<'PY' || fail "CPU occupancy lanes"
import json, re, sys
def data(p):
    m = re.search(r'<script type="application/json" id="tb-data">(.*?)</script>', open(p).read(), re.S)
    return json.loads(m.group(1))
d = data(sys.argv[1])
oc = d.get("cpus")
if not oc:
    sys.exit("the page has no CPU occupancy")
n = len(oc["lane"])
if oc["kept"] != oc["total"] or oc["kept"] != n or not n:
    sys.exit(f"cpus: kept {oc['kept']}, total {oc['total']}, {n} runs")
lanes = d["lanes"]
t0 = int(d["start_ns"])
got = {}
for l, s, du, tid in zip(oc["lane"], oc["start"], oc["dur"], oc["tid"]):
    if lanes[l]["kind"] != "cpu" or du < 0 or tid == 0:
        sys.exit(f"run on lane {lanes[l]['label']}: tid {tid}, dur {du}")
    got.setdefault(lanes[l]["cpu"], []).append((t0 + s, du, tid))
for cpu, runs in got.items():
    for (s0, d0, _), (s1, _, _) in zip(runs, runs[1:]):
        if s1 < s0 + d0:
            sys.exit(f"cpu {cpu}: runs overlap or go back ({s0}+{d0} > {s1})")
# the same from the dump: each CPU's consecutive switches
# (a pair whose second switch does not name the first one's next task as prev has switches
# left out between them: not a run)
last = {}
want = {}
for line in open(sys.argv[2]):
    e = json.loads(line)
    if e.get("event") != "sched_switch":
        continue
    f, cpu, ts = e["fields"], e["cpu"], e["ts"]
    if cpu in last and f["prev_tid"] != 0 and f["prev_tid"] == last[cpu][1]:
        want.setdefault(cpu, []).append((last[cpu][0], ts - last[cpu][0], f["prev_tid"]))
    last[cpu] = (ts, f["next_tid"])
if set(want) - set(got):
    sys.exit(f"CPUs with runs in the trace but none in the page: {set(want) - set(got)}")
for cpu, runs in got.items():
    w = want.get(cpu, [])
    extra = len(runs) - len(w)
    if extra not in (0, 1):
        sys.exit(f"cpu {cpu}: {len(runs)} runs in the page, {len(w)} switch pairs in the trace")
    for k, (a, b) in enumerate(zip(runs, w)):
        if a[2] != b[2] or abs(a[0] - b[0]) > 1 or abs(a[1] - b[1]) > 2:
            sys.exit(f"cpu {cpu} run {k}: page {a}, trace {b}")
ta, tb = map(int, open(sys.argv[3]).read().split())
names = oc["names"]
for tid, nm in ((ta, "kh-a"), (tb, "kh-b")):
    if not any(r[2] == tid for runs in got.values() for r in runs):
        sys.exit(f"no run of {nm} (tid {tid})")
    if names.get(str(tid)) != nm:
        sys.exit(f"tid {tid} is named {names.get(str(tid))!r}, want {nm}")
u = data(sys.argv[4])
if u.get("cpus", "absent") is not None:
    sys.exit(f"a trace without kernel events: cpus = {u.get('cpus', 'absent')}")
print(f"ok: {n} runs on {len(got)} CPU lanes = the trace's switch pairs")
PY

BR=$TB_SRC/tests/browser
if command -v node > /dev/null && [ -x "${TB_CHROMIUM:-/usr/bin/chromium}" ] && [ -d "$BR/node_modules/playwright-core" ]; then
	(cd "$BR" && node check_page.mjs --url "file://$T/h.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check 'summary=document.getElementById("tb-summary").textContent.includes("cpu occupancy")' \
		--check 'runs drawn=Number(document.body.dataset.cpuRunsDrawn) > 0') || fail "the kernel page in Chromium"
	(cd "$BR" && node check_page.mjs --url "file://$T/u.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check 'no occupancy in the summary=!document.getElementById("tb-summary").textContent.includes("cpu occupancy")' \
		--check 'no runs=document.body.dataset.cpuRunsDrawn === "0"') || fail "the page without kernel events in Chromium"
else
	echo "note: node, Chromium or tests/browser/node_modules missing: the pages are not drawn (data checked only)"
fi
echo "PASS"
