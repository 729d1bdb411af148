# SPDX-License-Identifier: MIT
# t_readers_take_an_empty_trace.sh - a trace of a program that wrote nothing (metadata, no
# stream) is a valid trace: report (text, json, html), dump and convert (chrome, perfetto) read
# it and exit 0 saying there is nothing; folded and speedscope say it is not a profile (exit 1).
# Under the ASan+UBSan build this also proves no undefined behaviour on empty inputs (qsort of
# zero elements from a NULL array was one).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
"$CLI" record -q -o "$T/e" -- true || fail "record of a program that writes nothing"
[ -f "$T/e/metadata" ] || fail "no metadata in the empty trace"
"$CLI" report "$T/e" > "$T/r.txt" || fail "report of an empty trace exited $?"
grep -q "events" "$T/r.txt" || { cat "$T/r.txt"; fail "report does not say how many events"; }
"$CLI" report --format json "$T/e" > "$T/r.json" || fail "report --format json exited $?"
"${PY:-python3}" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/r.json" || fail "report json is not JSON"
"$CLI" report --html -o "$T/r.html" "$T/e" || fail "report --html exited $?"
[ -s "$T/r.html" ] || fail "report --html wrote nothing"
n=$("$CLI" dump "$T/e" | wc -l) || fail "dump exited $?"
[ "$n" -eq 0 ] || fail "dump printed $n lines for an empty trace"
for to in chrome perfetto; do
	"$CLI" convert "$T/e" --to $to -o "$T/c.$to" 2> /dev/null || fail "convert --to $to exited $?"
done
for to in folded speedscope; do
	"$CLI" convert "$T/e" --to $to -o "$T/c.$to" 2> "$T/c.err"
	rc=$?
	[ $rc -eq 1 ] || fail "convert --to $to of a trace without samples exited $rc (want 1)"
	grep -q "profile" "$T/c.err" || fail "convert --to $to does not say it needs a profile"
done
echo PASS
