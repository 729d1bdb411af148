# SPDX-License-Identifier: MIT
# t_demo_runs_a_paced_workload.sh - `make demo` records the workload as a steady service would
# run (DEMO_WORKLOAD in the Makefile: --rate, events per second per thread), not a full-speed
# burst that loses events on a busy machine (issue 26, item 8; the stress is make bench's).
# Checked: the Makefile's demo paces; the pace is real (the trace spans at least the time the
# schedule takes: a lower bound, which a loaded machine only lengthens); the trace is whole.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
SRC=${TB_SRC:?}

args=$(sed -n 's/^DEMO_WORKLOAD *= *//p' "$SRC/Makefile")
[ -n "$args" ] || fail "no DEMO_WORKLOAD in the Makefile"
grep -q '^demo:' "$SRC/Makefile" && grep -A3 '^demo:' "$SRC/Makefile" | grep -q 'tracebuf-workload \$(DEMO_WORKLOAD)' ||
	fail "make demo does not run tracebuf-workload \$(DEMO_WORKLOAD)"
rate=$(echo "$args" | sed -n 's/.*--rate \([0-9]*\).*/\1/p')
events=$(echo "$args" | sed -n 's/.*--events \([0-9]*\).*/\1/p')
[ -n "$rate" ] && [ "$rate" -gt 0 ] || fail "the demo's workload is not paced (--rate): $args"
[ -n "$events" ] || fail "the demo's workload gives no --events: $args"

# shellcheck disable=SC2086 # the Makefile's words
"$CLI" record -q -o "$T/demo" -- "$WL" $args > "$T/wl.out" || fail "record of the demo failed"
w=$(awk '/^written:/{print $2}' "$T/wl.out")
"$VERIFY" --written "$w" "$T/demo" || fail "the demo's trace does not account for its $w events"
"$CLI" report --format json "$T/demo" > "$T/r.json" || fail "report"
dur=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["duration_ns"])' "$T/r.json")
# event i of a thread is due at i / rate s: the last at (events - 1) / rate
min=$(( (events - 1) * 1000000000 / rate ))
[ "$dur" -ge "$min" ] || fail "the trace spans $dur ns, less than the $min ns the pace takes: --rate is not kept"

# --rate refuses what is not a number
"$WL" --rate x --events 1 > /dev/null 2>&1 && fail "--rate x accepted"
echo PASS
