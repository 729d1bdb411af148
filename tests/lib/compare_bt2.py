# SPDX-License-Identifier: MIT
"""compare_bt2.py DIR DUMP_JSONL - compare `tracebuf dump --format json DIR`
(already written to DUMP_JSONL) with what babeltrace2's Python bindings read
from DIR: same events, same order (by timestamp, then stream), same field
values, same discard notices and counts; and for the events that carry the
event context vtid (a channel recorded with --vtid), the same thread id as
the tid tracebuf gives them.  Exit 0 same, 1 different, 77 when
the bt2 module is missing."""
import json
import os
import sys

try:
    import bt2
except ImportError:
    print("SKIP: python3 module bt2 (python3-bt2) not installed")
    sys.exit(77)


def norm_bt2(v):
    if isinstance(v, bt2._BoolFieldConst):
        return bool(v)
    if isinstance(v, bt2._IntegerFieldConst):
        return int(v)
    if isinstance(v, bt2._RealFieldConst):
        return float(v)
    if isinstance(v, bt2._StringFieldConst):
        return str(v)
    if isinstance(v, bt2._ArrayFieldConst):
        return [norm_bt2(x) for x in v]
    if isinstance(v, bt2._StructureFieldConst):
        return {k: norm_bt2(x) for k, x in v.items()}
    return str(v)


def bt2_items(d):
    out = []
    for msg in bt2.TraceCollectionMessageIterator(d):
        if type(msg) is bt2._EventMessageConst:
            ev = msg.event
            fc = ev.cls.payload_field_class
            payload = ev.payload_field
            hidden = set()
            if fc is not None:
                names = list(fc.keys())
                for name in names:
                    mfc = fc[name].field_class
                    if isinstance(mfc, bt2._DynamicArrayWithLengthFieldFieldClassConst):
                        idx = list(mfc.length_field_path)[-1].index
                        hidden.add(names[idx])
            fields = {k: norm_bt2(v) for k, v in (payload.items() if payload is not None else [])
                      if k not in hidden}
            ctx = ev.common_context_field
            vtid = str(int(ctx["vtid"])) if ctx is not None and "vtid" in ctx else ""
            out.append((msg.default_clock_snapshot.value, os.path.basename(ev.stream.name), "E",
                        ev.name, json.dumps(fields, sort_keys=True), vtid))
        elif type(msg) is bt2._DiscardedEventsMessageConst:
            out.append((msg.beginning_default_clock_snapshot.value, os.path.basename(msg.stream.name), "DE",
                        str(msg.count or 0), "", ""))
        elif type(msg) is bt2._DiscardedPacketsMessageConst:
            out.append((msg.beginning_default_clock_snapshot.value, os.path.basename(msg.stream.name), "DP",
                        str(msg.count or 0), "", ""))
    return out


def dump_items(path, vtid_streams):
    """vtid_streams: the streams whose events babeltrace2 shows with a vtid:
    their events' tid is compared with it"""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            o = json.loads(line)
            if "event" in o:
                tid = str(o["tid"]) if o["stream"] in vtid_streams else ""
                out.append((o["ticks"], o["stream"], "E", o["event"], json.dumps(o["fields"], sort_keys=True), tid))
            elif "discarded_events" in o:
                out.append((o["ticks"], o["stream"], "DE", str(o["discarded_events"] or 0), "", ""))
            else:
                out.append((o["ticks"], o["stream"], "DP", str(o["discarded_packets"] or 0), "", ""))
    return out


def main():
    d, dump = sys.argv[1], sys.argv[2]
    a = sorted(bt2_items(d), key=lambda x: (x[0], x[1]))   # stable: keeps stream order
    vtid_streams = {x[1] for x in a if x[5]}
    b = sorted(dump_items(dump, vtid_streams), key=lambda x: (x[0], x[1]))
    if a == b:
        ev = sum(1 for x in a if x[2] == "E")
        vt = sum(1 for x in a if x[5])
        print(f"same: {ev} events ({vt} with vtid), {len(a) - ev} discard notices")
        return 0
    print(f"DIFFERENT: babeltrace2 {len(a)} items, tracebuf dump {len(b)} items")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            print(f"first difference at item {i}:\n  babeltrace2: {x}\n  tracebuf:    {y}")
            break
    else:
        print("  extra:", (a[len(b)] if len(a) > len(b) else b[len(a)]))
    return 1


sys.exit(main())
