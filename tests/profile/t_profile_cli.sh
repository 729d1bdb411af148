# SPDX-License-Identifier: MIT
# t_profile_cli.sh - the `tracebuf profile` command line: usage errors (exit 2) for bad
# options and for what profiling cannot do (other modes than discard, no attribution);
# a clear error naming the paths tried when the sampler library is missing; the
# TRACEBUF_PROFILE_* settings and LD_PRELOAD (ours first, the previous one kept) reach
# CMD; CMD's exit status is passed on; the default output directory; -q is quiet.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"

usage() { # ARGS...: must be a usage error (exit 2) without creating anything
	"$CLI" profile -o "$T/u" "$@" -- "$P/prof_hot" 0.01 > /dev/null 2> "$T/u.err"
	local rc=$?
	[ $rc -eq 2 ] || fail "profile $*: exit $rc, want 2 (usage)"
	[ ! -e "$T/u" ] || fail "profile $*: created $T/u"
}
usage -F 0
usage -F 100001
usage -F abc
usage --unwind dwarf
usage --depth 0
usage --depth 128
usage --mode overwrite
usage --channel c:4K:2:block
usage --no-attribution
usage --attach x
"$CLI" profile -o "$T/u" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no command: not a usage error"
"$CLI" profile --help | grep -q -- '--unwind auto|fp|libunwind' || fail "--help"

# the library missing: exit 1, the message names what was tried
TRACEBUF_PROFILE_LIB=$T/nowhere.so "$CLI" profile -o "$T/m" -- "$P/prof_hot" 0.01 2> "$T/m.err"
[ $? -eq 1 ] || fail "TRACEBUF_PROFILE_LIB missing: not a failure"
grep -q "$T/nowhere.so" "$T/m.err" || fail "the error does not name TRACEBUF_PROFILE_LIB: $(cat "$T/m.err")"
libdir=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$TB_BUILD/CMakeCache.txt")
mkdir "$T/bin" && cp "${TB_CLI_REAL:-$CLI}" "$T/bin/tracebuf" # (the binary, not the valgrind wrapper)
if ! ls "$libdir"/lib*/libtracebuf-profile.so > /dev/null 2>&1; then
	"$T/bin/tracebuf" profile -o "$T/m2" -- "$P/prof_hot" 0.01 2> "$T/m2.err"
	[ $? -eq 1 ] || fail "library not next to the CLI: not a failure"
	grep -q "tried $T/bin/libtracebuf-profile.so, .*libtracebuf-profile.so" "$T/m2.err" ||
		fail "the error does not name the paths tried: $(cat "$T/m2.err")"
fi
# ... and TRACEBUF_PROFILE_LIB finds it from anywhere
TRACEBUF_PROFILE_LIB=$TB_BUILD/libtracebuf-profile.so "$T/bin/tracebuf" profile -q -o "$T/m3" -- \
	"$P/prof_hot" 0.05 > /dev/null || fail "TRACEBUF_PROFILE_LIB"
"$CLI" dump "$T/m3" | grep -q profile:sample || fail "TRACEBUF_PROFILE_LIB: no samples"

# CMD's exit status, through the profiler
"$CLI" profile -q -o "$T/x" -- "$P/prof_spin" > /dev/null 2>&1
[ $? -eq 2 ] || fail "CMD's exit status 2 was not passed on"

# --events selects the program's classes; the sampler's are always recorded
prof ev --events 'nothing:*' -- "$P/prof_hot" 0.05 || fail "--events"
grep -q '"profile:sample"' "$T/ev.json" || fail "--events 'nothing:*' dropped the samples"

# the settings reach the sampler (and the trace says so)
prof set -F 123 --depth 9 -- "$P/prof_hot" 0.05 || fail "-F 123 --depth 9"
# the default unwinder (auto): libunwind where it loads, frame pointers otherwise
want_uw=fp
has_libunwind && want_uw=libunwind
grep -q '"event":"profile:info","fields":{"hz":123,"unwinder":"'$want_uw'"' "$T/set.json" ||
	fail "profile:info does not say hz 123: $(grep profile:info "$T/set.json")"
if [ -z "$SANITIZE" ]; then
	# (uninstrumented commands cannot take the sanitizer build's libraries)
	"$CLI" profile -q -o "$T/env" -F 77 --depth 5 --unwind fp -- sh -c \
		'echo "$TRACEBUF_PROFILE_HZ $TRACEBUF_PROFILE_DEPTH $TRACEBUF_PROFILE_UNWIND $LD_PRELOAD"' > "$T/env.out" ||
		fail "sh -c echo"
	want="77 5 fp $TB_BUILD/libtracebuf.so.0:$TB_BUILD/libtracebuf-profile.so"
	[ "$(cat "$T/env.out")" = "$want" ] || fail "CMD's environment: '$(cat "$T/env.out")', want '$want'"
	other=$(ls /lib/x86_64-linux-gnu/libm.so.6 /usr/lib/x86_64-linux-gnu/libm.so.6 2>/dev/null | head -1)
	if [ -n "$other" ]; then
		LD_PRELOAD=$other "$CLI" profile -q -o "$T/env2" -- sh -c 'echo "$LD_PRELOAD"' > "$T/env2.out" ||
			fail "with LD_PRELOAD"
		[ "$(cat "$T/env2.out")" = "$TB_BUILD/libtracebuf.so.0:$TB_BUILD/libtracebuf-profile.so:$other" ] ||
			fail "the previous LD_PRELOAD was not kept after ours: $(cat "$T/env2.out")"
	fi
	"$CLI" profile -q -o "$T/sig" -- sh -c 'kill -TERM $$'
	[ $? -eq 143 ] || fail "CMD killed by SIGTERM: want exit 143"
fi

# a statically linked command cannot take LD_PRELOAD: a warning says so (ldconfig is static)
st=$(PATH=/sbin:/usr/sbin:$PATH command -v ldconfig)
if [ -n "$st" ] && command -v readelf > /dev/null && ! readelf -l "$st" | grep -q INTERP; then
	"$CLI" profile -q -o "$T/static" -- "$st" --version > /dev/null 2> "$T/static.err" || fail "ldconfig --version"
	grep -q "warning: .*statically linked" "$T/static.err" || fail "no warning for $st: $(cat "$T/static.err")"
fi

# default output directory, in the current directory; quiet; not quiet
mkdir "$T/cwd"
(cd "$T/cwd" && "$CLI" profile -q -- "$P/prof_hot" 0.05 > /dev/null 2> "$T/q.err") || fail "no -o"
d=$(ls "$T/cwd")
echo "$d" | grep -q -E '^profile-[0-9]{8}-[0-9]{6}$' || fail "default output directory: '$d'"
[ -f "$T/cwd/$d/metadata" ] || fail "default output directory: no trace"
[ ! -s "$T/q.err" ] || fail "-q printed: $(cat "$T/q.err")"
"$CLI" profile -o "$T/loud" -- "$P/prof_hot" 0.05 > /dev/null 2> "$T/loud.err" || fail "not quiet"
grep -q "tracebuf report --profile $T/loud" "$T/loud.err" || fail "no closing hint: $(cat "$T/loud.err")"
echo PASS
