# SPDX-License-Identifier: MIT
# t_flight_event_condition_fires_on_the_matching_event_only.sh - `record --mode overwrite
# --snapshot-dir D --snapshot-on 'CLASS[FIELD OP VALUE && ...]'`: a workload writing 2x10^5
# events of which one meets the condition (request 77777 ends with status 500; the others end
# with 200..499, the boundary included) produces exactly one snapshot, whose trigger.json names
# that event (class, cpu, tid, clock ticks: the ones `dump` shows for it in the snapshot); a glob
# class with a string comparison too; the same workload without the error: no snapshot, 200000
# events scanned, 0 matched.  Float fields and '||': tb-flight-writer's 10^5 flight:measure
# events (f64 latency, f32 ratio, u32 status; near misses: latency 0.25 exactly, NaN, -0, status
# 500 with ratio -1 exactly, NaN ratios) under 'latency>0.25 || status>=500 && ratio<-1.0' (and
# the same with parentheses and an exponent): the one event with latency 0.2500001, or the one
# with status 503 and ratio -1.25, fires exactly one snapshot naming it; neither: none.  The rings
# hold the whole run, so nothing can be unscanned whatever the machine's load (checked: 0).
# babeltrace2 reads the snapshot (when installed).  --scan-period 1ms: the same single snapshot;
# out of range (0, 999us, 2s, not a duration) or without --snapshot-on: refused.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
# babeltrace2 and its Python bindings (check_accounting) when installed; python3 anyway
BT=0; PY=
for p in /usr/bin/python3 python3; do "$p" -c 'import bt2' 2> /dev/null && { PY=$p; break; }; done
[ -n "$PY" ] && command -v babeltrace2 > /dev/null && BT=1
[ $BT = 1 ] || echo "babeltrace2 or its Python bindings absent: that part skipped"
[ -n "$PY" ] || PY=$(command -v python3) || { echo "SKIP: no python3 to read trigger.json"; exit 77; }
export PY
snapshots() { find "$1" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9][0-9][0-9][0-9][0-9]-*' | sort; }
json_field() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d"+sys.argv[2]))' "$1" "$2"; }

# 8 MiB per CPU: the run's ~4 MiB fit, nothing is overwritten before the scan reads it
RING=(--mode overwrite --sb-size 64K --sb-count 128)
N=100000
SCAN=() # record's --scan-period, when a case sets it

run() { # DIR COND WORKLOAD-ARGS...
	local dir=$1 cond=$2; shift 2
	"$CLI" record "${RING[@]}" "${SCAN[@]}" --snapshot-dir "$dir" --snapshot-on "$cond" -- "$WL" --requests --events $N "$@" \
		> "$T/out" 2> "$T/err" || { rc=$?; cat "$T/err"; fail "record exited $rc"; }
	grep -q "written: $((2 * N))" "$T/out" || fail "the workload did not write its $((2 * N)) events"
}

for cond in 'workload:request_end[status>=500]' 'workload:request_e*[ route == "/fail" && status != 200 ]'; do
	echo "== $cond"
	S=$T/s.$RANDOM
	run "$S" "$cond" --error-at 77777
	mapfile -t snaps < <(snapshots "$S")
	[ ${#snaps[@]} -eq 1 ] || { ls "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots for one matching event (want 1)"; }
	grep -q "scanned $((2 * N)) events, 1 met a condition, 0 unscanned" "$T/err" ||
		{ cat "$T/err"; fail "the summary does not say 200000 scanned, 1 met, 0 unscanned"; }
	j=${snaps[0]}/trigger.json
	[ "$(json_field "$j" '["trigger"]["kind"]')" = event ] || { cat "$j"; fail "kind is not event"; }
	[ "$(json_field "$j" '["trigger"]["condition"]')" = "$cond" ] || { cat "$j"; fail "the condition is not named"; }
	[ "$(json_field "$j" '["trigger"]["class"]')" = workload:request_end ] || { cat "$j"; fail "the class is not named"; }
	# the event in the snapshot that has status 500: its cpu, tid and ticks are trigger.json's
	"$CLI" dump --format json "${snaps[0]}/trace" > "$T/dump" || fail "dump of the snapshot"
	ev=$(grep '"status":500' "$T/dump")
	[ "$(grep -c . <<< "$ev")" = 1 ] || fail "the snapshot does not hold the matching event once"
	grep -q '"seq":77777,' <<< "$ev" || fail "the status 500 event is not request 77777: $ev"
	want=$("$PY" -c 'import json,sys; e=json.loads(sys.argv[1]); print(e["cpu"], e["tid"], e["ticks"])' "$ev")
	got=$("$PY" -c 'import json,sys; t=json.load(open(sys.argv[1]))["trigger"]; print(t["cpu"], t["tid"], t["clock_ticks"])' "$j")
	[ "$want" = "$got" ] || { cat "$j"; fail "trigger.json names cpu/tid/ticks $got, the event is $want"; }
	# the events around it are there too: the one just before (status 499 boundary passed by)
	grep -q '"seq":77776,"status":' "$T/dump" || fail "the snapshot lacks the request before the matching one"
	if [ $BT = 1 ]; then
		babeltrace2 "${snaps[0]}/trace" > "$T/bt.out" 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 cannot read the snapshot"; }
		! grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/bt.err" | grep -q . ||
			{ cat "$T/bt.err"; fail "babeltrace2 warned"; }
		grep -q 'workload:request_end: .*seq = 77777, status = 500, route = "/fail"' "$T/bt.out" ||
			fail "babeltrace2 does not show the matching event"
		check_accounting "${snaps[0]}/trace" $(( $(json_field "$j" '["events"]') + $(json_field "$j" '["lost"]') ))
	fi
done

echo "== --scan-period 1ms: the same one snapshot, scanned 50 times more often"
SCAN=(--scan-period 1ms)
S=$T/s.scan
run "$S" 'workload:request_end[status>=500]' --error-at 77777
[ "$(snapshots "$S" | wc -l)" -eq 1 ] || { ls "$S"; cat "$T/err"; fail "--scan-period 1ms: not one snapshot for one matching event"; }
grep -q "scanned $((2 * N)) events, 1 met a condition, 0 unscanned" "$T/err" ||
	{ cat "$T/err"; fail "--scan-period 1ms: the summary does not say 200000 scanned, 1 met, 0 unscanned"; }
SCAN=()
for bad in 0 999us 2s x; do
	if "$CLI" record --mode overwrite --snapshot-dir "$T/sp" --snapshot-on 'a:b' --scan-period $bad -- true 2> "$T/sp.err"; then
		fail "--scan-period $bad was accepted"
	fi
	grep -q "scan-period $bad: want a duration from 1ms to 1s" "$T/sp.err" || { cat "$T/sp.err"; fail "--scan-period $bad: refusal"; }
done
if "$CLI" record --mode overwrite --snapshot-dir "$T/sp" --scan-period 5ms -- true 2> "$T/sp.err"; then
	fail "--scan-period without --snapshot-on was accepted"
fi
grep -q "give --snapshot-on COND" "$T/sp.err" || { cat "$T/sp.err"; fail "--scan-period without a condition: refusal"; }

echo "== float fields and '||' (tb-flight-writer's flight:measure)"
FW=${TB_FLIGHT_WRITER:?}
run_fw() { # DIR COND WRITER-ARGS...
	local dir=$1 cond=$2; shift 2
	"$CLI" record "${RING[@]}" --snapshot-dir "$dir" --snapshot-on "$cond" -- "$FW" --no-wait --triggers 0 \
		--measures $N "$@" > "$T/out" 2> "$T/err" || { rc=$?; cat "$T/err"; fail "record exited $rc"; }
	grep -q "written: $N" "$T/out" || fail "the writer did not write its $N events"
}
for cond in 'flight:measure[latency>0.25 || status>=500 && ratio<-1.0]' \
	'flight:measure[ ( status >= 500 && ratio < -1 ) || (latency > 2.5e-1) ]'; do
	for at in "--slow-at 33333" "--error-at 66666"; do
		echo "== $cond, $at"
		S=$T/f.$RANDOM
		run_fw "$S" "$cond" $at
		mapfile -t snaps < <(snapshots "$S")
		[ ${#snaps[@]} -eq 1 ] || { ls "$S"; cat "$T/err"; fail "${#snaps[@]} snapshots for one matching event (want 1)"; }
		grep -q "scanned $N events, 1 met a condition, 0 unscanned" "$T/err" ||
			{ cat "$T/err"; fail "the summary does not say $N scanned, 1 met, 0 unscanned"; }
		j=${snaps[0]}/trigger.json
		[ "$(json_field "$j" '["trigger"]["condition"]')" = "$cond" ] || { cat "$j"; fail "the condition is not named"; }
		[ "$(json_field "$j" '["trigger"]["class"]')" = flight:measure ] || { cat "$j"; fail "the class is not named"; }
		"$CLI" dump --format json "${snaps[0]}/trace" > "$T/dump" || fail "dump of the snapshot"
		ev=$(grep '"seq":'"${at#* }"',' "$T/dump")
		[ "$(grep -c . <<< "$ev")" = 1 ] || fail "the snapshot does not hold event ${at#* } once"
		want=$("$PY" -c 'import json,sys; e=json.loads(sys.argv[1]); print(e["cpu"], e["tid"], e["ticks"])' "$ev")
		got=$("$PY" -c 'import json,sys; t=json.load(open(sys.argv[1]))["trigger"]; print(t["cpu"], t["tid"], t["clock_ticks"])' "$j")
		[ "$want" = "$got" ] || { cat "$j"; fail "trigger.json names cpu/tid/ticks $got, the event is $want"; }
		if [ $BT = 1 ]; then
			babeltrace2 "${snaps[0]}/trace" > "$T/bt.out" 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 cannot read the snapshot"; }
			! grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$T/bt.err" | grep -q . ||
				{ cat "$T/bt.err"; fail "babeltrace2 warned"; }
			grep -q "flight:measure: .*seq = ${at#* }," "$T/bt.out" || fail "babeltrace2 does not show the matching event"
		fi
	done
	echo "== $cond, no matching event: no snapshot"
	S=$T/f.none.$RANDOM
	run_fw "$S" "$cond"
	[ "$(snapshots "$S" | wc -l)" = 0 ] || { ls "$S"; cat "$T/err"; fail "a snapshot without a matching event"; }
	grep -q "scanned $N events, 0 met a condition, 0 unscanned" "$T/err" || { cat "$T/err"; fail "summary"; }
done

echo "== no matching event: no snapshot"
S=$T/none
run "$S" 'workload:request_end[status>=500]'
[ "$(snapshots "$S" | wc -l)" = 0 ] || { ls "$S"; fail "a snapshot without a matching event"; }
grep -q "scanned $((2 * N)) events, 0 met a condition, 0 unscanned" "$T/err" || { cat "$T/err"; fail "summary"; }
echo PASS
