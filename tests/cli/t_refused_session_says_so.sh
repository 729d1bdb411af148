# SPDX-License-Identifier: MIT
# t_refused_session_says_so.sh - a program started with a TRACEBUF_SESSION the library cannot
# use (missing, not a session, a FIFO, a directory) runs normally and untraced, and says so in
# one line on stderr naming the variable's value and why; TRACEBUF_QUIET=1 hides the line; a
# program without the variable prints nothing.  (The line is the library's only output.)  A value
# holding a terminal escape, C1 controls or ill-formed UTF-8 is named by the one text rule of every
# output (\xNN; docs/READER.md), never raw (it was raw before).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
head -c 100000 /dev/urandom > "$T/garbage"
mkfifo "$T/fifo"
mkdir "$T/dir"
for bad in "$T/missing" "$T/garbage" "$T/fifo" "$T/dir"; do
	TRACEBUF_SESSION=$bad timeout 60 "$WL" --threads 1 --events 100 > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/err"; fail "the program exited $rc with TRACEBUF_SESSION=$bad"; }
	grep -q "^written: 100$" "$T/out" || fail "the program did not run normally with TRACEBUF_SESSION=$bad"
	[ "$(grep -c "^tracebuf: TRACEBUF_SESSION=$bad refused: .*; this program is not traced" "$T/err")" -eq 1 ] ||
		{ cat "$T/err"; fail "not exactly one line saying TRACEBUF_SESSION=$bad was refused"; }
	TRACEBUF_QUIET=1 TRACEBUF_SESSION=$bad timeout 60 "$WL" --threads 1 --events 100 > "$T/out" 2> "$T/err" ||
		fail "the program failed with TRACEBUF_QUIET=1"
	[ ! -s "$T/err" ] || { cat "$T/err"; fail "TRACEBUF_QUIET=1 did not hide the line"; }
done
H=$'x\e]0;PWN\a\e[2J\r\x7f\xc2\x9b\x9b\xff\xed\xa0\x80 \xc3\xa9'
TRACEBUF_SESSION=$T/missing$H timeout 60 "$WL" --threads 1 --events 1 > "$T/out" 2> "$T/err" ||
	fail "the program failed with a hostile TRACEBUF_SESSION"
python3 "${TB_SRC:?}/tests/lib/strict_output.py" text "$T/err" ||
	{ cat -v "$T/err"; fail "the line holds a raw control character or ill-formed UTF-8"; }
grep -qF "TRACEBUF_SESSION=$T/missing"'x\x1b]0;PWN\x07\x1b[2J\x0d\x7f\xc2\x9b\x9b\xff\xed\xa0\x80 '$'\xc3\xa9'' refused: ' "$T/err" ||
	{ cat -v "$T/err"; fail "the line does not name the value escaped (the valid UTF-8 kept)"; }
env -u TRACEBUF_SESSION "$WL" --threads 1 --events 100 > "$T/out" 2> "$T/err" || fail "untraced run"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "a program without TRACEBUF_SESSION printed something"; }
echo PASS
