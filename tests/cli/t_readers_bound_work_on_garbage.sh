# SPDX-License-Identifier: MIT
# t_readers_bound_work_on_garbage.sh - a valid stream followed by a 20 GiB sparse tail (zeros):
# dump and report read every valid event, give one diagnostic for the damaged run (not one per
# packet: there would be 80,000), stop after a bounded number of damaged packets in a row, and
# stay small (their peak memory is measured, not their time: under 200 MiB where reading the
# tail would take gigabytes of page cache).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
"$CLI" record -q -o "$T/t" -- "$WL" --threads 1 --events 100000 > /dev/null || fail "record"
n0=$("$CLI" dump "$T/t" | wc -l)
f=$(ls "$T"/t/chan_* | head -1)
truncate -s +20G "$f" || { echo "SKIP: cannot make a sparse file here"; exit 77; }
for cmd in dump report; do
	"${PY:-python3}" - "$CLI" $cmd "$T/t" > "$T/out" 2> "$T/err" <<'PYEOF'
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print("maxrss_kb %d rc %d" % (kb, rc), file=sys.stderr)
PYEOF
	rc=$(sed -n 's/^maxrss_kb [0-9]* rc //p' "$T/err")
	kb=$(sed -n 's/^maxrss_kb \([0-9]*\) .*/\1/p' "$T/err")
	[ "$rc" = 3 ] || { cat "$T/err"; fail "$cmd exited $rc on a trace with a garbage tail (want 3)"; }
	# (under valgrind the peak is valgrind's own)
	[ -n "${TB_UNDER_VALGRIND:-}" ] || [ "$kb" -lt 204800 ] || fail "$cmd peaked at $kb KiB on a sparse tail"
	nd=$(grep -c "^tracebuf $cmd: " "$T/err")
	[ "$nd" -le 3 ] || { head -5 "$T/err"; fail "$cmd gave $nd diagnostics for one damaged run"; }
	grep -q "in a row.*rest of the file" "$T/err" || { cat "$T/err"; fail "$cmd does not say it stopped reading"; }
	if [ $cmd = dump ]; then
		[ "$(wc -l < "$T/out")" -eq "$n0" ] || fail "dump printed $(wc -l < "$T/out") events, $n0 before the tail"
	fi
done
echo PASS
