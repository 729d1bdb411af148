# SPDX-License-Identifier: MIT
# t_flight_span_threshold_fires_on_the_slow_span_only.sh - `record --snapshot-on
# 'workload:request>500ms'` (the span workload:request_begin .. workload:request_end of one
# thread, docs/CONVERT.md): two threads write 2x20000 requests that do not wait between their
# begin and end, and thread 0's request 10000 lasts 1.5 s: exactly one snapshot, kind span, its
# trigger.json names the slow request's end (cpu, tid, ticks as `dump` shows them in the
# snapshot) and a duration_ns that is that span's (end - begin of the same thread, >= 1.5 s).
# An event condition given with it fires on its own event in the same run (two conditions).
# babeltrace2 reads the snapshot (when installed).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
BT=0; PY=
for p in /usr/bin/python3 python3; do "$p" -c 'import bt2' 2> /dev/null && { PY=$p; break; }; done
[ -n "$PY" ] && command -v babeltrace2 > /dev/null && BT=1
[ $BT = 1 ] || echo "babeltrace2 or its Python bindings absent: that part skipped"
[ -n "$PY" ] || PY=$(command -v python3) || { echo "SKIP: no python3 to read trigger.json"; exit 77; }
export PY
snapshots() { find "$1" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9][0-9][0-9][0-9][0-9]-*' | sort; }

S=$T/s
"$CLI" record --mode overwrite --sb-size 64K --sb-count 128 --snapshot-dir "$S" \
	--snapshot-on 'workload:request>500ms' --snapshot-on 'workload:request_end[status==500]' -- \
	"$WL" --requests --threads 2 --events 20000 --slow-at 10000 --slow-ms 1500 --error-at 15000 \
	> "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record exited $?"; }
grep -q "written: 80000" "$T/out" || fail "the workload did not write its 80000 events"
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 2 ] || { ls "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots (want the slow span's and the error's)"; }
grep -q "scanned 80000 events, 2 met a condition, 0 unscanned" "$T/err" || { cat "$T/err"; fail "summary"; }
span=
for sn in "${snaps[@]}"; do
	k=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["trigger"]["kind"])' "$sn/trigger.json")
	[ "$k" = span ] && span=$sn
done
[ -n "$span" ] || fail "no snapshot of kind span"
"$CLI" dump --format json "$span/trace" > "$T/dump" || fail "dump of the snapshot"
"$PY" - "$span/trigger.json" "$T/dump" <<'PYEOF' || fail "trigger.json does not name the slow span"
import json, sys
t = json.load(open(sys.argv[1]))["trigger"]
assert t["condition"] == "workload:request>500ms", t
assert t["class"] == "workload:request_end", t
evs = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
end = [e for e in evs if e.get("ticks") == t["clock_ticks"] and e["event"] == "workload:request_end"]
assert len(end) == 1, "no request_end at the trigger's ticks"
end = end[0]
assert end["fields"]["seq"] == 10000, end
assert (end["cpu"], end["tid"]) == (t["cpu"], t["tid"]), (end, t)
begin = [e for e in evs if e["event"] == "workload:request_begin" and e["tid"] == end["tid"]
         and e["fields"]["seq"] == 10000]
assert len(begin) == 1, begin
dur = end["ts"] - begin[0]["ts"]
assert dur >= 1500000000, dur
assert abs(t["duration_ns"] - dur) <= 1000, (t["duration_ns"], dur)
print("span of", dur, "ns on tid", end["tid"], "named")
PYEOF
if [ $BT = 1 ]; then
	babeltrace2 "$span/trace" > /dev/null 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 cannot read the snapshot"; }
	! grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/bt.err" | grep -q . ||
		{ cat "$T/bt.err"; fail "babeltrace2 warned"; }
	j=$span/trigger.json
	check_accounting "$span/trace" $(( $("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["events"] + d["lost"])' "$j") ))
fi

# a vtid channel without attribution records: the thread of each record is its vtid
S=$T/vtid
"$CLI" record --mode overwrite --vtid --no-attribution --snapshot-dir "$S" --snapshot-on 'workload:request>500ms' -- \
	"$WL" --requests --events 2000 --slow-at 100 --slow-ms 1000 > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record --vtid exited $?"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 1 ] || { cat "$T/err"; fail "--vtid: ${#snaps[@]} snapshots (want 1)"; }
"$PY" -c 'import json,sys; t=json.load(open(sys.argv[1]))["trigger"]; assert t["kind"]=="span" and t["tid"] and t["duration_ns"]>=1e9, t' \
	"${snaps[0]}/trigger.json" || fail "--vtid: the span's trigger"
# neither: no thread to time a span on; said, nothing fired
S=$T/nothread
"$CLI" record --mode overwrite --no-attribution --snapshot-dir "$S" --snapshot-on 'workload:request>500ms' -- \
	"$WL" --requests --events 2000 --slow-at 100 --slow-ms 1000 > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record exited $?"; }
[ "$(snapshots "$S" | wc -l)" = 0 ] || fail "a span timed without knowing its thread"
grep -q "say no thread (no attribution, no vtid): its spans are not timed" "$T/err" || { cat "$T/err"; fail "not said"; }
echo PASS
