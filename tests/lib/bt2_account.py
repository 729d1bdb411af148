# SPDX-License-Identifier: MIT
"""bt2_account.py DIR [WRITTEN] - what babeltrace2's Python bindings (not
tracebuf's code) read from trace DIR: the events delivered (tracebuf:thread
records not counted), the events it was told were discarded (sum of the
discarded-events messages' counts), whether any such count was unknown, the
packets reported lost, and the discarded events by cause as the packet
contexts carry them (lost_<cause> of each stream's last packet).

Prints one line: "delivered=N discarded=D unknown=U lost_packets=P causes=c:n,..."
With WRITTEN: exits 1 unless written == delivered + discarded, no count was
unknown and the causes add up to the discarded total.  Exit 77 when the bt2
module is missing; 1 when babeltrace2 cannot read the trace."""
import sys

try:
    import bt2
except ImportError:
    print("SKIP: python3 module bt2 (python3-bt2) not installed")
    sys.exit(77)


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
