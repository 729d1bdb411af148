# SPDX-License-Identifier: MIT
# prof_env.sh - sourced by the t_profile_*.sh tests after lib/recorder_env.sh:
# $P (the programs of tests/profile), $CHECK (prof_check.py), prof() and
# has_libunwind(); skips where the sampler cannot run.
P=${TB_BUILD:?}/tests/profile
CHECK="python3 ${TB_SRC:?}/tests/profile/prof_check.py"
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) is not installed"; exit 77; }
SANITIZE=$(sed -n 's/^TB_SANITIZE:STRING=//p' "$TB_BUILD/CMakeCache.txt" 2>/dev/null)
case "$SANITIZE" in
*thread*)
	# not built there (src/profile/CMakeLists.txt): TSan's start-up and its
	# thread creation cannot run through the sampler's interposed functions
	echo "SKIP: the sampler is not built under ThreadSanitizer"
	exit 77 ;;
*address*)
	# the preloaded libraries come before the program's libasan: ASan's
	# interceptors still work (they are found with RTLD_NEXT), only its
	# start-up check of the library order must be off
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" ;;
esac
[ -f "$TB_BUILD/libtracebuf-profile.so" ] || { echo "SKIP: $TB_BUILD/libtracebuf-profile.so not built"; exit 77; }

# prof NAME [profile options] -- CMD [ARGS]: tracebuf profile into $T/NAME
# (stdout $T/NAME.out, stderr $T/NAME.err), then $T/NAME.json (dump --format
# json).  Returns CMD's exit status.
prof() {
	local name=$1 rc
	shift
	"$CLI" profile -q -o "$T/$name" "$@" > "$T/$name.out" 2> "$T/$name.err"
	rc=$?
	if [ -f "$T/$name/metadata" ]; then
		"$CLI" dump --format json "$T/$name" > "$T/$name.json" || fail "$name: tracebuf dump failed"
	else
		cat "$T/$name.err" >&2
		fail "$name: no trace was written (exit $rc)"
	fi
	return $rc
}

# 0 when this build has --unwind libunwind
has_libunwind() {
	"$CLI" profile -q --unwind libunwind -o "$T/has_libunwind" -- "$P/prof_hot" 0.01 > /dev/null \
		2> "$T/has_libunwind.err"
}
