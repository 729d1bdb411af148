# SPDX-License-Identifier: MIT
# t_profile_sigalrm_program_unchanged.sh - a multithreaded program whose threads use their own
# SIGALRM handler and timers (prof_sigalrm: EINTR, errno and tick invariants) prints the same
# bytes and exits with the same status under `tracebuf profile`, and every one of its threads
# (the main thread too) has samples in the trace.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

"$P/prof_sigalrm" > "$T/plain.out" 2> "$T/plain.err"
plain=$?
[ $plain -eq 0 ] || { cat "$T/plain.err"; fail "prof_sigalrm fails without the profiler (exit $plain)"; }
for uw in fp libunwind; do
	[ $uw = libunwind ] && ! has_libunwind && { echo "libunwind: not built, skipped"; continue; }
	rm -f "$T/tids"
	PROF_TIDS=$T/tids prof $uw --unwind $uw -- "$P/prof_sigalrm"
	rc=$?
	[ $rc -eq $plain ] || { cat "$T/$uw.err"; fail "$uw: exit status $rc under the profiler, $plain without"; }
	cmp -s "$T/plain.out" "$T/$uw.out" || { diff "$T/plain.out" "$T/$uw.out"; fail "$uw: the output changed"; }
	[ "$(wc -l < "$T/tids")" -eq 5 ] || fail "$uw: prof_sigalrm listed $(wc -l < "$T/tids") threads, not 5"
	$CHECK threads "$T/$uw.json" "$T/tids" || fail "$uw: threads without samples"
	$CHECK counters "$T/$uw.json" none || fail "$uw: counters"
done
echo PASS
