# SPDX-License-Identifier: MIT
# t_dump_follow_says_each_problem_once.sh - `dump --follow` opens the trace anew on every pass:
# a damaged file in the trace (here a stray garbage file beside the streams) was said again on
# every pass (one line per 100 ms), and when it was gone before the last pass the follower exited
# 0 although it had said it skipped data. Now each problem is said once, the recording's events
# are all printed, and the exit status is 3.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'touch "$T/stop"; kill -9 $(jobs -p) 2> /dev/null; wait 2> /dev/null; rm -rf "$T"' EXIT

"$CLI" record -q -o "$T/tr" -- "$WL" --threads 2 --events 100000000 --sleep-us 2000 --until-file "$T/stop" \
	> "$T/w.out" 2> "$T/w.err" &
rec=$!
wait_for test -e "$T/tr/.tracebuf-recorder" || fail "the recorder did not mark its directory"
head -c 4096 /dev/zero | tr '\0' '\253' > "$T/tr/chan_99"
"$CLI" dump --follow "$T/tr" > "$T/f.txt" 2> "$T/f.err" &
fol=$!
wait_for grep -q "chan_99" "$T/f.err" || fail "the follower did not say the garbage file"
# several more passes (each prints the events of the last ~100 ms): a condition on the output
n1=$(wc -l < "$T/f.txt")
wait_for sh -c "[ \$(wc -l < '$T/f.txt') -gt $((n1 + 1000)) ]" || fail "the follower printed nothing more"
rm "$T/tr/chan_99"
touch "$T/stop"
wait $rec || { cat "$T/w.err"; fail "record"; }
wait $fol
rc=$?
grep -q "chan_99, offset 0: packet skipped: bad magic" "$T/f.err" || { cat "$T/f.err"; fail "the garbage file not said"; }
[ -z "$(sort "$T/f.err" | uniq -d)" ] || { sort "$T/f.err" | uniq -c; fail "a problem was said more than once"; }
[ $rc -eq 3 ] || { cat "$T/f.err"; fail "dump --follow exited $rc after saying it skipped data (want 3)"; }
"$CLI" dump "$T/tr" > "$T/d.txt" || fail "dump of the finished trace"
cmp -s "$T/d.txt" "$T/f.txt" || fail "the followed output differs from a dump of the finished trace"
echo PASS
