# SPDX-License-Identifier: MIT
"""spans_check.py DUMP.jsonl [--chrome C.json] [--perfetto SLICES.txt] [--html R.html] [--expect NAME=N]...

The spans a trace holds, from `tracebuf dump --format json` (the ground
truth: NAME_begin / NAME_end of one thread, an end closing the innermost open
span of its name), printed as "NAME PID TID BEGIN_NS END_NS", and compared
with what each view made of them, exactly (ns):

  --chrome    `convert --to chrome --absolute`: B / E events per thread (ts in
              us with three decimals, read as decimals, not doubles)
  --perfetto  the output of `perfetto_check.py slices` on `convert --to perfetto`
  --html      `report --html`: the page's data (spans: lane, start, dur)
  --expect    NAME=N: the trace holds N spans named NAME, each closed by its
              own end (none left open, none closed by an outer end)
"""
import collections
import decimal
import html as htmlmod
import json
import re
import sys


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def truth(path):
    spans, open_ = [], collections.defaultdict(list)
    for line in open(path, encoding="utf-8"):
        e = json.loads(line)
        name = e.get("event", "")
        key = (e["pid"], e["tid"])
        if name.endswith("_begin"):
            open_[key].append((name[:-6], e["ts"]))
        elif name.endswith("_end"):
            stack = open_[key]
            idx = [i for i, (n, _) in enumerate(stack) if n == name[:-4]]
            if not idx:
                fail(f"an end without its begin: {line.strip()}")
            if idx[-1] != len(stack) - 1:
                fail(f"{name} closes {stack[idx[-1]:]} (spans opened inside it still open)")
            n, b = stack.pop()
            spans.append((n, key[0], key[1], b, e["ts"]))
    left = [v for v in open_.values() if v]
    if left:
        fail(f"spans left open at the end of the trace: {left}")
    return sorted(spans)


def chrome(path, start_ns):
    doc = json.load(open(path, encoding="utf-8"), parse_float=decimal.Decimal)
    out, open_ = [], collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e.get("ph") not in ("B", "E"):
            continue
        ts = int(decimal.Decimal(e["ts"]) * 1000) + start_ns
        key = (e["pid"], e["tid"])
        if e["ph"] == "B":
            open_[key].append((e["name"], ts))
        else:
            if not open_[key]:
                fail(f"chrome: an E without B on {key}")
            n, b = open_[key].pop()
            out.append((n, key[0], key[1], b, ts))
    return sorted(out)


def html(path):
    text = open(path, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="tb-data">(.*?)</script>', text, re.S)
    if not m:
        fail("html: no tb-data")
    d = json.loads(m.group(1))
    t0 = int(d["start_ns"])
    sp, lanes = d["spans"], d["lanes"]
    if sp["kept"] != sp["total"]:
        fail(f"html: {sp['kept']} of {sp['total']} spans kept")
    out = []
    for i in range(len(sp["lane"])):
        ln = lanes[sp["lane"][i]]
        b = t0 + sp["start"][i]
        out.append((sp["names"][sp["name"][i]], ln.get("pid"), ln.get("tid"), b, b + sp["dur"][i]))
    return sorted(out)


def main():
    args = sys.argv[1:]
    want = truth(args.pop(0))
    print(f"{len(want)} spans in the trace:")
    for s in want:
        print("  %s %d %d %d %d (%d ns)" % (s + (s[4] - s[3],)))
    got = {}
    while args:
        opt, val = args.pop(0), args.pop(0)
        if opt == "--chrome":
            # ts since otherData.trace_start_ns, or since the Unix epoch (--absolute)
            doc = json.load(open(val, encoding="utf-8"))
            start = 0 if doc["otherData"]["time"].startswith("absolute") else int(doc["otherData"]["trace_start_ns"])
            got["chrome " + val] = chrome(val, start)
        elif opt == "--perfetto":
            rows = []
            for line in open(val, encoding="utf-8"):
                f = line.split()
                if f and f[-1] == "closed":
                    fail(f"perfetto: a slice closed by tracebuf, not by its end: {line.strip()}")
                if f:
                    rows.append((f[0], int(f[1]), int(f[2]), int(f[3]), int(f[4])))
            got["perfetto " + val] = sorted(rows)
        elif opt == "--html":
            got["html " + val] = html(val)
        elif opt == "--expect":
            name, n = val.rsplit("=", 1)
            have = sum(1 for s in want if s[0] == name)
            if have != int(n):
                fail(f"{have} spans {name} in the trace, expected {n}")
        else:
            fail("unknown option " + opt)
    for k, v in got.items():
        if v != want:
            extra = [x for x in v if x not in want][:3]
            missing = [x for x in want if x not in v][:3]
            fail(f"{k}: spans differ from the trace's: missing {missing}, extra {extra}")
        print(f"ok: {k}: the same {len(v)} spans, to the ns")


if __name__ == "__main__":
    main()
