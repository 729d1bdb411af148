# SPDX-License-Identifier: MIT
# t_dump_follow.sh - `tracebuf dump --follow DIR` prints the events of a trace while it is being
# recorded, in time order across CPUs, and ends by itself when the recorder finishes: events
# are printed while the program still runs, and the whole output is exactly a plain `dump` of the
# finished trace (text and JSON).  A recorder killed -9: the follower prints what was written and
# ends with status 1 and a message.  A finished trace: printed once.  No trace: an error.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'touch "$T/stop" "$T/stop2"; kill -9 $(jobs -p) 2> /dev/null; wait 2> /dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

echo "== following a recording until it ends"
# two threads writing slowly until $T/stop exists
"$CLI" record -q -o "$T/tr" -- "$WL" --threads 2 --events 100000000 --sleep-us 2000 --until-file "$T/stop" \
	> "$T/w.out" 2> "$T/w.err" &
rec=$!
wait_for test -e "$T/tr/.tracebuf-recorder" || fail "the recorder did not mark its directory"
"$CLI" dump --follow "$T/tr" > "$T/f.txt" 2> "$T/f.err" &
fol=$!
"$CLI" dump --follow --format json "$T/tr" > "$T/f.json" 2> "$T/fj.err" &
folj=$!
wait_for grep -q 'workload:tick' "$T/f.txt" || { cat "$T/f.err"; fail "the follower printed nothing while the program ran"; }
kill -0 $rec 2> /dev/null || fail "the recording ended before the follower printed: not following"
echo "  $(wc -l < "$T/f.txt") events printed while recording"
touch "$T/stop"
wait $rec || { cat "$T/w.err"; fail "record"; }
wait_for sh -c "! kill -0 $fol 2> /dev/null && ! kill -0 $folj 2> /dev/null" || fail "the followers did not end with the recorder"
wait $fol || { cat "$T/f.err"; fail "dump --follow exited non-zero"; }
wait $folj || { cat "$T/fj.err"; fail "dump --follow --format json exited non-zero"; }
[ ! -e "$T/tr/.tracebuf-recorder" ] || fail "the recorder left its mark"
"$CLI" dump "$T/tr" > "$T/d.txt" || fail "dump"
"$CLI" dump --format json "$T/tr" > "$T/d.json" || fail "dump --format json"
cmp "$T/d.txt" "$T/f.txt" || fail "the followed output differs from a dump of the finished trace"
cmp "$T/d.json" "$T/f.json" || fail "the followed JSON differs from a dump of the finished trace"
n=$(grep -c 'workload:tick' "$T/d.txt")
w=$(sed -n 's/^written: //p' "$T/w.out")
[ "$n" = "$w" ] || fail "$n events followed, the program wrote $w"
echo "  $n events, the same as dump"

echo "== the recorder killed -9: the follower ends, says so, exit 1"
"$CLI" record -q -o "$T/k" -- "$WL" --threads 1 --events 100000000 --sleep-us 2000 --until-file "$T/stop2" \
	> /dev/null 2>&1 &
rec=$!
wait_for test -e "$T/k/.tracebuf-recorder" || fail "the recorder did not mark its directory"
"$CLI" dump --follow "$T/k" > "$T/k.txt" 2> "$T/k.err" &
fol=$!
wait_for grep -q 'workload:tick' "$T/k.txt" || { cat "$T/k.err"; fail "the follower printed nothing"; }
kill -9 $rec
wait $rec 2> /dev/null
touch "$T/stop2"
wait_for sh -c "! kill -0 $fol 2> /dev/null" || fail "the follower did not notice the recorder died"
wait $fol
rc=$?
[ $rc = 1 ] || fail "exit $rc after the recorder was killed, want 1"
grep -q "is gone without finishing" "$T/k.err" || { cat "$T/k.err"; fail "the follower does not say the recorder died"; }

echo "== a finished trace is printed once; no trace is an error"
"$CLI" dump --follow "$T/tr" > "$T/again.txt" || fail "--follow of a finished trace"
cmp "$T/d.txt" "$T/again.txt" || fail "--follow of a finished trace differs from dump"
"$CLI" dump --follow "$T/none" > /dev/null 2> "$T/n.err" && fail "--follow of no trace: exit 0"
grep -q "none" "$T/n.err" || { cat "$T/n.err"; fail "the error does not name the directory"; }
echo PASS
