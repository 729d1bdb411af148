#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/lttng/run.sh MODE OUTDIR APP [APP ARGS...] - runs the LTTng-UST
# benchmark executable APP under a fresh LTTng session, inside a private
# mount namespace: /run and /dev/shm are new tmpfs mounts that vanish with
# the namespace, so the machine keeps no socket, shm file or lock of it.
#
#   MODE    discard (the producer-cost rows) | blocking (the trace-size row:
#           nothing lost, --blocking-timeout=inf) | default (the equal-load
#           rows: LTTng's default channel settings, per-UID buffers) |
#           untraced (no lttng-sessiond at all: APP runs with LTTng-UST
#           loaded and nothing to register with, its untraced baseline) |
#           relay (the relay rows: LTTng's default channel settings, per-UID
#           buffers, the consumer daemon streaming to a relay daemon)
#   OUTDIR  where the trace goes (must not exist); relay: the relay daemon's
#           URL, net://HOST:CONTROL_PORT:DATA_PORT (`lttng create --set-url`)
#
# Channel: per-UID buffers, 8 x 256 KiB sub-buffers per CPU (tracebuf record's
# defaults until issue 26, 64 x 256 KiB since), no context; `default`: only --buffers-uid given.  lttng-sessiond
# is started here and stopped by the pid we started; APP's output is passed
# through, followed by `discarded N` (events LTTng counted as discarded),
# `trace_bytes N` and `daemon_cpu_ns N`: the CPU time of lttng-sessiond and
# every process under it (lttng-consumerd, run-as), all their threads
# (/proc/PID/task/TID/schedstat, ns), from before `lttng create` to after
# `lttng stop` (which waits for the consumer daemon's last packets); and
# `consumerd_cpu_ns N`: the lttng-consumerd processes' share of it (what moves
# the data: the relay rows compare it with tracebuf's recorder).
# Needs root (or CAP_SYS_ADMIN) for unshare/mount.
set -eu
if [ "${TB_LTTNG_INNER:-}" != 1 ]; then
	TB_LTTNG_INNER=1 exec unshare --mount --propagation private sh "$0" "$@"
fi
mode=$1 out=$2
shift 2
mount -t tmpfs -o mode=0755 none /run
mount -t tmpfs -o mode=1777 none /dev/shm
LTTNG_HOME=$(mktemp -d /tmp/tb-lttng-home.XXXXXX)
export LTTNG_HOME
sd=
cleanup() {
	if [ -n "$sd" ]; then
		lttng destroy -a >/dev/null 2>&1 || true
		kill "$sd" 2>/dev/null || true
		wait "$sd" 2>/dev/null || true
	fi
	rm -rf "$LTTNG_HOME"
}
trap cleanup EXIT INT TERM
if [ "$mode" = untraced ]; then
	"$@"
	exit
fi
# the processes under pid $1, recursively (ppid field of /proc/PID/stat)
descendants() {
	for c in $(awk -v p="$1" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
# CPU ns of lttng-sessiond and its descendants, every thread; -1 where the
# kernel has no schedstat files (CONFIG_SCHED_INFO), never a silent 0
daemon_cpu() {
	if [ ! -r /proc/"$sd"/schedstat ]; then
		echo -1
		return
	fi
	for p in $sd $(descendants "$sd"); do
		cat /proc/"$p"/task/*/schedstat 2>/dev/null
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
# the same for the lttng-consumerd processes under it only
consumerd_cpu() {
	if [ ! -r /proc/"$sd"/schedstat ]; then
		echo -1
		return
	fi
	for p in $(descendants "$sd"); do
		[ "$(cat /proc/"$p"/comm 2>/dev/null)" = lttng-consumerd ] && cat /proc/"$p"/task/*/schedstat 2>/dev/null
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
lttng-sessiond --no-kernel >"$LTTNG_HOME/sessiond.log" 2>&1 &
sd=$!
i=0
until lttng list >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 "$sd" 2>/dev/null; then
		echo "run.sh: lttng-sessiond did not come up:" >&2
		cat "$LTTNG_HOME/sessiond.log" >&2
		exit 1
	fi
	sleep 0.1
done
cpu0=$(daemon_cpu)
cc0=$(consumerd_cpu)
if [ "$mode" = relay ]; then
	lttng create tbbench --set-url="$out" >/dev/null
else
	lttng create tbbench --output="$out" >/dev/null
fi
if [ "$mode" = default ] || [ "$mode" = relay ]; then
	lttng enable-channel -u --buffers-uid ch >/dev/null
elif [ "$mode" = blocking ]; then
	lttng enable-channel -u --buffers-uid --discard --blocking-timeout=inf \
		--subbuf-size=256K --num-subbuf=8 ch >/dev/null
else
	lttng enable-channel -u --buffers-uid --discard --subbuf-size=256K --num-subbuf=8 ch >/dev/null
fi
lttng enable-event -u -c ch tbbench:ev16 >/dev/null
lttng start >/dev/null
LTTNG_UST_ALLOW_BLOCKING=1 LTTNG_UST_REGISTER_TIMEOUT=-1 "$@"
lttng stop >"$LTTNG_HOME/stop.log" 2>&1
cpu1=$(daemon_cpu)
cc1=$(consumerd_cpu)
disc=$(lttng list tbbench -c ch 2>/dev/null | sed -n 's/.*Discarded events: *\([0-9]*\).*/\1/p' | head -n1)
if [ -z "$disc" ]; then
	disc=$(sed -n 's/.*Warning: *\([0-9]*\) events* were discarded.*/\1/p' "$LTTNG_HOME/stop.log" | head -n1)
fi
echo "discarded ${disc:-0}"
lttng destroy tbbench >/dev/null
if [ "$mode" != relay ]; then
	echo "trace_bytes $(du -sb "$out" | cut -f1)"
fi
if [ "$cpu0" -lt 0 ] || [ "$cpu1" -lt 0 ]; then
	echo "daemon_cpu_ns -1"
	echo "consumerd_cpu_ns -1"
else
	echo "daemon_cpu_ns $((cpu1 - cpu0))"
	echo "consumerd_cpu_ns $((cc1 - cc0))"
fi
