# SPDX-License-Identifier: MIT
# hostile_elf.py OUTDIR - writes the ELF corpus of `tracebuf list`: small ELF64 files built here
# from their parts (header, a data blob, section names, section headers), each with one defect a
# damaged or hostile file can have.  Prints one line per file: NAME EXPECT, EXPECT = "ok" (listed,
# exit 0), "err" (a clear error, exit 1) or "big" (exit 1, the error names the bound passed:
# "more than").  Sparse files are made with truncate (no disk).
import os, struct, sys

out = sys.argv[1]
SH = "<IIQQQQIIQQ"


def elf(name, sections, shoff=None, shnum=None, shstrndx=None, size=None, cut=None, strs_at=None,
        strs_size=None, ident=b"\x7fELF\x02\x01\x01"):
    """sections: (name, type, offset or None (data appended), size or None (len(data)), data)"""
    names = b"\0" + b"".join(n + b"\0" for n, *_ in sections) + b".shstrtab\0"
    body = bytearray(64)
    offs = []
    for n, t, off, sz, data in sections:
        if off is None:
            off = len(body)
            body += data
        offs.append(off)
    strs_off = len(body)
    body += names
    while len(body) % 8:
        body += b"\0"
    sh = bytearray(64)
    no = 1
    for (n, t, off, sz, data), o in zip(sections, offs):
        sh += struct.pack(SH, no, t, 0, 0, o, len(data) if sz is None else sz, 0, 0, 1, 0)
        no += len(n) + 1
    sh += struct.pack(SH, no, 3, 0, 0, strs_off if strs_at is None else strs_at,
                      len(names) if strs_size is None else strs_size, 0, 0, 1, 0)
    real = len(body)
    body += sh
    nsh = len(sections) + 2
    eh = ident + b"\0" * (16 - len(ident))
    eh += struct.pack("<HHIQQQIHHHHHH", 2, 62, 1, 0, 0, real if shoff is None else shoff, 0, 64, 0, 0, 64,
                      nsh if shnum is None else shnum, nsh - 1 if shstrndx is None else shstrndx)
    body[0:64] = eh
    if cut is not None:
        body = body[:cut]
    p = os.path.join(out, name)
    with open(p, "wb") as f:
        f.write(body)
        if size:
            f.truncate(size)
    return body


EV = b"tracebuf_events"
good = b"app:a\0{(u32, id)}\0\0\0app:b\0{}\0"
G4 = 4 << 30
cases = []


def case(name, expect, *a, **k):
    elf(name, *a, **k)
    cases.append((name, expect))


case("good", "ok", [(EV, 1, None, None, good)])
# truncated: in the section headers, in the data, at the header
b = elf("tmp", [(EV, 1, None, None, good)])
for cut in (len(b) - 10, 40, 70):
    case("truncated_%d" % cut, "err", [(EV, 1, None, None, good)], cut=cut)
os.unlink(os.path.join(out, "tmp"))
# sections past the end of the file, and offsets that wrap
case("section_past_eof", "err", [(EV, 1, 1 << 20, 100, good)])
case("section_size_wraps", "err", [(EV, 1, 64, (1 << 64) - 32, good)])
case("section_nobits", "err", [(EV, 8, 64, 16, good)])
case("names_past_eof", "err", [(EV, 1, None, None, good)], strs_at=1 << 30)
case("headers_past_eof", "err", [(EV, 1, None, None, good)], shoff=1 << 40)
case("shnum_huge", "err", [(EV, 1, None, None, good)], shnum=65535)
case("shstrndx_out", "err", [(EV, 1, None, None, good)], shstrndx=200)
# huge declared sizes in a sparse file (4 GiB of holes, a few KiB of data)
case("sparse_events_4g", "big", [(EV, 1, 4096, G4 - 8192, b"")], size=G4)
case("sparse_names_4g", "big", [(EV, 1, None, None, good)], strs_at=4096, strs_size=G4 - 8192, size=G4)
# a big real section of valid entries beyond the bound (16 MiB + 1)
case("events_over_16m", "big", [(EV, 1, 4096, (16 << 20) + 1, b"")], size=(16 << 20) + 8192)
# zeros where entries should follow (NUL padding far longer than alignment)
case("padding_run", "big", [(EV, 1, None, None, good + b"\0" * 10000 + good)])
# names without NUL, fields without NUL or braces
case("name_no_nul", "err", [(EV, 1, None, None, b"app:" + b"x" * 100)])
case("fields_no_nul", "err", [(EV, 1, None, None, b"app:a\0{(u32, id)")])
case("fields_no_brace", "err", [(EV, 1, None, None, b"app:a\0(u32, id)\0")])
case("section_name_no_nul", "err", [(EV, 1, None, None, good)], strs_size=3)
# overlapping tables: the events section over the ELF header and the section headers, names
# over the events
case("events_over_header", "err", [(EV, 1, 0, 128, b"")])
# more entries than the bound (1048576): 5 bytes each, 5 MiB
case("entries_over_1m", "big", [(EV, 1, None, None, b"a\0{}\0" * ((1 << 20) + 1))])
case("names_over_events", "err", [(EV, 1, None, None, good)], strs_at=64)
# hostile names: terminal escapes, C1, ill-formed UTF-8 (listed escaped, exit 0)
case("hostile_names", "ok", [(EV, 1, None, None,
                                b"app:\x1b]0;PWN\x07\x1b[2J\0{(u32, \x9b1m)}\0app:\xc2\x9b\xff\xed\xa0\x80\0{}\0")])
# not 64-bit little-endian
case("elf32", "err", [(EV, 1, None, None, good)], ident=b"\x7fELF\x01\x01\x01")
for n, e in cases:
    print(n, e)


def sym_elf(path, symsize, total, symoff=0x2000):
    """for the symboliser (report --profile): an ET_DYN with one PT_LOAD [0, 0x1000) and a .symtab
    of symsize bytes at symoff, the file extended (sparse) to total bytes"""
    shstr = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    strtab = b"\0evil_sym\0"
    body = bytearray(0x2000)
    body[0x1000:0x1000 + len(strtab)] = strtab
    body[0x1100:0x1100 + len(shstr)] = shstr
    sh = bytearray(64)
    sh += struct.pack(SH, 1, 1, 6, 0x100, 0x100, 0x100, 0, 0, 16, 0)
    sh += struct.pack(SH, 7, 2, 0, 0, symoff, symsize, 3, 1, 8, 24)
    sh += struct.pack(SH, 15, 3, 0, 0, 0x1000, len(strtab), 0, 0, 1, 0)
    sh += struct.pack(SH, 23, 3, 0, 0, 0x1100, len(shstr), 0, 0, 1, 0)
    body[0x1200:0x1200 + len(sh)] = sh
    body[64:64 + 56] = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, 0x1000, 0x1000, 0x1000)
    body[0:64] = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, 0x1200, 0,
                                                                      64, 56, 1, 64, 5, 4)
    with open(path, "wb") as f:
        f.write(body)
        f.truncate(max(total, len(body)))


# the symboliser's corpus (OUT/sym_*, listed by the test itself): a 4 GiB symbol table in a
# sparse file, and one past the end of the file
sym_elf(os.path.join(out, "sym_sparse_4g"), G4 - 0x4000, G4)
sym_elf(os.path.join(out, "sym_past_eof"), 1 << 30, 0)
