# SPDX-License-Identifier: MIT
# t_readers_skip_duplicate_streams.sh - a copy of a stream file inside a trace (`cp chan_0
# chan_0.bak`) holds the same stream instance: readers say so once, naming both files, read the
# first only, and count no event twice (dump, report); exit status 3 (input partly not read).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
"$CLI" record -q -o "$T/t" -- "$WL" --threads 2 --events 5000 > /dev/null || fail "record"
n0=$("$CLI" dump "$T/t" | wc -l)
r0=$("$CLI" report --format json "$T/t" | "${PY:-python3}" -c 'import json,sys; print(json.load(sys.stdin)["events"])') ||
	fail "report json"
first=$(cd "$T/t" && ls chan_* | head -1)
cp "$T/t/$first" "$T/t/$first.bak"
"$CLI" dump "$T/t" > "$T/out" 2> "$T/err"
rc=$?
[ $rc -eq 3 ] || { cat "$T/err"; fail "dump exited $rc with a duplicated stream (want 3)"; }
[ "$(wc -l < "$T/out")" -eq "$n0" ] || fail "dump printed $(wc -l < "$T/out") lines, $n0 without the copy"
[ "$(grep -c "same stream" "$T/err")" -eq 1 ] || { cat "$T/err"; fail "not exactly one diagnostic for the copy"; }
grep -q "$first.bak.*same stream.*as $first" "$T/err" || { cat "$T/err"; fail "the diagnostic does not name both files"; }
r1=$("$CLI" report --format json "$T/t" 2> /dev/null | "${PY:-python3}" -c 'import json,sys; print(json.load(sys.stdin)["events"])')
[ "$r1" = "$r0" ] || fail "report counts $r1 events with the copy, $r0 without"
echo PASS
