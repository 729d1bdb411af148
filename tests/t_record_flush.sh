# SPDX-License-Identifier: MIT
# t_record_flush.sh - a quiet CPU's events reach the trace within about two flush periods
# (the per-CPU flusher closes the idle partial packet), while the command still runs; and an
# idle recording costs (almost) no CPU time.
set -u
. "$(dirname "$0")/lib/recorder_env.sh"

PERIOD_MS=250
# Runs inside record: 10 events on CPU $1, then polls the trace until they are there.
cat > "$T/probe.sh" <<'PROBE'
t0=$(date +%s%N)
"$WL" --pin "$1" --threads 1 --events 10 > /dev/null || exit 9
out=
for i in $(seq 80); do
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
	ms=$(sed 's/elapsed_ms=\([0-9]*\).*/\1/' "$T/q$cpu.out")
	# two periods, plus process start-up and polling slack on a loaded 2-CPU machine
	[ "$ms" -le $((2 * PERIOD_MS + 600)) ] || fail "cpu $cpu: took $ms ms, flush period $PERIOD_MS ms"
done

# idle: 2 s of `sleep` recorded with the default 1 s flush period costs < 0.1 s of CPU
TIMEFORMAT='%U %S'
{ time "$CLI" record -q -o "$T/idle" -- sleep 2 2> /dev/null; } 2> "$T/time" || fail "record sleep"
cpu_s=$(awk '{print $1 + $2}' "$T/time")
echo "idle record: ${cpu_s}s CPU for 2 s"
if [ -n "${TB_UNDER_VALGRIND:-}" ]; then
	echo "idle CPU budget not checked: the recorder runs under valgrind (its start-up alone costs ~1 s)"
else
	awk -v c="$cpu_s" 'BEGIN{exit !(c < 0.1)}' || fail "idle recording used ${cpu_s}s of CPU"
fi
echo PASS
