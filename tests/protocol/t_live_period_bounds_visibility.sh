# SPDX-License-Identifier: MIT
# t_live_period_bounds_visibility.sh - the live period (record --live-period, issue 27): every
# event is shown by `dump --follow` and `report --follow` within the live period whatever the
# rate it is written at (~10, ~1,000, ~100,000 events/s steady, and bursts with idle gaps);
# a ring with nothing new since its last close gets no packet (an idle CPU: none at all); a
# producer at full speed still fills its packets (none is cut early).
#
# Latency: tb-live-latency runs the follower and times each event's arrival against the
# writer's clock read before the write (tests/tools/live_latency.c); it prints p50/p99 (the
# figures of docs/BENCHMARKS.md) and judges the p99 against live period + 0.5 s after
# discounting the time its per-CPU probe threads saw the machine take away (a loaded machine
# delays the recorder and the follower alike: it cannot fail this; a recorder that keeps events
# back until a packet fills, minutes at 10 events/s, still does).  Packets: every packet closed
# before it was full must have been open a quarter of a live period (timestamps in the trace:
# a late flusher closes later, never sooner, so this holds under any load too).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
LW=${TB_LIVE_WRITER:?}; LL=${TB_LIVE_LATENCY:?}
trap 'kill -9 $(jobs -p) 2> /dev/null; wait 2> /dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
ncpu=$(getconf _NPROCESSORS_ONLN)
BOUND_MS=1500 # live period 1 s + 0.5 s

# latency NAME FOLLOWER-ARGS -- WRITER-ARGS: record the writer, follow it, judge the p99
latency() {
	local name=$1 mode=$2 n=$3; shift 3
	local fargs=() ; while [ "$1" != -- ]; do fargs+=("$1"); shift; done; shift
	rm -rf "$T/$name" "$T/$name.log"
	"$CLI" record -q --live-period 1s -o "$T/$name" -- "$LW" "$@" --log "$T/$name.log" > "$T/$name.w" 2>&1 &
	local rec=$!
	wait_for test -e "$T/$name/.tracebuf-recorder" || fail "$name: the recorder did not start"
	"$LL" --mode "$mode" --log "$T/$name.log" --events "$n" --bound-ms $BOUND_MS -- \
		"$CLI" "$mode" --follow "${fargs[@]}" "$T/$name" > "$T/$name.lat" 2>&1
	local rc=$?
	wait $rec || { cat "$T/$name.w"; fail "$name: record"; }
	echo "  $name: $(cat "$T/$name.lat")"
	# Under valgrind (the .valgrind variant: memcheck of the follower) the follower itself runs
	# some 30 times slower: at 100,000 events/s its own throughput sets the latency (CI: p99 5 s,
	# every event shown). Every event must still be shown; the bound is judged by the other stages.
	if [ $rc = 3 ] && [ -n "${TB_UNDER_VALGRIND:-}" ]; then
		echo "  $name: the bound not judged under valgrind (the follower's own speed); every event was shown"
		return
	fi
	[ $rc = 0 ] || fail "$name: visibility latency"
}

echo "== visibility latency, live period 1 s (bound ${BOUND_MS} ms)"
latency steady10 dump 40 -- --rate 10 --seconds 4
latency steady1k dump 4000 -- --rate 1000 --seconds 4
latency steady100k dump 300000 -- --rate 100000 --seconds 3
latency bursts dump 4000 -- --burst 1000 --gap 1300 --bursts 4
latency report10 report 40 --interval 100ms -- --rate 10 --seconds 4 --pin 0
latency report1k report 4000 --interval 100ms -- --rate 1000 --seconds 4 --pin 0

# packets FILE: "ts_begin ts_end content_bits packet_bits" per packet of a stream file
# (the four u64 at bytes 104..135 of a packet: docs/FORMAT.md, section 2)
packets() {
	local f=$1 off=0 size
	size=$(stat -c %s "$f")
	while [ "$off" -lt "$size" ]; do
		set -- $(od -An -tu8 -j $((off + 104)) -N 32 "$f")
		echo "$1 $2 $3 $4"
		[ "${4:-0}" -gt 0 ] || fail "$f: packet at $off has no size"
		off=$((off + $4 / 8))
	done
}
freq() { sed -n 's/^[[:space:]]*freq = \([0-9]*\);.*/\1/p' "$1/metadata" | head -1; }

echo "== an idle ring gets no packet: a burst on CPU 0, then 3 s of quiet (live period 100 ms)"
rm -rf "$T/idle"
"$CLI" record -q --live-period 100ms -o "$T/idle" -- sh -c "'$LW' --burst 20 --gap 1 --bursts 1 --pin 0 --log '$T/idle.log' && sleep 3" \
	> "$T/idle.w" 2>&1 || { cat "$T/idle.w"; fail "record of the idle probe"; }
[ "$("$CLI" dump "$T/idle" | grep -c 'live:ev')" = 20 ] || fail "idle: the trace does not hold the 20 events"
# one stream file: CPU 0's ring (the fallback protocol: the slot the writer's thread took there)
files=$(cd "$T/idle" && ls | grep -v metadata)
[ "$(echo $files | wc -w)" = 1 ] || fail "idle: stream files '$(echo $files)': want only the writer's ring"
np=$(packets "$T/idle/$files" | wc -l)
echo "  $files: $np packet(s) for its 20 events and 3 s of quiet (30 live periods); no other ring's stream"
[ "$np" = 1 ] || fail "idle: $np packets, want 1 (the burst's; nothing new after it)"

echo "== a saturated ring's packets are not cut (live period 10 ms, 64 KiB sub-buffers)"
for cpu in 0 $((ncpu - 1)); do
	rm -rf "$T/sat$cpu" "$T/sat$cpu.counts"
	"$CLI" record -q --live-period 10ms --sb-size 64K --sb-count 256 -o "$T/sat$cpu" -- "$WL" --pin $cpu --events 2000000 \
		> "$T/sat$cpu.w" 2>&1 || { cat "$T/sat$cpu.w"; fail "record of the saturated writer"; }
	"$VERIFY" "$T/sat$cpu" > /dev/null || fail "sat: tb-verify"
	f=$(freq "$T/sat$cpu")
	[ -n "$f" ] || fail "no clock frequency in the metadata"
	echo " writer on CPU $cpu"
	# (the fallback protocol: a writer that finds its slot owned, by the flusher too, takes the next one)
	for fn in $(cd "$T/sat$cpu" && ls | grep -v metadata); do
		packets "$T/sat$cpu/$fn" > "$T/sat$cpu.pk"
		# every packet before the writer's last: full (within one record of its end), or open >= 2.5 ms (a quarter period)
		awk -v f="$f" -v q=0.0025 -v name="$fn" '{ n++; ts0[n] = $1; ts1[n] = $2; c[n] = $3 / 8; p[n] = $4 / 8 }
			END {
				full = 0; cut = 0; bad = 0
				# the last packet the writer filled is partial: it and what follows it
				# (an empty packet carrying the losses of a recorder that fell
				# behind on a loaded machine: tb_stream_finish) are not judged
				last = n
				while (last > 1 && c[last] <= 160)
					last--
				for (i = 1; i < last; i++) {
					if (c[i] >= p[i] - 64) { full++; continue }
					cut++
					if ((ts1[i] - ts0[i]) / f < q) { bad++; printf "  packet %d: %d of %d bytes, open %.3f ms\n", i, c[i], p[i], (ts1[i] - ts0[i]) / f * 1000 }
				}
				printf "  %s: %d packets: %d full, %d closed by the live period after >= 2.5 ms open, %d cut sooner, and the last\n", name, n, full, cut - bad, bad
				print n, full > "/dev/stderr"
				exit bad != 0
			}' "$T/sat$cpu.pk" 2>> "$T/sat$cpu.counts" || fail "$fn: a packet of a saturated ring was cut early"
	done
	# the test means something only if the writer's ring was saturated: the stream with the
	# most packets (the writer's) is mostly full packets.  Other streams are not judged on it:
	# under the fallback protocol a writer that finds its slot owned by the flusher takes the
	# next slot for a while, whose few packets the live period closes (seen under ASan)
	read -r n full < <(sort -n -k1 "$T/sat$cpu.counts" | tail -n 1)
	[ "${n:-0}" -gt 4 ] && [ "${full:-0}" -ge $((n / 2)) ] ||
		fail "the writer's ring was not saturated (${full:-0} of its ${n:-0} packets full): nothing was tested"
	rm -f "$T/sat$cpu.counts"
done
echo PASS
