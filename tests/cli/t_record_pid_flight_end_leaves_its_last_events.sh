# SPDX-License-Identifier: MIT
# t_record_pid_flight_end_leaves_its_last_events.sh - a flight recorder attached with
# `record --pid PID --mode overwrite --snapshot-dir DIR` is not the program's parent (no
# waitpid): it sees the end through a pidfd and snapshots the rings, which outlive the program
# in shared memory (docs/FLIGHT-RECORDER.md, "A program that is already running").
#   - killed by SIGSEGV, its parent not reaping it yet (tests/lib/parent.py hold): one snapshot,
#     kind crash, SIGSEGV (read from /proc/PID/stat while a zombie), its pid; its last event is
#     the last one written; babeltrace2 finds every event written after the attach accounted for;
#     -o DIR beside it gets the trace at the end too;
#   - killed by SIGKILL (an OOM killer's, a watchdog's): the same, SIGKILL;
#   - killed by SIGSEGV with a parent that ignores SIGCHLD (the kernel reaps it at once: nobody
#     can learn how it ended): one snapshot, kind end, status_known false, its last events;
#     record says that how it ended is not known;
#   - --no-snapshot-on-crash: none; an exit 0 that the recorder could read: none; an exit 3 with
#     --snapshot-on-failure: one, kind exit, exit_status 3;
#   - a program whose main thread called pthread_exit() after the attach (its leader a zombie
#     in /proc while its other thread writes): the recorder goes on until that thread crashes,
#     then snapshots its last events (when a C compiler is here).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
. "$(dirname "$0")/../lib/flight.sh"
TB_LIB=$(cd "$(dirname "$0")/../lib" && pwd)
need_bt2
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed"; exit 77; }
trap 'for i in 1 2 3 4 5 6 7; do touch "$T/crash$i"; "$T/go$i" "$T/rel$i"; done 2>/dev/null; kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT

started() { grep -q '^pid: ' "$1"; }
K=3000

# run N MODE RECORD_OPTS... -- WRITER_OPTS...: the writer under parent.py MODE, record --pid
# attached to it before its first event; sets wpid; leaves $T/wN.out, $T/rN.err, record's status rrc
run() {
	local n=$1 mode=$2 ropts=() wopts=()
	shift 2
	while [ "$1" != -- ]; do ropts+=("$1"); shift; done
	shift
	wopts=("$@")
	env -u TRACEBUF_SESSION "$PY" "$TB_LIB/parent.py" $mode "$T/rel$n" \
		"$FW" --no-wait --start "$T/go$n" "${wopts[@]}" > "$T/w$n.out" 2> "$T/w$n.err" &
	local p=$!
	wait_for started "$T/w$n.out" || fail "writer $n did not start"
	wpid=$(sed -n 's/^pid: //p' "$T/w$n.out")
	"$CLI" record --pid $wpid --mode overwrite --sb-size 16K --sb-count 64 "${ropts[@]}" 2> "$T/r$n.err" &
	local r=$!
	wait_for said_or_ended "recording process $wpid" "$T/r$n.err" $r
	grep -q "recording process $wpid" "$T/r$n.err" || { cat "$T/r$n.err"; fail "record --pid ($n) did not start"; }
	touch "$T/go$n"
	wait $r; rrc=$?
	touch "$T/rel$n"
	wait $p
}

# crash_snapshot DIR KIND SIGNAL: one snapshot of that kind (and signal), the writer's pid, its
# last event the last written, every event after the attach accounted for
crash_snapshot() {
	mapfile -t snaps < <(snapshots "$1")
	[ ${#snaps[@]} -eq 1 ] || { ls "$1"; cat "$T/r.err"; fail "${#snaps[@]} snapshots after the end (want 1)"; }
	local j=${snaps[0]}/trigger.json
	[ "$(json_field "$j" '["trigger"]["kind"]')" = "$2" ] || { cat "$j"; fail "kind is not $2"; }
	if [ -n "$3" ]; then
		[ "$(json_field "$j" '["trigger"]["signal"]')" = "$3" ] || { cat "$j"; fail "the signal is not $3"; }
	else
		[ "$(json_field "$j" '["trigger"]["status_known"]')" = False ] || { cat "$j"; fail "status_known is not false"; }
		! grep -q '"signal"' "$j" || { cat "$j"; fail "a signal named that could not be known"; }
	fi
	[ "$(json_field "$j" '["trigger"]["pid"]')" = "$wpid" ] || fail "the pid is not the program's"
	snap_events "${snaps[0]}" | grep -v "tracebuf:thread:" | tail -1 | grep -q "flight:last: .*{ seq = $((K - 1)) }" ||
		fail "the snapshot's last event is not the last one written before the end"
	# written K; the first (seq 0) attached the program and was dropped
	check_accounting "${snaps[0]}/trace" $((K - 1))
}

echo "== SIGSEGV, status readable (its parent holds it)"
run 1 hold --snapshot-dir "$T/s1" -o "$T/d1" -- --triggers 0 --events $K --crash
[ $rrc -eq 0 ] || { cat "$T/r1.err"; fail "record --pid exited $rrc"; }
cp "$T/r1.err" "$T/r.err"
grep -q "process $wpid (.*) ended (killed by signal 11)" "$T/r1.err" || { cat "$T/r1.err"; fail "the end is not said"; }
crash_snapshot "$T/s1" crash SIGSEGV
[ "$("$CLI" dump "$T/d1" | grep -c 'flight:last:')" -eq $((K - 1)) ] || fail "-o: the trace at the end lacks events"
[ -z "$(ls "$TRACEBUF_SHM_DIR")" ] || fail "the session of an ended program was left"

echo "== SIGKILL, status readable"
run 2 hold --snapshot-dir "$T/s2" -- --triggers 0 --events $K --crash --kill-self
cp "$T/r2.err" "$T/r.err"
[ $rrc -eq 0 ] || { cat "$T/r2.err"; fail "record --pid exited $rrc"; }
crash_snapshot "$T/s2" crash SIGKILL

echo "== SIGSEGV, reaped at once by its parent: how it ended is not known"
run 3 autoreap --snapshot-dir "$T/s3" -- --triggers 0 --events $K --crash
cp "$T/r3.err" "$T/r.err"
[ $rrc -eq 0 ] || { cat "$T/r3.err"; fail "record --pid exited $rrc"; }
grep -q "process $wpid (.*) ended (how is not known" "$T/r3.err" || { cat "$T/r3.err"; fail "the unknown end is not said"; }
crash_snapshot "$T/s3" end ""
"$CLI" snapshots "$T/s3" | grep -qE "^1 +[0-9T:.-]+Z +end +ended +$wpid " || { "$CLI" snapshots "$T/s3"; fail "the end snapshot is not listed"; }

echo "== --no-snapshot-on-crash; an exit 0"
run 4 autoreap --snapshot-dir "$T/s4" --no-snapshot-on-crash -- --triggers 0 --events 10 --crash
[ "$(snapshots "$T/s4" | wc -l)" -eq 0 ] || fail "a snapshot despite --no-snapshot-on-crash"
run 5 hold --snapshot-dir "$T/s5" -- --triggers 0 --events 10
grep -q "process $wpid (.*) ended (exit status 0)" "$T/r5.err" || { cat "$T/r5.err"; fail "the exit is not said"; }
[ "$(snapshots "$T/s5" | wc -l)" -eq 0 ] || { cat "$T/r5.err"; fail "a snapshot of a clean exit"; }

echo "== --snapshot-on-failure: exit status 3, read while a zombie"
run 7 hold --snapshot-dir "$T/s7" --snapshot-on-failure -- --triggers 0 --events 10 --exit-status 3
grep -q "process $wpid (.*) ended (exit status 3)" "$T/r7.err" || { cat "$T/r7.err"; fail "the exit status is not said"; }
mapfile -t snaps < <(snapshots "$T/s7")
[ ${#snaps[@]} -eq 1 ] || { ls "$T/s7"; cat "$T/r7.err"; fail "${#snaps[@]} snapshots of exit 3 (want 1)"; }
[ "$(json_field "${snaps[0]}/trigger.json" '["trigger"]["kind"]')" = exit ] || fail "kind is not exit"
[ "$(json_field "${snaps[0]}/trigger.json" '["trigger"]["exit_status"]')" = 3 ] || fail "exit_status is not 3"

echo "== the main thread gone (pthread_exit), the other one writing, then crashing"
CC=$(command -v cc || command -v gcc || command -v clang || true)
san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:-/nonexistent}/CMakeCache.txt" 2> /dev/null)
if [ -n "$CC" ] && [ -n "${TB_BUILD:-}" ] && [ -n "${TB_SRC:-}" ]; then
	cat > "$T/mx.c" <<'CEOF'
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <tracebuf/event.h>
TB_EVENT(mx, last, (u64, seq))
static char **args;
static void nap(void) { struct timespec t = { 0, 10000000 }; nanosleep(&t, NULL); }
static void *run(void *unused)
{
	(void)unused;
	/* the first event attaches (dropped); then K, then wait for the crash file */
	for (uint64_t k = 0; k < 3000; k++)
		tb_mx_last(k);
	for (int i = 0; i < 15000 && access(args[2], F_OK) != 0; i++)
		nap();
	signal(SIGSEGV, SIG_DFL);
	*(volatile int *)(uintptr_t)8 = 1;
	return NULL;
}
int main(int argc, char **argv)
{
	(void)argc;
	args = argv;
	printf("pid: %d\n", (int)getpid());
	fflush(stdout);
	for (int i = 0; i < 15000 && access(argv[1], F_OK) != 0; i++)
		nap();
	pthread_t th;
	pthread_create(&th, NULL, run, NULL);
	pthread_exit(NULL);
}
CEOF
	$CC -std=gnu11 -O2 ${san:+-fsanitize=$san} -I"$TB_SRC/include" "$T/mx.c" -o "$T/mx" -L"$TB_BUILD" -ltracebuf \
		-Wl,-rpath,"$TB_BUILD" -lpthread || fail "building the program"
	env -u TRACEBUF_SESSION "$PY" "$TB_LIB/parent.py" hold "$T/rel6" "$T/mx" "$T/go6" "$T/crash6" > "$T/w6.out" 2> "$T/w6.err" &
	p6=$!
	wait_for started "$T/w6.out" || fail "the program did not start"
	wpid=$(sed -n 's/^pid: //p' "$T/w6.out")
	"$CLI" record --pid $wpid --mode overwrite --sb-size 16K --sb-count 64 --snapshot-dir "$T/s6" \
		--snapshot-on-signal USR2 2> "$T/r6.err" &
	r6=$!
	wait_for said_or_ended "recording process $wpid" "$T/r6.err" $r6
	touch "$T/go6"
	leader_gone() { [ "$(awk '{ print $3 }' /proc/$wpid/stat 2> /dev/null)" = Z ]; }
	wait_for leader_gone || fail "the main thread did not end"
	session_written() { "$CLI" stat "$TRACEBUF_SHM_DIR"/tracebuf-pid-$wpid-* 2> /dev/null | awk '$1 == "total" { print $2; exit }'; }
	all_written() { [ "$(session_written)" = 2999 ]; }
	wait_for all_written || { "$CLI" stat "$TRACEBUF_SHM_DIR"/tracebuf-pid-$wpid-*; fail "the thread's events are not in the session"; }
	# two signals, each answered by a snapshot: the second is read by a turn of the recorder's
	# loop that comes after one that looked at the process with its leader a zombie
	[ "$(snapshots "$T/s6" | wc -l)" -eq 0 ] || fail "a snapshot when the main thread ended"
	nsnaps_or_ended() { [ "$(snapshots "$T/s6" | wc -l)" -ge "$1" ] || ! kill -0 $r6 2> /dev/null; }
	for i in 1 2; do
		kill -USR2 $r6 2> /dev/null
		wait_for nsnaps_or_ended $i
		[ "$(snapshots "$T/s6" | wc -l)" -ge $i ] || { cat "$T/r6.err"; fail "the recorder ended when the main thread did"; }
	done
	touch "$T/crash6"
	wait $r6 || { cat "$T/r6.err"; fail "record --pid (6) exited $?"; }
	touch "$T/rel6"; wait $p6
	grep -q "process $wpid (.*) ended (killed by signal 11)" "$T/r6.err" || { cat "$T/r6.err"; fail "the crash is not said (6)"; }
	mapfile -t snaps < <(snapshots "$T/s6")
	[ ${#snaps[@]} -eq 3 ] || { ls "$T/s6"; cat "$T/r6.err"; fail "${#snaps[@]} snapshots (want 2 signals, 1 crash)"; }
	[ "$(json_field "${snaps[2]}/trigger.json" '["trigger"]["signal"]')" = SIGSEGV ] || fail "the signal (6)"
	snap_events "${snaps[2]}" | grep -v "tracebuf:thread:" | tail -1 | grep -q "mx:last: .*{ seq = 2999 }" ||
		fail "the snapshot's last event is not the thread's last"
else
	echo "  (no C compiler: not checked)"
fi
echo PASS
