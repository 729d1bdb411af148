#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# t_convert_perfetto_writes_syscalls_as_ftrace_raw_syscalls.sh - `convert --to perfetto` of a trace
# recorded with --kernel=sched,syscalls,page_faults (docs/CONVERT.md, docs/KERNEL.md) writes the
# system calls as Perfetto's own ftrace raw_syscalls events, so that the Perfetto UI makes each
# call a slice on its thread's track, named from the number, and the user page faults as generic
# ftrace events (Perfetto has no member for x86's exceptions events):
#   - decoded by protoc against Perfetto's protos (tests/perfetto: raw_syscalls.proto,
#     generic.proto, common/system_info.proto), no field Perfetto does not define;
#   - one for one with `tracebuf dump`: as many sys_enter as syscall_entry, sys_exit as
#     syscall_exit, and each is at its exact ns in the FtraceEventBundle of its CPU, with
#     FtraceEvent.pid = the calling thread (the event's tid), its id, its 6 args / its ret
#     (negative ones too: the traced shell's stat of a missing file); each page fault is a
#     GenericFtraceEvent "page_fault_user" with address, ip, error_code and the thread;
#   - none of them is also a TrackEvent; a SystemInfo saying the machine is x86_64 (what
#     trace_processor names the calls by) comes before the first bundle holding a call;
#   - the convert summary counts them, and says page faults are generic events.
# Skips (77) with the reason when perf_event_open on tracepoints is not allowed here, the kernel
# has no raw_syscalls tracepoints, or protoc is missing; a kernel without x86's
# exceptions:page_fault_user tracepoint leaves the page-fault checks out (said on stdout).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=$(command -v python3) || { echo "SKIP: python3 (reads the outputs)"; exit 77; }
command -v protoc > /dev/null || { echo "SKIP: protoc (decodes the Perfetto file; apt install protobuf-compiler)"; exit 77; }
HO=${TB_KERNEL_HANDOFF:?}
PROTOS=$TB_SRC/tests/perfetto

SETS=sched,syscalls,page_faults
if ! out=$("$CLI" record --kernel=$SETS -o "$T/probe" -- true 2>&1); then
	case $out in
	*"refused"*|*"not mounted"*|*"not readable"*|*"none of the tracepoints"*)
		echo "SKIP: --kernel=$SETS is not available here: $out"; exit 77 ;;
	esac
	fail "record --kernel=$SETS -- true: $out"
fi
case $out in
*"no tracepoint"*raw_syscalls*)
	echo "SKIP: this kernel has no raw_syscalls tracepoints: $out"; exit 77 ;;
esac
FAULTS=1
case $out in
*"no tracepoint"*page_fault_user*)
	echo "note: this kernel has no exceptions:page_fault_user tracepoint: page faults not checked"
	FAULTS=0 SETS=sched,syscalls ;;
esac

# the handoff (two threads, futex calls) behind a shell whose test of a missing file makes a
# call return -ENOENT, so that a negative ret is checked
"$CLI" record -q --kernel=$SETS -o "$T/h" -- sh -c '[ -e "$1/nonexistent" ]; exec "$2" 200' sh "$T" "$HO" \
	> /dev/null 2> "$T/h.err" || { cat "$T/h.err"; fail "record the handoff"; }
"$CLI" dump --format json "$T/h" > "$T/h.jsonl" || fail "dump"
"$CLI" convert "$T/h" --to perfetto --no-compress -o "$T/h.pf" 2> "$T/conv.err" || { cat "$T/conv.err"; fail "convert"; }
(cd "$PROTOS" && protoc -I. --decode=perfetto.protos.Trace protos/perfetto/trace/trace.proto) < "$T/h.pf" > "$T/h.txt" ||
	fail "protoc cannot decode the file"

"$PY" - "$T/h.jsonl" "$T/h.txt" "$T/conv.err" "$FAULTS" <<'PY' || fail "raw_syscalls checks"
import json, os, re, sys
sys.path.insert(0, os.path.join(os.environ["TB_SRC"], "tests", "lib"))
from protoc_text import all_of, get, parse, unknown
jl, txt, conv, faults = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
bad = unknown(txt)
if bad:
    sys.exit(f"protoc printed fields Perfetto does not define: {bad[:3]}")


trace = parse(open(txt))
ft, sysinfo_at, first_call_at = [], None, None
for i, (k, p) in enumerate(trace):
    si = get(p, "system_info")
    if si is not None and get(get(si, "utsname", []), "machine") == "x86_64" and sysinfo_at is None:
        sysinfo_at = i
    b = get(p, "ftrace_events")
    if b is None:
        continue
    cpu, prev = get(b, "cpu"), -1
    for ev in all_of(b, "event"):
        ts = get(ev, "timestamp")
        if ts < prev:
            sys.exit(f"cpu {cpu}: bundle not in time order ({ts} after {prev})")
        prev = ts
        [(kind, f)] = [(a, v) for a, v in ev if isinstance(v, list)]
        if kind == "sys_enter":
            ft.append((cpu, ts, get(ev, "pid"), kind, get(f, "id"), tuple(all_of(f, "args"))))
        elif kind == "sys_exit":
            ft.append((cpu, ts, get(ev, "pid"), kind, get(f, "id"), get(f, "ret")))
        elif kind == "generic":
            flds = {get(x, "name"): (get(x, "uint_value"), get(x, "int_value")) for x in all_of(f, "field")}
            ft.append((cpu, ts, get(ev, "pid"), get(f, "event_name"), tuple(sorted(flds.items()))))
        else:
            continue
        if kind.startswith("sys_") and first_call_at is None:
            first_call_at = i

want = []
for l in open(jl):
    e = json.loads(l)
    if "event" not in e or not e["stream"].startswith("kernel_cpu"):
        continue
    f = e["fields"]
    if e["event"] == "syscall_entry":
        want.append((e["cpu"], e["ts"], f["tid"], "sys_enter", f["id"], tuple(f["args"])))
    elif e["event"] == "syscall_exit":
        want.append((e["cpu"], e["ts"], f["tid"], "sys_exit", f["id"], f["ret"]))
    elif e["event"] == "x86_exceptions_page_fault_user":
        want.append((e["cpu"], e["ts"], f["tid"], "page_fault_user",
                     tuple(sorted((n, (f[n], None)) for n in ("address", "ip", "error_code")))))

def count(lst, kind):
    return sum(1 for x in lst if x[3] == kind)
n = {k: (count(want, k), count(ft, k)) for k in ("sys_enter", "sys_exit", "page_fault_user")}
for k, (d, p) in n.items():
    if d != p:
        sys.exit(f"{k}: {d} in the trace (dump), {p} in the Perfetto file")
if sorted(want) != sorted(ft):
    miss = sorted(set(want) - set(ft))[:3]
    extra = sorted(set(ft) - set(want))[:3]
    sys.exit(f"the file's events differ from the trace's: missing {miss}; extra {extra}")
enters = [x for x in want if x[3] == "sys_enter"]
exits = [x for x in want if x[3] == "sys_exit"]
if len(enters) < 100 or any(len(x[5]) != 6 for x in enters):
    sys.exit(f"{len(enters)} system calls, args counts {sorted({len(x[5]) for x in enters})}: nothing much was checked")
if not any(x[4] == 202 for x in enters):
    sys.exit("no futex call (202) of the handoff among the system calls")
if not any(x[5] < 0 for x in exits):
    sys.exit("no negative ret (the shell's stat of a missing file): the sign was not checked")
if faults and n["page_fault_user"][0] < 1:
    sys.exit("no user page fault in the trace: nothing was checked")
if sysinfo_at is None or first_call_at is None or sysinfo_at > first_call_at:
    sys.exit(f"the SystemInfo (machine x86_64) is at packet {sysinfo_at}, the first call's bundle at {first_call_at}")
names = {v for k, p in trace for k2, i in p if k2 == "interned_data" for k3, nm in i if k3 == "event_names"
         for k4, v in nm if k4 == "name"}
dup = names & {"syscall_entry", "syscall_exit", "x86_exceptions_page_fault_user"}
if dup:
    sys.exit(f"kernel events also written as track events: {dup}")
said = open(conv).read()
m = re.search(r"(\d+) system call entr(?:y|ies) and exits? as ftrace events sys_enter/sys_exit.*?(\d+) user page "
              r"faults? as generic ftrace events page_fault_user", said)
if not m or int(m.group(1)) != len(enters) + len(exits) or int(m.group(2)) != n["page_fault_user"][0]:
    sys.exit(f"the convert summary does not count them ({len(enters) + len(exits)} calls, "
             f"{n['page_fault_user'][0]} faults): {said}")
print(f"ok: {len(enters)} sys_enter, {len(exits)} sys_exit, {n['page_fault_user'][0]} page_fault_user = the trace's")
PY
echo "PASS"
