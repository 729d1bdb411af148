# SPDX-License-Identifier: MIT
# t_long_reads_show_progress_and_warn_big_outputs.sh - the readers of whole traces (dump,
# convert to each format, report, report --html, report --profile) draw a progress line on stderr
# when it is a terminal (here a pty; TRACEBUF_PROGRESS_DELAY=0 draws it at once instead of after
# 1 s: no timing in the verdict), never when it is not, --progress / --no-progress force either
# way, dump keeps a terminal that shows its lines free of it; and convert announces an output
# larger than TRACEBUF_BIG_OUTPUT (1G; set low here) before writing it, with its estimated size,
# near the real one, and the better format (issue 26, item 4).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 not installed (the pty)"; exit 77; }
export TRACEBUF_PROGRESS_DELAY=0
unset TRACEBUF_PROGRESS TRACEBUF_BIG_OUTPUT
# on_pty OUT CMD...: run CMD with stdin, stdout and stderr on a new pty; everything it wrote to OUT
on_pty() {
	local out=$1; shift
	python3 - "$out" "$@" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
data = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    data += b
_, st = os.waitpid(pid, 0)
open(sys.argv[1], "wb").write(data)
sys.exit(os.waitstatus_to_exitcode(st))
PY
}
METER='% of the trace read'

"$CLI" record -q -o "$T/t" -- "$WL" --threads 2 --events 40000 > /dev/null || fail "record"
# the profile readers: not in a sanitizer build (its sampler library, preloaded into the
# workload, would need the sanitizer's runtime first: the profile tier says the same)
prof=
if ! grep -q "^TB_SANITIZE:STRING=." "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null; then
	"$CLI" profile -q -o "$T/p" -- "$WL" --events 200000 > /dev/null || fail "profile"
	prof=1
else
	echo "(a sanitizer build: the profile readers' progress lines are not checked)"
fi

for c in "convert $T/t --to chrome -o $T/o.json" "convert $T/t --to perfetto -o $T/o.pftrace" \
	${prof:+"convert $T/p --to speedscope -o $T/o.ss.json" "convert $T/p --to folded -o $T/o.folded"} \
	"report $T/t" "report --html -o $T/o.html $T/t" ${prof:+"report --profile $T/p"}; do
	# shellcheck disable=SC2086 # the words of $c
	on_pty "$T/pty.out" "$CLI" $c || { cat "$T/pty.out"; fail "$c on a pty"; }
	grep -q "$METER" "$T/pty.out" || { cat "$T/pty.out"; fail "$c on a terminal: no progress line"; }
	grep -q "$(printf '\r')" "$T/pty.out" || fail "$c: the progress line is not redrawn in place"
	# shellcheck disable=SC2086
	"$CLI" $c > /dev/null 2> "$T/pipe.err" || fail "$c"
	grep -q "$METER" "$T/pipe.err" && fail "$c, stderr not a terminal: a progress line"
	# shellcheck disable=SC2086
	on_pty "$T/pty.out" "$CLI" $c --no-progress || fail "$c --no-progress"
	grep -q "$METER" "$T/pty.out" && fail "$c --no-progress: a progress line"
	# shellcheck disable=SC2086
	"$CLI" $c --progress > /dev/null 2> "$T/pipe.err" || fail "$c --progress"
	grep -q "$METER" "$T/pipe.err" || fail "$c --progress, not a terminal: no progress line"
done
# dump: to a file, the terminal gets the meter; to the terminal itself, only the lines
on_pty "$T/pty.out" sh -c "'$CLI' dump '$T/t' > '$T/d.txt'" || fail "dump > file on a pty"
grep -q "$METER" "$T/pty.out" || { cat "$T/pty.out"; fail "dump to a file: no progress line on the terminal"; }
[ "$(wc -l < "$T/d.txt")" -ge 80000 ] || fail "dump's lines"
grep -q "$METER" "$T/d.txt" && fail "the meter went into dump's output"
on_pty "$T/pty.out" "$CLI" dump "$T/t" || fail "dump on a pty"
grep -q "$METER" "$T/pty.out" && fail "dump to a terminal: the meter cuts its lines"
TRACEBUF_PROGRESS=0 "$CLI" dump "$T/t" --progress > /dev/null 2> "$T/pipe.err"
grep -q "$METER" "$T/pipe.err" || fail "--progress does not win over TRACEBUF_PROGRESS=0"

# the big-output warning: before the file, with an estimate near the real size
"$CLI" convert "$T/t" --to chrome -o "$T/c.json" 2> "$T/c.err" || fail "convert"
grep -q 'warning' "$T/c.err" && { cat "$T/c.err"; fail "a small output announced as big"; }
TRACEBUF_BIG_OUTPUT=100K "$CLI" convert "$T/t" --to chrome -o "$T/c.json" 2> "$T/c.err" || fail "convert chrome"
head -1 "$T/c.err" | grep -q "warning: $T/c.json will be about .* MB (Chrome JSON is ~6.0x the trace's .*); for a trace this size --to perfetto writes" ||
	{ cat "$T/c.err"; fail "no big-output warning before writing (first line)"; }
est=$(sed -n 's/.*will be about \([0-9.]*\) MB.*/\1/p' "$T/c.err" | head -1)
real=$(stat -c %s "$T/c.json")
python3 -c "import sys; e=float(sys.argv[1])*1e6; r=int(sys.argv[2]); sys.exit(0 if r/2 <= e <= r*2 else 1)" "$est" "$real" ||
	fail "estimated $est MB, wrote $real bytes: not within 2x"
TRACEBUF_BIG_OUTPUT=100K "$CLI" convert "$T/t" --to perfetto -o "$T/c.pf" 2> "$T/c.err" || fail "convert perfetto"
grep -q "warning: $T/c.pf will be about" "$T/c.err" || { cat "$T/c.err"; fail "perfetto: no big-output warning"; }
grep -q 'for a trace this size' "$T/c.err" && fail "perfetto: a better format than itself"
TRACEBUF_BIG_OUTPUT=100K "$CLI" convert -q "$T/t" --to chrome -o "$T/c.json" 2> "$T/c.err" || fail "convert -q"
[ ! -s "$T/c.err" ] || fail "-q: the warning is printed"
TRACEBUF_BIG_OUTPUT=100K "$CLI" convert "$T/t" --to chrome --max-events 10 -o "$T/c.json" 2> "$T/c.err" || fail "convert --max-events"
grep -q 'warning' "$T/c.err" && fail "--max-events 10: the part written is not big"
echo PASS
