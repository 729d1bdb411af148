# SPDX-License-Identifier: MIT
# t_record_errors.sh - each refusal of `tracebuf record` is a clear message and a non-zero
# exit, and leaves nothing behind (no trace directory, no session file); a full disk stops the
# recording cleanly with a trace that is still valid (whole packets only).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

# expect RC PATTERN -- record args: exit code RC and PATTERN in the message
expect() {
	local want=$1 pat=$2; shift 3
	"$CLI" record "$@" > "$T/out" 2> "$T/err"; local rc=$?
	[ $rc -eq "$want" ] || { cat "$T/err"; fail "record $*: exit $rc, want $want"; }
	grep -q -i -- "$pat" "$T/err" || { cat "$T/err"; fail "record $*: message lacks '$pat'"; }
	[ -z "$(ls -A "$T/shm")" ] || fail "record $*: left a session file"
	echo "ok: $(head -1 "$T/err")"
}

expect 1 "command not found" -- -o "$T/d1" -- no-such-command-tb
[ ! -e "$T/d1" ] || fail "a missing command created the output directory"
touch "$T/noexec"; chmod 644 "$T/noexec"
expect 1 "not executable" -- -o "$T/d2" -- "$T/noexec"
[ ! -e "$T/d2" ] || fail "a non-executable command created the output directory"
mkdir "$T/full"; touch "$T/full/x"
expect 1 "not empty" -- -o "$T/full" -- true
touch "$T/file"
expect 1 "not a directory" -- -o "$T/file" -- true
if [ "$(id -u)" = 0 ]; then
	# root writes anywhere: use a place nobody may create directories in
	expect 1 "cannot create" -- -o /proc/self/tb-no-such/d -- true
else
	mkdir -m 555 "$T/ro"
	expect 1 "cannot create\|not writable" -- -o "$T/ro/d" -- true
fi
expect 2 "not a size" -- --sb-size abc -o "$T/d3" -- true
expect 2 "power of two" -- --sb-size 3000 -o "$T/d3" -- true
[ ! -e "$T/d3" ] || fail "invalid sizes left the output directory"
expect 2 "mode" -- --mode sometimes -o "$T/d3" -- true
expect 2 "no output" -- --attach "$T/no-session"   # (a command without -o: a default trace-*)

# shared memory too small: ask for a little more than the directory has free
free_mib=$(df -Pm "$T/shm" | awk 'NR==2{print $4}')
ncpu=$(getconf _NPROCESSORS_CONF)
count=1; while [ $((count * 256 * ncpu)) -le "$free_mib" ]; do count=$((count * 2)); done
if [ $((count * 256 * ncpu)) -lt 1000000 ] && [ "$count" -le 4096 ]; then
	expect 1 "free\|need" -- --sb-size 256M --sb-count $count -o "$T/d4" -- true
	[ ! -e "$T/d4" ] || fail "ENOSPC left the output directory"
else
	echo "skip: $T/shm too large to exhaust"
fi

# a session file that is not one, and one of another user
echo "not a session" > "$T/junk.tb"
expect 1 "too small\|not a tracebuf" -- --attach "$T/junk.tb" -o "$T/d5"
# a session that lives until this test says so (not for a fixed time: a loaded machine once
# let `sleep 2` end before the second consumer below was refused)
"$CLI" record -q --session "$T/shm/live.tb" -o "$T/d6" -- \
	bash -c "while [ ! -e '$T/stop' ]; do sleep 0.05; done" &
rp=$!
trap 'touch "$T/stop"; kill $rp 2>/dev/null; wait; rm -rf "$T"' EXIT
for i in $(seq 1200); do "$CLI" stat "$T/shm/live.tb" > /dev/null 2>&1 && break; sleep 0.05; done
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	cp "$T/shm/live.tb" "$T/other.tb"; chown nobody "$T/other.tb"
	"$CLI" record --attach "$T/other.tb" -o "$T/d7" 2> "$T/err"; rc=$?
	[ $rc -ne 0 ] || fail "attached to another user's session"
	echo "ok: $(head -1 "$T/err")"
	rm -f "$T/other.tb"
fi
# a second consumer on a drained session is refused
"$CLI" record --attach "$T/shm/live.tb" -o "$T/d8" 2> "$T/err"; rc=$?
[ $rc -ne 0 ] && grep -q "already drained" "$T/err" || { cat "$T/err"; fail "second consumer not refused"; }
echo "ok: $(head -1 "$T/err")"
touch "$T/stop"
wait $rp || fail "record of the waiting command failed"

# disk full, simulated with a file size limit: the session file fits (sparse, 1.2-2.2 MiB: the
# registry's 256 entries of 4 KiB and the rings of 2 CPUs, or of 16 slots with the fallback
# protocol), the one stream file of a pinned thread (~25 MB: block mode with the longest wait,
# nothing is dropped however slow the recorder, under TSan or valgrind too) does not; record
# says so, exits non-zero, the trace holds whole packets only, and it still counts every event:
# the file cannot grow by the last packet that says what was lost, so its last data packet
# gives its place (the events written = delivered + discarded, as readers count them)
(ulimit -f 8192; "$CLI" record -q --mode block --block-timeout 10s --sb-size 16K --sb-count 4 -o "$T/df" -- \
	"$WL" --pin 0 --threads 1 --events 800000 > "$T/df.out" 2> "$T/err"); rc=$?
[ $rc -ne 0 ] || fail "disk full: record exited 0"
grep -q "File too large\|No space" "$T/err" || { cat "$T/err"; fail "disk full: no message"; }
echo "ok: $(head -1 "$T/err")"
grep -q "please report" "$T/err" && { cat "$T/err"; fail "disk full: the summary does not account for every event"; }
"$VERIFY" "$T/df" > "$T/df.v" || fail "disk full: the trace left is not valid"
w=$(sed -n 's/^written: //p' "$T/df.out")
d=$(sed -n 's/.*delivered=\([0-9]*\) discarded=\([0-9]*\).*/\1 \2/p' "$T/df.v")
[ -n "$w" ] && [ -n "$d" ] && [ $((${d% *} + ${d#* })) -eq "$w" ] ||
	{ cat "$T/df.v"; fail "disk full: delivered + discarded ($d) is not the $w events written"; }
if command -v babeltrace2 >/dev/null 2>&1; then
	babeltrace2 "$T/df" > /dev/null 2> "$T/bterr" || { head -3 "$T/bterr"; fail "disk full: babeltrace2 cannot read it"; }
fi
[ -z "$(ls -A "$T/shm")" ] || fail "left a session file: $(ls -A "$T/shm")"
echo PASS
