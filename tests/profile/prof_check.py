# SPDX-License-Identifier: MIT
"""prof_check.py CHECK DUMP.jsonl [args] - checks a `tracebuf profile` trace,
read from `tracebuf dump --format json` (JSON Lines), for the t_profile_*.sh
tests.  Function address ranges come from `nm -S` of the test programs
(built without PIE: symbol values are run-time addresses).

  threads DUMP TIDS_FILE       every thread id listed in TIDS_FILE has samples
  badfp DUMP EXE fp|libunwind  samples in the garbage-RBP loops are ABORTED
                               after at most one frame (fp); LIBUNWIND flag
  maps DUMP EXE PLUGIN         every sample's PC lies in a profile:map of its
                               process; the dlopen'ed PLUGIN has gen >= 1 and
                               samples; the forked child has its own info,
                               maps (gen >= 1), samples in EXE and counters
  counters DUMP none|some      profile:counters of every process: received
                               == samples + lost, the flags' counts agree;
                               none: lost == 0; some: lost > 0 and lost ==
                               the events the trace says were discarded
  hot DUMP EXE                 hot_a and hot_b are the hottest functions, in
                               a 3:1 ratio of CPU time (75% within 10 points)
  altstack DUMP EXE fp|libunwind
                               samples in a handler on a sigaltstack: the PC
                               only and NOSTACK (fp); through the signal
                               frame to main (libunwind)
  unwind DUMP EXE fp|libunwind [MAXDEPTH]
                               chains through nofp_a/nofp_b: libunwind shows
                               nofp_a, frame pointers cannot; prints depths
Exit 0 when the check holds, 1 otherwise (the reason is printed).
"""
import collections
import json
import subprocess
import sys

F_ABORTED, F_TRUNCATED, F_NOSTACK, F_LIBUNWIND = 1, 2, 4, 8


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def load(path):
    ev = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            ev.append(json.loads(line))
    return ev


def samples(ev):
    return [e for e in ev if e.get("event") == "profile:sample"]


def of(ev, name):
    return [e for e in ev if e.get("event") == name]


class Syms:
    def __init__(self, exe):
        out = subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True,
                             check=True).stdout
        self.ranges = {}
        for line in out.splitlines():
            p = line.split()
            if len(p) == 4 and p[2] in "tTwW":
                self.ranges[p[3]] = (int(p[0], 16), int(p[0], 16) + int(p[1], 16))

    def name(self, addr):
        for n, (lo, hi) in self.ranges.items():
            if lo <= addr < hi:
                return n
        return None

    def inside(self, addr, fn):
        lo, hi = self.ranges[fn]
        return lo <= addr < hi


def weight(e):
    return 1 + e["fields"]["overrun"]


def check_threads(ev, tids_file):
    want = {int(x) for x in open(tids_file).read().split()}
    have = collections.Counter(e["tid"] for e in samples(ev))
    if not want:
        fail("the program listed no thread")
    missing = sorted(t for t in want if not have[t])
    if missing:
        fail(f"no sample from threads {missing} (samples per thread: {dict(have)})")
    print(f"samples from all {len(want)} threads: {dict(have)}")


def check_badfp(ev, exe, mode):
    sy = Syms(exe)
    s = samples(ev)
    loops = [e for e in s if sy.name(e["fields"]["stack"][0]) in ("burn_badfp", "burn_below_rsp")]
    if len(loops) < 10:
        fail(f"only {len(loops)} samples in the garbage-RBP loops (of {len(s)})")
    if mode == "fp":
        bad = [e for e in loops if not (e["fields"]["flags"] & F_ABORTED) or len(e["fields"]["stack"]) > 2]
        if bad:
            fail(f"{len(bad)} samples in the loops not ABORTED at the first frame, e.g. {bad[0]['fields']}")
    else:
        bad = [e for e in s if not (e["fields"]["flags"] & F_LIBUNWIND)]
        if bad:
            fail(f"{len(bad)} samples without the LIBUNWIND flag")
    aborted = sum(1 for e in s if e["fields"]["flags"] & F_ABORTED)
    c = of(ev, "profile:counters")
    if len(c) != 1:
        fail(f"{len(c)} profile:counters events")
    c = c[0]["fields"]
    if c["lost"] == 0 and c["aborted"] != aborted:
        fail(f"counters say {c['aborted']} aborted, the samples {aborted}")
    print(f"{mode}: {len(loops)} samples in the loops, {aborted} of {len(s)} ABORTED; counters {c}")


def check_maps(ev, exe, plugin):
    sy = Syms(exe)
    maps = collections.defaultdict(list)
    for e in of(ev, "profile:map"):
        maps[e["pid"]].append(e["fields"])
    infos = {e["pid"]: e["fields"] for e in of(ev, "profile:info")}
    s = samples(ev)
    if not s:
        fail("no samples")
    for e in s:
        pc = e["fields"]["stack"][0]
        if not any(m["start"] <= pc < m["end"] for m in maps[e["pid"]]):
            fail(f"pid {e['pid']}: PC {pc:#x} in no profile:map of the process")
    pids = sorted({e["pid"] for e in s})
    if len(pids) != 2:
        fail(f"samples from {len(pids)} processes {pids}, want the program and its child")
    parent = min(pids, key=lambda p: min(e["ts"] for e in s if e["pid"] == p))
    child = [p for p in pids if p != parent][0]
    for p in pids:
        if p not in infos:
            fail(f"pid {p}: no profile:info")
        if not infos[p]["exe"].endswith("/" + exe.split("/")[-1]):
            fail(f"pid {p}: profile:info exe {infos[p]['exe']}")
    plug = [m for m in maps[parent] if m["path"].endswith("/" + plugin)]
    if not plug or min(m["gen"] for m in plug) < 1:
        fail(f"the dlopen'ed {plugin}: maps {plug} (want gen >= 1)")
    in_plug = [e for e in s if e["pid"] == parent and any(m["start"] <= e["fields"]["stack"][0] < m["end"]
                                                           for m in plug)]
    if not in_plug:
        fail(f"no sample of the parent in {plugin}")
    cm = maps[child]
    if not cm or min(m["gen"] for m in cm) < 1:
        fail(f"child {child}: maps with gens {sorted({m['gen'] for m in cm})} (want >= 1)")
    if not any(m["path"].endswith("/" + exe.split("/")[-1]) for m in cm):
        fail(f"child {child}: no map of the executable")
    in_child = [e for e in s if e["pid"] == child and sy.name(e["fields"]["stack"][0]) == "child_burn"]
    if not in_child:
        fail(f"child {child}: no sample in child_burn")
    counters = {e["pid"] for e in of(ev, "profile:counters")}
    if counters != set(pids):
        fail(f"profile:counters from {sorted(counters)}, want {pids}")
    print(f"parent {parent}: {len(in_plug)} samples in {plugin} (gen {plug[0]['gen']}); child {child}: "
          f"{len(in_child)} samples in child_burn, {len(cm)} maps (gen {cm[0]['gen']}); every PC mapped")


def check_counters(ev, want_lost):
    s = samples(ev)
    c = of(ev, "profile:counters")
    pids = {e["pid"] for e in s}
    if {e["pid"] for e in c} != pids or len(c) != len(pids):
        fail(f"profile:counters from {sorted(e['pid'] for e in c)}, samples from {sorted(pids)}")
    discarded = 0
    for e in ev:
        if "discarded_events" in e:
            if e["discarded_events"] is None:
                fail("the trace lost an unknown number of events")
            discarded += e["discarded_events"]
    total_lost = 0
    for e in c:
        f, pid = e["fields"], e["pid"]
        mine = [x for x in s if x["pid"] == pid]
        n = len(mine)
        if f["received"] < n:
            fail(f"pid {pid}: received {f['received']} < {n} samples in the trace")
        if f["received"] != n + f["lost"]:
            fail(f"pid {pid}: received {f['received']} != {n} samples + {f['lost']} lost")
        if f["lost"] == 0:
            for key, bit in (("aborted", F_ABORTED), ("truncated", F_TRUNCATED)):
                k = sum(1 for x in mine if x["fields"]["flags"] & bit)
                if f[key] != k:
                    fail(f"pid {pid}: counters {key} {f[key]}, samples with the flag {k}")
            ov = sum(x["fields"]["overrun"] for x in mine)
            if f["overruns"] != ov:
                fail(f"pid {pid}: counters overruns {f['overruns']}, sum of the samples' {ov}")
            inv = sum(1 for x in mine if x["fields"]["stack"][0] == 0)
            if f["invalid_pc"] != inv:
                fail(f"pid {pid}: counters invalid_pc {f['invalid_pc']}, samples with PC 0 {inv}")
        total_lost += f["lost"]
        print(f"pid {pid}: {n} samples, counters {f}")
    if want_lost == "none" and total_lost:
        fail(f"{total_lost} samples lost with big buffers")
    if want_lost == "some":
        if not total_lost:
            fail("no sample lost: the test did not fill the rings")
        if discarded != total_lost:
            fail(f"the trace discarded {discarded} events, the sampler lost {total_lost}")
    print(f"lost {total_lost}, discarded in the trace {discarded}")


def check_hot(ev, exe):
    sy = Syms(exe)
    total = collections.Counter()
    self_ = collections.Counter()
    for e in samples(ev):
        st, w = e["fields"]["stack"], weight(e)
        self_[sy.name(st[0]) or "?"] += w
        for fn in {sy.name(a) for a in st if sy.name(a)}:
            total[fn] += w
    a, b = total["hot_a"], total["hot_b"]
    if a + b == 0:
        fail("no sample in hot_a or hot_b")
    top = [n for n, _ in self_.most_common(2)]
    if sorted(top) != ["hot_a", "hot_b"]:
        fail(f"the hottest functions (self) are {self_.most_common(3)}")
    share = 100.0 * a / (a + b)
    print(f"hot_a {a} periods, hot_b {b}: {share:.1f}% / {100 - share:.1f}% (want 75/25 within 10 points)")
    if abs(share - 75.0) > 10.0:
        fail(f"hot_a has {share:.1f}% of hot_a + hot_b")


def check_unwind(ev, exe, mode, maxdepth=None):
    sy = Syms(exe)
    s = [e for e in samples(ev) if sy.name(e["fields"]["stack"][0]) == "leaf_burn"]
    if len(s) < 10:
        fail(f"only {len(s)} samples in leaf_burn")
    depths = collections.Counter(len(e["fields"]["stack"]) for e in s)
    via_a = sum(1 for e in s if any(sy.inside(a, "nofp_a") for a in e["fields"]["stack"]))
    lib = sum(1 for e in s if e["fields"]["flags"] & F_LIBUNWIND)
    print(f"{mode}: {len(s)} samples in leaf_burn; chain lengths {sorted(depths.items())}; "
          f"{via_a} through nofp_a")
    if mode == "libunwind":
        if lib != len(s):
            fail(f"{len(s) - lib} samples without the LIBUNWIND flag")
        if via_a < 0.8 * len(s):
            fail("libunwind did not walk through the function without frame pointers")
    else:
        if lib:
            fail(f"{lib} samples with the LIBUNWIND flag in fp mode")
        if via_a:
            fail("a frame-pointer walk found nofp_a, which keeps no frame record")
    if maxdepth is not None:
        d = int(maxdepth)
        if max(depths) > d:
            fail(f"a chain of {max(depths)} entries with --depth {d}")
        trunc = sum(1 for e in s if e["fields"]["flags"] & F_TRUNCATED)
        if trunc != len(s):
            fail(f"{len(s) - trunc} of {len(s)} samples cut at --depth {d} without TRUNCATED")


def check_altstack(ev, exe, mode):
    sy = Syms(exe)
    s = [e for e in samples(ev) if sy.name(e["fields"]["stack"][0]) == "burn_on_altstack"]
    if len(s) < 10:
        fail(f"only {len(s)} samples in burn_on_altstack")
    if mode == "fp":
        bad = [e for e in s if not (e["fields"]["flags"] & F_NOSTACK) or len(e["fields"]["stack"]) != 1]
        if bad:
            fail(f"{len(bad)} samples on the alternate stack walked anyway: {bad[0]['fields']}")
    else:
        bad = [e for e in s if not any(sy.inside(a, "main") for a in e["fields"]["stack"][1:])]
        if len(bad) > 0.2 * len(s):
            fail(f"{len(bad)} of {len(s)} libunwind chains do not reach main through the signal frame")
    print(f"{mode}: {len(s)} samples on the alternate stack, e.g. "
          f"{[sy.name(a) or hex(a) for a in s[0]['fields']['stack']]} flags {s[0]['fields']['flags']}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    check, ev, args = sys.argv[1], load(sys.argv[2]), sys.argv[3:]
    fn = {"threads": check_threads, "badfp": check_badfp, "maps": check_maps,
          "counters": check_counters, "hot": check_hot, "unwind": check_unwind,
          "altstack": check_altstack}.get(check)
    if not fn:
        print(__doc__)
        sys.exit(2)
    fn(ev, *args)


if __name__ == "__main__":
    main()
