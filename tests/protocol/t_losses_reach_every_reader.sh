# SPDX-License-Identifier: MIT
# t_losses_reach_every_reader.sh - every event written is delivered or counted lost, and the
# count, by cause, reaches every reader: babeltrace2 (its Python bindings, independently of
# our code) finds written == delivered + discarded with no "count unknown", and `report`,
# `dump --format json` and the recorder's summary show the same totals by cause, for
# discard, overwrite and block recordings, a live snapshot of a flight recorder, and
# `recover` after kill -9 of both the program and the recorder (overwrite, and discard
# completing the killed recorder's directory).  (A full disk: t_record_disk_full.sh.)
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
trap 'touch "$T/go"; kill -9 $(jobs -p) 2> /dev/null; wait; rm -rf "$T"' EXIT
need_bt2
written() { sed -n 's/^written: //p' "$1" | tail -1; }

echo "== discard: rings too small for two threads at full speed"
"$CLI" record --sb-size 16K --sb-count 2 -o "$T/d" -- "$WL" --threads 2 --events 200000 > "$T/d.out" 2> "$T/d.err" ||
	{ cat "$T/d.err"; fail "record (discard)"; }
w=$(written "$T/d.out")
check_accounting "$T/d" "$w" "$T/d.err"
"$PY" "$(dirname "$0")/../lib/bt2_account.py" "$T/d" | grep -q "causes=.*full:" ||
	fail "a discard recording this small loses events ring-full"

echo "== overwrite: a flight recorder keeps the newest 4 sub-buffers"
"$CLI" record --mode overwrite --sb-size 64K --sb-count 4 -o "$T/o" -- "$WL" --threads 1 --events 100000 > "$T/o.out" 2> "$T/o.err" ||
	{ cat "$T/o.err"; fail "record (overwrite)"; }
check_accounting "$T/o" "$(written "$T/o.out")" "$T/o.err"

echo "== block: producers wait for the consumer (up to the timeout)"
"$CLI" record --mode block --sb-size 16K --sb-count 2 -o "$T/b" -- "$WL" --threads 2 --events 50000 > "$T/b.out" 2> "$T/b.err" ||
	{ cat "$T/b.err"; fail "record (block)"; }
check_accounting "$T/b" "$(written "$T/b.out")" "$T/b.err"

echo "== live snapshot of a flight recorder (the program wrote everything and waits, alive)"
S=$T/shm/snap.tb
"$CLI" record -q --mode overwrite --session "$S" --sb-size 16K --sb-count 4 -o "$T/sf" -- \
	"$WL" --threads 2 --events 60000 --wait-file "$T/go" > "$T/s.out" 2> "$T/s.err" &
rp=$!
for i in $(seq 1200); do [ -n "$(written "$T/s.out")" ] && break; sleep 0.05; done
w=$(written "$T/s.out")
[ -n "$w" ] || fail "the workload did not finish writing"
"$CLI" snapshot "$S" -o "$T/snap" 2> "$T/snap.err" || { cat "$T/snap.err"; fail "snapshot"; }
check_accounting "$T/snap" "$w"
touch "$T/go"
wait $rp || fail "record of the snapshot workload exited $?"
check_accounting "$T/sf" "$w"

n=0
for mode in overwrite discard; do
	n=$((n + 1))
	echo "== recover after kill -9 of the program and the recorder ($mode)"
	S=$T/shm/k$n.tb
	rm -f "$T/go"
	"$CLI" record -q --mode $mode --session "$S" --sb-size 16K --sb-count 4 -o "$T/k$n" -- \
		"$WL" --threads 2 --events 40000 --wait-file "$T/go" > "$T/k$n.out" &
	rp=$!
	for i in $(seq 1200); do [ -n "$(written "$T/k$n.out")" ] && break; sleep 0.05; done
	w=$(written "$T/k$n.out")
	[ -n "$w" ] || fail "the workload did not finish writing"
	wl=$(pgrep -P $rp) || fail "workload not running"
	kill -9 $rp; kill -9 $wl; wait $rp 2> /dev/null
	[ -e "$S" ] || fail "the session file is gone"
	if [ $mode = overwrite ]; then out=$T/r$n; else out=$T/k$n; fi # discard: complete the recorder's trace
	"$CLI" recover "$S" -o "$out" 2> "$T/r$n.err"; rc=$?
	[ $rc -eq 0 ] || { cat "$T/r$n.err"; fail "recover ($mode) exited $rc"; }
	check_accounting "$out" "$w"
	rm -f "$S"
done
echo PASS
