# SPDX-License-Identifier: MIT
# t_block_never_waits_for_a_recorder_killed_while_starting.sh - `record --mode block` killed -9
# while starting (after it forked CMD, before its engine or drain thread existed): CMD still
# runs (another recorder may attach), and its producers see the recorder dead from their first
# full ring: every event that does not fit drops at once as "no consumer", none waits the block
# timeout.  The recorder says who it is in the session before CMD can start: the session names
# the stopped recorder's pid before the kill.  A recorder that attaches afterwards drains what
# the rings hold, and the trace accounts for every event.
# The recorder stops itself at that point (TRACEBUF_TEST_STOP_WHILE_STARTING, SIGSTOP); the
# test waits for the stop, then kills it: deterministic, no timing verdict (counters only).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'kill -9 $(jobs -p) 2> /dev/null; wait; rm -rf "$T"' EXIT
S=$T/shm/k.tb D=$T/d
# counter of `tracebuf stat` (total line) by column name
stat_col() {
	"$CLI" stat "$S" 2> /dev/null | awk -v c="$1" '$1 == "cpu" { for (i = 1; i <= NF; i++) if ($i == c) k = i }
		$1 == "total" && k { print $k; exit }'
}
proc_state() { sed 's/.*) \(.\).*/\1/' "/proc/$1/stat" 2> /dev/null; }

# 2 threads x 20000 events into rings of 2 x 16 KiB per CPU: most events find the ring full
TRACEBUF_TEST_STOP_WHILE_STARTING=1 "$CLI" record -q --mode block --sb-size 16K --sb-count 2 \
	--session "$S" -o "$D" -- "$WL" --threads 2 --events 20000 > "$T/wl.out" 2> "$T/rec.err" &
rp=$!
stopped() { [ "$(proc_state $rp)" = T ]; }
wait_for stopped || { cat "$T/rec.err"; fail "the recorder did not stop while starting"; }
wl=$(pgrep -P $rp) || fail "CMD's process was not forked before the stop"
# the session already names its consumer, although no engine exists yet
"$CLI" stat "$S" > "$T/stat0" 2>&1 || { cat "$T/stat0"; fail "stat of the starting session"; }
grep -q "consumer pid $rp," "$T/stat0" || { cat "$T/stat0"; fail "the session does not name the recorder ($rp) before CMD runs"; }
{ kill -9 $rp; wait $rp; } 2> /dev/null

# CMD runs now (the end of the start pipe); it must never wait for the dead recorder
done_writing() { grep -q '^written: ' "$T/wl.out"; }
for _ in $(seq 3000); do
	done_writing && break
	t=$(stat_col timeout)
	[ "${t:-0}" -eq 0 ] || fail "a producer waited the block timeout for the dead recorder ($t timeouts)"
	sleep 0.05
done
done_writing || fail "CMD did not finish (it was started: $(proc_state "$wl"))"
w=$(sed -n 's/^written: //p' "$T/wl.out")
t=$(stat_col timeout) n=$(stat_col noconsumer)
echo "CMD wrote $w events: $n dropped at once (no consumer), $t block timeouts"
[ "$t" -eq 0 ] || fail "$t block timeouts: producers waited for the dead recorder"
[ "$n" -gt 0 ] || fail "no event counted as 'no consumer' (rings of 64 KiB in all cannot hold $w events)"

# a recorder that attaches now drains what the rings hold: the identity is exact
"$CLI" record --attach "$S" -o "$D" 2> "$T/att.err" || { cat "$T/att.err"; fail "record --attach after the kill"; }
"$VERIFY" --written "$w" "$D" || { cat "$T/att.err"; fail "the trace does not account for every event"; }
[ ! -e "$S" ] || fail "the drained session file was left"
echo PASS
