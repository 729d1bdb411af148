# SPDX-License-Identifier: MIT
# t_record_survives_live_corruption.sh - another process of the same uid writes garbage into a
# live session while `tracebuf record` drains it (tests/tools/corrupt_live.c), in each area of
# the session: ring data, sub-buffer descriptors, control blocks, registry, map header.  For each,
# the recorder does not crash, every trace it writes is read whole by babeltrace2, and what was
# dropped is counted as invalid with exit status 3 (0 only when nothing was).
# First, deterministically: the first record of every ring's open packet is overwritten after
# the program wrote everything: the recorder cuts those packets, counts exactly the events they
# lost as invalid (babeltrace2 finds written == delivered + discarded) and exits 3; the same
# with --trust-writers (checked in place), and random ring damage with it ends without a crash.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
need_bt2
CORRUPT=${TB_CORRUPT:?}

# wait_for WHAT CMD... - runs CMD until it succeeds while the recorder ($rec) lives; fails the
# test after 120 s (a hang guard, not a verdict: the conditions are met in well under a second
# on an idle machine)
wait_for() {
	local what=$1 i
	shift
	for ((i = 0; i < 1200; i++)); do
		"$@" && return 0
		kill -0 $rec 2> /dev/null || { cat "$T/err"; fail "the recorder ended before $what"; }
		sleep 0.1
	done
	kill $rec
	fail "timed out waiting for $what"
}

# open_records NAME [RECORD OPTIONS]: the deterministic case, into $T/NAME
open_records() {
	local name=$1
	shift
	echo "== open packets' first records (deterministic) $*"
	S=$T/shm/$name.tb
	"$CLI" record "$@" --session "$S" --sb-size 16K --sb-count 8 --flush-period 3600s -o "$T/$name" -- \
		"$WL" --threads 2 --events 30001 --wait-file "$T/go" > "$T/out" 2> "$T/err" &
	rec=$!
	rm -f "$T/go"
	wait_for "the workload to write" grep -q "^written: " "$T/out"
	hit=$("$CORRUPT" "$S" open-records) || fail "corrupter: $hit"
	echo "  $hit"
	[ "$hit" != "hit 0" ] || fail "no open packet to corrupt (every ring flushed already?)"
	touch "$T/go"
	wait $rec
	rc=$?
	cat "$T/err"
	[ $rc -eq 3 ] || fail "record $* exited $rc after dropping corrupted records (want 3)"
	grep -q "cut" "$T/err" || fail "the recorder ($*) did not say it cut packets"
	check_accounting "$T/$name" "$(sed -n 's/^written: //p' "$T/out")" "$T/err"
	"$CLI" report --format json "$T/$name" | "$PY" -c '
import json, sys
n = json.load(sys.stdin)["lost"]["by_cause"].get("invalid", 0)
sys.exit(0 if n > 0 else 1)' || fail "report does not count invalid events ($*)"
}
open_records open
# --trust-writers checks each packet where it is in the ring: a record damaged before the check
# is cut and counted exactly as from the private copy
open_records open-trusted --trust-writers

for area in data desc ctl registry header; do
	echo "== $area (random, while recording)"
	S=$T/shm/$area.tb
	rm -f "$T/stop"
	"$CLI" record -q --session "$S" --sb-size 16K --sb-count 8 -o "$T/$area" -- \
		"$WL" --threads 2 --events 100000000 --until-file "$T/stop" > "$T/out" 2> "$T/err" &
	rec=$!
	# corrupt only once packets are on disk: the recorder is past its start
	wait_for "a first packet on disk" sh -c "find '$T/$area' -type f -size +0 -name 'chan_*' 2> /dev/null | grep -q ."
	"$CORRUPT" "$S" $area $RANDOM 300 || fail "corrupter failed on $area"
	touch "$T/stop"
	wait $rec
	rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/err"; fail "record exited $rc after corruption of $area"; }
	line=$("$PY" "$(dirname "$0")/../lib/bt2_account.py" "$T/$area") ||
		{ cat "$T/err"; fail "babeltrace2 cannot read the whole trace after corruption of $area: $line"; }
	echo "  exit $rc; babeltrace2: $line"
	inv=$("$CLI" report --format json "$T/$area" | "$PY" -c '
import json, sys
print(json.load(sys.stdin)["lost"]["by_cause"].get("invalid", 0))') || fail "report on $T/$area"
	if [ "$inv" -gt 0 ] && [ $rc -ne 3 ]; then
		cat "$T/err"
		fail "$inv events counted invalid after corruption of $area, but record exited $rc (want 3)"
	fi
	"$CLI" dump "$T/$area" > /dev/null 2> "$T/dump.err" || { cat "$T/dump.err"; fail "dump of $T/$area"; }
done

# --trust-writers under random damage to the ring data while recording: the packets are checked,
# written and sent in place, so a record changed after its check may reach the trace (what the
# option gives up, docs/RELIABILITY.md), but the recorder reads nothing outside the sub-buffer and
# ends (0 or 3), and tracebuf's reader reads the trace to its end (a damaged packet said and
# skipped: exit 3)
echo "== data (random, while recording), --trust-writers"
S=$T/shm/data-trusted.tb
rm -f "$T/stop"
"$CLI" record -q --trust-writers --session "$S" --sb-size 16K --sb-count 8 -o "$T/data-trusted" -- \
	"$WL" --threads 2 --events 100000000 --until-file "$T/stop" > "$T/out" 2> "$T/err" &
rec=$!
wait_for "a first packet on disk" sh -c "find '$T/data-trusted' -type f -size +0 -name 'chan_*' 2> /dev/null | grep -q ."
"$CORRUPT" "$S" data $RANDOM 300 || fail "corrupter failed on data (trusted)"
touch "$T/stop"
wait $rec
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/err"; fail "record --trust-writers exited $rc after corruption of data"; }
"$CLI" dump "$T/data-trusted" > /dev/null 2> "$T/dump.err"
drc=$?
# 0, or 3: read to the end with the damaged packets said and skipped
[ $drc -eq 0 ] || [ $drc -eq 3 ] || { cat "$T/dump.err"; fail "dump of $T/data-trusted exited $drc"; }
echo "  exit $rc; tracebuf dump exit $drc ($(wc -l < "$T/dump.err") diagnostic lines)"
echo PASS
