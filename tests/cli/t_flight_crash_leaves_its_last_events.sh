# SPDX-License-Identifier: MIT
# t_flight_crash_leaves_its_last_events.sh - a program under the flight recorder killed by
# SIGSEGV leaves a snapshot, taken by the recorder (it sees the death in waitpid) while the
# rings are still there: its trigger.json says crash, SIGSEGV and the pid; its last events are
# the ones written before the crash; babeltrace2 reads it and finds every event accounted for.
# A SIGKILL (the OOM killer's) is a crash too.  --no-snapshot-on-crash takes none;
# --snapshot-on-failure takes one for a non-zero exit.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }

S=$T/s
"$CLI" record --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" -- \
	"$FW" --no-wait --triggers 0 --events 3000 --crash > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 139 ] || { cat "$T/err"; fail "record exited $rc (want 139, CMD's SIGSEGV)"; }
pid=$(sed -n 's/^pid: //p' "$T/out")
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 1 ] || { ls "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots after the crash (want 1)"; }
j=${snaps[0]}/trigger.json
[ "$(json_field "$j" '["trigger"]["kind"]')" = crash ] || { cat "$j"; fail "kind is not crash"; }
[ "$(json_field "$j" '["trigger"]["signal"]')" = SIGSEGV ] || fail "the signal is not named"
[ "$(json_field "$j" '["trigger"]["pid"]')" = "$pid" ] || fail "the pid is not the crashed program's"
snap_events "${snaps[0]}" | grep -v "tracebuf:thread:" | tail -1 | grep -q "flight:last: .*{ seq = 2999 }" ||
	fail "the snapshot's last event is not the last one written before the crash"
check_accounting "${snaps[0]}/trace" "$(sed -n 's/^written: //p' "$T/out")"

echo "== SIGKILL (the OOM killer's, a watchdog's): a crash too"
S=$T/sk
"$CLI" record -q --mode overwrite --snapshot-dir "$S" -- \
	"$FW" --no-wait --triggers 0 --events 500 --crash --kill-self > "$T/sk.out" 2> "$T/err"
rc=$?
[ $rc -eq 137 ] || { cat "$T/err"; fail "record exited $rc (want 137, CMD's SIGKILL)"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 1 ] || { ls "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots after a SIGKILL (want 1)"; }
[ "$(json_field "${snaps[0]}/trigger.json" '["trigger"]["kind"]')" = crash ] || fail "SIGKILL: kind is not crash"
[ "$(json_field "${snaps[0]}/trigger.json" '["trigger"]["signal"]')" = SIGKILL ] || fail "SIGKILL is not named"
snap_events "${snaps[0]}" | grep -v "tracebuf:thread:" | tail -1 | grep -q "flight:last: .*{ seq = 499 }" ||
	fail "the SIGKILL snapshot's last event is not the last one written"
check_accounting "${snaps[0]}/trace" "$(sed -n 's/^written: //p' "$T/sk.out")"

echo "== --no-snapshot-on-crash"
S=$T/s2
"$CLI" record -q --mode overwrite --snapshot-dir "$S" --no-snapshot-on-crash -- \
	"$FW" --no-wait --triggers 0 --events 10 --crash > /dev/null 2> "$T/err"
[ $? -eq 139 ] || fail "record's exit status"
[ "$(snapshots "$S" | wc -l)" -eq 0 ] || fail "a snapshot despite --no-snapshot-on-crash"

echo "== --snapshot-on-failure: a non-zero exit"
S=$T/s3
"$CLI" record -q --mode overwrite --snapshot-dir "$S" --snapshot-on-failure -- \
	"$FW" --no-wait --triggers 0 --events 10 --gate > /dev/null 2> "$T/err"
rc=$?
[ $rc -ne 0 ] || fail "the writer given a bad option exited 0"
[ "$(snapshots "$S" | wc -l)" -eq 1 ] || { cat "$T/err"; fail "no snapshot of the failed exit"; }
[ "$(json_field "$(snapshots "$S")/trigger.json" '["trigger"]["kind"]')" = exit ] || fail "kind is not exit"
echo PASS
