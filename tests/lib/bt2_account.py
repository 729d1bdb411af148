# SPDX-License-Identifier: MIT
"""bt2_account.py DIR [WRITTEN] - what babeltrace2's Python bindings (not
tracebuf's code) read from trace DIR: the events delivered (tracebuf:thread
records not counted), the events it was told were discarded (sum of the
discarded-events messages' counts), whether any such count was unknown, the
packets reported lost, and the discarded events by cause of each stream's
last packet.  The causes: format 4 keeps them in the trace packet header
(uint64_t tb_lost_by_cause[N]), which babeltrace2 reads past but does not
hand out: they are read here from the stream files' bytes at the offsets the
metadata text gives (plain TSDL arithmetic: every field is byte aligned),
without tracebuf's code; formats 2-3: from the packet contexts' lost_<cause>
fields, as babeltrace2 hands them out.

Prints one line: "delivered=N discarded=D unknown=U lost_packets=P causes=c:n,..."
With WRITTEN: exits 1 unless written == delivered + discarded, no count was
unknown and the causes add up to the discarded total.  Exit 77 when the bt2
module is missing; 1 when babeltrace2 cannot read the trace."""
import os
import re
import struct
import sys

try:
    import bt2
except ImportError:
    print("SKIP: python3 module bt2 (python3-bt2) not installed")
    sys.exit(77)


CAUSES = ["full", "toobig", "overwritten", "timeout", "busy", "noconsumer", "invalid", "disk", "relay"]
SIZES = {"uint8_t": 1, "uint16_t": 2, "uint32_t": 4, "uint64_t": 8, "uint64_clock_monotonic_t": 8}


def struct_fields(text, start):
    """(type, name, count) of the struct block that follows text[start:]."""
    body = text[text.index("{", start) + 1:text.index("}", start)]
    body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
    out = []
    for decl in body.split(";"):
        m = re.match(r"\s*(\w+)\s+(\w+)(?:\[(\d+)\])?\s*$", decl)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3) or 1)))
    return out


def header_causes(d):
    """stream file -> {cause: running total} of its last packet, from the
    packet header's tb_lost_by_cause (every trace directory under d)."""
    out = {}
    for root, dirs, files in os.walk(d):
        dirs[:] = [x for x in dirs if not x.startswith(".")]
        if "metadata" not in files:
            continue
        text = open(os.path.join(root, "metadata"), encoding="utf-8", errors="replace").read()
        off = 0
        lost_off = n_lost = None
        for t, name, count in struct_fields(text, text.index("packet.header")):
            if name == "tb_lost_by_cause":
                lost_off, n_lost = off, count
            off += SIZES[t] * count
        if lost_off is None:
            continue
        ctx = off
        for t, name, count in struct_fields(text, text.index("packet.context")):
            if name == "packet_size":
                psize_off = ctx
            ctx += SIZES[t] * count
        for f in files:
            path = os.path.join(root, f)
            if f == "metadata" or f.startswith(".") or not os.path.getsize(path):
                continue
            data = open(path, "rb").read()
            at, last = 0, None
            while at + ctx <= len(data):
                last = struct.unpack_from("<%dQ" % n_lost, data, at + lost_off)
                size = struct.unpack_from("<Q", data, at + psize_off)[0] // 8
                if size < ctx:
                    break
                at += size
            if last is not None:
                out[path] = {CAUSES[k] if k < len(CAUSES) else "cause%d" % k: v for k, v in enumerate(last)}
    return out


def main():
    d = sys.argv[1]
    written = int(sys.argv[2]) if len(sys.argv) > 2 else None
    delivered = discarded = unknown = lost_packets = 0
    last_ctx = {}  # stream -> causes of its last packet
    try:
        for msg in bt2.TraceCollectionMessageIterator(d):
            t = type(msg)
            if t is bt2._EventMessageConst:
                if msg.event.name != "tracebuf:thread":
                    delivered += 1
            elif t is bt2._DiscardedEventsMessageConst:
                if msg.count is None:
                    unknown += 1
                else:
                    discarded += msg.count
            elif t is bt2._DiscardedPacketsMessageConst:
                lost_packets += msg.count or 0
            elif t is bt2._PacketBeginningMessageConst:
                ctx = msg.packet.context_field
                if ctx is not None:
                    causes = {k[5:]: int(v) for k, v in ctx.items() if k.startswith("lost_")}
                    last_ctx[msg.packet.stream.name] = causes
    except Exception as ex:  # babeltrace2 refused the trace
        print("babeltrace2 cannot read %s: %s" % (d, ex))
        sys.exit(1)
    if not any(last_ctx.values()):  # format 4: no lost_<cause> in the packet contexts
        last_ctx = header_causes(d)
    causes = {}
    for c in last_ctx.values():
        for k, v in c.items():
            causes[k] = causes.get(k, 0) + v
    shown = ",".join("%s:%d" % (k, v) for k, v in sorted(causes.items()) if v)
    print("delivered=%d discarded=%d unknown=%d lost_packets=%d causes=%s" %
          (delivered, discarded, unknown, lost_packets, shown or "none"))
    if written is None:
        return 0
    ok = True
    if unknown:
        print("FAIL: %d discarded-events messages with an unknown count" % unknown)
        ok = False
    if delivered + discarded != written:
        print("FAIL: written %d != delivered %d + discarded %d (off by %d)" %
              (written, delivered, discarded, written - delivered - discarded))
        ok = False
    if sum(causes.values()) != discarded:
        print("FAIL: the causes add up to %d, babeltrace2 counted %d discarded" %
              (sum(causes.values()), discarded))
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
