# SPDX-License-Identifier: MIT
# t_record_rejects_bad_arguments.sh - `tracebuf record` refuses, before running the command and
# with the usage exit status 2, what would silently record something else than asked or what the
# library would refuse (a size that is no power of two, a zero size meaning "default", an empty
# --events meaning "nothing"), names the real reason an output path is unusable (a name over
# NAME_MAX, a non-empty directory), and warns at the end when an --events pattern selected none
# of the classes the program registered (a typo), naming those that exist.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

refused() { # refused WANT_RC WANT_TEXT ARGS... : record ARGS exits WANT_RC, says WANT_TEXT, runs nothing
	local want=$1 text=$2
	shift 2
	rm -f "$T/ran"
	"$CLI" record "$@" -- touch "$T/ran" > "$T/out" 2> "$T/err"
	local rc=$?
	[ $rc -eq "$want" ] || { cat "$T/err"; fail "record $* exited $rc, want $want"; }
	grep -q -- "$text" "$T/err" || { cat "$T/err"; fail "record $*: the message does not say '$text'"; }
	[ ! -e "$T/ran" ] || fail "record $* ran the command"
}
refused 2 "at least a page" --sb-size 0 -o "$T/a"
refused 2 "at least 2 sub-buffers" --sb-count 1 -o "$T/a"
refused 2 "at least 4096" --channel c:0:8:discard -o "$T/a"
# sizes the library refuses are usage errors too (exit 2, not 1 from the session's creation)
refused 2 "a power of two from the page size" --sb-size 3K -o "$T/a"
refused 2 "a power of two from the page size" --sb-size 512M -o "$T/a"
refused 2 "a power of two from 2 to 65536" --sb-count 3 -o "$T/a"
refused 2 "a power of two, at least 4096" --channel c:3K:8:discard -o "$T/a"
refused 2 "a power of two from 2 to 65536" --channel c::6:discard -o "$T/a"
# a fifth field that is not vtid (a typo would record without the context)
refused 2 "may only be 'vtid'" --channel c:::discard:VTID -o "$T/a"
refused 2 "want NAME:SB_SIZE:COUNT:MODE\[:vtid\]" --channel c:::discard:vtid:more -o "$T/a"
refused 2 "no pattern" --events '' -o "$T/a"
refused 2 "no pattern" --events ' , ' -o "$T/a"
long=$(printf 'n%.0s' $(seq 300))
refused 1 "longer than NAME_MAX" -o "$T/$long/t"
mkdir "$T/full" && touch "$T/full/x"
refused 1 "is not empty" -o "$T/full"

# a pattern that selects nothing: the trace is valid, the end says so
"$CLI" record --events 'workload:tik' -o "$T/typo" -- "$WL" --threads 1 --events 100 > "$T/out" 2> "$T/err" ||
	{ cat "$T/err"; fail "record with an unmatched pattern exited $?"; }
grep -q "pattern 'workload:tik' matched none of the event classes the program registered: .*workload:tick" "$T/err" ||
	{ cat "$T/err"; fail "no warning naming the classes that exist"; }
# a pattern that matches is not warned about
"$CLI" record --events 'workload:t*' -o "$T/ok" -- "$WL" --threads 1 --events 100 > "$T/out" 2> "$T/err" ||
	fail "record --events 'workload:t*' exited $?"
! grep -q "matched none" "$T/err" || { cat "$T/err"; fail "a matching pattern was warned about"; }
n=$("$CLI" dump "$T/ok" | grep -c "workload:tick")
[ "$n" -eq 100 ] || fail "$n workload:tick events recorded with --events 'workload:t*', want 100"
echo PASS
