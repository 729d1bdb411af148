# SPDX-License-Identifier: MIT
# t_profile_samples_at_the_asked_rate.sh - where perf_event_open is permitted, `tracebuf profile
# -F 999` samples each thread with a perf cpu-clock event (report --profile says "sampled by
# perf cpu-clock") and delivers at least half the asked rate per CPU-second of the program's
# threads (both are CPU time: the ratio does not depend on how busy the machine is; `make
# bench` has the exact figure).  With TRACEBUF_PROFILE_TIMER=1 the CPU-time timer is used and
# said so.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
. "$(dirname "$0")/prof_env.sh"
prof perf -F 999 -- "$P/prof_spin" 2 0.5 5 || { cat "$T/perf.err"; fail "prof_spin failed"; }
"$CLI" report --profile "$T/perf" > "$T/perf.txt" || fail "report --profile"
if grep -q "sampled by cpu-time timer" "$T/perf.txt"; then
	echo "SKIP: perf_event_open is not permitted here (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2> /dev/null), or seccomp)"
	exit 77
fi
grep -q "sampled by perf cpu-clock" "$T/perf.txt" || { cat "$T/perf.txt"; fail "report --profile does not say how it sampled"; }
n=$(grep -c '"profile:sample"' "$T/perf.json")
# 2 threads x 0.5 s of CPU time x 999 Hz = 999 periods; at least half of them as samples
[ "$n" -ge 500 ] || fail "$n samples for 1.0 CPU-second at 999 Hz (want >= 500)"
echo "perf cpu-clock: $n samples for 1.0 CPU-second at 999 Hz"
TRACEBUF_PROFILE_TIMER=1 prof timer -F 999 -- "$P/prof_spin" 1 0.2 5 || fail "prof_spin under the timer"
"$CLI" report --profile "$T/timer" | grep -q "sampled by cpu-time timer" || fail "the timer fallback is not said"
echo PASS
