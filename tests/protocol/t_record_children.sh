# SPDX-License-Identifier: MIT
# t_record_children.sh - every process CMD starts (fork + exec, in the background or not)
# attaches by itself and is traced; the identity holds over all of them.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

# the workload forks + execs itself (--procs)
"$CLI" record -q --sb-size 64K --sb-count 8 -o "$T/procs" -- "$WL" --procs 3 --threads 2 --events 20000 > "$T/procs.out" || fail "record --procs"
w=$(awk '/^written:/{print $2}' "$T/procs.out")
[ "$w" = 120000 ] || fail "--procs 3 wrote $w"
"$VERIFY" --written "$w" "$T/procs" || fail "--procs trace"

# a shell runs workloads one after the other and in the background
"$CLI" record -q --sb-size 64K --sb-count 8 -o "$T/sh" -- sh -c \
	"'$WL' --threads 1 --events 10000; '$WL' --threads 2 --events 10000 & '$WL' --threads 1 --events 5000 --signals; wait" \
	> "$T/sh.out" || fail "record sh -c"
w=$(awk '/^written:/{n += $2} END{print n+0}' "$T/sh.out")
"$VERIFY" --written "$w" "$T/sh" || fail "children of a shell"
grep -q "proc_" "$T/sh/metadata" || fail "no process table in the metadata env"
echo PASS
