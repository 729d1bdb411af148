#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_record_pid_kernel_records_the_tree_of_a_running_program.sh - `record --pid PID
# --kernel=sched,syscalls` (docs/KERNEL.md, "record --pid"): the kernel's events of a program
# started without tracebuf, whose threads existed before the recorder:
#   - tb-kernel-handoff started normally, its two threads (kh-a, kh-b) sleeping 5 ms at a time
#     until a release file exists; record --pid with --kernel=sched,syscalls while they run:
#     the trace holds switches out of each thread and each thread's clock_nanosleep entries and
#     exits after the attach, only system calls of that process and of what it started (the
#     forks in the trace say which), and babeltrace2 reads it with
#     the same events per class as tracebuf dump and no warning but the kernel losses the
#     recorder reported;
#   - the recorder killed -9 while attached: the program runs on (its threads keep switching),
#     and a second record --pid --kernel into the same directory (continued: kernel_cpu<N>_r1)
#     gets the threads' switches and system calls again.
# Skips (77) with the reason when perf_event_open on tracepoints is not allowed here.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/kernel_bt2.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the JSON outputs)"; exit 77; }
HO=${TB_KERNEL_HANDOFF:?}
trap 'touch "$T/rel1" "$T/rel2" 2>/dev/null; kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT

if ! out=$("$CLI" record -q --kernel=sched,syscalls -o "$T/probe" -- true 2>&1); then
	case $out in
	*"refused"*|*"not mounted"*|*"not readable"*|*"no tracepoint"*)
		echo "SKIP: --kernel=syscalls is not available here: $out"; exit 77 ;;
	esac
	fail "record --kernel=sched,syscalls -- true: $out"
fi

# voluntary switches of thread $2 of process $1 so far (0 once gone)
vcs() { awk '/^voluntary_ctxt_switches/ { print $2; f = 1 } END { if (!f) print 0 }' /proc/$1/task/$2/status 2>/dev/null || echo 0; }
# until both threads of $1 switched 20 more times than $2 and $3 say
switched() { [ "$(vcs "$1" "$A")" -ge $(($2 + 20)) ] && [ "$(vcs "$1" "$B")" -ge $(($3 + 20)) ]; }
has_tids() { [ -s "$1" ]; }

# check DIR ERRFILE PID: switches out of and system calls of both threads, babeltrace2 agrees
check() {
	"$CLI" dump --format json "$1" > "$1.jsonl" || fail "dump $1"
	"$PY" - "$1.jsonl" "$A" "$B" "$3" "$2" <<'PY' || { cat "$2"; fail "$1: the threads' kernel events"; }
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
evs = [e for e in evs if "event" in e]
a, b, pid = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
m = re.search(r"kernel: .* lost (\d+)", open(sys.argv[5]).read())
klost = int(m.group(1)) if m else 0
sw = {t: sum(1 for e in evs if e["event"] == "sched_switch" and e["fields"]["prev_tid"] == t) for t in (a, b)}
sc = [e for e in evs if e["event"] in ("syscall_entry", "syscall_exit")]
sleeps = {t: sum(1 for e in sc if e["fields"]["tid"] == t and e["event"] == "syscall_entry"
                 and e["fields"]["name"] in ("clock_nanosleep", "nanosleep")) for t in (a, b)}
# the tree: the process and what it started after the attach (a sanitizer runtime's leak
# checker, for one), as the trace's forks say
tree = {pid}
for e in evs:
    if e["event"] == "sched_process_fork" and e["fields"]["parent_pid"] in tree:
        tree.add(e["fields"]["child_tid"])
others = {e["fields"]["pid"] for e in sc} - tree
if others and not klost:
    sys.exit(f"system calls of processes outside the tree: {sorted(others)[:5]}")
# each thread switched 20 times while the recorder ran (waited for): all but the lost are in
for t in (a, b):
    if sw[t] + klost < 20 or sleeps[t] + klost < 20:
        sys.exit(f"thread {t}: {sw[t]} switches out, {sleeps[t]} sleeps entered, {klost} kernel events lost")
print(f"  switches out {sw}, clock_nanosleep entries {sleeps}, {len(sc)} system call events of pid {pid}, "
      f"{klost} kernel events lost")
PY
	kernel_bt2_same "$1" "$1.jsonl" "$2" sched_switch syscall_entry syscall_exit
}

# 1. the program started normally, its threads alive; record --pid --kernel until it ends
env -u TRACEBUF_SESSION "$HO" 4 0 "$T/rel1" > "$T/tids1" 2> "$T/w1.err" &
w1=$!
wait_for has_tids "$T/tids1" || fail "tb-kernel-handoff did not start"
read -r A B < "$T/tids1"
"$CLI" record --pid $w1 --kernel=sched,syscalls -o "$T/k1" 2> "$T/r1.err" &
r1=$!
wait_for said_or_ended "recording process $w1" "$T/r1.err" $r1
grep -q "recording process $w1" "$T/r1.err" || { cat "$T/r1.err"; fail "record --pid --kernel did not start"; }
a0=$(vcs $w1 "$A"); b0=$(vcs $w1 "$B")
wait_for switched $w1 "$a0" "$b0" || fail "the threads do not switch"
touch "$T/rel1"
wait $w1 || fail "tb-kernel-handoff failed"
wait $r1 || { cat "$T/r1.err"; fail "record --pid --kernel exited $?"; }
grep -q 'NOT EQUAL' "$T/r1.err" && fail "kernel accounting: $(cat "$T/r1.err")"
ls "$T/k1" | grep -q '^kernel_cpu[0-9]*$' || fail "no kernel stream in the trace"
check "$T/k1" "$T/r1.err" $w1

# 2. the recorder killed -9: the program runs on; a second record --pid --kernel continues
env -u TRACEBUF_SESSION "$HO" 4 0 "$T/rel2" > "$T/tids2" 2> "$T/w2.err" &
w2=$!
wait_for has_tids "$T/tids2" || fail "tb-kernel-handoff (2) did not start"
read -r A B < "$T/tids2"
"$CLI" record --pid $w2 --kernel=sched,syscalls -o "$T/k2" 2> "$T/r2.err" &
r2=$!
wait_for said_or_ended "recording process $w2" "$T/r2.err" $r2
grep -q "recording process $w2" "$T/r2.err" || { cat "$T/r2.err"; fail "record --pid --kernel (2) did not start"; }
a0=$(vcs $w2 "$A"); b0=$(vcs $w2 "$B")
wait_for switched $w2 "$a0" "$b0" || fail "the threads do not switch (2)"
kill -9 $r2; wait $r2 2>/dev/null
a0=$(vcs $w2 "$A"); b0=$(vcs $w2 "$B")
wait_for switched $w2 "$a0" "$b0" || fail "the program stopped when its recorder was killed"
kill -0 $w2 || fail "the program died with its recorder"
"$CLI" record --pid $w2 --kernel=sched,syscalls -o "$T/k2" 2> "$T/r3.err" &
r3=$!
wait_for said_or_ended "recording process $w2" "$T/r3.err" $r3
grep -q "recording process $w2" "$T/r3.err" || { cat "$T/r3.err"; fail "the second record --pid --kernel did not start"; }
a0=$(vcs $w2 "$A"); b0=$(vcs $w2 "$B")
wait_for switched $w2 "$a0" "$b0" || fail "the threads do not switch (3)"
touch "$T/rel2"
wait $w2 || fail "tb-kernel-handoff (2) failed"
wait $r3 || { cat "$T/r3.err"; fail "the second record --pid --kernel exited $?"; }
ls "$T/k2" | grep -q '^kernel_cpu[0-9]*_r1$' || { ls "$T/k2"; fail "the second recorder did not continue the directory"; }
# the second recorder's events alone: its streams (_r1) in a directory of their own
mkdir "$T/k2b"
cp "$T/k2/metadata" "$T/k2b/"
for f in "$T/k2"/*_r1; do cp "$f" "$T/k2b/"; done
check "$T/k2b" "$T/r3.err" $w2
check "$T/k2" "$T/r3.err" $w2
echo PASS
