# SPDX-License-Identifier: MIT
# kernel_bt2.sh - sourced by the --kernel shell tests (after recorder_env.sh):
# kernel_bt2_same DIR JSONL RECORDER_STDERR CLASS...
#   babeltrace2 reads trace DIR (its text in DIR.bt, its stderr in DIR.bt.err) and shows as
#   many events of each CLASS as `tracebuf dump --format json` did (JSONL), with no warning but
#   tracebuf's one known header line and discards of kernel streams, and those only when the
#   recorder (its stderr) counted kernel events lost.  Fails the test (fail()) otherwise;
#   says so and returns when babeltrace2 is not installed.
kernel_bt2_same() {
	local dir=$1 jsonl=$2 rerr=$3 c x y
	shift 3
	command -v babeltrace2 > /dev/null || { echo "  (babeltrace2 not installed: its reading not checked)"; return 0; }
	babeltrace2 "$dir" > "$dir.bt" 2> "$dir.bt.err" || { cat "$dir.bt.err"; fail "babeltrace2 $dir"; }
	for c in "$@"; do
		x=$(grep -c " $c: " "$dir.bt")
		y=$(grep -c "\"event\":\"$c\"" "$jsonl")
		[ "$x" = "$y" ] || fail "$dir: babeltrace2 shows $x $c, tracebuf dump $y"
	done
	grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' "$dir.bt.err" |
		grep -v '^WARNING: Tracer discarded .* within stream "[^"]*/kernel_cpu[0-9_r]*"' | grep -q . &&
		{ cat "$dir.bt.err"; fail "babeltrace2 warns on $dir"; }
	if grep -q '^WARNING: Tracer discarded' "$dir.bt.err"; then
		grep -q 'kernel: .* lost [1-9]' "$rerr" || fail "babeltrace2 says kernel events were discarded, the recorder said none"
	fi
	return 0
}
