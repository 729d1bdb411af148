# SPDX-License-Identifier: MIT
# t_flight_trigger_writes_one_snapshot_per_call.sh - tb_trigger() from a program under
# `record --mode overwrite --snapshot-dir DIR` writes exactly one snapshot per call, each a
# complete trace (babeltrace2 reads it with no warning, written == delivered + discarded) with a
# trigger.json naming the call, holding the events written just before the call; with --after,
# also the event written just after it.  The writer waits for each snapshot (a condition).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }

for after in 0 3s; do
	echo "== --after $after"
	S=$T/snaps-$after
	extra=(); [ $after = 0 ] || extra=(--after-event)
	"$CLI" record --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$S" --after $after -- \
		"$FW" --dir "$S" --triggers 3 --events 500 "${extra[@]}" > "$T/out" 2> "$T/err" ||
		{ cat "$T/err"; fail "record exited $?"; }
	pid=$(sed -n 's/^pid: //p' "$T/out")
	mapfile -t snaps < <(snapshots "$S")
	[ ${#snaps[@]} -eq 3 ] || { ls -la "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots for 3 calls (want 3)"; }
	! ls "$S" | grep -q partial || fail "a partial snapshot was left"
	for i in 1 2 3; do
		sn=${snaps[$((i - 1))]}
		j=$sn/trigger.json
		[ "$(json_field "$j" '["trigger"]["name"]')" = "t$i" ] || { cat "$j"; fail "snapshot $i is not t$i's"; }
		[ "$(json_field "$j" '["trigger"]["kind"]')" = program ] || fail "snapshot $i: kind"
		[ "$(json_field "$j" '["trigger"]["pid"]')" = "$pid" ] || fail "snapshot $i: pid is not the writer's"
		[ "$(json_field "$j" '["trigger"]["tid"]')" = "$pid" ] || fail "snapshot $i: tid is not the writer's"
		[ "$(json_field "$j" '["snapshot"]')" = "$i" ] || fail "snapshot $i: number"
		snap_events "$sn" > "$T/ev"
		# the last event before the call is its last event of trigger i
		grep -q "flight:before: .*{ trigger = $i, seq = 499 }" "$T/ev" || fail "snapshot $i lacks the event just before the call"
		! grep -q "trigger = $((i + 1))," "$T/ev" || fail "snapshot $i holds events of a later trigger"
		if [ $after = 0 ]; then
			# written once the snapshot existed: not in it
			! grep -q "flight:after: .*{ trigger = $i }" "$T/ev" || fail "snapshot $i holds the event after it"
		else
			grep -q "flight:after: .*{ trigger = $i }" "$T/ev" || fail "--after: snapshot $i lacks the event written just after the call"
		fi
		w=$(sed -n "s/^trigger $i written //p" "$T/out")
		check_accounting "$sn/trace" "$w"
	done
	grep -q "3 triggers, 3 snapshots written" "$T/err" || { cat "$T/err"; fail "the summary does not count 3 and 3"; }
	# listed with their triggers (snapshots DIR, report DIR), one shown with its trigger
	"$CLI" snapshots "$S" > "$T/list" || fail "snapshots $S"
	for i in 1 2 3; do
		grep -qE "^$i +[0-9T:.-]+Z +program +t$i +$pid +$pid +[0-9]+ +0+$i-" "$T/list" || { cat "$T/list"; fail "snapshot $i not listed"; }
	done
	"$CLI" report "$S" | cmp -s - "$T/list" || fail "report DIR does not list the snapshots"
	"$CLI" report "${snaps[1]}" > "$T/rep" || fail "report of a snapshot"
	grep -q "^Snapshot 2: program trigger 't2' at .*, pid $pid, thread $pid" "$T/rep" || { cat "$T/rep"; fail "report does not show trigger.json"; }
	grep -q "flight:before" "$T/rep" || fail "report of a snapshot does not report its trace"
done

echo "== a trigger named with UTF-8, controls and an ill-formed byte: trigger.json is strict JSON"
# tb_trigger() keeps printable ASCII of a name and makes every other byte '?' (src/producer/trigger.c,
# in the map where the recorder reads it): the name arrives as that, nothing raw
S=$T/snaps-utf8
name=$'caf\xc3\xa9 \e]0;x\a \xc2\x9b \xff!'
"$CLI" record --mode overwrite --sb-size 16K --sb-count 8 --snapshot-dir "$S" -- \
	"$FW" --no-wait --triggers 1 --events 10 --name "$name" > "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record (UTF-8 name)"; }
mapfile -t snaps < <(snapshots "$S")
[ ${#snaps[@]} -eq 1 ] || { ls -la "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots for 1 call (UTF-8 name)"; }
"$PY" - "${snaps[0]}/trigger.json" << 'PY' || fail "trigger.json does not hold the name as strict UTF-8 JSON"
import json, sys
raw = open(sys.argv[1], "rb").read()
j = json.loads(raw.decode("utf-8"))  # strict: ill-formed UTF-8 raises
got, want = j["trigger"]["name"], "caf?? ?]0;x? ?? ?!"
if got != want:
    sys.exit(f"name {got!r}, want {want!r}")
print(f"  trigger.json name {got!r}")
PY
"$CLI" snapshots "$S" > "$T/list" 2>&1 || fail "snapshots DIR (UTF-8 name)"
! LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$T/list" || fail "snapshots printed a control character raw"
echo PASS
