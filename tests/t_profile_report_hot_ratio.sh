# SPDX-License-Identifier: MIT
# t_profile_report_hot_ratio.sh - end to end: `tracebuf profile -F 999` of
# tests/profile/prof_hot (hot_a and hot_b burn CPU 3:1), then `report
# --profile` ranks hot_a first and hot_b second by self samples, hot_a's share
# of (hot_a + hot_b) by total samples (the CPU time in each, callees included)
# is 75% +- 10 points; `convert --to folded` has the same counts (summed over
# the stacks that end in them) as the report's self column.
# Skipped (77) where the sampler is not built (see tests/profile/prof_env.sh).
set -u
. "$(dirname "$0")/lib/recorder_env.sh"
. "$(dirname "$0")/profile/prof_env.sh"   # skips where the sampler cannot run (TSan), ASan options
skip() { echo "SKIP: $*"; exit 77; }
HOT=$P/prof_hot
[ -x "$HOT" ] || skip "$HOT is not built"
unset DEBUGINFOD_URLS

"$CLI" profile -q -F 999 -o "$T/trace" -- "$HOT" > "$T/hot.out" 2> "$T/hot.err" \
	|| fail "tracebuf profile of prof_hot failed: $(cat "$T/hot.err")"
"$CLI" report --profile "$T/trace" > "$T/report" 2> "$T/report.err" || fail "report --profile: $(cat "$T/report.err")"
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
echo "PASS: hot_a $ta, hot_b $tb samples (total; self $a, $b): $share%"
