# SPDX-License-Identifier: MIT
# t_flight_bad_condition_is_refused_with_its_position.sh - a --snapshot-on condition that cannot
# be right is refused before anything runs (exit 2, nothing created, the command not started),
# with a message naming the text, the position (1-based, and a caret under it) and why: a bad
# operator, a string compared with an integer field or a number with a string field, a field or
# a class the program does not declare (its tracebuf_events section; a class of a provider it
# declares none of may be a library's: not refused, said, checked when it registers), a span
# without its begin/end classes, a duration without a unit, no ':' in the class; a malformed
# decimal number, a string compared with a float field or a decimal value with an integer field,
# an '||' without its operand, more than 8 parentheses open at once.  A program that declares
# no classes (a script wrapping it) cannot be checked before it runs: the condition is checked
# as the classes register, and the log says it never fires.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

PROG=("$WL" --requests --events 10)
refused() { # COND POSITION PHRASE (the program: PROG)
	local S=$T/s.$RANDOM
	"$CLI" record --mode overwrite --snapshot-dir "$S" --snapshot-on "$1" -- "${PROG[@]}" \
		> "$T/out" 2> "$T/err"
	local rc=$?
	[ $rc = 2 ] || { cat "$T/err"; fail "'$1': exit $rc (want 2, a usage error)"; }
	grep -F -- "--snapshot-on '$1': at position $2: " "$T/err" | grep -qF -- "$3" || { cat "$T/err"; fail "'$1': message"; }
	# the caret line: position-1 spaces after the two of the indentation
	grep -qx "  $(printf '%*s' $(($2 - 1)) '')^" "$T/err" || { cat "$T/err"; fail "'$1': no caret under position $2"; }
	[ ! -s "$T/out" ] || fail "'$1': the command ran"
	[ ! -e "$S" ] || fail "'$1': the snapshot directory was created"
	echo "refused: $1 (position $2)"
}
refused 'workload:request_end[status=>500]' 28 'expected a comparison'
refused 'workload:request_end[status>=500 & route=="x"]' 34 "expected '&&', '||' or ']'"
refused 'workload:request_end[status>=5x0]' 30 'not a number'
refused 'workload:request_end[status>=500' 33 "expected '&&', '||' or ']'"
refused 'workload:request_end[route>="/x"]' 27 'a string compares with == or != only'
refused 'request_end[status>=500]' 1 "a class or span name is provider:event, with one ':'"
refused 'workload:request>10' 20 'the duration needs a unit'
# against what the program declares (tracebuf list --fields)
refused 'workload:request_end[stat>=500]' 22 "'stat': class workload:request_end has no such field"
refused 'workload:request_end[status=="500"]' 22 "'status': class workload:request_end compares a string with a field that is not a string"
refused 'workload:request_end[route==5]' 22 "'route': class workload:request_end compares a number with a string field"
refused 'workload:nosuch[status>=500]' 1 "declares no class named like 'workload:nosuch'"
refused 'workload:nospan>10ms' 1 'declares no class workload:nospan_begin'
refused 'workload:tick>10ms' 1 'declares no class workload:tick_begin'
# floats, '||', parentheses
refused 'workload:request_end[status>500 || status<1.5e]' 43 'the exponent has no digits'
refused 'workload:request_end[status>1e999]' 29 'does not fit in a double'
refused 'workload:request_end[status>500 ||]' 35 "expected a field name or '('"
refused 'workload:request_end[status>500 | status<200]' 33 "expected '&&', '||' or ']'"
refused 'workload:request_end[(status>500 || status<200]' 47 "expected '&&', '||' or ')'"
refused 'workload:request_end[(((((((((status>500)))))))))]' 30 'more than 8 parentheses open at once'
refused 'workload:request_end[status>499.5]' 22 "'status': class workload:request_end compares an integer field with a decimal value"
PROG=("$TB_FLIGHT_WRITER" --no-wait --triggers 0 --measures 10)
refused 'flight:measure[status>=500 || latency=="0.5"]' 31 "'latency': class flight:measure compares a string with a float field"
refused 'flight:measure[latency>0.25 || ratio==high]' 32 "'ratio': class flight:measure compares a string with a float field"
refused 'flight:measure[ratio<1e39]' 16 "'ratio': class flight:measure compares an f32 field with a value beyond its range"
PROG=("$WL" --requests --events 10)

# a provider the program does not declare may be a library's: not refused, checked later
S=$T/lib
"$CLI" record --mode overwrite --snapshot-dir "$S" --snapshot-on 'libfoo:request_end[status>=500]' -- "$WL" --requests --events 10 \
	> "$T/out" 2> "$T/err" || { cat "$T/err"; fail "a class of another provider was refused"; }
grep -q "declares no class of provider 'libfoo' (a library it loads may)" "$T/err" || { cat "$T/err"; fail "not said"; }

# a glob: fine when one class it names has the field
S=$T/glob
"$CLI" record -q --mode overwrite --snapshot-dir "$S" --snapshot-on 'workload:*[status>=500]' -- "$WL" --requests --events 10 \
	> "$T/out" 2> "$T/err" || { cat "$T/err"; fail "a glob whose request_end has the field was refused"; }

# a wrapper script declares nothing: the check is made when the classes register
S=$T/wrapped
printf '#!/bin/sh\nexec "%s" --requests --events 1000 --error-at 5\n' "$WL" > "$T/wrap.sh"; chmod +x "$T/wrap.sh"
"$CLI" record --mode overwrite --snapshot-dir "$S" --snapshot-on 'workload:request_end[stat>=500]' -- "$T/wrap.sh" \
	> "$T/out" 2> "$T/err" || { cat "$T/err"; fail "record of a wrapper exited $?"; }
grep -q "declares no event classes" "$T/err" || { cat "$T/err"; fail "not said that the conditions are checked later"; }
grep -q "flight: --snapshot-on 'workload:request_end\[stat>=500\]': class workload:request_end has no such field ('stat' at position 22): the condition never fires" "$T/err" ||
	{ cat "$T/err"; fail "the log does not say the condition never fires on the class"; }
[ "$(find "$S" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 0 ] || fail "a snapshot from a condition that cannot hold"
# without --snapshot-dir
"$CLI" record --mode overwrite --snapshot-on 'workload:request_end' -o "$T/o" -- "$WL" > /dev/null 2> "$T/err"
[ $? = 2 ] && grep -q "give --snapshot-dir DIR" "$T/err" || { cat "$T/err"; fail "--snapshot-on without --snapshot-dir"; }
echo PASS
