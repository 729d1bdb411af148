# SPDX-License-Identifier: MIT
# t_guide_walkthrough.sh - docs/GUIDE.md's commands work as written: its `file` blocks are
# written out, its `run` blocks run in order (bash -e, each block's commands must succeed) in a
# private directory, with `build` being this build tree and PREFIX a private install prefix.
# Then a few facts the guide states are checked on what the commands made.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
command -v pkg-config > /dev/null || { echo "SKIP: pkg-config not installed"; exit 77; }
if grep -q "^TB_SANITIZE:STRING=." "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null; then
	echo "SKIP: a sanitizer build: the guide's program, linked against it, would need the sanitizer runtime"
	exit 77
fi
command -v cc > /dev/null || { echo "SKIP: no C compiler"; exit 77; }
command -v c++ > /dev/null || { echo "SKIP: no C++ compiler (the guide's C++ part)"; exit 77; }
command -v babeltrace2 > /dev/null || { echo "SKIP: no babeltrace2 (the guide shows it)"; exit 77; }
# the guide's Python part needs babeltrace2's bindings: the python3 that has them goes first in PATH
# (a pyenv or venv python3 earlier in PATH usually does not)
PYBT=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import bt2' 2> /dev/null; then PYBT=$(command -v "$p"); break; fi
done
[ -n "$PYBT" ] || { echo "SKIP: no python3 with the bt2 module (python3-bt2; the guide's Python part)"; exit 77; }
PYDIR=$(mktemp -d "$T/pybin-XXXX")
ln -s "$PYBT" "$PYDIR/python3"
GUIDE=${TB_SRC:?}/docs/GUIDE.md
W=$T/work
mkdir -p "$W" "$T/home"
ln -s "${TB_BUILD:?}" "$W/build"
"${PY:-python3}" - "$GUIDE" "$W" > "$W/guide.sh" <<'PYEOF' || fail "cannot extract the guide's blocks"
import re, sys, os
text = open(sys.argv[1]).read().split("\n")
out = ["set -e"]
i = 0
while i < len(text):
    m = re.match(r"<!-- (run|file: (\S+)) -->$", text[i])
    if m:
        i += 1
        assert text[i].startswith("```"), "a marker must precede a fenced block (line %d)" % i
        j = i + 1
        while not text[j].startswith("```"):
            j += 1
        body = text[i + 1:j]
        if m.group(1) == "run":
            out.append("echo '### guide block at line %d'" % (i + 1))
            out.extend(body)
        else:
            open(os.path.join(sys.argv[2], m.group(2)), "w").write("\n".join(body) + "\n")
        i = j
    i += 1
print("\n".join(out))
PYEOF
[ -s "$W/app.c" ] || fail "the guide's app.c was not extracted"
cd "$W" || fail "cd $W"
PATH=$PYDIR:$PATH HOME=$T/home PREFIX=$T/prefix timeout 600 env -u LD_LIBRARY_PATH bash "$W/guide.sh" > "$T/guide.out" 2>&1
rc=$?
cat "$T/guide.out"
[ $rc -eq 0 ] || fail "a command of docs/GUIDE.md failed (exit $rc; output above)"
# what the guide says happened
grep -q "served 4000 requests" "$T/guide.out" || fail "the program did not serve its requests"
n=$("$CLI" dump "$W/trace" | grep -c "app:done")
[ "$n" -eq 4000 ] || fail "$n app:done events in the recorded trace, want 4000"
[ -s "$W/trace.html" ] && [ -s "$W/trace.pftrace" ] || fail "the pictures were not written"
[ -s "$W/prof.speedscope.json" ] || fail "the profile was not converted"
"$CLI" report --profile "$W/prof" | grep -q "^profile  *[1-9][0-9,]* samples" ||
	fail "the guide's profile has no samples"
"$CLI" dump "$W/snap" | grep -q "app:" || fail "the snapshot holds no app events"
for w in 0 1 2; do
	# 1,000 work:item + its tracebuf:thread_name event (report counts every event of the trace, as babeltrace2 does)
	grep -Eq " 1,001 +[0-9,.]+ +worker-$w\$" "$T/guide.out" || fail "the report does not name worker-$w with its 1,001 events"
done
grep -q 'tracebuf:thread_name: .*name = "worker-' "$T/guide.out" || fail "babeltrace2 does not show the thread names"
grep -Eq 'work:item: .*\{ vtid = [0-9]+ \}, \{ worker = [0-2], n = [0-9]+ \}' "$T/guide.out" ||
	fail "babeltrace2 does not show the vtid of each work:item (record --vtid)"
# the vtid is the writing thread's: the one its thread_name record names worker-<w>
babeltrace2 "$W/threads-vtid" > "$T/bt-vtid" || fail "babeltrace2 of the vtid trace"
"${PY:-python3}" - "$T/bt-vtid" <<'PYEOF' || fail "a work:item's vtid is not its worker's thread"
import re, sys
names, bad, n = {}, 0, 0
for line in open(sys.argv[1]):
    m = re.search(r'tracebuf:thread_name: .*\{ vtid = (\d+) \}, \{ tid = (\d+), name = "([^"]*)"', line)
    if m:
        names[m.group(2)] = m.group(3)
    m = re.search(r'work:item: .*\{ vtid = (\d+) \}, \{ worker = (\d+), n = \d+ \}', line)
    if m:
        n += 1
        bad += names.get(m.group(1)) != "worker-" + m.group(2)
sys.exit(1 if bad or n != 3000 else 0)
PYEOF
# the new messages the guide shows (issue 26)
grep -q "the trace holds no event: ls is not linked with libtracebuf (no DT_NEEDED entry for libtracebuf.so.0" "$T/guide.out" ||
	fail "record of ls does not say why the trace is empty"
grep -q "tracebuf convert: warning: trace.json will be about .* (Chrome JSON is ~6.0x the trace's .*); for a trace this size --to perfetto writes" "$T/guide.out" ||
	fail "convert does not announce a big output"
[ -z "${LD_LIBRARY_PATH:-}" ] || echo "note: LD_LIBRARY_PATH is set in this test's environment: the rpath is checked by t_install_is_usable"
grep -q "self:step: { i = 999, ratio = 0.999, even = false }" "$T/guide.out" || fail "the embedded recorder's last event"
grep -q "'app:done': 4000" "$T/guide.out" || fail "the bt2 Python example's count"
grep -q "^4000 requests, 2000 not found" "$T/guide.out" || fail "the JSON Python example's count"
# spans (section 2, C++17): every begin/end pair one span, nested ones too, an exception ending both
grep -q "tracebuf convert: 780 events -> spans.json: 390 spans, 0 instants" "$T/guide.out" ||
	fail "the C++ spans example is not converted to its 390 spans"
# dump --follow (section 5): it printed the program's events while the program waited for input,
# and ends with exactly what a dump of the finished trace prints
"$CLI" dump "$W/follow" --event 'app:done' > "$T/follow.dump" || fail "dump of the followed trace"
cmp -s "$T/follow.dump" "$W/followed.txt" || fail "dump --follow's output is not the finished trace's dump"
[ "$(wc -l < "$W/followed.txt")" -eq 3 ] || fail "dump --follow did not print the 3 requests given"
# the flight recorder (section 6): tb_trigger() made one snapshot, listed, reported, dumped by its directory
grep -Eq "^1 +[0-9T:.-]+Z +program +big_request " "$T/guide.out" || fail "snapshots does not list the big_request snapshot"
grep -q "^Snapshot 1: program trigger 'big_request'" "$T/guide.out" || fail "report of a snapshot does not say its trigger"
grep -q 'app:request: { id = 2998, path = "/page/1500", bytes = 150000 }' "$T/guide.out" ||
	fail "dump of a snapshot's directory does not show the request that triggered it"
[ "$(find "$W/snaps" -mindepth 1 -maxdepth 1 -name '0*' | wc -l)" -eq 1 ] || fail "not exactly one snapshot in snaps/"
# dump and convert of a snapshots directory (not a trace) say which to take; dump --follow of a
# directory not made yet says so (both were 'cannot open ...: No such file or directory')
"$CLI" dump "$W/snaps" > /dev/null 2> "$T/snaps.err" && fail "dump of a snapshots directory succeeded"
grep -q "snaps is a flight recorder's snapshots directory, not a trace: \`tracebuf snapshots .*snaps\` lists them" "$T/snaps.err" ||
	fail "dump of a snapshots directory does not say what it is: $(cat "$T/snaps.err")"
"$CLI" convert "$W/snaps" --to chrome -o "$T/x.json" 2> "$T/snaps.err" && fail "convert of a snapshots directory succeeded"
grep -q "snapshots directory, not a trace" "$T/snaps.err" || fail "convert of a snapshots directory: $(cat "$T/snaps.err")"
"$CLI" dump --follow "$T/not-yet" 2> "$T/nf.err" && fail "dump --follow of a missing directory succeeded"
grep -q "no such directory (yet): dump --follow reads a trace that tracebuf record -o .*not-yet has created" "$T/nf.err" ||
	fail "dump --follow of a missing directory: $(cat "$T/nf.err")"
# a bare number as a duration is milliseconds: the refusal says so
"$CLI" record --live-period 5 -o "$T/lp" -- true 2> "$T/lp.err" && fail "--live-period 5 (5 ms) accepted"
grep -q "a bare number is ms" "$T/lp.err" || fail "--live-period 5's refusal does not say a bare number is ms: $(cat "$T/lp.err")"
echo PASS
