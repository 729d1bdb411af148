#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_kernel_syscalls_counted_like_perf_stat.sh - `record --kernel=syscalls,page_faults`
# (docs/KERNEL.md) against an independent count of the same tracepoints: `perf stat` counting
# raw_syscalls:sys_enter, raw_syscalls:sys_exit and exceptions:page_fault_user on the same
# program, which runs in the recorded tree as perf stat's child.
#
# perf stat enables its counters when its child calls execve (enable_on_exec, in the kernel's
# exec path): it counts every entry after that execve, every exit from that execve's own on,
# and every user page fault after it, of the program's threads and of what they fork
# (inherited, as ours are).  The trace holds more (perf stat's own calls, the child's calls
# before the execve): the check takes the program's process tree from the trace's forks and
# counts from the execve's exit.  delivered + lost must equal perf's counts, event for event:
#   - a program with two threads (python: startup, 3,000 getppid in a thread, 2,000 in the
#     main thread, a forked child that writes 500 pages), and
#   - the same in block mode with a kernel ring of 4 pages (losses forced: delivered + lost
#     still equals perf's count for each tracepoint, and the losses are the recorder's).
# Skips (77) with the reason when perf or tracepoints are not available here.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (the program and the checks)"; exit 77; }
PERF=$(command -v perf) || { echo "SKIP: perf is not installed (the independent count)"; exit 77; }
"$PERF" stat -x, -e raw_syscalls:sys_enter -- true > /dev/null 2>&1 ||
	{ echo "SKIP: perf stat cannot count raw_syscalls:sys_enter here: $("$PERF" stat -x, -e raw_syscalls:sys_enter -- true 2>&1 | head -2)"; exit 77; }
if ! out=$("$CLI" record -q --kernel=syscalls,page_faults -o "$T/probe" -- true 2>&1); then
	case $out in
	*"refused"*|*"not mounted"*|*"not readable"*|*"no tracepoint"*)
		echo "SKIP: --kernel=syscalls,page_faults is not available here: $out"; exit 77 ;;
	esac
	fail "record --kernel=syscalls,page_faults -- true: $out"
fi

cat > "$T/prog.py" <<'PY'
import mmap, os, threading
def calls(n):
    for _ in range(n):
        os.getppid()
t = threading.Thread(target=calls, args=(3000,))
t.start()
calls(2000)
t.join()
pid = os.fork()
if pid == 0:
    m = mmap.mmap(-1, 500 * 4096)
    for i in range(500):
        m[i * 4096] = 1
    os._exit(0)
os.waitpid(pid, 0)
PY

# run NAME [record options...]: the program under perf stat under record
run() {
	local name=$1
	shift
	"$CLI" record "$@" --kernel=sched_process_fork,syscalls,page_faults -o "$T/$name" -- \
		"$PERF" stat -x, -o "$T/$name.perf" -e raw_syscalls:sys_enter,raw_syscalls:sys_exit,exceptions:page_fault_user -- \
		"$PY" "$T/prog.py" > /dev/null 2> "$T/$name.err" || { cat "$T/$name.err"; fail "record $name"; }
	grep -q 'NOT EQUAL' "$T/$name.err" && fail "$name: kernel accounting: $(cat "$T/$name.err")"
	"$CLI" dump --format json "$T/$name" > "$T/$name.jsonl" || fail "dump $name"
	"$PY" - "$T/$name.jsonl" "$T/$name.perf" "$T/$name.err" "$T/prog.py" "$name" <<'PY' || { cat "$T/$name.err" "$T/$name.perf"; fail "$name: counts"; }
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
lost_recs = [e for e in evs if "lost" in e]
evs = [e for e in evs if "event" in e]
perf = {}
for line in open(sys.argv[2]):
    f = line.strip().split(",")
    if len(f) > 2 and f[0].isdigit():
        perf[f[2].split(":")[-1]] = int(f[0])
want = ("sys_enter", "sys_exit", "page_fault_user")
if set(perf) != set(want):
    sys.exit(f"perf stat counted {perf}")
err = open(sys.argv[3]).read()
name = sys.argv[5]
# perf stat (CMD: the recorder's child, its execve the first in the trace) forks the program,
# whose first successful execve enables perf's counters; the program's tree, from the trace's
# forks: a fork names the parent's process (parent_pid) and the new task (child_tid), a thread
# or a process (whose pid is then that tid): the set of pids that can be the program's or of
# what it started (a python3 that is a wrapper script runs more processes)
ex = [e for e in evs if e["event"] == "syscall_exit" and e["fields"]["name"] == "execve" and e["fields"]["ret"] == 0]
forks = [(e["fields"]["parent_pid"], e["fields"]["child_tid"]) for e in evs if e["event"] == "sched_process_fork"]
if not ex:
    sys.exit("no successful execve exit in the trace")
perf_pid = ex[0]["fields"]["pid"]
kids = [c for p, c in forks if p == perf_pid]
prog = [e for e in ex if e["fields"]["pid"] in kids]
if len(kids) != 1 or not prog:
    sys.exit(f"perf stat ({perf_pid}) forked {kids}, execve exits of them: {len(prog)}")
pid = kids[0]
t0 = prog[0]["ticks"]
tree = {pid}
while True:
    more = {c for p, c in forks if p in tree} - tree
    if not more:
        break
    tree |= more
ent = sum(1 for e in evs if e["event"] == "syscall_entry" and e["fields"]["pid"] in tree and e["ticks"] > t0)
exi = sum(1 for e in evs if e["event"] == "syscall_exit" and e["fields"]["pid"] in tree and e["ticks"] >= t0)
pf = sum(1 for e in evs if e["event"] == "x86_exceptions_page_fault_user" and e["fields"]["pid"] in tree
         and e["ticks"] > t0)
# the recorder's kernel losses (ring full: not attributable to a task); the summary's count
m = re.search(r"kernel: .* lost (\d+)", err)
klost = int(m.group(1)) if m else 0
got = {"sys_enter": ent, "sys_exit": exi, "page_fault_user": pf}
if klost == 0:
    if got != perf:
        sys.exit(f"{name}: the trace holds {got} of the program's tree after its execve, perf stat counted {perf}")
else:
    # losses are the ring's, of every task of the tree (perf stat's own calls too): each count
    # is at most perf's, and what is missing is within what was lost
    short = sum(perf[k] - got[k] for k in want)
    if any(got[k] > perf[k] for k in want) or short > klost:
        sys.exit(f"{name}: the trace holds {got}, perf stat counted {perf}, {klost} lost: "
                 f"{short} missing")
if name == "plain" and (perf["sys_enter"] < 5000 or perf["page_fault_user"] < 500):
    sys.exit(f"the program's calls are not all there: {perf}")
print(f"  {name}: pid {pid} ({len(tree)} processes): trace {got}, perf stat {perf}, {klost} lost")
PY
}

run plain --kernel-pages 4096
run tiny --mode block --kernel-pages 4
grep -q "kernel: .* lost [1-9]" "$T/tiny.err" || echo "  (the 4-page ring lost nothing this time: counted exactly above)"
echo "ok"
