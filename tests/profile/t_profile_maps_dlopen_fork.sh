# SPDX-License-Identifier: MIT
# t_profile_maps_dlopen_fork.sh - the trace can be symbolised after the program exits: every
# sample's PC lies in a profile:map of its process; a library opened with dlopen (by its bare
# name, through the program's RUNPATH: the dlopen wrapper must search its caller's path) is
# recorded with gen >= 1 and has samples; a forked child writes its own profile:info, maps
# (gen >= 1), samples and counters under its pid.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

plug=libprofplug.so
if [ -n "$SANITIZE" ]; then
	# ASan's own dlopen interceptor is the caller the loader sees: RUNPATH is lost with or
	# without the profiler (google/sanitizers#1219), so the plug-in is named by its path
	echo "sanitizer build: the RUNPATH search is not tested"
	plug=$P/libprofplug.so
fi
"$P/prof_dl" 0.05 "$plug" > "$T/plain.out" || fail "prof_dl fails without the profiler"
prof dl -- "$P/prof_dl" 0.3 "$plug"
rc=$?
[ $rc -eq 0 ] || { cat "$T/dl.out" "$T/dl.err"; fail "prof_dl exited $rc under the profiler"; }
cmp -s "$T/plain.out" "$T/dl.out" || fail "the output changed: $(cat "$T/dl.out")"
$CHECK maps "$T/dl.json" "$P/prof_dl" libprofplug.so || fail "maps"
$CHECK counters "$T/dl.json" none || fail "counters"
echo PASS
