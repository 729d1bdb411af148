# SPDX-License-Identifier: MIT
# t_events_list_enable_disable.sh - `tracebuf list` shows the event classes of a trace and of a
# live session (with the channels that record each, and their fields); `tracebuf disable` stops a
# class for every process of a running session from its next event, and `enable` brings it back.
# Phases are separated by processes, not by time: A writes and waits, the class is disabled, B
# writes (nothing of it is recorded), the class is enabled, C writes (all recorded).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
S=$T/shm/ev.tb
"$CLI" record --session "$S" -o "$T/t" -- "$WL" --threads 1 --events 1000 --wait-file "$T/go" \
	> "$T/out" 2> "$T/err" &
rec=$!
for ((i = 0; i < 1200; i++)); do
	grep -q "^written: " "$T/out" && break
	kill -0 $rec 2> /dev/null || { cat "$T/err"; fail "record ended early"; }
	sleep 0.1
done
grep -q "^written: " "$T/out" || fail "timed out waiting for the first workload"
grep -q "session $S " "$T/err" || { cat "$T/err"; fail "record does not print the session path"; }

"$CLI" list --fields "$S" > "$T/list1" || fail "list of the live session"
cat "$T/list1"
grep -q "^workload:tick  enabled in chan  { thread: u32, seq: u64, value: u64, check: u64 }$" "$T/list1" || fail "list does not show workload:tick enabled with its fields"

"$CLI" disable "$S" 'workload:tick' > "$T/dis" || fail "disable"
grep -q "'\*,!workload:tick'" "$T/dis" || { cat "$T/dis"; fail "disable did not add the exclusion"; }
"$CLI" list "$S" | grep -q "^workload:tick  disabled" || fail "list does not show workload:tick disabled"
TRACEBUF_SESSION=$S "$WL" --threads 1 --events 700 > "$T/outB" || fail "workload B"
"$CLI" enable "$S" 'workload:tick' > "$T/en" || fail "enable"
grep -q "events '\*,workload:tick'" "$T/en" || { cat "$T/en"; fail "enable did not remove the exclusion"; }
TRACEBUF_SESSION=$S "$WL" --threads 1 --events 500 > "$T/outC" || fail "workload C"
# errors name what is wrong
"$CLI" enable "$S" 'a,b' 2> "$T/e1" && fail "a pattern with ',' was accepted"
grep -q "one glob" "$T/e1" || fail "the error does not explain the pattern rule"
touch "$T/go"
wait $rec || { cat "$T/err"; fail "record exited $?"; }

n=$("$CLI" dump "$T/t" | grep -c "workload:tick")
[ "$n" -eq 1500 ] || fail "$n workload:tick events in the trace, want 1000 (A) + 0 (B, disabled) + 500 (C)"
"$CLI" list "$T/t" > "$T/list2" || fail "list of the trace"
grep -qx "workload:tick" "$T/list2" || { cat "$T/list2"; fail "list of the trace lacks workload:tick"; }
"$CLI" disable --channel nope "$T/nosuch" x 2> "$T/e2" && fail "disable of a missing session succeeded"
grep -q "nosuch" "$T/e2" || fail "the error does not name the session"
echo PASS
