# SPDX-License-Identifier: MIT
# t_recover_kill9.sh - the application and its consumer die of kill -9 at random moments;
# `tracebuf recover` writes a trace of every record it can prove valid (partial packets closed,
# anything else cut and counted), which verifies completely and babeltrace2 reads.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT
have_bt=0; command -v babeltrace2 >/dev/null 2>&1 && have_bt=1

n=0
for mode in overwrite discard overwrite discard; do
	n=$((n + 1))
	S=$T/shm/s$n.tb
	"$CLI" record -q --mode $mode --session "$S" --sb-size 16K --sb-count 4 -o "$T/rec$n" -- \
		"$WL" --threads 2 --events 100000000 --signals > /dev/null &
	rp=$!
	for i in $(seq 100); do "$CLI" stat "$S" > /dev/null 2>&1 && break; sleep 0.05; done
	sleep 0.$((1 + RANDOM % 6))
	wl=$(pgrep -P $rp) || fail "workload not running"
	# The recorder first: killed after its workload, it may see the workload die (SIGCHLD),
	# finish the trace, remove the session file and exit 137 (128 + the workload's SIGKILL)
	# by itself before the second kill; recover then finds no session (the old flake).
	kill -9 $rp; kill -9 $wl; wait $rp 2>/dev/null; rc=$?
	[ $rc -eq 137 ] || fail "the recorder was not killed, it exited $rc"
	[ -e "$S" ] || fail "the session file is gone: the recorder finished by itself before the kill"
	"$CLI" recover "$S" -o "$T/r$n" 2> "$T/r$n.err"; rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/r$n.err"; fail "recover ($mode) exited $rc"; }
	head -2 "$T/r$n.err"
	"$VERIFY" "$T/r$n" || fail "recovered trace ($mode) is not valid"
	if [ $have_bt = 1 ]; then
		babeltrace2 "$T/r$n" > /dev/null 2> "$T/bt.err" || { head -3 "$T/bt.err"; fail "babeltrace2 cannot read the recovered trace"; }
	fi
	rm -f "$S"
done
[ $have_bt = 1 ] || { echo "SKIP: babeltrace2 not installed: recovered traces checked by the test walker only"; exit 77; }
echo PASS
