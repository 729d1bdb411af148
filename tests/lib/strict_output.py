# SPDX-License-Identifier: MIT
"""strict_output.py MODE FILE... - the strict checks of what tracebuf writes from hostile input
(t_every_output_escapes_hostile_strings.sh, t_invalid_utf8_converts_to_strict_formats.sh):

  text FILE...      well-formed UTF-8 (RFC 3629: Python's strict decoder refuses surrogates,
                    overlong forms, > U+10FFFF) and no control character raw: no C0 byte but
                    newline and tab, no DEL, no C1 control (U+0080-U+009F)
  json FILE         the same, and one JSON value or one per line (JSON lines), parsed
                    strictly, with no lone surrogate in any string (\\ud800 escapes)
  html FILE         text, and the JSON the page embeds in <script type="application/json">
                    parses as above
  protobuf PROTOS FILE   a Perfetto trace (tests/lib/perfetto_check.py's reader): protoc
                    decodes it without complaint, and every string it holds is well-formed
                    UTF-8
Exit 0, or 1 with the first problem named.
"""
import json
import os
import re
import sys


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def text(path):
    b = open(path, "rb").read()
    try:
        s = b.decode("utf-8", "strict")
    except UnicodeDecodeError as e:
        fail(f"{path}: ill-formed UTF-8 at byte {e.start}: {b[max(0, e.start - 20):e.start + 8]!r}")
    for i, ch in enumerate(s):
        c = ord(ch)
        if (c < 0x20 and ch not in "\n\t") or 0x7f <= c <= 0x9f:
            fail(f"{path}: control character U+{c:04X} raw at character {i}: {s[max(0, i - 20):i + 8]!r}")
    return s


def no_lone_surrogate(v, where):
    if isinstance(v, str):
        try:
            v.encode("utf-8", "strict")
        except UnicodeEncodeError:
            fail(f"{where}: a string holds a lone surrogate: {v[:60]!r}")
    elif isinstance(v, list):
        for x in v:
            no_lone_surrogate(x, where)
    elif isinstance(v, dict):
        for k, x in v.items():
            no_lone_surrogate(k, where)
            no_lone_surrogate(x, where)


def parse_json(s, where):
    s = s.strip()
    try:
        vals = [json.loads(s)]
    except ValueError:
        vals = []
        for n, line in enumerate(s.split("\n")):
            try:
                vals.append(json.loads(line))
            except ValueError as e:
                fail(f"{where}: line {n + 1} is not JSON ({e}): {line[:100]!r}")
    for v in vals:
        no_lone_surrogate(v, where)
    return vals


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "text":
        for p in args:
            text(p)
    elif mode == "json":
        parse_json(text(args[0]), args[0])
    elif mode == "html":
        s = text(args[0])
        blocks = re.findall(r'<script[^>]*type="application/json"[^>]*>(.*?)</script>', s, re.S)
        if not blocks:
            fail(f"{args[0]}: no embedded JSON found")
        for b in blocks:
            parse_json(b, args[0])
    elif mode == "protobuf":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import subprocess
        import perfetto_check as pc
        protos, path = args
        pkts, _ = pc.packets(path)
        raw = b"".join(b"\x0a" + pc.enc_varint(len(p)) + p for p in pkts)
        r = subprocess.run(["protoc", "-I" + protos, "--decode=perfetto.protos.Trace",
                            "protos/perfetto/trace/trace.proto"], input=raw, capture_output=True, cwd=protos)
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode != 0 or "UTF-8" in err:
            fail(f"{path}: protoc: {err[:300]}")
        nstr = 0
        esc = re.compile(rb'\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)')
        simple = {b"n": b"\n", b"t": b"\t", b"r": b"\r", b'"': b'"', b"'": b"'", b"\\": b"\\"}

        def unesc(m):
            e = m.group(1)
            if e[:1] in b"01234567":
                return bytes([int(e, 8) & 255])
            if e[:1] == b"x":
                return bytes([int(e[1:], 16)])
            return simple.get(e, e)

        for m in re.finditer(rb'^\s*[A-Za-z_][A-Za-z0-9_]*: "((?:[^"\\]|\\.)*)"$', r.stdout, re.M):
            b = esc.sub(unesc, m.group(1))
            try:
                b.decode("utf-8", "strict")
            except UnicodeDecodeError:
                fail(f"{path}: a string field is not UTF-8: {m.group(0)[:120]!r}")
            nstr += 1
        if not nstr:
            fail(f"{path}: no string field decoded")
    else:
        fail("mode: text, json, html or protobuf")


if __name__ == "__main__":
    main()
