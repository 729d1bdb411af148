# SPDX-License-Identifier: MIT
"""perfetto_check.py MODE PROTOS FILE [TRUTH|FOLDED] - checks a file written by
`tracebuf convert --to perfetto` by decoding it with `protoc --decode` against
Perfetto's own .proto definitions (PROTOS: tests/perfetto, see its README).

The outer Trace is split into packets here (a few lines of wire format);
packets holding compressed_packets are inflated (zlib), and the whole,
flattened, packet stream is decoded by protoc.  protoc prints a field it
does not know by its number: any such line fails the check (a field number
or type tracebuf writes that Perfetto does not define).

  trace PROTOS FILE TRUTH     the standard CLI trace (tests/lib/tbtrace_cli.c):
      process and thread tracks with their names, a track per CPU for events
      without a thread record; every truth event exactly once at its exact
      ns (timestamps rebuilt from the incremental clock) on its thread's
      track, with its interned name, category and debug annotation names;
      slices balanced per track with the truth's span counts; a loss slice
      per loss notice and the lost-events counter of cpu 1 = 7; an events/s
      counter per CPU whose values integrate to the event count
  profile PROTOS FILE FOLDED  a profile trace: one PerfSample per valid
      sample, its interned callstack resolves (frames, function names,
      mappings) to the stacks of the folded output (FOLDED), sample counts
      = the folded counts minus the overruns (given as NAME=N lines after)
  same PROTOS FILE1 FILE2     compressed and plain files hold the same packets
  slices PROTOS FILE          prints the thread slices, one per line:
      NAME PID TID BEGIN_NS END_NS [closed] (sorted)
"""
import collections
import re
import subprocess
import sys
import zlib


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


def expect(cond, msg):
    if not cond:
        fail(msg)


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field, wire, value) of a message: value is bytes for length-delimited fields"""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        f, w = tag >> 3, tag & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            fail(f"wire type {w} at byte {i}")
        expect(i <= len(b), "message cut short")
        yield f, w, v


def packets(path):
    """the raw TracePackets of the file, compressed_packets inflated in place"""
    data = open(path, "rb").read()
    out, compressed = [], 0
    for f, w, v in fields(data):
        expect(f == 1 and w == 2, f"Trace field {f} (only packet = 1 exists)")
        inner = [x for x in fields(v)]
        if any(x[0] == 50 for x in inner):
            expect(len(inner) == 1, "compressed_packets with other fields in its packet")
            compressed += 1
            for f2, w2, v2 in fields(zlib.decompress(inner[0][2])):
                expect(f2 == 1 and w2 == 2, "inflated data is not a Trace")
                out.append(v2)
        else:
            out.append(v)
    return out, compressed


def decode(protos, pkts):
    raw = b"".join(b"\x0a" + enc_varint(len(p)) + p for p in pkts)
    r = subprocess.run(["protoc", "-I" + protos, "--decode=perfetto.protos.Trace",
                        "protos/perfetto/trace/trace.proto"], input=raw, capture_output=True, cwd=protos)
    expect(r.returncode == 0, f"protoc --decode failed: {r.stderr.decode()[:500]}")
    text = r.stdout.decode()
    unknown = [l for l in text.split("\n") if re.match(r"\s*\d+\s*[:{]", l)]
    expect(not unknown, f"fields Perfetto does not define: {unknown[:5]}")
    return parse_text(text)["packet"]


def enc_varint(n):
    o = b""
    while n >= 0x80:
        o += bytes([n & 0x7F | 0x80])
        n >>= 7
    return o + bytes([n])


TOKEN = re.compile(r'\s*(?:(\})|([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+)))')


def parse_text(text):
    """protoc's text format -> dict of field -> list of values (dicts for messages)"""
    stack = [collections.defaultdict(list)]
    pos = 0
    while True:
        m = TOKEN.match(text, pos)
        if not m:
            expect(not text[pos:].strip(), f"cannot parse protoc output at {text[pos:pos + 80]!r}")
            break
        pos = m.end()
        if m.group(1):
            stack.pop()
        elif m.group(3) == "{":
            d = collections.defaultdict(list)
            stack[-1][m.group(2)].append(d)
            stack.append(d)
        else:
            v = m.group(4)
            if v.startswith('"'):
                v = bytes(v[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8", "replace")
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            stack[-1][m.group(2)].append(v)
    return stack[0]


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


class Seq:
    """the state of one sequence: interned data, the incremental clock"""

    def __init__(self):
        self.interned = collections.defaultdict(dict)
        self.clock = None
        self.defaults_clock = None


def walk(pkts):
    """yields (packet, absolute ns or None, sequence state), checking interning and clocks"""
    seqs = {}
    for p in pkts:
        sid = one(p, "trusted_packet_sequence_id")
        expect(sid is not None, f"a packet without trusted_packet_sequence_id: {dict(p)}")
        s = seqs.setdefault(sid, Seq())
        if one(p, "sequence_flags", 0) & 1:
            s.interned.clear()
        if "trace_packet_defaults" in p:
            s.defaults_clock = one(one(p, "trace_packet_defaults"), "timestamp_clock_id")
        if "clock_snapshot" in p:
            clocks = {one(c, "clock_id"): c for c in one(p, "clock_snapshot")["clocks"]}
            expect(6 in clocks, "the clock snapshot has no BOOTTIME")
            if 64 in clocks:
                expect(one(clocks[64], "is_incremental") == "true", "clock 64 is not incremental")
                expect(one(clocks[64], "timestamp") == one(clocks[6], "timestamp"), "clock 64 != BOOTTIME")
                s.clock = one(clocks[64], "timestamp")
            continue
        for idata in p.get("interned_data", []):
            for k, lst in idata.items():
                for e in lst:
                    s.interned[k][one(e, "iid")] = e
        ts = one(p, "timestamp")
        if ts is not None:
            if s.defaults_clock == 64:
                expect(s.clock is not None, "incremental timestamp before the clock snapshot")
                s.clock += ts
                ts = s.clock
            expect(one(p, "sequence_flags", 2) & 2 or s.defaults_clock != 64, "interned use without SEQ_NEEDS")
        yield p, ts, s


def name_of(s, kind, iid):
    e = s.interned[kind].get(iid)
    expect(e is not None, f"{kind} iid {iid} used before it was interned")
    return one(e, "name", one(e, "str"))


def check_trace(protos, path, truth_path):
    import json
    truth = json.load(open(truth_path, encoding="utf-8"))
    pkts, compressed = packets(path)
    ps = decode(protos, pkts)
    expect(len(ps) == len(pkts), f"protoc decoded {len(ps)} packets of {len(pkts)}")
    tracks = {}
    events = collections.Counter()
    open_slices = collections.defaultdict(list)
    nslices = nends = closed_end = closed_outer = unmatched = 0
    loss_slices = 0
    counters = collections.defaultdict(list)
    for p, ts, s in walk(ps):
        if "track_descriptor" in p:
            d = one(p, "track_descriptor")
            uuid = one(d, "uuid")
            expect(uuid not in tracks, f"track uuid {uuid} described twice")
            tracks[uuid] = d
            continue
        te = one(p, "track_event")
        if te is None:
            continue
        t = one(te, "track_uuid")
        expect(t in tracks, f"track {t} used before its descriptor")
        d = tracks[t]
        typ = one(te, "type")
        if typ == "TYPE_COUNTER":
            counters[one(d, "name")].append((ts, float(one(te, "double_counter_value"))))
            continue
        if one(d, "name", "").startswith("losses "):
            if typ == "TYPE_SLICE_BEGIN":
                loss_slices += 1
            continue
        if "thread" in d:
            th = one(d, "thread")
            key = (one(th, "pid"), one(th, "tid"))
        else:
            m = re.fullmatch(r"cpu (\d+) \(no thread record\)", one(d, "name", ""))
            expect(m, f"an event on track {dict(d)}")
            key = (0, int(m.group(1)))
        ann = {name_of(s, "debug_annotation_names", one(a, "name_iid")) if "name_iid" in a else one(a, "name")
               for a in te.get("debug_annotations", [])}
        if typ == "TYPE_SLICE_END":
            expect(open_slices[t], f"slice end without begin on {key}")
            nm = open_slices[t].pop()
            if "tracebuf_closed" in ann:
                why = one(one(te, "debug_annotations"), "string_value")
                if why.startswith("at the end"):
                    closed_end += 1
                else:
                    closed_outer += 1
            else:
                nends += 1
                events[(ts, key, nm + "_end")] += 1
            continue
        name = name_of(s, "event_names", one(te, "name_iid"))
        cat = name_of(s, "event_categories", one(te, "category_iids"))
        expect(name.startswith(cat + ":"), f"category {cat} of {name}")
        if typ == "TYPE_SLICE_BEGIN":
            nslices += 1
            open_slices[t].append(name)
            events[(ts, key, name + "_begin")] += 1
        else:
            expect(typ == "TYPE_INSTANT", f"type {typ}")
            events[(ts, key, name)] += 1
            unmatched += name.endswith("_end")
        want_ann = {"http:request_begin": {"url"}, "http:request_end": {"status"}, "app:msg": {"text", "x"},
                    "app:tick": {"n"}}.get(name)
        if want_ann:
            expect(ann == want_ann, f"annotations of {name}: {ann}")
    want = collections.Counter()
    for e in truth["events"]:
        key = (e["pid"], e["tid"]) if e["tid"] else (0, e["cpu"])
        want[(e["ts"], key, e["event"])] += 1
    if events != want:
        fail(f"events differ: missing {list((want - events).items())[:3]}, extra {list((events - want).items())[:3]}")
    expect(all(not v for v in open_slices.values()), "slices left open")
    sp = truth["spans"]
    expect(nslices == sp["B"] and nends + closed_end + closed_outer == sp["E"], f"slices {nslices}/{nends}")
    expect((unmatched, closed_end, closed_outer) == (sp["unmatched_ends"], sp["closed_at_end"],
                                                    sp["closed_by_outer_end"]), "unmatched/closed counts")
    procs = {one(one(d, "process"), "pid"): one(one(d, "process"), "process_name") for d in tracks.values()
             if "process" in d}
    for pid, name in truth["procs"].items():
        expect(procs.get(int(pid)) == name, f"process {pid} named {procs.get(int(pid))}")
    for d in tracks.values():
        if "thread" in d:
            th = one(d, "thread")
            expect(one(th, "thread_name") == f"tid {one(th, 'tid')}", f"thread name {dict(th)}")
            expect(one(d, "parent_uuid") in tracks and "process" in tracks[one(d, "parent_uuid")], "thread parent")
    expect(loss_slices == len(truth["lost_events"]) + len(truth["lost_packets"]), f"{loss_slices} loss slices")
    for cpu, n in truth["lost_events"].items():
        vals = counters.get(f"cpu {cpu} lost events")
        expect(vals and vals[-1][1] == n, f"cpu {cpu} lost events counter {vals}")
    ncpu = len({e["cpu"] for e in truth["events"]})
    total = 0.0
    for cpu in range(ncpu):
        vals = sorted(counters.get(f"cpu {cpu} events/s", []))
        expect(vals, f"no events/s counter for cpu {cpu}")
        for (t0, v), (t1, _) in zip(vals, vals[1:]):
            total += v * (t1 - t0) / 1e9
        expect(vals[-1][1] == 0, "the rate does not return to 0 at the end")
    expect(abs(total - len(truth["events"])) < 0.5, f"events/s counters integrate to {total}")
    print(f"ok: perfetto: {len(ps)} packets ({compressed} compressed chunks), {sum(events.values())} events, "
          f"{nslices} slices, {len(tracks)} tracks")


def check_profile(protos, path, folded_path, overruns):
    pkts, _ = packets(path)
    ps = decode(protos, pkts)
    got = collections.Counter()
    for p, ts, s in walk(ps):
        smp = one(p, "perf_sample")
        if smp is None:
            continue
        expect(ts is not None, "a sample without timestamp")
        cs = s.interned["callstacks"].get(one(smp, "callstack_iid"))
        expect(cs is not None, "callstack not interned")
        names = []
        for fid in cs["frame_ids"]:
            fr = s.interned["frames"].get(fid)
            expect(fr is not None, f"frame {fid} not interned")
            names.append(name_of(s, "function_names", one(fr, "function_name_id")))
            mp = s.interned["mappings"].get(one(fr, "mapping_id"))
            expect(mp is not None, "mapping not interned")
            expect(one(mp, "build_id") in s.interned["build_ids"], "build id not interned")
            for pid in mp["path_string_ids"]:
                expect(pid in s.interned["mapping_paths"], "mapping path not interned")
        got[";".join(names)] += 1
    want = collections.Counter()
    for line in open(folded_path, encoding="utf-8"):
        stack, n = line.rsplit(" ", 1)
        want[stack.split(";", 1)[1]] += int(n)
    for k, v in overruns.items():
        want[k] -= v
    expect(got == want, f"perf samples by stack {dict(got)}, expected {dict(want)}")
    print(f"ok: perfetto profile: {sum(got.values())} samples in {len(got)} stacks")


def print_slices(protos, path):
    """one line per thread slice, sorted: NAME PID TID BEGIN_NS END_NS (the end's
    time; `closed` appended when tracebuf closed it: at the end, by an outer end)"""
    pkts, _ = packets(path)
    ps = decode(protos, pkts)
    tracks, open_slices, out = {}, collections.defaultdict(list), []
    for p, ts, s in walk(ps):
        if "track_descriptor" in p:
            d = one(p, "track_descriptor")
            tracks[one(d, "uuid")] = d
            continue
        te = one(p, "track_event")
        if te is None:
            continue
        t = one(te, "track_uuid")
        expect(t in tracks, f"track {t} used before its descriptor")
        if "thread" not in tracks[t]:
            continue
        th = one(tracks[t], "thread")
        typ = one(te, "type")
        if typ == "TYPE_SLICE_BEGIN":
            open_slices[t].append((name_of(s, "event_names", one(te, "name_iid")), ts))
        elif typ == "TYPE_SLICE_END":
            expect(open_slices[t], f"slice end without begin on {dict(th)}")
            nm, b = open_slices[t].pop()
            ann = {name_of(s, "debug_annotation_names", one(a, "name_iid")) if "name_iid" in a else one(a, "name")
                   for a in te.get("debug_annotations", [])}
            out.append(f"{nm} {one(th, 'pid')} {one(th, 'tid')} {b} {ts}" + (" closed" if "tracebuf_closed" in ann else ""))
    expect(all(not v for v in open_slices.values()), "slices left open")
    print("\n".join(sorted(out)))


def main():
    mode, protos = sys.argv[1], sys.argv[2]
    if mode == "trace":
        check_trace(protos, sys.argv[3], sys.argv[4])
    elif mode == "profile":
        over = dict((a.rsplit("=", 1)[0], int(a.rsplit("=", 1)[1])) for a in sys.argv[5:])
        check_profile(protos, sys.argv[3], sys.argv[4], over)
    elif mode == "same":
        a, ca = packets(sys.argv[3])
        b, cb = packets(sys.argv[4])
        expect(a == b, f"{len(a)} and {len(b)} packets differ")
        expect(ca > 0 and cb == 0, f"compressed chunks: {ca} and {cb}")
        print(f"ok: the same {len(a)} packets, {ca} compressed chunk(s) in the first")
    elif mode == "slices":
        print_slices(protos, sys.argv[3])
    else:
        fail("mode: trace, profile, same or slices")


if __name__ == "__main__":
    main()
