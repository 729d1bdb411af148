# SPDX-License-Identifier: MIT
# t_profile_program_keeps_its_sigprof.sh - a program that installs its own SIGPROF handler
# after start and uses ITIMER_PROF (prof_ownprof) keeps working under `tracebuf profile`:
# sigaction reports its handler, its ticks reach it, none of the profiler's expiries does,
# and the profiler still takes its samples.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

"$P/prof_ownprof" > "$T/plain.out" || fail "prof_ownprof fails without the profiler: $(cat "$T/plain.out")"
prof own -- "$P/prof_ownprof"
rc=$?
[ $rc -eq 0 ] || fail "prof_ownprof under the profiler: $(cat "$T/own.out") (exit $rc)"
cmp -s "$T/plain.out" "$T/own.out" || fail "the output changed"
n=$(grep -c '"profile:sample"' "$T/own.json")
[ "$n" -gt 20 ] || fail "only $n samples"
$CHECK counters "$T/own.json" none || fail "counters"
echo PASS
