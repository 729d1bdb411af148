# SPDX-License-Identifier: MIT
# t_record_force_and_default_output.sh - `record` without -o writes a new trace-YYYYMMDD-HHMMSS
# here and says where (as profile does); -o DIR holding a trace is refused without --force and
# replaced with it; --force never removes what does not look like a trace (no CTF metadata, a
# subdirectory, a recorder alive): refused, every file left (issue 26, item 7).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
mkdir "$T/wd"
cd "$T/wd" || fail "cd"

"$CLI" record -- "$WL" --events 7 > /dev/null 2> "$T/d.err" || { cat "$T/d.err"; fail "record without -o"; }
d=$(ls -d trace-* 2> /dev/null)
[ "$(echo "$d" | wc -w)" -eq 1 ] || fail "record without -o: want one trace-* directory, got '$d'"
case $d in trace-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]*) ;; *) fail "default name $d" ;; esac
grep -q "trace in $d" "$T/d.err" || { cat "$T/d.err"; fail "the default output is not said"; }
"$VERIFY" --written 7 "$d" || fail "the default trace"
# a second run in the same second: another name, not a refusal
"$CLI" record -q -- "$WL" --events 3 > /dev/null || fail "second record without -o"
[ "$(ls -d trace-* | wc -l)" -eq 2 ] || fail "two runs without -o: want two traces"

"$CLI" record -q -o t -- "$WL" --events 5 > /dev/null || fail "record -o t"
"$CLI" record -q -o t -- "$WL" --events 9 > /dev/null 2> "$T/e.err" && fail "an existing trace replaced without --force"
grep -q 'not empty.*--force' "$T/e.err" || { cat "$T/e.err"; fail "the refusal does not name --force"; }
"$VERIFY" --written 5 t || fail "the refused run touched the trace"
"$CLI" record -q --force -o t -- "$WL" --events 9 > /dev/null || fail "--force"
"$VERIFY" --written 9 t || fail "--force: the trace is not the new one"
"$CLI" record -q -f -o t -- "$WL" --events 4 > /dev/null || fail "-f"
"$VERIFY" --written 4 t || fail "-f: the trace is not the new one"

# not a trace: refused, nothing removed
mkdir notrace && echo precious > notrace/data
"$CLI" record -q --force -o notrace -- "$WL" --events 5 > /dev/null 2> "$T/n.err" && fail "--force emptied a directory that is no trace"
grep -q 'does not look like a trace.*not removed' "$T/n.err" || { cat "$T/n.err"; fail "no reason for the refusal"; }
[ "$(cat notrace/data)" = precious ] || fail "--force removed a file of a directory that is no trace"
# a trace with a subdirectory: refused, nothing removed
"$CLI" record -q -o t2 -- "$WL" --events 5 > /dev/null || fail "record -o t2"
mkdir t2/keep && echo x > t2/keep/f
"$CLI" record -q --force -o t2 -- "$WL" --events 5 > /dev/null 2> "$T/s.err" && fail "--force removed a trace holding a directory"
grep -q 'holds keep, which is not a file of a trace' "$T/s.err" || { cat "$T/s.err"; fail "no reason for the subdirectory"; }
[ -f t2/keep/f ] && [ -f t2/metadata ] || fail "--force removed files of a refused directory"
# a metadata file that is not CTF: refused
mkdir fake && echo 'not ctf' > fake/metadata
"$CLI" record -q --force -o fake -- "$WL" --events 5 > /dev/null 2>&1 && fail "--force took a directory with a non-CTF metadata"
[ -f fake/metadata ] || fail "fake/metadata removed"
echo PASS
