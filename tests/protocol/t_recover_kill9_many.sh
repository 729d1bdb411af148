# SPDX-License-Identifier: MIT
# t_recover_kill9_many.sh - t_recover_kill9 many times: the application (2 threads + signal
# handlers writing) and its recorder die of kill -9 at a random moment; `tracebuf recover`
# must exit 0/3 and write a trace that tb-verify accepts, every time.
# Runs: $KILL9_RUNS, or 300 when STRESS_SECONDS is set, else 4.  Prints the totals.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
runs=${KILL9_RUNS:-$([ -n "${STRESS_SECONDS:-}" ] && echo 300 || echo 4)}
trap 'kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT
fail() { echo "FAIL: run $n: $*" >&2; exit 1; }
RANDOM=${KILL9_SEED:-1}
ev=0; pk=0; cut=0; rc3=0
for n in $(seq "$runs"); do
	mode=$([ $((n % 2)) = 0 ] && echo discard || echo overwrite)
	S=$T/shm/s.tb
	"$CLI" record -q --mode $mode --session "$S" --sb-size 16K --sb-count 4 -o "$T/rec" -- \
		"$WL" --threads 2 --events 100000000 --signals > /dev/null &
	rp=$!
	for i in $(seq 100); do "$CLI" stat "$S" > /dev/null 2>&1 && break; sleep 0.02; done
	sleep 0.0$((RANDOM % 10))$((RANDOM % 10))
	wl=$(pgrep -P $rp) || fail "workload not running"
	# The recorder first: killed after its workload, it may see the workload die (SIGCHLD),
	# finish the trace, remove the session file and exit 137 (128 + the workload's SIGKILL)
	# by itself before the second kill; recover then finds no session (the old flake).
	kill -9 $rp; kill -9 $wl; wait $rp 2>/dev/null; rc=$?
	[ $rc -eq 137 ] || fail "the recorder was not killed, it exited $rc"
	[ -e "$S" ] || fail "the session file is gone: the recorder finished by itself before the kill"
	"$CLI" recover "$S" -o "$T/r" 2> "$T/r.err"; rc=$?
	[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$T/r.err"; fail "recover ($mode) exited $rc"; }
	[ $rc -eq 3 ] && rc3=$((rc3 + 1))
	line=$(grep -m1 'events in' "$T/r.err")
	e=$(echo "$line" | sed -n 's/.*: \([0-9]*\) events\{0,1\} in \([0-9]*\) packets\{0,1\}.*; \([0-9]*\) packets\{0,1\} cut.*/\1 \2 \3/p')
	set -- $e
	ev=$((ev + ${1:-0})); pk=$((pk + ${2:-0})); cut=$((cut + ${3:-0}))
	"$VERIFY" "$T/r" > "$T/v.out" 2>&1 || { cat "$T/v.out"; fail "recovered trace ($mode) is not valid"; }
	rm -rf "$S" "$T/r" "$T/rec"
done
echo "kill -9 runs $runs: recovered $ev events in $pk packets, $cut packets cut as invalid, recover exit 3 in $rc3 runs; every trace verified"
echo PASS
