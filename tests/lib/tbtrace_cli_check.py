# SPDX-License-Identifier: MIT
"""tbtrace_cli_check.py MODE TRUTH OUTPUT [filters] - checks what `tracebuf
dump/report/convert` printed for the standard CLI trace against its ground
truth (written by tbtrace_cli_trace(), tests/lib/tbtrace_cli.c).

  dump TRUTH DUMP.jsonl [--event GLOB]... [--cpu N] [--tid N] [--from NS] [--to NS]
      every line is a JSON object (JSON Lines); the events are exactly the
      truth's events selected by the same filters, in time order
  report TRUTH REPORT.json
      one JSON object; totals per class, CPU, thread (with process names),
      lost events/packets per CPU with ranges, busiest second
  chrome TRUTH CHROME.json
      valid JSON with traceEvents; every truth event exactly once (as an
      instant, a B or an E); B/E balanced and properly nested per thread;
      counts of unmatched ends and of spans closed at the end / by an outer end

Exit 0 when everything matches, 1 otherwise (the first mismatch is printed).
"""
import decimal
import fnmatch
import json
import sys
from collections import Counter


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def load_truth(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_dump(truth, path, args):
    events, cpu, tid, t_from, t_to = [], None, None, None, None
    i = 0
    while i < len(args):
        a, v = args[i], args[i + 1]
        if a == "--event":
            events += v.split(",")
        elif a == "--cpu":
            cpu = int(v)
        elif a == "--tid":
            tid = int(v)
        elif a == "--from":
            t_from = int(v)
        elif a == "--to":
            t_to = int(v)
        else:
            fail("unknown filter " + a)
        i += 2

    def keep(e):
        return ((not events or any(fnmatch.fnmatchcase(e["event"], p) for p in events))
                and (cpu is None or e["cpu"] == cpu) and (tid is None or e["tid"] == tid)
                and (t_from is None or e["ts"] >= t_from) and (t_to is None or e["ts"] <= t_to))

    want = sorted(((e["ts"], e["stream"], e["event"], e["cpu"], e["pid"], e["tid"])
                   for e in truth["events"] if keep(e)))
    got, notices, last = [], 0, None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            try:
                o = json.loads(line)
            except ValueError as x:
                fail(f"line {n} is not JSON: {x}: {line[:200]!r}")
            expect(isinstance(o, dict), f"line {n} is not an object")
            expect(last is None or o["ts"] >= last, f"line {n}: time goes back")
            last = o["ts"]
            if "event" in o:
                expect(isinstance(o["fields"], dict), f"line {n}: fields")
                got.append((o["ts"], o["stream"], o["event"], o["cpu"], o["pid"], o["tid"]))
            else:
                notices += 1
                expect(not events and tid is None, f"line {n}: a loss notice despite --event/--tid")
                expect(cpu is None or o["cpu"] == cpu, f"line {n}: notice of cpu {o['cpu']}")
    expect(len(got) == len(want), f"{len(got)} events printed, {len(want)} expected")
    got.sort()
    for g, w in zip(got, want):
        expect(g == w, f"printed {g}, expected {w}")
    print(f"ok: dump {' '.join(args) or '(no filter)'}: {len(got)} events, {notices} notices")


def check_report(truth, path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        r = json.loads(text)
    except ValueError as x:
        fail(f"report is not one JSON object: {x}")
    ev = truth["events"]
    expect(r["events"] == len(ev), f"events {r['events']} != {len(ev)}")
    expect(r["start_ns"] == truth["start_ns"], f"start_ns {r['start_ns']} != {truth['start_ns']}")
    expect(r["end_ns"] == truth["end_ns"], f"end_ns {r['end_ns']} != {truth['end_ns']}")
    expect(r["duration_ns"] == r["end_ns"] - r["start_ns"], "duration")
    expect(r["start"].endswith("Z") and r["start"].startswith("2023-11-14T22:13:20.000001010"), r["start"])
    cls = Counter(e["event"] for e in ev)
    expect({c["name"]: c["events"] for c in r["classes"]} == dict(cls), f"classes {r['classes']} != {cls}")
    cpus = Counter(e["cpu"] for e in ev)
    expect({c["cpu"]: c["events"] for c in r["cpus"]} == dict(cpus), f"cpus {r['cpus']} != {cpus}")
    for c in r["cpus"]:
        expect(c["lost_events"] == truth["lost_events"].get(str(c["cpu"]), 0), f"lost events of cpu {c}")
        expect(c["lost_packets"] == truth["lost_packets"].get(str(c["cpu"]), 0), f"lost packets of cpu {c}")
    thr = Counter((e["pid"], e["tid"]) for e in ev)
    expect({(t["pid"], t["tid"]): t["events"] for t in r["threads"]} == dict(thr), f"threads {r['threads']}")
    for t in r["threads"]:
        expect(t["process"] == truth["procs"].get(str(t["pid"])), f"process name of {t}")
    lost = r["lost"]
    expect(lost["events"] == sum(truth["lost_events"].values()), f"lost events {lost}")
    expect(lost["packets"] == sum(truth["lost_packets"].values()), f"lost packets {lost}")
    # the synthetic traces count their losses as ring full (tbtrace_discard())
    expect(lost["by_cause"]["full"] == lost["events"] and lost["cause_unknown"] == 0, f"causes {lost}")
    expect(sum(lost["by_cause"].values()) == lost["events"], f"causes add up {lost}")
    for c in lost["by_cpu"]:
        expect(c["ranges"], f"no ranges for {c}")
        for g in c["ranges"]:
            expect(r["start_ns"] <= g["begin_ns"] <= g["end_ns"] <= r["end_ns"], f"range {g}")
    expect(sum(s["bytes"] for s in r["streams"]) == r["bytes"], "bytes")
    buckets = Counter((e["ts"] - r["start_ns"]) // 1000000000 for e in ev)
    best = max(buckets.values())
    idx = min(k for k, v in buckets.items() if v == best)
    b = r["busiest_second"]
    expect(b["events"] == best and b["index"] == idx, f"busiest second {b}, expected #{idx} with {best}")
    expect(r["diagnostics"]["count"] == 0, "diagnostics")
    print(f"ok: report json: {r['events']} events, {len(r['classes'])} classes, {len(r['threads'])} threads")


def check_chrome(truth, path):
    with open(path, encoding="utf-8") as f:
        try:
            # exact decimals: absolute times need 19 digits, more than a double holds
            d = json.load(f, parse_float=decimal.Decimal)
        except ValueError as x:
            fail(f"not valid JSON: {x}")
    expect(isinstance(d, dict) and isinstance(d.get("traceEvents"), list), "no traceEvents array")
    relative = d["otherData"]["time"].startswith("relative")
    # a string: it is above 2^53, where JavaScript numbers lose precision
    expect(isinstance(d["otherData"]["trace_start_ns"], str), "trace_start_ns is not a string")
    origin = int(d["otherData"]["trace_start_ns"]) if relative else 0
    procs, threads = {}, {}
    got = Counter()
    stacks = {}
    unmatched = closed_end = closed_outer = notices = 0
    last_ts = {}
    for x in d["traceEvents"]:
        ph = x["ph"]
        key = (x["pid"], x["tid"])
        if ph == "M":
            names = procs if x["name"] == "process_name" else threads
            expect(x["name"] in ("process_name", "thread_name"), f"metadata {x}")
            names[x["pid"] if x["name"] == "process_name" else key] = x["args"]["name"]
            if x["name"] == "thread_name":
                want_name = f"cpu {x['tid']}" if x["pid"] == 0 else f"tid {x['tid']}"
                expect(x["args"]["name"] == want_name, f"thread name {x['args']['name']}, expected {want_name}")
            continue
        expect(isinstance(x["ts"], (int, decimal.Decimal)) and isinstance(x["args"], dict), f"event {x}")
        expect(x["pid"] in procs and key in threads, f"{key} used before it was named")
        ns = int(x["ts"] * 1000) + origin
        expect(x["ts"] * 1000 == int(x["ts"] * 1000), f"ts {x['ts']} is not a whole number of ns")
        if ph == "i":
            expect(x.get("s") == "t", f"instant scope {x}")
            if x["name"].startswith("tracebuf:"):
                notices += 1
                continue
            got[(ns, x["pid"], x["tid"], x["name"])] += 1
            if x["name"].endswith("_end"):
                unmatched += 1
        elif ph == "B":
            stacks.setdefault(key, []).append(x["name"])
            got[(ns, x["pid"], x["tid"], x["name"] + "_begin")] += 1
        elif ph == "E":
            st = stacks.get(key)
            expect(st and st[-1] == x["name"], f"E {x['name']} on {key} does not close the innermost span {st}")
            st.pop()
            why = x["args"].get("tracebuf_closed")
            if why is None:
                got[(ns, x["pid"], x["tid"], x["name"] + "_end")] += 1
            elif why.startswith("at the end"):
                closed_end += 1
            else:
                closed_outer += 1
        else:
            fail(f"unexpected ph {ph}")
        expect(x["ts"] >= last_ts.get(key, x["ts"]), f"time goes back on {key} (viewers want ordered B/E)")
        last_ts[key] = x["ts"]
    expect(all(not s for s in stacks.values()), f"spans left open: {stacks}")
    want = Counter()
    for e in truth["events"]:
        pid, tid = (e["pid"], e["tid"]) if e["tid"] else (0, e["cpu"])
        want[(e["ts"], pid, tid, e["event"])] += 1
    if got != want:
        fail(f"events differ: missing {list((want - got).items())[:3]}, extra {list((got - want).items())[:3]}")
    sp = truth["spans"]
    nb = sum(1 for x in d["traceEvents"] if x["ph"] == "B")
    ne = sum(1 for x in d["traceEvents"] if x["ph"] == "E")
    expect(nb == sp["B"] and ne == sp["E"], f"B {nb} E {ne}, expected {sp['B']} {sp['E']}")
    expect(unmatched == sp["unmatched_ends"], f"unmatched ends {unmatched}")
    expect(closed_end == sp["closed_at_end"], f"closed at end {closed_end}")
    expect(closed_outer == sp["closed_by_outer_end"], f"closed by outer end {closed_outer}")
    s = d["tracebufSummary"]
    expect(s["unmatched_ends"] == unmatched and s["closed_at_end"] == closed_end
           and s["closed_by_outer_end"] == closed_outer and s["events"] == len(truth["events"]), f"summary {s}")
    for pid, name in truth["procs"].items():
        expect(procs.get(int(pid)) == name, f"process_name of {pid}: {procs.get(int(pid))}")
    expect(notices == len(truth["lost_events"]) + len(truth["lost_packets"]), f"{notices} loss notices")
    print(f"ok: chrome: {sum(got.values())} events once each, {nb} spans balanced, {unmatched} unmatched end")


def main():
    mode, truth, out = sys.argv[1], load_truth(sys.argv[2]), sys.argv[3]
    if mode == "dump":
        check_dump(truth, out, sys.argv[4:])
    elif mode == "report":
        check_report(truth, out)
    elif mode == "chrome":
        check_chrome(truth, out)
    else:
        fail("mode must be dump, report or chrome")
    return 0


sys.exit(main())
