# SPDX-License-Identifier: MIT
# t_record_modes.sh - `tracebuf record` in each mode keeps the accounting identity exactly:
# events written (the workload's `written: N`) == delivered + discarded (last events_discarded of
# each stream), no event twice, none torn; babeltrace2 reads the result when installed.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
written() { awk '/^written:/{n=$2} END{print n+0}' "$1"; }

# run NAME VERIFY_FLAGS RECORD_OPTS... -- WORKLOAD_OPTS...
run() {
	local name=$1 vflags=$2; shift 2
	local ropts=() ; while [ "$1" != "--" ]; do ropts+=("$1"); shift; done; shift
	"$CLI" record -q "${ropts[@]}" -o "$T/$name" -- "$WL" "$@" > "$T/$name.out" 2> "$T/$name.err"
	local rc=$?
	[ $rc -eq 0 ] || { cat "$T/$name.err"; fail "$name: record exited $rc"; }
	local w; w=$(written "$T/$name.out")
	[ "$w" -gt 0 ] || fail "$name: workload printed no count"
	echo "$name: written $w"
	"$VERIFY" --written "$w" $vflags "$T/$name" || fail "$name: verification failed"
}

run discard_ample --no-loss --sb-size 1M --sb-count 8 -- --threads 2 --events 20000
run discard_tiny "" --sb-size 4K --sb-count 2 -- --threads 2 --events 100000
run discard_signals "" --sb-size 16K --sb-count 4 -- --threads 2 --events 50000 --signals
run block "" --mode block --block-timeout 2s --sb-size 16K --sb-count 4 -- --threads 2 --events 50000
run overwrite "" --mode overwrite --sb-size 16K --sb-count 4 -- --threads 2 --events 100000
run hop "" --sb-size 16K --sb-count 4 --watermark 2 -- --threads 3 --events 30000 --hop
run noattr "" --no-attribution --sb-size 64K --sb-count 4 -- --threads 1 --events 30000

# nothing but metadata and stream files at the top of a trace; session file removed
for d in discard_ample overwrite; do
	extra=$(ls -A "$T/$d" | grep -v -E '^(metadata|chan_[0-9]+)$')
	[ -z "$extra" ] || fail "$d: unexpected files in the trace: $extra"
done
[ -z "$(ls -A "$T/shm")" ] || fail "session files left behind: $(ls -A "$T/shm")"

if command -v babeltrace2 >/dev/null 2>&1; then
	for d in discard_ample discard_tiny overwrite; do
		babeltrace2 "$T/$d" > "$T/$d.txt" 2> "$T/$d.bterr" || { head -5 "$T/$d.bterr"; fail "$d: babeltrace2 failed"; }
		n=$(grep -c 'workload:tick' "$T/$d.txt")
		want=$("$VERIFY" "$T/$d" | sed 's/.*delivered=\([0-9]*\).*/\1/')
		[ "$n" = "$want" ] || fail "$d: babeltrace2 shows $n events, the trace holds $want"
		# besides the losses, only the one line saying it sets the packet header's loss
		# array aside (docs/CTF.md, "Losses by cause")
		grep -v 'WARNING: Tracer \(may have \)\?discarded' "$T/$d.bterr" |
			grep -v 'User field found in packet header: ignoring: name="tb_lost_by_cause"' | grep -q . &&
			{ cat "$T/$d.bterr" | head -5; fail "$d: babeltrace2 warnings other than losses"; }
	done
	echo "babeltrace2: ok"
else
	echo "babeltrace2 not installed: its part skipped"
fi
echo PASS
