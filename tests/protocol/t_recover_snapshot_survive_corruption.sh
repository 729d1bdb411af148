# SPDX-License-Identifier: MIT
# t_recover_snapshot_survive_corruption.sh - `recover` and `snapshot` of a dead session file
# that another process scribbled into (seeded random writes of random bytes, 0xff or zeros into
# one area per round: ring data, sub-buffer descriptors, control blocks, registry, map header;
# tests/tools/corrupt_live.c) never crash, exit 0 or 3 (3: something was dropped as invalid),
# and never write a packet a reader rejects: tracebuf's reader reads every trace they write
# without a diagnostic, and babeltrace2 reads every 10th whole.  CORRUPT_ROUNDS (default 120).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
CORRUPT=${TB_CORRUPT:?}
rounds=${CORRUPT_ROUNDS:-120}
S=$T/shm/dead.tb
# a dead session: its program and its recorder killed -9 with data in the rings
"$CLI" record -q --session "$S" --sb-size 16K --sb-count 8 --flush-period 3600s -o "$T/t" -- \
	"$WL" --threads 2 --events 20000 --wait-file "$T/go" > "$T/out" 2> "$T/err" &
rec=$!
for ((i = 0; i < 1200; i++)); do
	grep -q "^written: " "$T/out" && break
	kill -0 $rec 2> /dev/null || { cat "$T/err"; fail "record ended early"; }
	sleep 0.1
done
grep -q "^written: " "$T/out" || fail "timed out waiting for the workload"
wpid=$(pgrep -P $rec) || fail "cannot find the workload (the recorder's child)"
kill -9 $rec "$wpid"
wait $rec 2> /dev/null
for ((i = 0; i < 100; i++)); do [ -z "$(pgrep -f -- "--wait-file $T/go")" ] && break; sleep 0.1; done
[ -z "$(pgrep -f -- "--wait-file $T/go")" ] || fail "the killed processes are still there"
cp "$S" "$T/pristine.tb"
have_bt2=0
if need_bt2 > /dev/null 2>&1; then have_bt2=1; fi
areas=(data desc ctl registry header)
n3=0
for ((r = 1; r <= rounds; r++)); do
	area=${areas[$((r % 5))]}
	cp "$T/pristine.tb" "$S"
	"$CORRUPT" "$S" "$area" "$r" 8 > /dev/null || fail "corrupter, round $r"
	for cmd in recover snapshot; do
		rm -rf "$T/o"
		timeout 120 "$CLI" $cmd "$S" -o "$T/o" > /dev/null 2> "$T/cmd.err"
		rc=$?
		case $rc in
		0) ;;
		3) n3=$((n3 + 1)) ;;
		1) # refused as a whole (the header no longer describes a session): nothing written
		   [ ! -e "$T/o" ] || [ -z "$(ls -A "$T/o")" ] || [ "$area" != header ] ||
			{ cat "$T/cmd.err"; fail "$cmd failed after writing a trace (round $r, $area)"; }
		   continue ;;
		*) cat "$T/cmd.err"; fail "$cmd exited $rc on a corrupted dead session (round $r, $area)" ;;
		esac
		[ -d "$T/o" ] && [ -n "$(ls -A "$T/o" 2> /dev/null)" ] || continue
		"$CLI" dump "$T/o" > /dev/null 2> "$T/dump.err"
		drc=$?
		if [ $drc -ne 0 ] && ! { [ $drc -eq 1 ] && grep -q "no stream\|nothing readable\|no packet" "$T/dump.err"; }; then
			head -5 "$T/dump.err"
			cp -r "$T/o" "/tmp/tb-corrupt-$cmd-$r"
			fail "$cmd wrote a trace the reader finds damaged (round $r, $area; kept in /tmp/tb-corrupt-$cmd-$r)"
		fi
		if [ $have_bt2 = 1 ] && [ $((r % 10)) = 0 ]; then
			"$PY" "$(dirname "$0")/../lib/bt2_account.py" "$T/o" > "$T/bt.out" 2>&1 ||
				{ cat "$T/bt.out"; fail "babeltrace2 cannot read what $cmd wrote (round $r, $area)"; }
		fi
	done
done
echo "$rounds rounds: $n3 runs exited 3 (something dropped as invalid)"
echo PASS
