# SPDX-License-Identifier: MIT
# t_cli_messages_escape_hostile_arguments.sh - the CLI's own messages (errors, warnings, usage
# errors, summaries, getopt's complaints) echo what the user typed and the paths they named by the
# one text rule of every output (tb_rd_format_text: C0 controls, DEL, C1 controls and ill-formed
# UTF-8 as \xNN; tools/cli_text.c), never raw: a value or a file name may hold a terminal escape
# that sets the window title or clears the screen.  Every command (record, profile, snapshot,
# recover, snapshots, dump, report, convert, stat, list, enable, disable, and the top level) runs
# with a hostile value (ESC sequences, BEL, CR, DEL, a C1 CSI as UTF-8 and as a raw byte 0x9b,
# 0xff, an encoded surrogate) in each option that takes one and in its positional paths: a trace,
# a live session file, an output file, a program all named with it.  Checked: stdout and stderr
# are well-formed UTF-8 with no control character raw (tests/lib/strict_output.py text), the
# exit code is the expected one (never a crash), and the message still names the value, escaped.
# Before: record --pid, every usage error of record and profile, the --snapshot-on caret lines,
# getopt's "unrecognized option", the top level's "unknown command", and the summaries naming an
# output directory, a session or a relay printed them raw (66 of the 124 runs below), and
# report --html put the trace's name raw into the page's <title>.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=${PY:-python3}
CHK="$PY ${TB_SRC:?}/tests/lib/strict_output.py"
H=$'x\e]0;PWN\a\e[2J\r\x7f\xc2\x9b\x9b\xff\xed\xa0\x80'
# H as the messages show it
E='x\x1b]0;PWN\x07\x1b[2J\x0d\x7f\xc2\x9b\x9b\xff\xed\xa0\x80'
cd "$T" || fail "cd" # a default output (trace-..., profile-...) lands here
# the sampler (profile, and the lines marked prof- that read its trace): not built under TSan; under
# ASan it comes before the program's libasan (as in tests/profile/prof_env.sh)
case $(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null) in
*address*) export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" ;;
esac
sampler=1
[ -f "$TB_BUILD/libtracebuf-profile.so" ] || { sampler=0; echo "note: no sampler in this build: the prof- lines are not run"; }

# what the commands below name: a trace, a live session, a program, an empty directory
D=$T/trace$H
"$CLI" record -q -o "$D" -- "$WL" --threads 1 --events 50 > /dev/null 2> "$T/err" ||
	{ cat "$T/err"; fail "cannot record the trace"; }
ln -s "$WL" "$T/prog$H" || fail "cannot make the program link"
mkdir "$T/empty$H" || fail "mkdir"
S=$T/shm/sess$H
"$CLI" record --session "$S" -o "$T/live" -- "$WL" --threads 1 --events 10 --wait-file "$T/go" \
	> "$T/live.out" 2> "$T/live.err" &
rec=$!
trap 'touch "$T/go"; wait $rec 2> /dev/null; rm -rf "$T"' EXIT
wait_for grep -q "^written: " "$T/live.out" || { cat "$T/live.err"; fail "the live session's workload did not write"; }

n=0 bad=0
# LINE: WANT|ARGS   WANT: ok (exit 0), usage (2), fail (1), err (1 or 2), any (< 124), prefixed prof-
# when the line needs the sampler (profile's own options are checked before it looks for the
# sampler library; record's options it passes on and the command are checked by record, after);
# ARGS are eval'ed (H, T, D, S, WL, E expand).  What must appear escaped: E, unless the line ends
# with ' #NAMES STRING' (STRING must appear; '-': nothing to check, the message has no place for it)
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	want=${line%%|*}
	case $want in prof-*) [ $sampler = 1 ] || continue; want=${want#prof-} ;; esac
	args=${line#*|}
	name=$E
	case $args in *' #NAMES '*) name=${args##* #NAMES }; args=${args% #NAMES *} ;; esac
	eval "set -- $args"
	timeout 120 "$CLI" "$@" > "$T/out" 2> "$T/err" < /dev/null
	rc=$?
	n=$((n + 1))
	shown=$(printf '%q ' "$@")
	# every problem said, then the verdict
	problem=
	case $want:$rc in
	ok:0 | usage:2 | fail:1 | err:1 | err:2) ;;
	any:*) [ $rc -lt 124 ] || problem="exit $rc" ;;
	*) problem="exit $rc, want $want" ;;
	esac
	$CHK text "$T/out" "$T/err" || problem="$problem; a raw control character or ill-formed UTF-8"
	! grep -qE "ERROR: [A-Za-z]+Sanitizer|runtime error:" "$T/err" || problem="$problem; a sanitizer report"
	if [ "$name" != - ] && ! cat "$T/out" "$T/err" | grep -qF -- "$name"; then
		problem="$problem; the messages do not name the value ($name)"
	fi
	if [ -n "$problem" ]; then
		cat -v "$T/out" "$T/err" | head -20
		echo "FAIL: $shown: $problem" >&2
		bad=$((bad + 1))
	fi
done <<'EOF'
usage|"$H"
# record: every option that takes a value, the command, the paths
usage|record --pid "$H"
usage|record --snapshot-on "$H" -- true
usage|record --snapshot-on "app:ev[x>$H]" -- true
usage|record --sb-size "$H" -- true
usage|record --sb-count "$H" -- true
usage|record --mode "$H" -- true
usage|record --channel "$H" -- true
usage|record --channel "c$H:64K:4:discard" -- true
ok|record --events "$H" -o "$T/o1" -- "$WL" --threads 1 --events 1
usage|record --flush-period "$H" -- true
usage|record --live-period "$H" -- true
usage|record --watermark "$H" -- true
usage|record --block-timeout "$H" -- true
fail|record --session "$T/no$H/s" -o "$T/o2" -- true
fail|record --shm-dir "$T/no$H" -o "$T/o3" -- true
fail|record --attach "$H" -o "$T/o4"
usage|record --relay "$H" -- true
fail|record --relay "net://$H" -- true
usage|record --session-name "$H/" --relay net://127.0.0.1:1 -- true
usage|record --hostname "$H/" --relay net://127.0.0.1:1 -- true
usage|record --live-timer "$H" -- true
usage|record --relay-timeout "$H" -- true
any|record --kernel="$H" -o "$T/o5" -- true #NAMES -
usage|record --kernel-pages "$H" -- true
ok|record -q --mode overwrite --snapshot-dir "$T/snap$H" -- true #NAMES -
ok|record --mode overwrite --snapshot-dir "$T/snap2$H" -- true
usage|record --after "$H" -- true
usage|record --min-interval "$H" -- true
usage|record --scan-period "$H" -- true
usage|record --max-snapshots "$H" -- true
usage|record --max-size "$H" -- true
usage|record --snapshot-on-signal "$H" -- true
ok|record -o "$T/out$H" -- true
fail|record -o "$D" -- true
fail|record -o "$T/o6" -- "$H"
fail|record -o "$T/o7" -- "$T/no/$H"
any|record -o "$T/o8" -- "$T/prog$H" --threads 1 --events 0 #NAMES progx\x1b]0;PWN\x07\x1b[
usage|record "--$H" -- true
usage|record $'-\e' -- true #NAMES -\x1b
usage|record $'-\x9b' -- true #NAMES -\x9b
usage|record "--vtid=$H" -- true #NAMES -
usage|record -o #NAMES '-o' needs a value
usage|record --pid 1 -- "$H"
usage|record --attach x -o "$T/o9" -- "$H"
# profile
usage|profile -F "$H" -- true
usage|profile --unwind "$H" -- true
usage|profile --depth "$H" -- true
usage|profile --mode "$H" -- true
prof-usage|profile --channel "$H" -- true
usage|profile --attach "$H" -- true
prof-usage|profile --sb-size "$H" -- true
usage|profile "--$H" -- true
prof-fail|profile -o "$T/p1" -- "$T/no/$H"
prof-ok|profile -o "$T/prof$H" -- "$T/prog$H" --threads 1 --events 10
# snapshot, recover
fail|snapshot "$T/no/$H" -o "$T/o10"
ok|snapshot "$S" -o "$T/snapout$H"
fail|snapshot "$S" -o "$D"
usage|snapshot "--$H"
fail|recover "$T/no/$H" -o "$T/o11"
any|recover "$S" -o "$T/recout$H"
usage|recover "--$H"
# snapshots
fail|snapshots "$T/no/$H"
ok|snapshots "$T/empty$H"
ok|snapshots "$T/snap2$H" #NAMES -
usage|snapshots "--$H"
# dump
fail|dump "$T/no/$H"
ok|dump "$D" #NAMES -
usage|dump --format "$H" "$D"
fail|dump --event "$H" "$D"
usage|dump --cpu "$H" "$D"
usage|dump --tid "$H" "$D"
usage|dump --from "$H" "$D"
usage|dump --to "$H" "$D"
usage|dump --follow "$T/no/$H"
ok|dump --follow "$D" #NAMES -
usage|dump "--$H" "$D"
usage|dump "--$H=1" "$D"
usage|dump $'-\e' "$D" #NAMES -\x1b
usage|dump --format=json $'-\eq' "$D" #NAMES unknown option '-\x1b'
usage|dump --thread-records="$H" "$D" #NAMES -
# report
fail|report "$T/no/$H"
ok|report "$D"
ok|report --format json "$D" #NAMES \u001b]0;PWN\u0007\u001b[2J\r\u007f\u009b\ufffd
usage|report --format "$H" "$D"
usage|report --threads "$H" "$D"
usage|report --ranges "$H" "$D"
usage|report --follow --interval "$H" "$D"
ok|report --html -o "$T/page$H.html" "$D"
fail|report --html -o "$T/no/$H.html" "$D"
usage|report --html -o "$D/chan_0" "$D"
usage|report --html --html-events "$H" -o "$T/p.html" "$D"
usage|report -o "$H" "$D" #NAMES -
prof-usage|report --profile --top "$H" "$T/prof$H"
prof-usage|report --profile --threads="$H" "$T/prof$H"
prof-ok|report --profile "$T/prof$H"
fail|report --profile "$D"
usage|report "--$H" "$D"
# convert
fail|convert "$T/no/$H" --to chrome -o "$T/c.json"
ok|convert "$D" --to chrome -o "$T/c$H.json"
ok|convert "$D" --to perfetto -o "$T/p$H.pftrace"
prof-ok|convert "$T/prof$H" --to folded -o "$T/f$H.txt"
prof-ok|convert "$T/prof$H" --to speedscope -o "$T/s$H.json"
fail|convert "$D" --to chrome -o "$T/no/$H.json"
usage|convert "$D" --to chrome -o "$D/metadata"
usage|convert "$D" --to "$H" -o "$T/c.json"
usage|convert "$D" --to chrome --begin "$H" -o "$T/c.json"
usage|convert "$D" --to chrome --end "$H" -o "$T/c.json"
usage|convert "$D" --to chrome --max-events "$H" -o "$T/c.json"
usage|convert "--$H" "$D"
# stat, list, enable, disable
fail|stat "$T/no/$H"
ok|stat "$S"
usage|stat "--$H" "$S"
fail|list "$T/no/$H"
ok|list "$D" #NAMES -
ok|list --fields "$T/prog$H" #NAMES -
ok|list "$S" #NAMES -
usage|list "--$H" "$S"
fail|enable "$T/no/$H" "x"
ok|enable "$S" "$H"
ok|disable "$S" "$H"
fail|enable "$S" "a,$H"
fail|disable --channel "$H" "$S" x
usage|enable "--$H" "$S" x
usage|disable "--channel=$H" #NAMES -
EOF
[ $bad = 0 ] || fail "$bad of $n commands"
# the files written from a trace with that name say it by the rules of their formats (the page's
# title was the trace's name raw before)
$CHK html "$T/page$H.html" || fail "report --html: the page"
$CHK json "$T/c$H.json" || fail "convert --to chrome"
if [ $sampler = 1 ]; then
	$CHK json "$T/s$H.json" || fail "convert --to speedscope"
	$CHK text "$T/f$H.txt" || fail "convert --to folded"
fi
if command -v protoc > /dev/null && [ -d "$TB_SRC/tests/perfetto/protos" ]; then
	$CHK protobuf "$TB_SRC/tests/perfetto" "$T/p$H.pftrace" || fail "convert --to perfetto"
fi
[ $n -gt 100 ] || fail "only $n commands ran"
touch "$T/go"
wait $rec || { cat "$T/live.err"; fail "the live session's record exited $?"; }
grep -qF "session $T/shm/sess$E " "$T/live.err" || { cat -v "$T/live.err"; fail "record does not name its session escaped"; }
$CHK text "$T/live.out" "$T/live.err" || fail "record of the live session: raw control characters"

# the caret of a refused condition stays under the character it points at, in the escaped text
"$CLI" record --snapshot-on "app:ev[s==\"$H\"] junk" -- true 2> "$T/err"
[ $? = 2 ] || fail "a condition with text after its ']' was taken"
$CHK text "$T/err" || fail "--snapshot-on: raw control characters"
cond=$(sed -n 2p "$T/err")
caret=$(sed -n 3p "$T/err")
[ "$cond" = "  app:ev[s==\"$E\"] junk" ] || { cat "$T/err"; fail "the condition line is not the escaped condition"; }
hb=$(printf %s "$H" | wc -c) # 'app:ev[s=="' H '"] ' then 'junk': byte hb + 15, counted from 1
grep -qF "at position $((hb + 15)): unexpected text after ']'" "$T/err" || { cat "$T/err"; fail "the position (in the bytes given) is not said"; }
col=$((${#caret} - 1))
[ "${caret:$col}" = "^" ] || fail "no caret line: $caret"
[ "${cond:$col:4}" = "junk" ] || { cat "$T/err"; fail "the caret is at column $col, under '${cond:$col:1}', not under 'junk'"; }
echo "PASS: $n commands, no raw control character, every value named escaped"
