# SPDX-License-Identifier: MIT
"""relay_copy.py LOCAL_DIR RELAY_DIR [--live] - the relay daemon's copy of
every stream of LOCAL_DIR (chan_*, kernel_cpu*), packet by packet, against
the local copy (docs/FLEET.md, "The relay's copy"), read from the files'
bytes without tracebuf's code:

  - the relay's stream begins with the empty packet that announced it
    (header only: content_size == packet_size == 160 bytes), then holds the
    local stream's packets, as many, in order, and nothing after them;
  - each packet's header and context are the local one's but packet_size
    (with --live also timestamp_begin/_end: a packet sent after a live
    beacon begins at the beacon in the relay's copy, never earlier than the
    local one's nor after its end);
  - its content (content_size bytes) is the local one's, byte for byte;
  - its packet_size is the content rounded up to 8 bytes, or the local
    packet_size when that is smaller (a full packet is unchanged), and its
    padding up to there is zeros;
  - the relay daemon's index (index/<stream>.idx) has one entry per packet:
    its offset in the file and the header's packet_size, content_size,
    timestamps and discarded count.

The packet header is struct tb_packet_header (docs/FORMAT.md, section 2):
little-endian, timestamp_begin at byte 104, timestamp_end 112, content_size
120, packet_size 128 (both in bits), 160 bytes in all.  The index file is
CTF's (big-endian): magic 0xC1F1DCC1, major, minor, entry length, then
entries of offset, packet_size, content_size, timestamp_begin,
timestamp_end, events_discarded, stream_id, ...

Prints one line per stream and a total ("local L bytes, relay R bytes");
exits 1 with the first difference."""
import os
import struct
import sys

HDR = 160
ALIGN = 8  # the relay's packets: content rounded up to 8 bytes (src/relay/relay.c)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def packets(data, name):
    """[(offset, content bytes, packet bytes)] of a stream file's packets."""
    out, off = [], 0
    while off < len(data):
        if len(data) - off < HDR:
            fail(f"{name}: {len(data) - off} bytes after the last packet (offset {off})")
        content, psize = struct.unpack_from("<QQ", data, off + 120)
        if psize % 64 or content % 8 or psize // 8 < HDR or content > psize or off + psize // 8 > len(data):
            fail(f"{name}: packet at offset {off}: content_size {content}, packet_size {psize} bits "
                 f"(file {len(data)} bytes)")
        out.append((off, content // 8, psize // 8))
        off += psize // 8
    return out


def index_entries(path, name):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 16:
        fail(f"{name}: index file of {len(data)} bytes")
    magic, _major, _minor, elen = struct.unpack_from(">IIII", data, 0)
    if magic != 0xC1F1DCC1 or elen < 56 or (len(data) - 16) % elen:
        fail(f"{name}: index header magic {magic:#x}, entry length {elen}, file {len(data)} bytes")
    return [struct.unpack_from(">QQQQQQQ", data, o) for o in range(16, len(data), elen)]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    live = "--live" in sys.argv[1:]
    if len(args) != 2:
        print(__doc__)
        sys.exit(2)
    ldir, rdir = args
    names = sorted(n for n in os.listdir(ldir) if n.startswith(("chan_", "kernel_cpu")))
    if not names:
        fail(f"no stream file in {ldir}")
    tl = tr = 0
    for name in names:
        with open(os.path.join(ldir, name), "rb") as f:
            ld = f.read()
        rpath = os.path.join(rdir, name)
        if not os.path.exists(rpath):
            fail(f"{name}: not in the relay's copy {rdir}")
        with open(rpath, "rb") as f:
            rd = f.read()
        lp, rp = packets(ld, "local " + name), packets(rd, "relay " + name)
        if not rp or rp[0][1:] != (HDR, HDR):
            fail(f"relay {name}: does not begin with the empty packet that announced it: {rp[:1]}")
        if len(rp) - 1 != len(lp):
            fail(f"{name}: {len(lp)} packets locally, {len(rp) - 1} in the relay's copy after the announcement")
        for k, ((lo, lc, ls), (ro, rc, rs)) in enumerate(zip(lp, rp[1:])):
            where = f"{name} packet {k} (local offset {lo}, relay offset {ro})"
            lh, rh = bytearray(ld[lo:lo + HDR]), bytearray(rd[ro:ro + HDR])
            if live:
                lb, le = struct.unpack_from("<QQ", lh, 104)
                rb, re_ = struct.unpack_from("<QQ", rh, 104)
                if not (lb <= rb <= max(le, rb)) or re_ != max(le, rb):
                    fail(f"{where}: timestamps local {lb}..{le}, relay {rb}..{re_}")
                lh[104:120] = rh[104:120]
            lh[128:136] = rh[128:136]
            if lh != rh:
                i = next(i for i in range(HDR) if lh[i] != rh[i])
                fail(f"{where}: the headers differ at byte {i} (packet_size aside)")
            if rc != lc or rd[ro + HDR:ro + rc] != ld[lo + HDR:lo + lc]:
                fail(f"{where}: the content differs (content_size local {lc}, relay {rc} bytes)")
            want = min(ls, (lc + ALIGN - 1) // ALIGN * ALIGN)
            if rs != want:
                fail(f"{where}: packet_size {rs} bytes in the relay's copy, want {want} "
                     f"(content {lc}, local packet_size {ls})")
            if rd[ro + rc:ro + rs].strip(b"\0"):
                fail(f"{where}: padding after the content is not zeros")
        ipath = os.path.join(rdir, "index", name + ".idx")
        if not os.path.exists(ipath):
            fail(f"{name}: no index file {ipath}")
        idx = index_entries(ipath, name)
        if len(idx) != len(rp):
            fail(f"{name}: {len(idx)} index entries, {len(rp)} packets in the relay's copy")
        for k, (e, (ro, rc, rs)) in enumerate(zip(idx, rp)):
            tb, te, disc = struct.unpack_from("<QQ", rd, ro + 104) + struct.unpack_from("<Q", rd, ro + 144)
            if e[:6] != (ro, rs * 8, rc * 8, tb, te, disc):
                fail(f"{name} index entry {k}: (offset, packet_size, content_size, ts_begin, ts_end, discarded) "
                     f"= {e[:6]}, the packet's header says {(ro, rs * 8, rc * 8, tb, te, disc)}")
        print(f"  {name}: {len(lp)} packets, local {len(ld)} bytes, relay {len(rd)} bytes "
              f"(announcement {HDR} + content)")
        tl += len(ld)
        tr += len(rd)
    print(f"  total: local {tl} bytes, relay {tr} bytes")


main()
