# SPDX-License-Identifier: MIT
# t_profile_errno_preserved.sh - the SIGPROF handler leaves errno as it found it: three threads
# check errno in a tight loop (prof_errno) under `tracebuf profile -F 10000` with 4 KiB
# sub-buffers, so that the handler's writes often take the slow path (switches, consumer
# wake-ups: system calls), with frame pointers and with libunwind (whose memory checks make
# system calls too).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

for uw in fp libunwind; do
	[ $uw = libunwind ] && ! has_libunwind && { echo "libunwind: not built, skipped"; continue; }
	prof $uw -F 10000 --sb-size 4K --sb-count 4 --unwind $uw -- "$P/prof_errno"
	rc=$?
	[ $rc -eq 0 ] || { cat "$T/$uw.out" "$T/$uw.err"; fail "$uw: prof_errno exited $rc"; }
	[ "$(cat "$T/$uw.out")" = "errno: ok" ] || fail "$uw: $(cat "$T/$uw.out")"
	n=$(grep -c '"profile:sample"' "$T/$uw.json")
	[ "$n" -gt 20 ] || fail "$uw: only $n samples"
	echo "$uw: errno intact, $n samples"
done
echo PASS
