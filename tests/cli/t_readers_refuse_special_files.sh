# SPDX-License-Identifier: MIT
# t_readers_refuse_special_files.sh - a FIFO where a file is expected never hangs a tool: a
# FIFO named metadata, a FIFO beside good streams in a trace, a FIFO given as a session file to
# stat, snapshot, recover, list, and a FIFO named by a profile's map record; dangling and
# looping symbolic links among the streams.  Each command
# returns (a hang guard of 60 s each, far above the milliseconds they take), says which file is
# not a regular one, and reads whatever good data there is.  An empty stream file is said too.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
g() { timeout 60 "$@"; } # 124: it hung
"$CLI" record -q -o "$T/t" -- "$WL" --threads 2 --events 1000 > /dev/null || fail "record"
n0=$("$CLI" dump "$T/t" | grep -c workload:tick)

# a FIFO beside the good streams: skipped with a word, the good streams read whole
cp -r "$T/t" "$T/f1"
mkfifo "$T/f1/chan_99"
g "$CLI" dump "$T/f1" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -ne 124 ] || fail "dump hung on a FIFO among the streams"
[ $rc -eq 3 ] || { cat "$T/err"; fail "dump exited $rc with a FIFO among the streams (want 3)"; }
grep -q "chan_99.*not a regular file" "$T/err" || { cat "$T/err"; fail "dump does not name the FIFO"; }
[ "$(grep -c workload:tick "$T/out")" -eq "$n0" ] || fail "the good streams were not read whole"
for cmd in "report" "report --format json" "convert --to chrome -o $T/c.json" "convert --to perfetto -o $T/c.pf" \
	   "report --html -o $T/c.html" "list"; do
	g "$CLI" $cmd "$T/f1" > /dev/null 2> "$T/err"
	rc=$?
	[ $rc -ne 124 ] || fail "$cmd hung on a FIFO among the streams"
done

# an empty file among the streams (the recorder never leaves one): said, not silently passed over
cp -r "$T/t" "$T/f3"
: > "$T/f3/chan_98"
"$CLI" dump "$T/f3" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 3 ] || { cat "$T/err"; fail "dump exited $rc with an empty stream file (want 3)"; }
grep -q "chan_98.*empty file" "$T/err" || { cat "$T/err"; fail "dump does not name the empty stream file"; }
[ "$(grep -c workload:tick "$T/out")" -eq "$n0" ] || fail "the good streams were not read whole beside an empty one"

# symbolic links that lead nowhere among the streams (dangling, a loop): said, not silently
# passed over (a dangling chan_97 is a stream the user expects; not chan_7: under the fallback
# protocol a 2-CPU trace may hold chan_0..chan_15, its slots); links to directories are no streams
cp -r "$T/t" "$T/f4"
ln -s nowhere "$T/f4/chan_97"
ln -s loop_b "$T/f4/loop_a"
ln -s loop_a "$T/f4/loop_b"
ln -s . "$T/f4/self"
ln -s .. "$T/f4/up"
g "$CLI" dump "$T/f4" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 3 ] || { cat "$T/err"; fail "dump exited $rc with dangling and looping links among the streams (want 3)"; }
grep -q "chan_97.*No such file" "$T/err" || { cat "$T/err"; fail "dump does not name the dangling link"; }
grep -q "loop_a.*symbolic links" "$T/err" && grep -q "loop_b.*symbolic links" "$T/err" ||
	{ cat "$T/err"; fail "dump does not name the link loop"; }
! grep -q "/self, \|/up, " "$T/err" || { cat "$T/err"; fail "a link to a directory is taken for a stream"; }
[ "$(grep -c workload:tick "$T/out")" -eq "$n0" ] || fail "the good streams were not read whole beside the links"

# a FIFO named metadata: refused at once
mkdir "$T/f2"
cp "$T"/t/chan_* "$T/f2/"
mkfifo "$T/f2/metadata"
for cmd in dump report list "convert --to chrome -o $T/c2.json"; do
	g "$CLI" $cmd "$T/f2" > /dev/null 2> "$T/err"
	rc=$?
	[ $rc -ne 124 ] || fail "$cmd hung on a FIFO named metadata"
	[ $rc -ne 0 ] || fail "$cmd accepted a FIFO as metadata"
	grep -q "metadata.*regular file\|regular file.*metadata" "$T/err" || { cat "$T/err"; fail "$cmd does not say metadata is not a regular file"; }
done

# a FIFO as a session file
mkfifo "$T/shm/s.tb"
for cmd in "stat" "list" "snapshot -o $T/snap" "recover -o $T/rec"; do
	set -- $cmd
	sub=$1
	shift
	g "$CLI" $sub "$T/shm/s.tb" "$@" > /dev/null 2> "$T/err"
	rc=$?
	[ $rc -ne 124 ] || fail "$sub hung on a FIFO as a session file"
	[ $rc -ne 0 ] || fail "$sub accepted a FIFO as a session file"
	grep -qi "regular file\|not a tracebuf session" "$T/err" || { cat "$T/err"; fail "$sub does not say the session is not a regular file"; }
done
echo PASS
