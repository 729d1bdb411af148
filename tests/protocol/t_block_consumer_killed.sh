# SPDX-License-Identifier: MIT
# t_block_consumer_killed.sh - block mode never makes a program wait for a consumer that is
# gone: after `kill -9` of the recorder, producers notice (its pid is dead) and drop at full
# speed, counted under their own cause ("no consumer"), instead of waiting the block timeout
# for every event; a new consumer (`record --attach`) restores blocking; and the trace the two
# recorders leave, completed by the second, accounts for every event (babeltrace2).
# Judged by counters, not by time: after the kill each thread waits the timeout at most once.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/../lib/accounting.sh"
trap 'touch "$T/stop"; kill -9 $(jobs -p) 2> /dev/null; wait; rm -rf "$T"' EXIT
need_bt2
S=$T/shm/b.tb
# counter of `tracebuf stat` (total line) by column name
stat_col() {
	"$CLI" stat "$S" 2> /dev/null | awk -v c="$1" '$1 == "cpu" { for (i = 1; i <= NF; i++) if ($i == c) k = i }
		$1 == "total" && k { print $k; exit }'
}
packets() { ls "$1"/chan_* 2> /dev/null | xargs -r cat | wc -c; }

# 2 threads pace themselves (--sleep-us): a live consumer keeps up, nothing is lost
"$CLI" record -q --mode block --block-timeout 200ms --sb-size 16K --sb-count 2 --session "$S" -o "$T/b" -- \
	"$WL" --threads 2 --events 100000000 --sleep-us 200 --until-file "$T/stop" > "$T/wl.out" &
rp=$!
for i in $(seq 1200); do [ "$(packets "$T/b")" -gt 0 ] && break; sleep 0.05; done
[ "$(packets "$T/b")" -gt 0 ] || fail "no packet reached the trace"
wl=$(pgrep -P $rp) || fail "workload not running"
# timeouts before the kill (a slow build's recorder may miss the 200 ms once) are not the question
t0=$(stat_col timeout)
{ kill -9 $rp; wait $rp; } 2> /dev/null
# producers now fill the rings and find the consumer gone
for i in $(seq 1200); do [ "${n1:=0}" -gt 1000 ] && break; sleep 0.05; n1=$(stat_col noconsumer); done
[ "${n1:-0}" -gt 1000 ] || fail "producers did not count 'no consumer' drops after the kill (got ${n1:-0})"
t1=$(stat_col timeout)
echo "after the kill: ${n1} dropped (no consumer), ${t0:=0} -> ${t1} block timeouts"
# each thread may have been waiting when the consumer died: at most one timeout each (2 threads;
# and once per 50 ms re-check window in the worst case, so allow a few)
[ $((t1 - t0)) -le 8 ] || fail "$((t1 - t0)) block timeouts after the consumer died: producers kept waiting for it"

# a new consumer: blocking resumes, nothing more is dropped for lack of a consumer
"$CLI" record -q --attach "$S" -o "$T/b" 2> "$T/att.err" &
ap=$!
size0=$(packets "$T/b")
for i in $(seq 1200); do [ "$(packets "$T/b")" -gt "$size0" ] && break; sleep 0.05; done
n2=$(stat_col noconsumer)
size1=$(packets "$T/b")
# the consumer is attached and draining: let it drain 64 more sub-buffers (condition, not time)
for i in $(seq 2400); do [ "$(packets "$T/b")" -gt $((size1 + 64 * 16384)) ] && break; sleep 0.05; done
[ "$(packets "$T/b")" -gt $((size1 + 64 * 16384)) ] || fail "the new consumer does not drain"
n3=$(stat_col noconsumer)
echo "with the new consumer: 'no consumer' drops $n2 -> $n3"
[ "$n3" = "$n2" ] || fail "producers still dropped for lack of a consumer after one attached ($n2 -> $n3)"
touch "$T/stop"
for i in $(seq 1200); do kill -0 "$wl" 2> /dev/null || break; sleep 0.05; done
kill -0 "$wl" 2> /dev/null && fail "the workload did not finish"
wait $ap || { cat "$T/att.err"; fail "record --attach exited $?"; }
w=$(sed -n 's/^written: //p' "$T/wl.out")
check_accounting "$T/b" "$w"
"$PY" "$(dirname "$0")/../lib/bt2_account.py" "$T/b" | grep -q "noconsumer:$n3" || fail "the trace does not carry the $n3 'no consumer' drops"
echo PASS
