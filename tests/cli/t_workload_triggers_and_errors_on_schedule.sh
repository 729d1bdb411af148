# SPDX-License-Identifier: MIT
# t_workload_triggers_and_errors_on_schedule.sh - the workload's options for make bench's
# flight recorder groups (bench/bench_soak.c, bench/bench_flight_lttng.c):
# --trigger-ms MS calls tb_trigger("workload") on a schedule while the writers run and prints
# `workload: triggers N`: under `record --snapshot-dir`, exactly N snapshots, each the
# program's, named "workload"; untraced, N is 0 and nothing fails.
# --error-every N (with --requests): thread 0's requests N-1, 2N-1, ... end with status 500,
# one `workload: error_realtime_ns T` line each (increasing, within the run), and a
# `--snapshot-on 'workload:request_end[status>=500]'` condition meets exactly those.
# Without --requests: a usage error.  No timing assertion: the counts are compared, not the times.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
snapshots() { find "$1" -mindepth 1 -maxdepth 1 -type d -name '[0-9][0-9][0-9][0-9][0-9][0-9]-*' | sort; }

# 1. --trigger-ms under a flight recorder: one snapshot per call
S=$T/s
"$CLI" record --mode overwrite --sb-size 64K --sb-count 8 --snapshot-dir "$S" -- \
	"$WL" --threads 2 --rate 2000 --events 5000 --trigger-ms 1000 > "$T/out" 2> "$T/err" ||
	{ rc=$?; cat "$T/err"; fail "record exited $rc"; }
n=$(sed -n 's/^workload: triggers \([0-9]*\)$/\1/p' "$T/out")
[ -n "$n" ] || { cat "$T/out"; fail "no 'workload: triggers N' line"; }
[ "$n" -ge 1 ] || fail "the 2.5 s run called tb_trigger() $n times"
grep -q "^written: 10000$" "$T/out" || fail "the writers did not write their 10000 events"
[ "$(snapshots "$S" | wc -l)" = "$n" ] || { ls "$S"; cat "$T/err"; fail "$(snapshots "$S" | wc -l) snapshots for $n calls"; }
for sn in $(snapshots "$S"); do
	grep -q '"kind": "program"' "$sn/trigger.json" && grep -q '"name": "workload"' "$sn/trigger.json" ||
		{ cat "$sn/trigger.json"; fail "$sn: not the program's trigger named workload"; }
done

# 2. untraced: the calls fail quietly, 0 counted, the run is the same
env -u TRACEBUF_SESSION "$WL" --threads 1 --rate 2000 --events 700 --trigger-ms 100 > "$T/out2" 2>&1 ||
	{ rc=$?; cat "$T/out2"; fail "untraced --trigger-ms exited $rc"; }
grep -q "^workload: triggers 0$" "$T/out2" || { cat "$T/out2"; fail "untraced: triggers not 0"; }
grep -q "^written: 700$" "$T/out2" || fail "untraced: not 700 written"

# 3. --error-every: thread 0's requests 999 and 1999 of 2500, their times, and a condition meets exactly them
S3=$T/s3
t0=$(date +%s%N)
"$CLI" record --mode overwrite --sb-size 64K --sb-count 8 --snapshot-dir "$S3" \
	--snapshot-on 'workload:request_end[status>=500]' -- \
	"$WL" --requests --threads 2 --rate 5000 --events 2500 --error-every 1000 > "$T/out3" 2> "$T/err3" ||
	{ rc=$?; cat "$T/err3"; fail "record exited $rc"; }
t1=$(date +%s%N)
mapfile -t times < <(sed -n 's/^workload: error_realtime_ns \([0-9]*\)$/\1/p' "$T/out3")
[ ${#times[@]} -eq 2 ] || { cat "$T/out3"; fail "${#times[@]} error times (want 2: requests 999 and 1999 of thread 0)"; }
[ "${times[0]}" -gt "$t0" ] && [ "${times[0]}" -lt "${times[1]}" ] && [ "${times[1]}" -lt "$t1" ] ||
	fail "error times ${times[*]} not increasing within the run ($t0..$t1)"
grep -q "^written: 10000$" "$T/out3" || fail "not 10000 events (2 x 2500 requests x 2)"
grep -q "scanned 10000 events, 2 met a condition, 0 unscanned" "$T/err3" || { cat "$T/err3"; fail "the condition did not meet exactly the 2 errors"; }
[ "$(snapshots "$S3" | wc -l)" -ge 1 ] || fail "no snapshot for the errors"

# 4. --error-every without --requests
"$WL" --error-every 10 --events 10 > "$T/out4" 2>&1 && fail "--error-every without --requests accepted"
[ $? -eq 2 ] || fail "--error-every without --requests: exit not 2"
grep -q "goes with --requests" "$T/out4" || { cat "$T/out4"; fail "no message"; }
echo PASS
