#!/bin/sh
# SPDX-License-Identifier: MIT
# skip_reasons.sh CTEST_OUTPUT LASTTEST_LOG - what `make test` prints after ctest: each test
# ctest reported as skipped (its "NN - NAME (Skipped)" lines in CTEST_OUTPUT) with the reason it
# printed (its lines with "SKIP" in ctest's LastTest.log; ctest's --output-on-failure does not
# show a skipped test's output).  A skipped test that printed no reason is said as a defect.
out=$1 log=$2
names=$(sed -n 's/^[[:space:]]*[0-9]* - \(.*\) (Skipped)$/\1/p' "$out" 2> /dev/null)
[ -n "$names" ] || exit 0
n=$(echo "$names" | wc -l)
echo
echo "$n skipped test$([ "$n" = 1 ] || echo s), and why (their output: $log):"
for t in $names; do
	why=$(awk -v t="$t" '
		$0 ~ /^[0-9]+\/[0-9]+ Testing: / { name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name); inside = 0 }
		name == t && /^Output:$/ { inside = 1; next }
		name == t && /^<end of output>$/ { inside = 0 }
		inside && /SKIP/ { print; found = 1 }
		END { if (!found) print "(no reason printed: every skip must say why)" }' "$log" | head -3)
	echo "  $t: $(echo "$why" | sed '2,$s/^/    /')"
done
