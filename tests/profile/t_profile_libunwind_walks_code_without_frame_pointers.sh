# SPDX-License-Identifier: MIT
# t_profile_libunwind_walks_code_without_frame_pointers.sh - chains through functions compiled
# without frame pointers (prof_spin nofp): with --unwind libunwind every sample carries the
# LIBUNWIND flag and shows those functions; a frame-pointer walk cannot (it skips them).  And
# --depth bounds the chains, marking the cut samples TRUNCATED.  The libunwind part is skipped
# when tracebuf was built without libunwind-dev.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

prof fp --unwind fp -- "$P/prof_spin" 2 0.3 3 nofp || fail "prof_spin (fp) failed"
$CHECK unwind "$T/fp.json" "$P/prof_spin" fp || fail "fp chains"
prof depth --unwind fp --depth 4 -- "$P/prof_spin" 1 0.3 10 || fail "prof_spin (--depth 4) failed"
$CHECK unwind "$T/depth.json" "$P/prof_spin" fp 4 || fail "--depth 4"
$CHECK counters "$T/depth.json" none || fail "--depth 4: counters"
if ! has_libunwind; then
	sed 's/^/  /' "$T/has_libunwind.err"
	echo "SKIP: built without libunwind"
	exit 77
fi
prof lu --unwind libunwind -- "$P/prof_spin" 2 0.3 3 nofp || fail "prof_spin (libunwind) failed"
$CHECK unwind "$T/lu.json" "$P/prof_spin" libunwind || fail "libunwind chains"
$CHECK counters "$T/lu.json" none || fail "libunwind: counters"
# the default (--unwind auto) is libunwind when it loads: callers through code without frame pointers
prof auto -- "$P/prof_spin" 2 0.3 3 nofp || fail "prof_spin (default unwinder) failed"
$CHECK unwind "$T/auto.json" "$P/prof_spin" libunwind || fail "the default unwinder does not walk code without frame pointers"
echo PASS
