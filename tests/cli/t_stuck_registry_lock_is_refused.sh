# SPDX-License-Identifier: MIT
# t_stuck_registry_lock_is_refused.sh - a session whose registry lock word was overwritten so
# that it looks held by a live process for ever (tests/tools/corrupt_live.c lock-stuck) does not
# block a program that attaches to it: the attach gives up after its 2 s bound, says so in the
# one line of a refused TRACEBUF_SESSION, and the program runs to its end untraced.  The
# recording of the processes already attached goes on and ends normally.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
CORRUPT=${TB_CORRUPT:?}
S=$T/shm/lock.tb
"$CLI" record -q --session "$S" -o "$T/t" -- "$WL" --threads 1 --events 1000 --wait-file "$T/go" \
	> "$T/out" 2> "$T/err" &
rec=$!
for ((i = 0; i < 1200; i++)); do
	grep -q "^written: " "$T/out" && break
	kill -0 $rec 2> /dev/null || { cat "$T/err"; fail "record ended early"; }
	sleep 0.1
done
grep -q "^written: " "$T/out" || fail "timed out waiting for the workload"
"$CORRUPT" "$S" lock-stuck || fail "corrupter"
# a hang guard of 120 s: the bound is 2 s
TRACEBUF_SESSION=$S timeout 120 "$WL" --threads 1 --events 100 > "$T/out2" 2> "$T/err2"
rc=$?
[ $rc -ne 124 ] || fail "a program attaching to a session with a stuck registry lock hung"
[ $rc -eq 0 ] || { cat "$T/err2"; fail "the program exited $rc"; }
grep -q "^written: 100$" "$T/out2" || fail "the program did not run to its end"
grep -q "TRACEBUF_SESSION=$S refused: .*registry lock.*more than 2 s" "$T/err2" ||
	{ cat "$T/err2"; fail "the refusal does not say the registry lock is stuck"; }
touch "$T/go"
wait $rec || { cat "$T/err"; fail "record exited $?"; }
n=$("$CLI" dump "$T/t" | grep -c workload:tick)
[ "$n" -eq 1000 ] || fail "$n events of the first program recorded, want 1000"
echo PASS
