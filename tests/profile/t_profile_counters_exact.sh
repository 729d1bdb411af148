# SPDX-License-Identifier: MIT
# t_profile_counters_exact.sh - with rings too small to hold the samples (4 KiB x 2 per CPU,
# deep stacks, the recorder stopped by the program while it runs) samples are lost, and the
# counters account for each exactly: received == samples in the trace + lost, and lost ==
# the events the trace itself says were discarded.  A process that ends without running
# destructors (_exit, SIGKILL) keeps its samples in the trace; only its counters are missing.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

prof tiny -F 10000 --sb-size 4K --sb-count 2 -- "$P/prof_spin" 4 0.3 100 stop-parent ||
	{ cat "$T/tiny.err"; fail "prof_spin failed"; }
$CHECK counters "$T/tiny.json" some || fail "counters with losses"

for end in _exit sigkill; do
	prof $end -- "$P/prof_spin" 2 0.2 5 $end
	rc=$?
	want=0; [ $end = sigkill ] && want=137
	[ $rc -eq $want ] || fail "$end: exit status $rc, want $want"
	n=$(grep -c '"profile:sample"' "$T/$end.json")
	[ "$n" -gt 10 ] || fail "$end: only $n samples in the trace"
	! grep -q '"profile:counters"' "$T/$end.json" || fail "$end: counters written without a destructor?"
	echo "$end: $n samples, no counters"
done
echo PASS
