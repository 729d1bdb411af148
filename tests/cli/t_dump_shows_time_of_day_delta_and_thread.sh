# SPDX-License-Identifier: MIT
# t_dump_shows_time_of_day_delta_and_thread.sh - `tracebuf dump` reads like babeltrace2's text
# output: each event line starts with the time of day [HH:MM:SS.nnnnnnnnn] (local; --utc), the
# delta from the previous event line (+S.nnnnnnnnn; "(+?.?????????)" for the first), and names
# the thread that wrote it, quoted, as the trace records it (its tracebuf:thread_name even when
# --event hides that record, else its program's name).  Every time of day and delta agrees with
# the raw form (--epoch, the former line, kept for scripts).  A --event pattern that matches no
# class of the trace (a typo) is warned about with the closest class names, exit 1 when nothing
# can match, exit 0 with the warning when another pattern matches.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (checks the times)"; exit 77; }
TN=${TB_THREAD_NAMES:?}

"$CLI" record -q -o "$T/tr" -- "$TN" > "$T/expect" 2> "$T/err" || { cat "$T/err"; fail "record"; }
TZ=UTC "$CLI" dump "$T/tr" > "$T/d.txt" || fail "dump"
TZ=Asia/Kolkata "$CLI" dump --utc "$T/tr" > "$T/u.txt" || fail "dump --utc"
cmp -s "$T/d.txt" "$T/u.txt" || fail "--utc differs from the local time in TZ=UTC"
"$CLI" dump --epoch "$T/tr" > "$T/e.txt" || fail "dump --epoch"
"$CLI" dump --event 'tn:*' "$T/tr" > "$T/f.txt" || fail "dump --event tn:*"

echo "== the time of day and the delta agree with the epoch times; the raw form is the former line"
"$PY" - "$T/d.txt" "$T/e.txt" <<'PY' || fail "times"
import re, sys, time
d = open(sys.argv[1]).read().splitlines()
e = open(sys.argv[2]).read().splitlines()
assert len(d) == len(e) and d, (len(d), len(e))
line = re.compile(r'^\[(\d\d):(\d\d):(\d\d)\.(\d{9})\] \(\+(\?\.\?{9}|\d+\.\d{9})\) \(cpu \d+\) (\d+)/(\d+) (?:"[^"]*" )?(\S+): \{')
raw = re.compile(r'^\[(\d+)\.(\d{9})\] \(cpu \d+\) (\d+)/(\d+) (\S+): \{')
prev = None
for i, (a, b) in enumerate(zip(d, e)):
    m, n = line.match(a), raw.match(b)
    assert m, f"line {i + 1}: {a!r}"
    assert n, f"--epoch line {i + 1}: {b!r}"
    ns = int(n.group(1)) * 10**9 + int(n.group(2))
    tod = time.gmtime(int(n.group(1)))
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (tod.tm_hour, tod.tm_min, tod.tm_sec), (a, b)
    assert m.group(4) == n.group(2), (a, b)
    if prev is None:
        assert m.group(5) == "?.?????????", a
    else:
        s, f = m.group(5).split(".")
        assert int(s) * 10**9 + int(f) == ns - prev, (a, ns - prev)
    assert m.group(6, 7, 8) == n.group(3, 4, 5), (a, b)
    prev = ns
print(f"{len(d)} lines: time of day, delta, pid/tid and name agree with --epoch")
PY

echo "== the thread's name, as the trace records it"
while read -r tid name; do
	case $name in early-name|given-name)
		n=$(grep -c " [0-9]*/$tid \"$name\" tn:ev" "$T/f.txt")
		[ "$n" -ge 1 ] || { grep "/$tid " "$T/f.txt"; fail "tid $tid: no tn:ev line names it \"$name\""; }
		! grep "/$tid " "$T/f.txt" | grep -v -q "\"$name\"" || fail "tid $tid: a line without its name \"$name\""
		echo "  tid $tid: $n lines named \"$name\" (its tracebuf:thread_name hidden by --event)";;
	esac
done < "$T/expect"
grep -q '"early-name"' "$T/f.txt" || fail "no line names the thread early-name"

echo "== a --event pattern that matches nothing is warned about"
"$CLI" dump --event 'tn:ve' "$T/tr" > "$T/t.out" 2> "$T/t.err"
rc=$?
[ $rc = 1 ] || { cat "$T/t.err"; fail "a typo alone: exit $rc, want 1"; }
grep -q "pattern 'tn:ve' matched none of the event classes of the trace: tn:ev" "$T/t.err" ||
	{ cat "$T/t.err"; fail "the warning does not name the pattern and the closest class first"; }
[ ! -s "$T/t.out" ] || fail "a typo printed events"
"$CLI" dump --event 'shop:ordr*' --event 'tn:*' "$T/tr" > "$T/t2.out" 2> "$T/t2.err" ||
	{ cat "$T/t2.err"; fail "a typo next to a matching pattern: exit $?"; }
grep -q "pattern 'shop:ordr\*' matched none" "$T/t2.err" || { cat "$T/t2.err"; fail "the typo was not said"; }
cmp -s "$T/t2.out" "$T/f.txt" || fail "the matching pattern's events differ"
"$CLI" dump --event 'tn:*' "$T/tr" 2> "$T/ok.err" > /dev/null || fail "dump --event tn:*"
[ ! -s "$T/ok.err" ] || { cat "$T/ok.err"; fail "a matching pattern was warned about"; }
echo PASS
