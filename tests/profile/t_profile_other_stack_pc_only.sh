# SPDX-License-Identifier: MIT
# t_profile_other_stack_pc_only.sh - code running outside its thread's known stack (a signal
# handler on a sigaltstack: prof_altstack) is sampled with the PC only and NOSTACK by the
# frame-pointer walk, which never reads outside the bounds it knows; libunwind (when built)
# walks through the signal frame back to main.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

for uw in fp libunwind; do
	[ $uw = libunwind ] && ! has_libunwind && { echo "libunwind: not built, skipped"; continue; }
	prof $uw --unwind $uw -- "$P/prof_altstack" || fail "$uw: prof_altstack failed: $(cat "$T/$uw.err")"
	[ "$(cat "$T/$uw.out")" = "altstack: ok" ] || fail "$uw: output $(cat "$T/$uw.out")"
	$CHECK altstack "$T/$uw.json" "$P/prof_altstack" $uw || fail "$uw: samples"
	$CHECK counters "$T/$uw.json" none || fail "$uw: counters"
done
echo PASS
