# SPDX-License-Identifier: MIT
# t_flight_signal_to_the_recorder_takes_a_snapshot.sh - `record --snapshot-on-signal USR2`: a
# SIGUSR2 sent to the recorder writes one snapshot (trigger.json: kind signal, SIGUSR2, the
# sender's pid), holding what the program wrote before; the program is not signalled and goes
# on.  A signal name record cannot take is a usage error.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
trap 'touch "$T/go.2"; kill $(jobs -p) 2> /dev/null; wait; rm -rf "$T"' EXIT

# at least N snapshots in DIR (re-evaluated at each poll of wait_for)
has_snapshots() { [ "$(snapshots "$1" | wc -l)" -ge "$2" ]; }
S=$T/s
"$CLI" record --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" --snapshot-on-signal USR2 -- \
	"$FW" --dir "$S" --gate "$T/go" --triggers 2 --events 700 --after-event > "$T/out" 2> "$T/err" &
rp=$!
# the writer's first snapshot exists: it waits on the gate, its 700 events and its after event
# written (--after-event: before it says "trigger 1 written"; without it the after event came once
# the writer's own poll saw the snapshot, which a SIGUSR2 sent at once could beat: CI saw 700)
wait_for grep -q "^trigger 1 written" "$T/out" || fail "the writer did not start"
wait_for has_snapshots "$S" 1 || fail "no first snapshot"
kill -USR2 $rp
wait_for has_snapshots "$S" 2 || { cat "$T/err"; fail "no snapshot after SIGUSR2"; }
touch "$T/go.2"
wait $rp || { cat "$T/err"; fail "record exited $? (the program must not have been signalled)"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 3 ] || { ls "$S"; fail "${#snaps[@]} snapshots (want t1, the signal's, t2)"; }
j=${snaps[1]}/trigger.json
[ "$(json_field "$j" '["trigger"]["kind"]')" = signal ] || { cat "$j"; fail "the second snapshot is not the signal's"; }
[ "$(json_field "$j" '["trigger"]["signal"]')" = SIGUSR2 ] || fail "the signal is not named"
[ "$(json_field "$j" '["trigger"]["pid"]')" = $$ ] || fail "the sender's pid is not in trigger.json"
snap_events "${snaps[1]}" | grep -q "flight:before: .*{ trigger = 1, seq = 699 }" || fail "the signal's snapshot lacks what was written"
# t1's events and its after event
check_accounting "${snaps[1]}/trace" 701

"$CLI" record --mode overwrite --snapshot-dir "$T/x" --snapshot-on-signal INT -- true 2> "$T/err"
[ $? -eq 2 ] || fail "--snapshot-on-signal INT accepted"
"$CLI" record --mode discard --snapshot-dir "$T/x" -- true 2> "$T/err"
[ $? -eq 2 ] && grep -q "overwrite" "$T/err" || fail "--snapshot-dir in discard mode accepted"
"$CLI" record --mode overwrite --max-snapshots 3 -- true 2> "$T/err"
[ $? -eq 2 ] && grep -q "snapshot-dir" "$T/err" || fail "--max-snapshots without --snapshot-dir accepted"
echo PASS
