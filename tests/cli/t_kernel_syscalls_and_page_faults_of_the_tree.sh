#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_kernel_syscalls_and_page_faults_of_the_tree.sh - `record --kernel=sched,syscalls,page_faults`
# (docs/KERNEL.md): the traced tree's system calls and page faults in the trace, each naming the
# task it happened to, on the trace's clock next to the program's own events.
#   - two threads hand a token over a futex N times (tb-kernel-handoff): every handoff's
#     FUTEX_WAKE is in the trace as a syscall_entry (name futex, args[1] the op) and a
#     syscall_exit (ret = the threads woken, what the program wrote in kh:woke) of the waker's
#     tid, both between its kh:handoff and kh:woke (user, kernel, user: both orders exact);
#     the 50 ms nap's clock_nanosleep lies inside kh:nap_begin .. kh:nap_end; each thread's
#     entries and exits alternate with the same call; only the command's tree is in it (its
#     process and what it forked: a sanitizer's helper);
#   - report: kh-a's blocked time is mostly in clock_nanosleep (>= 49 ms), the span kh:nap is
#     blocked in clock_nanosleep, kh-b waits in futex (text and JSON);
#   - report --html: the thread-state intervals name what a blocked one was in;
#   - convert --to chrome: every call a slice (B/E) on its thread's track, one after the other,
#     the nap's clock_nanosleep >= 49 ms;
#   - page faults: a process that writes P fresh pages (no huge pages) has exactly P user page
#     faults at those addresses, each a user write (error_code bits 1 and 2);
#   - babeltrace2 reads both traces with the same events per class as tracebuf dump, and no
#     warning but the kernel losses the recorder reported;
#   - the default --kernel records no system call; --kernel=raw_syscalls:sys_enter only the
#     entries; an unknown name is refused naming the sets.
# Skips (77) with the reason when perf_event_open on tracepoints is not allowed here.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/kernel_bt2.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the JSON outputs)"; exit 77; }
HO=${TB_KERNEL_HANDOFF:?}
N=300

if ! out=$("$CLI" record -q --kernel=sched,syscalls -o "$T/probe" -- true 2>&1); then
	case $out in
	*"refused"*|*"not mounted"*|*"not readable"*|*"no tracepoint"*)
		echo "SKIP: --kernel=syscalls is not available here: $out"; exit 77 ;;
	esac
	fail "record --kernel=sched,syscalls -- true: $out"
fi

# 1. the handoff, with system calls and page faults
"$CLI" record --kernel=sched,syscalls,page_faults --kernel-pages 4096 -o "$T/h" -- "$HO" $N > "$T/h.tids" 2> "$T/h.err" ||
	{ cat "$T/h.err"; fail "record the handoff"; }
grep -q 'NOT EQUAL' "$T/h.err" && fail "kernel accounting: $(cat "$T/h.err")"
"$CLI" dump --format json "$T/h" > "$T/h.jsonl" || fail "dump"
"$CLI" report --format json "$T/h" > "$T/h.report.json" || fail "report --format json"
"$CLI" report "$T/h" > "$T/h.report" || fail "report"
"$PY" - "$T/h.jsonl" "$T/h.tids" "$T/h.report.json" $N "$T/h.err" <<'PY' || { cat "$T/h.err"; fail "handoff checks"; }
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
evs = [e for e in evs if "event" in e]
a, b = map(int, open(sys.argv[2]).read().split())
rep = json.load(open(sys.argv[3]))
n = int(sys.argv[4])
err = open(sys.argv[5]).read()
m = re.search(r"kernel: .* lost (\d+)", err)
klost = int(m.group(1)) if m else 0
sc = [e for e in evs if e["event"] in ("syscall_entry", "syscall_exit")]
pf = [e for e in evs if e["event"] == "x86_exceptions_page_fault_user"]
if not sc:
    sys.exit("no system call in the trace")
pid = next(e["fields"]["pid"] for e in sc if e["fields"]["tid"] == a)
# the tree: the command's process and what it forked (sanitizer runtimes fork helpers)
tree = {pid}
forks = [(e["fields"]["parent_pid"], e["fields"]["child_tid"]) for e in evs if e["event"] == "sched_process_fork"]
while True:
    more = {c for p, c in forks if p in tree} - tree
    if not more:
        break
    tree |= more
others = {e["fields"]["pid"] for e in sc + pf} - tree
if others:
    sys.exit(f"system calls or faults of processes outside the tree: {sorted(others)[:5]} (tree {sorted(tree)[:5]})")
# every handoff: FUTEX_WAKE between kh:handoff and kh:woke, of the same thread
user = {}
for e in evs:
    if e["event"].startswith("kh:") and "seq" in e["fields"]:
        user[(e["event"], e["fields"]["seq"])] = e
by_tid = {}
for e in sc:
    by_tid.setdefault(e["fields"]["tid"], []).append(e)
missing = []
for seq in range(n):
    h, w = user.get(("kh:handoff", seq)), user.get(("kh:woke", seq))
    if not h or not w:
        sys.exit(f"seq {seq}: the program's kh:handoff/kh:woke missing")
    tid = a if seq % 2 == 0 else b
    inside = [e for e in by_tid.get(tid, []) if h["ticks"] < e["ticks"] < w["ticks"]]
    ent = [e for e in inside if e["event"] == "syscall_entry" and e["fields"]["name"] == "futex"
           and e["fields"]["args"][1] & 0x7f == 1]
    ext = [e for e in inside if e["event"] == "syscall_exit" and e["fields"]["name"] == "futex"]
    if len(ent) != 1 or len(ext) != 1 or ent[0]["ticks"] > ext[0]["ticks"] or ext[0]["fields"]["ret"] != w["fields"]["woken"]:
        missing.append((seq, len(ent), len(ext), [x["fields"]["ret"] for x in ext], w["fields"]["woken"]))
if len(missing) > klost:
    sys.exit(f"{len(missing)} handoffs without their FUTEX_WAKE entry and exit (ret = woken) inside, "
             f"the kernel counted {klost} lost: {missing[:5]}")
# the nap: clock_nanosleep inside it, on kh-a
nb, ne = [e for e in evs if e["event"] == "kh:nap_begin"], [e for e in evs if e["event"] == "kh:nap_end"]
if len(nb) != 1 or len(ne) != 1:
    sys.exit("no single nap")
naps = [e for e in by_tid.get(a, []) if nb[0]["ticks"] < e["ticks"] < ne[0]["ticks"]
        and e["fields"]["name"] in ("clock_nanosleep", "nanosleep")]
if [e["event"] for e in naps] != ["syscall_entry", "syscall_exit"]:
    sys.exit(f"the nap's sleep: {[(e['event'], e['fields']['name']) for e in naps]}")
# entries and exits alternate per thread (a new thread may begin with clone's exit; the last
# thread's last call, exit_group, has none), with the same call
for tid, l in by_tid.items():
    if l[0]["event"] == "syscall_exit":
        l = l[1:]
    for i, e in enumerate(l):
        want = "syscall_entry" if i % 2 == 0 else "syscall_exit"
        if e["event"] != want or (i % 2 and e["fields"]["id"] != l[i - 1]["fields"]["id"]):
            if klost:
                break
            sys.exit(f"tid {tid}: event {i} is {e['event']} {e['fields']['name']}, want {want} "
                     f"(after {l[i - 1]['fields']['name'] if i else '-'})")
# report: what the blocked time was in
th = {t["tid"]: t for t in rep["sched"]["threads"]}
def blocked_in(x, cause):
    return sum(c["blocked_ns"] for c in x.get("blocked_in", []) if c["cause"] == cause)
if blocked_in(th[a], "clock_nanosleep") < 49e6:
    sys.exit(f"kh-a blocked in clock_nanosleep {blocked_in(th[a], 'clock_nanosleep')} ns, want >= 49 ms: {th[a]}")
if th[b]["blocked_in"][0]["cause"] != "futex":
    sys.exit(f"kh-b blocked mostly in {th[b]['blocked_in'][0]}, want futex")
nap = [s for s in rep["sched"]["spans"] if s["name"] == "kh:nap"][0]
if blocked_in(nap, "clock_nanosleep") < 49e6:
    sys.exit(f"span kh:nap: {nap}")
calls = {c["cause"]: c["count"] for c in th[a]["blocked_in"]}
wakes_a = sum(1 for e in by_tid[a] if e["event"] == "syscall_entry" and e["fields"]["name"] == "futex")
if calls.get("futex") != wakes_a:
    sys.exit(f"report counts {calls.get('futex')} futex calls of kh-a, the trace has {wakes_a}")
print(f"  {len(sc)} system call events, {len(pf)} page faults of pid {pid}; {n} handoffs each hold their "
      f"FUTEX_WAKE ({len(missing)} missing, {klost} lost); kh-a blocked {blocked_in(th[a], 'clock_nanosleep') / 1e6:.1f} ms in clock_nanosleep")
PY
grep -q '^blocked in (kernel system call' "$T/h.report" || { cat "$T/h.report"; fail "report says nothing of what threads were blocked in"; }
grep -E '^  kh:nap .* in clock_nanosleep' "$T/h.report" > /dev/null || { cat "$T/h.report"; fail "report: the nap span is not said to be in clock_nanosleep"; }

# 2. report --html: the blocked intervals name their cause
"$CLI" report --html -o "$T/h.html" "$T/h" 2> /dev/null || fail "report --html"
"$PY" - "$T/h.html" "$T/h.tids" <<'PY' || fail "html states"
import json, re, sys
t = open(sys.argv[1]).read()
m = re.search(r'<script type="application/json" id="tb-data">(.*?)</script>', t, re.S)
if not m:
    sys.exit("no data block in the page")
st = json.loads(m.group(1))["states"]
c = st["causes"]
if "clock_nanosleep" not in c or "futex" not in c:
    sys.exit(f"causes {c}")
k = c.index("clock_nanosleep") + 1
naps = [st["dur"][i] for i in range(len(st["cause"])) if st["cause"][i] == k and st["state"][i] == 2]
if not naps or max(naps) < 49e6:
    sys.exit(f"no blocked interval of >= 49 ms in clock_nanosleep: {naps[:5]}")
if any(st["cause"][i] and st["state"][i] != 2 for i in range(len(st["cause"]))):
    sys.exit("a cause on an interval that is not blocked")
PY

# 2b. convert --to chrome: each call a slice on its thread's track
"$CLI" convert "$T/h" --to chrome -o "$T/h.json" 2> "$T/conv.err" || { cat "$T/conv.err"; fail "convert --to chrome"; }
"$PY" - "$T/h.json" "$T/h.jsonl" "$T/h.tids" <<'PY' || fail "chrome slices"
import json, sys
d = json.load(open(sys.argv[1]))
evs = [json.loads(l) for l in open(sys.argv[2])]
a, b = map(int, open(sys.argv[3]).read().split())
ent = [e for e in evs if e.get("event") == "syscall_entry"]
sc = [e for e in d["traceEvents"] if e.get("cat") == "syscall"]
B = [e for e in sc if e["ph"] == "B"]
E = [e for e in sc if e["ph"] == "E"]
if len(B) != len(ent) or len(E) != len(B):
    sys.exit(f"{len(ent)} entries in the trace, {len(B)} B and {len(E)} E slices in the JSON")
# per thread: B, E, B, E ... with the same name, on the thread's own track
open_ = {}
longest = {}
for e in sc:
    k = (e["pid"], e["tid"])
    if e["ph"] == "B":
        if k in open_:
            sys.exit(f"thread {k}: {e['name']} begins inside {open_[k]['name']}")
        if e["args"]["tid"] != e["tid"]:
            sys.exit(f"a call of tid {e['args']['tid']} on the track of {e['tid']}")
        open_[k] = e
    elif e["ph"] == "E":
        o = open_.pop(k, None)
        if not o or o["name"] != e["name"]:
            sys.exit(f"thread {k}: an end of {e['name']} that closes {o and o['name']}")
        longest[(e["tid"], e["name"])] = max(longest.get((e["tid"], e["name"]), 0), e["ts"] - o["ts"])
if longest.get((a, "clock_nanosleep"), 0) < 49000:
    sys.exit(f"kh-a's longest clock_nanosleep slice: {longest.get((a, 'clock_nanosleep'))} us")
if d["tracebufSummary"].get("syscalls") != len(B):
    sys.exit(f"summary {d['tracebufSummary']}")
PY

# 3. page faults: P fresh pages written once each
P=300
"$CLI" record --kernel=page_faults -o "$T/pf" -- "$PY" -c "
import ctypes, mmap, sys
m = mmap.mmap(-1, $P * 4096)
m.madvise(mmap.MADV_NOHUGEPAGE)
base = ctypes.addressof(ctypes.c_char.from_buffer(m))
print(base, flush=True)
for i in range($P):
    m[i * 4096] = 1
" > "$T/pf.base" 2> "$T/pf.err" || { cat "$T/pf.err"; fail "record the page writer"; }
"$CLI" dump --format json "$T/pf" > "$T/pf.jsonl" || fail "dump pf"
grep -q "the trace holds no event of the program's own (only the kernel's): " "$T/pf.err" ||
	fail "a trace of kernel events only is said to hold none: $(grep 'holds no' "$T/pf.err")"
grep -q "kernel: [0-9]* system call and page fault events of the traced tree" "$T/pf.err" ||
	fail "the summary does not count the tree's page faults: $(cat "$T/pf.err")"
"$PY" - "$T/pf.jsonl" "$(cat "$T/pf.base")" $P "$T/pf.err" <<'PY' || { cat "$T/pf.err"; fail "page fault checks"; }
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
base, p = int(sys.argv[2]), int(sys.argv[3])
m = re.search(r"kernel: .* lost (\d+)", open(sys.argv[4]).read())
klost = int(m.group(1)) if m else 0
f = [e for e in evs if e.get("event") == "x86_exceptions_page_fault_user"]
mine = [e for e in f if base <= e["fields"]["address"] < base + p * 4096]
pages = {(e["fields"]["address"] - base) // 4096 for e in mine}
bad = [e["fields"]["error_code"] for e in mine if e["fields"]["error_code"] & 6 != 6]
if bad:
    sys.exit(f"faults in the pages that are not user writes: error codes {bad[:5]}")
if len(mine) > p or len(pages) != len(mine) or len(mine) < p - klost:
    sys.exit(f"{len(mine)} faults in {len(pages)} of the {p} pages written, {klost} counted lost")
if any(e["event"].startswith("syscall") or e["event"].startswith("sched") for e in evs if "event" in e):
    sys.exit("--kernel=page_faults recorded other events")
print(f"  {len(mine)} user write faults, one in each of the {p} pages ({len(f)} faults in all)")
PY

# 4. babeltrace2: the same events per class, no warning but reported kernel losses
if command -v babeltrace2 > /dev/null; then
	for d in h pf; do
		kernel_bt2_same "$T/$d" "$T/$d.jsonl" "$T/$d.err" syscall_entry syscall_exit x86_exceptions_page_fault_user
	done
	grep -E ' syscall_entry: .*name = "futex", _args_length = 6, args = \[ \[0\] = [0-9]+' "$T/h.bt" > /dev/null ||
		fail "babeltrace2's syscall_entry lines: $(grep -m1 syscall_entry "$T/h.bt")"
else
	echo "  (babeltrace2 not installed: its reading not checked)"
fi

# 5. which tracepoints: the default has no system call; one asked by subsystem:name; unknown refused
"$CLI" record -q --kernel -o "$T/d" -- "$HO" 4 > /dev/null 2> "$T/d.err" || { cat "$T/d.err"; fail "record --kernel"; }
"$CLI" dump "$T/d" | grep -q -E ' (syscall_|x86_exceptions)' && fail "the default --kernel recorded system calls or faults"
"$CLI" record -q --kernel=raw_syscalls:sys_enter -o "$T/e" -- "$HO" 4 > /dev/null 2> "$T/e.err" ||
	{ cat "$T/e.err"; fail "record --kernel=raw_syscalls:sys_enter"; }
"$CLI" dump "$T/e" > "$T/e.txt"
grep -q ' syscall_entry: ' "$T/e.txt" || fail "--kernel=raw_syscalls:sys_enter: no entry"
grep -q -E ' (syscall_exit|sched_)' "$T/e.txt" && fail "--kernel=raw_syscalls:sys_enter recorded more"
if "$CLI" record -q --kernel=syscalls,bogus -o "$T/u" -- true 2> "$T/u.err"; then fail "an unknown tracepoint was accepted"; fi
grep -q "unknown tracepoint 'bogus'.*raw_syscalls:sys_enter.*the sets sched (the default), syscalls, page_faults" "$T/u.err" ||
	fail "the refusal does not name the known ones and the sets: $(cat "$T/u.err")"
echo "ok"
