# SPDX-License-Identifier: MIT
# t_profile_report_hot_ratio.sh - end to end: `tracebuf profile -F 999` of
# tests/profile/prof_hot (hot_a and hot_b burn CPU 3:1), then `report
# --profile` ranks hot_a first and hot_b second by self samples, hot_a's share
# of (hot_a + hot_b) by total samples (the CPU time in each, callees included)
# is 75% +- 10 points; `convert --to folded` has the same counts (summed over
# the stacks that end in them) as the report's self column.  Runs alone
# (RUN_SERIAL, tests/CMakeLists.txt, like every t_profile_* test).
# Skipped (77) where the sampler is not built (see tests/profile/prof_env.sh).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"   # skips where the sampler cannot run (TSan), ASan options
skip() { echo "SKIP: $*"; exit 77; }
HOT=$P/prof_hot
[ -x "$HOT" ] || skip "$HOT is not built"
unset DEBUGINFOD_URLS

# The ratio is judged on at least MIN_SAMPLES delivered samples: the kernel
# delivers CPU-timer signals only at ticks where the thread runs, so on a
# machine busy with other work 3 s of CPU time can bring as few as ~120
# samples (each standing for ~20 periods), too few for +-10 points.  Such a
# run is repeated (at most 3 times); the ratio itself is never retried.
# Three starved runs in a row (seen only with CPU hogs on every CPU) skip the
# test saying so: the claim cannot be judged there.  Alone on this 2-CPU VM a
# run delivers ~750 samples.
MIN_SAMPLES=300
for attempt in 1 2 3; do
	rm -rf "$T/trace"
	"$CLI" profile -q -F 999 -o "$T/trace" -- "$HOT" 3 > "$T/hot.out" 2> "$T/hot.err" \
		|| fail "tracebuf profile of prof_hot failed: $(cat "$T/hot.err")"
	"$CLI" report --profile "$T/trace" > "$T/report" 2> "$T/report.err" || fail "report --profile: $(cat "$T/report.err")"
	n=$(awk '/^profile / { gsub(",", "", $2); print $2; exit }' "$T/report")
	[ "${n:-0}" -ge $MIN_SAMPLES ] && break
	echo "attempt $attempt: only ${n:-0} samples delivered (machine busy), want >= $MIN_SAMPLES"
done
[ "${n:-0}" -ge $MIN_SAMPLES ] || skip "the machine is too busy: 3 runs of 3 s CPU time each delivered fewer than $MIN_SAMPLES timer samples"
grep -q '^symbols   none' "$T/report" && skip "tracebuf was built without libdw: no function names"

# the self table: "samples  %  function  module" rows after the "self:" line
awk '/^self:/ { s = 1; next } s == 1 { s = 2; next } s == 2 && NF == 0 { exit } s == 2 { print }' "$T/report" > "$T/self"
first=$(awk 'NR == 1 { print $3 }' "$T/self"); second=$(awk 'NR == 2 { print $3 }' "$T/self")
[ "$first" = hot_a ] && [ "$second" = hot_b ] \
	|| fail "self ranks: 1st '$first', 2nd '$second', want hot_a, hot_b; report:
$(cat "$T/report")"
a=$(awk '$3 == "hot_a" { gsub(",", "", $1); print $1 }' "$T/self")
b=$(awk '$3 == "hot_b" { gsub(",", "", $1); print $1 }' "$T/self")
# the ratio is of CPU time spent in each, callees included (prof_hot reads its CPU
# clock from inside them): the total table
awk '/^total:/ { s = 1; next } s == 1 { s = 2; next } s == 2 && NF == 0 { exit } s == 2 { print }' "$T/report" > "$T/total"
ta=$(awk '$3 == "hot_a" { gsub(",", "", $1); print $1 }' "$T/total")
tb=$(awk '$3 == "hot_b" { gsub(",", "", $1); print $1 }' "$T/total")
[ "$((ta + tb))" -ge 100 ] || fail "only $((ta + tb)) samples in hot_a + hot_b: too few to judge the ratio"
share=$(( (100 * ta + (ta + tb) / 2) / (ta + tb) ))
[ "$share" -ge 65 ] && [ "$share" -le 85 ] || fail "hot_a has $share% of hot_a + hot_b ($ta vs $tb), want 75 +- 10"

# folded: the leaf counts agree with the self column
"$CLI" convert -q "$T/trace" --to folded -o "$T/folded" || fail "convert --to folded"
leaf_sum() { awk -v fn="$1" '{ c = $NF; l = $0; sub(/ [0-9]+$/, "", l); n = split(l, f, ";"); if (f[n] == fn) s += c }
	END { print s + 0 }' "$T/folded"; }
fa=$(leaf_sum hot_a); fb=$(leaf_sum hot_b)
[ "$fa" = "$a" ] && [ "$fb" = "$b" ] || fail "folded leaf counts $fa/$fb differ from the report's $a/$b"
echo "PASS: hot_a $ta, hot_b $tb periods (total; self $a, $b): $share%, from $n delivered samples"
