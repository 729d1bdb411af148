# SPDX-License-Identifier: MIT
# t_profile_bad_frame_pointer_aborts_safely.sh - a program burning CPU with garbage in RBP
# (non-canonical, misaligned, below RSP, a self-loop, a heap address: prof_badfp) runs to
# completion under `tracebuf profile`: the frame-pointer walk checks every access against the
# thread's stack and marks those samples ABORTED after the PC (and at most one frame); the
# counters agree with the flags.  libunwind (when built) must not crash either.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

"$P/prof_badfp" > "$T/plain.out" || fail "prof_badfp fails without the profiler"
for uw in fp libunwind; do
	[ $uw = libunwind ] && ! has_libunwind && { echo "libunwind: not built, skipped"; continue; }
	prof $uw --unwind $uw -- "$P/prof_badfp"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/$uw.err"; fail "$uw: prof_badfp exited $rc under the profiler"; }
	cmp -s "$T/plain.out" "$T/$uw.out" || fail "$uw: the output changed"
	$CHECK badfp "$T/$uw.json" "$P/prof_badfp" $uw || fail "$uw: samples"
done
echo PASS
