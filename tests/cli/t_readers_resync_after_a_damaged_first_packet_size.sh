# SPDX-License-Identifier: MIT
# t_readers_resync_after_a_damaged_first_packet_size.sh - one damaged packet_size in a stream's
# *first* packet (no packet size known yet) cost the whole file ("cannot find the next packet
# after this damaged header: rest of the file skipped", exit 1: nothing readable), and a first
# packet_size that is wrong but plausible (16383 for 16384) made every later packet unreadable
# (read at multiples of the wrong size). The next packet is now found at the recorder's grid
# (a multiple of a power-of-two size holding a header of that size): the damaged packet costs
# itself at most, said, exit 3. Mid-stream, a damaged packet's own packet_size is no longer
# trusted over the stream's (160 bytes put every later packet out of step).
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
"$CLI" record -q --sb-size 16K -o "$T/t" -- "$WL" --threads 1 --events 20000 > /dev/null || fail "record"
f=$(ls -S "$T"/t/chan_* | head -1)
n0=$("$CLI" dump "$T/t" | wc -l)
[ "$n0" -ge 20000 ] || fail "the trace holds $n0 events"
patch() { # BITS [OFFSET]: the packet_size (offset 128) of the packet at OFFSET (0), in a copy of the trace
	rm -rf "$T/d"
	cp -r "$T/t" "$T/d"
	"${PY:-python3}" -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[3])+128); f.write(struct.pack("<Q",int(sys.argv[2])))' \
		"$T/d/$(basename "$f")" "$1" "${2:-0}" || fail "cannot patch the copy"
}
for bits in 0 8 1280 9223372036854775808 18446744073709551615 $((16383 * 8)) $((16385 * 8)); do
	patch $bits
	"$CLI" dump "$T/d" > "$T/out" 2> "$T/err"
	rc=$?
	n=$(wc -l < "$T/out")
	[ $rc -eq 3 ] || { cat "$T/err"; fail "packet_size $bits bits: exit $rc (want 3)"; }
	# at most the first packet's events lost (16 KiB packets of 32-byte events: < 600)
	[ "$n" -ge $((n0 - 600)) ] || { cat "$T/err"; fail "packet_size $bits bits: $n of $n0 events read"; }
	grep -q "found by its header at byte 16384\|packet found by its header at byte 16384" "$T/err" || { cat "$T/err"; fail "packet_size $bits bits: the resync not said"; }
	echo "ok: packet_size $bits bits: $n of $n0 events, exit 3"
done
# mid-stream, a packet_size of a header (160 bytes) or a byte more: the damaged packet's own size
# put the next read inside a packet, and every later packet out of step (all lost)
for bits in 1280 1288; do
	patch $bits $((5 * 16384))
	"$CLI" dump "$T/d" > "$T/out" 2> "$T/err"
	rc=$?
	n=$(wc -l < "$T/out")
	[ $rc -eq 3 ] && [ "$n" -ge $((n0 - 600)) ] ||
		{ cat "$T/err"; fail "packet 5's packet_size $bits bits: exit $rc, $n of $n0 events read"; }
	echo "ok: packet 5's packet_size $bits bits: $n of $n0 events, exit 3"
done
echo PASS
