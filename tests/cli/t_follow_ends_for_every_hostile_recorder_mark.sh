# SPDX-License-Identifier: MIT
# t_follow_ends_for_every_hostile_recorder_mark.sh - `dump --follow` and `report --follow` end, say
# why on stderr and print what the trace holds, whatever DIR/.tracebuf-recorder is: every file of
# the marker corpus (tests/fuzz/corpus/marker/: garbage, empty, "0 0", "-1 5", "1 0" naming a live
# unrelated pid, "4294967297", strict-format lines with one field wrong, ...), a directory, a FIFO
# (which must not block the open), a symbolic link, a well-formed mark that no process holds the
# lock of (a copy of a live recording, made while its recorder, same pid and start time, still
# runs: the "trace copied to a machine where the pid is in use" case), and a well-formed mark whose
# lock is held by a process that is not the one the mark names (start time or boot differ), and
# such a copy taken before any packet was written (every stream file empty: nothing readable,
# and still said to be nobody's: the flake of 2026-11-28, a copy made at that moment).  Each
# run has a deadline (timeout 120 s, far above what it needs); a run that hits it fails the test.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'touch "$T/stop" "$T/unlock"; kill -9 $(jobs -p) 2> /dev/null; wait 2> /dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
CORPUS=${TB_SRC:?}/tests/fuzz/corpus/marker
command -v timeout > /dev/null || { echo "SKIP: no timeout(1)"; exit 77; }

"$CLI" record -q -o "$T/base" -- "$WL" --threads 2 --events 2000 > /dev/null 2>&1 || fail "record"
"$CLI" dump "$T/base" > "$T/base.txt" || fail "dump"
[ -s "$T/base.txt" ] || fail "empty trace"

# follow DIR WANT_RC PATTERN: both followers end before the deadline with WANT_RC, print the
# events (dump: exactly a plain dump's; report: the final report) and say PATTERN on stderr
follow() {
	local dir=$1 want=$2 pat=$3 rc
	timeout 120 "$CLI" dump --follow "$dir" > "$T/f.txt" 2> "$T/f.err" < /dev/null
	rc=$?
	[ $rc != 124 ] || fail "$dir: dump --follow did not end (deadline)"
	[ $rc = "$want" ] || { cat "$T/f.err"; fail "$dir: dump --follow exit $rc, want $want"; }
	grep -q -- "$pat" "$T/f.err" || { cat "$T/f.err"; fail "$dir: dump --follow does not say '$pat'"; }
	cmp -s "$T/f.txt" "$T/base.txt" || fail "$dir: dump --follow did not print the trace's events"
	timeout 120 "$CLI" report --follow --interval 10ms "$dir" > "$T/r.txt" 2> "$T/r.err" < /dev/null
	rc=$?
	[ $rc != 124 ] || fail "$dir: report --follow did not end (deadline)"
	[ $rc = "$want" ] || { cat "$T/r.err"; fail "$dir: report --follow exit $rc, want $want"; }
	grep -q -- "$pat" "$T/r.err" || { cat "$T/r.err"; fail "$dir: report --follow does not say '$pat'"; }
	grep -q '^== final' "$T/r.txt" || fail "$dir: report --follow printed no final report"
	grep -q 'workload:tick' "$T/r.txt" || fail "$dir: report --follow did not report the events"
}
# copy DIR: a fresh copy of the finished trace, without any mark
copy() { rm -rf "$T/$1"; cp -r "$T/base" "$T/$1"; }

n=0
for m in "$CORPUS"/*; do
	copy c
	cp "$m" "$T/c/.tracebuf-recorder"
	follow "$T/c" 3 "is there, as a finished trace"
	echo "ok: corpus $(basename "$m")"
	n=$((n + 1))
done
[ $n -ge 10 ] || fail "the marker corpus has $n files"

copy c; mkdir "$T/c/.tracebuf-recorder"
follow "$T/c" 3 "not a regular file (a directory)"; echo "ok: a directory"
copy c; mkfifo "$T/c/.tracebuf-recorder"
follow "$T/c" 3 "not a regular file (a FIFO)"; echo "ok: a FIFO (nobody writes it)"
copy c; ln -s /etc/hostname "$T/c/.tracebuf-recorder"
follow "$T/c" 3 "cannot open it"; echo "ok: a symbolic link"

boot=$(cat /proc/sys/kernel/random/boot_id)
start_of() { sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20; }
# mark PID START BOOT: a well-formed mark
mark() { printf 'tracebuf-recorder 2 pid=%10d start=%20s boot=%-36s progress=%020d\n' "$1" "$2" "$3" 0; }

echo "== a well-formed mark naming a live process (pid 1) that holds no lock on it"
copy c; mark 1 "$(start_of 1)" "$boot" > "$T/c/.tracebuf-recorder"
follow "$T/c" 1 "no process holds its lock"; echo "ok"

echo "== a copy taken before any packet was written (its stream files empty), its mark's lock not held"
# nothing is readable, and the followers still say that nobody writes it (a copy of a live
# recording, below, can be taken at that moment: the recorder creates its files before the
# first packet)
copy c; mark 1 "$(start_of 1)" "$boot" > "$T/c/.tracebuf-recorder"
for f in "$T"/c/chan_*; do : > "$f"; done
timeout 120 "$CLI" dump --follow "$T/c" > /dev/null 2> "$T/e.err" < /dev/null
rc=$?
[ $rc = 1 ] || { cat "$T/e.err"; fail "dump --follow of an empty copy: exit $rc, want 1"; }
grep -q "no process holds its lock" "$T/e.err" || { cat "$T/e.err"; fail "dump --follow of an empty copy does not say why"; }
timeout 120 "$CLI" report --follow --interval 10ms "$T/c" > /dev/null 2> "$T/e.err" < /dev/null
rc=$?
[ $rc = 1 ] || { cat "$T/e.err"; fail "report --follow of an empty copy: exit $rc, want 1"; }
grep -q "no process holds its lock" "$T/e.err" || { cat "$T/e.err"; fail "report --follow of an empty copy does not say why"; }
echo "ok"

echo "== a live recording copied elsewhere: the copy's recorder pid is alive, the copy is not written"
"$CLI" record -q -o "$T/live" -- "$WL" --threads 1 --events 100000000 --sleep-us 2000 --until-file "$T/stop" \
	> /dev/null 2>&1 &
wait_for test -s "$T/live/.tracebuf-recorder" || fail "the recorder did not mark its directory"
wait_for test -s "$T/live/metadata" || fail "no metadata"
rm -rf "$T/cp"; cp -r "$T/live" "$T/cp"
timeout 120 "$CLI" dump --follow "$T/cp" > "$T/cp.txt" 2> "$T/cp.err" < /dev/null
rc=$?
[ $rc != 124 ] || fail "dump --follow of a copy did not end"
[ $rc = 1 ] || { cat "$T/cp.err"; fail "dump --follow of a copy: exit $rc, want 1"; }
grep -q "no process holds its lock" "$T/cp.err" || { cat "$T/cp.err"; fail "the copy's follower does not say why"; }
touch "$T/stop"
echo "ok"

echo "== a held lock is not enough: the mark must name the holder's process and this boot"
copy c
# the lock is held by flock(1) and its child until $T/unlock exists
holder() { flock -x "$T/c/.tracebuf-recorder" sh -c "while [ ! -e '$T/unlock' ]; do sleep 0.05; done" & }
rm -f "$T/unlock"; mark $$ 12345 "$boot" > "$T/c/.tracebuf-recorder"; holder
wait_for sh -c "! flock -n -s '$T/c/.tracebuf-recorder' true" || fail "flock(1) did not take the lock"
follow "$T/c" 1 "start time differs"; echo "ok: start time"
touch "$T/unlock"; wait
rm -f "$T/unlock"; mark $$ "$(start_of $$)" "00000000-0000-0000-0000-000000000000" > "$T/c/.tracebuf-recorder"; holder
wait_for sh -c "! flock -n -s '$T/c/.tracebuf-recorder' true" || fail "flock(1) did not take the lock"
follow "$T/c" 1 "another machine"; echo "ok: boot"
touch "$T/unlock"; wait
echo "PASS"
