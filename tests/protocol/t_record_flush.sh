# SPDX-License-Identifier: MIT
# t_record_flush.sh - a quiet CPU's events reach the trace while the command still runs (the
# per-CPU flusher closes the idle partial packet: nothing else can, the producer is alive and
# its packet is far from full); and an idle recorder sleeps: its threads wake at the rate of
# their timers, not in a polling loop.
#
# Neither verdict depends on how fast the build or the machine is: the first waits on a
# condition (with a generous hang guard, not a latency bound; the latency is printed), the
# second counts the recorder's voluntary context switches (wake-ups) per second of wall time
# while it is idle, which a sanitizer or a loaded machine does not change, where CPU time
# (0.02 s plain, 0.13-0.16 s under ASan/TSan on a fresh machine) does.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"

PERIOD_MS=250
# Runs inside record: 10 events on CPU $1, then polls the trace until they are there (the
# workload has exited, but this script, a process of the session, is still running).
cat > "$T/probe.sh" <<'PROBE'
t0=$(date +%s%N)
"$WL" --pin "$1" --threads 1 --events 10 > /dev/null || exit 9
out=
for i in $(seq 1200); do # hang guard: 60 s
	out=$("$VERIFY" "$2" 2>/dev/null) && case "$out" in "delivered=10 "*) break ;; esac
	out=
	sleep 0.05
done
t1=$(date +%s%N)
echo "elapsed_ms=$(((t1 - t0) / 1000000)) $out"
PROBE
export WL VERIFY
ncpu=$(getconf _NPROCESSORS_ONLN)
for cpu in 0 $((ncpu - 1)); do
	rm -rf "$T/q$cpu"
	"$CLI" record -q --flush-period ${PERIOD_MS}ms --sb-size 64K -o "$T/q$cpu" -- bash "$T/probe.sh" $cpu "$T/q$cpu" > "$T/q$cpu.out" ||
		fail "record of the probe failed"
	cat "$T/q$cpu.out"
	grep -q "delivered=10 " "$T/q$cpu.out" || fail "cpu $cpu: events did not reach the trace while the command ran"
done

# Idle: the command (a process of the session that writes nothing) reads the wake-ups of every
# thread of its recorder ($PPID) over 3 s of idleness, after the start-up is over.  Each thread
# of the recorder waits on a timer of at least 0.5 s (flushers: half a live period while
# their rings hold nothing to close, and the flush period; the drain thread: its futex
# timeout; the main thread: sigtimedwait), so an idle recorder wakes one to two times per
# thread per second.  The bound allows 3 per thread per second plus 20 for the
# sanitizer runtimes' own threads (TSan's background thread wakes ~10 times a second); a
# thread polling every 10 ms makes 100 per second and fails it.
cat > "$T/idle.sh" <<'IDLE'
wakeups() { # voluntary context switches of every thread of the recorder so far
	local n=0 f v
	for f in /proc/$PPID/task/*/status; do
		v=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "$f" 2> /dev/null) && n=$((n + ${v:-0}))
	done
	echo $n
}
# start-up done: the flushers exist (one per ring slot) before the first sample
until [ "$(ls /proc/$PPID/task | wc -l)" -ge 3 ]; do sleep 0.1; done
sleep 1
w0=$(wakeups) t0=$(date +%s%N)
sleep 3
w1=$(wakeups) t1=$(date +%s%N)
echo "threads=$(ls /proc/$PPID/task | wc -l) wakeups=$((w1 - w0)) ms=$(((t1 - t0) / 1000000))"
IDLE
"$CLI" record -q -o "$T/idle" -- bash "$T/idle.sh" > "$T/idle.out" || fail "record of the idle probe failed"
cat "$T/idle.out"
read -r threads wake ms < <(sed 's/threads=\([0-9]*\) wakeups=\([0-9]*\) ms=\([0-9]*\)/\1 \2 \3/' "$T/idle.out")
[ -n "${ms:-}" ] && [ "$ms" -gt 0 ] || fail "the idle probe printed nothing usable"
if [ -n "${TB_UNDER_VALGRIND:-}" ]; then
	echo "idle wake-ups not judged: the recorder runs under valgrind, whose scheduler lock switches threads itself"
else
	awk -v w="$wake" -v t="$threads" -v ms="$ms" 'BEGIN{ exit !(w * 1000 / ms <= 3 * t + 20) }' ||
		fail "idle recorder woke $wake times in $ms ms with $threads threads (a polling loop?)"
fi
echo PASS
