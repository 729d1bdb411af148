# SPDX-License-Identifier: MIT
# t_vtid_every_event_names_its_writer.sh - `record --vtid` of a multi-threaded program (threads
# taking turns on each CPU's ring, signal handlers writing inside another write, a pause that
# needs an extended header, thread names): every event carries the tid of the thread that
# wrote it.  tb-vtid-writers puts gettid() in each event's payload, so the check is exact:
#   - tracebuf dump (our reader): the tid of every event, attribution and name records
#     included, is its payload's tid; with --no-attribution too (the tid comes from the vtid);
#   - babeltrace2: every event shows { vtid = N } with N its payload's tid, and the Python
#     bindings read the same events as tracebuf dump, vtid = tid (tests/lib/compare_bt2.py);
#   - a mixed session (one channel with vtid, one without, both recording every event): both
#     readers read both stream classes, vtid on the events of the vtid channel only;
#   - report's threads and convert --to chrome's tids are the writers;
#   - the workload with --vtid keeps the exact accounting (tb-verify reads the record layout).
# babeltrace2 parts are skipped only when it is not installed.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the JSON outputs)"; exit 77; }
VW=${TB_VTID_WRITERS:?}
SRC=${TB_SRC:?}
export TB_CLI=$CLI
NT=4 NE=3000

# dump_check DIR EXPECT_FILE VTID_STREAM_PREFIX: every event's tid is its payload's (or, for
# records without a tid field, one of the writers), each writer wrote NE vt:ev per stream kind
dump_check() {
	"$CLI" dump --format json --thread-records "$1" > "$1.jsonl" || fail "dump $1"
	"$PY" - "$1.jsonl" "$2" "$NE" "$3" <<'PY' || fail "dump of $1: tids"
import json, sys
from collections import Counter
writers = {int(l) for l in open(sys.argv[2])}
ne, vprefix = int(sys.argv[3]), sys.argv[4]
per = Counter()
bad = 0
for line in open(sys.argv[1]):
    o = json.loads(line)
    if "event" not in o:
        continue
    f = o["fields"]
    if o["event"] in ("vt:ev", "vt:sig", "tracebuf:thread", "tracebuf:thread_name"):
        # vt:*: the writer's gettid(); tracebuf:thread: the record's own tid;
        # thread_name: each writer names itself
        if f["tid"] != o["tid"]:
            bad += 1
            if bad < 5:
                print("wrong tid:", line.strip())
    if o["event"] == "vt:ev":
        per[(o["tid"], o["stream"].startswith(vprefix))] += 1
if bad:
    sys.exit(f"{bad} events whose tid is not their writer's")
tids = {t for t, _ in per}
if tids != writers:
    sys.exit(f"threads {sorted(tids)}, the program had {sorted(writers)}")
kinds = {k for _, k in per}
for t in writers:
    for k in kinds:
        if per[(t, k)] != ne:
            sys.exit(f"tid {t} ({'vtid' if k else 'plain'} channel): {per[(t, k)]} vt:ev, want {ne}")
print(f"dump: {sum(per.values())} vt:ev of {len(writers)} threads, each with its writer's tid")
PY
}

# bt2_check DIR: babeltrace2 reads DIR; its events with a vtid have their payload's tid
bt2_check() {
	babeltrace2 "$1" > "$1.bt" 2> "$1.bterr" || { head -5 "$1.bterr"; fail "babeltrace2 reads $1"; }
	"$PY" - "$1.bt" <<'PY' || fail "babeltrace2 on $1"
import re, sys
with_v = without = bad = 0
for line in open(sys.argv[1]):
    m = re.search(r" (vt:ev|vt:sig): .*?(\{ vtid = (\d+) \}, )?\{ tid = (\d+)", line)
    if not m:
        continue
    if m.group(3) is None:
        without += 1
    else:
        with_v += 1
        bad += m.group(3) != m.group(4)
if bad:
    sys.exit(f"{bad} events whose vtid is not their writer's")
print(f"babeltrace2: {with_v} vt events with vtid = their writer, {without} without vtid")
open(sys.argv[1] + ".counts", "w").write(f"{with_v} {without}\n")
PY
	bash "$SRC/tests/lib/compare_bt2.sh" "$1"
	local rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "babeltrace2's Python bindings read $1 otherwise than tracebuf dump"
}

have_bt2=0
command -v babeltrace2 > /dev/null && have_bt2=1

echo "== record --vtid"
"$CLI" record -q --vtid -o "$T/v" -- "$VW" "$NT" "$NE" > "$T/v.tids" 2> "$T/v.err" || { cat "$T/v.err"; fail "record --vtid"; }
[ "$(wc -l < "$T/v.tids")" = "$NT" ] || fail "the program printed $NT tids"
grep -q 'stream_id = 1;' "$T/v/metadata" || fail "metadata: event classes of stream class 1"
grep -q '_vtid;' "$T/v/metadata" || fail "metadata: the vtid event context"
! grep -q 'stream_id = 0;' "$T/v/metadata" || fail "metadata: stream class 0 declared with no channel of it"
dump_check "$T/v" "$T/v.tids" v_
if [ $have_bt2 = 1 ]; then
	bt2_check "$T/v"
	read -r w wo < "$T/v.bt.counts"
	[ "$w" -ge $((NT * NE)) ] && [ "$wo" = 0 ] || fail "babeltrace2: $w events with vtid, $wo without"
else
	echo "(babeltrace2 not installed: its checks skipped)"
fi

echo "== report and convert --to chrome: the writers"
"$CLI" report --format json "$T/v" > "$T/v.report" || fail "report"
"$CLI" convert --to chrome -o "$T/v.chrome" "$T/v" > /dev/null || fail "convert --to chrome"
"$PY" - "$T/v.report" "$T/v.chrome" "$T/v.tids" "$NE" <<'PY' || fail "report/convert tids"
import json, sys
writers = {int(l) for l in open(sys.argv[3])}
ne = int(sys.argv[4])
rep = json.load(open(sys.argv[1]))
got = {t["tid"] for t in rep["threads"]}
if got != writers:
    sys.exit(f"report: threads {sorted(got)}, want {sorted(writers)}")
names = {t["tid"]: t.get("thread") for t in rep["threads"]}
if sorted(names.values()) != sorted(f"vt-{i}" for i in range(len(writers))):
    sys.exit(f"report: thread names {names}")
doc = json.load(open(sys.argv[2]))
bad = [e for e in doc["traceEvents"] if e.get("name") == "vt:ev" and e["tid"] != e["args"]["tid"]]
n = sum(1 for e in doc["traceEvents"] if e.get("name") == "vt:ev")
if bad or n != ne * len(writers):
    sys.exit(f"chrome: {len(bad)} of {n} vt:ev with another tid than their writer's")
print("report and chrome: the writers' tids and names")
PY

echo "== record --vtid --no-attribution: the tid still comes with every event"
"$CLI" record -q --vtid --no-attribution -o "$T/na" -- "$VW" "$NT" "$NE" > "$T/na.tids" 2> "$T/na.err" ||
	{ cat "$T/na.err"; fail "record --vtid --no-attribution"; }
dump_check "$T/na" "$T/na.tids" na_
[ "$(grep -c '"event":"tracebuf:thread"' "$T/na.jsonl")" = 0 ] || fail "--no-attribution wrote tracebuf:thread records"
grep -q '"event":"tracebuf:thread_name"' "$T/na.jsonl" || fail "a vtid channel records thread names without attribution"
[ $have_bt2 = 1 ] && bt2_check "$T/na"

echo "== a mixed session: channel v with vtid, channel p without"
"$CLI" record -q --channel v:::discard:vtid --channel p:::discard -o "$T/m" -- "$VW" "$NT" "$NE" > "$T/m.tids" 2> "$T/m.err" ||
	{ cat "$T/m.err"; fail "record with a vtid and a plain channel"; }
grep -q 'stream_id = 0;' "$T/m/metadata" && grep -q 'stream_id = 1;' "$T/m/metadata" || fail "metadata: both stream classes"
dump_check "$T/m" "$T/m.tids" v_
if [ $have_bt2 = 1 ]; then
	bt2_check "$T/m"
	read -r w wo < "$T/m.bt.counts"
	[ "$w" = "$wo" ] && [ "$w" -ge $((NT * NE)) ] || fail "babeltrace2: $w events with vtid, $wo without (each event once per channel)"
fi

echo "== losses: the packets the recorder writes itself (empty loss packets) are of the channel's class"
# overwrite: nothing is drained while the program runs, and it writes far more than the rings
# hold (4 x 3000 records of 16 bytes, 8 KiB per CPU): the final snapshot starts each stream
# after losses, with an empty packet the recorder writes.  Tiny discard rings may lose events
# too (that depends on the recorder's speed: not required).
for m in overwrite discard; do
	"$CLI" record -q --vtid --mode $m --sb-size 4K --sb-count 2 -o "$T/$m" -- "$VW" "$NT" "$NE" > /dev/null 2> "$T/$m.err" ||
		{ cat "$T/$m.err"; fail "record --vtid --mode $m"; }
	"$CLI" dump --format json "$T/$m" > "$T/$m.jsonl" 2> "$T/$m.dumperr" || fail "dump $m"
	[ ! -s "$T/$m.dumperr" ] || { cat "$T/$m.dumperr"; fail "$m: tracebuf dump reported damage"; }
	[ $m = discard ] || grep -q '"discarded_events"' "$T/$m.jsonl" || fail "$m: no loss in the trace (the rings hold less than was written)"
	[ $have_bt2 = 1 ] && bt2_check "$T/$m"
done

echo "== the workload with --vtid: exact accounting, signals, every record layout"
"$CLI" record -q --vtid --sb-size 16K --sb-count 4 -o "$T/wl" -- "$WL" --threads 3 --events 30000 --signals > "$T/wl.out" 2> "$T/wl.err" ||
	{ cat "$T/wl.err"; fail "record --vtid of the workload"; }
w=$(awk '/^written:/{n=$2} END{print n+0}' "$T/wl.out")
[ "$w" -gt 0 ] || fail "workload printed no count"
"$VERIFY" --written "$w" "$T/wl" || fail "tb-verify of the --vtid workload trace"
[ $have_bt2 = 1 ] && { babeltrace2 "$T/wl" > /dev/null 2> "$T/wl.bterr" || { head -5 "$T/wl.bterr"; fail "babeltrace2 reads the workload trace"; }; }
echo "PASS"
