# SPDX-License-Identifier: MIT
# t_reader_reads_format_3_traces.sh - traces written before format 4 (loss causes as lost_<cause>
# fields of the packet context, a 32-bit cpu_id and tb_reserved: docs/FORMAT.md, section 2) are
# still read: a recorded trace rewritten into that layout (bytes and metadata, by the script
# below, not by tracebuf) gives the same `dump` and the same losses by cause in `report` and
# `dump --format json` as the original; babeltrace2, given it, shows the old context fields
# (which says the rewrite is that layout).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
PY=${PY:-python3}

"$CLI" record --sb-size 16K --sb-count 2 -o "$T/new" -- "$WL" --threads 2 --events 50000 > /dev/null 2> "$T/rec.err" ||
	{ cat "$T/rec.err"; fail "record"; }
"$PY" - "$T/new" "$T/old" <<'PYEOF' || fail "cannot rewrite the trace into format 3"
import os, re, shutil, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
causes = ["full", "toobig", "overwritten", "timeout", "busy", "noconsumer", "invalid", "disk", "relay"]
meta = open(os.path.join(src, "metadata")).read()
meta, n = re.subn(r"\t\t/\*[^\n]*\*/\n\t\tuint64_t tb_lost_by_cause\[9\];\n", "", meta)
assert n == 1, "no tb_lost_by_cause in the metadata"
old_ctx = "\t\tuint32_t cpu_id;\n\t\tuint32_t tb_reserved;\n" + "".join("\t\tuint64_t lost_%s;\n" % c for c in causes)
meta, n = re.subn(r"\t\tuint64_t cpu_id;\n", old_ctx, meta)
assert n >= 1, "no 64-bit cpu_id in the metadata"
open(os.path.join(dst, "metadata"), "w").write(meta)
for f in os.listdir(src):
    if f == "metadata" or f.startswith("."):
        continue
    b = bytearray(open(os.path.join(src, f), "rb").read())
    off = 0
    while off < len(b):
        new = bytes(b[off:off + 160])
        psize = struct.unpack_from("<Q", new, 128)[0] // 8
        cpu = struct.unpack_from("<Q", new, 152)[0]
        # format 3: header 0-31, context 32-79, cpu_id u32, tb_reserved u32, lost_<cause> 88-159
        b[off:off + 160] = new[0:32] + new[104:152] + struct.pack("<II", cpu, 0) + new[32:104]
        assert psize >= 160
        off += psize
    open(os.path.join(dst, f), "wb").write(b)
PYEOF

"$CLI" dump "$T/new" > "$T/new.dump" 2> "$T/new.derr" || { cat "$T/new.derr"; fail "dump (format 4)"; }
"$CLI" dump "$T/old" > "$T/old.dump" 2> "$T/old.derr" || { cat "$T/old.derr"; fail "dump (format 3)"; }
[ -s "$T/new.dump" ] || fail "dump printed nothing"
cmp -s "$T/new.dump" "$T/old.dump" || { diff "$T/new.dump" "$T/old.dump" | head -5; fail "dump differs between the two formats"; }
[ ! -s "$T/old.derr" ] || { cat "$T/old.derr"; fail "the reader complains about the format 3 trace"; }
losses() {
	"$CLI" report --format json "$1" | "$PY" -c '
import json, sys
r = json.load(sys.stdin)["lost"]
print(r["events"], sorted((k, v) for k, v in r["by_cause"].items() if v), r["cause_unknown"])'
}
a=$(losses "$T/new") && b=$(losses "$T/old") || fail "report --format json"
[ "$a" = "$b" ] || fail "report: format 4 says '$a', format 3 '$b'"
case $a in "0 "*) fail "this recording should lose events (rings of 2 x 16K): $a" ;; *"'full'"*" 0") ;; *) fail "losses by cause unknown: $a" ;; esac
echo "  both formats: lost $a"
"$CLI" dump --format json "$T/old" | grep -q '"causes": *{[^}]*"full"' || fail "dump --format json of format 3: no cause in the loss notices"
if command -v babeltrace2 > /dev/null; then
	babeltrace2 "$T/old" 2> /dev/null | head -1 | grep -q 'cpu_id = [0-9]*, tb_reserved = 0, lost_full = ' ||
		fail "babeltrace2 does not see the format 3 context in the rewritten trace"
fi
echo PASS
