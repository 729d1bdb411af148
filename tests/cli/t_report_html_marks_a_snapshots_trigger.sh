# SPDX-License-Identifier: MIT
# t_report_html_marks_a_snapshots_trigger.sh - `report --html` of a flight recorder's snapshot
# (docs/FLIGHT-RECORDER.md) marks what fired it on the timeline: the page's data says the
# trigger (kind, name, thread) and where it was, between the last event written before the
# tb_trigger() call and the first written after it (--after keeps that one in the snapshot); a
# trace that is not a snapshot has "trigger": null.  A trigger named with markup and quotes is
# data, never markup: the page still parses.  Where node, Chromium and tests/browser/node_modules
# are, the snapshot page opens without an error, its summary names the trigger and its timeline
# has the trigger line's purple; the plain page has none.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/flight.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the page's data)"; exit 77; }

# events before, the call, one event just after it (in the snapshot: --after)
S=$T/snaps
"$CLI" record -q --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" --after 1s -- \
	"$FW" --dir "$S" --triggers 1 --events 500 --after-event > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record"; }
pid=$(sed -n 's/^pid: //p' "$T/out")
snap=$(snapshots "$S" | head -1)
[ -n "$snap" ] || { cat "$T/err"; fail "no snapshot"; }
"$CLI" report --html -q -o "$T/snap.html" "$snap" || fail "report --html of a snapshot"
"$CLI" dump --epoch "$snap" > "$T/dump" || fail "dump of the snapshot"
before=$(sed -n 's/^\[\([0-9]*\)\.\([0-9]*\)\].*flight:before: { trigger = 1, seq = 499 }.*/\1\2/p' "$T/dump")
after=$(sed -n 's/^\[\([0-9]*\)\.\([0-9]*\)\].*flight:after: { trigger = 1 }.*/\1\2/p' "$T/dump")
[ -n "$before" ] && [ -n "$after" ] || { head "$T/dump"; fail "the snapshot lacks the events around the call"; }

# a plain trace of the same program: no trigger
"$CLI" record -q -o "$T/plain" -- "$FW" --dir "$T/none" --triggers 1 --events 10 --no-wait > /dev/null 2>&1 ||
	fail "record without a flight recorder"
"$CLI" report --html -q -o "$T/plain.html" "$T/plain" || fail "report --html of a plain trace"

# a hostile trigger name: a snapshot directory whose trigger.json was edited
H=$T/hostile
cp -r "$snap" "$H"
"$PY" - "$H/trigger.json" <<'PY' || fail "edit trigger.json"
import sys
p = sys.argv[1]
s = open(p).read().replace('"name": "t1"', '"name": "</script><b>\\"x\\u0000"')
open(p, "w").write(s)
PY
"$CLI" report --html -q -o "$T/hostile.html" "$H" || fail "report --html of a hostile trigger.json"

"$PY" - "$T/snap.html" "$T/plain.html" "$T/hostile.html" "$pid" "$before" "$after" <<'PY' || fail "the trigger in the page's data"
import json, re, sys
def data(p):
    m = re.search(r'<script type="application/json" id="tb-data">(.*?)</script>', open(p).read(), re.S)
    if not m:
        sys.exit(f"{p}: no tb-data (the page's markup was broken)")
    return json.loads(m.group(1))
d = data(sys.argv[1])
pid, before, after = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
t = d.get("trigger")
if not t or t["kind"] != "program" or t["name"] != "t1" or t["tid"] != pid:
    sys.exit(f"trigger {t}, want program 't1' from thread {pid}")
at = int(d["start_ns"]) + t["t"]
if not before <= at <= after:
    sys.exit(f"the trigger at {at} ns is not between the last event before the call ({before}) and the first after ({after})")
if data(sys.argv[2]).get("trigger", "absent") is not None:
    sys.exit("a trace that is not a snapshot has a trigger")
h = data(sys.argv[3])["trigger"]  # parsed whole: the name did not close the data's <script>
if not h or "script><b>" not in h["name"] or "</script><b>" in open(sys.argv[3]).read():
    sys.exit(f"hostile trigger name: {h}")
print(f"ok: trigger at +{t['t']} ns, between {before - int(d['start_ns'])} and {after - int(d['start_ns'])}")
PY

BR=$TB_SRC/tests/browser
if command -v node > /dev/null && [ -x "${TB_CHROMIUM:-/usr/bin/chromium}" ] && [ -d "$BR/node_modules/playwright-core" ]; then
	# pixels of the trigger line's colour (#8e24aa) on the timeline canvas
	px='(() => { const c = document.getElementById("tb-timeline"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0; for (let i = 0; i < d.length; i += 4) n += d[i] === 142 && d[i + 1] === 36 && d[i + 2] === 170; return n; })()'
	(cd "$BR" && node check_page.mjs --url "file://$T/snap.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check "summary names the trigger=document.getElementById(\"tb-summary\").textContent.includes(\"program trigger 't1'\")" \
		--check "trigger line drawn=$px > 20") || fail "the snapshot page in Chromium"
	(cd "$BR" && node check_page.mjs --url "file://$T/plain.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check 'no trigger in the summary=!document.getElementById("tb-summary").textContent.includes("trigger")' \
		--check "no trigger line=$px === 0") || fail "the plain page in Chromium"
	(cd "$BR" && node check_page.mjs --url "file://$T/hostile.html" --ready 'document.body.dataset.ready === "1"' \
		--check 'no errors=!document.body.dataset.errors' \
		--check 'no injected element=document.querySelectorAll("b").length === 0') || fail "the hostile page in Chromium"
else
	echo "note: node, Chromium or tests/browser/node_modules missing: the pages are not drawn (data checked only)"
fi
echo "PASS"
