# SPDX-License-Identifier: MIT
# t_workload_payload16_writes_the_lttng_bench_event.sh - `tracebuf-workload --payload 16` writes
# workload:ev16 { seq, value }, the 16-byte event of bench/lttng/'s LTTng-UST program (issue 30:
# make bench's equal-load group gives both tracers the same event stream): only that event, two
# u64 fields, per thread seq 0..N-1 and the xorshift values both programs compute from the same
# seed; the `workload:` line gives the process's CPU time; --payload takes 16 or 28 only.
# --rate keeps its pace at any rate although the clock is read only every few events: a
# program's wall time is at least its last event's due time (a bound that load cannot break);
# --floor-area takes powers of two only.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

"$CLI" record -q -o "$T/t" -- "$WL" --payload 16 --threads 2 --events 300 --rate 100000 > "$T/wl.out" ||
	fail "record of --payload 16 failed"
grep -Eq '^workload: wall_ns [0-9]+ cpu_ns [0-9]+ proc_cpu_ns [0-9]+$' "$T/wl.out" ||
	{ cat "$T/wl.out"; fail "no proc_cpu_ns in the workload: line"; }
w=$(awk '/^written:/{print $2}' "$T/wl.out")
[ "$w" = 600 ] || fail "written: $w, want 600"
"$CLI" dump --format json "$T/t" > "$T/d.json" || fail "dump"
python3 - "$T/d.json" <<'PY' || fail "the events are not workload:ev16 { seq, value } as the LTTng program writes them"
import json, sys
G, M = 0x9E3779B97F4A7C15, (1 << 64) - 1
def xs(s):
    s ^= (s << 13) & M; s ^= s >> 7; s ^= (s << 17) & M
    return s
ev = [json.loads(l) for l in open(sys.argv[1])]
ev = [e for e in ev if not e["event"].startswith("tracebuf:")]
assert len(ev) == 600, len(ev)
by = {}
for e in ev:
    assert e["event"] == "workload:ev16", e["event"]
    assert sorted(e["fields"]) == ["seq", "value"], e["fields"]
    by.setdefault(e["tid"], []).append(e["fields"])
assert len(by) == 2, by.keys()
firsts = set()
for f in by.values():
    f.sort(key=lambda x: x["seq"])
    assert [x["seq"] for x in f] == list(range(300))
    # thread k's values: xorshift from (k + 1) * GOLDEN | 1, as bench_lttng_app.c's workload mode
    firsts.add(f[0]["value"])
    for a, b in zip(f, f[1:]):
        assert b["value"] == xs(a["value"]), (a, b)
assert firsts == {xs(((k + 1) * G & M) | 1) for k in range(2)}, firsts
PY
"$CLI" list "$T/t" | grep -qx "workload:tick" || fail "the trace's metadata lacks workload:tick"

"$WL" --payload 20 --events 1 > /dev/null 2> "$T/bad.err"
[ $? -eq 2 ] || fail "--payload 20 not a usage error"
grep -q -- "--payload 20: 16 (workload:ev16) or 28" "$T/bad.err" || { cat "$T/bad.err"; fail "--payload 20: no clear message"; }
# the last event of --rate R --events N is due at (N-1)/R s; pace() sleeps until an event is
# due when it is more than 1 ms early, and the clock is read at most every 64 events
wall_at_least() { # rate events min_ms
	"$WL" --payload 16 --events "$2" --rate "$1" > "$T/pace.out" 2> /dev/null || fail "--rate $1 failed"
	ns=$(awk '/^workload: wall_ns/{print $3}' "$T/pace.out")
	[ "${ns:-0}" -ge $(($3 * 1000000)) ] ||
		fail "--rate $1 --events $2 took $ns ns, less than its last event's due time ($3 ms): not paced"
}
wall_at_least 100 20 180
wall_at_least 20000 2001 90
wall_at_least 1000000 200001 190

"$WL" --floor --floor-area 1048576 --events 1000 > "$T/floor.out" || fail "--floor --floor-area 1048576 failed"
grep -qx "written: 1000" "$T/floor.out" || { cat "$T/floor.out"; fail "--floor-area: written is not 1000"; }
"$WL" --floor --floor-area 100 --events 1 > /dev/null 2> "$T/bad.err"
[ $? -eq 2 ] || fail "--floor-area 100 (not a power of two) not a usage error"
grep -q -- "--floor-area 100: a power of two" "$T/bad.err" || { cat "$T/bad.err"; fail "--floor-area 100: no clear message"; }
echo PASS
