# SPDX-License-Identifier: MIT
# t_report_follow_refreshes_until_the_end.sh - `tracebuf report --follow DIR` prints the report of
# what is on disk again and again while the trace is recorded, then ends by itself when the
# recorder finishes, with a final report that is exactly a plain `report` of the finished trace.
# A recorder killed -9: the follower reports what was written, says so, exits 1.  No trace: an
# error.  JSON and a bad interval: usage errors.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'touch "$T/stop" "$T/stop2"; kill -9 $(jobs -p) 2> /dev/null; wait 2> /dev/null; rm -rf "$T"' EXIT

echo "== following a recording until it ends"
"$CLI" record -q -o "$T/tr" -- "$WL" --threads 2 --events 100000000 --sleep-us 2000 --until-file "$T/stop" \
	> "$T/w.out" 2> "$T/w.err" &
rec=$!
wait_for test -e "$T/tr/.tracebuf-recorder" || fail "the recorder did not mark its directory"
"$CLI" report --follow --interval 100ms "$T/tr" > "$T/f.txt" 2> "$T/f.err" &
fol=$!
# two reports with events in them while the program still runs: it refreshes
wait_for sh -c "[ \$(grep -c '^== recording' '$T/f.txt') -ge 3 ] && [ \$(grep -c 'workload:tick' '$T/f.txt') -ge 2 ]" ||
	{ cat "$T/f.err"; fail "no refreshed reports while the program ran"; }
kill -0 $rec 2> /dev/null || fail "the recording ended before the reports: not following"
echo "  $(grep -c '^== recording' "$T/f.txt") reports while recording"
touch "$T/stop"
wait $rec || { cat "$T/w.err"; fail "record"; }
wait_for sh -c "! kill -0 $fol 2> /dev/null" || fail "report --follow did not end with the recorder"
wait $fol || { cat "$T/f.err"; fail "report --follow exited non-zero"; }
[ "$(grep -c '^== final' "$T/f.txt")" = 1 ] || fail "not exactly one final report"
sed -n '/^== final$/,$p' "$T/f.txt" | tail -n +2 > "$T/final.txt"
"$CLI" report "$T/tr" > "$T/plain.txt" || fail "report"
cmp "$T/final.txt" "$T/plain.txt" || { diff "$T/final.txt" "$T/plain.txt" | head; fail "the final report differs from a plain report"; }
w=$(sed -n 's/^written: //p' "$T/w.out")
n=$("$CLI" report --format json "$T/tr" | grep -o '"events":[0-9]*' | head -1 | cut -d: -f2) # the trace's, first
[ -n "$w" ] && [ "$n" = "$w" ] || fail "the finished trace holds $n events, the program wrote $w"
echo "  final report: $n events, as written"

echo "== the recorder killed -9: the follower ends, says so, exit 1"
"$CLI" record -q -o "$T/k" -- "$WL" --threads 1 --events 100000000 --sleep-us 2000 --until-file "$T/stop2" \
	> /dev/null 2>&1 &
rec=$!
wait_for test -e "$T/k/.tracebuf-recorder" || fail "the recorder did not mark its directory"
"$CLI" report --follow --interval 100ms "$T/k" > "$T/k.txt" 2> "$T/k.err" &
fol=$!
wait_for grep -q 'workload:tick' "$T/k.txt" || { cat "$T/k.err"; fail "the follower reported nothing"; }
kill -9 $rec
wait $rec 2> /dev/null
touch "$T/stop2"
wait_for sh -c "! kill -0 $fol 2> /dev/null" || fail "the follower did not notice the recorder died"
wait $fol
rc=$?
[ $rc = 1 ] || fail "exit $rc after the recorder was killed, want 1"
grep -q "is gone without finishing" "$T/k.err" || { cat "$T/k.err"; fail "the follower does not say the recorder died"; }
grep -q '^== final' "$T/k.txt" || fail "no final report of what the killed recorder wrote"

echo "== no trace, JSON, a bad interval"
"$CLI" report --follow "$T/none" > /dev/null 2> "$T/n.err"
[ $? = 1 ] || fail "report --follow of nothing: want exit 1"
"$CLI" report --follow --format json "$T/tr" > /dev/null 2> "$T/j.err"
[ $? = 2 ] || fail "report --follow --format json: want exit 2"
grep -q "text reports" "$T/j.err" || { cat "$T/j.err"; fail "the JSON refusal does not say why"; }
"$CLI" report --follow --interval 1ns "$T/tr" > /dev/null 2> "$T/i.err"
[ $? = 2 ] || fail "--interval 1ns: want exit 2"
echo PASS
