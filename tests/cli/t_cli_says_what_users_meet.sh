# SPDX-License-Identifier: MIT
# t_cli_says_what_users_meet.sh - small things a user meets, each checked:
#  1. durations take the unit the messages use ("1h", also "2min"); a huge or hexadecimal one is
#     refused with exit 2 and a message naming the bound and the units (--block-timeout 11s was
#     refused only when the session was created, exit 1);
#  2. a count of 1 is singular: the flight recorder's "1 event in 1 packet";
#  3. tb_trigger() under a plain `record` (no flight recorder) is not silent: the recorder says once,
#     at the end, how many calls it ignored, the last one's name, and why;
#  4. `report --profile` of a profile without samples exits 0 (as `report` of an empty trace) and says
#     why there are none; of a trace that is no profile at all it exits 1 (as convert --to folded).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/flight.sh"

# 1. durations
"$WL" --threads 1 --events 10 > /dev/null 2>&1 || fail "the workload does not run alone"
"$CLI" record -q --flush-period 1h -o "$T/h" -- "$WL" --threads 1 --events 10 > /dev/null 2> "$T/h.err" || 
	{ rc=$?; cat "$T/h.err"; fail "--flush-period 1h refused (exit $rc)"; }
"$CLI" record -q --flush-period 2min -o "$T/m" -- "$WL" --threads 1 --events 10 > /dev/null 2> "$T/m.err" || 
	{ rc=$?; cat "$T/m.err"; fail "--flush-period 2min refused (exit $rc)"; }
"$CLI" report --follow --interval 1h "$T/h" > /dev/null 2> "$T/i.err" || 
	{ rc=$?; cat "$T/i.err"; fail "report --interval 1h refused (exit $rc)"; }
for bad in 1e30h 1e400s 99999999999999h 0x10s nan 1hx 11s; do
	"$CLI" record -q --block-timeout "$bad" -o "$T/b" -- "$WL" --threads 1 --events 10 > /dev/null 2> "$T/b.err"
	rc=$?
	[ $rc -eq 2 ] || { cat "$T/b.err"; fail "--block-timeout $bad: exit $rc (want 2, a usage error)"; }
	grep -q "up to 10s.*units ns, us, ms, s, min, h" "$T/b.err" || 
		{ cat "$T/b.err"; fail "--block-timeout $bad: the message does not give the bound and the units"; }
	[ ! -e "$T/b" ] || fail "--block-timeout $bad: an output directory was created"
done
"$CLI" record -q --flush-period 2h -o "$T/b" -- "$WL" --threads 1 --events 10 > /dev/null 2> "$T/b.err"
rc=$?
[ $rc -eq 2 ] && grep -q "up to 1h" "$T/b.err" || { cat "$T/b.err"; fail "--flush-period 2h: exit $rc (want 2, 'up to 1h')"; }

# 2. and 3. a flight recorder's snapshot of one event; the same triggers without a flight recorder
S=$T/snaps
"$CLI" record --mode overwrite --sb-size 16K --sb-count 4 --snapshot-dir "$S" -- \
	"$FW" --dir "$S" --triggers 1 --events 1 > "$T/f.out" 2> "$T/f.err" || { rc=$?; cat "$T/f.err"; fail "flight record exited $rc"; }
grep -q "snapshot .*'t1', 1 event in 1 packet (" "$T/f.err" || { cat "$T/f.err"; fail "no '1 event in 1 packet'"; }
! grep -qE '(^|[^0-9.,])1 [a-z]+s\b' "$T/f.err" || 
	{ grep -E '(^|[^0-9.,])1 [a-z]+s\b' "$T/f.err"; fail "a count of 1 with a plural noun"; }
! grep -q "tb_trigger() call" "$T/f.err" || fail "the flight recorder says its triggers were ignored"

"$CLI" record -q -o "$T/plain" -- "$FW" --dir "$T/none" --triggers 2 --events 1 --no-wait > /dev/null 2> "$T/p.err" || 
	{ rc=$?; cat "$T/p.err"; fail "plain record of tb_trigger() calls exited $rc"; }
[ "$(grep -c "tb_trigger() call" "$T/p.err")" = 1 ] || { cat "$T/p.err"; fail "not said once that the triggers went nowhere"; }
grep -q "2 tb_trigger() calls (the last: 't2' of pid [0-9]*) ignored: this recording is not a flight recorder" "$T/p.err" || 
	{ cat "$T/p.err"; fail "the ignored triggers are not counted and named"; }
grep -q -- "--snapshot-dir" "$T/p.err" || fail "not said how to keep snapshots"
"$CLI" record -q -o "$T/plain1" -- "$FW" --dir "$T/none" --triggers 1 --events 1 --no-wait > /dev/null 2> "$T/p1.err"
grep -q "1 tb_trigger() call (the last: 't1'" "$T/p1.err" || { cat "$T/p1.err"; fail "one ignored trigger not said as one call"; }
"$CLI" record -q -o "$T/plain0" -- "$WL" --threads 1 --events 10 > /dev/null 2> "$T/p0.err"
! grep -q "tb_trigger" "$T/p0.err" || fail "a recording without triggers speaks of them"

# 4. report --profile: an empty profile, and a trace that is no profile
"$CLI" report --profile "$(dirname "$0")/data/profile_without_records" > "$T/e.txt" 2> "$T/e.err"
rc=$?
[ $rc -eq 0 ] || { cat "$T/e.err"; fail "report --profile of a profile without samples: exit $rc (want 0)"; }
grep -q "^no samples: a sample is taken per period of CPU time" "$T/e.txt" || 
	{ cat "$T/e.txt"; fail "report --profile does not say why there are no samples"; }
"$CLI" report --profile "$T/plain0" > /dev/null 2> "$T/n.err"
rc=$?
[ $rc -eq 1 ] && grep -q "no profile:sample events" "$T/n.err" || 
	{ cat "$T/n.err"; fail "report --profile of a trace that is no profile: exit $rc (want 1, said)"; }
echo PASS
