# SPDX-License-Identifier: MIT
# t_record_pid_flight_trigger_writes_one_snapshot_per_call.sh - a flight recorder attached to a
# program that was started without tracebuf: `record --pid PID --mode overwrite --snapshot-dir DIR`
# (docs/FLIGHT-RECORDER.md, "A program that is already running").
#   - tb_trigger() three times: exactly one snapshot per call, each named, with the writer's pid
#     and tid, holding the event just before the call and none after; babeltrace2 reads each
#     with no warning and finds every event written after the attach accounted for
#     (written - 1 == delivered + discarded: the event that attached is dropped, written
#     before the attach);
#   - --snapshot-on-signal USR2 to the recorder: one snapshot naming the signal; the program is
#     not signalled;
#   - --snapshot-on 'flight:measure[status==503]' on the program's classes (read from
#     /proc/PID/exe): exactly one snapshot, naming that event; a condition on a class the program
#     does not declare is refused before anything is created;
#   - a second flight recorder of the same process, while the first runs: refused (the session's
#     lock), nothing created;
#   - a session an earlier record --pid made in discard mode cannot take a flight recorder:
#     refused, saying why, the program untouched.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
TB_LIB=$(cd "$(dirname "$0")/../lib" && pwd)
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
trap 'touch "$T/go1" "$T/go2" "$T/gate.2" "$T/go4" "$T/rel1" "$T/rel2" 2>/dev/null; kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT

started() { grep -q '^pid: ' "$1"; }
nsnaps() { [ "$(snapshots "$1" | wc -l)" -ge "$2" ]; }

echo "== tb_trigger() x 3"
S=$T/s1
# (its parent holds it as a zombie until rel1: the recorder learns it exited 0, and takes no
# snapshot of its end; t_record_pid_flight_end_leaves_its_last_events.sh checks the others)
env -u TRACEBUF_SESSION "$PY" "$TB_LIB/parent.py" hold "$T/rel1" \
	"$FW" --dir "$S" --triggers 3 --events 500 --start "$T/go1" > "$T/w1.out" 2> "$T/w1.err" &
p1=$!
wait_for started "$T/w1.out" || fail "the writer did not start"
w1=$(sed -n 's/^pid: //p' "$T/w1.out")
"$CLI" record --pid $w1 --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" 2> "$T/r1.err" &
r1=$!
wait_said "recording process $w1 .*(snapshots only)" "$T/r1.err" $r1 "record --pid --snapshot-dir did not start"
touch "$T/go1" # the request is in place: the writer's first event attaches it
wait $r1 || { cat "$T/r1.err"; fail "record --pid --snapshot-dir exited $?"; }
touch "$T/rel1"
wait $p1 || { cat "$T/w1.err"; fail "the writer failed"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 3 ] || { ls -la "$S"; cat "$T/r1.err"; fail "${#snaps[@]} snapshots for 3 calls (want 3)"; }
! ls -a "$S" | grep -q partial || fail "a partial snapshot was left"
for i in 1 2 3; do
	sn=${snaps[$((i - 1))]}
	j=$sn/trigger.json
	[ "$(json_field "$j" '["trigger"]["name"]')" = "t$i" ] || { cat "$j"; fail "snapshot $i is not t$i's"; }
	[ "$(json_field "$j" '["trigger"]["kind"]')" = program ] || fail "snapshot $i: kind"
	[ "$(json_field "$j" '["trigger"]["pid"]')" = "$w1" ] || fail "snapshot $i: pid is not the writer's"
	[ "$(json_field "$j" '["trigger"]["tid"]')" = "$w1" ] || fail "snapshot $i: tid is not the writer's"
	snap_events "$sn" > "$T/ev"
	grep -q "flight:before: .*{ trigger = $i, seq = 499 }" "$T/ev" || fail "snapshot $i lacks the event just before the call"
	! grep -q "trigger = $((i + 1))," "$T/ev" || fail "snapshot $i holds events of a later trigger"
	! grep -q "flight:after: .*{ trigger = $i }" "$T/ev" || fail "snapshot $i holds the event written after it"
	# the first event (trigger 1, seq 0) attached the program and was dropped
	! grep -q "flight:before: .*{ trigger = 1, seq = 0 }" "$T/ev" || fail "snapshot $i holds the event that attached"
	w=$(sed -n "s/^trigger $i written //p" "$T/w1.out")
	check_accounting "$sn/trace" $((w - 1))
done
grep -q "3 triggers, 3 snapshots written" "$T/r1.err" || { cat "$T/r1.err"; fail "the summary does not count 3 and 3"; }
grep -q "process $w1 (.*) ended (exit status 0)" "$T/r1.err" ||
	{ cat "$T/r1.err"; fail "the end of the program is not said"; }
[ -z "$(ls "$TRACEBUF_SHM_DIR" | grep "tracebuf-pid-$w1-")" ] || fail "the session of an ended program was left"

echo "== --snapshot-on-signal USR2 and --snapshot-on, attached later"
S=$T/s2
# trigger t1 and its snapshot; the signal's snapshot; t2 (gated on it) and its snapshot; then
# 20000 measures, one of them (seq 12345) status 503
env -u TRACEBUF_SESSION "$PY" "$TB_LIB/parent.py" hold "$T/rel2" \
	"$FW" --dir "$S" --triggers 2 --events 10 --measures 20000 --error-at 12345 \
	--start "$T/go2" --gate "$T/gate" > "$T/w2.out" 2> "$T/w2.err" &
p2=$!
wait_for started "$T/w2.out" || fail "the writer (2) did not start"
w2=$(sed -n 's/^pid: //p' "$T/w2.out")
"$CLI" record --pid $w2 -o "$T/bad" --mode overwrite --snapshot-dir "$S" --snapshot-on 'flight:nosuch[x>1]' 2> "$T/bad.err"
[ $? -eq 2 ] || { cat "$T/bad.err"; fail "a condition on a class the program does not declare was accepted"; }
grep -q "declares no class named like 'flight:nosuch'" "$T/bad.err" || { cat "$T/bad.err"; fail "the refusal does not say why"; }
[ ! -e "$T/bad" ] && [ ! -e "$S" ] || fail "a refused condition created something"
[ -z "$(ls "$TRACEBUF_SHM_DIR")" ] || fail "a refused condition created a session"
"$CLI" record --pid $w2 --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" --snapshot-on-signal USR2 \
	--snapshot-on 'flight:measure[status==503]' 2> "$T/r2.err" &
r2=$!
wait_said "recording process $w2" "$T/r2.err" $r2 "record --pid (2) did not start"
touch "$T/go2"
wait_for nsnaps "$S" 1 || fail "no snapshot of t1 (2)"
kill -USR2 $r2
wait_for nsnaps "$S" 2 || { cat "$T/r2.err"; fail "no snapshot of the signal"; }
kill -0 $w2 || fail "the program died of the recorder's signal"
# a second flight recorder of the same process would answer every trigger again: refused
"$CLI" record --pid $w2 --mode overwrite --snapshot-dir "$T/s2b" 2> "$T/r2b.err"
[ $? -eq 1 ] || { cat "$T/r2b.err"; fail "a second flight recorder of a recorded process was accepted"; }
grep -q "process $w2 is recorded already by another tracebuf record --pid" "$T/r2b.err" || { cat "$T/r2b.err"; fail "the second recorder's refusal"; }
[ ! -e "$T/s2b" ] || fail "the refused recorder created its snapshots directory"
touch "$T/gate.2"
wait $r2 || { cat "$T/r2.err"; fail "record --pid (2) exited $?"; }
touch "$T/rel2"
wait $p2 || { cat "$T/w2.err"; fail "the writer (2) failed"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 4 ] || { ls "$S"; cat "$T/r2.err"; fail "${#snaps[@]} snapshots (want t1, the signal, t2, the condition)"; }
j=${snaps[1]}/trigger.json
[ "$(json_field "$j" '["trigger"]["kind"]')" = signal ] || { cat "$j"; fail "snapshot 2 is not the signal's"; }
[ "$(json_field "$j" '["trigger"]["signal"]')" = SIGUSR2 ] || fail "the signal is not named"
[ "$(json_field "$j" '["trigger"]["pid"]')" = "$$" ] || fail "the sender of the signal is not named"
[ "$(json_field "${snaps[2]}/trigger.json" '["trigger"]["name"]')" = t2 ] || fail "snapshot 3 is not t2's"
j=${snaps[3]}/trigger.json
[ "$(json_field "$j" '["trigger"]["kind"]')" = event ] || { cat "$j"; fail "snapshot 3 is not the condition's"; }
[ "$(json_field "$j" '["trigger"]["class"]')" = flight:measure ] || fail "the condition's class"
[ "$(json_field "$j" '["trigger"]["tid"]')" = "$w2" ] || fail "the condition's event: its thread"
snap_events "${snaps[3]}" | grep -q "flight:measure: .*{ seq = 12345, .*status = 503 }" || fail "the snapshot lacks the event that met the condition"
grep -q "scanned 20[0-9]* events, 1 met a condition" "$T/r2.err" || { cat "$T/r2.err"; fail "the scan's summary"; }

echo "== a session made in discard mode by an earlier record --pid: no flight recorder on it"
env -u TRACEBUF_SESSION "$FW" --no-wait --triggers 0 --events 100 --crash --start "$T/go4" > "$T/w4.out" 2> /dev/null &
w4=$!
wait_for started "$T/w4.out" || fail "the writer (4) did not start"
"$CLI" record --pid $w4 -o "$T/d4" 2> "$T/r4.err" &
r4=$!
wait_said "recording process $w4" "$T/r4.err" $r4 "record --pid (4) did not start"
kill -9 $r4; wait $r4 2> /dev/null
"$CLI" record --pid $w4 --mode overwrite --snapshot-dir "$T/s4" 2> "$T/r4b.err"
[ $? -eq 1 ] || { cat "$T/r4b.err"; fail "a flight recorder on a discard session was accepted"; }
grep -q "channel 'chan' is not in overwrite mode" "$T/r4b.err" || { cat "$T/r4b.err"; fail "the refusal does not say why"; }
kill -0 $w4 || fail "the refusal touched the program"
kill -9 $w4; wait $w4 2> /dev/null
echo PASS
