# SPDX-License-Identifier: MIT
# t_babeltrace2_event_lines_show_cpu_id_and_exact_losses.sh - what a babeltrace2 user reads of a
# tracebuf trace: every event line shows the packet context as `{ cpu_id = N }` alone (no
# lost_<cause>, no tb_reserved: LTTng's form), and with --vtid `{ cpu_id = N }, { vtid = T }`;
# babeltrace2 says nothing on stderr but its discarded-events warnings and one warning naming the
# packet header's loss array (docs/CTF.md); it still reports the exact number of events lost
# (written == delivered + discarded, no "count unknown"), and tracebuf's reader, report and the
# recorder still give them by cause (tests/lib/accounting.sh).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
command -v babeltrace2 > /dev/null || { echo "SKIP: babeltrace2 not installed (apt-get install babeltrace2)"; exit 77; }
need_bt2
written() { sed -n 's/^written: //p' "$1" | tail -1; }

# check_lines TRACE CONTEXT_RE: babeltrace2's text of TRACE; every event line's first groups match
# CONTEXT_RE, no loss field or reserved field anywhere, and stderr holds only what is expected
check_lines() {
	local dir=$1 re=$2 n bad
	babeltrace2 "$dir" > "$T/bt.txt" 2> "$T/bt.err" || { cat "$T/bt.err"; fail "babeltrace2 $dir"; }
	n=$(wc -l < "$T/bt.txt")
	[ "$n" -gt 0 ] || fail "babeltrace2 printed no event of $dir"
	head -2 "$T/bt.txt" | sed 's/^/  babeltrace2: /'
	bad=$(grep -c -v -E "^\[[0-9:.]+\] \([+?0-9.]+\) [^ ]+ [a-z_]+:[a-z_]+: $re, \{" "$T/bt.txt")
	[ "$bad" -eq 0 ] || { grep -v -E "$re" "$T/bt.txt" | head -3; fail "$bad of $n event lines of $dir do not begin with '$re'"; }
	! grep -q -E "lost_|tb_reserved|tb_lost" "$T/bt.txt" || { grep -m1 -E "lost_|tb_reserved" "$T/bt.txt"; fail "a loss field on an event line of $dir"; }
	# stderr: the discarded-events warnings, and at most one line about the loss array
	bad=$(grep -v -E '^WARNING: Tracer discarded [0-9]+ events? between|^$' "$T/bt.err" |
		grep -v -c 'User field found in packet header: ignoring: name="tb_lost_by_cause"')
	[ "$bad" -eq 0 ] || { cat "$T/bt.err"; fail "babeltrace2 says more than expected on stderr for $dir"; }
	[ "$(grep -c 'User field found in packet header' "$T/bt.err")" -le 1 ] || { cat "$T/bt.err"; fail "more than one header-field warning"; }
}

# babeltrace2's own count of discarded events (sink.text.details, not the Python bindings)
bt_discarded() {
	babeltrace2 -c sink.text.details -p 'with-metadata=no,color="never"' "$1" 2> /dev/null |
		sed -n 's/.*Discarded events (\([0-9,]*\) events\{0,1\}).*/\1/p' | tr -d , | awk '{ s += $1 } END { print s + 0 }'
}

for opt in "" --vtid; do
	echo "== discard, rings too small: losses ${opt:-(no vtid)}"
	d=$T/d$opt
	"$CLI" record $opt --sb-size 16K --sb-count 2 -o "$d" -- "$WL" --threads 2 --events 100000 > "$d.out" 2> "$d.err" ||
		{ cat "$d.err"; fail "record $opt"; }
	w=$(written "$d.out")
	if [ -z "$opt" ]; then
		check_lines "$d" '\{ cpu_id = [0-9]+ \}'
	else
		check_lines "$d" '\{ cpu_id = [0-9]+ \}, \{ vtid = [0-9]+ \}'
	fi
	x=$(bt_discarded "$d")
	delivered=$(grep -c -v ' tracebuf:thread: ' "$T/bt.txt")
	[ "$x" -gt 0 ] || fail "these rings are too small not to lose events (babeltrace2 counted $x)"
	[ $((delivered + x)) -eq "$w" ] || fail "babeltrace2: delivered $delivered + discarded $x != written $w"
	echo "  babeltrace2: $delivered delivered + $x discarded = $w written"
	check_accounting "$d" "$w" "$d.err"
	"$CLI" report "$d" > "$T/rep.txt" 2>&1 || fail "report"
	tr -d , < "$T/rep.txt" | grep -q "ring full $x\b" ||
		{ cat "$T/rep.txt"; fail "report does not say the $x events were lost ring-full"; }
done

echo "== flight recorder (overwrite): the first packet comes after losses, still an exact count"
"$CLI" record --mode overwrite --sb-size 16K --sb-count 4 -o "$T/o" -- "$WL" --threads 1 --events 50000 > "$T/o.out" 2> "$T/o.err" ||
	{ cat "$T/o.err"; fail "record (overwrite)"; }
check_lines "$T/o" '\{ cpu_id = [0-9]+ \}'
check_accounting "$T/o" "$(written "$T/o.out")" "$T/o.err"
echo PASS
