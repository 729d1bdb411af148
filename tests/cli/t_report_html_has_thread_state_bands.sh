#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_report_html_has_thread_state_bands.sh - `report --html` of a trace recorded with --kernel
# (docs/CONVERT.md, docs/KERNEL.md) carries, for each thread lane, the thread's states from the
# kernel's sched events (running, runnable, blocked), drawn as a band under its events. Checked
# at the data level (the page's tb-data JSON; tests/browser draws pages where Chromium exists):
#   - per lane the intervals are in time order and do not overlap; every interval's state is
#     one of the three names;
#   - per thread with a lane, the intervals of each state sum to what `report` says of that
#     thread (the report object embedded in the page: running_ns, runnable_ns, blocked_ns),
#     within 1 ns per interval (each end is converted to ns on its own);
#   - the 50 ms nap span of tb-kernel-handoff (a span of the page) lies over >= 49 ms of its
#     thread's band in state blocked;
#   - a trace without kernel events has "states": null;
#   - where node, Chromium and tests/browser/node_modules are (tests/browser/README.md), both
#     pages open without an error in headless Chromium, the kernel page's summary names the
#     thread states, and its timeline has pixels of the blocked band's colour; the other none.
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
"$CLI" record -q -o "$T/u" -- "$HO" 10 > /dev/null 2> "$T/u.err" || { cat "$T/u.err"; fail "record without --kernel"; }
"$CLI" report --html -q -o "$T/u.html" "$T/u" || fail "report --html (no kernel)"

"$PY" - "$T/h.html" "$T/h.tids" "$T/u.html" <<'PY' || fail "thread-state bands"
import json, re, sys
def data(p):
    m = re.search(r'<script type="application/json" id="tb-data">(.*?)</script>', open(p).read(), re.S)
    return json.loads(m.group(1))
d = data(sys.argv[1])
a, b = map(int, open(sys.argv[2]).read().split())
st = d.get("states")
if not st:
    sys.exit("the page has no thread states")
if st["names"] != ["running", "runnable", "blocked"] or st["kept"] != st["total"] or st["kept"] != len(st["lane"]):
    sys.exit(f"states: names {st['names']}, kept {st['kept']}, total {st['total']}, {len(st['lane'])} intervals")
lanes = d["lanes"]
per = {}
for l, s, du, k in zip(st["lane"], st["start"], st["dur"], st["state"]):
    if lanes[l]["kind"] != "thread" or k not in (0, 1, 2) or du < 0:
        sys.exit(f"interval on lane {lanes[l]} state {k} dur {du}")
    per.setdefault(l, []).append((s, du, k))
for l, iv in per.items():
    for (s0, d0, _), (s1, _, _) in zip(iv, iv[1:]):
        if s1 < s0 + d0:
            sys.exit(f"lane {lanes[l]['label']}: intervals overlap or go back ({s0}+{d0} > {s1})")
rep = {t["tid"]: t for t in d["report"]["sched"]["threads"]}
checked = 0
for l, iv in per.items():
    tid = lanes[l]["tid"]
    t = rep.get(tid)
    if not t:
        sys.exit(f"lane of tid {tid} has states, report has none")
    for k, key in enumerate(("running_ns", "runnable_ns", "blocked_ns")):
        got = sum(du for _, du, kk in iv if kk == k)
        if abs(got - t[key]) > len(iv) + 1:
            sys.exit(f"tid {tid}: band {key} {got}, report {t[key]} ({len(iv)} intervals)")
    checked += tid in (a, b)
if checked != 2:
    sys.exit(f"the two handoff threads {a} {b} do not both have a band: lanes {[x['tid'] for x in lanes if 'tid' in x]}")
sp = d["spans"]
names = [n if isinstance(n, str) else n.get("name", "") for n in sp["names"]]
nap = [i for i in range(len(sp["lane"])) if names[sp["name"][i]] == "kh:nap"]
if len(nap) != 1:
    sys.exit(f"kh:nap spans: {nap} (names {names})")
i = nap[0]
s0, s1, l = sp["start"][i], sp["start"][i] + sp["dur"][i], sp["lane"][i]
blocked = sum(max(0, min(s + du, s1) - max(s, s0)) for s, du, k in per.get(l, []) if k == 2)
if blocked < 49_000_000:
    sys.exit(f"the nap [{s0}, {s1}] lies over {blocked} ns of blocked band")
u = data(sys.argv[3])
if u.get("states", "absent") is not None:
    sys.exit(f"a trace without kernel events: states = {u.get('states', 'absent')}")
print(f"ok: {len(st['lane'])} intervals on {len(per)} lanes = report's sums; the nap {blocked} ns blocked")
PY

BR=$TB_SRC/tests/browser
if command -v node > /dev/null && [ -x "${TB_CHROMIUM:-/usr/bin/chromium}" ] && [ -d "$BR/node_modules/playwright-core" ]; then
	# pixels of the blocked band's colour (#b4bfcd) on the timeline canvas
	px='(() => { const c = document.getElementById("tb-timeline"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 0; i < d.length; i += 4) n += d[i] === 180 && d[i + 1] === 191 && d[i + 2] === 205; return n; })()'
	(cd "$BR" && node check_page.mjs --url "file://$T/h.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check 'summary=document.getElementById("tb-summary").textContent.includes("thread states")' \
		--check "blocked band drawn=$px > 20") || fail "the kernel page in Chromium"
	(cd "$BR" && node check_page.mjs --url "file://$T/u.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check 'no thread states in the summary=!document.getElementById("tb-summary").textContent.includes("thread states")' \
		--check "no band=$px === 0") || fail "the page without kernel events in Chromium"
else
	echo "note: node, Chromium or tests/browser/node_modules missing: the pages are not drawn (data checked only)"
fi
echo "PASS"
