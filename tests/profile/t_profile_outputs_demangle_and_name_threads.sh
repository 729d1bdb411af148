# SPDX-License-Identifier: MIT
# t_profile_outputs_demangle_and_name_threads.sh - a C++ program's profile (prof_cxx: a static
# worker(const char*, unsigned, unsigned) calling shop::Cart::total(unsigned) in a thread named
# "cruncher") shows demangled names in every output that shows symbols (report --profile text and
# JSON, convert --to folded / speedscope / chrome / perfetto, report --html) and the mangled ones
# with --no-demangle; the thread's recorded name, its tid in parentheses, in the per-thread
# tables of report --profile, its speedscope profile and the HTML page's thread data.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"
[ -x "$P/prof_cxx" ] || { echo "SKIP: tests/profile/prof_cxx not built (no C++ compiler)"; exit 77; }

"$CLI" profile -q -o "$T/c" -F 999 --sb-size 1M -- "$P/prof_cxx" 0.6 > "$T/c.out" 2> "$T/c.err" ||
	{ cat "$T/c.err"; fail "prof_cxx failed"; }
total='shop::Cart::total(unsigned int)'
worker='worker(char const\*, unsigned int, unsigned int)'
mtotal=_ZN4shop4Cart5totalEj
mworker=_ZL6workerPKcjj
has() { grep -q -- "$2" "$1" || fail "$(basename "$1") does not show $2"; }
hasnt() { ! grep -q -- "$2" "$1" || fail "$(basename "$1") shows $2"; }

for mode in demangled mangled; do
	flag=; want_t=$total; want_w=$worker; not=$mtotal
	[ $mode = mangled ] && { flag=--no-demangle; want_t=$mtotal; want_w=$mworker; not=shop::Cart; }
	R=$T/$mode
	"$CLI" report --profile --threads --top 0 $flag "$T/c" > "$R.txt" 2> "$R.err" || fail "report --profile $flag"
	has "$R.txt" "$want_t"; has "$R.txt" "$want_w"; hasnt "$R.txt" "$not"
	"$CLI" report --profile --threads --top 0 --format json $flag "$T/c" > "$R.json" || fail "report --profile json"
	has "$R.json" "$want_t"; hasnt "$R.json" "$not"
	"$CLI" report --html -o "$R.html" -q $flag "$T/c" || fail "report --html $flag"
	has "$R.html" "$want_t"; hasnt "$R.html" "$not"
	for to in folded speedscope chrome; do
		"$CLI" convert "$T/c" --to $to -o "$R.$to" -q $flag || fail "convert --to $to $flag"
		has "$R.$to" "$want_t"; hasnt "$R.$to" "$not"
	done
	"$CLI" convert "$T/c" --to perfetto --no-compress -o "$R.pftrace" -q $flag || fail "convert --to perfetto $flag"
	grep -a -q -- "$want_t" "$R.pftrace" || fail "perfetto ($mode) does not hold $want_t"
	! grep -a -q -- "$not" "$R.pftrace" || fail "perfetto ($mode) holds $not"
done

# the thread's name, the tid in parentheses
R=$T/demangled
tid=$(sed -n 's/^thread cruncher (tid \([0-9]*\); pid [0-9]* prof_cxx): .*/\1/p' "$R.txt")
[ -n "$tid" ] || { grep '^thread' "$R.txt"; fail "report --profile --threads does not name the thread cruncher"; }
grep -q "\"tid\":$tid,\"process\":\"prof_cxx\",\"thread\":\"cruncher\"" "$R.json" ||
	fail "report --profile --format json: by_thread has no name for tid $tid"
grep -q "\"name\":\"cruncher (tid $tid) in prof_cxx (pid [0-9]*)\"" "$R.speedscope" ||
	fail "speedscope: no profile named 'cruncher (tid $tid) in prof_cxx (pid N)'"
grep -q "\"tid\":$tid,\"process\":\"prof_cxx\",\"thread\":\"cruncher\"" "$R.html" ||
	fail "report --html: the threads data do not name tid $tid"
grep -q 't.thread + " (tid " + t.tid + ")"' "$R.html" || fail "report --html: the threads table does not show the names"
echo PASS
