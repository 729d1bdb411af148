# SPDX-License-Identifier: MIT
# t_profile_highest_rate_lets_the_program_progress.sh - at the highest rate (-F 100000, a period
# of 10 us: shorter than one signal delivery on a VM) the sampled program still makes progress
# and finishes a fixed amount of work: the perf event is re-armed from the handler at such rates
# (a free-running event kept a signal pending at every return from the handler, and the
# program never ended), and paced (a machine where one timer interrupt costs about a period, a
# PVM guest, kept the thread in the kernel: its period is lengthened, docs/PROFILE.md); at the
# default rate it runs free (no system call per sample) and the same work finishes too.
# Verdict: the program ends (a hang guard far above the ~1 s of CPU it needs at -F 100000) and
# was sampled.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"
for F in 100000 999; do
	timeout 150 "$CLI" profile -q -F "$F" -o "$T/f$F" -- "$P/prof_fixed" 20000000 > "$T/f$F.out" 2> "$T/f$F.err"
	rc=$?
	[ "$rc" -ne 124 ] || fail "-F $F: the program made no progress (still running after 150 s)"
	[ "$rc" -eq 0 ] || { cat "$T/f$F.err"; fail "-F $F: exit $rc"; }
	grep -q "fixed: done" "$T/f$F.out" || fail "-F $F: the program did not finish its work"
	n=$("$CLI" dump -q --event profile:sample "$T/f$F" | wc -l)
	[ "$n" -gt 0 ] || fail "-F $F: no sample"
	echo "-F $F: finished, $n samples"
done
echo PASS
