# SPDX-License-Identifier: MIT
# t_every_output_escapes_hostile_strings.sh - one escaping rule for every output (reader.h,
# tb_rd_format_text / tb_rd_format_string): a trace whose every string is hostile (tb-hostile-trace:
# terminal escapes that set the window title and clear the screen, a C1 CSI, DEL, surrogates,
# overlong forms, code points beyond U+10FFFF, 0xff; in string payloads, thread names, the
# process name, the profiler's unwinder and mapped paths, an ELF symbol name; plus here an event
# class name in the metadata and a stream file name) goes through every command that prints
# or writes strings: dump, report (text, JSON, --profile, --threads, --follow, --html), convert
# (chrome, perfetto, folded, speedscope), list.  Checked (tests/lib/strict_output.py): stdout
# and stderr are well-formed UTF-8 with no control character raw (C0 but newline and tab, DEL,
# C1); JSON parses strictly with no lone surrogate; Perfetto's protos decode every string as
# UTF-8; and the hostile names are shown, escaped as \xNN.  Before: report printed thread names
# raw, report --profile and folded printed symbol names raw, JSON carried surrogates.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=${PY:-python3}
CHK="$PY ${TB_SRC:?}/tests/lib/strict_output.py"
"${TB_HOSTILE_TRACE:?}" "$T/h" > /dev/null || fail "tb-hostile-trace"
"$PY" - "$T/h" <<'PYEOF' || fail "cannot edit the trace"
import os, sys
d = sys.argv[1]
p = os.path.join(d, "metadata")
s = open(p, "rb").read()
assert b"app:HOSTILE_CLASS" in s
open(p, "wb").write(s.replace(b"app:HOSTILE_CLASS", b"app:\x1b]0;PWN\x07\xc2\x9b\xff\xed\xa0\x80", 1))
os.rename(os.path.join(d, "chan_1"), os.fsdecode(os.path.join(d, "chan_").encode() + b"\x1b]0;PWN\x07\xc2\x9b\xff\"_1"))
PYEOF
# every command: NAME|ARGS|what its stdout is
while IFS='|' read -r args kind; do
	[ -n "$args" ] || continue
	timeout 120 "$CLI" $args > "$T/out" 2> "$T/err"
	rc=$?
	[ $rc = 0 ] || { cat "$T/err"; fail "$args exited $rc"; }
	$CHK text "$T/out" "$T/err" || fail "$args: raw control characters or ill-formed UTF-8"
	case $kind in
	json) $CHK json "$T/out" || fail "$args: not strict JSON" ;;
	esac
done <<EOF2
dump $T/h|text
dump --format json $T/h|json
dump --follow $T/h|text
report $T/h|text
report --format json $T/h|json
report --follow $T/h|text
report --profile $T/h|text
report --profile --threads $T/h|text
report --profile --format json $T/h|json
report --html -o $T/r.html $T/h|none
convert $T/h --to chrome -o $T/c.json|none
convert $T/h --to perfetto -o $T/p.pftrace|none
convert $T/h --to speedscope -o $T/s.json|none
convert $T/h --to folded -o $T/f.txt|none
list $T/h|text
list --fields $T/h|text
EOF2
$CHK html "$T/r.html" || fail "report --html"
$CHK json "$T/c.json" || fail "convert --to chrome"
$CHK json "$T/s.json" || fail "convert --to speedscope"
$CHK text "$T/f.txt" || fail "convert --to folded"
if command -v protoc > /dev/null && [ -d "$TB_SRC/tests/perfetto/protos" ]; then
	$CHK protobuf "$TB_SRC/tests/perfetto" "$T/p.pftrace" || fail "convert --to perfetto"
else
	echo "note: protoc or tests/perfetto missing: the Perfetto file is not decoded"
fi
# the names are shown, escaped (not dropped)
E='\x1b]0;PWN\x07\x1b[2J'
"$CLI" report "$T/h" > "$T/out" 2>&1
grep -qF "  $E" "$T/out" || { cat "$T/out"; fail "report does not show the thread name escaped"; }
grep -qF 'app:\x1b]0;PWN\x07\xc2\x9b\xff\xed\xa0\x80' "$T/out" || fail "report does not show the class name escaped"
grep -qF 'ev\xc2\x9b\xff' "$T/out" || fail "report does not show the process name escaped"
"$CLI" report --profile "$T/h" > "$T/out" 2> "$T/err"
grep -qF "evil$E"'\xc2\x9b1m\x7f\xed\xa0\x80\xe0\x80\xaf\xf4\x90\x80\x80\xfffn' "$T/out" ||
	{ cat "$T/out"; fail "report --profile does not show the symbol escaped"; }
grep -qF "/nonexistent/$E" "$T/err" || { cat "$T/err"; fail "report --profile: the mapped path's problem is not said escaped"; }
grep -qF 'evil\x1b]0_PWN\x07\x1b[2J' "$T/f.txt" || fail "folded does not show the symbol escaped (';' as '_')"
"$CLI" dump "$T/h" > "$T/out"
grep -qF 's = "\x1b]0;PWN\x07\x1b[2J\xc2\x9b1m\x7f\xed\xa0\x80\xe0\x80\xaf\xf4\x90\x80\x80\xff"' "$T/out" ||
	fail "dump does not show the string escaped"
"$CLI" dump --format json "$T/h" > "$T/out"
grep -qF '"stream":"chan_\u001b]0;PWN\u0007\u009b\ufffd\"_1"' "$T/out" || fail "dump JSON: the stream file name is not escaped"
grep -qF '"s":"ok \u00e9' "$T/out" && fail "dump JSON escaped valid UTF-8"
grep -qF '"s":"\u001b]0;PWN\u0007\u001b[2J\u009b1m\u007f\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd"' "$T/out" ||
	{ grep -m1 '"n":0' "$T/out"; fail "dump JSON: not U+FFFD per ill-formed subpart"; }
"$CLI" list "$T/h" > "$T/out"
grep -qF 'app:\x1b]0;PWN\x07\xc2\x9b\xff\xed\xa0\x80' "$T/out" || fail "list does not show the class name escaped"

# a real program that names its thread with an escape (prctl, as the issue's example) and
# writes a string with one, recorded: report shows the name escaped
if command -v cc > /dev/null; then
	cat > "$T/p.c" <<'C'
#include <sys/prctl.h>
#include <tracebuf/event.h>
TB_EVENT(app, said, (str, what))
int main(void)
{
	prctl(PR_SET_NAME, "\033]0;PWN\007\033[2J");
	for (int i = 0; i < 10; i++)
		tb_app_said("\033]0;PWN\007\302\233\377");
	return 0;
}
C
	san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null)
	cc -O1 ${san:+-fsanitize=$san} -I"$TB_SRC/include" "$T/p.c" -o "$T/p" -L"$TB_BUILD" -ltracebuf -Wl,-rpath,"$TB_BUILD" ||
		fail "building the program"
	"$CLI" record -q -o "$T/rec" -- "$T/p" > /dev/null 2>&1 || fail "record"
	for args in "report" "dump" "report --format json" "dump --format json" "list"; do
		"$CLI" $args "$T/rec" > "$T/out" 2> "$T/err" || fail "$args of the recorded trace"
		$CHK text "$T/out" "$T/err" || fail "$args of the recorded trace: raw control characters"
	done
	"$CLI" report "$T/rec" | grep -qF "  $E" || fail "report of the recorded trace: the thread name is not shown escaped"
else
	echo "note: no C compiler: the recorded program is not run"
fi
echo PASS
