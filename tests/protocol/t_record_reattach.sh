# SPDX-License-Identifier: MIT
# t_record_reattach.sh - the consumer is killed (kill -9) while the command writes: producers
# go on and count their losses; `record --attach` takes over the same session and the same
# trace directory (a packet the killed consumer wrote but did not release is not written twice,
# a packet it was writing is cut), and the identity holds exactly over the whole run.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
trap 'kill -9 $(jobs -p) 2>/dev/null; wait; rm -rf "$T"' EXIT

for round in 1 2; do
	S=$T/shm/s$round.tb D=$T/d$round
	"$CLI" record -q --session "$S" --sb-size 16K --sb-count 4 -o "$D" -- \
		"$WL" --threads 2 --events 300000 --sleep-us 100 > "$T/w$round.out" &
	rp=$!
	# the workload runs once the recorder started it (seconds under
	# valgrind or on a loaded machine)
	wl=
	for _ in $(seq 300); do wl=$(pgrep -P $rp) && break; sleep 0.1; done
	[ -n "$wl" ] || fail "workload not running 30 s after record started"
	# then writes for a random while, and is stopped while its consumer is
	# killed, so that the kill always lands mid-run: 300000 events sleep at
	# least 100 us every 64 (>= 0.47 s whatever the load), so 0-0.2 s in it
	# still runs (a longer, timed pause let it finish first on a loaded machine)
	sleep 0.$((RANDOM % 3))
	kill -STOP $wl || fail "workload ended before the kill point"
	kill -9 $rp; wait $rp 2>/dev/null
	kill -CONT $wl
	sleep 0.3 # producers run without a consumer: they lose and count
	"$CLI" record --attach "$S" -o "$D" 2> "$T/attach$round.err" || { cat "$T/attach$round.err"; fail "attach"; }
	# attach ends when no process of the session is left
	# (a zombie is finished: PID 1 of a container may never reap it)
	st=$(sed 's/.*) \(.\).*/\1/' /proc/$wl/stat 2>/dev/null)
	[ -z "$st" ] || [ "$st" = Z ] || fail "attach returned while the workload runs ($st)"
	w=$(awk '/^written:/{print $2}' "$T/w$round.out")
	[ -n "$w" ] || fail "workload printed no count"
	"$VERIFY" --written "$w" "$D" || { cat "$T/attach$round.err"; fail "round $round: identity over the killed + attached consumers"; }
	[ ! -e "$S" ] || fail "the drained session file was left"
done
echo PASS
