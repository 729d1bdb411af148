# SPDX-License-Identifier: MIT
# t_cli_numbers_patterns_and_outputs_are_checked.sh - the command line never quietly does something
# else than asked: `dump --event` keeps every pattern (the 70th too, not only 64); a number out of
# range is a usage error (`dump --cpu 4294967296` is not CPU 0; `--tid -1`, `--top 1e3`, a
# `--max-events` past 2^64), exit 2, by the shared parser (tools/cli_args.c); and no command writes
# its output over its input: `report --html -o` and `convert -o` naming a file of the trace (by
# its name, through "./", through a hard or symbolic link) or a new file inside the trace
# directory are refused with exit 2 and the trace is left byte for byte as it was.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

"$CLI" record -q -o "$T/t" -- "$WL" --threads 2 --events 500 > /dev/null 2>&1 || fail "record"
"$CLI" dump "$T/t" > "$T/all.txt" || fail "dump"
n_all=$(grep -c 'workload:tick' "$T/all.txt")
[ "$n_all" -gt 0 ] || fail "no events"

echo "== dump --event keeps every pattern"
pats=$(for i in $(seq 69); do printf 'nomatch%d:*,' "$i"; done)
"$CLI" dump --event "${pats}workload:tick" "$T/t" > "$T/p.txt" || fail "dump with 70 patterns"
n=$(grep -c 'workload:tick' "$T/p.txt")
[ "$n" = "$n_all" ] || fail "the 70th pattern was dropped: $n of $n_all events"
args=(); for i in $(seq 100); do args+=(--event "nomatch$i:*"); done
"$CLI" dump "${args[@]}" --event 'workload:tick' "$T/t" > "$T/p2.txt" || fail "dump with 101 --event options"
[ "$(grep -c 'workload:tick' "$T/p2.txt")" = "$n_all" ] || fail "the 101st --event was dropped"

echo "== numbers out of range are usage errors"
usage() { # usage TEXT CMD...: exit 2, TEXT on stderr, nothing on stdout
	local text=$1
	shift
	"$CLI" "$@" > "$T/u.out" 2> "$T/u.err"
	local rc=$?
	[ $rc = 2 ] || { cat "$T/u.err"; fail "$* exited $rc, want 2"; }
	grep -q -- "$text" "$T/u.err" || { cat "$T/u.err"; fail "$*: does not say '$text'"; }
	[ ! -s "$T/u.out" ] || fail "$*: printed something"
}
usage "from 0 to 4294967295" dump --cpu 4294967296 "$T/t"
usage "from 0 to 4294967295" dump --cpu 18446744073709551617 "$T/t"
usage "from 0 to 4294967295" dump --tid -1 "$T/t"
usage "from 0 to 4294967295" dump --tid ' 7' "$T/t"
usage "expected a number" report --threads 0x10 "$T/t"
usage "expected a number" report --profile --top 1e3 "$T/t"
usage "expected a number > 0" convert --to chrome -o "$T/x.json" --max-events 18446744073709551616 "$T/t"

echo "== no output over the input"
sum() { (cd "$T/t" && find . -type f ! -name '.*' -exec md5sum {} + | sort); }
sum > "$T/sum.before"
f=$(cd "$T/t" && ls chan_* | head -1)
ln "$T/t/$f" "$T/hardlink"
ln -s "$T/t/metadata" "$T/symlink"
mkdir "$T/sub" && ln -s ../t "$T/sub/tt"
for out in "$T/t/$f" "$T/t/./$f" "$T/sub/tt/metadata" "$T/hardlink" "$T/symlink" "$T/t/new.html"; do
	usage "never written over its input" report --html -o "$out" "$T/t"
	usage "never written over its input" convert --to chrome -o "$out" "$T/t"
	usage "never written over its input" convert --to speedscope -o "$out" "$T/t"
done
sum > "$T/sum.after"
cmp -s "$T/sum.before" "$T/sum.after" || fail "a file of the trace changed"
[ ! -e "$T/t/new.html" ] || fail "a file was created inside the trace"
"$CLI" report --html -o "$T/ok.html" "$T/t" 2> /dev/null || fail "report --html to a new file outside the trace"
"$CLI" convert --to chrome -o - "$T/t" > /dev/null 2>&1 || fail "convert to standard output"
echo "PASS"
